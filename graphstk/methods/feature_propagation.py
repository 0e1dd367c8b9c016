"""The computations behind :func:`graphstk.methods.feature_stkr.feature_stkr_scores`: sparse features, feature
neighbours, the graph filters applied a block of columns at a time (memory linear in the graph), the cosine blocks
of the filtered rows, and label reuse (correct-and-smooth with STKR). Explained in docs/feature_stkr.md.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import scipy.sparse as sp
import torch
from torch import Tensor

from torch_geometric.utils import coalesce

from .._hashing import content_hash
from ..operators.base import blockwise_columns
from ..operators.graph import clean_edge_list
from ..operators.knn import cosine_neighbors
from ..spectral.filters import GGCMFilter, HeatKernelFilter, S2GCFilter, SGCFilter, negative_degree
from ..spectral.transforms import InverseLaplacian, LabelPropagationFilter
from .engine import solve
from .problem import make_problem

__all__ = ["FILTERS", "BLOCK_BYTES", "feature_neighbors", "sparse_features", "preprocess_sparse", "filter_of",
           "filter_group", "identity_columns", "cosine_blocks", "filtered_norms", "labeled_route_applies",
           "shared_propagation", "reuse_scores", "check_filter_point", "feature_neighbor_graph"]

#: the graph filters of a grid point's ``filter`` key
FILTERS = ("lazy", "sgc", "s2gc", "dgc", "ggcm")
#: bytes of one ``[N, w]`` float block of filtered feature columns (the width ``w`` follows from ``N``)
BLOCK_BYTES = 64 * 2 ** 20
#: GGCM's negative-graph degree, as a multiple of the graph's mean degree (the paper's value)
NEGATIVE_RATE = 20.0


def _unit(v: float) -> bool:
    return 0.0 <= v <= 1.0


def _positive(v: float) -> bool:
    return v > 0


#: ``(key, test, what the value must do)`` of a grid point's filter, label-reuse and neighbour keys
POINT_RANGES = (("alpha", _unit, "lie in [0, 1] (the weight of the features in S2GC / GGCM)"),
                ("t", _positive, "be > 0 (the heat kernel's end time)"),
                ("decline_neg", _unit, "lie in [0, 1]"),
                *((k, lambda v: 0.0 <= v < 1.0, "lie in [0, 1) (0: no step; eta < 1/lambda_1 = 1)")
                  for k in ("reuse_eta", "smooth_eta")),
                ("reuse_beta", _positive, "be > 0 (the ridge of the correction)"),
                ("knn_weight", _positive, "be > 0 (the weight of a feature-neighbour edge)"))


def check_ranges(p: dict, ranges) -> None:
    """``ValueError`` naming the first key of ``p`` outside its range (rows ``(key, test, what)``)."""
    for key, ok, what in ranges:
        if key in p and not ok(float(p[key])):
            raise ValueError(f"{key} must {what}, got {p[key]!r}")


def check_filter_point(p: dict) -> None:
    """``ValueError`` naming a bad filter, label-reuse or neighbour key of a grid point."""
    f = p.get("filter", "lazy")
    if f not in FILTERS:
        raise ValueError(f"filter must be one of {FILTERS}, got {f!r}")
    check_ranges(p, POINT_RANGES)
    knn = p.get("knn", 0)
    if isinstance(knn, bool) or int(knn) != knn or knn < 0:
        raise ValueError(f"knn must be an integer >= 0 (feature neighbours per node; 0: the graph alone), got {knn!r}")


def feature_neighbor_graph(edge_index: Tensor, num_nodes: int, X: sp.csr_matrix, k: int, weight: float,
                           edge_weight: Tensor | None = None, hidden_mask: Tensor | None = None,
                           neighbors: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """The graph ``W + weight * N_k`` (docs/feature_stkr.md, "Feature neighbours").

    ``W``: the edges of ``edge_index`` (self-loops dropped, one copy of each pair, weight ``edge_weight`` or 1);
    ``N_k``: an edge both ways between each node and each of its ``k`` visible nodes (``~hidden_mask``) of largest
    positive cosine of the rows of ``X``, each pair once. ``neighbors``: :func:`feature_neighbors`' lists for any
    ``k' >= k`` (one search for several ``k``). Raises ``ValueError`` when over half the visible rows of ``X`` are
    zero. Returns ``(edge_index [2, E'], edge_weight [E'])``, float64 weights, sorted by (row, col).
    """
    N = int(num_nodes)
    if neighbors is None:
        neighbors = feature_neighbors(X, k, hidden_mask)
    if neighbors.shape[1] < k:
        raise ValueError(f"neighbors holds {neighbors.shape[1]} neighbours per node, fewer than knn = {k}")
    ei, w = clean_edge_list(edge_index, N, edge_weight)
    ei = ei.long().cpu()
    w = torch.ones(ei.shape[1], dtype=torch.float64) if w is None else w.detach().double().cpu()
    nbr = neighbors[:, :int(k)]
    src = torch.arange(N).repeat_interleave(nbr.shape[1])
    dst = nbr.flatten()
    keep = dst >= 0
    pairs = torch.stack([torch.cat([src[keep], dst[keep]]), torch.cat([dst[keep], src[keep]])])
    pairs = coalesce(pairs, num_nodes=N)                              # the symmetric union, each pair once
    both = torch.cat([ei, pairs], 1)
    vals = torch.cat([w, torch.full((pairs.shape[1],), float(weight), dtype=torch.float64)])
    out, total = coalesce(both, vals, N, reduce="sum")                # W + weight * N_k
    return out.to(edge_index.device), total.to(edge_index.device)


def feature_neighbors(X: sp.csr_matrix, k: int, hidden_mask: Tensor | None = None, cache: dict | None = None) -> Tensor:
    """``[N, k]`` ids of each node's ``k`` visible nodes of largest cosine of the rows of ``X`` (``-1``: none), in
    decreasing similarity with stable ties (:func:`graphstk.operators.knn.cosine_neighbors`), so the lists for a
    smaller ``k`` are the first columns of these. ``cache``: a dict the caller keeps across calls (the splits of one
    graph); the lists are kept in it, keyed on ``X`` and the hidden nodes, and a call for at most as many
    neighbours as an earlier one reads the first ``k`` columns of its lists."""
    N = X.shape[0]
    visible = np.ones(N, dtype=bool) if hidden_mask is None else ~hidden_mask.cpu().numpy()
    X = sp.csr_matrix(X)
    key = None if cache is None else content_hash("feature_neighbors", X, visible)
    if key is not None and key in cache and cache[key].shape[1] >= int(k):
        return cache[key][:, :int(k)]
    empty = int((np.diff(X[visible].indptr) == 0).sum())
    if 2 * empty > int(visible.sum()):
        raise ValueError(f"knn={k}: feature neighbours are found by the cosine of TF-IDF rows of x's non-zero "
                         f"pattern, and {empty} of {int(visible.sum())} visible rows have none (a feature present "
                         "at every node has weight 0, so dense features give empty rows); use knn=0 for dense "
                         "features")
    candidates = None if hidden_mask is None else torch.from_numpy(visible)
    neighbors = cosine_neighbors(X, int(k), candidates)[0]
    if key is not None:
        cache[key] = neighbors
    return neighbors


def sparse_features(X) -> sp.csr_matrix:
    """``X`` (torch dense or sparse, numpy, scipy.sparse) as a float64 CSR matrix; finite values only."""
    if X is None:
        raise ValueError("feature-aware STKR needs node features (X is None); for the graph alone use graphstk.STKR")
    if isinstance(X, Tensor):
        X = X.detach().cpu()
        if X.is_sparse or X.layout != torch.strided:
            X = X.to_sparse_coo().coalesce()
            i, v = X.indices().numpy(), X.values().double().numpy()
            X = sp.csr_matrix((v, (i[0], i[1])), shape=tuple(X.shape))
        else:
            X = X.double().numpy()
    X = sp.csr_matrix(X, dtype=np.float64)
    if X.ndim != 2 or not np.isfinite(X.data).all():
        raise ValueError(f"X must be a finite 2-D [num_nodes, d] matrix, got shape {X.shape}")
    return X


def _scale_rows(X: sp.csr_matrix, s: np.ndarray) -> sp.csr_matrix:
    return sp.csr_matrix(sp.diags(s) @ X)


def preprocess_sparse(X: sp.csr_matrix, kind: str, visible: Tensor | None = None) -> sp.csr_matrix:
    """:func:`graphstk.methods.feature_stkr.preprocess_features` on a sparse matrix (the same formulas)."""
    if kind == "raw":
        return X
    if kind == "sum":
        s = np.asarray(X.sum(1)).ravel()
        return _scale_rows(X, np.divide(1.0, s, out=np.zeros_like(s), where=s > 0))
    if kind != "tfidf":
        raise ValueError(f"features must be one of ('sum', 'tfidf', 'raw'), got {kind!r}")
    B = X.copy()
    B.data = (B.data != 0).astype(np.float64)
    B.eliminate_zeros()
    Bv = B if visible is None else B[visible.cpu().numpy()]
    idf = np.maximum(np.log(Bv.shape[0] / (1.0 + np.asarray(Bv.sum(0)).ravel())), 0.0)
    T = sp.csr_matrix(B @ sp.diags(idf))
    nrm = np.sqrt(np.asarray(T.multiply(T).sum(1)).ravel())
    return _scale_rows(T, np.divide(1.0, nrm, out=np.zeros_like(nrm), where=nrm > 0))


#: per filter, its parameters (grid key, default) that, with the filter, key the points sharing one propagation
FILTER_PARAMS = {"lazy": (("a", 0.5),), "sgc": (), "s2gc": (("alpha", 0.05),), "dgc": (("t", 5.27),),
                 "ggcm": (("alpha", 0.15), ("decline_neg", 1.0))}


def filter_group(p: dict) -> tuple:
    """The key of the points that share one propagation: the filter and its parameters but the depth."""
    f = p.get("filter", "lazy")
    return (f, *(float(p.get(key, default)) for key, default in FILTER_PARAMS[f]))


def filter_of(group: tuple, depth: int, k_neg: int = 2):
    """``(filter, uses_lazy_matrix)``: the ``graphstk.spectral.filters`` object of a group and depth;
    ``uses_lazy_matrix``: the SGC filter applied with ``(1 - a) I + a S_hat`` (the lazy walk)."""
    f = group[0]
    if f == "lazy":
        return SGCFilter(depth), True
    if f == "sgc":
        return SGCFilter(depth), False
    if f == "s2gc":
        return S2GCFilter(depth, group[1]), False
    if f == "dgc":
        return HeatKernelFilter(group[1], depth), False
    return GGCMFilter(depth, group[1], k_neg, decline_neg=group[2]), False


def _product(M) -> callable:
    """``Z -> M Z`` for a torch sparse CSR ``M``: torch's product, whose rows are shared among its threads; with one
    CPU thread, scipy's CSR product, faster there (``bench/baseline_products.py --threads 1``). Both sum each row in
    the order of its entries, so they give the same numbers; both run a cache-sized block of columns at a time
    (:func:`~graphstk.operators.base.blockwise_columns`)."""
    if M.device.type == "cpu" and torch.get_num_threads() == 1:
        A = sp.csr_matrix((M.values().numpy(), M.col_indices().numpy(), M.crow_indices().numpy()), shape=tuple(M.shape))
        return lambda Z: blockwise_columns(lambda B: torch.from_numpy(A @ B.numpy()), Z)
    return lambda Z: blockwise_columns(lambda B: torch.sparse.mm(M, B), Z)


def identity_columns(N: int, idx: Tensor, dtype: torch.dtype, device) -> Tensor:
    """``E_idx`` ``[N, len(idx)]``: the identity's columns ``idx``, the input of a filter's transposed pass that
    reads the rows ``idx`` of its output (``(s(S)^T E_idx)^T X = (s(S) X)[idx]``)."""
    E = torch.zeros(N, idx.numel(), dtype=dtype, device=device)
    E[idx.to(device), torch.arange(idx.numel(), device=device)] = 1.0
    return E


def _lazy_matrix(S_csr: Tensor, a: float) -> Tensor:
    N = S_csr.shape[0]
    diag = torch.arange(N, device=S_csr.device).expand(2, N)
    eye = torch.sparse_coo_tensor(diag, torch.full((N,), 1.0 - a, dtype=S_csr.dtype, device=S_csr.device), (N, N),
                                  check_invariants=False)
    return (S_csr.to_sparse_coo() * a + eye).coalesce().to_sparse_csr()


def _transpose(M: Tensor) -> Tensor:
    """``M^T`` of a torch sparse CSR ``M``, as a sparse CSR tensor."""
    return M.to_sparse_coo().t().coalesce().to_sparse_csr()


def _projection(graph, S_mm) -> callable:
    """GGCM's mean negative graph ``u u^T`` (``u = sqrt(d) / ||sqrt(d)||``), hidden rows ``r(x) u u^T``."""
    N = graph.num_nodes
    u = torch.zeros(N, dtype=graph.dtype, device=graph.device)
    u[graph.visible] = graph.degree.to(graph.dtype).clamp_min(0).sqrt()
    u = u / u.norm().clamp_min(torch.finfo(u.dtype).tiny)
    hidden = graph.hidden_mask

    def proj(Z: Tensor) -> Tensor:
        P = u[:, None] * (u @ Z)[None, :]
        if bool(hidden.any()):
            P[hidden] = S_mm(P)[hidden]
        return P
    return proj


