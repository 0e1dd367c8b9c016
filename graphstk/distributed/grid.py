"""Model selection over a partitioned kernel: :func:`graphstk.methods.predict_grid`, unchanged,
on :class:`PartitionedGraphKernel` s, with node ids and labels mapped to the kernel's points.

:class:`DistributedGrid` is a drop-in ``predict_grid`` for the experiment runner
(``run_experiment(..., predict_grid=DistributedGrid())``): given the runner's single-process
:class:`~graphstk.operators.GraphKernel` it partitions it (once per kernel) and runs the engine
on the partitioned one inside its reduction space. Top-``d`` kernel PCA (an eigensolver on
``S_UU``) does not distribute, nor do kernels other than graph kernels (feature kernels): they run
whole, on every process alike.
"""
from __future__ import annotations

from torch import Tensor

from .._index import as_index
from ..methods.grid import predict_grid
from ..operators.graph import GraphKernel
from .kernel import PartitionedGraphKernel

SERIAL_METHODS = ("stkr-topd",)   # computed on the whole kernel by every process


class DistributedGrid:
    """``predict_grid`` on partitioned kernels (a callable with :func:`~graphstk.methods.predict_grid`'s
    signature).

    Parameters
    ----------
    partition : "contiguous" | "rcm" | "metis" | None, default None (METIS where installed, else RCM)
    group : process group, optional (default: the world)
    exchange : "auto" | "all_to_all" | "p2p", default "auto"
    cache : int, default 3
        Partitioned kernels kept (the runner asks for at most three per split).
    """

    def __init__(self, partition: str | None = None, group=None, exchange: str = "auto", cache: int = 3):
        self.partition, self.group, self.exchange, self.cache = partition, group, exchange, cache
        self._kernels: list[tuple[GraphKernel, PartitionedGraphKernel]] = []

    def kernel(self, serial: GraphKernel) -> PartitionedGraphKernel:
        """The partitioned version of ``serial`` (built on first use, collectively)."""
        for k, pk in self._kernels:
            if k is serial:
                return pk
        pk = PartitionedGraphKernel.from_kernel(serial, self.partition, self.group, self.exchange)
        self._kernels = (self._kernels + [(serial, pk)])[-self.cache:]
        return pk

    def __call__(self, method: str, kernel, y: Tensor, train_idx, eval_idx, grid: dict, num_classes,
                 **kwargs):
        """:func:`~graphstk.methods.predict_grid`'s arguments and result, in node numbering."""
        partitioned = isinstance(kernel, PartitionedGraphKernel)
        if not partitioned and not isinstance(kernel, GraphKernel):   # a feature kernel: not partitioned here
            return predict_grid(method, kernel, y, train_idx, eval_idx, grid, num_classes, **kwargs)
        if method in SERIAL_METHODS:
            serial = kernel.serial if partitioned else kernel
            if serial is None:
                raise ValueError(f"{method!r} does not distribute: it needs the whole kernel (keep_serial=True)")
            return predict_grid(method, serial, y, train_idx, eval_idx, grid, num_classes, **kwargs)
        pk = kernel if partitioned else self.kernel(kernel)
        pos = pk.position
        train = pos[as_index(train_idx, pk.num_nodes, pos.device, name="train_idx", allow_none=False)]
        ev = pos[as_index(eval_idx, pk.num_nodes, pos.device, name="eval_idx", allow_none=False)]
        with pk.space():
            return predict_grid(method, pk, y.to(pos.device)[pk.order], train, ev, grid, num_classes, **kwargs)
