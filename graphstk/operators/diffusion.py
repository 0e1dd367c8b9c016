"""Spectral kernel operators: the graph diffusion kernel ``exp(-tau L)`` and kernel mixtures.

* :func:`gaussian_knn_graph`: the kNN graph of Walder et al. (Sec. 7.2): nearest-neighbour
  connectivity, Gaussian edge weights ``W_ij = exp(-||x_i - x_j||^2 / h)`` whose bandwidth
  ``h`` is the mean squared distance of connected points, no self loops (``W_ii = 0``).
* :class:`SpectralKernelOperator`: ``K = U diag(values) U^T`` from (possibly truncated)
  eigenpairs; it implements the :class:`~graphstk.operators.KernelOperator` interface and
  hands its eigenpairs to methods that need a decomposition anyway (semi-supervised KPCA),
  so no second eigendecomposition is done.
* :meth:`SpectralKernelOperator.from_laplacian`: ``exp(-tau L)`` from eigenpairs of the graph
  Laplacian; :func:`graphstk.spectral.diffusion_kernel` builds it from a graph (the eigensolver
  is the spectral layer's).
* :class:`MixtureKernelOperator`: ``sum_k w_k K_k``, e.g. the convex combination
  ``w K_gamma + (1 - w) exp(-tau L)`` of Sec. 7.2.
"""
from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from .base import DenseOperator, KernelOperator, as_index
from .feature import as_features, check_positive, knn_graph

__all__ = ["gaussian_knn_graph", "SpectralKernelOperator", "MixtureKernelOperator"]


def gaussian_knn_graph(X, k: int, metric: str = "euclidean") -> tuple[Tensor, Tensor]:
    """Symmetric kNN graph with Gaussian weights (Walder et al., Sec. 7.2).

    ``i ~ j`` when ``j`` is among the ``k`` nearest neighbours of ``i`` or vice versa (no
    self loops); ``W_ij = exp(-d_ij^2 / h)`` with ``h`` the mean of ``d_ij^2`` over the
    edges ("bandwidth equal to the mean squared pairwise distance between connected points").

    ``X``: the ``[n, d]`` points; ``k``: neighbours per point; ``metric``: the distance of
    :func:`graphstk.operators.knn_graph` (default ``"euclidean"``).

    Returns ``(edge_index [2, E], edge_weight [E])`` (both directions present).
    """
    X = as_features(X)
    if int(k) != k or not 1 <= int(k) < X.shape[0]:
        raise ValueError(f"k must be an integer in [1, {X.shape[0] - 1}], got {k!r}")
    ei, dist = knn_graph(X, int(k), metric=metric, mode="distance")
    d2 = dist.to(torch.float64).square()
    h = float(d2.mean())
    if h <= 0:
        raise ValueError("all neighbour distances are 0 (duplicate points): the Gaussian edge weights "
                         "exp(-d^2 / mean d^2) are undefined; remove duplicates first")
    return ei, torch.exp(-d2 / h)


