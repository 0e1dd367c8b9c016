"""Semi-supervised kernel PCA (Walder et al.): every solver against an independent dense computation.

The references here work in the paper's own coordinates ``alpha`` (``f = K alpha``) with dense
NumPy/SciPy, never through graphstk's kernel basis.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
import scipy.optimize
import torch

from graphstk.methods import sskpca
from graphstk.methods.sskpca import (
    DECOMPOSITIONS, LRKPCA, LSKPCA, MVKPCA, KernelPCAClassifier, fit_linear_head, kernel_basis, ls_kpca_path,
    lr_kpca, secular_solve,
)
from graphstk.operators import DenseOperator, MixtureKernelOperator, SpectralKernelOperator, gaussian_knn_graph
from graphstk.spectral import diffusion_kernel, laplacian_eigenpairs


# ---------------------------------------------------------------------------
# dense references in alpha coordinates
# ---------------------------------------------------------------------------
#: the width of the Gaussian exp(-10 ||x - y||^2) (gamma = 1 / (2 sigma^2) = 10)
SIGMA_10 = 1.0 / np.sqrt(20.0)


def random_problem(m=12, n_lab=5, seed=0, rank=None):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, rank or m))
    K = A @ A.T / m + (1e-1 * np.eye(m) if rank is None else 0)
    lab = rng.choice(m, n_lab, replace=False)
    y = -np.ones(m, dtype=int)
    y[lab] = np.r_[0, 1, rng.integers(0, 2, n_lab - 2)]
    return K, lab, y


def P_of(K, centered=True):
    m = K.shape[0]
    E = np.full((m, m), 1.0 / m)
    return K @ K - K @ E @ K if centered else K @ K


def ls_objective(K, lab, t, c, a):
    return float(a @ K @ a + c * np.sum((K[lab] @ a - t) ** 2))


def brute_force_ls(K, lab, t, c, s2, centered=True, starts=20, seed=1):
    """min a^T K a + c ||K_L a - t||^2 on {a^T P a = s2}: a(w) = sqrt(s2) w / sqrt(w^T P w), many starts."""
    P = P_of(K, centered)
    rng = np.random.default_rng(seed)

    def obj(w):
        q = w @ P @ w
        return ls_objective(K, lab, t, c, np.sqrt(s2 / q) * w)

    best = np.inf
    for _ in range(starts):
        r = scipy.optimize.minimize(obj, rng.standard_normal(K.shape[0]), method="BFGS",
                                    options={"gtol": 1e-10, "maxiter": 5000})
        best = min(best, r.fun)
    return best


def fit_ls(K, y, c, s, centered=True):
    return LSKPCA(kernel="precomputed", c=c, s=s, centered=centered).fit(torch.as_tensor(K), torch.as_tensor(y))


# ---------------------------------------------------------------------------
# LS-KPCA
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("seed,c,s", [(0, 1.0, 0.5), (1, 10.0, 2.0), (2, 0.3, 0.05)])
@pytest.mark.parametrize("centered", [True, False])
def test_ls_kpca_is_the_global_minimum(seed, c, s, centered):
    K, lab, y = random_problem(seed=seed)
    m = K.shape[0]
    est = fit_ls(K, y, c, s, centered)
    a = est.dual_coef_[:, 0]
    t = np.where(y[lab] == 1, 1.0, -1.0)
    P = P_of(K, centered)
    s2 = m * s * s
    # constraint (11)
    assert a @ P @ a == pytest.approx(s2, rel=1e-8)
    # dense Lagrangian: (C - zeta P) a = b with C - zeta P PSD (global optimality certificate), Eq. 14
    C = K + c * K[lab].T @ K[lab]
    b = c * K[lab].T @ t
    zeta = est.zeta_[0]
    assert np.allclose((C - zeta * P) @ a, b, atol=1e-7 * max(1.0, np.abs(b).max()))
    assert np.linalg.eigvalsh(C - zeta * P).min() > -1e-8 * np.abs(C).max()
    # brute force over the constraint set agrees
    best = brute_force_ls(K, lab, t, c, s2, centered)
    ours = ls_objective(K, lab, t, c, a)
    assert ours <= best + 1e-6 * max(1.0, abs(best))
    assert ours == pytest.approx(best, rel=1e-5, abs=1e-7)


def test_ls_kpca_zeta_solves_dense_secular_equation_by_bisection():
    """Independent route: bisection on zeta with dense solves of (C - zeta P) a = b."""
    K, lab, y = random_problem(seed=4)
    m, c, s = K.shape[0], 2.0, 0.7
    est = fit_ls(K, y, c, s)
    P = P_of(K)
    t = np.where(y[lab] == 1, 1.0, -1.0)
    C, b = K + c * K[lab].T @ K[lab], c * K[lab].T @ t
    pole = 1.0 / scipy.linalg.eigvalsh(P, C).max()
    lo, hi = -1e6, pole * (1 - 1e-15)
    for _ in range(300):
        mid = 0.5 * (lo + hi)
        a = np.linalg.solve(C - mid * P, b)
        lo, hi = (mid, hi) if a @ P @ a < m * s * s else (lo, mid)
    assert est.zeta_[0] == pytest.approx(0.5 * (lo + hi), rel=1e-7, abs=1e-10)


def test_hard_case_c_zero_is_the_kpca_eigenfunction():
    K, lab, y = random_problem(seed=3)
    m, s = K.shape[0], 0.8
    est = fit_ls(K, y, 0.0, s)
    assert est.hard_case_.all()
    P = P_of(K)
    mu, A = scipy.linalg.eigh(P, K)  # Eq. 5 (errata: the largest mu of P a = mu K a)
    u = A[:, -1] / np.sqrt(A[:, -1] @ K @ A[:, -1])
    a = est.dual_coef_[:, 0]
    # +-s u, with the sign that agrees with the labels
    scale = np.sqrt(m * s * s / (u @ P @ u))
    assert np.allclose(np.abs(a), np.abs(scale * u), atol=1e-7 * np.abs(a).max())
    t = np.where(y[lab] == 1, 1.0, -1.0)
    assert t @ (K[lab] @ a) >= 0


def test_secular_solve_hard_case_with_orthogonal_b_both_branches():
    rng = np.random.default_rng(0)
    r = 8
    Q, _ = np.linalg.qr(rng.standard_normal((r, r)))
    nu = np.sort(rng.uniform(0.1, 1.0, r))
    nu[-1] = 2.0
    P = Q @ np.diag(nu) @ Q.T  # C = I, so V = Q, nu as given
    b = Q[:, :-1] @ rng.standard_normal(r - 1)  # u^T b = 0 exactly
    numax = nu[-1]
    d = Q.T @ b
    g_star = float(np.sum(nu[:-1] * d[:-1] ** 2 / (1 - nu[:-1] / numax) ** 2))
    for s2, hard in [(4 * g_star, True), (0.25 * g_star, False)]:
        sol = secular_solve(nu, Q, b, s2)
        assert sol.hard is hard
        beta = sol.beta
        assert beta @ P @ beta == pytest.approx(s2, rel=1e-9)
        M = np.eye(r) - sol.zeta * P
        assert np.allclose(M @ beta, b, atol=1e-9)
        assert np.linalg.eigvalsh(M).min() > -1e-10
        # brute force on the sphere-like constraint set
        obj = lambda w: (lambda z: z @ z - 2 * b @ z)(np.sqrt(s2 / (w @ P @ w)) * w)
        best = min(scipy.optimize.minimize(obj, rng.standard_normal(r), method="BFGS").fun for _ in range(20))
        assert beta @ beta - 2 * b @ beta == pytest.approx(best, rel=1e-6, abs=1e-8)


def test_ls_path_reuses_one_pencil_per_c_and_matches_single_fits():
    K, lab, y = random_problem(m=15, n_lab=6, seed=5)
    basis = kernel_basis(K)
    t = np.where(y[lab] == 1, 1.0, -1.0)[:, None]
    cs, s2s = [0.5, 5.0], [1.0, 4.0, 30.0]
    before = DECOMPOSITIONS["pencil"]
    path = ls_kpca_path(basis, lab, t, cs, s2s)
    assert DECOMPOSITIONS["pencil"] - before == len(cs)
    for c in cs:
        for s2 in s2s:
            est = fit_ls(K, y, c, np.sqrt(s2 / 15))
            assert np.allclose(basis.values(path[(c, s2)]), est.embedding_, atol=1e-8)


# ---------------------------------------------------------------------------
# KPCA and MV-KPCA
# ---------------------------------------------------------------------------
def test_kpca_eq5_largest_eigenpair():
    K, lab, y = random_problem(seed=6)
    est = KernelPCAClassifier(kernel="precomputed", n_components=3).fit(K, y)
    P = P_of(K)
    mu_ref = scipy.linalg.eigvalsh(P, K)[::-1][:3]
    assert np.allclose(est.eigenvalues_, mu_ref, rtol=1e-8)
    A = est.dual_coef_
    assert np.allclose(A.T @ K @ A, np.eye(3), atol=1e-8)
    assert np.allclose(P @ A, K @ A * est.eigenvalues_, atol=1e-8 * np.abs(P).max())


@pytest.mark.parametrize("c", [0.5, 20.0])
def test_mv_kpca_generalized_eigenpair_satisfies_eq6(c):
    K, lab, y = random_problem(m=14, n_lab=7, seed=7)
    est = MVKPCA(kernel="precomputed", c=c, n_components=2).fit(K, y)
    P = P_of(K)
    Q = K.copy()
    for g in np.unique(y[lab]):
        Kg = K[lab[y[lab] == g]]
        n = Kg.shape[0]
        Q += c * (Kg.T @ Kg - Kg.T @ np.full((n, n), 1.0 / n) @ Kg)
    mu_ref = scipy.linalg.eigvalsh(P, Q)[::-1][:2]
    assert np.allclose(est.eigenvalues_, mu_ref, rtol=1e-8)
    A = est.dual_coef_
    assert np.allclose(P @ A, Q @ A * est.eigenvalues_, atol=1e-8 * np.abs(P).max())
    assert np.allclose(A.T @ Q @ A, np.eye(2), atol=1e-8)


def test_mv_kpca_c0_is_kpca():
    K, lab, y = random_problem(seed=8)
    a = MVKPCA(kernel="precomputed", c=0.0).fit(K, y).embedding_[:, 0]
    b = KernelPCAClassifier(kernel="precomputed", n_components=1).fit(K, y).embedding_[:, 0]
    assert np.allclose(np.abs(a), np.abs(b), atol=1e-8)


# ---------------------------------------------------------------------------
# LR-KPCA
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("seed,c,s", [(0, 5.0, 0.5), (1, 50.0, 1.0)])
def test_lr_kpca_fixed_point_is_stationary_and_objective_never_increases(seed, c, s):
    K, lab, y = random_problem(m=14, n_lab=6, seed=seed)
    m = K.shape[0]
    est = LRKPCA(kernel="precomputed", c=c, s=s, tol=1e-14, max_iter=200).fit(K, y)
    assert est.converged_.all()
    hist = np.asarray(est.objective_history_[0])
    assert (np.diff(hist) <= 1e-12 * np.abs(hist[:-1])).all()
    a = est.dual_coef_[:, 0]
    t = np.where(y[lab] == 1, 1.0, -1.0)
    P = P_of(K)
    assert a @ P @ a == pytest.approx(m * s * s, rel=1e-8)
    # objective (18) with the logistic loss, computed densely
    J = a @ K @ a + c * np.logaddexp(0, -t * (K[lab] @ a)).sum()
    assert est.objective_[0] == pytest.approx(J, rel=1e-10)
    # stationarity on the constraint manifold: grad J = 2 eta P a for some eta
    g = K[lab] @ a
    z = 1 / (1 + np.exp(-t * g))
    grad = 2 * K @ a - c * K[lab].T @ (t * (1 - z))
    Pa = 2 * P @ a
    eta = (grad @ Pa) / (Pa @ Pa)
    assert np.linalg.norm(grad - eta * Pa) <= 1e-5 * np.linalg.norm(grad)


def test_lr_kpca_improves_on_its_ls_start():
    K, lab, y = random_problem(m=14, n_lab=6, seed=2)
    basis = kernel_basis(K)
    t = np.where(y[lab] == 1, 1.0, -1.0)
    res = lr_kpca(basis, lab, t, 20.0, 14 * 0.25)
    assert res.history[-1] <= res.history[0]
    assert res.converged and res.n_iter >= 1


# ---------------------------------------------------------------------------
# prediction
# ---------------------------------------------------------------------------
def moons(n=120, seed=0):
    from sklearn.datasets import make_moons
    X, y = make_moons(n, noise=0.08, random_state=seed)
    rng = np.random.default_rng(seed)
    lab = np.r_[rng.choice(np.flatnonzero(y == 0), 4, replace=False), rng.choice(np.flatnonzero(y == 1), 4, replace=False)]
    yy = -np.ones(n, dtype=int)
    yy[lab] = y[lab]
    return X, y, yy


@pytest.mark.parametrize("est", [LSKPCA(sigma=SIGMA_10, c=1, s=1), LRKPCA(sigma=SIGMA_10, c=10, s=1),
                                 MVKPCA(sigma=SIGMA_10, c=1), MVKPCA(sigma=SIGMA_10, c=1, n_components=10),
                                 KernelPCAClassifier(sigma=SIGMA_10)])
def test_out_of_sample_equals_in_sample_on_fit_points(est):
    X, y, yy = moons()
    est.fit(X, yy)
    assert np.allclose(est.transform(X), est.embedding_, atol=1e-9)
    # and new points get finite scores through the representer expansion
    Xn = X[:5] + 0.01
    assert np.isfinite(est.decision_function(Xn)).all()


def test_ls_kpca_classifies_two_moons_from_eight_labels():
    X, y, yy = moons(200)
    assert (LSKPCA(sigma=SIGMA_10, c=1, s=1).fit(X, yy).predict(X) == y).mean() > 0.95
    assert (LRKPCA(sigma=SIGMA_10, c=10, s=1).fit(X, yy).predict(X) == y).mean() > 0.95


def test_only_minus_one_marks_unlabeled_and_string_labels_work():
    from graphstk.exceptions import LabelError
    X, y, yy = moons()
    a = LSKPCA(sigma=SIGMA_10).fit(X, yy)
    names = np.where(yy == -1, "-1", np.where(yy == 0, "left", "right"))
    b = LSKPCA(sigma=SIGMA_10).fit(X, names)
    assert np.allclose(a.embedding_, b.embedding_)
    assert set(b.predict(X)) <= {"left", "right"} and list(b.classes_) == ["left", "right"]
    assert np.allclose(LSKPCA(sigma=SIGMA_10).fit(X, torch.as_tensor(yy)).embedding_, a.embedding_)
    for bad, where in [(-2, "negative labels other than -1"), (np.nan, "NaN")]:
        z = yy.astype(float)
        z[7] = bad
        with pytest.raises(LabelError, match=where) as err:
            LSKPCA(sigma=SIGMA_10).fit(X, z)
        assert "[7]" in str(err.value)
    mixed = np.array(list(yy[:-1]) + ["a"], dtype=object)
    with pytest.raises(LabelError, match="mixes strings"):
        LSKPCA(sigma=SIGMA_10).fit(X, mixed)
    with pytest.raises(ValueError, match="Complex data not supported"):
        LSKPCA(sigma=SIGMA_10).fit(X + 1j, yy)


def test_multiclass_one_vs_rest():
    from sklearn.datasets import make_blobs
    X, y = make_blobs(90, centers=3, cluster_std=0.6, random_state=0)
    yy = -np.ones(90, dtype=int)
    for k in range(3):
        yy[np.flatnonzero(y == k)[:3]] = k
    est = LSKPCA(sigma=1.0, c=1, s=1).fit(X, yy)
    assert est.decision_function(X).shape == (90, 3)
    assert (est.predict(X) == y).mean() > 0.9


def test_linear_head_threshold_hard_and_soft():
    z = np.array([[-2.0], [-1.0], [1.0], [3.0]])
    t = np.array([-1.0, -1.0, 1.0, 1.0])
    head = fit_linear_head(z, t[:, None])
    assert head.hard[0]
    thr = -head.b[0] / head.W[0, 0]
    assert thr == pytest.approx(0.0, abs=1e-6)  # hard margin: midpoint of -1 and 1
    t2 = np.array([-1.0, 1.0, -1.0, 1.0])  # not separable
    head2 = fit_linear_head(z, t2[:, None])
    assert not head2.hard[0]


# ---------------------------------------------------------------------------
# graph kernels
# ---------------------------------------------------------------------------
def test_gaussian_knn_graph_weights_and_diffusion_kernel_against_expm():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 3))
    ei, w = gaussian_knn_graph(X, 4)
    assert (ei[0] != ei[1]).all()
    W = np.zeros((30, 30))
    W[ei[0].numpy(), ei[1].numpy()] = w.numpy()
    assert np.allclose(W, W.T)
    D2 = ((X[:, None] - X[None]) ** 2).sum(-1)
    h = D2[W > 0].mean()
    assert np.allclose(W[W > 0], np.exp(-D2[W > 0] / h))
    d = W.sum(1)
    L = np.eye(30) - W / np.sqrt(np.outer(d, d))
    K = diffusion_kernel(ei, 30, tau=2.0, edge_weight=w)
    assert np.allclose(K.to_dense().numpy(), scipy.linalg.expm(-2.0 * L), atol=1e-10)
    v = torch.randn(30, 2, dtype=torch.float64)
    assert np.allclose((K @ v).numpy(), scipy.linalg.expm(-2.0 * L) @ v.numpy(), atol=1e-10)
    # one Laplacian decomposition for every tau
    mu, U = laplacian_eigenpairs(ei, 30, w)
    K5 = SpectralKernelOperator.from_laplacian(mu, U, 5.0)
    assert np.allclose(K5.to_dense().numpy(), scipy.linalg.expm(-5.0 * L), atol=1e-10)
    # convex combination with a Gaussian kernel
    G = DenseOperator(torch.as_tensor(np.exp(-0.5 * D2)))
    M = MixtureKernelOperator.convex(0.3, G, K)
    assert np.allclose(M.to_dense().numpy(), 0.3 * np.exp(-0.5 * D2) + 0.7 * scipy.linalg.expm(-2.0 * L))
    assert np.allclose(M.block([0, 1], [2, 3]).to_dense().numpy(), M.to_dense().numpy()[np.ix_([0, 1], [2, 3])])


def test_ls_kpca_on_diffusion_and_mixture_kernels_and_truncated_basis():
    from sklearn.datasets import make_moons
    X, y = make_moons(150, noise=0.05, random_state=1)
    yy = -np.ones(150, dtype=int)
    yy[[0, 1, 2, 3]] = y[[0, 1, 2, 3]]
    yy[np.flatnonzero(y == 1 - y[0])[:2]] = 1 - y[0]
    ei, w = gaussian_knn_graph(X, 6)
    K = diffusion_kernel(ei, 150, tau=5.0, edge_weight=w)
    before = DECOMPOSITIONS["kernel"]
    est = LSKPCA(kernel="precomputed", c=1.0, s=0.5).fit(K, yy)
    assert DECOMPOSITIONS["kernel"] == before  # eigenpairs reused, no new decomposition
    assert (est.predict(K.to_dense()).numpy() == y).mean() > 0.9
    # a rank-r diffusion kernel and rank=r on the dense one give the same model
    Kr = diffusion_kernel(ei, 150, tau=5.0, edge_weight=w, rank=40)
    e1 = LSKPCA(kernel="precomputed", c=1.0, s=0.5).fit(Kr, yy).embedding_
    e2 = LSKPCA(kernel="precomputed", c=1.0, s=0.5, rank=40).fit(K.to_dense(), yy).embedding_
    assert np.allclose(np.abs(e1), np.abs(e2), atol=1e-6)
    # mixture kernel
    D2 = ((X[:, None] - X[None]) ** 2).sum(-1)
    M = MixtureKernelOperator.convex(0.5, DenseOperator(torch.as_tensor(np.exp(-2 * D2))), K)
    e3 = LSKPCA(kernel="precomputed", c=1.0, s=0.5).fit(M, yy).embedding_
    e4 = LSKPCA(kernel="precomputed", c=1.0, s=0.5).fit(0.5 * np.exp(-2 * D2) + 0.5 * K.to_dense().numpy(), yy).embedding_
    assert np.allclose(e3, e4, atol=1e-8)


# ---------------------------------------------------------------------------
# bad inputs
# ---------------------------------------------------------------------------
def test_bad_inputs_give_clear_errors():
    K, lab, y = random_problem(seed=9)
    with pytest.raises(ValueError, match="0 class"):
        fit_ls(K, -np.ones(12, dtype=int), 1.0, 1.0)
    one = -np.ones(12, dtype=int)
    one[:3] = 1
    with pytest.raises(ValueError, match="1 class"):
        fit_ls(K, one, 1.0, 1.0)
    for s in (0.0, -1.0):
        with pytest.raises(ValueError, match="The 's' parameter of LSKPCA must be a float in the range"):
            fit_ls(K, y, 1.0, s)
    with pytest.raises(ValueError, match="The 'c' parameter of LSKPCA must be"):
        fit_ls(K, y, -1.0, 1.0)
    bad = K - 2.0 * np.eye(12) * np.linalg.eigvalsh(K).max()
    with pytest.raises(ValueError, match="not positive semi-definite"):
        fit_ls(bad, y, 1.0, 1.0)
    with pytest.raises(ValueError, match="not symmetric"):
        fit_ls(K + np.triu(np.ones((12, 12)), 1), y, 1.0, 1.0)
    with pytest.raises(ValueError, match="y has"):
        fit_ls(K, y[:5], 1.0, 1.0)
    with pytest.raises(ValueError, match="square"):
        LSKPCA(kernel="precomputed").fit(K[:, :5], y)
    est = fit_ls(K, y, 1.0, 1.0)
    with pytest.raises(ValueError, match="features"):
        est.transform(K[:, :5])


def test_repr_and_sklearn_clone():
    from sklearn.base import clone
    est = LSKPCA(c=2.0, s=0.5)
    assert "LSKPCA(c=2.0, s=0.5)" == repr(est)
    assert clone(est).get_params() == est.get_params()
    assert sskpca.__doc__ and "Eq. 6" in MVKPCA.__doc__


def test_sigma_is_the_gaussian_width_and_defaults_to_the_median():
    """sigma is the width of exp(-||x - y||^2 / (2 sigma^2)): the paper's exp(-gamma ||x - y||^2) is
    sigma = 1 / sqrt(2 gamma); sigma=None is the median pairwise distance of the fit points."""
    from graphstk.operators import median_sigma

    rng = np.random.default_rng(5)
    X = np.r_[rng.normal(-2, 1, (15, 2)), rng.normal(2, 1, (15, 2))]
    y = -np.ones(30, dtype=int)
    y[[0, 1, 15, 16]] = [0, 0, 1, 1]
    est = LSKPCA().fit(X, y)
    assert est.sigma_ == pytest.approx(median_sigma(X))
    gamma = 0.3
    K = np.exp(-gamma * ((X[:, None] - X[None]) ** 2).sum(-1))
    pre = LSKPCA(kernel="precomputed").fit(K, y)
    feat = LSKPCA(sigma=1.0 / np.sqrt(2.0 * gamma)).fit(X, y)
    np.testing.assert_allclose(np.abs(feat.embedding_), np.abs(pre.embedding_), rtol=1e-8, atol=1e-10)
    assert not est.unreachable_.any() and est.n_unreachable_ == 0


def test_closed_form_1d_hard_margin_equals_sklearn_svc():
    from sklearn.svm import SVC
    rng = np.random.default_rng(3)
    for sgn in (1.0, -1.0):
        z = np.r_[rng.uniform(-3, -0.5, 6), rng.uniform(0.4, 2, 5)]
        t = sgn * np.r_[-np.ones(6), np.ones(5)]
        head = fit_linear_head(z[:, None], t[:, None])
        svc = SVC(kernel="linear", C=1e10).fit(z[:, None], t)
        assert head.hard[0]
        assert head.W[0, 0] == pytest.approx(svc.coef_[0, 0], rel=1e-4)
        assert head.b[0] == pytest.approx(svc.intercept_[0], rel=1e-4, abs=1e-6)


def test_soft_margin_1d_matches_sklearn_objective():
    from sklearn.svm import SVC

    from graphstk.methods.sskpca.heads import _soft_margin_1d
    rng = np.random.default_rng(4)
    for seed in range(3):
        z = rng.standard_normal(30)
        t = np.where(z + 0.8 * rng.standard_normal(30) > 0, 1.0, -1.0)
        obj = lambda w, b: 0.5 * w * w + np.maximum(0, 1 - t * (w * z + b)).sum()
        w, b = _soft_margin_1d(z, t, 1.0)
        svc = SVC(kernel="linear", C=1.0, tol=1e-8).fit(z[:, None], t)
        ref = obj(svc.coef_[0, 0], svc.intercept_[0])
        assert obj(w, b) <= ref + 1e-6 * max(1.0, ref)
        assert obj(w, b) == pytest.approx(ref, rel=1e-4)


def test_secular_root_at_the_top_term_bound_does_not_fail():
    """Regression: g(x1) equal to s^2 up to rounding (the top term alone meets the constraint)."""
    nu = np.array([1e-6, 2e-6, 0.13])
    V = np.eye(3)
    b = np.array([1e-4, -1e-4, 0.0])
    s2 = 1500.0
    b[2] = np.sqrt(s2 / nu[2]) * (1 - 0.0)  # d_top^2 nu_max = s2 at x = 1: the bound is the root
    sol = secular_solve(nu, V, b, s2)
    assert sol.beta @ np.diag(nu) @ sol.beta == pytest.approx(s2, rel=1e-9)
