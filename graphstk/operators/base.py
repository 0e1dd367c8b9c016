"""The kernel-operator interface: the one way every method talks to a kernel.

A :class:`KernelOperator` is a (possibly implicit) matrix ``K[rows, cols]``; a subclass supplies
``shape``, ``dtype``, ``device`` and ``_matmul`` (the product with a block ``[n_cols, C]``), and gets
correct defaults for the rest, including the engines' hooks ``normalized_gram`` and
``normalized_rows`` (Eq. 5). The members and their defaults are tabled in docs/operators.md.
"""
from __future__ import annotations

import abc
import math
import warnings
from typing import Any, Callable

import torch
from torch import Tensor

from .._checks import check_positive
from .._index import IndexLike, as_index  # noqa: F401  (the one index helper: ids or a boolean mask)
from .._spaces import LOCAL, VectorSpace

DENSE_EIG_MAX = 500    # spectral_bound: exact eigenvalues of a materialised operator up to this size
UNIT_BLOCK = 256       # columns of the identity multiplied at once by the to_dense / diagonal defaults


class KernelOperator(abc.ABC):
    """A kernel operator ``K[rows, cols]`` on any torch device: subclasses implement ``shape``, ``dtype``,
    ``device`` and ``_matmul``; the rest has correct defaults built on ``_matmul``."""

    # -- what every operator has to provide ---------------------------------
    @property
    @abc.abstractmethod
    def shape(self) -> tuple[int, int]:
        """``(n_rows, n_cols)`` of the matrix ``K``."""

    @property
    @abc.abstractmethod
    def dtype(self) -> torch.dtype:
        """The dtype of the products (and of ``to_dense``)."""

    @property
    @abc.abstractmethod
    def device(self) -> torch.device:
        """The torch device the products run on and return their results on."""

    @abc.abstractmethod
    def _matmul(self, x: Tensor) -> Tensor:
        """Product with a 2-D block ``x`` of shape ``[n_cols, C]`` (already checked)."""

    # -- defaults, overridden for speed ---------------------------------------
    def _rmatmul(self, x: Tensor) -> Tensor:
        """``K^T @ x`` for ``x [n_rows, C]``; default: through the dense matrix."""
        return self.to_dense().T @ x.to(self.dtype)

    def to_dense(self) -> Tensor:
        """Materialise as a dense ``[n_rows, n_cols]`` tensor (default: products with identity blocks)."""
        n_rows, n_cols = self.shape
        out = torch.empty(n_rows, n_cols, dtype=self.dtype, device=self.device)
        for j in range(0, n_cols, UNIT_BLOCK):
            out[:, j:j + UNIT_BLOCK] = self._matmul(unit_columns(self, range(j, min(j + UNIT_BLOCK, n_cols))))
        return out

    def diagonal(self) -> Tensor:
        """Diagonal ``K[i, i]`` for ``i < min(shape)``. Default: unit-vector blocks (``O(n)`` products)."""
        n = min(self.shape)
        out = torch.empty(n, dtype=self.dtype, device=self.device)
        for j in range(0, n, UNIT_BLOCK):
            w = min(UNIT_BLOCK, n - j)
            out[j:j + w] = self._matmul(unit_columns(self, range(j, j + w))).diagonal(-j)
        return out

    def block(self, rows: IndexLike = None, cols: IndexLike = None) -> "KernelOperator":
        """Sub-block ``K[rows][:, cols]`` as an operator (``None`` keeps all; ids or boolean masks)."""
        if rows is None and cols is None:
            return self
        return BlockOperator(self, rows, cols)

    @property
    def T(self) -> "KernelOperator":
        """The transposed operator (products through ``_rmatmul``)."""
        return TransposedOperator(self)

    def to(self, device=None, dtype=None) -> "KernelOperator":
        """A copy on ``device`` in ``dtype``; default: a :class:`~graphstk.operators.DenseOperator`."""
        return DenseOperator(self.to_dense().to(device=device, dtype=dtype))

    def scale(self, factor: float) -> "KernelOperator":
        """``factor * K`` as an operator (lazy by default)."""
        return ScaledOperator(self, factor)

    def spectral_bound(self) -> float:
        """An upper bound on ``max |lambda(K)|`` of a square symmetric operator: exact up to
        ``DENSE_EIG_MAX`` rows, else the largest ``|Ritz value| + residual`` of 64 Lanczos steps."""
        n, m = self.shape
        if n != m:
            raise ValueError(f"spectral_bound needs a square operator, got shape {self.shape}")
        if n == 0:
            return 0.0
        if n <= DENSE_EIG_MAX:
            return float(torch.linalg.eigvalsh(_symmetrised(self.to_dense()).double()).abs().max())
        return _lanczos_bound(self, steps=min(64, n))

    def normalized_gram(self, visible: Tensor) -> tuple["KernelOperator", float]:
        """``(K[V, V] / |V|, its spectral bound)``: the ``G_K / (n+m)`` that STKR's engines iterate
        with (Eq. 5), over the visible points ``V`` (LongTensor of ids)."""
        S = self.block(visible, visible).scale(1.0 / max(int(visible.numel()), 1))
        return S, S.spectral_bound()

    def normalized_rows(self, rows: Tensor, visible: Tensor) -> "KernelOperator":
        """``K[rows, V] / |V|``: the out-of-sample rows ``v_K(x) / (n+m)`` of Eq. 5 for points ``rows``."""
        return self.block(rows, visible).scale(1.0 / max(int(visible.numel()), 1))

    #: where the solvers reduce over rows of the blocks it multiplies (a partitioned operator's spans its processes)
    vector_space: VectorSpace = LOCAL

    #: positive semidefinite *by construction* (``False``: not known to be; the engines then assume a
    #: spectrum in ``[-lambda, lambda]``); lets the engines take CG and the stable Richardson step
    positive_semidefinite: bool = False

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


