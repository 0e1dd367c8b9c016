"""solver="auto": routes decided from sizes and counted work known before the solve, recorded
with their reason; the same inputs take the same route on an idle or a busy machine, and only a
time budget the caller asks for (``max_seconds=``) stops a solve early."""
from __future__ import annotations

import re

import pytest
import torch

from dense_reference import labeled_graph, random_graph
from graphstk.methods import STKR
from graphstk.exceptions import ConvergenceError
from graphstk.methods import linsolve, routes
from graphstk.methods.engine import solve
from graphstk.methods.problem import make_problem
from graphstk.operators import GraphKernel
from graphstk.spectral.transforms import InverseLaplacian, LabelPropagationFilter


def lpf(etas):
    """Label-Prop's filters for the ``eta`` values ``etas``."""
    return [LabelPropagationFilter(e) for e in etas]


def _prob(normalization: str = "symmetric"):
    W, ei, w = random_graph(60, 0.1, 0)
    y = torch.randint(0, 3, (60,), generator=torch.Generator().manual_seed(0))
    return make_problem(GraphKernel(ei, 60, edge_weight=w, normalization=normalization), y, torch.arange(20), 3)


def _labeled_problem(seed=0):
    """(Data, train ids, Problem) on an 80-node random graph with three classes."""
    data, train, _ = labeled_graph(seed, n=80, p=0.1)
    return data, train, make_problem(GraphKernel(data.edge_index, 80), data.y, train, 3)


def test_auto_records_the_counted_work_and_refuses_only_what_cannot_converge(monkeypatch):
    """An iterative auto route starts whatever its worst-case bound; its history names the most work
    it can do, counted, never a time estimate. On a kernel that is not positive semidefinite, Algorithm
    2 beyond the direct route has no route that converges: refused before any work."""
    monkeypatch.setattr(routes, "DIRECT_MAX_LABELED", 1)          # force the iterative route
    lazy, eq23 = _prob("lazy"), _prob("symmetric")
    with pytest.warns(Warning):                                   # 50 iterations cannot reach tol=1e-30
        sym = solve(lazy, [InverseLaplacian(0.999999)], [1e-8], solver="auto", max_iter=50, tol=1e-30)
    for res in (sym, solve(eq23, lpf([0.999999]), solver="auto", tol=1e-12)):
        rec = res.history[-1]
        assert "at most" in rec.reason and "operator products" in rec.reason and "estimated" not in rec.reason
        assert rec.n_iter > 0
    with pytest.raises(ConvergenceError, match="normalization='lazy'"):
        solve(eq23, [InverseLaplacian(0.9)], [1e-2], solver="auto")


def _busy(seconds: float = 0.4):
    """A CPU-bound process beside the test (what a shared machine looks like)."""
    import subprocess
    import sys
    return subprocess.Popen([sys.executable, "-c", f"import time\nt = time.time()\nwhile time.time() - t < {seconds}: pass"])


def test_the_route_and_its_reason_do_not_depend_on_machine_load(monkeypatch):
    """The same fit gives the same route, reason and iteration count with a CPU-bound process
    running beside it as without one (routes come from sizes and counted work only)."""
    data, train, _ = _labeled_problem()
    def fit_records():
        est = STKR(InverseLaplacian(0.9), 0.1, max_iter=200, tol=1e-8).fit(data, train)
        lp = solve(_prob(), lpf([0.9, 0.8, 0.7, 0.6]), solver="auto")
        return [(r.solver, r.reason, r.n_iter) for r in est.history_ + lp.history]
    monkeypatch.setattr(routes, "DIRECT_MAX_LABELED", 1)
    idle = fit_records()
    hog = _busy(5.0)
    try:
        busy = fit_records()
    finally:
        hog.kill()
        hog.wait()
    assert idle == busy


def test_max_seconds_stops_the_solve_and_says_so():
    """A time budget is the caller's choice: the solve stops when it runs out, warns, and its
    history says why; without it the same solve runs to its tolerance."""
    from graphstk.exceptions import ConvergenceWarning
    from graphstk.spectral.solvers import time_budget

    prob = _prob()
    with pytest.warns(ConvergenceWarning, match="max_seconds=1e-09 ran out"):
        res = solve(prob, lpf([0.9]), solver="richardson", tol=1e-14, max_iter=10_000, max_seconds=1e-9)
    rec = res.history[-1]
    assert rec.stopped and not rec.converged and rec.n_iter == 1
    full = solve(prob, lpf([0.9]), solver="richardson", tol=1e-10, max_iter=10_000)
    assert full.history[-1].converged and not full.history[-1].stopped
    with pytest.raises(ValueError, match="max_seconds must be a positive"):
        time_budget(None, 0)
    data, train, _ = _labeled_problem()
    with pytest.warns(ConvergenceWarning, match="time budget"):
        est = STKR(InverseLaplacian(0.9), 0.1, solver="gmres", tol=1e-14, max_seconds=1e-9).fit(data, train)
    assert est.history_[-1].stopped and est.n_iter_ == 1


