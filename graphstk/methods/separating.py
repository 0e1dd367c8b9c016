"""Learning sets with separating kernels: spectral support estimation and novelty detection.

De Vito, Rosasco, Toigo, "Learning sets with separating kernels" (ACHA 2014), Sec. 4 and 7,
with the errata of ``notes/kernel_papers_errata.md``.

Given samples ``x_1..x_n`` of a set, with a normalised kernel (``K(x, x) = 1``, any kernel made
so by ``K(x, y) / sqrt(K(x, x) K(y, y))``, test points included), the estimator is

    ``F_n(x) = (1/n) K_x^T g_lambda(K_n / n) K_x``                                    (Eq. 19)
           ``= sum_j r_lambda(s_j) s_j |phi_j(x)|^2,  r_lambda(s) = s g_lambda(s)``     (Eq. 16)

and the estimated set is ``{x : F_n(x) >= 1 - tau}`` (Eq. 17), with the data-driven threshold
``tau_n = 1 - min_i F_n(x_i)`` (Eq. 30) or a user ``tau``.

Filters ``g_lambda`` (Table 1, Sec. 5.4, Lo Gerfo et al. 2008), on the eigenvalues ``s`` of
``K_n / n`` (which lie in ``[0, 1]`` for a normalised kernel: their sum is ``trace(K_n)/n = 1``):

===========  =====================================================  ==============================
name         ``g_lambda(s)``                                        ``r_lambda(s) = s g_lambda(s)``
===========  =====================================================  ==============================
tikhonov     ``1 / (s + lambda)``                                   ``s / (s + lambda)``
cutoff       ``1/s`` for ``s > lambda``, ``1/lambda`` for ``s <= lambda``  1 above, linear ramp ``s/lambda``
landweber    ``sum_{k=0}^{m} (1 - s)^k``, ``m = ceil(1/lambda) - 1``  ``1 - (1 - s)^(m+1)``
kpca         ``1/s`` for ``s >= lambda``, 0 below (Sec. 5.4)         hard 0/1 cut (a projection)
nu           the nu-method polynomial of ``t = ceil(lambda^-1/2)``    accelerated Landweber
             steps (Lo Gerfo et al. 2008)
===========  =====================================================  ==============================

Landweber runs ``m + 1`` steps of the iteration of Sec. 4.2 (errata: the paper's ``t = 1..m``
is one term short of Table 1). For ``tikhonov``, ``cutoff`` and ``kpca``, and ``landweber``
``L_lambda = 1/lambda``-Lipschitz up to rounding, ``0 <= r <= 1``, hence ``0 <= F_n <= 1``; the
nu-method's residual polynomial may undershoot, so its ``r`` (and ``F_n``) can exceed 1 slightly.

Computation. One symmetric eigendecomposition of ``K_n / n`` serves every ``lambda`` and every
filter: with ``q_j(x) = (u_j^T K_x)^2 / n``, ``F_n(x) = sum_j g_lambda(s_j) q_j(x)``, so a whole
path of ``L`` values costs one ``[N, n] x [n, L]`` product more than a single value.
The low-rank path (``approx="nystroem"`` on ``k`` landmarks, or ``"rff"`` random Fourier
features) replaces ``K_x`` by a ``k``-dimensional feature ``z(x)`` with ``z(x)^T z(y) ~ K(x, y)``;
then ``T_n = (1/n) sum_i z_i z_i^T`` (``k x k``, accumulated blockwise, never ``n x n``) and
``F_n(x) = sum_j r_lambda(s_j) (v_j^T z(x))^2``, Eq. 16 in the feature space. The Nystroem
feature is the projection of ``K_x`` onto the span of the landmark features, so
``||z(x)|| <= 1`` and ``0 <= F_n <= 1`` still hold.
"""
from __future__ import annotations


import numpy as np
import torch
from sklearn.base import BaseEstimator
from torch import Tensor

from ..operators.base import KernelOperator, as_index
from ..operators.feature import (
    FeatureKernelOperator, Kernel, as_features, check_positive, kernel_function, median_width,
)

__all__ = [
    "FILTERS", "width_heuristic", "filter_g", "filter_r", "landweber_steps", "nu_steps", "max_curvature_lambda",
    "landweber_iteration", "nu_method_iteration", "SpectralSupportEstimator", "ParzenWindow",
    "gaussian_one_class_svm",
]

