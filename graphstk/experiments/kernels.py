"""The kernels of one run: the cache that keeps them (:class:`KernelCache`, one per run, handed to
every method in :attr:`graphstk.experiments.registry.MethodInput.kernels`) over the kernel factory
that builds them (:mod:`graphstk.operators.factory`).
"""
from __future__ import annotations

import torch

from .._hashing import content_hash
from ..operators.factory import GraphKernelFactory, KernelFactory
from ..spectral.eigen import EigenCache

__all__ = ["GraphKernelFactory", "KernelCache", "KernelFactory"]

class KernelCache:
    """The last ``size`` kernels a run built, so the stages of one split share them.

    One cache belongs to one run (:func:`~graphstk.experiments.pipeline.run_experiment` makes it)
    and is handed to the methods through :attr:`~graphstk.experiments.registry.MethodInput.kernels`.
    A kernel is reused for the same graph object (by identity: the cache holds a reference to it,
    so a graph it knows cannot be replaced by another at the same address), the same hidden
    nodes, dtype, device and ``whole``.

    Parameters
    ----------
    factory : kernel factory, optional
        Default :class:`GraphKernelFactory` (see the module docstring for the signature).
    size : int, default 3
        Kernels kept (a split's node-classification stages need at most three: transductive,
        selection, final).

    Attributes
    ----------
    built : int
        Kernels the factory built (calls of ``factory``).
    reused : int
        Requests answered from the cache.
    eigen : :class:`~graphstk.spectral.EigenCache`
        The run's eigenpairs (top-``d`` kernel PCA), keyed on the operator, handed to the engine by
        the STKR registrations: an operator solved once is not solved again in the same run.
    feature_cache : dict
        Feature-aware STKR's work that does not depend on the labels, keyed on its inputs' content: the norms
        of the filtered rows (:func:`~graphstk.methods.feature_propagation.cosine_blocks`) and the feature-neighbour
        lists (:func:`~graphstk.methods.feature_propagation.feature_neighbors`), so the splits of one graph compute
        them once; and, under ``"csr_features"``, the features' CSR form with the matrix it was made from (the
        graph registrations' sparse readers share it, checked by identity).
    """

    def __init__(self, factory: KernelFactory | None = None, size: int = 3):
        if factory is not None and not callable(factory):
            raise TypeError(f"kernel_factory must be callable (data, hidden, *, dtype, device, whole), got "
                            f"{type(factory).__name__}")
        if int(size) < 1:
            raise ValueError(f"size must be >= 1, got {size!r}")
        self.factory = factory if factory is not None else GraphKernelFactory()
        self.size = int(size)
        self._entries: list[tuple[object, tuple, object]] = []   # (graph, key, kernel), oldest first
        self.eigen = EigenCache()
        self.feature_cache: dict = {}
        self.built = 0
        self.reused = 0

    def kernel(self, data, hidden: torch.Tensor | None = None, *, dtype: torch.dtype = torch.float64, device=None,
               whole: bool = False, normalization: str = "symmetric"):
        """The kernel of ``data`` with ``hidden`` (BoolTensor ``[num_nodes]`` or ``None``) hidden and the
        graph normalisation ``normalization``: from the cache, or built by the factory (and kept, dropping
        the oldest beyond ``size``)."""
        n = int(data.num_nodes)
        mask = torch.zeros(n, dtype=torch.bool) if hidden is None else hidden.detach().to("cpu", torch.bool)
        if mask.numel() != n:
            raise ValueError(f"hidden must be a boolean mask of the {n} nodes, got {mask.numel()} entries")
        device = torch.device(device) if device is not None else torch.device("cpu")
        key = (content_hash(mask), dtype, str(device), bool(whole), normalization)
        for i, (graph, k, kern) in enumerate(self._entries):
            if graph is data and k == key:
                self._entries.append(self._entries.pop(i))
                self.reused += 1
                return kern
        kern = self.factory(data, mask, dtype=dtype, device=device, whole=bool(whole), normalization=normalization)
        self.built += 1
        self._entries = (self._entries + [(data, key, kern)])[-self.size:]
        return kern

    def clear(self) -> None:
        """Drop every kernel, eigendecomposition and feature-aware STKR entry (the counters stay)."""
        self._entries = []
        self.eigen.clear()
        self.feature_cache.clear()

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"KernelCache(factory={self.factory!r}, size={self.size}, held={len(self)}, built={self.built})"
