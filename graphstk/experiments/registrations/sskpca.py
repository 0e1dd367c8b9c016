"""Semi-supervised kernel PCA (Walder et al.) by name, for the vector protocols: Table 1's ``LR-KPCA``,
``LS-KPCA``, ``MV-KPCA``, ``MV-KPCA-10``, ``KPCA-10``, Table 2's ``G-LS`` and ``M-LS``, and ``LS-KPCA (t)``
on a graph. Thin adapters over :class:`~graphstk.methods.LSKPCA`, :class:`~graphstk.methods.LRKPCA`,
:class:`~graphstk.methods.MVKPCA` and :class:`~graphstk.methods.KernelPCAClassifier`: one ``fit_path`` per
kernel over the grid. Grid keys, units and reuse: docs/experiments.md, "Semi-supervised kernel PCA".
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
import torch

from graphstk.methods.sskpca import (
    BASIS_CACHE, DECOMPOSITIONS, LRKPCA, LSKPCA, MVKPCA, KernelPCAClassifier, array_key, median_pairwise_distance,
)
from graphstk.operators import GraphKernel, SpectralKernelOperator
from graphstk.spectral.eigen import top_eigenpairs
from ..registry import MethodEntry, MethodInput, register_method
from ..params import Param
from .baselines import class_scores, feature_rows, group_points

__all__ = ["clear_cache", "SIGMA_GRID", "C_GRID", "S_GRID"]

SIGMA_GRID = [0.25, 0.5, 1.0, 2.0]
C_GRID = [0.01, 0.1, 1.0, 10.0, 100.0]
S_GRID = [0.1, 0.3, 1.0, 3.0]
MV_C_GRID = [0.0, 0.1, 1.0, 10.0, 100.0]
KPCA_SIGMA_GRID = [0.25, 0.5, 1.0, 2.0, 4.0]
LR_GRID = {"sigma": [0.5, 1.0], "c": [1.0], "s": [0.3, 1.0]}
K_GRID = [5, 10, 20]
TAU_GRID = [1.0, 5.0, 25.0]
W_GRID = [0.25, 0.5, 0.75]
DEFAULT_RANK = 200

_KERNEL_KEYS = ("kernel", "sigma", "k", "tau", "w", "rank", "centered")


def clear_cache() -> None:
    """Drop every cached decomposition (tests, memory)."""
    BASIS_CACHE.clear()


def _one_class(present: np.ndarray, n_eval: int, C: int, n_points: int) -> list[torch.Tensor]:
    """Scores predicting the one labeled class everywhere (1 for it, 0 elsewhere), per grid point."""
    S = np.zeros((n_eval, C))
    S[:, present] = 1.0
    return [torch.from_numpy(S.copy()) for _ in range(n_points)]


class _Fold:
    """The fit points of one call (sorted), their labels (``-1`` unlabeled), where the eval points are."""

    def __init__(self, problem: MethodInput):
        self.problem = problem
        self.fit = np.unique(torch.cat([problem.labeled, problem.unlabeled]).cpu().numpy())
        self.X = self.rows(self.fit)
        self.y = problem.y.cpu().numpy()[self.fit]
        self.present = np.unique(problem.labeled_targets().cpu().numpy())
        self.C = int(problem.num_classes)
        ev = problem.eval.cpu().numpy()
        pos = np.minimum(np.searchsorted(self.fit, ev), len(self.fit) - 1)
        self.eval_pos = pos if (ev.size == 0 or bool((self.fit[pos] == ev).all())) else None
        self.eval_ids = ev

    def rows(self, ids: np.ndarray) -> np.ndarray:
        A = feature_rows(self.problem.X, torch.as_tensor(ids))
        return A.toarray() if sp.issparse(A) else A

    @property
    def single(self) -> bool:
        return self.present.size < 2

    def kernel_params(self, p: dict) -> dict:
        """Estimator keywords of grid point ``p``'s kernel (``sigma`` in units of the median distance)."""
        kind = p.get("kernel", "gaussian")
        kw = {"rank": p.get("rank", DEFAULT_RANK), "centered": bool(p.get("centered", True))}
        if kind in ("gaussian", "mixture"):
            kw["sigma"] = float(p["sigma"]) * median_pairwise_distance(self.X)
        if kind in ("diffusion", "mixture"):
            kw.update(kernel=kind, n_neighbors=int(p["k"]), tau=float(p["tau"]))
        if kind == "mixture":
            kw["w"] = float(p["w"])
        elif kind not in ("gaussian", "diffusion"):
            raise ValueError(f"unknown kernel {kind!r} (gaussian | diffusion | mixture)")
        return kw

    def scores(self, est) -> torch.Tensor:
        """``[len(eval), C]`` scores from a fitted estimator (:func:`.baselines.class_scores`)."""
        d = est.decision_function_fit()[self.eval_pos] if self.eval_pos is not None else \
            est.decision_function(self.rows(self.eval_ids))
        return class_scores(est.classes_, d, self.C)


