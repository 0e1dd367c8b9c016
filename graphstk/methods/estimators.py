"""User-facing estimators on a graph or any kernel operator: :class:`LabelPropagation` and :class:`STKR`.

Both follow the graph estimators' contract (docs/estimators.md, "Graph estimators"), shared with
:class:`~graphstk.methods.STKRCV` and :class:`~graphstk.methods.FeatureSTKR`: ``fit(data, train_idx,
hidden_idx=None, *, y=None)`` on a PyG graph (a :class:`~graphstk.operators.GraphKernel`, Eq. 23) or
``fit(K, train_idx, y=y)`` on any square kernel operator (Eq. 5); ``predict``, ``decision_function`` and
``class_scores`` on node ids or masks, ``-1`` / all-zero scores where no label reaches.
"""
from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted
from torch import Tensor

from ._constraints import Interval, Options, StrOptions
from .._checks import check_device, check_int, check_real, user_stacklevel
from .._index import as_index
from ..exceptions import BudgetWarning, ConvergenceError, UnreachableNodesWarning
from ..memory import check_allocation
from ..operators.base import KernelOperator
from ..operators.graph import NORMALIZATIONS, GraphKernel, check_normalization
from ..spectral.transforms import (InverseLaplacian, LabelPropagationFilter, Polynomial, ReciprocalPolynomial,
                                  TopD, Transform)
from .engine import solve
from .grid import lp_scores, scores_from, unreachable
from .problem import SOLVERS, EngineResult, argmax_of_labeled_classes, make_problem
from .steps import DIVERGED_RESIDUAL

SETTINGS = ("transductive", "inductive")
#: ``STKR(transform=None)`` fits ``InverseLaplacian(eta=DEFAULT_ETA)``: Algorithm 2 with
#: ``s(lambda) = 1 / (1 - eta lambda)`` (Eq. 20), the transform of the paper's SP-Lap rows
DEFAULT_ETA = 0.9

__all__ = ["LabelPropagation", "STKR", "flag_unreachable"]


def flag_unreachable(owner, scores: Tensor, stacklevel: int | None = None) -> Tensor:
    """Record the rows of ``scores`` that no label reaches on ``owner`` and warn once per call.

    Sets ``owner.unreachable_`` (BoolTensor, one entry per row: all-zero or non-finite row) and
    ``owner.n_unreachable_`` (their number), then emits an :class:`UnreachableNodesWarning` when there
    are any (the estimators and the :mod:`graphstk.nn` modules). Returns ``scores``.
    """
    bad = unreachable(scores)
    stacklevel = user_stacklevel() if stacklevel is None else stacklevel
    owner.unreachable_ = bad
    owner.n_unreachable_ = int(bad.sum())
    if owner.n_unreachable_:
        warnings.warn(f"{owner.n_unreachable_} of {bad.numel()} nodes are not reached by any label (all-zero "
                      f"scores; an argmax would say class 0); their rows are flagged in {type(owner).__name__}"
                      ".unreachable_ and counted in .n_unreachable_", UnreachableNodesWarning, stacklevel=stacklevel)
    return scores


#: what converges instead of a stalled solve to a tolerance
STALL_ADVICE = ("Use solver='cg' or 'auto' on the positive semidefinite lazy kernel (normalization='lazy'), or "
                "solver='direct', or a fixed budget num_iter=T (the paper's truncated iteration)")


def _default_classes(y: Tensor, num_classes: int | None) -> int | None:
    """``num_classes``, or ``max(y) + 1`` over the entries ``>= 0`` of ``y`` (PyG's ``dataset.num_classes``);
    ``None`` (the training labels decide) for non-integer ``y`` or ids far beyond the distinct classes."""
    if num_classes is not None or y.dtype.is_floating_point or y.dtype == torch.bool or y.numel() == 0:
        return num_classes
    known = y[y >= 0]
    if known.numel() == 0:
        return None
    C = int(known.max()) + 1
    return C if C <= 2 * int(torch.unique(known).numel()) + 100 else None


def _label_tensor(y) -> Tensor:
    """``y`` as a tensor of class ids; strings and other non-numeric labels are refused by name."""
    if isinstance(y, Tensor):
        return y
    yn = np.asarray(y)
    if yn.dtype.kind not in "biuf":
        raise TypeError(f"y must hold integer class ids 0..C-1 (a LongTensor), got {yn.dtype} values such as "
                        f"{yn.ravel()[:3].tolist()}; map them to ids first, e.g. classes, ids = "
                        "np.unique(y, return_inverse=True) and pass torch.as_tensor(ids)")
    return torch.as_tensor(yn)


