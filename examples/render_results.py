"""Render the results files of the examples and of ``bench/grad.py`` into ``docs/nn.md``.
======================================================================================

    python examples/render_results.py

Reads ``docs/results/nn/*.json`` (written by ``examples/*.py`` and ``bench/grad.py --out
docs/results/nn/grad.json``) and replaces the text between ``<!-- results:begin -->`` and
``<!-- results:end -->`` in ``docs/nn.md``; no number in that block is typed by hand.
"""
from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS, DOC = ROOT / "docs" / "results" / "nn", ROOT / "docs" / "nn.md"
ORDER = ["label_prop", "correct_and_smooth", "appnp", "gcn_stkr_smoothing"]


def example_table(res: dict) -> list[str]:
    timed = any("ms_per_forward" in r for r in res["rows"])
    head = "| method | test accuracy (%) |" + (" ms / forward |" if timed else "")
    lines = [f"`{res['script']}` ({res['seeds']} seeds; {res['note']}):", "", head,
             "|---|---|" + ("---|" if timed else "")]
    for r in res["rows"]:
        acc = r["test_acc"]
        cell = f"| {r['method']} | {100 * acc['mean']:.1f} ± {100 * acc['std']:.1f} |"
        if timed:
            cell += f" {r['ms_per_forward']:.2f} |"
        if "grad_change" in r:
            cell += f" (relative gradient change by the term after training: {r['grad_change']['mean']:.3f})"
        lines.append(cell)
    return lines + [""]


def grad_table(res: dict) -> list[str]:
    a = res["args"]
    lines = [f"`bench/grad.py --nodes {a['nodes']}` ({res['machine']}; {a['columns']} columns, alpha = "
             f"{a['alpha']}, median of {a['repeats']}):", "",
             "| K | alpha | unrolled (s) | implicit (s) | unrolled peak (MB) | implicit peak (MB) | rel. grad diff (y) "
             "| rel. grad diff (alpha) |", "|---|---|---|---|---|---|---|---|"]
    for r in res["grad"]:
        ga = "" if r["rel_grad_alpha"] is None else f"{r['rel_grad_alpha']:.1e}"
        lines.append(f"| {r['K']} | {r['alpha']} | {r['unroll_s']:.3f} | {r['implicit_s']:.3f} | "
                     f"{r['unroll_peak_MB']:.1f} | {r['implicit_peak_MB']:.1f} | {r['rel_grad_y']:.1e} | {ga} |")
    if res["cora"]:
        keys = [k for k in res["cora"][0] if k != "layers"]
        lines += ["", "Per forward on Cora, graph unchanged between calls (ms):", "",
                  "| layers | " + " | ".join(k.replace(" (ms)", "") for k in keys) + " |",
                  "|---|" + "---|" * len(keys)]
        for r in res["cora"]:
            lines.append(f"| {r['layers']} | " + " | ".join(f"{r[k]:.3f}" for k in keys) + " |")
    lines += ["", "Targets:", ""] + [f"- {'PASS' if t['pass'] else 'FAIL'} {t['target']}: {t['value']}"
                                     for t in res["targets"]]
    return lines + [""]


def main():
    block = []
    for name in ORDER:
        path = RESULTS / f"{name}.json"
        if path.exists():
            block += example_table(json.loads(path.read_text()))
    if (RESULTS / "grad.json").exists():
        block += ["### `bench/grad.py`", ""] + grad_table(json.loads((RESULTS / "grad.json").read_text()))
    text = DOC.read_text()
    head, rest = text.split("<!-- results:begin -->", 1)
    _, tail = rest.split("<!-- results:end -->", 1)
    DOC.write_text(head + "<!-- results:begin -->\n" + "\n".join(block) + "<!-- results:end -->" + tail)
    print(f"rendered {len(block)} lines into {DOC}")


if __name__ == "__main__":
    main()