def _path_fit_predict(cls, path_keys: tuple, fixed: dict | None = None):
    """``fit_predict`` of one estimator class: one ``fit_path`` per kernel over the grid points."""
    def fit_predict(problem: MethodInput, points: list[dict]) -> list[torch.Tensor]:
        fold = _Fold(problem)
        if fold.single:
            return _one_class(fold.present, len(fold.eval_ids), fold.C, len(points))
        out: list = [None] * len(points)
        for idx in group_points(points, lambda p: tuple(p.get(k) for k in _KERNEL_KEYS)).values():
            est = cls(**fold.kernel_params(points[idx[0]]), **(fixed or {}))
            params = [{k: points[i][k] for k in path_keys if k in points[i]} for i in idx]
            for i, fitted in zip(idx, est.fit_path(fold.X, fold.y, params)):
                out[i] = fold.scores(fitted)
        return out
    return fit_predict


ls_fit_predict = _path_fit_predict(LSKPCA, ("c", "s", "standardize"))
ls_fit_predict.__doc__ = "LS-KPCA (Eqs. 10, 11, 14) for every grid point: one basis per kernel, one pencil per ``c``."
lr_fit_predict = _path_fit_predict(LRKPCA, ("c", "s", "standardize", "max_iter", "tol"), {"max_iter": 20, "tol": 1e-6})
lr_fit_predict.__doc__ = "LR-KPCA (corrected IRLS) per grid point, started from LS-KPCA with the same ``c``, ``s``."
mv_fit_predict = _path_fit_predict(MVKPCA, ("c", "n_components", "standardize"))
mv_fit_predict.__doc__ = "MV-KPCA (Eq. 6) and MV-KPCA-10 (``n_components``), one pencil per (kernel, ``c``)."
kpca_fit_predict = _path_fit_predict(KernelPCAClassifier, ("n_components", "standardize"))
kpca_fit_predict.__doc__ = "KPCA-10 (Eq. 5): the top ``n_components`` eigenfunctions (no labels) and a linear SVM."

#: parameter declarations (checked for every config value when the config loads): the estimators' own
_C = {**LSKPCA._parameter_constraints, "k": LSKPCA._parameter_constraints["n_neighbors"],
      "n_components": KernelPCAClassifier._parameter_constraints["n_components"]}
_PARAMS = tuple(Param.of(k, _C[k], doc=doc) for k, doc in (
    ("sigma", "Gaussian width, in units of the median fit distance"), ("c", "weight of the labeled loss"),
    ("s", "RMS deviation of f over the fit points"), ("k", "nearest neighbours"), ("tau", ""),
    ("w", "weight of the Gaussian kernel"), ("rank", ""), ("n_components", ""), ("centered", ""), ("standardize", "")))

