"""Semi-supervised kernel PCA (Walder, Henao, Mørup, Hansen): KPCA, MV-, LS- and LR-KPCA.

All four methods look for one function ``f = sum_j alpha_j k(x_j, .)`` (representer theorem)
over the ``m`` fit points, labeled and unlabeled alike, with

* ``VAR[f] = sum_i (f(x_i) - mean f)^2`` (a *sum* over the ``m`` points, errata), i.e.
  ``alpha^T P alpha`` with ``P = K K - K E_m K`` (centred) or ``P = K K`` (uncentred);
* ``||f||_H^2 = alpha^T K alpha``.

Methods (equation numbers of the paper; corrections from ``kernel_papers_errata.md``):

* **KPCA** (Eq. 5): the largest ``mu`` of ``P a = mu K a`` (the paper's "largest lambda" of
  its reversed pencil picks a degenerate vector), normalised ``a^T K a = 1``;
  :class:`KernelPCAClassifier` feeds the top ``n_components`` (10 for KPCA-10) to a
  hard-margin linear SVM trained on the labeled points.
* **MV-KPCA** (Eq. 6): the largest ``mu`` of ``P a = mu Q a``,
  ``Q = K + c sum_g K_g^T (I - E_|g|) K_g`` over the label groups ``g`` (:class:`MVKPCA`).
* **LS-KPCA** (Eqs. 10, 11, 14): ``min a^T K a + c ||K_L a - t||^2`` s.t. ``a^T P a = s^2``;
  ``a = (C - zeta P)^{-1} b`` with ``C = K + c K_L^T K_L`` and ``b = c K_L^T t`` (the
  paper's ``c K_L t`` is a typo). Solved through the secular equation of Sec. 4 (never the
  ``2m x 2m`` pencil of Eq. 15): one symmetric-definite generalised eigendecomposition
  ``P v = nu C v`` (``V^T C V = I``), then
  ``a(zeta) = sum_i (v_i^T b) / (1 - zeta nu_i) v_i`` and the root of
  ``a^T P a = sum_i nu_i (v_i^T b)^2 / (1 - zeta nu_i)^2 = s^2`` left of the pole
  ``1 / nu_max`` by Brent's method (:func:`scipy.optimize.brentq`). Hard case
  ``u^T b ~ 0`` (always for ``c = 0``): ``zeta = 1 / nu_max`` and ``a = a_rest + theta u``
  (for ``c = 0`` exactly ``+-s u``, the KPCA eigenfunction). :class:`LSKPCA`.
* **LR-KPCA** (Eqs. 16-21, corrected): logistic loss ``log(1 + exp(-t g))`` on the labeled
  points only, by iteratively reweighted LS-KPCA: ``z = sigmoid(t g)``, ``r = z (1 - z)``,
  working response ``g + t / z``, ``C = K + (c/2) K_L^T R K_L``, ``b = (c/2) K_L^T R (g + t/z)``;
  a step that does not lower the objective is redone with a proximal term
  (``C + lam I``, ``b + lam a_n``, ``lam`` growing tenfold). :class:`LRKPCA`.

Classification (Sec. 7.1): the first eigenfunction and a 1-D threshold from a linear SVM on
the labeled values (hard margin when separable, soft margin ``C = 1`` otherwise); the
``-10`` variants train the SVM on ten eigenfunctions. More than two classes: one-vs-rest.

Implementation: the kernel basis
--------------------------------
Every solve runs in the coordinates of one eigendecomposition ``K = U diag(lam) U^T``
(:class:`KernelBasis`): with ``Phi = U_r diag(lam_r)^{1/2}`` and ``alpha = U_r
diag(lam_r)^{-1/2} beta``, ``||f||_H^2 = beta^T beta``, ``f = Phi beta`` on the fit points and
``P`` becomes ``Phi^T H Phi`` (``r x r``). On the range of ``K`` this is the same problem as in
``alpha`` (null-space components of ``alpha`` change no value of ``f``), with ``C = I + c
Phi_L^T Phi_L`` always positive definite. ``r`` is the numerical rank (eigenvalues above
``tol * lam_max``) or, with ``rank=r``, the top ``r`` eigenpairs: then ``f`` is restricted to the
span of the top ``r`` kernel eigenfunctions. This is how large graphs are handled (DBLP: the
top eigenpairs of the graph kernel by sparse Lanczos, :func:`graphstk.spectral.top_eigenpairs`),
and it makes every pencil ``r x r`` instead of ``m x m``.

Reuse: the kernel decomposition depends on neither labels nor ``c``/``s``; the pencil
``P v = nu C v`` depends on ``c`` and the labeled set but not on ``s`` or ``t``. The grid
paths (:func:`ls_kpca_path`, :func:`mv_kpca_path`) do one pencil per ``c`` for the whole
``s`` grid and all one-vs-rest targets. :data:`DECOMPOSITIONS` counts the decompositions.

Scale of ``s``: estimators take ``s`` as the root-mean-square deviation of ``f`` over the fit
points, i.e. the paper's constraint is ``VAR[f] = m s^2`` (the paper's ``s`` is ``sqrt(m) s``),
so that a grid carries over between data sets of different size.
"""
from __future__ import annotations

import math
import warnings
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg
import scipy.optimize
import scipy.sparse.linalg
import torch
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.svm import SVC
from torch import Tensor

from ..operators.base import KernelOperator, SparseOperator, as_index
from ..operators.diffusion import SpectralKernelOperator
from ..operators.feature import FeatureKernelOperator, as_features, kernel_function, median_distance