FILTERS = ("tikhonov", "cutoff", "landweber", "kpca", "nu")
_APPROX = (None, "nystroem", "rff")
_ROUND_TOL = 1e-10
_FEATURE_CACHE_ELEMS = 1 << 27      # low-rank fit: keep the n x k training features up to 1 GiB (float64)


# ---------------------------------------------------------------------------
# filters (Table 1, Sec. 5.4, Lo Gerfo et al. 2008)
# ---------------------------------------------------------------------------
def _check_filter(name: str) -> str:
    f = str(name).lower().replace("-", "").replace("_", "").replace(" ", "")
    aliases = {"tikhonov": "tikhonov", "ridge": "tikhonov", "cutoff": "cutoff", "spectralcutoff": "cutoff",
               "tsvd": "cutoff", "landweber": "landweber", "kpca": "kpca", "kernelpca": "kpca",
               "nu": "nu", "numethod": "nu"}
    if f not in aliases:
        raise ValueError(f"filter must be one of {FILTERS}, got {name!r}")
    return aliases[f]


def _check_lams(lam) -> tuple[Tensor, bool]:
    """``lam`` (float or sequence) -> (float64 tensor [L], was_scalar); every value must be > 0."""
    scalar = np.ndim(lam) == 0
    arr = np.atleast_1d(np.asarray(lam, dtype=np.float64)).ravel()
    if arr.size == 0:
        raise ValueError("lam is an empty sequence; pass one value or a non-empty list, e.g. lam=[1e-3, 1e-2]")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"lam must be finite and > 0 (the regularisation parameter of Table 1), got {lam!r}")
    return torch.from_numpy(arr), bool(scalar)


def landweber_steps(lam) -> Tensor:
    """Landweber ``m_lambda = ceil(1/lambda) - 1`` (so ``g`` has ``m + 1`` terms, ``L_lambda = m + 1``)."""
    lams, _ = _check_lams(lam)
    return torch.clamp(torch.ceil(1.0 / lams - 1e-9) - 1, min=0).long()


def nu_steps(lam) -> Tensor:
    """nu-method iterations ``t = ceil(lambda^{-1/2})`` (Lo Gerfo et al. 2008: ``lambda = t^-2``)."""
    lams, _ = _check_lams(lam)
    return torch.clamp(torch.ceil(lams.rsqrt() - 1e-9), min=1).long()


def _nu_coeffs(t: int, nu: float) -> tuple[float, float]:
    """``(u_t, omega_t)`` of the nu-method (Lo Gerfo et al. 2008, Sec. 4; Engl et al. 1996, Sec. 6.3)."""
    if t == 1:
        return 0.0, (4 * nu + 2) / (4 * nu + 1)
    u = ((t - 1) * (2 * t - 3) * (2 * t + 2 * nu - 1)) / ((t + 2 * nu - 1) * (2 * t + 4 * nu - 1) * (2 * t + 2 * nu - 3))
    w = 4 * (2 * t + 2 * nu - 1) * (t + nu - 1) / ((t + 2 * nu - 1) * (2 * t + 4 * nu - 1))
    return u, w


def filter_g(name: str, s, lam, nu: float = 1.0) -> Tensor:
    """The filter ``g_lambda(s)`` of Table 1 (and Sec. 5.4, the nu-method) on eigenvalues ``s``.

    Parameters
    ----------
    name : one of :data:`FILTERS`.
    s : tensor ``[n]`` of eigenvalues of ``K_n / n`` (values below 0 are clamped to 0).
    lam : float or sequence of ``L`` floats, all ``> 0``.
    nu : the order of the nu-method (``nu > 0``; ignored by the other filters).

    Returns ``[n, L]`` float64 (``L = 1`` for a scalar ``lam``).
    """
    f = _check_filter(name)
    lams, _ = _check_lams(lam)
    s = torch.as_tensor(s, dtype=torch.float64).clamp_min(0.0).reshape(-1, 1)
    lams = lams.to(s.device).reshape(1, -1)
    if f == "tikhonov":
        return 1.0 / (s + lams)
    if f == "cutoff":
        return torch.where(s > lams, 1.0 / torch.maximum(s, lams), 1.0 / lams)
    if f == "kpca":
        return torch.where(s >= lams, 1.0 / torch.maximum(s, lams), torch.zeros((), dtype=s.dtype))
    if f == "landweber":
        m1 = (landweber_steps(lams.flatten()) + 1).to(s).reshape(1, -1)       # m + 1 terms
        sc = s.clamp(max=1.0)
        # sum_{k=0}^{m} (1-s)^k = (1 - (1-s)^(m+1)) / s, written with expm1/log1p for small s
        num = -torch.expm1(m1 * torch.log1p(-sc))
        return torch.where(sc > 0, num / sc.clamp_min(torch.finfo(s.dtype).tiny), m1.expand_as(num))
    # nu-method: run the recurrence on scalars (the spectral form of nu_method_iteration)
    nu = check_positive("nu", nu)
    ts = nu_steps(lams.flatten())
    out = torch.empty(s.shape[0], lams.shape[1], dtype=s.dtype, device=s.device)
    c_prev, c = torch.zeros_like(s[:, 0]), torch.zeros_like(s[:, 0])
    done = {}
    for t in range(1, int(ts.max()) + 1):
        u, w = _nu_coeffs(t, nu)
        c_prev, c = c, c + u * (c - c_prev) + w * (1.0 - s[:, 0] * c)
        done[t] = c
    for j, t in enumerate(ts.tolist()):
        out[:, j] = done[t]
    return out


