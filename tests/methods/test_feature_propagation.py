"""Feature-aware STKR with the filters of graphstk.spectral.filters, its column blocks and its
label-reuse step, against dense computations written from the formulas; and no label outside the
training nodes reaches a score."""
from __future__ import annotations

import pytest
import torch

import graphstk.methods.feature_propagation as fp
from graphstk.methods.feature_stkr import feature_stkr_scores
from graphstk.operators.composed import lazy_coefficients
from graphstk.spectral.filters import GGCMFilter, HeatKernelFilter, S2GCFilter, SGCFilter
from tests.methods.test_feature_stkr import problem
from tests.operators.test_composed_kernels import dense_filter, dense_pieces

TRAIN, EVAL = [0, 1, 2, 5, 9, 14], [3, 4, 6, 7, 8, 10, 11, 12, 13, 15, 16, 17, 18, 19, 20, 21, 22, 23]
POINTS = [{"filter": "sgc", "depth": 3, "sigma": 0.7, "beta": 1e-2},
          {"filter": "s2gc", "depth": 4, "alpha": 0.1, "sigma": 1.0, "beta": 1e-3},
          {"filter": "dgc", "depth": 6, "t": 2.0, "sigma": 0.7, "beta": 1e-2},
          {"filter": "s2gc", "depth": 4, "alpha": 0.1, "mix": "dyadic", "kernel": "cosine", "beta": 1e-2}]


def dense_matrix(W, hidden, p):
    f = {"sgc": SGCFilter(p["depth"]), "s2gc": S2GCFilter(p["depth"], p.get("alpha", 0.05)),
         "dgc": HeatKernelFilter(p.get("t", 5.27), p["depth"])}[p["filter"]]
    return dense_filter(W, list(hidden), f.coefficients())


def dense_ggcm(W, p):
    """GGCM with its mean negative graph u u^T (transductive), the loop of its docstring with dense matrices."""
    deg = W.sum(1)
    S = dense_pieces(W, [])[1]
    u = deg.sqrt() / deg.sqrt().norm()
    I, Pm = torch.eye(W.shape[0], dtype=W.dtype), torch.outer(u, u)
    k_neg = p["k_neg"]
    U, total = I.clone(), torch.zeros_like(I)
    for k in range(1, p["depth"] + 1):
        c = p.get("decline_neg", 1.0) ** (k - 1)
        V = ((1 - c) * I + c * (2 * I - k_neg * Pm) / (k_neg + 2)) @ U
        U = S @ U
        total += (U + V) / 2
    return p["alpha"] * I + (1 - p["alpha"]) * total / p["depth"]


def dense_scores(P_of, X, y, train, ev, p):
    X = X / X.sum(1, keepdim=True)
    depths = [p["depth"]] if p.get("mix", "last") == "last" else [k for k in (1, 2, 4, 8) if k < p["depth"]] + [p["depth"]]
    G = 0
    for k in depths:
        phi = P_of(dict(p, depth=k)) @ X
        phi = phi / phi.norm(dim=1, keepdim=True).clamp_min(1e-300)      # an isolated node: a zero row
        cos = phi @ phi.T
        G = G + (cos if p.get("kernel", "cosine-gaussian") == "cosine" else torch.exp((cos - 1) / p["sigma"] ** 2))
    G = G / len(depths)
    n = len(train)
    Y = torch.nn.functional.one_hot(y[train], int(y[train].max()) + 1).double()
    Y = Y * (n / (Y.shape[1] * Y.sum(0)))
    alpha = torch.linalg.solve(G[train][:, train] + n * p["beta"] * torch.eye(n, dtype=torch.float64), Y)
    return G[ev][:, train] @ alpha, G, Y


@pytest.mark.parametrize("hidden", [(), (7, 12, 20)], ids=["transductive", "inductive"])
def test_polynomial_filters_match_a_dense_ridge(hidden):
    W, ei, X, y = problem()
    ev = [i for i in EVAL if i not in hidden] + list(hidden)
    got = feature_stkr_scores(ei, X, y, TRAIN, ev, POINTS, hidden=list(hidden) or None)
    for p, s in zip(POINTS, got):
        ref, _, _ = dense_scores(lambda q: dense_matrix(W, hidden, q), X, y, TRAIN, ev, p)
        torch.testing.assert_close(s, ref)


