"""Non-neural graph filters with their published read-out: logistic regression on ``s(S~) X``.

SGC, S2GC, DGC and GGCM filter the row-normalised features once with GCN's renormalised adjacency
``S~ = D~^{-1/2} (A + I) D~^{-1/2}`` (the filters of ``graphstk.spectral.filters``) and train SGC's
read-out (Wu et al. 2019, Sec. 3.1 and 4): a seeded ``torch.nn.Linear``, full-batch Adam, lr
:data:`READOUT_LR`, 100 epochs, the weight decay chosen on validation over :data:`WEIGHT_DECAYS`
(``docs/feature_stkr.md``). A paper that released its own per-dataset read-out (DGC: ``K``, ``T``, lr and
weight decay per dataset; GGCM: weight decay and ``decline_neg`` per dataset, the epoch of best validation
accuracy kept) is run with those values from a config (``configs/planetoid_baselines.yaml``).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from ..operators.base import blockwise_columns, column_block_width
from ..operators.graph import GraphKernel
from .feature_propagation import _lazy_matrix, _product, identity_columns, preprocess_sparse, sparse_features
from ..spectral.filters import (Filter, GGCMFilter, HeatKernelFilter, S2GCFilter, SGCFilter, negative_degree,
                                negative_permutations, permutation_graph, permutation_graph_columns,
                                permutation_graph_product)

__all__ = ["renormalized_adjacency", "filtered_features", "FilteredRows", "readout_route", "logistic_regression",
           "logistic_regressions", "READOUT_LR", "WEIGHT_DECAYS"]

#: the read-out's Adam learning rate: SGC's (Wu et al. 2019, Sec. 4.1), reused by S2GC and GGCM
READOUT_LR = 0.2
#: the read-out's weight decays: SGC's range [1e-10, 1e-4] widened to 1e-2, strongest first (ties go to it)
WEIGHT_DECAYS = (1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10)


def renormalized_adjacency(edge_index: Tensor, num_nodes: int, dtype=torch.float64) -> Tensor:
    """``S~ = D~^{-1/2} (A + I) D~^{-1/2}`` as a sparse CSR tensor: PyG's ``gcn_norm`` with self-loops (every node
    one loop of weight 1, replacing those of ``edge_index``), by :meth:`graphstk.operators.GraphKernel.from_edges`."""
    N, (src, tgt) = int(num_nodes), edge_index.long()
    keep, loops = src != tgt, torch.arange(N, device=edge_index.device)
    tgt, src = torch.cat([tgt[keep], loops]), torch.cat([src[keep], loops])
    return GraphKernel.from_edges(tgt, src, torch.ones(tgt.numel(), dtype=dtype, device=tgt.device), N).S.csr


def _polynomial(S: Tensor, filt: Filter):
    """``Z -> s(S) Z`` for a filter that is a polynomial of ``S`` (SGC, S2GC, DGC's heat kernel: ``K`` steps of
    ``(1 - t/K) I + (t/K) S``, one product each)."""
    if isinstance(filt, HeatKernelFilter):
        mm = _product(_lazy_matrix(S, filt.t / filt.K))
        return lambda Z: blockwise_columns(lambda B: SGCFilter(filt.K).apply(mm, B), Z)
    mm = _product(S)
    return lambda Z: blockwise_columns(lambda B: filt.apply(mm, B), Z)


def _ggcm_maps(S: Tensor, filt: GGCMFilter, seed: int):
    """``(Z -> G Z, idx -> G^T E_idx)`` for GGCM's filter ``G`` on ``S``, its negative graphs drawn from ``seed``, one
    per step in step order (:func:`~graphstk.spectral.filters.negative_permutations`; degree: 20 times the mean
    degree of the graph, as the paper, at most ``N - 1``). ``G^T`` meets its negative graphs only on its input
    (:meth:`~graphstk.spectral.filters.GGCMFilter.apply_transposed`), here the identity's columns ``idx``, so those
    products are the graphs' columns ``idx`` (:func:`~graphstk.spectral.filters.permutation_graph_columns`): a
    count over ``len(idx)`` rows each, not a product over all of them."""
    N = S.shape[0]
    g = torch.Generator().manual_seed(int(seed))
    k = min(filt.k_neg, (N - 1) // 2 * 2)
    graphs = [permutation_graph(negative_permutations(N, k, g, device=S.device)) for _ in range(filt.K)]
    mm = _product(S)

    def negative(step: int, Z: Tensor) -> Tensor:
        return permutation_graph_product(graphs[step - 1], Z)

    def transposed_columns(idx: Tensor) -> Tensor:
        out = torch.empty(N, idx.numel(), dtype=S.dtype, device=S.device)
        width = max(column_block_width(out), 1)
        for j in range(0, idx.numel(), width):     # a cache-sized block of columns through every step
            part = idx[j:j + width]
            out[:, j:j + width] = filt.apply_transposed(
                mm, identity_columns(N, part, S.dtype, S.device),
                lambda step, _: permutation_graph_columns(graphs[step - 1], part))
        return out
    return (lambda Z: blockwise_columns(lambda B: filt.apply(mm, B, negative=negative), Z)), transposed_columns


def filtered_features(edge_index: Tensor, X: Tensor, filt: Filter, seed: int = 0) -> Tensor:
    """``s(S~) X~`` ``[N, d]`` (``X~``: rows of ``X`` scaled to sum 1); GGCM's negative graphs drawn from
    ``seed`` (degree: 20 times the mean degree of the graph, as the paper), one per step."""
    X = X.double()
    X = X / X.sum(1, keepdim=True).clamp_min(torch.finfo(X.dtype).tiny)
    N = X.shape[0]
    S = renormalized_adjacency(edge_index, N).to(X.device)
    if isinstance(filt, GGCMFilter):
        return _ggcm_maps(S, filt, seed)[0](X)
    return _polynomial(S, filt)(X)


class FilteredRows:
    """``Z = s(S~) X~`` read by rows, never formed. The filter ``G`` (SGC, S2GC, DGC: polynomials of the symmetric
    ``S~``; GGCM: :meth:`~graphstk.spectral.filters.GGCMFilter.apply_transposed`, its negative graphs drawn from
    ``seed`` as :func:`filtered_features` draws them) is a linear map, so

    * the rows ``idx`` are ``Z[idx] = (G^T E_idx)^T X~`` (``E_idx``: those columns of the identity);
    * a linear read-out of the rows ``idx`` is ``(Z W^T)[idx] = (G (X~ W^T))[idx]``;

    propagations of ``len(idx)`` or ``C`` columns instead of the ``d`` feature columns of
    :func:`filtered_features` (``X~`` kept sparse). :func:`logistic_regressions` reads it as it reads ``Z``.

    Parameters
    ----------
    edge_index : LongTensor ``[2, E]``
    X : Tensor ``[N, d]`` (dense or sparse, or scipy.sparse)
        Node features; rows are scaled to sum 1, as :func:`filtered_features` does.
    filt : SGCFilter | S2GCFilter | HeatKernelFilter | GGCMFilter
    seed : int, default 0
        GGCM's negative graphs (one per step, kept as sparse matrices: ``K N k_neg`` entries).
    """

    def __init__(self, edge_index: Tensor, X, filt: Filter, seed: int = 0):
        if not isinstance(filt, (SGCFilter, S2GCFilter, HeatKernelFilter, GGCMFilter)):
            raise TypeError(f"FilteredRows needs one of the filters SGC, S2GC, DGC, GGCM, got {type(filt).__name__}")
        self.device = edge_index.device
        self.dtype = torch.float64
        self._X = preprocess_sparse(sparse_features(X), "sum")
        self.shape = self._X.shape
        N = self.shape[0]
        S = renormalized_adjacency(edge_index, N).to(self.device)
        self._rows: dict = {}
        if isinstance(filt, GGCMFilter):
            self._apply, self._transposed_columns = _ggcm_maps(S, filt, seed)
        else:
            self._apply = _polynomial(S, filt)
            self._transposed_columns = lambda idx: self._apply(identity_columns(N, idx, self.dtype, self.device))

    def rows(self, idx: Tensor) -> Tensor:
        """``Z[idx]`` ``[len(idx), d]`` (kept for a second call with the same ``idx``)."""
        key = idx.cpu().numpy().tobytes()
        if key not in self._rows:
            P = self._transposed_columns(idx).cpu().numpy()
            self._rows[key] = torch.from_numpy(np.ascontiguousarray((self._X.T @ P).T)).to(self.device)
        return self._rows[key]

    def linear(self, weight: Tensor, bias: Tensor | None, idx: Tensor) -> Tensor:
        """``Z[idx] W^T + b`` ``[len(idx), k]`` (``weight``: ``W [k, d]``) as ``(G (X~ W^T))[idx] + b``: ``k``
        columns propagated."""
        XW = torch.from_numpy(self._X @ weight.detach().T.cpu().numpy()).to(self.device)
        out = self._apply(XW)[idx.to(self.device)]
        return out + bias.detach() if bias is not None else out


def readout_route(n_rows: int, n_readouts: int, num_classes: int, num_features: int) -> str:
    """``"rows"`` (:class:`FilteredRows`) or ``"columns"`` (:func:`filtered_features`), from the sizes alone: rows
    when the columns they propagate (``n_rows`` read rows, ``num_classes`` per read-out of ``n_readouts``) are
    fewer than the ``num_features`` feature columns."""
    return "rows" if n_rows + n_readouts * num_classes < num_features else "columns"


def ggcm_filter(edge_index: Tensor, num_nodes: int, **kw) -> GGCMFilter:
    """``GGCMFilter`` with the negative degree of the paper: 20 times the graph's mean degree."""
    return GGCMFilter(k_neg=negative_degree(edge_index, num_nodes, 20.0), **kw)


