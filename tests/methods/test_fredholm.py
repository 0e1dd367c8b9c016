"""Fredholm kernels (Que, Belkin, Wang 2014) and the LapRLSC baseline, against independent
dense computations written from the equations (loops / numpy, no graphstk kernel code)."""
import math

import numpy as np
import pytest
import scipy.optimize
import scipy.sparse as sp
import torch
from sklearn.exceptions import NotFittedError

from graphstk.exceptions import LabelError
from graphstk.methods import fredholm_gram
from graphstk.methods import fredholm as fr
from graphstk.methods.fredholm import kernel as fr_kernel
from graphstk.methods.fredholm import (FREDHOLM_INSTANCES, FredholmKernel, FredholmRLSC, FredholmSVM,
                                       RandomFeatureFredholm, fredholm_random_features, solve_hinge)
from graphstk.methods.laprls import LapRLSC, graph_laplacian
from graphstk.operators import knn_graph


def gauss_np(A, B, r):
    """The Fredholm paper's Gaussian exp(-||a - b||^2 / (2 r)) (Sec. 5): width r = sigma^2."""
    return np.exp(-((A[:, None, :] - B[None, :, :]) ** 2).sum(-1) / (2 * r))


def kern_np(name, A, B, r):
    return A @ B.T if name == "linear" else gauss_np(A, B, r)


def dense_fredholm(X, Z, U, outer, inner, r, normalized):
    """Eq. 5 / Eq. 6 term by term: (1/n^2) sum_{i,j} k(x,x_i) kH(x_i,x_j) k(z,x_j)."""
    n = len(U)
    KX, KZ, KH = kern_np(outer, X, U, r), kern_np(outer, Z, U, r), kern_np(inner, U, U, r)
    if normalized:
        KX = KX / KX.sum(1, keepdims=True)
        KZ = KZ / KZ.sum(1, keepdims=True)
    out = np.zeros((len(X), len(Z)))
    for a in range(len(X)):
        for b in range(len(Z)):
            out[a, b] = sum(KX[a, i] * KH[i, j] * KZ[b, j] for i in range(n) for j in range(n)) / n ** 2
    return out


def two_lines(n, seed, d=10, noise=0.3):
    rng = np.random.default_rng(seed)
    X = np.zeros((n, d))
    X[:, 0] = rng.uniform(-1, 1, n)
    X[:, 1] = rng.choice([-1.0, 1.0], n)
    X += noise * rng.normal(size=X.shape)
    return X, (X[:, 0] >= 0).astype(int)


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(0)
    return rng.normal(size=(5, 4)), rng.normal(size=(3, 4)), rng.normal(size=(12, 4))


@pytest.mark.parametrize("name", list(FREDHOLM_INSTANCES))
def test_gram_equals_dense_eq5_eq6(small, name):
    X, Z, U = small
    outer, inner, normalized = FREDHOLM_INSTANCES[name]
    ref = dense_fredholm(X, Z, U, outer, inner, 2.5, normalized)
    K = fredholm_gram(X, Z, U, outer, inner, math.sqrt(2.5), math.sqrt(2.5), normalized)
    assert isinstance(K, torch.Tensor) and K.shape == (5, 3)
    np.testing.assert_allclose(K.numpy(), ref, rtol=1e-12, atol=1e-15)
    # scipy.sparse points (tf-idf text) give the same block
    Ks = fredholm_gram(sp.csr_matrix(X), sp.csr_matrix(Z), sp.csr_matrix(U), outer, inner, math.sqrt(2.5),
                       math.sqrt(2.5), normalized)
    np.testing.assert_allclose(Ks.numpy(), ref, rtol=1e-10, atol=1e-15)
    # the same via the instance helper, and Z=None means Z = X
    kw = fr.fredholm_instance(name, math.sqrt(2.5))
    np.testing.assert_allclose(fredholm_gram(X, None, U, **kw).numpy(),
                               dense_fredholm(X, X, U, outer, inner, 2.5, normalized), rtol=1e-12, atol=1e-15)


