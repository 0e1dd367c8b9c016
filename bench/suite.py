"""The STKR configs method by method, this engine side by side with a reference engine.

Run from the repository root::

    python bench/suite.py                                    # Photo + Computers, SP-topd (t/i), SP-Lap (i), 2 seeds
    python bench/suite.py --datasets Computers --methods "SP-Lap (i)" --seeds 1
    python bench/suite.py --config configs/table1.yaml --datasets Cora DBLP --methods all
    python bench/suite.py --quick                            # a check that it runs (seconds)

The reference engine is the package ``graphstk`` of commit ``--before`` (default
``c125695``; its grid entry point took engine names: ``methods.grid.predict_grid("stkr-lap", ...)``),
extracted at run time with ``git archive`` into a
temporary directory as the package ``graphstk_before`` (nothing is committed) and imported next
to the working tree's ``graphstk``. Both run the same protocol (App. D; ``make_split`` of the
working tree, the same :class:`GraphKernel` objects, built before the clock starts) in one
process, alternating engines per (seed, method) so that a busy machine slows both alike, and
the script prints per method: seconds per split for each engine, their ratio, whether the chosen
hyperparameters and test accuracies agree, and, for SP-topd, the wall time (and, for the new
engine, the number of products of ``S``) per eigendecomposition of a large component.

A split of an inductive method is its whole selection: the full grid on the ``select`` view
(val and test hidden) and the chosen point on the ``final`` view (test hidden), as the runner
does. Targets: SP-topd at least 5x faster per split on Photo and Computers, SP-Lap (i)
at least 3x on Computers.
"""
from __future__ import annotations

import argparse
import importlib
import os
import subprocess
import sys
import tarfile
import tempfile
import time
import warnings
from io import BytesIO
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from graphstk.memory import reuse_freed_memory  # noqa: E402
from graphstk.data import load_dataset, make_split  # noqa: E402
from graphstk.experiments.config import grid_points, load_config  # noqa: E402
from graphstk.operators import GraphKernel  # noqa: E402
from graphstk.spectral import eigen  # noqa: E402

DEFAULT_METHODS = ["SP-topd (t)", "SP-topd (i)", "SP-Lap (i)"]


def import_before(commit: str, workdir: str):
    """``graphstk`` of ``commit`` as the package ``graphstk_before`` (extracted under ``workdir``)."""
    blob = subprocess.run(["git", "-C", str(ROOT), "archive", commit, "graphstk"], check=True,
                          capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(blob)) as tar:
        tar.extractall(workdir, filter="data")
    os.rename(os.path.join(workdir, "graphstk"), os.path.join(workdir, "graphstk_before"))
    sys.path.insert(0, workdir)
    return importlib.import_module("graphstk_before.methods.grid")


#: the engine names of the reference commit's ``predict_grid``, by transform family
BEFORE_NAMES = {"LabelPropagationFilter": "lp", "InverseLaplacian": "stkr-lap", "Polynomial": "stkr-poly",
                "TopD": "stkr-topd", "KRR": "krr"}


def grid_now(family_name, kernel, y, train, ev, grid, C, topd_support="labeled", labels="onehot", **kwargs):
    """This tree's engine with the reference's calling convention: the config's grid turned into
    transform objects (as the runner's registrations do) and scored by one ``STKRCV.grid_scores``."""
    from graphstk.experiments.registrations.stkr import FAMILIES
    from graphstk.methods import STKRCV

    family = FAMILIES[family_name]
    transforms = family.transforms(grid, {"support": topd_support})
    cv = STKRCV(transforms, grid.get("beta"), num_iter=grid.get("T"), labels=labels, num_classes=C, **kwargs)
    out = []
    for p, s in cv.grid_scores(kernel, train, ev, y=y):
        point = {}
        if family.axis:
            point[family.axis] = grid[family.axis][transforms.index(p["transform"])]
        if "beta" in grid:
            point["beta"] = p["beta"]
        if "T" in grid:
            point["T"] = p["num_iter"]
        out.append((point, s))
    return out


def accuracy(scores: torch.Tensor, y: torch.Tensor) -> float:
    """Argmax accuracy (%), rows that no label reaches (all zero or non-finite) counted wrong."""
    reached = torch.isfinite(scores).all(1) & (torch.nan_to_num(scores).abs().sum(1) > 0)
    hit = (torch.nan_to_num(scores).argmax(1) == y) & reached
    return 100.0 * float(hit.sum()) / max(1, y.numel())


