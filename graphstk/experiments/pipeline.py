"""One experiment end to end: datasets -> protocol splits -> cached selections -> rows -> files.

The loop is (task, dataset, level, repetition, method series); the task's protocol
(:mod:`graphstk.experiments.protocols`) fills in each step. Every finished unit is cached in ``OUT/cache/``
before the next starts, so a rerun resumes where an interrupted one stopped with identical numbers.
"""
from __future__ import annotations

import datetime as _dt
import importlib
import os
import sys
import time
import warnings
from typing import Callable

from tqdm.auto import tqdm

from .. import __version__
from ..data.roots import resolve_data_root
from ..exceptions import DatasetMissingError, RunError
from ..memory import peak_rss_gb
from .cache import CODE_MODULES, CODE_PACKAGES, ResultCache, code_fingerprint, run_lock
from .config import ExperimentConfig
from .datasets import is_missing_error
from .kernels import KernelCache, KernelFactory
from .protocols import get_protocol
from .registry import options_suffix
from .report import format_params, level_label, write_all

__all__ = ["DatasetMissingError", "RunError", "run_experiment"]


def _load_datasets(cfg: ExperimentConfig, protocol, root: str, log: Callable[[str], None]):
    loaded, skipped = [], []
    for spec in cfg.datasets:
        try:
            data = protocol.load(spec, root)
        except Exception as err:  # noqa: BLE001 - only "missing" errors are turned into skips
            if not is_missing_error(err):
                raise
            if not cfg.skip_missing:
                raise DatasetMissingError(f"dataset {spec.name!r} not found: {err}\n"
                                          "(set 'skip_missing: true' in the config to skip absent datasets)"
                                          ) from err
            reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
            log(f"skipping dataset {spec.name!r}: {reason}")
            skipped.append({"dataset": spec.name, "reason": str(err).strip()})
            continue
        loaded.append((spec, data))
    return loaded, skipped


def run_experiment(cfg: ExperimentConfig, out_dir: str, data_root: str | None = None, *,
                   progress: bool = True, log: Callable[[str], None] | None = None, write: bool = True,
                   kernel_factory: KernelFactory | None = None, jobs: int = 1, threads: int | None = None) -> dict:
    """Run ``cfg`` (every task of a multi-task config, one shared cache); write
    ``results.{json,csv,md}`` (and the plot, if any) into ``out_dir``.

    Every dataset of every task is loaded and checked by its protocol before anything is
    computed, so bad input (an unknown dataset, too few points of a class, overlapping
    split sets, NaN features, ...) fails at once. A second run on the same ``out_dir`` while
    this one runs is refused (``graphstk.experiments.cache.run_lock``).

    Parameters
    ----------
    cfg : ExperimentConfig
    out_dir : str
    data_root : str, optional
        ``--data-root`` > ``GRAPHSTK_DATA`` > ``./datasets``.
    progress : bool, default True
        A progress bar on stderr.
    log : callable ``(message)``, optional
        Where notes go (default: above the progress bar).
    write : bool, default True
        Write the results files (and the plot).
    kernel_factory : callable, optional
        Builds the graph methods' kernels: ``factory(data, hidden, *, dtype, device, whole=False)``
        (:mod:`graphstk.experiments.kernels`); default ``graphstk.experiments.kernels.GraphKernelFactory``.
        ``run.py --distributed`` passes :class:`~graphstk.distributed.PartitionedKernelFactory`. The run
        wraps it in a ``graphstk.experiments.kernels.KernelCache`` of its own.
    jobs : int, default 1
        Worker processes that compute the rows (a row: one dataset, level and method over every seed) side by
        side (``graphstk.experiments.parallel.compute_rows``); every unit is computed as in one process and
        the results are the same. Only with the default ``kernel_factory``.
    threads : int, optional
        Torch CPU threads of each worker process (``jobs > 1``; default 1).
    """
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be an integer >= 1 (worker processes), got {jobs!r}")
    if jobs > 1 and kernel_factory is not None:
        raise ValueError("jobs > 1 runs the rows in worker processes with the default kernels; a kernel_factory "
                         "(run.py --distributed) splits each kernel over processes instead: use one or the other")
    with run_lock(out_dir):
        return _run_experiment(cfg, out_dir, data_root, progress, log, write, kernel_factory, jobs, threads)


