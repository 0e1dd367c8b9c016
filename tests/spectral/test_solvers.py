"""Richardson, CG, GMRES and multi-shift CG (graphstk.spectral.solvers): the fused Richardson step against the
generic update, and how a solve that does not converge is reported."""
import warnings

import pytest
import torch

from dense_reference import labeled_graph, normalized, normalized_random_graph, random_graph
from graphstk.methods.engine import solve
from graphstk.methods.problem import make_problem
from graphstk.operators import GraphKernel
from graphstk.exceptions import ConvergenceError, ConvergenceWarning
from graphstk.spectral import solvers
from graphstk.spectral.solvers import SolveResult, _finish, multishift_cg, richardson, solve_shifted_laplacians
from graphstk.spectral.transforms import InverseLaplacian, LabelPropagationFilter


def lpf(etas):
    """Label-Prop's filters for the ``eta`` values ``etas``."""
    return [LabelPropagationFilter(e) for e in etas]


@pytest.mark.parametrize("tol,snaps", [(0.0, (1, 3, 7, 20)), (1e-8, (5, 10_000))])
def test_fused_richardson_step_matches_the_generic_update(tol, snaps):
    """``richardson(..., step=...)`` against the generic update with a per-column step size != 1:
    the same iterates, snapshots, iteration count and recorded residuals (which the fused path
    reads off (x_{t+1} - x_t) / gamma)."""
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
    W, ei, w = random_graph(36, 0.15, 0)
    y = torch.randint(0, 3, (36,), generator=torch.Generator().manual_seed(1))
    kernel = GraphKernel(ei, 36, edge_weight=w, dtype=torch.float32)
    prob = make_problem(kernel, y, torch.arange(8), 3)
    with pytest.warns(ConvergenceWarning):
        out = solve(prob, lpf([0.99]), solver="richardson", tol=1e-8, max_iter=5000)
    res = out.history[0]
    assert not res.converged and res.residuals[-1] >= 1e-8
    S = normalized(W).double()
    b = torch.zeros(36, 3, dtype=torch.float64)
    b[prob.train] = prob.Y.double()
    x = out.points[0].h.double()
    true = float((torch.linalg.vector_norm(b - x + 0.99 * S @ x, dim=0) / torch.linalg.vector_norm(b, dim=0)).max())
    assert true >= 1e-8


def test_diverging_richardson_raises_with_the_fix_and_never_says_increase_max_iter():
    data, train, _ = labeled_graph(2, n=80, p=0.1)
    prob = make_problem(GraphKernel(data.edge_index, 80), data.y, train, 3)
    with pytest.raises(ConvergenceError) as err:
        solve(prob, [InverseLaplacian(0.9)], [1e-3], solver="richardson", step_size=5.0, tol=1e-8,
                          max_iter=500)
    msg = str(err.value)
    assert "diverging" in msg and "step_size" in msg and "increase max_iter" not in msg
    res = err.value.result                      # the failed solve travels with the error, for diagnostics
    assert res is not None and not res.converged and 0 < res.n_iter <= 500 and res.residuals[-1] > 1.0


def test_stalled_solve_says_stalled():
    res = SolveResult(torch.zeros(1), residuals=[1e-3] * 50, n_iter=50)
    with pytest.warns(ConvergenceWarning, match="stalled.*far from the exact solution.*direct"):
        _finish(res, 1e-6, "gmres", True)
    res = SolveResult(torch.zeros(1), residuals=[10.0 ** -(i / 10) for i in range(50)], n_iter=50)
    with pytest.warns(ConvergenceWarning, match="still decreasing: increase max_iter"):
        _finish(res, 1e-9, "cg", True)
    with pytest.raises(ConvergenceError, match="not usable"):
        _finish(SolveResult(torch.zeros(1), residuals=[0.5, 2.0], n_iter=2), 1e-6, "gmres", True)


def test_gmres_stops_when_restart_cycles_stagnate():
    """A cyclic shift is the classic case where GMRES(m) with m < n makes no progress: the solve to
    tol ends after a few cycles (here with a ConvergenceError: the residual never left 1, no better
    than x = 0) instead of running all of max_iter."""
    n, restart = 200, 10
    P = torch.roll(torch.eye(n, dtype=torch.float64), 1, dims=0)
    b = torch.zeros(n, 1, dtype=torch.float64)
    b[0] = 1.0
    with pytest.raises(ConvergenceError, match="after 30 iterations") as err:
        solvers.gmres(lambda v: P @ v, b, max_iter=5000, tol=1e-8, restart=restart)
    assert err.value.result.n_iter == (solvers.GMRES_STALL_CYCLES + 1) * restart
    with warnings.catch_warnings():           # a fixed budget (tol=0) runs every product
        warnings.simplefilter("ignore")
        assert solvers.gmres(lambda v: P @ v, b, max_iter=100, tol=0.0, restart=restart).n_iter == 100


def test_gmres_still_converges_on_a_well_conditioned_system():
    g = torch.Generator().manual_seed(0)
    A = torch.eye(50, dtype=torch.float64) * 3 + 0.1 * torch.randn(50, 50, generator=g, dtype=torch.float64)
    b = torch.randn(50, 2, generator=g, dtype=torch.float64)
    res = solvers.gmres(lambda v: A @ v, b, max_iter=500, tol=1e-10, restart=5)
    assert res.converged
    torch.testing.assert_close(res.x, torch.linalg.solve(A, b), rtol=1e-8, atol=1e-8)


def test_a_caller_fix_replaces_the_default_advice():
    """A caller that chose the solver (solver='auto', a module without solver=) passes its own
    advice: the warning and the error carry it instead of the default 'use solver=... auto'."""
    res = SolveResult(torch.zeros(1), residuals=[1e-3] * 50, n_iter=50)
    with pytest.warns(ConvergenceWarning, match=r"stalled.*Pass solver='direct' or num_iter=T") as rec:
        _finish(res, 1e-6, "gmres", True, fix="pass solver='direct' or num_iter=T")
    assert "'auto'" not in str(rec[0].message)
    res = SolveResult(torch.zeros(1), residuals=[10.0 ** -(i / 10) for i in range(50)], n_iter=50)
    with pytest.warns(ConvergenceWarning, match=r"still decreasing: increase max_iter \(or pass num_iter=T\)"):
        _finish(res, 1e-9, "cg", True, fix="pass num_iter=T")
    with pytest.raises(ConvergenceError, match="not usable. Pass num_iter=T"):
        _finish(SolveResult(torch.zeros(1), residuals=[0.5, 2.0], n_iter=2), 1e-6, "gmres", True,
                fix="pass num_iter=T")


# multi-shift CG (Eq. 22 / Example 1 for every eta) against per-shift dense solves

def _graph_S(n=120, p=0.05, seed=0, components=False):
    S = normalized_random_graph(n, p, seed)
    if components:
        S = torch.block_diag(S, normalized_random_graph(30, 0.2, seed + 1), normalized_random_graph(5, 0.9, seed + 2))
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
