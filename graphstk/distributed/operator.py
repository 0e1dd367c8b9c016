"""The row-partitioned operator: an ``N x N`` sparse matrix whose rows are spread over processes.

Each process stores an interior block (its own columns) and a boundary block (its halo); a product
starts the halo exchange, multiplies the interior block meanwhile, then adds the boundary product.
Vectors are whole-length, reductions go through :class:`ShardedSpace` (docs/distributed.md).
"""
from __future__ import annotations

import torch
import torch.distributed as dist
from torch import Tensor

from ..operators.base import KernelOperator, SparseOperator, as_index, follows, is_injective, position_map
from .exchange import HaloExchange, ShardedSpace, all_gather_rows, all_reduce, gather_rows


def _summed(t: Tensor, group) -> Tensor:
    return all_reduce(t, group, "the sum of a partitioned block's products")


def _select(row: Tensor, col: Tensor, val: Tensor, rows: Tensor | None, cols: Tensor | None, n_rows: int,
            n_cols: int) -> tuple[Tensor, Tensor, Tensor]:
    """Entries of ``(row, col, val)`` whose row is in ``rows`` and column in ``cols`` (``None``: all),
    renumbered to positions in those lists (which must not repeat an id)."""
    keep = torch.ones_like(row, dtype=torch.bool)
    for ids, idx, size in ((rows, row, n_rows), (cols, col, n_cols)):
        if ids is not None:
            if not is_injective(ids):
                raise ValueError("a block of a partitioned operator takes row and column ids without repeats")
            keep &= position_map(ids, size)[idx] >= 0
    row, col, val = row[keep], col[keep], val[keep]
    if rows is not None:
        row = position_map(rows, n_rows)[row]
    if cols is not None:
        col = position_map(cols, n_cols)[col]
    return row, col, val


