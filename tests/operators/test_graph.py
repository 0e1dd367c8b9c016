"""Sparse operators and graph kernels against dense references (property-based)."""
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from dense_reference import normalized, random_graph, visible_kernel
from graphstk.operators import (DenseOperator, GraphKernel, SparseOperator, normalized_adjacency,
                                random_walk_kernel)
from graphstk.spectral import power_iteration, top_eigenpairs

graphs = st.tuples(st.integers(2, 25), st.floats(0.05, 0.6), st.integers(0, 10_000))


@settings(max_examples=25, deadline=None)
@given(graphs, st.integers(1, 4), st.integers(0, 1000))
def test_sparse_operator_products_and_blocks(g, C, seed):
    n, p, s = g
    W, _, _ = random_graph(n, p, s)
    M = W * torch.rand(n, n, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    op = SparseOperator.from_dense(M)
    X = torch.randn(n, C, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    assert torch.allclose(op @ X, M @ X)
    assert torch.allclose(op @ X[:, 0], M @ X[:, 0])
    assert torch.allclose(op.T @ X, M.T @ X)
    assert torch.equal(op.diagonal(), torch.diagonal(M))
    gen = torch.Generator().manual_seed(seed + 1)
    rows = torch.randperm(n, generator=gen)[: max(1, n // 2)]
    cols = torch.randperm(n, generator=gen)[: max(1, n // 3)]
    assert torch.equal(op.block(rows, cols).to_dense(), M[rows][:, cols])
    assert torch.equal(op.block(rows, None).to_dense(), M[rows])
    dense = DenseOperator(M)
    assert torch.equal(dense.block(rows, cols).to_dense(), M[rows][:, cols])


@settings(max_examples=25, deadline=None)
@given(graphs, st.integers(0, 3))
def test_graph_kernel_matches_eq23(g, n_hidden):
    n, p, s = g
    W, ei, w = random_graph(n, p, s)
    hidden = list(range(n - min(n_hidden, n - 1), n))
    k = GraphKernel(ei, n, hidden=hidden or None, edge_weight=w)
    S, vis, rows = visible_kernel(W, hidden)
    assert torch.equal(k.visible, vis)
    assert torch.allclose(k.S.to_dense(), S)
    assert torch.allclose(k.base_kernel().to_dense(), len(vis) * S)      # Eq. 23's (n+m) factor
    assert torch.allclose(k.rows(list(range(n))).to_dense(), rows(list(range(n))))
    assert torch.isfinite(k.S.to_dense()).all()


def test_transductive_kernel_is_normalized_adjacency():
    W, ei, w = random_graph(30, 0.2, 1, isolated=2)
    k = GraphKernel(ei, 30, edge_weight=w)
    assert torch.allclose(k.S.to_dense(), normalized(W))
    assert torch.allclose(normalized_adjacency(ei, 30, w).to_dense(), normalized(W))
    assert k.isolated[-2:].all() and not k.isolated[:-2].any()
    assert (k.S.to_dense()[-2:] == 0).all()
    lam = float(torch.linalg.eigvalsh(normalized(W)).max())
    assert k.lambda_max == pytest.approx(lam, abs=1e-12)      # exactly 1 with an edge
    assert power_iteration(k.S, num_iter=500) == pytest.approx(lam, abs=1e-3)


def test_random_walk_kernel_prop5():
    W, ei, w = random_graph(25, 0.25, 2, isolated=1)
    d = W.sum(1)
    inv = torch.where(d > 0, 1 / d.clamp_min(1e-300), torch.zeros_like(d))
    ref = d.sum() * inv[:, None] * W * inv[None, :]
    assert torch.allclose(random_walk_kernel(ei, 25, w).to_dense(), ref)


def test_inductive_kernel_ignores_hidden_edges():
    W, ei, w = random_graph(20, 0.3, 4)
    hidden = [17, 18, 19]
    k = GraphKernel(ei, 20, hidden=hidden)
    assert k.num_visible == 17
    assert torch.allclose(k.degree, W[:17, :17].sum(1))        # degrees over visible nodes only
    with pytest.raises(ValueError, match="hidden"):
        k.local([18])


def test_top_eigenpairs_matches_dense_and_uses_components():
    W, ei, w = random_graph(60, 0.08, 7)
    S = normalized(W)
    op = SparseOperator.from_dense(S)
    ref = torch.linalg.eigvalsh(S).flip(0)[:10]
    for thr in (5, 3000):                                        # Lanczos path and dense path
        vals, vecs = top_eigenpairs(op, 10, dense_threshold=thr)
        assert torch.allclose(vals, ref, atol=1e-8)
        assert torch.allclose(S @ vecs, vecs * vals, atol=1e-7)
        assert torch.allclose(vecs.T @ vecs, torch.eye(10, dtype=torch.float64), atol=1e-8)


@pytest.mark.parametrize("bad, match", [
    (torch.tensor([[0, 1, 2]]), "shape"),
    (torch.tensor([[0, 5], [1, 0]]), "outside"),
    (torch.tensor([[0.0, 1.0], [1.0, 0.0]]), "integer"),
])
def test_bad_edge_index(bad, match):
    with pytest.raises((ValueError, TypeError), match=match):
        GraphKernel(bad, 3)


def test_bad_edge_weight():
    ei = torch.tensor([[0, 1], [1, 0]])
    with pytest.raises(ValueError, match="non-negative"):
        GraphKernel(ei, 2, edge_weight=torch.tensor([1.0, -1.0]))
    with pytest.raises(ValueError, match="shape"):
        GraphKernel(ei, 2, edge_weight=torch.tensor([1.0]))


def test_asymmetric_input_is_symmetrized_with_warning():
    ei = torch.tensor([[0, 1], [1, 2]])
    with pytest.warns(UserWarning, match="not symmetric"):
        k = GraphKernel(ei, 3)
    S = k.S.to_dense()
    assert torch.allclose(S, S.T)


@pytest.mark.parametrize("k", [5, 45, 90])
def test_top_eigenpairs_over_several_large_components_matches_dense(k):
    """Two Lanczos components and small dense ones: the top k of the union, for small and large k."""
    blocks = [random_graph(60, 0.1, 3)[0], random_graph(50, 0.12, 4)[0], random_graph(6, 0.6, 5)[0]]
    W = torch.block_diag(*blocks)
    S = normalized(W)
    vals, vecs = top_eigenpairs(SparseOperator.from_dense(S), k, dense_threshold=8)
    ref = torch.linalg.eigvalsh(S).flip(0)[:k]
    assert torch.allclose(vals, ref, atol=1e-8)
    assert torch.allclose(S @ vecs, vecs * vals, atol=1e-7)
    assert torch.allclose(vecs.T @ vecs, torch.eye(k, dtype=torch.float64), atol=1e-7)


def test_top_eigenpairs_skips_large_component_when_bound_is_reached():
    """Many label-free small components (eigenvalue exactly 1) fill the top k without Lanczos."""
    W, _, _ = random_graph(40, 0.3, 11)                       # one large component
    pairs = torch.zeros(40 + 20, 40 + 20, dtype=torch.float64)
    pairs[:40, :40] = W
    for i in range(40, 60, 2):                                 # ten 2-node components
        pairs[i, i + 1] = pairs[i + 1, i] = 1.0
    S = normalized(pairs)
    op = SparseOperator.from_dense(S)
    vals, vecs = top_eigenpairs(op, 5, dense_threshold=10, upper_bound=1.0)
    assert torch.allclose(vals, torch.ones(5, dtype=torch.float64))
    assert torch.allclose(S @ vecs, vecs, atol=1e-12)
    assert (vecs[:40] == 0).all()                               # none from the large component
