"""Top-``d`` kernel PCA features with a ridge probe (STKR Eqs. 8-9) on a :class:`~graphstk.methods.problem.Problem`."""
from __future__ import annotations

import warnings
from typing import Sequence

import numpy as np
import scipy.sparse as sp
import torch
from scipy.sparse.csgraph import connected_components
from torch import Tensor

from ..spectral import eigen
from ..spectral.solvers import SolveResult
from ..spectral.eigen import guard_size
from ..spectral.transforms import TopD
from .problem import EngineResult, GridPoint, Problem, grid_pairs, sym_solve_path


def labeled_components(prob: Problem) -> Tensor:
    """Mask of visible nodes whose component (of ``S``'s pattern; one for a dense ``S``) holds a labeled node."""
    if prob.sparse is None:
        return torch.ones(prob.N, dtype=torch.bool, device=prob.train.device)
    row, col, _ = prob.sparse.coo()
    a = sp.csr_matrix((np.ones(row.numel()), (row.cpu().numpy(), col.cpu().numpy())), shape=(prob.N, prob.N))
    _, label = connected_components(a, directed=False)
    label = torch.as_tensor(label, device=prob.train.device)
    hit = torch.zeros(int(label.max()) + 1 if label.numel() else 0, dtype=torch.bool, device=label.device)
    hit[label[prob.train]] = True
    return hit[label]


def stkr_topd(prob: Problem, transforms: Sequence[TopD], betas: Sequence[float],
              eigen_cache: "eigen.EigenCache | None" = None) -> EngineResult:
    """Top-``d`` kernel PCA on the unlabeled visible nodes with a ridge probe (Eqs. 8-9), every
    :class:`~graphstk.spectral.transforms.TopD` ``(d, support)`` and ``beta`` at once (one
    eigendecomposition per ``support``): the TopD family of :func:`graphstk.methods.engine.solve`."""
    out = EngineResult()
    for support in dict.fromkeys(t.support for t in transforms):
        one = _topd(prob, [t for t in transforms if t.support == support], betas, support, eigen_cache)
        one.record("kernel PCA + ridge probe (Eqs. 8-9)",
                   f"TopD: support={support!r} ('labeled': the components that hold a label; 'all': Eq. 8)")
        out.points += one.points
        out.history += one.history
    return out


def _topd(prob: Problem, transforms: Sequence[TopD], betas: Sequence[float], support: str,
          eigen_cache: "eigen.EigenCache | None") -> EngineResult:
    """Kernel PCA of one ``support`` with a ridge probe (Eqs. 8-9): ``psi_i(x) = sqrt(N / mu_i) rows(x)[:, U] u_i``
    for ``S_UU u_i = mu_i u_i`` (docs/methods.md, "Kernel PCA features"), one eigendecomposition for every ``d``
    and ``beta``; ``eigen_cache`` keeps eigenpairs (and a warm start) per operator."""
    N, n, C = prob.N, prob.n, prob.C
    ds = [t.d for t in transforms]
    is_train = torch.zeros(N, dtype=torch.bool, device=prob.Y.device)
    is_train[prob.train] = True
    keep = ~is_train
    if support == "labeled":
        keep &= labeled_components(prob)
    elif support != "all":
        raise ValueError(f"support must be 'all' or 'labeled', got {support!r}")
    U = keep.nonzero().flatten()
    dmax = max(ds)
    if U.numel() == 0:   # e.g. an edgeless graph with support="labeled": no node shares a component with a label
        warnings.warn("kernel PCA: no unlabeled node shares a connected component with a labeled node; every score "
                      "is zero", stacklevel=2)
        zero = torch.zeros(N, C, dtype=prob.Y.dtype, device=prob.Y.device)
        return EngineResult([GridPoint(t, bt, None, zero.clone()) for t, bt in grid_pairs(transforms, betas)])
    k = min(dmax, U.numel())
    record: list = []
    A = prob.op.block(U, U)
    if eigen_cache is None:
        mu, u = eigen.top_eigenpairs(A, k, upper_bound=prob.lambda_max, record=record)
    else:
        start = _warm_start(prob, U, k, eigen_cache)
        mu, u = eigen_cache.top_eigenpairs(A, k, upper_bound=prob.lambda_max, start=start, record=record)
    out = EngineResult()
    for r in record:
        out.history.append(SolveResult(torch.empty(0), n_iter=int(r["products"] or 0),
                                       converged=r["residual"] <= r["bound"],
                                       solver=f"kernel PCA eigenpairs: {r['route']}",
                                       reason=f"S_UU component of {r['n']} nodes, top {r['k']}: residual "
                                              f"max ||S u - mu u|| = {r['residual']:.2e}, bound {r['bound']:.2e}"))
    pos = mu > torch.finfo(mu.dtype).eps * 10
    if int(pos.sum()) < dmax:
        warnings.warn(f"kernel PCA: only {int(pos.sum())} positive eigenvalues among the top {k} of G_K,m; "
                      f"d is capped there (Eq. 8 needs lambda~_i > 0)", stacklevel=2)
    mu, u = mu[pos], u[:, pos]
    scaled = u * torch.sqrt(N / mu)                            # columns sqrt(N/mu_i) u_i
    phi_train = prob.op.block(prob.train, U) @ scaled     # Psi(X_n)^T  [n, k]
    for tr in transforms:
        dd = min(tr.d, mu.numel())
        F = phi_train[:, :dd]
        ws = sym_solve_path(F.T @ F, 1.0, [n * bt for bt in betas], F.T @ prob.Y, "kernel PCA ridge (Eq. 9)")
        for bt, w in zip(betas, ws):
            h = torch.zeros(N, C, dtype=prob.Y.dtype, device=prob.Y.device)
            h[U] = scaled[:, :dd] @ w
            out.add([(tr, bt)], None, h)
    return out


def _warm_start(prob: Problem, U: Tensor, k: int, eigen_cache: "eigen.EigenCache") -> Tensor | None:
    """Rows ``U`` of the top eigenvectors of ``S``'s large components (a warm start for the block route of
    :func:`~graphstk.spectral.top_eigenpairs`, transductive only), or ``None``."""
    if prob.sparse is None or prob.N != prob.num_points or eigen.eigen_route(prob.N, k, prob.op.device) != "block":
        return None   # only a transductive S (no hidden point) is the same for every split: its basis is reused
    row, col, _ = prob.sparse.coo()
    a = sp.csr_matrix((np.ones(row.numel()), (row.cpu().numpy(), col.cpu().numpy())), shape=(prob.N, prob.N))
    _, label = connected_components(a, directed=False)
    sizes = np.bincount(label)
    big = np.nonzero(sizes[label] > 3000)[0]   # top_eigenpairs' dense_threshold: the components it iterates on
    if big.size <= k + 2:
        return None
    big_t = torch.as_tensor(big, device=prob.op.device)
    _, basis = eigen_cache.top_eigenpairs(prob.op.block(big_t, big_t), guard_size(k, int(big.size)))
    start = torch.zeros(prob.N, basis.shape[1], dtype=basis.dtype, device=basis.device)
    start[big_t] = basis
    return start[U]
