"""Sharded vectors: the operator and kernel of a graph loaded from its partitioned form, whose
``[N, K]`` blocks exist only as each process's own rows (docs/distributed.md).

Products exchange halo rows (:class:`~graphstk.distributed.exchange.HaloExchange`); small blocks are
reduced (:class:`SummedRows`, :class:`RowShardSpace`). Label-Prop (Eq. 22) and Algorithms 1-2 run on
it through :func:`graphstk.methods.engine.solve`; routes that factor ``S`` take CG instead.
"""
from __future__ import annotations

import warnings

import torch
import torch.distributed as dist
from torch import Tensor

from .._spaces import VectorSpace
from ..operators.base import KernelOperator, SparseOperator, as_index, follows, is_injective, position_map
from ..operators.graph import NormalizedGraphKernel, inv_sqrt_degree
from .exchange import HaloExchange, all_gather_rows, all_reduce
from .operator import SummedRows
from .store import load_part

__all__ = ["RowShardSpace", "ShardedOperator", "ShardedGraphKernel", "ShardedKernelFactory"]


class RowShardSpace(VectorSpace):
    """Reductions over blocks of which every process holds its own rows (and nothing else): each
    column's partial sum over the local rows, added over the group (``all_reduce`` of ``K`` numbers).

    Every block handed to this space is such a block; results stay sharded (``settle`` is the
    identity). :meth:`reduce_sum` adds a small block over the processes (the labeled rows each
    process contributes).
    """

    sharded = True

    def __init__(self, group=None):
        self.group = group

    def col_dot(self, x: Tensor, y: Tensor) -> Tensor:
        return all_reduce((x * y).sum(0), self.group, "a solver's inner product")

    def col_norm(self, x: Tensor) -> Tensor:
        return torch.sqrt(self.col_dot(x, x))

    def reduce_sum(self, t: Tensor) -> Tensor:
        return all_reduce(t.clone(), self.group, "the sum of the processes' labeled rows")

    def __repr__(self) -> str:
        return f"RowShardSpace(rank={dist.get_rank(self.group)} of {dist.get_world_size(self.group)})"


class _LocalRows(KernelOperator):
    """``S[:, cols]`` of a sharded operator: ``[N, len(cols)]``, replicated input, this process's rows out."""

    def __init__(self, local: SparseOperator, N: int):
        self.local, self.N = local, N

    shape = property(lambda self: (self.N, self.local.shape[1]))
    dtype, device = follows("local", "dtype device")

    def _matmul(self, x: Tensor) -> Tensor:
        return self.local @ x

    def block(self, rows=None, cols=None) -> KernelOperator:
        if rows is not None:
            raise NotImplementedError("rows of a column block of a sharded operator")
        return _LocalRows(self.local.block(None, cols), self.N)