def _filtered(M: Tensor, graph, group: tuple, depths: list[int], k_neg: int) -> callable:
    """``(Z, only=None) -> [(K, s_K(M) Z) for K in depths]`` (``K = 0``: ``Z``; ``only``: a subset of ``depths``)
    for the filter ``group`` on the operator ``M`` (a torch sparse CSR): one propagation for every depth (the heat
    kernel: one per depth, its step is ``t / K``). The matrices are built once, for every call."""
    pos = [k for k in depths if k > 0]
    if group[0] == "dgc":   # the heat kernel in k steps is SGC's filter on the lazy matrix (1 - t/k) I + (t/k) M
        heat = {k: _product(_lazy_matrix(M, group[1] / k)) for k in pos}

        def steps(Z, ks):
            return [(k, SGCFilter(k).apply(heat[k], Z)) for k in ks]
    else:
        mm = _product(_lazy_matrix(M, group[1]) if group[0] == "lazy" else M)
        extra = {"projection": _projection(graph, _product(M))} if group[0] == "ggcm" else {}
        filt = filter_of(group, max(max(depths), 1), k_neg)[0]

        def steps(Z, ks):
            return list(filt.iter_depths(mm, Z, ks, **extra)) if ks else []

    def run(Z, only=None):
        ks = depths if only is None else only
        pos = [k for k in ks if k > 0]
        # the filter acts on each column alone: a cache-sized block of columns goes through every step
        return ([(0, Z)] if 0 in ks else []) + (blockwise_columns(lambda B: steps(B, pos), Z) if pos else [])
    return run


