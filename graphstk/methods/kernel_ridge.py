"""Kernel ridge regression on any kernel operator, and ridge on random features (kernel-methods slides,
Proposition 3, squared loss, no ``1/n``): ``alpha = (K + lam I_n)^{-1} y``, the convention of
``sklearn.kernel_ridge.KernelRidge`` (its ``alpha`` is ``lam``; a ``1/n``-normalised objective has
``lam = n lam'``). Targets ``[n, C]`` are ``C`` right-hand sides; ``-1`` is a target value, not a marker.
"""
from __future__ import annotations

import math
import sys
import warnings

import numpy as np
import scipy.sparse as sp
import torch
from numbers import Real

from sklearn.base import BaseEstimator, RegressorMixin, _fit_context, clone
from sklearn.metrics.pairwise import linear_kernel, rbf_kernel
from sklearn.utils.validation import check_array
from torch import Tensor
from tqdm.auto import tqdm

from .._arrays import check_is_fitted, to_output, validate_features
from ..memory import check_allocation
from ..features import RandomFourierFeatures
from ..operators.base import DenseOperator, KernelOperator
from ..operators.feature import FeatureKernelOperator, Kernel, kernel_function
from ._constraints import (NON_NEGATIVE, OPTIONAL_POSITIVE_INT, POSITIVE, POSITIVE_INT, SIGMA, HasMethods, Interval,
                           StrOptions, kernel_names, store_params)
from ..spectral.solvers import cg
from .fredholm.kernel import kernel_from_sigma
from .fredholm.solvers import shifted_solve

__all__ = ["kernel_ridge_solve", "KernelRidge", "RandomFeatureRidge", "block_cg", "cg_products"]

_SPARSE_KERNELS = ("linear", "gaussian")


def _as_targets(y, n: int, dtype, device) -> tuple[Tensor, bool]:
    if y is None:
        raise ValueError("this regressor requires y to be passed, but the target y is None")
    t = y if isinstance(y, Tensor) else torch.as_tensor(check_array(y, ensure_2d=False, dtype=np.float64,
                                                                    input_name="y", ensure_min_samples=0))
    if t.dim() not in (1, 2):
        raise ValueError(f"y must have shape [n] or [n, C], got {tuple(t.shape)}")
    if t.shape[0] != n:
        raise ValueError(f"y has {t.shape[0]} rows but there are {n} training points")
    t = t.to(device=device, dtype=dtype)
    if not bool(torch.isfinite(t).all()):
        raise ValueError("y contains NaN or infinite values")
    vec = t.dim() == 1
    return (t.unsqueeze(1) if vec else t), vec


def block_cg(matvec, B: Tensor, tol: float = 1e-10, max_iter: int | None = None,
             x0: Tensor | None = None, progress: str | None = None) -> tuple[Tensor, int, bool]:
    """Conjugate gradients for ``A X = B`` (``matvec: X -> A X`` on ``[n, C]`` blocks, ``A`` SPD) by
    :func:`graphstk.spectral.cg`, from ``x0``, to relative residual ``tol`` in at most ``max_iter`` (default
    ``10 n``) steps: ``(X, iterations, converged)``. ``progress``: a label for a ``tqdm`` bar on stderr."""
    max_iter = 10 * B.shape[0] if max_iter is None else int(max_iter)
    with tqdm(desc=progress, unit="product", disable=progress is None, leave=False,
              file=sys.stderr) as bar:
        def step(t, rel):
            bar.update(1)
            bar.set_postfix(residual=f"{rel:.1e}", refresh=False)
        res = cg(matvec, B, max_iter, tol, x0=x0, warn=False, callback=None if progress is None else step)
    return res.x, res.n_iter, res.converged


