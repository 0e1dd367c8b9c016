"""RLSC, KRLSC and LinearSVM against independent computations (dense and sparse features)."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from graphstk.data.vector import VectorDataset
from graphstk.experiments import vector_data
from graphstk.experiments.config import ConfigError, parse_config
from graphstk.experiments.pipeline import run_experiment
from graphstk.experiments.protocols import (FixedSplits, LabeledPerClass, OneClass, ProtocolError, cv_folds,
                                            draw_labeled_per_class, get_protocol)
from graphstk.experiments.registry import (MethodEntry, MethodInput, UnknownMethodError, get_method, register_method,
                                           registered_methods)

from vector_doubles import OneClassSpy, Spy, _cfg, _digits, _one_thread, _scramble, fake_loader, tiny  # noqa: F401


def _problem(X, y, labeled, eval_ids, C):
    ym = torch.full_like(y, -1)
    ym[labeled] = y[labeled]
    rest = torch.tensor(sorted(set(range(len(y))) - set(labeled.tolist())))
    return MethodInput(X=X, data=None, y=ym, labeled=labeled, unlabeled=rest, eval=eval_ids, num_classes=C, seed=0)


def test_rlsc_and_krlsc_equal_an_independent_kernel_ridge():
    """Scores against scikit-learn's KernelRidge (alpha = l * lam) on one-vs-rest +-1 targets."""
    from sklearn.kernel_ridge import KernelRidge

    g = torch.Generator().manual_seed(0)
    X = torch.randn(40, 5, generator=g, dtype=torch.float64)
    y = torch.randint(0, 3, (40,), generator=g)
    L, E = torch.arange(0, 15), torch.arange(15, 40)
    prob = _problem(X, y, L, E, 3)
    T = -np.ones((15, 3))
    T[np.arange(15), y[L].numpy()] = 1.0
    lin = get_method("RLSC")
    (s,) = lin.fit_predict(prob, lin.points({"lam": [0.1]}))
    ref = KernelRidge(alpha=15 * 0.1, kernel="linear").fit(X[L].numpy(), T).predict(X[E].numpy())
    np.testing.assert_allclose(s.numpy(), ref, rtol=1e-8, atol=1e-10)
    gau = get_method("KRLSC")
    from scipy.spatial.distance import pdist

    m = float(np.median(pdist(X.numpy())))        # all 40 points are fit points (labeled + unlabeled)
    (s,) = gau.fit_predict(prob, gau.points({"sigma": [0.7], "lam": [1e-3]}))
    ref = KernelRidge(alpha=15 * 1e-3, kernel="rbf", gamma=1 / (2 * (0.7 * m) ** 2)).fit(
        X[L].numpy(), T).predict(X[E].numpy())
    np.testing.assert_allclose(s.numpy(), ref, rtol=1e-7, atol=1e-9)


def test_baselines_accept_sparse_features_with_the_same_scores():
    g = torch.Generator().manual_seed(1)
    X = torch.rand(30, 8, generator=g, dtype=torch.float64) * (torch.rand(30, 8, generator=g) < 0.3)
    y = torch.arange(30) % 2
    prob_d = _problem(X, y, torch.arange(10), torch.arange(10, 30), 2)
    prob_s = _problem(sp.csr_matrix(X.numpy()), y, torch.arange(10), torch.arange(10, 30), 2)
    for name in ("RLSC", "KRLSC", "LinearSVM"):
        e = get_method(name)
        pts = e.points({k: v[:2] for k, v in e.grid.items()})
        for a, b in zip(e.fit_predict(prob_d, pts), e.fit_predict(prob_s, pts)):
            assert a.shape == (20, 2)
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-8)


def test_linear_svm_is_sklearn_linearsvc_and_survives_a_single_labeled_class():
    from sklearn.svm import LinearSVC

    g = torch.Generator().manual_seed(2)
    X = torch.randn(30, 4, generator=g, dtype=torch.float64)
    y = torch.arange(30) % 3
    prob = _problem(X, y, torch.arange(12), torch.arange(12, 30), 3)
    (s,) = get_method("LinearSVM").fit_predict(prob, [{"C": 1.0}])
    ref = LinearSVC(C=1.0, dual="auto", max_iter=10000, random_state=0).fit(X[:12].numpy(), y[:12].numpy())
    np.testing.assert_allclose(s.numpy(), ref.decision_function(X[12:].numpy()))
    one = _problem(X, torch.zeros(30, dtype=torch.long), torch.arange(5), torch.arange(5, 30), 3)
    (s,) = get_method("LinearSVM").fit_predict(one, [{"C": 1.0}])
    assert bool((s.argmax(1) == 0).all())