GRAPH_WORK_COLUMNS = 8   # [N, C] blocks a solve holds at once (iterate, residual, search directions, scores)


def _check_graph_size(data, n: int, y: Tensor, dtype: torch.dtype) -> None:
    """Refuse a graph whose kernel (edges both ways, degrees) and ``GRAPH_WORK_COLUMNS`` ``[N, C]`` blocks do not fit."""
    known = y[y >= 0] if not (y.dtype.is_floating_point or y.dtype == torch.bool) else y
    C = int(known.max()) + 1 if known.numel() else 1
    C = min(C, int(torch.unique(known).numel()) + 1) if known.numel() else 1
    nnz = int(data.edge_index.shape[1])
    item = torch.finfo(dtype).bits // 8
    need = 2.0 * nnz * (16 + item) + n * item * (2 + GRAPH_WORK_COLUMNS * C)
    check_allocation(need, f"the graph kernel and the solve on {n} nodes, {nnz} edges and {C} classes",
                     "use a subgraph (fewer nodes), dtype=torch.float32, or split the graph over processes "
                     "(docs/distributed.md)", data.edge_index.device)


def check_budgets(name: str, values, solver: str, reciprocal: bool) -> list[int]:
    """``values`` as fixed budgets ``T >= 1``, refusing a solver that cannot run them."""
    budgets = [check_int(name, t) for t in values]
    if solver not in ("auto", "richardson", "cg"):
        raise ValueError(f"{name} (a fixed budget of T iterations) needs solver 'auto', 'richardson' or 'cg', got "
                         f"solver={solver!r}")
    if reciprocal and solver == "cg":
        raise ValueError(f"{name} with a reciprocal transform needs solver 'richardson' (Algorithm 2) or 'auto'")
    return budgets


def _resolve_alias(name: str, value, alias: str, alias_value, default):
    """``value`` or its PyG spelling ``alias_value`` (not both); ``default`` when neither is given."""
    if alias_value is not None:
        if value is not None and value != default:
            raise TypeError(f"give {name} or its PyG spelling {alias}, not both (got {name}={value!r}, "
                            f"{alias}={alias_value!r})")
        return alias_value
    return default if value is None else value


def fit_indices(n: int, train_idx, hidden_idx, setting: str) -> tuple[Tensor, Tensor | None]:
    """``(train, hidden)`` node ids of a graph estimator's ``fit`` on ``n`` nodes, checked against ``setting``."""
    if train_idx is None:
        raise ValueError("train_idx is required (node ids or a boolean mask of length N), or give data.train_mask")
    train = as_index(train_idx, n, name="train_idx", allow_none=False)
    hidden = None if hidden_idx is None else as_index(hidden_idx, n, name="hidden_idx", allow_none=False)
    if setting == "transductive" and hidden is not None and hidden.numel() > 0:
        raise ValueError("setting='transductive' sees every node; pass hidden_idx only with setting='inductive'")
    if hidden is not None and hidden.numel() and _shared(train, hidden, n):
        raise ValueError("train_idx and hidden_idx overlap: a labeled node cannot be hidden from fit")
    return train, hidden


def _shared(a: Tensor, b: Tensor, n: int) -> list[int]:
    """The node ids (of ``0..n-1``) that index tensors ``a`` and ``b`` both hold, sorted."""
    seen = torch.zeros(n, dtype=torch.bool)
    seen[a.cpu()] = True
    both = torch.zeros(n, dtype=torch.bool)
    both[b.cpu()] = True
    return (seen & both).nonzero().flatten().tolist()


def _common_constraints() -> dict:
    """The parameters every graph estimator shares (scikit-learn's constraints, checked at ``fit``)."""
    return {
        "setting": [StrOptions(set(SETTINGS))],
        "solver": [StrOptions(set(SOLVERS))],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "max_seconds": [Interval(Real, 0, None, closed="neither"), None],
        "num_classes": [Interval(Integral, 1, None, closed="left"), None],
        "clean_edges": ["boolean"],
        "dtype": [Options(torch.dtype, {torch.float32, torch.float64})],
        "device": [str, torch.device, None],
        "normalization": [StrOptions(set(NORMALIZATIONS)), None],
    }


