"""STKR on a feature kernel, registered for the vector protocols: ``STKR-Lap`` (``s(l) = l / (1 - eta l)``,
Algorithm 2) and ``STKR-poly`` (``s(l) = l^k``, Algorithm 1/3) on the Gaussian kernel of the features,
``G_K / (n+m)`` (Eq. 5), ``sigma`` in units of the median fit distance; hidden points are scored through
their out-of-sample rows. Details: docs/experiments.md, "STKR on a feature kernel".
"""
from __future__ import annotations

import torch
from sklearn.metrics.pairwise import euclidean_distances

from graphstk.methods.validated import STKRCV
from graphstk.operators import DenseOperator
from graphstk.spectral.transforms import InverseLaplacian, Polynomial

from ..registry import MethodEntry, MethodInput, register_method
from .stkr import PARAMS
from .baselines import SIGMA, feature_rows, group_points, median_fit_distance

__all__ = ["stkr_kernel_fit_predict"]

SIGMA_GRID = [2.0, 1.0, 0.5, 0.25]
BETA_GRID = [1.0, 1e-1, 1e-2, 1e-3, 1e-4]
ETA_GRID = [0.5, 0.9, 0.99]
K_GRID = [1, 2, 4]


#: the transform of each registration, from its grid values (the key that indexes the transforms)
TRANSFORMS = {"STKR-Lap": ("eta", InverseLaplacian), "STKR-poly": ("k", lambda k: Polynomial.monomial(int(k)))}


def stkr_kernel_fit_predict(problem: MethodInput, points: list[dict], method: str = "STKR-Lap") -> list[torch.Tensor]:
    """Scores on ``problem.eval`` for every grid point of ``method`` (``"STKR-Lap"`` or ``"STKR-poly"``;
    see the module docstring)."""
    fit = problem.fit_points
    extra = problem.eval[~torch.isin(problem.eval, fit)]
    ids = torch.cat([fit, extra])                       # local numbering: fit points, then hidden ones
    A = feature_rows(problem.X, ids)
    D2 = torch.from_numpy(euclidean_distances(A, A, squared=True))
    y = problem.y[ids]
    train = torch.arange(problem.labeled.numel())       # fit points start with the labeled ones
    hidden = torch.arange(fit.numel(), ids.numel()) if extra.numel() else None
    pos = torch.full((problem.num_points,), -1, dtype=torch.long)
    pos[ids] = torch.arange(ids.numel())
    eval_local = pos[problem.eval]
    m = median_fit_distance(problem)
    out: dict[int, torch.Tensor] = {}
    for sigma, members in group_points(points, lambda p: float(p["sigma"])).items():
        K = DenseOperator(torch.exp(D2 * (-0.5 / (sigma * m) ** 2)))
        axis, make = TRANSFORMS[method]
        keys = (axis, "beta")
        grid = {k: list(dict.fromkeys(points[i][k] for i in members)) for k in keys}
        est = STKRCV([make(v) for v in grid[axis]], grid["beta"], "inductive" if hidden is not None else "transductive",
                     num_classes=problem.num_classes)
        res = est.grid_scores(K, train, eval_local, hidden, y=y)
        lookup = {(grid[axis][i // len(grid["beta"])], p["beta"]): s for i, (p, s) in enumerate(res)}
        for i in members:
            out[i] = lookup[tuple(points[i][k] for k in keys)]
    return [out[i] for i in range(len(points))]


#: parameter declarations: the STKR paper's eta, beta, k (declared once, in .stkr) and the kernel width
_PARAMS = (SIGMA, PARAMS["eta"], PARAMS["beta"], PARAMS["k"])


def _stkr_lap(problem: MethodInput, points: list[dict]) -> list[torch.Tensor]:
    """:func:`stkr_kernel_fit_predict` with the inverse-Laplacian transform."""
    return stkr_kernel_fit_predict(problem, points, "STKR-Lap")


def _stkr_poly(problem: MethodInput, points: list[dict]) -> list[torch.Tensor]:
    """:func:`stkr_kernel_fit_predict` with ``s(l) = l^k``."""
    return stkr_kernel_fit_predict(problem, points, "STKR-poly")

STKR_LAP = register_method(MethodEntry(
    name="STKR-Lap", needs=frozenset({"features"}), task="classification",
    grid={"sigma": list(SIGMA_GRID), "eta": list(ETA_GRID), "beta": list(BETA_GRID)},
    fit_predict=_stkr_lap, params=_PARAMS, engine="InverseLaplacian",
    description="STKR, inverse-Laplacian transform (Algorithm 2) of a Gaussian feature kernel (sigma x median distance)"))
STKR_POLY = register_method(MethodEntry(
    name="STKR-poly", needs=frozenset({"features"}), task="classification",
    grid={"sigma": list(SIGMA_GRID), "k": list(K_GRID), "beta": list(BETA_GRID)},
    fit_predict=_stkr_poly, params=_PARAMS, engine="Polynomial",
    description="STKR, polynomial transform s(l) = l^k (Algorithm 1/3) of a Gaussian feature kernel"))
