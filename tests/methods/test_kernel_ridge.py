"""Kernel ridge regression (closed form, any operator, CG) and ridge on random features."""
import numpy as np
import pytest
import torch
from sklearn.exceptions import NotFittedError
from sklearn.kernel_ridge import KernelRidge as SkKernelRidge

from graphstk.features import RandomBinningFeatures, RandomFourierFeatures
from graphstk.methods.kernel_ridge import KernelRidge, RandomFeatureRidge, block_cg, kernel_ridge_solve
from graphstk.operators import DenseOperator, FeatureKernelOperator, GraphKernel, gram, knn_graph


def data(n=60, d=2, seed=0, C=None):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    f = np.sin(3 * X[:, 0]) + X[:, 1] ** 2
    y = f + 0.1 * rng.normal(size=n)
    if C:
        y = np.stack([y, np.cos(2 * X[:, 1]) + 0.1 * rng.normal(size=n)][:C], 1)
    T = rng.uniform(-1, 1, size=(15, d))
    return torch.from_numpy(X), y, torch.from_numpy(T)  # tensors in, tensors out


@pytest.mark.parametrize("kernel,params", [("gaussian", {"sigma": 0.5}), ("laplacian", {"sigma": 0.8}),
                                           ("polynomial", {"degree": 3, "c": 1.0})])
@pytest.mark.parametrize("C", [None, 2])
def test_krr_equals_closed_form(kernel, params, C):
    X, y, T = data(C=C)
    lam = 0.3
    m = KernelRidge(kernel=kernel, lam=lam, **params).fit(X, y)
    K = gram(X, kernel=kernel, **params).numpy()
    alpha = np.linalg.solve(K + lam * np.eye(len(X)), y)  # slides, Proposition 3
    np.testing.assert_allclose(m.dual_coef_.numpy(), alpha, rtol=1e-8, atol=1e-10)
    pred = m.predict(T)
    assert isinstance(pred, torch.Tensor) and pred.shape == ((15,) if C is None else (15, C))
    np.testing.assert_array_equal(m.predict(T.numpy()), pred.numpy())  # NumPy in, NumPy out
    np.testing.assert_allclose(pred.numpy(), gram(T, X, kernel=kernel, **params).numpy() @ alpha, rtol=1e-8, atol=1e-10)
    # conjugate gradients through blockwise products gives the same solution
    cg = KernelRidge(kernel=kernel, lam=lam, solver="cg", block_size=7, tol=1e-12, **params).fit(X, y)
    np.testing.assert_allclose(cg.predict(T).numpy(), pred.numpy(), rtol=1e-7, atol=1e-8)


def test_krr_matches_scikit_learn_convention():
    X, y, T = data()
    sigma, lam = 0.4, 0.05
    ours = KernelRidge(kernel="gaussian", sigma=sigma, lam=lam).fit(X, y).predict(T).numpy()
    sk = SkKernelRidge(alpha=lam, kernel="rbf", gamma=1 / (2 * sigma**2)).fit(X, y).predict(T)
    np.testing.assert_allclose(ours, sk, rtol=1e-8, atol=1e-10)


def test_krr_normalized_kernel_uses_normalized_test_rows():
    X, y, T = data()
    m = KernelRidge(kernel="polynomial", degree=2, normalize=True, lam=0.1).fit(X, y)
    K = gram(X, kernel="polynomial", degree=2, normalize=True).numpy()
    Kt = gram(T, X, kernel="polynomial", degree=2, normalize=True).numpy()
    np.testing.assert_allclose(m.predict(T).numpy(), Kt @ np.linalg.solve(K + 0.1 * np.eye(len(X)), y), rtol=1e-8)


def test_kernel_ridge_solve_on_any_operator():
    X, y, _ = data(n=50)
    Y = torch.from_numpy(np.stack([y, -y], 1))
    ei, w = knn_graph(X, 5, mode="gaussian")
    S = GraphKernel(ei, 50, edge_weight=w).S  # a sparse graph operator
    ops = [S, FeatureKernelOperator(X, kernel="abel", sigma=0.5, block_size=9),
           DenseOperator(gram(X, kernel="cauchy", sigma=0.5))]
    # S = D^-1/2 W D^-1/2 has spectrum in [-1, 1]: lam = 1.2 keeps S + lam I positive definite
    for op, lam in zip(ops, (1.2, 0.2, 0.2)):
        A = op.to_dense().numpy() + lam * np.eye(50)
        ref = np.linalg.solve(A, Y.numpy())
        for solver in ("direct", "cg"):
            a = kernel_ridge_solve(op, Y, lam, solver=solver, tol=1e-12)
            np.testing.assert_allclose(a.numpy(), ref, rtol=1e-7, atol=1e-9)
        a1 = kernel_ridge_solve(op, Y[:, 0], lam, solver="cg", tol=1e-12)
        assert a1.shape == (50,)
        np.testing.assert_allclose(a1.numpy(), ref[:, 0], rtol=1e-7, atol=1e-9)
    # a plain dense tensor is accepted too
    K = gram(X, sigma=0.5)
    np.testing.assert_allclose(kernel_ridge_solve(K, Y, 1.0).numpy(),
                               np.linalg.solve(K.numpy() + np.eye(50), Y.numpy()), rtol=1e-9)


def test_block_cg_columns_are_independent():
    rng = np.random.default_rng(1)
    M = rng.normal(size=(30, 30))
    A = torch.from_numpy(M @ M.T + 30 * np.eye(30))
    B = torch.from_numpy(rng.normal(size=(30, 3)))
    B[:, 1] = 0.0  # a zero right-hand side must stay zero, not produce NaN
    X, it, ok = block_cg(lambda V: A @ V, B, tol=1e-12)
    assert ok and torch.isfinite(X).all()
    torch.testing.assert_close(X, torch.linalg.solve(A, B), rtol=1e-9, atol=1e-10)