def output_like(values: Tensor, idx):
    """``values`` as a tensor on ``idx``'s device (a tensor ``idx``), as they are (``None``), else NumPy."""
    if idx is None:
        return values
    if isinstance(idx, Tensor):
        return values.to(idx.device) if values.device != idx.device else values
    return values.detach().cpu().numpy()


def binary_scores(scores: Tensor) -> Tensor:
    """scikit-learn's ``decision_function`` shape: ``scores[:, 1] - scores[:, 0]`` for two classes, else ``scores``."""
    return scores[:, 1] - scores[:, 0] if scores.dim() == 2 and scores.shape[1] == 2 else scores


def graph_fit_inputs(data, train_idx, y, needs: tuple, takes: str):
    """``(N, y, train_idx)`` of ``fit(data, train_idx, *, y=None)`` on a PyG ``Data`` (``data.y``, ``data.train_mask``
    by default); a missing attribute among ``needs`` is refused with ``takes``."""
    for attr in needs:
        if getattr(data, attr, None) is None:
            raise TypeError(f"{takes}; got {type(data).__name__} without .{attr}")
    if y is None:
        y = getattr(data, "y", None)
        if y is None:
            raise ValueError("data.y is missing: the estimator needs the labels of train_idx (or pass y=)")
    if train_idx is None:
        train_idx = getattr(data, "train_mask", None)
    return int(data.num_nodes), y, train_idx


class ScoringMixin:
    """``class_scores``, ``decision_function`` and ``predict`` of every graph estimator, from its ``_all_scores``
    (a tensor ``[len(idx), C]`` with ``unreachable_`` set) and ``missing_classes_``."""

    def class_scores(self, idx=None):
        """Scores ``[len(idx), C]``, one column per class of ``classes_``, for any number of classes.

        Parameters
        ----------
        idx : LongTensor / NumPy array of node ids, or a boolean mask ``[N]``, optional
            Points to score (default: all ``N``), in the order of ``idx``; hidden points from their kernel rows.

        Returns
        -------
        Tensor or ndarray ``[len(idx), C]``
            A tensor on ``idx``'s device for a tensor ``idx``, NumPy for NumPy (or a list), a tensor on the
            kernel's device for ``idx=None``. All-zero rows (no label reaches them) are flagged in
            ``unreachable_`` / ``n_unreachable_`` with an :class:`UnreachableNodesWarning`.
        """
        return output_like(self._all_scores(idx), idx)

    def decision_function(self, idx=None):
        """Scores in scikit-learn's shape: ``[len(idx)]`` for two classes (``classes_[1]``'s score minus
        ``classes_[0]``'s), else ``[len(idx), C]``, in the caller's array type; ``idx`` as in :meth:`class_scores`.
        A point no label reaches scores ``0`` (or an all-zero row) and is flagged in ``unreachable_``.
        """
        return output_like(binary_scores(self._all_scores(idx)), idx)

    def predict(self, idx=None):
        """Class labels ``[len(idx)]`` (LongTensor or int64 ndarray, in the caller's array type) from ``classes_``:
        the argmax of :meth:`class_scores` over the classes with training labels, ``-1`` where no label reaches
        (flagged in ``unreachable_``); ``idx`` (default: all ``N``) as in :meth:`class_scores`.
        """
        pred = argmax_of_labeled_classes(self._all_scores(idx), self.missing_classes_)
        pred[self.unreachable_] = -1
        return output_like(pred, idx)