def select(score_grid, spec, grid, data, split, kernels, C, kwargs):
    """App. D model selection for one split: (chosen params, test accuracy)."""
    y = data.y.long()
    y_in = torch.full_like(y, -1)
    y_in[split.train] = y[split.train]
    points = grid_points(grid)
    keys = list(points[0])

    def ordered(res):
        by = {tuple(p[k] for k in keys): s for p, s in res}
        return [by[tuple(p[k] for k in keys)] for p in points]

    if spec.setting == "transductive":
        ev = torch.cat([split.val, split.test])
        res = ordered(score_grid(spec.engine, kernels["transductive"], y_in, split.train, ev, grid, C, **kwargs))
        nv = split.val.numel()
        val = [accuracy(s[:nv], y[split.val]) for s in res]
        best = max(range(len(val)), key=lambda i: (val[i], -i))
        return points[best], accuracy(res[best][nv:], y[split.test])
    res = ordered(score_grid(spec.engine, kernels["select"], y_in, split.train, split.val, grid, C, **kwargs))
    val = [accuracy(s, y[split.val]) for s in res]
    best = max(range(len(val)), key=lambda i: (val[i], -i))
    chosen = points[best]
    (scores,) = [s for _, s in score_grid(spec.engine, kernels["final"], y_in, split.train, split.test,
                                            {k: [v] for k, v in chosen.items()}, C, **kwargs)]
    return chosen, accuracy(scores, y[split.test])


