"""Non-neural graph filters with their published read-out: logistic regression on ``s(S~) X``.

SGC (Wu et al. 2019), S2GC (Zhu & Koniusz 2021), DGC (Wang et al. 2021) and GGCM (Wang et al. 2023)
filter the features once, ``Z = s(S~) X`` with GCN's renormalised adjacency
``S~ = D~^{-1/2} (A + I) D~^{-1/2}`` and ``X`` with rows scaled to sum 1 (the papers' preprocessing),
and train a multinomial logistic regression ``softmax(Z W + b)`` on the labeled nodes. The filters
are those of ``graphstk.spectral.filters``, applied with one sparse product per step to the
whole feature block; GGCM draws its negative graphs from ``seed``
(``graphstk.spectral.filters.random_negative_graph``).

The read-out here is solved to convergence by L-BFGS from zero weights, the minimiser of
``mean cross-entropy + (weight_decay / 2) ||W||^2`` (a convex problem: one answer, whatever the
seed), where the papers run Adam for a fixed number of epochs from a random start; the weight decay
is chosen on validation nodes by the protocol.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .feature_propagation import _lazy_matrix, _product
from ..spectral.filters import Filter, GGCMFilter, HeatKernelFilter, SGCFilter, negative_degree, random_negative_graph

__all__ = ["renormalized_adjacency", "filtered_features", "logistic_regression"]


def renormalized_adjacency(edge_index: Tensor, num_nodes: int, dtype=torch.float64) -> Tensor:
    """``S~ = D~^{-1/2} (A + I) D~^{-1/2}`` as a sparse CSR tensor (PyG's ``gcn_norm`` with self-loops)."""
    from torch_geometric.nn.conv.gcn_conv import gcn_norm

    ei, w = gcn_norm(edge_index, None, int(num_nodes), add_self_loops=True, dtype=dtype)
    return torch.sparse_coo_tensor(ei.flip(0), w, (int(num_nodes),) * 2, check_invariants=False).coalesce().to_sparse_csr()


def filtered_features(edge_index: Tensor, X: Tensor, filt: Filter, seed: int = 0) -> Tensor:
    """``s(S~) X~`` ``[N, d]`` (``X~``: rows of ``X`` scaled to sum 1); GGCM's negative graphs drawn from
    ``seed`` (degree: 20 times the mean degree of the graph, as the paper), one per step."""
    X = X.double()
    X = X / X.sum(1, keepdim=True).clamp_min(torch.finfo(X.dtype).tiny)
    N = X.shape[0]
    S = renormalized_adjacency(edge_index, N).to(X.device)
    mm = _product(S)
    if isinstance(filt, GGCMFilter):
        g = torch.Generator().manual_seed(int(seed))
        k = min(filt.k_neg, (N - 1) // 2 * 2)
        negs = {}

        def negative(step: int, Z: Tensor) -> Tensor:
            if step not in negs:
                negs.clear()
                negs[step] = _product(random_negative_graph(N, k, g, device=X.device))
            return negs[step](Z)
        return filt.apply(mm, X, negative=negative)
    if isinstance(filt, HeatKernelFilter):      # K steps of (1 - t/K) I + (t/K) S~: one product each
        return SGCFilter(filt.K).apply(_product(_lazy_matrix(S, filt.t / filt.K)), X)
    return filt.apply(mm, X)


def ggcm_filter(edge_index: Tensor, num_nodes: int, **kw) -> GGCMFilter:
    """``GGCMFilter`` with the negative degree of the paper: 20 times the graph's mean degree."""
    return GGCMFilter(k_neg=negative_degree(edge_index, num_nodes, 20.0), **kw)


def logistic_regression(Z: Tensor, y: Tensor, train: Tensor, eval_idx: Tensor, weight_decay: float,
                        max_iter: int = 200) -> Tensor:
    """Log-probabilities ``[len(eval_idx), C]`` of the multinomial logistic regression fitted on
    ``(Z[train], y[train])`` minimising ``mean CE + (weight_decay / 2) ||W||^2`` (L-BFGS, zero start)."""
    Zt, yt = Z[train], y[train].long()
    C = int(yt.max()) + 1
    W = torch.zeros(Z.shape[1], C, dtype=Z.dtype, device=Z.device, requires_grad=True)
    b = torch.zeros(C, dtype=Z.dtype, device=Z.device, requires_grad=True)
    opt = torch.optim.LBFGS([W, b], lr=1.0, max_iter=int(max_iter), tolerance_grad=1e-9, tolerance_change=1e-12,
                            history_size=20, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = F.cross_entropy(Zt @ W + b, yt) + 0.5 * float(weight_decay) * (W * W).sum()
        loss.backward()
        return loss
    opt.step(closure)
    with torch.no_grad():
        return F.log_softmax(Z[eval_idx] @ W + b, 1)