def _run_experiment(cfg, out_dir, data_root, progress, log, write, kernel_factory, jobs, threads) -> dict:
    if log is None:
        def log(msg: str) -> None:
            tqdm.write(msg, file=sys.stderr)
    started = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    t0 = time.perf_counter()
    root = str(resolve_data_root(data_root))
    tasks = cfg.all_tasks()
    kernels = KernelCache(kernel_factory)       # this run's kernels, handed to the methods by the protocols
    prepared, skipped = [], []
    for task in tasks:
        protocol = get_protocol(task, kernels=kernels)
        loaded, sk = _load_datasets(task, protocol, root, log)
        for spec, data in loaded:
            protocol.check(spec, data)
        prepared.append((task, protocol, loaded))
        skipped += [{**s, **({"task": task.task} if task.task else {})} for s in sk]
    cache = ResultCache(os.path.join(out_dir, "cache"))
    units = []
    for task, protocol, loaded in prepared:
        series = method_series(task)
        for spec, data in loaded:
            for level in protocol.levels():
                units.append((task, protocol, spec, data, level, protocol.reps(data, level), series))
    total = sum(len(reps) * len(series) for *_, reps, series in units)
    records: dict[tuple, dict] = {}
    computed = 0
    codes: dict[str, str] = {}
    fps: dict[int, str] = {}
    by_workers, worker_peaks = 0, []
    if jobs > 1:   # the rows computed by worker processes into the cache, which the loop below then reads
        parallel = importlib.import_module(".parallel", __package__)
        by_workers, worker_peaks = parallel.compute_rows(cfg, out_dir, root, _row_items(units, tasks, codes, fps),
                                                         jobs=jobs, threads=threads or 1, progress=progress)
        computed = by_workers
    with tqdm(total=total, desc=cfg.name, unit="run", disable=not progress, file=sys.stderr,
              dynamic_ncols=True) as bar:
        for task, protocol, spec, data, level, reps, series in units:
            code, fp = _fingerprints(protocol, data, codes, fps)
            for rep in reps:
                unit = protocol.prepare(spec, data, level, rep)
                for m, sweep, grid in series:
                    name = f"{m.display()}{_sweep_str(sweep)}"
                    bar.set_postfix_str(f"{spec.name} {name} {where_str(protocol, level, rep)}", refresh=False)
                    rec, fresh = unit_record(cache, protocol, spec, data, fp, code, level, rep, unit, m, grid, name)
                    computed += fresh
                    records.setdefault((task.task, spec.name, name, level), {})[rep] = rec
                    bar.update(1)
                del unit
    rows = []
    for task, protocol, spec, data, level, reps, series in _row_order(units):
        for m, sweep, _grid in series:
            recs = records[(task.task, spec.name, f"{m.display()}{_sweep_str(sweep)}", level)]
            row = protocol.aggregate(spec.name, m, sweep, level, reps, [recs[s] for s in reps])
            if task.task is not None:
                row["task"] = task.task
            rows.append(row)
    for row in rows:
        name = (f"{row['dataset']} {row['method']}{options_suffix(row['options'], row['method'])}"
                f"{_sweep_str(row['sweep'])} {level_label(row)}")
        if row["warnings"]:
            more = f" (+{len(row['warnings']) - 1} similar, see results.json)" if len(row["warnings"]) > 1 else ""
            log(f"engine warning: {name}: {row['warnings'][0]}{more}")
    protocols = {(t.task or t.name): p.describe() for t, p, _ in prepared}
    results = {
        "config": cfg.to_dict(), "rows": rows, "wall_time_s": time.perf_counter() - t0,
        "peak_rss_gb": max([peak_rss_gb(), *worker_peaks]),
        "skipped": skipped, "started": started, "data_root": root, "graphstk_version": __version__,
        "cache": {"dir": os.path.join(out_dir, "cache"), "reused": cache.hits - by_workers, "computed": computed,
                  "code": codes[next(iter(codes))] if len(codes) == 1 else sorted(set(codes.values()))
                  if codes else code_fingerprint()},
        "protocol": next(iter(protocols.values())) if len(protocols) == 1 else protocols,
    }
    if jobs > 1:
        results["jobs"] = {"processes": jobs, "threads": threads or 1, "peak_rss_gb": worker_peaks}
    if write:
        write_all(out_dir, results)
        for task, *_ in prepared:
            task_rows = [r for r in rows if r.get("task") == task.task]
            if task.plot is not None and task_rows:   # loaded on demand: matplotlib takes 0.3 s to import
                plots = importlib.import_module(".plots", __package__)
                plots.sweep_plot(task_rows, task.plot, os.path.join(out_dir, task.plot.file))
    return results


