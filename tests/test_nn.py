"""graphstk.nn: the PyG-style modules equal the dense closed forms and the estimators."""
from __future__ import annotations

import pytest
import torch
from torch_geometric.data import Data

from graphstk.methods.estimators import STKR
from graphstk.methods.estimators import LabelPropagation as LPEstimator
from graphstk.nn import LabelPropagation, STKRPropagation
from graphstk.spectral.transforms import InverseLaplacian, Polynomial, ReciprocalPolynomial, TopD

N, C = 40, 3


def random_graph(seed: int, n: int = N, psd: bool = False):
    """A connected undirected random graph (a ring plus random chords), with positive weights.

    ``psd=True`` adds self-loops of weight ``degree + 1`` so that ``W`` is diagonally
    dominant, hence positive definite (and ``S`` has no negative eigenvalue).
    """
    g = torch.Generator().manual_seed(seed)
    ring = torch.stack([torch.arange(n), (torch.arange(n) + 1) % n])
    extra = torch.randint(0, n, (2, 2 * n), generator=g)
    extra = extra[:, extra[0] != extra[1]]
    ei = torch.cat([ring, extra], 1)
    w = torch.rand(ei.shape[1], generator=g, dtype=torch.float64) + 0.5
    ei, w = torch.cat([ei, ei.flip(0)], 1), torch.cat([w, w])
    W = torch.zeros(n, n, dtype=torch.float64).index_put_((ei[0], ei[1]), w, accumulate=True)
    if psd:
        loops = torch.arange(n)
        ei = torch.cat([ei, torch.stack([loops, loops])], 1)
        lw = W.sum(1) + 1.0
        w = torch.cat([w, lw])
        W = W + torch.diag(lw)
    return ei, w, W


def labels(seed: int, n: int = N, frac: float = 0.3):
    g = torch.Generator().manual_seed(seed + 1)
    y = torch.randint(0, C, (n,), generator=g)
    mask = torch.zeros(n, dtype=torch.bool)
    mask[torch.randperm(n, generator=g)[: int(frac * n)]] = True
    y[: C] = torch.arange(C)  # every class present, so y.max() + 1 == C
    mask[: C] = True
    return y, mask


def dense_S(W: torch.Tensor) -> torch.Tensor:
    d = W.sum(1).rsqrt()
    return d[:, None] * W * d[None, :]


def lp_closed_form(W, Ytilde, eta):
    """Eq. 22: ``(I - eta S)^{-1} [Y; 0]``."""
    S = dense_S(W)
    return torch.linalg.solve(torch.eye(W.shape[0], dtype=W.dtype) - eta * S, Ytilde)


def stkr_closed_form(sS, mask, Y, beta):
    """Eq. 7 with ``G_{Khat_s} = N s(S)``: ``f = N s(S)[:, n] (N s(S)_nn + n beta I)^{-1} Y``."""
    Nn = sS.shape[0]
    idx = mask.nonzero().flatten() if mask.dtype == torch.bool else mask
    n = idx.numel()
    A = Nn * sS[idx][:, idx] + n * beta * torch.eye(n, dtype=sS.dtype)
    return Nn * sS[:, idx] @ torch.linalg.solve(A, Y)


def onehot_rows(y, mask):
    Yt = torch.zeros(y.numel(), C, dtype=torch.float64)
    Yt[mask] = torch.nn.functional.one_hot(y[mask], C).double()
    return Yt


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_label_propagation_matches_eq22(seed):
    ei, w, W = random_graph(seed)
    y, mask = labels(seed)
    lp = LabelPropagation(eta=0.9, tol=1e-12, max_iter=500, dtype=torch.float64)
    out = lp(y, ei, mask, w)
    assert out.shape == (N, C) and out.dtype == torch.float64
    torch.testing.assert_close(out, lp_closed_form(W, onehot_rows(y, mask), 0.9), atol=1e-9, rtol=1e-9)


