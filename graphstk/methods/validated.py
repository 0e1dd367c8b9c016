"""A validated STKR (as scikit-learn's ``RidgeCV``): :class:`STKRCV` solves the whole hyperparameter grid in one
:func:`graphstk.methods.engine.solve` call and keeps the point best on validation nodes; :meth:`STKRCV.grid_scores`
gives every point's scores to a caller that selects by itself (the runner's protocols).
"""
from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.utils.validation import check_is_fitted
from torch import Tensor

from ._constraints import Interval, StrOptions
from .._checks import check_real, user_stacklevel
from .._index import as_index
from ..exceptions import NonFiniteScoresWarning
from ..operators.base import KernelOperator
from ..spectral.transforms import InverseLaplacian, LabelPropagationFilter, ReciprocalPolynomial, Transform
from .engine import one_family, solve
from .estimators import (_common_constraints, _GraphEstimator, _label_tensor, _shared, check_budgets,
                         divergence_advice)
from .grid import lp_scores, scores_from
from .selection import correct, select

__all__ = ["STKRCV", "DEFAULT_ETAS", "DEFAULT_BETAS"]

#: Appendix D's grids (Zhai et al., l.989-1005): the defaults of :class:`STKRCV`
DEFAULT_ETAS = (0.7, 0.8, 0.9, 0.99, 0.999, 0.9999, 0.99999, 0.999999)
DEFAULT_BETAS = (1e3, 1e2, 1e1, 1e0, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8)


