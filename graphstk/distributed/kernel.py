"""The STKR base kernel (Eq. 23) with its rows spread over processes.

:class:`PartitionedGraphKernel` is a :class:`~graphstk.operators.GraphKernel` whose ``normalized_gram``
is a :class:`PartitionedOperator`; the engines run on it unchanged. Its points are the nodes renumbered
by the partition (``order``, ``position``; docs/distributed.md).
"""
from __future__ import annotations

import torch
import torch.distributed as dist
from torch import Tensor

from .._index import as_index
from ..operators.base import SparseOperator
from ..operators.graph import GraphKernel, NormalizedGraphKernel, inv_sqrt_degree as _inv_sqrt
from .operator import PartitionedOperator, SummedRows
from .partition import Partition, default_partitioner, halo_report, partition_graph


class PartitionedGraphKernel(NormalizedGraphKernel):
    """The Eq. 23 kernel over all nodes, in partition order, with ``S`` a :class:`PartitionedOperator`.

    Degrees (and so ``S = D^{-1/2} W D^{-1/2}`` over the visible nodes, Eq. 23) are computed over
    the whole graph before the rows are split. Every process passes the same graph; each keeps
    its rows of ``S`` and the out-of-sample edges (hidden node to visible node) whose visible end
    it owns. Points are numbered as the module docstring says.

    Parameters
    ----------
    edge_index, num_nodes, hidden, edge_weight, dtype, device, clean_edges
        As in :class:`~graphstk.operators.GraphKernel`.
    partition : "contiguous" | "rcm" | "metis" | Partition | None, default None
        How visible nodes are split (:func:`partition_graph`; ``None``: :func:`default_partitioner`);
        a :class:`Partition` of the visible nodes (local ids of the unpartitioned kernel) is used as given.
    group : process group, optional (default: the world)
    exchange : "auto" | "all_to_all" | "p2p", default "auto"
    normalization : {"symmetric", "lazy"}, default "symmetric"
        The graph kernel (:class:`~graphstk.operators.GraphKernel`'s ``normalization``).
    keep_serial : bool, default False
        Keep the whole single-process kernel as ``serial`` (for methods that do not distribute).

    Attributes
    ----------
    S : PartitionedOperator ``[N, N]``
        ``G_K / (n+m)`` over the visible points (points ``0 .. N - 1``).
    order, position : LongTensor ``[num_nodes]``
        ``order[i]``: the node of point ``i``; ``position[v]``: the point of node ``v``.
    hidden_mask : BoolTensor ``[num_nodes]`` (points: the last ``num_nodes - N``)
    degree, isolated : visible degrees and isolated visible points, in point order (whole, on every process)
    partition : Partition (of the unpartitioned kernel's visible ids)
    halo : dict, :func:`halo_report` of ``partition``
    serial : GraphKernel or None
        The single-process kernel (``keep_serial=True``), in node numbering.
    """

    def __init__(self, edge_index: Tensor, num_nodes: int, hidden=None, edge_weight: Tensor | None = None,
                 dtype: torch.dtype = torch.float64, device=None, clean_edges: bool = False,
                 partition: str | Partition | None = None, group=None, exchange: str = "auto",
                 keep_serial: bool = False, normalization: str = "symmetric"):
        serial = GraphKernel(edge_index, num_nodes, hidden=hidden, edge_weight=edge_weight, dtype=dtype,
                             device=device, clean_edges=clean_edges, normalization=normalization)
        self._build(serial, partition, group, exchange, keep_serial)

    @classmethod
    def from_kernel(cls, kernel: GraphKernel, partition: str | Partition | None = None, group=None,
                    exchange: str = "auto", keep_serial: bool = False) -> "PartitionedGraphKernel":
        """Split an existing :class:`~graphstk.operators.GraphKernel` (the same on every process)."""
        self = cls.__new__(cls)
        self._build(kernel, partition, group, exchange, keep_serial)
        return self

    def _build(self, serial: GraphKernel, partition, group, exchange: str, keep_serial: bool) -> None:
        P = dist.get_world_size(group)
        N = serial.num_visible
        row, col, val = serial.S.coo()
        if not isinstance(partition, Partition):
            partition = partition_graph(row, col, N, P, partition or default_partitioner())
        if partition.parts != P or partition.num_nodes != N:
            raise ValueError(f"the partition has {partition.parts} parts over {partition.num_nodes} nodes; this kernel "
                             f"needs {P} parts (one per process) over its {N} visible nodes")
        self.partition, self.group = partition, group
        self.halo = halo_report(row, col, partition)
        new = partition.inverse().to(row.device)                  # new local id of every old local id
        r, c = new[row], new[col]
        rank = dist.get_rank(group)
        lo, hi = partition.bounds[rank], partition.bounds[rank + 1]
        mine = (r >= lo) & (r < hi)
        self.S = PartitionedOperator(r[mine], c[mine], val[mine], N, partition.bounds, group, exchange)
        vis_order = serial.visible[partition.order.to(row.device)]          # nodes of points 0 .. N - 1
        hid = serial.hidden_mask.nonzero().flatten()
        self.order = torch.cat([vis_order, hid])
        self.position = torch.empty_like(self.order)
        self.position[self.order] = torch.arange(self.order.numel(), device=self.order.device)
        self.num_nodes, self._dtype, self._device = serial.num_nodes, serial.dtype, serial.device
        self.lambda_max = serial.lambda_max
        self.normalization = serial.normalization
        self.positive_semidefinite = serial.positive_semidefinite
        self.hidden_mask = torch.zeros(self.num_nodes, dtype=torch.bool, device=self._device)
        self.hidden_mask[N:] = True
        self.degree, self.isolated = serial.degree[partition.order], serial.isolated[partition.order]
        # out-of-sample rows (Eq. 23): W(x, v) / sqrt(D(x) D(v)), D(x) over all of x's visible neighbours
        cr, cc, cw = serial._cross
        dx = torch.zeros(self.num_nodes, dtype=self.dtype, device=self.device).index_add_(0, cr, cw)
        cv = _inv_sqrt(dx)[cr] * cw * serial._dis[cc] * serial._half   # the lazy kernel halves them
        cr, cc = self.position[cr], new[cc]
        keep = (cc >= lo) & (cc < hi)
        self._cross = (cr[keep], cc[keep], cv[keep])
        self.serial = serial if keep_serial else None

    # -- the operator interface (points in partition order) -------------------
    shape = property(lambda self: (self.num_nodes, self.num_nodes))
    dtype = property(lambda self: self._dtype)
    device = property(lambda self: self._device)

    def _matmul(self, x: Tensor) -> Tensor:
        """``K x`` (Eq. 23, ``K = (n+m) [S; out-of-sample rows]``, hidden columns zero): visible rows
        partitioned as ``S``'s, hidden rows the same on every process."""
        N = self.num_visible
        out = torch.zeros(self.num_nodes, x.shape[1], dtype=self.dtype, device=x.device)
        out[:N] = self.S @ x[:N]
        if N < self.num_nodes:
            out[N:] = self.rows(torch.arange(N, self.num_nodes, device=self.device)) @ x[:N]
        return out.mul_(float(N))

    def _rmatmul(self, x: Tensor) -> Tensor:
        raise NotImplementedError("the transpose of a partitioned graph kernel over all nodes (its hidden rows "
                                  "are out-of-sample rows); use normalized_gram(visible) for the symmetric S")

    def to(self, device=None, dtype=None) -> "PartitionedGraphKernel":
        raise NotImplementedError("build the partitioned kernel on its device and in its dtype "
                                  "(PartitionedGraphKernel(..., device=, dtype=) or from_kernel(kernel.to(...)))")

    def spectral_bound(self) -> float:
        """``(n+m) lambda_max`` of the visible block ``G_K`` (Eq. 23)."""
        return float(self.num_visible) * self.lambda_max

    def _check_visible(self, visible: Tensor) -> None:
        N = self.num_visible
        if visible.numel() != N or not torch.equal(visible.to(self.device), torch.arange(N, device=self.device)):
            raise ValueError("the visible points differ from those this partitioned kernel was built with (points "
                             f"0 .. {N - 1}); build it with hidden= the nodes to hide and pass hidden points as "
                             "kernel.position[nodes]")

    @property
    def num_visible(self) -> int:
        """``n + m``: the number of nodes the learner sees."""
        return self.S.N

    def rows(self, idx) -> SummedRows:
        """``K(x, visible) / (n+m)`` for points ``idx`` (as :meth:`GraphKernel.rows`): a
        ``[len(idx), N]`` operator whose products are the same on every process. Each process
        contributes the entries in its own columns: ``S``'s rows by symmetry, hidden points' edges
        into its visible points."""
        g = as_index(idx, self.num_nodes, self.device, name="idx")
        if not int(torch.unique(g).numel()) == g.numel():
            raise ValueError("rows() of a partitioned kernel takes point ids without repeats")
        loc = torch.where(g < self.num_visible, g, torch.full_like(g, -1))
        vis = (loc >= 0).nonzero().flatten()
        part = self.S.block(loc[vis], None).local.coo() if vis.numel() else (torch.zeros(0, dtype=torch.long,
                                                                                          device=self.device),) * 3
        rows_v, cols_v, vals_v = vis[part[0]], part[1], part[2].to(self.dtype)
        pos = torch.full((self.num_nodes,), -1, dtype=torch.long, device=self.device)
        pos[g] = torch.arange(g.numel(), device=self.device)
        cr, cc, cv = self._cross
        hit = pos[cr] >= 0
        M = SparseOperator(torch.cat([rows_v, pos[cr[hit]]]), torch.cat([cols_v, cc[hit]]),
                           torch.cat([vals_v, cv[hit]]), (g.numel(), self.num_visible))
        return SummedRows(M, self.group, (self.S.lo, self.S.hi))

    @property
    def vector_space(self):
        """The reductions over this kernel's partition (:attr:`PartitionedOperator.vector_space`)."""
        return self.S.vector_space

    @property
    def gather_results(self) -> bool:
        """Whether solver results are handed out whole (default) or kept sharded; settable."""
        return self.S.gather_results

    @gather_results.setter
    def gather_results(self, value: bool) -> None:
        self.S.gather_results = bool(value)

    def gather(self, h: Tensor, dst: int | None = None) -> Tensor:
        """The whole ``[N, K]`` block from every process's rows (on every process, or on ``dst``)."""
        return self.S.gather(h, dst)

    def __repr__(self) -> str:
        return (f"PartitionedGraphKernel(visible={self.num_visible}/{self.num_nodes}, nnz={self.S.nnz}, "
                f"partition={self.partition.method}, rows={self.S.lo}..{self.S.hi - 1}, "
                f"halo={self.S.exchange.halo_rows}, dtype={self.dtype})")
