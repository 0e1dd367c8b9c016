"""Semi-supervised kernel PCA (Walder et al.) by name, for the vector protocols (``fixed-splits``).

Names exactly as the paper's tables write them:

* Table 1 (Gaussian kernel ``exp(-gamma ||x - y||^2)``): ``LR-KPCA``, ``LS-KPCA``, ``MV-KPCA``,
  ``MV-KPCA-10``, ``KPCA-10``;
* Table 2 (Sec. 7.2): ``G-LS`` (LS-KPCA with the diffusion kernel ``exp(-tau L)`` of a
  Gaussian-weighted kNN graph) and ``M-LS`` (LS-KPCA with ``w K_gamma + (1 - w) exp(-tau L)``).

Parameters (grid keys):

* ``sigma``: Gaussian width in units of the median pairwise distance ``med`` of the fit points
  (labeled + unlabeled features, no label used), ``gamma = 1 / (2 (sigma med)^2)``;
* ``c``: weight of the labeled loss (LS/LR: Eq. 10; MV: within-class variance, Eq. 6);
* ``s``: root-mean-square deviation of ``f`` over the ``m`` fit points (``VAR[f] = m s^2``; the
  paper's ``s`` is ``sqrt(m) s``);
* ``k`` (nearest neighbours), ``tau`` (diffusion time), ``w`` (weight of the Gaussian kernel).

Fixed options: ``rank`` (default 200: every solve runs in the span of the top-200 eigenvectors
of the fit kernel, see :mod:`graphstk.methods.sskpca`; ``rank: 1500`` keeps the numerical rank of
the SSL sets), ``centered`` (True), ``standardize`` (False: the SVM head sees the eigenfunction
values as they are; True: each divided by its RMS over the fit points).

Reuse (why one call gets the whole grid): the fit points of every cross-validation fold and of
the final refit are the same (labeled + unlabeled = the whole data set), so the kernel
decomposition for one ``sigma`` (or ``k``, ``tau``, ``w``) is computed once per data set and
kept in a small in-process cache; one pencil ``P v = nu C v`` per (fold, kernel, ``c``) serves
every ``s`` (and MV-KPCA-10 reuses MV-KPCA's pencils). ``graphstk.methods.sskpca.DECOMPOSITIONS``
counts them.

Scores: the eigenfunction values of the eval points go through the linear SVM head of the
method (one-vs-rest ``+-1`` columns; two classes: one column, scores ``[-d, d]``). A fold whose
labeled part holds a single class predicts that class (scores 1 for it, 0 elsewhere); a class
absent from the labeled points gets a score below every other.
"""
from __future__ import annotations

import hashlib
from collections import OrderedDict

import numpy as np
import scipy.sparse as sp
import torch
from sklearn.metrics.pairwise import euclidean_distances

from graphstk.methods import sskpca as K
from ..registry import MethodEntry, Problem, register_method
from ..params import Param

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


class _LRU:
    """A small least-recently-used cache bounded by the bytes of the arrays it holds."""

    def __init__(self, max_bytes: float):
        self.max_bytes, self.data, self.bytes = max_bytes, OrderedDict(), 0

    @staticmethod
    def _size(v) -> int:
        if isinstance(v, np.ndarray):
            return v.nbytes
        if isinstance(v, (tuple, list)):
            return sum(_LRU._size(x) for x in v)
        if isinstance(v, K.KernelBasis):
            return v.U.nbytes + v.Phi.nbytes + v.P.nbytes
        return 64

    def get(self, key, make):
        if key in self.data:
            self.data.move_to_end(key)
            return self.data[key][0]
        v = make()
        n = self._size(v)
        self.data[key] = (v, n)
        self.bytes += n
        while self.bytes > self.max_bytes and len(self.data) > 1:
            _, (_, n0) = self.data.popitem(last=False)
            self.bytes -= n0
        return v

    def clear(self):
        self.data.clear()
        self.bytes = 0


_BASES = _LRU(900e6)
_PENCILS = _LRU(300e6)
_X_REFS: dict = {}


def clear_cache() -> None:
    """Drop every cached decomposition (tests, memory)."""
    _BASES.clear()
    _PENCILS.clear()
    _X_REFS.clear()