def cg_products(diagonal_sum: float, lam: float, n: int, tol: float, max_iter: int | None = None) -> int:
    """About how many products with ``K`` CG needs for ``(K + lam I) alpha = y`` at most: the classical
    bound ``sqrt(kappa) ln(2 / tol) / 2`` with ``kappa <= (trace K + lam) / lam`` (``trace K`` bounds
    the largest eigenvalue of a PSD ``K``), capped by ``max_iter`` (default ``10 n``)."""
    cap = 10 * n if max_iter is None else int(max_iter)
    if lam <= 0 or tol <= 0:
        return cap
    kappa = (max(float(diagonal_sum), 0.0) + lam) / lam
    return min(cap, max(1, math.ceil(0.5 * math.sqrt(kappa) * math.log(2.0 / tol))))


def kernel_ridge_solve(op: KernelOperator | Tensor, y, lam: float, solver: str = "direct",
                       tol: float = 1e-10, max_iter: int | None = None, return_n_iter: bool = False,
                       progress: str | None = None):
    """``alpha = (K + lam I)^{-1} y`` (slides, Proposition 3) for any square operator ``K``.

    Parameters
    ----------
    op : KernelOperator (or a dense 2-D tensor), square ``[n, n]``, symmetric PSD (CG needs
        ``K + lam I`` positive definite; an indefinite operator such as ``D^-1/2 W D^-1/2``
        needs ``lam`` above minus its smallest eigenvalue).
    y : ``[n]`` or ``[n, C]``.
    lam : float >= 0 (``lam = 0`` only with ``solver="direct"`` and a nonsingular ``K``).
    solver : ``"direct"`` (materialises ``K``: Cholesky, LU fallback; small ``n``) or
        ``"cg"`` (conjugate gradients through ``op @ block`` products only; needs ``lam > 0``).
    tol, max_iter : CG stopping rule (relative residual per column; default ``10 n`` steps).
    return_n_iter : bool, default False. Also return the number of iterations (1 for ``"direct"``).
    progress : str, optional. ``"cg"`` only: a label for a progress bar of the iterations on stderr (``block_cg``).

    Returns ``alpha`` with the shape of ``y``, in the operator's dtype and on its device (and the
    iteration count when ``return_n_iter``). A CG run that does not reach ``tol`` returns its
    last iterate with a ``RuntimeWarning``.
    """
    if isinstance(op, Tensor):
        op = DenseOperator(op)
    if not isinstance(op, KernelOperator):
        raise TypeError(f"op must be a KernelOperator or a 2-D tensor, got {type(op).__name__}")
    n, m = op.shape
    if n != m:
        raise ValueError(f"kernel ridge needs a square operator, got shape {op.shape}")
    lam = float(lam)
    if not math.isfinite(lam) or lam < 0:
        raise ValueError(f"lam must be a finite number >= 0, got {lam!r}")
    Y, vec = _as_targets(y, n, op.dtype, op.device)
    it = 1
    if solver == "direct":
        try:
            alpha = shifted_solve(op.to_dense(), Y, lam)
        except RuntimeError as exc:  # singular
            raise ValueError(f"K + lam I is singular (lam = {lam}); use lam > 0") from exc
    elif solver == "cg":
        if lam <= 0:
            raise ValueError("solver='cg' needs lam > 0 (K is only positive semi-definite)")
        alpha, it, ok = block_cg(lambda V: op @ V + lam * V, Y, tol=tol, max_iter=max_iter, progress=progress)
        if not ok:
            warnings.warn(f"kernel_ridge_solve: CG did not reach tol={tol} in {it} iterations", RuntimeWarning)
    else:
        raise ValueError(f"solver must be 'direct' or 'cg', got {solver!r}")
    alpha = alpha.squeeze(1) if vec else alpha
    return (alpha, int(it)) if return_n_iter else alpha


