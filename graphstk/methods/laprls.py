"""Laplacian regularized least squares, LapRLSC (Belkin, Niyogi, Sindhwani, "Manifold
regularization", JMLR 7, 2006, Sec. 4.2): the manifold-regularization baseline of the Fredholm
kernel paper's tables.

Objective over the ``N = l + u`` points (labeled first in the paper's notation)

    f* = argmin_{f in H_K} (1/l) sum_{i<=l} (y_i - f(x_i))^2 + gamma_A ||f||_K^2
                           + gamma_I / N^2  f^T L f,                                     (LapRLS)

with ``f = [f(x_1), ..., f(x_N)]`` and ``L = D - W`` the Laplacian of a kNN graph on all ``N``
points (built by :func:`graphstk.operators.knn_graph`, applied through a
:class:`~graphstk.operators.SparseOperator`). The paper's closed form (Sec. 4.2, Theorem 2's
expansion ``f = sum_{i<=N} alpha_i k(., x_i)``) is
``alpha = (J K + gamma_A l I + gamma_I l / N^2  L K)^{-1} J Y``, an ``N x N`` non-symmetric solve.

Here the same minimiser is computed through a factor ``K = R R^T`` (``R`` ``[N, m]``):
with ``f = R beta`` and ``||f||_K^2 = beta^T beta`` the objective is the ``m x m`` ridge system

    (R_L^T R_L / l + gamma_A I + gamma_I / N^2  R^T L R) beta = R_L^T Y / l,

and ``f(x) = r(x)^T beta`` with ``r(x) = k(x, landmarks) K_mm^{-1/2}``. The factor is exact for
a linear kernel (``R = X``, ``m = d``) and for ``landmarks=None`` (every point a landmark:
``R = K^{1/2}`` from one ``eigh``); ``landmarks=m`` uses ``m`` random points (Nyström), the
approximation to use when ``N`` is too large for an ``N x N`` eigendecomposition. Every
``(gamma_A, gamma_I)`` pair then shares ``R`` and ``R^T L R`` (see :func:`laprls_path`).
Multi-class: one-vs-rest with ``+-1`` targets and argmax.
"""
from __future__ import annotations

import math

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin
from torch import Tensor

from ..operators.base import SparseOperator
from ..operators.feature import Kernel, as_features, check_positive, knn_graph
from .fredholm import _kernel_matmul, _kblock, _make_kernel, onevsrest_targets

__all__ = ["LapRLSC", "graph_laplacian", "kernel_factor", "laprls_path"]


def graph_laplacian(X, n_neighbors: int = 10, weights: str = "gaussian", sigma: float | None = None,
                    normalized: bool = False) -> SparseOperator:
    """The Laplacian ``L = D - W`` (or ``I - D^-1/2 W D^-1/2`` when ``normalized``) of the
    symmetric kNN graph of the rows of ``X`` (:func:`graphstk.operators.knn_graph`;
    ``weights``: ``"gaussian"`` heat-kernel weights ``exp(-d^2/(2 sigma^2))``, ``sigma``
    defaulting to the median kNN distance, or ``"connectivity"`` (0/1)) as a sparse operator."""
    X = as_features(X)
    n = X.shape[0]
    ei, w = knn_graph(X, n_neighbors, mode=weights, sigma=sigma)
    w = w.to(X.dtype)
    deg = torch.zeros(n, dtype=X.dtype).index_add_(0, ei[0], w)
    ar = torch.arange(n)
    if normalized:
        dis = torch.where(deg > 0, deg.clamp_min(1e-300).rsqrt(), torch.zeros_like(deg))
        vals = torch.cat([(deg > 0).to(X.dtype), -w * dis[ei[0]] * dis[ei[1]]])
    else:
        vals = torch.cat([deg, -w])
    return SparseOperator(torch.cat([ar, ei[0]]), torch.cat([ar, ei[1]]), vals, (n, n))


def kernel_factor(kernel: Kernel, X: Tensor, landmarks: Tensor | None = None,
                  rtol: float = 1e-10) -> tuple[Tensor, Tensor | None]:
    """``(R, P)`` with ``K(X, X) ~ R R^T`` and ``r(x) = k(x, X[landmarks]) P``.

    Linear kernel: ``R = X``, ``P = None`` (``r(x) = x``, exact). Otherwise
    ``P = V diag(ev^-1/2)`` from ``K_mm = V diag(ev) V^T`` (eigenvalues below ``rtol * max``
    dropped) and ``R = K(X, X_m) P``: exact (``R R^T = K``) when ``landmarks`` is every point.
    """
    if kernel.name == "linear":
        return X, None
    Xm = X if landmarks is None else X.index_select(0, landmarks)
    Kmm = _kblock(kernel, Xm, Xm)
    ev, V = torch.linalg.eigh(0.5 * (Kmm + Kmm.T))
    keep = ev > ev.max().clamp_min(1e-300) * rtol
    P = V[:, keep] / ev[keep].sqrt()
    R = Kmm @ P if landmarks is None else _kernel_matmul(kernel, X, Xm, P)
    return R, P


def laprls_path(R: Tensor, LR: Tensor, labeled: Tensor, Y: Tensor, params: list[tuple[float, float]]) -> list[Tensor]:
    """``beta`` ``[m, C]`` for each ``(gamma_A, gamma_I)`` in ``params`` (module docstring system),
    sharing ``R`` ``[N, m]`` and ``LR = L R``."""
    N = R.shape[0]
    l = labeled.numel()
    RL = R.index_select(0, labeled)
    G = RL.T @ RL / l
    E = R.T @ LR
    E = 0.5 * (E + E.T) / N ** 2
    b = RL.T @ Y.to(R.dtype) / l
    out = []
    for gA, gI in params:
        A = G + gI * E
        A.diagonal().add_(gA)
        out.append(torch.linalg.solve(A, b))
    return out