def _xkey(problem: Problem, fit: np.ndarray) -> tuple:
    # the cache keeps a reference to X so that its id cannot be reused while cached
    _X_REFS[id(problem.X)] = problem.X
    return (id(problem.X), hashlib.sha1(fit.tobytes()).hexdigest())


def _rows(X, ids: np.ndarray):
    if sp.issparse(X):
        return sp.csr_matrix(X)[ids].astype(np.float64)
    if isinstance(X, torch.Tensor):
        return X[torch.as_tensor(ids)].detach().cpu().numpy().astype(np.float64, copy=False)
    return np.asarray(X, dtype=np.float64)[ids]


def _sqdist(problem, fit, xk):
    def make():
        A = _rows(problem.X, fit)
        D2 = euclidean_distances(A, A, squared=True)
        np.fill_diagonal(D2, 0.0)
        D2 = np.maximum(D2, 0.0)
        med = float(np.sqrt(np.median(D2[np.triu_indices(D2.shape[0], 1)])))
        if not med > 0:
            raise ValueError("the fit points have median pairwise distance 0: the Gaussian width "
                             "(sigma x median distance) is undefined")
        return D2, np.array(med)
    D2, med = _BASES.get(("d2",) + xk, make)
    return D2, float(med)


def _gaussian(problem, fit, xk, sigma):
    D2, med = _sqdist(problem, fit, xk)
    g = 1.0 / (2.0 * (float(sigma) * med) ** 2)
    return np.exp(-g * D2), g


def _laplacian(problem, fit, xk, k):
    def make():
        from graphstk.operators.diffusion import gaussian_knn_graph, laplacian_eigenpairs
        A = _rows(problem.X, fit)
        A = A.toarray() if sp.issparse(A) else A
        ei, w = gaussian_knn_graph(torch.as_tensor(A), int(k))
        mu, U = laplacian_eigenpairs(ei, len(fit), w)
        K.DECOMPOSITIONS["kernel"] += 1
        return mu.numpy(), U.numpy()
    return _BASES.get(("lap", int(k)) + xk, make)


def _from_eigenpairs(lam, U, rank, centered, tol=1e-10) -> K.KernelBasis:
    order = np.argsort(-lam, kind="stable")
    lam, U = lam[order], U[:, order]
    keep = lam > tol * lam[0]
    if rank is not None:
        keep &= np.arange(lam.size) < int(rank)
    return K.KernelBasis(np.ascontiguousarray(U[:, keep]), lam[keep].copy(), centered=centered)


def _basis(problem, fit, xk, p) -> tuple[K.KernelBasis, dict]:
    """The kernel basis of grid point ``p`` (cached) and what out-of-sample rows need."""
    rank = p.get("rank", DEFAULT_RANK)
    centered = bool(p.get("centered", True))
    kind = p.get("kernel", "gaussian")
    if kind == "gaussian":
        key = ("gauss", float(p["sigma"]), rank, centered) + xk

        def make():
            Kg, _ = _gaussian(problem, fit, xk, p["sigma"])
            return K.kernel_basis(Kg, rank=rank, centered=centered)
        return _BASES.get(key, make), {"kind": "gaussian", "sigma": float(p["sigma"])}
    if kind == "diffusion":
        key = ("diff", int(p["k"]), float(p["tau"]), rank, centered) + xk

        def make():
            mu, U = _laplacian(problem, fit, xk, p["k"])
            return _from_eigenpairs(np.exp(-float(p["tau"]) * mu), U, rank, centered)
        return _BASES.get(key, make), {"kind": "graph"}
    if kind == "mixture":
        w = float(p["w"])
        if not 0.0 <= w <= 1.0:
            raise ValueError(f"M-LS: the mixture weight w must lie in [0, 1], got {w}")
        key = ("mix", int(p["k"]), float(p["tau"]), w, float(p["sigma"]), rank, centered) + xk

        def make():
            mu, U = _laplacian(problem, fit, xk, p["k"])
            Kd = (U * np.exp(-float(p["tau"]) * mu)) @ U.T
            Kg, _ = _gaussian(problem, fit, xk, p["sigma"])
            return K.kernel_basis(w * Kg + (1.0 - w) * Kd, rank=rank, centered=centered)
        return _BASES.get(key, make), {"kind": "graph"}
    raise ValueError(f"unknown kernel {kind!r} (gaussian | diffusion | mixture)")


