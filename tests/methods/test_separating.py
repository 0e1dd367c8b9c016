"""Spectral support estimation with separating kernels (De Vito, Rosasco, Toigo), Eqs. 16-20, 30, Table 1.

Every closed form is checked against an independent dense computation (numpy/scipy on the Gram
matrix written out here, not the module's eigendecomposition path).
"""
import numpy as np
import pytest
import scipy.linalg
import torch
from sklearn.exceptions import NotFittedError
from scipy.spatial.distance import cdist

from graphstk.methods import ParzenWindow, SpectralSupportEstimator, gaussian_one_class_svm
from graphstk.methods.separating import (
    FILTERS, filter_g, filter_r, landweber_iteration, landweber_steps, max_curvature_lambda,
    nu_method_iteration, nu_steps, width_heuristic,
)
from graphstk.operators import DenseOperator, kth_neighbor_distance_median, normalized_adjacency

TABLE1 = ("tikhonov", "cutoff", "landweber", "kpca")


def _data(n=40, d=3, m=15, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    Z = np.vstack([rng.normal(size=(m, d)), 3.0 + rng.normal(size=(m, d))])   # inside and far away
    return torch.from_numpy(X), torch.from_numpy(Z)     # tensors in, tensors out (NumPy input: tests/contracts/test_sklearn_checks.py)


def _abel_normalized(A, B, sigma):
    A, B = np.asarray(A), np.asarray(B)
    return np.exp(-cdist(A, B) / sigma)          # K(x, x) = 1 already


def _poly_normalized(A, B, degree=2, c=1.0):
    A, B = np.asarray(A), np.asarray(B)
    k = lambda P, Q: (P @ Q.T + c) ** degree
    da, db = np.diag(k(A, A)), np.diag(k(B, B))
    return k(A, B) / np.sqrt(np.outer(da, db))


def _g_dense(name, A, lam):
    """``g_lambda(A)`` for symmetric ``A = K_n / n`` from the formulas of Table 1, computed densely."""
    n = A.shape[0]
    if name == "tikhonov":
        return np.linalg.inv(A + lam * np.eye(n))
    if name == "landweber":
        m = int(np.ceil(1.0 / lam)) - 1                 # m + 1 terms: sum_{k=0}^{m} (I - A)^k
        B, P, G = np.eye(n) - A, np.eye(n), np.zeros((n, n))
        for _ in range(m + 1):
            G, P = G + P, P @ B
        return G
    s, U = scipy.linalg.eigh(A)
    s = np.clip(s, 0, None)
    if name == "cutoff":
        g = np.where(s > lam, 1.0 / np.maximum(s, lam), 1.0 / lam)
    elif name == "kpca":
        g = np.where(s >= lam, 1.0 / np.maximum(s, lam), 0.0)
    else:
        raise AssertionError(name)
    return (U * g) @ U.T


@pytest.mark.parametrize("filt", TABLE1)
@pytest.mark.parametrize("lam", [0.004, 0.03, 0.2])
def test_eq19_matches_dense_per_filter(filt, lam):
    X, Z = _data()
    sigma = 1.3
    est = SpectralSupportEstimator(sigma=sigma, filter=filt, lam=lam).fit(X)
    Kn, Kx = _abel_normalized(X, X, sigma), _abel_normalized(X, Z, sigma)
    n = X.shape[0]
    F = np.einsum("ij,ij->j", Kx, _g_dense(filt, Kn / n, lam) @ Kx) / n          # Eq. 19
    np.testing.assert_allclose(est.score_samples(Z).numpy(), F, rtol=1e-9, atol=1e-11)


def test_nu_method_spectral_form_equals_iteration():
    X, Z = _data()
    sigma, lam = 1.1, 0.004
    est = SpectralSupportEstimator(sigma=sigma, filter="nu", lam=lam, nu=1.5).fit(X)
    Kn = torch.from_numpy(_abel_normalized(X, X, sigma))
    Kx = torch.from_numpy(_abel_normalized(X, Z, sigma))
    t = int(nu_steps(lam))
    assert t == 16
    F = nu_method_iteration(Kn, Kx, t, nu=1.5)
    torch.testing.assert_close(est.score_samples(Z), F, rtol=1e-9, atol=1e-11)


def test_tikhonov_is_sec7_closed_form_with_normalized_kernel():
    """Sec. 7: ``F_n(x) = K_x^T (K_n + n lambda I)^{-1} K_x``; a polynomial kernel checks the normalisation."""
    X, Z = _data(n=30, d=4)
    lam = 0.01
    est = SpectralSupportEstimator(kernel="polynomial", filter="tikhonov", lam=lam).fit(X)
    Kn, Kx = _poly_normalized(X, X), _poly_normalized(X, Z)
    n = X.shape[0]
    F = np.einsum("ij,ij->j", Kx, np.linalg.solve(Kn + n * lam * np.eye(n), Kx))
    np.testing.assert_allclose(est.score_samples(Z).numpy(), F, rtol=1e-9, atol=1e-11)
    # test points are normalised too: under the linear kernel the normalised kernel is the cosine,
    # so scaling a test point leaves F_n unchanged (it would scale by 9 without normalisation)
    lin = SpectralSupportEstimator(kernel="linear", lam=lam).fit(X)
    F1 = lin.score_samples(Z)
    np.testing.assert_allclose(lin.score_samples(3.0 * Z).numpy(), F1.numpy(), rtol=1e-10, atol=1e-12)
    assert float(F1.max()) <= 1 + 1e-10 and float(F1.std()) > 1e-3


@pytest.mark.parametrize("filt", TABLE1)
def test_scores_in_unit_interval(filt):
    X, Z = _data(n=50, seed=3)
    Z = np.vstack([Z, X, 50.0 + Z])
    lams = np.logspace(-5, 0, 9)
    for approx in (None, "nystroem"):
        est = SpectralSupportEstimator(filter=filt, lam=lams, approx=approx, n_components=20).fit(X)
        F = est.score_samples(Z)
        assert F.shape == (Z.shape[0], lams.size)
        assert float(F.min()) >= -1e-12 and float(F.max()) <= 1 + 1e-10
        # far-away points score ~0, training points score high for a small lambda
        assert float(F[-15:].max()) < 1e-6


def test_filters_satisfy_assumption2():
    s = torch.linspace(0, 1, 2001, dtype=torch.float64)
    for f in TABLE1:
        r = filter_r(f, s, [1e-3, 0.1, 0.5])
        assert torch.all(r[0] == 0)                                     # a) r(0) = 0
        assert float(r.min()) >= 0 and float(r.max()) <= 1 + 1e-12      # 0 <= r <= 1
    # b) r -> 1 as lambda -> 0 (s > 0)
    for f in ("tikhonov", "cutoff", "landweber", "kpca", "nu"):
        assert float(filter_r(f, s[200:], 1e-7).min()) > 0.98
    # cut-off: linear ramp s/lambda below lambda (errata), 1 above; kpca: hard 0/1
    r = filter_r("cutoff", s, 0.5)[:, 0]
    torch.testing.assert_close(r, torch.where(s > 0.5, torch.ones_like(s), s / 0.5))
    r = filter_r("kpca", s, 0.5)[:, 0]
    torch.testing.assert_close(r, (s >= 0.5).to(s.dtype))
    # landweber: m + 1 terms, r = 1 - (1 - s)^(m + 1)
    m = int(landweber_steps(0.1))
    assert m == 9
    torch.testing.assert_close(filter_r("landweber", s, 0.1)[:, 0], 1 - (1 - s) ** (m + 1))
    assert torch.isclose(filter_g("landweber", torch.zeros(1), 0.1)[0, 0], torch.tensor(10.0, dtype=torch.float64))


@pytest.mark.parametrize("lam", [0.5, 0.05, 0.01])
def test_landweber_iteration_equals_spectral_form(lam):
    X, Z = _data(n=35, seed=1)
    sigma = 0.9
    est = SpectralSupportEstimator(sigma=sigma, filter="landweber", lam=lam).fit(X)
    Kn = torch.from_numpy(_abel_normalized(X, X, sigma))
    Kx = torch.from_numpy(_abel_normalized(X, Z, sigma))
    m = int(landweber_steps(lam))
    F = landweber_iteration(Kn, Kx, m + 1)          # Sec. 4.2 run for m + 1 steps (errata)
    torch.testing.assert_close(est.score_samples(Z), F, rtol=1e-9, atol=1e-11)
    # the paper's t = 1..m (one step short) is a different estimator
    assert not torch.allclose(landweber_iteration(Kn, Kx, m), F, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("filt", FILTERS)
def test_tau_n_accepts_every_training_point(filt):
    X, Z = _data(n=45, seed=2)
    for lam in (None, 0.02, [1e-3, 0.05, 0.3]):
        est = SpectralSupportEstimator(filter=filt, lam=lam).fit(X)
        F = est.score_samples(X)
        tau = 1 - F.min(0).values                                      # Eq. 30, recomputed
        torch.testing.assert_close(torch.as_tensor(est.tau_n_, dtype=F.dtype), tau, rtol=1e-10, atol=1e-12)
        torch.testing.assert_close(est.train_scores_, F, rtol=1e-9, atol=1e-11)
        assert bool((est.predict(X) == 1).all())
        assert bool((est.decision_function(X) >= -1e-12).all())


def test_user_tau_and_predict():
    X, Z = _data(n=40, seed=4)
    est = SpectralSupportEstimator(lam=0.01, tau=0.4).fit(X)
    F = est.score_samples(Z)
    assert est.threshold_ == pytest.approx(0.6)
    torch.testing.assert_close(est.decision_function(Z), F - 0.6)
    assert torch.equal(est.predict(Z), torch.where(F >= 0.6, 1, -1))
    assert bool((est.predict(Z[-15:]) == -1).all())


def test_lambda_path_columns_equal_single_fits():
    X, Z = _data(n=40, seed=5)
    lams = [1e-4, 1e-2, 0.3]
    for f in FILTERS:
        path = SpectralSupportEstimator(filter=f, lam=lams).fit(X).score_samples(Z)
        single = torch.stack([SpectralSupportEstimator(filter=f, lam=l).fit(X).score_samples(Z) for l in lams], 1)
        torch.testing.assert_close(path, single, rtol=1e-10, atol=1e-12)
        est = SpectralSupportEstimator(filter=f, lam=0.1).fit(X)
        torch.testing.assert_close(est.score_samples(Z, lam=lams), single, rtol=1e-10, atol=1e-12)


def test_lowrank_agrees_with_exact_as_k_grows():
    X, Z = _data(n=80, d=5, seed=6)
    exact = SpectralSupportEstimator(lam=0.01, filter="tikhonov").fit(X)
    Fe = exact.score_samples(Z)
    errs = []
    for k in (10, 40, 80):
        ny = SpectralSupportEstimator(lam=0.01, filter="tikhonov", approx="nystroem", n_components=k,
                                      sigma=exact.sigma_).fit(X)
        errs.append(float((ny.score_samples(Z) - Fe).abs().max()))
    assert errs[0] > errs[1] > errs[2]
    assert errs[2] < 1e-8            # k = n landmarks: the exact estimator
    # random Fourier features (Gaussian kernel) approach the exact Gaussian estimator
    ex = SpectralSupportEstimator(kernel="gaussian", sigma=2.0, lam=0.05).fit(X)
    e_rff = [float((SpectralSupportEstimator(kernel="gaussian", sigma=2.0, lam=0.05, approx="rff",
                                             n_components=k, random_state=1).fit(X).score_samples(Z)
                    - ex.score_samples(Z)).abs().mean()) for k in (10, 600)]
    assert e_rff[1] < e_rff[0] / 2 and e_rff[1] < 0.05


def test_graph_kernel_operator_matches_features():
    """A square KernelOperator over nodes: ids in, the same F_n as the feature kernel it holds."""
    X, Z = _data(n=30, seed=7)
    P = np.vstack([X, Z])
    sigma = 1.2
    K = torch.from_numpy(5.0 * _abel_normalized(P, P, sigma))       # unnormalised by a factor 5
    train = torch.arange(30)
    mask = torch.zeros(P.shape[0], dtype=torch.bool)
    mask[train] = True
    est = SpectralSupportEstimator(kernel=DenseOperator(K), lam=0.02).fit(mask)
    ref = SpectralSupportEstimator(sigma=sigma, lam=0.02).fit(X)
    torch.testing.assert_close(est.score_samples(torch.arange(30, P.shape[0])), ref.score_samples(Z),
                               rtol=1e-9, atol=1e-11)
    assert est.sigma_ is None and bool((est.predict(train) == 1).all())


def test_width_heuristic_and_lambda_default():
    X, _ = _data(n=60, seed=8)
    est = SpectralSupportEstimator().fit(X)
    assert est.sigma_ == pytest.approx(kth_neighbor_distance_median(X, 10))
    assert est.lam_ == pytest.approx(max_curvature_lambda(est.eigenvalues_))
    assert est.lam_ in est.eigenvalues_.tolist()


def test_width_heuristic_uses_the_kernels_metric():
    X, _ = _data(n=60, seed=8)
    assert width_heuristic(X) == pytest.approx(kth_neighbor_distance_median(X, 10))
    assert width_heuristic(X, 10, "laplacian") == pytest.approx(kth_neighbor_distance_median(X, 10, metric="manhattan"))
    with pytest.warns(UserWarning, match="n_neighbors=10 neighbours requested, but there are only 4 points"):
        assert width_heuristic(X[:4], 10) == pytest.approx(kth_neighbor_distance_median(X[:4], 3))
    est = SpectralSupportEstimator(kernel="laplacian").fit(X)
    assert est.sigma_ == pytest.approx(kth_neighbor_distance_median(X, 10, metric="manhattan"))


def test_max_curvature_lambda_finds_the_elbow():
    # fast geometric decay over 12 eigenvalues, then a slow tail: the elbow is at the 12th value
    s = np.concatenate([0.5 ** np.arange(12), 0.5 ** 11 * 0.98 ** np.arange(1, 100)])
    lam = max_curvature_lambda(s)
    j = int(np.argmin(np.abs(s - lam)))
    assert 10 <= j <= 13
    # jitter on the flat tail and a drop over the last values (as the Abel kernel gives on MNIST)
    # must not move the elbow to the end of the spectrum
    rng = np.random.default_rng(0)
    t = s * np.exp(1e-3 * rng.normal(size=s.size))
    t[-3:] *= [0.9, 0.8, 0.6]
    j = int(np.argmin(np.abs(np.sort(t)[::-1] - max_curvature_lambda(t))))
    assert 10 <= j <= 13
    with pytest.raises(ValueError, match="positive"):
        max_curvature_lambda(np.zeros(5))


def test_baselines():
    X, Z = _data(n=40, seed=9)
    pw = ParzenWindow().fit(X)
    sigma = kth_neighbor_distance_median(X, 10)
    assert pw.sigma_ == pytest.approx(sigma)
    np.testing.assert_allclose(pw.score_samples(Z).numpy(), _abel_normalized(Z, X, sigma).mean(1), rtol=1e-12)
    svm = gaussian_one_class_svm(2.0)
    assert svm.nu == 0.9 and svm.gamma == pytest.approx(1 / 8) and svm.kernel == "rbf"


def test_bad_inputs():
    X, Z = _data(n=20)
    with pytest.raises(ValueError, match="at least 2 training samples"):
        SpectralSupportEstimator(sigma=1.0).fit(X[:1])
    for lam in (0.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="The 'lam' parameter of SpectralSupportEstimator must be"):
            SpectralSupportEstimator(lam=lam).fit(X)
    with pytest.raises(ValueError, match="lam must be"):
        SpectralSupportEstimator(lam=[0.1, 0.0]).fit(X)
    with pytest.raises(ValueError, match="lam must be"):
        SpectralSupportEstimator(lam=0.1).fit(X).score_samples(Z, lam=-0.1)
    for sigma in (0.0, -2.0):
        with pytest.raises(ValueError, match="sigma"):
            SpectralSupportEstimator(sigma=sigma).fit(X)
    Xz = X.clone()
    Xz[3] = 0.0
    with pytest.raises(ValueError, match="cannot be normalised"):
        SpectralSupportEstimator(kernel="linear").fit(Xz)
    with pytest.raises(ValueError, match="cannot be normalised"):
        SpectralSupportEstimator(kernel="linear").fit(X).score_samples(np.zeros((2, X.shape[1])))
    adj = normalized_adjacency(torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]]), 3)   # zero diagonal
    with pytest.raises(ValueError, match="cannot be normalised"):
        SpectralSupportEstimator(kernel=adj).fit(torch.tensor([0, 1]))
    Xn = X.clone()
    Xn[2, 1] = float('nan')
    with pytest.raises(ValueError, match="NaN"):
        SpectralSupportEstimator().fit(Xn)
    with pytest.raises(ValueError, match="NaN"):
        SpectralSupportEstimator().fit(X).score_samples(Xn)
    with pytest.raises(ValueError, match="The 'filter' parameter of SpectralSupportEstimator must be"):
        SpectralSupportEstimator(filter="ridge-ish").fit(X)
    with pytest.raises(ValueError, match="The 'tau' parameter of SpectralSupportEstimator must be"):
        SpectralSupportEstimator(tau=1.5).fit(X)
    with pytest.raises(ValueError, match="approx"):
        SpectralSupportEstimator(approx="svd").fit(X)
    with pytest.raises(ValueError, match="nystroem"):
        SpectralSupportEstimator(approx="rff").fit(X)            # Abel has no Fourier sampler here
    with pytest.raises(ValueError, match="features"):
        SpectralSupportEstimator().fit(X).score_samples(Z[:, :2])
    with pytest.raises(NotFittedError):
        SpectralSupportEstimator().score_samples(Z)
