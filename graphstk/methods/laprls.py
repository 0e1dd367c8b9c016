"""Laplacian regularized least squares, LapRLSC (Belkin, Niyogi, Sindhwani, "Manifold regularization",
JMLR 7, 2006, Sec. 4.2), the manifold-regularization baseline of the Fredholm paper's tables: the LapRLS
minimiser through a kernel factor ``K = R R^T`` as an ``m x m`` ridge system (exact, or Nystrom on
``landmarks``; derivation: ``docs/methods.md``), on any torch device.
"""
from __future__ import annotations

import math

import torch
from torch import Tensor

from .._arrays import check_is_fitted, to_output, torch_generator, validate_features
from ..memory import check_allocation
from ..operators.base import SparseOperator
from ..operators.graph import symmetric_normalization
from ..operators.feature import FeatureKernelOperator, Kernel, as_features, check_positive, knn_graph
from ._constraints import (NON_NEGATIVE, OPTIONAL_POSITIVE_INT, POSITIVE, POSITIVE_INT, SIGMA, StrOptions, kernel_names,
                           store_params)
from .semi_supervised import SemiSupervisedClassifier
from .fredholm import kernel_from_sigma

__all__ = ["LapRLSC", "graph_laplacian", "kernel_factor", "laprls_path"]


def graph_laplacian(X, n_neighbors: int = 10, weights: str = "gaussian", sigma: float | None = None,
                    normalized: bool = False) -> SparseOperator:
    """The Laplacian ``L = D - W`` (or ``I - D^-1/2 W D^-1/2`` when ``normalized``) of the
    symmetric kNN graph of the rows of ``X`` (:func:`graphstk.operators.knn_graph`;
    ``weights``: ``"gaussian"`` heat-kernel weights ``exp(-d^2/(2 sigma^2))``, ``sigma``
    defaulting to the median kNN distance, or ``"connectivity"`` (0/1)) as a sparse operator
    on ``X``'s device."""
    X = as_features(X)
    n = X.shape[0]
    ei, w = knn_graph(X, n_neighbors, mode=weights, sigma=sigma)
    w = w.to(X.dtype)
    ar = torch.arange(n, device=X.device)
    sw, deg, _ = symmetric_normalization(ei[0], ei[1], w, n)   # D^-1/2 W D^-1/2 and D
    if normalized:
        vals = torch.cat([(deg > 0).to(X.dtype), -sw])
    else:
        vals = torch.cat([deg, -w])
    return SparseOperator(torch.cat([ar, ei[0]]), torch.cat([ar, ei[1]]), vals, (n, n))


def kernel_factor(kernel: Kernel, X: Tensor, landmarks: Tensor | None = None,
                  rtol: float = 1e-10) -> tuple[Tensor, Tensor | None]:
    """``(R, P)`` with ``K(X, X) ~ R R^T`` and ``r(x) = k(x, X[landmarks]) P``.

    Linear kernel: ``R = X``, ``P = None`` (exact). Otherwise ``P = V diag(ev^-1/2)`` from
    ``K_mm = V diag(ev) V^T`` over ``X[landmarks]`` (all rows when ``None``: exact; eigenvalues below
    ``rtol * max`` dropped) and ``R = K(X, X_m) P``, on ``X``'s device.
    """
    if kernel.name == "linear":
        return X, None
    Xm = X if landmarks is None else X.index_select(0, landmarks)
    m = Xm.shape[0]
    check_allocation(2.0 * m * m * X.element_size(), f"the {m} x {m} landmark kernel matrix and its eigenvectors",
                     "pass landmarks=m (a Nystroem factor on m points)", X.device)
    Kmm = FeatureKernelOperator(Xm, kernel=kernel).to_dense()
    ev, V = torch.linalg.eigh(0.5 * (Kmm + Kmm.T))
    keep = ev > ev.max().clamp_min(1e-300) * rtol
    P = V[:, keep] / ev[keep].sqrt()
    R = Kmm @ P if landmarks is None else FeatureKernelOperator(X, Xm, kernel=kernel) @ P
    return R, P


def laprls_path(R: Tensor, LR: Tensor, labeled: Tensor, Y: Tensor, params: list[tuple[float, float]]) -> list[Tensor]:
    """``beta`` ``[m, C]`` of ``(R_L^T R_L / l + gamma_A I + gamma_I / N^2 R^T L R) beta = R_L^T Y / l`` for
    each ``(gamma_A, gamma_I)`` in ``params``, sharing ``R`` ``[N, m]`` and ``LR = L R``."""
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


