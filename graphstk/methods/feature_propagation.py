"""The computations behind ``graphstk.methods.feature_stkr.feature_stkr_scores``: sparse
features, the graph with feature-neighbour edges (``feature_neighbor_graph``), the graph filters
of ``graphstk.spectral.filters`` applied in column blocks, the cosine blocks of the filtered
rows, and the label-reuse step.

Memory is linear in the graph. The filtered features ``phi = s(S_hat) X~`` are never held whole:
the preprocessed ``X~`` stays a scipy CSR matrix, and its columns are filtered a block at a time
(``s(S_hat)`` acts on each column separately), each block adding its share to the inner products
``phi[rows] phi[labeled]^T`` and to the squared row norms, from which the cosine blocks
``[len(rows), n]`` follow. The working set is one ``[N, w]`` block per filter state (``w`` chosen
from sizes: ``BLOCK_BYTES``) plus the ``[len(rows), n]`` blocks, never an ``N x N`` or an
``N x d`` dense matrix.

Label reuse (``reuse_scores``) is a correct-and-smooth step written with STKR: the residuals of
the kernel read-out on the labeled nodes are regressed by STKR with the inverse Laplacian
(Algorithm 2 of Zhai et al., through ``graphstk.methods.engine.solve``), the correction is added
to the scores, the labeled rows are set to their labels, and the result is smoothed by label
propagation (Eq. 22, the same door). Closed form; only the labels of the labeled nodes are read.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import torch
from torch import Tensor

from torch_geometric.utils import coalesce

from ..operators.graph import clean_edge_list
from ..operators.knn import cosine_neighbors
from ..spectral.filters import GGCMFilter, HeatKernelFilter, S2GCFilter, SGCFilter, negative_degree
from ..spectral.transforms import InverseLaplacian, LabelPropagationFilter
from .engine import solve
from .problem import make_problem

__all__ = ["FILTERS", "BLOCK_BYTES", "feature_neighbors", "sparse_features", "preprocess_sparse", "filter_of", "filter_group",
           "cosine_blocks", "reuse_scores", "check_filter_point", "feature_neighbor_graph"]

#: the graph filters of a grid point's ``filter`` key
FILTERS = ("lazy", "sgc", "s2gc", "dgc", "ggcm")
#: bytes of one ``[N, w]`` float block of filtered feature columns (the width ``w`` follows from ``N``)
BLOCK_BYTES = 64 * 2 ** 20
#: GGCM's negative-graph degree, as a multiple of the graph's mean degree (the paper's value)
NEGATIVE_RATE = 20.0


def check_filter_point(p: dict) -> None:
    """``ValueError`` naming a bad filter or label-reuse key of a grid point."""
    f = p.get("filter", "lazy")
    if f not in FILTERS:
        raise ValueError(f"filter must be one of {FILTERS}, got {f!r}")
    if "alpha" in p and not 0.0 <= float(p["alpha"]) <= 1.0:
        raise ValueError(f"alpha must lie in [0, 1] (the weight of the features in S2GC / GGCM), got {p['alpha']!r}")
    if "t" in p and not float(p["t"]) > 0:
        raise ValueError(f"t must be > 0 (the heat kernel's end time), got {p['t']!r}")
    if "decline_neg" in p and not 0.0 <= float(p["decline_neg"]) <= 1.0:
        raise ValueError(f"decline_neg must lie in [0, 1], got {p['decline_neg']!r}")
    for key in ("reuse_eta", "smooth_eta"):
        if key in p and not 0.0 <= float(p[key]) < 1.0:
            raise ValueError(f"{key} must lie in [0, 1) (0: no step; eta < 1/lambda_1 = 1), got {p[key]!r}")
    if "reuse_beta" in p and not float(p["reuse_beta"]) > 0:
        raise ValueError(f"reuse_beta must be > 0 (the ridge of the correction), got {p['reuse_beta']!r}")
    knn = p.get("knn", 0)
    if isinstance(knn, bool) or int(knn) != knn or knn < 0:
        raise ValueError(f"knn must be an integer >= 0 (feature neighbours per node; 0: the graph alone), got {knn!r}")
    if "knn_weight" in p and not float(p["knn_weight"]) > 0:
        raise ValueError(f"knn_weight must be > 0 (the weight of a feature-neighbour edge), got {p['knn_weight']!r}")


def feature_neighbor_graph(edge_index: Tensor, num_nodes: int, X: sp.csr_matrix, k: int, weight: float,
                           edge_weight: Tensor | None = None, hidden_mask: Tensor | None = None,
                           neighbors: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """The graph ``W + weight * N_k``: the edges of ``edge_index`` as given (self-loops dropped, one
    copy of each ``(row, col)`` pair, weight ``edge_weight`` or 1; both directions for an
    undirected graph, PyG's convention) plus an edge of weight ``weight`` in both directions between
    each node and each of its ``k`` visible nodes of largest cosine similarity of the rows of ``X``
    (the symmetric union: a pair in both lists is added once; a pair with similarity ``<= 0`` never).

    ``W`` is Eq. 23's weight matrix of the base kernel. ``N_k`` joins nodes whose features are
    alike, so that nodes with few or no edges, and in the inductive setting a hidden node whose
    neighbours are hidden too, still reach visible nodes. Only visible nodes (``~hidden_mask``) are
    candidates, and a hidden node's neighbours are found from its own row of ``X`` alone: it adds
    edges to visible nodes only (an out-of-sample row of Eq. 23), and the visible graph does not
    depend on the hidden nodes' features.

    ``X`` are the rows the cosine compares (``feature_stkr_scores`` passes the TF-IDF rows): a
    ``ValueError`` is raised before the search when more than half of the visible rows are zero, as
    TF-IDF rows of dense features are (every feature present at every node has weight 0).

    ``neighbors``: the neighbour lists of :func:`feature_neighbors` for any ``k' >= k`` (its first
    ``k`` columns are the ``k`` nearest), so that several ``(k, weight)`` share one search.

    Returns ``(edge_index [2, E'], edge_weight [E'])``, float64 weights, sorted by (row, col).
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