class STKRCV(_GraphEstimator):
    """STKR (or Label-Prop) with its hyperparameters chosen on validation nodes, the whole grid in one engine call.

    The grid is ``transforms x betas x num_iter`` (the last varying fastest; Label-Prop's has no ``beta``); every
    point scores as ``STKR(transform, beta, num_iter=T, ...)`` (or ``LabelPropagation(eta, num_iter=T)``) would.

    Parameters
    ----------
    transforms : sequence of Transform, default None
        One family: :class:`~graphstk.spectral.transforms.LabelPropagationFilter` (Label-Prop,
        Eq. 22), :class:`~graphstk.spectral.transforms.Polynomial` (Algorithm 1),
        :class:`~graphstk.spectral.transforms.InverseLaplacian` /
        :class:`~graphstk.spectral.transforms.ReciprocalPolynomial` (Algorithm 2) or
        :class:`~graphstk.spectral.transforms.TopD` (Eqs. 8-9). ``None``: ``InverseLaplacian(eta)``
        for Appendix D's ``eta`` grid (``DEFAULT_ETAS``).
    betas : sequence of float > 0, default None
        Ridge parameters ``beta_n`` of Eq. 7 (ignored by Label-Prop). ``None``: Appendix D's grid
        (``DEFAULT_BETAS``).
    setting : {"transductive", "inductive"}, default "transductive"
        As in :class:`~graphstk.methods.STKR`. The paper's inductive selection hides the
        validation nodes too: pass them in ``hidden_idx``.
    step_size : "auto" | "paper" | float, default "auto"
        Richardson step of Algorithms 1 and 2.
    num_iter : int or sequence of int, optional
        Fixed iteration budgets ``T`` (the paper's transductive grid; one run serves them all).
        ``None`` (default): every system solved to ``tol``.
    labels : {"onehot", "centered"}, default "onehot"
        The label matrix (:func:`~graphstk.methods.problem.make_problem`).
    solver, max_iter, tol, max_seconds, num_classes, clean_edges, dtype, device :
        As in :class:`~graphstk.methods.STKR` (``max_seconds`` bounds each iterative solve).
    normalization : {"lazy", "symmetric"}, optional
        The graph kernel a PyG ``Data`` becomes. ``None`` (default): ``"symmetric"`` for Label-Prop, ``"lazy"``
        for every STKR transform (as their estimators).

    Attributes
    ----------
    cv_results_ : dict of numpy arrays
        scikit-learn's layout for one split: ``params``, ``param_transform``, ``param_beta``, ``param_num_iter``
        (``None`` where not applicable), ``split0_test_score`` = ``mean_test_score`` (validation accuracy in
        ``[0, 1]``, unreachable nodes wrong), ``std_test_score`` (zeros), ``rank_test_score`` (ties share a rank).
    best_index_ : int
        The chosen point: the best validation accuracy, the first in grid order on ties.
    best_params_ : dict
        ``{"transform": ..., "beta": ..., "num_iter": ...}`` of the chosen point.
    best_score_ : float
        Its validation accuracy.
    h_ : Tensor ``[N_visible, C]``
        The chosen point's solution (Label-Prop: ``Yhat``), used by ``predict``.
    kernel_, problem_, num_classes_, classes_, missing_classes_, history_, unreachable_,
    n_unreachable_ :
        As in :class:`~graphstk.methods.STKR` (``history_``: every solve of the grid).

    Examples
    --------
    >>> cv = STKRCV([InverseLaplacian(0.9), InverseLaplacian(0.99)], betas=[1.0, 1e-3])  # doctest: +SKIP
    >>> cv.fit(data, data.train_mask, data.val_mask).best_params_                        # doctest: +SKIP
    >>> acc = (cv.predict(data.test_mask) == data.y[data.test_mask]).float().mean()     # doctest: +SKIP
    """

    _parameter_constraints: dict = {
        **_common_constraints(),
        "transforms": [Transform, list, tuple, None],
        "betas": [Interval(Real, 0, None, closed="neither"), list, tuple, np.ndarray, None],
        "step_size": [StrOptions({"auto", "paper"}), Interval(Real, 0, None, closed="neither")],
        "num_iter": [Interval(Integral, 1, None, closed="left"), list, tuple, None],
        "labels": [StrOptions({"onehot", "centered"})],
    }

    def __init__(self, transforms=None, betas=None, setting: str = "transductive", step_size: str | float = "auto",
                 *, num_iter=None, labels: str = "onehot", solver: str = "auto", max_iter: int = 1000,
                 tol: float = 1e-6, max_seconds: float | None = None, num_classes: int | None = None,
                 clean_edges: bool = False, dtype: torch.dtype = torch.float64, device=None,
                 normalization: str | None = None):
        self.transforms, self.betas, self.setting, self.step_size = transforms, betas, setting, step_size
        self.num_iter, self.labels, self.solver, self.max_iter, self.tol = num_iter, labels, solver, max_iter, tol
        self.max_seconds, self.num_classes, self.clean_edges = max_seconds, num_classes, clean_edges
        self.dtype, self.device, self.normalization = dtype, device, normalization

    def _default_normalization(self) -> str:
        return "symmetric" if self._grid()[1] is LabelPropagationFilter else "lazy"

    def _divergence_advice(self) -> str:
        return divergence_advice(self._grid()[0][0], self.step_size)

    def _check_params(self):
        self._check_common()
        self._grid()

    def _grid(self) -> tuple[list[Transform], type, list[float | None], list[int | None]]:
        """``(transforms, family, betas, budgets)`` checked; ``[None]`` for an axis the grid lacks."""
        transforms = ([InverseLaplacian(e) for e in DEFAULT_ETAS] if self.transforms is None
                      else [self.transforms] if isinstance(self.transforms, Transform) else list(self.transforms))
        if not transforms:
            raise ValueError("transforms is empty: give at least one transform")
        bad = [type(t).__name__ for t in transforms if not isinstance(t, Transform)]
        if bad:
            raise TypeError(f"transforms must be Transform objects (LabelPropagationFilter, Polynomial, "
                            f"InverseLaplacian / ReciprocalPolynomial, TopD), got {bad}")
        family = one_family(transforms, "STKRCV")
        if family is LabelPropagationFilter:
            betas: list = [None]
        else:
            raw = DEFAULT_BETAS if self.betas is None else (
                [self.betas] if isinstance(self.betas, (int, float)) else list(self.betas))
            if not raw:
                raise ValueError("betas is empty: give at least one ridge parameter")
            betas = [check_real("betas", b) for b in raw]
        if self.num_iter is None:
            budgets: list = [None]
        else:
            raw = [self.num_iter] if isinstance(self.num_iter, (int, np.integer)) else list(self.num_iter)
            if not raw:
                raise ValueError("num_iter is empty: give budgets, or None to solve to tol")
            budgets = check_budgets("num_iter", raw, self.solver, family is ReciprocalPolynomial)
        for axis, vals in (("transforms", [repr(t) for t in transforms]), ("betas", betas), ("num_iter", budgets)):
            if len(set(vals)) != len(vals):
                raise ValueError(f"{axis} repeats a value: {vals}")
        return transforms, family, betas, budgets

    def get_grid(self) -> list[dict]:
        """The grid points ``{"transform", "beta", "num_iter"}`` in grid order (``None``: not part of the grid)."""
        transforms, _, betas, budgets = self._grid()
        return [{"transform": t, "beta": b, "num_iter": T} for t in transforms for b in betas for T in budgets]

    def _solve_grid(self, X, train_idx, hidden_idx, y, eigen_cache=None) -> None:
        self._validate_params()
        transforms, family, betas, budgets = self._grid()
        if family is ReciprocalPolynomial and not hasattr(X, "normalized_gram"):
            for t in transforms:
                t.validate(1.0)            # a graph kernel's lambda_max: fail before any work
        prob = self._prepare(X, train_idx, hidden_idx, y)
        if family is ReciprocalPolynomial:
            for t in transforms:
                t.validate(prob.lambda_max)
        fixed = [T for T in budgets if T is not None]
        one = len(transforms) * len(betas) * len(budgets) == 1
        # fixed budgets: every point of a grid runs (validation chooses); one point refuses as STKR(num_iter=T) does
        res = solve(prob, transforms, [b for b in betas if b is not None], budgets=fixed, solver=self.solver,
                    max_iter=int(self.max_iter), tol=float(self.tol),
                    step_size=self.step_size if isinstance(self.step_size, str) else float(self.step_size),
                    max_seconds=self.max_seconds, eigen_cache=eigen_cache,
                    unstable="run" if fixed and not one else "raise")
        self._record(res, bool(fixed) and one, stalls=False)
        solved = {(p.transform, p.beta, p.T): p.h for p in res.points}
        grid = [{"transform": t, "beta": b, "num_iter": T} for t in transforms for b in betas for T in budgets]
        self.grid_, self.family_ = grid, family
        self.grid_h_ = [solved[(g["transform"], g["beta"], g["num_iter"])] for g in grid]

    def _point_scores(self, ids: Tensor, points: list[int] | None = None) -> list[Tensor]:
        """Scores ``[len(ids), C]`` of the grid points ``points`` (default: all), one sparse product for all."""
        points = list(range(len(self.grid_))) if points is None else points
        prob = self.problem_
        if self.family_ is LabelPropagationFilter:
            return [lp_scores(prob, self.grid_h_[i], self.grid_[i]["transform"].eta, ids) for i in points]
        C = prob.C
        H = torch.cat([self.grid_h_[i] for i in points], dim=1)
        S = scores_from(prob, H, ids)
        return [S[:, j * C:(j + 1) * C] for j in range(len(points))]

    @staticmethod
    def _check_validation(X, train_idx, val_idx) -> None:
        """Refuse validation nodes that are also training nodes (before any work)."""
        n = int(X.shape[0]) if isinstance(X, KernelOperator) else getattr(X, "num_nodes", None)
        train_idx = getattr(X, "train_mask", None) if train_idx is None else train_idx
        if n is None or train_idx is None:
            return                                        # the fit names what is wrong or missing
        n = int(n)
        train = as_index(train_idx, n, name="train_idx", allow_none=False)
        both = _shared(train, as_index(val_idx, n, name="val_idx", allow_none=False), n)
        if both:
            raise ValueError(f"train_idx and val_idx overlap in {len(both)} nodes (e.g. node {both[0]}): validation "
                             "nodes must be unlabeled for the fit; pass disjoint sets, e.g. val_idx without the "
                             "training nodes, or a split from graphstk.data.make_split")

    def grid_scores(self, data, train_idx=None, eval_idx=None, hidden_idx=None, *, y=None,
                    eigen_cache=None) -> list[tuple[dict, Tensor]]:
        """Fit every grid point (one engine call) and score ``eval_idx`` with each (for a caller that selects).

        Parameters
        ----------
        data : torch_geometric.data.Data or KernelOperator
            As in :meth:`STKR.fit <graphstk.methods.STKR.fit>`.
        train_idx : LongTensor of node ids or BoolTensor mask ``[N]``, optional
            The labeled points; default ``data.train_mask``.
        eval_idx : LongTensor or BoolTensor ``[N]``
            The points to score (rows of every output, in this order).
        hidden_idx : LongTensor or BoolTensor ``[N]``, optional
            ``setting="inductive"``: points (and their edges) never seen by the fit.
        y : Tensor ``[N]``, optional
            Class ids (only ``y[train_idx]`` is read); default ``data.y``. Required with an operator.
        eigen_cache : :class:`~graphstk.spectral.EigenCache`, optional
            ``TopD`` grids: eigenpairs kept from earlier calls on the same operator; default: none kept.

        Returns
        -------
        list of ``(params, scores [len(eval_idx), C])`` in grid order (:meth:`get_grid`). A grid
        point with non-finite scores is named by a :class:`~graphstk.exceptions.NonFiniteScoresWarning`
        (its rows count as unreachable).
        """
        if eval_idx is None:
            raise ValueError("grid_scores needs eval_idx: the points to score")
        self._solve_grid(data, train_idx, hidden_idx, y, eigen_cache)
        ids = as_index(eval_idx, self.problem_.num_points, self.kernel_.device, name="eval_idx", allow_none=False)
        out = list(zip([dict(p) for p in self.grid_], self._point_scores(ids)))
        _warn_non_finite(type(self.grid_[0]["transform"]).__name__, out)
        return out

    def fit(self, data, train_idx=None, val_idx=None, hidden_idx=None, *, y=None) -> "STKRCV":
        """Fit every grid point in one engine call and keep the best on ``val_idx``; returns ``self``.

        Parameters
        ----------
        data : torch_geometric.data.Data or KernelOperator
            As in :meth:`STKR.fit <graphstk.methods.STKR.fit>`.
        train_idx : LongTensor / NumPy array of node ids, or a boolean mask ``[N]``
            The labeled points; ``None`` reads ``data.train_mask``.
        val_idx : node ids or a boolean mask ``[N]``
            The validation points (their labels are read only to score the grid); ``None`` reads
            ``data.val_mask``.
        hidden_idx : node ids or a boolean mask ``[N]``, optional
            ``setting="inductive"``: points never seen by the fit (the paper hides validation points too).
        y : Tensor or ndarray ``[N]``, optional
            Class ids; default ``data.y``. Required with an operator.
        """
        val_idx = getattr(data, "val_mask", None) if val_idx is None else val_idx
        if val_idx is None:
            raise ValueError("fit needs val_idx (the validation points), or give data.val_mask")
        self._check_validation(data, train_idx, val_idx)
        pairs = self.grid_scores(data, train_idx, val_idx, hidden_idx, y=y)   # non-finite rows count as wrong
        val = as_index(val_idx, self.problem_.num_points, self.kernel_.device, name="val_idx", allow_none=False)
        yv = self._labels[val]
        acc = np.asarray([_accuracy(s, yv, self.missing_classes_) for _, s in pairs], dtype=float)
        best = select(acc.tolist())                     # the first of the best, in grid order
        rank = np.array([1 + int((acc > a).sum()) for a in acc], dtype=np.int32)   # ties share a rank
        self.cv_results_ = {
            "params": [dict(p) for p, _ in pairs],
            **{f"param_{k}": np.array([p[k] for p, _ in pairs], dtype=object)
               for k in ("transform", "beta", "num_iter")},
            "split0_test_score": acc, "mean_test_score": acc.copy(), "std_test_score": np.zeros_like(acc),
            "rank_test_score": rank,
        }
        self.best_index_, self.best_score_ = best, float(acc[best])
        self.best_params_ = dict(pairs[best][0])
        self.h_ = self.grid_h_[best]
        return self

    def _prepare(self, X, train_idx, hidden_idx, y):
        prob = super()._prepare(X, train_idx, hidden_idx, y)
        self._labels = _label_tensor(y if y is not None else X.y).to(self.kernel_.device)
        return prob

    def _scores(self, ids: Tensor) -> Tensor:
        check_is_fitted(self, "best_index_")
        return self._point_scores(ids, [self.best_index_])[0]