@pytest.mark.parametrize("solver", ["richardson", "cg", "direct"])
def test_label_propagation_solvers(solver):
    ei, w, W = random_graph(3)
    y, mask = labels(3)
    out = LabelPropagation(eta=0.8, tol=1e-12, max_iter=2000, solver=solver, dtype=torch.float64)(y, ei, mask, w)
    torch.testing.assert_close(out, lp_closed_form(W, onehot_rows(y, mask), 0.8), atol=1e-9, rtol=1e-9)


def test_label_propagation_fixed_iterations_is_zhou():
    """``num_iter=T``: T steps of ``Yhat <- eta S Yhat + [Y; 0]`` from 0, labels seen at every step."""
    ei, w, W = random_graph(4)
    y, mask = labels(4)
    S, Yt = dense_S(W), onehot_rows(y, mask)
    x = torch.zeros_like(Yt)
    for _ in range(7):
        x = 0.9 * S @ x + Yt
    out = LabelPropagation(eta=0.9, num_iter=7, dtype=torch.float64)(y, ei, mask, w)
    torch.testing.assert_close(out, x, atol=1e-12, rtol=1e-12)
    # No clamping: scores can exceed 1 (PyG's version clamps to [0, 1]).
    assert float(out.max()) > 1.0


def test_label_propagation_matches_estimator():
    ei, w, _ = random_graph(5)
    y, mask = labels(5)
    data = Data(edge_index=ei, edge_weight=w, y=y, num_nodes=N)
    est = LPEstimator(eta=0.95, tol=1e-12, max_iter=1000).fit(data, mask.nonzero().flatten())
    out = LabelPropagation(eta=0.95, tol=1e-12, max_iter=1000, dtype=torch.float64)(y, ei, mask, w)
    torch.testing.assert_close(out, est.decision_function(torch.arange(N)), atol=1e-10, rtol=1e-10)


def test_stkr_polynomial_matches_eq7():
    ei, w, W = random_graph(6)
    y, mask = labels(6)
    S = dense_S(W)
    tr = Polynomial.monomial(8)
    beta = 1e-2
    ref = stkr_closed_form(torch.linalg.matrix_power(S, 8), mask, onehot_rows(y, mask)[mask], beta)
    for solver in ("auto", "cg", "gmres", "direct"):
        m = STKRPropagation(tr, beta, tol=1e-12, max_iter=5000, solver=solver, dtype=torch.float64)
        torch.testing.assert_close(m(y, ei, mask, w), ref, atol=1e-8, rtol=1e-8, msg=solver)


def test_stkr_polynomial_indefinite_uses_gmres():
    """``s(l) = l + l^2 / 2`` is negative on part of ``[-1, 0]``: ``auto`` must not pick CG."""
    ei, w, W = random_graph(7)
    y, mask = labels(7)
    S = dense_S(W)
    tr = Polynomial([1.0, 0.5])
    beta = 1.0
    ref = stkr_closed_form(S + 0.5 * S @ S, mask, onehot_rows(y, mask)[mask], beta)
    m = STKRPropagation(tr, beta, tol=1e-12, max_iter=5000, dtype=torch.float64)
    torch.testing.assert_close(m(y, ei, mask, w), ref, atol=1e-8, rtol=1e-8)


@pytest.mark.parametrize("solver", ["auto", "gmres", "direct"])
def test_stkr_inverse_laplacian_matches_eq7(solver):
    ei, w, W = random_graph(8)
    y, mask = labels(8)
    S = dense_S(W)
    eta, beta = 0.9, 1e-2
    sS = S @ torch.linalg.inv(torch.eye(N, dtype=torch.float64) - eta * S)  # s(l) = l / (1 - eta l)
    ref = stkr_closed_form(sS, mask, onehot_rows(y, mask)[mask], beta)
    m = STKRPropagation(InverseLaplacian(eta), beta, tol=1e-12, max_iter=5000, solver=solver, dtype=torch.float64)
    torch.testing.assert_close(m(y, ei, mask, w), ref, atol=1e-8, rtol=1e-8)