class PartitionedOperator(SparseOperator):
    """Rows ``lo .. hi - 1`` of a square ``N x N`` sparse matrix on this process (see module docstring).

    Built collectively: every process of ``group`` passes the entries of its own rows. It is a
    :class:`~graphstk.operators.SparseOperator` whose entries are spread over processes: ``nnz`` is
    the global count, ``coo()`` gathers every entry (for the engines' sparse LU of small graphs),
    ``csr`` is not available (no process holds the whole matrix in one tensor).

    Parameters
    ----------
    row, col : LongTensor ``[nnz_p]``
        Entries of this process's rows, in the partition's numbering (``lo <= row < hi``).
    value : Tensor ``[nnz_p]``
    num_rows : int
        ``N``.
    bounds : list of int, ``P + 1`` entries
        Row ranges of the processes (rank ``p`` owns ``bounds[p] .. bounds[p + 1] - 1``).
    group : process group, optional (default: the world)
    exchange : "auto" | "all_to_all" | "p2p", default "auto"
        How halo rows travel (:class:`HaloExchange`).
    symmetric : bool, default True
        Whether the matrix is symmetric (graph kernels are); needed for ``T`` and for row blocks
        that multiply a whole-length block.
    gather_results : bool, default True
        Whether the solvers hand their results out whole on every process (one ``all_reduce`` per
        result) or keep them sharded (see :attr:`vector_space`); may be changed after construction.
    """

    def __init__(self, row: Tensor, col: Tensor, value: Tensor, num_rows: int, bounds: list[int], group=None,
                 exchange: str = "auto", symmetric: bool = True, gather_results: bool = True):
        self.group, self.N, self.bounds, self.symmetric = group, int(num_rows), list(bounds), symmetric
        self.gather_results = bool(gather_results)
        self.rank = dist.get_rank(group)
        self.lo, self.hi = self.bounds[self.rank], self.bounds[self.rank + 1]
        if row.numel() and (int(row.min()) < self.lo or int(row.max()) >= self.hi):
            raise ValueError(f"process {self.rank} owns rows {self.lo}..{self.hi - 1} but was given entries in rows "
                             f"{int(row.min())}..{int(row.max())}")
        n_own = self.hi - self.lo
        inner = (col >= self.lo) & (col < self.hi)
        self.interior = SparseOperator(row[inner] - self.lo, col[inner] - self.lo, value[inner], (n_own, n_own))
        halo_ids, pos = torch.unique(col[~inner], sorted=True, return_inverse=True)
        self.halo_ids = halo_ids
        self.boundary = SparseOperator(row[~inner] - self.lo, pos, value[~inner], (n_own, halo_ids.numel()))
        self.exchange = HaloExchange(halo_ids, self.bounds, group, exchange)
        self._nnz = int(_summed(torch.tensor([row.numel()], dtype=torch.long, device=row.device), group))
        self._value_dtype = value.dtype
        self._coo = None

    shape = property(lambda self: (self.N, self.N))
    dtype = property(lambda self: self._value_dtype)
    device = property(lambda self: self.interior.device)
    nnz = property(lambda self: self._nnz)

    @property
    def csr(self) -> Tensor:
        raise NotImplementedError("a partitioned operator has no single CSR tensor: each process holds its rows "
                                  "(interior and boundary); coo() gathers every entry")

    def scale(self, factor: float) -> "PartitionedOperator":
        """``factor * S`` (collective: a new exchange plan)."""
        row, col, val = self.local_coo()
        return PartitionedOperator(row, col, val * factor, self.N, self.bounds, self.group, self.exchange.mode,
                                   self.symmetric, self.gather_results)

    def _rmatmul(self, x: Tensor) -> Tensor:
        return self.T._matmul(x)

    def local_coo(self) -> tuple[Tensor, Tensor, Tensor]:
        """This process's entries ``(row, col, value)`` in the partition's numbering."""
        ri, ci, vi = self.interior.coo()
        rb, cb, vb = self.boundary.coo()
        return (torch.cat([ri, rb]) + self.lo, torch.cat([ci + self.lo, self.halo_ids[cb]]), torch.cat([vi, vb]))

    def coo(self) -> tuple[Tensor, Tensor, Tensor]:
        """All entries ``(row, col, value)`` of the matrix, on every process (collective; kept).

        For the engines' direct routes (a sparse LU of ``I - eta S``, its fill bound), which
        ``solver="auto"`` takes only for small graphs or a bounded fill: every process then holds
        and factors the whole matrix, as one process would.
        """
        if self._coo is None:
            parts = [all_gather_rows(t, self.group) for t in self.local_coo()]
            order = torch.argsort(parts[0] * self.N + parts[1])
            self._coo = tuple(t[order] for t in parts)
        return self._coo

    def _matmul(self, x: Tensor) -> Tensor:
        x = x.to(self.dtype)
        own = x[self.lo:self.hi]
        pending = self.exchange.start(own)
        y = self.interior @ own                      # overlaps the exchange in flight
        halo = pending.wait()
        if halo.shape[0]:
            y = y.add_(self.boundary @ halo)
        out = torch.zeros_like(x)
        out[self.lo:self.hi] = y
        return out

    @property
    def vector_space(self) -> ShardedSpace:
        """The solvers' reductions over this operator's row partition (:class:`ShardedSpace`); the
        engines pass it to every solver. Results are handed out whole unless ``gather_results`` is
        False (then each process holds valid rows ``lo .. hi - 1`` only)."""
        return ShardedSpace(self.lo, self.hi, self.N, self.group, gather=self.gather_results)

    def gather(self, x: Tensor, dst: int | None = None) -> Tensor:
        """The whole ``[N, K]`` block ``x`` from every process's rows: on every process, or on ``dst``."""
        return gather_rows(x, self.lo, self.hi, self.group, dst)

    def shard(self, x: Tensor) -> Tensor:
        """This process's rows of ``x`` (a view)."""
        return x[self.lo:self.hi]

    def block(self, rows=None, cols=None) -> KernelOperator:
        """``S[rows][:, cols]``. ``rows=None``: rows stay partitioned (:class:`OwnedRows`); given
        ``rows``: the block's products are the same on every process (:class:`SummedRows`)."""
        if rows is None and cols is None:
            return self
        r = None if rows is None else as_index(rows, self.N, self.device, name="rows")
        c = None if cols is None else as_index(cols, self.N, self.device, name="cols")
        row, col, val = self.local_coo()
        if r is None:
            row, col, val = _select(row, col, val, None, c, self.N, self.N)
            return OwnedRows(SparseOperator(row - self.lo, col, val, (self.hi - self.lo, c.numel())), self.lo, self.N,
                             self.group)
        if c is None:   # S[r, :] = S[:, r]^T: the entries of the owned rows in columns r, transposed
            if not self.symmetric:
                raise NotImplementedError("a row block of a non-symmetric partitioned operator")
            row, col, val = _select(row, col, val, None, r, self.N, self.N)
            return SummedRows(SparseOperator(col, row, val, (r.numel(), self.N)), self.group, (self.lo, self.hi))
        row, col, val = _select(row, col, val, r, c, self.N, self.N)
        return SummedRows(SparseOperator(row, col, val, (r.numel(), c.numel())), self.group)

    def diagonal(self) -> Tensor:
        out = torch.zeros(self.N, dtype=self.dtype, device=self.device)
        out[self.lo:self.hi] = self.interior.diagonal()
        return _summed(out, self.group)

    def to_dense(self) -> Tensor:
        out = torch.zeros(self.N, self.N, dtype=self.dtype, device=self.device)
        row, col, val = self.local_coo()
        out[row, col] = val
        return _summed(out, self.group)

    def to(self, device=None, dtype=None) -> "PartitionedOperator":
        row, col, val = self.local_coo()
        return PartitionedOperator(row.to(device), col.to(device), val.to(device=device, dtype=dtype), self.N,
                                   self.bounds, self.group, self.exchange.mode, self.symmetric, self.gather_results)

    @property
    def T(self) -> "PartitionedOperator":
        if not self.symmetric:
            raise NotImplementedError("the transpose of a non-symmetric partitioned operator")
        return self

    def __repr__(self) -> str:
        return (f"PartitionedOperator(shape={self.shape}, rows={self.lo}..{self.hi - 1} of process {self.rank}, "
                f"nnz={self.nnz}, halo={self.exchange.halo_rows}, exchange={self.exchange.mode}, dtype={self.dtype})")


