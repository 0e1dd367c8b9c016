"""The kernel-operator interface: the one way every method talks to a kernel.

A :class:`KernelOperator` is a (possibly implicit) matrix ``K[rows, cols]`` with

* ``shape``, ``dtype``, ``device``;
* products with a block of vectors, ``op @ X`` for ``X`` of shape ``[n_cols, C]``
  (or ``[n_cols]``), the multi-right-hand-side product every solver is built on;
* ``op.T`` (the transposed operator) for products from the other side;
* ``op.block(rows, cols)``: a sub-block by row/column index, itself an operator;
* ``op.diagonal()`` and ``op.to_dense()`` (the latter for small problems and tests);
* ``op.to(device=..., dtype=...)``.

It is deliberately smaller than :class:`scipy.sparse.linalg.LinearOperator` or
GPyTorch's ``LinearOperator``: no operator algebra beyond scaling, no lazy
inverses. Solvers take plain callables ``X -> A X`` (see :mod:`graphstk.spectral.solvers`),
so an operator never needs to know which system it is part of.
"""
from __future__ import annotations

import abc
from typing import Sequence

import warnings

import torch
from torch import Tensor

from .._index import IndexLike, as_index  # noqa: F401  (the one index helper: ids or a boolean mask)

# torch flags every CSR tensor as "beta"; the operations used here are stable.
warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta state")


class KernelOperator(abc.ABC):
    """Abstract kernel operator ``K[rows, cols]`` (see module docstring)."""

    # -- what every operator has to provide ---------------------------------
    @property
    @abc.abstractmethod
    def shape(self) -> tuple[int, int]: ...

    @property
    @abc.abstractmethod
    def dtype(self) -> torch.dtype: ...

    @property
    @abc.abstractmethod
    def device(self) -> torch.device: ...

    @abc.abstractmethod
    def _matmul(self, x: Tensor) -> Tensor:
        """Product with a 2-D block ``x`` of shape ``[n_cols, C]`` (already checked)."""

    @abc.abstractmethod
    def block(self, rows: IndexLike = None, cols: IndexLike = None) -> "KernelOperator":
        """Sub-block ``K[rows][:, cols]`` as an operator (``None`` keeps all)."""

    @abc.abstractmethod
    def to_dense(self) -> Tensor:
        """Materialise as a dense ``[n_rows, n_cols]`` tensor (small problems/tests)."""

    @abc.abstractmethod
    def to(self, device=None, dtype=None) -> "KernelOperator": ...

    @property
    @abc.abstractmethod
    def T(self) -> "KernelOperator":
        """The transposed operator."""

    @abc.abstractmethod
    def diagonal(self) -> Tensor:
        """Diagonal ``K[i, i]`` for ``i < min(shape)``."""

    # -- shared behaviour ----------------------------------------------------
    def matmul(self, x: Tensor) -> Tensor:
        """``K @ x`` for ``x`` of shape ``[n_cols]`` or ``[n_cols, C]``."""
        if not isinstance(x, Tensor):
            raise TypeError(f"expected a torch.Tensor, got {type(x).__name__}")
        if x.dim() not in (1, 2) or x.shape[0] != self.shape[1]:
            raise ValueError(
                f"cannot multiply operator of shape {tuple(self.shape)} with tensor of shape {tuple(x.shape)}"
            )
        vec = x.dim() == 1
        out = self._matmul(x.unsqueeze(1) if vec else x)
        return out.squeeze(1) if vec else out

    def __matmul__(self, x: Tensor) -> Tensor:
        return self.matmul(x)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(shape={tuple(self.shape)}, dtype={self.dtype}, device={self.device})"