def filter_r(name: str, s, lam, nu: float = 1.0) -> Tensor:
    """``r_lambda(s) = s g_lambda(s)`` (Sec. 4.1), ``[n, L]``."""
    s = torch.as_tensor(s, dtype=torch.float64).clamp_min(0.0)
    return s.reshape(-1, 1) * filter_g(name, s, lam, nu)


# ---------------------------------------------------------------------------
# iterative forms (Sec. 4.2; Lo Gerfo et al. 2008)
# ---------------------------------------------------------------------------
def landweber_iteration(K_n: Tensor, K_x: Tensor, steps: int) -> Tensor:
    """``F_n`` by the plain Landweber iteration of Sec. 4.2 (no eigendecomposition).

    ``alpha^0 = 0``, ``alpha^t = alpha^{t-1} + (1/n)(K_x - K_n alpha^{t-1})`` for ``t = 1..steps``,
    ``F_n(x) = K_x^T alpha^{steps}(x)`` (Eq. 20). ``steps = m + 1`` equals the spectral filter of
    Table 1 with ``m + 1`` terms (errata). ``K_n`` ``[n, n]`` normalised Gram, ``K_x`` ``[n, N]``.
    Returns ``[N]``.
    """
    n = K_n.shape[0]
    alpha = torch.zeros_like(K_x)
    for _ in range(int(steps)):
        alpha = alpha + (K_x - K_n @ alpha) / n
    return (K_x * alpha).sum(0)


def nu_method_iteration(K_n: Tensor, K_x: Tensor, steps: int, nu: float = 1.0) -> Tensor:
    """``F_n`` by the nu-method iteration (Lo Gerfo et al. 2008, Sec. 4), ``[N]``.

    ``alpha_0 = 0``; ``alpha_t = alpha_{t-1} + u_t (alpha_{t-1} - alpha_{t-2})
    + (omega_t / n)(K_x - K_n alpha_{t-1})``, with ``u_1 = 0``, ``omega_1 = (4nu+2)/(4nu+1)`` and, for
    ``t >= 2``, ``u_t = (t-1)(2t-3)(2t+2nu-1) / ((t+2nu-1)(2t+4nu-1)(2t+2nu-3))``,
    ``omega_t = 4(2t+2nu-1)(t+nu-1) / ((t+2nu-1)(2t+4nu-1))``; ``F_n(x) = K_x^T alpha_steps``.
    """
    n = K_n.shape[0]
    prev, cur = torch.zeros_like(K_x), torch.zeros_like(K_x)
    for t in range(1, int(steps) + 1):
        u, w = _nu_coeffs(t, float(nu))
        prev, cur = cur, cur + u * (cur - prev) + w * (K_x - K_n @ cur) / n
    return (K_x * cur).sum(0)


