"""Feature kernels (graphstk.operators.feature) against independent numpy/scipy references."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st
from scipy.spatial.distance import cdist, pdist

from graphstk.operators import FeatureKernelOperator, GraphKernel, KernelOperator, gram, kernel_function, knn_graph
from graphstk.operators.feature import kth_neighbor_distance_median, median_distance, pairwise_distances

KERNELS = ["gaussian", "laplacian", "abel", "cauchy", "linear", "polynomial"]


def ref_kernel(name, X, Y, sigma=0.7, degree=2, c=1.0):
    """Each formula written out independently with scipy / numpy."""
    if name == "gaussian":
        return np.exp(-cdist(X, Y, "sqeuclidean") / (2 * sigma**2))
    if name == "laplacian":
        return np.exp(-cdist(X, Y, "cityblock") / sigma)
    if name == "abel":
        return np.exp(-cdist(X, Y, "euclidean") / sigma)
    if name == "cauchy":
        out = np.ones((len(X), len(Y)))
        for m in range(X.shape[1]):
            out *= 1.0 / (1.0 + (X[:, m][:, None] - Y[:, m][None, :]) ** 2 / sigma**2)
        return out
    if name == "linear":
        return X @ Y.T
    if name == "polynomial":
        return (X @ Y.T + c) ** degree
    raise KeyError(name)


def params(name, sigma=0.7):
    return {"sigma": sigma} if name in ("gaussian", "laplacian", "abel", "cauchy") else {}


def ref_normalized(name, X, Y, **kw):
    K = ref_kernel(name, X, Y, **kw)
    dx = np.array([ref_kernel(name, x[None], x[None], **kw)[0, 0] for x in X])
    dy = np.array([ref_kernel(name, y[None], y[None], **kw)[0, 0] for y in Y])
    return K / np.sqrt(np.outer(dx, dy))


@pytest.mark.parametrize("name", KERNELS)
def test_kernel_matches_formula(name):
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(13, 4)), rng.normal(size=(9, 4))
    k = kernel_function(name, **params(name))
    K = k(X, Y)
    assert isinstance(K, torch.Tensor) and K.dtype == torch.float64 and K.shape == (13, 9)
    np.testing.assert_allclose(K.numpy(), ref_kernel(name, X, Y), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gram(X, Y, kernel=name, **params(name)).numpy(), ref_kernel(name, X, Y),
                               rtol=1e-10, atol=1e-12)
    # paired and diagonal evaluations
    np.testing.assert_allclose(k.paired(X[:9], Y).numpy(), np.diag(ref_kernel(name, X[:9], Y)), rtol=1e-10)
    np.testing.assert_allclose(k.diag(X).numpy(), np.diag(ref_kernel(name, X, X)), rtol=1e-10)


def test_kernel_aliases_and_polynomial_params():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(6, 3))
    assert torch.equal(kernel_function("rbf", sigma=2.0)(X), kernel_function("gaussian", sigma=2.0)(X))
    np.testing.assert_allclose(kernel_function("poly", degree=3, c=0.5)(X).numpy(),
                               ref_kernel("polynomial", X, X, degree=3, c=0.5), rtol=1e-12)
    # l1 Laplacian is a product of 1-D kernels
    k = kernel_function("laplacian", sigma=0.9)
    prod = np.ones((6, 6))
    for m in range(3):
        prod *= k(X[:, m:m + 1]).numpy()
    np.testing.assert_allclose(k(X).numpy(), prod, rtol=1e-12)


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


def test_bad_inputs_raise_clear_errors():
    X = np.zeros((4, 3))
    with pytest.raises(ValueError, match="dimension mismatch"):
        FeatureKernelOperator(X, np.zeros((5, 2)))
    with pytest.raises(ValueError, match="dimension mismatch"):
        gram(X, np.zeros((5, 2)))
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="sigma"):
            kernel_function("gaussian", sigma=bad)
    with pytest.raises(ValueError, match="unknown kernel"):
        FeatureKernelOperator(X, kernel="sigmoid")
    with pytest.raises(TypeError, match="unexpected parameter"):
        kernel_function("linear", sigma=1.0)
    with pytest.raises(ValueError, match="degree"):
        kernel_function("polynomial", degree=1.5)
    with pytest.raises(ValueError, match="2-D"):
        gram(np.zeros(5))
    with pytest.raises(ValueError, match="NaN"):
        gram(np.array([[np.nan, 0.0]]))
    with pytest.raises(ValueError, match="block_size"):
        FeatureKernelOperator(X, block_size=0)
    with pytest.raises(IndexError):
        FeatureKernelOperator(X).block([7], None)
    with pytest.raises(ValueError, match="cannot multiply"):
        FeatureKernelOperator(X) @ torch.ones(3, dtype=torch.float64)


# -- kNN graphs ------------------------------------------------------------------
def brute_knn(X, k, metric):
    D = cdist(X, X, {"euclidean": "euclidean", "manhattan": "cityblock", "cosine": "cosine"}[metric])
    np.fill_diagonal(D, np.inf)
    nbr = np.argsort(D, axis=1, kind="stable")[:, :k]
    return D, nbr


@pytest.mark.parametrize("metric", ["euclidean", "manhattan", "cosine"])
@pytest.mark.parametrize("mode", ["connectivity", "distance", "gaussian"])
def test_knn_graph_matches_brute_force(metric, mode):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 3))
    k = 4
    D, nbr = brute_knn(X, k, metric)
    sigma = 0.8
    weight = {"connectivity": lambda d: 1.0, "distance": lambda d: d,
              "gaussian": lambda d: np.exp(-d**2 / (2 * sigma**2))}[mode]
    expected = {}
    for i in range(40):
        for j in nbr[i]:
            expected[(i, int(j))] = weight(D[i, j])
            expected[(int(j), i)] = weight(D[i, j])
    ei, w = knn_graph(X, k, metric=metric, mode=mode, sigma=sigma, block_size=7)
    got = {(int(a), int(b)): float(c) for a, b, c in zip(ei[0], ei[1], w)}
    assert got.keys() == expected.keys()
    for key, val in expected.items():
        assert got[key] == pytest.approx(val, rel=1e-9, abs=1e-12)
    # symmetric: (i, j) present iff (j, i), equal weights; no self loops
    assert all(got[(b, a)] == c for (a, b), c in got.items())
    assert not any(a == b for a, b in got)
    # directed variant: exactly the k nearest per row, in increasing distance
    ei_d, w_d = knn_graph(X, k, metric=metric, mode="distance", symmetric=False)
    assert ei_d.shape == (2, 40 * k)
    np.testing.assert_array_equal(ei_d[0].numpy(), np.repeat(np.arange(40), k))
    np.testing.assert_array_equal(ei_d[1].view(40, k).numpy(), nbr)
    np.testing.assert_allclose(w_d.view(40, k).numpy(), np.take_along_axis(D, nbr, 1), rtol=1e-9, atol=1e-12)


def test_knn_graph_default_sigma_and_graph_kernel():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(30, 2))
    D, nbr = brute_knn(X, 3, "euclidean")
    s = np.median(np.take_along_axis(D, nbr, 1))
    ei, w = knn_graph(X, 3, mode="gaussian")
    ei2, w2 = knn_graph(X, 3, mode="gaussian", sigma=s)
    assert torch.equal(ei, ei2)
    torch.testing.assert_close(w, w2)
    gk = GraphKernel(ei, 30, edge_weight=w)
    assert gk.S.shape == (30, 30)
    S = gk.S.to_dense()
    torch.testing.assert_close(S, S.T)


def test_knn_graph_errors():
    X = np.random.default_rng(7).normal(size=(5, 2))
    with pytest.raises(ValueError, match="at least"):
        knn_graph(X, 5)
    with pytest.raises(ValueError, match="positive integer"):
        knn_graph(X, 0)
    with pytest.raises(ValueError, match="metric"):
        knn_graph(X, 2, metric="chebyshev")
    with pytest.raises(ValueError, match="mode"):
        knn_graph(X, 2, mode="heat")
    with pytest.raises(ValueError, match="sigma"):
        knn_graph(X, 2, mode="gaussian", sigma=-1.0)


# -- bandwidth heuristics -----------------------------------------------------------
def test_median_distance_and_kth_neighbor():
    rng = np.random.default_rng(8)
    X, Y = rng.normal(size=(31, 3)), rng.normal(size=(12, 3)) + 1.0
    assert median_distance(X) == pytest.approx(np.median(pdist(X)), rel=1e-12)
    assert median_distance(X, Y) == pytest.approx(np.median(cdist(X, Y)), rel=1e-12)
    # subsampling is seeded and uses a subset of the rows
    a = median_distance(X, max_samples=10, seed=3)
    assert a == median_distance(X, max_samples=10, seed=3)
    sub = X[torch.randperm(31, generator=torch.Generator().manual_seed(3))[:10].numpy()]
    assert a == pytest.approx(np.median(pdist(sub)), rel=1e-12)
    D, nbr = brute_knn(X, 10, "euclidean")
    assert kth_neighbor_distance_median(X, 10, block_size=4) == pytest.approx(np.median(D[np.arange(31), nbr[:, 9]]))
    with pytest.raises(ValueError, match="at least 2"):
        median_distance(X[:1])
    np.testing.assert_allclose(pairwise_distances(X, Y, "manhattan").numpy(), cdist(X, Y, "cityblock"), rtol=1e-12)
