"""Gram matrices and the row-blocked operator (graphstk.operators.feature) against independent
numpy/scipy references."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from graphstk.exceptions import MemoryLimitError
from graphstk.operators import FeatureKernelOperator, KernelOperator, gram

from .reference import KERNELS, params, ref_kernel, ref_normalized


@pytest.mark.parametrize("name", KERNELS)
def test_normalized_unit_diagonal_and_test_points(name):
    rng = np.random.default_rng(2)
    X, T = rng.normal(size=(11, 3)), rng.normal(size=(5, 3))
    op = FeatureKernelOperator(X, kernel=name, normalize=True, block_size=4, **params(name))
    torch.testing.assert_close(op.diagonal(), torch.ones(11, dtype=torch.float64))
    torch.testing.assert_close(torch.diagonal(op.to_dense()), torch.ones(11, dtype=torch.float64))
    np.testing.assert_allclose(op.to_dense().numpy(), ref_normalized(name, X, X, **params(name)), rtol=1e-10)
    test_op = FeatureKernelOperator(T, X, kernel=name, normalize=True, **params(name))
    np.testing.assert_allclose(test_op.to_dense().numpy(), ref_normalized(name, T, X, **params(name)), rtol=1e-10)
    np.testing.assert_allclose(gram(T, X, kernel=name, normalize=True, **params(name)).numpy(),
                               ref_normalized(name, T, X, **params(name)), rtol=1e-10)


def test_normalized_zero_vector_gives_zero_row_not_nan():
    X = np.array([[0.0, 0.0], [1.0, 2.0], [3.0, -1.0]])
    K = FeatureKernelOperator(X, kernel="linear", normalize=True).to_dense()
    assert torch.isfinite(K).all()
    assert torch.all(K[0] == 0) and torch.all(K[:, 0] == 0)


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(
    name=st.sampled_from(KERNELS),
    n_rows=st.integers(1, 12), n_cols=st.integers(1, 12), d=st.integers(1, 4), C=st.integers(1, 3),
    block_size=st.integers(1, 13), normalize=st.booleans(), seed=st.integers(0, 2**16),
)


def test_operator_matches_dense_reference(name, n_rows, n_cols, d, C, block_size, normalize, seed):
    rng = np.random.default_rng(seed)
    X, Y = rng.normal(size=(n_rows, d)), rng.normal(size=(n_cols, d))
    ref = (ref_normalized if normalize else ref_kernel)(name, X, Y, **params(name))
    op = FeatureKernelOperator(X, Y, kernel=name, normalize=normalize, block_size=block_size, **params(name))
    assert isinstance(op, KernelOperator) and op.shape == (n_rows, n_cols)
    v = rng.normal(size=(n_cols, C))
    np.testing.assert_allclose((op @ torch.from_numpy(v)).numpy(), ref @ v, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose((op @ torch.from_numpy(v[:, 0])).numpy(), ref @ v[:, 0], rtol=1e-9, atol=1e-9)
    u = rng.normal(size=(n_rows, C))
    np.testing.assert_allclose((op.T @ torch.from_numpy(u)).numpy(), ref.T @ u, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(op.to_dense().numpy(), ref, rtol=1e-9, atol=1e-12)
    m = min(n_rows, n_cols)
    np.testing.assert_allclose(op.diagonal().numpy(), np.diag(ref)[:m], rtol=1e-9, atol=1e-12)
    # sub-blocks, with repeated indices and a boolean mask
    rows = rng.integers(0, n_rows, size=rng.integers(1, 6))
    mask = rng.random(n_cols) < 0.6
    sub = op.block(torch.from_numpy(rows), torch.from_numpy(mask))
    assert isinstance(sub, FeatureKernelOperator)
    np.testing.assert_allclose(sub.to_dense().numpy(), ref[rows][:, mask], rtol=1e-9, atol=1e-12)
    if mask.any():
        w = rng.normal(size=(int(mask.sum()), C))
        np.testing.assert_allclose((sub @ torch.from_numpy(w)).numpy(), ref[rows][:, mask] @ w, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(op.block(None, list(range(n_cols))[::-1]).to_dense().numpy(), ref[:, ::-1],
                               rtol=1e-9, atol=1e-12)


def test_block_size_smaller_than_n_equals_dense():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(101, 5))
    v = torch.from_numpy(rng.normal(size=(101, 4)))
    full = FeatureKernelOperator(X, kernel="abel", sigma=2.0, block_size=1000)
    for bs in (1, 7, 50, 100):
        op = FeatureKernelOperator(X, kernel="abel", sigma=2.0, block_size=bs)
        assert op.block_size == bs
        torch.testing.assert_close(op @ v, full @ v, rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(op.to_dense(), full.to_dense(), rtol=0, atol=0)
    # default block size keeps a tile of <= 4M entries
    big = FeatureKernelOperator(torch.zeros(10, 2), torch.zeros(100_000, 2))
    assert big.block_size * 100_000 <= 1 << 22


def test_dtype_device_and_numpy_inputs():
    rng = np.random.default_rng(4)
    X32 = torch.from_numpy(rng.normal(size=(8, 3)).astype(np.float32))
    op = FeatureKernelOperator(X32, kernel="gaussian", sigma=1.5)
    assert op.dtype == torch.float32 and op.device == torch.device("cpu")
    assert (op @ torch.ones(8, dtype=torch.float64)).dtype == torch.float32
    op64 = op.to(dtype=torch.float64)
    assert op64.dtype == torch.float64 and op64.to_dense().dtype == torch.float64
    torch.testing.assert_close(op64.to_dense().float(), op.to_dense(), rtol=1e-5, atol=1e-6)
    assert FeatureKernelOperator(X32, dtype=torch.float64).dtype == torch.float64
    # numpy float64, integer lists
    assert FeatureKernelOperator(rng.normal(size=(4, 2))).dtype == torch.float64
    Kint = gram([[0, 1], [2, 3]], kernel="linear")
    assert Kint.is_floating_point() and Kint.tolist() == [[1.0, 3.0], [3.0, 13.0]]


def test_operator_is_differentiable():
    X = torch.randn(6, 2, dtype=torch.float64, requires_grad=True)
    op = FeatureKernelOperator(X, kernel="gaussian", sigma=1.0, block_size=2)
    (op @ torch.ones(6, dtype=torch.float64)).sum().backward()
    assert X.grad is not None and torch.isfinite(X.grad).all()


def test_to_dense_fills_one_buffer_and_matches_gram():
    X = torch.randn(23, 3, dtype=torch.float64)
    for normalize in (False, True):
        op = FeatureKernelOperator(X, kernel="polynomial", normalize=normalize, block_size=5)
        torch.testing.assert_close(op.to_dense(), gram(X, kernel="polynomial", normalize=normalize))


def test_to_dense_and_large_blocks_refused_before_allocation(monkeypatch):
    monkeypatch.setenv("GRAPHSTK_MAX_MEMORY", "1MB")
    X = torch.zeros(1000, 3, dtype=torch.float64)
    op = FeatureKernelOperator(X, kernel="gaussian")
    with pytest.raises(MemoryLimitError, match=r"dense kernel matrix of a FeatureKernelOperator.*op @ v"):
        op.to_dense()
    v = torch.ones(1000, 2, dtype=torch.float64)
    assert (op @ v).shape == (1000, 2)                    # products go in blocks: allowed
    wide = FeatureKernelOperator(X, torch.zeros(5000, 3, dtype=torch.float64), block_size=1000)  # 5M-entry tiles
    out = wide @ torch.ones(5000, 1, dtype=torch.float64)   # the tiles shrink to fit the 1 MB: same product
    torch.testing.assert_close(out, torch.full((1000, 1), 5000.0, dtype=torch.float64))
    monkeypatch.setenv("GRAPHSTK_MAX_MEMORY", "10KB")      # one row of a tile (5000 entries) cannot fit at all
    with pytest.raises(MemoryLimitError, match=r"one row of a kernel tile \(5000 entries.*GRAPHSTK_MAX_MEMORY"):
        wide @ torch.ones(5000, 1, dtype=torch.float64)
