"""Graph x feature kernels (graphstk.operators.composed) against dense computations written from Eq. 5 and Eq. 23."""
from __future__ import annotations

import math

import pytest
import torch

from graphstk.operators import FeatureKernelOperator, GraphKernel
from graphstk.operators.composed import (FilteredFeatureKernel, GraphFilter, SandwichKernel, extended_adjacency,
                                         hadamard_kernel, lazy_coefficients)
from tests.dense_reference import random_graph


def dense_pieces(W: torch.Tensor, hidden: list[int]):
    """S over visible nodes (visible degrees, Eq. 23) and the out-of-sample rows r(x) of hidden ones."""
    n = W.shape[0]
    vis = [i for i in range(n) if i not in hidden]
    Wv = W[vis][:, vis]
    d = Wv.sum(1)
    dis = torch.where(d > 0, d.rsqrt(), torch.zeros_like(d))
    S = dis[:, None] * Wv * dis[None, :]
    R = torch.zeros(len(hidden), len(vis), dtype=W.dtype)
    for a, x in enumerate(hidden):
        w = W[x, vis]
        dx = w.sum()
        if dx > 0:
            R[a] = w / torch.sqrt(dx) * dis
    return vis, S, R


def dense_filter(W, hidden, coeffs):
    """P = sum_p pi_p S_hat^p written entry by entry: visible block s(S), hidden rows pi_0 e_x + sum pi_p r(x) S^{p-1}."""
    n = W.shape[0]
    vis, S, R = dense_pieces(W, hidden)
    P = torch.zeros(n, n, dtype=W.dtype)
    sS = sum(c * torch.linalg.matrix_power(S, p) for p, c in enumerate(coeffs))
    P[torch.tensor(vis)[:, None], torch.tensor(vis)[None, :]] = sS
    for a, x in enumerate(hidden):
        P[x, x] = coeffs[0]
        row = sum(c * (R[a] @ torch.linalg.matrix_power(S, p - 1)) for p, c in enumerate(coeffs) if p >= 1)
        P[x, torch.tensor(vis)] = row
    return P


@pytest.mark.parametrize("depth,a", [(0, 0.5), (1, 0.3), (5, 0.5), (4, 1.0)])
def test_lazy_coefficients_expand_the_lazy_walk(depth, a):
    c = lazy_coefficients(depth, a)
    for lam in (-1.0, -0.3, 0.0, 0.4, 1.0):
        assert math.isclose(sum(ci * lam ** p for p, ci in enumerate(c)), ((1 - a) + a * lam) ** depth, abs_tol=1e-12)


def test_lazy_coefficients_bad_input():
    with pytest.raises(ValueError, match="depth"):
        lazy_coefficients(-1)
    with pytest.raises(ValueError, match="a must"):
        lazy_coefficients(3, 0.0)