# ---------------------------------------------------------------------------
# the lambda heuristic (Sec. 7, Fig. 3)
# ---------------------------------------------------------------------------
def max_curvature_lambda(eigvals, floor: float = 1e-12) -> float:
    """``lambda`` at the point of maximum curvature of the eigenvalue decay (Sec. 7, Fig. 3).

    The eigenvalues ``s_1 >= s_2 >= ...`` of ``K_n / n`` are drawn as the curve ``(j, log10 s_j)``
    (Fig. 3 plots them on a log scale), both axes rescaled to ``[0, 1]``. The point of maximum
    curvature of this decreasing, convex-looking curve (the elbow where the fast decay turns into the
    flat tail) is located as the point farthest below the chord joining its ends ("Kneedle",
    Satopaa et al. 2011): ``j* = argmax_j (1 - x_j) - y_j``. The returned ``lambda`` is ``s_{j*}``:
    "after this value the eigenvalues are relatively small" (Sec. 7). Eigenvalues below
    ``floor * s_1`` (rounding noise) are dropped first.

    Why not the discrete curvature ``|y''| / (1 + y'^2)^{3/2}``: on the nearly flat tail it is just
    the second difference of rounding-level wiggles, so its maximum lands on the last few
    eigenvalues (on MNIST digits, index 498 of 500), not on the elbow the paper describes.
    """
    s = np.sort(np.asarray(torch.as_tensor(eigvals, dtype=torch.float64).cpu(), dtype=np.float64))[::-1]
    if s.size == 0 or not np.isfinite(s).all() or s[0] <= 0:
        raise ValueError("max_curvature_lambda needs finite eigenvalues with a positive largest one")
    s = s[s > floor * s[0]]
    if s.size < 3:
        return float(s[-1])
    y = np.log10(s)
    span = y[0] - y[-1]
    if span <= 0:
        return float(s[-1])
    y = (y - y[-1]) / span                       # 1 at the top eigenvalue, 0 at the last
    x = np.linspace(0.0, 1.0, s.size)
    return float(s[int(np.argmax((1.0 - x) - y))])


# ---------------------------------------------------------------------------
# kernels: features, graph operators
# ---------------------------------------------------------------------------
def _unit_scale(diag: Tensor, what: str) -> Tensor:
    """``diag^{-1/2}``, or a clear error where the kernel cannot be normalised."""
    if not torch.isfinite(diag).all():
        raise ValueError(f"the kernel diagonal K(x, x) of the {what} is not finite; check the inputs")
    bad = (diag <= 0).nonzero().flatten()
    if bad.numel():
        raise ValueError(
            f"the kernel cannot be normalised: K(x, x) <= 0 for {bad.numel()} {what} (first ids "
            f"{bad[:5].tolist()}); K(x, y)/sqrt(K(x, x) K(y, y)) needs K(x, x) > 0 -- use a kernel with a "
            "positive diagonal (e.g. kernel='abel', or a diffusion/regularised graph kernel instead of the "
            "adjacency)")
    return diag.rsqrt()


def width_heuristic(X, n_neighbors: int = 10, kernel: str | Kernel = "abel") -> float:
    """Sec. 7: the median over training points of the distance to their ``n_neighbors``-th nearest neighbour.

    Distances in the kernel's own metric: l1 for ``laplacian`` (``exp(-||x-y||_1/sigma)``), Euclidean
    otherwise (``abel``, ``gaussian``, ...). ``n_neighbors`` larger than ``n - 1`` is capped at
    ``n - 1`` with a warning (:func:`~graphstk.operators.median_width`).
    """
    name = kernel.name if isinstance(kernel, Kernel) else Kernel(kernel).name
    metric = "manhattan" if name == "laplacian" else "euclidean"
    return median_width(X, k=n_neighbors, metric=metric, param="n_neighbors")


def _as_points(X, dtype, name: str) -> Tensor:
    if isinstance(X, Tensor) and not X.is_floating_point() and X.dtype != torch.bool:
        X = X.to(dtype)
    t = as_features(X, dtype=dtype, name=name)
    return t


