"""The top eigenpairs of a graph kernel against dense ``eigh``: the dense, Lanczos and
Chebyshev-filtered paths (kernel PCA, STKR Eq. 8), over connected components; and the torch block
eigensolver (Chebyshev-filtered subspace iteration) against dense ``eigh`` and ARPACK's ``eigsh``: clustered
eigenvalues, the eigenvalue 1 once per connected component, eigenvalues near -1, many eigenpairs, warm
starts and the device."""
import numpy as np
import pytest
import scipy.sparse as sp
import torch
from scipy.sparse.linalg import eigsh

from dense_reference import labeled_graph, normalized, normalized_random_graph, random_graph
from graphstk.operators import GraphKernel, SparseOperator
from graphstk.methods import STKRCV
from graphstk.spectral import EigenCache, TopD, eigen, operator_fingerprint, top_eigenpairs
from graphstk.spectral.eigen import guard_size, subspace_top_eigenpairs


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



def _solve(S: torch.Tensor, k: int, **kw):
    op = SparseOperator.from_dense(S)
    r = eigen.spectral_radius(op)
    return subspace_top_eigenpairs(op.matmul, S.shape[0], k, lo=-r, radius=r, **kw)


def _check(S: torch.Tensor, res, k: int, atol: float = 1e-9):
    """Values equal to dense eigh's top k; orthonormal vectors; the residual reported is the true one and
    within the bound; the span holds every eigenvector whose eigenvalue is strictly above the k-th."""
    ref_vals, ref_vecs = torch.linalg.eigh(S)
    ref_vals, ref_vecs = ref_vals.flip(0), ref_vecs.flip(1)
    vals, vecs = res.values, res.vectors
    assert res.converged and res.residual <= res.bound
    assert torch.allclose(vals, ref_vals[:k], atol=atol, rtol=0)
    assert torch.allclose(vecs.T @ vecs, torch.eye(k, dtype=vecs.dtype), atol=1e-10)
    true_res = float((S @ vecs - vecs * vals).norm(dim=0).max())
    assert abs(true_res - res.residual) <= 1e-12 + 1e-6 * res.residual
    strict = int((ref_vals > ref_vals[k - 1] + 1e-8).sum())
    if strict:
        top = ref_vecs[:, :strict]
        assert (vecs @ (vecs.T @ top) - top).norm() < 1e-7


@pytest.mark.parametrize("k", [1, 5, 40])
def test_block_solver_matches_dense_eigh_and_eigsh(k):
    S = normalized_random_graph(300, 0.04, seed=1)
    res = _solve(S, k)
    _check(S, res, k)
    w = np.sort(eigsh(sp.csr_matrix(S.numpy()), k=k, which="LA", tol=1e-12, v0=np.ones(300))[0])[::-1]
    assert np.abs(res.values.numpy() - w).max() < 1e-9


def test_block_solver_with_clustered_eigenvalues():
    # a circulant graph (cycle with chords at distances 2 and 5): eigenvalues come in equal pairs
    n = 240
    W = torch.zeros(n, n, dtype=torch.float64)
    idx = torch.arange(n)
    for s in (1, 2, 5):
        W[idx, (idx + s) % n] = 1
        W[(idx + s) % n, idx] = 1
    S = normalized(W)
    ev = torch.linalg.eigvalsh(S).flip(0)
    assert (ev[1:80] - ev[2:81]).abs().min() < 1e-10
    for k in (65, 66):   # a cut inside an eigenvalue pair, and one after it
        _check(S, _solve(S, k), k)


def test_block_solver_finds_eigenvalue_one_once_per_component():
    # eight components: the eigenvalue 1 has multiplicity 8, and the top 12 reach past it
    blocks = [normalized_random_graph(40 + 5 * i, 0.2, 20 + i) for i in range(8)]
    S = torch.block_diag(*blocks)
    assert int((torch.linalg.eigvalsh(S) > 1 - 1e-10).sum()) == 8
    for k in (8, 12):
        res = _solve(S, k)
        _check(S, res, k)
        assert int((res.values > 1 - 1e-9).sum()) == 8


def test_block_solver_with_eigenvalues_near_minus_one():
    # a bipartite graph: the spectrum is symmetric, -1 is an eigenvalue and the filter's interval ends there
    n1, n2 = 90, 110
    g = torch.Generator().manual_seed(3)
    B = (torch.rand(n1, n2, generator=g) < 0.08).double()
    B[torch.arange(n1), torch.arange(n1) % n2] = 1
    W = torch.zeros(n1 + n2, n1 + n2, dtype=torch.float64)
    W[:n1, n1:] = B
    W[n1:, :n1] = B.T
    S = normalized(W)
    ev = torch.linalg.eigvalsh(S)
    assert ev[0] < -1 + 1e-10
    for k in (10, 60):
        _check(S, _solve(S, k), k)
    # and the other end: the top of -S is the bottom of S, eigenvalues at -1 of -S included
    _check(-S, _solve(-S, 20), 20)


def test_block_solver_with_512_eigenpairs():
    S = normalized_random_graph(900, 0.02, seed=5)
    res = _solve(S, 512)
    _check(S, res, 512, atol=1e-8)
    assert res.basis.shape == (900, guard_size(512, 900))


