"""The semi-supervised KPCA estimators (Walder et al.): KPCA-10, MV-KPCA, LS-KPCA, LR-KPCA.

Classifiers and transformers with ``fit(X, y)``, ``-1`` marking an unlabeled point; kernels, devices and
the transductive kernels: ``docs/estimators.md``. ``s`` is the RMS deviation of ``f`` over the fit
points (the paper's constraint is ``VAR[f] = m s^2``).
"""
from __future__ import annotations

import numpy as np

from .._constraints import NON_NEGATIVE, OPTIONAL_POSITIVE_INT, POSITIVE, POSITIVE_INT, store_params
from .base import _COMMON_CONSTRAINTS, COMMON_DOC, SSKPCABase
from .irls import lr_kpca
from .secular import kpca_components, secular_solve, targets, within_class_scatter

__all__ = ["KernelPCAClassifier", "MVKPCA", "LSKPCA", "LRKPCA"]


class KernelPCAClassifier(SSKPCABase):
    __doc__ = """KPCA (Walder et al. Eq. 5) + linear SVM on the top ``n_components`` eigenfunctions (KPCA-10).

    ``fit(X, y)``: ``X [m, d]`` the fit points (labeled and unlabeled), ``y [m]`` labels with
    ``-1`` for unlabeled points; the eigenfunctions use every point, the SVM (Sec. 7.1: hard
    margin when separable, else ``C = 1``) only the labeled ones.

    Parameters
    ----------
    n_components : int, default 10
        Eigenfunctions fed to the SVM.""" + COMMON_DOC + """
    Fitted extra: ``eigenvalues_`` (``mu`` of Eq. 5).
    """
    _path_keys = ("n_components", "standardize")
    _parameter_constraints: dict = {**_COMMON_CONSTRAINTS, "n_components": POSITIVE_INT}

    def __init__(self, kernel="gaussian", sigma=None, n_components: int = 10, centered: bool = True,
                 rank=None, standardize: bool = False, n_neighbors: int = 10, tau: float = 1.0, w: float = 0.5):
        store_params(self, locals())

    def _solve(self, lab, codes, cache):
        self._warn_components(int(self.n_components))
        if "kpca" not in cache:
            cache["kpca"] = kpca_components(self.basis_, self.basis_.r)
        mu, W = cache["kpca"]
        k = int(self.n_components)
        self.eigenvalues_ = mu[:k]
        return self._finish(lab, codes, W[:, :k])


class MVKPCA(SSKPCABase):
    __doc__ = """MV-KPCA (Walder et al. Eq. 6): KPCA with a within-class variance penalty ``c``.

    ``fit(X, y)`` as :class:`KernelPCAClassifier` (``-1`` marks unlabeled points).

    Parameters
    ----------
    c : float >= 0, default 1.0. Within-class variance weight (``c = 0`` is KPCA).
    n_components : int or None, default None
        Eigenfunctions fed to the SVM; ``None``: one fewer than the classes (``1`` for two classes:
        the first eigenfunction and a threshold, Sec. 7.1); ``10``: MV-KPCA-10.""" + COMMON_DOC + """
    Fitted extra: ``eigenvalues_``.
    """
    _path_keys = ("c", "n_components", "standardize")
    _parameter_constraints: dict = {**_COMMON_CONSTRAINTS, "c": NON_NEGATIVE, "n_components": OPTIONAL_POSITIVE_INT}

    def __init__(self, kernel="gaussian", sigma=None, c: float = 1.0, n_components=None, centered: bool = True,
                 rank=None, standardize: bool = False, n_neighbors: int = 10, tau: float = 1.0, w: float = 0.5):
        store_params(self, locals())

    def _solve(self, lab, codes, cache):
        c = float(self.c)
        k = self.classes_.size - 1 if self.n_components is None else int(self.n_components)
        self._warn_components(k)
        if "scatter" not in cache:
            cache["scatter"] = within_class_scatter(self.basis_.Phi[lab], codes)
        mu, V = self._pencil(cache, ("mv", c), np.eye(self.basis_.r) + c * cache["scatter"])
        kk = min(k, self.basis_.r)
        self.eigenvalues_ = mu[::-1][:kk]
        return self._finish(lab, codes, V[:, ::-1][:, :kk])


class LSKPCA(SSKPCABase):
    __doc__ = """LS-KPCA (Walder et al. Eqs. 8-11, 14): ``min ||f||_H^2 + c sum_L (f(x_i) - t_i)^2`` s.t. ``VAR[f] = m s^2``.

    ``fit(X, y)`` as :class:`KernelPCAClassifier` (``-1`` marks unlabeled points). Two classes:
    one function with targets ``+-1`` (``classes_[1]`` is ``+1``); more: one-vs-rest (one pencil
    for all), each with a 1-D SVM threshold.

    Parameters
    ----------
    c : float >= 0, default 1.0. Weight of the labeled squared loss.
    s : float > 0, default 1.0
        RMS deviation of ``f`` over the ``m`` fit points (the paper's ``s`` is ``sqrt(m) s``).""" + COMMON_DOC + """
    Fitted extra: ``zeta_`` (multipliers), ``hard_case_`` (per output).
    """
    _paired = True
    _path_keys = ("c", "s", "standardize")
    _parameter_constraints: dict = {**_COMMON_CONSTRAINTS, "c": NON_NEGATIVE, "s": POSITIVE}

    def __init__(self, kernel="gaussian", sigma=None, c: float = 1.0, s: float = 1.0, centered: bool = True,
                 rank=None, standardize: bool = False, n_neighbors: int = 10, tau: float = 1.0, w: float = 0.5):
        store_params(self, locals())

    def _ls_start(self, lab, codes, cache, c, s2):
        basis = self.basis_
        T = targets(codes, np.arange(self.classes_.size))
        G = basis.Phi[lab]
        if ("gram", len(lab)) not in cache:
            cache[("gram", len(lab))] = G.T @ G
        nu, V = self._pencil(cache, ("ls", c), np.eye(basis.r) + c * cache[("gram", len(lab))])
        return T, G, [secular_solve(nu, V, c * G.T @ T[:, j], s2, sign_hint=G.T @ T[:, j]) for j in range(T.shape[1])]

    def _solve(self, lab, codes, cache):
        c, s = float(self.c), float(self.s)
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
    c : float >= 0, default 1.0. Weight of the labeled logistic loss.
    s : float > 0, default 1.0. RMS deviation of ``f`` over the fit points.
    max_iter : int, default 50
        IRLS steps at most (a :class:`~graphstk.exceptions.ConvergenceWarning` when reached).
    tol : float, default 1e-10
        Relative objective decrease that stops the iteration.""" + COMMON_DOC + """
    Fitted extra: ``n_iter_``, ``objective_``, ``objective_history_`` (per output),
    ``converged_``, ``backoffs_``.
    """
    _path_keys = ("c", "s", "standardize", "max_iter", "tol")
    _parameter_constraints: dict = {**_COMMON_CONSTRAINTS, "c": NON_NEGATIVE, "s": POSITIVE,
                                    "max_iter": POSITIVE_INT, "tol": NON_NEGATIVE}

    def __init__(self, kernel="gaussian", sigma=None, c: float = 1.0, s: float = 1.0, centered: bool = True,
                 rank=None, max_iter: int = 50, tol: float = 1e-10, standardize: bool = False,
                 n_neighbors: int = 10, tau: float = 1.0, w: float = 0.5):
        store_params(self, locals())

    def _solve(self, lab, codes, cache):
        c, s = float(self.c), float(self.s)
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
