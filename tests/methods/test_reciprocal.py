"""The engine families (Label-Prop, Algorithms 1-3, top-d, Algorithm 2 with its steps and symmetric form) against dense closed forms
(Eqs. 7, 8-9, 20, 22): every solver, the multi-shift routes and the reduced-product Algorithm 1."""
import warnings

import numpy as np
import pytest
import torch
from torch_geometric.data import Data

from dense_reference import normalized, random_graph, stkr_scores, visible_kernel
from graphstk.exceptions import ConvergenceError
from graphstk.methods import STKR, STKRCV, LabelPropagation, UnreachableNodesWarning, predict_labels
from graphstk.methods import engine, linsolve, routes
from graphstk.methods.engine import solve
from graphstk.methods.polynomial import gram_apply
from graphstk.methods.problem import make_problem, sym_solve_path
from graphstk.methods.routes import use_multishift
from graphstk.methods.steps import reciprocal_step
from graphstk.operators import GraphKernel
from graphstk.spectral import ConvergenceWarning, eigen
from graphstk.spectral.solvers import metric_cg
from graphstk.spectral.transforms import (InverseLaplacian, LabelPropagationFilter, Polynomial, ReciprocalPolynomial,
                                         TopD, horner)


def lpf(etas):
    """Label-Prop's filters for the ``eta`` values ``etas``."""
    return [LabelPropagationFilter(e) for e in etas]

N_NODES, C = 36, 3
HIDDEN = [30, 31, 32, 33]
TRAIN = list(range(8))


def grid(transforms, betas, c, ev, num_iter=None, **kw):
    """Every grid point's scores on ``ev`` from one engine call (STKRCV.grid_scores)."""
    return STKRCV(transforms, betas, num_iter=num_iter, num_classes=C, **kw).grid_scores(
        c["kernel"], torch.tensor(TRAIN), torch.as_tensor(ev), y=c["y"])


def setup(psd=False, hidden=None, seed=0):
    W, ei, w = random_graph(N_NODES, 0.15, seed, psd=psd)
    y = torch.randint(0, C, (N_NODES,), generator=torch.Generator().manual_seed(seed + 1))
    kernel = GraphKernel(ei, N_NODES, hidden=hidden, edge_weight=w)
    S, vis, rows = visible_kernel(W, hidden or [])
    train_local = [int((vis == t).nonzero()[0, 0]) for t in TRAIN]
    Y = torch.nn.functional.one_hot(y[TRAIN], C).double()
    eval_nodes = list(range(N_NODES))
    if hidden is None:
        eval_nodes = [i for i in range(N_NODES) if i not in TRAIN]
    return dict(W=W, ei=ei, w=w, y=y, kernel=kernel, S=S, rows=rows, tl=train_local, Y=Y, eval=eval_nodes)


@pytest.mark.parametrize("hidden", [None, HIDDEN], ids=["transductive", "inductive"])
@pytest.mark.parametrize("k", [1, 2, 8])
@pytest.mark.parametrize("solver", ["direct", "gmres", "cg", "richardson"])
def test_polynomial_matches_eq7(hidden, k, solver):
    c = setup(psd=True, hidden=hidden)
    beta = 1.0 if solver == "richardson" else 0.05  # Richardson needs ~cond(A) iterations
    S = c["S"]
    ref = stkr_scores(S, c["tl"], c["Y"], torch.linalg.matrix_power(S, k), beta, c["rows"](c["eval"]),
                      torch.linalg.matrix_power(S, k - 1))
    out = grid([Polynomial.monomial(k)], [beta], c, c["eval"], solver=solver, tol=1e-12, max_iter=20000)
    assert torch.allclose(out[0][1], ref, atol=1e-7 * ref.abs().max(), rtol=0)


@pytest.mark.parametrize("hidden", [None, HIDDEN], ids=["transductive", "inductive"])
@pytest.mark.parametrize("solver", ["direct", "gmres", "richardson"])
@pytest.mark.parametrize("eta", [0.5, 0.95])
def test_inverse_laplacian_matches_eq7(hidden, solver, eta):
    c = setup(psd=True, hidden=hidden)
    beta = 2.0 if solver == "richardson" else 0.1
    S = c["S"]
    Qinv = torch.linalg.inv(torch.eye(S.shape[0], dtype=S.dtype) - eta * S)
    ref = stkr_scores(S, c["tl"], c["Y"], S @ Qinv, beta, c["rows"](c["eval"]), Qinv)
    out = grid([InverseLaplacian(eta)], [beta], c, c["eval"], solver=solver, tol=1e-11, max_iter=200000)
    assert torch.allclose(out[0][1], ref, atol=1e-6 * ref.abs().max(), rtol=0)


def test_algorithm2_general_family_equals_direct():
    """1/s(l) = 2 l^-2 - 0.5 l^-1 + 0.1 (r = 2, q = 3): Algorithm 2 (GMRES) = Algorithm 3-style direct."""
    c = setup(psd=True)
    tr = ReciprocalPolynomial([2.0, -0.5, 0.1], r=2)
    S = c["S"]
    I = torch.eye(S.shape[0], dtype=S.dtype)
    Q = 2.0 * I - 0.5 * S + 0.1 * S @ S
    ref = stkr_scores(S, c["tl"], c["Y"], S @ S @ torch.linalg.inv(Q), 0.1, c["rows"](c["eval"]),
                      S @ torch.linalg.inv(Q))
    for solver in ("direct", "gmres"):
        est = STKR(tr, 0.1, solver=solver, tol=1e-12, max_iter=5000, normalization="symmetric").fit(
            Data(edge_index=c["ei"], edge_weight=c["w"], y=c["y"], num_nodes=N_NODES), TRAIN)
        assert torch.allclose(est.class_scores(torch.as_tensor(c["eval"])), ref, atol=1e-7 * ref.abs().max(), rtol=0)


