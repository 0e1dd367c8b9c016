"""Feature kernels as matrices: the dense Gram matrix (:func:`gram`) and the lazy, row-blocked
:class:`FeatureKernelOperator` (at most a ``block_size x n`` tile per product).

Normalisation (errata, "Separating kernels"): ``K_n(x, y) = K(x, y) / sqrt(K(x, x) K(y, y))`` for
every point, so ``K_n(x, x) = 1``; a row with ``K(x, x) = 0`` is defined as 0.
"""
from __future__ import annotations

import torch
from torch import Tensor

from .bandwidth import kth_neighbor_distance_median, median_distance, median_width
from .base import KernelOperator, as_index, follows
from .graph import inv_sqrt_degree
from .kernels import (  # noqa: F401  (re-exported: graphstk.operators.feature also serves the kernel API)
    BLOCK_ELEMS, KERNELS, SHIFT_INVARIANT, Kernel, as_feature_pair, as_features, check_dense, check_positive,
    _TEMPORARIES, kernel_function, pairwise_distances,
)
from .knn import knn_graph
from .._checks import check_int
from ..memory import tile_rows

__all__ = [
    "KERNELS", "Kernel", "kernel_function", "gram", "FeatureKernelOperator", "as_features",
    "knn_graph", "median_width", "median_distance", "kth_neighbor_distance_median", "pairwise_distances",
]

_MATERIALISE_HINT = ("use products `op @ v` (row blocks of block_size), op.block(rows, cols) for the sub-block "
                     "you need, a low-rank method (approx='nystroem' / n_components=), or subsample the points")


def gram(X, Y=None, kernel: str | Kernel = "gaussian", sigma: float | None = None,
         normalize: bool = False, dtype: torch.dtype | None = None, device=None, **params) -> Tensor:
    """Dense Gram matrix ``K[i, j] = k(X_i, Y_j)`` (``Y = X`` when omitted).

    ``normalize=True`` returns ``K(x,y) / sqrt(K(x,x) K(y,y))`` (unit diagonal). For large
    inputs use :class:`FeatureKernelOperator`, which never forms the full matrix; a matrix that
    does not fit the process's memory ceiling (``graphstk.memory.check_allocation``:
    physical memory, ``ulimit -v``, a cgroup limit or ``GRAPHSTK_MAX_MEMORY``) raises
    :class:`~graphstk.exceptions.MemoryLimitError` before anything is allocated.

    Parameters
    ----------
    X : Tensor or array ``[a, d]``
    Y : Tensor or array ``[b, d]``, optional
    kernel : str or Kernel, default "gaussian"
    sigma : float, optional
        Bandwidth (kernels that have one).
    normalize : bool, default False
    dtype : torch.dtype, optional
    device : torch.device, optional
    **params
        Further kernel parameters (``degree``, ``c``).
    """
    k = kernel_function(kernel, sigma=sigma, **params)
    X, Y = as_feature_pair(X, Y, dtype, device)
    k.check_dense(X, Y, "the Gram matrix")
    K = k.raw(X, Y)
    if normalize:
        K = _scale(K, inv_sqrt_degree(k.raw_paired(X, X)), inv_sqrt_degree(k.raw_paired(Y, Y)))
    return K


def _scale(K: Tensor, rows: Tensor, cols: Tensor) -> Tensor:
    """``diag(rows) K diag(cols)``, in place unless autograd needs ``K``."""
    if K.requires_grad:
        return rows.unsqueeze(1) * K * cols.unsqueeze(0)
    return K.mul_(rows.unsqueeze(1)).mul_(cols.unsqueeze(0))


