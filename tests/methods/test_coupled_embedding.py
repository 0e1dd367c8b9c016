"""Coupled kernel embedding (slides Eqs. 24-28)."""
import numpy as np
import pytest
import scipy.linalg
import torch
from sklearn.exceptions import NotFittedError

from graphstk.methods.coupled_embedding import CoupledKernelEmbedding, bipartite_laplacian, coupled_kernel_embedding
from graphstk.operators import gram


def paired(n=30, seed=0):
    """HR points in R^6, LR = a noisy 3-D 'downsampling' of the same objects."""
    rng = np.random.default_rng(seed)
    H = rng.normal(size=(n, 6))
    L = 0.5 * (H[:, 0::2] + H[:, 1::2]) + 0.05 * rng.normal(size=(n, 3))
    return L, H


def pencil(model):
    KL = gram(model.XL_fit_, kernel=model.kernel_l_).numpy()
    KH = gram(model.XH_fit_, kernel=model.kernel_h_).numpy()
    Z = scipy.linalg.block_diag(KL, KH)
    G = bipartite_laplacian(model.W_).numpy()
    A = Z @ G @ Z + model.eps_ * Z  # objective J + eps ||f||_H^2 (eps = 0: Eq. 28 as printed)
    B = Z @ Z
    u = np.vstack([model.coef_l_.numpy(), model.coef_h_.numpy()])
    return Z, G, A, B, u


@pytest.mark.parametrize("reg", [0.0, 1e-3])
def test_generalized_eigen_equation_and_trivial_vector(reg):
    L, H = paired()
    m = CoupledKernelEmbedding(n_components=4, sigma_l=0.7, sigma_h=1.0, reg=reg).fit_modes(L, H)
    Z, G, A, B, u = pencil(m)
    lam = m.eigenvalues_.numpy()
    assert (m.eps_ == 0.0) == (reg == 0.0)
    # A u = lambda B u (Eq. 28) up to the Lagrange term of the constraint Y^T 1 = 0, which lies
    # along Zk 1 and vanishes when reg = 0 (the constant is then an exact eigenvector)
    res = A @ u - B @ u * lam
    c = Z @ np.ones(len(Z))
    c /= np.linalg.norm(c)
    if reg > 0:
        res = res - np.outer(c, c @ res)
    assert np.abs(res).max() < 1e-8 * np.abs(A).max() * max(1.0, np.abs(u).max())
    # B-orthonormal: the training embedding Y = Zk U is orthonormal (U^T Zk Zk U = I) and centred
    Y = np.vstack([m.embedding_l_.numpy(), m.embedding_h_.numpy()])
    np.testing.assert_allclose(Y, Z @ u, atol=1e-9)
    np.testing.assert_allclose(u.T @ B @ u, np.eye(4), atol=1e-8)
    np.testing.assert_allclose(Y.sum(0), 0.0, atol=1e-8)
    assert np.all(np.diff(lam) >= -1e-10) and lam[0] > 1e-6
    assert np.all(Y.std(0) > 0.1 / np.sqrt(len(Y)))  # no constant (or vanishing) component
    # the constant embedding is a solution with lambda = 0 (G 1 = 0) of Eq. 28 and was discarded:
    # u0 = Zk^-1 1 solves the unregularised pencil, every returned u is B-orthogonal to it
    u0 = np.linalg.solve(Z, np.ones(len(Z)))
    assert np.abs(Z @ G @ Z @ u0).max() < 1e-7 * np.abs(B @ u0).max()
    np.testing.assert_allclose(u.T @ B @ u0, 0.0, atol=1e-7 * np.linalg.norm(B @ u0))
    if reg == 0.0:  # the returned eigenvalues are the full pencil's, minus the trivial 0
        full = scipy.linalg.eigh(A, B, eigvals_only=True)
        assert abs(full[0]) < 1e-8 * full[1]
        np.testing.assert_allclose(lam, full[1:5], rtol=1e-7)