class SpectralKernelOperator(KernelOperator):
    """``K = U diag(values) U^T`` (``U`` with orthonormal columns, ``[N, r]``; ``values [r]``).

    Exact for a full eigendecomposition, the best rank-``r`` approximation for the top ``r``
    eigenpairs. ``eigenpairs()`` returns ``(values, U)`` so that methods needing a
    decomposition of ``K`` reuse it. Values may be any reals; a PSD check is the user's
    (semi-supervised KPCA raises for a negative eigenvalue).
    """

    def __init__(self, U: Tensor, values: Tensor):
        U = torch.as_tensor(U, dtype=torch.float64)
        values = torch.as_tensor(values, dtype=torch.float64).flatten()
        if U.dim() != 2 or U.shape[1] != values.numel():
            raise ValueError(f"U must be [N, r] with r = len(values) = {values.numel()}, got {tuple(U.shape)}")
        self.U, self.values = U, values

    @classmethod
    def from_laplacian(cls, mu: Tensor, U: Tensor, tau: float) -> "SpectralKernelOperator":
        """``exp(-tau L)`` from eigenpairs ``(mu, U)`` of ``L`` (:func:`graphstk.spectral.laplacian_eigenpairs`)."""
        tau = check_positive("tau", tau)
        return cls(U, torch.exp(-tau * torch.as_tensor(mu, dtype=torch.float64)))

    shape = property(lambda self: (int(self.U.shape[0]), int(self.U.shape[0])))
    dtype = property(lambda self: self.U.dtype)
    device = property(lambda self: self.U.device)

    def eigenpairs(self) -> tuple[Tensor, Tensor]:
        """``(values [k], U [N, k])``: the eigenvalues and eigenvectors this operator is built from."""
        return self.values, self.U

    def _matmul(self, x: Tensor) -> Tensor:
        return self.U @ (self.values.unsqueeze(1) * (self.U.T @ x.to(self.dtype)))

    def block(self, rows=None, cols=None) -> KernelOperator:
        if rows is None and cols is None:
            return self
        r = as_index(rows, self.shape[0])
        c = as_index(cols, self.shape[1])
        return DenseOperator((self.U[r] * self.values) @ self.U[c].T)

    def diagonal(self) -> Tensor:
        return (self.U.square() * self.values).sum(1)

    def to_dense(self) -> Tensor:
        return (self.U * self.values) @ self.U.T

    def to(self, device=None, dtype=None) -> "SpectralKernelOperator":
        return SpectralKernelOperator(self.U.to(device=device, dtype=dtype),
                                      self.values.to(device=device, dtype=dtype))

    @property
    def T(self) -> "SpectralKernelOperator":
        return self

    def __repr__(self) -> str:
        return f"SpectralKernelOperator(shape={self.shape}, rank={self.values.numel()})"


class MixtureKernelOperator(KernelOperator):
    """``K = sum_k w_k K_k`` over square operators of equal shape (Walder et al. Sec. 7.2 uses
    ``w K_gamma + (1 - w) exp(-tau L)``; :meth:`convex` builds exactly that).

    ``operators``: the square kernel operators; ``weights``: one non-negative weight each, so
    that a sum of PSD kernels stays PSD.
    """

    def __init__(self, operators: list[KernelOperator], weights: list[float]):
        if len(operators) != len(weights) or not operators:
            raise ValueError("give one weight per operator (and at least one operator)")
        shapes = {tuple(op.shape) for op in operators}
        if len(shapes) != 1:
            raise ValueError(f"operators must have equal shapes, got {sorted(shapes)}")
        ws = [float(w) for w in weights]
        if any(not np.isfinite(w) or w < 0 for w in ws):
            raise ValueError(f"mixture weights must be finite and >= 0, got {ws}")
        self.operators, self.weights = list(operators), ws

    @classmethod
    def convex(cls, w: float, K1: KernelOperator, K2: KernelOperator) -> "MixtureKernelOperator":
        """``w K1 + (1 - w) K2`` with ``0 <= w <= 1``."""
        w = float(w)
        if not 0.0 <= w <= 1.0:
            raise ValueError(f"convex weight w must lie in [0, 1], got {w}")
        return cls([K1, K2], [w, 1.0 - w])

    shape = property(lambda self: tuple(self.operators[0].shape))
    dtype = property(lambda self: self.operators[0].dtype)
    device = property(lambda self: self.operators[0].device)

    def _matmul(self, x: Tensor) -> Tensor:
        return sum(w * (op @ x) for w, op in zip(self.weights, self.operators))

    def block(self, rows=None, cols=None) -> "MixtureKernelOperator":
        return MixtureKernelOperator([op.block(rows, cols) for op in self.operators], self.weights)

    def diagonal(self) -> Tensor:
        return sum(w * op.diagonal() for w, op in zip(self.weights, self.operators))

    def to_dense(self) -> Tensor:
        return sum(w * op.to_dense().to(torch.float64) for w, op in zip(self.weights, self.operators))

    def to(self, device=None, dtype=None) -> "MixtureKernelOperator":
        return MixtureKernelOperator([op.to(device, dtype) for op in self.operators], self.weights)

    @property
    def T(self) -> "MixtureKernelOperator":
        return MixtureKernelOperator([op.T for op in self.operators], self.weights)

    def __repr__(self) -> str:
        return f"MixtureKernelOperator(weights={self.weights}, operators={self.operators})"