class _GraphEstimator(ScoringMixin, BaseEstimator):
    """Shared checks and fit/predict plumbing of STKR, LabelPropagation and STKRCV (checked at every fit)."""

    _parameter_constraints: dict = _common_constraints()

    def _validate_params(self):
        """The package's number convention for the ridges first (``check_real``: a finite real number, not a
        string; the same words as :mod:`graphstk.nn`), then the declared constraints, the one check of every
        other parameter, then what relates parameters to each other."""
        self._check_numbers()
        super()._validate_params()
        self._check_params()

    def _check_numbers(self):
        """``check_real`` on the ridge-like parameters of this estimator (none by default)."""

    def _check_params(self):
        self._check_common()

    def _check_common(self):
        """What the declared constraints cannot say: that ``device`` names a device torch has."""
        check_device(self.device)

    def _budgets(self) -> tuple[int, ...]:
        """The fixed iteration budget: ``num_iter``, or ``max_iter`` when ``tol == 0``."""
        num_iter = getattr(self, "_num_iter", self.num_iter)
        if num_iter is not None:
            return (int(num_iter),)
        return (int(self.max_iter),) if self.tol == 0 else ()

    def _operator(self, X, n: int, hidden):
        """The kernel operator for ``fit``: ``X`` itself, or the graph kernel of a PyG ``Data``."""
        if isinstance(X, KernelOperator):
            return X.to(device=self.device) if self.device is not None else X
        device = self.device if self.device is not None else X.edge_index.device
        return GraphKernel(X.edge_index, n, hidden=hidden, edge_weight=getattr(X, "edge_weight", None),
                           dtype=self.dtype, device=device, clean_edges=self.clean_edges,
                           normalization=self._normalization())

    def _normalization(self) -> str:
        """The ``normalization`` of the graph kernel a PyG ``Data`` becomes, or its family's default."""
        return check_normalization(self.normalization if self.normalization is not None
                                   else self._default_normalization())

    def _default_normalization(self) -> str:
        return "lazy"

    def _prepare(self, X, train_idx, hidden_idx, y):
        if isinstance(X, KernelOperator):
            if X.shape[0] != X.shape[1]:
                raise ValueError(f"fit needs a square kernel operator over the points, got shape {tuple(X.shape)}")
            if y is None:
                raise ValueError("fit(K, train_idx, y=y) needs the labels y (one entry per point) with a kernel "
                                 "operator K")
            n = int(X.shape[0])
        else:
            n, y, train_idx = graph_fit_inputs(X, train_idx, y, ("edge_index", "num_nodes"),
                                               "fit takes a torch_geometric Data (a graph) or a square KernelOperator")
        train, hidden = fit_indices(n, train_idx, hidden_idx, self.setting)
        y = _label_tensor(y)
        if not isinstance(X, KernelOperator):
            _check_graph_size(X, n, y, self.dtype)
        kernel = self._operator(X, n, hidden)
        prob = make_problem(kernel, y, train.to(kernel.device), _default_classes(y, self.num_classes),
                              labels=getattr(self, "labels", "onehot"), hidden=hidden)
        self.num_classes_ = prob.C
        self.classes_ = torch.arange(prob.C)
        counts = torch.bincount(y.to(kernel.device)[train.to(kernel.device)].long(), minlength=prob.C)
        self.missing_classes_ = (counts == 0).nonzero().flatten().tolist()
        self.kernel_ = kernel
        self.problem_ = prob
        return prob

    def _record(self, res: EngineResult, fixed: bool, stalls: bool = True):
        """Keep the history; refuse a diverged fixed budget (``fixed``) or, with ``stalls``, a stalled solve."""
        self._check_budget(res.history)
        self.history_ = res.history
        last = res.history[-1] if res.history else None
        self.solver_ = last.solver if last is not None else ""
        self.residuals_ = last.residuals if last is not None else []
        self.n_iter_ = last.n_iter if last is not None else 0
        if fixed:
            check_budget_residual(self, last)
        elif stalls and last is not None and last.stopped.startswith("stalled") and not last.converged:
            raise ConvergenceError(f"{type(self).__name__}: {last.solver} {last.stopped}; its scores are not a "
                                   f"solution of the system. {STALL_ADVICE}", result=last)

    def _check_budget(self, history) -> None:
        """Warn when ``max_seconds`` was given but a direct route, which it cannot bound, ran."""
        if self.max_seconds is None:
            return
        direct = sorted({h.solver for h in history if h.solver.startswith("direct") and "CG" not in h.solver})
        if direct:
            warnings.warn(f"{type(self).__name__}: max_seconds={self.max_seconds:g} bounds iterative solves only; "
                          f"solver={self.solver!r} took the route {'; '.join(direct)}, which runs to its end. For a "
                          "solve that the budget stops, pass solver='gmres' (or leave max_seconds unset)",
                          BudgetWarning, stacklevel=user_stacklevel())

    def _divergence_advice(self) -> str:
        return divergence_advice(getattr(self, "transform_", getattr(self, "transform", None)),
                                 getattr(self, "step_size", None))

    def _all_scores(self, idx) -> Tensor:
        """Scores ``[len(idx), C]`` (the subclass's ``_scores``) on the kernel's device, unreachable rows flagged."""
        check_is_fitted(self, "problem_")
        return flag_unreachable(self, self._scores(as_index(idx, self.problem_.num_points, self.kernel_.device,
                                                            name="idx")))


