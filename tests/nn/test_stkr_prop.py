"""graphstk.nn.STKRPropagation equals the dense closed form of Eq. 7, the estimator, and never diverges silently."""
from __future__ import annotations

import pytest
import torch
from nn_graphs import C, N, dense_S, labels, random_graph, spectral, stkr_closed_form
from torch_geometric.data import Data

from graphstk.methods.estimators import STKR
from graphstk.nn import DivergenceWarning, STKRPropagation
from graphstk.spectral.transforms import InverseLaplacian, Polynomial, ReciprocalPolynomial, TopD


def Eq23Propagation(*args, **kwargs):
    """``STKRPropagation`` on Eq. 23's kernel ``D^-1/2 W D^-1/2``, the one ``dense_S`` builds."""
    return STKRPropagation(*args, normalization="symmetric", **kwargs)


def onehot(y, mask):
    return torch.nn.functional.one_hot(y[mask], C).double()


def psd_graph(seed: int):
    """``random_graph`` plus self-loops of weight ``degree + 1``: ``W`` diagonally dominant, ``S`` PSD."""
    ei, w, W = random_graph(seed)
    loops = torch.arange(N)
    lw = W.sum(1) + 1.0
    return torch.cat([ei, torch.stack([loops, loops])], 1), torch.cat([w, lw]), W + torch.diag(lw)


def test_stkr_polynomial_matches_eq7():
    ei, w, W = random_graph(6)
    y, mask = labels(6)
    S = dense_S(W)
    tr = Polynomial.monomial(8)
    beta = 1e-2
    ref = stkr_closed_form(torch.linalg.matrix_power(S, 8), mask, onehot(y, mask), beta)
    for solver in ("auto", "cg", "gmres", "direct"):
        m = Eq23Propagation(tr, beta, tol=1e-12, max_iter=5000, solver=solver, dtype=torch.float64)
        torch.testing.assert_close(m(y, ei, mask, w), ref, atol=1e-8, rtol=1e-8, msg=solver)


def test_stkr_polynomial_indefinite_uses_gmres():
    """``s(l) = l + l^2 / 2`` is negative on part of ``[-1, 0]``: ``auto`` must not pick CG."""
    ei, w, W = random_graph(7)
    y, mask = labels(7)
    S = dense_S(W)
    tr = Polynomial([1.0, 0.5])
    beta = 1.0
    ref = stkr_closed_form(S + 0.5 * S @ S, mask, onehot(y, mask), beta)
    m = Eq23Propagation(tr, beta, tol=1e-12, max_iter=5000, dtype=torch.float64)
    torch.testing.assert_close(m(y, ei, mask, w), ref, atol=1e-8, rtol=1e-8)


@pytest.mark.parametrize("solver", ["auto", "gmres", "direct"])
def test_stkr_inverse_laplacian_matches_eq7(solver):
    ei, w, W = random_graph(8)
    y, mask = labels(8)
    S = dense_S(W)
    eta, beta = 0.9, 1e-2
    sS = S @ torch.linalg.inv(torch.eye(N, dtype=torch.float64) - eta * S)  # s(l) = l / (1 - eta l)
    ref = stkr_closed_form(sS, mask, onehot(y, mask), beta)
    m = Eq23Propagation(InverseLaplacian(eta), beta, tol=1e-12, max_iter=5000, solver=solver, dtype=torch.float64)
    torch.testing.assert_close(m(y, ei, mask, w), ref, atol=1e-8, rtol=1e-8)


def test_stkr_inverse_laplacian_richardson_on_psd_graph():
    """Algorithm 2 with Richardson converges when ``W`` (hence ``S``) is positive semidefinite."""
    ei, w, W = psd_graph(9)
    assert float(torch.linalg.eigvalsh(dense_S(W)).min()) > 0
    y, mask = labels(9)
    S = dense_S(W)
    eta, beta = 0.5, 1.0
    sS = S @ torch.linalg.inv(torch.eye(N, dtype=torch.float64) - eta * S)
    ref = stkr_closed_form(sS, mask, onehot(y, mask), beta)
    m = Eq23Propagation(InverseLaplacian(eta), beta, tol=1e-11, max_iter=200000, solver="richardson",
                        dtype=torch.float64)
    out = m(y, ei, mask, w)
    torch.testing.assert_close(out, ref, atol=1e-7, rtol=1e-7)