def test_warm_start_gives_the_same_pairs_in_fewer_products():
    S = normalized_random_graph(400, 0.04, seed=6)
    cold = _solve(S, 50)
    # a nearby operator: a few nodes removed (rows and columns zeroed), as a split removes its labels
    keep = torch.ones(400, dtype=torch.bool)
    keep[::37] = False
    S2 = S * keep[:, None] * keep[None, :]
    cold2 = _solve(S2, 50)
    warm2 = _solve(S2, 50, start=cold.basis * keep[:, None])
    _check(S2, warm2, 50)
    assert torch.allclose(warm2.values, cold2.values, atol=1e-10, rtol=0)
    assert warm2.products < cold2.products
    # a start that is exactly right converges at the first Rayleigh-Ritz step
    again = _solve(S, 50, start=cold.basis)
    assert again.iterations == 1 and again.products == 1


def test_a_start_missing_the_top_eigenvector_still_finds_it():
    # the Gaussian guard columns keep a start that is orthogonal to the top eigenvector generic
    S = normalized_random_graph(300, 0.05, seed=7)
    _, V = torch.linalg.eigh(S)
    start = V[:, -30:-1]   # eigenvectors 2..30: the top one is missing and the block is p = 30 + 16
    _check(S, _solve(S, 30, start=start), 30)


def test_unconverged_solve_says_so():
    S = normalized_random_graph(300, 0.04, seed=8)
    res = _solve(S, 40, max_iter=1)
    assert not res.converged and res.residual > res.bound and res.iterations == 1


@pytest.mark.parametrize("bad, match", [(dict(k=0), "k must be"), (dict(k=300), "k must be"),
                                        (dict(block=40), "block must be"), (dict(radius=0.0), "radius")])
def test_bad_input_is_refused(bad, match):
    S = normalized_random_graph(300, 0.04, seed=1)
    op = SparseOperator.from_dense(S)
    kw = dict(k=40, lo=-1.0, radius=1.0) | bad
    with pytest.raises(ValueError, match=match):
        subspace_top_eigenpairs(op.matmul, 300, **kw)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_block_solver_runs_on_the_operator_device():
    S = normalized_random_graph(300, 0.04, seed=1)
    op = SparseOperator.from_dense(S).to("cuda")
    res = subspace_top_eigenpairs(op.matmul, 300, 40, lo=-1.0, radius=1.0, device="cuda")
    assert res.vectors.device.type == "cuda" and res.values.device.type == "cuda"
    _check(S, type(res)(**{f: (getattr(res, f).cpu() if isinstance(getattr(res, f), torch.Tensor)
                                else getattr(res, f)) for f in res.__dataclass_fields__}), 40)


# ---------------------------------------------------------------------------
# the block route of top_eigenpairs, and its routing
# ---------------------------------------------------------------------------
def test_top_eigenpairs_block_route_over_components_matches_dense_and_arpack():
    # two large components (block route) and 12 small ones with eigenvalue 1 (multiplicity 14 in all)
    blocks = [normalized_random_graph(260, 0.05, 3), normalized_random_graph(200, 0.06, 4)]
    blocks += [normalized_random_graph(6, 0.9, 10 + i) for i in range(12)]
    S = torch.block_diag(*blocks)
    op = SparseOperator.from_dense(S)
    for k in (10, 70):
        record = []
        vals, vecs = eigen.top_eigenpairs(op, k, dense_threshold=50, method="block", record=record)
        ref = torch.linalg.eigvalsh(S).flip(0)[:k]
        assert torch.allclose(vals, ref, atol=1e-9, rtol=0)
        assert (S @ vecs - vecs * vals).norm(dim=0).max() < 1e-7
        assert [r["route"] for r in record] == ["block", "block"]
        assert all(r["residual"] <= r["bound"] for r in record)
        record = []
        vals_a, _ = eigen.top_eigenpairs(op, k, dense_threshold=50, method="lanczos", record=record)
        assert torch.allclose(vals, vals_a, atol=1e-9, rtol=0)
        assert {r["route"] for r in record} == {"arpack (lanczos)"} and all(r["residual"] <= r["bound"] for r in record)


def test_top_eigenpairs_block_route_takes_a_warm_start():
    S = normalized_random_graph(400, 0.04, seed=9)
    op = SparseOperator.from_dense(S)
    _, V = torch.linalg.eigh(S)
    cold, warm = [], []
    vals_c, _ = eigen.top_eigenpairs(op, 30, dense_threshold=50, method="block", record=cold)
    vals_w, _ = eigen.top_eigenpairs(op, 30, dense_threshold=50, method="block", record=warm,
                                     start=V.flip(1)[:, :46])
    assert torch.allclose(vals_c, vals_w, atol=1e-10, rtol=0)
    assert warm[0]["route"] == "block (warm start)" and warm[0]["products"] < cold[0]["products"]


def test_eigen_route_from_sizes_and_device_only():
    assert eigen.eigen_route(3000, 512, "cpu") == "dense"
    assert eigen.eigen_route(3001, 512, "cpu") == "filtered"
    assert eigen.eigen_route(20000, 32, "cpu") == "lanczos"
    assert eigen.eigen_route(20000, 512, "cuda") == "block"
    assert eigen.eigen_route(100, 5, "cuda") == "dense"
