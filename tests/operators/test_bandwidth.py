"""Kernel widths (graphstk.operators.bandwidth) against scipy's distances."""
import warnings

import numpy as np
import pytest
import torch
from scipy.spatial.distance import cdist, pdist

from graphstk.exceptions import MemoryLimitError
from graphstk.operators import kth_neighbor_distance_median, median_distance, median_width
from graphstk.operators.kernels import pairwise_distances

from .reference import brute_knn


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


def test_median_width_rules_match_scipy():
    rng = np.random.default_rng(9)
    X, Y = rng.normal(size=(40, 3)), rng.normal(size=(15, 3))
    assert median_width(X, block_size=7) == pytest.approx(np.median(pdist(X)), rel=1e-12)
    assert median_width(X, Y, block_size=3) == pytest.approx(np.median(cdist(X, Y)), rel=1e-12)
    assert median_width(X, metric="manhattan") == pytest.approx(np.median(pdist(X, "cityblock")), rel=1e-12)
    D, nbr = brute_knn(X, 5, "manhattan")
    assert median_width(X, k=5, metric="manhattan") == pytest.approx(np.median(D[np.arange(40), nbr[:, 4]]))


def test_neighbour_count_above_n_is_capped_with_a_warning():
    X = np.random.default_rng(10).normal(size=(20, 2))
    with pytest.warns(UserWarning, match=r"n_neighbors=500 neighbours requested, but there are only 20 points: "
                                         r"capped at n_neighbors=19.*pass n_neighbors <= 19"):
        capped = median_width(X, k=500, param="n_neighbors")
    assert capped == pytest.approx(median_width(X, k=19))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        median_width(X, k=19)


def test_neighbour_cap_warning_reaches_the_support_estimator():
    from graphstk.methods.separating import SpectralSupportEstimator

    X = torch.randn(20, 3, dtype=torch.float64)
    with pytest.warns(UserWarning, match="n_neighbors=500 .* capped at n_neighbors=19"):
        SpectralSupportEstimator(n_neighbors=500).fit(X)


def test_zero_median_says_to_pass_the_width():
    X = np.zeros((10, 2))
    X[0] = 1.0
    with pytest.raises(ValueError, match=r"median 0\.0 .*duplicate points.*pass the width \(sigma\)"):
        median_width(X)
    with pytest.raises(ValueError, match="duplicate points"):
        median_width(X, k=2)
    assert median_distance(X) == 0.0 and kth_neighbor_distance_median(X, 2) == 0.0   # the zero-allowing forms
    with pytest.raises(ValueError, match="n_neighbors must be an integer >= 1"):
        median_width(X, k=0, param="n_neighbors")


def test_all_pairs_refused_before_allocation(monkeypatch):
    monkeypatch.setenv("GRAPHSTK_MAX_MEMORY", "1MB")
    X = torch.zeros(2000, 2, dtype=torch.float64)           # 2M distances = 16 MB
    with pytest.raises(MemoryLimitError, match=r"median heuristic over 1999000 distances.*max_samples=2000"):
        median_width(X, max_samples=None)
    assert median_width(torch.randn(150, 2, dtype=torch.float64), max_samples=None) > 0
