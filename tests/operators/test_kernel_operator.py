"""The operator interface: every default of KernelOperator against the dense matrix, and the
graph kernel of Eq. 23 as an operator."""
from __future__ import annotations

import pytest
import torch

from graphstk.operators import DenseOperator, GraphKernel, KernelOperator, SparseOperator
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
