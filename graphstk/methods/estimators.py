"""User-facing estimators: :class:`LabelPropagation` and :class:`STKR`.

Both follow one interface::

    est.fit(data, train_idx, hidden_idx=None)   # learns from data.y[train_idx]
    scores = est.predict(idx)                   # [len(idx), C]; argmax is the class

In the inductive setting nothing about ``hidden_idx`` nodes, or any edge touching
them, is used by ``fit`` (the kernel is built on the visible subgraph, with visible
degrees, Eq. 23); ``predict`` on hidden nodes uses only their edges to visible nodes.
Nodes that no label reaches get all-zero scores: ``predict`` warns and records
them in ``unreachable_`` instead of silently assigning class 0.
"""
from __future__ import annotations

import warnings

import torch
from torch import Tensor

from ..operators.graph import GraphKernel
from ..spectral.transforms import Polynomial, ReciprocalPolynomial, TopD, Transform
from . import propagation as P
from .grid import lp_scores, scores_from, unreachable

SETTINGS = ("transductive", "inductive")


class UnreachableNodesWarning(UserWarning):
    """Some nodes are not connected to any labeled node; their scores are all zero."""


class _Estimator:
    def __init__(self, solver="auto", max_iter=1000, tol=1e-6, dtype=torch.float64, device=None,
                 setting="transductive"):
        P.check_solver_options(solver, max_iter, tol)
        if dtype not in (torch.float32, torch.float64):
            raise ValueError(f"dtype must be torch.float32 or torch.float64, got {dtype}")
        if setting not in SETTINGS:
            raise ValueError(f"setting must be one of {SETTINGS}, got {setting!r}")
        self.solver, self.max_iter, self.tol = solver, int(max_iter), float(tol)
        self.dtype, self.device, self.setting = dtype, device, setting
        self.kernel_: GraphKernel | None = None

    def _prepare(self, data, train_idx, hidden_idx, kernel):
        y = getattr(data, "y", None)
        if y is None:
            raise ValueError("data.y is missing: the estimator needs labels for train_idx")
        if self.setting == "transductive" and hidden_idx is not None and len(hidden_idx) > 0:
            raise ValueError("setting='transductive' sees every node; pass hidden_idx only with setting='inductive'")
        if kernel is None:
            device = self.device if self.device is not None else data.edge_index.device
            kernel = GraphKernel(data.edge_index, data.num_nodes, hidden=hidden_idx,
                                 edge_weight=getattr(data, "edge_weight", None), dtype=self.dtype, device=device)
        num_classes = int(y.max()) + 1
        self.num_classes_ = num_classes
        self.kernel_ = kernel
        return P.make_problem(kernel, y, torch.as_tensor(train_idx), num_classes)

    def _record(self, res: P.EngineResult):
        self.history_ = res.history
        self.residuals_ = res.history[-1].residuals if res.history else []
        self.n_iter_ = res.history[-1].n_iter if res.history else 0

    def _flag(self, scores: Tensor) -> Tensor:
        bad = unreachable(scores)
        self.unreachable_ = bad
        if bool(bad.any()):
            warnings.warn(f"{int(bad.sum())} of {bad.numel()} nodes are not reached by any label (all-zero "
                          "scores); see .unreachable_", UnreachableNodesWarning, stacklevel=3)
        return scores

    def _check_fitted(self):
        if self.kernel_ is None:
            raise RuntimeError(f"{type(self).__name__} is not fitted; call fit() first")


