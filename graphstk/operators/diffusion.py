"""Spectral kernel operators: the graph diffusion kernel ``exp(-tau L)`` and kernel mixtures.

* :func:`gaussian_knn_graph`: the kNN graph of Walder et al. (Sec. 7.2): nearest-neighbour
  connectivity, Gaussian edge weights ``W_ij = exp(-||x_i - x_j||^2 / h)`` whose bandwidth
  ``h`` is the mean squared distance of connected points, no self loops (``W_ii = 0``).
* :class:`SpectralKernelOperator`: ``K = U diag(values) U^T`` from (possibly truncated)
  eigenpairs; it implements the :class:`~graphstk.operators.KernelOperator` interface and
  hands its eigenpairs to methods that need a decomposition anyway (semi-supervised KPCA),
  so no second eigendecomposition is done.
* :func:`diffusion_kernel`: ``exp(-tau L)`` with ``L = I - D^{-1/2} W D^{-1/2}`` (Sec. 7.2;
  ``L = diag(S e) - S`` there is the same matrix on a graph without isolated nodes). One
  eigendecomposition of ``L`` serves every ``tau`` (:func:`laplacian_eigenpairs`, then
  :meth:`SpectralKernelOperator.from_laplacian`). Small graphs use a dense ``eigh``; large
  ones the top-``rank`` eigenpairs of ``S`` by Lanczos (:func:`graphstk.spectral.top_eigenpairs`),
  which are the leading eigenpairs of ``exp(-tau L)`` for every ``tau > 0``.
* :class:`MixtureKernelOperator`: ``sum_k w_k K_k``, e.g. the convex combination
  ``w K_gamma + (1 - w) exp(-tau L)`` of Sec. 7.2.
"""
from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from .base import DenseOperator, KernelOperator, as_index
from .feature import as_features, check_positive, knn_graph
from .graph import check_edge_index, normalized_adjacency

__all__ = ["gaussian_knn_graph", "laplacian_eigenpairs", "SpectralKernelOperator", "diffusion_kernel",
           "MixtureKernelOperator"]


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


def laplacian_eigenpairs(edge_index: Tensor, num_nodes: int, edge_weight: Tensor | None = None,
                         rank: int | None = None, dense_max: int = 4000, seed: int = 0) -> tuple[Tensor, Tensor]:
    """Eigenpairs ``(mu [r], U [N, r])`` of ``L = I - D^{-1/2} W D^{-1/2}``, smallest ``mu`` first.

    ``rank=None`` (or ``N <= dense_max`` with ``rank >= N``) gives all ``N`` pairs by a dense
    ``eigh``; otherwise the ``rank`` smallest eigenvalues of ``L`` (= largest of ``S``) by
    :func:`graphstk.spectral.top_eigenpairs`, component by component. Isolated nodes have
    ``S_ii = 0``, hence ``mu = 1`` for their unit vector.

    ``edge_index [2, E]``, ``num_nodes`` and optional ``edge_weight [E]`` give the graph;
    ``dense_max`` is the largest graph decomposed densely; ``seed`` seeds the Lanczos start.
    """
    check_edge_index(edge_index, num_nodes, edge_weight)
    S = normalized_adjacency(edge_index, num_nodes, edge_weight)
    n = int(num_nodes)
    if rank is not None and (int(rank) != rank or int(rank) < 1):
        raise ValueError(f"rank must be a positive integer or None, got {rank!r}")
    if rank is None and n > dense_max:
        raise ValueError(f"a dense eigendecomposition of a {n}-node graph is too large; pass rank=r "
                         f"(the top-r eigenpairs by Lanczos, e.g. rank=500)")
    if rank is None or n <= dense_max:
        A = S.to_dense().numpy()
        mu, U = np.linalg.eigh(np.eye(n) - (A + A.T) / 2)
        r = n if rank is None else min(int(rank), n)
        return torch.as_tensor(mu[:r]), torch.as_tensor(U[:, :r])
    from ..spectral.eigen import top_eigenpairs  # local import: spectral depends on operators
    vals, vecs = top_eigenpairs(S, min(int(rank), n), seed=seed, upper_bound=1.0)
    return 1.0 - vals, vecs


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
        """``exp(-tau L)`` from eigenpairs ``(mu, U)`` of ``L`` (:func:`laplacian_eigenpairs`)."""
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


def diffusion_kernel(edge_index: Tensor, num_nodes: int, tau: float, edge_weight: Tensor | None = None,
                     rank: int | None = None) -> SpectralKernelOperator:
    """The graph diffusion kernel ``exp(-tau L)``, ``L = I - D^{-1/2} W D^{-1/2}`` (Walder et al. Sec. 7.2).

    Parameters: ``edge_index``/``edge_weight`` (PyG convention, symmetric), ``num_nodes``,
    ``tau > 0`` (diffusion time), ``rank`` (``None``: exact, dense; ``r``: the best rank-``r``
    approximation from the ``r`` smallest eigenvalues of ``L``, for large graphs).
    To sweep ``tau``, compute :func:`laplacian_eigenpairs` once and call
    :meth:`SpectralKernelOperator.from_laplacian` per ``tau``.
    """
    mu, U = laplacian_eigenpairs(edge_index, num_nodes, edge_weight, rank=rank)
    return SpectralKernelOperator.from_laplacian(mu, U, tau)


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
