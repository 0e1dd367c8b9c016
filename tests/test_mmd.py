"""MMD estimators (slides Eqs. 19/23, 21, 22), mean embeddings and the permutation test."""
import numpy as np
import pytest
import torch
from scipy.spatial.distance import pdist

from graphstk.mmd import mean_embedding, median_heuristic, mmd2, mmd_test
from graphstk.operators import kernel_function

CASES = [("gaussian", {"sigma": 0.8}), ("laplacian", {"sigma": 1.3}), ("polynomial", {"degree": 2}),
         ("abel", {"sigma": 0.5})]


def loops(X, Y, k, estimator):
    """The estimators written out as explicit python loops over the slide formulas."""
    kk = lambda a, b: float(k(a[None], b[None])[0, 0])
    m, n = len(X), len(Y)
    if estimator == "biased":  # Eq. 23
        return (sum(kk(X[i], X[j]) for i in range(m) for j in range(m)) / m**2
                - 2 * sum(kk(X[i], Y[j]) for i in range(m) for j in range(n)) / (m * n)
                + sum(kk(Y[i], Y[j]) for i in range(n) for j in range(n)) / n**2)
    if estimator == "unbiased":  # Eq. 21
        return (sum(kk(X[i], X[j]) for i in range(m) for j in range(m) if j != i) / (m * (m - 1))
                + sum(kk(Y[i], Y[j]) for i in range(n) for j in range(n) if j != i) / (n * (n - 1))
                - 2 * sum(kk(X[i], Y[j]) for i in range(m) for j in range(n)) / (m * n))
    # Eq. 22: one-sample U-statistic with h(z_i, z_j)
    h = lambda i, j: kk(X[i], X[j]) + kk(Y[i], Y[j]) - kk(X[i], Y[j]) - kk(X[j], Y[i])
    return sum(h(i, j) for i in range(m) for j in range(m) if i != j) / (m * (m - 1))


@pytest.mark.parametrize("kernel,params", CASES)
def test_estimators_equal_their_definitions(kernel, params):
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(5, 2)), rng.normal(size=(7, 2)) + 0.5
    k = kernel_function(kernel, **params)
    for est in ("biased", "unbiased"):
        val = mmd2(X, Y, kernel=kernel, estimator=est, **params)
        assert isinstance(val, torch.Tensor) and val.dim() == 0
        assert float(val) == pytest.approx(loops(X, Y, k, est), rel=1e-10, abs=1e-12)
    Y6 = Y[:5]
    assert float(mmd2(X, Y6, kernel=kernel, estimator="equal_size", **params)) == pytest.approx(
        loops(X, Y6, k, "equal_size"), rel=1e-10, abs=1e-12)


def test_mean_embedding_and_biased_mmd_is_rkhs_distance():
    rng = np.random.default_rng(1)
    X, Y, T = rng.normal(size=(9, 3)), rng.normal(size=(6, 3)), rng.normal(size=(4, 3))
    k = kernel_function("gaussian", sigma=1.1)
    mu = mean_embedding(X, "gaussian", sigma=1.1)
    expected = [np.mean([float(k(x[None], t[None])) for x in X]) for t in T]  # mu_X(t) = mean_i k(x_i, t)
    np.testing.assert_allclose(mu(T).numpy(), expected, rtol=1e-12)
    nu = mean_embedding(Y, "gaussian", sigma=1.1)
    dist2 = mu.norm2() - 2 * mu.inner(nu) + nu.norm2()  # ||mu_X - mu_Y||_H^2 (Lemma 15)
    assert float(dist2) == pytest.approx(float(mmd2(X, Y, sigma=1.1, estimator="biased")), rel=1e-10)
    # weighted embedding (Eq. 16)
    w = rng.random(9)
    np.testing.assert_allclose(mean_embedding(X, sigma=1.1, weights=w)(T).numpy(),
                               k(T, X).numpy() @ w, rtol=1e-12)
    # default bandwidth is the median heuristic on X
    assert mean_embedding(X).kernel.sigma == pytest.approx(np.median(pdist(X)))


def test_unbiased_has_zero_mean_under_null_biased_does_not():
    rng = np.random.default_rng(2)
    u, b = [], []
    for _ in range(300):
        X, Y = rng.normal(size=(8, 2)), rng.normal(size=(8, 2))
        u.append(float(mmd2(X, Y, sigma=1.0, estimator="unbiased")))
        b.append(float(mmd2(X, Y, sigma=1.0, estimator="biased")))
    u, b = np.array(u), np.array(b)
    se = u.std() / np.sqrt(len(u))
    assert abs(u.mean()) < 4 * se
    assert b.mean() > 10 * b.std() / np.sqrt(len(b))  # E[V-statistic] > 0 = MMD^2 under H0