def test_gram_with_different_widths_and_other_kernels(small):
    X, Z, U = small
    n = len(U)
    ref = gauss_np(X, U, 1.5) @ gauss_np(U, U, 4.0) @ gauss_np(Z, U, 1.5).T / n ** 2
    np.testing.assert_allclose(fredholm_gram(X, Z, U, "gaussian", "gaussian", math.sqrt(1.5), 2.0).numpy(), ref,
                               rtol=1e-12)
    # any feature kernel pair: Laplacian (l1) outer, polynomial inner
    lap = lambda A, B: np.exp(-np.abs(A[:, None] - B[None]).sum(-1) / 0.7)
    ref = lap(X, U) @ (U @ U.T + 1.0) ** 2 @ lap(Z, U).T / n ** 2
    K = fredholm_gram(X, Z, U, "laplacian", "polynomial", 0.7, None)
    np.testing.assert_allclose(K.numpy(), ref, rtol=1e-12)


def test_operator_interface_row_blocks_and_no_n_by_n(small, monkeypatch):
    _, _, U = small
    rng = np.random.default_rng(1)
    U = rng.normal(size=(40, 4))
    X = rng.normal(size=(9, 4))
    op = FredholmKernel(X, U[:6], U, "gaussian", "gaussian", math.sqrt(3.0), math.sqrt(3.0), normalized=True,
                        block_size=4)
    dense = dense_fredholm(X, U[:6], U, "gaussian", "gaussian", 3.0, True)
    shapes = []
    real = fr_kernel._kblock
    monkeypatch.setattr(fr_kernel, "_kblock", lambda k, A, B, log=False: shapes.append((A.shape[0], B.shape[0])) or
                        real(k, A, B, log))
    v = torch.from_numpy(rng.normal(size=(6, 2)))
    np.testing.assert_allclose((op @ v).numpy(), dense @ v.numpy(), rtol=1e-11)
    np.testing.assert_allclose(op.to_dense().numpy(), dense, rtol=1e-11)
    np.testing.assert_allclose(op.T.to_dense().numpy(), dense.T, rtol=1e-11)
    assert max(a for a, _ in shapes) <= 4  # every kernel tile has at most block_size rows: never 40 x 40
    sq = FredholmKernel(X, None, U, "gaussian", "gaussian", math.sqrt(3.0), math.sqrt(3.0), block_size=4)
    full = dense_fredholm(X, X, U, "gaussian", "gaussian", 3.0, False)
    np.testing.assert_allclose(sq.diagonal().numpy(), np.diag(full), rtol=1e-11)
    rows, cols = torch.tensor([2, 0, 7]), torch.zeros(9, dtype=torch.bool)
    cols[[1, 4]] = True  # boolean masks work as index arguments
    np.testing.assert_allclose(sq.block(rows, cols).to_dense().numpy(), full[[2, 0, 7]][:, [1, 4]], rtol=1e-11)
    assert np.linalg.eigvalsh(full).min() > -1e-12  # Proposition 3: PSD


def test_normalized_gaussian_is_a_stable_softmax():
    """Tiny outer width: the Eq. 6 weights collapse onto the nearest point of U (no 0/0)."""
    rng = np.random.default_rng(2)
    U, X = rng.normal(size=(15, 3)) * 10, rng.normal(size=(4, 3)) * 10
    K = fredholm_gram(X, None, U, "gaussian", "linear", 1e-4, None, normalized=True).numpy()
    nn = U[((X[:, None] - U[None]) ** 2).sum(-1).argmin(1)]
    assert np.isfinite(K).all()
    np.testing.assert_allclose(K, nn @ nn.T / len(U) ** 2, rtol=1e-10)


def test_fredlin2_is_linear_kernel_on_smoothed_features(small):
    X, Z, U = small
    n = len(U)
    m = lambda P: gauss_np(P, U, 2.0) @ U / n  # m(x) = (1/n) sum_i k(x, x_i) x_i
    np.testing.assert_allclose(fredholm_gram(X, Z, U, "gaussian", "linear", math.sqrt(2.0), None).numpy(),
                               m(X) @ m(Z).T, rtol=1e-12)


