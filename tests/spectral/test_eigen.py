"""The fast solver routes against independent dense computations: the Chebyshev-filtered eigensolver
(kernel PCA, STKR Eq. 8), multi-shift CG (Eq. 22 / Example 1 for every eta) and the reduced-product
Algorithm 1 (Eq. 7)."""
import numpy as np
import pytest
import scipy.sparse as sp
import torch

from dense_reference import normalized, random_graph
from graphstk.methods import routes
from graphstk.operators import GraphKernel, SparseOperator
from graphstk.spectral import eigen
from graphstk.spectral.multishift import multishift_cg, solve_shifted_laplacians


def _random_component(n, p, seed):
    W, _, _ = random_graph(n, p, seed)
    return normalized(W)


def _block_diag(blocks):
    n = sum(b.shape[0] for b in blocks)
    out = torch.zeros(n, n, dtype=torch.float64)
    i = 0
    for b in blocks:
        out[i:i + b.shape[0], i:i + b.shape[0]] = b
        i += b.shape[0]
    return out


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
    S = _random_component(300, 0.04, seed=1)
    a = sp.csr_matrix(S.numpy())
    vals, vecs = eigen.filtered_top_eigenpairs(a, k, rng=np.random.default_rng(0))
    assert eigen.LAST_SOLVE["fallback"] is False and eigen.LAST_SOLVE["products"] > 0
    _check_against_dense(S, torch.as_tensor(vals.copy()), torch.as_tensor(vecs.copy()), k)


def test_filtered_eigensolver_places_the_filter_from_a_previous_spectrum():
    S = _random_component(300, 0.04, seed=2)
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
    blocks = [_random_component(260, 0.05, 3), _random_component(200, 0.06, 4)]
    blocks += [_random_component(6, 0.9, 10 + i) for i in range(12)]
    S = _block_diag(blocks)
    assert int((torch.linalg.eigvalsh(S) > 1 - 1e-10).sum()) == 14
    op = SparseOperator.from_dense(S)
    for k in (10, 70):  # eigenvalue 1 with multiplicity 14 > k, then a k that reaches into the large components
        vals, vecs = eigen.top_eigenpairs(op, k, dense_threshold=50, method=method)
        _check_against_dense(S, vals, vecs, k)
    vals_l, _ = eigen.top_eigenpairs(op, 70, dense_threshold=50, method="lanczos")
    assert torch.allclose(vals, vals_l, atol=1e-10, rtol=0)


def test_topd_engine_same_predictions_filtered_and_lanczos(monkeypatch):
    from graphstk.methods import propagation as P

    W, ei, _ = random_graph(500, 0.03, seed=5)
    kernel = GraphKernel(ei, 500)
    y = torch.arange(500) % 3
    prob = P.make_problem(kernel, y, torch.arange(0, 500, 10), 3)
    out = {}
    for method in ("lanczos", "filtered"):
        orig = eigen.top_eigenpairs
        monkeypatch.setattr(eigen, "top_eigenpairs",
                            lambda op, k, method=method, **kw: orig(op, k, dense_threshold=100, method=method, **kw))
        out[method] = P.stkr_topd(prob, [64, 100], [1e-2, 1.0])
        monkeypatch.setattr(eigen, "top_eigenpairs", orig)
    for key, h in out["lanczos"].h.items():
        assert torch.allclose(out["filtered"].h[key], h, atol=1e-7 * h.abs().max())


def test_bad_method_is_rejected():
    with pytest.raises(ValueError, match="method must be"):
        eigen.top_eigenpairs(SparseOperator.from_dense(torch.eye(4, dtype=torch.float64)), 2, method="cold")


# ---------------------------------------------------------------------------
# multi-shift CG
# ---------------------------------------------------------------------------
def _graph_S(n=120, p=0.05, seed=0, components=False):
    S = _random_component(n, p, seed)
    if components:
        S = _block_diag([S, _random_component(30, 0.2, seed + 1), _random_component(5, 0.9, seed + 2)])
    return S


