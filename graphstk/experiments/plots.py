"""Sweep figures (Figure 2: accuracy vs the power k of s(l) = l^k; the eta ablation): one line per
(dataset, method, p_test), the swept values evenly spaced on the x axis, mean ± std as error bars.
"""
from __future__ import annotations

import os
import tempfile

from matplotlib.figure import Figure

from .cache import umask_mode

__all__ = ["sweep_plot"]


def _series(rows: list[dict], x: str) -> dict[tuple, list[tuple]]:
    out: dict[tuple, list[tuple]] = {}
    methods = {r["method"] for r in rows if r.get("sweep") and x in r["sweep"]}
    p_tests = {r["p_test"] for r in rows if r.get("sweep") and x in r["sweep"]}
    for r in rows:
        if not r.get("sweep") or x not in r["sweep"]:
            continue
        name = r["dataset"]
        if len(methods) > 1:
            name += f" {r['method']}"
        if len(p_tests) > 1:
            name += f" (p_test={r['p_test']:g})"
        out.setdefault(name, []).append((r["sweep"][x], r["mean"], r["std"]))
    return out


def sweep_plot(rows: list[dict], spec, path: str) -> str | None:
    """Write the PNG for ``spec`` (the config's ``plot:``, a :class:`~graphstk.experiments.schema.PlotModel`);
    returns the path, or None without data."""
    series = _series(rows, spec.x)
    if not series:
        return None
    values = sorted({v for pts in series.values() for v, _, _ in pts})
    pos = {v: i for i, v in enumerate(values)}
    fig = Figure(figsize=(7.0, 4.5))   # no pyplot: no global figure state, no backend to choose
    ax = fig.subplots()
    for name, pts in series.items():
        pts = sorted(pts)
        ax.errorbar([pos[v] for v, _, _ in pts], [m for _, m, _ in pts], yerr=[s for _, _, s in pts],
                    marker="o", capsize=3, label=name)
    ax.set_xticks(range(len(values)))
    ax.set_xticklabels([f"{v:g}" for v in values])
    xlabel = {"k": "k  (s(λ) = λ^k)", "eta": "η  (inverse Laplacian s⁻¹(λ) = λ⁻¹ − η)"}.get(spec.x, spec.x)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("test accuracy (%)")
    methods = sorted({r["method"] for r in rows if r.get("sweep") and spec.x in r["sweep"]})
    ax.set_title(spec.title or f"{', '.join(methods)}: accuracy vs {spec.x}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, ncol=2 if len(series) > 5 else 1)
    fig.tight_layout()
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".png", dir=folder)
    os.fchmod(fd, umask_mode())   # the umask's mode, not mkstemp's 0600
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=120)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path
