"""The semi-supervised classifier contract of the Fredholm classifiers and LapRLSC (``docs/estimators.md``).

``fit(X, y)`` takes every point in ``X``, ``y = -1`` marking the unlabeled rows. A subclass implements
``_fit(X, labeled, Y)`` (validated points, a LongTensor of the labeled rows, their ``+-1`` one-vs-rest
targets ``[l, C]``, one column for two classes) and ``_scores(X)`` (``[m, C]``), and gets ``fit``,
``decision_function``, ``predict``, ``score`` and ``unreachable_``.
"""
from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
import torch
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.metrics import accuracy_score
from sklearn.utils.validation import column_or_1d
from torch import Tensor

from .._arrays import check_is_fitted, is_torch, semi_supervised_labels, to_output, validate_features
from .._checks import user_stacklevel
from ..exceptions import UnreachableNodesWarning
from ..operators.base import KernelOperator
from .grid import unreachable

__all__ = ["SemiSupervisedClassifier", "UnreachableMixin", "onevsrest_targets", "labeled_accuracy"]


def onevsrest_targets(codes: Tensor, n_classes: int, dtype=torch.float64, full: bool = False) -> Tensor:
    """``+-1`` targets ``[l, C]`` from class ids ``codes`` ``[l]``: ``+1`` in the column of the
    class, ``-1`` elsewhere (Fredholm paper Sec. 5, one-vs-rest). With two classes, the one
    column of ``classes_[1]`` (the other column would be its negative), unless ``full``."""
    cols = torch.arange(n_classes, device=codes.device)
    Y = torch.where(codes.unsqueeze(1) == cols.unsqueeze(0), 1.0, -1.0).to(dtype)
    return Y[:, 1:] if n_classes == 2 and not full else Y


def labels_from_scores(classes: np.ndarray, S: Tensor, bad: Tensor, like):
    """Labels ``classes[argmax S]`` (one column: ``classes[1]`` where > 0), ``-1`` on the rows flagged in
    ``bad``; a tensor on ``like``'s device for tensor ``like`` and numeric classes, else NumPy."""
    idx = (S[:, 0] > 0).long() if S.shape[1] == 1 else S.argmax(1)
    bad = bad.to(idx.device)
    flagged = bool(bad.any())
    if is_torch(like) and classes.dtype.kind in "biuf":
        out = torch.as_tensor(classes, device=idx.device)[idx]
        return out.masked_fill(bad, -1) if flagged else out
    out = classes[idx.cpu().numpy()]
    if flagged:
        out = np.where(bad.cpu().numpy(), np.asarray("-1" if out.dtype.kind in "USO" else -1), out)
    return out


def labeled_accuracy(estimator, X, y, sample_weight=None) -> float:
    """The ``score`` of the semi-supervised classifiers: accuracy of ``estimator.predict`` on the rows of
    ``X`` (array, tensor, scipy.sparse or a square :class:`~graphstk.operators.KernelOperator`'s rows)
    whose label in ``y`` is not ``-1``."""
    yn = y.detach().cpu().numpy() if is_torch(y) else np.asarray(y)
    keep = ~((yn == -1) | (yn == "-1")) if yn.dtype.kind in "USO" else yn != -1
    if not keep.any():
        raise ValueError("score needs labeled points: every entry of y is -1 (unlabeled)")
    ids = np.flatnonzero(keep)
    if isinstance(X, KernelOperator):
        Xk = X.block(torch.as_tensor(ids, device=X.device), None)
    else:
        Xk = X[torch.from_numpy(ids).to(X.device)] if is_torch(X) else (X[ids] if sp.issparse(X) else np.asarray(X)[ids])
    pred = estimator.predict(Xk)
    pred = pred.detach().cpu().numpy() if is_torch(pred) else pred
    w = None if sample_weight is None else np.asarray(sample_weight)[ids]
    return float(accuracy_score(yn[ids], pred, sample_weight=w))


class UnreachableMixin:
    """``unreachable_`` / ``n_unreachable_`` of a fitted classifier from ``_fit_scores()`` (the scores
    ``[n, C]`` of its fitted points, computed on first access and kept)."""

    def _fit_scores(self) -> Tensor:
        raise NotImplementedError

    @property
    def unreachable_(self):
        """BoolTensor (NumPy for NumPy fits) ``[n_fitted]``: fitted points no label reaches."""
        check_is_fitted(self)
        if "_unreachable" not in self.__dict__:
            S = self._fit_scores()
            S = S if S.dim() == 2 else S.unsqueeze(1)
            flags = unreachable(S)
            self._unreachable = flags if getattr(self, "_fit_on_tensor", False) else flags.cpu().numpy()
        return self._unreachable

    @property
    def n_unreachable_(self) -> int:
        """The number of ``True`` entries of ``unreachable_``."""
        return int(self.unreachable_.sum())