# ---------------------------------------------------------------------------
# the estimator
# ---------------------------------------------------------------------------
class SpectralSupportEstimator(BaseEstimator):
    """Spectral support estimator ``F_n`` of Eq. 19 with the filters of Table 1.

    Parameters
    ----------
    kernel : str, :class:`~graphstk.operators.Kernel` or :class:`~graphstk.operators.KernelOperator`
        Default ``"abel"``, ``exp(-||x - y||_2 / sigma)`` (Eq. 13, completely separating). Any name of
        :func:`~graphstk.operators.kernel_function`. A square ``KernelOperator`` ``[N, N]`` (e.g. a graph
        kernel on the nodes of a graph) makes ``fit``/``score_samples`` take node ids (LongTensor or a
        boolean mask of length ``N``) instead of feature rows. The kernel is always normalised,
        ``K(x, y) / sqrt(K(x, x) K(y, y))``, training and test points alike.
    sigma : float > 0 or None
        Kernel width; ``None`` (default) = median distance to the ``n_neighbors``-th nearest neighbour
        of the training points (Sec. 7; :func:`~graphstk.operators.kth_neighbor_distance_median`).
    filter : ``"tikhonov"`` (default) | ``"cutoff"`` | ``"landweber"`` | ``"kpca"`` | ``"nu"``
    lam : float, sequence of floats, or None
        Regularisation parameter(s), ``> 0``. ``None`` (default) = the maximum-curvature point of the
        eigenvalue decay (Sec. 7, Fig. 3; :func:`max_curvature_lambda`). A sequence gives one score
        column per value, all from the same eigendecomposition.
    tau : float in [0, 1] or None
        Offset of Eq. 17: ``x`` is inside when ``F_n(x) >= 1 - tau``. ``None`` (default) = ``tau_n`` of
        Eq. 30, ``1 - min_i F_n(x_i)``, which accepts every training point.
    nu : float > 0
        Order (qualification) of the nu-method; default 1. Only used by ``filter="nu"``.
    approx : None | ``"nystroem"`` | ``"rff"``
        ``None``: exact (an ``n x n`` eigendecomposition, ``O(n^3)``). ``"nystroem"``: ``n_components``
        landmarks drawn from the training points; ``"rff"``: random Fourier features
        (:class:`~graphstk.features.RandomFourierFeatures`, kernels ``gaussian``/``laplacian``/``cauchy``).
        Both cost ``O(n k^2)`` time and ``O(k^2)`` memory beyond one row block.
    n_components : int or None
        ``k`` of the low-rank path (default ``min(n, 2000)`` landmarks; for ``rff``, ``k/2`` frequencies).
    n_neighbors : int, default 10
        ``k`` of the width heuristic.
    seed : int, default 0
        Seeds the landmarks / random features.
    dtype : torch.dtype, default float64
    block_size : int or None
        Rows of kernel evaluated at a time (default: ~4M kernel entries per block).

    Attributes
    ----------
    sigma_ : the width used (None for a ``KernelOperator``); ``lam_`` : float or float64 tensor ``[L]``;
    eigenvalues_ : ``[r]`` eigenvalues of ``K_n/n`` (exact) or of ``T_n`` (low rank), descending;
    tau_n_ : float or ``[L]``, Eq. 30; ``tau_`` : the offset in use; ``threshold_ = 1 - tau_``;
    train_scores_ : ``F_n(x_i)``, ``[n]`` or ``[n, L]``; ``n_samples_fit_``.
    """

    def __init__(self, kernel="abel", sigma=None, filter="tikhonov", lam=None, tau=None, *, nu=1.0,
                 approx=None, n_components=None, n_neighbors=10, seed=0, dtype=torch.float64, block_size=None):
        self.kernel = kernel
        self.sigma = sigma
        self.filter = filter
        self.lam = lam
        self.tau = tau
        self.nu = nu
        self.approx = approx
        self.n_components = n_components
        self.n_neighbors = n_neighbors
        self.seed = seed
        self.dtype = dtype
        self.block_size = block_size

    # -- fitting ---------------------------------------------------------------
    def fit(self, X, y=None):
        """Fit on samples ``X`` of the set (``[n, d]`` features, or node ids for a ``KernelOperator``)."""
        self.filter_ = _check_filter(self.filter)
        if self.filter_ == "nu":
            check_positive("nu", self.nu)
        if self.approx not in _APPROX:
            raise ValueError(f"approx must be one of {_APPROX}, got {self.approx!r}")
        if self.lam is not None:
            _check_lams(self.lam)
        if self.tau is not None and not (np.isscalar(self.tau) and 0.0 <= float(self.tau) <= 1.0):
            raise ValueError(f"tau must be a float in [0, 1] (x is inside when F_n(x) >= 1 - tau), got {self.tau!r}")
        self._graph = isinstance(self.kernel, KernelOperator)
        if self._graph:
            self._fit_operator(X)
        else:
            self._fit_features(X)
        if self.lam is None:
            self.lam_ = max_curvature_lambda(self.eigenvalues_)
        else:
            lams, scalar = _check_lams(self.lam)
            self.lam_ = float(lams[0]) if scalar else lams
        self.train_scores_ = self._train_scores()
        tn = 1.0 - self.train_scores_.min(0).values
        self.tau_n_ = float(tn) if tn.dim() == 0 else tn
        self.tau_ = self.tau_n_ if self.tau is None else float(self.tau)
        self.threshold_ = 1.0 - self.tau_
        return self

    def _check_n(self, n: int):
        if n < 2:
            raise ValueError(f"the support estimator needs at least 2 training points, got {n} "
                             "(Eq. 19 with n = 1 accepts only the training point itself)")

    def _fit_operator(self, idx):
        K = self.kernel
        if K.shape[0] != K.shape[1]:
            raise ValueError(f"a kernel operator must be square [N, N] over all nodes, got shape {tuple(K.shape)}")
        if self.approx is not None:
            raise ValueError("approx applies to feature kernels; a KernelOperator is used exactly (approx=None)")
        ids = as_index(idx, K.shape[0])
        self._check_n(ids.numel())
        self.train_ids_ = ids
        self._scale_all = None
        scale = _unit_scale(K.diagonal().to(torch.float64)[ids], "training nodes")
        Knn = K.block(ids, ids).to_dense().to(torch.float64)
        Knn = scale[:, None] * Knn * scale[None, :]
        self.sigma_ = None
        self.n_samples_fit_ = ids.numel()
        self._scale_train = scale
        self._eig_exact(Knn)

    def _kernel_fn(self) -> Kernel:
        return self.kernel if isinstance(self.kernel, Kernel) else kernel_function(self.kernel)

    def _fit_features(self, X):
        X = _as_points(X, self.dtype, "X")
        n = X.shape[0]
        self._check_n(n)
        base = self._kernel_fn()
        if "sigma" in Kernel(base.name).params:
            if self.sigma is not None:
                sigma = check_positive("sigma", self.sigma)
            elif isinstance(self.kernel, Kernel):
                sigma = self.kernel.params["sigma"]       # a Kernel instance carries its own width
            else:
                sigma = width_heuristic(X, self.n_neighbors, base)
            self.sigma_ = float(sigma)
            self.kernel_ = Kernel(base.name, **{**base.params, "sigma": self.sigma_})
        else:
            if self.sigma is not None:
                raise ValueError(f"kernel {base.name!r} has no width; leave sigma=None")
            self.sigma_ = None
            self.kernel_ = base
        self.n_samples_fit_ = n
        self.n_features_in_ = X.shape[1]
        raw_diag = FeatureKernelOperator(X, kernel=self.kernel_).diagonal()
        _unit_scale(raw_diag.to(torch.float64), "training points")
        if self.approx is None:
            self.X_fit_ = X
            Knn = FeatureKernelOperator(X, kernel=self.kernel_, normalize=True,
                                        block_size=self.block_size).to_dense().to(torch.float64)
            self._eig_exact(Knn)
        else:
            self._fit_lowrank(X)

    def _eig_exact(self, Knn: Tensor):
        n = Knn.shape[0]
        Knn = (Knn + Knn.T) / 2
        s, U = torch.linalg.eigh(Knn / n)
        s, U = s.flip(0).clamp_min(0.0), U.flip(1)
        self.eigenvalues_ = s
        self._U = U                # q_j(x) = (u_j^T K_x)^2 / n, weights g(s_j)
        self._lowrank = False

    def _fit_lowrank(self, X: Tensor):
        n = X.shape[0]
        k = int(self.n_components) if self.n_components is not None else min(n, 2000)
        if k < 1:
            raise ValueError(f"n_components must be >= 1, got {self.n_components!r}")
        if self.approx == "nystroem":
            k = min(k, n)
            g = torch.Generator().manual_seed(int(self.seed))
            self.landmarks_ = X.index_select(0, torch.randperm(n, generator=g)[:k].to(X.device))
            Kmm = FeatureKernelOperator(self.landmarks_, kernel=self.kernel_, normalize=True).to_dense()
            ev, Q = torch.linalg.eigh(((Kmm + Kmm.T) / 2).to(torch.float64))
            keep = ev > ev.max() * 1e-10
            self._nys_map = (Q[:, keep] * ev[keep].rsqrt()).to(self.dtype)   # z(x) = map^T K_m(x)
            self._rff = None
        else:
            from ..features import RandomFourierFeatures
            if self.kernel_.name not in ("gaussian", "laplacian", "cauchy"):
                raise ValueError(f"approx='rff' needs a shift-invariant kernel with a Fourier sampler "
                                 f"(gaussian, laplacian, cauchy), got {self.kernel_.name!r}; use approx='nystroem'")
            self._rff = RandomFourierFeatures(self.kernel_.name, self.sigma_, n_features=max(1, k // 2),
                                              seed=self.seed).fit(X)
        C, cache = None, []
        keep = n * k <= _FEATURE_CACHE_ELEMS     # keep z(x_i) for tau_n instead of recomputing the kernel rows
        for s, e in self._row_blocks(n):
            Z = self._features(X[s:e]).to(torch.float64)
            C = Z.T @ Z if C is None else C + Z.T @ Z
            if keep:
                cache.append(Z)
        s, V = torch.linalg.eigh((C + C.T) / (2 * n))
        self.eigenvalues_ = s.flip(0).clamp_min(0.0)
        self._V = V.flip(1)        # q_j(x) = (v_j^T z(x))^2, weights r(s_j)
        self._lowrank = True
        self._train_q = torch.cat([(Z @ self._V).square() for Z in cache]) if keep else None
        self._X_train_tmp = X       # for tau_n only; dropped after fit

    def _row_blocks(self, n: int):
        bs = self.block_size or max(1, (1 << 22) // max(1, self.n_components or 2000))
        for s in range(0, n, bs):
            yield s, min(n, s + bs)

    def _features(self, Z: Tensor) -> Tensor:
        if self._rff is not None:
            return self._rff.transform(Z)
        Km = FeatureKernelOperator(Z, self.landmarks_, kernel=self.kernel_, normalize=True).to_dense()
        return Km @ self._nys_map

    # -- scoring -----------------------------------------------------------------
    def _weights(self, lam) -> Tensor:
        if self._lowrank:
            return filter_r(self.filter_, self.eigenvalues_, lam, self.nu)
        return filter_g(self.filter_, self.eigenvalues_, lam, self.nu)

    def _q(self, Z) -> Tensor:
        """The squared spectral coordinates ``q_j(x)``, ``[N, r]``."""
        if self._graph:
            ids = as_index(Z, self.kernel.shape[0])
            scale = _unit_scale(self.kernel.diagonal().to(torch.float64)[ids], "scored nodes")
            Kx = self.kernel.block(ids, self.train_ids_).to_dense().to(torch.float64)
            Kx = scale[:, None] * Kx * self._scale_train[None, :]
            return (Kx @ self._U).square() / self.n_samples_fit_
        Z = _as_points(Z, self.dtype, "Z")
        if Z.shape[1] != self.n_features_in_:
            raise ValueError(f"Z has {Z.shape[1]} features, but the estimator was fitted with {self.n_features_in_}")
        diag = FeatureKernelOperator(Z, kernel=self.kernel_).diagonal().to(torch.float64)
        _unit_scale(diag, "scored points")
        if self._lowrank:
            return torch.cat([(self._features(Z[s:e]).to(torch.float64) @ self._V).square()
                              for s, e in self._row_blocks(Z.shape[0])])
        op = FeatureKernelOperator(Z, self.X_fit_, kernel=self.kernel_, normalize=True, block_size=self.block_size)
        return (op @ self._U.to(op.dtype)).to(torch.float64).square() / self.n_samples_fit_   # (u_j^T K_x)^2 / n

    def _train_scores(self) -> Tensor:
        lam = self.lam_
        if self._lowrank:
            X, q = self._X_train_tmp, self._train_q
            del self._X_train_tmp, self._train_q
            F = (self._q(X) if q is None else q) @ self._weights(lam)
        else:
            # (u_j^T K_n)_i = n s_j U_ij, so q_j(x_i) = n s_j^2 U_ij^2
            n = self.n_samples_fit_
            F = (self._U.square() * (n * self.eigenvalues_.square())) @ self._weights(lam)
        return F[:, 0] if not isinstance(lam, Tensor) else F

    def _check_fitted(self):
        if not hasattr(self, "eigenvalues_"):
            raise RuntimeError(f"{type(self).__name__} is not fitted; call fit(X) first")

    def score_samples(self, Z, lam=None) -> Tensor:
        """``F_n(Z)`` of Eq. 19, ``[N]`` (or ``[N, L]`` for a sequence ``lam``).

        ``lam`` (optional) evaluates other regularisation values with the fitted eigendecomposition
        (default: ``lam_``). Feature input ``[N, d]``; node ids for a ``KernelOperator`` kernel.
        """
        self._check_fitted()
        lam = self.lam_ if lam is None else lam
        lams, scalar = _check_lams(lam if not isinstance(lam, Tensor) else lam.cpu().numpy())
        F = self._q(Z) @ self._weights(lams)
        return F[:, 0] if scalar else F

    def decision_function(self, Z) -> Tensor:
        """``F_n(Z) - (1 - tau_)``: non-negative inside the estimated set of Eq. 17."""
        self._check_fitted()
        return self.score_samples(Z) - self.threshold_

    def predict(self, Z) -> Tensor:
        """``+1`` inside ``{F_n >= 1 - tau_}`` (Eq. 17), ``-1`` outside (scikit-learn's outlier convention).

        The comparison allows a rounding slack of ``1e-10``: the training scores behind ``tau_n`` (Eq. 30)
        and the scores of the same points through ``score_samples`` are computed by different float
        operations, and ``tau_n`` must accept every training point.
        """
        return torch.where(self.decision_function(Z) >= -_ROUND_TOL, 1, -1)


# ---------------------------------------------------------------------------
# baselines (Sec. 7)
# ---------------------------------------------------------------------------
class ParzenWindow(BaseEstimator):
    """Parzen window estimate ``p(x) = (1/n) sum_i K(x, x_i)`` with the normalised kernel (Sec. 7 baseline).

    Same kernel and the same width heuristic as :class:`SpectralSupportEstimator` (Abel kernel, ``sigma``
    = median 10th-neighbour distance). ``score_samples`` returns ``p``; thresholding it at a varying
    offset gives the ROC curve.

    Parameters
    ----------
    kernel : str, default "abel"
        Feature kernel name (``"abel"``, ``"laplacian"``, ``"gaussian"``, ...), normalised to ``K(x, x) = 1``.
    sigma : float or None, default None
        Kernel width; ``None`` takes the median distance to the ``n_neighbors``-th nearest neighbour.
    n_neighbors : int, default 10
        The neighbour rank of the width heuristic.
    dtype : torch.dtype, default torch.float64
        Floating dtype of the computation.
    block_size : int or None, default None
        Rows per block when the kernel is evaluated (``None``: the operator's default).

    Fitted attributes: ``sigma_``, ``kernel_``, ``X_fit_``.
    """

    def __init__(self, kernel="abel", sigma=None, n_neighbors=10, dtype=torch.float64, block_size=None):
        self.kernel = kernel
        self.sigma = sigma
        self.n_neighbors = n_neighbors
        self.dtype = dtype
        self.block_size = block_size

    def fit(self, X, y=None):
        X = _as_points(X, self.dtype, "X")
        if X.shape[0] < 2:
            raise ValueError(f"ParzenWindow needs at least 2 training points, got {X.shape[0]}")
        base = kernel_function(self.kernel)
        if "sigma" in Kernel(base.name).params:
            self.sigma_ = (check_positive("sigma", self.sigma) if self.sigma is not None
                           else width_heuristic(X, self.n_neighbors, base))
            self.kernel_ = Kernel(base.name, **{**base.params, "sigma": self.sigma_})
        else:
            self.sigma_, self.kernel_ = None, base
        self.X_fit_ = X
        return self

    def score_samples(self, Z) -> Tensor:
        Z = _as_points(Z, self.dtype, "Z")
        op = FeatureKernelOperator(Z, self.X_fit_, kernel=self.kernel_, normalize=True, block_size=self.block_size)
        return op @ torch.full((self.X_fit_.shape[0],), 1.0 / self.X_fit_.shape[0], dtype=op.dtype)


def gaussian_one_class_svm(sigma: float, nu: float = 0.9, **kwargs):
    """scikit-learn ``OneClassSVM`` with the Gaussian kernel ``exp(-||x-y||^2 / (2 sigma^2))`` (Sec. 7).

    ``gamma = 1 / (2 sigma^2)`` (graphstk's Gaussian convention); ``nu = 0.9`` as in the paper.
    Score with ``decision_function`` (higher = more inside) at a varying offset for the ROC curve.
    """
    from sklearn.svm import OneClassSVM
    sigma = check_positive("sigma", sigma)
    return OneClassSVM(kernel="rbf", gamma=1.0 / (2.0 * sigma * sigma), nu=nu, **kwargs)
