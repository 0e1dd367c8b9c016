"""The spectral support estimator of De Vito, Rosasco, Toigo, "Learning sets with separating kernels"
(ACHA 2014), Sec. 4 and 7, with the errata of ``notes/kernel_papers_errata.md``: ``F_n`` of Eq. 19 from one
eigendecomposition of ``K_n / n`` for every ``lambda`` and filter, exact or low rank (``docs/methods.md``).
"""
from __future__ import annotations

import math
from numbers import Real

import numpy as np
import torch
from sklearn.base import _fit_context
from sklearn.utils import check_random_state
from torch import Tensor

from ..._arrays import to_output
from ...features import RandomFourierFeatures
from ...features.random_features import RFF_KERNELS as RFF_KERNELS
from ...memory import check_allocation, memory_limit
from ...operators.base import KernelOperator, as_index
from ...operators.feature import FeatureKernelOperator, Kernel, kernel_function
from .._constraints import (OPTIONAL_POSITIVE_INT, POSITIVE, POSITIVE_INT, Interval, StrOptions, kernel_names,
                            store_params)
from .base import DTYPE_CONSTRAINT, SIGMA_KNN, OneClassEstimator, as_float_offset, unit_scale
from ...spectral.filters import FILTER_NAMES
from .filters import check_lams, filter_g, filter_r, max_curvature_lambda

__all__ = ["SpectralSupportEstimator"]

_FEATURE_CACHE_ELEMS = 1 << 27      # low-rank fit: keep the n x k training features up to 1 GiB (float64)


def _seed(random_state) -> int:
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        return int(random_state)
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