def test_stkr_reciprocal_degree2_gmres():
    """``1/s(l) = l^-1 - 0.3 + 0.1 l``: ``rho(l) = 1 - 0.3 l + 0.1 l^2 > 0``."""
    ei, w, W = random_graph(10)
    y, mask = labels(10)
    S = dense_S(W)
    I = torch.eye(N, dtype=torch.float64)
    tr = ReciprocalPolynomial((1.0, -0.3, 0.1), r=1)
    sS = S @ torch.linalg.inv(I - 0.3 * S + 0.1 * S @ S)
    ref = stkr_closed_form(sS, mask, onehot(y, mask), 0.1)
    out = Eq23Propagation(tr, 0.1, tol=1e-12, max_iter=5000, dtype=torch.float64)(y, ei, mask, w)
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
    ei, w, _ = psd_graph(12)                          # a converging budget: the same T steps as the estimator
    y, mask = labels(12)
    data = Data(edge_index=ei, edge_weight=w, y=y, num_nodes=N)
    for tr in (Polynomial.monomial(2), InverseLaplacian(0.5)):
        est = STKR(tr, 0.1, tol=0, max_iter=25).fit(data, mask.nonzero().flatten())
        out = STKRPropagation(tr, 0.1, tol=0, max_iter=25, dtype=torch.float64)(y, ei, mask, w)
        torch.testing.assert_close(out, est.decision_function(torch.arange(N)), atol=1e-12, rtol=1e-12)



def test_soft_labels_masks_and_ids():
    ei, w, W = random_graph(13)
    y, mask = labels(13)
    m = Eq23Propagation(InverseLaplacian(0.9), 0.01, tol=1e-12, dtype=torch.float64)
    base = m(y, ei, mask, w)
    torch.testing.assert_close(m(y, ei, mask.nonzero().flatten().flip(0), w), base, atol=1e-10, rtol=1e-10)
    Yf = torch.nn.functional.one_hot(y, C).double()
    Yf[~mask] = torch.rand(int((~mask).sum()), C, dtype=torch.float64)
    torch.testing.assert_close(m(Yf, ei, mask, w), base, atol=1e-10, rtol=1e-10)
    y2 = y.clone()
    y2[~mask] = -1                                    # labels outside the mask are never read
    torch.testing.assert_close(m(y2, ei, mask, w), base, atol=1e-10, rtol=1e-10)
    P = torch.softmax(torch.randn(N, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(1)), 1)
    out = Eq23Propagation(Polynomial.monomial(2), 0.1, tol=1e-12)(P, ei, mask, w)
    torch.testing.assert_close(out, stkr_closed_form(dense_S(W) @ dense_S(W), mask, P[mask], 0.1), atol=1e-9, rtol=1e-9)


def test_adjacency_forms_agree():
    ei, w, W = random_graph(14)
    y, mask = labels(14)
    m = STKRPropagation(Polynomial.monomial(3), 0.05, tol=1e-12, dtype=torch.float64)
    base = m(y, ei, mask, w)
    adj = torch.sparse_coo_tensor(ei.flip(0), w, (N, N)).coalesce()
    for a in (adj, adj.to_sparse_csr()):
        torch.testing.assert_close(m(y, a, mask), base, atol=1e-10, rtol=1e-10)


def test_directed_graph_is_refused():
    from torch_geometric.utils import to_undirected
    ei = torch.tensor([[0, 1, 2], [1, 2, 0]])
    with pytest.raises(ValueError, match="undirected.*to_undirected"):
        STKRPropagation(Polynomial.monomial(2), 0.1)(torch.tensor([0, 1, 0]), ei)
    out = STKRPropagation(Polynomial.monomial(2), 0.1)(torch.tensor([0, 1, 0]), to_undirected(ei))   # the fix
    assert torch.isfinite(out).all()