@pytest.mark.parametrize("components", [False, True])
def test_multishift_matches_per_shift_direct_solves(components):
    S = _graph_S(components=components)
    n = S.shape[0]
    b = torch.randn(n, 4, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    b[:, 3] = 0  # a zero right-hand side stays zero
    etas = [0.5, 0.9, 0.99, 0.999, 0.999999]
    xs, res = solve_shifted_laplacians(lambda v: S @ v, b, etas, tol=1e-12, max_iter=2000)
    assert res.converged
    for eta, x in zip(etas, xs):
        ref = torch.linalg.solve(torch.eye(n, dtype=torch.float64) - eta * S, b)
        assert torch.allclose(x, ref, rtol=1e-8, atol=1e-8 * ref.abs().max())
        assert x[:, 3].abs().max() == 0


def test_multishift_cg_general_shifts_and_order():
    S = _graph_S(seed=3)
    n = S.shape[0]
    b = torch.randn(n, 2, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    sigmas = [3.0, 1.05, 1.5]  # the seed (smallest shift) is not first
    res = multishift_cg(lambda v: S @ v, b, sigmas, tol=1e-12)
    for s, x in zip(sigmas, res.x):
        ref = torch.linalg.solve(s * torch.eye(n, dtype=torch.float64) - S, b)
        assert torch.allclose(x, ref, rtol=1e-9, atol=1e-10)


def test_multishift_rejects_an_indefinite_shift():
    S = _graph_S(seed=4)
    b = torch.ones(S.shape[0], 1, dtype=torch.float64)
    with pytest.raises(FloatingPointError, match="positive definite"):
        multishift_cg(lambda v: S @ v, b, [0.5, 2.0], tol=1e-10)
    with pytest.raises(ValueError, match="eta must be > 0"):
        solve_shifted_laplacians(lambda v: S @ v, b, [0.0])


# ---------------------------------------------------------------------------
# engines: multi-shift routes and the reduced-product Algorithm 1 against dense closed forms
# ---------------------------------------------------------------------------
def _engine_setup(hidden=None, seed=0, n=40, C=3):
    from dense_reference import visible_kernel
    from graphstk.methods import propagation as P

    W, ei, w = random_graph(n, 0.15, seed, psd=True)
    y = torch.randint(0, C, (n,), generator=torch.Generator().manual_seed(seed + 1))
    kernel = GraphKernel(ei, n, hidden=hidden, edge_weight=w)
    S, vis, rows = visible_kernel(W, hidden or [])
    train = list(range(8))
    prob = P.make_problem(kernel, y, torch.tensor(train), C)
    return P, prob, S


@pytest.mark.parametrize("hidden", [None, [30, 31, 32]])
def test_inverse_laplacian_direct_route_multishift_equals_lu_and_eq7(monkeypatch, hidden):
    from graphstk.spectral.transforms import InverseLaplacian

    P, prob, S = _engine_setup(hidden)
    etas, betas = [0.5, 0.9, 0.999], [1e-3, 1.0]
    trs = [InverseLaplacian(e) for e in etas]
    lu = P.stkr_reciprocal(prob, trs, betas, solver="direct")
    monkeypatch.setattr(routes, "MULTISHIFT_MIN_NNZ", 0)
    monkeypatch.setattr(routes, "MULTISHIFT_MIN_SHIFTS", 2)
    assert P.use_multishift(prob, len(etas)) and not P.use_multishift(prob, 1)
    ms = P.stkr_reciprocal(prob, trs, betas, solver="auto")
    assert "multi-shift CG" in ms.history[0].solver
    N, n = S.shape[0], prob.n
    E = torch.zeros(N, n, dtype=torch.float64)
    E[prob.train, torch.arange(n)] = 1
    for t, eta in enumerate(etas):
        X = torch.linalg.solve(torch.eye(N, dtype=torch.float64) - eta * S, E)   # Q^{-1} E, Eq. 20
        A = N * (S @ X)[prob.train]
        for b, beta in enumerate(betas):                                       # Eq. 7: h = N X alpha
            alpha = torch.linalg.solve(A + n * beta * torch.eye(n, dtype=torch.float64), prob.Y)
            ref = N * X @ alpha
            for out in (lu, ms):
                assert torch.allclose(out.h[(t * len(betas) + b, None)], ref, atol=1e-8 * ref.abs().max(), rtol=0)


@pytest.mark.parametrize("hidden", [None, [30, 31, 32]])
def test_single_eta_takes_cg_on_large_graphs_and_matches_eq7(monkeypatch, hidden):
    """From SINGLE_SHIFT_MIN_NNZ (forced to 0 here) one eta (the final view) is solved by CG, not
    the sparse LU: the same h as Eq. 7 in closed form."""
    from graphstk.spectral.transforms import InverseLaplacian

    P, prob, S = _engine_setup(hidden)
    assert not P.use_multishift(prob, 1)
    monkeypatch.setattr(routes, "SINGLE_SHIFT_MIN_NNZ", 0)
    assert P.use_multishift(prob, 1)
    eta, beta = 0.99, 0.1
    out = P.stkr_reciprocal(prob, [InverseLaplacian(eta)], [beta], solver="auto")
    assert out.history[0].solver == "direct (n x n system; (I - eta S)^-1 E by CG)"
    N, n = S.shape[0], prob.n
    E = torch.zeros(N, n, dtype=torch.float64)
    E[prob.train, torch.arange(n)] = 1
    X = torch.linalg.solve(torch.eye(N, dtype=torch.float64) - eta * S, E)
    alpha = torch.linalg.solve(N * (S @ X)[prob.train] + n * beta * torch.eye(n, dtype=torch.float64), prob.Y)
    ref = N * X @ alpha
    assert torch.allclose(out.h[(0, None)], ref, atol=1e-8 * ref.abs().max(), rtol=0)


def test_label_propagation_cg_all_etas_from_one_sequence_matches_eq22():
    P, prob, S = _engine_setup()
    etas = [0.3, 0.9, 0.99]
    res = P.label_propagation(prob, etas, solver="cg", tol=1e-12, max_iter=5000)
    assert res.history[0].solver == "multishift-cg" and res.history[0].converged
    N = S.shape[0]
    for g, eta in enumerate(etas):
        ref = torch.linalg.solve(torch.eye(N, dtype=torch.float64) - eta * S, prob.scatter(prob.Y))
        assert torch.allclose(res.h[(g, None)], ref, atol=1e-9)


@pytest.mark.parametrize("coeffs", [[1.0], [0.3, 2.0], [0.0] * 7 + [1.0], [0.5, -0.2, 0.1]])
def test_reduced_product_gram_apply_matches_dense_closed_form(coeffs):
    P, prob, S = _engine_setup([30, 31, 32])
    alpha = torch.randn(prob.n, 5, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    sS = sum(c * torch.linalg.matrix_power(S, p + 1) for p, c in enumerate(coeffs))   # s(S), Eq. 5
    ref = sS[prob.train][:, prob.train] @ alpha
    assert torch.allclose(P._gram_apply(prob, coeffs, alpha), ref, atol=1e-12)
    # q - 2 full products: the two others touch only the labeled columns / rows
    calls = []
    orig = prob.kernel.S._matmul
    prob.kernel.S._matmul = lambda x: (calls.append(1), orig(x))[1]
    P._gram_apply(prob, coeffs, alpha)
    assert len(calls) == max(len(coeffs) - 2, 0)


def test_reduced_product_is_bitwise_the_full_product_for_a_monomial():
    P, prob, S = _engine_setup()
    coeffs = [0.0] * 7 + [1.0]
    alpha = torch.randn(prob.n, 3, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    full = prob.S(P._horner(prob, coeffs, prob.scatter(alpha)))[prob.train]
    assert torch.equal(P._gram_apply(prob, coeffs, alpha), full)


@pytest.mark.parametrize("k", [64, 128])
def test_filtered_eigensolver_on_dblp_where_the_top_eigenvalues_cluster(dblp, k):
    # DBLP's giant component without its labeled nodes (the final view of seed 3, App. D split): the
    # estimate of lambda_{1.15k + 8} lands above lambda_1 (k = 64) or above lambda_k (k = 128). The
    # old rule, halving [lo, cut] after a miss, then ran a filter that separated nothing: 2.9e5
    # products of S and 49-74 s per solve. Same eigenvalues as a plain Lanczos run, in few products.
    from graphstk.data import make_split
    from graphstk.methods import propagation as P
    from scipy.sparse.csgraph import connected_components
    from scipy.sparse.linalg import eigsh

    split = make_split(dblp, 0.01, 3)
    kernel = GraphKernel(dblp.edge_index, int(dblp.num_nodes), hidden=split.test, dtype=torch.float64)
    y = torch.full_like(dblp.y.long(), -1)
    y[split.train] = dblp.y.long()[split.train]
    prob = P.make_problem(kernel, y, split.train)
    keep = P.labeled_components(prob)
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


def test_column_block_width_splits_only_wide_blocks_that_fit_the_cache(monkeypatch):
    import graphstk.operators.base as OB
    monkeypatch.setattr(OB, "WIDE_BLOCK_BYTES", 1000)
    monkeypatch.setattr(OB, "CACHE_BLOCK_BYTES", 800)
    f64 = torch.float64
    assert OB.column_block_width(torch.zeros(10, 12, dtype=f64)) == 12        # 960 bytes: one product
    assert OB.column_block_width(torch.zeros(10, 40, dtype=f64)) == 10        # 800 // (10 * 8) columns a block
    assert OB.column_block_width(torch.zeros(20, 40, dtype=f64)) == 40        # 8 columns would exceed 800 bytes
    assert OB.column_block_width(torch.zeros(10, 40, dtype=f64, device="meta")) == 40   # not on CPU: whole


def test_blocked_sparse_product_equals_the_dense_product(monkeypatch):
    """A wide right-hand side multiplied in column blocks (forced small here) gives the dense
    product and the one-call sparse product, up to the rounding of a different summation order."""
    import graphstk.operators.base as OB
    W, _, _ = random_graph(30, 0.2, 4)
    S = normalized(W)
    op = SparseOperator.from_dense(S)
    x = torch.randn(30, 37, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    whole = op @ x
    monkeypatch.setattr(OB, "WIDE_BLOCK_BYTES", 0)
    monkeypatch.setattr(OB, "CACHE_BLOCK_BYTES", 30 * 8 * 8)   # 8 columns a block: 5 blocks, the last of 5
    assert OB.column_block_width(x) == 8
    blocked = op @ x
    assert torch.allclose(blocked, S @ x, atol=1e-13, rtol=0)
    # every entry is a sum of at most 30 products of numbers below 10: a lost or repeated block
    # changes entries by O(1), a different summation order by a few units of 1e-16
    torch.testing.assert_close(blocked, whole, rtol=0, atol=1e-13)


def test_reuse_freed_memory_applies_on_glibc_and_can_be_turned_off(monkeypatch):
    import platform

    from graphstk._malloc import reuse_freed_memory
    monkeypatch.setenv("GRAPHSTK_MALLOC", "default")
    assert reuse_freed_memory() is False
    monkeypatch.delenv("GRAPHSTK_MALLOC")
    libc, version = platform.libc_ver()
    applied = reuse_freed_memory()   # (this leaves the pytest process with the raised thresholds; harmless)
    assert isinstance(applied, bool)
    if platform.system() == "Linux" and libc == "glibc" and tuple(map(int, version.split(".")[:2])) >= (2, 35):
        assert applied   # the glibc of this project's machines (2.36) accepts the 1 GiB threshold


@pytest.mark.parametrize("tol,snaps", [(0.0, (1, 3, 7, 20)), (1e-8, (5, 10_000))])
def test_fused_richardson_step_matches_the_generic_update(tol, snaps):
    """``richardson(..., step=...)`` against the generic update with a per-column step size != 1:
    the same iterates, snapshots, iteration count and recorded residuals (which the fused path
    reads off (x_{t+1} - x_t) / gamma)."""
    from graphstk.spectral.solvers import richardson
    g = torch.Generator().manual_seed(0)
    A = torch.randn(30, 30, dtype=torch.float64, generator=g)
    A = A @ A.T / 30 + torch.eye(30, dtype=torch.float64)
    b = torch.randn(30, 4, dtype=torch.float64, generator=g)
    gamma = torch.tensor([0.1, 0.2, 0.3, 0.15], dtype=torch.float64)
    seen = {"generic": [], "fused": []}
    kw = dict(snapshots=snaps, warn=False)
    ref = richardson(lambda x: A @ x, b, gamma, 300 if tol else 20, tol,
                     callback=lambda t, r: seen["generic"].append((t, r)), **kw)
    out = richardson(lambda x: A @ x, b, gamma, 300 if tol else 20, tol, step=lambda x: x + gamma * (b - A @ x),
                     callback=lambda t, r: seen["fused"].append((t, r)), **kw)
    assert out.n_iter == ref.n_iter and out.converged == ref.converged
    assert torch.allclose(out.x, ref.x, atol=1e-13, rtol=0)
    for t in snaps:
        assert torch.allclose(out.snapshots[t], ref.snapshots[t], atol=1e-13, rtol=0)
    assert len(seen["fused"]) == len(seen["generic"]) > 0
    for (t1, r1), (t2, r2) in zip(seen["fused"], seen["generic"]):
        assert t1 == t2 and abs(r1 - r2) <= 1e-6 * r2 + 1e-14   # the difference loses ~1e-16 absolute
    zero = richardson(lambda x: A @ x, b, gamma, 0, 0.0, step=lambda x: x + gamma * (b - A @ x))
    assert torch.equal(zero.x, torch.zeros_like(b))


def test_fused_richardson_does_not_claim_a_tolerance_float32_cannot_reach():
    """In float32 the fused step's difference x_{t+1} - x_t can vanish by rounding while b - A x
    does not: Label-Prop by Richardson to tol = 1e-8 (below float32's reach here) must end as not
    converged, with a warning and the true residual, as the generic update does."""
    from graphstk.methods import propagation as P
    from graphstk.spectral.solvers import ConvergenceWarning

    W, ei, w = random_graph(36, 0.15, 0)
    y = torch.randint(0, 3, (36,), generator=torch.Generator().manual_seed(1))
    kernel = GraphKernel(ei, 36, edge_weight=w, dtype=torch.float32)
    prob = P.make_problem(kernel, y, torch.arange(8), 3)
    with pytest.warns(ConvergenceWarning):
        out = P.label_propagation(prob, [0.99], solver="richardson", tol=1e-8, max_iter=5000)
    res = out.history[0]
    assert not res.converged and res.residuals[-1] >= 1e-8
    S = normalized(W).double()
    b = torch.zeros(36, 3, dtype=torch.float64)
    b[prob.train] = prob.Y.double()
    x = out.h[(0, None)].double()
    true = float((torch.linalg.vector_norm(b - x + 0.99 * S @ x, dim=0) / torch.linalg.vector_norm(b, dim=0)).max())
    assert true >= 1e-8
