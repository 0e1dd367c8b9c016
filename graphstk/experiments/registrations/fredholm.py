"""The Fredholm-kernel paper's methods by name (Que, Belkin, Wang 2014, Tables 1-6).

* ``FredLin1``, ``FredLin2``, ``FredLin2(N)``, ``FredGauss``, ``FredGauss(N)``: the Sec. 5
  instances (:mod:`graphstk.methods.fredholm`), square loss (Eq. 3) by default; grid key
  ``loss`` accepts ``"hinge"`` (Eq. 7, no bias). Semi-supervised: the integral of Eq. 2 runs
  over the labeled and unlabeled fit points; evaluation points enter only through their
  outer-kernel weights (out-of-sample prediction).
* ``LapRLSC``: Laplacian RLS (Belkin, Niyogi, Sindhwani 2006; :mod:`graphstk.methods.laprls`)
  on a kNN graph of the fit points.
* ``RLSC`` / ``KRLSC`` are the baselines of :mod:`.baselines` (not re-registered here).

Units of the grids (the same conventions as :mod:`.baselines`, so one grid fits every data set):

* ``width``: the Gaussian width ``r`` of ``exp(-||x - z||^2 / (2 r))`` is ``(width * m)^2``,
  ``m`` the median pairwise distance of the fit points (labeled + unlabeled; no label used);
  for LapRLSC and KRLSC the same number is called ``sigma``.
* ``lam``: Eq. 3's ``lambda`` (erratum convention: ``alpha = (K_F + l lam I)^{-1} Y``) relative
  to the mean of ``diag(K_F)`` over the labeled points (``lam_scale="trace"`` of the estimators):
  the Fredholm kernel carries ``1/n^2`` and products of kernel values, so an absolute grid
  would have to change with every data set and width.
* LapRLSC: ``gamma_A`` (relative to ``mean diag K``, 1 for a Gaussian), ``gamma_I`` (the
  ``gamma_I / N^2 f^T L f`` term), ``n_neighbors``, ``kernel`` (``"gaussian"`` or ``"linear"``)
  and ``landmarks`` (``0`` = exact kernel factor, ``m > 0`` = Nyström on ``m`` fit points).

Every grid point that shares a width shares its kernel blocks; for the FredGauss family the
squared distances are shared by all widths and by ``FredGauss`` / ``FredGauss(N)``
(:func:`graphstk.methods.fredholm.gaussian_fredholm_path`, cached for the last problem).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import torch

from ..registry import MethodEntry, Problem, register_method
from ..params import Param
from .baselines import _rows, median_fit_distance, one_vs_rest_targets

__all__ = ["fredholm_fit_predict", "laprls_fit_predict", "FREDHOLM_NAMES"]

FREDHOLM_NAMES = ("FredLin1", "FredLin2", "FredLin2(N)", "FredGauss", "FredGauss(N)")
WIDTH_GRID = [0.125, 0.25, 0.5, 1.0]
LAM_GRID = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1]
GAMMA_A_GRID = [1e-8, 1e-6, 1e-4, 1e-2]
GAMMA_I_GRID = [1.0, 100.0, 1e4, 1e6]

_PATH_CACHE: dict = {}


def _points(problem: Problem, ids: torch.Tensor):
    X = _rows(problem.X, ids)
    return X if sp.issparse(X) else torch.from_numpy(np.ascontiguousarray(X))


def _key(problem: Problem) -> tuple:
    return (id(problem.X), problem.seed, *(t.cpu().numpy().tobytes() for t in
                                          (problem.labeled, problem.unlabeled, problem.eval)))


def _gauss_blocks(problem: Problem, widths: list[float], m: float):
    """``{(r, normalized): (K_LL, K_EL)}`` for the FredGauss family, cached per problem."""
    from graphstk.methods.fredholm import gaussian_fredholm_path

    key = _key(problem)
    cache = _PATH_CACHE.get(key)
    rs = sorted({(w * m) ** 2 for w in widths})
    if cache is None or not set(rs) <= {r for r, _ in cache}:
        _PATH_CACHE.clear()
        XL, XE, U = (_points(problem, ids) for ids in (problem.labeled, problem.eval, problem.fit_points))
        _PATH_CACHE[key] = cache = gaussian_fredholm_path(XL, XE, U, rs, (False, True))
    return cache


def fredholm_fit_predict(problem: Problem, points: list[dict]) -> list[torch.Tensor]:
    """Scores ``[len(eval), C]`` of a Fredholm instance for every grid point (module docstring).

    Fixed key ``instance`` (one of :data:`FREDHOLM_NAMES`); grid keys ``width``, ``lam``,
    ``loss`` (``"square"`` | ``"hinge"``).
    """
    from graphstk.methods.fredholm import (FREDHOLM_INSTANCES, FredholmKernel, fredholm_instance, solve_hinge,
                                           solve_square)

    if problem.X is None:
        raise ValueError("Fredholm kernels need features (problem.X is None)")
    if problem.unlabeled.numel() == 0:
        raise ValueError("Fredholm kernels need unlabeled points (problem.unlabeled is empty)")
    T = one_vs_rest_targets(problem.labeled_targets(), problem.num_classes)
    m = median_fit_distance(problem)
    blocks: dict = {}
    gauss = [p for p in points if FREDHOLM_INSTANCES[p["instance"]][:2] == ("gaussian", "gaussian")]
    if gauss and not sp.issparse(problem.X):
        cache = _gauss_blocks(problem, [float(p["width"]) for p in gauss], m)
        for p in gauss:
            r = (float(p["width"]) * m) ** 2
            blocks[(p["instance"], float(p["width"]))] = cache[(r, FREDHOLM_INSTANCES[p["instance"]][2])]
    out = []
    for p in points:
        key = (p["instance"], float(p["width"]))
        if key not in blocks:
            U = _points(problem, problem.fit_points)
            op = FredholmKernel(_points(problem, problem.labeled), None, U,
                                **fredholm_instance(p["instance"], (float(p["width"]) * m) ** 2))
            blocks[key] = (op.to_dense(), op.cross(_points(problem, problem.eval)))
        K_LL, K_EL = blocks[key]
        lam = float(p["lam"]) * float(K_LL.diagonal().mean())
        loss = p.get("loss", "square")
        if loss == "square":
            beta = solve_square(K_LL, T, lam)
        elif loss == "hinge":
            beta = solve_hinge(K_LL, T, lam, seed=int(problem.seed))
        else:
            raise ValueError(f"loss must be 'square' or 'hinge', got {loss!r}")
        out.append(K_EL @ beta.to(K_EL.dtype))
    return out


def laprls_fit_predict(problem: Problem, points: list[dict]) -> list[torch.Tensor]:
    """LapRLSC scores for every grid point; the kernel factor and ``L R`` are shared by all
    ``(gamma_A, gamma_I)`` pairs of one ``(kernel, sigma, n_neighbors, landmarks)``."""
    from graphstk.methods.fredholm import _kernel_matmul, _make_kernel
    from graphstk.methods.laprls import graph_laplacian, kernel_factor, laprls_path

    if problem.X is None:
        raise ValueError("LapRLSC needs features (problem.X is None)")
    if sp.issparse(problem.X):
        raise ValueError("LapRLSC here needs dense features (kNN graph and kernel factor); densify the data")
    X = _points(problem, problem.fit_points)
    XE = _points(problem, problem.eval)
    l = problem.labeled.numel()
    T = one_vs_rest_targets(problem.labeled_targets(), problem.num_classes)
    m = None
    laps: dict = {}
    groups: dict = {}
    for i, p in enumerate(points):
        key = (p.get("kernel", "gaussian"), float(p.get("sigma", 1.0)), int(p.get("n_neighbors", 10)),
               int(p.get("landmarks", 0)))
        groups.setdefault(key, []).append(i)
    out: list = [None] * len(points)
    for (kernel, sigma, k, landmarks), idx in groups.items():
        if k not in laps:
            laps[k] = graph_laplacian(X, k)
        if kernel == "gaussian":
            m = median_fit_distance(problem) if m is None else m
            kern = _make_kernel("gaussian", (sigma * m) ** 2, "kernel")
        else:
            kern = _make_kernel(kernel, None, "kernel")
        lm = None
        if landmarks and landmarks < X.shape[0] and kern.name != "linear":
            g = torch.Generator().manual_seed(int(problem.seed))
            lm = torch.randperm(X.shape[0], generator=g)[:landmarks]
        R, P = kernel_factor(kern, X, lm)
        RE = XE if P is None else _kernel_matmul(kern, XE, X if lm is None else X.index_select(0, lm), P)
        # gamma_A relative to the kernel's mean diagonal (1 for a Gaussian; x^T x for linear)
        scale = float((R * R).sum(1).mean())
        pairs = [(float(points[i]["gamma_A"]) * scale, float(points[i]["gamma_I"]) * scale) for i in idx]
        betas = laprls_path(R, laps[k] @ R, torch.arange(l), T, pairs)
        for i, b in zip(idx, betas):
            out[i] = RE @ b
    return out


#: parameter declarations (checked for every config value when the config loads)
_PARAMS = (Param("width", float, low=0, low_open=True, doc="Gaussian width, in units of the median fit distance"),
           Param("lam", float, low=0, low_open=True, doc="Eq. 3's lambda relative to mean diag K_F"),
           Param("loss", str, choices=("square", "hinge")),
           Param("instance", str, choices=FREDHOLM_NAMES),
           Param("sigma", float, low=0, low_open=True, doc="LapRLSC kernel width (median units)"),
           Param("gamma_A", float, low=0, doc="LapRLSC ambient regularisation"),
           Param("gamma_I", float, low=0, doc="LapRLSC intrinsic regularisation"),
           Param("n_neighbors", int, low=1), Param("landmarks", int, low=0),
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
