"""The semi-supervised classifier contract shared by the Fredholm classifiers and LapRLSC.

``fit(X, y)`` takes every point, labeled and unlabeled, in one matrix ``X`` and marks the
unlabeled rows with ``y = -1`` (scikit-learn's :class:`~sklearn.semi_supervised.LabelSpreading`
convention, read by :func:`graphstk._arrays.semi_supervised_labels`). A subclass implements

* ``_fit(X, labeled, Y)``: ``X`` the validated points (a tensor, or a CSR matrix where the
  subclass accepts sparse input), ``labeled`` a LongTensor of the labeled rows, ``Y`` the
  ``+-1`` one-vs-rest targets ``[l, C]`` of those rows (one column, ``+1`` for ``classes_[1]``,
  when there are two classes);
* ``_scores(X)``: the scores ``[m, C]`` (one column for two classes) of validated points.

and gets ``fit``, ``decision_function``, ``predict`` and ``score`` with scikit-learn's
conventions: ``predict`` returns labels from ``classes_``, ``decision_function`` is 1-D for two
classes, NumPy in gives NumPy out and a tensor in gives a tensor out on its device. The old
call ``fit(X_labeled, y, X_unlabeled)`` is still read (stacked into the one form, with a
``FutureWarning``).
"""
from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
import torch
from sklearn.base import BaseEstimator, ClassifierMixin
from torch import Tensor

from .._arrays import check_is_fitted, is_torch, semi_supervised_labels, to_output, validate_features
from .._checks import user_stacklevel
from ..exceptions import UnreachableNodesWarning
from .grid import unreachable

__all__ = ["SemiSupervisedClassifier", "onevsrest_targets"]


def onevsrest_targets(codes: Tensor, n_classes: int, dtype=torch.float64, full: bool = False) -> Tensor:
    """``+-1`` targets ``[l, C]`` from class ids ``codes`` ``[l]``: ``+1`` in the column of the
    class, ``-1`` elsewhere (Fredholm paper Sec. 5, one-vs-rest). With two classes, the one
    column of ``classes_[1]`` (the other column would be its negative), unless ``full``."""
    cols = torch.arange(n_classes, device=codes.device)
    Y = torch.where(codes.unsqueeze(1) == cols.unsqueeze(0), 1.0, -1.0).to(dtype)
    return Y[:, 1:] if n_classes == 2 and not full else Y


def _stack_unlabeled(X, y, X_unlabeled):
    """``(X; X_unlabeled)`` and ``(y; -1 ...)`` for the deprecated three-argument ``fit``."""
    if sp.issparse(X) or sp.issparse(X_unlabeled):
        Xs = sp.vstack([sp.csr_matrix(X), sp.csr_matrix(X_unlabeled)], format="csr")
    elif is_torch(X) or is_torch(X_unlabeled):
        A = X if is_torch(X) else torch.as_tensor(np.asarray(X))
        B = X_unlabeled if is_torch(X_unlabeled) else torch.as_tensor(np.asarray(X_unlabeled))
        Xs = torch.cat([A, B.to(device=A.device, dtype=A.dtype)])
    else:
        Xs = np.vstack([np.asarray(X), np.asarray(X_unlabeled)])
    n_u = int(X_unlabeled.shape[0])
    if is_torch(y):
        ys = torch.cat([y, torch.full((n_u,), -1, dtype=y.dtype, device=y.device)])
    else:
        yn = np.asarray(y)
        fill = "-1" if yn.dtype.kind in "USO" else -1
        ys = np.concatenate([yn.ravel(), np.full(n_u, fill, dtype=yn.dtype if yn.dtype.kind != "O" else object)])
    return Xs, ys