def test_ggcm_filter_matches_a_dense_ridge():
    W, ei, X, y = problem()
    k_neg = fp.k_negative(__import__("graphstk").operators.GraphKernel(ei, X.shape[0], clean_edges=True))
    p = {"filter": "ggcm", "depth": 5, "alpha": 0.15, "decline_neg": 0.5, "sigma": 0.7, "beta": 1e-2}
    got = feature_stkr_scores(ei, X, y, TRAIN, EVAL, [p])[0]
    ref, _, _ = dense_scores(lambda q: dense_ggcm(W, dict(q, k_neg=k_neg)), X, y, TRAIN, EVAL, p)
    torch.testing.assert_close(got, ref)
    assert k_neg % 2 == 0 and k_neg >= 2


def test_column_blocks_give_the_same_scores(monkeypatch):
    W, ei, X, y = problem()
    pts = POINTS + [{"filter": "ggcm", "depth": 4, "alpha": 0.15, "sigma": 0.7, "beta": 1e-2},
                    {"filter": "lazy", "depth": 4, "a": 0.5, "features": "tfidf", "sigma": 0.7, "beta": 1e-2}]
    whole = feature_stkr_scores(ei, X, y, TRAIN, EVAL, pts)
    monkeypatch.setattr(fp, "BLOCK_BYTES", 8 * X.shape[0] * 2)        # two columns per block: three blocks
    blocks = feature_stkr_scores(ei, X, y, TRAIN, EVAL, pts)
    for a, b in zip(whole, blocks):
        torch.testing.assert_close(a, b)
    import scipy.sparse as sp

    sparse = feature_stkr_scores(ei, sp.csr_matrix(X.numpy()), y, TRAIN, EVAL, pts)
    for a, b in zip(whole, sparse):
        torch.testing.assert_close(a, b)


def wide_problem():
    """``problem()`` with 26 feature columns: more than twice the 6 labeled nodes, the labeled route's case."""
    W, ei, X, y = problem()
    g = torch.Generator().manual_seed(3)
    extra = torch.rand(X.shape[0], 20, generator=g, dtype=torch.float64)
    extra[torch.rand(X.shape[0], 20, generator=g) < 0.6] = 0.0
    return W, ei, torch.cat([X, extra], 1), y


def _blocks(ei, X, hidden, group, depths, route, norm_cache=None):
    from graphstk.operators import GraphKernel
    from graphstk.operators.composed import extended_adjacency

    N = X.shape[0]
    hidden_mask = None
    if hidden:
        hidden_mask = torch.zeros(N, dtype=torch.bool)
        hidden_mask[list(hidden)] = True
    graph = GraphKernel(ei, N, hidden=hidden_mask, dtype=torch.float64, clean_edges=True)
    Xf = fp.preprocess_sparse(fp.sparse_features(X), "sum", None if hidden_mask is None else ~hidden_mask)
    rows = torch.tensor(TRAIN + [i for i in range(N) if i not in TRAIN])
    return fp.cosine_blocks(extended_adjacency(graph).csr, graph, Xf, group, depths, rows, len(TRAIN),
                            torch.float64, 2, norm_cache, route=route)


@pytest.mark.parametrize("hidden", [(), (7, 12, 20)], ids=["transductive", "inductive"])
def test_labeled_route_matches_a_dense_ridge(hidden):
    """With more feature columns than twice the labeled nodes and a norm cache, the cosine blocks come from
    propagations of the labeled columns through s(S_hat)^T: every polynomial filter, depth 0 and the dyadic mix,
    against dense."""
    W, ei, X, y = wide_problem()
    ev = [i for i in EVAL if i not in hidden] + list(hidden)
    pts = POINTS + [{"filter": "lazy", "depth": 4, "a": 0.5, "mix": "dyadic", "sigma": 0.7, "beta": 1e-2},
                    {"filter": "sgc", "depth": 0, "sigma": 0.7, "beta": 1e-2}]
    cache: dict = {}
    got = feature_stkr_scores(ei, X, y, TRAIN, ev, pts, hidden=list(hidden) or None, cache=cache)
    assert len(cache) == 4      # the labeled route ran, once per filter group (sgc, s2gc, dgc, lazy)
    for p, s in zip(pts, got):
        lazy = p["filter"] == "lazy"
        dense = (lambda q: dense_filter(W, list(hidden), lazy_coefficients(q["depth"], q["a"]))) if lazy \
            else (lambda q: dense_matrix(W, hidden, q))
        if p["depth"] == 0:
            dense = lambda q: torch.eye(X.shape[0], dtype=torch.float64)   # noqa: E731 - depth 0: the features
        ref, _, _ = dense_scores(dense, X, y, TRAIN, ev, p)
        torch.testing.assert_close(s, ref)