class _Fold:
    """What every grid point of one call shares: fit ids, positions, labels, eval rows."""

    def __init__(self, problem: Problem):
        if problem.X is None:
            raise ValueError("semi-supervised KPCA needs features (problem.X is None)")
        self.problem = problem
        fit = np.unique(torch.cat([problem.labeled, problem.unlabeled]).cpu().numpy())
        self.fit = fit
        self.xk = _xkey(problem, fit)
        self.lab = np.searchsorted(fit, problem.labeled.cpu().numpy())
        self.y_lab = problem.labeled_targets().cpu().numpy()
        self.present = np.unique(self.y_lab)
        self.C = int(problem.num_classes)
        ev = problem.eval.cpu().numpy()
        pos = np.searchsorted(fit, ev)
        pos = np.minimum(pos, len(fit) - 1)
        self.in_fit = bool((fit[pos] == ev).all()) if ev.size else True
        self.eval_pos = pos
        self.eval_ids = ev
        self.lab_key = hashlib.sha1(self.lab.tobytes() + self.y_lab.tobytes()).hexdigest()

    @property
    def single(self) -> bool:
        return self.present.size < 2

    def targets(self) -> np.ndarray:
        if self.present.size == 2:
            return np.where(self.y_lab == self.present[1], 1.0, -1.0)[:, None]
        return np.stack([np.where(self.y_lab == k, 1.0, -1.0) for k in self.present], 1)

    def constant(self) -> torch.Tensor:
        S = np.zeros((len(self.eval_ids), self.C))
        S[:, self.present] = 1.0
        return torch.from_numpy(S)

    def eval_values(self, basis: K.KernelBasis, beta: np.ndarray, info: dict) -> np.ndarray:
        """Eigenfunction values at the eval points: in-sample rows of ``Phi beta`` or, for
        points outside the fit set, the representer expansion ``K(eval, fit) alpha``."""
        if self.in_fit:
            return basis.Phi[self.eval_pos] @ beta
        if info["kind"] != "gaussian":
            raise ValueError("graph kernels are transductive: the eval points must be among the fit points")
        _, med = _sqdist(self.problem, self.fit, self.xk)
        g = 1.0 / (2.0 * (info["sigma"] * med) ** 2)
        D = euclidean_distances(_rows(self.problem.X, self.eval_ids), _rows(self.problem.X, self.fit), squared=True)
        return np.exp(-g * np.maximum(D, 0.0)) @ basis.coef(beta)

    def scores(self, F_eval: np.ndarray, F_lab: np.ndarray, paired: bool = False,
               scale: np.ndarray | None = None) -> torch.Tensor:
        """SVM head scores; ``scale`` (per feature, e.g. the RMS of each eigenfunction over the fit
        points: option ``standardize``) divides the features first, so that the soft margin
        (``C = 1``) sees unit-scale features."""
        if scale is not None:
            scale = np.where(scale > 0, scale, 1.0)
            F_eval, F_lab = F_eval / scale, F_lab / scale
        T = self.targets()
        head = K.fit_linear_head(F_lab, T, paired=paired and T.shape[1] > 1)
        d = head.scores(F_eval)
        S = np.empty((F_eval.shape[0], self.C))
        if self.present.size == 2:
            S[:] = (-np.abs(d).max() - 1.0) if d.size else -1.0
            S[:, self.present[0]] = -d[:, 0]
            S[:, self.present[1]] = d[:, 0]
        else:
            S[:] = (d.min() - 1.0) if d.size else -1.0
            S[:, self.present] = d
        return torch.from_numpy(S)


def _scale(p: dict, basis: K.KernelBasis, beta: np.ndarray) -> np.ndarray | None:
    """Option ``standardize`` (default False): the RMS of each eigenfunction over the fit points
    (labeled and unlabeled; no label used), by which the SVM head divides its features."""
    if not p.get("standardize", False):
        return None
    return np.sqrt(np.mean((basis.Phi @ beta) ** 2, axis=0))