class LapRLSC(ClassifierMixin, BaseEstimator):
    """Laplacian RLS classifier (Belkin, Niyogi, Sindhwani 2006, Sec. 4.2; module docstring).

    Parameters
    ----------
    kernel : ``"gaussian"`` (default; ``exp(-||x-z||^2 / (2 width))`` as in the Fredholm paper),
        ``"linear"``, or any name / :class:`~graphstk.operators.Kernel`.
    width : Gaussian width ``r`` (required for a Gaussian), or ``sigma`` of other bandwidth kernels.
    gamma_A : float > 0, ambient (RKHS) regularisation, default 1e-3.
    gamma_I : float >= 0, intrinsic (graph) regularisation, default 1.0 (``gamma_I / N^2`` multiplies
        ``f^T L f``; ``gamma_I = 0`` is kernel RLS).
    n_neighbors : kNN graph degree, default 10.  graph_weights : ``"gaussian"`` (default) or
        ``"connectivity"``.  normalized_laplacian : default False (``L = D - W``).
    landmarks : ``None`` (exact, one ``N x N`` eigendecomposition; linear kernels are always exact)
        or an int ``m`` (Nyström factor on ``m`` random points).
    seed : seeds the landmark draw.

    ``fit(X_labeled, y, X_unlabeled)`` / ``decision_function(X)`` ``[n, C]`` / ``predict(X)``.
    Attributes after ``fit``: ``classes_``, ``coef_`` (``beta``, ``[m, C]``), ``landmarks_``.
    """

    def __init__(self, kernel="gaussian", width: float | None = None, gamma_A: float = 1e-3,
                 gamma_I: float = 1.0, n_neighbors: int = 10, graph_weights: str = "gaussian",
                 normalized_laplacian: bool = False, landmarks: int | None = None, seed: int = 0):
        self.kernel = kernel
        self.width = width
        self.gamma_A = gamma_A
        self.gamma_I = gamma_I
        self.n_neighbors = n_neighbors
        self.graph_weights = graph_weights
        self.normalized_laplacian = normalized_laplacian
        self.landmarks = landmarks
        self.seed = seed

    def _prepare(self, X_labeled, y, X_unlabeled):
        XL = as_features(X_labeled, name="X_labeled")
        XU = as_features(X_unlabeled, dtype=XL.dtype, name="X_unlabeled")
        if XL.shape[1] != XU.shape[1]:
            raise ValueError(f"dimension mismatch: X_labeled has {XL.shape[1]} features, X_unlabeled has {XU.shape[1]}")
        yn = np.asarray(y.cpu().numpy() if isinstance(y, Tensor) else y).ravel()
        if len(yn) != XL.shape[0]:
            raise ValueError(f"y has {len(yn)} labels but X_labeled has {XL.shape[0]} rows")
        X = torch.cat([XL, XU])
        kern = _make_kernel(self.kernel, self.width, "kernel")
        lm = None
        if self.landmarks is not None and kern.name != "linear":
            m = int(self.landmarks)
            if m < 1:
                raise ValueError(f"landmarks must be None or an integer >= 1, got {self.landmarks!r}")
            if m < X.shape[0]:
                g = torch.Generator().manual_seed(int(self.seed))
                lm = torch.randperm(X.shape[0], generator=g)[:m]
        R, P = kernel_factor(kern, X, lm)
        Lap = graph_laplacian(X, self.n_neighbors, self.graph_weights, normalized=self.normalized_laplacian)
        return XL, X, kern, lm, R, P, Lap, yn

    def fit(self, X_labeled, y, X_unlabeled):
        """Fit on labeled ``(X_labeled, y)`` and unlabeled ``X_unlabeled`` (the graph spans both)."""
        gA = check_positive("gamma_A", self.gamma_A)
        gI = float(self.gamma_I)
        if not (gI >= 0 and math.isfinite(gI)):
            raise ValueError(f"gamma_I must be a finite number >= 0, got {self.gamma_I!r}")
        XL, X, kern, lm, R, P, Lap, yn = self._prepare(X_labeled, y, X_unlabeled)
        self.classes_, Y = onevsrest_targets(yn)
        self.coef_ = laprls_path(R, Lap @ R, torch.arange(XL.shape[0]), Y, [(gA, gI)])[0]
        self.kernel_, self.proj_ = kern, P
        self.landmarks_ = None if P is None else (X if lm is None else X.index_select(0, lm))
        self.n_features_in_ = X.shape[1]
        return self

    def features(self, X) -> Tensor:
        """``r(x)``: the factor rows of new points (``k(x, landmarks) P``; ``x`` for linear)."""
        X = as_features(X, dtype=torch.float64 if self.proj_ is None else self.proj_.dtype)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but the model was fitted with {self.n_features_in_}")
        if self.proj_ is None:
            return X
        return _kernel_matmul(self.kernel_, X, self.landmarks_, self.proj_)

    def decision_function(self, X) -> Tensor:
        if not hasattr(self, "coef_"):
            raise RuntimeError("LapRLSC is not fitted; call fit(X_labeled, y, X_unlabeled) first")
        return self.features(X) @ self.coef_

    def predict(self, X) -> np.ndarray:
        """``classes_[argmax_c scores]``."""
        scores = self.decision_function(X)
        return self.classes_[scores.argmax(1).numpy()]
