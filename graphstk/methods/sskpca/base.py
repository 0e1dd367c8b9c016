"""The shared fit / transform / predict of the semi-supervised KPCA estimators (see :mod:`.estimators`)."""
from __future__ import annotations

import copy
import math
import warnings

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from torch import Tensor

from ..._arrays import check_is_fitted, is_torch, semi_supervised_labels, to_output, validate_features
from ...memory import check_allocation, memory_limit
from ...operators.base import KernelOperator
from ...operators.diffusion import gaussian_knn_graph, laplacian_eigenpairs
from ...operators.feature import FeatureKernelOperator, Kernel, kernel_function, median_distance
from .basis import BASIS_CACHE, DECOMPOSITIONS, array_key, basis_from_eigenpairs, kernel_basis
from .heads import fit_linear_head
from .secular import pencil, targets

__all__ = ["SSKPCABase", "COMMON_DOC"]

_TRANSDUCTIVE = ("diffusion", "mixture")
_DENSE_MAX = 6000       # fit points decomposed densely; above, rank= and Lanczos


class SSKPCABase(ClassNamePrefixFeaturesOutMixin, ClassifierMixin, TransformerMixin, BaseEstimator):
    """Shared fit/transform/predict of the semi-supervised KPCA estimators (module docstring).

    Fitted attributes: ``classes_``, ``n_features_in_``, ``basis_``
    (:class:`~graphstk.methods.sskpca.KernelBasis`), ``beta_ [r, k]``, ``dual_coef_ [m, k]``
    (``alpha``), ``embedding_ [m, k]`` (``f`` on the fit points), ``feature_scale_ [k]``,
    ``head_`` (:class:`~graphstk.methods.sskpca.LinearHead`), ``kernel_``, ``gamma_`` (Gaussian
    kernels), ``X_fit_`` (feature kernels); NumPy on the host except ``X_fit_``.
    """

    _paired = False          # LS-/LR-KPCA: one eigenfunction per one-vs-rest column
    _path_keys: tuple = ()   # parameters that may vary along :meth:`fit_path`

    # -- parameters -------------------------------------------------------------
    def _precomputed(self) -> bool:
        return isinstance(self.kernel, str) and self.kernel == "precomputed"

    def _kind(self) -> str:
        if isinstance(self.kernel, str) and self.kernel.lower() in _TRANSDUCTIVE + ("precomputed",):
            return self.kernel.lower()
        return "feature"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self._precomputed()
        return tags

    def _feature_kernel(self, X: Tensor) -> Kernel:
        if isinstance(self.kernel, Kernel):
            return self.kernel
        name = "gaussian" if self._kind() in _TRANSDUCTIVE else str(self.kernel).lower()
        if name in ("gaussian", "rbf"):
            gamma = self.gamma
            if gamma is None:
                med = median_distance(X) if X.shape[0] > 1 else 0.0
                if not med > 0:
                    raise ValueError("the fit points have median pairwise distance 0: the default Gaussian width "
                                     "is undefined; pass gamma= explicitly")
                gamma = 1.0 / (2.0 * med ** 2)
            gamma = float(gamma)
            if not gamma > 0 or not math.isfinite(gamma):
                raise ValueError(f"gamma must be a finite number > 0 (k(x, y) = exp(-gamma ||x - y||^2)), got "
                                 f"{self.gamma!r}")
            self.gamma_ = gamma
            return kernel_function("gaussian", sigma=1.0 / math.sqrt(2.0 * gamma))
        return kernel_function(name)

    def _check_common(self):
        if self.rank is not None and (isinstance(self.rank, bool) or int(self.rank) != self.rank or self.rank < 1):
            raise ValueError(f"rank must be a positive integer or None, got {self.rank!r}")

    # -- fit ------------------------------------------------------------------------
    def _validate(self, X):
        """``X`` checked (a tensor on its device, or a square KernelOperator); sets ``n_features_in_``."""
        self._device = X.device if isinstance(X, (Tensor, KernelOperator)) else torch.device("cpu")
        if isinstance(X, KernelOperator):
            if not self._precomputed():
                raise TypeError(f"{type(self).__name__} got a KernelOperator as X: pass kernel='precomputed'")
            self.n_features_in_ = int(X.shape[1])
        else:
            X = validate_features(self, X, reset=True, dtype=torch.float64)
        if self._precomputed() and X.shape[0] != X.shape[1]:
            raise ValueError(f'kernel="precomputed" needs the square [m, m] fit kernel, got {tuple(X.shape)}')
        return X

    def _basis(self, Xt):
        """Build the fit kernel of the validated ``Xt`` and its (cached) basis; returns ``m``."""
        rank, centered, kind = self.rank, bool(self.centered), self._kind()
        m = int(Xt.shape[0])
        if kind == "precomputed":
            if isinstance(Xt, KernelOperator):
                self.basis_ = kernel_basis(Xt, rank=rank, centered=centered)
            else:
                key = ("pre", array_key(Xt), rank, centered)
                self.basis_ = BASIS_CACHE.get(key, lambda: kernel_basis(Xt, rank=rank, centered=centered))
            return m
        self.X_fit_ = Xt
        xkey = array_key(Xt)
        if kind == "feature":
            kern = self.kernel_ = self._feature_kernel(Xt)

            def make():
                op = FeatureKernelOperator(Xt, kernel=kern)
                # Lanczos on the lazy kernel (rank= required), never m x m in memory: above _DENSE_MAX, or
                # where rank= is given and the dense decomposition does not fit the process
                if m > _DENSE_MAX or (rank is not None and 3.0 * m * m * 8 > memory_limit(Xt.device)[0]):
                    return kernel_basis(op, rank=rank, centered=centered, dense_max=_DENSE_MAX)
                check_allocation(3.0 * m * m * 8, f"the {m} x {m} fit kernel matrix and its eigendecomposition",
                                 "pass rank=r (e.g. rank=500: the top-r eigenpairs by Lanczos, no m x m matrix)",
                                 device=Xt.device)
                return kernel_basis(op.to_dense(), rank=rank, centered=centered, dense_max=_DENSE_MAX)
            self.basis_ = BASIS_CACHE.get(("feat", xkey, repr(kern), rank, centered), make)
            return m
        # transductive graph kernels of the fit points (Sec. 7.2)
        self._row_index = {bytes(r): i for i, r in enumerate(Xt.detach().cpu().numpy())}
        k = int(self.n_neighbors)
        tau = float(self.tau)
        if not tau > 0:
            raise ValueError(f"tau must be > 0 (the diffusion time of exp(-tau L)), got {self.tau!r}")

        def lap():
            ei, wts = gaussian_knn_graph(Xt.cpu(), k)
            mu, U = laplacian_eigenpairs(ei, m, wts)
            DECOMPOSITIONS["kernel"] += 1
            return mu.numpy(), U.numpy()
        mu, U = BASIS_CACHE.get(("lap", xkey, k), lap)
        if kind == "diffusion":
            self.kernel_ = "diffusion"
            self.basis_ = BASIS_CACHE.get(("diff", xkey, k, tau, rank, centered),
                                          lambda: basis_from_eigenpairs(np.exp(-tau * mu), U, rank, centered))
            return m
        w = float(self.w)
        if not 0.0 <= w <= 1.0:
            raise ValueError(f"the mixture weight w must lie in [0, 1], got {self.w!r}")
        kern = self.kernel_ = self._feature_kernel(Xt)

        def mix():
            Kg = FeatureKernelOperator(Xt, kernel=kern).to_dense().detach().cpu().numpy()
            return kernel_basis(w * Kg + (1.0 - w) * ((U * np.exp(-tau * mu)) @ U.T), rank=rank, centered=centered)
        self.basis_ = BASIS_CACHE.get(("mix", xkey, k, tau, w, repr(kern), rank, centered), mix)
        return m

    def _prepare(self, X, y):
        self._check_common()
        self._check_params()
        Xt = self._validate(X)
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None (labels, with "
                             "-1 for unlabeled points)")
        labeled, classes, codes = semi_supervised_labels(y, int(Xt.shape[0]), min_classes=2)
        self._basis(Xt)
        self.classes_ = classes
        lab = np.flatnonzero(labeled)
        return lab, codes[lab]

    def _check_params(self):
        """Estimator-specific parameter checks (before any work)."""

    def fit(self, X, y):
        """Fit on ``X`` (``[m, d]`` features, or the ``[m, m]`` kernel with ``kernel="precomputed"``)
        and ``y [m]`` (class labels, ``-1`` for unlabeled points). Returns ``self``."""
        lab, codes = self._prepare(X, y)
        self._solve(lab, codes, {})
        return self

    def fit_path(self, X, y, params: list[dict]) -> list:
        """Fit once per parameter set of ``params`` on the same ``X``, ``y``; returns the fitted copies.

        The copies share the kernel basis (one decomposition) and, where the method allows,
        the pencil ``P v = nu C v`` of each ``c`` (LS-, LR-, MV-KPCA: every ``s`` and
        ``n_components`` of one ``c`` reuse it). Keys of ``params`` may be those of
        ``_path_keys`` (e.g. ``c``, ``s``, ``n_components``, ``standardize``).
        """
        lab, codes = self._prepare(X, y)
        cache: dict = {}
        out = []
        for p in params:
            bad = set(p) - set(self._path_keys)
            if bad:
                raise ValueError(f"{type(self).__name__}.fit_path varies only {sorted(self._path_keys)}, got "
                                 f"{sorted(bad)}: fit separately for other parameters")
            est = copy.copy(self)
            est.set_params(**p)
            est._check_params()
            est._solve(lab, codes, cache)
            out.append(est)
        return out

    def _pencil(self, cache: dict, key, C: np.ndarray):
        if key not in cache:
            cache[key] = pencil(self.basis_.P, C)
        return cache[key]

    def _finish(self, lab, codes, beta):
        basis = self.basis_
        self.beta_ = beta
        self.dual_coef_ = basis.coef(beta)
        self.embedding_ = basis.values(beta)
        if self.standardize:
            scale = np.sqrt(np.mean(self.embedding_ ** 2, axis=0))
            self.feature_scale_ = np.where(scale > 0, scale, 1.0)
        else:
            self.feature_scale_ = np.ones(beta.shape[1])
        T = targets(codes, np.arange(self.classes_.size))
        self.head_ = fit_linear_head(self.embedding_[lab] / self.feature_scale_, T,
                                     paired=self._paired and T.shape[1] > 1)
        self._alpha = torch.as_tensor(self.dual_coef_, device=self._device)
        self._n_features_out = int(beta.shape[1])
        return self

    def _warn_components(self, k: int):
        if k > self.basis_.r:
            warnings.warn(f"n_components={k} exceeds the rank {self.basis_.r} of the fit kernel: "
                          f"{type(self).__name__} keeps {self.basis_.r} components", UserWarning, stacklevel=3)

    # -- prediction ------------------------------------------------------------------
    def _values(self, X) -> Tensor:
        check_is_fitted(self, "head_")
        kind = self._kind()
        if kind == "precomputed":
            if isinstance(X, KernelOperator):
                if X.shape[1] != self.n_features_in_:
                    raise ValueError(f'kernel="precomputed": pass the [n, {self.n_features_in_}] kernel between '
                                     f"the new points and the fit points, got shape {tuple(X.shape)}")
                return X @ self._alpha.to(device=X.device, dtype=X.dtype)
            Kx = validate_features(self, X, reset=False, dtype=torch.float64)
            return Kx @ self._alpha.to(Kx.device)
        Xt = validate_features(self, X, reset=False, dtype=torch.float64)
        if kind in _TRANSDUCTIVE:
            rows = Xt.detach().cpu().numpy()
            pos = [self._row_index.get(bytes(np.ascontiguousarray(r))) for r in rows]
            if any(p is None for p in pos):
                raise ValueError(f"kernel={kind!r} is transductive: transform/predict take rows of the fit data "
                                 "only; refit with the new points as unlabeled points (y = -1)")
            emb = torch.as_tensor(self.embedding_, device=Xt.device)
            return emb[torch.as_tensor(pos, dtype=torch.long, device=Xt.device)]
        op = FeatureKernelOperator(Xt, self.X_fit_.to(Xt.device), kernel=self.kernel_)
        return op @ self._alpha.to(Xt.device)

    def transform(self, X):
        """Eigenfunction values ``f(x) = sum_j alpha_j k(x_j, x)`` at ``X``: ``[n, k]``."""
        return to_output(self._values(X), X if not isinstance(X, KernelOperator) else torch.empty(0, device=X.device))

    def _scores(self, X) -> Tensor:
        F = self._values(X)
        s = self.head_.scores(F / torch.as_tensor(self.feature_scale_, dtype=F.dtype, device=F.device))
        return s[:, 0] if s.shape[1] == 1 else s

    def decision_function_fit(self):
        """SVM scores of the ``m`` fit points themselves (transductive; no kernel evaluation), as
        :meth:`decision_function` returns them, NumPy ``[m]`` or ``[m, C]``."""
        check_is_fitted(self, "head_")
        s = self.head_.scores(self.embedding_ / self.feature_scale_)
        return s[:, 0] if s.shape[1] == 1 else s

    def decision_function(self, X):
        """SVM scores: ``[n]`` (two classes, ``> 0`` means ``classes_[1]``) or ``[n, C]`` one-vs-rest."""
        like = X if not isinstance(X, KernelOperator) else torch.empty(0, device=X.device)
        return to_output(self._scores(X), like)

    def score(self, X, y, sample_weight=None) -> float:
        """Accuracy of ``predict`` on the labeled entries of ``y`` (entries ``-1`` are unlabeled and left
        out), so that ``cross_val_score`` and ``GridSearchCV`` with default scoring measure held-out
        labeled points only."""
        from sklearn.metrics import accuracy_score

        yn = y.detach().cpu().numpy() if is_torch(y) else np.asarray(y)
        keep = np.flatnonzero((yn != "-1") & (yn != -1) if yn.dtype.kind in "USO" else yn != -1)
        if keep.size == 0:
            raise ValueError("score needs labeled points: every entry of y is -1 (unlabeled)")
        if isinstance(X, KernelOperator):
            Xk = X.block(torch.as_tensor(keep, device=X.device), None)
        else:
            Xk = X[torch.as_tensor(keep, device=X.device)] if is_torch(X) else np.asarray(X)[keep]
        pred = self.predict(Xk)
        pred = pred.detach().cpu().numpy() if is_torch(pred) else pred
        w = None if sample_weight is None else np.asarray(sample_weight)[keep]
        return float(accuracy_score(yn[keep], pred, sample_weight=w))

    def predict(self, X):
        """Class labels from ``classes_`` for ``X`` (``[n]``)."""
        s = self._scores(X)
        idx = (s > 0).long() if s.dim() == 1 else s.argmax(1)
        labels = self.classes_[idx.cpu().numpy()]
        if (is_torch(X) or isinstance(X, KernelOperator)) and labels.dtype.kind in "biuf":
            return torch.as_tensor(labels, device=s.device)
        return labels


