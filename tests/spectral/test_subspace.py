"""The torch block eigensolver (Chebyshev-filtered subspace iteration) against dense ``eigh`` and
ARPACK's ``eigsh``: clustered eigenvalues, the eigenvalue 1 once per connected component, eigenvalues
near -1, many eigenpairs, warm starts and the device."""
import numpy as np
import pytest
import scipy.sparse as sp
import torch
from scipy.sparse.linalg import eigsh

from dense_reference import normalized, normalized_random_graph
from graphstk.operators import SparseOperator
from graphstk.spectral import eigen
from graphstk.spectral.subspace import guard_size, subspace_top_eigenpairs


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
