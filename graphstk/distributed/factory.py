"""The kernel factory of a distributed run (``run.py CONFIG --distributed``): the runner's graph kernels
split by rows (:class:`PartitionedGraphKernel`), the whole :class:`~graphstk.operators.GraphKernel` for
``whole=True``, and :class:`~graphstk.distributed.ShardedGraphKernel` for a partitioned graph
(docs/distributed.md).
"""
from __future__ import annotations

import torch

from ..operators.factory import GraphKernelFactory
from .kernel import PartitionedGraphKernel
from .sharded import ShardedKernelFactory

__all__ = ["PartitionedKernelFactory"]


class PartitionedKernelFactory:
    """A kernel factory (:mod:`graphstk.operators.factory`) building :class:`PartitionedGraphKernel` s.

    ``factory(data, hidden, *, dtype, device, whole=False, normalization="symmetric")`` is called collectively (every process
    of ``group``, the same arguments, in the same order).

    Parameters
    ----------
    partition : "contiguous" | "rcm" | "metis" | None, default None (METIS where installed, else RCM)
    group : process group, optional (default: the world)
    exchange : "auto" | "all_to_all" | "p2p", default "auto"
        How halo rows travel (:class:`~graphstk.distributed.HaloExchange`).
    """

    def __init__(self, partition: str | None = None, group=None, exchange: str = "auto"):
        self.partition, self.group, self.exchange = partition, group, exchange
        self._whole = GraphKernelFactory()
        self._sharded = None

    def __call__(self, data, hidden: torch.Tensor | None, *, dtype: torch.dtype = torch.float64, device=None,
                 whole: bool = False, normalization: str = "symmetric"):
        if getattr(data, "partitioned", None) is not None:   # a graph loaded from its partitioned form
            if self._sharded is None:
                self._sharded = ShardedKernelFactory(group=self.group, exchange=self.exchange)
            return self._sharded(data, hidden, dtype=dtype, device=device, whole=whole, normalization=normalization)
        serial = self._whole(data, hidden, dtype=dtype, device=device, normalization=normalization)
        if whole:
            return serial
        return PartitionedGraphKernel.from_kernel(serial, self.partition, self.group, self.exchange)

    def __repr__(self) -> str:
        return f"PartitionedKernelFactory(partition={self.partition!r}, exchange={self.exchange!r})"
