"""What every protocol shares: the interface the pipeline calls, metrics, selection, method calls.

A protocol is a plug-in of the one pipeline (:mod:`graphstk.experiments.pipeline`). It says

* how a dataset entry is loaded and checked (every bad input raises before any computation),
* its *levels* (``p_test`` values, or numbers of labeled points) and, per level, its
  *repetitions* (seeds, or the dataset's own split indices),
* how one repetition's sets are drawn (seeded, identical for every method),
* how one method series is evaluated on them (model selection never on test points), and
* how the per-repetition records become one results row (``metric``, ``n_labeled``, ...).
"""
from __future__ import annotations

import math
import statistics
import time

import torch

from ..registry import MethodEntry, Problem, get_method

__all__ = ["Protocol", "ProtocolError", "VectorProtocol", "error_rate", "n_wrong", "auc", "select", "call_method",
           "mean_std", "masked_labels"]


class ProtocolError(ValueError):
    """Bad input found by a protocol's checks (before any computation)."""


def mean_std(values: list[float]) -> tuple[float, float]:
    """Mean and sample std (ddof = 1; 0 for one value) of the finite values (NaN if none)."""
    vals = [v for v in values if v is not None and v == v]
    if not vals:
        return float("nan"), float("nan")
    return statistics.fmean(vals), (statistics.stdev(vals) if len(vals) > 1 else 0.0)


def n_wrong(scores: torch.Tensor, y_true: torch.Tensor) -> int:
    """Number of misclassified points: argmax of each score row against ``y_true``; a row with a
    non-finite entry counts as an error (no prediction was made)."""
    if scores.shape[0] != y_true.shape[0]:
        raise ValueError(f"method returned {scores.shape[0]} score rows for {y_true.shape[0]} points")
    finite = torch.isfinite(scores).all(dim=1)
    pred = torch.nan_to_num(scores).argmax(dim=1)
    return int(((pred != y_true.to(pred.device)) | ~finite).sum())


def error_rate(scores: torch.Tensor, y_true: torch.Tensor) -> float:
    """Classification error in percent (:func:`n_wrong` over the number of points; NaN for none)."""
    n = y_true.numel()
    wrong = n_wrong(scores, y_true)
    return 100.0 * wrong / n if n else float("nan")


def auc(scores: torch.Tensor, inside: torch.Tensor) -> float:
    """Area under the ROC curve (``sklearn.metrics.roc_auc_score``) of ``scores`` (higher = more
    inside) for the boolean ``inside`` labels, over every threshold; in [0, 1]."""
    from sklearn.metrics import roc_auc_score

    s = scores.detach().cpu().double().numpy()
    if not math.isfinite(float(s.sum())):
        raise ValueError("the method returned non-finite one-class scores; the ROC AUC is undefined")
    return float(roc_auc_score(inside.cpu().numpy().astype(bool), s))


def select(values: list[float], higher_is_better: bool) -> int:
    """Index of the best value; ties go to the first in grid order; NaN never wins."""
    best, best_i = None, 0
    for i, v in enumerate(values):
        if v != v:
            continue
        if best is None or (v > best if higher_is_better else v < best):
            best, best_i = v, i
    return best_i


def masked_labels(y: torch.Tensor, labeled: torch.Tensor) -> torch.Tensor:
    """``y`` with every entry outside ``labeled`` set to ``-1`` (what a method may see)."""
    out = torch.full_like(y, -1)
    out[labeled] = y[labeled]
    return out


def call_method(entry: MethodEntry, options: dict, problem: Problem, points: list[dict]) -> list[torch.Tensor]:
    """``entry.fit_predict(problem, [fixed | options | point, ...])``, its output checked.

    ``points`` hold the grid parameters only; the method's ``fixed`` keys and the config's
    ``fixed`` overrides (``options``) are merged into each. Classification scores must be
    ``[len(eval), C]``, one-class scores ``[len(eval)]``; they come back as CPU float64.
    """
    full = [{**entry.fixed, **options, **p} for p in points]
    out = entry.fit_predict(problem, full)
    if not isinstance(out, (list, tuple)) or len(out) != len(points):
        raise RuntimeError(f"{entry.name}: fit_predict returned {type(out).__name__} of length "
                           f"{len(out) if hasattr(out, '__len__') else '?'} for {len(points)} grid points "
                           "(it must return one score tensor per grid point)")
    ne = problem.eval.numel()
    want = (ne,) if entry.task == "one-class" else (ne, problem.num_classes)
    res = []
    for p, s in zip(points, out):
        s = torch.as_tensor(s).detach().cpu().double()
        if tuple(s.shape) != want:
            raise RuntimeError(f"{entry.name}: scores of shape {tuple(s.shape)} for grid point {p}; expected "
                               f"{want} ({entry.task}: {len(problem.eval)} eval points"
                               + ("" if entry.task == "one-class" else f" x {problem.num_classes} classes") + ")")
        res.append(s)
    return res


