"""kNN graphs (graphstk.operators.knn) against a brute-force scipy reference."""
import numpy as np
import pytest
import torch

from graphstk.exceptions import MemoryLimitError
from graphstk.operators import GraphKernel, knn_graph
from graphstk.operators.knn import nearest_neighbors

from .reference import brute_knn


@pytest.mark.parametrize("metric", ["euclidean", "manhattan", "cosine"])
@pytest.mark.parametrize("mode", ["connectivity", "distance", "gaussian"])
def test_knn_graph_matches_brute_force(metric, mode):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 3))
    k = 4
    D, nbr = brute_knn(X, k, metric)
    sigma = 0.8
    weight = {"connectivity": lambda d: 1.0, "distance": lambda d: d,
              "gaussian": lambda d: np.exp(-d**2 / (2 * sigma**2))}[mode]
    expected = {}
    for i in range(40):
        for j in nbr[i]:
            expected[(i, int(j))] = weight(D[i, j])
            expected[(int(j), i)] = weight(D[i, j])
    ei, w = knn_graph(X, k, metric=metric, mode=mode, sigma=sigma, block_size=7)
    got = {(int(a), int(b)): float(c) for a, b, c in zip(ei[0], ei[1], w)}
    assert got.keys() == expected.keys()
    for key, val in expected.items():
        assert got[key] == pytest.approx(val, rel=1e-9, abs=1e-12)
    # symmetric: (i, j) present iff (j, i), equal weights; no self loops
    assert all(got[(b, a)] == c for (a, b), c in got.items())
    assert not any(a == b for a, b in got)
    # directed variant: exactly the k nearest per row, in increasing distance
    ei_d, w_d = knn_graph(X, k, metric=metric, mode="distance", symmetric=False)
    assert ei_d.shape == (2, 40 * k)
    np.testing.assert_array_equal(ei_d[0].numpy(), np.repeat(np.arange(40), k))
    np.testing.assert_array_equal(ei_d[1].view(40, k).numpy(), nbr)
    np.testing.assert_allclose(w_d.view(40, k).numpy(), np.take_along_axis(D, nbr, 1), rtol=1e-9, atol=1e-12)


def test_knn_graph_default_sigma_and_graph_kernel():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(30, 2))
    D, nbr = brute_knn(X, 3, "euclidean")
    s = np.median(np.take_along_axis(D, nbr, 1))
    ei, w = knn_graph(X, 3, mode="gaussian")
    ei2, w2 = knn_graph(X, 3, mode="gaussian", sigma=s)
    assert torch.equal(ei, ei2)
    torch.testing.assert_close(w, w2)
    gk = GraphKernel(ei, 30, edge_weight=w)
    assert gk.S.shape == (30, 30)
    S = gk.S.to_dense()
    torch.testing.assert_close(S, S.T)


def test_knn_graph_errors():
    X = np.random.default_rng(7).normal(size=(5, 2))
    with pytest.raises(ValueError, match="at least"):
        knn_graph(X, 5)
    with pytest.raises(ValueError, match="positive integer"):
        knn_graph(X, 0)
    with pytest.raises(ValueError, match="metric"):
        knn_graph(X, 2, metric="chebyshev")
    with pytest.raises(ValueError, match="mode"):
        knn_graph(X, 2, mode="heat")
    with pytest.raises(ValueError, match="sigma"):
        knn_graph(X, 2, mode="gaussian", sigma=-1.0)


def test_nearest_neighbors_blocks_do_not_change_the_result():
    X = torch.randn(57, 4, dtype=torch.float64)
    ref_idx, ref_dist = nearest_neighbors(X, 6, block_size=57)
    for bs in (1, 5, 13):
        idx, dist = nearest_neighbors(X, 6, block_size=bs)
        assert torch.equal(idx, ref_idx)
        torch.testing.assert_close(dist, ref_dist)
    D = torch.cdist(X, X)
    D.fill_diagonal_(float("inf"))
    torch.testing.assert_close(ref_dist, D.sort(dim=1).values[:, :6])


def test_k_too_large_says_what_to_pass():
    with pytest.raises(ValueError, match=r"k = 500 neighbours need at least k \+ 1 = 501 points, got 20; pass k <= 19"):
        knn_graph(np.zeros((20, 2)), 500)


