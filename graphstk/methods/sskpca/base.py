"""The shared fit / transform / predict of the semi-supervised KPCA estimators (see :mod:`.estimators`)."""
from __future__ import annotations

import copy
import warnings
from numbers import Real

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, _fit_context
from torch import Tensor

from ..._arrays import check_is_fitted, semi_supervised_labels, to_output, validate_features
from ...memory import check_allocation, memory_limit
from ...operators.base import KernelOperator
from ...operators.diffusion import gaussian_knn_graph
from ...spectral.eigen import laplacian_eigenpairs
from ...exceptions import UnreachableNodesWarning
from ...operators.feature import FeatureKernelOperator, Kernel
from ..fredholm.kernel import kernel_from_sigma
from .._constraints import OPTIONAL_POSITIVE_INT, POSITIVE, POSITIVE_INT, SIGMA, Interval, kernel_names
from ..grid import unreachable
from ..semi_supervised import UnreachableMixin, labeled_accuracy, labels_from_scores
from .basis import BASIS_CACHE, DECOMPOSITIONS, array_key, basis_from_eigenpairs, kernel_basis
from .heads import fit_linear_head
from .secular import pencil, targets

__all__ = ["SSKPCABase", "COMMON_DOC"]

_TRANSDUCTIVE = ("diffusion", "mixture")
_DENSE_MAX = 6000       # fit points decomposed densely; above, rank= and Lanczos


_COMMON_CONSTRAINTS = {
    "kernel": [kernel_names("diffusion", "mixture", "precomputed"), Kernel], "sigma": SIGMA, "centered": ["boolean"],
    "rank": OPTIONAL_POSITIVE_INT, "standardize": ["boolean"], "n_neighbors": POSITIVE_INT, "tau": POSITIVE,
    "w": [Interval(Real, 0, 1, closed="both")],
}


def _like(X):
    """What ``to_output`` matches: ``X``, or an empty tensor on a KernelOperator's device."""
    return torch.empty(0, device=X.device) if isinstance(X, KernelOperator) else X