class FeatureKernelOperator(KernelOperator):
    """The kernel matrix ``K[i, j] = k(X_i, Y_j)`` as a lazy :class:`~graphstk.operators.KernelOperator`.

    Parameters
    ----------
    X : ``[n_rows, d]`` tensor or array
        Row points (e.g. test points for out-of-sample rows).
    Y : ``[n_cols, d]``, optional
        Column points (``X`` when omitted: the square training Gram matrix).
    kernel : str or Kernel
        See :func:`kernel_function`; ``sigma``/``degree``/``c`` are forwarded to it.
    normalize : bool
        Use ``K(x,y) / sqrt(K(x,x) K(y,y))`` for rows and columns alike (test points
        included), so the square operator has a unit diagonal.
    block_size : int, optional
        Rows evaluated at a time in products and materialisation. Default: as many rows
        as fit into ~4M kernel entries (``2**22 // n_cols``), so a product with an
        ``[n_cols, C]`` block holds a ``block_size x n_cols`` tile, never ``n x n``. Tiles
        shrink while the free memory is short (:func:`graphstk.memory.tile_rows`).
    dtype, device : optional
        Cast/move the point arrays (floating inputs keep their dtype otherwise).

    The operator is differentiable with respect to the point arrays (plain torch ops).
    ``block`` returns another :class:`FeatureKernelOperator` on the indexed sub-arrays,
    ``T`` swaps rows and columns (all kernels here are symmetric), ``diagonal`` evaluates
    ``k(X_i, Y_i)`` exactly in ``O(n d)``.
    """

    def __init__(self, X, Y=None, kernel: str | Kernel = "gaussian", sigma: float | None = None, *,
                 normalize: bool = False, block_size: int | None = None,
                 dtype: torch.dtype | None = None, device=None, **params):
        k = kernel_function(kernel, sigma=sigma, **params)
        Xt, Yt = as_feature_pair(X, Y, dtype, device)
        self._init(Xt, Yt, k, bool(normalize), block_size)

    def _init(self, X, Y, kernel, normalize, block_size, dr=None, dc=None):
        self.X, self.Y, self.kernel, self.normalize = X, Y, kernel, normalize
        self._block_size = check_int("block_size", block_size, allow_none=True)
        if normalize:
            self._isr = inv_sqrt_degree(kernel.raw_paired(X, X)) if dr is None else dr
            self._isc = inv_sqrt_degree(kernel.raw_paired(Y, Y)) if dc is None else dc
        else:
            self._isr = self._isc = None

    @classmethod
    def _make(cls, X, Y, kernel, normalize, block_size, dr=None, dc=None) -> "FeatureKernelOperator":
        op = cls.__new__(cls)
        op._init(X, Y, kernel, normalize, block_size, dr, dc)
        return op

    # -- interface -------------------------------------------------------------
    shape = property(lambda self: (int(self.X.shape[0]), int(self.Y.shape[0])))
    dtype, device = follows("X", "dtype device")

    @property
    def block_size(self) -> int:
        """Rows of the kernel evaluated at once in a product (the ``block_size`` given, else as
        many as keep one ``[rows, n_cols]`` tile within the default tile size)."""
        if self._block_size is not None:
            return self._block_size
        return max(1, BLOCK_ELEMS // max(1, self.shape[1]))

    def _blocks(self):
        """Row ranges of the tiles: ``block_size`` rows, fewer while the free memory is short
        (:func:`graphstk.memory.tile_rows`; a product's result does not depend on it). Refused only
        when one row of the tile cannot fit the process's memory ceiling."""
        n = self.shape[0]
        if n == 0:
            return
        grad = self.X.requires_grad or self.Y.requires_grad
        copies = _TEMPORARIES.get(self.kernel.name, 2) + (2 if grad else 0)
        bs = tile_rows(min(self.block_size, n), float(self.shape[1]) * self.X.element_size() * copies,
                       what=f"one row of a kernel tile ({self.shape[1]} entries, {copies} copies)",
                       hint="subsample the points", device=self.device)
        for s in range(0, n, bs):
            yield s, min(n, s + bs)

    def _matmul(self, x: Tensor) -> Tensor:
        x = x.to(self.dtype)
        if self.normalize:
            x = self._isc.unsqueeze(1) * x
        if self.shape[0] == 0:
            out = x.new_zeros(0, x.shape[1])
        elif torch.is_grad_enabled() and (x.requires_grad or self.X.requires_grad or self.Y.requires_grad):
            out = torch.cat([self.kernel.raw(self.X[s:e], self.Y) @ x for s, e in self._blocks()])
        else:
            # one output buffer filled block by block: a list of small per-block results would sit
            # between the freed tiles and fragment the heap (a tile's worth of memory lost per block)
            out = x.new_empty(self.shape[0], x.shape[1])
            for s, e in self._blocks():
                torch.matmul(self.kernel.raw(self.X[s:e], self.Y), x, out=out[s:e])
        if self.normalize:
            out = self._isr.unsqueeze(1) * out
        return out

    def to_dense(self) -> Tensor:
        """The dense ``[n_rows, n_cols]`` matrix, filled one row block at a time (one output buffer
        and one block); refused before allocation (:class:`~graphstk.exceptions.MemoryLimitError`)
        when it does not fit."""
        check_dense(self.shape[0], self.shape[1], self.dtype, self.device,
                    "the dense kernel matrix of a FeatureKernelOperator", _MATERIALISE_HINT)
        if self.shape[0] == 0:
            return self.X.new_zeros(self.shape)
        if self.X.requires_grad or self.Y.requires_grad:      # keep the autograd graph: no in-place fill
            K = torch.cat([self.kernel.raw(self.X[s:e], self.Y) for s, e in self._blocks()])
        else:
            K = self.X.new_empty(self.shape)
            for s, e in self._blocks():
                K[s:e] = self.kernel.raw(self.X[s:e], self.Y)
        if self.normalize:
            K = _scale(K, self._isr, self._isc)
        return K

    def diagonal(self) -> Tensor:
        n = min(self.shape)
        d = self.kernel.raw_paired(self.X[:n], self.Y[:n])
        if self.normalize:
            d = self._isr[:n] * d * self._isc[:n]
        return d

    def block(self, rows=None, cols=None) -> "FeatureKernelOperator":
        r = None if rows is None else as_index(rows, self.shape[0], self.device)
        c = None if cols is None else as_index(cols, self.shape[1], self.device)
        X = self.X if r is None else self.X.index_select(0, r)
        Y = self.Y if c is None else self.Y.index_select(0, c)
        dr = dc = None
        if self.normalize:
            dr = self._isr if r is None else self._isr.index_select(0, r)
            dc = self._isc if c is None else self._isc.index_select(0, c)
        return FeatureKernelOperator._make(X, Y, self.kernel, self.normalize, self._block_size, dr, dc)

    @property
    def T(self) -> "FeatureKernelOperator":
        return FeatureKernelOperator._make(self.Y, self.X, self.kernel, self.normalize, self._block_size,
                                           self._isc, self._isr)

    def to(self, device=None, dtype=None) -> "FeatureKernelOperator":
        mv = (lambda t: None if t is None else t.to(device=device, dtype=dtype))
        return FeatureKernelOperator._make(mv(self.X), mv(self.Y), self.kernel, self.normalize,
                                           self._block_size, mv(self._isr), mv(self._isc))

    def __repr__(self) -> str:
        return (f"FeatureKernelOperator(shape={self.shape}, kernel={self.kernel!r}, normalize={self.normalize}, "
                f"dtype={self.dtype}, device={self.device})")