class SemiSupervisedClassifier(UnreachableMixin, ClassifierMixin, BaseEstimator):
    """Base of the semi-supervised classifiers (module docstring); ``_accept_sparse``: takes
    ``scipy.sparse`` points; ``_width_params``: the width parameters named in the degenerate-kernel warning."""

    _accept_sparse = False
    _width_params = "sigma"

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit on every point ``X`` ``[n, d]`` (array, tensor, or scipy.sparse where supported) with class
        labels ``y`` ``[n]`` (ints or strings, ``-1`` marking the unlabeled rows; at least two classes
        labeled). Returns ``self``."""
        name = type(self).__name__
        if y is None:
            raise ValueError(f"{name} requires y to be passed, but the target y is None")
        Xt = validate_features(self, X, reset=True, accept_sparse=self._accept_sparse)
        if is_torch(y) is False and not sp.issparse(Xt) and np.asarray(y).ndim == 2:
            y = column_or_1d(y, warn=True)
        labeled, classes, codes = semi_supervised_labels(y, int(Xt.shape[0]), min_classes=2)
        self.classes_ = classes
        device = torch.device("cpu") if sp.issparse(Xt) else Xt.device
        idx = torch.from_numpy(np.flatnonzero(labeled)).to(device)
        Y = onevsrest_targets(torch.from_numpy(codes[labeled]).to(device), len(classes))
        self.__dict__.pop("_unreachable", None)
        self._fit_on_tensor = is_torch(X)
        self._fit(Xt, idx, Y)
        return self

    def _decision(self, X) -> Tensor:
        return self._flagged_decision(X)[0]

    def _flagged_decision(self, X) -> tuple[Tensor, Tensor]:
        check_is_fitted(self)
        S = self._scores(validate_features(self, X, reset=False, accept_sparse=self._accept_sparse))
        return S, self._flag_degenerate(S)

    def _flag_degenerate(self, S: Tensor) -> Tensor:
        """Flags of the rows of ``S`` with all decision values zero or not finite (warned about)."""
        bad = unreachable(S)
        k = int(bad.sum())
        if k:
            m = int(bad.numel())
            where = "on every point" if k == m else "there"
            warnings.warn(f"{type(self).__name__}: {k} of {m} points have all decision values zero or not finite: "
                          f"the kernel is degenerate {where} (no weight on any labeled point, e.g. a Gaussian width "
                          "far below the distances between points); predict marks them -1 instead of a class. "
                          f"Widen the kernel ({self._width_params}, or None for the median heuristic) or check the "
                          "data's scale", UnreachableNodesWarning, stacklevel=user_stacklevel())
        return bad

    def decision_function(self, X):
        """Scores of ``X``: ``[n, C]`` one-vs-rest columns in the order of ``classes_``, or ``[n]``
        (the score of ``classes_[1]``) for two classes; NumPy out for NumPy in, a tensor on
        ``X``'s device for a tensor."""
        S = self._decision(X)
        return to_output(S[:, 0] if S.shape[1] == 1 else S, X)

    def predict(self, X):
        """Labels ``classes_[argmax_c score]`` (two classes: ``classes_[1]`` where the score is > 0).
        A tensor of labels on ``X``'s device for tensor input and numeric classes, else NumPy.
        Points whose decision values are all zero (a degenerate kernel: no weight on any labeled
        point) get ``-1`` (``"-1"`` for string classes), the unlabeled marker, instead of a class,
        with an :class:`UnreachableNodesWarning`."""
        S, bad = self._flagged_decision(X)
        return labels_from_scores(self.classes_, S, bad, X)

    def score(self, X, y, sample_weight=None) -> float:
        """Accuracy of ``predict(X)`` on the labeled entries of ``y`` (entries ``-1`` are unlabeled
        and left out), so that ``cross_val_score`` and ``GridSearchCV`` with default scoring
        measure held-out labeled points only."""
        return labeled_accuracy(self, X, y, sample_weight)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = self._accept_sparse
        return tags