def _pencil(fold: _Fold, basis, bkey, c: float, kind: str):
    """``P v = nu C v`` for LS (``C = I + c Phi_L^T Phi_L``) or MV (Eq. 6), cached per fold."""
    def make():
        G = basis.Phi[fold.lab]
        if kind == "ls":
            Cm = np.eye(basis.r) + c * (G.T @ G)
        else:
            W = np.zeros((basis.r, basis.r))
            for g in fold.present:
                Gg = G[fold.y_lab == g]
                sg = Gg.sum(0)
                W += Gg.T @ Gg - np.outer(sg, sg) / Gg.shape[0]
            Cm = np.eye(basis.r) + c * (W + W.T) / 2
        return K._pencil(basis.P, Cm)
    return _PENCILS.get((kind, c, fold.lab_key) + tuple(bkey) + fold.xk, make)


def _group(points: list[dict], keys: tuple) -> "OrderedDict[tuple, list[int]]":
    out: OrderedDict = OrderedDict()
    for i, p in enumerate(points):
        out.setdefault(tuple(p.get(k) for k in keys), []).append(i)
    return out


_KERNEL_KEYS = ("kernel", "sigma", "k", "tau", "w", "rank", "centered")


def ls_fit_predict(problem: Problem, points: list[dict]) -> list[torch.Tensor]:
    """LS-KPCA (Eqs. 10, 11, 14) for every grid point: one basis per kernel, one pencil per ``c``."""
    fold = _Fold(problem)
    out: list = [None] * len(points)
    if fold.single:
        return [fold.constant() for _ in points]
    T = fold.targets()
    for kk, idx in _group(points, _KERNEL_KEYS).items():
        basis, info = _basis(problem, fold.fit, fold.xk, points[idx[0]])
        G = basis.Phi[fold.lab]
        for c, jdx in _group([points[i] for i in idx], ("c",)).items():
            c = K._check_c(c[0])
            nu, V = _pencil(fold, basis, kk, c, "ls")
            B = c * (G.T @ T)
            hints = G.T @ T
            for j in jdx:
                i = idx[j]
                s2 = basis.m * K._check_s(points[i]["s"]) ** 2
                beta = np.stack([K.secular_solve(nu, V, B[:, q], s2, sign_hint=hints[:, q]).beta
                                 for q in range(T.shape[1])], 1)
                out[i] = fold.scores(fold.eval_values(basis, beta, info), G @ beta, paired=True,
                                     scale=_scale(points[i], basis, beta))
    return out


def lr_fit_predict(problem: Problem, points: list[dict]) -> list[torch.Tensor]:
    """LR-KPCA (corrected IRLS) for every grid point, started from LS-KPCA with the same ``c``, ``s``."""
    fold = _Fold(problem)
    if fold.single:
        return [fold.constant() for _ in points]
    T = fold.targets()
    out = []
    for p in points:
        kk = tuple(p.get(k) for k in _KERNEL_KEYS)
        basis, info = _basis(problem, fold.fit, fold.xk, p)
        G = basis.Phi[fold.lab]
        c, s2 = K._check_c(p["c"]), basis.m * K._check_s(p["s"]) ** 2
        nu, V = _pencil(fold, basis, kk, c, "ls")
        cols = []
        for q in range(T.shape[1]):
            beta0 = K.secular_solve(nu, V, c * (G.T @ T[:, q]), s2, sign_hint=G.T @ T[:, q]).beta
            res = K.lr_kpca(basis, fold.lab, T[:, q], c, s2, beta0=beta0, max_iter=int(p.get("max_iter", 20)),
                            tol=float(p.get("tol", 1e-6)))
            cols.append(res.beta)
        beta = np.stack(cols, 1)
        out.append(fold.scores(fold.eval_values(basis, beta, info), G @ beta, paired=True,
                               scale=_scale(p, basis, beta)))
    return out