def ssl(XL, yL, XU):
    """``(X, y)`` in the one contract: labeled rows first, then the unlabeled ones with ``y = -1``."""
    stack = sp.vstack if sp.issparse(XL) else np.vstack
    return stack([XL, XU]), np.r_[np.asarray(yL), np.full(XU.shape[0], -1)]


def split(X, y, per_class, seed=0):
    rng = np.random.default_rng(seed)
    L = np.concatenate([rng.choice(np.where(y == c)[0], per_class, replace=False) for c in np.unique(y)])
    return L, np.setdiff1d(np.arange(len(y)), L)


def onevsrest(y):
    cls = np.unique(y)
    return np.where(y[:, None] == cls[None], 1.0, -1.0)


@pytest.mark.parametrize("name", ["FredLin1", "FredLin2(N)", "FredGauss", "FredGauss(N)"])
def test_square_loss_minimises_eq3(name):
    """Direct minimisation of Eq. 3 over f = sum_j c_j kH(., x_j) (Lemma 1's span) by least
    squares, and the paper's Eq. 4 with its lambda = n^2 l lam (erratum), give our classifier."""
    X, y = two_lines(50, 3, d=4)
    y = y + (X[:, 1] > 0)  # three classes: one-vs-rest
    L, Uu = split(X, y, 3)
    XL, XU, T = X[L], X[Uu], X[Uu[:10]]
    outer, inner, normalized = FREDHOLM_INSTANCES[name]
    r, lam = 1.7, 0.05
    m = FredholmRLSC.instance(name, math.sqrt(r), lam=lam).fit(*ssl(XL, y[L], XU))
    U = np.r_[XL, XU]
    n, l = len(U), len(L)
    Kln = kern_np(outer, XL, U, r)
    Ktn = kern_np(outer, T, U, r)
    if normalized:
        Kln, Ktn = Kln / Kln.sum(1, keepdims=True), Ktn / Ktn.sum(1, keepdims=True)
    Kln, Ktn = Kln / n, Ktn / n  # (K_phat f)(x) = (1/n) sum_j k(x, x_j) f(x_j); Eq. 6 keeps its 1/n
    KH = kern_np(inner, U, U, r)
    ev, V = np.linalg.eigh(KH)
    S = V * np.sqrt(np.clip(ev, 0, None))  # KH = S S^T, f(U) = S g, ||f||^2 = |g|^2
    Y = onevsrest(y[L])
    # (1/l)|Kln S g - y|^2 + lam |g|^2  <=>  lstsq of [Kln S; sqrt(l lam) I] g = [y; 0]
    A = np.r_[Kln @ S, math.sqrt(l * lam) * np.eye(S.shape[1])]
    g = np.linalg.lstsq(A, np.r_[Y, np.zeros((S.shape[1], Y.shape[1]))], rcond=None)[0]
    np.testing.assert_allclose(m.decision_function(T), Ktn @ S @ g, rtol=1e-7, atol=1e-9)
    # a general-purpose optimiser on Eq. 3 itself does no better than our solution
    obj = lambda gg: ((Kln @ S @ gg - Y[:, 0]) ** 2).mean() + lam * gg @ gg
    res = scipy.optimize.minimize(obj, np.zeros(S.shape[1]), method="L-BFGS-B", options={"maxiter": 5000})
    assert obj(g[:, 0]) <= res.fun + 1e-10
    # Eq. 4 with the paper's lambda = n^2 l lam, written with Eq. 4's unscaled K_{l+u}: the same
    # classifier divided by n^2 (Eq. 4 solves Eq. 3 for the targets y / n^2), same predictions
    if not normalized:
        Kp = kern_np(outer, XL, U, r)
        lam_p = n ** 2 * l * lam
        v = np.linalg.solve(Kp.T @ Kp @ KH + lam_p * np.eye(n), Kp.T @ Y)
        f = KH @ v / n
        np.testing.assert_allclose(m.decision_function(T), kern_np(outer, T, U, r) @ f / n * n ** 2,
                                   rtol=1e-6)
    assert list(m.predict(T)) == list(m.classes_[m.decision_function(T).argmax(1)])


