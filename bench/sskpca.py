"""Speed of the semi-supervised KPCA experiments (Walder et al.): time per (data set, label count)
and the number of decompositions, for a fixed-splits config (default: configs/sskpca_table1.yaml).

    python bench/sskpca.py                                   # the full Table 1 config
    python bench/sskpca.py --datasets Digit1 --splits 2      # a slice
    python bench/sskpca.py --config configs/sskpca_table2.yaml --datasets COIL --splits 1
    python bench/sskpca.py --render runs/sskpca_table1/results.json   # the paper's layout, ours beside theirs
    python bench/sskpca.py --quick                           # a check that it runs (seconds)

Each (data set, n_labeled) runs through the real pipeline (:func:`graphstk.experiments.pipeline.run_experiment`,
fresh output directory, so no cache is reused) with one thread. Reported per slice: wall time, this
process's CPU time (``time.process_time``: what the slice costs when the machine is shared), the
number of ``m x m`` kernel decompositions (dense ``eigh`` of the fit kernel or of a graph Laplacian)
and of ``r x r`` pencils ``P v = nu C v``, and the load average before/after. Writes a markdown
table to ``--out`` (default ``bench/sskpca_results.md``, not committed) and prints it.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default="configs/sskpca_table1.yaml")
    ap.add_argument("--datasets", nargs="*", default=None, help="subset of the config's datasets")
    ap.add_argument("--n-labeled", nargs="*", type=int, default=None, help="subset of the config's n_labeled")
    ap.add_argument("--splits", type=int, default=None, help="only the first N splits (default: all)")
    ap.add_argument("--methods", nargs="*", default=None, help="subset of the config's methods")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", default="bench/sskpca_results.md", help="markdown table (--quick: none)")
    ap.add_argument("--render", default=None, metavar="RESULTS_JSON",
                    help="print a results.json in the paper's layout (methods x data sets) and exit")
    ap.add_argument("--quick", action="store_true",
                    help="a check that the script runs (seconds): Digit1, LS-KPCA, 10 labeled points, one split, "
                         "nothing written")
    args = ap.parse_args(argv)
    if args.quick:
        args.datasets, args.methods, args.n_labeled, args.splits, args.out = ["Digit1"], ["LS-KPCA"], [10], 1, None
    if args.render:
        print(render(args.render))
        return 0

    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    import torch

    torch.set_num_threads(args.threads)
    from graphstk.experiments.config import load_config
    from graphstk.experiments.pipeline import run_experiment
    from graphstk.methods.sskpca import DECOMPOSITIONS

    cfg = load_config(args.config)
    if args.quick:
        cfg = cfg.with_overrides(quick=True)      # every grid thinned to at most 3 values
    datasets = [d for d in cfg.datasets if args.datasets is None or d.name.lower() in {x.lower() for x in args.datasets}]
    methods = [m for m in cfg.methods if args.methods is None or m.label in args.methods]
    levels = cfg.protocol_options["n_labeled"]
    if args.n_labeled:
        levels = [n for n in levels if n in args.n_labeled]
    lines = [f"config `{args.config}`, threads {args.threads}, splits {args.splits or 'all'}, "
             f"load average at start {os.getloadavg()[0]:.1f}", "",
             "| data set | n_labeled | methods | wall (s) | CPU (s) | kernel decompositions | pencils | load average at start / end |",
             "|---|---|---|---|---|---|---|---|"]
    total_wall = total_cpu = 0.0
    for d in datasets:
        for n in levels:
            up = {"datasets": [d], "methods": methods, "n_labeled": [n]}
            if args.splits:
                up["splits"] = list(range(args.splits))
            sub = cfg.model_copy(update=up)
            before = dict(DECOMPOSITIONS)
            la0 = os.getloadavg()[0]
            w0, c0 = time.perf_counter(), time.process_time()
            with tempfile.TemporaryDirectory() as tmp:
                run_experiment(sub, tmp, progress=False, log=lambda m: None, write=False)
            wall, cpu = time.perf_counter() - w0, time.process_time() - c0
            total_wall += wall
            total_cpu += cpu
            kd = DECOMPOSITIONS["kernel"] - before.get("kernel", 0)
            pc = DECOMPOSITIONS["pencil"] - before.get("pencil", 0)
            lines.append(f"| {d.name} | {n} | {len(methods)} | {wall:.1f} | {cpu:.1f} | {kd} | {pc} | "
                         f"{la0:.1f}/{os.getloadavg()[0]:.1f} |")
            print(lines[-1], flush=True)
    lines += ["", f"total wall {total_wall:.1f} s ({total_wall / 60:.1f} min), total CPU {total_cpu:.1f} s "
                  f"({total_cpu / 60:.1f} min)"]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    return 0


def render(path: str) -> str:
    """Rows of a fixed-splits results.json as the paper's tables: one block per n_labeled, methods
    as rows, data sets as columns, cells ``ours ± std (paper ± std)``; ``*`` marks a cell whose mean
    lies within the paper's std of the paper's mean."""
    import json

    with open(path) as f:
        rows = json.load(f)["rows"]
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    methods = list(dict.fromkeys(r["method"] + (f" [{','.join(f'{k}={v}' for k, v in r['options'].items())}]"
                                                if r.get("options") else "") for r in rows))
    out = []
    for n in sorted({r["n_labeled"] for r in rows}):
        out += [f"**{n} labeled points** (error %, mean ± std over splits; paper in brackets; * = within the "
                "paper's std)", "", "| method | " + " | ".join(datasets) + " |", "|---" * (len(datasets) + 1) + "|"]
        for m in methods:
            cells = []
            for d in datasets:
                r = [x for x in rows if x["dataset"] == d and x["n_labeled"] == n and
                     x["method"] + (f" [{','.join(f'{k}={v}' for k, v in x['options'].items())}]"
                                    if x.get("options") else "") == m]
                if not r:
                    cells.append("-")
                    continue
                r = r[0]
                p = r.get("paper")
                cell = f"{r['mean']:.2f} ± {r['std']:.2f}"
                if p:
                    ok = p.get("std") is not None and abs(r["mean"] - p["mean"]) <= p["std"]
                    cell += f" ({p['mean']:.2f} ± {p['std']:.2f}){' *' if ok else ''}"
                cells.append(cell)
            out.append(f"| {m} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    raise SystemExit(main())
