"""The operator interface (graphstk.operators.base): every default of KernelOperator against the
dense matrix, the graph kernel of Eq. 23 as an operator, dense and sparse operators against dense
products (property-based), and the column blocking of wide sparse products."""
from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from dense_reference import normalized, random_graph
from graphstk.operators import DenseOperator, GraphKernel, KernelOperator, SparseOperator
from graphstk.operators import base as OB
from graphstk.operators.base import DENSE_EIG_MAX, _lanczos_bound


class MatmulOnly(KernelOperator):
    """The smallest operator: shape, dtype, device and _matmul (every other member is a default)."""

    def __init__(self, a: torch.Tensor):
        self.a = a

    shape = property(lambda self: tuple(self.a.shape))
    dtype = property(lambda self: self.a.dtype)
    device = property(lambda self: self.a.device)

    def _matmul(self, x):
        return self.a @ x


def _random(n=37, m=29, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, m, generator=g, dtype=torch.float64)


def test_defaults_equal_the_dense_matrix():
    a = _random()
    op = MatmulOnly(a)
    torch.testing.assert_close(op.to_dense(), a)
    torch.testing.assert_close(op.diagonal(), torch.diagonal(a))
    torch.testing.assert_close(op.T.to_dense(), a.T)
    torch.testing.assert_close(op.T @ torch.ones(37, dtype=torch.float64), a.T @ torch.ones(37, dtype=torch.float64))
    rows, cols = torch.tensor([5, 0, 36, 5]), torch.zeros(29, dtype=torch.bool)
    cols[[1, 3, 28]] = True
    blk = op.block(rows, cols)
    assert blk.shape == (4, 3)
    torch.testing.assert_close(blk.to_dense(), a[rows][:, cols])
    x = _random(3, 4, seed=1)
    torch.testing.assert_close(blk @ x, a[rows][:, cols] @ x)
    torch.testing.assert_close(blk.T @ _random(4, 2, seed=2), (a[rows][:, cols]).T @ _random(4, 2, seed=2))
    torch.testing.assert_close(op.scale(-2.5).to_dense(), -2.5 * a)
    torch.testing.assert_close(op.scale(2.0).block(rows, None).to_dense(), 2.0 * a[rows])
    moved = op.to(dtype=torch.float32)
    assert moved.dtype == torch.float32 and isinstance(moved, DenseOperator)
    torch.testing.assert_close(moved.to_dense(), a.float())


def test_spectral_bound_exact_and_lanczos():
    b = _random(60, 60)
    sym = (b + b.T) / 2
    exact = float(torch.linalg.eigvalsh(sym).abs().max())
    assert MatmulOnly(sym).spectral_bound() == pytest.approx(exact, rel=1e-12)
    # the Lanczos bound is an upper bound, close to the true value
    est = _lanczos_bound(MatmulOnly(sym), steps=60)
    assert exact - 1e-9 <= est <= exact * 1.01
    assert MatmulOnly(sym).scale(-3.0).spectral_bound() == pytest.approx(3 * exact, rel=1e-12)
    assert DENSE_EIG_MAX >= 60


def test_graph_kernel_is_the_eq23_operator():
    g = torch.Generator().manual_seed(3)
    n = 12
    W = (torch.rand(n, n, generator=g) < 0.35).double()
    W = torch.triu(W, 1)
    W = W + W.T
    ei = W.nonzero().T
    hidden = torch.tensor([2, 7])
    K = GraphKernel(ei, n, hidden=hidden)
    vis = torch.tensor([i for i in range(n) if i not in (2, 7)])
    Wv = W[vis][:, vis]
    d = Wv.sum(1)
    dis = torch.where(d > 0, d.rsqrt(), torch.zeros_like(d))
    N = vis.numel()
    ref = torch.zeros(n, n, dtype=torch.float64)
    ref[vis.unsqueeze(1), vis] = N * dis[:, None] * Wv * dis[None, :]           # Eq. 23 on visible nodes
    for h in hidden.tolist():                                                   # out-of-sample rows
        wh = W[h, vis]
        dh = wh.sum()
        if dh > 0:
            ref[h, vis] = N * wh / torch.sqrt(dh * torch.where(d > 0, d, torch.ones_like(d))) * (d > 0)
    assert isinstance(K, KernelOperator) and K.shape == (n, n)
    torch.testing.assert_close(K.to_dense(), ref)
    x = _random(n, 3, seed=4)
    torch.testing.assert_close(K @ x, ref @ x)
    S, lam = K.normalized_gram(K.visible)
    torch.testing.assert_close(S.to_dense(), ref[vis][:, vis] / N)
    assert lam == 1.0
    torch.testing.assert_close(K.normalized_rows(torch.tensor([7, 0]), K.visible).to_dense(),
                               ref[[7, 0]][:, vis] / N)
    torch.testing.assert_close(K.block([7, 0], [1, 3]).to_dense(), ref[[7, 0]][:, [1, 3]])
    with pytest.raises(ValueError, match="visible nodes differ"):
        K.normalized_gram(torch.arange(n))
    K32 = K.to(dtype=torch.float32)
    assert isinstance(K32, GraphKernel) and K32.dtype == torch.float32
    torch.testing.assert_close(K32.to_dense(), ref.float())