def test_median_heuristic():
    rng = np.random.default_rng(3)
    X, Y = rng.normal(size=(20, 2)), rng.normal(size=(15, 2)) + 2
    s = median_heuristic(X, Y)
    assert s == pytest.approx(np.median(pdist(np.vstack([X, Y]))), rel=1e-12)
    assert float(mmd2(X, Y)) == pytest.approx(float(mmd2(X, Y, sigma=s)), rel=1e-12)
    with pytest.raises(ValueError, match="median"):
        median_heuristic(np.zeros((5, 2)))


def test_polynomial_kernel_is_blind_to_equal_moments():
    """(x^T y + c)^2 sees only the first two moments (slides, Example 11); N(0,1) and the
    Rademacher law share them. Standardising both samples makes the empirical moments equal,
    so the biased polynomial MMD is exactly 0 while the Gaussian MMD is clearly positive."""
    rng = np.random.default_rng(4)
    n = 300
    X = rng.normal(size=(n, 1))
    X = (X - X.mean()) / X.std()
    Y = np.repeat([[-1.0], [1.0]], n // 2, axis=0)  # mean 0, second moment 1 exactly
    assert abs(float(mmd2(X, Y, kernel="polynomial", degree=2, estimator="biased"))) < 1e-10
    # population value: 1/sqrt(3) + (1 + e^-2)/2 - 2 e^(-1/4)/sqrt(2) = 0.0436
    assert float(mmd2(X, Y, kernel="gaussian", sigma=1.0, estimator="biased")) > 0.02
    # as tests: the polynomial statistic does not reject, the Gaussian one does
    _, p_poly = mmd_test(X, Y, kernel="polynomial", degree=2, n_permutations=200, estimator="biased")
    _, p_gauss = mmd_test(X, Y, kernel="gaussian", n_permutations=200)
    assert p_poly > 0.5 and p_gauss <= 1 / 201 + 1e-12
    # fresh samples from the two laws (no standardisation): the unbiased polynomial MMD is
    # small compared with the scale of its kernel, the Gaussian one is not
    X2, Y2 = rng.normal(size=(2000, 1)), rng.choice([-1.0, 1.0], size=(2000, 1))
    poly = float(mmd2(X2, Y2, kernel="polynomial", degree=2))
    scale = float(mmd2(X2, Y2 + 1.0, kernel="polynomial", degree=2))  # a mean shift for reference
    assert abs(poly) < 0.02 * scale


def test_permutation_test_keeps_level_and_has_power():
    rng = np.random.default_rng(5)
    rejections = 0
    reps = 100
    for r in range(reps):
        X, Y = rng.normal(size=(20, 2)), rng.normal(size=(20, 2))
        _, p = mmd_test(X, Y, n_permutations=100, seed=r)
        assert 1 / 101 <= p <= 1.0
        rejections += p <= 0.05
    assert rejections / reps <= 0.12
    powers = [mmd_test(rng.normal(size=(30, 2)), rng.normal(size=(30, 2)) + [1.0, 0.0],
                       n_permutations=100, seed=r).p_value <= 0.05 for r in range(10)]
    assert sum(powers) >= 9


@pytest.mark.parametrize("estimator", ["unbiased", "biased", "equal_size"])
def test_permutation_test_statistic_and_p_value(estimator):
    rng = np.random.default_rng(6)
    X, Y = rng.normal(size=(12, 2)), rng.normal(size=(12, 2)) + 3.0
    res = mmd_test(X, Y, sigma=1.0, n_permutations=50, estimator=estimator, batch_size=16)
    stat, p = res
    assert stat == pytest.approx(float(mmd2(X, Y, sigma=1.0, estimator=estimator)), rel=1e-10)
    assert p == pytest.approx(1 / 51)  # well separated: no permutation reaches the observed value
    # the +1 correction: p is a multiple of 1/(B+1), and the test is seeded
    res2 = mmd_test(X, X[::-1] + 0.01, sigma=1.0, n_permutations=50, estimator=estimator, seed=3)
    assert round(res2.p_value * 51, 9) == round(res2.p_value * 51)
    assert res2 == mmd_test(X, X[::-1] + 0.01, sigma=1.0, n_permutations=50, estimator=estimator, seed=3)


def test_mmd_is_differentiable():
    X = torch.randn(10, 2, dtype=torch.float64, requires_grad=True)
    Y = torch.randn(12, 2, dtype=torch.float64) + 1
    mmd2(X, Y, sigma=1.0).backward()
    assert X.grad is not None and torch.isfinite(X.grad).all() and X.grad.abs().sum() > 0


def test_mmd_bad_inputs():
    X, Y = np.zeros((5, 2)) + np.arange(5)[:, None], np.ones((4, 2))
    with pytest.raises(ValueError, match="dimension mismatch"):
        mmd2(X, np.ones((4, 3)))
    with pytest.raises(ValueError, match="sigma"):
        mmd2(X, Y, sigma=0.0)
    with pytest.raises(ValueError, match="at least 2"):
        mmd2(X, Y[:1])
    with pytest.raises(ValueError, match="at least 2"):
        mmd_test(X[:1], Y)
    with pytest.raises(ValueError, match="m == n"):
        mmd2(X, Y, estimator="equal_size")
    with pytest.raises(ValueError, match="estimator"):
        mmd2(X, Y, estimator="linear_time")
    with pytest.raises(ValueError, match="n_permutations"):
        mmd_test(X, Y, n_permutations=0)
    with pytest.raises(TypeError, match="unexpected parameter"):
        mmd2(X, Y, kernel="linear", sigma=1.0)
    assert float(mmd2(X, Y[:1], sigma=1.0, estimator="biased")) >= 0  # the V-statistic needs 1 point


def test_mmd_test_time_budget_is_the_callers_choice():
    """Without max_seconds every permutation runs (no estimate, no cap); with a budget that runs
    out, the p-value is taken over the permutations drawn, with a warning naming their count."""
    import numpy as np

    from graphstk import mmd

    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(300, 5)), rng.normal(size=(300, 5))
    full = mmd.mmd_test(X, Y, n_permutations=60, batch_size=20)
    assert full.p_value * 61 == pytest.approx(round(full.p_value * 61))
    with pytest.warns(RuntimeWarning, match="after 20 of 60 permutations"):
        cut = mmd.mmd_test(X, Y, n_permutations=60, batch_size=20, max_seconds=1e-9)
    assert cut.statistic == full.statistic
    assert cut.p_value * 21 == pytest.approx(round(cut.p_value * 21))
    with pytest.raises(ValueError, match="max_seconds"):
        mmd.mmd_test(X, Y, max_seconds=-1)


