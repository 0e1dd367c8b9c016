"""The positive semidefinite lazy graph kernel and the solves it allows, against dense computations.

* ``GraphKernel(normalization="lazy")`` is ``(I + S) / 2`` of Eq. 23's ``S`` (spectrum in ``[0, 1]``),
  with halved out-of-sample rows;
* Algorithm 2's symmetric form (CG in the inner product of ``S``) gives Eq. 7's scores;
* Richardson's automatic step is stable on it (dense eigenvalues of ``I - gamma M``);
* on the indefinite kernel, converged solves that cannot converge are refused before any work, and
  the advice of each refusal, followed literally, works.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from torch_geometric.data import Data

from graphstk.exceptions import ConvergenceError
from graphstk.methods import STKR, STKRCV
from graphstk.methods.engine import solve
from graphstk.methods.problem import make_problem
from graphstk.operators import GraphKernel
from graphstk.spectral.solvers import metric_cg
from graphstk.spectral.transforms import InverseLaplacian, ReciprocalPolynomial

from dense_reference import normalized, random_graph, stkr_scores, visible_kernel


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
            got = prob.rows(torch.arange(45)) @ res.h[(t * len(betas) + b, None)]
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
        torch.testing.assert_close(res.x[(0, None)], torch.linalg.solve(M, B), rtol=1e-8, atol=1e-10)
    f = S @ solve(prob, [InverseLaplacian(0.9)], [1e-2], solver="cg", tol=1e-12).h[(0, None)]
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
    torch.testing.assert_close(a.x[(0, None)], b.x[(0, None)], rtol=1e-7, atol=1e-9)


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
    from graphstk.methods.propagation import reciprocal_step

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


def test_richardson_that_cannot_reach_tol_is_refused_before_work_and_its_advice_works():
    data, train = _graph(500, 0.02, 8)
    est = STKR(InverseLaplacian(0.9), 1e-3, solver="richardson", max_iter=50)
    with pytest.raises(ConvergenceError, match="solver='cg'") as err:
        est.fit(data, train)
    assert "before iterating" in str(err.value)
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
    with pytest.raises(ConvergenceError, match="solver='cg'"):   # stable, but too slow for max_iter: counted
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
