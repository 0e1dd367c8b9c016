"""Feature-aware STKR (graphstk.methods.feature_stkr) against a dense ridge written from Eq. 6-7."""
from __future__ import annotations

import pytest
import torch

from graphstk.methods.feature_stkr import FeatureSTKR, _MeanKernels, feature_stkr_scores, select_on_validation
from tests.dense_reference import random_graph
from tests.operators.test_composed_kernels import dense_filter


def lazy_dense(W, hidden, depth, a):
    import math

    return dense_filter(W, hidden, [math.comb(depth, p) * a ** p * (1 - a) ** (depth - p) for p in range(depth + 1)])


def dense_scores(W, X, y, train, ev, p, hidden=()):
    """alpha = (G_LL + n beta I)^{-1} Y, scores G_EL alpha, G the (mean) cosine-Gaussian kernel of P_K X."""
    if p.get("features", "sum") == "sum":
        X = X / X.sum(1, keepdim=True)
    else:                                              # TF-IDF, document frequencies over visible nodes
        B = (X != 0).double()
        vis = [i for i in range(X.shape[0]) if i not in set(hidden)]
        idf = torch.log(len(vis) / (1 + B[vis].sum(0))).clamp_min(0)
        X = B * idf
        X = X / X.norm(dim=1, keepdim=True)
    depths = [p["depth"]] if p.get("mix", "last") == "last" else [1, 2, 4, 8, 16][:[1, 2, 4, 8, 16].index(p["depth"]) + 1]
    G = 0
    for k in depths:
        phi = lazy_dense(W, list(hidden), k, p["a"]) @ X
        phi = phi / phi.norm(dim=1, keepdim=True)
        cos = phi @ phi.T
        G = G + (cos if p["kernel"] == "cosine" else torch.exp((cos - 1) / p["sigma"] ** 2))
    G = G / len(depths)
    n = len(train)
    Y = torch.nn.functional.one_hot(y[train], int(y[train].max()) + 1).double()
    Y = Y * (n / (Y.shape[1] * Y.sum(0)))            # every class the same label mass
    alpha = torch.linalg.solve(G[train][:, train] + n * p["beta"] * torch.eye(n, dtype=torch.float64), Y)
    return G[ev][:, train] @ alpha


def problem(seed=0, n=24):
    W, ei, _ = random_graph(n, 0.25, seed=seed)
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(n, 6, generator=g, dtype=torch.float64) + 0.05
    X[torch.rand(n, 6, generator=g) < 0.4] = 0.0                       # sparse, as bag-of-words features
    X[:, 0] += 0.05                                                      # no all-zero row
    y = torch.randint(0, 3, (n,), generator=g)
    y[:3] = torch.arange(3)
    return W, ei, X, y


POINTS = [{"depth": 4, "a": 0.5, "mix": "last", "kernel": "cosine-gaussian", "sigma": 0.7, "beta": 1e-2},
          {"depth": 4, "a": 0.8, "mix": "dyadic", "kernel": "cosine-gaussian", "sigma": 1.0, "beta": 1e-3},
          {"depth": 2, "a": 1.0, "mix": "last", "kernel": "cosine", "sigma": 1.0, "beta": 1e-1},
          {"depth": 0, "a": 0.5, "mix": "last", "kernel": "cosine-gaussian", "sigma": 0.5, "beta": 1e-2},
          {"features": "tfidf", "depth": 4, "a": 0.8, "mix": "dyadic", "kernel": "cosine-gaussian", "sigma": 0.7,
           "beta": 1e-3},
          {"features": "tfidf", "depth": 0, "a": 0.5, "mix": "last", "kernel": "cosine", "sigma": 1.0, "beta": 1e-2}]


