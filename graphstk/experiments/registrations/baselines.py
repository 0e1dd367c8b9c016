"""The supervised baselines every kernel paper compares against, registered by name: ``RLSC`` (linear
kernel), ``KRLSC`` (Gaussian kernel, width in units of the median fit distance), both kernel ridge on
one-vs-rest ``+-1`` targets (Fredholm paper Eq. 3 with the plain kernel), and ``LinearSVM``; and the
helpers the other registrations share (feature rows, grid groups, class columns). Conventions:
docs/experiments.md, "Supervised baselines".
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import torch
from sklearn.svm import LinearSVC

from ...methods import KernelRidge
from ...methods.semi_supervised import onevsrest_targets
from ...operators.bandwidth import median_width
from ..registry import MethodEntry, MethodInput, register_method
from ..params import Param

__all__ = ["rls_fit_predict", "linear_svm_fit_predict", "feature_rows", "group_points", "median_fit_distance",
           "class_scores", "semi_supervised_labels"]

#: default grids, from the smoothest model to the most flexible one (ties go to the first grid point)
LAM_GRID = [100.0, 10.0, 1.0, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6]
SIGMA_GRID = [4.0, 2.0, 1.0, 0.5, 0.25, 0.125]
C_GRID = [1e-2, 1e-1, 1.0, 10.0, 100.0]


def feature_rows(X, idx: torch.Tensor, tensor: bool = False):
    """Rows ``idx`` of the features ``X`` in float64: a numpy array (a CSR matrix for sparse ``X``), or
    with ``tensor`` a dense torch tensor (on ``X``'s device for a tensor ``X``)."""
    if sp.issparse(X):
        A = sp.csr_matrix(X)[idx.cpu().numpy()].astype(np.float64)
        return torch.from_numpy(A.toarray()) if tensor else A
    if tensor:
        return torch.as_tensor(X)[idx.cpu()].to(torch.float64)
    if isinstance(X, torch.Tensor):
        return X[idx.cpu()].detach().cpu().numpy().astype(np.float64, copy=False)
    return np.asarray(X, dtype=np.float64)[idx.cpu().numpy()]


def group_points(points: list[dict], key) -> dict:
    """``{key(p): [indices of the grid points p with that key]}``, in the order of first appearance:
    the grid points that can share one fit."""
    out: dict = {}
    for i, p in enumerate(points):
        out.setdefault(key(p), []).append(i)
    return out


def class_scores(classes, scores, num_classes: int) -> torch.Tensor:
    """``[m, num_classes]`` float64 scores from an estimator's ``decision_function`` output
    ``scores`` (``[m]`` for two classes: the score of ``classes[1]``; else ``[m, len(classes)]``)
    over its ``classes`` (class ids): a class the estimator never saw (absent from a fold's labeled
    points) scores below every other; one seen class alone is predicted everywhere."""
    classes = np.asarray(classes, dtype=np.int64)
    S = torch.as_tensor(np.asarray(scores, dtype=np.float64))
    if S.dim() == 1:
        S = torch.stack([-S, S], dim=1)
    out = torch.full((S.shape[0], num_classes), float(S.min()) - 1.0 if S.numel() else -1.0, dtype=torch.float64)
    out[:, torch.from_numpy(classes)] = S
    return out


def semi_supervised_labels(problem: MethodInput) -> np.ndarray:
    """Labels of ``problem.fit_points`` (labeled first) in the estimators' contract: the class id
    of each labeled point, ``-1`` for every unlabeled one (whose labels are never read)."""
    y = np.full(problem.fit_points.numel(), -1, dtype=np.int64)
    y[:problem.labeled.numel()] = problem.labeled_targets().cpu().numpy()
    return y


def _single_class(problem: MethodInput, n_points: int) -> list | None:
    """Scores predicting the one labeled class everywhere (no classifier fits one class), else None."""
    present = np.unique(problem.labeled_targets().cpu().numpy())
    if present.size >= 2:
        return None
    S = torch.full((problem.eval.numel(), problem.num_classes), -1.0, dtype=torch.float64)
    S[:, torch.from_numpy(present)] = 1.0
    return [S.clone() for _ in range(n_points)]


def median_fit_distance(problem: MethodInput, max_points: int = 1000) -> float:
    """Median Euclidean distance between distinct fit points (labeled + unlabeled; at most
    ``max_points`` of them, drawn with ``problem.seed``): :func:`graphstk.operators.median_width`."""
    fit = problem.fit_points
    if fit.numel() > max_points:
        fit = fit[torch.randperm(fit.numel(), generator=torch.Generator().manual_seed(int(problem.seed)))[:max_points]]
    return median_width(feature_rows(problem.X, fit, tensor=True), max_samples=None)


def rls_fit_predict(problem: MethodInput, points: list[dict]) -> list[torch.Tensor]:
    """(Kernel) RLS classification, one-vs-rest, for every grid point: :class:`graphstk.methods.KernelRidge`
    with ``alpha = (K_LL + l lam I)^{-1} T`` on the ``+-1`` targets ``T`` of the labeled points.

    Grid keys: ``lam`` (> 0, the ``1/l``-normalised ridge) and, for ``kernel="gaussian"``,
    ``sigma`` (> 0, in units of the median fit distance unless ``sigma_units="absolute"``).
    Fixed keys: ``kernel`` (``"linear"`` | ``"gaussian"``), ``sigma_units``
    (``"median"`` default | ``"absolute"``).
    """
    XL, XE = feature_rows(problem.X, problem.labeled), feature_rows(problem.X, problem.eval)
    l = problem.labeled.numel()
    T = onevsrest_targets(problem.labeled_targets(), problem.num_classes, full=True).numpy()

    def kernel_of(p: dict) -> tuple:
        kernel = p.get("kernel", "gaussian")
        if kernel not in ("linear", "gaussian"):
            raise ValueError(f"unknown kernel {kernel!r} (allowed: linear, gaussian)")
        return kernel, float(p["sigma"]) if kernel == "gaussian" else None, p.get("sigma_units", "median")

    scale: dict = {}
    out: list = [None] * len(points)
    for (kernel, sigma, units), idx in group_points(points, kernel_of).items():
        if kernel == "gaussian":
            if units not in scale:
                scale[units] = median_fit_distance(problem) if units == "median" else 1.0
            krr = KernelRidge(kernel="gaussian", sigma=sigma * scale[units])
        else:
            krr = KernelRidge(kernel="linear")
        krr.set_params(lam=l * float(points[idx[0]]["lam"])).fit(XL, T)
        for i, S in zip(idx, krr.predict_path(XE, [l * float(points[i]["lam"]) for i in idx])):
            out[i] = torch.from_numpy(np.asarray(S, dtype=np.float64))
    return out


def linear_svm_fit_predict(problem: MethodInput, points: list[dict]) -> list[torch.Tensor]:
    """Linear SVM (``sklearn.svm.LinearSVC``, one-vs-rest, squared hinge) per grid point ``C``.

    Scores are ``decision_function`` columns placed at their class ids (:func:`class_scores`); with a
    single labeled class the prediction is that class.
    """
    single = _single_class(problem, len(points))
    if single is not None:
        return single
    XL, XE = feature_rows(problem.X, problem.labeled), feature_rows(problem.X, problem.eval)
    yl = problem.labeled_targets().cpu().numpy()
    out = []
    for p in points:
        clf = LinearSVC(C=float(p["C"]), dual="auto", max_iter=int(p.get("max_iter", 10000)),
                        random_state=int(problem.seed)).fit(XL, yl)
        out.append(class_scores(clf.classes_, clf.decision_function(XE), problem.num_classes))
    return out


#: a Gaussian width in units of the median fit distance, declared as KernelRidge's ``sigma``
SIGMA = Param.of("sigma", KernelRidge._parameter_constraints["sigma"],
                 doc="Gaussian width, in units of the median fit distance")
#: parameter declarations (checked for every config value when the config loads)
_PARAMS = (Param("lam", float, low=0, low_open=True, doc="ridge, 1/l-normalised"),
           SIGMA,
           Param.of("C", LinearSVC._parameter_constraints["C"], doc="LinearSVC's C"),
           Param("max_iter", int, low=1, doc="LinearSVC's iteration limit"),
           Param("kernel", str, choices=("linear", "gaussian")),
           Param("sigma_units", str, choices=("median", "absolute")))

RLSC = register_method(MethodEntry(
    name="RLSC", needs=frozenset({"features"}), task="classification", grid={"lam": list(LAM_GRID)},
    fit_predict=rls_fit_predict, fixed={"kernel": "linear"}, params=_PARAMS,
    description="regularized least-squares classifier, linear kernel, one-vs-rest +-1 targets (supervised)"))
KRLSC = register_method(MethodEntry(
    name="KRLSC", needs=frozenset({"features"}), task="classification",
    grid={"sigma": list(SIGMA_GRID), "lam": list(LAM_GRID)}, fit_predict=rls_fit_predict,
    fixed={"kernel": "gaussian", "sigma_units": "median"}, params=_PARAMS,
    description="kernel RLS classifier, Gaussian kernel (sigma x median fit distance), one-vs-rest (supervised)"))
LINEAR_SVM = register_method(MethodEntry(
    name="LinearSVM", needs=frozenset({"features"}), task="classification", grid={"C": list(C_GRID)},
    fit_predict=linear_svm_fit_predict, params=_PARAMS,
    description="linear SVM (sklearn LinearSVC, one-vs-rest; supervised)"))