COMMON_DOC = """
    kernel : str or Kernel, default "gaussian"
        ``"gaussian"`` (``exp(-gamma ||x - y||^2)``), any name of
        :func:`~graphstk.operators.kernel_function` or a :class:`~graphstk.operators.Kernel`,
        ``"diffusion"``, ``"mixture"`` or ``"precomputed"`` (module docstring).
    gamma : float or None, default None
        Gaussian ``exp(-gamma ||x - y||^2)``; ``None``: ``1 / (2 median^2)`` over the fit points.
    centered : bool, default True
        Centred ``VAR[f]`` (``P = K K - K E_m K``) or uncentred (``P = K K``), Sec. 2.
    rank : int or None, default None
        Keep the top ``rank`` kernel eigenpairs (``None``: the numerical rank);
        needed above 6000 fit points.
    standardize : bool, default False
        Divide each eigenfunction by its RMS over the fit points before the SVM head.
    n_neighbors : int, default 10
        Neighbours of the kNN graph (``kernel="diffusion"``/``"mixture"``).
    tau : float, default 1.0
        Diffusion time of ``exp(-tau L)`` (``kernel="diffusion"``/``"mixture"``).
    w : float in [0, 1], default 0.5
        Weight of the Gaussian kernel in ``kernel="mixture"``.
"""


