"""The top eigenpairs of a graph kernel against dense ``eigh``: the dense, Lanczos and
Chebyshev-filtered paths (kernel PCA, STKR Eq. 8), over connected components."""
import numpy as np
import pytest
import scipy.sparse as sp
import torch

from dense_reference import labeled_graph, normalized, normalized_random_graph, random_graph
from graphstk.operators import GraphKernel, SparseOperator
from graphstk.methods import STKRCV
from graphstk.spectral import EigenCache, TopD, eigen, operator_fingerprint, top_eigenpairs


def _projector(vecs):
    return vecs @ vecs.T


def _check_against_dense(S, vals, vecs, k, atol=1e-9):
    """Eigenvalues equal to dense eigh's top k; every returned vector an eigenvector; and the
    returned span equals the dense top-k span except inside a cluster of equal eigenvalues cut by k."""
    ref_vals, ref_vecs = torch.linalg.eigh(S)
    ref_vals, ref_vecs = ref_vals.flip(0), ref_vecs.flip(1)
    assert torch.allclose(vals, ref_vals[:k], atol=atol, rtol=0)
    assert torch.allclose(vecs.T @ vecs, torch.eye(k, dtype=vecs.dtype), atol=1e-8)
    assert (S @ vecs - vecs * vals).norm(dim=0).max() < 1e-7
    # the eigenvalues strictly above the k-th: their eigenspace must be inside the returned span
    strict = int((ref_vals > ref_vals[k - 1] + 1e-8).sum())
    if strict:
        P = _projector(vecs)
        top = ref_vecs[:, :strict]
        assert (P @ top - top).norm() < 1e-7


@pytest.mark.parametrize("k", [5, 40, 90])
def test_filtered_eigensolver_matches_dense_eigh(k):
    S = normalized_random_graph(300, 0.04, seed=1)
    a = sp.csr_matrix(S.numpy())
    vals, vecs = eigen.filtered_top_eigenpairs(a, k, rng=np.random.default_rng(0))
    assert eigen.LAST_SOLVE["fallback"] is False and eigen.LAST_SOLVE["products"] > 0
    _check_against_dense(S, torch.as_tensor(vals.copy()), torch.as_tensor(vecs.copy()), k)


def test_filtered_eigensolver_places_the_filter_from_a_previous_spectrum():
    S = normalized_random_graph(300, 0.04, seed=2)
    a = sp.csr_matrix(S.numpy())
    ref = np.sort(np.linalg.eigvalsh(S.numpy()))[::-1]
    for previous in (ref, ref + 0.2, ref - 0.3):  # a good, a too-high and a too-low cut: same answer
        vals, vecs = eigen.filtered_top_eigenpairs(a, 60, rng=np.random.default_rng(1), previous=previous)
        assert eigen.LAST_SOLVE["fallback"] is False
        _check_against_dense(S, torch.as_tensor(vals.copy()), torch.as_tensor(vecs.copy()), 60)


def test_filtered_eigensolver_with_repeated_eigenvalues():
    # a circulant graph (cycle with chords at distance 2 and 5): eigenvalues come in equal pairs
    n = 240
    W = torch.zeros(n, n, dtype=torch.float64)
    for s in (1, 2, 5):
        idx = torch.arange(n)
        W[idx, (idx + s) % n] = 1
        W[(idx + s) % n, idx] = 1
    S = normalized(W)
    ev = torch.linalg.eigvalsh(S).flip(0)
    assert (ev[1:80] - ev[2:81]).abs().min() < 1e-10  # repeated eigenvalues present
    for k in (65, 66):  # a cut inside an eigenvalue pair, and one after it
        vals, vecs = eigen.filtered_top_eigenpairs(sp.csr_matrix(S.numpy()), k, rng=np.random.default_rng(2))
        assert eigen.LAST_SOLVE["fallback"] is False
        _check_against_dense(S, torch.as_tensor(vals.copy()), torch.as_tensor(vecs.copy()), k)


@pytest.mark.parametrize("method", ["filtered", "auto"])
def test_top_eigenpairs_filtered_over_components_and_eigenvalue_one_multiplicity(method):
    # two large components (filtered path) and 12 small ones with eigenvalue 1 (multiplicity 14 in all)
    blocks = [normalized_random_graph(260, 0.05, 3), normalized_random_graph(200, 0.06, 4)]
    blocks += [normalized_random_graph(6, 0.9, 10 + i) for i in range(12)]
    S = torch.block_diag(*blocks)
    assert int((torch.linalg.eigvalsh(S) > 1 - 1e-10).sum()) == 14
    op = SparseOperator.from_dense(S)
    for k in (10, 70):  # eigenvalue 1 with multiplicity 14 > k, then a k that reaches into the large components
        vals, vecs = eigen.top_eigenpairs(op, k, dense_threshold=50, method=method)
        _check_against_dense(S, vals, vecs, k)
    vals_l, _ = eigen.top_eigenpairs(op, 70, dense_threshold=50, method="lanczos")
    assert torch.allclose(vals, vals_l, atol=1e-10, rtol=0)