class LabelPropagation(_Estimator):
    """Label propagation of Zhou et al. (2003): solve ``(I - eta S) Yhat = [Y; 0]`` (STKR Eq. 22).

    Parameters
    ----------
    eta : float in (0, 1)
        Propagation weight (``alpha`` in Zhou et al.).
    solver : "auto" | "richardson" | "cg" | "direct"
        ``richardson`` is Zhou's iteration ``Yhat <- eta S Yhat + Ytilde``; ``auto`` = CG.
    max_iter, tol : iteration budget and relative residual tolerance; ``tol=0`` runs
        exactly ``max_iter`` iterations (the paper's "number of iterations T").

    Hidden nodes (``setting="inductive"``) get ``eta S(x, visible) Yhat``: one step of
    the fixed-point equation, an extension the paper does not define.
    """

    def __init__(self, eta: float = 0.99, **kwargs):
        super().__init__(**kwargs)
        self.eta = float(eta)

    def fit(self, data, train_idx, hidden_idx=None, kernel: GraphKernel | None = None) -> "LabelPropagation":
        prob = self._prepare(data, train_idx, hidden_idx, kernel)
        budgets = (self.max_iter,) if self.tol == 0 else ()
        solver = self.solver
        res = P.label_propagation(prob, [self.eta], solver=solver, max_iter=self.max_iter, tol=self.tol,
                                  budgets=budgets)
        self._record(res)
        self.yhat_ = next(iter(res.h.values()))
        return self

    def predict(self, idx) -> Tensor:
        self._check_fitted()
        return self._flag(lp_scores(self.kernel_, self.yhat_, self.eta, torch.as_tensor(idx)))


class STKR(_Estimator):
    """Spectrally transformed kernel regression on a graph (Zhai et al., ICLR 2024).

    Solves Eq. 7, ``alpha = (G_{Khat_s,n} + n beta I)^{-1} y``, with the base kernel of
    Eq. 23 (``beta`` and ``eta`` mean what the paper's grids mean) and predicts with the
    paper's out-of-sample formulas.

    Parameters
    ----------
    transform : Polynomial | ReciprocalPolynomial | InverseLaplacian | TopD
        ``Polynomial`` -> Algorithm 1 (or 3 with ``solver="direct"``);
        ``ReciprocalPolynomial``/``InverseLaplacian`` -> Algorithm 2 (Eq. 20);
        ``TopD`` -> kernel PCA features + ridge probe (Eqs. 8-9).
    beta : float > 0
        Ridge parameter ``beta_n``.
    setting : "transductive" | "inductive"
    solver : "auto" | "richardson" | "cg" | "gmres" | "direct"
        ``auto``: ``direct`` (Algorithm 3 / an ``n x n`` system) when there are at most
        4000 labels, ``N n <= 2^25`` and no fixed budget, otherwise CG (symmetric positive
        systems) or GMRES.
    max_iter, tol : ``tol=0`` runs exactly ``max_iter`` Richardson iterations (the paper's T).
    step_size : "auto" | "paper" | float
        Richardson step ``gamma``; see :func:`graphstk.methods.propagation.stkr_reciprocal`.
    """

    def __init__(self, transform: Transform, beta: float, setting: str = "transductive",
                 step_size: str | float = "auto", **kwargs):
        super().__init__(setting=setting, **kwargs)
        if not isinstance(transform, (Polynomial, ReciprocalPolynomial, TopD)):
            raise TypeError(f"transform must be Polynomial, ReciprocalPolynomial/InverseLaplacian or TopD, "
                            f"got {type(transform).__name__}")
        if not beta > 0:
            raise ValueError(f"beta must be > 0, got {beta}")
        self.transform, self.beta, self.step_size = transform, float(beta), step_size

    def fit(self, data, train_idx, hidden_idx=None, kernel: GraphKernel | None = None) -> "STKR":
        if isinstance(self.transform, ReciprocalPolynomial):  # fail before any work
            lam = kernel.lambda_max if kernel is not None else 1.0
            self.transform.validate(lam)
        prob = self._prepare(data, train_idx, hidden_idx, kernel)
        budgets = (self.max_iter,) if self.tol == 0 and self.solver != "direct" else ()
        opts = dict(solver=self.solver, max_iter=self.max_iter, tol=self.tol, budgets=budgets)
        tr = self.transform
        if isinstance(tr, TopD):
            res = P.stkr_topd(prob, [tr.d], [self.beta], support=tr.support)
        elif isinstance(tr, Polynomial):
            res = P.stkr_polynomial(prob, tr, [self.beta], step_size=self.step_size, **opts)
        else:
            res = P.stkr_reciprocal(prob, [tr], [self.beta], step_size=self.step_size, **opts)
        self._record(res)
        self.h_ = next(iter(res.h.values()))
        return self

    def predict(self, idx) -> Tensor:
        self._check_fitted()
        return self._flag(scores_from(self.kernel_, self.h_, torch.as_tensor(idx)))