def test_distance_tile_shrinks_to_free_memory_instead_of_refusing(monkeypatch):
    """A tile larger than the free memory is cut into smaller ones (same graph); only a working set
    beyond the process's ceiling is refused."""
    from graphstk import memory
    X = torch.randn(1000, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    want = knn_graph(X, 3, block_size=1000)
    monkeypatch.setattr(memory, "_read_meminfo", lambda: {"MemTotal": 10 ** 10, "MemAvailable": 300_000})
    seen = []
    real = memory.tile_rows
    monkeypatch.setattr("graphstk.operators.knn.tile_rows", lambda *a, **k: seen.append(real(*a, **k)) or seen[-1])
    got = knn_graph(X, 3, block_size=1000)                 # the 16 MB tile does not fit 300 kB free
    assert seen and seen[0] < 1000
    torch.testing.assert_close(got[0], want[0])
    torch.testing.assert_close(got[1], want[1])
    monkeypatch.setenv("GRAPHSTK_MAX_MEMORY", "10KB")     # the n k outputs cannot fit the ceiling
    with pytest.raises(MemoryLimitError, match=r"kNN indices and distances of 1000 points.*GRAPHSTK_MAX_MEMORY"):
        knn_graph(X, 3)


def _brute_cosine_neighbors(X, k, candidates):
    """Cosine of every pair, candidates only, self excluded, decreasing similarity (ties: candidate order)."""
    nrm = np.linalg.norm(X, axis=1)
    C = (X @ X.T) / np.maximum(np.outer(nrm, nrm), 1e-300)
    idx = np.full((X.shape[0], k), -1)
    sim = np.zeros((X.shape[0], k))
    for i in range(X.shape[0]):
        cand = [j for j in candidates if j != i]
        order = sorted(range(len(cand)), key=lambda t: (-C[i, cand[t]], t))[:k]
        for s, t in enumerate(order):
            if C[i, cand[t]] > 0:
                idx[i, s], sim[i, s] = cand[t], C[i, cand[t]]
    return idx, sim


@pytest.mark.parametrize("restricted", [False, True], ids=["all rows", "candidates"])
def test_cosine_neighbors_matches_brute_force(restricted):
    import scipy.sparse as sp

    from graphstk.operators import cosine_neighbors

    rng = np.random.default_rng(3)
    X = (rng.random((30, 12)) < 0.3) * rng.random((30, 12))
    X[4] = 0.0                          # an all-zero row: no neighbour, and nobody's neighbour
    X[9] = X[8]                         # equal rows, equal cosines: ties broken by candidate order
    X[11] = X[8]
    cand = [j for j in range(30) if j % 3 != 2][::-1] if restricted else list(range(30))   # unsorted, with row 4
    k = 5
    ref_idx, ref_sim = _brute_cosine_neighbors(X, k, cand)
    mask = torch.zeros(30, dtype=torch.bool)
    mask[cand] = True
    if restricted:       # a mask lists the candidates in increasing order: ties break the other way
        runs = [(mask, _brute_cosine_neighbors(X, k, sorted(cand))), (torch.tensor(cand), (ref_idx, ref_sim))]
    else:
        runs = [(None, (ref_idx, ref_sim))]
    for candidates, (want_idx, want_sim) in runs:
        idx, sim = cosine_neighbors(sp.csr_matrix(X), k, candidates)
        np.testing.assert_array_equal(idx.numpy(), want_idx)
        np.testing.assert_allclose(sim.numpy(), want_sim, rtol=1e-12, atol=1e-12)
        assert (idx[4] == -1).all() and not (idx == 4).any()      # the zero row: no neighbour, nobody's
        assert not (idx == torch.arange(30)[:, None]).any()


def test_cosine_neighbors_bad_k():
    from graphstk.operators import cosine_neighbors

    X = np.eye(4)
    for k in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="k must be a positive integer"):
            cosine_neighbors(X, k)
    with pytest.raises(ValueError, match="pass k <= 1"):
        cosine_neighbors(X, 2, torch.tensor([0, 1]))
    with pytest.raises(ValueError, match="repeated row ids"):
        cosine_neighbors(X, 1, torch.tensor([0, 0, 2]))
    with pytest.raises(IndexError):
        cosine_neighbors(X, 1, torch.tensor([-1, 2]))
    with pytest.raises(ValueError, match="length 4"):
        cosine_neighbors(X, 1, torch.tensor([True, False, True]))