def _power_sums(M: Tensor, depths: list[int]) -> callable:
    """``Z -> [(K, sum_{k=1}^K M^k Z) for K in depths]`` (``K = 0``: ``Z``), one propagation: S2GC's filter of every
    ``alpha`` is :meth:`~graphstk.spectral.filters.S2GCFilter.mix` of these sums."""
    mm, pos = _product(M), [k for k in depths if k > 0]
    sums = S2GCFilter(max(pos, default=1))

    def run(Z):
        return ([(0, Z)] if 0 in depths else []) + (
            blockwise_columns(lambda B: list(sums.iter_power_sums(mm, B, pos)), Z) if pos else [])
    return run


def filtered_norms(S_csr: Tensor, graph, Xf: sp.csr_matrix, groups: list[tuple], depths: list[int],
                   dtype: torch.dtype, k_neg: int) -> dict[tuple, dict[int, Tensor]]:
    """``{group: {K: ||phi_K[i]||^2 for every node i}}``, ``phi_K = s_K(S_hat) Xf`` for each filter group of
    ``groups``: the columns of ``Xf`` filtered a block of ``BLOCK_BYTES`` at a time. They depend on the graph and
    the features, not on the labels. S2GC's groups (one per ``alpha``) share one propagation, the sums of the
    powers, mixed per ``alpha`` as the filter mixes them: each group's norms are those of its own propagation, bit
    for bit."""
    N, d = Xf.shape
    s2gc = [g for g in groups if g[0] == "s2gc"]
    runs = [([g], _filtered(S_csr, graph, g, depths, k_neg)) for g in groups if g[0] != "s2gc"]
    if s2gc:
        runs.append((s2gc, _power_sums(S_csr, depths)))
    mixers = {g: S2GCFilter(alpha=g[1]) for g in s2gc}      # each alpha's filter from the sums of the powers
    nr = {g: {k: torch.zeros(N, dtype=dtype, device=S_csr.device) for k in depths} for g in groups}
    width = max(1, min(d, BLOCK_BYTES // (8 * max(N, 1))))
    for c0 in range(0, d, width):
        Z = torch.from_numpy(Xf[:, c0:c0 + width].toarray()).to(device=S_csr.device, dtype=dtype)
        for members, run in runs:
            for k, Zk in run(Z):
                for g in members:
                    phi = mixers[g].mix(Z, Zk, k) if g in mixers and k > 0 else Zk
                    nr[g][k].add_((phi * phi).sum(1))
    return nr


def labeled_route_applies(group: tuple, graph) -> bool:
    """Whether :func:`cosine_blocks` may take the labeled and rows routes: the filter's transpose is at hand. A
    polynomial filter's is the same polynomial of ``S_hat^T``; GGCM's (its negative graph replaced by the mean
    ``u u^T``) is :meth:`~graphstk.spectral.filters.GGCMFilter.apply_transposed` when ``S`` and ``u u^T`` are
    symmetric, i.e. when no node is hidden (a hidden row of the mean negative graph is an out-of-sample row)."""
    return group[0] != "ggcm" or not bool(graph.hidden_mask.any())


def _transposed(S_csr: Tensor, graph, group: tuple, depths: list[int], k_neg: int) -> callable:
    """``Z -> [(K, s_K(S_hat)^T Z) for K in depths]`` where :func:`labeled_route_applies`."""
    if group[0] != "ggcm":
        return _filtered(_transpose(S_csr), graph, group, depths, k_neg)
    mm = _product(S_csr)
    proj = _projection(graph, mm)
    filt = filter_of(group, max(max(depths), 1), k_neg)[0]
    return lambda Z: blockwise_columns(lambda B: [
        (k, B if k == 0 else filt.with_depth(k).apply_transposed(mm, B, lambda _, W: proj(W))) for k in depths], Z)


def _features_transposed(Xf: sp.csr_matrix, P: Tensor) -> Tensor:
    """``Xf^T P`` ``[d, w]`` on the CPU, a cache-sized block of the columns of ``P`` at a time
    (:func:`~graphstk.operators.base.blockwise_columns`; the same numbers as one product)."""
    XT = Xf.T
    return blockwise_columns(lambda B: torch.from_numpy(XT @ B.numpy()), P.cpu())


def _route_products(group: tuple, depths: list[int]) -> tuple[int, int, int]:
    """Sparse products per propagated column of :func:`cosine_blocks`' passes for the filter ``group`` at ``depths``:
    ``(transposed, each, once)``: the transposed pass giving every depth (a polynomial filter reads them off one
    propagation; DGC's heat kernel and GGCM's transpose run one per depth, GGCM's ``2 K - 1`` products), the forward
    passes one per depth (the labeled route), and one forward pass giving every depth (the column route)."""
    pos = [k for k in depths if k > 0]
    if not pos:
        return 0, 0, 0
    each = sum(pos)
    if group[0] == "dgc":
        return each, each, each
    if group[0] == "ggcm":
        return sum(2 * k - 1 for k in pos), each, max(pos)
    return max(pos), each, max(pos)


def shared_propagation(group: tuple) -> tuple:
    """The key of the filter groups whose rows route shares one propagation (:func:`cosine_blocks`): S2GC's groups
    of every ``alpha`` (the sums of the powers, mixed per ``alpha``), else the group itself."""
    return ("s2gc",) if group[0] == "s2gc" else group


def _rows_products(S_csr: Tensor, graph, Xf: sp.csr_matrix, group: tuple, depths: list[int], rows: Tensor, n: int,
                   dtype: torch.dtype, k_neg: int, propagated: dict | None) -> tuple[dict, dict]:
    """:func:`cosine_blocks`' rows route: ``({K: phi_K[rows] phi_K[rows[:n]]^T}, {K: ||phi_K[rows]||^2})``."""
    N, device = Xf.shape[0], S_csr.device
    key = None if propagated is None else content_hash(S_csr.crow_indices(), S_csr.col_indices(), S_csr.values(),
                                                       rows, shared_propagation(group), depths, dtype, str(device))
    held = key is not None and key in propagated
    E = identity_columns(N, rows, dtype, device) if not held or group[0] == "s2gc" else None
    if held:
        P = propagated[key]
    else:
        # s_K(S_hat)^T E_rows; S2GC: the sums of the powers of S_hat^T, mixed below as S2GCFilter mixes them
        P = (_power_sums(_transpose(S_csr), depths) if group[0] == "s2gc"
             else _transposed(S_csr, graph, group, depths, k_neg))(E)
        if key is not None:
            propagated[key] = P
    if group[0] == "s2gc":
        mixer = S2GCFilter(alpha=group[1])
        P = [(k, Pk if k == 0 else mixer.mix(E, Pk, k)) for k, Pk in P]
    del E
    G, nr = {}, {}
    for k, Pk in P:
        phi = _features_transposed(Xf, Pk).T.contiguous().to(device=device, dtype=dtype)    # phi_K[rows]
        G[k] = phi @ phi[:n].T
        nr[k] = (phi * phi).sum(1)
    return G, nr


def _labeled_products(S_csr: Tensor, graph, Xf: sp.csr_matrix, group: tuple, depths: list[int], rows: Tensor,
                      n: int, dtype: torch.dtype, k_neg: int, norm_cache: dict | None,
                      norm_groups: Sequence[tuple]) -> tuple[dict, dict]:
    """:func:`cosine_blocks`' labeled route: the inner products from the labeled columns, the norms from
    ``norm_cache`` (or computed for the missing depths and kept there)."""
    N, device = Xf.shape[0], S_csr.device
    # kept per depth (a filter's rows at depth K do not depend on the other depths asked for): a call for a
    # subset of the depths of an earlier one, such as the chosen grid point alone, filters no column again
    # the graph and features hashed once, then one key per filter group
    graph_key = None if norm_cache is None else content_hash(S_csr.crow_indices(), S_csr.col_indices(),
                                                             S_csr.values(), Xf, dtype, str(device))

    def held(g: tuple) -> dict:
        return {} if norm_cache is None else norm_cache.setdefault(content_hash(graph_key, g), {})
    norms = held(group)
    missing = [k for k in depths if k not in norms]
    if missing:
        also = [g for g in dict.fromkeys(norm_groups) if g != group] if norm_cache is not None else []
        computed = filtered_norms(S_csr, graph, Xf, [group, *also], missing, dtype, k_neg)
        norms.update(computed[group])
        for g in also:
            kept = held(g)
            for k, v in computed[g].items():
                kept.setdefault(k, v)
    nr = {k: norms[k][rows] for k in depths}
    E = identity_columns(N, rows[:n], dtype, device)
    forward = _filtered(S_csr, graph, group, depths, k_neg)
    G = {}
    for k, Pk in _transposed(S_csr, graph, group, depths, k_neg)(E):    # s_K(S_hat)^T E_L
        W = torch.from_numpy(Xf @ _features_transposed(Xf, Pk).numpy())    # Xf phi_K[L]^T
        G[k] = forward(W.to(device=device, dtype=dtype), [k])[0][1][rows]
    return G, nr


def _column_products(S_csr: Tensor, graph, Xf: sp.csr_matrix, group: tuple, depths: list[int], rows: Tensor,
                     n: int, dtype: torch.dtype, k_neg: int) -> tuple[dict, dict]:
    """:func:`cosine_blocks`' column route: the feature columns filtered a block of ``BLOCK_BYTES`` at a time."""
    (N, d), device = Xf.shape, S_csr.device
    filtered = _filtered(S_csr, graph, group, depths, k_neg)
    G = {k: torch.zeros(rows.numel(), n, dtype=dtype, device=device) for k in depths}
    nr = {k: torch.zeros(rows.numel(), dtype=dtype, device=device) for k in depths}
    width = max(1, min(d, BLOCK_BYTES // (8 * max(N, 1))))
    for c0 in range(0, d, width):
        Z = torch.from_numpy(Xf[:, c0:c0 + width].toarray()).to(device=device, dtype=dtype)
        for k, Zk in filtered(Z):
            A = Zk[rows]
            G[k].addmm_(A, A[:n].T)
            nr[k].add_((A * A).sum(1))
    return G, nr


def cosine_blocks(S_csr: Tensor, graph, Xf: sp.csr_matrix, group: tuple, depths: list[int], rows: Tensor, n: int,
                  dtype: torch.dtype, k_neg: int, norm_cache: dict | None = None,
                  route: str = "auto", norm_groups: Sequence[tuple] = (),
                  propagated: dict | None = None, shared_by: int = 1) -> dict[int, Tensor]:
    """``{K: cos(phi_K[rows], phi_K[rows[:n]])}`` ``[len(rows), n]``, ``phi_K = s_K(S_hat) Xf`` for each depth ``K``
    (``0``: the features); ``rows[:n]`` are the labeled nodes. Three routes give the same blocks to rounding
    (docs/feature_stkr.md, "Memory"):

    ``route="columns"``: the columns of ``Xf`` filtered a block of ``BLOCK_BYTES`` at a time, each block adding its
    part to ``phi[rows] phi[rows[:n]]^T`` and to the squared row norms. ``route="rows"``, where
    :func:`labeled_route_applies`: the rows themselves, ``phi_K[rows] = (s_K(S_hat)^T E_rows)^T Xf``: one
    propagation of the ``len(rows)`` columns of the identity, then their inner products and norms; ``propagated``
    (a dict the caller keeps for the calls of one graph and one ``rows``: the feature preprocessings of a grid, and
    S2GC's ``alpha`` values, :func:`shared_propagation`) keeps that propagation for the next call with the same
    depths, whose features or ``alpha`` differ: each call's blocks are those of its own propagation, bit for bit.
    ``route="labeled"``, where :func:`labeled_route_applies`: ``phi_K[rows] phi_K[L]^T = (s_K(S_hat) Xf Xf^T
    s_K(S_hat)^T E_L)[rows]``: two propagations of the ``n`` labeled columns instead of one of the ``d`` feature
    columns, and the row norms (:func:`filtered_norms`), which do not depend on the labels, taken from
    ``norm_cache`` (a dict the caller keeps across calls: one entry per graph, features and filter, holding each
    depth computed so far) or computed for the missing depths and kept there, with those of the other filter
    groups ``norm_groups`` (S2GC's other ``alpha`` values: one propagation gives them all, :func:`filtered_norms`).

    ``"auto"`` counts the sparse products each route propagates (:func:`_route_products`) and takes, where the
    transpose is at hand, ``"rows"`` when it propagates fewer columns-times-products than both other routes (the
    rows are few: the validation nodes of a grid), its count divided among the ``shared_by`` calls that read its
    propagation from ``propagated``, else ``"labeled"`` when ``2 n < d`` and a ``norm_cache`` is given (without
    one the norms cost a pass over the feature columns, which gives the inner products as well), else
    ``"columns"``.
    """
    if route not in ("auto", "columns", "labeled", "rows"):
        raise ValueError(f"route must be 'auto', 'columns', 'labeled' or 'rows', got {route!r}")
    d = Xf.shape[1]
    applies = labeled_route_applies(group, graph)
    if route in ("labeled", "rows") and not applies:
        raise ValueError(f"route={route!r} needs the filter's transpose: GGCM's mean negative graph has "
                         "out-of-sample rows for hidden nodes; use route='columns'")
    if route == "auto":
        transposed, each, once = _route_products(group, depths)
        share = max(1, int(shared_by)) if propagated is not None else 1
        if applies and rows.numel() * transposed < share * min(n * (transposed + each), d * once):
            route = "rows"
        elif applies and 2 * n < d and norm_cache is not None:
            route = "labeled"
        else:
            route = "columns"
    if route == "rows":
        G, nr = _rows_products(S_csr, graph, Xf, group, depths, rows, n, dtype, k_neg, propagated)
    elif route == "labeled":
        G, nr = _labeled_products(S_csr, graph, Xf, group, depths, rows, n, dtype, k_neg, norm_cache, norm_groups)
    else:
        G, nr = _column_products(S_csr, graph, Xf, group, depths, rows, n, dtype, k_neg)
    out = {}
    for k in depths:
        r = nr[k].sqrt().clamp_min(torch.finfo(dtype).tiny)
        out[k] = (G[k] / r[:, None] / r[None, :n]).clamp_(-1.0, 1.0)
    return out


def reuse_scores(F: Tensor, Y: Tensor, train: Tensor, graph, points: list[dict], C: int) -> list[Tensor]:
    """Correct-and-smooth with STKR (docs/feature_stkr.md, "Label reuse") for grid points sharing ``F [P, N, C]``
    and the targets ``Y [n, C]`` of ``train``: ``[N, C]`` per point. ``reuse_eta > 0``: the residuals are
    regressed by STKR with the inverse Laplacian (Algorithm 2, ridge ``reuse_beta``, default 1e-2) and added;
    ``smooth_eta > 0``: labeled rows set to ``Y``, then Label-Prop (Eq. 22) with a right-hand side on every row.
    """
    # each point's scores on the scale of its targets, so the correction weighs as much as the read-out
    tiny = torch.finfo(F.dtype).tiny
    out = [F[i] * (Y.norm() / F[i][train].norm().clamp_min(tiny))
           if float(p.get("reuse_eta", 0.0)) > 0 or float(p.get("smooth_eta", 0.0)) > 0 else F[i]
           for i, p in enumerate(points)]
    N = F.shape[1]
    ev = torch.arange(N, device=F.device)
    base = make_problem(graph, None, train, targets=Y)
    by_corr: dict[tuple, list[int]] = {}
    for i, p in enumerate(points):
        if float(p.get("reuse_eta", 0.0)) > 0:
            by_corr.setdefault((float(p["reuse_eta"]), float(p.get("reuse_beta", 1e-2))), []).append(i)
    for (eta, beta), idx in by_corr.items():
        R = torch.cat([Y - out[i][train] for i in idx], dim=1)
        prob = make_problem(graph, None, train, targets=R)
        h = solve(prob, [InverseLaplacian(eta)], [beta]).points[0].h
        corr = prob.rows(ev) @ h
        for j, i in enumerate(idx):
            out[i] = out[i] + corr[:, j * C:(j + 1) * C]
    by_smooth: dict[float, list[int]] = {}
    for i, p in enumerate(points):
        if float(p.get("smooth_eta", 0.0)) > 0:
            by_smooth.setdefault(float(p["smooth_eta"]), []).append(i)
    vis = base.visible if base.visible is not None else ev
    hidden = torch.ones(N, dtype=torch.bool, device=F.device)
    hidden[vis] = False
    hid = hidden.nonzero().flatten()
    for eta, idx in by_smooth.items():
        B = torch.cat([out[i] for i in idx], dim=1)
        B[train] = Y.repeat(1, len(idx))
        prob = base.with_targets(rhs=B[vis])
        Yv = solve(prob, [LabelPropagationFilter(eta)]).points[0].h
        full = B.clone()
        full[vis] = Yv
        if hid.numel():
            full[hid] = B[hid] + eta * (base.rows(hid) @ Yv)
        for j, i in enumerate(idx):
            out[i] = full[:, j * C:(j + 1) * C]
    return out


def k_negative(graph) -> int:
    """GGCM's negative-graph degree for the visible graph (``negative_degree``, rate 20)."""
    r, c, _ = graph.S.coo()
    return negative_degree(torch.stack([r, c]), int(graph.visible.numel()), NEGATIVE_RATE)