class DenseOperator(KernelOperator):
    """A kernel operator backed by a dense tensor (small problems, Gram matrices, tests).

    Parameters
    ----------
    matrix : Tensor ``[n_rows, n_cols]``
        The kernel matrix (kept, not copied).
    """

    def __init__(self, matrix: Tensor):
        if not isinstance(matrix, Tensor) or matrix.dim() != 2:
            raise ValueError("DenseOperator needs a 2-D torch.Tensor")
        self.matrix = matrix

    shape = property(lambda self: tuple(self.matrix.shape))
    dtype = property(lambda self: self.matrix.dtype)
    device = property(lambda self: self.matrix.device)

    def _matmul(self, x: Tensor) -> Tensor:
        return self.matrix @ x.to(self.matrix.dtype)

    def block(self, rows=None, cols=None) -> "DenseOperator":
        r = as_index(rows, self.shape[0], self.device)
        c = as_index(cols, self.shape[1], self.device)
        return DenseOperator(self.matrix.index_select(0, r).index_select(1, c))

    def diagonal(self) -> Tensor:
        return torch.diagonal(self.matrix).clone()

    def to_dense(self) -> Tensor:
        return self.matrix

    def to(self, device=None, dtype=None) -> "DenseOperator":
        return DenseOperator(self.matrix.to(device=device, dtype=dtype))

    @property
    def T(self) -> "DenseOperator":
        return DenseOperator(self.matrix.T)


CACHE_BLOCK_BYTES = 4 * 2 ** 20   # bytes of one column block of the right-hand side (see column_block_width)
WIDE_BLOCK_BYTES = 12 * 2 ** 20   # right-hand sides up to this size go through one product


def column_block_width(x: Tensor) -> int:
    """Columns per product for ``S @ x`` on CPU: all of them, or blocks of ``CACHE_BLOCK_BYTES``.

    A sparse product gathers one row of ``x`` per nonzero; when ``x`` is wider than the cache
    those gathers go to memory. Multiplying column blocks of about 4 MiB, copied contiguous,
    was measured faster on this project's 2-core machine (float64, 2 threads, ms per product,
    one product vs blocks): Computers (13.8k nodes, 492k nonzeros) 960 columns 237 -> 119,
    480 columns 111 -> 60, 200 columns 37 -> 17, 100 columns 8.4 -> 9.3 (not split: under
    ``WIDE_BLOCK_BYTES``); DBLP (17.7k, 106k) 960 columns 106 -> 84, 100 columns 11 -> 5;
    Physics (34.5k, 496k) 960 columns 290 -> 184; Cora (2.7k) 960 columns 15 -> 3.5.
    On accelerators ``x`` goes through whole, and so it does where even 8 columns exceed
    ``CACHE_BLOCK_BYTES`` (from 65k nodes in float64): the gathers then miss the cache anyway and
    every block would read the whole matrix again (``bench/scale.py``: 10^8 nonzeros, 1.6 GB).
    """
    n_rows, width = x.shape
    if x.device.type != "cpu" or n_rows * width * x.element_size() <= WIDE_BLOCK_BYTES:
        return width
    block = CACHE_BLOCK_BYTES // max(n_rows * x.element_size(), 1)
    return width if block < 8 else block