def mv_fit_predict(problem: Problem, points: list[dict]) -> list[torch.Tensor]:
    """MV-KPCA (Eq. 6) and MV-KPCA-10 (``n_components``), one pencil per (kernel, ``c``)."""
    fold = _Fold(problem)
    if fold.single:
        return [fold.constant() for _ in points]
    out = []
    for p in points:
        kk = tuple(p.get(k) for k in _KERNEL_KEYS)
        basis, info = _basis(problem, fold.fit, fold.xk, p)
        c = K._check_c(p["c"])
        nu, V = _pencil(fold, basis, kk, c, "mv")
        kcomp = min(int(p.get("n_components", 1)), basis.r)
        beta = V[:, ::-1][:, :kcomp]
        out.append(fold.scores(fold.eval_values(basis, beta, info), basis.Phi[fold.lab] @ beta,
                               scale=_scale(p, basis, beta)))
    return out


def kpca_fit_predict(problem: Problem, points: list[dict]) -> list[torch.Tensor]:
    """KPCA-10 (Eq. 5): the top ``n_components`` eigenfunctions (no labels) and a linear SVM."""
    fold = _Fold(problem)
    if fold.single:
        return [fold.constant() for _ in points]
    out = []
    for p in points:
        kk = tuple(p.get(k) for k in _KERNEL_KEYS)
        basis, info = _basis(problem, fold.fit, fold.xk, p)
        mu, W = _BASES.get(("kpca",) + kk + fold.xk, lambda: K.kpca_components(basis, basis.r))
        beta = W[:, : int(p.get("n_components", 10))]
        out.append(fold.scores(fold.eval_values(basis, beta, info), basis.Phi[fold.lab] @ beta,
                               scale=_scale(p, basis, beta)))
    return out


#: parameter declarations (checked for every config value when the config loads)
_PARAMS = (Param("sigma", float, low=0, low_open=True, doc="Gaussian width, in units of the median fit distance"),
           Param("c", float, low=0, doc="weight of the labeled loss"),
           Param("s", float, low=0, low_open=True, doc="RMS deviation of f over the fit points"),
           Param("k", int, low=1, doc="nearest neighbours"), Param("tau", float, low=0, low_open=True),
           Param("w", float, low=0, high=1, doc="weight of the Gaussian kernel"),
           Param("rank", int, low=1), Param("n_components", int, low=1),
           Param("centered", bool), Param("standardize", bool))

_F = frozenset({"features"})
_LS_GRID = {"sigma": list(SIGMA_GRID), "c": list(C_GRID), "s": list(S_GRID)}

register_method(MethodEntry(
    params=_PARAMS, name="LS-KPCA", needs=_F, task="classification", grid=dict(_LS_GRID), fit_predict=ls_fit_predict,
    fixed={"kernel": "gaussian", "rank": DEFAULT_RANK, "centered": True, "standardize": False},
    description="LS-KPCA (Walder et al. Eqs. 10-14, secular equation), Gaussian kernel, 1-D SVM threshold"))
register_method(MethodEntry(
    params=_PARAMS, name="LR-KPCA", needs=_F, task="classification", grid={k: list(v) for k, v in LR_GRID.items()},
    fit_predict=lr_fit_predict,
    fixed={"kernel": "gaussian", "rank": DEFAULT_RANK, "centered": True, "standardize": False},
    description="LR-KPCA (Walder et al. Eqs. 16-21, corrected IRLS), Gaussian kernel, 1-D SVM threshold"))
register_method(MethodEntry(
    params=_PARAMS, name="MV-KPCA", needs=_F, task="classification", grid={"sigma": list(SIGMA_GRID), "c": list(MV_C_GRID)},
    fit_predict=mv_fit_predict, fixed={"kernel": "gaussian", "rank": DEFAULT_RANK, "centered": True,
                                       "n_components": 1, "standardize": False},
    description="MV-KPCA (Walder et al. Eq. 6), first eigenfunction + 1-D SVM threshold"))
register_method(MethodEntry(
    params=_PARAMS, name="MV-KPCA-10", needs=_F, task="classification", grid={"sigma": list(SIGMA_GRID), "c": list(MV_C_GRID)},
    fit_predict=mv_fit_predict, fixed={"kernel": "gaussian", "rank": DEFAULT_RANK, "centered": True,
                                       "n_components": 10, "standardize": False},
    description="MV-KPCA (Eq. 6), top 10 eigenfunctions + hard-margin linear SVM"))