def test_fredlin1_linear_form_equals_kernel_form():
    X, y = two_lines(80, 4)
    L, Uu = split(X, y, 4)
    m = FredholmRLSC.instance("FredLin1", math.sqrt(3.0), lam=1e-2).fit(*ssl(X[L], y[L], X[Uu]))
    T = torch.from_numpy(X[Uu])
    kernel_form = FredholmKernel(T, torch.from_numpy(X[L]), torch.from_numpy(np.r_[X[L], X[Uu]]),
                                 "linear", "gaussian", None, math.sqrt(3.0)).to_dense() @ m.dual_coef_
    assert m.coef_.shape == (10, 1)  # two classes: one score column, for classes_[1]
    np.testing.assert_allclose((T @ m.coef_).numpy(), kernel_form.numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(m.decision_function(T).numpy(), kernel_form[:, 0].numpy(), rtol=1e-9, atol=1e-12)


def test_sparse_text_input_matches_dense():
    rng = np.random.default_rng(5)
    X = sp.random(60, 30, density=0.2, random_state=5, format="csr")
    y = rng.integers(0, 2, 60)
    L, Uu = split(X.toarray(), y, 5)
    for name in ("FredLin1", "FredLin2(N)"):
        a = FredholmRLSC.instance(name, 0.5, lam=1e-2).fit(*ssl(X[L], y[L], X[Uu])).decision_function(X[Uu])
        b = FredholmRLSC.instance(name, 0.5, lam=1e-2).fit(*ssl(X[L].toarray(), y[L], X[Uu].toarray()))
        np.testing.assert_allclose(a, b.decision_function(X[Uu].toarray()), rtol=1e-9, atol=1e-12)


def test_hinge_loss_satisfies_the_dual_kkt_conditions():
    """Eq. 7, no bias: 0 <= a <= C = 1/(2 l lam); a_i = 0 -> margin >= 1; 0 < a_i < C ->
    margin = 1; a_i = C -> margin <= 1; and the dual optimum of an independent box-constrained
    solver (L-BFGS-B, no equality constraint) is reached."""
    X, y = two_lines(120, 6, d=6, noise=0.5)
    L, Uu = split(X, y, 10)
    y[L[:3]] = 1 - y[L[:3]]  # label noise: some a_i = C
    m = FredholmSVM.instance("FredGauss(N)", 2.0, lam=0.02, lam_scale="trace").fit(*ssl(X[L], y[L], X[Uu]))
    K = m.operator_.block(None, None).to_dense().numpy()
    lam = m.lam_
    assert lam == pytest.approx(0.02 * np.diag(K).mean())
    l, C = len(L), 1 / (2 * len(L) * lam)
    yy = onevsrest(y[L])[:, 1]
    beta = solve_hinge(torch.from_numpy(K), torch.from_numpy(yy[:, None]), lam, tol=1e-10).numpy()[:, 0]
    a = beta * yy
    margin = yy * (K @ beta)
    tol = 1e-4
    assert (a >= -tol * C).all() and (a <= C * (1 + tol)).all()
    assert (margin[a < tol * C] >= 1 - 1e-3).all()
    assert (margin[a > C * (1 - tol)] <= 1 + 1e-3).all()
    free = (a > tol * C) & (a < C * (1 - tol))
    np.testing.assert_allclose(margin[free], 1.0, atol=1e-3)
    assert (a > C * (1 - tol)).any() and free.any()
    Q = (yy[:, None] * yy[None]) * K
    dual = lambda aa: 0.5 * aa @ Q @ aa - aa.sum()
    ref = scipy.optimize.minimize(dual, np.zeros(l), jac=lambda aa: Q @ aa - 1, method="L-BFGS-B",
                                  bounds=[(0, C)] * l, options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 10000})
    assert dual(a) <= ref.fun + 1e-6 * abs(ref.fun)
    # the estimator's one column (two classes: the score of classes_[1]) is this solution (default tol)
    np.testing.assert_allclose(m.dual_coef_[:, 0].numpy(), beta, rtol=1e-3, atol=1e-4 * C)