@pytest.mark.parametrize("reg", [0.0, 1e-2])
def test_objective_of_eq25_equals_eigenvalue(reg):
    L, H = paired(seed=1)
    m = CoupledKernelEmbedding(n_components=3, reg=reg).fit_modes(L, H)
    YL, YH, W = m.embedding_l_.numpy(), m.embedding_h_.numpy(), m.W_.numpy()
    KL = gram(L, kernel=m.kernel_l_).numpy()
    KH = gram(H, kernel=m.kernel_h_).numpy()
    for k in range(3):
        J = sum((YL[i, k] - YH[j, k]) ** 2 * W[i, j] for i in range(len(YL)) for j in range(len(YH)))
        uL, uH = m.coef_l_[:, k].numpy(), m.coef_h_[:, k].numpy()
        rkhs = uL @ KL @ uL + uH @ KH @ uH  # ||f_k||_H^2 over both modes
        assert J + m.eps_ * rkhs == pytest.approx(float(m.eigenvalues_[k]), rel=1e-7)


def test_out_of_sample_of_training_points_equals_in_sample():
    L, H = paired(seed=2)
    m = CoupledKernelEmbedding(n_components=3, reg=1e-3).fit_modes(L, H)
    torch.testing.assert_close(torch.from_numpy(m.transform_l(L)), m.embedding_l_, rtol=1e-9, atol=1e-10)
    torch.testing.assert_close(m.transform_h(torch.from_numpy(H)), m.embedding_h_, rtol=1e-9, atol=1e-10)
    assert m.transform_l(L[:4] + 0.01).shape == (4, 3)
    assert m.distances(L[:5], H).shape == (5, 30)


def test_rank_deficient_kernel_has_no_spurious_solutions():
    """Linear kernels have rank <= d: the null space of Zk must not produce lambda = 0 vectors."""
    L, H = paired(n=25, seed=3)
    W = np.eye(25) + 0.1
    res = coupled_kernel_embedding(gram(L, kernel="linear"), gram(H, kernel="linear"), W,
                                   n_components=5, reg=0.0)
    assert float(res.eigenvalues.min()) > 1e-6
    # the constant function is not linear: it is only partly representable
    assert res.constant_residual > 0.1
    Y = torch.cat([res.embedding_l, res.embedding_h]).numpy()
    np.testing.assert_allclose(Y.T @ Y, np.eye(5), atol=1e-8)
    np.testing.assert_allclose(Y.sum(0), 0.0, atol=1e-8)
    # rank 3 + 6 = 9, minus the constant direction: at most 8 components
    with pytest.raises(ValueError, match="n_components"):
        coupled_kernel_embedding(gram(L, kernel="linear"), gram(H, kernel="linear"), W, n_components=9)