def test_cosine_neighbors_dense_tiles_match_the_sparse_product():
    """Rows over DENSE_TILE_DENSITY nonzero are compared in dense tiles: the same neighbours and
    similarities as the sparse product of the same rows."""
    import numpy as np
    import scipy.sparse as sp

    import graphstk.operators.knn as knn

    rng = np.random.default_rng(0)
    X = sp.csr_matrix(rng.random((120, 40)) * (rng.random((120, 40)) < 0.35))
    cand = torch.arange(0, 120, 2)
    assert X.nnz >= knn.DENSE_TILE_DENSITY * 120 * 40
    dense_idx, dense_sim = knn.cosine_neighbors(X, 7, cand)
    sparse_idx, sparse_sim = knn.cosine_neighbors(X, 7, cand, tiles="sparse")
    assert torch.equal(dense_idx, sparse_idx)
    torch.testing.assert_close(dense_sim, sparse_sim)


def test_neighbour_lists_of_the_largest_k_slice_to_the_smaller_ones():
    import numpy as np
    import scipy.sparse as sp

    from graphstk.methods.feature_propagation import feature_neighbor_graph, feature_neighbors

    rng = np.random.default_rng(1)
    X = sp.csr_matrix(rng.random((80, 30)) * (rng.random((80, 30)) < 0.2))
    ei = torch.tensor([[0, 1, 2, 3], [1, 0, 3, 2]])
    hidden = torch.zeros(80, dtype=torch.bool)
    hidden[60:] = True
    big = feature_neighbors(X, 12, hidden)
    for k in (3, 7, 12):
        assert torch.equal(big[:, :k], feature_neighbors(X, k, hidden))
        a = feature_neighbor_graph(ei, 80, X, k, 0.1, hidden_mask=hidden, neighbors=big)
        b = feature_neighbor_graph(ei, 80, X, k, 0.1, hidden_mask=hidden)
        assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])


def test_neighbour_lists_are_kept_in_the_cache_and_read_from_it():
    """A cache keeps the lists of the largest search: a call for fewer neighbours reads its first columns (a
    corrupted entry is what comes back, so the cache is read), a call for more searches again and replaces the
    entry, and other hidden nodes or other features are other entries."""
    import numpy as np
    import scipy.sparse as sp

    from graphstk.methods.feature_propagation import feature_neighbors

    rng = np.random.default_rng(2)
    X = sp.csr_matrix(rng.random((50, 20)) * (rng.random((50, 20)) < 0.3))
    cache: dict = {}
    ten = feature_neighbors(X, 10, None, cache)
    assert len(cache) == 1 and torch.equal(ten, feature_neighbors(X, 10))
    key = next(iter(cache))
    cache[key] = cache[key].flip(1)
    assert torch.equal(feature_neighbors(X, 4, None, cache), ten.flip(1)[:, :4])
    twelve = feature_neighbors(X, 12, None, cache)
    assert torch.equal(twelve, feature_neighbors(X, 12)) and cache[key].shape[1] == 12
    hidden = torch.zeros(50, dtype=torch.bool)
    hidden[40:] = True
    assert torch.equal(feature_neighbors(X, 5, hidden, cache), feature_neighbors(X, 5, hidden))
    feature_neighbors(X * 2.0, 5, None, cache)
    assert len(cache) == 3


@pytest.mark.parametrize("k", [1, 3, 7, 12])
def test_stable_top_k_is_the_head_of_a_stable_descending_sort(k):
    """Rows with many ties (values from a handful of levels, -inf entries, a constant row) give the columns of a
    stable descending sort's first k, entry for entry."""
    from graphstk.operators.knn import _stable_top_k

    g = torch.Generator().manual_seed(k)
    T = torch.randint(0, 4, (40, 12), generator=g).double() / 2
    T[torch.rand(40, 12, generator=g) < 0.1] = float("-inf")
    T[3] = 0.5
    T[5] = torch.arange(12, dtype=torch.float64)
    want = torch.sort(T, dim=1, descending=True, stable=True).indices[:, :k]
    assert torch.equal(_stable_top_k(T, k), want)