def unit_columns(op: KernelOperator, ids) -> Tensor:
    """The columns ``ids`` of the identity matching ``op``'s inputs: ``[n_cols, len(ids)]``, its dtype and device."""
    ids = torch.as_tensor(ids, dtype=torch.long, device=op.device)
    e = torch.zeros(op.shape[1], ids.numel(), dtype=op.dtype, device=op.device)
    e[ids, torch.arange(ids.numel(), device=op.device)] = 1
    return e


def _symmetrised(a: Tensor) -> Tensor:
    return (a + a.T) / 2


def _lanczos_bound(op: KernelOperator, steps: int) -> float:
    """Largest ``|Ritz value| + residual`` of ``steps`` Lanczos steps with full reorthogonalisation."""
    n = op.shape[0]
    gen = torch.Generator().manual_seed(0)
    q = torch.randn(n, 1, generator=gen, dtype=torch.float64).to(device=op.device, dtype=op.dtype)
    q = q / torch.linalg.norm(q)
    Q = [q]
    alphas, betas = [], []
    for k in range(steps):
        w = op @ Q[-1]
        alphas.append(float((Q[-1] * w).sum()))
        basis = torch.cat(Q, dim=1)
        w = w - basis @ (basis.T @ w)
        w = w - basis @ (basis.T @ w)
        b = float(torch.linalg.norm(w))
        betas.append(b)
        if b <= 1e-12 * max(1.0, abs(alphas[-1])) or k == steps - 1:
            break
        Q.append(w / b)
    m = len(alphas)
    Tm = torch.diag(torch.tensor(alphas, dtype=torch.float64))
    if m > 1:
        off = torch.tensor(betas[:m - 1], dtype=torch.float64)
        Tm += torch.diag(off, 1) + torch.diag(off, -1)
    theta, V = torch.linalg.eigh(Tm)
    resid = abs(betas[m - 1]) * V[-1].abs()
    return float((theta.abs() + resid).max())


def follows(attr: str, names: str = "shape dtype device") -> tuple[property, ...]:
    """Properties ``names`` of an operator read from its attribute ``attr`` (``shape`` as a tuple)."""
    def read(name: str) -> property:
        if name == "shape":
            return property(lambda self: tuple(getattr(self, attr).shape))
        return property(lambda self: getattr(getattr(self, attr), name))
    return tuple(read(name) for name in names.split())


