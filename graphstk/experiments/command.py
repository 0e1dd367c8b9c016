"""What the command line runs once its arguments are parsed (:mod:`graphstk.__main__`): a config over
:func:`~graphstk.experiments.pipeline.run_experiment` (or, under ``--distributed``,
:func:`~graphstk.experiments.distributed_run.run_distributed`), or ``partition``
(:func:`graphstk.distributed.store.partition_main`)."""
from __future__ import annotations

import importlib
import os
import sys
import traceback

import torch

from .._checks import check_out_dir
from ..memory import reuse_freed_memory
from .config import ConfigError, default_config, load_config
from .pipeline import run_experiment
from .report import console_table

#: what one command needs, imported when it runs: the partitioned graph and the collectives
#: (torch.distributed) stay out of an ordinary run
_DEFERRED = {"partition": ("..distributed.store", "partition_main"),
             "distributed": (".distributed_run", "run_distributed")}


def _deferred(command: str):
    module, name = _DEFERRED[command]
    return getattr(importlib.import_module(module, __package__), name)


def run_command(argv: list[str], args, parser, prog: str) -> int:
    """Run the parsed command line ``args`` (``None`` for ``partition``, which parses ``argv`` itself);
    ``parser`` reports usage errors (exit status 2). Returns the exit code."""
    if args is None:   # python -m graphstk partition GRAPH --parts P --out DIR
        return _deferred("partition")(argv[1:], prog=f"{prog} partition")
    try:
        cfg = default_config() if args.config is None else load_config(args.config)
        cfg = cfg.with_overrides(seeds=args.seeds, quick=args.quick, datasets=args.datasets, device=args.device)
    except ConfigError as err:
        where = f"{args.config}: " if args.config else ""
        parser.error(f"{where}{err}")   # exits with status 2
    except UnicodeDecodeError as err:
        parser.error(f"{args.config}: not a UTF-8 text file (byte 0x{err.object[err.start]:02x} at position "
                     f"{err.start}); a config is a YAML text file, see docs/experiments.md")
    except (FileNotFoundError, IsADirectoryError, PermissionError) as err:
        parser.error(f"{args.config}: cannot read the config: {err.strerror or err}")

    if args.threads is not None and args.threads < 1:
        parser.error(f"--threads: must be an integer >= 1, got {args.threads}")
    if args.jobs < 1:
        parser.error(f"--jobs: must be an integer >= 1 (worker processes), got {args.jobs}")
    if args.jobs > 1 and args.distributed:
        parser.error("--jobs runs whole rows in worker processes and --distributed splits each kernel over the "
                     "torchrun processes: use one or the other")
    threads = args.threads if args.threads is not None else (1 if args.config is None or args.jobs > 1 else None)
    if threads is not None:
        torch.set_num_threads(threads)
    reuse_freed_memory()   # large temporaries reuse freed heap blocks instead of fresh zero-filled pages
    out_dir = args.out or os.path.join("runs", cfg.name)
    try:
        check_out_dir(out_dir, cfg.name)
    except ValueError as err:
        parser.error(str(err))   # exits with status 2
    try:
        if args.distributed:
            results = _deferred("distributed")(cfg, out_dir, args.data_root, not args.no_progress, threads=threads)
            if results is None:   # not process 0: it prints nothing
                return 0
        else:
            results = run_experiment(cfg, out_dir, data_root=args.data_root, progress=not args.no_progress,
                                     jobs=args.jobs, threads=threads)
    except KeyboardInterrupt:
        print(f"\ninterrupted: finished work is kept in {os.path.join(out_dir, 'cache')}; "
              "rerun the same command to resume", file=sys.stderr)
        return 130
    except Exception as err:  # noqa: BLE001 - the command line turns every failure into exit code 1
        if args.traceback:
            traceback.print_exc()
        msg = str(err) or type(err).__name__
        print(f"{parser.prog}: error: {msg}" + ("" if args.traceback else "\n(use --traceback for details)"),
              file=sys.stderr)
        return 1
    print(console_table(results["rows"]))
    for s in results["skipped"]:
        print(f"skipped {s['dataset']}: {s['reason'].splitlines()[0]}")
    print(f"\n{len(results['rows'])} rows in {results['wall_time_s']:.1f} s -> {out_dir}/results.{{json,csv,md}}"
          + (f" and {cfg.plot.file}" if cfg.plot is not None and results["rows"] else ""))
    return 0
