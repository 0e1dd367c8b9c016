"""Bad inputs to the KPCA estimators, the coupled embedding and the one-class estimators: a clear error
raised before any large allocation, naming what was wrong and what to write instead."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from graphstk.exceptions import LabelError, MemoryLimitError
from graphstk.methods import LSKPCA, MVKPCA, CoupledKernelEmbedding, KernelPCAClassifier, ParzenWindow, \
    SpectralSupportEstimator


def test_exact_support_estimator_on_60000_points_is_refused_naming_the_option(monkeypatch):
    monkeypatch.setenv("GRAPHSTK_MAX_MEMORY", "8GB")
    X = np.random.default_rng(0).normal(size=(60_000, 2))
    with pytest.raises(MemoryLimitError, match="approx='nystroem'") as err:
        SpectralSupportEstimator().fit(X)
    assert "60000 x 60000" in str(err.value) and "GRAPHSTK_MAX_MEMORY" in str(err.value)
    with pytest.raises(MemoryLimitError, match="approx='nystroem'"):
        SpectralSupportEstimator(kernel="gaussian").fit(torch.as_tensor(X))


def test_kpca_on_large_data_asks_for_rank_before_any_kernel_matrix(monkeypatch):
    X = np.random.default_rng(0).normal(size=(60_000, 2))
    y = -np.ones(60_000, dtype=int)
    y[:10], y[10:20] = 0, 1
    with pytest.raises(ValueError, match="rank=r"):
        LSKPCA().fit(X, y)
    monkeypatch.setenv("GRAPHSTK_MAX_MEMORY", "100MB")
    with pytest.raises(MemoryLimitError, match="rank=r"):
        LSKPCA().fit(X[:5000], y[:5000])


def test_label_catalogue():
    X = np.random.default_rng(1).normal(size=(30, 3))
    y = np.r_[[0, 1] * 5, [-1] * 20]
    for est in (LSKPCA(), MVKPCA(), KernelPCAClassifier(n_components=2)):
        est.fit(X, y)                                                   # the contract itself
        for bad, msg in [(np.r_[y[:-1], -3], "negative labels other than -1 at positions \\[29\\]"),
                         (np.r_[y[:-1].astype(float), np.nan], "NaN or infinite entries at positions \\[29\\]"),
                         (np.r_[y[:-1].astype(float), 0.5], "continuous"),
                         (np.array(list(y[:-1]) + ["x"], dtype=object), "mixes strings"),
                         (-np.ones(30, dtype=int), "0 class"),
                         (np.r_[[0] * 10, [-1] * 20], "1 class"),
                         (y[:10], "y has 10 entries but X has 30 samples")]:
            with pytest.raises(LabelError, match=msg):
                type(est)(**est.get_params()).fit(X, bad)
        with pytest.raises(ValueError, match="requires y"):
            type(est)().fit(X, None)


@pytest.mark.parametrize("est", [LSKPCA(), CoupledKernelEmbedding(), SpectralSupportEstimator(), ParzenWindow()],
                         ids=lambda e: type(e).__name__)
def test_feature_catalogue(est):
    import scipy.sparse as sp
    rng = np.random.default_rng(2)
    X = rng.normal(size=(30, 4))
    y = np.r_[[0, 1] * 5, [-1] * 20]
    fit = (lambda Z: est.fit(Z, y[:len(Z)] if len(Z) == 30 else None)) if isinstance(est, LSKPCA) else est.fit
    cases = [(X + 1j, "Complex data not supported"), (sp.csr_matrix(X), "(?i)sparse"),
             (np.r_[X[:-1], [[np.nan] * 4]], "NaN"), (np.r_[X[:-1], [[np.inf] * 4]], "infinity"),
             (X[:, 0], "Expected 2D array"), (np.empty((0, 4)), "0 sample"),
             (torch.as_tensor(X + 0j), "Complex data not supported"), (torch.as_tensor(X).to_sparse(), "dense")]
    for Z, msg in cases:
        with pytest.raises((ValueError, TypeError), match=msg):
            fit(Z)
    if not isinstance(est, LSKPCA):
        est.fit(X)
        with pytest.raises(ValueError, match="4 features"):
            (est.transform if isinstance(est, CoupledKernelEmbedding) else est.score_samples)(X[:, :3])


def test_bad_parameters_name_the_value():
    X = np.random.default_rng(3).normal(size=(20, 2))
    y = np.r_[[0, 1] * 3, [-1] * 14]
    for est, msg in [(LSKPCA(c=-1.0), r"The 'c' parameter of LSKPCA must be a float in the range \[0.0, inf\). "
                                      r"Got -1.0 instead"),
                     (LSKPCA(s=0.0), "The 's' parameter of LSKPCA must be a float in the range"),
                     (LSKPCA(sigma=-2.0), "The 'sigma' parameter of LSKPCA must be a float in the range"),
                     (KernelPCAClassifier(n_components=0), "The 'n_components' parameter of KernelPCAClassifier "
                                                           r"must be an int in the range \[1, inf\). Got 0 instead"),
                     (LSKPCA(rank=0), "The 'rank' parameter of LSKPCA must be"),
                     (LSKPCA(kernel="diffusion", tau=-1.0), "The 'tau' parameter of LSKPCA must be")]:
        with pytest.raises(ValueError, match=msg):
            est.fit(X, y)
    with pytest.warns(UserWarning, match="n_components=50 exceeds the rank 20"):
        KernelPCAClassifier(n_components=50).fit(X, y)
    with pytest.raises(ValueError, match="The 'dtype' parameter of SpectralSupportEstimator must be"):
        SpectralSupportEstimator(dtype=torch.int64).fit(X)
    with pytest.raises(ValueError, match="The 'dtype' parameter of ParzenWindow must be"):
        ParzenWindow(dtype="int8").fit(X)
    assert SpectralSupportEstimator(dtype="float32").fit(X.astype(np.float32)).eigenvalues_.dtype == torch.float64
