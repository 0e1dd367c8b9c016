"""solver="auto": routes decided from sizes known before the solve, recorded with their reason,
and iterative solves refused up front when their estimated time is above the cap."""
from __future__ import annotations

import re

import pytest
import torch

from dense_reference import labeled_graph, random_graph
from graphstk.methods import STKR
from graphstk.methods import propagation as P
from graphstk.methods import routes
from graphstk.operators import GraphKernel
from graphstk.transforms import InverseLaplacian


def _prob():
    W, ei, w = random_graph(60, 0.1, 0)
    y = torch.randint(0, 3, (60,), generator=torch.Generator().manual_seed(0))
    return P.make_problem(GraphKernel(ei, 60, edge_weight=w), y, torch.arange(20), 3)


def _labeled_problem(seed=0):
    """(Data, train ids, Problem) on an 80-node random graph with three classes."""
    data, train, _ = labeled_graph(seed, n=80, p=0.1)
    return data, train, P.make_problem(GraphKernel(data.edge_index, 80), data.y, train, 3)


def test_auto_refuses_an_iterative_solve_above_the_cap(monkeypatch):
    prob = _prob()
    monkeypatch.setattr(routes, "CHEAP_WORK", 0)
    monkeypatch.setattr(routes, "DIRECT_MAX_LABELED", 1)          # force the iterative route
    monkeypatch.setenv("GRAPHSTK_AUTO_MAX_SECONDS", "0")
    with pytest.raises(ValueError, match="GRAPHSTK_AUTO_MAX_SECONDS.*|num_iter="):
        P.stkr_reciprocal(prob, [InverseLaplacian(0.9)], [0.1], solver="auto")
    with pytest.raises(ValueError, match="above the 0 s cap"):
        P.label_propagation(prob, [0.9], solver="auto")
    # a fixed budget is never refused: the user chose its cost
    P.stkr_reciprocal(prob, [InverseLaplacian(0.9)], [0.1], solver="auto", budgets=(5,))


def test_auto_records_the_estimate_in_the_history(monkeypatch):
    prob = _prob()
    monkeypatch.setattr(routes, "CHEAP_WORK", 0)
    res = P.label_propagation(prob, [0.9], solver="auto")
    assert "estimated" in res.history[-1].reason and "CG" in res.history[-1].reason


def test_auto_never_takes_the_sparse_lu_on_a_large_graph(monkeypatch):
    data, train, prob = _labeled_problem()
    exact = P.stkr_reciprocal(prob, [InverseLaplacian(0.9)], [0.1], solver="direct")
    monkeypatch.setattr(routes, "LU_MAX_NODES", 10)       # pretend N is large
    monkeypatch.setattr(routes, "LU_MAX_ENVELOPE", 10)    # ... and its LU fill unbounded
    called = []
    monkeypatch.setattr(P.spla, "splu", lambda *a, **k: called.append(1))
    res = P.stkr_reciprocal(prob, [InverseLaplacian(0.9)], [0.1], solver="auto")
    assert not called
    rec = res.history[-1]
    assert "cg" in rec.solver and "cannot be bounded" in rec.reason and rec.n_iter > 0
    torch.testing.assert_close(res.h[(0, None)], exact.h[(0, None)], atol=1e-9, rtol=1e-8)
    est = STKR(InverseLaplacian(0.9), 0.1).fit(data, train)
    assert est.solver_.startswith("direct") and est.history_[-1].reason


def test_cg_with_a_reciprocal_transform_runs_cg_not_gmres():
    data, train, prob = _labeled_problem(1)
    exact = P.stkr_reciprocal(prob, [InverseLaplacian(0.9)], [0.1], solver="direct")
    res = P.stkr_reciprocal(prob, [InverseLaplacian(0.9)], [0.1], solver="cg")
    assert "cg" in res.history[-1].solver and "gmres" not in res.history[-1].solver
    torch.testing.assert_close(res.h[(0, None)], exact.h[(0, None)], atol=1e-9, rtol=1e-8)
    with pytest.raises(ValueError, match="not symmetric"):
        P.stkr_reciprocal(prob, [InverseLaplacian(0.9)], [0.1], solver="cg", budgets=[4])


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
    assert P.lu_envelope(prob) == profile
    exact = P.stkr_reciprocal(prob, [InverseLaplacian(0.9)], [0.1], solver="direct")
    monkeypatch.setattr(routes, "LU_MAX_NODES", 10)       # pretend N is large; the envelope bound still holds
    res = P.stkr_reciprocal(prob, [InverseLaplacian(0.9)], [0.1], solver="auto")
    rec = res.history[-1]
    assert "lu" in rec.solver and "envelope" in rec.reason and rec.n_iter == 0
    torch.testing.assert_close(res.h[(0, None)], exact.h[(0, None)], atol=1e-12, rtol=1e-10)


def _fake_clock(monkeypatch, seconds=0.01):
    """Every timed unit takes ``seconds`` (the function under the clock is not even run)."""
    monkeypatch.setattr(routes, "_timed", lambda fn: seconds)


