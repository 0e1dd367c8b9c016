"""Kernels of Walder et al. (Sec. 7.2): the Gaussian kNN graph and kernel mixtures.

* :func:`gaussian_knn_graph`: the kNN graph with Gaussian edge weights;
* :class:`MixtureKernelOperator`: ``sum_k w_k K_k``, e.g. ``w K_gamma + (1 - w) exp(-tau L)``.

The diffusion kernel ``exp(-tau L)`` itself is a :class:`~graphstk.operators.SpectralKernelOperator`
(:mod:`graphstk.operators.base`) built by :func:`graphstk.spectral.diffusion_kernel`.
"""
from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from .base import KernelOperator
from .kernels import as_features
from .knn import knn_graph

__all__ = ["gaussian_knn_graph", "MixtureKernelOperator"]


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