@pytest.mark.parametrize("bad, why, fix", [
    (-0.5, "2 negative entries", lambda w: w.clamp(min=0)),
    (float("nan"), "2 NaN or infinite entries", lambda w: torch.nan_to_num(w, nan=0.0)),
])
def test_bad_edge_weights_are_named_and_the_advice_works(bad, why, fix):
    """Negative or NaN weights on an undirected graph are named as such (not as 'needs an
    undirected graph'); the suggested repair gives finite scores."""
    ei, w, _ = random_graph(18)
    y, mask = labels(18)
    w = w.clone()
    w[0] = bad
    w[(ei[0] == ei[1, 0]) & (ei[1] == ei[0, 0])] = bad       # the reverse edge too: still symmetric
    m = STKRPropagation(Polynomial.monomial(2), 0.1, dtype=torch.float64)
    with pytest.raises(ValueError, match=f"edge_weight has {why}") as err:
        m(y, ei, mask, w)
    assert "undirected" not in str(err.value)
    assert torch.isfinite(m(y, ei, mask, fix(w))).all()


def test_errors():
    ei, w, _ = random_graph(18)
    y, mask = labels(18)
    with pytest.raises(TypeError, match="TopD"):
        STKRPropagation(TopD(3), 0.1)
    with pytest.raises(ValueError, match="beta"):
        STKRPropagation(Polynomial.monomial(2), 0.0)
    with pytest.raises(ValueError, match="eta"):
        STKRPropagation(InverseLaplacian(1.5), 0.1)
    with pytest.raises(ValueError, match="no labeled"):
        STKRPropagation(Polynomial.monomial(2), 0.1)(y, ei, torch.zeros(N, dtype=torch.bool), w)
    with pytest.raises(ValueError, match="fixed budget"):
        STKRPropagation(Polynomial.monomial(2), 0.1, num_iter=5, solver="gmres")


# ----------------------------------------------------------------------------- no silent divergence
def test_inverse_laplacian_on_every_node_fixed_budget_switches_route():
    """``Eq23Propagation(InverseLaplacian(0.9), num_iter=T)`` smoothing soft labels on every node: the
    Richardson budget diverges on a graph with negative eigenvalues; the module warns once and
    returns the solution of Eq. 7, finite, for every T."""
    ei, w, W = random_graph(21)
    S = dense_S(W)
    assert float(torch.linalg.eigvalsh(S).min()) < -0.5
    soft = torch.softmax(torch.randn(N, C, dtype=torch.float64, generator=torch.Generator().manual_seed(0)), 1)
    every = torch.ones(N, dtype=torch.bool)
    ref = stkr_closed_form(spectral(S, lambda l: l / (1 - 0.9 * l)), every, soft, 0.1)
    m = Eq23Propagation(InverseLaplacian(0.9), 0.1, num_iter=300, dtype=torch.float64)
    with pytest.warns(DivergenceWarning, match="diverging"):
        out = m(soft, ei, None, w)
    assert torch.isfinite(out).all() and "tolerance" in m.route_
    torch.testing.assert_close(out, ref, atol=1e-5, rtol=1e-5)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", DivergenceWarning)   # once per module
        m(soft, ei, None, w)


def test_cora_140_labels_beta_1e3_32_steps_switches_route(cora):
    """Cora's public split (140 labels), InverseLaplacian(0.99), beta = 1e-3, 32 Richardson steps: the
    residual grows (Algorithm 2's M is indefinite on Cora); the module warns and solves Eq. 7."""
    data = cora
    m = Eq23Propagation(InverseLaplacian(0.99), 1e-3, num_iter=32)
    with pytest.warns(DivergenceWarning):
        out = m(data.y, data.edge_index, data.train_mask)
    assert torch.isfinite(out).all() and "tolerance" in m.route_
    ref = STKR(InverseLaplacian(0.99), 1e-3, normalization="symmetric").fit(   # the estimator's Eq. 7
        data, data.train_mask).decision_function()
    torch.testing.assert_close(out.double(), ref, atol=1e-5, rtol=1e-5)