class SummedRows(KernelOperator):
    """A block whose product is the sum over processes of local products (one ``all_reduce``):
    the same ``[n_rows, K]`` result on every process.

    ``local`` holds this process's share. With ``owned=(lo, hi)`` its columns index a whole-length
    block of which only rows ``lo .. hi - 1`` are read (a row block of :class:`PartitionedOperator`);
    otherwise the input is the same on every process.
    """

    def __init__(self, local: SparseOperator, group=None, owned: tuple[int, int] | None = None):
        self.local, self.group, self.owned = local, group, owned

    shape, dtype, device = follows("local")

    def _matmul(self, x: Tensor) -> Tensor:
        return _summed(self.local @ x, self.group)

    def block(self, rows=None, cols=None) -> "SummedRows":
        return SummedRows(self.local.block(rows, cols), self.group, self.owned if cols is None else None)

    def diagonal(self) -> Tensor:
        return _summed(self.local.diagonal(), self.group)

    def to_dense(self) -> Tensor:
        return _summed(self.local.to_dense(), self.group)

    def to(self, device=None, dtype=None) -> "SummedRows":
        return SummedRows(self.local.to(device, dtype), self.group, self.owned)

    @property
    def T(self) -> KernelOperator:
        if self.owned is None:
            return SummedRows(self.local.T, self.group)
        lo, hi = self.owned
        t = self.local.T.block(torch.arange(lo, hi, device=self.device), None)
        return OwnedRows(t, lo, self.shape[1], self.group)


class OwnedRows(KernelOperator):
    """A block with partitioned rows and a replicated input: ``[N, n_cols]``, of which this process
    holds rows ``lo .. lo + local.shape[0] - 1``; products return those rows filled, the others zero."""

    def __init__(self, local: SparseOperator, lo: int, num_rows: int, group=None):
        self.local, self.lo, self.N, self.group = local, lo, num_rows, group

    shape = property(lambda self: (self.N, self.local.shape[1]))
    dtype, device = follows("local", "dtype device")

    def _matmul(self, x: Tensor) -> Tensor:
        out = torch.zeros(self.N, x.shape[1], dtype=self.dtype, device=x.device)
        out[self.lo:self.lo + self.local.shape[0]] = self.local @ x
        return out

    def _global(self) -> SparseOperator:
        row, col, val = self.local.coo()
        return SparseOperator(row + self.lo, col, val, self.shape)

    def block(self, rows=None, cols=None) -> KernelOperator:
        if rows is None:
            return OwnedRows(self.local.block(None, cols), self.lo, self.N, self.group)
        return SummedRows(self._global().block(rows, cols), self.group)

    def diagonal(self) -> Tensor:
        return _summed(self._global().diagonal(), self.group)

    def to_dense(self) -> Tensor:
        return _summed(self._global().to_dense(), self.group)

    def to(self, device=None, dtype=None) -> "OwnedRows":
        return OwnedRows(self.local.to(device, dtype), self.lo, self.N, self.group)

    @property
    def T(self) -> SummedRows:
        return SummedRows(self._global().T, self.group, (self.lo, self.lo + self.local.shape[0]))
