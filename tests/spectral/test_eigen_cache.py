"""Eigenpairs computed once per operator: the run's EigenCache, and kernel PCA (STKR Eq. 8) through it."""
import torch

from dense_reference import labeled_graph, normalized_random_graph
from graphstk.methods import STKRCV
from graphstk.operators import GraphKernel, SparseOperator
from graphstk.spectral import EigenCache, TopD, operator_fingerprint, top_eigenpairs


def test_cache_answers_the_same_operator_and_k_once():
    S = normalized_random_graph(120, 0.08, seed=1)
    cache = EigenCache()
    a, b = SparseOperator.from_dense(S), SparseOperator.from_dense(S.clone())
    v1 = cache.top_eigenpairs(a, 10)
    v2 = cache.top_eigenpairs(b, 10)          # another object, the same entries: a hit
    assert cache.computed == 1 and cache.hits == 1
    assert v1[0] is v2[0]
    ref = top_eigenpairs(a, 10)
    assert torch.equal(v1[0], ref[0]) and torch.equal(v1[1], ref[1])
    cache.top_eigenpairs(a, 12)               # another k: computed
    S2 = S.clone()
    S2[0, 1] = S2[1, 0] = S2[0, 1] + 1e-3      # another operator: computed
    cache.top_eigenpairs(SparseOperator.from_dense(S2), 10)
    assert cache.computed == 3 and cache.hits == 1


def test_fingerprint_separates_dtype_and_entries():
    S = normalized_random_graph(50, 0.1, seed=2)
    a = SparseOperator.from_dense(S)
    assert operator_fingerprint(a) == operator_fingerprint(SparseOperator.from_dense(S.clone()))
    assert operator_fingerprint(a) != operator_fingerprint(SparseOperator.from_dense(S.float()))
    assert operator_fingerprint(a) != operator_fingerprint(SparseOperator.from_dense(2 * S))


def test_cache_drops_the_oldest_entry():
    cache = EigenCache(size=2)
    ops = [SparseOperator.from_dense(normalized_random_graph(40, 0.2, seed=s)) for s in range(3)]
    for op in ops:
        cache.top_eigenpairs(op, 3)
    assert len(cache) == 2
    cache.top_eigenpairs(ops[0], 3)
    assert cache.computed == 4


def test_topd_scores_through_the_cache_equal_those_without_and_reuse_the_eigenpairs():
    data, _, _ = labeled_graph(seed=3, n=80)
    K = GraphKernel(data.edge_index, int(data.num_nodes), dtype=torch.float64)
    train = torch.arange(0, 80, 4)
    ev = torch.arange(1, 80, 4)
    est = STKRCV([TopD(4, support="all"), TopD(8, support="all")], [1e-2, 1.0])
    plain = est.grid_scores(K, train, ev, y=data.y)
    cache = EigenCache()
    first = est.grid_scores(K, train, ev, y=data.y, eigen_cache=cache)
    second = est.grid_scores(K, train, ev, y=data.y, eigen_cache=cache)
    assert cache.computed == 1 and cache.hits == 1
    for (p0, s0), (_, s1), (_, s2) in zip(plain, first, second):
        assert torch.equal(s0, s1) and torch.equal(s0, s2)
    # other labeled nodes: another S_UU, computed again
    est.grid_scores(K, torch.arange(2, 80, 4), ev, y=data.y, eigen_cache=cache)
    assert cache.computed == 2
    assert est.solver_ == "kernel PCA + ridge probe (Eqs. 8-9)"