def method_series(task) -> list[tuple]:
    """``(method, sweep, grid)`` of every method series of ``task``, in config order: a row of the results each."""
    return [(m, sweep, grid) for m in task.methods for sweep, grid in m.series()]


def _fingerprints(protocol, data, codes: dict, fps: dict) -> tuple[str, str]:
    """``(code, data)`` fingerprints of a unit's cache key, each computed once per run (kept in ``codes``/``fps``)."""
    extra = protocol.extra_code()
    key = repr(extra)
    if key not in codes:
        codes[key] = code_fingerprint(CODE_PACKAGES + extra[0], CODE_MODULES + extra[1])
    if id(data) not in fps:
        fps[id(data)] = protocol.fingerprint(data)
    return codes[key], fps[id(data)]


def unit_record(cache: ResultCache, protocol, spec, data, fp: str, code: str, level, rep, unit, m, grid,
                name: str) -> tuple[dict, bool]:
    """``(record, computed)`` of one unit (a dataset, level, seed and method series): read from ``cache``, else
    evaluated by the protocol and put there. Errors are raised as ``RunError`` naming the unit."""
    payload = protocol.payload(spec, fp, level, rep, unit, m, grid, code)
    label = protocol.label(spec.name, name, level, rep)
    rec = cache.get(label, payload)
    if rec is not None:
        return rec, False
    try:
        with warnings.catch_warnings(record=True) as caught:
            rec = protocol.evaluate(m, grid, data, unit, level, rep)
        rec["warnings"] = list(dict.fromkeys(str(w.message) for w in caught))
    except Exception as err:
        where = where_str(protocol, level, rep).replace(" ", " / ")
        raise RunError(f"{spec.name} / {name} / {where}: {type(err).__name__}: {err}") from err
    cache.put(label, payload, rec)
    return rec, True


def where_str(protocol, level, rep) -> str:
    """The level and seed (or split) of a unit, as the progress bar and errors name them."""
    return f"{_level_str(protocol, level)} {'split' if protocol.name == 'fixed-splits' else 'seed'}={rep}"


def _row_items(units, tasks: list, codes: dict, fps: dict) -> list[dict]:
    """The rows of a run for ``graphstk.experiments.parallel.compute_rows``: the task and dataset as
    positions in the config, the level, the method series as a position and a name, the seeds, the unit
    fingerprints, and ``size``, the number of entries of the dataset's features (0 without ``x``)."""
    items = []
    for task, protocol, spec, data, level, reps, series in units:
        code, fp = _fingerprints(protocol, data, codes, fps)
        t = next(i for i, tk in enumerate(tasks) if tk is task)
        d = next(i for i, sp in enumerate(task.datasets) if sp is spec)
        x = getattr(data, "x", None)
        size = int(x.numel()) if hasattr(x, "numel") else 0
        items += [{"task": t, "dataset": d, "level": level, "series": s, "name": f"{m.display()}{_sweep_str(sweep)}",
                   "reps": list(reps), "code": code, "data": fp, "size": size}
                  for s, (m, sweep, _grid) in enumerate(series)]
    return items


def _row_order(units):
    """Rows per task and dataset, methods outside levels (a method's levels are adjacent rows)."""
    groups: dict[tuple, list] = {}
    for u in units:
        groups.setdefault((id(u[0]), u[2].name), []).append(u)
    ordered = []
    for group in groups.values():
        task, protocol, spec, data, *_, series = group[0]
        ordered += [(task, protocol, spec, data, u[4], u[5], [item]) for item in series for u in group]
    return ordered


def _level_str(protocol, level) -> str:
    return f"p={level:g}" if protocol.name == "node-classification" else f"n_labeled={level}"


def _sweep_str(sweep: dict | None) -> str:
    return f"[{format_params(sweep)}]" if sweep else ""
