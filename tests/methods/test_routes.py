"""solver="auto": routes decided from sizes known before the solve, recorded with their reason,
and iterative solves refused up front when their estimated time is above the cap."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from dense_reference import random_graph  # noqa: E402

from graphstk.methods import propagation as P  # noqa: E402
from graphstk.methods import routes  # noqa: E402
from graphstk.operators import GraphKernel  # noqa: E402
from graphstk.transforms import InverseLaplacian  # noqa: E402


def _prob():
    W, ei, w = random_graph(60, 0.1, 0)
    y = torch.randint(0, 3, (60,), generator=torch.Generator().manual_seed(0))
    return P.make_problem(GraphKernel(ei, 60, edge_weight=w), y, torch.arange(20), 3)


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