class BlockOperator(KernelOperator):
    """``K[rows][:, cols]`` of any operator, through products of the whole operator (the default of
    :meth:`KernelOperator.block`)."""

    def __init__(self, parent: KernelOperator, rows: IndexLike = None, cols: IndexLike = None):
        self.parent = parent
        self.rows = None if rows is None else as_index(rows, parent.shape[0], parent.device, name="rows")
        self.cols = None if cols is None else as_index(cols, parent.shape[1], parent.device, name="cols")

    shape = property(lambda self: (self.parent.shape[0] if self.rows is None else int(self.rows.numel()),
                                   self.parent.shape[1] if self.cols is None else int(self.cols.numel())))
    dtype, device = follows("parent", "dtype device")

    def _matmul(self, x: Tensor) -> Tensor:
        if self.cols is not None:
            full = torch.zeros(self.parent.shape[1], x.shape[1], dtype=self.dtype, device=x.device)
            x = full.index_add_(0, self.cols, x.to(self.dtype))
        out = self.parent @ x
        return out if self.rows is None else out.index_select(0, self.rows)

    def _rmatmul(self, x: Tensor) -> Tensor:
        if self.rows is not None:
            full = torch.zeros(self.parent.shape[0], x.shape[1], dtype=self.dtype, device=x.device)
            x = full.index_add_(0, self.rows, x.to(self.dtype))
        out = self.parent.T @ x
        return out if self.cols is None else out.index_select(0, self.cols)


class TransposedOperator(KernelOperator):
    """``K^T`` of any operator (the default of :attr:`KernelOperator.T`)."""

    def __init__(self, parent: KernelOperator):
        self.parent = parent

    shape = property(lambda self: (self.parent.shape[1], self.parent.shape[0]))
    dtype, device = follows("parent", "dtype device")

    def _matmul(self, x: Tensor) -> Tensor:
        return self.parent._rmatmul(x)

    def _rmatmul(self, x: Tensor) -> Tensor:
        return self.parent._matmul(x)

    @property
    def T(self) -> KernelOperator:
        return self.parent


class ScaledOperator(KernelOperator):
    """``a K`` of any operator (the default of :meth:`KernelOperator.scale`)."""

    def __init__(self, parent: KernelOperator, factor: float):
        if not math.isfinite(float(factor)):
            raise ValueError(f"scale factor must be finite, got {factor!r}")
        self.parent, self.factor = parent, float(factor)

    shape, dtype, device = follows("parent")

    def _matmul(self, x: Tensor) -> Tensor:
        return (self.parent @ x).mul_(self.factor)

    def _rmatmul(self, x: Tensor) -> Tensor:
        return (self.parent.T @ x).mul_(self.factor)

    def block(self, rows=None, cols=None) -> KernelOperator:
        return self.parent.block(rows, cols).scale(self.factor)

    def diagonal(self) -> Tensor:
        return self.parent.diagonal() * self.factor

    def to_dense(self) -> Tensor:
        return self.parent.to_dense() * self.factor

    def to(self, device=None, dtype=None) -> KernelOperator:
        return self.parent.to(device, dtype).scale(self.factor)

    def spectral_bound(self) -> float:
        return abs(self.factor) * self.parent.spectral_bound()

    def scale(self, factor: float) -> KernelOperator:
        return self.parent.scale(self.factor * float(factor))


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

    shape, dtype, device = follows("matrix")

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

    def _rmatmul(self, x: Tensor) -> Tensor:
        return self.matrix.T @ x.to(self.matrix.dtype)

    def spectral_bound(self) -> float:
        """Exact up to ``DENSE_EIG_MAX`` rows; above, Gershgorin's bound ``max_i sum_j |K_ij|``."""
        n, m = self.shape
        if n != m:
            raise ValueError(f"spectral_bound needs a square operator, got shape {self.shape}")
        if n <= DENSE_EIG_MAX:
            return super().spectral_bound()
        return float(self.matrix.abs().sum(dim=1).max())

    @property
    def T(self) -> "DenseOperator":
        return DenseOperator(self.matrix.T)


