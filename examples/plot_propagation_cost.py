"""Propagation cost against one raw sparse product
================================================

The propagation engines are a sparse matrix product with as little around it as possible. The
benchmark ``bench/propagation.py`` times one iteration of each engine on random graphs of
``N = 10^4 .. 10^6`` nodes (10 random pairs per node, 8 classes) and divides it by the time of
one raw ``torch.sparse.mm(S, X)`` of the same shape and dtype; PyG's ``LabelPropagation`` layer
is timed the same way. This example draws the figure from the recorded table
``docs/results/speed/propagation_bench.md`` (no number is typed here); rerun the benchmark to
refresh it (``docs/benchmarks.md`` has the command and the machine).

The bars: Label-Prop with Richardson iterations (``LP rich``) and with CG (``LP cg``), STKR with
the inverse Laplacian by Richardson (``Lap rich``), one iteration of Algorithm 1 for
``s(l) = l^8`` (``poly8 rich``: several products), and one layer of PyG's ``LabelPropagation``.
The dashed line is the raw product itself.
"""
import re
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

try:
    ROOT = Path(__file__).resolve().parents[1]
except NameError:                                         # run by sphinx-gallery from examples/
    ROOT = Path.cwd().parent
RESULTS = ROOT / "docs" / "results" / "speed" / "propagation_bench.md"


def first_table(text: str) -> tuple[list[str], list[list[str]]]:
    """The header and rows of the first markdown table after the per-iteration heading."""
    lines = text[text.index("Per-iteration time"):].splitlines()
    rows = [ln for ln in lines if ln.startswith("|")]
    table = []
    for ln in rows[2:]:
        if ln.startswith("| N ") or ln.startswith("|---"):
            break
        table.append([c.strip() for c in ln.strip("|").split("|")])
    return [c.strip() for c in rows[0].strip("|").split("|")], table


header, table = first_table(RESULTS.read_text(encoding="utf-8"))
print("recorded in", RESULTS.relative_to(ROOT))
print(RESULTS.read_text(encoding="utf-8").splitlines()[2])
engines = ["LP rich", "LP cg", "Lap rich", "poly8 rich", "PyG LP"]
col = {h: i for i, h in enumerate(header)}

fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), sharey=True)
for ax, dtype in zip(axes, ("float32", "float64")):
    rows = [r for r in table if r[col["dtype"]] == dtype]
    sizes = [r[col["N"]] for r in rows]
    x = np.arange(len(rows))
    width = 0.8 / len(engines)
    for k, eng in enumerate(engines):
        ratio = [float(re.sub("x$", "", r[col[eng]])) for r in rows]
        ax.bar(x + (k - len(engines) / 2 + 0.5) * width, ratio, width, label=eng)
    ax.axhline(1.0, color="k", lw=0.8, ls="--")
    ax.set_xticks(x)
    ax.set_xticklabels([f"N = {s}" for s in sizes])
    ax.set_yscale("log")
    ax.set_title(f"{dtype}: one iteration / one raw sparse product", fontsize=10)
axes[0].set_ylabel("time ratio (log scale)")
axes[1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
fig.tight_layout()
plt.show()