@pytest.mark.parametrize("hidden", [None, HIDDEN], ids=["transductive", "inductive"])
def test_topd_matches_eq8_eq9(hidden):
    c = setup(hidden=hidden)
    S, tl, Y = c["S"], c["tl"], c["Y"]
    U = [i for i in range(S.shape[0]) if i not in tl]
    mu, u = torch.linalg.eigh(S[U][:, U])
    mu, u = mu.flip(0), u.flip(1)
    d, beta, N, n = 6, 0.01, S.shape[0], len(tl)
    v = u[:, :d] / torch.sqrt(N * mu[:d])                       # <v_i, v_i> = 1/(m lambda~_i), G v = m lambda~ v

    def psi(R):                                                 # Eq. 8: psi_i(x) = sum_j v_i[j] K(x_{n+j}, x)
        return (N * R[:, U]) @ v
    P = psi(S[tl]).T                                            # Psi(X_n) [d, n]
    w = torch.linalg.solve(P @ P.T + n * beta * torch.eye(d, dtype=S.dtype), P @ Y)   # Eq. 9
    ref = psi(c["rows"](c["eval"])) @ w
    out = grid([TopD(d)], [beta], c, c["eval"])
    assert torch.allclose(out[0][1], ref, atol=1e-9 * ref.abs().max(), rtol=0)


@pytest.mark.parametrize("solver", ["cg", "direct", "richardson"])
def test_label_propagation_matches_eq22(solver):
    c = setup()
    eta = 0.9
    N = c["S"].shape[0]
    Yt = torch.zeros(N, C, dtype=torch.float64)
    Yt[c["tl"]] = c["Y"]
    ref = torch.linalg.solve(torch.eye(N, dtype=torch.float64) - eta * c["S"], Yt)
    est = LabelPropagation(eta, solver=solver, tol=1e-12, max_iter=5000).fit(
        Data(edge_index=c["ei"], y=c["y"], num_nodes=N_NODES), TRAIN)
    assert torch.allclose(est.class_scores(torch.arange(N_NODES)), ref, atol=1e-9)


def test_fixed_budget_is_truncated_series():
    """Richardson from 0 with gamma = 1 for T steps gives sum_{k<T} (eta S)^k Ytilde."""
    c = setup()
    eta, S = 0.8, c["S"]
    Yt = torch.zeros(S.shape[0], C, dtype=torch.float64)
    Yt[c["tl"]] = c["Y"]
    out = grid([LabelPropagationFilter(eta)], None, c, torch.arange(N_NODES), num_iter=[1, 3, 7])
    for params, scores in out:
        ref = sum(torch.linalg.matrix_power(eta * S, k) @ Yt for k in range(params["num_iter"]))
        assert torch.allclose(scores, ref, atol=1e-12)


@pytest.mark.parametrize("hidden", [None, HIDDEN], ids=["transductive", "inductive"])
def test_centered_labels_match_eq7_with_centered_targets(hidden):
    c = setup(psd=True, hidden=hidden)
    S, eta, beta = c["S"], 0.9, 0.1
    Yc = c["Y"] - c["Y"].mean(0, keepdim=True)       # one-hot minus the training class frequencies
    Qinv = torch.linalg.inv(torch.eye(S.shape[0], dtype=S.dtype) - eta * S)
    ref = stkr_scores(S, c["tl"], Yc, S @ Qinv, beta, c["rows"](c["eval"]), Qinv)
    args = ([InverseLaplacian(eta)], [beta], c, c["eval"])
    out = grid(*args, solver="direct", labels="centered")[0][1]
    assert torch.allclose(out, ref, atol=1e-9 * ref.abs().max(), rtol=0)
    onehot = grid(*args, solver="direct")[0][1]
    assert not torch.allclose(out, onehot)              # the option reaches the engine
    with pytest.raises(ValueError, match="The 'labels' parameter of STKRCV must be a str among"):
        grid(*args, labels="centred")


def test_grid_batching_equals_single_solves():
    c = setup(psd=True)
    batched = grid([InverseLaplacian(0.5), InverseLaplacian(0.9)], [1.0, 0.01], c, torch.arange(N_NODES),
                   num_iter=[2, 5])
    assert len(batched) == 8
    for params, scores in batched:
        single = grid([params["transform"]], [params["beta"]], c, torch.arange(N_NODES), num_iter=params["num_iter"])
        assert torch.allclose(scores, single[0][1], atol=1e-12)


@pytest.mark.parametrize("hidden", [None, HIDDEN], ids=["transductive", "inductive"])
def test_algorithm2_fixed_budget_is_truncated_richardson_on_eq20(hidden):
    """Algorithm 2's fused update (one product, two passes) gives the dense Richardson iterates
    theta_T = sum_{k<T} (I - gamma M)^k gamma [Y; 0] on Eq. 20's M = N I~ S + n beta (I - eta S),
    with one step size per (eta, beta) column block; scores N v(x)^T theta_T."""
    c = setup(psd=False, hidden=hidden)
    S, tl = c["S"], c["tl"]
    N, n = S.shape[0], len(tl)
    lam = c["kernel"].lambda_max
    E = torch.zeros(N, n, dtype=S.dtype)
    E[tl, torch.arange(n)] = 1.0
    b = E @ c["Y"]
    R = c["rows"](c["eval"])
    out = grid([InverseLaplacian(0.5), InverseLaplacian(0.9)], [1.0, 0.01], c, c["eval"], num_iter=[1, 2, 5])
    assert len(out) == 12
    for params, scores in out:
        eta, beta = params["transform"].eta, params["beta"]
        M = N * torch.diag(E.sum(1)) @ S + n * beta * (torch.eye(N, dtype=S.dtype) - eta * S)
        gamma = 1.0 / (N * lam + n * beta * (1.0 + eta * lam))     # rho(l) = 1 - eta l peaks at l = -lambda_1
        step = torch.eye(N, dtype=S.dtype) - gamma * M
        theta = sum(torch.linalg.matrix_power(step, k) @ (gamma * b) for k in range(params["num_iter"]))
        ref = N * R @ theta
        assert torch.allclose(scores, ref, atol=1e-12 * ref.abs().max(), rtol=0), params


def test_richardson_and_krylov_agree():
    c = setup(psd=True)
    kw = dict(tol=1e-11, max_iter=100000)
    r = grid([Polynomial.monomial(4)], [0.1], c, torch.arange(N_NODES), solver="richardson", **kw)[0][1]
    k = grid([Polynomial.monomial(4)], [0.1], c, torch.arange(N_NODES), solver="cg", **kw)[0][1]
    assert torch.allclose(r, k, atol=1e-8 * k.abs().max())