@pytest.mark.parametrize("hidden", [(), (5, 17, 20)])
def test_scores_match_dense_ridge(hidden):
    W, ei, X, y = problem()
    train = torch.tensor([0, 1, 2, 3, 8, 9, 12])
    ev = torch.tensor([4, 5, 6, 17, 20, 22])
    got = feature_stkr_scores(ei, X, y, train, ev, POINTS, hidden=torch.tensor(hidden, dtype=torch.long) if hidden
                              else None)
    for p, s in zip(POINTS, got):
        torch.testing.assert_close(s, dense_scores(W, X, y, train, ev, p, hidden), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("point", [1, 4])
def test_inductive_fit_ignores_hidden_nodes_except_their_own_rows(point):
    W, ei, X, y = problem(seed=4)
    train, hidden = torch.tensor([0, 1, 2, 6, 7]), torch.tensor([10, 11, 15])
    ev = torch.tensor([3, 4, 10, 11, 15])
    p = [POINTS[point]]
    base = feature_stkr_scores(ei, X, y, train, ev, p, hidden=hidden)[0]
    X2 = X.clone()
    X2[10] = torch.rand(6, dtype=torch.float64) + 0.1                    # a hidden node's own features
    keep = ~((ei[0] == 11) & (ei[1] == 15) | (ei[0] == 15) & (ei[1] == 11))
    moved = feature_stkr_scores(ei[:, keep], X2, y, train, ev, p, hidden=hidden)[0]
    torch.testing.assert_close(moved[[0, 1, 3, 4]], base[[0, 1, 3, 4]])   # nothing else moves
    assert not torch.allclose(moved[2], base[2])


def test_estimator_and_selection():
    from torch_geometric.data import Data

    W, ei, X, y = problem(seed=2)
    data = Data(x=X, edge_index=ei, y=y, num_nodes=24)
    p = POINTS[1]
    est = FeatureSTKR(**{k: p[k] for k in ("depth", "a", "mix", "kernel", "sigma", "beta")})
    from sklearn.base import clone

    assert clone(est).get_params()["depth"] == p["depth"] and "FeatureSTKR(" in repr(est)
    train = torch.tensor([0, 1, 2, 5, 9])
    torch.testing.assert_close(est.fit(data, train).decision_function(torch.arange(24)),
                               dense_scores(W, X, y, train, torch.arange(24), p), rtol=1e-8, atol=1e-10)
    val = torch.tensor([3, 4, 6, 7, 8])
    grid = {"depth": [0, 2], "beta": [1e-1, 1e-3]}
    best, accs = select_on_validation(ei, X, y, train, val, grid)
    assert len(accs) == 4 and best in [{"depth": d, "beta": b} for d in (0, 2) for b in (1e-1, 1e-3)]
    assert accs.index(max(accs)) == [{"depth": d, "beta": b} for d in (0, 2) for b in (1e-1, 1e-3)].index(best)
    y_other = y.clone()
    rest = torch.tensor([i for i in range(24) if i not in set(train.tolist()) | set(val.tolist())])
    y_other[rest] = y_other[rest].flip(0)                                # labels outside train/val are never read
    assert select_on_validation(ei, X, y_other, train, val, grid) == (best, accs)


def test_estimator_passes_feature_neighbours_through():
    from torch_geometric.data import Data

    W, ei, X, y = problem(seed=2)
    data = Data(x=X, edge_index=ei, y=y, num_nodes=24)
    train, rest = torch.tensor([0, 1, 2, 5, 9]), torch.arange(24)
    p = dict(POINTS[1], knn=3, knn_weight=0.3)
    est = FeatureSTKR(**{k: p[k] for k in ("depth", "a", "mix", "kernel", "sigma", "beta", "knn", "knn_weight")})
    got = est.fit(data, train).decision_function(rest)
    torch.testing.assert_close(got, feature_stkr_scores(ei, X, y, train, rest, [p])[0])
    assert not torch.allclose(got, FeatureSTKR(**{k: p[k] for k in ("depth", "a", "mix", "kernel", "sigma", "beta")})
                              .fit(data, train).decision_function(rest))
    for bad, match in (({"knn": -2}, "knn must"), ({"knn": 2, "knn_weight": 0.0}, "knn_weight")):
        with pytest.raises(ValueError, match=match):
            FeatureSTKR(**bad).fit(data, train)


def test_bad_input():
    W, ei, X, y = problem()
    with pytest.raises(ValueError, match="depth"):
        feature_stkr_scores(ei, X, y, [0, 1], [2], [{"depth": -1, "beta": 1.0}])
    with pytest.raises(ValueError, match="beta"):
        feature_stkr_scores(ei, X, y, [0, 1], [2], [{"depth": 1, "beta": 0.0}])
    with pytest.raises(ValueError, match="features"):
        feature_stkr_scores(ei, None, y, [0, 1], [2], [{"depth": 1, "beta": 1.0}])
    with pytest.raises(ValueError, match="hidden"):
        feature_stkr_scores(ei, X, y, [0, 1], [2], [{"depth": 1, "beta": 1.0}], hidden=[1])
    import scipy.sparse as sp

    signed = X - 0.3
    for given in (signed, sp.csr_matrix(signed.numpy())):       # refused before any propagation
        with pytest.raises(ValueError, match="features='sum' .* negative entries"):
            feature_stkr_scores(ei, given, y, [0, 1], [2], [{"depth": 1, "beta": 1.0, "features": "sum"}])
        feature_stkr_scores(ei, given, y, [0, 1], [2], [{"depth": 1, "beta": 1.0, "features": "raw"}])


def test_unbalanced_labels_do_not_favour_the_largest_class():
    """Two feature clusters, 2 labels of class 0 and 10 of class 1, a strong ridge: the kernel's
    constant part must not send every node to class 1 (balanced targets, ``balanced_targets``)."""
    from graphstk.methods.feature_stkr import balanced_targets

    n = 40
    y = (torch.arange(n) >= 20).long()
    X = torch.full((n, 4), 0.01, dtype=torch.float64)
    X[y == 0, :2] += 1.0
    X[y == 1, 2:] += 1.0
    ei = torch.empty(2, 0, dtype=torch.long)
    train = torch.cat([torch.arange(2), torch.arange(20, 30)])
    ev = torch.cat([torch.arange(2, 20), torch.arange(30, 40)])
    s = feature_stkr_scores(ei, X, y, train, ev, [{"depth": 0, "kernel": "cosine-gaussian", "sigma": 0.7,
                                                   "beta": 1.0}])[0]
    assert torch.equal(s.argmax(1), y[ev])
    Y = balanced_targets(torch.nn.functional.one_hot(y[train]).double())
    torch.testing.assert_close(Y.sum(0), torch.full((2,), 6.0, dtype=torch.float64))


def test_edge_weights_are_the_graph_of_eq_23():
    """``data.edge_weight`` is ``W`` of Eq. 23: the estimator's scores equal the dense ridge on the
    weighted graph, and differ from those of the unweighted one."""
    from torch_geometric.data import Data

    W, ei, X, y = problem(seed=3)
    w = 0.2 + torch.rand(ei.shape[1], generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    w = (w + w[_reverse(ei)]) / 2                                        # symmetric weights
    Ww = torch.zeros_like(W)
    Ww[ei[0], ei[1]] = w
    p, train = POINTS[0], torch.tensor([0, 1, 2, 5, 9])
    est = FeatureSTKR(**{k: p[k] for k in ("depth", "a", "mix", "kernel", "sigma", "beta")})
    got = est.fit(Data(x=X, edge_index=ei, edge_weight=w, y=y, num_nodes=24), train).decision_function(torch.arange(24))
    torch.testing.assert_close(got, dense_scores(Ww, X, y, train, torch.arange(24), p), rtol=1e-8, atol=1e-10)
    assert not torch.allclose(got, dense_scores(W, X, y, train, torch.arange(24), p))


def _reverse(ei):
    """The position of edge ``(j, i)`` for every edge ``(i, j)``."""
    pos = {(int(a), int(b)): k for k, (a, b) in enumerate(ei.T.tolist())}
    return torch.tensor([pos[(int(b), int(a))] for a, b in ei.T.tolist()])


def test_a_class_without_labels_is_named_and_never_predicted():
    from torch_geometric.data import Data

    from graphstk.exceptions import ClassesWithoutLabelsWarning

    W, ei, X, y = problem(seed=2)
    y = y.clone()
    y[y == 2] = 1
    y[-1] = 2                                                              # the highest class: one node, unlabeled
    with pytest.warns(ClassesWithoutLabelsWarning, match="classes 2"):
        est = FeatureSTKR(depth=2).fit(Data(x=X, edge_index=ei, y=y, num_nodes=24), torch.tensor([0, 1, 3, 4]))
    assert est.num_classes_ == 3 and est.missing_classes_ == [2]
    assert est.decision_function(torch.arange(24)).shape == (24, 3)
    assert 2 not in est.predict(torch.arange(24)).tolist()


def test_mean_kernels_are_the_plain_means_bit_for_bit():
    """The running sums over dyadic depths give exactly ``sum(blocks) / len`` (summed left to right), whatever
    order the means are asked in, and never change a block handed out before."""
    g = torch.Generator().manual_seed(0)
    cos = {k: torch.rand(7, 3, generator=g, dtype=torch.float64) * 2 - 1 for k in (1, 2, 4, 8, 16)}

    def plain(ks, sig):
        blocks = [cos[k] if sig is None else torch.exp((cos[k] - 1.0) / sig ** 2) for k in ks]
        return sum(blocks) / len(ks)

    for order in ([(1, 2, 4), (1, 2, 4, 8), (1, 2, 4, 8, 16), (4,), (16,)],
                  [(1, 2, 4, 8, 16), (1, 2, 4), (8,), (1, 2, 4, 8)]):
        for sig in (None, 0.7):
            kernels, seen = _MeanKernels(cos), []
            for ks in order:
                G = kernels.mean(ks, sig)
                assert torch.equal(G, plain(ks, sig)), (ks, sig)
                seen.append((ks, G.clone(), G))
            for ks, copy, G in seen:
                assert torch.equal(G, copy)
    assert torch.equal(cos[1], _MeanKernels(cos).mean((1,), None))