def test_auto_never_takes_the_sparse_lu_on_a_large_graph(monkeypatch):
    data, train, prob = _labeled_problem()
    exact = solve(prob, [InverseLaplacian(0.9)], [0.1], solver="direct")
    monkeypatch.setattr(routes, "LU_MAX_NODES", 10)       # pretend N is large
    monkeypatch.setattr(routes, "LU_MAX_ENVELOPE", 10)    # ... and its LU fill unbounded
    called = []
    monkeypatch.setattr(linsolve.spla, "splu", lambda *a, **k: called.append(1))
    res = solve(prob, [InverseLaplacian(0.9)], [0.1], solver="auto")
    assert not called
    rec = res.history[-1]
    assert "cg" in rec.solver and "cannot be bounded" in rec.reason and rec.n_iter > 0
    torch.testing.assert_close(res.points[0].h, exact.points[0].h, atol=1e-9, rtol=1e-8)
    est = STKR(InverseLaplacian(0.9), 0.1, normalization="symmetric").fit(data, train)
    assert est.solver_.startswith("direct") and est.history_[-1].reason
    lazy = STKR(InverseLaplacian(0.9), 0.1).fit(data, train)        # N > LU_MAX_NODES: one CG, no n x n system
    assert lazy.solver_ == "cg (Algorithm 2, symmetric form)" and not called


def test_cg_with_a_reciprocal_transform_runs_cg_not_gmres():
    data, train, prob = _labeled_problem(1)
    exact = solve(prob, [InverseLaplacian(0.9)], [0.1], solver="direct")
    res = solve(prob, [InverseLaplacian(0.9)], [0.1], solver="cg")
    assert "cg" in res.history[-1].solver and "gmres" not in res.history[-1].solver
    torch.testing.assert_close(res.points[0].h, exact.points[0].h, atol=1e-9, rtol=1e-8)
    with pytest.raises(ValueError, match="not symmetric"):
        solve(prob, [InverseLaplacian(0.9)], [0.1], solver="cg", budgets=[4])


def test_auto_takes_the_lu_above_the_node_limit_when_its_envelope_bounds_the_fill(monkeypatch):
    """Above LU_MAX_NODES the sparse LU is still taken when the reverse Cuthill-McKee envelope
    bounds its fill; that envelope is the profile of the reordered pattern (checked densely)."""
    import numpy as np
    import scipy.sparse as sp
    from scipy.sparse.csgraph import reverse_cuthill_mckee

    data, train, prob = _labeled_problem(3)
    row, col, _ = prob.kernel.S.coo()
    A = sp.csr_matrix((np.ones(row.numel()), (row.numpy(), col.numpy())), shape=(prob.N, prob.N))
    perm = reverse_cuthill_mckee(A, symmetric_mode=True)
    D = A[perm][:, perm].toarray() != 0
    profile = sum(i - min([j for j in range(i + 1) if D[i, j]] or [i]) for i in range(prob.N)) + prob.N
    assert routes.lu_envelope(prob) == profile
    exact = solve(prob, [InverseLaplacian(0.9)], [0.1], solver="direct")
    monkeypatch.setattr(routes, "LU_MAX_NODES", 10)       # pretend N is large; the envelope bound still holds
    res = solve(prob, [InverseLaplacian(0.9)], [0.1], solver="auto")
    rec = res.history[-1]
    assert "lu" in rec.solver and "envelope" in rec.reason and rec.n_iter == 0
    torch.testing.assert_close(res.points[0].h, exact.points[0].h, atol=1e-12, rtol=1e-10)


def test_gmres_work_counts_the_orthogonalisation():
    w = routes.gmres_work(1000, restart=50)   # 20 cycles of 50
    assert w.products == 1000 + 19              # + one residual product per restart
    assert w.steps == 20 * (50 * 51 // 2 + 3 * 50 + 2)
    assert (w.lstsq, w.gathers, w.vectors) == (1000, 20 * 51, 52)
    part = routes.gmres_work(120, restart=50)   # 50 + 50 + 20
    assert part.steps == 2 * (1275 + 152) + (210 + 62) and part.products == 122 and part.gathers == 2 * 51 + 21
    assert routes.cg_work(100).steps == 300 and routes.cg_work(100, shifts=4).steps == 1100


def test_fit_history_shows_the_route_and_its_counted_work(monkeypatch):
    data, train, _ = _labeled_problem()
    monkeypatch.setattr(routes, "DIRECT_MAX_LABELED", 1)
    est = STKR(InverseLaplacian(0.9), 0.1, max_iter=200).fit(data, train)   # the lazy kernel: symmetric form
    rec = est.history_[-1]
    assert est.solver_ == rec.solver == "cg (Algorithm 2, symmetric form)"
    assert "positive semidefinite" in rec.reason and "vector steps" in rec.reason and "at most" in rec.reason
    assert "relative residual of the recovered theta" in rec.reason


@pytest.mark.parametrize("shifts", [1, 4])
def test_auto_counts_the_cg_of_the_direct_route(monkeypatch, shifts):
    """Inside the direct solve, (I - eta S)^-1 E by CG (one eta) or multi-shift CG (several) on n
    columns runs from its count (no refusal) and gives the direct solve's scores."""
    _, _, prob = _labeled_problem()
    exact = solve(prob, [InverseLaplacian(0.9 - 0.01 * i) for i in range(shifts)], [0.1],
                              solver="direct")
    monkeypatch.setattr(routes, "LU_MAX_NODES", 10)       # pretend N is large
    monkeypatch.setattr(routes, "LU_MAX_ENVELOPE", 10)    # ... and its LU fill unbounded
    transforms = [InverseLaplacian(0.9 - 0.01 * i) for i in range(shifts)]
    res = solve(prob, transforms, [0.1], solver="auto")
    assert "at most" in res.history[0].reason and ("multi-shift" in res.history[0].solver) == (shifts > 1)
    for g in range(shifts):
        torch.testing.assert_close(res.points[g].h, exact.points[g].h, atol=1e-9, rtol=1e-8)
