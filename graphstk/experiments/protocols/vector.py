"""What the protocols on :class:`~graphstk.data.VectorDataset` objects share (``fixed-splits``,
``labeled-per-class``, ``one-class``): loading a vector entry, its cache keys, error-rate rows and the papers'
cells. Loaded only when a config names one of them.
"""
from __future__ import annotations

import time

import torch

from ..registry import MethodInput
from ..vector_data import load_vector_spec, vector_fingerprint
from .base import Protocol, masked_labels

__all__ = ["VectorProtocol"]


class VectorProtocol(Protocol):
    """Shared parts of the protocols on :class:`~graphstk.data.vector.VectorDataset` objects."""
    metric = "error"
    higher_is_better = False
    selection = ""              # how the grid point is chosen, for results.json

    def load(self, spec, root):
        return load_vector_spec(spec, root)

    def extra_code(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        packages, modules = super().extra_code()
        return packages, (*modules, "graphstk.experiments.vector_data")

    def fingerprint(self, data) -> str:
        return vector_fingerprint(data)

    def levels(self) -> list:
        return list(self.opts["n_labeled"])

    def label(self, dataset: str, series: str, level, rep) -> str:
        return f"{dataset}_{series}_n{level}_r{rep}"

    def problem(self, data, y, labeled, unlabeled, eval, rep: int, num_classes: int | None = None) -> MethodInput:
        """The :class:`MethodInput` of one fit: labels outside ``labeled`` masked, features on the device."""
        X = data.X.to(self.device) if isinstance(data.X, torch.Tensor) else data.X
        return MethodInput(X=X, data=None, y=masked_labels(y, labeled), labeled=labeled, unlabeled=unlabeled,
                           eval=eval, num_classes=data.num_classes if num_classes is None else num_classes, seed=rep,
                           device=self.device, kernels=self.kernels)

    def aggregate(self, dataset: str, m, sweep, level, reps: list, records: list[dict]) -> dict:
        return self._row(dataset, m, sweep, reps, records, [r["test"] for r in records], n_labeled=level,
                         val=[r["val"] for r in records], paper=self._paper(dataset, m, level, sweep))

    def _record(self, points: list[dict], val: list[float], test_all: list | None, best: int, test: float,
                t0: float, **sizes) -> dict:
        grid = [{"params": p, "val": v, **({} if test_all is None else {"test": t})}
                for p, v, t in zip(points, val, test_all or [None] * len(points))]
        return {"grid": grid, "chosen_index": best, "chosen": points[best], "val": val[best], "test": test,
                **sizes, "wall_time_s": time.perf_counter() - t0}