__all__ = [
    "DECOMPOSITIONS", "KernelBasis", "kernel_basis", "SecularSolution", "secular_solve", "ls_kpca_path",
    "mv_kpca_path", "kpca_components", "lr_kpca", "LRResult", "LinearHead", "fit_linear_head",
    "KernelPCAClassifier", "MVKPCA", "LSKPCA", "LRKPCA", "ConvergenceWarning",
]

#: Counts of the decompositions done: ``"kernel"`` (one ``m x m`` eigendecomposition of ``K``,
#: or a Lanczos run), ``"pencil"`` (one ``r x r`` generalised eigendecomposition ``P v = nu C v``).
DECOMPOSITIONS: Counter = Counter()


class ConvergenceWarning(RuntimeWarning):
    """LR-KPCA stopped at ``max_iter`` before its objective settled."""


# ---------------------------------------------------------------------------
# kernel basis
# ---------------------------------------------------------------------------
@dataclass
class KernelBasis:
    """``K ~ U diag(lam) U^T`` and the derived ``Phi = U diag(lam)^{1/2}``, ``P = Phi^T H Phi``.

    Attributes: ``U [m, r]``, ``lam [r]`` (positive, descending), ``centered``, ``Phi [m, r]``,
    ``P [r, r]`` (``Phi^T (I - E_m) Phi`` centred, ``diag(lam)`` uncentred), ``m``, ``r``.
    """

    U: np.ndarray
    lam: np.ndarray
    centered: bool = True
    Phi: np.ndarray = field(init=False, repr=False)
    P: np.ndarray = field(init=False, repr=False)

    def __post_init__(self):
        self.Phi = self.U * np.sqrt(self.lam)
        if self.centered:
            s = self.Phi.sum(0)
            P = self.Phi.T @ self.Phi - np.outer(s, s) / self.m
            self.P = (P + P.T) / 2
        else:
            self.P = np.diag(self.lam)

    m = property(lambda self: int(self.U.shape[0]))
    r = property(lambda self: int(self.U.shape[1]))

    def coef(self, beta: np.ndarray) -> np.ndarray:
        """Representer coefficients ``alpha = U diag(lam)^{-1/2} beta`` (``[m]`` or ``[m, k]``)."""
        scale = 1.0 / np.sqrt(self.lam)
        return self.U @ (beta * (scale if beta.ndim == 1 else scale[:, None]))

    def values(self, beta: np.ndarray) -> np.ndarray:
        """``f = K alpha = Phi beta`` on the fit points."""
        return self.Phi @ beta

    def variance(self, beta: np.ndarray) -> np.ndarray:
        """``VAR[f] = beta^T P beta`` (per column)."""
        return np.einsum("i...,ij,j...->...", beta, self.P, beta)


def _as_numpy_square(K) -> np.ndarray:
    if isinstance(K, KernelOperator):
        K = K.to_dense()
    if isinstance(K, Tensor):
        K = K.detach().cpu().to(torch.float64).numpy()
    K = np.asarray(K, dtype=np.float64)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"the kernel matrix must be square [m, m], got shape {K.shape}")
    if not np.isfinite(K).all():
        raise ValueError("the kernel matrix contains NaN or infinite values")
    return K


def _check_psd(lam: np.ndarray, psd_tol: float, what: str = "kernel matrix") -> None:
    top = float(np.abs(lam).max()) if lam.size else 0.0
    if top == 0.0:
        raise ValueError(f"the {what} is zero: semi-supervised KPCA needs a non-zero kernel")
    low = float(lam.min())
    if low < -psd_tol * top:
        raise ValueError(
            f"the {what} is not positive semi-definite: smallest eigenvalue {low:.3g} (largest {top:.3g}); "
            "use a PSD kernel (Gaussian, diffusion exp(-tau L), a non-negative mixture of them) or a spectral "
            "transform with non-negative values")