def feature_neighbors(X: sp.csr_matrix, k: int, hidden_mask: Tensor | None = None) -> Tensor:
    """``[N, k]`` ids of each node's ``k`` visible nodes of largest cosine similarity of the rows of ``X``
    (:func:`graphstk.operators.knn.cosine_neighbors`; ``-1``: none), in decreasing similarity with
    stable ties, so that the first ``k' < k`` columns are the search for ``k'``. Raises a
    ``ValueError`` when more than half of the visible rows are zero (see :func:`feature_neighbor_graph`)."""
    N = X.shape[0]
    visible = np.ones(N, dtype=bool) if hidden_mask is None else ~hidden_mask.cpu().numpy()
    empty = int((np.diff(sp.csr_matrix(X)[visible].indptr) == 0).sum())
    if 2 * empty > int(visible.sum()):
        raise ValueError(f"knn={k}: feature neighbours are found by the cosine of TF-IDF rows of x's non-zero "
                         f"pattern, and {empty} of {int(visible.sum())} visible rows have none (a feature present "
                         "at every node has weight 0, so dense features give empty rows); use knn=0 for dense "
                         "features")
    candidates = None if hidden_mask is None else torch.from_numpy(visible)
    return cosine_neighbors(X, int(k), candidates)[0]


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
    """``graphstk.methods.feature_stkr.preprocess_features`` on a sparse matrix (the same
    formulas: ``"sum"`` rows scaled to sum 1, ``"tfidf"`` presence times ``max(0, log(n_V / (1 + df)))``
    on unit rows with ``df`` counted over visible nodes, ``"raw"`` as given)."""
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


def filter_group(p: dict) -> tuple:
    """The key of the points that share one propagation: the filter and its parameters but the depth."""
    f = p.get("filter", "lazy")
    if f == "lazy":
        return (f, float(p.get("a", 0.5)))
    if f == "s2gc":
        return (f, float(p.get("alpha", 0.05)))
    if f == "dgc":
        return (f, float(p.get("t", 5.27)))
    if f == "ggcm":
        return (f, float(p.get("alpha", 0.15)), float(p.get("decline_neg", 1.0)))
    return (f,)


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
    """``Z -> M Z`` for a torch sparse CSR ``M``; on the CPU through scipy's CSR product (several
    times faster than torch's for a dense right-hand side)."""
    if M.device.type == "cpu":
        A = sp.csr_matrix((M.values().numpy(), M.col_indices().numpy(), M.crow_indices().numpy()), shape=tuple(M.shape))
        return lambda Z: torch.from_numpy(A @ Z.numpy())
    return lambda Z: torch.sparse.mm(M, Z)


