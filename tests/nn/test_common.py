"""The graph kernel of the graphstk.nn modules (GraphKernel.from_edges through nn's AdjacencyKernelCache): PyG's reading
of every adjacency form, the cache, the symmetry check."""
from __future__ import annotations

import pytest
import torch
import torch_geometric.typing
from nn_graphs import random_graph
from torch_geometric.nn.conv.gcn_conv import gcn_norm

from graphstk.methods.problem import make_problem
from graphstk.nn._common import AdjacencyKernelCache
from graphstk.operators import KernelOperator


def build_operator(adj, num_nodes, edge_weight=None, dtype=torch.float32, normalize=None):
    """A fresh cache's kernel of ``adj``: its ``S`` is the propagation matrix ``P``."""
    return AdjacencyKernelCache().get(adj, num_nodes, edge_weight, dtype, normalize)


def P(adj, *args, **kw):
    return build_operator(adj, *args, **kw).S.to_dense()


def dense(ei, n, w):
    return torch.zeros(n, n, dtype=w.dtype).index_put_((ei[1], ei[0]), w, accumulate=True)


def test_edge_index_is_gcn_normed_without_weights_and_as_given_with_them():
    g = torch.Generator().manual_seed(0)
    ei = torch.randint(0, 15, (2, 50), generator=g)
    ref_ei, ref_w = gcn_norm(ei, None, 15, add_self_loops=False)
    torch.testing.assert_close(P(ei, 15), dense(ref_ei, 15, ref_w))
    w = torch.rand(50, generator=g)
    torch.testing.assert_close(P(ei, 15, w), dense(ei, 15, w))
    torch.testing.assert_close(P(ei, 15, w, normalize=True),
                               dense(ei, 15, gcn_norm(ei, w, 15, add_self_loops=False)[1]))


def test_sparse_forms_and_transpose():
    ei, w, _ = random_graph(2, 20)
    coo = torch.sparse_coo_tensor(ei.flip(0), w, (20, 20)).coalesce()
    a, b = build_operator(coo, 20, normalize=False), build_operator(coo.to_sparse_csr(), 20, normalize=False)
    torch.testing.assert_close(a.S.to_dense().double(), coo.to_dense())
    torch.testing.assert_close(b.S.to_dense(), a.S.to_dense())
    x = torch.rand(20, 3)
    torch.testing.assert_close(a.csr(transpose=True) @ x, a.S.to_dense().T @ x)
    with pytest.warns(UserWarning, match="edge_weight is not read"):
        build_operator(coo, 20, w)


@pytest.mark.skipif(not torch_geometric.typing.WITH_TORCH_SPARSE, reason="needs torch_sparse")
def test_sparse_tensor():
    from torch_sparse import SparseTensor
    ei, w, _ = random_graph(3, 20)
    adj = SparseTensor.from_edge_index(ei, sparse_sizes=(20, 20)).t()
    torch.testing.assert_close(P(adj, 20), P(ei, 20))


def test_symmetry_check():
    ei, w, _ = random_graph(4, 20)
    assert build_operator(ei, 20, w).is_symmetric()
    w2 = w.clone()
    w2[0] += 1.0
    assert not build_operator(ei, 20, w2).is_symmetric()
    assert not build_operator(ei[:, :-1], 20).is_symmetric()


def test_cache_follows_identity_and_in_place_version():
    ei, w, _ = random_graph(5, 20)
    cache = AdjacencyKernelCache()
    op = cache.get(ei, 20, w, torch.float64, None)
    assert cache.get(ei, 20, w, torch.float64, None) is op
    assert cache.get(ei.clone(), 20, w, torch.float64, None) is not op
    op = cache.get(ei, 20, w, torch.float64, None)
    w.mul_(2.0)
    assert cache.get(ei, 20, w, torch.float64, None) is not op
    wg = w.clone().requires_grad_()
    got = cache.get(ei, 20, wg, torch.float64, None)
    assert got.edges[2] is wg and got._layout is op._layout     # weights as given, cached structure


def test_operator_is_a_kernel_operator_and_the_kernel_hands_the_engine_P():
    ei, w, _ = random_graph(6, 20)
    op = build_operator(ei, 20, w, torch.float64, normalize=True)
    assert isinstance(op, KernelOperator)
    x = torch.rand(20, 3, dtype=torch.float64)
    torch.testing.assert_close(op @ x, op.to_dense() @ x)
    torch.testing.assert_close(op.T @ x, op.to_dense().T @ x)
    torch.testing.assert_close(op.propagate(x), op.S.to_dense() @ x)
    prob = make_problem(op, None, torch.arange(5), targets=x)
    assert prob.lambda_max == 1.0                      # gcn_norm-ed and undirected: lambda_1 = 1 (Eq. 23)
    torch.testing.assert_close(prob.op.to_dense(), op.S.to_dense())
    torch.testing.assert_close(prob.Y, x[:5])
    raw = build_operator(ei, 20, w, torch.float64)     # weights as given: a row / column sum bound
    bound = make_problem(raw, None, torch.arange(5), targets=x).lambda_max
    assert bound >= float(torch.linalg.eigvals(raw.S.to_dense()).abs().max()) - 1e-12


def test_normalised_values_are_differentiable_in_the_weights():
    from torch.autograd import gradcheck
    ei, w, _ = random_graph(7, 12)
    x = torch.rand(12, 2, dtype=torch.float64)
    assert gradcheck(lambda v: build_operator(ei, 12, v, torch.float64, normalize=True).propagate(x),
                     (w.clone().requires_grad_(),))