register_method(MethodEntry(
    params=_PARAMS, name="KPCA-10", needs=_F, task="classification", grid={"sigma": list(KPCA_SIGMA_GRID)},
    fit_predict=kpca_fit_predict, fixed={"kernel": "gaussian", "rank": DEFAULT_RANK, "centered": True,
                                         "n_components": 10, "standardize": False},
    description="KPCA (Eq. 5), top 10 eigenfunctions + hard-margin linear SVM"))
register_method(MethodEntry(
    params=_PARAMS, name="G-LS", needs=_F, task="classification",
    grid={"k": list(K_GRID), "tau": list(TAU_GRID), "c": list(C_GRID), "s": list(S_GRID)},
    fit_predict=ls_fit_predict, fixed={"kernel": "diffusion", "rank": DEFAULT_RANK, "centered": True},
    description="LS-KPCA with the diffusion kernel exp(-tau L) of a Gaussian-weighted kNN graph (Sec. 7.2)"))
register_method(MethodEntry(
    params=_PARAMS, name="M-LS", needs=_F, task="classification",
    grid={"k": [10], "tau": list(TAU_GRID), "w": list(W_GRID), "sigma": list(SIGMA_GRID), "c": list(C_GRID),
          "s": list(S_GRID)},
    fit_predict=ls_fit_predict, fixed={"kernel": "mixture", "rank": DEFAULT_RANK, "centered": True},
    description="LS-KPCA with w K_gamma + (1 - w) exp(-tau L) (Sec. 7.2)"))