def test_converging_budget_is_unchanged():
    ei, w, W = psd_graph(22)
    y, mask = labels(22)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", DivergenceWarning)
        m = STKRPropagation(InverseLaplacian(0.5), 1.0, num_iter=20, dtype=torch.float64)
        m(y, ei, mask, w)
    assert m.route_.startswith("20 Richardson steps")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_matches_cpu():
    ei, w, _ = random_graph(19)
    y, mask = labels(19)
    for m in (STKRPropagation(InverseLaplacian(0.9), 0.01, tol=1e-12, dtype=torch.float64),
              STKRPropagation(Polynomial.monomial(8), 0.01, tol=1e-12, dtype=torch.float64)):
        cpu = m(y, ei, mask, w)
        gpu = m(y.cuda(), ei.cuda(), mask.cuda(), w.cuda())
        assert gpu.is_cuda
        torch.testing.assert_close(gpu.cpu(), cpu, atol=1e-8, rtol=1e-8)


def test_a_route_auto_chose_advises_what_the_user_can_change(monkeypatch):
    """solver='auto' routed to GMRES (the n N block too large for the direct route): a solve that
    misses tol advises solver='direct' (not 'auto' again); that advice, followed, gives the closed
    form without a warning."""
    import warnings

    from graphstk.methods import routes
    from graphstk.spectral import ConvergenceWarning

    ei, w, W = random_graph(20)
    y, mask = labels(20)
    monkeypatch.setattr(routes, "DIRECT_MAX_ENTRIES", 0)
    m = STKRPropagation(InverseLaplacian(0.99), 1e-3, tol=1e-12, max_iter=3, dtype=torch.float64)
    with pytest.warns(ConvergenceWarning) as rec:
        m(y, ei, mask, w)
    msg = str(rec[0].message)
    assert "chose this route" in msg and "solver='direct'" in msg and "or 'auto'" not in msg
    fixed = STKRPropagation(InverseLaplacian(0.99), 1e-3, tol=1e-12, solver="direct", dtype=torch.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        out = fixed(y, ei, mask, w)
    long = STKRPropagation(InverseLaplacian(0.99), 1e-3, tol=1e-12, max_iter=5000, dtype=torch.float64)(y, ei, mask, w)
    torch.testing.assert_close(out, long, atol=1e-7, rtol=1e-7)


# ----------------------------------------------------------------------------- one engine
@pytest.mark.filterwarnings("ignore:edge_index has")
@pytest.mark.parametrize("transform", [Polynomial([0.5, 0.0, 1.0]), InverseLaplacian(0.8)])
@pytest.mark.parametrize("solver", ["auto", "gmres", "direct"])
def test_module_and_estimator_share_the_engine(transform, solver):
    """``nn.STKRPropagation`` and ``methods.STKR`` give the same scores for the same transform and solver
    (both are one call of ``graphstk.methods.engine.solve``), and the module names the engine's route."""
    ei, w, _ = random_graph(23)
    y, mask = labels(23)
    data = Data(edge_index=ei, edge_weight=w, y=y, num_nodes=N)
    est = STKR(transform, 0.05, solver=solver, tol=1e-12, max_iter=5000).fit(data, mask.nonzero().flatten())
    m = STKRPropagation(transform, 0.05, solver=solver, tol=1e-12, max_iter=5000, dtype=torch.float64)
    torch.testing.assert_close(m(y, ei, mask, w), est.decision_function(torch.arange(N)), atol=1e-8, rtol=1e-8)
    assert "(engine)" in m.route_


# ------------------------------------------------------------------------------ the lazy kernel, a GNN layer
def lazy_dense(W):
    S = dense_S(W)
    return (torch.eye(S.shape[0], dtype=S.dtype) + S) / 2


def test_default_is_the_lazy_kernel_and_the_inverse_laplacian():
    """``STKRPropagation()`` is ``InverseLaplacian(0.9)`` on ``(I + S) / 2``; with every node a target it is
    the low-pass filter ``s(S) (s(S) + beta I)^{-1}``, ``0 <= g < 1`` (dense eigenvalues)."""
    ei, w, W = random_graph(31)
    m = STKRPropagation(beta=0.1, tol=1e-12, dtype=torch.float64)
    assert m.normalization == "lazy" and "InverseLaplacian(eta=0.9)" in repr(m)
    Y = torch.randn(N, C, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    S = lazy_dense(W)
    s = S @ torch.linalg.inv(torch.eye(N, dtype=S.dtype) - 0.9 * S)
    g = s @ torch.linalg.inv(s + 0.1 * torch.eye(N, dtype=S.dtype))
    torch.testing.assert_close(m(Y, ei, None, w), g @ Y, atol=1e-9, rtol=1e-9)
    lam = torch.linalg.eigvalsh((g + g.T) / 2)
    assert float(lam.min()) > -1e-10 and float(lam.max()) < 1.0
    S23 = dense_S(W)
    s23 = S23 @ torch.linalg.inv(torch.eye(N, dtype=S.dtype) - 0.9 * S23)
    g23 = torch.linalg.eigvalsh(s23 @ torch.linalg.inv(s23 + 0.1 * torch.eye(N, dtype=S.dtype)))
    assert float(g23.min()) < 0 or float(g23.max()) > 1       # Eq. 23's kernel: not a low-pass filter


def test_every_node_a_target_takes_one_cg_not_the_direct_route():
    g = torch.Generator().manual_seed(3)
    n = 1200
    src, dst = torch.randint(0, n, (6000,), generator=g), torch.randint(0, n, (6000,), generator=g)
    keep = src != dst
    ei = torch.cat([torch.stack([src[keep], dst[keep]]), torch.stack([dst[keep], src[keep]])], 1)
    ei = torch.unique(ei, dim=1)
    Y = torch.randn(n, 3, dtype=torch.float64, generator=g)
    m = STKRPropagation(InverseLaplacian(0.9), 1e-2, dtype=torch.float64)
    m(Y, ei)
    assert "symmetric form" in m.route_ and "direct" not in m.route_.split(":")[0]


@pytest.mark.parametrize("mask", [None, "some"])
def test_lazy_gradients_gradcheck(mask):
    """Implicit gradients through the symmetric solve, in the scores, ``beta``, ``eta`` and the edge weights."""
    ei, w, W = random_graph(32)
    ids = None if mask is None else torch.arange(0, N, 2)
    Y = torch.randn(N, C, dtype=torch.float64, generator=torch.Generator().manual_seed(1), requires_grad=True)
    key = torch.minimum(ei[0], ei[1]) * N + torch.maximum(ei[0], ei[1])
    pairs, which = torch.unique(key, return_inverse=True)          # one weight per undirected edge
    u = torch.zeros(pairs.numel(), dtype=torch.float64).index_put_((which,), w.double()).requires_grad_(True)
    m = STKRPropagation(InverseLaplacian(0.8), 0.5, tol=1e-13, max_iter=5000, dtype=torch.float64,
                        learnable=True, flag_unreachable=False)
    assert torch.autograd.gradcheck(lambda y, e: m(y, ei, ids, e[which]), (Y, u), atol=1e-6, rtol=1e-5, fast_mode=True)
    assert torch.autograd.gradcheck(lambda b: STKRPropagation(InverseLaplacian(0.8), b, tol=1e-13, max_iter=5000,
                                                               flag_unreachable=False)(Y.detach(), ei, ids, w),
                                    (torch.tensor(0.5, dtype=torch.float64, requires_grad=True),), atol=1e-6,
                                    fast_mode=True)


def test_lazy_fixed_budget_uses_the_engine_step_and_is_differentiable():
    """``num_iter=T`` unrolls Algorithm 2 with the engine's step on ``[0, 1]`` (stable on the lazy kernel)."""
    from graphstk.methods.steps import richardson_step

    ei, w, W = random_graph(33)
    y, mask = labels(33)
    m = STKRPropagation(InverseLaplacian(0.9), 1e-2, num_iter=16, dtype=torch.float64)
    out = m(y, ei, mask, w)
    assert torch.isfinite(out).all() and "Richardson" in m.route_
    n = int(mask.sum()) if mask.dtype == torch.bool else mask.numel()
    gamma = richardson_step("reciprocal", "auto", (1.0, -0.9), 1e-2, N, n, 0.0, 1.0)
    assert float(gamma) == pytest.approx(1.0 / (N + n * 1e-2 * 1.0))
    beta = torch.tensor(1e-2, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda b: STKRPropagation(InverseLaplacian(0.9), b, num_iter=6)(
        onehot(y, mask).new_zeros(N, C).index_put((torch.nonzero(mask).flatten() if mask.dtype == torch.bool
                                                   else mask,), onehot(y, mask)), ei, mask, w), (beta,))
