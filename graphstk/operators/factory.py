"""Kernel factories: how a runner turns a graph into its kernel operator.

A kernel factory is a callable ``factory(data, hidden, *, dtype, device, whole=False,
normalization="symmetric")`` returning a square :class:`~graphstk.operators.KernelOperator` over
every node of ``data`` with the nodes of the mask ``hidden`` hidden from the fit (Eq. 23);
``whole=True`` asks for a kernel every process holds whole (a single-process factory ignores it).
"""
from __future__ import annotations

from typing import Callable

import torch

from .graph import GraphKernel

__all__ = ["GraphKernelFactory", "KernelFactory"]

#: ``factory(data, hidden, *, dtype, device, whole=False, normalization="symmetric") -> KernelOperator``
KernelFactory = Callable[..., object]


class GraphKernelFactory:
    """The single-process kernel factory: the :class:`~graphstk.operators.GraphKernel` of Eq. 23, or its lazy form.

    ``factory(data, hidden, *, dtype, device, whole=False, normalization="symmetric")``: the kernel
    over ``data.num_nodes`` nodes from ``data.edge_index`` (and ``data.edge_weight`` when present),
    with the nodes of the BoolTensor ``hidden`` ``[num_nodes]`` hidden (``None`` or all False:
    transductive), in ``dtype`` on ``device``, normalised as ``normalization`` says. ``whole`` is
    accepted and ignored (one process holds everything).
    """

    def __call__(self, data, hidden: torch.Tensor | None, *, dtype: torch.dtype = torch.float64, device=None,
                 whole: bool = False, normalization: str = "symmetric"):
        device = torch.device(device) if device is not None else torch.device("cpu")
        hide = None if hidden is None or not bool(hidden.any()) else hidden.to(device)
        weight = getattr(data, "edge_weight", None)
        return GraphKernel(data.edge_index.to(device), int(data.num_nodes), hidden=hide,
                           edge_weight=None if weight is None else weight.to(device), dtype=dtype, device=device,
                           normalization=normalization)

    def __repr__(self) -> str:
        return "GraphKernelFactory()"