class _Ridge(RegressorMixin, BaseEstimator):
    """The regressor contract of :class:`KernelRidge` and :class:`RandomFeatureRidge` (``_fit``, ``_predict``)."""

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit on ``X`` ``[n, d]`` (Tensor or array) and targets ``y`` ``[n]`` or ``[n, C]`` of every row
        (``-1`` is a target value, not an unlabeled marker); returns ``self``."""
        return self._fit(X, y)

    def predict(self, X):
        """``f(x)`` for every row of ``X`` ``[m, d]``: ``[m]`` or ``[m, C]`` (as ``y``), ``X``'s array type."""
        check_is_fitted(self)
        return to_output(self._predict(X), X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags


class KernelRidge(_Ridge):
    """Kernel ridge regression with a feature kernel: ``alpha = (K + lam I)^{-1} y``
    (slides, Proposition 3; no ``1/n``), ``f(x) = sum_i alpha_i k(x, x_i)``.

    A scikit-learn regressor (``X`` ``[n, d]``, ``y`` ``[n]`` or ``[n, C]``); with the linear and Gaussian
    kernels ``X`` may be ``scipy.sparse`` (CPU).

    Parameters
    ----------
    kernel, degree, c, normalize :
        the kernel (see :func:`graphstk.operators.kernel_function`; ``normalize`` uses
        ``K(x,y)/sqrt(K(x,x)K(y,y))`` for training and test points alike).
    sigma : float > 0 or None, default None
        Width of the Gaussian ``exp(-||x - y||^2 / (2 sigma^2))`` (the scale of other kernels with a
        width). ``None``: the median heuristic over the training points.
    lam : float >= 0, the ridge parameter.
    solver : ``"direct"`` or ``"cg"`` (CG uses blockwise kernel products, no ``n x n`` matrix).
    block_size, tol, max_iter : forwarded to the operator / CG.
    verbose : bool or None, default None
        A progress bar of the CG iterations on stderr (``solver="cg"``): ``None`` shows it when
        stderr is a terminal, ``True`` always, ``False`` never.

    Attributes after ``fit``: ``X_fit_`` ``[n, d]``, ``dual_coef_`` (``alpha``, shape of ``y``),
    ``kernel_`` (the :class:`~graphstk.operators.Kernel`), ``sigma_`` (the width used, ``None`` for
    a kernel without one), ``n_features_in_``, ``n_iter_`` (CG iterations; 1 for ``"direct"``).
    """

    _parameter_constraints: dict = {
        "kernel": [kernel_names(), Kernel], "sigma": SIGMA, "lam": NON_NEGATIVE,
        "degree": OPTIONAL_POSITIVE_INT, "c": [Interval(Real, 0, None, closed="left"), None],
        "normalize": ["boolean"], "solver": [StrOptions({"direct", "cg"})], "block_size": OPTIONAL_POSITIVE_INT,
        "tol": NON_NEGATIVE, "max_iter": OPTIONAL_POSITIVE_INT, "verbose": ["boolean", None],
    }

    def __init__(self, kernel: str = "gaussian", sigma: float | None = None, lam: float = 1.0,
                 degree: int | None = None, c: float | None = None, normalize: bool = False,
                 solver: str = "direct", block_size: int | None = None, tol: float = 1e-10,
                 max_iter: int | None = None, verbose: bool | None = None):
        store_params(self, locals())

    def _fit(self, X, y):
        name = self.kernel.name if isinstance(self.kernel, Kernel) else kernel_function(self.kernel).name
        X = validate_features(self, X, reset=True, accept_sparse=name in _SPARSE_KERNELS)
        self.kernel_ = kernel_from_sigma(self.kernel, self.sigma, X=X, degree=self.degree, c=self.c)
        self.sigma_ = self.kernel_.sigma
        n = X.shape[0]
        if sp.issparse(X):
            check_allocation(2.0 * n * n * 8, f"the {n} x {n} kernel matrix (sparse X)",
                             "pass X.toarray() with solver='cg' (sparse X builds the whole kernel matrix; dense "
                             f"X with solver='cg' takes kernel products in row blocks, {self._cg_work(n, X)})", "cpu")
        elif self.solver == "direct":
            check_allocation(2.0 * n * n * 8, f"the {n} x {n} kernel matrix (solver='direct')",
                             "pass solver='cg' (kernel products in row blocks, no n x n matrix; "
                             f"{self._cg_work(n, X)})", X.device)
        self.X_fit_ = X
        show = self.verbose if self.verbose is not None else sys.stderr.isatty()
        self.dual_coef_, self.n_iter_ = kernel_ridge_solve(self._operator(X), y, self.lam, solver=self.solver,
                                                           tol=self.tol, max_iter=self.max_iter, return_n_iter=True,
                                                           progress=f"{type(self).__name__} cg" if show else None)
        self._y = y
        return self

    def _cg_work(self, n: int, X) -> str:
        """The work of ``solver='cg'`` on these points, for a message (:func:`cg_products`)."""
        if sp.issparse(X):
            trace = float(X.multiply(X).sum()) if self.kernel_.name == "linear" else float(n)
        else:
            trace = float(FeatureKernelOperator(X, kernel=self.kernel_, normalize=self.normalize).diagonal().sum())
        k = cg_products(trace, float(self.lam), n, float(self.tol), self.max_iter)
        return f"cg: about {k} products of an {n} x {n} kernel in blocks at most"

    def _operator(self, X) -> KernelOperator:
        """``K(X, X_fit_)``: lazy, or dense from :mod:`sklearn.metrics.pairwise` for ``scipy.sparse`` points."""
        Y = None if X is self.X_fit_ else self.X_fit_
        if sp.issparse(X):
            if self.normalize:
                raise ValueError("normalize=True needs dense X; pass X.toarray()")
            G = (linear_kernel(X, Y) if self.kernel_.name == "linear"
                 else rbf_kernel(X, Y, gamma=0.5 / self.kernel_.sigma ** 2))
            return DenseOperator(torch.from_numpy(np.asarray(G, dtype=np.float64)))
        return FeatureKernelOperator(X, Y, kernel=self.kernel_, normalize=self.normalize, block_size=self.block_size)

    def _validated(self, X):
        Xt = validate_features(self, X, reset=False, accept_sparse=sp.issparse(self.X_fit_))
        return Xt if sp.issparse(Xt) else Xt.to(device=self.X_fit_.device, dtype=self.X_fit_.dtype)

    def _predict(self, X):
        return self._operator(self._validated(X)) @ self.dual_coef_

    def predict_path(self, X, lams) -> list:
        """``predict(X)`` for every ``lam`` in ``lams`` from one evaluation of ``K(X, X_fit_)`` (the fitted state
        is unchanged; ``solver="direct"`` forms the training kernel once). A list of arrays of ``X``'s type."""
        check_is_fitted(self)
        K_X = self._operator(self._validated(X)).to_dense()
        K = self._operator(self.X_fit_)
        if self.solver == "direct":
            K = DenseOperator(K.to_dense())
        return [to_output(K_X @ kernel_ridge_solve(K, self._y, lam, solver=self.solver, tol=self.tol,
                                                   max_iter=self.max_iter), X) for lam in lams]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = str(self.kernel).lower() in _SPARSE_KERNELS + ("rbf",) and not self.normalize
        return tags


def _dense_t(t: Tensor) -> Tensor:
    return t.to_dense() if t.is_sparse else t


def _lstsq(A: Tensor, B: Tensor) -> Tensor:
    return torch.linalg.lstsq(A, B).solution


class RandomFeatureRidge(_Ridge):
    """Ridge regression in the primal on random features:
    ``w = (Z^T Z + lam I)^{-1} Z^T y``, ``f(x) = z(x)^T w`` with ``z(x)^T z(y) ~ k(x, y)``
    (slides Eq. 1 and Eq. 4 / Eq. 8). Cost ``O(n F^2)`` for ``F`` features instead of ``O(n^3)``.

    A scikit-learn regressor (``X`` ``[n, d]``, ``y`` ``[n]`` or ``[n, C]``).

    Parameters
    ----------
    features : a graphstk random-feature transformer, optional
        :class:`graphstk.features.RandomFourierFeatures` or
        :class:`graphstk.features.RandomBinningFeatures` (tensor in, dense or sparse tensor out);
        cloned at ``fit``. When omitted, ``RandomFourierFeatures(kernel, sigma, n_features,
        random_state, map)`` is used.
    kernel, sigma, n_features, map : the default feature map's parameters (defaults
        ``"gaussian"``, 1.0, 100, ``"cos_sin"``).
    random_state : int, RandomState or None, default None. Seeds the default feature map.
    lam : float >= 0, the same ``lam`` as in :class:`KernelRidge`.
    solver : ``"primal"`` (alias ``"direct"``; Cholesky of ``Z^T Z + lam I``, ``F x F``),
        ``"dual"`` (the same ``w = Z^T (Z Z^T + lam I)^{-1} y`` by the push-through identity,
        ``n x n``), ``"cg"`` (primal CG, products with ``Z`` and ``Z^T`` only), or ``"auto"``
        (the smaller of primal/dual when ``min(n, F) <= 8192``, else CG).
    tol : float, default 1e-10. Relative residual of the CG solve.
    max_iter : int, optional. Iteration cap of the CG solve.

    Attributes after ``fit``: ``features_`` (the fitted map), ``coef_`` ``[F]`` or ``[F, C]``,
    ``n_features_in_``, ``n_iter_`` (CG iterations; 1 for a direct solve).
    """

    _parameter_constraints: dict = {
        "features": [HasMethods(["fit", "transform"]), None],
        "kernel": [StrOptions({"gaussian", "laplacian", "cauchy"})],
        "sigma": POSITIVE, "n_features": POSITIVE_INT, "random_state": ["random_state"],
        "map": [StrOptions({"cos_sin", "phase"})], "lam": NON_NEGATIVE,
        "solver": [StrOptions({"auto", "primal", "direct", "dual", "cg"})], "tol": NON_NEGATIVE,
        "max_iter": OPTIONAL_POSITIVE_INT,
    }

    def __init__(self, features=None, kernel: str = "gaussian", sigma: float = 1.0, n_features: int = 100,
                 random_state=None, map: str = "cos_sin", lam: float = 1.0, solver: str = "auto",
                 tol: float = 1e-10, max_iter: int | None = None):
        store_params(self, locals())

    def _make_features(self):
        if self.features is not None:
            return clone(self.features)
        return RandomFourierFeatures(kernel=self.kernel, sigma=self.sigma, n_features=self.n_features,
                                     random_state=self.random_state, map=self.map)

    def _fit(self, X, y):
        lam = float(self.lam)
        Xt = validate_features(self, X, reset=True)
        self.features_ = self._make_features()
        Z = self.features_.fit_transform(Xt)
        n, F = Z.shape
        Y, vec = _as_targets(y, n, Z.dtype, Z.device)
        solver, it = {"direct": "primal"}.get(self.solver, self.solver), 1
        if solver == "auto":
            solver = ("primal" if F <= n else "dual") if min(n, F) <= 8192 else "cg"
        if solver == "primal":
            A = Z.t() @ Z
            w = shifted_solve(_dense_t(A), _dense_t(Z.t() @ Y), lam, _lstsq)
        elif solver == "dual":  # push-through identity: same w, an n x n system
            A = Z @ Z.t()
            w = _dense_t(Z.t() @ shifted_solve(_dense_t(A), Y, lam, _lstsq))
        else:
            if lam <= 0:
                raise ValueError("solver='cg' needs lam > 0")
            Zt = Z.t()
            w, it, ok = block_cg(lambda V: Zt @ (Z @ V) + lam * V, _dense_t(Zt @ Y),
                                 tol=self.tol, max_iter=self.max_iter)
            if not ok:
                warnings.warn(f"RandomFeatureRidge: CG did not reach tol={self.tol} in {it} iterations",
                              RuntimeWarning)
        self.coef_ = w.squeeze(1) if vec else w
        self.n_iter_ = int(it)
        return self

    def _predict(self, X):
        Z = self.features_.transform(validate_features(self, X, reset=False))
        return Z @ self.coef_.to(device=Z.device, dtype=Z.dtype)