def test_random_features_converge_at_rate_one_over_sqrt_d():
    rng = np.random.default_rng(7)
    U = rng.normal(size=(60, 3))
    X = U[:20]
    for normalized in (False, True):
        exact = fredholm_gram(X, None, U, "gaussian", "gaussian", 1.5, 1.5, normalized).numpy()
        Ds = [25, 100, 400, 1600]
        errs = []
        for D in Ds:
            e = []
            for seed in range(6):
                Z = fredholm_random_features(X, U, "gaussian", 1.5, 1.5, normalized, n_components=D,
                                             random_state=seed).numpy()
                e.append(np.linalg.norm(Z @ Z.T - exact) / np.linalg.norm(exact))
            errs.append(np.mean(e))
        slope = np.polyfit(np.log(Ds), np.log(errs), 1)[0]
        assert -0.7 < slope < -0.3, (slope, errs)
        assert errs[-1] < 0.06


def test_random_feature_estimator_approaches_exact():
    X, y = two_lines(150, 8, d=5)
    L, Uu = split(X, y, 5)
    exact = FredholmRLSC.instance("FredGauss(N)", 3.0, lam=1e-3).fit(*ssl(X[L], y[L], X[Uu])).decision_function(X[Uu])
    errs = []
    for D in (50, 3200):
        rf = RandomFeatureFredholm.instance("FredGauss(N)", 3.0, lam=1e-3, n_components=D, random_state=1)
        errs.append(float(np.abs(rf.fit(*ssl(X[L], y[L], X[Uu])).decision_function(X[Uu]) - exact).max()))
    assert errs[1] < errs[0] / 4 and errs[1] < 0.05 * float(np.abs(exact).max())