def test_sparse_and_dense_operators_agree_with_the_defaults():
    a = _random(20, 20)
    a[a.abs() < 1] = 0
    sp_op, de_op, mm = SparseOperator.from_dense(a), DenseOperator(a), MatmulOnly(a)
    r, c = torch.tensor([3, 1, 19]), torch.tensor([0, 19, 4, 4])
    for op in (sp_op, de_op):
        torch.testing.assert_close(op.block(r, c).to_dense(), mm.block(r, c).to_dense())
        torch.testing.assert_close(op.diagonal(), mm.diagonal())
        torch.testing.assert_close(op.T.to_dense(), mm.T.to_dense())


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


def test_blockwise_columns_gives_the_numbers_of_one_product(monkeypatch):
    """Column blocks (forced to 8 columns: 5 blocks, the last of 5) give one product's numbers bit for bit, each
    block handed to the product as a contiguous ``[n, width]`` tensor, every column once."""
    W, _, _ = random_graph(30, 0.2, 4)
    S = normalized(W).to_sparse_csr()
    x = torch.randn(30, 37, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    monkeypatch.setattr(OB, "WIDE_BLOCK_BYTES", 0)
    monkeypatch.setattr(OB, "CACHE_BLOCK_BYTES", 30 * 8 * 8)
    widths = []

    def product(b):
        assert b.is_contiguous()
        widths.append(b.shape[1])
        return torch.sparse.mm(S, b)
    assert torch.equal(OB.blockwise_columns(product, x), torch.sparse.mm(S, x))
    assert widths == [8, 8, 8, 8, 5]


def test_blockwise_columns_carries_a_block_through_every_step_of_a_filter(monkeypatch):
    """A map of several products read at several depths (``[(k, S^k x)]``) goes through once per block, its
    products on that block alone, and gives one call's list bit for bit: the keys in order, a tensor per key."""
    W, _, _ = random_graph(30, 0.2, 4)
    S = normalized(W).to_sparse_csr()
    x = torch.randn(30, 21, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    calls = []

    def powers(b):
        calls.append(b.shape[1])
        out, z = [], b
        for k in (1, 2, 3):
            z = torch.sparse.mm(S, z)
            out.append((k, z))
        return out
    whole = powers(x)
    monkeypatch.setattr(OB, "WIDE_BLOCK_BYTES", 0)
    monkeypatch.setattr(OB, "CACHE_BLOCK_BYTES", 30 * 8 * 8)
    calls.clear()
    blocked = OB.blockwise_columns(powers, x)
    assert calls == [8, 8, 5]
    assert [k for k, _ in blocked] == [1, 2, 3]
    for (_, a), (_, b) in zip(whole, blocked):
        assert torch.equal(a, b)


@pytest.mark.parametrize("shape", [(7, 5), (5, 7), (1, 1)])
def test_csr_from_triplets_sums_duplicates_like_the_dense_matrix(shape):
    """The CSR form (one key sort, duplicates summed) against the dense matrix accumulated entry
    by entry; its triplets back in row-major order; gradients in the values by gradcheck."""
    from torch.autograd import gradcheck

    from graphstk.operators.base import csr_from_triplets
    g = torch.Generator().manual_seed(0)
    m = 4 * shape[0] * shape[1]
    r, c = torch.randint(0, shape[0], (m,), generator=g), torch.randint(0, shape[1], (m,), generator=g)
    v = torch.rand(m, dtype=torch.float64, generator=g)
    dense = torch.zeros(shape, dtype=torch.float64).index_put_((r, c), v, accumulate=True)
    csr = csr_from_triplets(r, c, v, shape)
    assert torch.equal(csr.crow_indices(), torch.cat([torch.zeros(1, dtype=torch.long),
                                                      (dense != 0).sum(1).cumsum(0)]))
    assert torch.allclose(csr.to_dense(), dense)
    op = SparseOperator(r, c, v, shape)
    rr, cc, vv = op.coo()
    assert torch.equal(rr * shape[1] + cc, (dense != 0).flatten().nonzero().flatten())   # row-major, unique
    assert torch.allclose(vv, dense[rr, cc])
    x = torch.rand(shape[1], 3, dtype=torch.float64, generator=g)
    assert gradcheck(lambda val: torch.sparse.mm(csr_from_triplets(r, c, val, shape), x), (v.clone().requires_grad_(),))
    empty = csr_from_triplets(r[:0], c[:0], v[:0], shape)
    assert torch.equal(empty.to_dense(), torch.zeros(shape, dtype=torch.float64))
