"""Every estimator of semi-supervised KPCA, the coupled kernel embedding and the separating-kernel
paper on every device: tensors in on ``cpu`` (always) and ``cuda`` (when available) give tensors out on
that device, equal to the NumPy-in result on the CPU to ``rtol=1e-7`` (float64; the device's kernels and
eigensolvers sum in other orders, nothing else differs).
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

from graphstk.methods import (
    LRKPCA, LSKPCA, MVKPCA, CoupledKernelEmbedding, KernelPCAClassifier, ParzenWindow, SpectralSupportEstimator,
)
from graphstk.methods.separating import FILTERS, filter_g, landweber_iteration, nu_method_iteration
from graphstk.operators import DenseOperator

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
RTOL, ATOL = 1e-7, 1e-9


def _moons(n=80, seed=0):
    from sklearn.datasets import make_moons
    X, y = make_moons(n, noise=0.1, random_state=seed)
    yy = -np.ones(n, dtype=np.int64)
    yy[:12] = y[:12]
    return X, yy


def _same(out, ref, device):
    assert isinstance(out, torch.Tensor) and out.device.type == torch.device(device).type
    np.testing.assert_allclose(out.cpu().numpy(), np.asarray(ref), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("make", [lambda: LSKPCA(gamma=5.0), lambda: LRKPCA(gamma=5.0, max_iter=10),
                                  lambda: MVKPCA(gamma=5.0), lambda: KernelPCAClassifier(gamma=5.0, n_components=4),
                                  lambda: LSKPCA(kernel="diffusion", n_neighbors=6, tau=3.0),
                                  lambda: LSKPCA(kernel="mixture", gamma=5.0, n_neighbors=6, tau=3.0)],
                         ids=["LSKPCA", "LRKPCA", "MVKPCA", "KernelPCAClassifier", "LSKPCA-diffusion", "LSKPCA-mixture"])
def test_sskpca_estimators_on_device(make, device):
    X, y = _moons()
    ref = make().fit(X, y)
    est = make().fit(torch.as_tensor(X, device=device), torch.as_tensor(y, device=device))
    Xd = torch.as_tensor(X, device=device)
    _same(est.transform(Xd), ref.transform(X), device)
    _same(est.decision_function(Xd), ref.decision_function(X), device)
    _same(est.predict(Xd), ref.predict(X), device)


@pytest.mark.parametrize("device", DEVICES)
def test_precomputed_kernel_operator_on_device(device):
    X, y = _moons()
    K = np.exp(-5.0 * ((X[:, None] - X[None]) ** 2).sum(-1))
    ref = LSKPCA(kernel="precomputed").fit(K, y)
    op = DenseOperator(torch.as_tensor(K, device=device))
    est = LSKPCA(kernel="precomputed").fit(op, y)
    _same(est.decision_function(op), ref.decision_function(K), device)
    _same(est.predict(op), ref.predict(K), device)


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
    _same(est.score_samples(Zd), ref.score_samples(Z), device)
    one = SpectralSupportEstimator(filter=filt, approx=approx, n_components=30, random_state=0)
    ref1, est1 = one.fit(X), SpectralSupportEstimator(**one.get_params()).fit(torch.as_tensor(X, device=device))
    _same(est1.decision_function(Zd), ref1.decision_function(Z), device)
    _same(est1.predict(Zd), ref1.predict(Z), device)


@pytest.mark.parametrize("device", DEVICES)
def test_support_estimator_on_a_kernel_operator_and_parzen_on_device(device):
    rng = np.random.default_rng(3)
    P = rng.normal(size=(50, 3))
    K = np.exp(-np.sqrt(((P[:, None] - P[None]) ** 2).sum(-1)))
    ref = SpectralSupportEstimator(kernel=DenseOperator(torch.as_tensor(K)), lam=0.01).fit(np.arange(30))
    est = SpectralSupportEstimator(kernel=DenseOperator(torch.as_tensor(K, device=device)), lam=0.01)
    est.fit(torch.arange(30, device=device))
    _same(est.score_samples(torch.arange(30, 50, device=device)), ref.score_samples(np.arange(30, 50)), device)
    pw_ref = ParzenWindow().fit(P[:30])
    pw = ParzenWindow().fit(torch.as_tensor(P[:30], device=device))
    _same(pw.score_samples(torch.as_tensor(P[30:], device=device)), pw_ref.score_samples(P[30:]), device)
    _same(pw.predict(torch.as_tensor(P[30:], device=device)), pw_ref.predict(P[30:]), device)


@pytest.mark.parametrize("device", DEVICES)
def test_filters_and_iterations_on_device(device):
    s = torch.linspace(0, 1, 50, dtype=torch.float64)
    lams = torch.tensor([1e-3, 0.1], dtype=torch.float64)
    for f in FILTERS:
        _same(filter_g(f, s.to(device), lams.to(device)), filter_g(f, s, lams).numpy(), device)
    A = torch.randn(20, 20, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    Kn = A @ A.T / 20
    Kn = Kn / Kn.diagonal().sqrt()[:, None] / Kn.diagonal().sqrt()[None, :]
    Kx = Kn[:, :5]
    _same(landweber_iteration(Kn.to(device), Kx.to(device), 7), landweber_iteration(Kn, Kx, 7).numpy(), device)
    _same(nu_method_iteration(Kn.to(device), Kx.to(device), 4), nu_method_iteration(Kn, Kx, 4).numpy(), device)
