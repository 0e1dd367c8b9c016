"""The STKR base kernel (Eq. 23) with its rows spread over processes.

:class:`PartitionedGraphKernel` has the attributes the propagation engines and
:func:`graphstk.methods.predict_grid` read from a :class:`~graphstk.operators.GraphKernel`
(``S``, ``num_nodes``, ``num_visible``, ``local``, ``is_hidden``, ``rows``, ``lambda_max``,
``dtype``, ``device``), so they run on it unchanged inside :meth:`PartitionedGraphKernel.space`.
"""
from __future__ import annotations

import torch
import torch.distributed as dist
from torch import Tensor

from .._index import as_index
from ..operators.base import SparseOperator
from ..operators.graph import GraphKernel, _inv_sqrt
from .operator import PartitionedOperator, SummedRows
from .partition import Partition, halo_report, partition_graph


class PartitionedGraphKernel:
    """A :class:`~graphstk.operators.GraphKernel` whose ``S`` is a :class:`PartitionedOperator`.

    Degrees (and so ``S = D^{-1/2} W D^{-1/2}`` over the visible nodes, Eq. 23) are computed over
    the whole graph before the rows are split; the visible nodes are renumbered by the partition
    (``visible[i]`` is the global id of local id ``i``), so each process owns a contiguous range
    of local ids. Every process passes the same graph; each keeps its rows of ``S`` and the
    out-of-sample edges (hidden node to visible node) whose visible end it owns.

    Parameters
    ----------
    edge_index, num_nodes, hidden, edge_weight, dtype, device, clean_edges
        As in :class:`~graphstk.operators.GraphKernel`.
    partition : "contiguous" | "rcm" | "metis" | Partition, default "rcm"
        How visible nodes are split (:func:`partition_graph`); a :class:`Partition` of the visible
        nodes (local ids of the unpartitioned kernel) is used as given.
    group : process group, optional (default: the world)
    exchange : "auto" | "all_to_all" | "p2p", default "auto"
    keep_serial : bool, default False
        Keep the whole single-process kernel as ``serial`` (for methods that do not distribute).

    Attributes
    ----------
    S : PartitionedOperator ``[N, N]``
    visible, isolated, degree : in the partitioned local numbering (``degree``, ``isolated``: all
        visible nodes, on every process).
    partition : Partition (of the unpartitioned kernel's local ids)
    halo : dict, :func:`halo_report` of ``partition``
    """

    def __init__(self, edge_index: Tensor, num_nodes: int, hidden=None, edge_weight: Tensor | None = None,
                 dtype: torch.dtype = torch.float64, device=None, clean_edges: bool = False,
                 partition: str | Partition = "rcm", group=None, exchange: str = "auto", keep_serial: bool = False):
        serial = GraphKernel(edge_index, num_nodes, hidden=hidden, edge_weight=edge_weight, dtype=dtype,
                             device=device, clean_edges=clean_edges)
        self._build(serial, partition, group, exchange, keep_serial)

    @classmethod
    def from_kernel(cls, kernel: GraphKernel, partition: str | Partition = "rcm", group=None, exchange: str = "auto",
                    keep_serial: bool = False) -> "PartitionedGraphKernel":
        """Split an existing :class:`~graphstk.operators.GraphKernel` (the same on every process)."""
        self = cls.__new__(cls)
        self._build(kernel, partition, group, exchange, keep_serial)
        return self

    def _build(self, serial: GraphKernel, partition, group, exchange: str, keep_serial: bool) -> None:
        P = dist.get_world_size(group)
        N = serial.num_visible
        row, col, val = serial.S.coo()
        if not isinstance(partition, Partition):
            partition = partition_graph(row, col, N, P, partition)
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
        order = partition.order.to(row.device)
        self.num_nodes, self.dtype, self.device = serial.num_nodes, serial.dtype, serial.device
        self.lambda_max = serial.lambda_max
        self.hidden_mask = serial.hidden_mask
        self.visible = serial.visible[order]
        self.degree, self.isolated = serial.degree[order], serial.isolated[order]
        self._g2l = torch.full((self.num_nodes,), -1, dtype=torch.long, device=self.device)
        self._g2l[self.visible] = torch.arange(N, device=self.device)
        # out-of-sample rows (Eq. 23): W(x, v) / sqrt(D(x) D(v)), D(x) over all of x's visible neighbours
        cr, cc, cw = serial._cross
        dx = torch.zeros(self.num_nodes, dtype=self.dtype, device=self.device).index_add_(0, cr, cw)
        cv = _inv_sqrt(dx)[cr] * cw * serial._dis[cc]
        cc = new[cc]
        keep = (cc >= lo) & (cc < hi)
        self._cross = (cr[keep], cc[keep], cv[keep])
        self.serial = serial if keep_serial else None

    @property
    def num_visible(self) -> int:
        """``n + m``: the number of nodes the learner sees."""
        return self.S.N

    def local(self, idx) -> Tensor:
        """Local (partitioned) ids of global nodes ``idx``; error if any of them is hidden."""
        g = as_index(idx, self.num_nodes, self.device)
        loc = self._g2l[g]
        if (loc < 0).any():
            bad = g[loc < 0][:5].tolist()
            raise ValueError(f"nodes {bad} are hidden from this kernel (inductive setting); "
                             "use rows() for out-of-sample predictions")
        return loc

    def is_hidden(self, idx) -> Tensor:
        return self.hidden_mask[as_index(idx, self.num_nodes, self.device)]

    def rows(self, idx) -> SummedRows:
        """``K(x, visible) / (n+m)`` for global nodes ``idx`` (as :meth:`GraphKernel.rows`): a
        ``[len(idx), N]`` operator whose products are the same on every process. Each process
        contributes the entries in its own columns: ``S``'s rows by symmetry, hidden nodes' edges
        into its visible nodes."""
        g = as_index(idx, self.num_nodes, self.device, name="idx")
        if not int(torch.unique(g).numel()) == g.numel():
            raise ValueError("rows() of a partitioned kernel takes node ids without repeats")
        loc = self._g2l[g]
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

    def space(self, gather: bool = True):
        """Run the enclosed engine calls with reductions over this kernel's partition (see
        :meth:`PartitionedOperator.space`)."""
        return self.S.space(gather)

    def gather(self, h: Tensor, dst: int | None = None) -> Tensor:
        """The whole ``[N, K]`` block from every process's rows (on every process, or on ``dst``)."""
        return self.S.gather(h, dst)

    def __repr__(self) -> str:
        return (f"PartitionedGraphKernel(visible={self.num_visible}/{self.num_nodes}, nnz={self.S.nnz}, "
                f"partition={self.partition.method}, rows={self.S.lo}..{self.S.hi - 1}, "
                f"halo={self.S.exchange.halo_rows}, dtype={self.dtype})")
