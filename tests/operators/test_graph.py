"""Graph kernels (graphstk.operators.graph) against dense references (property-based), and
the checks on edge lists."""
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from dense_reference import normalized, random_graph, visible_kernel
from graphstk.operators import GraphKernel, normalized_adjacency, random_walk_kernel
from graphstk.spectral import power_iteration

graphs = st.tuples(st.integers(2, 25), st.floats(0.05, 0.6), st.integers(0, 10_000))


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


@pytest.mark.parametrize("chunk", [3, 1 << 22])
def test_symmetry_probe_agrees_with_the_dense_matrix(chunk):
    """``_symmetric`` (two seeded probes, chunked index-adds) against ``W == W^T`` formed densely:
    structural and weight-only asymmetry, duplicates that cancel an asymmetry, an empty graph."""
    from graphstk.operators import graph as G

    def dense_symmetric(r, c, w, n):
        W = torch.zeros(n, n, dtype=torch.float64).index_put_((r, c), w.double(), accumulate=True)
        return bool(torch.allclose(W, W.T, rtol=0, atol=1e-12))

    gen = torch.Generator().manual_seed(0)
    e = torch.randint(0, 30, (2, 80), generator=gen)
    sym_r, sym_c = torch.cat([e[0], e[1]]), torch.cat([e[1], e[0]])
    sym_w = torch.rand(80, generator=gen, dtype=torch.float64).repeat(2)
    cases = [
        (sym_r, sym_c, sym_w),                                          # symmetric, weighted
        (sym_r[:-1], sym_c[:-1], sym_w[:-1]),                           # one reverse edge missing
        (sym_r, sym_c, torch.cat([sym_w[:80], sym_w[80:] * 1.001])),    # same edges, other weights
        (torch.tensor([0, 1, 1]), torch.tensor([1, 0, 0]), torch.tensor([2.0, 1.0, 1.0])),  # duplicates summed: symmetric
        (torch.tensor([0, 1]), torch.tensor([1, 2]), torch.ones(2)),   # a path one way
        (torch.zeros(0, dtype=torch.long), torch.zeros(0, dtype=torch.long), torch.zeros(0)),
    ]
    got = [G._symmetric(r, c, w, 30, chunk=chunk) for r, c, w in cases]
    assert got == [dense_symmetric(r, c, w, 30) for r, c, w in cases] == [True, False, False, True, False, True]




def test_symmetric_normalization_is_the_one_normalisation():
    """``D^-1/2 W D^-1/2`` entries with zero factors for isolated nodes, differentiable in the weights;
    the normalized adjacency and the graph kernel use it."""
    from torch.autograd import gradcheck

    from graphstk.operators.graph import normalized_adjacency, symmetric_normalization
    ei = torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])          # node 3 is isolated
    w = torch.tensor([1.0, 1.0, 2.0, 2.0], dtype=torch.float64)
    vals, deg, dis = symmetric_normalization(ei[0], ei[1], w, 4)
    torch.testing.assert_close(deg, torch.tensor([1.0, 3.0, 2.0, 0.0], dtype=torch.float64))
    assert float(dis[3]) == 0.0 and torch.isfinite(vals).all()
    torch.testing.assert_close(vals, w / (deg[ei[0]] * deg[ei[1]]).sqrt())
    torch.testing.assert_close(normalized_adjacency(ei, 4, w).coo()[2], vals)
    assert gradcheck(lambda v: symmetric_normalization(ei[0], ei[1], v, 4)[0], (w.clone().requires_grad_(),))
