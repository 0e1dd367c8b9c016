"""Non-neural graph filters with their published read-out: logistic regression on ``s(S~) X``.

SGC (Wu et al. 2019), S2GC (Zhu & Koniusz 2021), DGC (Wang et al. 2021) and GGCM (Wang et al. 2023)
filter the features once, ``Z = s(S~) X`` with GCN's renormalised adjacency
``S~ = D~^{-1/2} (A + I) D~^{-1/2}`` and ``X`` with rows scaled to sum 1 (the papers' preprocessing),
and train a multinomial logistic regression ``softmax(Z W + b)`` on the labeled nodes. The filters
are those of ``graphstk.spectral.filters``, applied with one sparse product per step to the
whole feature block; GGCM draws its negative graphs from ``seed``
(``graphstk.spectral.filters.random_negative_graph``).

The read-out is the papers' own (Wu et al. 2019, Sec. 3.1 and the training set-up of Sec. 4, which
S2GC, DGC and GGCM reuse): ``torch.nn.Linear(d, C)`` from PyTorch's default initialisation (seeded),
trained full-batch by Adam with learning rate 0.2 for 100 epochs on the cross-entropy of the labeled
nodes, the weight decay as Adam's L2 term. The fixed epoch budget is part of the model: it stops
well before the regularised minimum, an early stop that a converged solver would not have. The
weight decay is chosen on the validation nodes by the protocol, over SGC's published search range
(:data:`WEIGHT_DECAYS`).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from ..operators.graph import GraphKernel
from .feature_propagation import _lazy_matrix, _product
from ..spectral.filters import Filter, GGCMFilter, HeatKernelFilter, SGCFilter, negative_degree, random_negative_graph

__all__ = ["renormalized_adjacency", "filtered_features", "logistic_regression", "WEIGHT_DECAYS"]

#: the weight decays of the read-out's selection: SGC's hyperopt range [1e-10, 1e-4] (Wu et al. 2019,
#: Sec. 4 and their released tuning script) on a log grid, widened by two decades upwards so that a
#: choice of 1e-4 lies inside it; strongest first (validation ties go to the stronger regularisation)
WEIGHT_DECAYS = (1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10)


def renormalized_adjacency(edge_index: Tensor, num_nodes: int, dtype=torch.float64) -> Tensor:
    """``S~ = D~^{-1/2} (A + I) D~^{-1/2}`` as a sparse CSR tensor: PyG's ``gcn_norm`` with self-loops (every node
    one loop of weight 1, replacing those of ``edge_index``), by :meth:`graphstk.operators.GraphKernel.from_edges`."""
    N, (src, tgt) = int(num_nodes), edge_index.long()
    keep, loops = src != tgt, torch.arange(N, device=edge_index.device)
    tgt, src = torch.cat([tgt[keep], loops]), torch.cat([src[keep], loops])
    return GraphKernel.from_edges(tgt, src, torch.ones(tgt.numel(), dtype=dtype, device=tgt.device), N).S.csr


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


def logistic_regression(Z: Tensor, y: Tensor, train: Tensor, eval_idx: Tensor, weight_decay: float, *,
                        seed: int = 0, epochs: int = 100, lr: float = 0.2) -> Tensor:
    """Log-probabilities ``[len(eval_idx), C]`` of the papers' read-out (see the module doc): a linear
    layer ``torch.nn.Linear(d, C)`` initialised from ``seed``, trained by full-batch Adam (``lr``,
    ``weight_decay``) for ``epochs`` epochs on the cross-entropy of ``(Z[train], y[train])``."""
    Zt, yt = Z[train], y[train].long()
    C = int(yt.max()) + 1
    gen = torch.random.fork_rng(devices=[])
    with gen:
        torch.manual_seed(int(seed))
        lin = torch.nn.Linear(Z.shape[1], C).to(device=Z.device, dtype=Z.dtype)
    opt = torch.optim.Adam(lin.parameters(), lr=float(lr), weight_decay=float(weight_decay))
    for _ in range(int(epochs)):
        opt.zero_grad()
        F.cross_entropy(lin(Zt), yt).backward()
        opt.step()
    with torch.no_grad():
        return F.log_softmax(lin(Z[eval_idx]), 1)