def test_mmd_test_on_large_samples_runs_in_blocks_of_splits(monkeypatch):
    """One batch of splits is what a test holds (``[N, batch_size]`` blocks, never ``N x N``): a
    batch above the free memory is cut into smaller ones (the same statistic and p-value), and only
    a ceiling below one split is refused before the first product."""
    import numpy as np

    from graphstk.exceptions import MemoryLimitError
    from graphstk.mmd import mmd_test

    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(400, 3)), rng.normal(size=(400, 3)) + 0.3
    from graphstk import mmd
    want = mmd_test(X, Y, sigma=1.0, n_permutations=300, batch_size=300)
    monkeypatch.setenv("GRAPHSTK_MAX_MEMORY", "10MB")      # a batch of 300 splits (~14 MB) does not fit
    assert mmd._check_test_memory(torch.as_tensor(X), 800, 400, 300, "unbiased") < 300
    got = mmd_test(X, Y, sigma=1.0, n_permutations=300, batch_size=300)   # smaller batches, same outcome
    assert (got.statistic, got.p_value) == (want.statistic, want.p_value)
    monkeypatch.setenv("GRAPHSTK_MAX_MEMORY", "30KB")      # not even one split fits: refused, up front
    with pytest.raises(MemoryLimitError, match=r"mmd_test on 800 points \(one split at a time\).*subsample"):
        mmd_test(X, Y, sigma=1.0, n_permutations=300)
    monkeypatch.delenv("GRAPHSTK_MAX_MEMORY")
    a = mmd_test(X, Y, sigma=1.0, n_permutations=40, batch_size=7)
    b = mmd_test(X, Y, sigma=1.0, n_permutations=40, batch_size=40)
    assert a.statistic == pytest.approx(b.statistic, rel=1e-12)