# ---------------------------------------------------------------------------
# graphs (node classification): LS-KPCA on the STKR graph kernel
# ---------------------------------------------------------------------------
def _graph_eigenpairs(problem: Problem, rank: int, support: str):
    """Top-``rank`` eigenpairs of ``S = D^-1/2 W D^-1/2`` (the STKR graph's normalized adjacency,
    transductive: all nodes), restricted to the connected components holding a labeled node
    when ``support="labeled"`` (the other components have no label to fit: an eigenvalue 1 each,
    they would otherwise soak up the variance constraint). Returns ``(lam, U, nodes)``."""
    from scipy.sparse.csgraph import connected_components

    from graphstk.operators.graph import GraphKernel, normalized_adjacency
    from graphstk.spectral.eigen import top_eigenpairs

    data = problem.data
    N = int(data.num_nodes)
    ei = data.edge_index
    if support == "labeled":
        A = sp.csr_matrix((np.ones(ei.shape[1]), (ei[0].numpy(), ei[1].numpy())), shape=(N, N))
        _, comp = connected_components(A, directed=False)
        keep = np.isin(comp, np.unique(comp[problem.labeled.numpy()]))
        nodes = np.flatnonzero(keep)
    elif support == "all":
        nodes = np.arange(N)
    else:
        raise ValueError(f"support must be 'labeled' or 'all', got {support!r}")
    key = ("graph-eig", id(data), int(rank), hashlib.sha1(nodes.tobytes()).hexdigest())
    _X_REFS[id(data)] = data

    def component_pairs(members: np.ndarray, k: int):
        """Top-``k`` eigenpairs of ``S`` on one connected component (its own degrees are the
        graph's: a component has no edge leaving it). The largest component's are cached, so
        seeds whose labeled support differs only in small components reuse its Lanczos run."""
        loc = np.full(N, -1)
        loc[members] = np.arange(members.size)
        m = (loc[ei[0].numpy()] >= 0) & (loc[ei[1].numpy()] >= 0)
        sub = torch.as_tensor(np.stack([loc[ei[0].numpy()[m]], loc[ei[1].numpy()[m]]]))
        S = GraphKernel(sub, int(members.size)).S
        vals, vecs = top_eigenpairs(S, min(int(k), int(members.size)), upper_bound=1.0)
        K.DECOMPOSITIONS["kernel"] += 1
        return vals.numpy(), vecs.numpy()

    def make():
        A = sp.csr_matrix((np.ones(ei.shape[1]), (ei[0].numpy(), ei[1].numpy())), shape=(N, N))
        _, comp = connected_components(A, directed=False)
        sizes = np.bincount(comp)
        giant = int(np.argmax(sizes))
        lams, cols = [], []
        pos = np.full(N, -1)
        pos[nodes] = np.arange(nodes.size)
        for cidx in np.unique(comp[nodes]):
            members = np.flatnonzero(comp == cidx)
            if cidx == giant:
                lam_c, U_c = _BASES.get(("giant-eig", id(data), int(rank)),
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
    lam, U = _BASES.get(key, make)
    return lam, U, nodes


def graph_ls_fit_predict(problem: Problem, points: list[dict]) -> list[torch.Tensor]:
    """LS-KPCA on a graph: kernel ``exp(-tau (I - S))`` on the top-``rank`` eigenpairs of the STKR
    normalized adjacency ``S`` (sparse Lanczos, :func:`graphstk.spectral.top_eigenpairs`), transductive.
    Grid keys ``tau``, ``c``, ``s``; fixed ``rank`` (default 256) and ``support`` (``labeled``)."""
    if problem.data is None:
        raise ValueError("LS-KPCA (t) needs a graph (problem.data is None)")
    present = np.unique(problem.labeled_targets().numpy())
    C = int(problem.num_classes)
    ev = problem.eval.numpy()
    if present.size < 2:
        S = np.zeros((ev.size, C))
        S[:, present] = 1.0
        return [torch.from_numpy(S) for _ in points]
    out: list = [None] * len(points)
    for (rank, support, tau), idx in _group(points, ("rank", "support", "tau")).items():
        lam, U, nodes = _graph_eigenpairs(problem, int(rank or 256), support or "labeled")
        basis = _from_eigenpairs(np.exp(-float(tau) * (1.0 - lam)), U, None, True)
        loc = np.full(int(problem.data.num_nodes), -1)
        loc[nodes] = np.arange(nodes.size)
        lab = loc[problem.labeled.numpy()]
        y_lab = problem.labeled_targets().numpy()
        T = (np.where(y_lab == present[1], 1.0, -1.0)[:, None] if present.size == 2 else
             np.stack([np.where(y_lab == k, 1.0, -1.0) for k in present], 1))
        G = basis.Phi[lab]
        GtG = G.T @ G
        ev_loc = loc[ev]
        for c, jdx in _group([points[i] for i in idx], ("c",)).items():
            c = K._check_c(c[0])
            nu, V = K._pencil(basis.P, np.eye(basis.r) + c * GtG)
            for j in jdx:
                i = idx[j]
                s2 = basis.m * K._check_s(points[i]["s"]) ** 2
                beta = np.stack([K.secular_solve(nu, V, c * (G.T @ T[:, q]), s2, sign_hint=G.T @ T[:, q]).beta
                                 for q in range(T.shape[1])], 1)
                F = np.zeros((ev.size, beta.shape[1]))
                inside = ev_loc >= 0
                F[inside] = basis.Phi[ev_loc[inside]] @ beta
                head = K.fit_linear_head(G @ beta, T, paired=T.shape[1] > 1)
                d = head.scores(F)
                Sc = np.full((ev.size, C), -np.inf)
                if present.size == 2:
                    Sc[:, present[0]], Sc[:, present[1]] = -d[:, 0], d[:, 0]
                else:
                    Sc[:, present] = d
                Sc[~np.isfinite(Sc)] = np.nanmin(np.where(np.isfinite(Sc), Sc, np.nan)) - 1.0
                out[i] = torch.from_numpy(Sc)
    return out


register_method(MethodEntry(
    params=_PARAMS, name="LS-KPCA (t)", needs=frozenset({"graph"}), task="classification",
    grid={"tau": [1.0, 5.0, 25.0], "c": [0.1, 1.0, 10.0, 100.0], "s": [0.1, 0.3, 1.0, 3.0]},
    fit_predict=graph_ls_fit_predict, fixed={"rank": 256, "support": "labeled"},
    description="LS-KPCA with exp(-tau (I - S)) on the top-256 eigenpairs of the STKR graph kernel S (transductive)"))