def logistic_regressions(Z: Tensor, y: Tensor, train: Tensor, eval_idx: Tensor, weight_decays: Sequence[float], *,
                         seed: int = 0, epochs: int = 100, lr: float = READOUT_LR, val: Tensor | None = None,
                         y_val: Tensor | None = None) -> list[Tensor]:
    """Log-probabilities ``[len(eval_idx), C]`` of the papers' read-out, one for each weight decay of
    ``weight_decays``, in that order: ``torch.nn.Linear(d, C)`` seeded by ``seed`` (every read-out starts from the
    same parameters), full-batch Adam (``lr``, the weight decay as Adam's L2 term) for ``epochs`` epochs on
    ``(Z[train], y[train])``; ``Z`` a ``[N, d]`` tensor or a :class:`FilteredRows` (the same read-out, the filter
    applied by rows).

    The read-outs train side by side: each epoch multiplies the training rows by the weights of all of them at once
    (one ``[n, d] x [d, M C]`` product instead of ``M`` thin ones of ``C`` columns;
    ``bench/baseline_products.py``, its last row), and
    each one's Adam step (a parameter group of its own) sees only its own gradient, so each is the read-out it
    would be alone up to rounding: the wider product rounds differently, and Adam's step, divided by the root of
    its second moment, carries that on from epoch to epoch (``tests/methods/test_linear_filters.py``).

    The parameters are those of the last epoch (SGC's read-out), or, given validation nodes ``val`` and
    their labels ``y_val``, those of the epoch with the highest validation accuracy, ties going to the
    later epoch (GGCM's released read-out)."""
    if (val is None) != (y_val is None):
        raise ValueError(f"val and y_val go together: the best-validation-epoch read-out reads both, got only "
                         f"{'val' if y_val is None else 'y_val'}")
    decays = [float(w) for w in weight_decays]
    if not decays:
        raise ValueError("weight_decays is empty: give at least one weight decay, e.g. [1e-5]")
    rows = Z.rows if isinstance(Z, FilteredRows) else Z.__getitem__
    Zt, yt = rows(train), y[train].long()
    C, M = int(yt.max()) + 1, len(decays)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        start = torch.nn.Linear(Z.shape[1], C).to(device=Z.device, dtype=Z.dtype)
    weights = [start.weight.detach().clone().requires_grad_() for _ in decays]
    biases = [start.bias.detach().clone().requires_grad_() for _ in decays]
    opt = torch.optim.Adam([{"params": [w, b], "weight_decay": wd} for w, b, wd in zip(weights, biases, decays)],
                           lr=float(lr))

    def logits(rows_: Tensor) -> Tensor:      # [n, M, C]: every read-out's scores of the rows, one product
        return torch.addmm(torch.cat(biases), rows_, torch.cat(weights).T).view(rows_.shape[0], M, C)

    targets = yt[:, None].expand(-1, M)
    best, kept = [-1.0] * M, [None] * M
    Zv, yv = (rows(val), y_val.to(Z.device)) if val is not None else (None, None)   # gathered once, not per epoch
    for _ in range(int(epochs)):
        opt.zero_grad()
        # the sum of the read-outs' mean losses: each one's parameters get the gradient of its own loss
        F.cross_entropy(logits(Zt).transpose(1, 2), targets, reduction="none").mean(0).sum().backward()
        opt.step()
        if Zv is not None:
            with torch.no_grad():
                accs = (logits(Zv).argmax(2) == yv[:, None]).double().mean(0).tolist()
            for i, acc in enumerate(accs):
                if acc >= best[i]:
                    best[i], kept[i] = acc, (weights[i].detach().clone(), biases[i].detach().clone())
    with torch.no_grad():
        for i, params in enumerate(kept):
            if params is not None:
                weights[i].copy_(params[0])
                biases[i].copy_(params[1])
        W, b = torch.cat(weights), torch.cat(biases)
        scores = Z.linear(W, b, eval_idx) if isinstance(Z, FilteredRows) else torch.addmm(b, Z[eval_idx], W.T)
        return [F.log_softmax(part, 1) for part in scores.split(C, 1)]


def logistic_regression(Z: Tensor, y: Tensor, train: Tensor, eval_idx: Tensor, weight_decay: float, **kw) -> Tensor:
    """The read-out of :func:`logistic_regressions` for one weight decay (same keywords)."""
    return logistic_regressions(Z, y, train, eval_idx, [weight_decay], **kw)[0]