class SpectralKernelOperator(KernelOperator):
    """``K = U diag(values) U^T`` (``U [N, r]`` with orthonormal columns; ``values [r]``, any reals).

    The best rank-``r`` approximation from the top ``r`` eigenpairs (exact for all of them); methods
    that need a decomposition of ``K`` reuse ``eigenpairs()``.
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
    dtype, device = follows("U", "dtype device")

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
        return SpectralKernelOperator(self.U.to(device=device, dtype=dtype), self.values.to(device=device, dtype=dtype))

    @property
    def T(self) -> "SpectralKernelOperator":
        return self

    def __repr__(self) -> str:
        return f"SpectralKernelOperator(shape={self.shape}, rank={self.values.numel()})"


CACHE_BLOCK_BYTES = 4 * 2 ** 20   # bytes of one column block of the right-hand side (see column_block_width)
WIDE_BLOCK_BYTES = 12 * 2 ** 20   # right-hand sides up to this size go through one product


def column_block_width(x: Tensor) -> int:
    """Columns per product for ``S @ x``: all of them, or on the CPU, for ``x`` over ``WIDE_BLOCK_BYTES``,
    blocks of ``CACHE_BLOCK_BYTES`` (unless under 8 columns); measurements in docs/benchmarks.md."""
    n_rows, width = x.shape
    if x.device.type != "cpu" or n_rows * width * x.element_size() <= WIDE_BLOCK_BYTES:
        return width
    block = CACHE_BLOCK_BYTES // max(n_rows * x.element_size(), 1)
    return width if block < 8 else block


def blockwise_columns(column_map: Callable[[Tensor], Any], x: Tensor) -> Any:
    """``column_map(x)`` for a map that acts on each column of ``x`` alone (a sparse product; a graph filter: its
    products and the sums of their columns), computed a block of :func:`column_block_width` columns at a time. A
    block goes through every step of the map while it stays in the cache, so a filter of many steps copies its
    columns in and out once, not at every product. ``column_map`` returns a tensor ``[rows, width]`` or a list of
    ``(key, tensor)`` pairs (a filter read at several depths); the blocks are put together in the same form. Each
    column is computed as in one call, so the numbers are the same (``tests/operators/test_base.py``)."""
    width = column_block_width(x)
    if width >= x.shape[1]:
        return column_map(x)
    out = None
    for j in range(0, x.shape[1], width):
        part = column_map(x[:, j:j + width].contiguous())
        pairs = part if isinstance(part, list) else [(None, part)]
        if out is None:
            out = [(key, torch.empty(t.shape[0], x.shape[1], dtype=t.dtype, device=t.device)) for key, t in pairs]
        for (_, o), (_, t) in zip(out, pairs):
            o[:, j:j + width] = t
    return out if isinstance(part, list) else out[0][1]


def csr_from_triplets(row: Tensor, col: Tensor, value: Tensor, shape: tuple[int, int]) -> Tensor:
    """The ``torch.sparse_csr`` matrix of the triplets ``(row, col, value)``, duplicates summed, columns
    sorted within rows, by one sort of ``row * n_cols + col`` (no COO copy). Differentiable in ``value``."""
    n_rows, n_cols = int(shape[0]), int(shape[1])
    key, order = torch.sort(row.long() * n_cols + col.long())
    val = value[order]
    del order
    if key.numel() > 1 and bool((key[1:] == key[:-1]).any()):
        key, inv = torch.unique_consecutive(key, return_inverse=True)
        val = torch.zeros(key.numel(), dtype=val.dtype, device=val.device).index_add(0, inv, val)
        del inv
    crow = torch.zeros(n_rows + 1, dtype=torch.long, device=key.device)
    torch.cumsum(torch.bincount(torch.div(key, n_cols, rounding_mode="floor"), minlength=n_rows), 0, out=crow[1:])
    with warnings.catch_warnings():  # torch flags every CSR tensor as "beta"; the products used here are stable
        warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta state")
        return torch.sparse_csr_tensor(crow, key.remainder_(n_cols), val, (n_rows, n_cols), check_invariants=False)


class SparseOperator(KernelOperator):
    """A kernel operator backed by a sparse matrix in CSR form.

    Built from COO triplets, duplicates summed; products by ``torch.sparse.mm`` (CPU and CUDA).

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
        self._csr = csr_from_triplets(row, col, value, (n_rows, n_cols))
        self._shape = (n_rows, n_cols)

    @classmethod
    def from_dense(cls, matrix: Tensor) -> "SparseOperator":
        """The nonzero entries of a dense ``[n_rows, n_cols]`` tensor as a :class:`SparseOperator`."""
        idx = matrix.nonzero().T
        return cls(idx[0], idx[1], matrix[idx[0], idx[1]], tuple(matrix.shape))

    @classmethod
    def from_torch(cls, sparse: Tensor) -> "SparseOperator":
        """A torch sparse tensor (any layout) as a :class:`SparseOperator`; duplicates are summed."""
        coo = sparse.to_sparse_coo().coalesce() if sparse.layout != torch.sparse_coo else sparse.coalesce()
        i = coo.indices()
        return cls(i[0], i[1], coo.values(), tuple(coo.shape))

    shape = property(lambda self: self._shape)
    dtype, device = follows("_csr", "dtype device")

    @property
    def nnz(self) -> int:
        """The number of stored entries."""
        return int(self._csr._nnz())

    @property
    def csr(self) -> Tensor:
        """The underlying ``torch.sparse_csr`` tensor (for hand-written loops)."""
        return self._csr

    def coo(self) -> tuple[Tensor, Tensor, Tensor]:
        """``(row, col, value)`` triplets (coalesced, row-major; ``col`` and ``value`` are the CSR's own)."""
        crow = self._csr.crow_indices()
        rows = torch.arange(self._shape[0], device=crow.device)
        return (torch.repeat_interleave(rows, crow.diff(), output_size=self.nnz),
                self._csr.col_indices(), self._csr.values())

    def _matmul(self, x: Tensor) -> Tensor:
        return blockwise_columns(lambda b: torch.sparse.mm(self._csr, b), x.to(self.dtype))

    def block(self, rows=None, cols=None) -> "SparseOperator":
        row, col, val = self.coo()
        n_rows, n_cols = self.shape
        keep = torch.ones_like(row, dtype=torch.bool)
        new_rows, new_cols = n_rows, n_cols
        row_map = col_map = None
        if rows is not None:
            r = as_index(rows, n_rows, self.device)
            row_map, new_rows = position_map(r, n_rows), r.numel()
            if not is_injective(r):
                return SparseOperator.from_dense(self.to_dense().index_select(0, r)).block(None, cols)
        if cols is not None:
            c = as_index(cols, n_cols, self.device)
            col_map, new_cols = position_map(c, n_cols), c.numel()
            if not is_injective(c):
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
        return self._csr.to_dense()

    def to(self, device=None, dtype=None) -> "SparseOperator":
        row, col, val = self.coo()
        return SparseOperator(row.to(device), col.to(device), val.to(device=device, dtype=dtype), self.shape)

    @property
    def T(self) -> "SparseOperator":
        """The transpose, built once per operator (an adjoint solve asks for it on every call)."""
        got = getattr(self, "_transposed", None)
        if got is None:
            row, col, val = self.coo()
            got = SparseOperator(col, row, val, (self.shape[1], self.shape[0]))
            got._transposed = self
            self._transposed = got
        return got

    def scale(self, factor: float) -> "SparseOperator":
        """``factor * K`` as a new operator."""
        row, col, val = self.coo()
        return SparseOperator(row, col, val * factor, self.shape)