def kernel_basis(K, rank: int | None = None, centered: bool = True, tol: float = 1e-10,
                 psd_tol: float = 1e-8, dense_max: int = 6000, seed: int = 0) -> KernelBasis:
    """Eigendecompose the fit-point kernel ``K`` (``[m, m]``) once: a :class:`KernelBasis`.

    Parameters
    ----------
    K : KernelOperator, Tensor or ndarray ``[m, m]``
        Symmetric positive semi-definite. A :class:`~graphstk.operators.SpectralKernelOperator`
        (e.g. :func:`~graphstk.operators.diffusion_kernel`) hands over its eigenpairs, no new
        decomposition. Up to ``dense_max`` points: dense ``eigh`` (with a PSD check); larger
        operators need ``rank`` and use Lanczos (``scipy.sparse.linalg.eigsh``, or
        :func:`graphstk.spectral.top_eigenpairs` for a sparse operator).
    rank : int, optional
        Keep the top ``rank`` eigenpairs (``None``: all above ``tol * lam_max``).
    centered : bool, default True
        Centred ``VAR`` (``P = K K - K E_m K``) or uncentred (``P = K K``), Sec. 2.
    tol : float, default 1e-10
        Relative cut-off for the numerical rank.
    psd_tol : float, default 1e-8
        A negative eigenvalue below ``-psd_tol * lam_max`` is an error (kernel not PSD).
    """
    if rank is not None and (int(rank) != rank or int(rank) < 1):
        raise ValueError(f"rank must be a positive integer or None, got {rank!r}")
    if isinstance(K, SpectralKernelOperator):
        lam, U = K.values.numpy(), K.U.numpy()
        _check_psd(lam, psd_tol)
    else:
        m = int(K.shape[0])
        if m <= dense_max:
            A = _as_numpy_square(K)
            asym = np.abs(A - A.T).max()
            if asym > 1e-8 * max(1.0, np.abs(A).max()):
                raise ValueError(f"the kernel matrix is not symmetric (max |K - K^T| = {asym:.3g})")
            lam, U = np.linalg.eigh((A + A.T) / 2)
            DECOMPOSITIONS["kernel"] += 1
            _check_psd(lam, psd_tol)
            lam, U = lam[::-1], U[:, ::-1]
        else:
            if rank is None:
                raise ValueError(f"a dense eigendecomposition of a {m} x {m} kernel is too large; pass rank=r "
                                 "to keep the top-r eigenpairs (Lanczos)")
            if isinstance(K, SparseOperator):
                from ..spectral.eigen import top_eigenpairs
                v, W = top_eigenpairs(K, int(rank), seed=seed)
                lam, U = v.numpy(), W.numpy()
            else:
                op = K if isinstance(K, KernelOperator) else None
                mat = (lambda x: (op @ torch.as_tensor(x)).numpy()) if op is not None else (lambda x: K @ x)
                lin = scipy.sparse.linalg.LinearOperator((m, m), matvec=mat, matmat=mat, dtype=np.float64)
                v0 = np.random.default_rng(seed).standard_normal(m)
                lam, U = scipy.sparse.linalg.eigsh(lin, k=int(rank), which="LA", v0=v0)
                order = np.argsort(lam)[::-1]
                lam, U = lam[order], U[:, order]
            DECOMPOSITIONS["kernel"] += 1
            if lam.max() <= 0:
                raise ValueError("the top eigenvalues of the kernel are not positive: not a PSD kernel")
    order = np.argsort(-lam, kind="stable")
    lam, U = lam[order], U[:, order]
    keep = lam > tol * lam[0]
    if rank is not None:
        keep &= np.arange(lam.size) < int(rank)
    return KernelBasis(np.ascontiguousarray(U[:, keep]), lam[keep].copy(), centered=centered)


