"""Shared pieces of the :mod:`graphstk.nn` modules: label matrices, masks, edge-weight check, the divergence
watch, and the graph kernel of an adjacency kept while the same graph comes back.
"""
from __future__ import annotations

import warnings

import torch
from torch import Tensor

from .._checks import user_stacklevel
from .._index import as_index
from ..exceptions import DivergenceWarning
from ..operators.graph import GraphKernel, read_adjacency

__all__ = ["DivergenceWarning", "AdjacencyKernelCache", "check_edge_weight", "label_matrix", "row_mask", "diverging",
           "warn_switch"]


#: A residual this many times the first one, and above the right-hand side's norm, cannot belong
#: to a converging solve (the same rule as :func:`graphstk.spectral.solvers` uses for ``"diverging"``).
GROWTH = 10.0


def diverging(rel: float, first: float) -> bool:
    """Whether a relative residual ``rel`` (``first``: that of the first iteration) says "diverging"."""
    return not (rel == rel and abs(rel) != float("inf")) or (rel > 1.0 and rel > GROWTH * first)


def warn_switch(owner, what: str, t: int, rel: float, route: str) -> None:
    """Warn (once per module) that ``what`` diverged at iteration ``t`` and ``route`` replaces it."""
    owner.route_ = route
    if getattr(owner, "_warned_divergence", False):
        return
    owner._warned_divergence = True
    warnings.warn(f"{type(owner).__name__}: {what} is diverging (relative residual {rel:.3g} at iteration {t}, "
                  f"more than {GROWTH:g}x the first and above 1: no converging solve does that); this call "
                  f"returns {route} instead. This warning is shown once per module; .route_ names the "
                  "route of the last call", DivergenceWarning, stacklevel=user_stacklevel())


def label_matrix(y: Tensor, num_classes: int | None = None, mask=None) -> Tensor:
    """PyG's reading of ``y``: integer labels ``[N]`` (or ``[N, 1]``) as one-hot rows (``max(y) + 1`` columns, or
    ``num_classes``: labels beyond it refused on ``mask``, zero rows elsewhere; negative labels give zero rows);
    a float ``[N, C]`` matrix as it is.
    """
    if not isinstance(y, Tensor):
        raise TypeError(f"y must be a torch.Tensor, got {type(y).__name__}")
    if not y.dtype.is_floating_point and y.size(0) == y.numel():
        y = y.view(-1).long()
        C = int(y.max()) + 1 if num_classes is None else int(num_classes)
        distinct = int(torch.unique(y[y >= 0]).numel()) if num_classes is None and C > 100 else C
        if C > 2 * distinct + 100:   # a stray id: one_hot would need C columns
            raise ValueError(f"the labels reach {C - 1} but only {distinct} distinct values occur, which would make "
                             f"{C} classes: relabel the classes as 0..K-1 or pass num_classes")
        if C < 1:
            raise ValueError(f"no class: y holds no label >= 0 (max {int(y.max())}); labels are 0..C-1")
        valid = (y >= 0) & (y < C)
        if num_classes is not None:
            m = row_mask(mask, y.numel(), y.device, torch.float32)
            bad = (y >= C) if m is None else (y >= C) & (m.view(-1) > 0)
            if bool(bad.any()):
                raise ValueError(f"labels of the masked nodes reach {int(y[bad].max())} but num_classes={C}")
        out = torch.zeros(y.numel(), C, device=y.device)
        out[valid.nonzero().view(-1), y[valid]] = 1.0
        return out
    if y.dim() != 2 or not y.dtype.is_floating_point:
        raise ValueError(f"y must be integer labels [N] or a float label matrix [N, C], got {y.dtype} of shape "
                         f"{tuple(y.shape)}")
    return y


def row_mask(mask, N: int, device, dtype) -> Tensor | None:
    """``mask`` (BoolTensor ``[N]`` or ids; ``None``: all) as a ``[N, 1]`` column of 0/1 in ``dtype``."""
    if mask is None:
        return None
    if isinstance(mask, Tensor) and mask.dtype == torch.bool and mask.numel() == N:
        return mask.to(device=device, dtype=dtype).view(N, 1)
    idx = as_index(mask, N, device, name="mask")
    return torch.zeros(N, 1, dtype=dtype, device=device).index_fill_(0, idx, 1.0)


