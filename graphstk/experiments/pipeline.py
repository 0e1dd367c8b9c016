"""One experiment end to end: datasets -> splits -> cached selections -> rows -> files.

The loop is (dataset, p_test, seed, method series); every finished unit is cached in
``OUT/cache/`` before the next one starts, so a rerun of the same config resumes where an
interrupted one stopped and reproduces identical numbers.
"""
from __future__ import annotations

import datetime as _dt
import os
import statistics
import sys
import time
import warnings
from typing import Callable

from tqdm.auto import tqdm

from .cache import ResultCache, code_fingerprint
from .config import ExperimentConfig, options_suffix
from .datasets import fingerprint, is_missing_error, load_spec, split_fingerprint
from .paper import paper_cell
from .runner import SplitKernels, num_classes_of, run_selection

__all__ = ["DatasetMissingError", "RunError", "run_experiment", "aggregate"]


class DatasetMissingError(RuntimeError):
    """A dataset of the config is absent and ``skip_missing`` is false."""


class RunError(RuntimeError):
    """A unit (dataset, method, p_test, seed) failed; the message says which and why."""


def _mean_std(values: list[float]) -> tuple[float, float]:
    vals = [v for v in values if v == v]
    if not vals:
        return float("nan"), float("nan")
    mean = statistics.fmean(vals)
    std = statistics.stdev(vals) if len(vals) > 1 else 0.0   # sample std (ddof = 1)
    return mean, std


def aggregate(dataset: str, spec, sweep: dict | None, p_test: float, seeds: list[int], records: list[dict],
              paper_table: str | None) -> dict:
    """One results row from the per-seed records (schema: DESIGN.md contracts + extras).

    ``test_acc``/``mean``/``std`` follow the config's ``unreachable`` convention;
    ``test_acc_class0``/``test_acc_wrong`` (and their means) are the same chosen models
    scored under each convention, so the gap between them is visible in every row.
    """
    accs = [r["test_acc"] for r in records]
    mean, std = _mean_std(accs)
    acc0 = [r["test_acc_class0"] for r in records]
    accw = [r["test_acc_wrong"] for r in records]
    return {
        "dataset": dataset,
        "method": spec.label,
        "setting": spec.setting,
        "p_test": p_test,
        "sweep": sweep,
        "options": dict(spec.options),
        "seeds": list(seeds),
        "test_acc": accs,
        "mean": mean,
        "std": std,
        "test_acc_class0": acc0,
        "mean_class0": _mean_std(acc0)[0],
        "test_acc_wrong": accw,
        "mean_wrong": _mean_std(accw)[0],
        "best_params": [r["chosen"] for r in records],
        "val_acc": [r["val_acc"] for r in records],
        "unreachable": [r["unreachable"] for r in records],
        "n_test": [r["n_test"] for r in records],
        "paper": paper_cell(dataset, spec.label, p_test, paper_table, sweep),
        "wall_time_s": sum(r["wall_time_s"] for r in records),
        "warnings": list(dict.fromkeys(w for r in records for w in r.get("warnings", []))),
        "engine": spec.engine,
        "grid_size": len(records[0]["grid"]) if records else 0,
    }


