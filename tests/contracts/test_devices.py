"""Every estimator and function of the Fredholm, LapRLSC, kernel-ridge, random-feature and MMD
modules on every device: inputs on ``cpu`` (always) and ``cuda`` (when available) give results
on that device, equal to the NumPy (CPU) result within ``RTOL`` (float64; the devices sum in
different orders, so equality is up to rounding, never bitwise)."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.base import clone

from graphstk.features import RandomBinningFeatures, RandomFourierFeatures
from graphstk.methods import (FredholmRLSC, FredholmSVM, KernelRidge, LapRLSC, RandomFeatureFredholm,
                              RandomFeatureRidge, kernel_ridge_solve)
from graphstk.methods.fredholm import (FredholmKernel, fredholm_gram, fredholm_random_features,
                                       gaussian_fredholm_path, solve_hinge)
from graphstk.methods.laprls import graph_laplacian
from graphstk.mmd import mean_embedding, median_heuristic, mmd2, mmd_test
from graphstk.operators import FeatureKernelOperator

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(),
                                                                  reason="no CUDA device"))]
RTOL, ATOL = 1e-7, 1e-9


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    y = (X[:, 0] + 0.3 * X[:, 1] > 0).astype(int) + (X[:, 2] > 0.8)
    ys = y.copy()
    ys[np.random.default_rng(1).random(60) < 0.7] = -1
    assert set(ys[ys >= 0]) == {0, 1, 2}
    return X, y, ys, rng.normal(size=(9, 4))


def same(out, ref, device):
    assert isinstance(out, torch.Tensor) and out.device.type == device
    np.testing.assert_allclose(out.detach().cpu().numpy(), np.asarray(ref), rtol=RTOL, atol=ATOL)


CLASSIFIERS = [
    FredholmRLSC.instance("FredGauss(N)", 2.0, lam=1e-3, lam_scale="trace"),
    FredholmRLSC.instance("FredLin1", 2.0, lam=1e-2),
    FredholmSVM.instance("FredGauss", 2.0, lam=1e-2, lam_scale="trace", random_state=0),
    RandomFeatureFredholm.instance("FredGauss(N)", 2.0, lam=1e-3, n_components=40, random_state=0),
    LapRLSC(width=2.0, n_neighbors=5),
    LapRLSC(width=2.0, n_neighbors=5, landmarks=20, random_state=0),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("est", CLASSIFIERS, ids=lambda e: repr(e)[:40])
def test_semi_supervised_classifiers(est, device, data):
    X, y, ys, T = data
    ref = est.fit(X, ys)
    dec_ref, pred_ref = ref.decision_function(T), ref.predict(T)
    m = clone(est).fit(torch.from_numpy(X).to(device), torch.from_numpy(ys).to(device))
    Tt = torch.from_numpy(T).to(device)
    tol = {"rtol": 1e-4, "atol": 1e-6} if isinstance(est, FredholmSVM) else {}  # liblinear's tolerance
    out = m.decision_function(Tt)
    assert out.device.type == device
    np.testing.assert_allclose(out.cpu().numpy(), dec_ref, **(tol or {"rtol": RTOL, "atol": ATOL}))
    pred = m.predict(Tt)
    assert pred.device.type == device and np.array_equal(pred.cpu().numpy(), pred_ref)
    if hasattr(m, "decision_path"):
        grid = [1e-2, 1e-1] if not isinstance(m, LapRLSC) else [(1e-3, 1.0), (1e-2, 10.0)]
        for a, b in zip(m.decision_path(Tt, grid), ref.decision_path(T, grid)):
            assert a.device.type == device
            np.testing.assert_allclose(a.cpu().numpy(), b, **(tol or {"rtol": RTOL, "atol": ATOL}))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("est", [KernelRidge(sigma=1.5, lam=0.3), KernelRidge(sigma=1.5, lam=0.3, solver="cg"),
                                 RandomFeatureRidge(sigma=1.5, lam=0.3, n_features=50, random_state=0),
                                 RandomFeatureRidge(features=RandomBinningFeatures(sigma=2.0, n_grids=15,
                                                                                   random_state=0), lam=0.3)],
                         ids=lambda e: repr(e)[:40])
def test_regressors(est, device, data):
    X, y, _, T = data
    target = np.sin(X[:, 0]) + X[:, 1]
    ref = est.fit(X, target).predict(T)
    m = clone(est).fit(torch.from_numpy(X).to(device), torch.from_numpy(target).to(device))
    same(m.predict(torch.from_numpy(T).to(device)), ref, device)
    if isinstance(m, KernelRidge):
        same(m.predict_path(torch.from_numpy(T).to(device), [0.3])[0], ref, device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("est", [RandomFourierFeatures(n_features=30, random_state=0),
                                 RandomFourierFeatures("laplacian", n_features=30, random_state=0, map="phase"),
                                 RandomBinningFeatures(n_grids=12, random_state=0),
                                 RandomBinningFeatures(n_grids=12, random_state=0, sparse_output=True)],
                         ids=lambda e: repr(e)[:40])
def test_transformers(est, device, data):
    X, _, _, T = data
    ref = est.fit(X).transform(T)
    ref = ref.toarray() if hasattr(ref, "toarray") else ref
    m = clone(est).fit(torch.from_numpy(X).to(device))
    out = m.transform(torch.from_numpy(T).to(device))
    same(out.to_dense() if out.layout != torch.strided else out, ref, device)


@pytest.mark.parametrize("device", DEVICES)
def test_functions(device, data):
    X, y, _, T = data
    Xd, Td = torch.from_numpy(X).to(device), torch.from_numpy(T).to(device)
    same(fredholm_gram(Td, None, Xd, "gaussian", "gaussian", 2.0, 2.0, True),
         fredholm_gram(T, None, X, "gaussian", "gaussian", 2.0, 2.0, True), device)
    op, ref = FredholmKernel(Td, Xd[:7], Xd, outer_width=2.0, inner_width=2.0), \
        FredholmKernel(T, X[:7], X, outer_width=2.0, inner_width=2.0)
    v = torch.ones(7, 2, dtype=torch.float64)
    same(op @ v.to(device), ref @ v, device)
    same(op.diagonal(), ref.diagonal(), device)
    same(fredholm_random_features(Td, Xd, "gaussian", 2.0, 2.0, n_components=20, random_state=0),
         fredholm_random_features(T, X, "gaussian", 2.0, 2.0, n_components=20, random_state=0), device)
    for key, (a, b) in gaussian_fredholm_path(Xd[:6], Td, Xd, [1.0, 3.0]).items():
        ra, rb = gaussian_fredholm_path(X[:6], T, X, [1.0, 3.0])[key]
        same(a, ra, device)
        same(b, rb, device)
    K = FeatureKernelOperator(Xd, sigma=1.5)
    for solver in ("direct", "cg"):
        same(kernel_ridge_solve(K, torch.from_numpy(y * 1.0).to(device), 0.5, solver=solver),
             kernel_ridge_solve(FeatureKernelOperator(X, sigma=1.5), y * 1.0, 0.5, solver=solver), device)
    G = fredholm_gram(X[:12], None, X, "gaussian", "gaussian", 2.0, 2.0)
    Y = torch.from_numpy(np.where(y[:12, None] == np.arange(3), 1.0, -1.0))
    out = solve_hinge(G.to(device), Y.to(device), 1e-2)
    assert out.device.type == device
    np.testing.assert_allclose(out.cpu().numpy(), solve_hinge(G, Y, 1e-2).numpy(), rtol=1e-4, atol=1e-6)
    same(graph_laplacian(Xd, 5).to_dense(), graph_laplacian(X, 5).to_dense(), device)


@pytest.mark.parametrize("device", DEVICES)
def test_mmd(device, data):
    X, _, _, T = data
    Xd, Td = torch.from_numpy(X[:20]).to(device), torch.from_numpy(X[20:35] + 0.5).to(device)
    A, B = X[:20], X[20:35] + 0.5
    for est in ("unbiased", "biased"):
        same(mmd2(Xd, Td, sigma=1.0, estimator=est), mmd2(A, B, sigma=1.0, estimator=est), device)
    assert median_heuristic(Xd, Td) == pytest.approx(median_heuristic(A, B), rel=1e-12)
    emb = mean_embedding(Xd, sigma=1.0)
    same(emb(Td), mean_embedding(A, sigma=1.0)(B), device)
    res, ref = mmd_test(Xd, Td, sigma=1.0, n_permutations=60, seed=3), mmd_test(A, B, sigma=1.0, n_permutations=60,
                                                                                   seed=3)
    assert res.statistic == pytest.approx(ref.statistic, rel=1e-9) and res.p_value == ref.p_value