class LapRLSC(SemiSupervisedClassifier):
    """Laplacian RLS classifier (Belkin, Niyogi, Sindhwani 2006, Sec. 4.2):
    ``min (1/l) sum_L (y_i - f(x_i))^2 + gamma_A ||f||_K^2 + gamma_I / N^2 f^T L f``.

    ``fit(X, y)``: ``X`` ``[N, d]`` every point (the kNN graph spans all of them), ``y`` ``[N]`` with ``-1``
    marking the unlabeled points; ``decision_function`` gives ``r(x)^T beta`` (1-D for two classes).

    Parameters
    ----------
    kernel : str or Kernel, default "gaussian"
        ``"gaussian"`` (``exp(-||x-z||^2 / (2 sigma^2))``), ``"linear"``, or any name /
        :class:`~graphstk.operators.Kernel` of :func:`graphstk.operators.kernel_function`
        (``graphstk.methods.fredholm.kernel_from_sigma``).
    sigma : float > 0 or None, default None
        Width of the Gaussian (the scale of other kernels with a width; ignored for ``"linear"``).
        ``None``: the median heuristic over the rows of ``X`` (``docs/estimators.md``, "Widths").
    gamma_A : float > 0, default 1e-3. Ambient (RKHS) regularisation.
    gamma_I : float >= 0, default 1.0
        Intrinsic (graph) regularisation (``gamma_I / N^2`` multiplies ``f^T L f``; 0 is kernel RLS).
    n_neighbors : int, default 10
        kNN graph degree (``min(n_neighbors, N - 1)`` on fewer than ``n_neighbors + 1`` points).
    graph_weights : {"gaussian", "connectivity"}, default "gaussian"
    normalized_laplacian : bool, default False. ``L = D - W`` or ``I - D^-1/2 W D^-1/2``.
    landmarks : int, optional
        ``None``: exact factor (one ``N x N`` eigendecomposition; linear kernels are always exact);
        ``m``: Nystroem factor on ``m`` random points.
    random_state : int, RandomState or None, default None. Seeds the landmark draw.
    gamma_scale : {"absolute", "trace"}, default "absolute"
        ``"trace"`` multiplies ``gamma_A`` and ``gamma_I`` by the mean of ``diag(R R^T)`` (the
        kernel's mean diagonal), so one grid fits every data set.

    Attributes
    ----------
    classes_, n_features_in_
    sigma_ : float or None, the width used (``None`` for a kernel without one)
    unreachable_, n_unreachable_ : the fitted points with all scores zero or not finite, their count
    coef_ : Tensor ``[m, C]`` (``beta``; one column for two classes)
    scale_ : float, the mean of ``diag(R R^T)`` (``gamma_scale="trace"``)
    landmarks_ : Tensor ``[m, d]`` or None (linear kernel)
    proj_ : Tensor ``[m, m']`` or None, ``r(x) = k(x, landmarks_) proj_``
    kernel_ : the :class:`~graphstk.operators.Kernel`
    """

    _parameter_constraints: dict = {
        "kernel": [kernel_names(), Kernel], "sigma": SIGMA, "gamma_A": POSITIVE, "gamma_I": NON_NEGATIVE,
        "n_neighbors": POSITIVE_INT, "graph_weights": [StrOptions({"gaussian", "connectivity"})],
        "normalized_laplacian": ["boolean"], "landmarks": OPTIONAL_POSITIVE_INT, "random_state": ["random_state"],
        "gamma_scale": [StrOptions({"absolute", "trace"})],
    }

    def __init__(self, kernel="gaussian", sigma: float | None = None, gamma_A: float = 1e-3,
                 gamma_I: float = 1.0, n_neighbors: int = 10, graph_weights: str = "gaussian",
                 normalized_laplacian: bool = False, landmarks: int | None = None, random_state=None,
                 gamma_scale: str = "absolute"):
        store_params(self, locals())

    def _landmark_ids(self, n: int, device) -> Tensor | None:
        if self.landmarks is None or int(self.landmarks) >= n:
            return None
        return torch.randperm(n, generator=torch_generator(self.random_state))[:int(self.landmarks)].to(device)

    def _gammas(self, gamma_A, gamma_I) -> tuple[float, float]:
        gA = check_positive("gamma_A", gamma_A)
        gI = float(gamma_I)
        if not (gI >= 0 and math.isfinite(gI)):
            raise ValueError(f"gamma_I must be a finite number >= 0, got {gamma_I!r}")
        if self.gamma_scale == "trace":
            return gA * self.scale_, gI * self.scale_
        return gA, gI

    def _fit(self, X: Tensor, labeled: Tensor, Y: Tensor):
        kern = kernel_from_sigma(self.kernel, self.sigma, "kernel", X)
        self.sigma_ = kern.sigma
        lm = None if kern.name == "linear" else self._landmark_ids(X.shape[0], X.device)
        R, P = kernel_factor(kern, X, lm)
        k = min(int(self.n_neighbors), X.shape[0] - 1)
        Lap = graph_laplacian(X, k, self.graph_weights, normalized=self.normalized_laplacian)
        self.scale_ = float((R * R).sum(1).mean())
        self._path_state = (R, Lap @ R, labeled, Y)
        self.coef_ = laprls_path(*self._path_state, [self._gammas(self.gamma_A, self.gamma_I)])[0]
        self.kernel_, self.proj_ = kern, P
        self.landmarks_ = None if P is None else (X if lm is None else X.index_select(0, lm))

    def features(self, X) -> Tensor:
        """``r(x)`` of validated points: the factor rows ``k(x, landmarks_) proj_`` (``x`` for linear)."""
        if self.proj_ is None:
            return X
        return FeatureKernelOperator(X.to(device=self.proj_.device, dtype=self.proj_.dtype), self.landmarks_,
                                     kernel=self.kernel_) @ self.proj_

    def _scores(self, X: Tensor) -> Tensor:
        R = self.features(X)
        return R @ self.coef_.to(device=R.device, dtype=R.dtype)

    def _fit_scores(self) -> Tensor:
        R = self._path_state[0]
        return R @ self.coef_.to(R.dtype)

    def decision_path(self, X, gammas) -> list:
        """``decision_function(X)`` for every ``(gamma_A, gamma_I)`` in ``gammas`` (same ``gamma_scale``) from
        this fit's kernel factor and graph; the fitted state is unchanged. A list of arrays of ``X``'s type."""
        check_is_fitted(self)
        RX = self.features(validate_features(self, X, reset=False))
        betas = laprls_path(*self._path_state, [self._gammas(gA, gI) for gA, gI in gammas])
        return [to_output(S[:, 0] if S.shape[1] == 1 else S, X) for S in (RX @ b.to(RX.dtype) for b in betas)]