def _load_datasets(cfg: ExperimentConfig, root: str, log: Callable[[str], None]):
    loaded, skipped = [], []
    for spec in cfg.datasets:
        try:
            data = load_spec(spec, root)
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
                   progress: bool = True, log: Callable[[str], None] | None = None,
                   predict_grid: Callable | None = None, write: bool = True) -> dict:
    """Run ``cfg``; write ``results.{json,csv,md}`` (and the plot, if any) into ``out_dir``."""
    from graphstk.data import make_split, resolve_data_root

    if log is None:
        def log(msg: str) -> None:
            tqdm.write(msg, file=sys.stderr)
    started = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    t0 = time.perf_counter()
    root = str(resolve_data_root(data_root))
    loaded, skipped = _load_datasets(cfg, root, log)
    if predict_grid is None and loaded:
        from graphstk.methods import predict_grid
    cache = ResultCache(os.path.join(out_dir, "cache"))
    solver_kwargs = cfg.solver.engine_kwargs()
    code = code_fingerprint()
    series = [(m, sweep, grid) for m in cfg.methods for sweep, grid in m.series()]
    total = len(loaded) * len(cfg.p_test) * len(cfg.seeds) * len(series)
    records: dict[tuple, dict[int, dict]] = {}
    computed = 0
    with tqdm(total=total, desc=cfg.name, unit="run", disable=not progress, file=sys.stderr,
              dynamic_ncols=True) as bar:
        for spec, data in loaded:
            fp = fingerprint(data)
            n_cls = num_classes_of(data)
            for p in cfg.p_test:
                for seed in cfg.seeds:
                    split = make_split(data, p, seed, planetoid_split=cfg.planetoid_split)
                    kernels = SplitKernels(data, split, cfg.solver.torch_dtype)
                    sfp = split_fingerprint(split)
                    for m, sweep, grid in series:
                        name = f"{m.display()}{_sweep_str(sweep)}"
                        bar.set_postfix_str(f"{spec.name} {name} p={p:g} seed={seed}", refresh=False)
                        payload = {"dataset": spec.identity(), "data": fp, "p_test": p, "seed": seed,
                                   "split": sfp, "method": m.label, "engine": m.engine, "setting": m.setting,
                                   "options": m.options, "grid": grid, "solver": cfg.solver.to_dict(),
                                   "unreachable": cfg.unreachable, "code": code}
                        label = f"{spec.name}_{name}_p{p:g}_s{seed}"
                        rec = cache.get(label, payload)
                        if rec is None:
                            try:
                                with warnings.catch_warnings(record=True) as caught:
                                    rec = run_selection(predict_grid, m, grid, data, split, kernels, n_cls,
                                                        solver_kwargs, unreachable=cfg.unreachable)
                                rec["warnings"] = list(dict.fromkeys(str(w.message) for w in caught))
                            except Exception as err:
                                raise RunError(f"{spec.name} / {name} / p_test={p:g} / "
                                               f"seed={seed}: {type(err).__name__}: {err}") from err
                            cache.put(label, payload, rec)
                            computed += 1
                        records.setdefault((spec.name, name, p), {})[seed] = rec
                        bar.update(1)
                    del kernels
    rows = []
    for spec, _ in loaded:
        for m, sweep, _grid in series:
            for p in cfg.p_test:
                recs = records[(spec.name, f"{m.display()}{_sweep_str(sweep)}", p)]
                rows.append(aggregate(spec.name, m, sweep, p, cfg.seeds, [recs[s] for s in cfg.seeds],
                                      cfg.paper_table))
    for row in rows:
        name = (f"{row['dataset']} {row['method']}{options_suffix(row['options'])}{_sweep_str(row['sweep'])} "
                f"p_test={row['p_test']:g}")
        # unreachable test nodes: the table's "unreachable" column, and a note beside degenerate rows (report.row_note)
        if row["warnings"]:
            more = f" (+{len(row['warnings']) - 1} similar, see results.json)" if len(row["warnings"]) > 1 else ""
            log(f"engine warning: {name}: {row['warnings'][0]}{more}")
    import graphstk

    results = {
        "config": cfg.to_dict(),
        "rows": rows,
        "wall_time_s": time.perf_counter() - t0,
        "skipped": skipped,
        "started": started,
        "data_root": root,
        "graphstk_version": getattr(graphstk, "__version__", None),
        "cache": {"dir": os.path.join(out_dir, "cache"), "reused": cache.hits, "computed": computed,
                  "code": code},
        "protocol": {
            "selection": "best val accuracy; ties -> first grid point in grid order (keys in config order, "
                         "last key varying fastest)",
            "std": "sample standard deviation over seeds (ddof=1); 0 for a single seed",
            "unreachable": UNREACHABLE_TEXT[cfg.unreachable],
        },
    }
    if write:
        from .report import write_all

        write_all(out_dir, results)
        if cfg.plot is not None and rows:
            from .plots import sweep_plot

            sweep_plot(rows, cfg.plot, os.path.join(out_dir, cfg.plot.file))
    return results


UNREACHABLE_TEXT = {
    "wrong": "unreachable: wrong -- val/test nodes whose score row is all zero (or not finite) count as wrong; "
             "rows also carry test_acc_class0 (plain argmax) for comparison",
    "class0": "unreachable: class0 -- plain argmax of every score row (the STKR paper's convention): an all-zero "
              "row predicts class 0, for val (selection) and test; rows also carry test_acc_wrong",
}


def _sweep_str(sweep: dict | None) -> str:
    if not sweep:
        return ""
    return "[" + ",".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in sweep.items()) + "]"
