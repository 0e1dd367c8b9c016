"""One-class methods of the separating-kernel paper (De Vito, Rosasco, Toigo, Sec. 7), registered by name:
``Spectral`` and ``Spectral-<filter>`` (:class:`~graphstk.methods.SpectralSupportEstimator`, ``F_n`` of
Eq. 19), ``Parzen`` (:class:`~graphstk.methods.ParzenWindow`) and ``1CSVM`` (scikit-learn's ``OneClassSVM``).
Each fits on ``problem.labeled`` and returns 1-D scores (higher = more inside). Heuristics and options:
docs/experiments.md, "Separating kernels".
"""
from __future__ import annotations

import numpy as np
import torch

from ...methods.separating import (
    FILTERS, ParzenWindow, SpectralSupportEstimator, gaussian_one_class_svm, width_heuristic,
)
from ..registry import MethodEntry, MethodInput, register_method
from ..params import Param
from .baselines import feature_rows, group_points

__all__ = ["spectral_fit_predict", "parzen_fit_predict", "one_class_svm_fit_predict"]


def _rows(problem: MethodInput) -> tuple[torch.Tensor, torch.Tensor]:
    """The feature rows of the labeled and of the eval points, dense float64 tensors."""
    return feature_rows(problem.X, problem.labeled, tensor=True), feature_rows(problem.X, problem.eval, tensor=True)


def _auto(v):
    """``None`` for ``"auto"`` (or no value), else ``float(v)``."""
    return None if v in (None, "auto") else float(v)


def spectral_fit_predict(problem: MethodInput, points: list[dict]) -> list[torch.Tensor]:
    """``F_n`` (Eq. 19) on ``problem.eval``; grid points differing only in ``lam`` share one fit
    (:meth:`SpectralSupportEstimator.score_samples` with a ``lam`` path)."""
    Xtr, Z = _rows(problem)
    out: list = [None] * len(points)
    for idx in group_points(points, lambda p: tuple(sorted((k, str(v)) for k, v in p.items() if k != "lam"))).values():
        p = points[idx[0]]
        approx = p.get("approx", "exact")
        est = SpectralSupportEstimator(
            kernel=p.get("kernel", "abel"), sigma=_auto(p.get("sigma")), filter=p.get("filter", "tikhonov"), lam=None,
            nu=float(p.get("nu", 1.0)), approx=None if approx in (None, "exact") else approx,
            n_components=p.get("n_components"), n_neighbors=int(p.get("n_neighbors", 10)),
            random_state=problem.seed).fit(Xtr)
        auto = est.lam_ * (Xtr.shape[0] if p.get("elbow_of", "K_n/n") == "K_n" else 1)
        lams = [auto if v is None else v for v in (_auto(points[i].get("lam")) for i in idx)]
        F = est.score_samples(Z, lam=lams)
        for j, i in enumerate(idx):
            out[i] = F[:, j]
    return out


def parzen_fit_predict(problem: MethodInput, points: list[dict]) -> list[torch.Tensor]:
    """Parzen window ``(1/n) sum_i K(x, x_i)``, the spectral estimator's kernel and width."""
    Xtr, Z = _rows(problem)
    return [ParzenWindow(kernel=p.get("kernel", "abel"), sigma=_auto(p.get("sigma")),
                         n_neighbors=int(p.get("n_neighbors", 10)))
            .fit(Xtr).score_samples(Z) for p in points]


def one_class_svm_fit_predict(problem: MethodInput, points: list[dict]) -> list[torch.Tensor]:
    """scikit-learn ``OneClassSVM`` (Gaussian kernel, the same width, ``nu``), ``decision_function`` scores."""
    Xtr, Z = _rows(problem)
    out = []
    for p in points:
        sigma = _auto(p.get("sigma"))
        if sigma is None:       # the Euclidean width of the spectral estimator (Abel kernel)
            sigma = width_heuristic(Xtr, int(p.get("n_neighbors", 10)), "abel")
        svm = gaussian_one_class_svm(sigma, nu=float(p.get("nu", 0.9))).fit(Xtr.numpy())
        out.append(torch.from_numpy(np.asarray(svm.decision_function(Z.numpy()), dtype=np.float64)))
    return out


#: parameter declarations (checked for every config value when the config loads)
_PARAMS = (Param("lam", float, low=0, low_open=True, special=("auto",), doc="regularisation (auto: the elbow)"),
           Param("sigma", float, low=0, low_open=True, special=("auto",), doc="kernel width (auto: the heuristic)"),
           *(Param.of(k, SpectralSupportEstimator._parameter_constraints[k]) for k in ("n_neighbors", "n_components")),
           Param("approx", str, choices=("exact", "nystroem", "rff")),
           Param("elbow_of", str, choices=("K_n/n", "K_n")))
_SVM_PARAMS = (*_PARAMS[1:3], Param("nu", float, low=0, high=1, low_open=True, doc="OneClassSVM's nu"))

_SPECTRAL_FIXED = {"kernel": "abel", "sigma": "auto", "n_neighbors": 10, "approx": "exact", "n_components": 2000,
                   "nu": 1.0, "elbow_of": "K_n/n"}
_WIDTH = "Abel kernel exp(-||x-y||/sigma), sigma = median 10th-neighbour distance of the training points"

SPECTRAL = register_method(MethodEntry(
    params=_PARAMS, name="Spectral", needs=frozenset({"features"}), task="one-class", grid={"lam": ["auto"]},
    fit_predict=spectral_fit_predict, fixed={**_SPECTRAL_FIXED, "filter": "tikhonov"},
    description=f"spectral support estimator F_n (Eq. 19), Tikhonov filter, {_WIDTH}, lambda at the maximum "
                "curvature of the eigenvalue decay"))
SPECTRAL_FILTERS = {f: register_method(MethodEntry(
    params=_PARAMS, name=f"Spectral-{f}", needs=frozenset({"features"}), task="one-class", grid={"lam": ["auto"]},
    fit_predict=spectral_fit_predict, fixed={**_SPECTRAL_FIXED, "filter": f},
    description=f"spectral support estimator F_n (Eq. 19), {f} filter, {_WIDTH}, lambda at the maximum curvature "
                "of the eigenvalue decay")) for f in FILTERS}
PARZEN = register_method(MethodEntry(
    params=_PARAMS, name="Parzen", needs=frozenset({"features"}), task="one-class", grid={},
    fit_predict=parzen_fit_predict, fixed={"kernel": "abel", "sigma": "auto", "n_neighbors": 10},
    description=f"Parzen window (1/n) sum_i K(x, x_i), {_WIDTH}"))
ONE_CLASS_SVM = register_method(MethodEntry(
    params=_SVM_PARAMS, name="1CSVM", needs=frozenset({"features"}), task="one-class", grid={},
    fit_predict=one_class_svm_fit_predict, fixed={"sigma": "auto", "n_neighbors": 10, "nu": 0.9},
    description="scikit-learn OneClassSVM, Gaussian kernel exp(-||x-y||^2/(2 sigma^2)), the same sigma, nu = 0.9"))
