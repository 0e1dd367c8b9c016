"""The Fredholm-kernel paper's methods by name (Que, Belkin, Wang 2014, Tables 1-6): ``FredLin1``,
``FredLin2``, ``FredLin2(N)``, ``FredGauss``, ``FredGauss(N)`` (Sec. 5; square loss, Eq. 3, or hinge, Eq. 7)
and ``LapRLSC`` (Belkin, Niyogi, Sindhwani 2006), adapters over :class:`~graphstk.methods.FredholmRLSC`,
:class:`~graphstk.methods.FredholmSVM` and :class:`~graphstk.methods.LapRLSC`. Grid units (``width``,
``lam``, ``gamma_A``, ``gamma_I``): docs/experiments.md, "Fredholm kernels".
"""
from __future__ import annotations

import scipy.sparse as sp
import torch

from ...methods import FredholmRLSC, FredholmSVM, LapRLSC
from ..registry import MethodEntry, MethodInput, register_method
from ..params import Param
from .baselines import (_single_class, class_scores, feature_rows, group_points, median_fit_distance,
                        semi_supervised_labels)

__all__ = ["fredholm_fit_predict", "laprls_fit_predict", "FREDHOLM_NAMES"]

FREDHOLM_NAMES = ("FredLin1", "FredLin2", "FredLin2(N)", "FredGauss", "FredGauss(N)")
WIDTH_GRID = [0.125, 0.25, 0.5, 1.0]
LAM_GRID = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1]
GAMMA_A_GRID = [1e-8, 1e-6, 1e-4, 1e-2]
GAMMA_I_GRID = [1.0, 100.0, 1e4, 1e6]


def _fit_data(problem: MethodInput, dense: bool = False):
    """``(X_fit, y_fit, X_eval)``: the fit points (labeled first) with ``-1`` for the unlabeled ones."""
    X, XE = feature_rows(problem.X, problem.fit_points), feature_rows(problem.X, problem.eval)
    if dense and sp.issparse(X):
        raise ValueError("LapRLSC here needs dense features (kNN graph and kernel factor); densify the data")
    return X, semi_supervised_labels(problem), XE


def fredholm_fit_predict(problem: MethodInput, points: list[dict]) -> list[torch.Tensor]:
    """Scores ``[len(eval), C]`` of a Fredholm instance for every grid point (module docstring):
    ``FredholmRLSC`` (``loss="square"``) or ``FredholmSVM`` (``"hinge"``, seeded with the
    problem's seed), ``lam_scale="trace"``, one fit per ``(instance, width, loss)``.

    Fixed key ``instance`` (one of :data:`FREDHOLM_NAMES`); grid keys ``width``, ``lam``,
    ``loss`` (``"square"`` | ``"hinge"``).
    """
    if problem.unlabeled.numel() == 0:
        raise ValueError("Fredholm kernels need unlabeled points (problem.unlabeled is empty)")
    single = _single_class(problem, len(points))
    if single is not None:
        return single
    X, y, XE = _fit_data(problem)
    m = median_fit_distance(problem)
    out: list = [None] * len(points)
    for (name, width, loss), idx in group_points(points, lambda p: (p["instance"], float(p["width"]),
                                                               p.get("loss", "square"))).items():
        if loss == "square":
            est = FredholmRLSC.instance(name, width * m, lam_scale="trace")
        elif loss == "hinge":
            est = FredholmSVM.instance(name, width * m, lam_scale="trace", random_state=int(problem.seed))
        else:
            raise ValueError(f"loss must be 'square' or 'hinge', got {loss!r}")
        est.set_params(lam=float(points[idx[0]]["lam"])).fit(X, y)
        for i, S in zip(idx, est.decision_path(XE, [float(points[i]["lam"]) for i in idx])):
            out[i] = class_scores(est.classes_, S, problem.num_classes)
    return out


def laprls_fit_predict(problem: MethodInput, points: list[dict]) -> list[torch.Tensor]:
    """LapRLSC scores for every grid point: one :class:`~graphstk.methods.LapRLSC` fit per
    ``(kernel, sigma, n_neighbors, landmarks)`` (``gamma_scale="trace"``: ``gamma_A`` and
    ``gamma_I`` relative to the kernel's mean diagonal, 1 for a Gaussian), its
    ``decision_path`` for the ``(gamma_A, gamma_I)`` pairs."""
    single = _single_class(problem, len(points))
    if single is not None:
        return single
    X, y, XE = _fit_data(problem, dense=True)
    m = None
    out: list = [None] * len(points)
    key = lambda p: (p.get("kernel", "gaussian"), float(p.get("sigma", 1.0)), int(p.get("n_neighbors", 10)),
                     int(p.get("landmarks", 0)))
    for (kernel, sigma, k, landmarks), idx in group_points(points, key).items():
        width = None
        if kernel == "gaussian":
            m = median_fit_distance(problem) if m is None else m
            width = sigma * m
        est = LapRLSC(kernel=kernel, sigma=width, n_neighbors=k, landmarks=landmarks or None,
                      random_state=int(problem.seed), gamma_scale="trace",
                      gamma_A=float(points[idx[0]]["gamma_A"]), gamma_I=float(points[idx[0]]["gamma_I"])).fit(X, y)
        gammas = [(float(points[i]["gamma_A"]), float(points[i]["gamma_I"])) for i in idx]
        for i, S in zip(idx, est.decision_path(XE, gammas)):
            out[i] = class_scores(est.classes_, S, problem.num_classes)
    return out


#: parameter declarations (checked for every config value when the config loads)
_PARAMS = (Param("width", float, low=0, low_open=True, doc="Gaussian width, in units of the median fit distance"),
           Param.of("lam", FredholmRLSC._parameter_constraints["lam"], doc="Eq. 3's lambda relative to mean diag K_F"),
           Param("loss", str, choices=("square", "hinge")),
           Param("instance", str, choices=FREDHOLM_NAMES),
           Param.of("sigma", LapRLSC._parameter_constraints["sigma"], doc="LapRLSC kernel width (median units)"),
           Param("gamma_A", float, low=0, doc="LapRLSC ambient regularisation"),
           Param.of("gamma_I", LapRLSC._parameter_constraints["gamma_I"], doc="LapRLSC intrinsic regularisation"),
           Param.of("n_neighbors", LapRLSC._parameter_constraints["n_neighbors"]), Param("landmarks", int, low=0),
           Param("kernel", str, choices=("gaussian", "linear")))

for _name in FREDHOLM_NAMES:
    register_method(MethodEntry(
        name=_name, needs=frozenset({"features"}), task="classification",
        grid={"width": list(WIDTH_GRID), "lam": list(LAM_GRID), "loss": ["square"]},
        fit_predict=fredholm_fit_predict, fixed={"instance": _name}, params=_PARAMS,
        description=f"{_name}: Fredholm kernel (Que, Belkin, Wang 2014, Sec. 5), Eq. 3 square loss by default; "
                    "width x median fit distance, lam relative to mean diag K_F"))

LAPRLSC = register_method(MethodEntry(
    name="LapRLSC", needs=frozenset({"features"}), task="classification",
    grid={"kernel": ["gaussian"], "sigma": [0.25, 0.5, 1.0], "gamma_A": list(GAMMA_A_GRID),
          "gamma_I": list(GAMMA_I_GRID), "n_neighbors": [10], "landmarks": [0]},
    fit_predict=laprls_fit_predict, params=_PARAMS,
    description="Laplacian RLS (Belkin, Niyogi, Sindhwani 2006) on a kNN graph of the fit points, one-vs-rest"))
