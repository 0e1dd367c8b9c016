"""The kernel factory of a distributed run: the runner's graph kernels, partitioned over processes.

``run.py CONFIG --distributed`` passes a :class:`PartitionedKernelFactory` to
:func:`~graphstk.experiments.pipeline.run_experiment` (``kernel_factory=``): every kernel the
runner's STKR / Label-Prop methods ask for is built whole (the same on every process, from the
same data), then split by rows (:class:`PartitionedGraphKernel`). Its points are the nodes in
partition order; the methods map node ids through its ``position`` and the problem's operator
brings the reductions over the partition to every solver (its ``vector_space``). A method that
does not distribute (top-``d`` kernel PCA, an eigensolver on ``S_UU``) asks for ``whole=True`` and
gets the single-process :class:`~graphstk.operators.GraphKernel`. A graph loaded from its
partitioned form (:func:`~graphstk.distributed.partitioned_data`: labels and the directory,
no edges) gets each process's :class:`~graphstk.distributed.ShardedGraphKernel`, loaded from its
part alone (:class:`~graphstk.distributed.ShardedKernelFactory`), with sharded vectors.
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