def test_stkr_inverse_laplacian_richardson_on_psd_graph():
    """Algorithm 2 with Richardson converges when ``W`` (hence ``S``) is positive semidefinite."""
    ei, w, W = random_graph(9, psd=True)
    assert float(torch.linalg.eigvalsh(dense_S(W)).min()) > 0
    y, mask = labels(9)
    S = dense_S(W)
    eta, beta = 0.5, 1.0
    sS = S @ torch.linalg.inv(torch.eye(N, dtype=torch.float64) - eta * S)
    ref = stkr_closed_form(sS, mask, onehot_rows(y, mask)[mask], beta)
    m = STKRPropagation(InverseLaplacian(eta), beta, tol=1e-11, max_iter=200000, solver="richardson",
                        dtype=torch.float64)
    out = m(y, ei, mask, w)
    assert m.history_[-1].converged
    torch.testing.assert_close(out, ref, atol=1e-7, rtol=1e-7)


def test_stkr_reciprocal_degree2_gmres():
    """``1/s(l) = l^-1 - 0.3 + 0.1 l``: ``rho(l) = 1 - 0.3 l + 0.1 l^2 > 0``."""
    ei, w, W = random_graph(10)
    y, mask = labels(10)
    S = dense_S(W)
    I = torch.eye(N, dtype=torch.float64)
    tr = ReciprocalPolynomial((1.0, -0.3, 0.1), r=1)
    sS = S @ torch.linalg.inv(I - 0.3 * S + 0.1 * S @ S)
    ref = stkr_closed_form(sS, mask, onehot_rows(y, mask)[mask], 0.1)
    out = STKRPropagation(tr, 0.1, tol=1e-12, max_iter=5000, dtype=torch.float64)(y, ei, mask, w)
    torch.testing.assert_close(out, ref, atol=1e-8, rtol=1e-8)


@pytest.mark.parametrize("transform", [Polynomial.monomial(4), InverseLaplacian(0.9)])
def test_stkr_matches_estimator(transform):
    ei, w, _ = random_graph(11)
    y, mask = labels(11)
    data = Data(edge_index=ei, edge_weight=w, y=y, num_nodes=N)
    est = STKR(transform, 0.05, solver="direct").fit(data, mask.nonzero().flatten())
    out = STKRPropagation(transform, 0.05, tol=1e-12, max_iter=5000, dtype=torch.float64)(y, ei, mask, w)
    torch.testing.assert_close(out, est.decision_function(torch.arange(N)), atol=1e-8, rtol=1e-8)


def test_stkr_fixed_budget_equals_estimator_budget():
    ei, w, _ = random_graph(12)
    y, mask = labels(12)
    data = Data(edge_index=ei, edge_weight=w, y=y, num_nodes=N)
    for tr in (Polynomial.monomial(2), InverseLaplacian(0.5)):
        est = STKR(tr, 0.1, tol=0, max_iter=25).fit(data, mask.nonzero().flatten())
        out = STKRPropagation(tr, 0.1, tol=0, max_iter=25, dtype=torch.float64)(y, ei, mask, w)
        torch.testing.assert_close(out, est.decision_function(torch.arange(N)), atol=1e-12, rtol=1e-12)


@pytest.mark.parametrize("module", [LabelPropagation(eta=0.9, tol=1e-12, max_iter=500, dtype=torch.float64),
                                    STKRPropagation(InverseLaplacian(0.9), 0.01, tol=1e-12, dtype=torch.float64),
                                    STKRPropagation(Polynomial.monomial(3), 0.01, tol=1e-12, dtype=torch.float64)])