class SSKPCABase(UnreachableMixin, ClassNamePrefixFeaturesOutMixin, ClassifierMixin, TransformerMixin, BaseEstimator):
    """Shared fit/transform/predict of the semi-supervised KPCA estimators.

    Fitted attributes: ``classes_``, ``n_features_in_``, ``basis_``
    (:class:`~graphstk.methods.sskpca.KernelBasis`), ``beta_ [r, k]``, ``dual_coef_ [m, k]``
    (``alpha``), ``embedding_ [m, k]`` (``f`` on the fit points), ``feature_scale_ [k]``,
    ``head_`` (:class:`~graphstk.methods.sskpca.LinearHead`), ``kernel_``, ``sigma_`` (the width
    used, ``None`` for a kernel without one), ``X_fit_`` (feature kernels), ``unreachable_`` (fit
    points whose scores are all zero or not finite); NumPy on the host except ``X_fit_``.
    """

    _paired = False          # LS-/LR-KPCA: one eigenfunction per one-vs-rest column
    _path_keys: tuple = ()   # parameters that may vary along :meth:`fit_path`

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
        kern = kernel_from_sigma("gaussian" if self._kind() in _TRANSDUCTIVE else self.kernel, self.sigma, X=X)
        self.sigma_ = kern.sigma
        return kern

    def _validate(self, X):
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
        """Sets ``basis_`` (cached) for the validated ``Xt``; returns ``m``."""
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
        kern = self.kernel_ = self._feature_kernel(Xt)

        def mix():
            Kg = FeatureKernelOperator(Xt, kernel=kern).to_dense().detach().cpu().numpy()
            return kernel_basis(w * Kg + (1.0 - w) * ((U * np.exp(-tau * mu)) @ U.T), rank=rank, centered=centered)
        self.basis_ = BASIS_CACHE.get(("mix", xkey, k, tau, w, repr(kern), rank, centered), mix)
        return m

    def _prepare(self, X, y):
        Xt = self._validate(X)
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None (labels, with "
                             "-1 for unlabeled points)")
        labeled, classes, codes = semi_supervised_labels(y, int(Xt.shape[0]), min_classes=2)
        self._basis(Xt)
        self.classes_ = classes
        self.__dict__.pop("_unreachable", None)
        self._fit_on_tensor = isinstance(X, (Tensor, KernelOperator))
        lab = np.flatnonzero(labeled)
        return lab, codes[lab]

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit on ``X`` (``[m, d]`` features, or the ``[m, m]`` kernel with ``kernel="precomputed"``)
        and ``y [m]`` (class labels, ``-1`` for unlabeled points). Returns ``self``."""
        lab, codes = self._prepare(X, y)
        self._solve(lab, codes, {})
        return self

    def fit_path(self, X, y, params: list[dict]) -> list:
        """Fit once per parameter set of ``params`` (keys of ``_path_keys``, e.g. ``c``, ``s``,
        ``n_components``, ``standardize``) on the same ``X``, ``y``; returns the fitted copies, which share
        the kernel basis and the pencil of each ``c``."""
        for p in params:
            bad = set(p) - set(self._path_keys)
            if bad:
                raise ValueError(f"{type(self).__name__}.fit_path varies only {sorted(self._path_keys)}, got "
                                 f"{sorted(bad)}: fit separately for other parameters")
            copy.copy(self).set_params(**p)._validate_params()
        self._validate_params()
        lab, codes = self._prepare(X, y)
        cache: dict = {}
        out = []
        for p in params:
            est = copy.copy(self)
            est.set_params(**p)
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
        return to_output(self._values(X), _like(X))

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
        return to_output(self._scores(X), _like(X))

    def score(self, X, y, sample_weight=None) -> float:
        """Accuracy of ``predict`` on the labeled entries of ``y`` (entries ``-1`` are unlabeled and left
        out), so that ``cross_val_score`` and ``GridSearchCV`` with default scoring measure held-out
        labeled points only."""
        return labeled_accuracy(self, X, y, sample_weight)

    def predict(self, X):
        """Class labels from ``classes_`` for ``X`` (``[n]``): NumPy for NumPy input, a tensor on
        ``X``'s device for a tensor (or a ``KernelOperator``) when the classes are numbers. A point
        whose scores are all zero or not finite gets ``-1`` (``"-1"`` for string classes) instead
        of a class, with an :class:`~graphstk.exceptions.UnreachableNodesWarning`."""
        s = self._scores(X)
        S = s.unsqueeze(1) if s.dim() == 1 else s
        bad = unreachable(S)
        k = int(bad.sum())
        if k:
            warnings.warn(f"{type(self).__name__}: {k} of {bad.numel()} points have all decision values zero or "
                          "not finite; predict marks them -1 instead of a class", UnreachableNodesWarning,
                          stacklevel=2)
        return labels_from_scores(self.classes_, S, bad, _like(X))

    def _fit_scores(self) -> Tensor:
        s = torch.as_tensor(self.decision_function_fit())
        return s.to(self._device) if self._fit_on_tensor else s


COMMON_DOC = """
    kernel : str or Kernel, default "gaussian"
        ``"gaussian"`` (``exp(-||x - y||^2 / (2 sigma^2))``), any name of
        :func:`~graphstk.operators.kernel_function` or a :class:`~graphstk.operators.Kernel`,
        ``"diffusion"``, ``"mixture"`` or ``"precomputed"`` (module docstring).
    sigma : float > 0 or None, default None
        Width of the Gaussian ``exp(-||x - y||^2 / (2 sigma^2))`` (the paper's
        ``exp(-gamma ||x - y||^2)`` has ``gamma = 1 / (2 sigma^2)``; the scale of other kernels with
        a width, e.g. ``"abel"``: ``exp(-||x - y|| / sigma)``). ``None``: the median heuristic, the
        median pairwise distance of the fit points (a seeded subsample of at most 2000 rows).
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


