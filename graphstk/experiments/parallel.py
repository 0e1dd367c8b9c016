"""A run's rows computed side by side in worker processes (``run.py --jobs N``).

A row is one dataset, level and method series over every seed of the run; its seeds stay in one worker, so the
work a method keeps per graph across splits (the run's kernel cache: eigenpairs, filtered-feature norms,
feature-neighbour lists) is done once per row. Work that rows share (one split's kernel and eigenpairs, used by
every method) is done once per worker that needs it: configs whose rows share much of their work run faster as
one process with threads (docs/experiments.md, "Worker processes"). Each worker computes a row's units exactly as the single-process loop of
:func:`graphstk.experiments.pipeline.run_experiment` does (``graphstk.experiments.pipeline.unit_record``)
and writes them into the run's cache, which that loop then reads: the results, the files and a resumed run are
those of one process. Which worker takes a row changes nothing in its numbers; the rows are handed out in a fixed
order, those of the datasets with the most feature entries first (their rows are the longest, and a long row
started last would end the run alone).

The workers are started with ``spawn`` (a fork of a process whose torch thread pool is running can hang) and
run ``threads`` torch threads each. The pool is written here rather than taken from
``concurrent.futures.ProcessPoolExecutor``, which cannot stop a running worker: the first error, or Ctrl-C,
stops every worker at once, and the finished units stay in the cache.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import queue
import sys
import traceback

import torch
from tqdm.auto import tqdm

from ..exceptions import RunError
from ..memory import peak_rss_gb, reuse_freed_memory
from .cache import ResultCache
from .kernels import KernelCache
from .pipeline import method_series, unit_record, where_str
from .protocols import get_protocol

__all__ = ["compute_rows"]

#: seconds between two looks at the workers while no event arrives
POLL_S = 1.0


def compute_rows(cfg, out_dir: str, root: str, rows: list[dict], *, jobs: int, threads: int = 1,
                 progress: bool = True) -> tuple[int, list[float]]:
    """Compute the units of ``rows`` into ``out_dir``'s cache in ``jobs`` worker processes.

    ``rows``: one dict per row: ``task`` and ``dataset`` (positions in ``cfg.all_tasks()`` and
    ``task.datasets``), ``level``, ``series`` (the position in the task's method series) and its ``name``,
    ``reps``, the unit fingerprints ``code`` and ``data``, and ``size`` (the dataset's feature entries: larger
    first). Returns the number of units computed (not read from the cache) and each worker's peak resident
    memory in GiB. A worker's error is raised as ``RunError`` naming the unit, after every worker has been
    stopped.
    """
    ctx = mp.get_context("spawn")
    todo, events = ctx.Queue(), ctx.Queue()
    for row in sorted(rows, key=lambda r: -r["size"]):
        todo.put(row)
    for _ in range(jobs):
        todo.put(None)
    workers = [ctx.Process(target=_work, args=(i, cfg, root, out_dir, threads, todo, events), daemon=True,
                           name=f"graphstk-worker-{i}") for i in range(jobs)]
    total = sum(len(r["reps"]) for r in rows)
    computed, peaks, finished = 0, {}, set()
    try:
        for w in workers:
            w.start()
        with tqdm(total=total, desc=f"{cfg.name} ({jobs} processes)", unit="run", disable=not progress,
                  file=sys.stderr, dynamic_ncols=True) as bar:
            while len(finished) < jobs:
                try:
                    kind, who, value = events.get(timeout=POLL_S)
                except queue.Empty:
                    _check_alive(workers, finished)
                    continue
                if kind == "unit":
                    computed += bool(value)
                    bar.update(1)
                elif kind == "row":
                    bar.set_postfix_str(value, refresh=False)
                elif kind == "done":
                    finished.add(who)
                    peaks[who] = value
                else:   # "error"
                    raise RunError(value)
    finally:
        for w in workers:
            if w.is_alive():
                w.terminate()
        for w in workers:
            w.join()
    return computed, [peaks[i] for i in sorted(peaks)]


def _check_alive(workers, finished: set) -> None:
    for i, w in enumerate(workers):
        if i not in finished and not w.is_alive():
            raise RunError(f"worker process {i} ended without finishing its rows (exit code {w.exitcode}"
                           f"{': killed, e.g. for want of memory' if (w.exitcode or 0) < 0 else ''}); "
                           "rerun the same command to resume, or with fewer --jobs")


def _work(who: int, cfg, root: str, out_dir: str, threads: int, todo, events) -> None:
    """Worker process ``who``: compute rows from ``todo`` until its ``None``, reporting to ``events``."""
    torch.set_num_threads(int(threads))
    reuse_freed_memory()
    tasks, kernels = cfg.all_tasks(), KernelCache(None)
    cache = ResultCache(os.path.join(out_dir, "cache"))
    protocols, loaded = {}, {}
    parent = mp.parent_process()
    try:
        while (row := todo.get()) is not None:
            t, d, level = row["task"], row["dataset"], row["level"]
            task = tasks[t]
            if t not in protocols:
                protocols[t] = get_protocol(task, kernels=kernels)
            protocol, spec = protocols[t], task.datasets[d]
            if (t, d) not in loaded:
                loaded[(t, d)] = protocol.load(spec, root)
            data = loaded[(t, d)]
            m, _sweep, grid = method_series(task)[row["series"]]
            name = row["name"]
            for rep in row["reps"]:
                if parent is not None and not parent.is_alive():   # the run was killed: nobody reads the cache
                    return
                events.put(("row", who, f"{spec.name} {name} {where_str(protocol, level, rep)}"))
                unit = protocol.prepare(spec, data, level, rep)
                _, fresh = unit_record(cache, protocol, spec, data, row["data"], row["code"], level, rep, unit, m,
                                       grid, name)
                del unit
                events.put(("unit", who, fresh))
    except BaseException as err:  # noqa: BLE001 - every failure is reported to the main process
        msg = str(err) if isinstance(err, RunError) else f"{type(err).__name__}: {err}"
        frame = traceback.extract_tb(err.__traceback__)[-1]
        events.put(("error", who, f"{msg}\n(in worker process {who}, {os.path.basename(frame.filename)}:"
                                  f"{frame.lineno} in {frame.name})"))
        return
    events.put(("done", who, peak_rss_gb()))