def test_random_feature_ridge_equals_primal_closed_form():
    X, y, T = data(C=2)
    lam = 0.1
    for feats in (RandomFourierFeatures("gaussian", sigma=0.5, n_features=40, random_state=0),
                  RandomBinningFeatures(sigma=0.5, n_grids=30, random_state=0)):
        r = RandomFeatureRidge(features=feats, lam=lam).fit(X, y)
        Z = r.features_.transform(X)
        Z = (Z.to_dense() if Z.is_sparse else Z).numpy()
        w = np.linalg.solve(Z.T @ Z + lam * np.eye(Z.shape[1]), Z.T @ y)
        np.testing.assert_allclose(r.coef_.numpy(), w, rtol=1e-7, atol=1e-9)
        Zt = r.features_.transform(T)
        Zt = (Zt.to_dense() if Zt.is_sparse else Zt).numpy()
        np.testing.assert_allclose(r.predict(T).numpy(), Zt @ w, rtol=1e-7, atol=1e-9)
        for solver in ("primal", "dual", "cg"):
            other = RandomFeatureRidge(features=feats, lam=lam, solver=solver, tol=1e-12).fit(X, y)
            np.testing.assert_allclose(other.coef_.numpy(), w, rtol=1e-6, atol=1e-8)
    assert feats.get_params()["n_grids"] == 30 and not hasattr(feats, "pitch_")  # the template is cloned


def test_random_feature_ridge_approaches_exact_krr():
    X, y, T = data(n=80)
    sigma, lam = 0.5, 0.1
    exact = KernelRidge(kernel="gaussian", sigma=sigma, lam=lam).fit(X, y).predict(T).numpy()
    err = {}
    for D in (20, 200, 2000):
        err[D] = np.mean([np.abs(RandomFeatureRidge(kernel="gaussian", sigma=sigma, n_features=D, random_state=s, lam=lam)
                                 .fit(X, y).predict(T).numpy() - exact).max() for s in range(5)])
    assert err[20] > err[200] > err[2000]
    assert err[2000] < 0.05 * np.abs(exact).max()


def test_kernel_ridge_bad_inputs():
    X, y, T = data(n=10)
    with pytest.raises(ValueError, match="lam"):
        KernelRidge(lam=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="rows"):
        KernelRidge().fit(X, y[:5])
    with pytest.raises(ValueError, match="square"):
        kernel_ridge_solve(FeatureKernelOperator(X, T), y, 1.0)
    with pytest.raises(ValueError, match="lam > 0"):
        kernel_ridge_solve(FeatureKernelOperator(X), y, 0.0, solver="cg")
    with pytest.raises(ValueError, match="solver"):
        kernel_ridge_solve(FeatureKernelOperator(X), y, 1.0, solver="lu")
    with pytest.raises(ValueError, match="sigma"):
        KernelRidge(sigma=0.0).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        KernelRidge().fit(X, y).predict(np.zeros((2, 5)))
    with pytest.raises(NotFittedError):
        KernelRidge().predict(T)
    with pytest.raises(NotFittedError):
        RandomFeatureRidge().predict(T)
    with pytest.raises(ValueError, match="n_features"):
        RandomFeatureRidge(n_features=0).fit(X, y)


def test_direct_solve_beyond_ulimit_is_refused_and_cg_fits(monkeypatch):
    """Under an address-space limit (ulimit -v, simulated) too small for the n x n matrix, the
    direct solve is refused up front naming RLIMIT_AS and solver='cg'; that advice, followed under
    the same limit, fits and agrees with the direct solve."""
    import numpy as np

    from graphstk import memory
    from graphstk.exceptions import MemoryLimitError
    from graphstk.methods import KernelRidge

    X = np.random.default_rng(0).random((600, 5))
    y = np.sin(X @ np.arange(1, 6))
    want = KernelRidge(sigma=1.0, lam=1.0).fit(X, y).predict(X[:50])
    monkeypatch.delenv("GRAPHSTK_MAX_MEMORY", raising=False)
    monkeypatch.setattr(memory, "_read_rlimit_as", lambda: 10 ** 9 + 5 * 10 ** 6)
    monkeypatch.setattr(memory, "_read_vmsize", lambda: 10 ** 9)      # 5 MB left: 600^2 x 8 x 2 = 5.8 MB
    with pytest.raises(MemoryLimitError, match=r"600 x 600 kernel matrix.*RLIMIT_AS.*solver='cg'"):
        KernelRidge(sigma=1.0, lam=1.0).fit(X, y)
    got = KernelRidge(sigma=1.0, lam=1.0, solver="cg", tol=1e-10).fit(X, y).predict(X[:50])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_default_width_is_the_median_heuristic():
    """sigma=None: the median pairwise distance of the training points (graphstk.operators.median_sigma),
    the same fit as passing that width; a kernel without a width keeps sigma_ = None."""
    from graphstk.operators import median_sigma

    rng = np.random.default_rng(4)
    X, T = rng.normal(size=(60, 3)), rng.normal(size=(9, 3))
    y = np.sin(X[:, 0])
    est = KernelRidge(lam=0.1).fit(X, y)
    assert est.sigma_ == pytest.approx(median_sigma(X))
    np.testing.assert_allclose(est.predict(T), KernelRidge(sigma=median_sigma(X), lam=0.1).fit(X, y).predict(T),
                               rtol=1e-12)
    assert KernelRidge(kernel="linear", lam=0.1).fit(X, y).sigma_ is None