def test_embedding_couples_pairs_and_classes():
    rng = np.random.default_rng(4)
    n = 40
    y = np.repeat([0, 1], n // 2)
    H = rng.normal(size=(n, 6)) + 3.0 * y[:, None]
    L = 0.5 * (H[:, 0::2] + H[:, 1::2]) + 0.05 * rng.normal(size=(n, 3))
    m = CoupledKernelEmbedding(n_components=2, reg=1e-4).fit_modes(L, H, y=y)
    # W has no edge between classes: the centred class indicator has J ~ 0 (only its small RKHS
    # penalty) and comes first; only the global constant is discarded, not per-component constants
    assert float(m.eigenvalues_[0]) < 1e-2 * float(m.eigenvalues_[1])
    first = np.concatenate([m.embedding_l_[:, 0].numpy(), m.embedding_h_[:, 0].numpy()])
    labels = np.concatenate([y, y])
    a, b = first[labels == 0], first[labels == 1]
    assert a.max() < b.min() or b.max() < a.min()
    # pure pairing W = I (Eq. 25 only asks l_i and h_i to coincide): with full-rank kernels the
    # optimum puts every pair on the same spot, J = 0, and pairs are matched exactly
    L2, H2 = paired(n=20, seed=5)
    m2 = CoupledKernelEmbedding(n_components=3, sigma_l=0.5, sigma_h=0.8, reg=0.0).fit_modes(L2, H2, W=np.eye(20))
    assert float(m2.eigenvalues_.abs().max()) < 1e-8
    torch.testing.assert_close(m2.embedding_l_, m2.embedding_h_, rtol=0, atol=1e-6)
    assert np.array_equal(m2.distances(L2, H2).argmin(1), np.arange(20))


def test_held_out_pairs_are_matched_in_the_common_space():
    """Eq. 24: match new LR images to new HR images by distance in the common space. With the
    RKHS penalty and a kNN affinity the held-out matching rate is far above chance (1/20)."""
    hits = []
    for seed in range(3):
        L, H = paired(n=60, seed=seed)
        m = CoupledKernelEmbedding(n_components=5, reg=1e-3, n_neighbors=5).fit_modes(L[:40], H[:40])
        hits.append(float((m.distances(L[40:], H[40:]).argmin(1) == np.arange(20)).mean()))
    assert np.mean(hits) > 4 / 20


def test_coupled_embedding_bad_inputs():
    L, H = paired(n=10)
    with pytest.raises(ValueError, match="paired"):
        CoupledKernelEmbedding().fit_modes(L, H[:8])
    with pytest.raises(ValueError, match="shape"):
        CoupledKernelEmbedding().fit_modes(L, H, W=np.ones((10, 9)))
    with pytest.raises(ValueError, match="non-negative"):
        CoupledKernelEmbedding().fit_modes(L, H, W=-np.ones((10, 10)))
    with pytest.raises(ValueError, match="not coupled"):
        CoupledKernelEmbedding().fit_modes(L, H, W=np.zeros((10, 10)))
    with pytest.raises(ValueError, match="n_components"):
        CoupledKernelEmbedding(n_components=0).fit_modes(L, H)
    with pytest.raises(ValueError, match="The 'sigma_l' parameter of CoupledKernelEmbedding must be"):
        CoupledKernelEmbedding(sigma_l=-1.0).fit_modes(L, H)
    with pytest.raises(NotFittedError):
        CoupledKernelEmbedding().transform(L)
    m = CoupledKernelEmbedding().fit_modes(L, H)
    with pytest.raises(ValueError, match="transform_l"):
        m.transform(np.hstack([L, H]))
    with pytest.raises(ValueError, match="features"):
        m.transform_l(H)
    # unpaired data with an explicit rectangular W works
    m3 = CoupledKernelEmbedding(n_components=2).fit_modes(L, H[:7], W=np.ones((10, 7)))
    assert m3.embedding_l_.shape == (10, 2) and m3.embedding_h_.shape == (7, 2)


def test_paired_rows_contract_and_the_one_fit():
    """fit(X, y) on paired rows [x_L | x_H] is fit_modes(XL, XH, y=y); two matrices go to fit_modes only."""
    rng = np.random.default_rng(6)
    L, H = paired(n=24, seed=6)
    y = np.repeat([0, 1, 2], 8)
    y[rng.choice(24, 6, replace=False)] = -1
    X = np.hstack([L, H])
    a = CoupledKernelEmbedding(n_components=3, n_features_l=3).fit(X, y)
    b = CoupledKernelEmbedding(n_components=3).fit_modes(L, H, y=y)
    torch.testing.assert_close(a.coef_l_, b.coef_l_)
    Z = a.transform(X)
    assert isinstance(Z, np.ndarray) and Z.shape == (24, 6)
    np.testing.assert_allclose(Z, np.hstack([b.transform_l(L), b.transform_h(H)]), atol=1e-10)
    np.testing.assert_allclose(a.fit_transform(X, y), Z, atol=1e-10)
    assert list(a.get_feature_names_out())[:2] == ["coupledkernelembedding0", "coupledkernelembedding1"]
    # labeled points of different classes are not coupled; unlabeled ones keep their affinities
    W = a.W_.numpy()
    lab = y >= 0
    diff = (y[:, None] != y[None, :]) & lab[:, None] & lab[None, :]
    assert np.all(W[diff] == 0) and np.all(W[~diff] > 0)
    with pytest.raises(ValueError):   # a second matrix is not labels
        CoupledKernelEmbedding(n_components=3).fit(L, H)
    with pytest.raises(ValueError, match=r"1 feature\(s\)"):
        CoupledKernelEmbedding().fit(X[:, :1])
    Zt = a.transform(torch.from_numpy(X))
    assert isinstance(Zt, torch.Tensor)