def check_budget_residual(est, last) -> None:
    """Refuse a fixed budget whose final relative residual exceeds ``DIVERGED_RESIDUAL`` (it diverged)."""
    final = last.residuals[-1] if last is not None and len(last.residuals) else 0.0
    if not final <= DIVERGED_RESIDUAL:
        raise ConvergenceError(
            f"{type(est).__name__}: the fixed budget of {last.n_iter} iterations ended at relative residual "
            f"{final:.3g} > {DIVERGED_RESIDUAL:g}: the iteration diverges and its scores are meaningless. "
            + est._divergence_advice(), result=last)


def divergence_advice(tr, step) -> str:
    """What to change after a diverged fixed budget: never the setting already in use."""
    krylov = "solver='auto' or 'cg'"
    if isinstance(tr, ReciprocalPolynomial):
        krylov = ("solver='direct' or 'auto'; or the positive semidefinite lazy kernel (normalization='lazy'), "
                  "on which the automatic step is provably stable and CG solves Algorithm 2's symmetric form")
    elif isinstance(tr, Polynomial):
        krylov = "solver='auto' (CG when s >= 0, else GMRES) or 'direct'"
    fix = f"Solve to a tolerance instead: num_iter=None, tol > 0 (e.g. 1e-6), {krylov}"
    if step is None:
        return fix
    if step != "auto":
        return (fix + f"; or step_size='auto' instead of {step!r} (a step bounded by the spectrum of the "
                "system, and for Algorithm 2 a check before iterating that refuses where no step converges)")
    if isinstance(tr, Polynomial):
        return (fix + "; step_size='auto' is already in use: where s < 0 on the spectrum, Algorithm 1's "
                "A = N [s(S)]_nn + n beta I can have eigenvalues <= 0 and then no step converges")
    return fix + "; step_size='auto' is already in use, so no other step is offered"


