"""What every protocol shares: the interface the pipeline calls, cache keys, results rows, method calls.

A protocol (a plug-in of :mod:`graphstk.experiments.pipeline`) loads and checks a dataset entry, names
its *levels* (``p_test`` values, numbers of labeled points) and per level its *repetitions*, draws one
repetition's sets, evaluates one method series on them (selection never on test points) and turns the
per-repetition records into one results row (docs/experiments.md, "Protocols").
"""
from __future__ import annotations

import scipy.sparse as sp
import torch

from ...exceptions import ProtocolError
from ..datasets import fingerprint, ids_fingerprint, load_spec
from ..metrics import mean_std, select
from ..paper import vector_paper_cell
from ..registry import MethodEntry, MethodInput, get_method

__all__ = ["Protocol", "ProtocolError", "call_method", "masked_labels"]


def masked_labels(y: torch.Tensor, labeled: torch.Tensor) -> torch.Tensor:
    """``y`` with every entry outside ``labeled`` set to ``-1`` (what a method may see)."""
    out = torch.full_like(y, -1)
    out[labeled] = y[labeled]
    return out


def call_method(entry: MethodEntry, options: dict, problem: MethodInput, points: list[dict]) -> list[torch.Tensor]:
    """``entry.fit_predict(problem, [fixed | options | point, ...])``, its output checked.

    A method that needs features gets none: ``ValueError``. ``points`` hold the grid parameters only; the method's ``fixed`` keys and the config's
    ``fixed`` overrides (``options``) are merged into each. Classification scores must be
    ``[len(eval), C]``, one-class scores ``[len(eval)]``; they come back as CPU float64 (the metrics
    are computed on the host; a method computes on ``problem.device``).
    """
    if "features" in entry.needs and problem.X is None:
        raise ValueError(f"{entry.name} needs features (problem.X is None)")
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


def rest_ids(n: int, *excluded: torch.Tensor) -> torch.Tensor:
    """The ids of ``0..n-1`` outside every tensor of ``excluded``."""
    rest = torch.ones(n, dtype=torch.bool)
    for ids in excluded:
        rest[ids] = False
    return rest.nonzero().flatten()


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
        self._held_features = (None, None, None)      # (dataset, device, its features there): see features()
        if self.device.type == "cuda" and not torch.cuda.is_available():
            raise ProtocolError(f"device {cfg.device!r}: CUDA is not available on this machine (torch "
                                f"{torch.__version__}); run with --device cpu")

    def entry(self, m) -> MethodEntry:
        """The registration of method series ``m``."""
        return get_method(m.label)

    def load(self, spec, root):
        return load_spec(spec, root)

    def features(self, data, device: torch.device | str = "cpu"):
        """``data.x`` in the form every method takes: float64 on ``device`` (a CSR matrix when sparse), ``None``
        for a graph without features. Converted once per dataset and handed to every split and method (the
        methods read it and never write it): a split does not copy the feature matrix again."""
        device = torch.device(device)
        held, on, x = self._held_features
        if held is not data or on != device:
            x = getattr(data, "x", None)
            if x is not None and x.is_sparse:
                x = x.coalesce()
                i = x.indices().numpy()
                x = sp.csr_matrix((x.values().double().numpy(), (i[0], i[1])), shape=tuple(x.shape))
            elif x is not None:
                x = x.double().to(device)
            self._held_features = (data, device, x)
        return x

    def check(self, spec, data) -> None:
        """Raise :class:`ProtocolError` for any input this protocol cannot run (before computation)."""

    def fingerprint(self, data) -> str:
        return fingerprint(data)

    def levels(self) -> list:
        raise NotImplementedError

    def reps(self, data, level) -> list[int]:
        """The repetitions of a level: the config's seeds (a protocol may use the dataset's splits)."""
        return list(self.cfg.seeds)

    def prepare(self, spec, data, level, rep):
        raise NotImplementedError

    def split_key(self, unit) -> str:
        """A hash of the id sets of a unit (a dict of id tensors)."""
        return ids_fingerprint(*[unit[k] for k in sorted(unit) if isinstance(unit[k], torch.Tensor)])

    def payload(self, spec, fp: str, level, rep, unit, m, grid: dict, code: str) -> dict:
        """The cache key of one (unit, method series): everything its record depends on."""
        return {"protocol": self.name, "options": {k: v for k, v in self.opts.items() if k != "fit_labels"},
                "dataset": spec.identity(), "data": fp, "level": level, "rep": rep, "split": self.split_key(unit),
                "method": m.label, "setting": m.setting, "grid": grid, "fixed": m.options,
                "device": str(self.device), "code": code}

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
                ("graphstk.experiments.registry", "graphstk.experiments.metrics"))

    def _select(self, scores: list, nv: int, y_val, y_test, score) -> tuple[list, list, int]:
        """``(val, test, best)``: ``score`` of the first ``nv`` rows and of the rest, and the best val point
        (``y_test=None``: the scores hold the validation rows alone, and every test entry is None)."""
        val = [score(s[:nv], y_val) for s in scores]
        test = [None if y_test is None else score(s[nv:], y_test) for s in scores]
        return val, test, select(val, higher_is_better=self.higher_is_better)

    def _row(self, dataset: str, m, sweep, reps: list, records: list[dict], vals: list, **extra) -> dict:
        """The keys of a results row every protocol writes, then ``extra`` (which may override them)."""
        mean, std = mean_std(vals)
        return {"dataset": dataset, "method": m.label, "setting": m.setting, "p_test": None,
                "n_labeled_unit": self.n_labeled_unit, "metric": self.metric, "protocol": self.name, "sweep": sweep,
                "options": dict(m.options), "seeds": list(reps), "test_acc": vals, "mean": mean, "std": std,
                "best_params": [r["chosen"] for r in records], "n_test": [r["n_test"] for r in records],
                "wall_time_s": sum(r["wall_time_s"] for r in records),
                "warnings": list(dict.fromkeys(w for r in records for w in r.get("warnings", []))),
                "engine": "registry", "grid_size": len(records[0]["grid"]) if records else 0, **extra}

    def _paper(self, dataset: str, m, n_labeled, sweep) -> dict | None:
        return vector_paper_cell(self.cfg.paper, self.cfg.paper_table, dataset, m.label, n_labeled, self.metric,
                                 self.name, sweep)