@pytest.mark.parametrize("hidden", [[], [2, 7], [0, 5, 11]])
def test_graph_filter_matches_dense(hidden):
    W, ei, _ = random_graph(14, 0.3, seed=3)
    g = GraphKernel(ei, 14, hidden=torch.tensor(hidden, dtype=torch.long) if hidden else None)
    coeffs = lazy_coefficients(4, 0.6)
    P = GraphFilter(g, coeffs)
    ref = dense_filter(W, hidden, coeffs)
    torch.testing.assert_close(P.to_dense(), ref, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(P.T.to_dense(), ref.T, rtol=1e-10, atol=1e-12)
    x = torch.randn(14, 3, dtype=torch.float64)
    torch.testing.assert_close(P @ x, ref @ x, rtol=1e-10, atol=1e-12)
    rows, cols = torch.tensor([1, 4, 7]), torch.tensor([0, 7, 3, 9])
    torch.testing.assert_close(P.block(rows, cols).to_dense(), ref[rows][:, cols], rtol=1e-10, atol=1e-12)
    if not hidden:
        torch.testing.assert_close(ref, ref.T)          # s(S) is symmetric without hidden nodes


def test_extended_adjacency_hidden_columns_zero_and_rows_out_of_sample():
    W, ei, _ = random_graph(10, 0.4, seed=1)
    g = GraphKernel(ei, 10, hidden=torch.tensor([3, 8]))
    A = extended_adjacency(g).to_dense()
    assert torch.all(A[:, [3, 8]] == 0)
    vis, S, R = dense_pieces(W, [3, 8])
    torch.testing.assert_close(A[3][vis], R[0])
    torch.testing.assert_close(A[torch.tensor(vis)][:, torch.tensor(vis)], S)


@pytest.mark.parametrize("kernel,sigma,unit", [("gaussian", 0.7, True), ("linear", None, True), ("linear", None, False)])
def test_filtered_feature_kernel_matches_dense(kernel, sigma, unit):
    W, ei, _ = random_graph(12, 0.35, seed=5)
    X = torch.rand(12, 4, dtype=torch.float64)
    P = GraphFilter(GraphKernel(ei, 12, hidden=torch.tensor([4])), lazy_coefficients(3, 0.5))
    K = FilteredFeatureKernel(P, X, kernel=kernel, sigma=sigma, unit=unit)
    phi = dense_filter(W, [4], lazy_coefficients(3, 0.5)) @ X
    if unit:
        phi = phi / phi.norm(dim=1, keepdim=True)
    if kernel == "gaussian":
        ref = torch.exp(-torch.cdist(phi, phi) ** 2 / (2 * sigma ** 2))
    else:
        ref = phi @ phi.T
    torch.testing.assert_close(K.to_dense(), ref, rtol=1e-9, atol=1e-12)
    v = torch.randn(12, 2, dtype=torch.float64)
    torch.testing.assert_close(K @ v, ref @ v, rtol=1e-9, atol=1e-12)
    torch.testing.assert_close(K.diagonal(), torch.diagonal(ref), rtol=1e-9, atol=1e-12)


def test_sandwich_kernel_matches_dense_and_linear_case_is_filtered_features():
    W, ei, _ = random_graph(11, 0.4, seed=7)
    X = torch.rand(11, 5, dtype=torch.float64)
    coeffs = lazy_coefficients(3, 0.5)
    P = GraphFilter(GraphKernel(ei, 11), coeffs)
    Pd = dense_filter(W, [], coeffs)
    KX = FeatureKernelOperator(X, kernel="gaussian", sigma=0.8)
    G = SandwichKernel(P, KX)
    ref = Pd @ KX.to_dense() @ Pd.T
    torch.testing.assert_close(G.to_dense(), ref, rtol=1e-9, atol=1e-12)
    torch.testing.assert_close(G.block(torch.tensor([0, 3]), torch.tensor([5, 1, 2])).to_dense(),
                               ref[[0, 3]][:, [5, 1, 2]], rtol=1e-9, atol=1e-12)
    assert torch.linalg.eigvalsh(ref).min() > -1e-10                  # PSD: P K_X P^T with K_X PSD
    lin = SandwichKernel(P, FeatureKernelOperator(X, kernel="linear"))
    torch.testing.assert_close(lin.to_dense(), FilteredFeatureKernel(P, X, "linear", unit=False).to_dense(),
                               rtol=1e-9, atol=1e-12)


@pytest.mark.filterwarnings("ignore:edge_index has")
def test_hadamard_kernel_matches_dense_product_and_is_psd():
    W, ei, _ = random_graph(10, 0.4, seed=2, psd=True)
    g = GraphKernel(ei, 10, edge_weight=W[ei[0], ei[1]])
    X = torch.rand(10, 3, dtype=torch.float64)
    H = hadamard_kernel(g.S, X, "gaussian", sigma=0.5)
    ref = g.S.to_dense() * torch.exp(-torch.cdist(X, X) ** 2 / (2 * 0.25))
    torch.testing.assert_close(H.to_dense(), ref, rtol=1e-10, atol=1e-12)
    assert torch.linalg.eigvalsh(ref).min() > -1e-10


def test_bad_input_is_named():
    W, ei, _ = random_graph(6, 0.5, seed=0)
    g = GraphKernel(ei, 6)
    with pytest.raises(TypeError, match="GraphKernel"):
        extended_adjacency("graph")
    with pytest.raises(ValueError, match="coeffs"):
        GraphFilter(g, [])
    with pytest.raises(ValueError, match="num_nodes"):
        FilteredFeatureKernel(GraphFilter(g, [0.5, 0.5]), torch.rand(5, 2, dtype=torch.float64))