@pytest.mark.parametrize("kernel,width", [("gaussian", 1.5), ("linear", None)])
def test_laprls_equals_manifold_regularization_closed_form(kernel, width):
    rng = np.random.default_rng(9)
    N, l = 50, 6
    X = rng.normal(size=(N, 3))
    y = np.r_[[0, 1, 2] * 2, rng.integers(0, 3, N - l)]
    gA, gI = 0.02, 3.0
    sigma = None if width is None else math.sqrt(width)
    m = LapRLSC(kernel=kernel, sigma=sigma, gamma_A=gA, gamma_I=gI, n_neighbors=6).fit(*ssl(X[:l], y[:l], X[l:]))
    K = kern_np(kernel, X, X, width)
    ei, w = knn_graph(torch.from_numpy(X), 6, mode="gaussian")
    W = np.zeros((N, N))
    W[ei[0].numpy(), ei[1].numpy()] = w.numpy()
    Lap = np.diag(W.sum(1)) - W
    J = np.diag(np.r_[np.ones(l), np.zeros(N - l)])
    Y = np.r_[onevsrest(y[:l]), np.zeros((N - l, 3))]
    alpha = np.linalg.solve(J @ K + gA * l * np.eye(N) + gI * l / N ** 2 * Lap @ K, Y)  # Belkin et al., Sec. 4.2
    T = rng.normal(size=(7, 3))
    np.testing.assert_allclose(m.decision_function(X), K @ alpha, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(m.decision_function(T), kern_np(kernel, T, X, width) @ alpha, rtol=1e-7,
                               atol=1e-9)
    np.testing.assert_allclose(graph_laplacian(X, 6).to_dense().numpy(), Lap, atol=1e-14)
    if kernel == "gaussian":  # a Nystrom factor with every point as landmark is the exact one
        ny = LapRLSC(kernel=kernel, sigma=sigma, gamma_A=gA, gamma_I=gI, n_neighbors=6, landmarks=N).fit(*ssl(
            X[:l], y[:l], X[l:]))
        np.testing.assert_allclose(ny.decision_function(T), m.decision_function(T), rtol=1e-7,
                                   atol=1e-9)


def test_bad_inputs_give_clear_errors():
    X, y = two_lines(30, 1, d=4)
    L, Uu = split(X, y, 3)
    Xs, ys = ssl(X[L], y[L], X[Uu])
    with pytest.raises(ValueError, match="U is empty"):
        fredholm_gram(X, X, X[:0], "gaussian", "gaussian", 1.0, 1.0)
    with pytest.raises(ValueError, match="dimension mismatch"):
        fredholm_gram(X[:, :3], X, X, "gaussian", "gaussian", 1.0, 1.0)
    with pytest.raises(ValueError, match="X has 3 features, but FredholmRLSC is expecting 4"):
        FredholmRLSC.instance("FredGauss", 1.0).fit(Xs, ys).predict(X[:, :3])
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="outer_sigma"):
            fredholm_gram(X, X, X, "gaussian", "linear", bad, None)
        with pytest.raises(ValueError, match="The 'inner_sigma' parameter of FredholmRLSC must be"):
            FredholmRLSC(outer="linear", inner="gaussian", inner_sigma=bad).fit(Xs, ys)
        with pytest.raises(ValueError, match="The 'sigma' parameter of LapRLSC must be"):
            LapRLSC(sigma=bad).fit(Xs, ys)
    # sigma=None: the median heuristic over the points the integral runs over
    med = fr.median_sigma(X)
    np.testing.assert_allclose(fredholm_gram(X, X, X, "linear", "gaussian", None, None).numpy(),
                               fredholm_gram(X, X, X, "linear", "gaussian", None, med).numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match="The 'lam' parameter of FredholmRLSC must be"):
        FredholmRLSC.instance("FredGauss", 1.0, lam=0.0).fit(Xs, ys)
    with pytest.raises(ValueError, match="unknown Fredholm instance"):
        FredholmRLSC.instance("FredGauss(n)", 1.0)
    with pytest.raises(LabelError, match="at least 2"):
        FredholmRLSC.instance("FredGauss", 1.0).fit(Xs, np.where(ys == -1, -1, 0))
    with pytest.raises(LabelError, match="has 29 entries but X has 30"):
        FredholmSVM.instance("FredGauss", 1.0).fit(Xs, ys[:-1])
    with pytest.raises(LabelError, match="negative labels other than -1"):
        LapRLSC(sigma=1.0).fit(Xs, np.where(ys == 0, -2, ys))
    with pytest.raises(LabelError, match="continuous"):
        LapRLSC(sigma=1.0).fit(Xs, ys + 0.5)
    Xn = Xs.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        FredholmRLSC.instance("FredGauss", 1.0).fit(Xn, ys)
    with pytest.raises(ValueError, match="row sum"):
        fredholm_gram(X, X, -np.abs(X), "linear", "linear", None, None, normalized=True)
    with pytest.raises(ValueError, match="linear one"):
        RandomFeatureFredholm.instance("FredLin2", 1.0)
    for est in (FredholmRLSC(), FredholmSVM(), RandomFeatureFredholm(), LapRLSC()):
        with pytest.raises(NotFittedError):
            est.predict(X)


def test_fit_takes_one_form_and_defaults_fit():
    """fit(X, y) with y = -1 for the unlabeled rows is the one form; with their defaults every
    classifier here fits (the median heuristic gives the widths) and exposes the widths it used."""
    rng = np.random.default_rng(3)
    Xs = np.r_[rng.normal(-2.0, 1.0, (20, 2)), rng.normal(2.0, 1.0, (20, 2))]
    y = np.r_[np.zeros(20, int), np.ones(20, int)]
    ys = np.full(40, -1)
    ys[[0, 1, 20, 21]] = y[[0, 1, 20, 21]]
    with pytest.raises(TypeError):
        FredholmRLSC().fit(Xs[ys != -1], ys[ys != -1], Xs[ys == -1])
    med = fr.median_sigma(Xs)
    for est in (FredholmRLSC(), FredholmSVM(), RandomFeatureFredholm(random_state=0), LapRLSC()):
        est.fit(Xs, ys)
        assert (est.predict(Xs) == y).mean() > 0.9
        widths = [est.sigma_] if isinstance(est, LapRLSC) else [est.outer_sigma_, est.inner_sigma_]
        assert widths == pytest.approx([med] * len(widths))
        assert not est.unreachable_.any() and est.n_unreachable_ == 0