_F = frozenset({"features"})
_G = {"kernel": "gaussian", "rank": DEFAULT_RANK, "centered": True}
_LS_GRID = {"sigma": SIGMA_GRID, "c": C_GRID, "s": S_GRID}
_MV_GRID = {"sigma": SIGMA_GRID, "c": MV_C_GRID}
for _name, _fit, _grid, _fixed, _what in (
        ("LS-KPCA", ls_fit_predict, _LS_GRID, {**_G, "standardize": False},
         "LS-KPCA (Walder et al. Eqs. 10-14, secular equation), Gaussian kernel, 1-D SVM threshold"),
        ("LR-KPCA", lr_fit_predict, LR_GRID, {**_G, "standardize": False},
         "LR-KPCA (Walder et al. Eqs. 16-21, corrected IRLS), Gaussian kernel, 1-D SVM threshold"),
        ("MV-KPCA", mv_fit_predict, _MV_GRID, {**_G, "n_components": 1, "standardize": False},
         "MV-KPCA (Walder et al. Eq. 6), first eigenfunction + 1-D SVM threshold"),
        ("MV-KPCA-10", mv_fit_predict, _MV_GRID, {**_G, "n_components": 10, "standardize": False},
         "MV-KPCA (Eq. 6), top 10 eigenfunctions + hard-margin linear SVM"),
        ("KPCA-10", kpca_fit_predict, {"sigma": KPCA_SIGMA_GRID}, {**_G, "n_components": 10, "standardize": False},
         "KPCA (Eq. 5), top 10 eigenfunctions + hard-margin linear SVM"),
        ("G-LS", ls_fit_predict, {"k": K_GRID, "tau": TAU_GRID, "c": C_GRID, "s": S_GRID},
         {**_G, "kernel": "diffusion"},
         "LS-KPCA with the diffusion kernel exp(-tau L) of a Gaussian-weighted kNN graph (Sec. 7.2)"),
        ("M-LS", ls_fit_predict, {"k": [10], "tau": TAU_GRID, "w": W_GRID, **_LS_GRID}, {**_G, "kernel": "mixture"},
         "LS-KPCA with w K_sigma + (1 - w) exp(-tau L) (Sec. 7.2)")):
    register_method(MethodEntry(params=_PARAMS, name=_name, needs=_F, task="classification",
                                grid={k: list(v) for k, v in _grid.items()}, fit_predict=_fit, fixed=_fixed,
                                description=_what))


# ---------------------------------------------------------------------------
# graphs (node classification): LS-KPCA on the STKR graph kernel
# ---------------------------------------------------------------------------
def _graph_eigenpairs(problem: MethodInput, rank: int, support: str):
    """``(lam, U, nodes)``: top-``rank`` eigenpairs of ``D^-1/2 W D^-1/2`` on the ``support`` nodes, cached."""
    data = problem.data
    N = int(data.num_nodes)
    ei = data.edge_index.cpu()
    A = sp.csr_matrix((np.ones(ei.shape[1]), (ei[0].numpy(), ei[1].numpy())), shape=(N, N))
    _, comp = connected_components(A, directed=False)
    if support == "labeled":
        nodes = np.flatnonzero(np.isin(comp, np.unique(comp[problem.labeled.cpu().numpy()])))
    elif support == "all":
        nodes = np.arange(N)
    else:
        raise ValueError(f"support must be 'labeled' or 'all', got {support!r}")
    gkey = array_key(ei) + (N,)

    def component_pairs(members: np.ndarray, k: int):
        """Top-``k`` eigenpairs of ``S`` on one connected component (whose degrees are the graph's)."""
        loc = np.full(N, -1)
        loc[members] = np.arange(members.size)
        m = (loc[ei[0].numpy()] >= 0) & (loc[ei[1].numpy()] >= 0)
        sub = torch.as_tensor(np.stack([loc[ei[0].numpy()[m]], loc[ei[1].numpy()[m]]]))
        vals, vecs = top_eigenpairs(GraphKernel(sub, int(members.size)).S, min(int(k), int(members.size)),
                                    upper_bound=1.0)
        DECOMPOSITIONS["kernel"] += 1
        return vals.numpy(), vecs.numpy()

    def make():
        giant = int(np.argmax(np.bincount(comp)))
        lams, cols = [], []
        pos = np.full(N, -1)
        pos[nodes] = np.arange(nodes.size)
        for cidx in np.unique(comp[nodes]):
            members = np.flatnonzero(comp == cidx)
            if cidx == giant:   # seeds whose support differs only in small components reuse its Lanczos run
                lam_c, U_c = BASIS_CACHE.get(("giant-eig",) + gkey + (int(rank),),
                                             lambda: component_pairs(members, rank))
            else:
                lam_c, U_c = component_pairs(members, rank)
            for j in range(lam_c.size):
                lams.append(lam_c[j])
                cols.append((pos[members], U_c[:, j]))
        order = np.argsort(-np.asarray(lams), kind="stable")[: int(rank)]
        U = np.zeros((nodes.size, order.size))
        for col, o in enumerate(order):
            U[cols[o][0], col] = cols[o][1]
        return np.asarray(lams)[order], U
    lam, U = BASIS_CACHE.get(("graph-eig",) + gkey + (int(rank),) + array_key(nodes), make)
    return lam, U, nodes


