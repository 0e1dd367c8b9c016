"""Graph x feature kernels: a spectral transform ``P = s(S)`` of the graph (Eq. 5-6, out of sample for
hidden nodes, Eq. 23) composed with a kernel ``k_X`` on node features, each a
:class:`~graphstk.operators.KernelOperator` over all ``N`` nodes: :class:`GraphFilter` ``P``,
:class:`FilteredFeatureKernel` ``k_X(P X)``, :class:`SandwichKernel` ``P K_X P^T``, :func:`hadamard_kernel`
``K_G o K_X``; :func:`lazy_coefficients` gives the lazy-walk filter ``((1 - a) + a l)^K``. The
derivations are in docs/feature_stkr.md.
"""
from __future__ import annotations

import math
from typing import Sequence

import torch
from torch import Tensor

from .base import DenseOperator, KernelOperator, SparseOperator, as_index, follows, horner, unit_columns
from .feature import FeatureKernelOperator, Kernel, kernel_function
from .graph import GraphKernel

__all__ = ["lazy_coefficients", "extended_adjacency", "GraphFilter", "FilteredFeatureKernel", "SandwichKernel", "hadamard_kernel",
           "filter_features", "unit_rows"]


def lazy_coefficients(depth: int, a: float = 0.5) -> tuple[float, ...]:
    """``(pi_0, ..., pi_K)`` of ``s(l) = ((1 - a) + a l)^K``: ``pi_p = C(K, p) a^p (1 - a)^(K - p)``.

    Parameters
    ----------
    depth : int
        ``K >= 0``, the number of lazy-walk steps.
    a : float, default 0.5
        Weight of the neighbours, in ``(0, 1]`` (``a = 1``: ``s(l) = l^K``, STKR's SP-poly).
    """
    if isinstance(depth, bool) or int(depth) != depth or depth < 0:
        raise ValueError(f"depth must be an integer >= 0, got {depth!r}")
    if not 0.0 < float(a) <= 1.0:
        raise ValueError(f"a must lie in (0, 1], got {a!r} (a = 1 gives s(l) = l^K)")
    K, a = int(depth), float(a)
    return tuple(math.comb(K, p) * a ** p * (1.0 - a) ** (K - p) for p in range(K + 1))


def extended_adjacency(graph: GraphKernel) -> SparseOperator:
    """``S_hat [N, N]``: ``S`` on the visible nodes, the out-of-sample rows ``r(x)`` (Eq. 23) for hidden ones.

    Global numbering; hidden columns are zero, so ``S_hat^p[x, V] = r(x) S^{p-1}`` (Eq. 5's out-of-sample row).

    Parameters
    ----------
    graph : GraphKernel
    """
    if not isinstance(graph, GraphKernel):
        raise TypeError(f"graph must be a GraphKernel, got {type(graph).__name__}")
    V = graph.visible
    r, c, v = graph.S.coo()
    rows, cols, vals = [V[r]], [V[c]], [v]
    H = graph.hidden_mask.nonzero().flatten()
    if H.numel():
        hr, hc, hv = graph.rows(H).coo()
        rows.append(H[hr]); cols.append(V[hc]); vals.append(hv)
    N = graph.num_nodes
    return SparseOperator(torch.cat(rows), torch.cat(cols), torch.cat(vals), (N, N))