class _CSRRows(KernelOperator):
    """A CSR matrix that only multiplies (``torch.sparse.mm``) and lists its entries: the interior
    and boundary blocks of a :class:`ShardedOperator`, stored once (int32 indices where they fit:
    8 bytes an entry in float32, no COO copy beside the CSR)."""

    def __init__(self, crow: Tensor, col: Tensor, val: Tensor, shape: tuple[int, int]):
        small = max(int(shape[1]), int(col.numel())) < 2 ** 31 - 1
        crow, col = (crow.to(torch.int32), col.to(torch.int32)) if small else (crow.long(), col.long())
        with warnings.catch_warnings():   # torch flags every CSR tensor as "beta"; its products are stable
            warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta state")
            self.t = torch.sparse_csr_tensor(crow, col, val, shape, check_invariants=False)

    shape, dtype, device = follows("t")

    def _matmul(self, x: Tensor) -> Tensor:
        if self.t.shape[0] == 0 or self.t.shape[1] == 0:
            return torch.zeros(self.t.shape[0], x.shape[1], dtype=self.dtype, device=x.device)
        return torch.sparse.mm(self.t, x.to(self.dtype))

    def coo(self) -> tuple[Tensor, Tensor, Tensor]:
        crow = self.t.crow_indices().long()
        row = torch.repeat_interleave(torch.arange(self.t.shape[0], device=self.device), crow[1:] - crow[:-1])
        return row, self.t.col_indices().long(), self.t.values()

    def in_columns(self, col_map: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """The entries whose column ``j`` has ``col_map[j] >= 0``: ``(row, col_map[j], value)``,
        without listing the other entries' rows."""
        mapped = col_map[self.t.col_indices()]
        at = (mapped >= 0).nonzero().flatten()
        row = torch.searchsorted(self.t.crow_indices().long(), at, right=True) - 1
        return row, mapped[at], self.t.values()[at]

    def diagonal(self) -> Tensor:
        row, col, val = self.coo()
        out = torch.zeros(min(self.t.shape), dtype=self.dtype, device=self.device)
        on = row == col
        return out.index_add_(0, row[on], val[on])


def _split_csr(crow: Tensor, col: Tensor, val: Tensor, lo: int, hi: int):
    """The interior (columns ``lo .. hi - 1``) and boundary (other columns) parts of CSR rows:
    ``(interior, boundary, halo_ids)``, the boundary's columns numbered by their place in the
    sorted ``halo_ids``. Row order and column order within a row are kept."""
    n = crow.numel() - 1
    inner = (col >= lo) & (col < hi)
    ends = torch.zeros(col.numel() + 1, dtype=torch.long, device=col.device)
    torch.cumsum(inner, 0, out=ends[1:])
    crow_in = ends[crow]
    crow_out = crow - crow_in
    del ends
    outer_cols = col[~inner]
    halo_ids = torch.unique(outer_cols, sorted=True)
    interior = _CSRRows(crow_in, col[inner] - lo, val[inner], (n, hi - lo))
    boundary = _CSRRows(crow_out, torch.searchsorted(halo_ids, outer_cols), val[~inner], (n, halo_ids.numel()))
    return interior, boundary, halo_ids


class ShardedOperator(KernelOperator):
    """A symmetric ``N x N`` sparse matrix whose rows ``lo .. hi - 1`` live on this process and whose
    vectors are this process's rows only: ``S @ x`` maps ``[hi - lo, K]`` to ``[hi - lo, K]``.

    Built collectively (every process of ``group``, its own rows).

    Parameters
    ----------
    row : LongTensor ``[nnz_p]``
        Local row offsets (``0 .. hi - lo - 1``).
    col : LongTensor ``[nnz_p]``
        Global column ids (points).
    value : Tensor ``[nnz_p]``
    num_rows : int
        ``N``.
    bounds : list of int (``P + 1``)
    group : process group, optional
    exchange : "auto" | "all_to_all" | "p2p"
    """

    def __init__(self, row: Tensor, col: Tensor, value: Tensor, num_rows: int, bounds: list[int], group=None,
                 exchange: str = "auto"):
        self._place(num_rows, bounds, group)
        n_own = self.hi - self.lo
        if row.numel() and (int(row.min()) < 0 or int(row.max()) >= n_own):
            raise ValueError(f"process {self.rank} holds {n_own} rows but was given entries in local rows "
                             f"{int(row.min())}..{int(row.max())}")
        order = torch.argsort(row * max(self.N, 1) + col)
        crow = torch.zeros(n_own + 1, dtype=torch.long, device=row.device)
        torch.cumsum(torch.bincount(row, minlength=n_own), 0, out=crow[1:])
        self._build(crow, col[order], value[order], exchange)

    @classmethod
    def from_csr(cls, crow: Tensor, col: Tensor, value: Tensor, num_rows: int, bounds: list[int], group=None,
                 exchange: str = "auto") -> "ShardedOperator":
        """This process's rows as CSR (``crow`` ``[rows + 1]``, global column ids ``col``, sorted
        within each row): no COO copy is made (collective)."""
        self = cls.__new__(cls)
        self._place(num_rows, bounds, group)
        self._build(crow, col, value, exchange)
        return self

    def _place(self, num_rows: int, bounds: list[int], group) -> None:
        self.group, self.N, self.bounds = group, int(num_rows), [int(b) for b in bounds]
        P = dist.get_world_size(group)
        if len(self.bounds) != P + 1:
            raise ValueError(f"the partition has {len(self.bounds) - 1} parts but the process group has {P} "
                             "processes: launch as many processes as parts, or partition again")
        self.rank = dist.get_rank(group)
        self.lo, self.hi = self.bounds[self.rank], self.bounds[self.rank + 1]

    def _build(self, crow: Tensor, col: Tensor, value: Tensor, exchange: str) -> None:
        self.interior, self.boundary, self.halo_ids = _split_csr(crow, col, value, self.lo, self.hi)
        self.exchange = HaloExchange(self.halo_ids, self.bounds, self.group, exchange)
        self._nnz = int(all_reduce(torch.tensor([col.numel()], dtype=torch.long, device=col.device), self.group,
                                   "counting a sharded operator's entries"))
        self._value_dtype = value.dtype

    shape = property(lambda self: (self.N, self.N))
    dtype = property(lambda self: self._value_dtype)
    device = property(lambda self: self.interior.device)
    nnz = property(lambda self: self._nnz, doc="Stored entries of the whole matrix (all processes).")

    @property
    def local_range(self) -> tuple[int, int]:
        """``(lo, hi)``: the points whose rows this process holds (of the operator and of every vector)."""
        return self.lo, self.hi

    @property
    def vector_space(self) -> RowShardSpace:
        """The solvers' reductions over the processes' rows (:class:`RowShardSpace`)."""
        return RowShardSpace(self.group)

    def matmul(self, x: Tensor) -> Tensor:
        if not isinstance(x, Tensor):
            raise TypeError(f"expected a torch.Tensor, got {type(x).__name__}")
        n_own = self.hi - self.lo
        if x.dim() not in (1, 2) or x.shape[0] != n_own:
            raise ValueError(f"a sharded operator multiplies this process's rows: process {self.rank} holds rows "
                             f"{self.lo}..{self.hi - 1}, so x must have {n_own} rows, got shape {tuple(x.shape)}")
        vec = x.dim() == 1
        out = self._matmul(x.unsqueeze(1) if vec else x)
        return out.squeeze(1) if vec else out

    def _matmul(self, x: Tensor) -> Tensor:
        x = x.to(self.dtype)
        pending = self.exchange.start(x)
        y = self.interior @ x                        # overlaps the exchange in flight
        halo = pending.wait()
        if halo.shape[0]:
            y = y.add_(self.boundary @ halo)
        return y

    def local_coo(self) -> tuple[Tensor, Tensor, Tensor]:
        """This process's entries ``(local row, global column, value)``."""
        ri, ci, vi = self.interior.coo()
        rb, cb, vb = self.boundary.coo()
        return torch.cat([ri, rb]), torch.cat([ci + self.lo, self.halo_ids[cb]]), torch.cat([vi, vb])

    def block(self, rows=None, cols=None) -> KernelOperator:
        """``S[rows][:, cols]``: ``rows=None``: this process's rows out of a replicated input;
        given ``rows`` and no ``cols``: the rows ``rows`` of ``S`` against a sharded input, the same
        ``[len(rows), K]`` on every process (:class:`SummedRows`); both given: a replicated block."""
        if rows is None and cols is None:
            return self
        r = None if rows is None else as_index(rows, self.N, self.device, name="rows")
        c = None if cols is None else as_index(cols, self.N, self.device, name="cols")
        for ids in (r, c):
            if ids is not None and not is_injective(ids):
                raise ValueError("a block of a sharded operator takes row and column ids without repeats")
        n_own = self.hi - self.lo
        row, col, val = self._in_columns(c if r is None else (r if c is None else c))
        if r is None:
            return _LocalRows(SparseOperator(row, col, val, (n_own, c.numel())), self.N)
        if c is None:   # S[r, own] = S[own, r]^T (symmetric): the entries of the own rows in columns r
            return SummedRows(SparseOperator(col, row, val, (r.numel(), n_own)), self.group)
        rmap = position_map(r, self.N)[row + self.lo]
        keep = rmap >= 0
        return SummedRows(SparseOperator(rmap[keep], col[keep], val[keep], (r.numel(), c.numel())), self.group)

    def _in_columns(self, ids: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """This process's entries in the columns ``ids``: ``(local row, position in ids, value)``."""
        pmap = position_map(ids, self.N)
        ri, ci, vi = self.interior.in_columns(pmap[self.lo:self.hi])
        rb, cb, vb = self.boundary.in_columns(pmap[self.halo_ids])
        return torch.cat([ri, rb]), torch.cat([ci, cb]), torch.cat([vi, vb])

    def diagonal(self) -> Tensor:
        """This process's rows of the diagonal (``[hi - lo]``)."""
        return self.interior.diagonal()

    def to_dense(self) -> Tensor:
        raise NotImplementedError("a sharded operator is never made dense: no process holds all of it")

    @property
    def T(self) -> "ShardedOperator":
        return self

    def to(self, device=None, dtype=None) -> "ShardedOperator":
        row, col, val = self.local_coo()
        return ShardedOperator(row.to(device), col.to(device), val.to(device=device, dtype=dtype), self.N,
                               self.bounds, self.group, self.exchange.mode)

    def __repr__(self) -> str:
        return (f"ShardedOperator(shape={self.shape}, rows={self.lo}..{self.hi - 1} of process {self.rank}, "
                f"nnz={self.nnz}, halo={self.exchange.halo_rows}, dtype={self.dtype})")


class ShardedGraphKernel(NormalizedGraphKernel):
    """The STKR base kernel (Eq. 23) of a graph loaded from its partitioned form, one part per process.

    Built collectively from this process's :class:`~graphstk.distributed.store.GraphPart`: the
    degrees of its rows are its rows' sums, those of its halo come by one halo exchange, and
    ``S = D^{-1/2} W D^{-1/2}`` is formed entry by entry as :class:`~graphstk.operators.GraphKernel`
    forms it. Its points are the nodes in partition order (``order[i]``: the node of point ``i``;
    ``position[v]``: the point of node ``v``), every node visible (the transductive setting).

    Parameters
    ----------
    part : GraphPart
    dtype : torch.dtype, default float64
    group : process group, optional
    exchange : "auto" | "all_to_all" | "p2p"
    device : torch.device, optional
        Where the rows live: default this process's GPU under NCCL (one GPU per process,
        :func:`~graphstk.distributed.init_from_env`), else the CPU.
    """

    def __init__(self, part, dtype: torch.dtype = torch.float64, group=None, exchange: str = "auto", device=None):
        P = dist.get_world_size(group)
        if device is None:
            device = (torch.device("cuda", torch.cuda.current_device()) if dist.get_backend(group) == "nccl"
                      else torch.device("cpu"))
        device = torch.device(device)
        if part.parts != P or part.part != dist.get_rank(group):
            raise ValueError(f"part {part.part} of {part.parts} loaded on process {dist.get_rank(group)} of {P}: "
                             "each process loads the part of its rank, and there are as many processes as parts")
        self.group, self.manifest = group, part.manifest   # the part's arrays are not kept: S holds its rows
        N, lo, hi = part.num_nodes, part.lo, part.hi
        crow, col = part.indptr.to(device), part.indices.to(device)
        counts = crow[1:] - crow[:-1]
        halo = part.halo.to(device)
        if part.weight is None:   # unweighted: the degree is the row's count, every w is 1
            w = None
            deg = counts.to(dtype)
        else:
            w = part.weight.to(device=device, dtype=dtype)
            row = torch.repeat_interleave(torch.arange(hi - lo, device=device), counts)
            deg = torch.zeros(hi - lo, dtype=dtype, device=device).index_add_(0, row, w)
            del row
        dis_own = inv_sqrt_degree(deg)
        plan = HaloExchange(halo, part.bounds, group)
        dis_halo = plan.start(dis_own.unsqueeze(1)).wait().squeeze(1)
        del plan
        # S = D^-1/2 W D^-1/2 entry by entry, as symmetric_normalization forms it: dis[row] * w * dis[col]
        values = torch.repeat_interleave(dis_own, counts)
        if w is not None:
            values.mul_(w)
            del w
        inner = (col >= lo) & (col < hi)
        values[inner] *= dis_own[col[inner] - lo]
        outer = ~inner
        values[outer] *= dis_halo[torch.searchsorted(halo, col[outer])]
        del inner, outer
        self.S = ShardedOperator.from_csr(crow, col, values, N, part.bounds, group, exchange)
        self.degree, self.isolated = deg, deg <= 0
        edges = all_reduce(torch.tensor([float((deg > 0).any())], device=device), group, "counting edges")
        self.lambda_max = 1.0 if float(edges) > 0 else 0.0
        self.num_nodes, self._dtype = N, dtype
        self.order = all_gather_rows(part.nodes.to(device), group)
        self.position = torch.empty_like(self.order)
        self.position[self.order] = torch.arange(N, device=device)
        self.hidden_mask = torch.zeros(N, dtype=torch.bool, device=device)

    shape = property(lambda self: (self.num_nodes, self.num_nodes))
    dtype = property(lambda self: self._dtype)
    device = property(lambda self: self.S.device)
    num_visible = property(lambda self: self.num_nodes, doc="``N``: every node is visible (transductive).")
    local_range = property(lambda self: self.S.local_range,
                           doc="``(lo, hi)``: the points whose rows this process holds (:attr:`ShardedOperator.local_range`).")

    @property
    def vector_space(self) -> RowShardSpace:
        return self.S.vector_space

    def matmul(self, x: Tensor) -> Tensor:
        """``K x = N S x`` on this process's rows (Eq. 23; every node visible)."""
        return self.S.matmul(x) * float(self.num_nodes)

    def _matmul(self, x: Tensor) -> Tensor:
        return self.S._matmul(x) * float(self.num_nodes)

    def spectral_bound(self) -> float:
        return float(self.num_nodes) * self.lambda_max

    def _check_visible(self, visible: Tensor) -> None:
        N = self.num_nodes
        if visible.numel() != N:
            raise ValueError(f"a graph loaded from its partitioned form is transductive: all {N} nodes are visible, "
                             f"but {N - visible.numel()} were hidden; score held-out nodes as unlabeled nodes, or build "
                             "an inductive kernel with PartitionedGraphKernel(edge_index, num_nodes, hidden=...)")

    def rows(self, idx) -> SummedRows:
        """``K(x, visible) / N`` for points ``idx``: ``[len(idx), N]`` against a sharded block, the
        same ``[len(idx), K]`` result on every process."""
        g = as_index(idx, self.num_nodes, self.device, name="idx")
        if torch.unique(g).numel() != g.numel():
            raise ValueError("rows() of a sharded kernel takes point ids without repeats")
        return self.S.block(g, None)

    def block(self, rows=None, cols=None) -> KernelOperator:
        raise NotImplementedError("blocks of a sharded kernel: use rows(points) or normalized_gram(...)[0].block()")

    def diagonal(self) -> Tensor:
        raise NotImplementedError("the diagonal of a sharded kernel over all nodes: use kernel.S.diagonal() "
                                  "(this process's rows)")

    def to_dense(self) -> Tensor:
        raise NotImplementedError("a sharded kernel is never made dense: no process holds all of it")

    def to(self, device=None, dtype=None):
        raise NotImplementedError("load the sharded kernel in its dtype: ShardedGraphKernel(part, dtype=...)")

    def gather(self, h: Tensor, dst: int | None = None) -> Tensor:
        """The whole ``[N, K]`` block from every process's rows ``h`` (small graphs, tests): on
        every process (``dst=None``) or on ``dst`` only (the others get ``h`` back)."""
        whole = all_gather_rows(h, self.group)
        return whole if dst is None or dist.get_rank(self.group) == dst else h

    def __repr__(self) -> str:
        return (f"ShardedGraphKernel(N={self.num_nodes}, nnz={self.S.nnz}, rows={self.S.lo}..{self.S.hi - 1}, "
                f"halo={self.S.exchange.halo_rows}, dtype={self.dtype})")


class ShardedKernelFactory:
    """A kernel factory (:mod:`graphstk.operators.factory`) that loads this process's part of a
    partitioned graph (:func:`~graphstk.distributed.load_part`) and builds its
    :class:`ShardedGraphKernel`; the graph object the runner passes carries the labels (the split
    protocol's input) and the directory, never the edges (:func:`~graphstk.distributed.partitioned_data`).

    Parameters
    ----------
    directory : path, optional
        The partitioned form; default: ``data.partitioned`` of the graph the runner passes.
    group : process group, optional
    exchange : "auto" | "all_to_all" | "p2p"
    """

    def __init__(self, directory=None, group=None, exchange: str = "auto"):
        self.directory, self.group, self.exchange = directory, group, exchange

    def __call__(self, data, hidden: Tensor | None, *, dtype: torch.dtype = torch.float64, device=None,
                 whole: bool = False, normalization: str = "symmetric"):
        directory = self.directory or getattr(data, "partitioned", None)
        if directory is None:
            raise ValueError("ShardedKernelFactory needs the partitioned form: ShardedKernelFactory(directory) or a "
                             "graph loaded with graphstk.distributed.partitioned_data(directory)")
        if whole:
            raise NotImplementedError(f"a method that needs the whole kernel on every process (top-d kernel PCA) "
                                      f"does not run on a graph loaded from its partitioned form ({directory}): no "
                                      "process holds the whole graph; leave SP-topd out of the config")
        if normalization != "symmetric":
            raise NotImplementedError(f"the {normalization!r} graph kernel on a graph loaded from its partitioned form "
                                      f"({directory}): its parts store Eq. 23's D^-1/2 W D^-1/2; give the methods "
                                      "normalization: symmetric in the config")
        if hidden is not None and bool(hidden.any()):
            raise NotImplementedError(f"the inductive setting ({int(hidden.sum())} hidden nodes) on a graph loaded "
                                      f"from its partitioned form ({directory}): its degrees are those of the whole "
                                      "graph; use a transductive method, e.g. LP (t) and SP-Lap (t)")
        if device is not None and torch.device(device).type != "cpu" and dist.get_backend(self.group) != "nccl":
            raise ValueError(f"a sharded kernel on {device} needs the NCCL backend (one GPU per process); this "
                             f"process group uses {dist.get_backend(self.group)}: start it with "
                             "init_from_env('nccl'), or run on the CPU")
        part = load_part(directory, dist.get_rank(self.group), dist.get_world_size(self.group))
        if int(data.num_nodes) != part.num_nodes:
            raise ValueError(f"the graph has {int(data.num_nodes)} nodes but its partitioned form {directory} has "
                             f"{part.num_nodes}: partition this graph again")
        return ShardedGraphKernel(part, dtype=dtype, group=self.group, exchange=self.exchange, device=device)

    def __repr__(self) -> str:
        return f"ShardedKernelFactory(directory={self.directory!r}, exchange={self.exchange!r})"
