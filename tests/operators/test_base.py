"""Dense and sparse kernel operators (graphstk.operators.base) against dense products
(property-based), and the column blocking of wide sparse products."""
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from dense_reference import normalized, random_graph
from graphstk.operators import DenseOperator, SparseOperator
from graphstk.operators import base as OB

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


def test_column_block_width_splits_only_wide_blocks_that_fit_the_cache(monkeypatch):
    monkeypatch.setattr(OB, "WIDE_BLOCK_BYTES", 1000)
    monkeypatch.setattr(OB, "CACHE_BLOCK_BYTES", 800)
    f64 = torch.float64
    assert OB.column_block_width(torch.zeros(10, 12, dtype=f64)) == 12        # 960 bytes: one product
    assert OB.column_block_width(torch.zeros(10, 40, dtype=f64)) == 10        # 800 // (10 * 8) columns a block
    assert OB.column_block_width(torch.zeros(20, 40, dtype=f64)) == 40        # 8 columns would exceed 800 bytes
    assert OB.column_block_width(torch.zeros(10, 40, dtype=f64, device="meta")) == 40   # not on CPU: whole


def test_blocked_sparse_product_equals_the_dense_product(monkeypatch):
    """A wide right-hand side multiplied in column blocks (forced small here) gives the dense
    product and the one-call sparse product, up to the rounding of a different summation order."""
    W, _, _ = random_graph(30, 0.2, 4)
    S = normalized(W)
    op = SparseOperator.from_dense(S)
    x = torch.randn(30, 37, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    whole = op @ x
    monkeypatch.setattr(OB, "WIDE_BLOCK_BYTES", 0)
    monkeypatch.setattr(OB, "CACHE_BLOCK_BYTES", 30 * 8 * 8)   # 8 columns a block: 5 blocks, the last of 5
    assert OB.column_block_width(x) == 8
    blocked = op @ x
    assert torch.allclose(blocked, S @ x, atol=1e-13, rtol=0)
    # every entry is a sum of at most 30 products of numbers below 10: a lost or repeated block
    # changes entries by O(1), a different summation order by a few units of 1e-16
    torch.testing.assert_close(blocked, whole, rtol=0, atol=1e-13)