def position_map(idx: Tensor, size: int) -> Tensor:
    """``map[i] = position of i in idx`` (``-1`` when absent)."""
    m = torch.full((size,), -1, dtype=torch.long, device=idx.device)
    m[idx] = torch.arange(idx.numel(), device=idx.device)
    return m


def is_injective(idx: Tensor) -> bool:
    """``True`` when the ids ``idx`` are all different."""
    return idx.numel() == torch.unique(idx).numel()


def horner(coeffs, matmul: Callable[[Tensor], Tensor], x: Tensor, shift: int = 0, h0: Tensor | None = None) -> Tensor:
    """``sum_p coeffs[p] M^(p + shift) x`` by Horner's rule, for any linear map ``M`` given as ``matmul``.

    The package's one polynomial evaluation: Algorithms 1-3 (``s(S) E alpha``, ``Q = sum_p xi_p S^p``),
    graph filters, ``graphstk.nn`` (differentiable ``coeffs``) and transforms on eigenvalues.

    Parameters
    ----------
    coeffs : sequence of float or 1-D Tensor
        ``coeffs[p]`` multiplies ``M^(p + shift)``; at least one.
    matmul : callable ``x -> M x``
    x : Tensor
    shift : int, default 0
        Extra factors of ``M`` applied last.
    h0 : Tensor, optional
        A partial sum to continue from, standing for the higher coefficients (every entry of
        ``coeffs`` is then added, ``coeffs[-1]`` first); default ``coeffs[-1] * x``.

    Returns
    -------
    Tensor shaped like ``x``, after ``len(coeffs) - 1 + shift`` products with ``M``.
    """
    if h0 is None:
        h, top = coeffs[-1] * x, len(coeffs) - 2
    else:
        h, top = h0, len(coeffs) - 1
    for p in range(top, -1, -1):
        h = matmul(h) + coeffs[p] * x
    for _ in range(shift):
        h = matmul(h)
    return h