def test_predict_returns_original_labels_and_repr():
    X, y = two_lines(60, 2, d=4)
    labels = np.array(["neg", "pos"])[y]
    L, Uu = split(X, y, 4)
    m = FredholmSVM.instance("FredLin2(N)", 1.0, lam=1e-2).fit(*ssl(X[L], labels[L], X[Uu]))
    assert set(m.predict(X[Uu])) <= {"neg", "pos"}
    assert "FredholmSVM(" in repr(m) and "normalized=True" in repr(m)
    assert "FredholmKernel(shape=" in repr(m.operator_)


def test_gaussian_path_and_cross_equal_the_operator():
    """The grid path (shared squared distances, two passes) and FredholmKernel.cross give the
    Eq. 5 / Eq. 6 blocks of the dense reference for every width and both variants."""
    rng = np.random.default_rng(11)
    U = rng.normal(size=(30, 3))
    XL, XE = U[:4], rng.normal(size=(6, 3))
    out = fr.gaussian_fredholm_path(XL, XE, U, [0.8, 2.0], (False, True), block_size=7)
    assert set(out) == {(0.8, False), (0.8, True), (2.0, False), (2.0, True)}
    for (sig, v), (K_LL, K_EL) in out.items():
        r = sig ** 2   # the paper's width
        np.testing.assert_allclose(K_LL.numpy(), dense_fredholm(XL, XL, U, "gaussian", "gaussian", r, v), rtol=1e-11)
        np.testing.assert_allclose(K_EL.numpy(), dense_fredholm(XE, XL, U, "gaussian", "gaussian", r, v), rtol=1e-11)
        op = FredholmKernel(XL, None, U, "gaussian", "gaussian", sig, sig, v)
        np.testing.assert_allclose(op.cross(XE).numpy(), K_EL.numpy(), rtol=1e-11)
    with pytest.raises(ValueError, match="sigma"):
        fr.gaussian_fredholm_path(XL, XE, U, [0.0])


def test_registered_methods_score_eval_points_with_validation_only_labels():
    """The registrations return one [len(eval), C] score tensor per grid point and never read
    the labels of unlabeled/eval points (scrambling them changes nothing)."""
    from graphstk.experiments.registry import MethodInput, get_method

    X, y = two_lines(300, 12, d=6, noise=0.1)
    L, rest = split(X, y, 5)
    U, E = rest[:200], rest[200:]
    first = {}
    for scramble in (False, True):
        yy = torch.full((300,), -1, dtype=torch.long)
        yy[L] = torch.from_numpy(y[L])
        if scramble:
            yy[U] = 1
        prob = MethodInput(X=torch.from_numpy(X), data=None, y=yy, labeled=torch.from_numpy(L),
                       unlabeled=torch.from_numpy(U), eval=torch.from_numpy(E), num_classes=2, seed=0)
        for name in ("FredLin1", "FredGauss(N)", "LapRLSC"):
            entry = get_method(name)
            pts = entry.points({**entry.grid, **({"sigma": [0.5]} if name == "LapRLSC" else {"width": [0.5]})})
            scores = entry.fit_predict(prob, pts)
            assert len(scores) == len(pts) and all(s.shape == (len(E), 2) for s in scores)
            best = min(float((s.argmax(1).numpy() != y[E]).mean()) for s in scores)
            assert best < 0.2
            if scramble:
                for a, b in zip(first[name], scores):
                    torch.testing.assert_close(a, b)
            first[name] = scores