class SpectralSupportEstimator(OneClassEstimator):
    """Spectral support estimator ``F_n`` of Eq. 19 with the filters of Table 1.

    ``fit(X, y=None)``: ``X [n, d]`` samples of the set, or node ids (LongTensor or boolean mask) for a
    ``KernelOperator`` kernel; ``score_samples`` is ``F_n`` (Eq. 19), ``predict`` ``+1`` inside
    ``{F_n >= 1 - tau_}`` (Eq. 17). Every step runs on the input's device.

    Parameters
    ----------
    kernel : str, :class:`~graphstk.operators.Kernel` or :class:`~graphstk.operators.KernelOperator`
        Default ``"abel"``, ``exp(-||x - y||_2 / sigma)`` (Eq. 13, completely separating). Any name of
        :func:`~graphstk.operators.kernel_function`. A square ``KernelOperator`` ``[N, N]`` (e.g. a graph
        kernel on the nodes of a graph) makes ``fit``/``score_samples`` take node ids instead of feature
        rows. The kernel is always normalised, ``K(x, y) / sqrt(K(x, x) K(y, y))``.
    sigma : float > 0 or None, default None
        Kernel width; ``None`` = median distance to the ``n_neighbors``-th nearest neighbour
        of the training points (Sec. 7; :func:`~graphstk.operators.kth_neighbor_distance_median`).
    filter : ``"tikhonov"`` (default) | ``"cutoff"`` | ``"landweber"`` | ``"kpca"`` | ``"nu"``
    lam : float, sequence of floats, or None, default None
        Regularisation parameter(s), ``> 0``. ``None`` = the maximum-curvature point of the
        eigenvalue decay (Sec. 7, Fig. 3; ``max_curvature_lambda``). A
        sequence gives one score column per value, all from the same eigendecomposition.
    tau : float in [0, 1] or None, default None
        Offset of Eq. 17: ``x`` is inside when ``F_n(x) >= 1 - tau``. ``None`` = ``tau_n`` of
        Eq. 30, ``1 - min_i F_n(x_i)``, which accepts every training point.
    nu : float > 0, default 1.0. Order (qualification) of the nu-method. Only used by ``filter="nu"``.
    approx : None | ``"nystroem"`` | ``"rff"``, default None
        ``None``: exact (an ``n x n`` kernel and its eigendecomposition, ``O(n^3)``; refused up front
        when it does not fit in memory). ``"nystroem"``: ``n_components`` landmarks drawn from the
        training points; ``"rff"``: random Fourier features (kernels ``gaussian``/``laplacian``/``cauchy``).
        Both cost ``O(n k^2)`` time and ``O(k^2)`` memory beyond one row block.
    n_components : int or None, default None
        ``k`` of the low-rank path (``None``: ``min(n, 2000)`` landmarks; for ``rff``, ``k/2`` frequencies).
    n_neighbors : int, default 10. ``k`` of the width heuristic.
    random_state : int, RandomState or None, default None. Seeds the landmarks / random features.
    dtype : {"float64", "float32"} or None, default None. Computation dtype (``None``: float64).
    block_size : int or None, default None
        Rows of kernel evaluated at a time (default: ~4M kernel entries per block).

    Attributes after ``fit``: ``sigma_`` (the width used, None for a ``KernelOperator``), ``kernel_``,
    ``lam_`` (float or float64 tensor ``[L]``), ``eigenvalues_`` ``[r]`` (of ``K_n/n`` exact or of ``T_n``
    low rank, descending), ``tau_n_`` (Eq. 30, float or ``[L]``), ``tau_`` (the offset in use;
    ``threshold_ = 1 - tau_``), ``offset_`` (``threshold_ - 1e-10``, a rounding slack), ``train_scores_``
    ``[n]`` or ``[n, L]`` (``F_n(x_i)``), ``n_samples_fit_``, ``n_features_in_``.
    """

    _parameter_constraints: dict = {
        "kernel": [kernel_names(), Kernel, KernelOperator], "sigma": SIGMA_KNN,
        "filter": [StrOptions(set(FILTER_NAMES))],
        "lam": [Interval(Real, 0, None, closed="neither"), "array-like", None],
        "tau": [Interval(Real, 0, 1, closed="both"), None], "nu": POSITIVE,
        "approx": [StrOptions({"nystroem", "rff"}), None], "n_components": OPTIONAL_POSITIVE_INT,
        "n_neighbors": POSITIVE_INT, "random_state": ["random_state"], "dtype": DTYPE_CONSTRAINT,
        "block_size": OPTIONAL_POSITIVE_INT,
    }

    def __init__(self, kernel="abel", sigma=None, filter="tikhonov", lam=None, tau=None, *, nu=1.0,
                 approx=None, n_components=None, n_neighbors=10, random_state=None, dtype=None, block_size=None):
        store_params(self, locals())

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Fit on samples ``X`` of the set (``[n, d]`` features, or node ids for a ``KernelOperator``)."""
        self.filter_ = FILTER_NAMES[self.filter]
        lams = None if self.lam is None else check_lams(self.lam)     # the values of an array-like lam
        dtype = self._compute_dtype()
        self._graph = isinstance(self.kernel, KernelOperator)
        if self._graph:
            self._fit_operator(X)
        else:
            self._fit_features(X, dtype)
        if lams is None:
            self.lam_ = max_curvature_lambda(self.eigenvalues_)
        else:
            self.lam_ = float(lams[0][0]) if lams[1] else lams[0]
        self.train_scores_ = self._train_scores()
        tn = 1.0 - self.train_scores_.min(0).values
        self.tau_n_ = float(tn) if tn.dim() == 0 else tn
        self.tau_ = self.tau_n_ if self.tau is None else float(self.tau)
        self.threshold_ = 1.0 - self.tau_
        self.offset_ = as_float_offset(self.threshold_)
        return self

    def _check_exact_memory(self, n: int, device, kernel: str | None = None):
        """Refuse an exact fit on ``n`` points that cannot fit, advising what works (``kernel=None``: an operator)."""
        need = 3.0 * n * n * 8
        if need <= memory_limit(device)[0]:
            return
        if kernel is None:
            most = int(math.isqrt(int(memory_limit(device)[0] // 24)))
            hint = (f"a KernelOperator is used exactly (approx does not apply): fit on at most {most} training "
                    "nodes (a subset of idx)")
        elif kernel in RFF_KERNELS:
            hint = ("pass approx='nystroem' or approx='rff' with n_components=k < n (O(n k) memory; the "
                    "default k is min(n, 2000))")
        else:
            hint = (f"pass approx='nystroem' with n_components=k < n (O(n k) memory; the default k is min(n, 2000)); "
                    f"approx='rff' needs a shift-invariant kernel ({', '.join(RFF_KERNELS)}), not {kernel!r}")
        check_allocation(need, f"the exact spectral support estimate on {n} points (an {n} x {n} kernel "
                         "matrix and its eigendecomposition)", hint, device=device)

    def _fit_operator(self, idx):
        K = self.kernel
        if K.shape[0] != K.shape[1]:
            raise ValueError(f"a kernel operator must be square [N, N] over all nodes, got shape {tuple(K.shape)}")
        if self.approx is not None:
            raise ValueError("approx applies to feature kernels; a KernelOperator is used exactly (approx=None)")
        ids = as_index(idx, K.shape[0], K.device)
        self._check_n(ids.numel())
        self._check_exact_memory(ids.numel(), K.device)
        self.train_ids_ = ids
        scale = unit_scale(K.diagonal().to(torch.float64)[ids], "training nodes")
        Knn = K.block(ids, ids).to_dense().to(torch.float64)
        self.sigma_, self.kernel_ = None, K
        self.n_samples_fit_ = ids.numel()
        self._scale_train = scale
        self._eig_exact(scale[:, None] * Knn * scale[None, :])

    def _fit_features(self, X, dtype):
        X = self._points(X, reset=True)
        n = X.shape[0]
        self._check_n(n)
        base = self.kernel if isinstance(self.kernel, Kernel) else kernel_function(self.kernel)
        if self.approx is None:
            self._check_exact_memory(n, X.device, base.name)
        self._resolve_kernel(X, base)
        self.n_samples_fit_ = n
        unit_scale(FeatureKernelOperator(X, kernel=self.kernel_).diagonal().to(torch.float64), "training points")
        if self.approx is None:
            self.X_fit_ = X
            Knn = FeatureKernelOperator(X, kernel=self.kernel_, normalize=True,
                                        block_size=self.block_size).to_dense().to(torch.float64)
            self._eig_exact(Knn)
        else:
            self._fit_lowrank(X)

    def _eig_exact(self, Knn: Tensor):
        n = Knn.shape[0]
        s, U = torch.linalg.eigh((Knn + Knn.T) / (2 * n))
        self.eigenvalues_ = s.flip(0).clamp_min(0.0)
        self._U = U.flip(1)        # q_j(x) = (u_j^T K_x)^2 / n, weights g(s_j)
        self._lowrank = False

    def _fit_lowrank(self, X: Tensor):
        n = X.shape[0]
        k = int(self.n_components) if self.n_components is not None else min(n, 2000)
        seed = _seed(self.random_state)
        if self.approx == "nystroem":
            k = min(k, n)
            g = torch.Generator().manual_seed(seed)
            self.landmarks_ = X.index_select(0, torch.randperm(n, generator=g)[:k].to(X.device))
            Kmm = FeatureKernelOperator(self.landmarks_, kernel=self.kernel_, normalize=True).to_dense()
            ev, Q = torch.linalg.eigh(((Kmm + Kmm.T) / 2).to(torch.float64))
            keep = ev > ev.max() * 1e-10
            self._nys_map = (Q[:, keep] * ev[keep].rsqrt()).to(X.dtype)   # z(x) = map^T K_m(x)
            self._rff = None
        else:
            if self.kernel_.name not in RFF_KERNELS:
                raise ValueError(f"approx='rff' needs a shift-invariant kernel with a Fourier sampler "
                                 f"({', '.join(RFF_KERNELS)}), got {self.kernel_.name!r}; use approx='nystroem'")
            self._rff = RandomFourierFeatures(self.kernel_.name, self.sigma_, n_features=max(1, k // 2),
                                              random_state=seed).fit(X)
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
            return torch.as_tensor(self._rff.transform(Z), device=Z.device)
        Km = FeatureKernelOperator(Z, self.landmarks_, kernel=self.kernel_, normalize=True).to_dense()
        return Km @ self._nys_map

    def _weights(self, lam) -> Tensor:
        if self._lowrank:
            return filter_r(self.filter_, self.eigenvalues_, lam, self.nu)
        return filter_g(self.filter_, self.eigenvalues_, lam, self.nu)

    def _q(self, Z, validated: bool = False) -> Tensor:
        """The squared spectral coordinates ``q_j(x)``, ``[N, r]``."""
        if self._graph:
            ids = as_index(Z, self.kernel.shape[0], self.kernel.device)
            scale = unit_scale(self.kernel.diagonal().to(torch.float64)[ids], "scored nodes")
            Kx = self.kernel.block(ids, self.train_ids_).to_dense().to(torch.float64)
            Kx = scale[:, None] * Kx * self._scale_train[None, :]
            return (Kx @ self._U).square() / self.n_samples_fit_
        if not validated:
            Z = self._points(Z, reset=False)
        unit_scale(FeatureKernelOperator(Z, kernel=self.kernel_).diagonal().to(torch.float64), "scored points")
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
            F = (self._q(X, validated=True) if q is None else q) @ self._weights(lam)
        else:
            # q_j(x_i) = n s_j^2 U_ij^2
            n = self.n_samples_fit_
            F = (self._U.square() * (n * self.eigenvalues_.square())) @ self._weights(lam)
        return F[:, 0] if not isinstance(lam, Tensor) else F

    def _scores(self, X, lam=None) -> Tensor:
        self._check_fitted()
        lams, scalar = check_lams(self.lam_ if lam is None else lam)
        F = self._q(X) @ self._weights(lams)
        return F[:, 0] if scalar else F

    def score_samples(self, X, lam=None):
        """``F_n(X)`` of Eq. 19, ``[N]`` (or ``[N, L]`` for a sequence ``lam``).

        ``lam`` (optional) evaluates other regularisation values with the fitted eigendecomposition
        (default: ``lam_``). Feature input ``[N, d]``; node ids for a ``KernelOperator`` kernel.
        """
        return to_output(self._scores(X, lam), X)
