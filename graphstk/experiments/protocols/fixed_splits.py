"""``fixed-splits``: the dataset's own splits, k-fold cross-validation over the labeled points.

Walder et al.'s SSL-benchmark protocol (Sec. 7.1): per split, folds of the labeled points choose the grid
point (lowest CV error, ties: the first), which is refitted on all labeled points and scored on the
unlabeled ones. Folds, stratification and refit: docs/experiments.md, "fixed-splits".
"""
from __future__ import annotations

import time

import numpy as np
import torch
from sklearn.model_selection import KFold, StratifiedKFold

from ..config import LEAVE_ONE_OUT
from ..metrics import error_rate, n_wrong, select
from ..registry import grid_points
from .base import ProtocolError, call_method
from .vector import VectorProtocol

__all__ = ["FixedSplits", "cv_folds"]


def cv_folds(y_labeled: torch.Tensor, n_folds: int | str, seed: int) -> tuple[list[tuple[np.ndarray, np.ndarray]], bool]:
    """The folds of the labeled points (positions into ``y_labeled``) and whether they are stratified.

    ``y_labeled``: labels of the labeled points; ``n_folds``: an integer, or ``"leave-one-out"`` (one
    fold per labeled point, Walder et al.'s Table 2); ``seed``: shuffles the folds.
    ``k = min(n_folds, len(y_labeled))``; stratified when every class present has at least ``k`` points.
    """
    y = y_labeled.cpu().numpy()
    n = len(y)
    if n < 2:
        raise ProtocolError(f"cross-validation needs at least 2 labeled points, got {n}")
    if isinstance(n_folds, str):
        if n_folds != LEAVE_ONE_OUT:
            raise ProtocolError(f"n_folds must be an integer >= 2 or 'leave-one-out', got {n_folds!r}")
        n_folds = n
    k = min(int(n_folds), n)
    counts = np.bincount(y)
    stratified = bool(counts[counts > 0].min() >= k)
    splitter = (StratifiedKFold(k, shuffle=True, random_state=seed) if stratified
                else KFold(k, shuffle=True, random_state=seed))
    return [(tr, va) for tr, va in splitter.split(np.zeros(n), y)], stratified


class FixedSplits(VectorProtocol):
    name = "fixed-splits"
    n_labeled_unit = "per split"
    selection = "k-fold cross-validation over the labeled points of each split"

    def check(self, spec, data) -> None:
        for L in self.opts["n_labeled"]:
            if L not in data.splits:
                have = sorted(data.splits)
                raise ProtocolError(f"dataset {spec.name!r}: no supplied splits with {L} labeled points "
                                    + (f"(it has splits at {have}; set n_labeled to some of them)" if have else
                                       "(it ships no splits: use the labeled-per-class protocol)"))
            pairs = data.splits[L]
            wanted = self.opts["splits"]
            if wanted != "all":
                bad = [i for i in wanted if i >= len(pairs)]
                if bad:
                    raise ProtocolError(f"dataset {spec.name!r}: split indices {bad} do not exist at {L} labels "
                                        f"(there are {len(pairs)}: 0..{len(pairs) - 1})")
            for r, (lab, unl) in enumerate(pairs):
                common = np.intersect1d(lab.numpy(), unl.numpy())
                if common.size:
                    raise ProtocolError(f"dataset {spec.name!r}: split {r} at {L} labels: the labeled and unlabeled "
                                        f"sets overlap in {common.size} points (e.g. {common[:5].tolist()}); a split "
                                        "must be disjoint")
                if lab.numel() != L:
                    raise ProtocolError(f"dataset {spec.name!r}: split {r} filed under {L} labels has "
                                        f"{lab.numel()} labeled points")

    def reps(self, data, level) -> list[int]:
        wanted = self.opts["splits"]
        return list(range(len(data.splits[level]))) if wanted == "all" else list(wanted)

    def prepare(self, spec, data, level, rep):
        lab, unl = data.splits[level][rep]
        return {"labeled": lab, "unlabeled": unl}

    def evaluate(self, m, grid: dict, data, unit, level, rep) -> dict:
        t0 = time.perf_counter()
        entry = self.entry(m)
        points = grid_points(grid)
        L, U = unit["labeled"], unit["unlabeled"]
        y = data.y
        folds, stratified = cv_folds(y[L], self.opts["cv_folds"], seed=rep)
        wrong = [0] * len(points)                  # integer counts: exact ties stay exact
        for tr, va in folds:
            Ltr, Lva = L[torch.as_tensor(tr)], L[torch.as_tensor(va)]
            prob = self.problem(data, y, Ltr, torch.cat([U, Lva]), Lva, rep)
            for j, s in enumerate(call_method(entry, m.options, prob, points)):
                wrong[j] += n_wrong(s, y[Lva])
        cv = [100.0 * w / L.numel() for w in wrong]
        best = select(cv, higher_is_better=False)
        prob = self.problem(data, y, L, U, U, rep)
        (scores,) = call_method(entry, m.options, prob, [points[best]])
        test = error_rate(scores, y[U])
        return self._record(points, cv, None, best, test, t0, n_labeled=int(L.numel()), n_test=int(U.numel()),
                            n_folds=len(folds), stratified=stratified)

    def describe(self) -> dict:
        return {"name": self.name, "metric": "error: misclassified unlabeled points of each split, in percent",
                "n_labeled": "labeled points per split (the dataset's own splits)",
                "selection": (("leave-one-out cross-validation over the labeled points of each split (one fold "
                               "per labeled point)") if self.opts["cv_folds"] == LEAVE_ONE_OUT else
                              (f"{self.opts['cv_folds']}-fold cross-validation over the labeled points of each split "
                               "(k = min(cv_folds, labeled points); stratified when every class has >= k labeled "
                               "points, else plain k-fold, i.e. leave-one-out at 10 labels)"))
                             + "; lowest CV error, ties -> first grid point; then refit on all labeled points",
                "seeds": "the split indices of the dataset's own splits",
                "std": "sample standard deviation over splits (ddof=1)"}