def test_gmres_work_counts_the_orthogonalisation():
    w = routes.gmres_work(1000, restart=50)   # 20 cycles of 50
    assert w.products == 1000 + 19              # + one residual product per restart
    assert w.steps == 20 * (50 * 51 // 2 + 3 * 50 + 2)
    assert (w.lstsq, w.gathers, w.vectors) == (1000, 20 * 51, 52)
    part = routes.gmres_work(120, restart=50)   # 50 + 50 + 20
    assert part.steps == 2 * (1275 + 152) + (210 + 62) and part.products == 122 and part.gathers == 2 * 51 + 21
    assert routes.cg_work(100).steps == 300 and routes.cg_work(100, shifts=4).steps == 1100


def test_gmres_estimate_includes_the_orthogonalisation(monkeypatch):
    """With every unit timed at 10 ms, the estimate is the work's count of each unit times its
    time (a sweep of ``vectors - 1`` Gram-Schmidt steps is timed as one)."""
    prob = _prob()
    _fake_clock(monkeypatch, 0.01)
    w = routes.gmres_work(1000)
    t = routes.unit_timings(prob, 3, w)
    size = w.vectors                                # the whole basis fits in POOL_BYTES at N = 60
    assert t == routes.UnitTimes(0.01, 0.01 / (size - 1), 0.01, 0.01 / size)
    secs = routes.estimate_seconds(prob, 3, w)
    products = w.products * 0.01
    expect = routes.ESTIMATE_MARGIN * (products + w.steps * t.step + w.lstsq * t.lstsq + w.gathers * t.gather)
    assert secs == pytest.approx(expect)
    cg = routes.cg_work(1000)   # CG's working set: 4 vectors, a sweep of 3 steps
    expect = routes.ESTIMATE_MARGIN * (1000 * 0.01 + 3000 * 0.01 / 3)
    assert routes.estimate_seconds(prob, 3, cg) == pytest.approx(expect)
    # a step as slow as a product (a sparse graph, few columns): GMRES(50) costs ~28x its products
    monkeypatch.setattr(routes, "unit_timings", lambda *a, **k: routes.UnitTimes(1e-3, 1e-3))
    assert routes.estimate_seconds(prob, 3, w) > 25 * routes.ESTIMATE_MARGIN * w.products * 1e-3


def test_auto_refuses_before_any_iteration(monkeypatch):
    """An estimate above the cap raises before the solver starts, naming the estimate, the cap,
    a max_iter that fits and the settings to change; a max_iter that fits then runs."""
    data, train, prob = _labeled_problem()
    monkeypatch.setattr(routes, "CHEAP_WORK", 0)
    monkeypatch.setattr(routes, "DIRECT_MAX_LABELED", 1)          # force the iterative route
    _fake_clock(monkeypatch, 5.0)                                 # 5 s a unit: far above 600 s
    monkeypatch.delenv("GRAPHSTK_AUTO_MAX_SECONDS", raising=False)
    ran = []
    for name in ("gmres", "cg", "richardson"):
        monkeypatch.setattr(P, name, lambda *a, _n=name, **k: ran.append(_n))
    with pytest.raises(ValueError) as err:
        STKR(InverseLaplacian(0.9), 0.1).fit(data, train)
    msg = str(err.value)
    assert "GMRES" in msg and "estimated" in msg and "cap 600 s" in msg and "nothing ran" in msg
    for knob in ("max_iter=", "num_iter=", "solver=", "GRAPHSTK_AUTO_MAX_SECONDS"):
        assert knob in msg
    with pytest.raises(ValueError, match="CG on 3 columns.*estimated.*looser tol="):
        P.label_propagation(prob, [0.9], solver="auto", tol=1e-12)
    assert ran == []
    fits = int(re.search(r"max_iter=(\d+) or lower \(fits the cap\)", msg).group(1))
    assert 0 < fits < 1000
    routes.check_affordable(prob, "GMRES", 3, routes.gmres_work(fits))   # no error at the suggested cap


def test_fit_history_shows_the_route_and_its_estimate(monkeypatch):
    data, train, _ = _labeled_problem()
    monkeypatch.setattr(routes, "CHEAP_WORK", 0)
    monkeypatch.setattr(routes, "DIRECT_MAX_LABELED", 1)
    est = STKR(InverseLaplacian(0.9), 0.1, max_iter=200).fit(data, train)
    rec = est.history_[-1]
    assert est.solver_ == "gmres" and rec.solver == "gmres"
    assert "not symmetric" in rec.reason and "vector steps" in rec.reason and "estimated" in rec.reason
    assert "cap 600 s" in rec.reason


@pytest.mark.parametrize("shifts", [1, 4])
def test_auto_estimates_the_cg_of_the_direct_route_before_it_runs(monkeypatch, shifts):
    """Inside the direct solve, (I - eta S)^-1 E by CG (one eta) or multi-shift CG (several) on n
    columns is estimated too: refused above the cap before it starts, recorded below it."""
    _, _, prob = _labeled_problem()
    monkeypatch.setattr(routes, "LU_MAX_NODES", 10)       # pretend N is large
    monkeypatch.setattr(routes, "LU_MAX_ENVELOPE", 10)    # ... and its LU fill unbounded
    monkeypatch.setattr(routes, "CHEAP_WORK", 0)
    transforms = [InverseLaplacian(0.9 - 0.01 * i) for i in range(shifts)]
    res = P.stkr_reciprocal(prob, transforms, [0.1], solver="auto")
    assert "estimated" in res.history[0].reason and ("multi-shift" in res.history[0].solver) == (shifts > 1)
    ran = []
    monkeypatch.setattr(P, "cg", lambda *a, **k: ran.append("cg"))
    monkeypatch.setattr(P, "solve_shifted_laplacians", lambda *a, **k: ran.append("multishift"))
    _fake_clock(monkeypatch, 5.0)
    with pytest.raises(ValueError, match=r"CG of \(I - eta S\)\^-1 E on 8 columns.*cap 600 s.*smaller eta"):
        P.stkr_reciprocal(prob, transforms, [0.1], solver="auto")
    assert ran == []