def test_soft_labels_and_masks(module):
    ei, w, _ = random_graph(13)
    y, mask = labels(13)
    idx = mask.nonzero().flatten()
    base = module(y, ei, mask, w)
    # index mask == bool mask, in any order
    torch.testing.assert_close(module(y, ei, idx.flip(0), w), base, atol=1e-10, rtol=1e-10)
    # one-hot float labels == integer labels; rows outside the mask are ignored
    Yf = torch.nn.functional.one_hot(y, C).double()
    Yf[~mask] = torch.rand(int((~mask).sum()), C, dtype=torch.float64)
    torch.testing.assert_close(module(Yf, ei, mask, w), base, atol=1e-10, rtol=1e-10)
    # integer labels of unlabeled nodes are ignored, -1 included
    y2 = y.clone()
    y2[~mask] = -1
    torch.testing.assert_close(module(y2, ei, mask, w), base, atol=1e-10, rtol=1e-10)
    # soft labels: the modules are linear in Y
    g = torch.Generator().manual_seed(0)
    P1 = torch.rand(N, C, generator=g, dtype=torch.float64)
    P2 = torch.rand(N, C, generator=g, dtype=torch.float64)
    torch.testing.assert_close(module(2 * P1 - P2, ei, mask, w),
                               2 * module(P1, ei, mask, w) - module(P2, ei, mask, w), atol=1e-9, rtol=1e-9)


def test_soft_labels_closed_form():
    ei, w, W = random_graph(14)
    _, mask = labels(14)
    P = torch.softmax(torch.randn(N, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(1)), 1)
    Pt = torch.where(mask[:, None], P, torch.zeros_like(P))
    out = LabelPropagation(eta=0.7, tol=1e-12)(P, ei, mask, w)
    torch.testing.assert_close(out, lp_closed_form(W, Pt, 0.7), atol=1e-9, rtol=1e-9)
    S = dense_S(W)
    ref = stkr_closed_form(S @ S, mask, P[mask], 0.1)
    out = STKRPropagation(Polynomial.monomial(2), 0.1, tol=1e-12)(P, ei, mask, w)
    torch.testing.assert_close(out, ref, atol=1e-9, rtol=1e-9)


def test_dtypes_and_unweighted():
    """dtype=None computes in float64 and returns y's float dtype (the default dtype for
    integer labels); an explicit dtype is used throughout. No edge_weight: W = adjacency."""
    ei, _, _ = random_graph(15)
    y, mask = labels(15)
    W = torch.zeros(N, N, dtype=torch.float64).index_put_((ei[0], ei[1]), torch.ones(ei.shape[1], dtype=torch.float64),
                                                           accumulate=True)
    ref = lp_closed_form(W, onehot_rows(y, mask), 0.9)
    lp = LabelPropagation(eta=0.9, tol=1e-10)
    out = lp(y, ei, mask)
    assert out.dtype == torch.get_default_dtype() and lp.history_[-1].x.dtype == torch.float64
    torch.testing.assert_close(out.double(), ref, atol=1e-5, rtol=1e-5)
    Yf = torch.nn.functional.one_hot(y, C).float()
    assert lp(Yf, ei, mask).dtype == torch.float32 and lp(Yf.double(), ei, mask).dtype == torch.float64
    lp32 = LabelPropagation(eta=0.9, tol=1e-5, dtype=torch.float32)
    out = lp32(y, ei, mask)
    assert out.dtype == torch.float32 and lp32.history_[-1].x.dtype == torch.float32
    torch.testing.assert_close(out.double(), ref, atol=1e-4, rtol=1e-4)
    m = STKRPropagation(InverseLaplacian(0.99), 1e-3, solver="gmres")
    out = m(Yf, ei, mask)
    assert out.dtype == torch.float32 and m.history_[-1].converged