def _warn_non_finite(what: str, results: list[tuple[dict, Tensor]]) -> list[tuple[dict, Tensor]]:
    """Warn (:class:`NonFiniteScoresWarning`) naming the grid points whose scores are not finite."""
    bad = [(p, int((~torch.isfinite(s)).any(dim=1).sum())) for p, s in results if not bool(torch.isfinite(s).all())]
    if bad:
        shown = ", ".join(f"{_short(p)} ({k} rows)" for p, k in bad[:3]) + (" ..." if len(bad) > 3 else "")
        warnings.warn(f"{what}: non-finite scores at {len(bad)} of {len(results)} grid point(s): {shown}; "
                      "those rows count as unreachable (try dtype float64 or another solver)",
                      NonFiniteScoresWarning, stacklevel=user_stacklevel())
    return results


def _short(p: dict) -> str:
    return "{" + ", ".join(f"{k}={v!r}" for k, v in p.items() if v is not None) + "}"


def _accuracy(scores: Tensor, y: Tensor, missing: list[int]) -> float:
    """Accuracy in ``[0, 1]`` of the argmax over the labeled classes; unreachable rows count as wrong."""
    if y.numel() == 0:
        return 0.0
    hit, reached = correct(scores, y, missing)
    return float((hit & reached).double().mean())