class GraphFilter(KernelOperator):
    """``P = s(S_hat) = sum_{p=0}^{q} pi_p S_hat^p``: a polynomial transform of the graph, out of sample for hidden nodes.

    Parameters
    ----------
    graph : GraphKernel or SparseOperator
        The STKR base kernel (Eq. 23), turned into :func:`extended_adjacency`; or ``S_hat`` itself.
    coeffs : sequence of float
        ``(pi_0, pi_1, ..., pi_q)`` (index ``p`` is the power; :func:`lazy_coefficients`).

    ``[N, N]`` in global numbering: visible rows ``s(S)`` (Eq. 5-6), hidden row ``x``: ``pi_0`` on the
    diagonal and ``sum_{p>=1} pi_p r(x) S^{p-1}`` on visible columns.
    """

    def __init__(self, graph, coeffs: Sequence[float]):
        S_hat = extended_adjacency(graph) if isinstance(graph, GraphKernel) else graph
        if not isinstance(S_hat, KernelOperator) or S_hat.shape[0] != S_hat.shape[1]:
            raise TypeError("graph must be a GraphKernel or a square KernelOperator S_hat")
        coeffs = tuple(float(c) for c in coeffs)
        if not coeffs or not all(math.isfinite(c) for c in coeffs):
            raise ValueError(f"coeffs must be a non-empty sequence of finite numbers (pi_0, ..., pi_q), got {coeffs}")
        self.S_hat, self.coeffs = S_hat, coeffs

    shape, dtype, device = follows("S_hat")

    def _matmul(self, x: Tensor) -> Tensor:
        return horner(self.coeffs, self.S_hat.matmul, x.to(self.dtype))

    def block(self, rows=None, cols=None) -> DenseOperator:
        return _dense_block(self, rows, cols)

    def to(self, device=None, dtype=None) -> "GraphFilter":
        return GraphFilter(self.S_hat.to(device, dtype), self.coeffs)

    @property
    def T(self) -> "GraphFilter":
        return GraphFilter(self.S_hat.T, self.coeffs)

    def __repr__(self) -> str:
        return f"GraphFilter(N={self.shape[0]}, degree={len(self.coeffs) - 1})"


def _dense_block(op: KernelOperator, rows, cols) -> DenseOperator:
    """``op[rows][:, cols]`` from products with the selected unit columns (``len(cols)`` columns)."""
    E = unit_columns(op, as_index(cols, op.shape[1], op.device))
    return DenseOperator((op @ E).index_select(0, as_index(rows, op.shape[0], op.device)))


def unit_rows(Z: Tensor) -> Tensor:
    """Rows of ``Z`` scaled to unit Euclidean length (zero rows stay zero)."""
    return Z / Z.norm(dim=1, keepdim=True).clamp_min(torch.finfo(Z.dtype).tiny)


def filter_features(P: GraphFilter, X: Tensor, unit: bool = False) -> Tensor:
    """``phi = P X``: features filtered by ``s(S)`` (hidden rows out of sample), optionally unit rows.

    Parameters
    ----------
    P : GraphFilter
    X : Tensor ``[N, d]``
        Features of every node (global numbering; hidden rows used only for their own ``pi_0`` term).
    unit : bool, default False
        Scale each filtered row to unit length (the cosine kernels).
    """
    if X.dim() != 2 or X.shape[0] != P.shape[1]:
        raise ValueError(f"X must be [num_nodes, d] = [{P.shape[1]}, d], got {tuple(X.shape)}")
    Z = P @ X.to(P.dtype)
    return unit_rows(Z) if unit else Z


class FilteredFeatureKernel(KernelOperator):
    """``K(i, j) = k_X(phi_i, phi_j)`` with ``phi = s(S) X``: a feature kernel on graph-filtered features.

    Parameters
    ----------
    P : GraphFilter
        The graph transform ``s(S)`` (with out-of-sample rows for hidden nodes).
    X : Tensor ``[N, d]``
        Node features.
    kernel : str or Kernel, default ``"gaussian"``
        The feature kernel ``k_X`` (:func:`graphstk.operators.kernel_function`).
    sigma : float, optional
        Its width (kernels with a bandwidth).
    unit : bool, default True
        Unit-length filtered rows: ``"linear"`` becomes the cosine kernel and ``"gaussian"``
        the cosine-Gaussian ``exp((cos(phi_i, phi_j) - 1) / sigma^2)``.

    With ``kernel="linear"`` and ``unit=False`` this is :class:`SandwichKernel` ``P X X^T P^T`` in the primal.
    """

    def __init__(self, P: GraphFilter, X: Tensor, kernel: str | Kernel = "gaussian", sigma: float | None = None,
                 unit: bool = True):
        self.P, self.unit = P, bool(unit)
        self.phi = filter_features(P, X, unit=self.unit)
        self.inner = FeatureKernelOperator(self.phi, kernel=kernel, sigma=sigma)

    shape, dtype, device = follows("inner")

    def _matmul(self, x: Tensor) -> Tensor:
        return self.inner @ x

    def block(self, rows=None, cols=None) -> KernelOperator:
        return self.inner.block(rows, cols)

    def diagonal(self) -> Tensor:
        return self.inner.diagonal()

    def to_dense(self) -> Tensor:
        return self.inner.to_dense()

    def to(self, device=None, dtype=None) -> KernelOperator:
        return self.inner.to(device, dtype)

    @property
    def T(self) -> KernelOperator:
        return self.inner.T

    def __repr__(self) -> str:
        return f"FilteredFeatureKernel({self.P!r}, {self.inner.kernel!r}, unit={self.unit})"


