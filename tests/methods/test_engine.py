"""graphstk.methods.engine.solve: the adjoint systems (adjoint=True), a right-hand side on every point
(Problem.rhs, make_problem(targets=)) and the systems' solutions (EngineResult.x), against dense solves."""
from __future__ import annotations

import warnings

import pytest
import torch

from graphstk.exceptions import EdgeListWarning
from graphstk.methods.engine import solve
from graphstk.methods.problem import Problem, make_problem
from graphstk.operators import GraphKernel
from graphstk.operators.base import SparseOperator
from graphstk.spectral.transforms import (InverseLaplacian, LabelPropagationFilter, Polynomial,
                                          ReciprocalPolynomial, TopD)
from tests.nn.nn_graphs import random_graph

N = 30


def graph(seed: int = 0):
    """A connected weighted ring with random chords (``random_graph`` of ``tests/nn/nn_graphs.py``)."""
    ei, w, _ = random_graph(seed, N)
    return ei, w


def problem(seed: int = 0):
    ei, w = graph(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EdgeListWarning)   # duplicate random chords: weights summed
        K = GraphKernel(ei, N, edge_weight=w)
    train = torch.arange(0, N, 3)
    scores = torch.rand(N, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(seed + 1))
    return make_problem(K, None, train, targets=scores), scores


def dense_M(prob: Problem, tr: ReciprocalPolynomial, beta: float) -> torch.Tensor:
    S = prob.op.to_dense()
    Q = sum(c * torch.linalg.matrix_power(S, p) for p, c in enumerate(tr.xi))
    lab = torch.zeros(prob.N, 1, dtype=S.dtype)
    lab[prob.train] = 1.0
    return prob.N * lab * torch.linalg.matrix_power(S, tr.r) + prob.n * beta * Q


def test_targets_are_read_at_the_labeled_rows():
    prob, scores = problem()
    torch.testing.assert_close(prob.Y, scores[prob.train])
    same = make_problem(prob.kernel, None, prob.train, targets=scores[prob.train])
    torch.testing.assert_close(same.Y, prob.Y)
    with pytest.raises(ValueError, match="rows"):
        make_problem(prob.kernel, None, prob.train, targets=scores[:7])


@pytest.mark.parametrize("tr", [InverseLaplacian(0.8), ReciprocalPolynomial([1.0, -0.3, 0.1], 2)])
@pytest.mark.parametrize("solver", ["direct", "gmres"])
@pytest.mark.parametrize("adjoint", [False, True])
def test_algorithm2_any_right_hand_side_and_its_adjoint(tr, solver, adjoint):
    """``M theta = B`` and ``M^T lambda = B`` for a block ``B`` on every point: the direct route and GMRES
    both equal the dense solve, and ``x`` is the system's solution."""
    prob, _ = problem(2)
    B = torch.rand(N, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(5))
    M = dense_M(prob, tr, 0.1)
    ref = torch.linalg.solve(M.T if adjoint else M, B)
    res = solve(prob.with_targets(rhs=B), [tr], [0.1], solver=solver, tol=1e-13, max_iter=5000, adjoint=adjoint)
    torch.testing.assert_close(res.points[0].x, ref, atol=1e-9, rtol=1e-8)


def test_algorithm2_forward_x_is_theta():
    prob, _ = problem(3)
    tr = InverseLaplacian(0.9)
    for solver in ("direct", "gmres"):
        res = solve(prob, [tr], [0.05], solver=solver, tol=1e-13, max_iter=5000)
        ref = torch.linalg.solve(dense_M(prob, tr, 0.05), prob.scatter(prob.Y))
        torch.testing.assert_close(res.points[0].x, ref, atol=1e-9, rtol=1e-8)


def test_polynomial_x_is_alpha_and_adjoint_is_the_same_system():
    prob, _ = problem(4)
    tr = Polynomial([0.0, 1.0])   # s(l) = l^2 >= 0: the system is SPD
    S = prob.op.to_dense()
    sS = sum(c * torch.linalg.matrix_power(S, p + 1) for p, c in enumerate(tr.coeffs))
    idx = prob.train
    A = prob.N * sS[idx][:, idx] + prob.n * 0.1 * torch.eye(prob.n, dtype=torch.float64)
    for adjoint in (False, True):
        res = solve(prob, [tr], [0.1], solver="cg", tol=1e-13, max_iter=5000, adjoint=adjoint)
        torch.testing.assert_close(res.points[0].x, torch.linalg.solve(A, prob.Y), atol=1e-9, rtol=1e-8)


@pytest.mark.parametrize("solver", ["richardson", "gmres", "direct"])
def test_label_propagation_adjoint_transposes_the_operator(solver):
    """On a non-symmetric operator ``S``, ``adjoint=True`` solves ``(I - eta S^T) x = b``."""
    g = torch.Generator().manual_seed(7)
    D = torch.rand(N, N, dtype=torch.float64, generator=g) * (torch.rand(N, N, generator=g) < 0.2)
    D = D / (D.sum(1, keepdim=True) + 1.0)        # row sums < 1: spectral radius < 1
    op = SparseOperator.from_dense(D)
    B = torch.rand(N, 3, dtype=torch.float64, generator=g)
    prob = Problem(op, float(D.abs().sum(1).max()), torch.arange(N), B)
    for adjoint in (False, True):
        res = solve(prob.with_targets(rhs=B), [LabelPropagationFilter(0.9)], solver=solver, tol=1e-13,
                    max_iter=5000, adjoint=adjoint)
        A = torch.eye(N, dtype=torch.float64) - 0.9 * (D.T if adjoint else D)
        torch.testing.assert_close(res.points[0].x, torch.linalg.solve(A, B), atol=1e-9, rtol=1e-8)


def test_topd_has_no_adjoint():
    prob, _ = problem()
    with pytest.raises(ValueError, match="adjoint"):
        solve(prob, [TopD(3)], [0.1], adjoint=True)