class LabelPropagation(_GraphEstimator):
    """Label propagation of Zhou et al. (2003): solve ``(I - eta S) Yhat = [Y; 0]`` (STKR Eq. 22), ``S`` the
    normalized adjacency ``D^{-1/2} W D^{-1/2}``, ``Y`` the one-hot labels of the training nodes.

    Parameters
    ----------
    eta : float in (0, 1), default 0.99
        Propagation weight (Zhou et al.'s and PyG's ``alpha``).
    alpha : float, optional
        PyG's spelling of ``eta`` (give one of them; when given, it is the weight fitted).
    num_iter : int, optional
        Run exactly ``T = num_iter`` iterations ``Yhat <- eta S Yhat + [Y; 0]`` from ``Yhat = 0``
        (the paper's "number of iterations T"; ``solver="cg"`` runs ``T`` CG steps instead).
        ``None`` (default): solve Eq. 22 to the relative residual ``tol``.
    num_layers : int, optional
        PyG's spelling of ``num_iter`` (give one of them).
    solver : {"auto", "richardson", "cg", "gmres", "direct"}, default "auto"
        ``auto`` is CG (the system is symmetric positive definite); ``richardson`` is Zhou's
        iteration; ``direct`` a sparse LU. The route that ran, and why, is in ``history_``.
    max_iter : int, default 1000
        Iteration cap of a solve to tolerance.
    tol : float, default 1e-6
        Relative residual at which a solve stops (``0``: run exactly ``max_iter`` iterations).
    max_seconds : float, optional
        A time budget for the iterative solve: it stops after this many seconds with a
        :class:`~graphstk.exceptions.ConvergenceWarning`, recorded in ``history_`` (``stopped``). ``None``
        (default): no time limit.
    setting : {"transductive", "inductive"}, default "transductive"
        Inductive: ``hidden_idx`` nodes are removed before fitting; ``predict`` gives them
        ``eta S(x, visible) Yhat``, one step of the fixed-point equation (not in the paper).
    num_classes : int, optional
        Number of classes ``C``; default ``max(y) + 1`` over the entries ``>= 0`` of ``y`` (PyG's
        ``dataset.num_classes``). Classes without a training node keep their score column, are named by a
        :class:`~graphstk.exceptions.ClassesWithoutLabelsWarning`, listed in ``missing_classes_``, never predicted.
    clean_edges : bool, default False
        Drop self-loops and duplicate edges of ``data.edge_index`` (otherwise kept, duplicates summed, with an
        :class:`~graphstk.operators.EdgeListWarning`).
    normalization : {"symmetric", "lazy"}, optional
        The graph kernel a PyG ``Data`` becomes (:class:`~graphstk.operators.GraphKernel`). ``None`` (default):
        ``"symmetric"`` (Eq. 22; ``I - eta S`` is SPD for ``0 < eta < 1`` whatever the signs of ``S``'s spectrum).
    dtype : torch.dtype, default torch.float64
    device : torch.device, optional
        Where the kernel lives (default: that of ``data.edge_index``).

    Attributes
    ----------
    yhat_ : Tensor ``[N_visible, C]``
        The solution of Eq. 22 on the visible nodes.
    kernel_ : KernelOperator
        The kernel fitted on (the graph's :class:`~graphstk.operators.GraphKernel`, or the operator given).
    problem_ : Problem
        The labeled problem the engines solved.
    num_classes_ : int
    classes_ : LongTensor ``[C]``
    missing_classes_ : list of int
        Classes with no training node.
    history_ : list of SolveResult
        The solves that ran (``.solver``: the route, ``.reason``: why it was chosen).
    solver_ : str
        The route of the last solve.
    n_iter_, residuals_ : iterations and relative residuals of the last iterative solve.
    eta_ : float
        The propagation weight fitted (``eta``, or ``alpha`` when given).
    unreachable_ : BoolTensor
        Set by each ``predict`` / ``decision_function`` / ``class_scores``: the rows of its output no label
        reaches (all-zero scores; ``predict`` labels them ``-1``).
    n_unreachable_ : int
        Their number in the last call.

    Examples
    --------
    >>> lp = LabelPropagation(eta=0.9).fit(data, data.train_mask)   # doctest: +SKIP
    >>> pred = lp.predict(data.test_mask)                             # doctest: +SKIP
    """

    _parameter_constraints: dict = {
        **_common_constraints(),
        "eta": [Interval(Real, 0, None, closed="neither"), None],
        "alpha": [Interval(Real, 0, None, closed="neither"), None],
        "num_iter": [Interval(Integral, 1, None, closed="left"), None],
        "num_layers": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(self, eta: float = 0.99, *, alpha: float | None = None, num_iter: int | None = None,
                 num_layers: int | None = None, solver: str = "auto", max_iter: int = 1000, tol: float = 1e-6,
                 max_seconds: float | None = None, setting: str = "transductive", num_classes: int | None = None,
                 clean_edges: bool = False, dtype: torch.dtype = torch.float64, device=None,
                 normalization: str | None = None):
        self.eta, self.alpha, self.num_iter, self.num_layers = eta, alpha, num_iter, num_layers
        self.solver, self.max_iter, self.tol, self.max_seconds = solver, max_iter, tol, max_seconds
        self.setting, self.num_classes, self.clean_edges = setting, num_classes, clean_edges
        self.dtype, self.device, self.normalization = dtype, device, normalization

    def _default_normalization(self) -> str:
        return "symmetric"

    def _check_numbers(self):
        eta = _resolve_alias("eta", self.eta, "alpha", self.alpha, 0.99)   # not both; the bound 1/lambda_1 at fit
        check_real("alpha" if self.alpha is not None else "eta", eta)

    def _check_params(self):
        self._eta_name = "alpha" if self.alpha is not None else "eta"    # messages use the user's spelling
        self._num_iter = _resolve_alias("num_iter", self.num_iter, "num_layers", self.num_layers, None)
        self._check_common()
        if self._num_iter is not None:
            check_budgets("num_layers" if self.num_layers is not None else "num_iter", [self._num_iter], self.solver,
                          False)

    def fit(self, data, train_idx=None, hidden_idx=None, *, y=None) -> "LabelPropagation":
        """Solve Eq. 22 for the labels ``y[train_idx]``; returns ``self``.

        Parameters
        ----------
        data : torch_geometric.data.Data or KernelOperator
            A graph (``edge_index``, ``num_nodes``, ``y``, optional ``edge_weight``), whose
            :class:`~graphstk.operators.GraphKernel` is built, or any square kernel operator over the points.
        train_idx : LongTensor / NumPy array of node ids, or a boolean mask ``[N]``
            The labeled points; ``None`` reads ``data.train_mask``.
        hidden_idx : node ids or a boolean mask ``[N]``, optional
            Points removed before fitting (``setting="inductive"`` only).
        y : Tensor or ndarray ``[N]``, optional
            Class ids (only ``y[train_idx]`` is read); default ``data.y``. Required with an operator.
        """
        self._validate_params()
        self.eta_ = float(_resolve_alias("eta", self.eta, "alpha", self.alpha, 0.99))
        prob = self._prepare(data, train_idx, hidden_idx, y)
        filt = LabelPropagationFilter(self.eta_)
        filt.validate(prob.lambda_max, self._eta_name)   # Zhou et al.'s fixed point (Eq. 22) needs eta < 1/lambda_1 on every route
        res = solve(prob, [filt], solver=self.solver, max_iter=int(self.max_iter),
                    tol=float(self.tol), budgets=self._budgets(), max_seconds=self.max_seconds)
        self._record(res, bool(self._budgets()))
        self.yhat_ = res.points[0].h
        return self

    def _scores(self, ids: Tensor) -> Tensor:
        return lp_scores(self.problem_, self.yhat_, self.eta_, ids)


class STKR(_GraphEstimator):
    """Spectrally transformed kernel regression on a graph (Zhai et al., ICLR 2024): Eq. 7,
    ``alpha = (G_{Khat_s,n} + n beta I)^{-1} y``, with Eq. 23's base kernel and the paper's out-of-sample
    formulas (after Algorithms 1 and 2; Eq. 8 for top-d).

    Parameters
    ----------
    transform : Polynomial | ReciprocalPolynomial | InverseLaplacian | TopD, default None
        ``Polynomial`` -> Algorithm 1 (or 3 with ``solver="direct"``);
        ``ReciprocalPolynomial``/``InverseLaplacian`` -> Algorithm 2 (Eq. 20);
        ``TopD`` -> kernel PCA features + ridge probe (Eqs. 8-9).
        ``None``: ``InverseLaplacian(eta=0.9)`` (the inverse Laplacian of Eq. 20, ``DEFAULT_ETA``);
        the transform fitted is ``transform_``.
    beta : float > 0, default 1e-2
        Ridge parameter ``beta_n`` of Eq. 7 (finite, positive).
    setting : {"transductive", "inductive"}, default "transductive"
    step_size : "auto" | "paper" | float, default "auto"
        Richardson step ``gamma`` (``graphstk.methods.steps.reciprocal_step``; ``"auto"`` is provably stable
        on the lazy kernel). On Eq. 23's kernel a fit proved to have no converging step raises
        ``ConvergenceError`` naming what converges, unless a short fixed budget provably stays below the guard.
    num_iter : int, optional
        Run exactly ``T = num_iter`` Richardson iterations (the paper's budget ``T``) instead of
        solving to ``tol``.
    solver : {"auto", "richardson", "cg", "gmres", "direct"}, default "auto"
        ``auto`` picks the route from sizes and counted work only (docs/methods.md, "How solver="auto"
        decides"): the direct solve (Algorithm 3 / Algorithm 2's ``n x n`` system) for at most 4000 labels and
        ``N n <= 2^25``, else CG (Algorithm 2's symmetric form on the lazy kernel; Algorithm 1 where ``s >= 0``)
        or GMRES; Algorithm 2 beyond the direct route on Eq. 23's kernel is refused before any work
        (:func:`graphstk.methods.routes.reciprocal_route`). ``history_`` records the route, why, and its work.
    max_iter : int, default 1000
    tol : float, default 1e-6
        Relative residual of a solve to tolerance (``0``: run ``max_iter`` iterations).
    max_seconds : float, optional
        A time budget for the iterative solve (see :class:`LabelPropagation`); default none.
    num_classes : int, optional
        Default ``max(y) + 1`` over the entries ``>= 0``; see :class:`LabelPropagation`.
    clean_edges : bool, default False
        See :class:`LabelPropagation`.
    normalization : {"lazy", "symmetric"}, optional
        The graph kernel a PyG ``Data`` becomes (:class:`~graphstk.operators.GraphKernel`; docs/kernels.md).
        ``None`` (default): ``"lazy"``, ``(I + S) / 2``, positive semidefinite as Prop. 10 assumes.
        ``"symmetric"`` is Eq. 23 as written (spectrum down to ``-1``), used by the paper's configurations.
    dtype : torch.dtype, default torch.float64
    device : torch.device, optional

    Attributes
    ----------
    h_ : Tensor ``[N_visible, C]``
        Scores of a node ``x`` are ``rows(x) @ h_`` (``rows(x) = K(x, visible) / (n+m)``).
    transform_ : Transform
        The transform fitted (``transform``, or the default).
    kernel_, num_classes_, classes_, missing_classes_, history_, solver_, n_iter_, residuals_,
    unreachable_, n_unreachable_ :
        As in :class:`LabelPropagation`.

    Examples
    --------
    >>> est = STKR(InverseLaplacian(eta=0.99), beta=1e-3).fit(data, data.train_mask)  # doctest: +SKIP
    >>> acc = (est.predict(data.test_mask) == data.y[data.test_mask]).float().mean()  # doctest: +SKIP
    """

    _parameter_constraints: dict = {
        **_common_constraints(),
        "transform": [Polynomial, ReciprocalPolynomial, TopD, None],
        "beta": [Interval(Real, 0, None, closed="neither")],
        "step_size": [StrOptions({"auto", "paper"}), Interval(Real, 0, None, closed="neither")],
        "num_iter": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(self, transform: Transform | None = None, beta: float = 1e-2, setting: str = "transductive",
                 step_size: str | float = "auto", *, num_iter: int | None = None, solver: str = "auto",
                 max_iter: int = 1000, tol: float = 1e-6, max_seconds: float | None = None,
                 num_classes: int | None = None, clean_edges: bool = False, dtype: torch.dtype = torch.float64,
                 device=None, normalization: str | None = None):
        self.transform, self.beta, self.setting, self.step_size = transform, beta, setting, step_size
        self.num_iter, self.solver = num_iter, solver
        self.max_iter, self.tol, self.num_classes, self.max_seconds = max_iter, tol, num_classes, max_seconds
        self.clean_edges, self.dtype, self.device, self.normalization = clean_edges, dtype, device, normalization

    def _check_numbers(self):
        check_real("beta", self.beta)

    def _check_params(self):
        tr = self.transform
        self._check_common()
        if self.num_iter is not None:
            check_budgets("num_iter", [self.num_iter], self.solver, isinstance(tr, ReciprocalPolynomial))

    def fit(self, data, train_idx=None, hidden_idx=None, *, y=None) -> "STKR":
        """Solve Eq. 7 for the labels ``y[train_idx]``; returns ``self``.

        Parameters
        ----------
        data : torch_geometric.data.Data or KernelOperator
            A graph (``edge_index``, ``num_nodes``, ``y``, optional ``edge_weight``), whose base kernel of Eq. 23
            is built, or any square kernel operator ``K`` over the points, used through ``G_K / (n+m)`` (Eq. 5).
        train_idx : LongTensor / NumPy array of node ids, or a boolean mask ``[N]``
            The labeled points; ``None`` reads ``data.train_mask``.
        hidden_idx : node ids or a boolean mask ``[N]``, optional
            ``setting="inductive"``: points (and their edges) never seen by ``fit``.
        y : Tensor or ndarray ``[N]``, optional
            Class ids (only ``y[train_idx]`` is read); default ``data.y``. Required with an operator.
        """
        self._validate_params()
        self.transform_ = InverseLaplacian(eta=DEFAULT_ETA) if self.transform is None else self.transform
        if isinstance(self.transform_, ReciprocalPolynomial) and not isinstance(data, KernelOperator):
            self.transform_.validate(1.0)   # a graph kernel's lambda_max: fail before any work
        prob = self._prepare(data, train_idx, hidden_idx, y)
        if isinstance(self.transform_, ReciprocalPolynomial):
            self.transform_.validate(prob.lambda_max)
        budgets = self._budgets() if self.solver != "direct" else ()
        step = self.step_size if isinstance(self.step_size, str) else float(self.step_size)
        res = solve(prob, [self.transform_], [float(self.beta)], budgets=budgets, solver=self.solver,
                    max_iter=int(self.max_iter), tol=float(self.tol), step_size=step,
                    max_seconds=self.max_seconds)
        self._record(res, bool(self._budgets()))
        self.h_ = res.points[0].h
        return self

    def _scores(self, ids: Tensor) -> Tensor:
        return scores_from(self.problem_, self.h_, ids)
