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

import time

import torch

from ...exceptions import ProtocolError
from ..metrics import mean_std
from ..paper import vector_paper_cell
from ..registry import MethodEntry, MethodInput, get_method
from ..vector_data import ids_fingerprint, load_vector_spec, vector_fingerprint

__all__ = ["Protocol", "ProtocolError", "VectorProtocol", "call_method", "masked_labels"]


def masked_labels(y: torch.Tensor, labeled: torch.Tensor) -> torch.Tensor:
    """``y`` with every entry outside ``labeled`` set to ``-1`` (what a method may see)."""
    out = torch.full_like(y, -1)
    out[labeled] = y[labeled]
    return out


def call_method(entry: MethodEntry, options: dict, problem: MethodInput, points: list[dict]) -> list[torch.Tensor]:
    """``entry.fit_predict(problem, [fixed | options | point, ...])``, its output checked.

    ``points`` hold the grid parameters only; the method's ``fixed`` keys and the config's
    ``fixed`` overrides (``options``) are merged into each. Classification scores must be
    ``[len(eval), C]``, one-class scores ``[len(eval)]``; they come back as CPU float64 (the metrics
    are computed on the host; a method computes on ``problem.device``).
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

    def __init__(self, cfg, kernels=None):
        self.cfg = cfg
        self.kernels = kernels      # the run's KernelCache, handed to every method in MethodInput.kernels
        self.opts = dict(cfg.protocol_options)
        self.device = torch.device(getattr(cfg, "device", "cpu"))
        if self.device.type == "cuda" and not torch.cuda.is_available():
            raise ProtocolError(f"device {cfg.device!r}: CUDA is not available on this machine (torch "
                                f"{torch.__version__}); run with --device cpu")

    def entry(self, m) -> MethodEntry:
        """The registration of method series ``m``."""
        return get_method(m.label)

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
        """The repetitions of a level: the config's seeds (a protocol may use the dataset's splits)."""
        return list(self.cfg.seeds)

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

    def extra_code(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Packages and modules whose source joins the cache key's code hash (beyond the engine's)."""
        return (("graphstk.experiments.protocols", "graphstk.experiments.registrations"),
                ("graphstk.experiments.registry", "graphstk.experiments.metrics", "graphstk.experiments.vector_data"))


class VectorProtocol(Protocol):
    """Shared parts of the protocols on :class:`~graphstk.data.vector.VectorDataset` objects."""
    metric = "error"
    higher_is_better = False
    selection = ""              # how the grid point is chosen, for results.json

    def load(self, spec, root):
        return load_vector_spec(spec, root)

    def fingerprint(self, data) -> str:
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
        ids = self.unit_ids(unit)
        return {"protocol": self.name, "options": self.opts, "dataset": spec.identity(), "data": fp,
                "level": level, "rep": rep, "split": ids_fingerprint(*[ids[k] for k in sorted(ids)]),
                "method": m.label, "grid": grid, "fixed": m.options, "device": str(self.device), "code": code}

    def problem(self, data, y, labeled, unlabeled, eval, rep: int, num_classes: int | None = None) -> MethodInput:
        """The :class:`MethodInput` of one fit: labels outside ``labeled`` masked, features on the device."""
        X = data.X.to(self.device) if isinstance(data.X, torch.Tensor) else data.X
        return MethodInput(X=X, data=None, y=masked_labels(y, labeled), labeled=labeled, unlabeled=unlabeled, eval=eval,
                       num_classes=data.num_classes if num_classes is None else num_classes, seed=rep,
                       device=self.device, kernels=self.kernels)

    def aggregate(self, dataset: str, m, sweep, level, reps: list, records: list[dict]) -> dict:
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
