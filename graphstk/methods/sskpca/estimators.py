"""The semi-supervised KPCA estimators (Walder et al.): KPCA-10, MV-KPCA, LS-KPCA, LR-KPCA.

One contract (scikit-learn's, as :class:`sklearn.semi_supervised.LabelSpreading`):
``fit(X, y)`` with ``X`` the ``m`` fit points, labeled and unlabeled alike, and ``y`` their
labels with ``-1`` marking an unlabeled point (any other negative, NaN or mixed-type label is a
:class:`~graphstk.exceptions.LabelError`). Each estimator is a classifier (``predict`` returns
labels from ``classes_``, ``decision_function`` the SVM scores) and a transformer
(``transform`` returns the eigenfunction values ``f(x) = sum_j alpha_j k(x_j, x)``). NumPy in
gives NumPy out; a tensor (or a :class:`~graphstk.operators.KernelOperator`) in gives a tensor
out on its device.

Kernels (parameter ``kernel``):

* a feature kernel (``"gaussian"`` default, ``exp(-gamma ||x - y||^2)``; any name of
  :func:`~graphstk.operators.kernel_function` or a :class:`~graphstk.operators.Kernel`);
* ``"diffusion"``: ``exp(-tau L)`` of the Gaussian-weighted ``n_neighbors``-NN graph of the fit
  points (Sec. 7.2, :func:`~graphstk.operators.gaussian_knn_graph`), transductive;
* ``"mixture"``: ``w K_gamma + (1 - w) exp(-tau L)`` (Sec. 7.2), transductive;
* ``"precomputed"``: ``X`` is the ``[m, m]`` kernel of the fit points (array, tensor, or any
  square :class:`~graphstk.operators.KernelOperator`, e.g. a graph kernel or a
  :class:`~graphstk.operators.SpectralKernelOperator` whose eigenpairs are used as they are);
  ``transform``/``predict`` take the ``[n, m]`` kernel between new points and the fit points.

Devices: kernels are evaluated on the input's device; the eigendecomposition and the ``r x r``
solves run on the host (LAPACK/ARPACK: the fit kernel is moved to the host once), and the
fitted coefficients are moved back once, so ``transform``/``predict`` run on the device.
Transductive kernels (``"diffusion"``, ``"mixture"``) accept only rows of the fit data in
``transform``.

Scale of ``s``: ``s`` is the root-mean-square deviation of ``f`` over the fit points, i.e. the
paper's constraint is ``VAR[f] = m s^2`` (the paper's ``s`` is ``sqrt(m) s``).
"""
from __future__ import annotations

import copy
import math
import warnings

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from torch import Tensor

from ..._arrays import check_is_fitted, is_torch, semi_supervised_labels, to_output, validate_features
from ...memory import check_allocation
from ...operators.base import KernelOperator
from ...operators.feature import FeatureKernelOperator, Kernel, kernel_function, median_distance
from .basis import BASIS_CACHE, DECOMPOSITIONS, array_key, basis_from_eigenpairs, kernel_basis
from .heads import fit_linear_head
from .irls import lr_kpca
from .secular import check_c, check_s, kpca_components, pencil, secular_solve, targets, within_class_scatter

__all__ = ["KernelPCAClassifier", "MVKPCA", "LSKPCA", "LRKPCA"]

_TRANSDUCTIVE = ("diffusion", "mixture")
_DENSE_MAX = 6000       # fit points decomposed densely; above, rank= and Lanczos


class _SSKPCABase(ClassNamePrefixFeaturesOutMixin, ClassifierMixin, TransformerMixin, BaseEstimator):
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
                if m > _DENSE_MAX:      # Lanczos on the lazy kernel (rank= required), never m x m in memory
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
            from ...operators.diffusion import gaussian_knn_graph, laplacian_eigenpairs
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

    def predict(self, X):
        """Class labels from ``classes_`` for ``X`` (``[n]``)."""
        s = self._scores(X)
        idx = (s > 0).long() if s.dim() == 1 else s.argmax(1)
        labels = self.classes_[idx.cpu().numpy()]
        if (is_torch(X) or isinstance(X, KernelOperator)) and labels.dtype.kind in "biuf":
            return torch.as_tensor(labels, device=s.device)
        return labels


