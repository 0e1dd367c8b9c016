"""Command line: ``python run.py [CONFIG] [--out DIR] [--data-root PATH] [--seeds N] [--datasets NAME ...] [--device DEVICE] [--quick]``.

``python -m graphstk`` and the ``graphstk`` console script are the same program.
Exit codes: 0 success, 2 bad command line or config, 1 any other error, 130 interrupted.
"""
from __future__ import annotations

import argparse
import os
import sys

EPILOG = """\
examples:
  python run.py                                   # default experiment (karate club + SBM, offline, seconds)
  python run.py configs/table1.yaml               # Table 1 of the STKR paper (Cora, DBLP, Computers)
  python run.py configs/table1.yaml --datasets Cora DBLP   # its Cora and DBLP rows only
  python run.py configs/quick.yaml --data-root /tmp/data --seeds 2
  python run.py configs/table1.yaml --device cuda  # kernels and estimators on the GPU
  python run.py configs/shchur_protocol.yaml --jobs 2 --threads 1   # two rows at a time, one thread each
  torchrun --nproc-per-node 2 run.py configs/quick.yaml --distributed   # kernels split over 2 processes
  python -m graphstk partition dcsbm:nodes=1e6,edges=1e7 --parts 2 --out /tmp/g   # a partitioned graph, once
data root: --data-root > $GRAPHSTK_DATA > ./datasets
outputs:   DIR/results.json, DIR/results.csv, DIR/results.md (+ the config's plot); DIR/cache/ makes
           a rerun of the same config resume where it stopped.
exit codes: 0 ok, 2 config / usage error, 1 other error, 130 interrupted (finished work is kept)
"""


def _prog() -> str:
    """The name the program was started as: ``run.py``, ``graphstk`` or ``python -m graphstk``."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    if spec is not None and spec.name == "graphstk.__main__":
        return "python -m graphstk"
    base = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return base if base in ("run.py", "graphstk") else "run.py"


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    """The command-line parser (``prog``: the name shown in usage lines; default: how it was started)."""
    p = argparse.ArgumentParser(
        prog=prog or _prog(),
        description="Run graph semi-supervised benchmarks (Label-Prop, STKR, KRR) from a YAML config "
                    "with the protocol of the STKR paper (App. D): splits per seed, hyperparameters "
                    "selected on val, test accuracy mean ± std over seeds.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("config", nargs="?", default=None,
                   help="YAML config (see docs/experiments.md); omitted: the built-in default experiment")
    p.add_argument("--out", metavar="DIR", default=None, help="output directory (default: runs/<config name>)")
    p.add_argument("--data-root", metavar="PATH", default=None,
                   help="dataset root (default: $GRAPHSTK_DATA, else ./datasets)")
    p.add_argument("--seeds", metavar="N", type=int, default=None,
                   help="use seeds 0..N-1 instead of the config's seeds")
    p.add_argument("--datasets", metavar="NAME", nargs="+", default=None,
                   help="run only these datasets of the config (e.g. --datasets Cora DBLP)")
    p.add_argument("--device", metavar="DEVICE", default=None,
                   help="torch device of every kernel and estimator, e.g. cpu, cuda, cuda:1 (default: the "
                        "config's 'device', else cpu)")
    p.add_argument("--quick", action="store_true",
                   help="smoke run: at most 2 seeds, every grid and sweep thinned to at most 3 values, "
                        "the first level (p_test, n_labeled, fit_labels), datasets drawn per class capped at 100 per "
                        "class, training epochs capped at 20")
    p.add_argument("--threads", metavar="N", type=int, default=None,
                   help="torch CPU threads (default: torch's choice; 1 for the built-in default experiment; "
                        "with --jobs: per worker process, default 1)")
    p.add_argument("--jobs", metavar="N", type=int, default=1,
                   help="worker processes computing the rows side by side (a row: one dataset and method over "
                        "every seed); the same results as one process (default 1)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--distributed", action="store_true",
                   help="under torchrun: graph kernels split by rows over the processes (docs/distributed.md)")
    p.add_argument("--traceback", action="store_true", help="print the full traceback on errors")
    return p


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    """Run the command line; returns the exit code."""
    argv = sys.argv[1:] if argv is None else list(argv)
    prog = prog or _prog()
    parser = None if argv[:1] == ["partition"] else build_parser(prog)
    args = None if parser is None else parser.parse_args(argv)
    # the runner imports torch: loaded after parsing, so that --help and usage errors are instant
    from .experiments.command import run_command

    return run_command(argv, args, parser, prog)


if __name__ == "__main__":
    sys.exit(main(prog="python -m graphstk"))
