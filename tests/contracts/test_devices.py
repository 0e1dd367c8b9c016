"""Every estimator and function on every device: inputs on ``cpu`` (always) and ``cuda`` (when
available) give results on that device, equal to the NumPy / CPU result within ``RTOL`` (float64;
the devices sum in different orders, so equality is up to rounding, never bitwise).

Covered: the graph estimators (Label-Prop, STKR, FeatureSTKR), the Fredholm, LapRLSC, kernel-ridge,
random-feature and MMD modules, semi-supervised KPCA, the coupled kernel embedding and the
separating-kernel estimators.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.base import clone
from torch_geometric.data import Data

from dense_reference import random_graph
from graphstk import STKR, LabelPropagation
from graphstk.features import RandomBinningFeatures, RandomFourierFeatures
from graphstk.methods import (LRKPCA, LSKPCA, MVKPCA, CoupledKernelEmbedding, FredholmRLSC, FredholmSVM,
                              KernelPCAClassifier, KernelRidge, LapRLSC, ParzenWindow, RandomFeatureFredholm,
                              RandomFeatureRidge, SpectralSupportEstimator, kernel_ridge_solve)
from graphstk.methods.fredholm import (FredholmKernel, fredholm_gram, fredholm_random_features,
                                       gaussian_fredholm_path, solve_hinge)
from graphstk.methods.laprls import graph_laplacian
from graphstk.methods.separating import FILTERS, filter_g, landweber_iteration, nu_method_iteration
from graphstk.mmd import mean_embedding, median_heuristic, mmd2, mmd_test
from graphstk.operators import DenseOperator, FeatureKernelOperator, gram
from graphstk.spectral.transforms import InverseLaplacian, Polynomial, TopD

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(),
                                                                  reason="no CUDA device"))]
RTOL, ATOL = 1e-7, 1e-9


def same(out, ref, device):
    assert isinstance(out, torch.Tensor) and out.device.type == device
    np.testing.assert_allclose(out.detach().cpu().numpy(), np.asarray(ref), rtol=RTOL, atol=ATOL)


# ----------------------------------------------------------------------------- graph estimators
GRAPH_ESTIMATORS = {
    "LP": lambda s: LabelPropagation(0.9, setting=s),
    "SP-Lap": lambda s: STKR(InverseLaplacian(0.9), 1e-2, setting=s),
    "SP-poly": lambda s: STKR(Polynomial.monomial(4), 1e-2, setting=s),
    "SP-topd": lambda s: STKR(TopD(6), 1e-2, setting=s),
    "KRR": lambda s: STKR(Polynomial.monomial(1), 1e-2, setting=s),
}


def _graph(device):
    W, ei, w = random_graph(40, 0.15, 7)
    y = torch.randint(0, 3, (40,), generator=torch.Generator().manual_seed(7))
    return Data(edge_index=ei.to(device), edge_weight=w.to(device), y=y.to(device), num_nodes=40)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(GRAPH_ESTIMATORS))
@pytest.mark.parametrize("setting", ["transductive", "inductive"])
def test_graph_estimators_on_device_equal_cpu(device, name, setting):
    hidden = [35, 36, 37, 38, 39] if setting == "inductive" else None
    train = torch.arange(10)
    ref = GRAPH_ESTIMATORS[name](setting).fit(_graph("cpu"), train, hidden_idx=hidden)
    est = GRAPH_ESTIMATORS[name](setting).fit(_graph(device), train.to(device), hidden_idx=hidden)
    scores = est.decision_function()
    assert scores.device.type == device
    torch.testing.assert_close(scores.cpu(), ref.decision_function(), rtol=1e-8, atol=1e-10)
    assert torch.equal(est.predict().cpu(), ref.predict())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("setting", ["transductive", "inductive"])
@pytest.mark.parametrize("knn", [0, 3], ids=["graph", "feature neighbours"])
def test_feature_stkr_on_device_equals_cpu(device, setting, knn):
    from graphstk.methods import FeatureSTKR

    def data(dev):
        d = _graph(dev)
        g = torch.Generator().manual_seed(3)
        x = torch.rand(40, 8, generator=g, dtype=torch.float64)
        d.x = (x * (torch.rand(40, 8, generator=g) < 0.5)).to(dev)
        return d
    hidden = [35, 36, 37, 38, 39] if setting == "inductive" else None
    make = lambda: FeatureSTKR(depth=4, features="tfidf", setting=setting, knn=knn, knn_weight=0.3)  # noqa: E731
    train = torch.arange(10)
    ref = make().fit(data("cpu"), train, hidden_idx=hidden)
    est = make().fit(data(device), train.to(device), hidden_idx=hidden)
    scores = est.decision_function()
    assert scores.device.type == device
    torch.testing.assert_close(scores.cpu(), ref.decision_function(), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("device", DEVICES)
def test_stkr_on_a_dense_gram_on_device_equals_cpu(device):
    X = torch.randn(30, 3, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    y = torch.randint(0, 2, (30,), generator=torch.Generator().manual_seed(2))
    K = gram(X, kernel="gaussian", sigma=1.0).double()
    ref = STKR(InverseLaplacian(0.9), 1e-2).fit(DenseOperator(K), torch.arange(8), y=y).decision_function()
    out = STKR(InverseLaplacian(0.9), 1e-2).fit(DenseOperator(K.to(device)), torch.arange(8), y=y.to(device))
    scores = out.decision_function()
    assert scores.device.type == device
    torch.testing.assert_close(scores.cpu(), ref, rtol=1e-8, atol=1e-10)


# ---------------------------------------- Fredholm, LapRLSC, kernel ridge, random features, MMD
@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    y = (X[:, 0] + 0.3 * X[:, 1] > 0).astype(int) + (X[:, 2] > 0.8)
    ys = y.copy()
    ys[np.random.default_rng(1).random(60) < 0.7] = -1
    assert set(ys[ys >= 0]) == {0, 1, 2}
    return X, y, ys, rng.normal(size=(9, 4))


CLASSIFIERS = [
    FredholmRLSC.instance("FredGauss(N)", 1.5, lam=1e-3, lam_scale="trace"),
    FredholmRLSC.instance("FredLin1", 1.5, lam=1e-2),
    FredholmSVM.instance("FredGauss", 1.5, lam=1e-2, lam_scale="trace", random_state=0),
    RandomFeatureFredholm.instance("FredGauss(N)", 1.5, lam=1e-3, n_components=40, random_state=0),
    LapRLSC(sigma=1.5, n_neighbors=5),
    LapRLSC(sigma=1.5, n_neighbors=5, landmarks=20, random_state=0),
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
    op, ref = FredholmKernel(Td, Xd[:7], Xd, outer_sigma=1.5, inner_sigma=1.5), \
        FredholmKernel(T, X[:7], X, outer_sigma=1.5, inner_sigma=1.5)
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

# ---------------------------------------- semi-supervised KPCA, coupled embedding, separating kernels
def _moons(n=80, seed=0):
    from sklearn.datasets import make_moons
    X, y = make_moons(n, noise=0.1, random_state=seed)
    yy = -np.ones(n, dtype=np.int64)
    yy[:12] = y[:12]
    return X, yy


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("make", [lambda: LSKPCA(sigma=0.3), lambda: LRKPCA(sigma=0.3, max_iter=10),
                                  lambda: MVKPCA(sigma=0.3), lambda: KernelPCAClassifier(sigma=0.3, n_components=4),
                                  lambda: LSKPCA(kernel="diffusion", n_neighbors=6, tau=3.0),
                                  lambda: LSKPCA(kernel="mixture", sigma=0.3, n_neighbors=6, tau=3.0)],
                         ids=["LSKPCA", "LRKPCA", "MVKPCA", "KernelPCAClassifier", "LSKPCA-diffusion", "LSKPCA-mixture"])
def test_sskpca_estimators_on_device(make, device):
    X, y = _moons()
    ref = make().fit(X, y)
    est = make().fit(torch.as_tensor(X, device=device), torch.as_tensor(y, device=device))
    Xd = torch.as_tensor(X, device=device)
    same(est.transform(Xd), ref.transform(X), device)
    same(est.decision_function(Xd), ref.decision_function(X), device)
    same(est.predict(Xd), ref.predict(X), device)


@pytest.mark.parametrize("device", DEVICES)
def test_precomputed_kernel_operator_on_device(device):
    X, y = _moons()
    K = np.exp(-5.0 * ((X[:, None] - X[None]) ** 2).sum(-1))
    ref = LSKPCA(kernel="precomputed").fit(K, y)
    op = DenseOperator(torch.as_tensor(K, device=device))
    est = LSKPCA(kernel="precomputed").fit(op, y)
    same(est.decision_function(op), ref.decision_function(K), device)
    same(est.predict(op), ref.predict(K), device)


@pytest.mark.parametrize("device", DEVICES)
def test_coupled_embedding_on_device(device):
    rng = np.random.default_rng(1)
    H = rng.normal(size=(30, 4))
    X = np.hstack([0.5 * (H[:, 0::2] + H[:, 1::2]), H])
    ref = CoupledKernelEmbedding(n_components=3, n_features_l=2).fit(X)
    est = CoupledKernelEmbedding(n_components=3, n_features_l=2).fit(torch.as_tensor(X, device=device))
    # eigenvectors are defined up to sign: compare |values|
    out = est.transform(torch.as_tensor(X, device=device))
    assert out.device.type == torch.device(device).type
    np.testing.assert_allclose(out.abs().cpu().numpy(), np.abs(ref.transform(X)), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("filt", FILTERS)
@pytest.mark.parametrize("approx", [None, "nystroem"])
def test_support_estimator_every_filter_on_device(filt, approx, device):
    rng = np.random.default_rng(2)
    X, Z = rng.normal(size=(60, 3)), rng.normal(size=(20, 3)) * 1.5
    kw = dict(filter=filt, lam=[1e-3, 0.05], approx=approx, n_components=30, random_state=0)
    ref = SpectralSupportEstimator(**kw).fit(X)
    est = SpectralSupportEstimator(**kw).fit(torch.as_tensor(X, device=device))
    Zd = torch.as_tensor(Z, device=device)
    same(est.score_samples(Zd), ref.score_samples(Z), device)
    one = SpectralSupportEstimator(filter=filt, approx=approx, n_components=30, random_state=0)
    ref1, est1 = one.fit(X), SpectralSupportEstimator(**one.get_params()).fit(torch.as_tensor(X, device=device))
    same(est1.decision_function(Zd), ref1.decision_function(Z), device)
    same(est1.predict(Zd), ref1.predict(Z), device)


@pytest.mark.parametrize("device", DEVICES)
def test_support_estimator_on_a_kernel_operator_and_parzen_on_device(device):
    rng = np.random.default_rng(3)
    P = rng.normal(size=(50, 3))
    K = np.exp(-np.sqrt(((P[:, None] - P[None]) ** 2).sum(-1)))
    ref = SpectralSupportEstimator(kernel=DenseOperator(torch.as_tensor(K)), lam=0.01).fit(np.arange(30))
    est = SpectralSupportEstimator(kernel=DenseOperator(torch.as_tensor(K, device=device)), lam=0.01)
    est.fit(torch.arange(30, device=device))
    same(est.score_samples(torch.arange(30, 50, device=device)), ref.score_samples(np.arange(30, 50)), device)
    pw_ref = ParzenWindow().fit(P[:30])
    pw = ParzenWindow().fit(torch.as_tensor(P[:30], device=device))
    same(pw.score_samples(torch.as_tensor(P[30:], device=device)), pw_ref.score_samples(P[30:]), device)
    same(pw.predict(torch.as_tensor(P[30:], device=device)), pw_ref.predict(P[30:]), device)


@pytest.mark.parametrize("device", DEVICES)
def test_filters_and_iterations_on_device(device):
    s = torch.linspace(0, 1, 50, dtype=torch.float64)
    lams = torch.tensor([1e-3, 0.1], dtype=torch.float64)
    for f in FILTERS:
        same(filter_g(f, s.to(device), lams.to(device)), filter_g(f, s, lams).numpy(), device)
    A = torch.randn(20, 20, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    Kn = A @ A.T / 20
    Kn = Kn / Kn.diagonal().sqrt()[:, None] / Kn.diagonal().sqrt()[None, :]
    Kx = Kn[:, :5]
    same(landweber_iteration(Kn.to(device), Kx.to(device), 7), landweber_iteration(Kn, Kx, 7).numpy(), device)
    same(nu_method_iteration(Kn.to(device), Kx.to(device), 4), nu_method_iteration(Kn, Kx, 4).numpy(), device)