@pytest.mark.parametrize("group,hidden", [(g, h) for g in [("lazy", 0.5), ("sgc",), ("s2gc", 0.1), ("dgc", 2.0)]
                                          for h in [(), (7, 12, 20)]] + [(("ggcm", 0.15, 0.5), ())], ids=str)
def test_the_three_routes_give_the_same_cosine_blocks(group, hidden):
    """Every filter with its transpose at hand (GGCM's mean negative graph: transductive only, test_bad_routes)."""
    W, ei, X, y = wide_problem()
    cols = _blocks(ei, X, hidden, group, [0, 1, 2, 4], "columns")
    for route in ("labeled", "rows"):
        other = _blocks(ei, X, hidden, group, [0, 1, 2, 4], route)
        for k in cols:
            torch.testing.assert_close(other[k], cols[k], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("group", [("lazy", 0.5), ("s2gc", 0.1), ("dgc", 2.0), ("ggcm", 0.15, 1.0)], ids=str)
def test_few_rows_take_the_rows_route_and_its_propagation_serves_every_feature_kind(group, monkeypatch):
    """With few rows (a grid's validation nodes) ``"auto"`` propagates the rows' own columns: no row norm is filtered
    (``filtered_norms`` patched to raise) and the blocks equal the column route's. A second call with the other
    feature preprocessing on the same ``propagated`` dict propagates nothing (``_transposed`` patched to raise) and
    equals its own fresh call bit for bit."""
    from graphstk.operators.graph import GraphKernel
    from graphstk.operators.composed import extended_adjacency
    W, ei, X, y = wide_problem()
    graph = GraphKernel(ei, W.shape[0], dtype=torch.float64)
    S = extended_adjacency(graph).csr
    Xs = fp.sparse_features(X)
    kinds = {f: fp.preprocess_sparse(Xs, f) for f in ("sum", "tfidf")}
    rows, n, depths = torch.tensor(TRAIN + [3, 4]), len(TRAIN), [0, 1, 2, 4]
    transposed, each, once = fp._route_products(group, depths)
    assert rows.numel() * transposed < min(n * (transposed + each), X.shape[1] * once)    # the rows route's case
    cols = {f: fp.cosine_blocks(S, graph, Xf, group, depths, rows, n, torch.float64, 4, None, "columns")
            for f, Xf in kinds.items()}
    fresh = fp.cosine_blocks(S, graph, kinds["tfidf"], group, depths, rows, n, torch.float64, 4, {}, "rows")

    def no_norms(*args, **kwargs):
        raise AssertionError("the rows route filtered the feature columns for the row norms")
    monkeypatch.setattr(fp, "filtered_norms", no_norms)
    propagated: dict = {}
    first = fp.cosine_blocks(S, graph, kinds["sum"], group, depths, rows, n, torch.float64, 4, {},
                             propagated=propagated)
    assert len(propagated) == 1

    def no_propagation(*args, **kwargs):
        raise AssertionError("the rows were propagated again for the second feature kind")
    monkeypatch.setattr(fp, "_transposed", no_propagation)
    second = fp.cosine_blocks(S, graph, kinds["tfidf"], group, depths, rows, n, torch.float64, 4, {},
                              propagated=propagated)
    for k in depths:
        torch.testing.assert_close(first[k], cols["sum"][k], rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(second[k], cols["tfidf"][k], rtol=1e-12, atol=1e-12)
        assert torch.equal(second[k], fresh[k])


def _wide_operator():
    from graphstk.operators.graph import GraphKernel
    from graphstk.operators.composed import extended_adjacency
    W, ei, X, y = wide_problem()
    graph = GraphKernel(ei, W.shape[0], dtype=torch.float64)
    return graph, extended_adjacency(graph).csr, fp.preprocess_sparse(fp.sparse_features(X), "sum")


def test_s2gc_alphas_share_the_rows_routes_propagation(monkeypatch):
    """The rows route of S2GC's second ``alpha`` mixes the sums of the powers kept by the first (``_power_sums``
    patched to raise) and gives the blocks of its own propagation bit for bit; the two ``alpha`` values differ."""
    graph, S, Xf = _wide_operator()
    rows, n, depths = torch.tensor(TRAIN + [3, 4]), len(TRAIN), [0, 1, 2, 4]
    fresh = fp.cosine_blocks(S, graph, Xf, ("s2gc", 0.15), depths, rows, n, torch.float64, 4, None, "rows")
    propagated: dict = {}
    first = fp.cosine_blocks(S, graph, Xf, ("s2gc", 0.05), depths, rows, n, torch.float64, 4, None, "rows",
                             propagated=propagated)

    def no_propagation(*args, **kwargs):
        raise AssertionError("the sums of the powers were propagated again for the second alpha")
    monkeypatch.setattr(fp, "_power_sums", no_propagation)
    second = fp.cosine_blocks(S, graph, Xf, ("s2gc", 0.15), depths, rows, n, torch.float64, 4, None, "rows",
                              propagated=propagated)
    assert all(torch.equal(second[k], fresh[k]) for k in depths)
    assert not torch.allclose(first[4], second[4]), "the alphas must differ"


def test_auto_divides_the_rows_routes_products_among_the_calls_that_share_them(monkeypatch):
    """GGCM's transposed filter runs one pass per depth, so with 12 rows the rows route costs more products than
    the labeled one for one call (the norm cache is filled), but fewer when two feature kinds share it
    (``shared_by=2``: no row norm filtered)."""
    graph, S, Xf = _wide_operator()
    group, rows, n, depths = ("ggcm", 0.15, 1.0), torch.tensor(TRAIN + [3, 4, 6, 7, 8, 10]), len(TRAIN), [0, 1, 2, 4]
    transposed, each, once = fp._route_products(group, depths)
    alone = rows.numel() * transposed
    assert 2 * n < Xf.shape[1] and min(n * (transposed + each), Xf.shape[1] * once) <= alone
    assert alone < 2 * min(n * (transposed + each), Xf.shape[1] * once)
    cache: dict = {}
    labeled = fp.cosine_blocks(S, graph, Xf, group, depths, rows, n, torch.float64, 4, cache, propagated={})
    assert len(cache) == 1                                    # the labeled route filtered the row norms

    def no_norms(*args, **kwargs):
        raise AssertionError("the rows route filtered the feature columns for the row norms")
    monkeypatch.setattr(fp, "filtered_norms", no_norms)
    shared = fp.cosine_blocks(S, graph, Xf, group, depths, rows, n, torch.float64, 4, {}, propagated={}, shared_by=2)
    for k in depths:
        torch.testing.assert_close(shared[k], labeled[k], rtol=1e-12, atol=1e-12)


def test_the_rows_route_matches_a_dense_ridge(monkeypatch):
    """Scores of a few validation nodes, as a grid's selection asks for them: ``feature_stkr_scores`` takes the rows
    route (no row norm filtered: ``filtered_norms`` patched to raise) and gives every filter's dense scores."""
    W, ei, X, y = wide_problem()

    def no_norms(*args, **kwargs):
        raise AssertionError("the rows route filtered the feature columns for the row norms")
    monkeypatch.setattr(fp, "filtered_norms", no_norms)
    pts = POINTS + [{"filter": "lazy", "depth": 4, "a": 0.5, "mix": "dyadic", "sigma": 0.7, "beta": 1e-2}]
    ev = EVAL[:2]
    got = feature_stkr_scores(ei, X, y, TRAIN, ev, pts, cache={})
    for p, s in zip(pts, got):
        lazy = p["filter"] == "lazy"
        dense = (lambda q: dense_filter(W, [], lazy_coefficients(q["depth"], q["a"]))) if lazy \
            else (lambda q: dense_matrix(W, (), q))
        ref, _, _ = dense_scores(dense, X, y, TRAIN, ev, p)
        torch.testing.assert_close(s, ref)


def test_the_norm_cache_is_filled_once_and_read():
    """The row norms of a graph are computed on the first call and read from the cache on the next: norms
    scaled by 4 in the cache halve every cosine of the next call; another hidden set is another entry."""
    W, ei, X, y = wide_problem()
    cache: dict = {}
    first = _blocks(ei, X, (), ("sgc",), [2], "labeled", cache)
    assert len(cache) == 1
    norms = next(iter(cache.values()))
    norms[2] *= 4.0
    second = _blocks(ei, X, (), ("sgc",), [2], "labeled", cache)
    torch.testing.assert_close(second[2], (first[2] / 4.0).clamp(-1, 1))
    _blocks(ei, X, (7, 12), ("sgc",), [2], "labeled", cache)
    assert len(cache) == 2


@pytest.mark.parametrize("group", [("lazy", 0.5), ("s2gc", 0.1), ("ggcm", 0.15, 0.5)], ids=str)
def test_the_norm_cache_keeps_each_depth_and_computes_only_the_missing_ones(group):
    """A call for a subset of the depths of an earlier call (the chosen grid point alone) filters no column again
    and gives that call's blocks bit for bit; a call with a new depth adds it, and the kept depths stay."""
    W, ei, X, y = wide_problem()
    cache: dict = {}
    first = _blocks(ei, X, (), group, [1, 2, 4], "labeled", cache)
    (kept,) = cache.values()
    held = dict(kept)
    assert sorted(held) == [1, 2, 4]
    again = _blocks(ei, X, (), group, [2], "labeled", cache)
    assert torch.equal(again[2], first[2]) and all(kept[k] is held[k] for k in held)
    more = _blocks(ei, X, (), group, [2, 8], "labeled", cache)
    assert sorted(kept) == [1, 2, 4, 8] and all(kept[k] is held[k] for k in held)
    fresh = _blocks(ei, X, (), group, [8], "labeled", {})
    assert torch.equal(more[8], fresh[8])


def test_bad_routes():
    W, ei, X, y = wide_problem()
    for route in ("labeled", "rows"):
        with pytest.raises(ValueError, match="out-of-sample rows for hidden nodes"):
            _blocks(ei, X, (7, 12), ("ggcm", 0.15, 1.0), [2], route)
    with pytest.raises(ValueError, match="route must be"):
        _blocks(ei, X, (), ("sgc",), [2], "diagonal")


def test_label_reuse_matches_a_dense_correct_and_smooth():
    """Correction: STKR with s(l) = l / (1 - eta l) on the residuals (Eq. 7: alpha = (N s(S)_LL + n beta I)^{-1} R,
    scores N s(S)_{.L} alpha); smoothing: (I - eta' S)^{-1} B with B's labeled rows set to Y."""
    W, ei, X, y = problem()
    p = {"filter": "sgc", "depth": 3, "sigma": 0.7, "beta": 1e-2}
    q = dict(p, reuse_eta=0.8, reuse_beta=1e-2, smooth_eta=0.6)
    N, n = X.shape[0], len(TRAIN)
    base, reused = feature_stkr_scores(ei, X, y, TRAIN, list(range(N)), [p, q])
    _, G, Y = dense_scores(lambda r: dense_matrix(W, (), r), X, y, TRAIN, list(range(N)), p)
    torch.testing.assert_close(base, G[:, TRAIN] @ torch.linalg.solve(G[TRAIN][:, TRAIN] + n * 1e-2 * torch.eye(n, dtype=torch.float64), Y))
    _, S, _ = dense_pieces(W, [])
    I = torch.eye(N, dtype=torch.float64)
    F = base * (Y.norm() / base[TRAIN].norm())
    sS = S @ torch.linalg.inv(I - 0.8 * S)
    R = Y - F[TRAIN]
    alpha = torch.linalg.solve(N * sS[TRAIN][:, TRAIN] + n * 1e-2 * torch.eye(n, dtype=torch.float64), R)
    B = F + N * sS[:, TRAIN] @ alpha
    B[TRAIN] = Y
    ref = torch.linalg.solve(I - 0.6 * S, B)
    torch.testing.assert_close(reused, ref, rtol=1e-5, atol=1e-6)


def test_no_label_outside_the_training_nodes_is_read():
    """The train-only fit: every label outside TRAIN permuted (and set to another class) gives the same
    scores, for every filter and with label reuse."""
    W, ei, X, y = problem()
    pts = POINTS + [{"filter": "ggcm", "depth": 4, "alpha": 0.15, "sigma": 0.7, "beta": 1e-2},
                    dict(POINTS[0], reuse_eta=0.9, smooth_eta=0.5)]
    ref = feature_stkr_scores(ei, X, y, TRAIN, EVAL, pts)
    others = torch.tensor([i for i in range(X.shape[0]) if i not in TRAIN])
    for seed in range(3):
        y2 = y.clone()
        perm = torch.randperm(others.numel(), generator=torch.Generator().manual_seed(seed))
        y2[others] = (y[others][perm] + seed) % 3
        assert not torch.equal(y2, y)
        for a, b in zip(ref, feature_stkr_scores(ei, X, y2, TRAIN, EVAL, pts)):
            assert torch.equal(a, b)


def test_bad_filter_points():
    W, ei, X, y = problem()
    for bad, match in (({"filter": "gcn"}, "filter"), ({"filter": "s2gc", "alpha": 2.0}, "alpha"),
                       ({"filter": "dgc", "t": 0.0}, "t must"), ({"reuse_eta": 1.0}, "reuse_eta"),
                       ({"smooth_eta": -0.1}, "smooth_eta"), ({"reuse_beta": 0.0}, "reuse_beta")):
        with pytest.raises(ValueError, match=match):
            feature_stkr_scores(ei, X, y, TRAIN, EVAL, [{"depth": 2, "beta": 1e-2, **bad}])


def dense_neighbor_graph(W, X, k, weight, hidden=()):
    """W + weight * N_k from the definition: N_k(i, j) = 1 when j is among the k visible nodes of largest TF-IDF
    cosine to i (positive cosine), or i among j's; TF-IDF with df over the visible nodes, as the estimator's."""
    n = W.shape[0]
    vis = [i for i in range(n) if i not in hidden]
    B = (X != 0).double()
    idf = torch.log(len(vis) / (1.0 + B[vis].sum(0))).clamp_min(0.0)
    T = B * idf
    T = T / T.norm(dim=1, keepdim=True).clamp_min(1e-300)
    C = T @ T.T
    Nk = torch.zeros(n, n, dtype=torch.float64)
    for i in range(n):
        cand = [j for j in vis if j != i]
        for j in sorted(cand, key=lambda j: (-float(C[i, j]), j))[:k]:
            if C[i, j] > 0:
                Nk[i, j] = Nk[j, i] = 1.0
    return W + weight * Nk


@pytest.mark.parametrize("hidden", [(), (7, 12, 20)], ids=["transductive", "inductive"])
def test_feature_neighbor_graph_is_the_weighted_union(hidden):
    W, ei, X, y = problem()
    mask = torch.zeros(X.shape[0], dtype=torch.bool)
    mask[list(hidden)] = True
    Xt = fp.preprocess_sparse(fp.sparse_features(X), "tfidf", ~mask)
    ei2, w2 = fp.feature_neighbor_graph(ei, X.shape[0], Xt, 3, 0.25, hidden_mask=mask if hidden else None)
    got = torch.zeros(X.shape[0], X.shape[0], dtype=torch.float64)
    got[ei2[0], ei2[1]] = w2
    torch.testing.assert_close(got, dense_neighbor_graph(W, X, 3, 0.25, hidden))
    for x in hidden:               # a hidden node gains edges to visible nodes only
        assert not (got - W)[x, list(hidden)].any() and (got - W)[x].any()


@pytest.mark.parametrize("hidden", [(), (7, 12, 20)], ids=["transductive", "inductive"])
def test_feature_neighbours_match_a_dense_ridge(hidden):
    W, ei, X, y = problem()
    ev = [i for i in EVAL if i not in hidden] + list(hidden)
    pts = [dict(POINTS[0], knn=3, knn_weight=0.25), dict(POINTS[1], knn=2, knn_weight=0.5), POINTS[2]]
    got = feature_stkr_scores(ei, X, y, TRAIN, ev, pts, hidden=list(hidden) or None)
    for p, s in zip(pts, got):
        W2 = dense_neighbor_graph(W, X, p["knn"], p["knn_weight"], hidden) if "knn" in p else W
        ref, _, _ = dense_scores(lambda q: dense_matrix(W2, hidden, q), X, y, TRAIN, ev, p)
        torch.testing.assert_close(s, ref)


def test_feature_neighbours_keep_a_hidden_node_to_itself():
    """Inductive with feature neighbours: a hidden node's features move its own score and no other."""
    W, ei, X, y = problem()
    hidden, ev = [7, 12, 20], list(range(X.shape[0]))
    ev = [i for i in ev if i not in TRAIN]
    p = dict(POINTS[0], knn=3, knn_weight=0.5)
    ref = feature_stkr_scores(ei, X, y, TRAIN, ev, [p], hidden=hidden)[0]
    X2 = X.clone()
    X2[12] = X[3] + X[5]                 # new neighbours for node 12
    got = feature_stkr_scores(ei, X2, y, TRAIN, ev, [p], hidden=hidden)[0]
    moved = [ev[i] for i in range(len(ev)) if not torch.allclose(ref[i], got[i])]
    assert moved == [12]


def test_feature_neighbours_refuse_dense_features():
    """TF-IDF of a non-zero pattern weighs a feature present at every node 0: dense features give empty rows."""
    W, ei, X, y = problem()
    dense = X + 1.0
    with pytest.raises(ValueError, match="use knn=0 for dense features"):
        feature_stkr_scores(ei, dense, y, TRAIN, EVAL, [{"depth": 2, "beta": 1e-2, "knn": 3}])
    feature_stkr_scores(ei, dense, y, TRAIN, EVAL, [{"depth": 2, "beta": 1e-2}])


def test_bad_feature_neighbour_points():
    W, ei, X, y = problem()
    for bad, match in (({"knn": -1}, "knn must"), ({"knn": 2.5}, "knn must"), ({"knn": 2, "knn_weight": 0.0},
                                                                                "knn_weight")):
        with pytest.raises(ValueError, match=match):
            feature_stkr_scores(ei, X, y, TRAIN, EVAL, [{"depth": 2, "beta": 1e-2, **bad}])


@pytest.mark.parametrize("blocks", [False, True], ids=["one block", "column blocks"])
def test_the_product_gives_the_same_numbers_with_one_thread_and_several(blocks, monkeypatch):
    """``_product`` takes scipy's CSR product with one CPU thread and torch's otherwise: the same sums in the
    same order, so the same numbers, whether the columns go through at once or in cache-sized blocks (forced
    to 8 columns here: 8, 8 and 4)."""
    import graphstk.operators.base as OB

    W, ei, X, y = wide_problem()
    A = W + torch.eye(W.shape[0], dtype=W.dtype)
    S = (A / A.sum(1, keepdim=True)).to_sparse_csr()
    Z = torch.rand(W.shape[0], 20, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    whole = torch.sparse.mm(S, Z)
    if blocks:
        monkeypatch.setattr(OB, "WIDE_BLOCK_BYTES", 0)
        monkeypatch.setattr(OB, "CACHE_BLOCK_BYTES", 8 * 8 * W.shape[0])
        assert OB.column_block_width(Z) == 8
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = fp._product(S)(Z)
        torch.set_num_threads(2)
        several = fp._product(S)(Z)
    finally:
        torch.set_num_threads(threads)
    assert torch.equal(one, several)
    assert torch.equal(one, whole)
    torch.testing.assert_close(one, S.to_dense() @ Z, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("group", [("lazy", 0.5), ("sgc",), ("s2gc", 0.1), ("dgc", 2.0), ("ggcm", 0.15, 1.0)], ids=str)
def test_filters_carried_through_in_column_blocks_give_the_numbers_of_one_call(group, monkeypatch):
    """The row norms and the three routes' cosine blocks with the filter run on cache-sized blocks of columns
    (forced to 8 columns: the 26 feature columns in 4 blocks, the labeled route's 12 labeled columns in 2, the rows
    route's 24 rows in 3) equal those of one call bit for bit: each column is filtered alone."""
    import graphstk.operators.base as OB

    W, ei, X, y = wide_problem()
    from graphstk.operators.graph import GraphKernel
    from graphstk.operators.composed import extended_adjacency
    graph = GraphKernel(ei, W.shape[0], dtype=torch.float64)
    S = extended_adjacency(graph).csr
    Xf = fp.preprocess_sparse(fp.sparse_features(X), "sum")
    rows, n = torch.randperm(W.shape[0], generator=torch.Generator().manual_seed(5)), 12   # rows[:n] labeled
    depths = [0, 1, 2, 4]

    def compute():
        return (fp.filtered_norms(S, graph, Xf, [group], depths, torch.float64, 4)[group],
                [fp.cosine_blocks(S, graph, Xf, group, depths, rows, n, torch.float64, 4, {}, route)
                 for route in ("columns", "labeled", "rows")])
    one_norms, one_cos = compute()
    monkeypatch.setattr(OB, "WIDE_BLOCK_BYTES", 0)
    monkeypatch.setattr(OB, "CACHE_BLOCK_BYTES", 8 * 8 * W.shape[0])
    assert OB.column_block_width(torch.zeros(W.shape[0], Xf.shape[1], dtype=torch.float64)) == 8   # 8, 8, 8, 2
    blocked_norms, blocked_cos = compute()
    for k in depths:
        assert torch.equal(one_norms[k], blocked_norms[k])
        for a, b in zip(one_cos, blocked_cos):
            assert torch.equal(a[k], b[k])


def test_s2gc_alphas_share_one_propagation_of_the_row_norms(monkeypatch):
    """``filtered_norms`` over S2GC's groups of several ``alpha`` (one propagation of the sums of the powers, mixed
    per ``alpha``) beside another filter equals each group's own propagation bit for bit; ``cosine_blocks`` with
    ``norm_groups`` keeps the other ``alpha``'s norms in the cache, so its own call filters no feature column and
    gives the blocks of a call without the shared cache, bit for bit."""
    W, ei, X, y = wide_problem()
    from graphstk.operators.graph import GraphKernel
    from graphstk.operators.composed import extended_adjacency
    graph = GraphKernel(ei, W.shape[0], dtype=torch.float64)
    S = extended_adjacency(graph).csr
    Xf = fp.preprocess_sparse(fp.sparse_features(X), "sum")
    rows, n = torch.randperm(W.shape[0], generator=torch.Generator().manual_seed(5)), 12
    depths, groups = [0, 1, 2, 4], [("s2gc", 0.05), ("s2gc", 0.15), ("lazy", 0.5)]
    together = fp.filtered_norms(S, graph, Xf, groups, depths, torch.float64, 4)
    for g in groups:
        alone = fp.filtered_norms(S, graph, Xf, [g], depths, torch.float64, 4)[g]
        assert all(torch.equal(together[g][k], alone[k]) for k in depths)
    assert not torch.allclose(together[groups[0]][4], together[groups[1]][4]), "the alphas must differ"

    cache = {}
    fp.cosine_blocks(S, graph, Xf, groups[0], depths, rows, n, torch.float64, 4, cache, "labeled",
                     norm_groups=groups[:2])
    fresh = fp.cosine_blocks(S, graph, Xf, groups[1], depths, rows, n, torch.float64, 4, {}, "labeled")

    def no_filtering(*args, **kwargs):
        raise AssertionError("the norms of the second alpha were filtered again")
    monkeypatch.setattr(fp, "filtered_norms", no_filtering)
    shared = fp.cosine_blocks(S, graph, Xf, groups[1], depths, rows, n, torch.float64, 4, cache, "labeled")
    assert all(torch.equal(shared[k], fresh[k]) for k in depths)