def test_inductive_fit_does_not_leak():
    """Changing hidden nodes' labels or edges among hidden nodes leaves the fit unchanged."""
    W, ei, _ = random_graph(N_NODES, 0.15, 3)
    y = torch.randint(0, C, (N_NODES,), generator=torch.Generator().manual_seed(9))
    W2 = W.clone()
    W2[30, 31] = W2[31, 30] = 1 - W2[30, 31]   # flip an edge among hidden nodes
    W2[32, 33] = W2[33, 32] = 1 - W2[32, 33]
    ei2 = W2.nonzero().T
    y2 = y.clone()
    y2[HIDDEN] = (y2[HIDDEN] + 1) % C
    for tr in (InverseLaplacian(0.9), Polynomial.monomial(3), TopD(4)):
        a = STKR(tr, 0.1, setting="inductive").fit(Data(edge_index=ei, y=y, num_nodes=N_NODES), TRAIN, HIDDEN)
        b = STKR(tr, 0.1, setting="inductive").fit(Data(edge_index=ei2, y=y2, num_nodes=N_NODES), TRAIN, HIDDEN)
        assert torch.equal(a.h_, b.h_)
        assert torch.allclose(a.class_scores(torch.arange(30)), b.class_scores(torch.arange(30)))


def test_isolated_nodes_are_flagged_not_class_zero():
    W, ei, _ = random_graph(20, 0.3, 5, isolated=3)
    y = torch.arange(20) % 2
    data = Data(edge_index=ei, y=y, num_nodes=20)
    kernel = GraphKernel(ei, 20)
    assert torch.isfinite(kernel.S.to_dense()).all() and int(kernel.isolated.sum()) == 3
    for est in (LabelPropagation(0.9), STKR(InverseLaplacian(0.9), 0.1), STKR(Polynomial.monomial(2), 0.1)):
        est.fit(data, [0, 1, 2, 3])
        with pytest.warns(UnreachableNodesWarning):
            scores = est.class_scores(torch.arange(20))
        assert torch.isfinite(scores).all()
        assert est.unreachable_[-3:].all()
        assert (predict_labels(scores)[-3:] == -1).all()


def test_bad_inputs_fail_early():
    c = setup()
    data = Data(edge_index=c["ei"], y=c["y"], num_nodes=N_NODES)
    with pytest.raises(ValueError, match="eta < 1/lambda_1"):
        STKR(InverseLaplacian(1.0), 0.1).fit(data, TRAIN)
    with pytest.raises(ValueError, match="beta must be > 0"):
        STKR(Polynomial([1.0]), 0.0).fit(data, TRAIN)
    with pytest.raises(ValueError, match="0 < eta"):
        LabelPropagation(1.5).fit(data, TRAIN)
    with pytest.raises(ValueError, match="The 'solver' parameter of STKR must be a str among"):
        STKR(Polynomial([1.0]), 0.1, solver="magic").fit(data, TRAIN)
    bad = Data(edge_index=c["ei"], y=c["y"].clone(), num_nodes=N_NODES)
    bad.y[0] = -1
    with pytest.raises(ValueError, match="training labels must"):
        STKR(Polynomial([1.0]), 0.1).fit(bad, TRAIN)
    with pytest.raises(ValueError, match="hidden"):
        STKR(Polynomial([1.0]), 0.1, setting="inductive").fit(data, [30], hidden_idx=[30])
    with pytest.raises(ValueError, match="betas is empty"):
        grid([Polynomial.monomial(2)], [], c, TRAIN)
    with pytest.raises(TypeError, match="transforms must be Transform objects"):
        grid(["svm"], [1.0], c, TRAIN)
    with pytest.raises(ValueError, match="one family"):
        grid([Polynomial.monomial(2), InverseLaplacian(0.5)], [1.0], c, TRAIN)


def test_nonconvergence_warns_with_residual():
    c = setup(psd=True)
    with pytest.warns(ConvergenceWarning, match="relative residual"):
        grid([Polynomial.monomial(2)], [1e-6], c, torch.arange(N_NODES), solver="richardson", tol=1e-12, max_iter=5)


def test_direct_solve_path_is_finite_in_float32():
    # A 140 x 140 system of a Cora KRR split (21 edges among labeled nodes, 109 zero rows) on which
    # torch 2.13's float32 CPU eigh returned two NaN eigenpairs without an error.
    entries = [(1, 2, .2582), (17, 24, .169), (18, 139, .1581), (22, 39, .169), (26, 99, .1826),
               (26, 122, .2236), (26, 123, .2236), (37, 60, .3333), (42, 87, .4082), (55, 60, .1667),
               (59, 105, .1581), (75, 84, .1826), (76, 88, .1195), (88, 130, .0976), (99, 122, .2041),
               (99, 123, .2041), (102, 109, .0668), (103, 139, .1443), (109, 124, .0791), (109, 133, .0589),
               (135, 137, .4082)]
    B = torch.zeros(140, 140)
    for i, j, v in entries:
        B[i, j] = B[j, i] = v
    rhs = torch.nn.functional.one_hot(torch.arange(140) % 7, 7).float()
    shifts = [140 * b for b in (1e3, 1.0, 1e-3)]
    out = sym_solve_path(B, 2681.0, shifts, rhs, "test")
    for shift, a in zip(shifts, out):
        assert a.dtype == torch.float32 and torch.isfinite(a).all()
        ref = torch.linalg.solve(2681.0 * B.double() + shift * torch.eye(140, dtype=torch.float64), rhs.double())
        assert torch.allclose(a.double(), ref, rtol=1e-4, atol=1e-6 * ref.abs().max())