def test_degenerate_kernel_warns_and_flags_its_rows():
    """FredGauss(N) with width sigma = 1e-6: points with no weight on any labeled point get all-zero
    decision values; they are flagged (warning, predict -1; unreachable_ over the fitted points),
    never a silent class."""
    from graphstk.exceptions import UnreachableNodesWarning

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = np.r_[[0, 1] * 5, [-1] * 30]
    est = FredholmRLSC.instance("FredGauss(N)", 1e-6).fit(X, y)
    new = rng.normal(size=(25, 3))
    with pytest.warns(UnreachableNodesWarning, match=r"all decision values zero.*kernel is degenerate"):
        S = est.decision_function(new)
    zero = S == 0
    assert zero.any()
    with pytest.warns(UnreachableNodesWarning):
        fit_zero = est.decision_function(X) == 0
    assert isinstance(est.unreachable_, np.ndarray) and np.array_equal(est.unreachable_, fit_zero)
    assert est.n_unreachable_ == fit_zero.sum() > 0 and not est.unreachable_[:10].any()   # labeled points
    with pytest.warns(UnreachableNodesWarning):
        pred = est.predict(new)
    assert (pred[zero] == -1).all() and set(pred[~zero]) <= {0, 1}
    far = FredholmRLSC(outer_sigma=1e-6, inner_sigma=1e-6).fit(X, y)   # every new point degenerate
    with pytest.warns(UnreachableNodesWarning, match="kernel is degenerate on every point"):
        assert (far.predict(new + 100.0) == -1).all()
    ys = np.where(y == -1, "-1", np.where(y == 0, "a", "b"))
    with pytest.warns(UnreachableNodesWarning):
        assert set(FredholmRLSC(outer_sigma=1e-6, inner_sigma=1e-6).fit(X, ys).predict(new + 100.0)) == {"-1"}


def test_random_feature_fredholm_names_n_components():
    X = np.random.default_rng(0).normal(size=(20, 2))
    y = np.r_[[0, 1] * 3, [-1] * 14]
    with pytest.raises(ValueError, match="The 'n_components' parameter of RandomFeatureFredholm must be an int in "
                                         r"the range \[1, inf\). Got 0 instead"):
        RandomFeatureFredholm(outer_sigma=1.0, inner_sigma=1.0, n_components=0).fit(X, y)


def test_fredholm_tiles_shrink_while_memory_is_short_and_the_outcome_is_the_same(monkeypatch):
    """Another program holding almost all the memory (MemAvailable simulated at 100 kB) makes the
    row tiles smaller, never a refusal, and the fitted model is the same (to rounding: BLAS may sum
    a product of another shape in another order)."""
    from graphstk import memory
    from graphstk.methods.fredholm import RandomFeatureFredholm

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = -np.ones(300, dtype=int)
    y[:10], y[10:20] = 0, 1
    X[10:20] += 2.0
    idle = [FredholmRLSC(outer_sigma=1.0, inner_sigma=1.0).fit(X, y).decision_function(X),
            RandomFeatureFredholm(outer_sigma=1.0, inner_sigma=1.0, random_state=0).fit(X, y)
            .decision_function(X)]
    monkeypatch.delenv("GRAPHSTK_MAX_MEMORY", raising=False)
    monkeypatch.setattr(memory, "_read_meminfo", lambda: {"MemTotal": 16 * 10 ** 9, "MemAvailable": 100_000})
    assert fr_kernel._rows_per_block(300, None) < fr_kernel._BLOCK_ELEMS // 300
    busy = [FredholmRLSC(outer_sigma=1.0, inner_sigma=1.0).fit(X, y).decision_function(X),
            RandomFeatureFredholm(outer_sigma=1.0, inner_sigma=1.0, random_state=0).fit(X, y)
            .decision_function(X)]
    for a, b in zip(idle, busy):        # the same up to the rounding of differently sized products
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
        np.testing.assert_array_equal(np.sign(a), np.sign(b))