def test_auto_solver_choice():
    """auto: CG for a non-negative polynomial, GMRES for an indefinite one; direct for small
    reciprocal problems (restarted GMRES can stall on indefinite M), GMRES for large ones."""
    from graphstk.methods import propagation as P
    ei, w, _ = random_graph(20)
    y, mask = labels(20)
    from graphstk.operators.graph import GraphKernel
    prob = P.make_problem(GraphKernel(ei, N, edge_weight=w), y, mask, C)
    assert STKRPropagation(Polynomial.monomial(8), 0.1)._solver(prob) == "cg"
    assert STKRPropagation(Polynomial([1.0, 0.5]), 0.1)._solver(prob) == "gmres"
    lap = STKRPropagation(InverseLaplacian(0.9), 0.1)
    assert lap._solver(prob) == "auto"   # the engine then picks the n x n system and its inner route
    assert STKRPropagation(InverseLaplacian(0.9), 0.1, tol=0, max_iter=8)._solver(prob) == "auto"  # engine: Richardson
    assert STKRPropagation(InverseLaplacian(0.9), 0.1, solver="gmres")._solver(prob) == "gmres"
    from graphstk.methods import routes
    old = routes.DIRECT_MAX_ENTRIES
    try:
        routes.DIRECT_MAX_ENTRIES = N * prob.n - 1
        assert lap._solver(prob) == "gmres"
        # the engines follow the same rule: an iterative solve (with a history) instead of the direct one
        assert P.stkr_polynomial(prob, Polynomial.monomial(2), [0.1], tol=1e-10).history
        assert P.stkr_reciprocal(prob, [InverseLaplacian(0.5)], [1.0], tol=1e-10, max_iter=5000).history
    finally:
        routes.DIRECT_MAX_ENTRIES = old
    hist = P.stkr_polynomial(prob, Polynomial.monomial(2), [0.1]).history     # direct: one record, no iterations
    assert len(hist) == 1 and hist[0].solver.startswith("direct") and hist[0].n_iter == 0 and hist[0].reason


def test_mask_none_and_num_classes():
    ei, w, W = random_graph(16)
    y, _ = labels(16)
    out = LabelPropagation(eta=0.5, tol=1e-12, num_classes=C + 2, dtype=torch.float64)(y, ei, None, w)
    assert out.shape == (N, C + 2) and bool((out[:, C:] == 0).all())
    Yt = torch.nn.functional.one_hot(y, C).double()
    torch.testing.assert_close(out[:, :C], lp_closed_form(W, Yt, 0.5), atol=1e-9, rtol=1e-9)


def test_cached_kernel_reused():
    ei, w, _ = random_graph(17)
    y, mask = labels(17)
    lp = LabelPropagation(eta=0.9, tol=1e-10, cached=True, dtype=torch.float64)
    a = lp(y, ei, mask, w)
    k = lp._cached_kernel
    b = lp(y, ei, mask, w)
    assert lp._cached_kernel is k
    torch.testing.assert_close(a, b)


def test_errors():
    ei, w, _ = random_graph(18)
    y, mask = labels(18)
    with pytest.raises(TypeError, match="TopD"):
        STKRPropagation(TopD(3), 0.1)
    with pytest.raises(ValueError, match="beta"):
        STKRPropagation(Polynomial.monomial(2), 0.0)
    with pytest.raises(ValueError, match="eta"):
        LabelPropagation(eta=1.0)
    with pytest.raises(ValueError, match="solver"):
        LabelPropagation(solver="lu")
    with pytest.raises(ValueError, match="no labeled"):
        LabelPropagation()(y, ei, torch.zeros(N, dtype=torch.bool), w)
    with pytest.raises(ValueError, match="duplicates"):
        LabelPropagation()(y, ei, torch.tensor([0, 0, 1]), w)
    y_bad = y.clone()
    y_bad[mask.nonzero()[0]] = -1
    with pytest.raises(ValueError, match="labels"):
        LabelPropagation()(y_bad, ei, mask, w)
    with pytest.raises(ValueError, match="eta"):
        STKRPropagation(InverseLaplacian(1.5), 0.1)(y, ei, mask, w)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_matches_cpu():
    ei, w, _ = random_graph(19)
    y, mask = labels(19)
    for m in (LabelPropagation(eta=0.9, tol=1e-12, dtype=torch.float64),
              LabelPropagation(eta=0.9, num_iter=20, dtype=torch.float64),
              STKRPropagation(InverseLaplacian(0.9), 0.01, tol=1e-12, dtype=torch.float64),
              STKRPropagation(Polynomial.monomial(8), 0.01, tol=1e-12, dtype=torch.float64)):
        cpu = m(y, ei, mask, w)
        gpu = m(y.cuda(), ei.cuda(), mask.cuda(), w.cuda())
        assert gpu.is_cuda
        torch.testing.assert_close(gpu.cpu(), cpu, atol=1e-8, rtol=1e-8)