class SandwichKernel(KernelOperator):
    """``P K_X P^T``: a feature kernel between two graph transforms ``P = s(S)``.

    Parameters
    ----------
    P : KernelOperator ``[N, N]``
        The graph transform (:class:`GraphFilter`, or any square operator with a ``T``).
    K_X : KernelOperator ``[N, N]``
        The feature kernel over the same nodes (e.g. :class:`FeatureKernelOperator`).

    Positive semi-definite whenever ``K_X`` is; a product costs two filter passes and one ``K_X`` product.
    """

    def __init__(self, P: KernelOperator, K_X: KernelOperator):
        if tuple(P.shape) != tuple(K_X.shape) or P.shape[0] != P.shape[1]:
            raise ValueError(f"P and K_X must be square of one shape, got {tuple(P.shape)} and {tuple(K_X.shape)}")
        self.P, self.K_X = P, K_X

    shape, dtype, device = follows("P")

    def _matmul(self, x: Tensor) -> Tensor:
        return self.P @ (self.K_X @ (self.P.T @ x)).to(self.dtype)

    def block(self, rows=None, cols=None) -> DenseOperator:
        return _dense_block(self, rows, cols)

    def to(self, device=None, dtype=None) -> "SandwichKernel":
        return SandwichKernel(self.P.to(device, dtype), self.K_X.to(device, dtype))

    @property
    def T(self) -> "SandwichKernel":
        return self

    def __repr__(self) -> str:
        return f"SandwichKernel(P={self.P!r}, K_X={self.K_X!r})"


def hadamard_kernel(K_G: SparseOperator, X: Tensor, kernel: str | Kernel = "gaussian",
                    sigma: float | None = None) -> SparseOperator:
    """``K_G o K_X``: the entrywise product of a sparse graph kernel and a feature kernel.

    Parameters
    ----------
    K_G : SparseOperator ``[N, N]``
        A graph kernel with its sparsity (e.g. ``GraphKernel.S``, or ``S`` with self-loops).
    X : Tensor ``[N, d]``
        Features of the same nodes (rows in the numbering of ``K_G``).
    kernel, sigma : the feature kernel (:func:`graphstk.operators.kernel_function`).

    Returns
    -------
    SparseOperator with the pattern of ``K_G``: ``K_G[i, j] k_X(x_i, x_j)``. Positive
    semi-definite when both factors are (Schur product theorem).
    """
    if X.dim() != 2 or X.shape[0] != K_G.shape[1] or K_G.shape[0] != K_G.shape[1]:
        raise ValueError(f"X must be [N, d] with N = {K_G.shape[1]} rows of a square K_G, got {tuple(X.shape)}")
    k = kernel if isinstance(kernel, Kernel) else kernel_function(kernel, **({} if sigma is None else {"sigma": sigma}))
    row, col, val = K_G.coo()
    Xd = X.to(device=K_G.device, dtype=K_G.dtype)
    return SparseOperator(row, col, val * k.paired(Xd[row], Xd[col]).to(K_G.dtype), tuple(K_G.shape))