def test_bad_method_is_rejected():
    with pytest.raises(ValueError, match="method must be"):
        eigen.top_eigenpairs(SparseOperator.from_dense(torch.eye(4, dtype=torch.float64)), 2, method="cold")


# ---------------------------------------------------------------------------
# multi-shift CG
# ---------------------------------------------------------------------------
# ---------------------------------------------------------------------------
# engines: multi-shift routes and the reduced-product Algorithm 1 against dense closed forms
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("k", [64, 128])
def test_filtered_eigensolver_on_dblp_where_the_top_eigenvalues_cluster(dblp, k):
    # DBLP's giant component without its labeled nodes (the final view of seed 3, App. D split): the
    # estimate of lambda_{1.15k + 8} lands above lambda_1 (k = 64) or above lambda_k (k = 128). Halving
    # [lo, cut] after such a miss would run a filter that separates nothing (about 2.9e5 products
    # of S a solve). Same eigenvalues as a plain Lanczos run, in few products.
    from graphstk.data import make_split
    from graphstk.methods.problem import make_problem
    from graphstk.methods.topd import labeled_components
    from scipy.sparse.csgraph import connected_components
    from scipy.sparse.linalg import eigsh

    split = make_split(dblp, 0.01, 3)
    kernel = GraphKernel(dblp.edge_index, int(dblp.num_nodes), hidden=split.test, dtype=torch.float64)
    y = torch.full_like(dblp.y.long(), -1)
    y[split.train] = dblp.y.long()[split.train]
    prob = make_problem(kernel, y, split.train)
    keep = labeled_components(prob)
    keep[prob.train] = False
    U = keep.nonzero().flatten()
    a = eigen._to_scipy(prob.kernel.S.block(U, U))
    _, lab = connected_components(a, directed=False)
    nodes = np.nonzero(lab == np.bincount(lab).argmax())[0]
    a = a[nodes][:, nodes].tocsr()
    a = (a + a.T) * 0.5
    vals, vecs = eigen.filtered_top_eigenpairs(a, k, rng=np.random.default_rng(0))
    assert eigen.LAST_SOLVE["fallback"] is False and eigen.LAST_SOLVE["products"] < 20 * 1000
    ref = np.sort(eigsh(a, k=k + 8, which="LA", tol=1e-12, v0=np.ones(a.shape[0]))[0])[::-1][:k]
    assert np.abs(vals - ref).max() < 1e-9
    assert np.linalg.norm(a @ vecs - vecs * vals, axis=0).max() < 1e-8


def test_top_eigenpairs_matches_dense_and_uses_components():
    W, ei, w = random_graph(60, 0.08, 7)
    S = normalized(W)
    op = SparseOperator.from_dense(S)
    ref = torch.linalg.eigvalsh(S).flip(0)[:10]
    for thr in (5, 3000):                                        # Lanczos path and dense path
        vals, vecs = top_eigenpairs(op, 10, dense_threshold=thr)
        assert torch.allclose(vals, ref, atol=1e-8)
        assert torch.allclose(S @ vecs, vecs * vals, atol=1e-7)
        assert torch.allclose(vecs.T @ vecs, torch.eye(10, dtype=torch.float64), atol=1e-8)


@pytest.mark.parametrize("k", [5, 45, 90])
def test_top_eigenpairs_over_several_large_components_matches_dense(k):
    """Two Lanczos components and small dense ones: the top k of the union, for small and large k."""
    blocks = [random_graph(60, 0.1, 3)[0], random_graph(50, 0.12, 4)[0], random_graph(6, 0.6, 5)[0]]
    W = torch.block_diag(*blocks)
    S = normalized(W)
    vals, vecs = top_eigenpairs(SparseOperator.from_dense(S), k, dense_threshold=8)
    ref = torch.linalg.eigvalsh(S).flip(0)[:k]
    assert torch.allclose(vals, ref, atol=1e-8)
    assert torch.allclose(S @ vecs, vecs * vals, atol=1e-7)
    assert torch.allclose(vecs.T @ vecs, torch.eye(k, dtype=torch.float64), atol=1e-7)


