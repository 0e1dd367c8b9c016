"""Random Fourier / binning features: sampling densities, unbiasedness, O(1/sqrt(D)) error."""
import math

import numpy as np
import pytest
import scipy.sparse as sp
import torch
from scipy import integrate, stats
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from graphstk.features import RandomBinningFeatures, RandomFourierFeatures, bin_ids, sample_frequencies
from graphstk.operators import gram

RFF_KERNELS = ["gaussian", "laplacian", "cauchy"]
SIGMA = 0.6  # != 1, so a density with the wrong scale would be caught


def pairs(seed=0, n=6, d=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * 0.4
    Y = X + rng.normal(size=(n, d)) * 0.3
    return X, Y


@pytest.mark.parametrize("kernel", RFF_KERNELS)
def test_frequency_density_is_fourier_transform_of_kernel(kernel):
    """1-D check, independent of the sampler: int p(w) cos(w t) dw = k(t) with p the density we
    sample from, computed by quadrature; then a KS test that the sampler draws from p."""
    s = SIGMA
    dens = {"gaussian": stats.norm(scale=1 / s), "laplacian": stats.cauchy(scale=1 / s),
            "cauchy": stats.laplace(scale=1 / s)}[kernel]
    for t in (0.3, 1.1, 2.5):
        # symmetric density: int_R p(w) cos(w t) dw = 2 int_0^inf p(w) cos(w t) dw (Fourier quadrature)
        ft = 2 * integrate.quad(dens.pdf, 0, np.inf, weight="cos", wvar=t)[0]
        k = gram(np.array([[0.0]]), np.array([[t]]), kernel=kernel, sigma=s).item()
        assert ft == pytest.approx(k, abs=1e-6)
    w = sample_frequencies(kernel, s, 1, 20000, torch.Generator().manual_seed(1)).flatten().numpy()
    assert stats.kstest(w, dens.cdf).pvalue > 1e-3


@pytest.mark.parametrize("kernel", RFF_KERNELS)
@pytest.mark.parametrize("fmap", ["cos_sin", "phase"])
def test_rff_is_unbiased(kernel, fmap):
    """Mean over 40 seeds (D = 2500 each, N = 1e5 frequencies in all) of z(x)^T z(y).
    Each frequency contributes a term of variance <= 1 (cos/sin: Var cos <= 1) or <= 1.5
    (phase: cos(a-b) + cos(a+b+2u)), so the mean has std <= sqrt(1.5 / 1e5) = 0.0039;
    the tolerance is 5 std."""
    X, Y = (torch.from_numpy(a) for a in pairs())
    exact = np.diag(gram(X, Y, kernel=kernel, sigma=SIGMA).numpy())
    est = []
    for seed in range(40):
        f = RandomFourierFeatures(kernel, sigma=SIGMA, n_features=2500, random_state=seed, map=fmap).fit(X)
        est.append((f.transform(X) * f.transform(Y)).sum(1).numpy())
    mean = np.mean(est, axis=0)
    assert np.abs(mean - exact).max() < 5 * math.sqrt(1.5 / 1e5)
    # the kernel values are spread out, so a wrong kernel/scale would not pass
    assert exact.min() < 0.8 and exact.max() > 0.2


@pytest.mark.parametrize("kernel,fmap", [("gaussian", "cos_sin"), ("laplacian", "phase"), ("cauchy", "cos_sin")])
def test_rff_error_shrinks_like_inverse_sqrt_D(kernel, fmap):
    rng = np.random.default_rng(2)
    X = torch.from_numpy(rng.normal(size=(20, 3)) * 0.5)
    K = gram(X, kernel=kernel, sigma=SIGMA)
    err = {}
    for D in (100, 6400):
        err[D] = np.mean([
            (RandomFourierFeatures(kernel, sigma=SIGMA, n_features=D, random_state=s, map=fmap).fit(X)
             .kernel_approximation(X) - K).abs().max().item()
            for s in range(12)
        ])
    assert 4.0 < err[100] / err[6400] < 16.0  # sqrt(6400/100) = 8


def test_rff_shapes_dtypes_and_sklearn_conventions():
    Xn = np.random.default_rng(3).normal(size=(7, 4))
    assert isinstance(RandomFourierFeatures(n_features=3, random_state=0).fit_transform(Xn), np.ndarray)
    X = torch.from_numpy(Xn)
    f = RandomFourierFeatures("gaussian", sigma=2.0, n_features=16, random_state=0)
    Z = f.fit_transform(X)
    assert isinstance(Z, torch.Tensor) and Z.shape == (7, 32) and Z.dtype == torch.float64
    assert f.n_output_features_ == 32 and f.W_.shape == (4, 16)
    # ||z(x)||^2 = k(x, x) = 1 exactly for the cos/sin map
    torch.testing.assert_close((Z * Z).sum(1), torch.ones(7, dtype=torch.float64))
    p = RandomFourierFeatures("laplacian", n_features=16, random_state=0, map="phase").fit(X)
    assert p.transform(X).shape == (7, 16) and p.b_.shape == (16,)
    assert p.transform(X.float()).dtype == torch.float32
    # seeded, reproducible, clonable
    g = clone(f).fit(X)
    assert torch.equal(g.transform(X), Z)
    assert not torch.equal(RandomFourierFeatures(sigma=2.0, n_features=16, random_state=1).fit_transform(X), Z)
    assert f.get_params()["n_features"] == 16


def test_rff_bad_inputs():
    X = np.zeros((3, 2))
    with pytest.raises(ValueError, match="n_features"):
        RandomFourierFeatures(n_features=0).fit(X)
    with pytest.raises(ValueError, match="sigma"):
        RandomFourierFeatures(sigma=0.0).fit(X)
    with pytest.raises(ValueError, match="kernel"):
        RandomFourierFeatures(kernel="linear").fit(X)
    with pytest.raises(ValueError, match="map"):
        RandomFourierFeatures(map="sin").fit(X)
    f = RandomFourierFeatures(n_features=4, random_state=0).fit(X)
    with pytest.raises(ValueError, match="features"):
        f.transform(np.zeros((3, 5)))
    with pytest.raises(NotFittedError):
        RandomFourierFeatures().transform(X)
    with pytest.raises(ValueError, match="sigma"):
        RandomBinningFeatures(sigma=-1.0).fit(X)
    with pytest.raises(ValueError, match="n_grids"):
        RandomBinningFeatures(n_grids=0).fit(X)


# -- random binning -------------------------------------------------------------------
def test_binning_collision_probability_is_hat_kernel():
    """Fixed pitch delta, shift u ~ U[0, delta): P[same bin] = max(0, 1 - |x - y| / delta)
    (Eq. 6 with the errata's "1 -"). 20000 shifts: binomial std <= 0.0036, tolerance 0.015."""
    delta, M = 1.3, 20000
    gaps = np.array([0.0, 0.3, 0.65, 1.0, 1.29, 1.3, 2.0, 5.0])
    x0 = 0.37
    X = np.concatenate([[x0], x0 + gaps])[:, None]
    u = torch.rand(M, 1, generator=torch.Generator().manual_seed(0), dtype=torch.float64) * delta
    ids = bin_ids(X, torch.full((M, 1), delta, dtype=torch.float64), u)  # [M, n, 1]
    same = (ids[:, 1:, 0] == ids[:, :1, 0]).double().mean(0).numpy()
    hat = np.maximum(0.0, 1.0 - gaps / delta)
    np.testing.assert_allclose(same, hat, atol=0.015)
    assert same[0] == 1.0 and same[-2:].max() == 0.0  # exact at |x-y| = 0 and >= delta


def test_binning_pitch_distribution_and_averaged_kernel():
    sigma = 0.7
    rb = RandomBinningFeatures(sigma=sigma, n_grids=20000, random_state=0)
    X1 = torch.tensor([[0.0], [0.2], [0.5], [1.0], [2.0]], dtype=torch.float64)
    rb.fit(X1)
    # pitch ~ Gamma(shape 2, scale sigma) = delta k''(delta) for k = exp(-delta/sigma)  (Lemma 7)
    assert stats.kstest(rb.pitch_.flatten().numpy(), stats.gamma(a=2, scale=sigma).cdf).pvalue > 1e-3
    assert bool(((rb.shift_ >= 0) & (rb.shift_ < rb.pitch_)).all())
    # averaged over pitches the collision rate is exp(-|x - y| / sigma); tolerance 5 binomial std
    approx = rb.kernel_approximation(X1).numpy()
    exact = np.exp(-np.abs(X1 - X1.T).numpy() / sigma)
    np.testing.assert_allclose(approx, exact, atol=5 * math.sqrt(0.25 / 20000))
    # in d = 3 the per-dimension grids give the l1 Laplacian exp(-||x-y||_1 / sigma)
    X3 = torch.from_numpy(np.random.default_rng(1).normal(size=(6, 3)) * 0.4)
    rb3 = RandomBinningFeatures(sigma=sigma, n_grids=20000, random_state=1).fit(X3)
    np.testing.assert_allclose(rb3.kernel_approximation(X3).numpy(),
                               gram(X3, kernel="laplacian", sigma=sigma).numpy(), atol=5 * math.sqrt(0.25 / 20000))


def brute_collisions(rb, A, B):
    """Fraction of grids in which a_i and b_j share a bin in every dimension (plain loops)."""
    A, B = np.asarray(A, float), np.asarray(B, float)
    pitch, shift = rb.pitch_.numpy(), rb.shift_.numpy()
    out = np.zeros((len(A), len(B)))
    for p in range(len(pitch)):
        ia = np.floor((A - shift[p]) / pitch[p])
        ib = np.floor((B - shift[p]) / pitch[p])
        out += (ia[:, None, :] == ib[None, :, :]).all(-1)
    return out / len(pitch)


def test_binning_features_are_exact_collision_fractions():
    rng = np.random.default_rng(4)
    X, T = rng.normal(size=(30, 2)), rng.normal(size=(8, 2)) * 1.5
    X, T = torch.from_numpy(X), torch.from_numpy(T)
    rb = RandomBinningFeatures(sigma=0.5, n_grids=64, random_state=3, grid_chunk=5, sparse_output=True).fit(X)
    Z = rb.transform(X)
    assert Z.is_sparse and Z.shape == (30, rb.n_bins_) and rb.n_bins_ == rb.bins_.shape[0]
    # one entry 1/sqrt(P) per grid and point
    dense = Z.to_dense()
    np.testing.assert_array_equal((dense > 0).sum(1).numpy(), np.full(30, 64))
    np.testing.assert_allclose(dense[dense > 0].numpy(), 1 / math.sqrt(64))
    np.testing.assert_allclose(rb.kernel_approximation(X).numpy(), brute_collisions(rb, X, X), atol=1e-12)
    # new points: products with the fitted points are still exact (unseen bins get no column)
    np.testing.assert_allclose(rb.kernel_approximation(T, X).numpy(), brute_collisions(rb, T, X), atol=1e-12)
    assert (rb.transform(T).to_dense() > 0).sum() <= 8 * 64
    # a different chunking gives the same columns
    rb2 = RandomBinningFeatures(sigma=0.5, n_grids=64, random_state=3).fit(X)
    assert torch.equal(rb2.bins_, rb.bins_)
    assert torch.equal(rb2.transform(T), rb.transform(T).to_dense())  # dense by default
    # NumPy callers get NumPy (dense) or scipy.sparse (sparse_output=True) with the same entries
    Zs = rb.transform(T.numpy())
    assert sp.issparse(Zs) and np.array_equal(Zs.toarray(), rb2.transform(T.numpy()))
    np.testing.assert_array_equal(Zs.toarray(), rb2.transform(T).numpy())


def test_transform_larger_than_memory_is_refused_naming_row_blocks(monkeypatch):
    """An output of terabytes is refused from its size before the allocator sees it; the message
    gives the rows per block that fit and the parameter to lower."""

    from graphstk.exceptions import MemoryLimitError

    monkeypatch.setenv("GRAPHSTK_MAX_MEMORY", "2GB")
    f = RandomFourierFeatures(sigma=1.0, n_features=1_666_667, random_state=0).fit(np.zeros((2, 2)))
    X = torch.zeros(1, 2, dtype=torch.float64).expand(60_000, 2)      # no memory behind the rows
    with pytest.raises(MemoryLimitError, match=r"transform of 60000 rows into 3333334 features needs [0-9.]+ TB.*"
                                               r"row blocks of at most [0-9]+ rows.*lower n_features="):
        f.transform(X)
    b = RandomBinningFeatures(n_grids=5, random_state=0).fit(np.random.default_rng(0).normal(size=(20, 2)))
    monkeypatch.setenv("GRAPHSTK_MAX_MEMORY", "1KB")
    with pytest.raises(MemoryLimitError, match="lower n_grids="):
        b.transform(np.zeros((100, 2)))
    with pytest.raises(MemoryLimitError, match="kernel_approximation"):
        f.kernel_approximation(np.zeros((100, 2)))


def test_too_many_frequencies_are_refused_at_fit_naming_n_features(monkeypatch):
    """``n_features=10**7`` on 50 columns (8 GB of frequencies) is refused before the draw, naming
    the parameter; following the advice (a lower n_features) fits."""
    from graphstk.exceptions import MemoryLimitError

    monkeypatch.setenv("GRAPHSTK_MAX_MEMORY", "2GB")
    X = np.zeros((3, 50))
    with pytest.raises(MemoryLimitError, match=r"\[50, 10000000\] frequencies of RandomFourierFeatures"
                                               r"\(n_features=10000000\) needs 8.1 GB.*lower n_features="):
        RandomFourierFeatures(n_features=10 ** 7).fit(X)
    assert RandomFourierFeatures(n_features=2000).fit(X).transform(X).shape == (3, 4000)
