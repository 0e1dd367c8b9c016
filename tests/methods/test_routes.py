"""solver="auto": routes decided from sizes known before the solve, recorded with their reason,
and iterative solves refused up front when their estimated time is above the cap."""
from __future__ import annotations

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