class Protocol:
    """The interface the pipeline calls (see the module doc); one instance per (task) config."""
    name = ""
    metric = ""                 # "accuracy" | "error" | "auc"
    n_labeled_unit = ""         # what n_labeled counts, e.g. "per split" or "per class"
    higher_is_better = True

    def __init__(self, cfg):
        self.cfg = cfg
        self.opts = dict(cfg.protocol_options)

    # data -------------------------------------------------------------------------------
    def load(self, spec, root):
        raise NotImplementedError

    def check(self, spec, data) -> None:
        """Raise :class:`ProtocolError` for any input this protocol cannot run (before computation)."""

    def fingerprint(self, data) -> str:
        raise NotImplementedError

    # units ------------------------------------------------------------------------------
    def levels(self) -> list:
        raise NotImplementedError

    def reps(self, data, level) -> list[int]:
        raise NotImplementedError

    def prepare(self, spec, data, level, rep):
        raise NotImplementedError

    def payload(self, spec, fp: str, level, rep, unit, m, grid: dict, code: str) -> dict:
        raise NotImplementedError

    def label(self, dataset: str, series: str, level, rep) -> str:
        raise NotImplementedError

    def evaluate(self, m, grid: dict, data, unit, level, rep) -> dict:
        raise NotImplementedError

    def aggregate(self, dataset: str, m, sweep, level, reps: list, records: list[dict]) -> dict:
        raise NotImplementedError

    def describe(self) -> dict:
        raise NotImplementedError

    def extra_code(self) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
        """Packages and modules whose source joins the cache key's code hash (beyond the engine's);
        ``None``: the engine and ``runner.py`` only."""
        return None


class VectorProtocol(Protocol):
    """Shared parts of the protocols on :class:`~graphstk.data.vector.VectorDataset` objects."""
    metric = "error"
    higher_is_better = False
    selection = ""              # how the grid point is chosen, for results.json

    def extra_code(self):
        return (("graphstk.experiments.protocols", "graphstk.experiments.registrations"),
                ("graphstk.experiments.registry", "graphstk.experiments.vector_data"))

    def load(self, spec, root):
        from ..vector_data import load_vector_spec

        return load_vector_spec(spec, root)

    def fingerprint(self, data) -> str:
        from ..vector_data import vector_fingerprint

        return vector_fingerprint(data)

    def levels(self) -> list:
        return list(self.opts["n_labeled"])

    def reps(self, data, level) -> list[int]:
        return list(self.cfg.seeds)

    def label(self, dataset: str, series: str, level, rep) -> str:
        return f"{dataset}_{series}_n{level}_r{rep}"

    def unit_ids(self, unit) -> dict:
        """The id sets of a unit (for the cache key and the invariance tests)."""
        return {k: v for k, v in unit.items() if isinstance(v, torch.Tensor)}

    def payload(self, spec, fp: str, level, rep, unit, m, grid: dict, code: str) -> dict:
        from ..vector_data import ids_fingerprint

        ids = self.unit_ids(unit)
        return {"protocol": self.name, "options": self.opts, "dataset": spec.identity(), "data": fp,
                "level": level, "rep": rep, "split": ids_fingerprint(*[ids[k] for k in sorted(ids)]),
                "method": m.label, "grid": grid, "fixed": m.options, "code": code}

    def entry(self, m) -> MethodEntry:
        return get_method(m.label)

    def aggregate(self, dataset: str, m, sweep, level, reps: list, records: list[dict]) -> dict:
        from ..paper import vector_paper_cell

        vals = [r["test"] for r in records]
        mean, std = mean_std(vals)
        return {
            "dataset": dataset, "method": m.label, "setting": m.setting, "p_test": None,
            "n_labeled": level, "n_labeled_unit": self.n_labeled_unit, "metric": self.metric,
            "protocol": self.name, "sweep": sweep, "options": dict(m.options), "seeds": list(reps),
            "test_acc": vals, "mean": mean, "std": std,
            "best_params": [r["chosen"] for r in records],
            "val": [r["val"] for r in records],
            "n_test": [r["n_test"] for r in records],
            "paper": vector_paper_cell(self.cfg.paper, self.cfg.paper_table, dataset, m.label, level,
                                       self.metric, self.name, sweep),
            "wall_time_s": sum(r["wall_time_s"] for r in records),
            "warnings": list(dict.fromkeys(w for r in records for w in r.get("warnings", []))),
            "engine": "registry", "grid_size": len(records[0]["grid"]) if records else 0,
        }

    def _record(self, points: list[dict], val: list[float], test_all: list | None, best: int, test: float,
                t0: float, **sizes) -> dict:
        grid = [{"params": p, "val": v, **({} if test_all is None else {"test": t})}
                for p, v, t in zip(points, val, test_all or [None] * len(points))]
        return {"grid": grid, "chosen_index": best, "chosen": points[best], "val": val[best], "test": test,
                **sizes, "wall_time_s": time.perf_counter() - t0}