_COMMON_DOC = """
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


class KernelPCAClassifier(_SSKPCABase):
    __doc__ = """KPCA (Walder et al. Eq. 5) + linear SVM on the top ``n_components`` eigenfunctions (KPCA-10).

    ``fit(X, y)``: ``X [m, d]`` the fit points (labeled and unlabeled), ``y [m]`` labels with
    ``-1`` for unlabeled points; the eigenfunctions use every point, the SVM (Sec. 7.1: hard
    margin when separable, else ``C = 1``) only the labeled ones.

    Parameters
    ----------
    n_components : int, default 10
        Eigenfunctions fed to the SVM.""" + _COMMON_DOC + """
    Fitted extra: ``eigenvalues_`` (``mu`` of Eq. 5).
    """
    _path_keys = ("n_components", "standardize")

    def __init__(self, kernel="gaussian", gamma=None, n_components: int = 10, centered: bool = True,
                 rank=None, standardize: bool = False, n_neighbors: int = 10, tau: float = 1.0, w: float = 0.5):
        self.kernel, self.gamma, self.n_components, self.centered, self.rank = kernel, gamma, n_components, centered, rank
        self.standardize, self.n_neighbors, self.tau, self.w = standardize, n_neighbors, tau, w

    def _check_params(self):
        if isinstance(self.n_components, bool) or int(self.n_components) != self.n_components or self.n_components < 1:
            raise ValueError(f"n_components must be an integer >= 1, got {self.n_components!r}")

    def _solve(self, lab, codes, cache):
        self._warn_components(int(self.n_components))
        if "kpca" not in cache:
            cache["kpca"] = kpca_components(self.basis_, self.basis_.r)
        mu, W = cache["kpca"]
        k = int(self.n_components)
        self.eigenvalues_ = mu[:k]
        return self._finish(lab, codes, W[:, :k])


class MVKPCA(_SSKPCABase):
    __doc__ = """MV-KPCA (Walder et al. Eq. 6): KPCA with a within-class variance penalty ``c``.

    ``fit(X, y)`` as :class:`KernelPCAClassifier` (``-1`` marks unlabeled points).

    Parameters
    ----------
    c : float >= 0, default 1.0
        Within-class variance weight (``c = 0`` is KPCA).
    n_components : int or None, default None
        Eigenfunctions fed to the SVM; ``None``: one fewer than the classes (``1`` for two classes:
        the first eigenfunction and a threshold, Sec. 7.1); ``10``: MV-KPCA-10.""" + _COMMON_DOC + """
    Fitted extra: ``eigenvalues_``.
    """
    _path_keys = ("c", "n_components", "standardize")

    def __init__(self, kernel="gaussian", gamma=None, c: float = 1.0, n_components=None, centered: bool = True,
                 rank=None, standardize: bool = False, n_neighbors: int = 10, tau: float = 1.0, w: float = 0.5):
        self.kernel, self.gamma, self.c, self.n_components, self.centered, self.rank = \
            kernel, gamma, c, n_components, centered, rank
        self.standardize, self.n_neighbors, self.tau, self.w = standardize, n_neighbors, tau, w

    def _check_params(self):
        check_c(self.c)
        if self.n_components is not None:
            KernelPCAClassifier._check_params(self)

    def _solve(self, lab, codes, cache):
        c = check_c(self.c)
        k = self.classes_.size - 1 if self.n_components is None else int(self.n_components)
        self._warn_components(k)
        if "scatter" not in cache:
            cache["scatter"] = within_class_scatter(self.basis_.Phi[lab], codes)
        mu, V = self._pencil(cache, ("mv", c), np.eye(self.basis_.r) + c * cache["scatter"])
        kk = min(k, self.basis_.r)
        self.eigenvalues_ = mu[::-1][:kk]
        return self._finish(lab, codes, V[:, ::-1][:, :kk])


class LSKPCA(_SSKPCABase):
    __doc__ = """LS-KPCA (Walder et al. Eqs. 8-11, 14): ``min ||f||_H^2 + c sum_L (f(x_i) - t_i)^2`` s.t. ``VAR[f] = m s^2``.

    ``fit(X, y)`` as :class:`KernelPCAClassifier` (``-1`` marks unlabeled points). Two classes:
    one function with targets ``+-1`` (``classes_[1]`` is ``+1``); more: one-vs-rest (one pencil
    for all), each with a 1-D SVM threshold.

    Parameters
    ----------
    c : float >= 0, default 1.0
        Weight of the labeled squared loss.
    s : float > 0, default 1.0
        RMS deviation of ``f`` over the ``m`` fit points (the paper's ``s`` is ``sqrt(m) s``).""" + _COMMON_DOC + """
    Fitted extra: ``zeta_`` (multipliers), ``hard_case_`` (per output).
    """
    _paired = True
    _path_keys = ("c", "s", "standardize")

    def __init__(self, kernel="gaussian", gamma=None, c: float = 1.0, s: float = 1.0, centered: bool = True,
                 rank=None, standardize: bool = False, n_neighbors: int = 10, tau: float = 1.0, w: float = 0.5):
        self.kernel, self.gamma, self.c, self.s, self.centered, self.rank = kernel, gamma, c, s, centered, rank
        self.standardize, self.n_neighbors, self.tau, self.w = standardize, n_neighbors, tau, w

    def _check_params(self):
        check_c(self.c)
        check_s(self.s)

    def _ls_start(self, lab, codes, cache, c, s2):
        basis = self.basis_
        T = targets(codes, np.arange(self.classes_.size))
        G = basis.Phi[lab]
        if ("gram", len(lab)) not in cache:
            cache[("gram", len(lab))] = G.T @ G
        nu, V = self._pencil(cache, ("ls", c), np.eye(basis.r) + c * cache[("gram", len(lab))])
        return T, G, [secular_solve(nu, V, c * G.T @ T[:, j], s2, sign_hint=G.T @ T[:, j]) for j in range(T.shape[1])]

    def _solve(self, lab, codes, cache):
        c, s = check_c(self.c), check_s(self.s)
        _, _, sols = self._ls_start(lab, codes, cache, c, self.basis_.m * s * s)
        self.zeta_ = np.array([x.zeta for x in sols])
        self.hard_case_ = np.array([x.hard for x in sols])
        return self._finish(lab, codes, np.stack([x.beta for x in sols], 1))


class LRKPCA(LSKPCA):
    __doc__ = """LR-KPCA (Walder et al. Eqs. 16-21, corrected): logistic labeled loss by iteratively reweighted LS-KPCA.

    ``fit(X, y)`` as :class:`KernelPCAClassifier` (``-1`` marks unlabeled points); started from
    LS-KPCA with the same ``c``, ``s``.

    Parameters
    ----------
    c : float >= 0, default 1.0
        Weight of the labeled logistic loss.
    s : float > 0, default 1.0
        RMS deviation of ``f`` over the fit points.
    max_iter : int, default 50
        IRLS steps at most (a :class:`~graphstk.exceptions.ConvergenceWarning` when reached).
    tol : float, default 1e-10
        Relative objective decrease that stops the iteration.""" + _COMMON_DOC + """
    Fitted extra: ``n_iter_``, ``objective_``, ``objective_history_`` (per output),
    ``converged_``, ``backoffs_``.
    """
    _path_keys = ("c", "s", "standardize", "max_iter", "tol")

    def __init__(self, kernel="gaussian", gamma=None, c: float = 1.0, s: float = 1.0, centered: bool = True,
                 rank=None, max_iter: int = 50, tol: float = 1e-10, standardize: bool = False,
                 n_neighbors: int = 10, tau: float = 1.0, w: float = 0.5):
        super().__init__(kernel=kernel, gamma=gamma, c=c, s=s, centered=centered, rank=rank,
                         standardize=standardize, n_neighbors=n_neighbors, tau=tau, w=w)
        self.max_iter, self.tol = max_iter, tol

    def _check_params(self):
        super()._check_params()
        if isinstance(self.max_iter, bool) or int(self.max_iter) != self.max_iter or self.max_iter < 1:
            raise ValueError(f"max_iter must be an integer >= 1, got {self.max_iter!r}")
        if not float(self.tol) >= 0:
            raise ValueError(f"tol must be >= 0, got {self.tol!r}")

    def _solve(self, lab, codes, cache):
        c, s = check_c(self.c), check_s(self.s)
        s2 = self.basis_.m * s * s
        T, _, starts = self._ls_start(lab, codes, cache, c, s2)
        res = [lr_kpca(self.basis_, lab, T[:, j], c, s2, beta0=starts[j].beta, max_iter=int(self.max_iter),
                       tol=float(self.tol)) for j in range(T.shape[1])]
        self.n_iter_ = np.array([x.n_iter for x in res])
        self.objective_ = np.array([x.objective for x in res])
        self.objective_history_ = [x.history for x in res]
        self.converged_ = np.array([x.converged for x in res])
        self.backoffs_ = np.array([x.backoffs for x in res])
        return self._finish(lab, codes, np.stack([x.beta for x in res], 1))