def test_non_finite_scores_warn_and_count_as_unreachable(monkeypatch):
    from graphstk.methods import NonFiniteScoresWarning
    c = setup(psd=True)
    real = engine.ENGINES[Polynomial]

    def broken(*args, **kw):
        res = real(*args, **kw)
        for point in res.points:
            point.h[0] = float("nan")     # one visible node's coefficients become NaN
        return res

    monkeypatch.setitem(engine.ENGINES, Polynomial, broken)
    with pytest.warns(NonFiniteScoresWarning, match=r"Polynomial: non-finite scores at 2 of 2 grid point"):
        out = grid([Polynomial.monomial(1)], [1.0, 0.1], c, torch.arange(N_NODES))
    assert (predict_labels(out[0][1]) == -1).any()


def test_float32_runs_and_agrees():
    c = setup(psd=True)
    k32 = GraphKernel(c["ei"], N_NODES, edge_weight=c["w"], dtype=torch.float32)
    a = grid([InverseLaplacian(0.9)], [0.1], {**c, "kernel": k32}, torch.arange(N_NODES), solver="gmres",
             tol=1e-5)[0][1]
    b = grid([InverseLaplacian(0.9)], [0.1], c, torch.arange(N_NODES), solver="direct")[0][1]
    assert a.dtype == torch.float32
    assert torch.allclose(a.double(), b, atol=5e-3 * b.abs().max())


def test_topd_engine_same_predictions_filtered_and_lanczos(monkeypatch):
    W, ei, _ = random_graph(500, 0.03, seed=5)
    kernel = GraphKernel(ei, 500)
    y = torch.arange(500) % 3
    prob = make_problem(kernel, y, torch.arange(0, 500, 10), 3)
    out = {}
    for method in ("lanczos", "filtered"):
        orig = eigen.top_eigenpairs
        monkeypatch.setattr(eigen, "top_eigenpairs",
                            lambda op, k, method=method, **kw: orig(op, k, dense_threshold=100, method=method, **kw))
        out[method] = solve(prob, [TopD(64, support="all"), TopD(100, support="all")], [1e-2, 1.0])
        monkeypatch.setattr(eigen, "top_eigenpairs", orig)
    for a, b in zip(out["lanczos"].points, out["filtered"].points, strict=True):
        assert torch.allclose(b.h, a.h, atol=1e-7 * a.h.abs().max())


def _engine_setup(hidden=None, seed=0, n=40, C=3):
    W, ei, w = random_graph(n, 0.15, seed, psd=True)
    y = torch.randint(0, C, (n,), generator=torch.Generator().manual_seed(seed + 1))
    kernel = GraphKernel(ei, n, hidden=hidden, edge_weight=w)
    S, vis, rows = visible_kernel(W, hidden or [])
    train = list(range(8))
    prob = make_problem(kernel, y, torch.tensor(train), C)
    return prob, S


@pytest.mark.parametrize("hidden", [None, [30, 31, 32]])
def test_inverse_laplacian_direct_route_multishift_equals_lu_and_eq7(monkeypatch, hidden):
    prob, S = _engine_setup(hidden)
    etas, betas = [0.5, 0.9, 0.999], [1e-3, 1.0]
    trs = [InverseLaplacian(e) for e in etas]
    lu = solve(prob, trs, betas, solver="direct")
    monkeypatch.setattr(routes, "MULTISHIFT_MIN_NNZ", 0)
    monkeypatch.setattr(routes, "MULTISHIFT_MIN_SHIFTS", 2)
    assert use_multishift(prob, len(etas)) and not use_multishift(prob, 1)
    ms = solve(prob, trs, betas, solver="auto")
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
                assert torch.allclose(out.points[t * len(betas) + b].h, ref, atol=1e-8 * ref.abs().max(), rtol=0)


@pytest.mark.parametrize("hidden", [None, [30, 31, 32]])
def test_single_eta_takes_cg_on_large_graphs_and_matches_eq7(monkeypatch, hidden):
    """From SINGLE_SHIFT_MIN_NNZ (forced to 0 here) one eta (the final view) is solved by CG, not
    the sparse LU: the same h as Eq. 7 in closed form."""
    prob, S = _engine_setup(hidden)
    assert not use_multishift(prob, 1)
    monkeypatch.setattr(routes, "SINGLE_SHIFT_MIN_NNZ", 0)
    assert use_multishift(prob, 1)
    eta, beta = 0.99, 0.1
    out = solve(prob, [InverseLaplacian(eta)], [beta], solver="auto")
    assert out.history[0].solver == "direct (n x n system; (I - eta S)^-1 E by CG)"
    N, n = S.shape[0], prob.n
    E = torch.zeros(N, n, dtype=torch.float64)
    E[prob.train, torch.arange(n)] = 1
    X = torch.linalg.solve(torch.eye(N, dtype=torch.float64) - eta * S, E)
    alpha = torch.linalg.solve(N * (S @ X)[prob.train] + n * beta * torch.eye(n, dtype=torch.float64), prob.Y)
    ref = N * X @ alpha
    assert torch.allclose(out.points[0].h, ref, atol=1e-8 * ref.abs().max(), rtol=0)


def test_label_propagation_cg_all_etas_from_one_sequence_matches_eq22():
    prob, S = _engine_setup()
    etas = [0.3, 0.9, 0.99]
    res = solve(prob, lpf(etas), solver="cg", tol=1e-12, max_iter=5000)
    assert res.history[0].solver == "multishift-cg" and res.history[0].converged
    N = S.shape[0]
    for g, eta in enumerate(etas):
        ref = torch.linalg.solve(torch.eye(N, dtype=torch.float64) - eta * S, prob.scatter(prob.Y))
        assert torch.allclose(res.points[g].h, ref, atol=1e-9)