class SemiSupervisedClassifier(ClassifierMixin, BaseEstimator):
    """Base of the semi-supervised classifiers (module docstring: the one contract).

    Subclasses set ``_accept_sparse = True`` when they work on ``scipy.sparse`` points.
    """

    _accept_sparse = False

    def fit(self, X, y, X_unlabeled=None):
        """Fit on every point ``X`` ``[n, d]`` with labels ``y`` ``[n]``, ``-1`` marking the unlabeled rows.

        Parameters
        ----------
        X : array-like, Tensor (or scipy.sparse where supported) ``[n_samples, n_features]``
            Labeled and unlabeled points together; the unlabeled ones enter the fit without labels.
        y : array-like or Tensor ``[n_samples]``
            Class labels (ints or strings); ``-1`` marks an unlabeled point (as
            :class:`sklearn.semi_supervised.LabelSpreading`). At least two classes must be labeled.
        X_unlabeled : deprecated
            The old ``fit(X_labeled, y, X_unlabeled)`` form: stacked into ``X`` with ``-1``
            labels (a ``FutureWarning``); pass the one form instead.

        Returns
        -------
        self
        """
        name = type(self).__name__
        if X_unlabeled is not None:
            warnings.warn(f"{name}.fit(X_labeled, y, X_unlabeled) is deprecated: pass every point in X and "
                          "y = -1 for the unlabeled ones, fit(X, y)", FutureWarning, stacklevel=2)
            X, y = _stack_unlabeled(X, y, X_unlabeled)
        if y is None:
            raise ValueError(f"{name} requires y to be passed, but the target y is None")
        Xt = validate_features(self, X, reset=True, accept_sparse=self._accept_sparse)
        if is_torch(y) is False and not sp.issparse(Xt) and np.asarray(y).ndim == 2:
            from sklearn.utils.validation import column_or_1d
            y = column_or_1d(y, warn=True)
        labeled, classes, codes = semi_supervised_labels(y, int(Xt.shape[0]), min_classes=2)
        self.classes_ = classes
        device = torch.device("cpu") if sp.issparse(Xt) else Xt.device
        idx = torch.from_numpy(np.flatnonzero(labeled)).to(device)
        Y = onevsrest_targets(torch.from_numpy(codes[labeled]).to(device), len(classes))
        self._fit(Xt, idx, Y)
        return self

    def _decision(self, X) -> Tensor:
        return self._flagged_decision(X)[0]

    def _flagged_decision(self, X) -> tuple[Tensor, Tensor]:
        """``(scores, degenerate rows)`` of ``X``."""
        check_is_fitted(self)
        S = self._scores(validate_features(self, X, reset=False, accept_sparse=self._accept_sparse))
        return S, self._flag_degenerate(S)

    def _flag_degenerate(self, S: Tensor) -> Tensor:
        """Flag the rows of ``S`` whose decision values are all zero (or not finite): the kernel gives
        those points no weight on any labeled point, so no class is better than another there.
        Warns (:class:`UnreachableNodesWarning`) and, from the first call that finds such rows on,
        keeps the last call's flags in ``unreachable_`` / ``n_unreachable_``; returns the flags."""
        bad = unreachable(S)
        k = int(bad.sum())
        if k or hasattr(self, "unreachable_"):   # set once a call finds such rows (a clean call changes nothing)
            self.unreachable_, self.n_unreachable_ = bad, k
        if k:
            m = int(bad.numel())
            where = "on every point" if k == m else "there"
            warnings.warn(f"{type(self).__name__}: {k} of {m} points have all decision values zero or not finite: "
                          f"the kernel is degenerate {where} (no weight on any labeled point, e.g. a Gaussian width "
                          "far below the distances between points); predict marks them -1 instead of a class, "
                          "flagged in .unreachable_ and counted in .n_unreachable_. Widen the kernel (outer_width, "
                          "inner_width, width) or check the data's scale", UnreachableNodesWarning,
                          stacklevel=user_stacklevel())
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
        point) get ``-1`` (``"-1"`` for string classes), the unlabeled marker, instead of a class;
        they are flagged in ``unreachable_`` with an :class:`UnreachableNodesWarning`."""
        S, bad = self._flagged_decision(X)
        idx = (S[:, 0] > 0).long() if S.shape[1] == 1 else S.argmax(1)
        bad = bad.to(idx.device)
        flagged = bool(bad.any())
        if is_torch(X) and self.classes_.dtype.kind in "biuf":
            out = torch.as_tensor(self.classes_, device=idx.device)[idx]
            return out.masked_fill(bad, -1) if flagged else out
        out = self.classes_[idx.cpu().numpy()]
        if flagged:
            out = np.where(bad.cpu().numpy(), np.asarray("-1" if out.dtype.kind in "USO" else -1), out)
        return out

    def score(self, X, y, sample_weight=None) -> float:
        """Accuracy of ``predict(X)`` on the labeled entries of ``y`` (entries ``-1`` are unlabeled
        and left out), so that ``cross_val_score`` and ``GridSearchCV`` with default scoring
        measure held-out labeled points only."""
        from sklearn.metrics import accuracy_score

        yn = y.detach().cpu().numpy() if is_torch(y) else np.asarray(y)
        keep = ~((yn == -1) | (yn == "-1")) if yn.dtype.kind in "USO" else yn != -1
        if not keep.any():
            raise ValueError("score needs labeled points: every entry of y is -1 (unlabeled)")
        ids = np.flatnonzero(keep)
        Xk = X[torch.from_numpy(ids).to(X.device)] if is_torch(X) else (X[ids] if sp.issparse(X) else np.asarray(X)[ids])
        pred = self.predict(Xk)
        pred = pred.detach().cpu().numpy() if is_torch(pred) else pred
        w = None if sample_weight is None else np.asarray(sample_weight)[ids]
        return float(accuracy_score(yn[ids], pred, sample_weight=w))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = self._accept_sparse
        return tags
