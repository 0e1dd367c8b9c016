"""Kernel functions, input checks and dense-size checks (graphstk.operators.kernels) against
independent numpy/scipy formulas."""
import numpy as np
import pytest
import scipy.sparse as sp
import torch

from graphstk.exceptions import MemoryLimitError
from graphstk.operators import FeatureKernelOperator, gram, kernel_function
from graphstk.operators.kernels import as_features, pairwise_distances

from .reference import KERNELS, params, ref_kernel


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


# -- what to pass instead -----------------------------------------------------------
def test_sparse_input_says_what_to_pass():
    X = sp.random(30, 8, density=0.2, format="csr", random_state=0)
    with pytest.raises(TypeError, match=r"X is a scipy.sparse csr_matrix.*pass X.toarray\(\) \(dense: 1.9 KB\)"):
        gram(X)
    with pytest.raises(TypeError, match=r"pass X.toarray\(\)"):
        FeatureKernelOperator(X)
    with pytest.raises(TypeError, match=r"Y is a scipy.sparse csc_matrix.*pass Y.toarray\(\)"):
        gram(np.zeros((3, 8)), X.tocsc())
    t = torch.sparse_coo_tensor(torch.tensor([[0, 1], [1, 2]]), torch.ones(2), (3, 4), check_invariants=True)
    with pytest.raises(TypeError, match=r"sparse torch.sparse_coo tensor.*pass X.to_dense\(\)"):
        as_features(t)
    with pytest.raises(TypeError, match=r"pass X.to_dense\(\)"):
        as_features(t.to_sparse_csr())


def test_complex_and_non_numeric_input_refused():
    with pytest.raises(TypeError, match=r"complex .*pass X.real"):
        gram(np.ones((3, 2), dtype=complex))
    with pytest.raises(TypeError, match=r"X must be a 2-D tensor or array"):
        as_features(np.array([["a", "b"]], dtype=object))


def test_nonfinite_features_name_the_rows():
    X = np.zeros((6, 2))
    X[2, 1], X[4, 0] = np.nan, np.inf
    with pytest.raises(ValueError, match=r"NaN or infinite values in 2 of 6 rows \(first rows \[2, 4\]\).*impute"):
        gram(X)


# -- memory: refused before allocation ------------------------------------------------
def test_dense_evaluations_refused_before_allocation(monkeypatch):
    monkeypatch.setenv("GRAPHSTK_MAX_MEMORY", "1MB")
    X = torch.zeros(1000, 3, dtype=torch.float64)        # 1000 x 1000 float64 = 8 MB
    with pytest.raises(MemoryLimitError, match=r"the Gram matrix, 1000 x 1000 float64, needs 8.0 MB, more than "
                                               r"the 1.0 MB of GRAPHSTK_MAX_MEMORY; .*FeatureKernelOperator"):
        gram(X)
    with pytest.raises(MemoryLimitError, match=r"the kernel matrix, 1000 x 1000 float64 \(and 1 temporary"):
        kernel_function("abel")(X)
    with pytest.raises(MemoryLimitError, match="the distance matrix.*knn_graph"):
        pairwise_distances(X)
    # small enough: computed as before
    assert gram(X[:100]).shape == (100, 100)


def test_huge_gram_refused_without_a_limit(monkeypatch):
    monkeypatch.delenv("GRAPHSTK_MAX_MEMORY", raising=False)
    X = torch.zeros(2_000_000, 2)                         # a 16 TB float32 matrix
    with pytest.raises(MemoryLimitError, match=r"2000000 x 2000000 float32.*needs 16.0 TB, more than the [0-9.]+ [KMGT]?B of "):
        gram(X)


@pytest.mark.parametrize("make", ["LSKPCA", "SpectralSupportEstimator", "RandomFourierFeatures"])
def test_sparse_input_to_the_estimators_says_what_to_pass(make):
    from graphstk.features.random_features import RandomFourierFeatures
    from graphstk.methods.separating import SpectralSupportEstimator
    from graphstk.methods.sskpca import LSKPCA

    est = {"LSKPCA": LSKPCA, "SpectralSupportEstimator": SpectralSupportEstimator,
           "RandomFourierFeatures": RandomFourierFeatures}[make]()
    X = sp.random(40, 5, density=0.3, format="csr", random_state=0)
    args = (X, np.r_[np.zeros(5, int), np.ones(5, int), -np.ones(30, int)]) if make == "LSKPCA" else (X,)
    with pytest.raises(TypeError, match=r"toarray\(\)"):
        est.fit(*args)