@pytest.mark.parametrize("coeffs", [[1.0], [0.3, 2.0], [0.0] * 7 + [1.0], [0.5, -0.2, 0.1]])
def test_reduced_product_gram_apply_matches_dense_closed_form(coeffs):
    prob, S = _engine_setup([30, 31, 32])
    alpha = torch.randn(prob.n, 5, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    sS = sum(c * torch.linalg.matrix_power(S, p + 1) for p, c in enumerate(coeffs))   # s(S), Eq. 5
    ref = sS[prob.train][:, prob.train] @ alpha
    assert torch.allclose(gram_apply(prob, coeffs, alpha), ref, atol=1e-12)
    # q - 2 full products: the two others touch only the labeled columns / rows
    calls = []
    orig = prob.kernel.S._matmul
    prob.kernel.S._matmul = lambda x: (calls.append(1), orig(x))[1]
    gram_apply(prob, coeffs, alpha)
    assert len(calls) == max(len(coeffs) - 2, 0)


def test_reduced_product_is_bitwise_the_full_product_for_a_monomial():
    prob, S = _engine_setup()
    coeffs = [0.0] * 7 + [1.0]
    alpha = torch.randn(prob.n, 3, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    full = prob.S(horner(coeffs, prob.S, prob.scatter(alpha)))[prob.train]
    assert torch.equal(gram_apply(prob, coeffs, alpha), full)


def test_a_route_auto_chose_is_never_told_to_use_auto(monkeypatch):
    """When solver='auto' routes Algorithm 2 to an iterative solve (CG on its symmetric form: this W is
    positive semidefinite by construction, which the problem is told) and it misses tol, the warning
    names what the user can change (solver='direct', max_iter, num_iter) and not 'auto' again; applying
    the advice (solver='direct') gives the exact answer without a warning. Without the knowledge that
    S is PSD, auto refuses before any work."""
    import dataclasses
    import warnings

    prob, S = _engine_setup()
    monkeypatch.setattr(routes, "DIRECT_MAX_ENTRIES", 0)          # too large for the direct solve
    tr = [InverseLaplacian(0.99)]
    with pytest.raises(ConvergenceError, match="normalization='lazy'"):
        solve(prob, tr, [1e-3], solver="auto", max_iter=4, tol=1e-10)
    prob = dataclasses.replace(prob, psd=True)
    with pytest.warns(ConvergenceWarning) as rec:
        out = solve(prob, tr, [1e-3], solver="auto", max_iter=4, tol=1e-10)
    assert "symmetric form" in out.history[0].solver and out.history[0].reason.startswith("auto")
    msg = str(rec[0].message)
    assert "solver='direct'" in msg and "use solver='direct' or 'auto'" not in msg and "/ 'auto'" not in msg
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        exact = solve(prob, tr, [1e-3], solver="direct")
        long = solve(prob, tr, [1e-3], solver="auto", max_iter=5000, tol=1e-10)  # or a larger max_iter
    ref = exact.points[0].h
    assert torch.allclose(long.points[0].h, ref, atol=1e-6 * ref.abs().max(), rtol=0)


# ------------------------------------------------------------------ Algorithm 2's automatic Richardson step
def _random_graph_problem(N, n, seed=0, dtype=torch.float64):
    """A random undirected graph of ``N`` nodes, average degree about 10 (``N * 5`` random pairs,
    both directions), 8 classes, ``n`` labeled nodes drawn with ``torch.randperm``."""
    import numpy as np
    from torch_geometric.utils import to_undirected

    ei = to_undirected(torch.as_tensor(np.random.default_rng(seed).integers(0, N, (2, N * 5))))
    y = torch.randint(0, 8, (N,), generator=torch.Generator().manual_seed(seed))
    train = torch.randperm(N, generator=torch.Generator().manual_seed(seed + 1))[:n]
    return Data(edge_index=ei, y=y, num_nodes=N), train


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("N, frac", [(300, 0.01), (300, 0.1), (1000, 0.001), (1000, 0.01), (1000, 0.1)])
def test_automatic_step_contracts_or_is_proved_to_have_none(N, frac, dtype):
    """On random graphs, Algorithm 2 with ``step_size="auto"`` either contracts (every eigenvalue of
    Eq. 20's ``M`` has ``|1 - gamma mu| < 1``) or :func:`reciprocal_step` proves before iterating that
    no positive step does (``M`` has a real eigenvalue ``<= 0``), checked against dense ``eigvals``."""
    data, train = _random_graph_problem(N, max(1, int(frac * N)))
    kernel = GraphKernel(data.edge_index, N, dtype=dtype, clean_edges=True)
    prob = make_problem(kernel, data.y, train, 8)
    S = prob.op.to_dense().double()
    n = prob.n
    lab = torch.zeros(N, dtype=torch.float64)
    lab[prob.train] = 1.0
    betas = [1e-3, 0.1, 1e3]
    for eta in (0.5, 0.9):
        gamma, certs = reciprocal_step(prob, [InverseLaplacian(eta)], betas)
        assert gamma.shape == (len(betas) * prob.C,) and gamma.dtype == dtype
        for i, beta in enumerate(betas):
            M = N * lab[:, None] * S + n * beta * (torch.eye(N, dtype=torch.float64) - eta * S)
            mu = torch.linalg.eigvals(M)
            if certs[i] is not None:      # the proof is sound: a real eigenvalue <= 0, no step contracts
                real = mu[mu.imag.abs() <= 1e-8 * mu.abs().max()].real
                assert float(real.min()) <= 1e-8 * float(mu.abs().max()), (eta, beta, certs[i])
                assert "no beta <=" in certs[i]
            else:                         # no proof: the automatic step contracts
                g = float(gamma[i * prob.C])
                assert float((1 - g * mu).abs().max()) < 1, (eta, beta)
    if frac >= 0.01:                      # labeled edges: the smallest beta is proved unstable
        assert reciprocal_step(prob, [InverseLaplacian(0.9)], [1e-3])[1][0] is not None


@pytest.mark.parametrize("N, n, dtype", [(10_000, 100, torch.float32), (10_000, 1000, torch.float64),
                                         (200_000, 2000, torch.float32), (200_000, 200, torch.float64)])
def test_no_stable_step_is_refused_before_iterating(N, n, dtype, monkeypatch):
    """The reported case (200,000 nodes, 2,000 labels, float32, 62 iterations): STKR refuses before
    the first Richardson iteration, for every beta that cannot converge, naming GMRES."""
    from graphstk.exceptions import ConvergenceError

    data, train = _random_graph_problem(N, n)
    ran = []
    monkeypatch.setattr(linsolve, "richardson", lambda *a, **k: ran.append(1))   # must never be reached
    for beta in ((0.1, 1.0) if N == 200_000 and dtype == torch.float32 else (0.1,)):
        est = STKR(InverseLaplacian(0.9), beta, solver="richardson", max_iter=62, tol=0.0, dtype=dtype,
                   clean_edges=True, normalization="symmetric")
        with pytest.raises(ConvergenceError, match="no stable step exists, checked before iterating") as err:
            est.fit(data, train)
        msg = str(err.value)
        assert "normalization='lazy'" in msg and "keep step_size" not in msg
        assert ("solver='direct'" in msg) == (n <= 4000 and N * n <= 2 ** 25)   # the direct route where it fits
        assert "num_iter <= " in msg               # the fixed budget that provably stays under the guard
    assert not ran


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_the_refusal_advice_works_when_followed(dtype):
    """Following the refusal (the direct solve, the lazy kernel, or a fixed budget no longer than it
    names) gives the exact solve, a converged one, or a finite truncated iteration under the guard."""
    import re

    from graphstk.exceptions import ConvergenceError

    N, n = 2000, 40
    data, train = _random_graph_problem(N, n)
    eq23 = dict(dtype=dtype, normalization="symmetric")
    with pytest.raises(ConvergenceError) as err:
        STKR(InverseLaplacian(0.9), 0.1, solver="richardson", max_iter=62, tol=0.0, **eq23).fit(data, train)
    msg = str(err.value)
    T = int(re.search(r"num_iter <= (\d+)", msg).group(1))
    assert "solver='direct'" in msg and "normalization='lazy'" in msg
    est = STKR(InverseLaplacian(0.9), 0.1, solver="direct", **eq23).fit(data, train)
    assert est.history_[-1].converged and est.solver_.startswith("direct")
    ref = STKR(InverseLaplacian(0.9), 0.1, solver="direct", dtype=torch.float64, normalization="symmetric").fit(
        data, train)
    assert torch.allclose(est.h_.double(), ref.h_, atol=1e-3 * float(ref.h_.abs().max()), rtol=0)
    lazy = STKR(InverseLaplacian(0.9), 0.1, solver="richardson", max_iter=62, tol=0.0, dtype=dtype,
                normalization="lazy").fit(data, train)              # the step is stable on the lazy kernel
    assert lazy.residuals_[-1] < 1.0
    short = STKR(InverseLaplacian(0.9), 0.1, num_iter=T, **eq23).fit(data, train)
    assert short.residuals_[-1] <= 1e3 and bool(torch.isfinite(short.h_).all())
    assert "no stable step" not in short.history_[-1].reason or "real eigenvalue" in short.history_[-1].reason


def test_the_divergence_advice_never_repeats_the_setting_in_use():
    """``_record``'s advice: a diverged explicit step points at step_size='auto'; with 'auto' already in
    use it names the Krylov solver instead of 'keep step_size=auto'."""
    import re

    from graphstk.exceptions import ConvergenceError

    c = setup(psd=False)
    data = Data(edge_index=c["ei"], y=c["y"], num_nodes=N_NODES)
    with pytest.raises(ConvergenceError, match="diverges") as err:
        STKR(InverseLaplacian(0.9), 1e-3, num_iter=30, step_size=5.0, normalization="symmetric").fit(data, TRAIN)
    msg = str(err.value)
    assert "step_size='auto' instead of 5.0" in msg and "solver='direct'" in msg and "normalization='lazy'" in msg
    assert not re.search(r"keep step_size", msg)
    auto = STKR(InverseLaplacian(0.9), 1e-3, num_iter=30)._divergence_advice()
    assert "already in use" in auto and "solver='direct'" in auto and "keep" not in auto
    assert "step_size" not in LabelPropagation(0.9, num_iter=5)._divergence_advice()

# ==================================================================================================
# The positive semidefinite lazy kernel and the solves it allows (Algorithm 2's symmetric form, the
# stable Richardson step, refusals on Eq. 23's kernel), against dense computations.
# ==================================================================================================
def _lazy(S: torch.Tensor) -> torch.Tensor:
    return (torch.eye(S.shape[0], dtype=S.dtype) + S) / 2


def _q_inverse(S, tr):
    Q = sum(c * torch.linalg.matrix_power(S, p) for p, c in enumerate(tr.xi))
    return torch.linalg.inv(Q)


# ---------------------------------------------------------------------------------------- the kernel
def test_lazy_kernel_is_half_identity_plus_eq23_and_positive_semidefinite():
    W, ei, w = random_graph(40, 0.15, 0, isolated=2)
    K = GraphKernel(ei, 40, edge_weight=w, normalization="lazy")
    S = normalized(W)
    torch.testing.assert_close(K.S.to_dense(), _lazy(S))
    lam = torch.linalg.eigvalsh(K.S.to_dense())
    assert float(lam.min()) > -1e-12 and float(lam.max()) == pytest.approx(1.0)
    assert float(torch.linalg.eigvalsh(S).min()) < -0.5          # Eq. 23's kernel is not PSD
    assert K.positive_semidefinite and not GraphKernel(ei, 40, edge_weight=w).positive_semidefinite
    assert K.lambda_max == 1.0
    assert GraphKernel(torch.zeros(2, 0, dtype=torch.long), 3, normalization="lazy").lambda_max == 0.5


def test_lazy_kernel_inductive_rows_are_half_of_eq23():
    W, ei, w = random_graph(30, 0.2, 1)
    hidden = [3, 7, 11]
    K = GraphKernel(ei, 30, hidden=hidden, edge_weight=w, normalization="lazy")
    S, vis, rows = visible_kernel(W, hidden)
    torch.testing.assert_close(K.S.to_dense(), _lazy(S))
    torch.testing.assert_close(K.rows(hidden).to_dense(), rows(hidden) / 2)
    torch.testing.assert_close(K.to(dtype=torch.float32).S.to_dense(), _lazy(S).float())


def test_unknown_normalization_names_both_kernels():
    _, ei, _ = random_graph(10, 0.3, 0)
    with pytest.raises(ValueError, match="'lazy'.*'symmetric'"):
        GraphKernel(ei, 10, normalization="sym")


# ----------------------------------------------------------------------------- Algorithm 2, symmetric
@pytest.mark.parametrize("hidden", [None, [1, 6, 13, 20, 33]])
def test_symmetric_form_matches_dense_eq7(hidden):
    W, ei, w = random_graph(45, 0.12, 2)
    y = torch.randint(0, 3, (45,), generator=torch.Generator().manual_seed(3))
    train = torch.tensor([0, 2, 4, 8, 9, 15, 22, 30, 40])
    K = GraphKernel(ei, 45, hidden=hidden, edge_weight=w, normalization="lazy")
    prob = make_problem(K, y, train, num_classes=3)
    transforms = [InverseLaplacian(0.9), ReciprocalPolynomial([1.0, -0.5, 0.2], 1)]
    betas = [1e-2, 1.0]
    res = solve(prob, transforms, betas, solver="cg", tol=1e-12, max_iter=5000)
    assert all("symmetric form" in h.solver for h in res.history)
    S0, vis, rows = visible_kernel(W, hidden or [])
    S = _lazy(S0)
    loc = {int(v): i for i, v in enumerate(vis)}
    train_local = [loc[int(t)] for t in train]
    Y = torch.nn.functional.one_hot(y[train], 3).double()
    ids = list(range(45))
    R = torch.cat([S[[loc[i]]] if i in loc else rows([i]) / 2 for i in ids])
    for t, tr in enumerate(transforms):
        Qi = _q_inverse(S, tr)
        for b, beta in enumerate(betas):
            want = stkr_scores(S, train_local, Y, S @ Qi, beta, R, Qi)
            got = prob.rows(torch.arange(45)) @ res.points[t * len(betas) + b].h
            torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-8)


def test_symmetric_form_every_node_labeled_is_one_cg_and_its_own_adjoint():
    _, ei, w = random_graph(50, 0.1, 4)
    K = GraphKernel(ei, 50, edge_weight=w, normalization="lazy")
    B = torch.randn(50, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    prob = make_problem(K, None, torch.arange(50), targets=B)
    S = K.S.to_dense()
    s = S @ torch.linalg.inv(torch.eye(50, dtype=S.dtype) - 0.9 * S)
    M = 50 * S + 50 * 1e-2 * (torch.eye(50, dtype=S.dtype) - 0.9 * S)   # symmetric when n = N
    for adjoint in (False, True):
        res = solve(prob, [InverseLaplacian(0.9)], [1e-2], solver="cg", tol=1e-12, adjoint=adjoint)
        assert "symmetric form" in res.history[-1].solver
        torch.testing.assert_close(res.points[0].x, torch.linalg.solve(M, B), rtol=1e-8, atol=1e-10)
    f = S @ solve(prob, [InverseLaplacian(0.9)], [1e-2], solver="cg", tol=1e-12).points[0].h
    torch.testing.assert_close(f, s @ torch.linalg.solve(s + 1e-2 * torch.eye(50, dtype=S.dtype), B),
                               rtol=1e-8, atol=1e-10)


def test_symmetric_form_full_right_hand_side_matches_the_direct_route():
    _, ei, w = random_graph(40, 0.15, 5)
    K = GraphKernel(ei, 40, edge_weight=w, normalization="lazy")
    train = torch.arange(0, 40, 5)
    R = torch.randn(40, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    prob = make_problem(K, None, train, targets=R).with_targets(rhs=R)
    a = solve(prob, [InverseLaplacian(0.8)], [0.1], solver="cg", tol=1e-13)
    b = solve(prob, [InverseLaplacian(0.8)], [0.1], solver="direct")
    torch.testing.assert_close(a.points[0].x, b.points[0].x, rtol=1e-7, atol=1e-9)


def test_auto_takes_one_cg_when_every_node_is_a_target():
    _, ei, w = random_graph(600, 0.01, 6)
    K = GraphKernel(ei, 600, edge_weight=w, normalization="lazy")
    prob = make_problem(K, None, torch.arange(600), targets=torch.randn(600, 2, dtype=torch.float64))
    res = solve(prob, [InverseLaplacian(0.9)], [1.0])
    assert "symmetric form" in res.history[-1].solver and res.history[-1].converged


def test_metric_cg_against_a_dense_solve_with_a_singular_metric():
    g = torch.Generator().manual_seed(0)
    U = torch.linalg.qr(torch.randn(12, 12, generator=g, dtype=torch.float64))[0]
    G = U @ torch.diag(torch.tensor([0.0, 0.0] + [0.1 * i for i in range(1, 11)], dtype=torch.float64)) @ U.T
    P = torch.diag((torch.arange(12) % 3 == 0).double())
    A = 5.0 * P @ G + 0.3 * torch.eye(12, dtype=torch.float64)     # G A symmetric positive semidefinite
    b = torch.randn(12, 3, generator=g, dtype=torch.float64)
    res = metric_cg(lambda p, gp: (A @ p, G @ (A @ p)), b, G @ b, max_iter=200, tol=1e-13)
    torch.testing.assert_close(res.image, G @ torch.linalg.solve(A, b), rtol=1e-8, atol=1e-10)


# ------------------------------------------------------------------------------------------ Richardson
@pytest.mark.parametrize("beta", [1e-4, 1e-2, 1.0])
def test_automatic_step_is_stable_on_the_lazy_kernel(beta):
    """``gamma = 1 / (N lambda + n beta rho_max)`` makes every eigenvalue of ``I - gamma M`` lie in
    ``[0, 1)`` (dense eigenvalues), where Eq. 23's kernel has some outside the unit disc."""

    W, ei, w = random_graph(80, 0.08, 7)
    train = torch.arange(0, 80, 3)
    y = torch.randint(0, 2, (80,), generator=torch.Generator().manual_seed(2))
    for norm in ("lazy", "symmetric"):
        prob = make_problem(GraphKernel(ei, 80, edge_weight=w, normalization=norm), y, train)
        gamma, _ = reciprocal_step(prob, [InverseLaplacian(0.9)], [beta])
        S = prob.op.to_dense()
        N, n = 80, train.numel()
        P = torch.zeros(N, N, dtype=S.dtype)
        P[train, train] = 1.0
        M = N * P @ S + n * beta * (torch.eye(N, dtype=S.dtype) - 0.9 * S)
        mu = np.linalg.eigvals((torch.eye(N, dtype=S.dtype) - float(gamma[0]) * M).numpy())
        if norm == "lazy":
            assert np.abs(mu.imag).max() < 1e-8 and mu.real.min() > -1e-10 and np.abs(mu).max() < 1.0
        elif beta == 1e-4:
            assert np.abs(mu).max() > 1.0       # the reason Eq. 23's kernel needs a refusal


def test_slow_richardson_on_the_lazy_kernel_stalls_early_and_its_advice_works():
    """Stable but slow (kappa ~ 1e4): Richardson with the automatic step ends at its counted stall window,
    the estimator refuses its scores naming solver='cg', and following that converges to the direct solve."""
    data, train = _graph(500, 0.02, 8)
    est = STKR(InverseLaplacian(0.9), 1e-3, solver="richardson", max_iter=100_000)
    with pytest.raises(ConvergenceError, match="stalled") as err:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(data, train)
    assert "solver='cg'" in str(err.value) and err.value.result.n_iter < 100_000
    fixed = STKR(InverseLaplacian(0.9), 1e-3, solver="cg").fit(data, train)       # the advice, as written
    assert fixed.history_[-1].converged
    direct = STKR(InverseLaplacian(0.9), 1e-3, solver="direct").fit(data, train)
    assert float((fixed.predict() == direct.predict()).double().mean()) > 0.99
    tight = STKR(InverseLaplacian(0.9), 1e-3, solver="cg", tol=1e-11).fit(data, train)
    torch.testing.assert_close(tight.decision_function(), direct.decision_function(), rtol=1e-5, atol=1e-7)


# --------------------------------------------------------------------------------- indefinite kernel
def _graph(n: int, p: float, seed: int, frac: float = 0.3):
    _, ei, _ = random_graph(n, p, seed)
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, 3, (n,), generator=g)
    train = torch.randperm(n, generator=g)[: int(frac * n)]
    return Data(edge_index=ei, y=y, num_nodes=n), train


def test_richardson_refusal_on_eq23_names_the_direct_route_and_it_works():
    data, train = _graph(1500, 0.004, 9)
    est = STKR(InverseLaplacian(0.9), 1e-3, solver="richardson", normalization="symmetric")
    with pytest.raises(ConvergenceError, match="solver='direct'") as err:
        est.fit(data, train)
    assert "normalization='lazy'" in str(err.value)
    direct = STKR(InverseLaplacian(0.9), 1e-3, solver="direct", normalization="symmetric").fit(data, train)
    S = normalized(torch.zeros(1500, 1500, dtype=torch.float64).index_put_(tuple(data.edge_index), torch.tensor(1.0,
                   dtype=torch.float64)))
    Y = torch.nn.functional.one_hot(data.y[train], 3).double()
    Qi = torch.linalg.inv(torch.eye(1500, dtype=S.dtype) - 0.9 * S)
    want = stkr_scores(S, train.tolist(), Y, S @ Qi, 1e-3, S, Qi)
    torch.testing.assert_close(direct.class_scores(), want, rtol=1e-6, atol=1e-8)
    lazy = STKR(InverseLaplacian(0.9), 1e-3, solver="richardson", normalization="lazy", max_iter=100000)
    with pytest.raises(ConvergenceError, match="stalled.*solver='cg'"):   # stable, but too slow: it stalls
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lazy.fit(data, train)


def test_auto_on_eq23_beyond_the_direct_route_is_refused_and_the_lazy_kernel_converges():
    data, _ = _graph(4400, 0.0012, 10)
    train = torch.arange(4100)                                   # n > 4000: no direct route
    with pytest.raises(ConvergenceError, match="normalization='lazy'") as err:
        STKR(InverseLaplacian(0.9), 1e-2, normalization="symmetric").fit(data, train)
    assert "before" in str(err.value) or "does not fit" in str(err.value)
    est = STKR(InverseLaplacian(0.9), 1e-2, normalization="lazy").fit(data, train)
    assert "symmetric form" in est.solver_ and est.history_[-1].converged


def test_one_configuration_one_outcome_for_a_fixed_budget():
    """``STKR(num_iter=T)`` and ``STKRCV(num_iter=[T])`` run the same truncated iteration and refuse alike."""
    data, train = _graph(1500, 0.004, 9)
    val = torch.tensor([i for i in range(1500) if i not in set(train.tolist())][:50])
    outcomes = []
    for T in (4, 32):
        got = []
        for make in (lambda: STKR(InverseLaplacian(0.9), 1e-3, solver="richardson", num_iter=T,
                                  normalization="symmetric").fit(data, train),
                     lambda: STKRCV([InverseLaplacian(0.9)], [1e-3], num_iter=[T], solver="richardson",
                                    normalization="symmetric").fit(data, train, val_idx=val)):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    got.append(make().h_)
            except ConvergenceError as err:
                assert "normalization='lazy'" in str(err)
                got.append("refused")
        outcomes.append(got)
        if isinstance(got[0], torch.Tensor):
            torch.testing.assert_close(got[0], got[1])
        else:
            assert got == ["refused", "refused"]
    assert [o[0] if isinstance(o[0], str) else "ran" for o in outcomes] == ["ran", "refused"]


def test_a_stalled_richardson_ends_early_and_the_estimator_raises():
    """Richardson to a tolerance that makes no progress over a window stops there (counted, not timed),
    and the estimator refuses its scores naming what converges; a fixed budget runs as asked."""
    from graphstk.spectral.solvers import STALL_WINDOW

    data, train = _graph(3000, 0.002, 11, frac=0.01)
    est = STKR(InverseLaplacian(0.9), 1e-2, solver="richardson", step_size=1e-6, normalization="symmetric",
               max_iter=5000)
    with pytest.raises(ConvergenceError, match="stalled") as err:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(data, train)
    assert err.value.result.n_iter < 5000 and len(err.value.result.residuals) > STALL_WINDOW
    assert "normalization='lazy'" in str(err.value)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fixed = STKR(InverseLaplacian(0.9), 1e-2, solver="richardson", step_size=1e-6, normalization="symmetric",
                     num_iter=300).fit(data, train)
    assert fixed.n_iter_ == 300
    lazy = STKR(InverseLaplacian(0.9), 1e-2).fit(data, train)          # the default: converges
    assert lazy.history_[-1].converged