def _lazy_matrix(S_csr: Tensor, a: float) -> Tensor:
    N = S_csr.shape[0]
    diag = torch.arange(N, device=S_csr.device).expand(2, N)
    eye = torch.sparse_coo_tensor(diag, torch.full((N,), 1.0 - a, dtype=S_csr.dtype, device=S_csr.device), (N, N),
                                  check_invariants=False)
    return (S_csr.to_sparse_coo() * a + eye).coalesce().to_sparse_csr()


def _projection(graph, S_mm) -> callable:
    """GGCM's mean negative graph ``u u^T`` on the visible nodes (``u = sqrt(d) / ||sqrt(d)||``, visible
    degrees), extended to hidden rows as every other power of ``S_hat``: ``r(x) u u^T``."""
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


def cosine_blocks(S_csr: Tensor, graph, Xf: sp.csr_matrix, group: tuple, depths: list[int], rows: Tensor, n: int,
                  dtype: torch.dtype, k_neg: int) -> dict[int, Tensor]:
    """``{K: cos(phi_K[rows], phi_K[rows[:n]])}`` ``[len(rows), n]`` for the filter ``group`` at each depth
    ``K`` of ``depths`` (``0``: the features themselves), ``phi_K = s_K(S_hat) Xf``, computed a block of
    columns at a time (module docstring)."""
    N, d = Xf.shape
    device = S_csr.device
    lazy = group[0] == "lazy"
    mm = _product(_lazy_matrix(S_csr, group[1]) if lazy else S_csr)
    extra = {}
    if group[0] == "ggcm":
        extra["projection"] = _projection(graph, _product(S_csr))
    filt = filter_of(group, max(max(depths), 1), k_neg)[0]
    pos = [k for k in depths if k > 0]
    # the heat kernel in k steps is SGC's filter on the lazy matrix (1 - t/k) I + (t/k) S_hat: one product a step
    heat = {k: _product(_lazy_matrix(S_csr, group[1] / k)) for k in pos} if group[0] == "dgc" else None
    G = {k: torch.zeros(rows.numel(), n, dtype=dtype, device=device) for k in depths}
    nr = {k: torch.zeros(rows.numel(), dtype=dtype, device=device) for k in depths}
    width = max(1, min(d, BLOCK_BYTES // (8 * max(N, 1))))
    for c0 in range(0, d, width):
        Z = torch.from_numpy(Xf[:, c0:c0 + width].toarray()).to(device=device, dtype=dtype)
        outs = [(0, Z)] if 0 in depths else []
        if heat is not None:
            outs = [*outs, *((k, SGCFilter(k).apply(heat[k], Z)) for k in pos)]
        elif pos:
            outs = [*outs, *filt.iter_depths(mm, Z, pos, **extra)]
        for k, Zk in outs:
            A = Zk[rows]
            G[k].addmm_(A, A[:n].T)
            nr[k].add_((A * A).sum(1))
    out = {}
    for k in depths:
        r = nr[k].sqrt().clamp_min(torch.finfo(dtype).tiny)
        out[k] = (G[k] / r[:, None] / r[None, :n]).clamp_(-1.0, 1.0)
    return out


def reuse_scores(F: Tensor, Y: Tensor, train: Tensor, graph, points: list[dict], C: int) -> list[Tensor]:
    """Correct-and-smooth with STKR for a batch of grid points sharing ``F [P, N, C]`` (each point's
    scores at every node) and ``Y [n, C]`` (the targets of ``train``): returns ``[N, C]`` per point.

    For a point with ``reuse_eta > 0``: the residuals ``R = Y - F[train]`` are regressed by STKR with
    ``s(l) = l / (1 - reuse_eta l)`` (Example 1 of Zhai et al., Algorithm 2; ridge ``reuse_beta``,
    default 1e-2) and the prediction at every node is added to ``F``. With ``smooth_eta > 0``:
    the labeled rows are set to ``Y`` and the result ``B`` is smoothed, ``(I - smooth_eta S)^{-1} B``
    on the visible nodes (Eq. 22 with a right-hand side on every row); a hidden node ``x`` gets
    ``B(x) + smooth_eta r(x) Yhat_V`` (the same equation's out-of-sample row). Both solves go through
    ``graphstk.methods.engine.solve``, one batched solve per ``(eta, beta)`` value, routed by
    :mod:`graphstk.methods.routes` (``solver="auto"``).
    """
    # each point's scores on the scale of its targets (the norm of Y over the norm of F's labeled rows),
    # so that the correction and the clamped labeled rows weigh as much as the read-out
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