def check_edge_weight(w: Tensor, owner: str) -> None:
    """Refuse NaN, infinite or negative edge weights ``w``, named as such (``owner``: the module, in the message)."""
    w = w.detach()
    if not w.dtype.is_floating_point:
        w = w.double()
    bad = ~torch.isfinite(w)
    if bool(bad.any()):
        i = int(bad.nonzero()[0, 0])
        raise ValueError(f"{owner}: edge_weight has {int(bad.sum())} NaN or infinite entries (e.g. edge {i}: "
                         f"{float(w[i])}); pass finite weights (e.g. torch.nan_to_num(edge_weight, nan=0.0), or drop "
                         "those edges)")
    neg = w < 0
    if bool(neg.any()):
        i = int(neg.nonzero()[0, 0])
        raise ValueError(f"{owner}: edge_weight has {int(neg.sum())} negative entries (e.g. edge {i}: "
                         f"{float(w[i]):g}); the graph kernel needs similarities >= 0: pass e.g. "
                         "edge_weight.clamp(min=0) or edge_weight.abs(), or a transform of distances such as "
                         "exp(-d^2 / (2 sigma^2))")


def _version(t):
    return None if t is None else (id(t), getattr(t, "_version", None))


class AdjacencyKernelCache:
    """The :meth:`~graphstk.operators.GraphKernel.from_edges` kernel of an adjacency in any of PyG's forms, kept
    while the same graph comes back.

    The structure (edge lists, CSR orders) is keyed on the identity and in-place version of ``adj`` and
    ``num_nodes``, the values on those of ``edge_weight``, ``dtype``, ``normalize`` and ``lazy``; weights that
    require grad reuse the structure and get their values recomputed every call. Values: ``edge_weight`` as
    given, else the adjacency's own values ``gcn_norm``-ed by PyG's rule, else ``gcn_norm`` of ones;
    ``normalize=True`` / ``False`` overrides the rule.
    """

    def __init__(self):
        self.clear()

    def get(self, adj, num_nodes: int, edge_weight: Tensor | None, dtype: torch.dtype, normalize: bool | None,
            lazy: bool = False) -> GraphKernel:
        """The kernel of ``adj`` with ``edge_weight`` (cached as described above)."""
        skey = (_version(adj), num_nodes)
        if skey != self._skey:
            self._edges = read_adjacency(adj, num_nodes)
            self._skey, self._vkey, self._adj, self._layout = skey, None, adj, {}   # adj keeps id(adj) valid
        tgt, src, own, rule, is_edge_index = self._edges
        if edge_weight is not None:
            if not is_edge_index:
                warnings.warn("edge_weight is not read with a sparse adjacency (as in PyG): its own values are the "
                              "weights", UserWarning, stacklevel=user_stacklevel())
                edge_weight = None
            elif not isinstance(edge_weight, Tensor) or edge_weight.dim() != 1 or edge_weight.numel() != tgt.numel():
                raise ValueError(f"edge_weight must be a 1-D tensor with one entry per edge ({tgt.numel()}), got "
                                 f"{tuple(edge_weight.shape) if isinstance(edge_weight, Tensor) else edge_weight!r}")
        grad = edge_weight is not None and edge_weight.requires_grad and torch.is_grad_enabled()
        vkey = (_version(edge_weight), dtype, normalize, lazy)
        if not grad and vkey == self._vkey:
            return self._op
        if edge_weight is not None:
            w, rule = edge_weight.to(dtype), False
        elif own is not None:
            w = own.to(dtype)
        else:
            w, rule = torch.ones(tgt.numel(), dtype=dtype, device=tgt.device), True
        op = GraphKernel.from_edges(tgt, src, w, num_nodes, normalize=rule if normalize is None else bool(normalize),
                                    lazy=lazy, layout=self._layout)
        if not grad:
            self._vkey, self._op, self._weight = vkey, op, edge_weight
        return op

    def clear(self) -> None:
        """Forget the cached kernel."""
        self._skey = self._vkey = self._adj = self._weight = self._op = self._edges = self._layout = None