class SparseOperator(KernelOperator):
    """A kernel operator backed by a sparse matrix in CSR form.

    Built from COO triplets (``row``, ``col``, ``value``); duplicates are summed.
    The product uses ``torch.sparse.mm`` on a CSR tensor, which works on CPU and
    CUDA and takes a whole ``[n_cols, C]`` block in one call.

    Parameters
    ----------
    row, col : LongTensor ``[nnz]``
        Row and column ids of the entries.
    value : Tensor ``[nnz]``
        Their values (the operator's dtype).
    shape : tuple ``(n_rows, n_cols)``
    """

    def __init__(self, row: Tensor, col: Tensor, value: Tensor, shape: tuple[int, int]):
        n_rows, n_cols = int(shape[0]), int(shape[1])
        if row.shape != col.shape or row.shape != value.shape or row.dim() != 1:
            raise ValueError("row, col and value must be 1-D tensors of equal length")
        coo = torch.sparse_coo_tensor(
            torch.stack([row.long(), col.long()]), value, (n_rows, n_cols), check_invariants=False
        ).coalesce()
        self._coo = coo
        self._csr = coo.to_sparse_csr()
        self._shape = (n_rows, n_cols)

    @classmethod
    def from_dense(cls, matrix: Tensor) -> "SparseOperator":
        idx = matrix.nonzero().T
        return cls(idx[0], idx[1], matrix[idx[0], idx[1]], tuple(matrix.shape))

    @classmethod
    def from_torch(cls, sparse: Tensor) -> "SparseOperator":
        coo = sparse.to_sparse_coo().coalesce() if sparse.layout != torch.sparse_coo else sparse.coalesce()
        i = coo.indices()
        return cls(i[0], i[1], coo.values(), tuple(coo.shape))

    shape = property(lambda self: self._shape)
    dtype = property(lambda self: self._coo.dtype)
    device = property(lambda self: self._coo.device)

    @property
    def nnz(self) -> int:
        return int(self._coo._nnz())

    @property
    def csr(self) -> Tensor:
        """The underlying ``torch.sparse_csr`` tensor (for hand-written loops)."""
        return self._csr

    def coo(self) -> tuple[Tensor, Tensor, Tensor]:
        """``(row, col, value)`` triplets (coalesced, row-major order)."""
        i = self._coo.indices()
        return i[0], i[1], self._coo.values()

    def _matmul(self, x: Tensor) -> Tensor:
        x = x.to(self.dtype)
        width = column_block_width(x)
        if width >= x.shape[1]:
            return torch.sparse.mm(self._csr, x)
        out = torch.empty(self._shape[0], x.shape[1], dtype=x.dtype, device=x.device)
        for j in range(0, x.shape[1], width):
            out[:, j:j + width] = torch.sparse.mm(self._csr, x[:, j:j + width].contiguous())
        return out

    def block(self, rows=None, cols=None) -> "SparseOperator":
        row, col, val = self.coo()
        n_rows, n_cols = self.shape
        keep = torch.ones_like(row, dtype=torch.bool)
        new_rows, new_cols = n_rows, n_cols
        row_map = col_map = None
        if rows is not None:
            r = as_index(rows, n_rows, self.device)
            row_map, new_rows = _position_map(r, n_rows), r.numel()
            if not _is_injective(r):
                return SparseOperator.from_dense(self.to_dense().index_select(0, r)).block(None, cols)
        if cols is not None:
            c = as_index(cols, n_cols, self.device)
            col_map, new_cols = _position_map(c, n_cols), c.numel()
            if not _is_injective(c):
                return SparseOperator.from_dense(self.block(rows, None).to_dense().index_select(1, c))
        if row_map is not None:
            keep &= row_map[row] >= 0
        if col_map is not None:
            keep &= col_map[col] >= 0
        row, col, val = row[keep], col[keep], val[keep]
        if row_map is not None:
            row = row_map[row]
        if col_map is not None:
            col = col_map[col]
        return SparseOperator(row, col, val, (new_rows, new_cols))

    def diagonal(self) -> Tensor:
        row, col, val = self.coo()
        out = torch.zeros(min(self.shape), dtype=self.dtype, device=self.device)
        on = row == col
        return out.index_add_(0, row[on], val[on])

    def to_dense(self) -> Tensor:
        return self._coo.to_dense()

    def to(self, device=None, dtype=None) -> "SparseOperator":
        row, col, val = self.coo()
        return SparseOperator(row.to(device), col.to(device), val.to(device=device, dtype=dtype), self.shape)

    @property
    def T(self) -> "SparseOperator":
        row, col, val = self.coo()
        return SparseOperator(col, row, val, (self.shape[1], self.shape[0]))

    def scale(self, factor: float) -> "SparseOperator":
        """``factor * K`` as a new operator."""
        row, col, val = self.coo()
        return SparseOperator(row, col, val * factor, self.shape)


def _position_map(idx: Tensor, size: int) -> Tensor:
    """``map[i] = position of i in idx`` (``-1`` when absent)."""
    m = torch.full((size,), -1, dtype=torch.long, device=idx.device)
    m[idx] = torch.arange(idx.numel(), device=idx.device)
    return m


def _is_injective(idx: Tensor) -> bool:
    return idx.numel() == torch.unique(idx).numel()