# ---------------------------------------------------------------------------
# the secular equation (LS-KPCA, Sec. 4)
# ---------------------------------------------------------------------------
def _pencil(P: np.ndarray, C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``P v = nu C v`` with ``C`` positive definite: ``nu`` ascending, ``V^T C V = I``."""
    DECOMPOSITIONS["pencil"] += 1
    return scipy.linalg.eigh(P, C)


@dataclass
class SecularSolution:
    """A solution of ``min beta^T C beta - 2 b^T beta`` s.t. ``beta^T P beta = s^2``.

    ``beta``; ``zeta`` (the multiplier: ``(C - zeta P) beta = b`` with ``C - zeta P`` PSD, the
    certificate of global optimality); ``hard`` (the hard case ``u^T b ~ 0``).
    """

    beta: np.ndarray
    zeta: float
    hard: bool


def secular_solve(nu: np.ndarray, V: np.ndarray, b: np.ndarray, s2: float, hard_tol: float = 1e-10,
                  sign_hint: np.ndarray | None = None) -> SecularSolution:
    """Solve LS-KPCA's inner problem from one pencil decomposition (Sec. 4, errata).

    Parameters
    ----------
    nu, V : the output of ``scipy.linalg.eigh(P, C)`` (``nu`` ascending, ``V^T C V = I``).
    b : ``[r]`` right-hand side (``c Phi_L^T t`` for LS-KPCA).
    s2 : target ``beta^T P beta`` (> 0).
    hard_tol : the hard case is declared when the root would lie within a relative
        ``hard_tol`` of the pole (``sqrt(nu_max) |u^T b| / s <= hard_tol``).
    sign_hint : ``[r]`` vector; in the hard case the sign of ``theta u`` makes
        ``sign_hint^T beta >= 0`` when ``u^T b`` is exactly 0 (e.g. ``Phi_L^T t``: agree with the labels).

    Secular function in ``x = 1 - zeta nu_max`` (exact near the pole):
    ``g(x) = sum_i nu_i d_i^2 / (1 - rho_i + x rho_i)^2``, ``d = V^T b``, ``rho = nu / nu_max``,
    strictly decreasing in ``x``; its root ``g = s^2`` is found by Brent's method in ``log x``.
    """
    s2 = float(s2)
    if not s2 > 0 or not math.isfinite(s2):
        raise ValueError(f"s^2 must be a finite number > 0, got {s2!r}")
    numax = float(nu[-1])
    if numax <= 0:
        raise ValueError("P is zero on this basis: no function has VAR[f] = s^2 > 0 (constant kernel?)")
    d = V.T @ b
    rho = np.clip(nu / numax, 0.0, 1.0)  # P is PSD: tiny negative nu are round-off
    w = np.clip(nu, 0.0, None) * d * d
    top = rho >= 1.0 - 1e-9
    rest = ~top
    dtop = float(np.sqrt((d[top] ** 2).sum()))
    s = math.sqrt(s2)

    def g(x, mask=None):
        den = 1.0 - rho + x * rho
        if mask is None:
            return float((w / (den * den)).sum())
        return float((w[mask] / (den[mask] ** 2)).sum())

    x1 = math.sqrt(numax) * dtop / s  # the top terms alone reach s^2 here: root x >= x1
    if x1 <= hard_tol:  # hard case: u^T b ~ 0
        g_star = g(0.0, rest)
        if s2 > g_star:
            base = V[:, rest] @ (d[rest] / (1.0 - rho[rest]))
            theta = math.sqrt((s2 - g_star) / numax)
            if dtop > 0:
                u = V[:, top] @ (d[top] / dtop)
            else:
                u = V[:, -1]
            sgn = 1.0
            if dtop > 0:
                sgn = 1.0  # u points along +d_top: the sign of the exact (non-hard) solution
            elif sign_hint is not None and float(sign_hint @ u) < 0:
                sgn = -1.0
            return SecularSolution(base + sgn * theta * u, 1.0 / numax, True)
        # root left of the pole on the remaining terms (g_rest(0) = g_star >= s^2)
        x_hi = 1.0 + numax * float((d * d).sum()) / (4 * s2) + 1.0
        x = scipy.optimize.brentq(lambda x: g(x, rest) - s2, 0.0, x_hi, xtol=1e-15, rtol=1e-15)
        den = 1.0 - rho + x * rho
        return SecularSolution(V[:, rest] @ (d[rest] / den[rest]), (1.0 - x) / numax, False)
    # regular case: g(x1) >= s^2 and g(x_hi) < s^2
    # bound g(zeta) <= ||d||^2 / (4 |zeta|) for zeta < 0 gives x_hi
    x_hi = 1.0 + numax * float((d * d).sum()) / (4 * s2) + 1.0
    while g(x_hi) >= s2:  # pragma: no cover - the bound guarantees the first try
        x_hi *= 2.0
    t_lo = math.log(x1)
    if g(math.exp(t_lo)) <= s2 * (1.0 + 1e-13):  # the top term alone reaches s^2 (up to rounding)
        x = math.exp(t_lo)
    else:
        t = scipy.optimize.brentq(lambda t: g(math.exp(t)) - s2, t_lo, math.log(x_hi),
                                  xtol=1e-14, rtol=4 * np.finfo(float).eps, maxiter=200)
        x = math.exp(t)
    den = 1.0 - rho + x * rho
    return SecularSolution(V @ (d / den), (1.0 - x) / numax, False)


def _targets(y_lab: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """``+-1`` targets: one column for two classes (``classes[1]`` is ``+1``), else one per class."""
    if classes.size == 2:
        return np.where(y_lab == classes[1], 1.0, -1.0)[:, None]
    return np.stack([np.where(y_lab == k, 1.0, -1.0) for k in classes], axis=1)


def ls_kpca_path(basis: KernelBasis, lab: np.ndarray, T: np.ndarray, cs, s2s) -> dict:
    """LS-KPCA (Eqs. 10, 11, 14) for every ``(c, s^2)`` of a grid: ``{(c, s2): beta [r, k]}``.

    ``lab``: positions of the labeled points among the fit points; ``T [l, k]``: ``+-1``
    targets (``k`` one-vs-rest columns). One pencil ``P v = nu (I + c Phi_L^T Phi_L) v`` per
    ``c`` serves every ``s^2`` and every column.
    """
    G = basis.Phi[lab]
    T = np.asarray(T, dtype=np.float64).reshape(len(lab), -1)
    out = {}
    GtG = G.T @ G
    for c in cs:
        c = float(c)
        if c < 0 or not math.isfinite(c):
            raise ValueError(f"c must be a finite number >= 0, got {c!r}")
        nu, V = _pencil(basis.P, np.eye(basis.r) + c * GtG)
        B = c * (G.T @ T)
        hints = G.T @ T
        for s2 in s2s:
            out[(c, float(s2))] = np.stack(
                [secular_solve(nu, V, B[:, j], s2, sign_hint=hints[:, j]).beta for j in range(T.shape[1])], 1)
    return out


def kpca_components(basis: KernelBasis, k: int) -> tuple[np.ndarray, np.ndarray]:
    """KPCA (Eq. 5): the top ``k`` of ``P a = mu K a``; returns ``(mu [k], beta [r, k])``,
    ``beta^T beta = I`` (``a^T K a = 1``). In the basis this is ``eigh(P)``."""
    mu, W = np.linalg.eigh(basis.P)
    DECOMPOSITIONS["pencil"] += 1
    k = min(int(k), basis.r)
    return mu[::-1][:k], W[:, ::-1][:, :k]


def mv_kpca_path(basis: KernelBasis, lab: np.ndarray, y_lab: np.ndarray, cs, k: int) -> dict:
    """MV-KPCA (Eq. 6) for every ``c``: ``{c: (mu [k], beta [r, k])}``, the top ``k`` of
    ``P a = mu Q a``, ``Q = K + c sum_g K_g^T (I - E_|g|) K_g`` (groups = classes of ``y_lab``),
    normalised ``beta^T Q beta = I``."""
    G = basis.Phi[lab]
    W = np.zeros((basis.r, basis.r))
    for g in np.unique(y_lab):
        Gg = G[y_lab == g]
        sg = Gg.sum(0)
        W += Gg.T @ Gg - np.outer(sg, sg) / Gg.shape[0]
    out = {}
    for c in cs:
        c = float(c)
        if c < 0 or not math.isfinite(c):
            raise ValueError(f"c must be a finite number >= 0, got {c!r}")
        mu, V = _pencil(basis.P, np.eye(basis.r) + c * (W + W.T) / 2)
        kk = min(int(k), basis.r)
        out[c] = (mu[::-1][:kk], V[:, ::-1][:, :kk])
    return out


# ---------------------------------------------------------------------------
# LR-KPCA (Eqs. 16-21, corrected IRLS step of the errata)
# ---------------------------------------------------------------------------
@dataclass
class LRResult:
    """Outcome of :func:`lr_kpca`: ``beta``, ``objective`` (final), ``history`` (objective after
    each accepted step, starting with the initial point), ``n_iter``, ``converged``,
    ``backoffs`` (proximal retries)."""

    beta: np.ndarray
    objective: float
    history: list
    n_iter: int
    converged: bool
    backoffs: int


def lr_objective(basis: KernelBasis, lab: np.ndarray, t: np.ndarray, c: float, beta: np.ndarray) -> float:
    """``||f||_H^2 + c sum_{i in L} log(1 + exp(-t_i f(x_i)))`` (Eq. 18 with the logistic loss)."""
    g = basis.Phi[lab] @ beta
    return float(beta @ beta + c * np.logaddexp(0.0, -t * g).sum())


def lr_kpca(basis: KernelBasis, lab: np.ndarray, t: np.ndarray, c: float, s2: float,
            beta0: np.ndarray | None = None, max_iter: int = 50, tol: float = 1e-10,
            max_backoff: int = 30) -> LRResult:
    """LR-KPCA for one target column ``t`` (``+-1``): IRLS with LS-KPCA inner solves.

    Step (errata): ``g = Phi_L beta``, ``z = sigmoid(t g)``, ``r = z (1 - z)``,
    ``C = I + (c/2) Phi_L^T R Phi_L``, ``b = (c/2) Phi_L^T R (g + t / z)``
    (``R (g + t/z) = r g + t (1 - z)``, no overflow), then :func:`secular_solve`.
    If the objective does not decrease, the step is redone with ``C + lam I``,
    ``b + lam beta_n`` (``lam = 1e-6 ||C||``, tenfold up to ``max_backoff`` times); if none
    helps, ``beta_n`` is returned as converged (no descent direction on the constraint set).
    Start: LS-KPCA with the same ``c`` and ``s^2`` unless ``beta0`` is given.
    """
    c, s2 = float(c), float(s2)
    t = np.asarray(t, dtype=np.float64)
    G = basis.Phi[lab]
    if beta0 is None:
        beta = ls_kpca_path(basis, lab, t[:, None], [c], [s2])[(c, s2)][:, 0]
    else:
        beta = np.asarray(beta0, dtype=np.float64).copy()
    J = lr_objective(basis, lab, t, c, beta)
    history, backoffs, converged, it = [J], 0, False, 0
    I = np.eye(basis.r)
    for it in range(1, max_iter + 1):
        g = G @ beta
        z = 1.0 / (1.0 + np.exp(-t * g))
        r = z * (1.0 - z)
        C = I + (c / 2) * (G.T * r) @ G
        b = (c / 2) * (G.T @ (r * g + t * (1.0 - z)))
        lam, accepted = 0.0, False
        scale = float(np.abs(C).max())
        for _ in range(max_backoff + 1):
            nu, V = _pencil(basis.P, C + lam * I)
            cand = secular_solve(nu, V, b + lam * beta, s2, sign_hint=G.T @ t).beta
            Jc = lr_objective(basis, lab, t, c, cand)
            if Jc < J:
                accepted = True
                break
            backoffs += 1
            lam = 1e-6 * scale if lam == 0.0 else 10.0 * lam
        if not accepted:
            converged = True
            break
        dJ = J - Jc
        beta, J = cand, Jc
        history.append(J)
        if dJ <= tol * max(1.0, abs(J)):
            converged = True
            break
    if not converged:
        warnings.warn(f"LR-KPCA did not converge in {max_iter} iterations (objective {J:.6g}); "
                      "raise max_iter", ConvergenceWarning, stacklevel=2)
    return LRResult(beta, J, history, it, converged, backoffs)


# ---------------------------------------------------------------------------
# linear SVM head (Sec. 7.1)
# ---------------------------------------------------------------------------
@dataclass
class LinearHead:
    """One-vs-rest linear classifiers on eigenfunction values: ``score = Z @ W + b``.

    ``W [k, n_out]``, ``b [n_out]``, ``hard [n_out]`` (hard margin used, i.e. separable).
    """

    W: np.ndarray
    b: np.ndarray
    hard: np.ndarray

    def scores(self, Z: np.ndarray) -> np.ndarray:
        return Z @ self.W + self.b


def _separable(Z: np.ndarray, t: np.ndarray) -> bool:
    """Is there ``(w, b)`` with ``t_i (w . z_i + b) >= 1`` for all ``i``? (LP feasibility)."""
    A = -t[:, None] * np.hstack([Z, np.ones((Z.shape[0], 1))])
    res = scipy.optimize.linprog(np.zeros(Z.shape[1] + 1), A_ub=A, b_ub=-np.ones(Z.shape[0]),
                                 bounds=[(None, None)] * (Z.shape[1] + 1), method="highs")
    return res.status == 0


def _hard_margin_1d(z: np.ndarray, t: np.ndarray) -> tuple[float, float] | None:
    """The hard-margin SVM on one feature in closed form, or ``None`` if not separable.

    Separable with ``w > 0`` iff ``max z[t<0] < min z[t>0]``: the maximum-margin threshold is the
    midpoint, ``w = 2 / gap`` (the support points sit at ``+-1``), ``b = -w * midpoint``;
    likewise with ``w < 0``. (Closed form instead of a QP: thousands of grid points call it.)
    """
    pos, neg = z[t > 0], z[t < 0]
    if pos.size == 0 or neg.size == 0:
        return None
    if neg.max() < pos.min():
        lo, hi, sgn = neg.max(), pos.min(), 1.0
    elif pos.max() < neg.min():
        lo, hi, sgn = pos.max(), neg.min(), -1.0
    else:
        return None
    w = sgn * 2.0 / (hi - lo)
    return w, -w * 0.5 * (lo + hi)


def _soft_margin_1d(z: np.ndarray, t: np.ndarray, C: float) -> tuple[float, float]:
    """The soft-margin linear SVM on one feature, exactly:
    ``min_{w, b} w^2 / 2 + C sum_i max(0, 1 - t_i (w z_i + b))``.

    For fixed ``w`` the hinge sum is convex piecewise linear in ``b``, minimised at the
    ``n_+``-th smallest breakpoint (``n_+`` = number of ``+1`` points); the profile ``F(w)`` is
    convex (partial minimisation of a jointly convex function), minimised by bounded Brent
    (:func:`scipy.optimize.minimize_scalar`)
    on ``|w| <= sqrt(2 C n)`` (``F(0) <= C n``). Used instead of scikit-learn's ``SVC`` because a
    grid of thousands of one-feature problems spends most of its time in ``SVC``'s input checks.
    """
    z = np.asarray(z, dtype=np.float64)
    n = z.size
    k = int((t > 0).sum()) - 1

    def best_b(w):
        # hinge breakpoints in b; passing any of them raises the slope by 1 and the slope at
        # -inf is -(number of +1 points), so the (k+1)-th smallest breakpoint is a minimiser
        bp = np.where(t > 0, 1.0 - w * z, -1.0 - w * z)
        b = float(np.partition(bp, k)[k])
        return b, float(np.maximum(0.0, 1.0 - t * (w * z + b)).sum())

    def F(w):
        return 0.5 * w * w + C * best_b(w)[1]

    W = math.sqrt(2.0 * C * n) + 1e-12
    res = scipy.optimize.minimize_scalar(F, bounds=(-W, W), method="bounded", options={"xatol": 1e-10 * W})
    w = float(res.x)
    return w, float(best_b(w)[0])


def fit_linear_head(Z_lab: np.ndarray, T: np.ndarray, hard_C: float = 1e8, soft_C: float = 1.0,
                    paired: bool = False) -> LinearHead:
    """A linear SVM per ``+-1`` column of ``T`` on the labeled features ``Z_lab [l, k]``
    (scikit-learn ``SVC(kernel="linear")``): hard margin (``C = hard_C``) when the column is
    linearly separable, soft margin ``C = soft_C`` otherwise (Sec. 7.1: "hard margin, linear SVM";
    for one feature this only sets a threshold).

    ``paired=True`` (one-vs-rest LS-/LR-KPCA: one eigenfunction per class): the classifier of
    column ``j`` of ``T`` sees only feature ``j`` (a 1-D threshold); ``W`` is then diagonal.
    """
    Z_lab = np.asarray(Z_lab, dtype=np.float64)
    if paired:
        if Z_lab.shape[1] != T.shape[1]:
            raise ValueError(f"paired heads need one feature per target column, got {Z_lab.shape[1]} and {T.shape[1]}")
        parts = [fit_linear_head(Z_lab[:, j:j + 1], T[:, j:j + 1], hard_C, soft_C) for j in range(T.shape[1])]
        W = np.zeros((T.shape[1], T.shape[1]))
        W[np.arange(T.shape[1]), np.arange(T.shape[1])] = [h.W[0, 0] for h in parts]
        return LinearHead(W, np.array([h.b[0] for h in parts]), np.array([h.hard[0] for h in parts]))
    Ws, bs, hard = [], [], []
    for j in range(T.shape[1]):
        t = T[:, j]
        if Z_lab.shape[1] == 1:
            closed = _hard_margin_1d(Z_lab[:, 0], t)
            if closed is not None:
                Ws.append(np.array([closed[0]])); bs.append(closed[1]); hard.append(True)
                continue
            w1, b1 = _soft_margin_1d(Z_lab[:, 0], t, soft_C)
            Ws.append(np.array([w1])); bs.append(b1); hard.append(False)
            continue
        else:
            sep = _separable(Z_lab, t)
        svm = SVC(kernel="linear", C=hard_C if sep else soft_C, max_iter=1_000_000)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            svm.fit(Z_lab, t)
        # SVC orders classes_ as [-1, 1]: decision_function > 0 means +1
        Ws.append(svm.coef_.ravel().copy())
        bs.append(float(svm.intercept_[0]))
        hard.append(sep)
    return LinearHead(np.stack(Ws, 1), np.asarray(bs), np.asarray(hard))


def head_scores(head: LinearHead, Z: np.ndarray, n_out_classes: int) -> np.ndarray:
    """Per-class scores ``[n, C]`` (binary: ``[-s, s]``)."""
    s = head.scores(Z)
    if n_out_classes == 2 and s.shape[1] == 1:
        return np.hstack([-s, s])
    return s


# ---------------------------------------------------------------------------
# estimators
# ---------------------------------------------------------------------------
def _check_s(s) -> float:
    try:
        s = float(s)
    except (TypeError, ValueError):
        raise TypeError(f"s must be a number > 0, got {s!r}") from None
    if not s > 0 or not math.isfinite(s):
        raise ValueError(f"s must be a finite number > 0 (the RMS deviation of f over the fit points), got {s!r}")
    return s


def _check_c(c) -> float:
    c = float(c)
    if not c >= 0 or not math.isfinite(c):
        raise ValueError(f"c must be a finite number >= 0, got {c!r}")
    return c


class _SSKPCABase(ClassifierMixin, BaseEstimator):
    """Shared fit/predict of the semi-supervised KPCA estimators (see module docstring).

    ``fit(X, y, labeled=None)``: ``X`` are the ``m`` fit points (features, or with
    ``kernel="precomputed"`` the ``[m, m]`` kernel as a tensor/array/KernelOperator); ``y``
    the labels with ``-1`` for unlabeled points (scikit-learn's semi-supervised convention), or
    any labels plus ``labeled`` (LongTensor of ids or boolean mask of length ``m``).
    ``decision_function(X_new)`` / ``predict(X_new)``: any points through the representer
    expansion ``f(x) = sum_j alpha_j k(x_j, x)`` (``kernel="precomputed"``: ``X_new`` is the
    ``[n, m]`` cross kernel). ``transform(X_new)`` returns the eigenfunction values.

    Fitted attributes: ``classes_``, ``basis_`` (:class:`KernelBasis`), ``beta_ [r, k]``,
    ``dual_coef_ [m, k]`` (``alpha``), ``embedding_ [m, k]`` (``f`` on the fit points),
    ``head_`` (:class:`LinearHead`), ``X_fit_``.
    """

    def _kernel_params(self):
        if isinstance(self.kernel, str) and self.kernel == "precomputed":
            return None
        k = kernel_function(self.kernel) if not isinstance(self.kernel, str) else None
        if k is not None:
            return k
        name = self.kernel.lower()
        if name in ("gaussian", "rbf"):
            gamma = self.gamma
            if gamma is None:
                gamma = 1.0 / (2.0 * median_distance(self.X_fit_) ** 2)
            gamma = float(gamma)
            if not gamma > 0:
                raise ValueError(f"gamma must be > 0 (k(x, y) = exp(-gamma ||x - y||^2)), got {gamma!r}")
            self.gamma_ = gamma
            return kernel_function("gaussian", sigma=1.0 / math.sqrt(2.0 * gamma))
        return kernel_function(name)

    def _prepare(self, X, y, labeled):
        pre = isinstance(self.kernel, str) and self.kernel == "precomputed"
        if pre:
            if isinstance(X, KernelOperator):
                m = X.shape[0]
            else:
                X = torch.as_tensor(np.asarray(X) if not isinstance(X, Tensor) else X, dtype=torch.float64)
                m = X.shape[0]
            if X.shape[0] != X.shape[1]:
                raise ValueError(f'kernel="precomputed" needs the square [m, m] fit kernel, got {tuple(X.shape)}')
        else:
            X = as_features(X, dtype=torch.float64)
            m = X.shape[0]
        y = torch.as_tensor(np.asarray(y) if not isinstance(y, Tensor) else y).flatten()
        if y.numel() != m:
            raise ValueError(f"y has {y.numel()} entries but there are {m} fit points")
        lab = (y >= 0).nonzero().flatten() if labeled is None else as_index(labeled, m)
        if lab.numel() == 0:
            raise ValueError("no labeled point: mark labeled points with y >= 0 (unlabeled: -1) or pass labeled=")
        y_lab = y[lab].numpy()
        if (y_lab < 0).any():
            raise ValueError("labeled points must have labels >= 0 (-1 marks unlabeled points)")
        classes = np.unique(y_lab)
        if classes.size < 2:
            raise ValueError(f"only one class ({classes[0]}) among the labeled points: a classifier needs "
                             "labeled points of at least two classes")
        self.X_fit_ = X
        kern = self._kernel_params()
        self.kernel_ = kern
        K = X if pre else FeatureKernelOperator(X, kernel=kern)
        self.basis_ = kernel_basis(K, rank=self.rank, centered=self.centered)
        self.classes_ = classes
        return lab.numpy(), y_lab, classes

    _paired = False  # LS-/LR-KPCA: one eigenfunction per one-vs-rest column

    def _finish(self, lab, y_lab, beta):
        self.beta_ = beta
        self.dual_coef_ = self.basis_.coef(beta)
        self.embedding_ = self.basis_.values(beta)
        T = _targets(y_lab, self.classes_)
        self.head_ = fit_linear_head(self.embedding_[lab], T, paired=self._paired and T.shape[1] > 1)
        return self

    def transform(self, X) -> np.ndarray:
        """Eigenfunction values ``f(x) = sum_j alpha_j k(x_j, x)`` at new points ``[n, k]``."""
        if isinstance(self.kernel, str) and self.kernel == "precomputed":
            if isinstance(X, KernelOperator):
                Kx = X.to_dense()
            else:
                Kx = torch.as_tensor(np.asarray(X) if not isinstance(X, Tensor) else X, dtype=torch.float64)
            if Kx.dim() != 2 or Kx.shape[1] != self.basis_.m:
                raise ValueError(f'kernel="precomputed": pass the [n, {self.basis_.m}] kernel between the new '
                                 f"points and the fit points, got {tuple(Kx.shape)}")
            return Kx.to(torch.float64).numpy() @ self.dual_coef_
        Xn = as_features(X, dtype=torch.float64)
        return (FeatureKernelOperator(Xn, self.X_fit_, kernel=self.kernel_) @ torch.as_tensor(self.dual_coef_)).numpy()

    def decision_function(self, X) -> np.ndarray:
        """SVM scores: ``[n]`` (two classes, > 0 means ``classes_[1]``) or ``[n, C]`` one-vs-rest."""
        s = self.head_.scores(self.transform(X))
        return s[:, 0] if s.shape[1] == 1 else s

    def predict(self, X) -> np.ndarray:
        s = self.decision_function(X)
        idx = (s > 0).astype(int) if s.ndim == 1 else s.argmax(1)
        return self.classes_[idx]


class KernelPCAClassifier(_SSKPCABase):
    """KPCA (Eq. 5) + linear SVM: KPCA-10 with ``n_components=10`` (Sec. 7.1).

    Parameters: ``kernel`` ("gaussian" (default), any :func:`~graphstk.operators.kernel_function`
    name or :class:`~graphstk.operators.Kernel`, or "precomputed"), ``gamma`` (Gaussian
    ``exp(-gamma ||x-y||^2)``; default ``1 / (2 median^2)``), ``n_components=10``,
    ``centered=True`` (uncentred KPCA with False), ``rank=None`` (see :func:`kernel_basis`).
    """

    def __init__(self, kernel="gaussian", gamma=None, n_components: int = 10, centered: bool = True,
                 rank: int | None = None):
        self.kernel, self.gamma, self.n_components, self.centered, self.rank = \
            kernel, gamma, n_components, centered, rank

    def fit(self, X, y, labeled=None):
        if int(self.n_components) < 1:
            raise ValueError(f"n_components must be >= 1, got {self.n_components}")
        lab, y_lab, _ = self._prepare(X, y, labeled)
        self.eigenvalues_, beta = kpca_components(self.basis_, self.n_components)
        return self._finish(lab, y_lab, beta)


class MVKPCA(_SSKPCABase):
    """MV-KPCA (Eq. 6): KPCA with a within-class variance penalty ``c`` in the constraint.

    ``n_components=1`` (the first eigenfunction and a threshold) or 10 (MV-KPCA-10).
    Parameters: ``c >= 0`` (within-class variance weight; ``c = 0`` is KPCA), ``n_components``,
    and ``kernel``, ``gamma``, ``centered``, ``rank`` as in :class:`KernelPCAClassifier`.
    """

    def __init__(self, kernel="gaussian", gamma=None, c: float = 1.0, n_components: int = 1,
                 centered: bool = True, rank: int | None = None):
        self.kernel, self.gamma, self.c, self.n_components, self.centered, self.rank = \
            kernel, gamma, c, n_components, centered, rank

    def fit(self, X, y, labeled=None):
        c = _check_c(self.c)
        lab, y_lab, _ = self._prepare(X, y, labeled)
        self.eigenvalues_, beta = mv_kpca_path(self.basis_, lab, y_lab, [c], self.n_components)[c]
        return self._finish(lab, y_lab, beta)


class LSKPCA(_SSKPCABase):
    """LS-KPCA (Eqs. 8-11, 14): ``min ||f||_H^2 + c sum_L (f(x_i) - t_i)^2`` s.t. ``VAR[f] = m s^2``.

    Parameters: ``c >= 0`` (labeled squared loss weight), ``s > 0`` (RMS deviation of ``f``
    over the ``m`` fit points; the paper's ``s`` is ``sqrt(m) s``), ``kernel``, ``gamma``,
    ``centered``, ``rank`` as :class:`KernelPCAClassifier`. Two classes: one function with
    targets ``+-1`` (``classes_[1]`` is ``+1``); more: one-vs-rest (one pencil for all).
    Fitted extra: ``zeta_`` (multipliers), ``hard_case_`` (per output).
    """

    _paired = True

    def __init__(self, kernel="gaussian", gamma=None, c: float = 1.0, s: float = 1.0, centered: bool = True,
                 rank: int | None = None):
        self.kernel, self.gamma, self.c, self.s, self.centered, self.rank = kernel, gamma, c, s, centered, rank

    def fit(self, X, y, labeled=None):
        c, s = _check_c(self.c), _check_s(self.s)
        lab, y_lab, classes = self._prepare(X, y, labeled)
        T = _targets(y_lab, classes)
        basis = self.basis_
        G = basis.Phi[lab]
        nu, V = _pencil(basis.P, np.eye(basis.r) + c * G.T @ G)
        sols = [secular_solve(nu, V, c * G.T @ T[:, j], basis.m * s * s, sign_hint=G.T @ T[:, j])
                for j in range(T.shape[1])]
        self.zeta_ = np.array([x.zeta for x in sols])
        self.hard_case_ = np.array([x.hard for x in sols])
        return self._finish(lab, y_lab, np.stack([x.beta for x in sols], 1))


class LRKPCA(_SSKPCABase):
    """LR-KPCA (Eqs. 16-21, corrected): logistic labeled loss by iteratively reweighted LS-KPCA.

    Parameters as :class:`LSKPCA` (``kernel``, ``gamma``, ``c``, ``s``, ``centered``, ``rank``),
    plus ``max_iter=50`` and ``tol=1e-10`` (relative objective
    decrease that stops the iteration). Fitted extra: ``n_iter_``, ``objective_``,
    ``objective_history_`` (per output), ``converged_``, ``backoffs_``.
    """

    _paired = True

    def __init__(self, kernel="gaussian", gamma=None, c: float = 1.0, s: float = 1.0, centered: bool = True,
                 rank: int | None = None, max_iter: int = 50, tol: float = 1e-10):
        self.kernel, self.gamma, self.c, self.s, self.centered, self.rank = kernel, gamma, c, s, centered, rank
        self.max_iter, self.tol = max_iter, tol

    def fit(self, X, y, labeled=None):
        c, s = _check_c(self.c), _check_s(self.s)
        lab, y_lab, classes = self._prepare(X, y, labeled)
        T = _targets(y_lab, classes)
        res = [lr_kpca(self.basis_, lab, T[:, j], c, self.basis_.m * s * s, max_iter=self.max_iter, tol=self.tol)
               for j in range(T.shape[1])]
        self.n_iter_ = np.array([x.n_iter for x in res])
        self.objective_ = np.array([x.objective for x in res])
        self.objective_history_ = [x.history for x in res]
        self.converged_ = np.array([x.converged for x in res])
        self.backoffs_ = np.array([x.backoffs for x in res])
        return self._finish(lab, y_lab, np.stack([x.beta for x in res], 1))