class DecompositionLog:
    """Wall time (and products, for the filtered solver) of every large-component eigensolve."""

    def __init__(self):
        self.records = {"before": [], "now": []}
        self.engine = "now"
        self._orig_now = eigen._large_top

        def spy(block, kk, rng, method):
            t0 = time.perf_counter()
            out = self._orig_now(block, kk, rng, method)
            info = dict(eigen.LAST_SOLVE) if eigen.LAST_SOLVE.get("k") == kk else {}
            self.records["now"].append((block.shape[0], kk, time.perf_counter() - t0, info.get("products")))
            return out
        eigen._large_top = spy

    def wrap_before(self, module):
        orig = module.eigsh

        def spy(a, *args, **kw):
            t0 = time.perf_counter()
            out = orig(a, *args, **kw)
            self.records["before"].append((a.shape[0], kw.get("k", args[0] if args else 6),
                                           time.perf_counter() - t0, None))
            return out
        module.eigsh = spy


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default=str(ROOT / "configs" / "table1.yaml"))
    ap.add_argument("--datasets", nargs="+", default=["Photo", "Computers"])
    ap.add_argument("--methods", nargs="+", default=DEFAULT_METHODS, help='method labels, or "all"')
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--before", default="c125695", help="commit of the engine to compare with")
    ap.add_argument("--data-root", default=None)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", default=None, help="also write the markdown table here")
    ap.add_argument("--quick", action="store_true",
                    help="a check that the script runs (seconds): SP-Lap (i) on a generated 400-node graph, one "
                         "seed, grids thinned to 3 values")
    args = ap.parse_args(argv)
    if args.quick:
        args.datasets, args.methods, args.seeds = ["dcsbm"], ["SP-Lap (i)"], 1
    torch.set_num_threads(args.threads)
    reuse_freed_memory()   # as run.py does (graphstk/memory.py); both engines of the comparison share it
    warnings.simplefilter("ignore")
    cfg = load_config(args.config)
    if args.quick:
        cfg = cfg.with_overrides(quick=True)      # every grid thinned to at most 3 values
    specs = [m for m in cfg.methods if args.methods == ["all"] or m.label in args.methods]
    if not specs:
        raise SystemExit(f"no method of {args.config} matches {args.methods}")
    tmp = tempfile.mkdtemp(prefix="graphstk_before_")
    before = import_before(args.before, tmp).predict_grid

    def grid_before(family_name, *a, **kw):
        return before(BEFORE_NAMES[family_name], *a, **kw)
    decomp = DecompositionLog()
    decomp.wrap_before(importlib.import_module("graphstk_before.spectral.eigen"))
    engines = {"before": grid_before, "now": grid_now}
    kwargs = {k: v for k, v in cfg.solver.model_dump().items() if k != "dtype" and v is not None}
    rows = []
    load = os.getloadavg()[0]
    print(f"# bench/suite.py: {args.config}, engine of {args.before} ('before') vs the working tree ('now'), "
          f"{args.seeds} seed(s), {args.threads} thread(s), load average {load:.1f} at start", flush=True)
    for name in args.datasets:
        if args.quick:
            from graphstk.data import make_dcsbm
            data = make_dcsbm(400, 2000, num_classes=4, seed=0)
        else:
            data = load_dataset(name, root=args.data_root)
        C = int(data.y.max()) + 1
        for spec in specs:
            for sweep, grid in spec.series():
                times = {"before": [], "now": []}
                same_params = same_acc = 0
                accs = {"before": [], "now": []}
                for seed in range(args.seeds):
                    split = make_split(data, cfg.p_test[0], seed, planetoid_split=cfg.planetoid_split)
                    hidden = {"transductive": None, "select": torch.cat([split.test, split.val]),
                              "final": split.test}
                    kernels = {k: GraphKernel(data.edge_index, int(data.num_nodes), hidden=h,
                                              dtype=getattr(torch, cfg.solver.dtype)) for k, h in hidden.items()}
                    out = {}
                    order = ("before", "now") if seed % 2 == 0 else ("now", "before")
                    for eng in order:
                        t0 = time.perf_counter()
                        out[eng] = select(engines[eng], spec, grid, data, split, kernels, C,
                                          {**kwargs, "labels": spec.options["labels"],
                                           **({"topd_support": spec.options["support"]} if "support" in spec.options
                                              else {})})
                        times[eng].append(time.perf_counter() - t0)
                        accs[eng].append(out[eng][1])
                    same_params += out["before"][0] == out["now"][0]
                    same_acc += out["before"][1] == out["now"][1]
                    print(f"  {name} {spec.display()} seed {seed}: before {times['before'][-1]:.1f} s "
                          f"{out['before']}, now {times['now'][-1]:.1f} s {out['now']}", flush=True)
                tb, tn = sum(times["before"]) / args.seeds, sum(times["now"]) / args.seeds
                rows.append((name, spec.display(), args.seeds, tb, tn, tb / tn, same_params, same_acc,
                             sum(accs["before"]) / args.seeds, sum(accs["now"]) / args.seeds))
                print(f"{name} {spec.display()}: {tb:.1f} s -> {tn:.1f} s per split, {tb / tn:.2f}x", flush=True)
    lines = [f"bench/suite.py on {', '.join(args.datasets)}, {args.seeds} seed(s), engine of `{args.before}` vs "
             f"this tree, one process, {args.threads} thread(s); load average {load:.1f} at start, "
             f"{os.getloadavg()[0]:.1f} at the end (2-core machine)", "",
             "| dataset | method | seeds | before (s/split) | now (s/split) | speed-up | same chosen | same test acc "
             "| test acc before / now |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]:.1f} | {r[4]:.1f} | {r[5]:.2f}x | {r[6]}/{r[2]} | "
                     f"{r[7]}/{r[2]} | {r[8]:.2f} / {r[9]:.2f} |")
    for eng in ("before", "now"):
        rec = decomp.records[eng]
        big = [r for r in rec if r[1] >= 64]
        if big:
            tot = sum(r[2] for r in big) / len(big)
            prods = [r[3] for r in big if r[3]]
            extra = f", {sum(prods) / len(prods):,.0f} products of S (one column each)" if prods else ""
            lines.append(f"\n{eng}: {len(big)} eigensolve(s) of a large component with k >= 64 "
                         f"(sizes {min(r[0] for r in big)}-{max(r[0] for r in big)}, k up to "
                         f"{max(r[1] for r in big)}): {tot:.1f} s each on average{extra}")
    targets = {("Photo", "SP-topd"): 5.0, ("Computers", "SP-topd"): 5.0, ("Computers", "SP-Lap (i)"): 3.0}
    for r in rows:
        for (ds, meth), goal in targets.items():
            if r[0] == ds and r[1].startswith(meth):
                lines.append(f"{'PASS' if r[5] >= goal else 'FAIL'}: {ds} {r[1]} {r[5]:.2f}x (target >= {goal:g}x)")
    text = "\n".join(lines)
    print("\n" + text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