def graph_ls_fit_predict(problem: MethodInput, points: list[dict]) -> list[torch.Tensor]:
    """LS-KPCA on a graph: :class:`~graphstk.methods.LSKPCA` with ``kernel="precomputed"`` on the
    :class:`~graphstk.operators.SpectralKernelOperator` ``exp(-tau (I - S))`` of the top-``rank``
    eigenpairs of the STKR normalized adjacency ``S`` (sparse Lanczos,
    :func:`graphstk.spectral.top_eigenpairs`), transductive. Grid keys ``tau``, ``c``, ``s``; fixed
    ``rank`` (default 256) and ``support`` (``labeled``)."""
    if problem.data is None:
        raise ValueError("LS-KPCA (t) needs a graph (problem.data is None)")
    present = np.unique(problem.labeled_targets().cpu().numpy())
    C = int(problem.num_classes)
    ev = problem.eval.cpu().numpy()
    if present.size < 2:
        return _one_class(present, ev.size, C, len(points))
    out: list = [None] * len(points)
    groups = group_points(points, lambda p: (p.get("rank"), p.get("support"), p.get("tau")))
    for (rank, support, tau), idx in groups.items():
        lam, U, nodes = _graph_eigenpairs(problem, int(rank or 256), support or "labeled")
        K = SpectralKernelOperator(torch.from_numpy(U), torch.from_numpy(np.exp(-float(tau) * (1.0 - lam))))
        y = np.full(int(problem.data.num_nodes), -1)
        y[problem.labeled.cpu().numpy()] = problem.labeled_targets().cpu().numpy()
        loc = np.full(y.size, -1)
        loc[nodes] = np.arange(nodes.size)
        inside = loc[ev] >= 0
        params = [{"c": points[i]["c"], "s": points[i]["s"]} for i in idx]
        for i, est in zip(idx, LSKPCA(kernel="precomputed").fit_path(K, y[nodes], params)):
            d = np.empty((ev.size,) + est.decision_function_fit().shape[1:])
            d[inside] = est.decision_function_fit()[loc[ev[inside]]]
            if (~inside).any():     # no kernel row outside the support: f = 0 there
                d[~inside] = est.decision_function(np.zeros((1, nodes.size)))[0]
            out[i] = class_scores(est.classes_, d, C)
    return out


register_method(MethodEntry(
    params=_PARAMS, name="LS-KPCA (t)", needs=frozenset({"graph"}), task="classification",
    grid={"tau": [1.0, 5.0, 25.0], "c": [0.1, 1.0, 10.0, 100.0], "s": [0.1, 0.3, 1.0, 3.0]},
    fit_predict=graph_ls_fit_predict, fixed={"rank": 256, "support": "labeled"},
    description="LS-KPCA with exp(-tau (I - S)) on the top-256 eigenpairs of the STKR graph kernel S (transductive)"))