def test_top_eigenpairs_skips_large_component_when_bound_is_reached():
    """Many label-free small components (eigenvalue exactly 1) fill the top k without Lanczos."""
    W, _, _ = random_graph(40, 0.3, 11)                       # one large component
    pairs = torch.zeros(40 + 20, 40 + 20, dtype=torch.float64)
    pairs[:40, :40] = W
    for i in range(40, 60, 2):                                 # ten 2-node components
        pairs[i, i + 1] = pairs[i + 1, i] = 1.0
    S = normalized(pairs)
    op = SparseOperator.from_dense(S)
    vals, vecs = top_eigenpairs(op, 5, dense_threshold=10, upper_bound=1.0)
    assert torch.allclose(vals, torch.ones(5, dtype=torch.float64))
    assert torch.allclose(S @ vecs, vecs, atol=1e-12)
    assert (vecs[:40] == 0).all()                               # none from the large component


# ---------------------------------------------------------------------------
# eigenpairs computed once per operator: EigenCache
# ---------------------------------------------------------------------------

def test_cache_answers_the_same_operator_and_k_once():
    S = normalized_random_graph(120, 0.08, seed=1)
    cache = EigenCache()
    a, b = SparseOperator.from_dense(S), SparseOperator.from_dense(S.clone())
    v1 = cache.top_eigenpairs(a, 10)
    v2 = cache.top_eigenpairs(b, 10)          # another object, the same entries: a hit
    assert cache.computed == 1 and cache.hits == 1
    assert v1[0] is v2[0]
    ref = top_eigenpairs(a, 10)
    assert torch.equal(v1[0], ref[0]) and torch.equal(v1[1], ref[1])
    rec0, rec1 = [], []
    big = SparseOperator.from_dense(normalized_random_graph(200, 0.05, seed=4))
    cache.top_eigenpairs(big, 6, dense_threshold=50, record=rec0)
    cache.top_eigenpairs(big, 6, dense_threshold=50, record=rec1)
    assert [r["route"] for r in rec0] == ["arpack (lanczos)"] and [r["route"] for r in rec1] == ["cached: arpack (lanczos)"]
    assert cache.computed == 2 and cache.hits == 2
    cache.top_eigenpairs(a, 12)               # another k: computed
    S2 = S.clone()
    S2[0, 1] = S2[1, 0] = S2[0, 1] + 1e-3      # another operator: computed
    cache.top_eigenpairs(SparseOperator.from_dense(S2), 10)
    assert cache.computed == 4 and cache.hits == 2


def test_fingerprint_separates_dtype_and_entries():
    S = normalized_random_graph(50, 0.1, seed=2)
    a = SparseOperator.from_dense(S)
    assert operator_fingerprint(a) == operator_fingerprint(SparseOperator.from_dense(S.clone()))
    assert operator_fingerprint(a) != operator_fingerprint(SparseOperator.from_dense(S.float()))
    assert operator_fingerprint(a) != operator_fingerprint(SparseOperator.from_dense(2 * S))


def test_cache_drops_the_oldest_entry():
    cache = EigenCache(size=2)
    ops = [SparseOperator.from_dense(normalized_random_graph(40, 0.2, seed=s)) for s in range(3)]
    for op in ops:
        cache.top_eigenpairs(op, 3)
    assert len(cache) == 2
    cache.top_eigenpairs(ops[0], 3)
    assert cache.computed == 4


def test_topd_scores_through_the_cache_equal_those_without_and_reuse_the_eigenpairs():
    data, _, _ = labeled_graph(seed=3, n=80)
    K = GraphKernel(data.edge_index, int(data.num_nodes), dtype=torch.float64)
    train = torch.arange(0, 80, 4)
    ev = torch.arange(1, 80, 4)
    est = STKRCV([TopD(4, support="all"), TopD(8, support="all")], [1e-2, 1.0])
    plain = est.grid_scores(K, train, ev, y=data.y)
    cache = EigenCache()
    first = est.grid_scores(K, train, ev, y=data.y, eigen_cache=cache)
    second = est.grid_scores(K, train, ev, y=data.y, eigen_cache=cache)
    assert cache.computed == 1 and cache.hits == 1
    for (p0, s0), (_, s1), (_, s2) in zip(plain, first, second):
        assert torch.equal(s0, s1) and torch.equal(s0, s2)
    # other labeled nodes: another S_UU, computed again
    est.grid_scores(K, torch.arange(2, 80, 4), ev, y=data.y, eigen_cache=cache)
    assert cache.computed == 2
    assert est.solver_ == "kernel PCA + ridge probe (Eqs. 8-9)"
