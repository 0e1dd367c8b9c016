"""Multi-shift conjugate gradient: ``(sigma_s I - S) X_s = B`` for every shift from one Krylov sequence
(Frommer & Maass, 1999): Label-Prop's ``I - eta S`` (Eq. 22) and the inverse Laplacian's ``Q`` (Eq. 20) for every
``eta`` of a grid, one product ``S @ P`` per iteration. The recurrences: docs/methods.md, "Multi-shift CG".
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Callable, Sequence

import torch
from torch import Tensor

from .solvers import ConvergenceWarning, safe_norm
from .._spaces import VectorSpace, _space


@dataclass
class MultiShiftResult:
    """``x[s]``: shift ``s``'s solution ``[N, K]``; ``residuals[j]``: the largest relative residual after iteration
    ``j + 1``; ``n_iter`` products of ``S``."""

    x: list[Tensor]
    residuals: list[float] = field(default_factory=list)
    n_iter: int = 0
    converged: bool = False
    stopped: str = ""


def multishift_cg(matvec: Callable[[Tensor], Tensor], b: Tensor, sigmas: Sequence[float], max_iter: int = 1000,
                  tol: float = 1e-10, warn: bool = True, callback=None, space: VectorSpace | None = None
                  ) -> MultiShiftResult:
    """Solve ``(sigma_s I - S) X_s = b`` for every ``sigma_s`` with one CG recurrence.

    Parameters
    ----------
    matvec : callable
        ``P -> S @ P`` for an ``[N, K]`` block; ``S`` symmetric.
    b : Tensor ``[N, K]``
        Right-hand sides (one independent system per column and shift).
    sigmas : sequence of float
        Shifts; every ``sigma_s I - S`` must be positive definite.
    max_iter : int, default 1000
        Products of ``S`` at most.
    tol : float, default 1e-10
        Stop when the recurrence's ``||b - (sigma_s I - S) x_s|| <= tol ||b||`` for every shift and column.
    warn : bool, default True
        Warn (``ConvergenceWarning``) when ``max_iter`` ends the solve before ``tol``.
    callback : callable ``(iteration, relative residual)``, optional
        A true return value stops the solve (:func:`graphstk.spectral.solvers.time_budget`), recorded in ``stopped``.
    space : VectorSpace, optional
        Where the column reductions run (default: this process's whole tensors).

    Returns
    -------
    MultiShiftResult, ``x`` in the order of ``sigmas``.
    """
    if b.dim() != 2:
        raise ValueError(f"b must be an [N, K] block, got shape {tuple(b.shape)}")
    sig = [float(s) for s in sigmas]
    if not sig:
        raise ValueError("multishift_cg needs at least one shift")
    if int(max_iter) != max_iter or max_iter < 1:
        raise ValueError(f"max_iter must be an integer >= 1, got {max_iter}")
    space = _space(space)
    seed = min(range(len(sig)), key=lambda s: sig[s])
    s0 = sig[seed]
    delta = torch.tensor([s - s0 for s in sig], dtype=b.dtype, device=b.device).view(-1, 1)  # [G, 1]
    G = len(sig)

    def apply_seed(p):  # (sigma_seed I - S) p
        return matvec(p).sub_(p, alpha=s0).neg_()

    bn = safe_norm(b, space)
    x = torch.zeros(G, *b.shape, dtype=b.dtype, device=b.device)
    r = b.clone()
    p = b.clone()
    ps = b.unsqueeze(0).repeat(G, 1, 1)
    rs = space.col_dot(r, r)                                    # [K]
    zeta = torch.ones(G, b.shape[1], dtype=b.dtype, device=b.device)
    zeta_old = torch.ones_like(zeta)
    alpha_old = torch.ones_like(rs)
    beta_old = torch.zeros_like(rs)
    res = MultiShiftResult([])
    live = torch.ones(G, b.shape[1], dtype=torch.bool, device=b.device)  # (shift, column) still iterating
    tiny = torch.finfo(b.dtype).tiny
    for j in range(1, int(max_iter) + 1):
        q = apply_seed(p)
        pq = space.col_dot(p, q)
        act = (rs > 0) & live.any(0)  # a column whose every shift has converged stops here
        if bool((pq[act] <= 0).any()):
            raise FloatingPointError("multishift_cg met non-positive curvature: sigma I - S is not positive "
                                     "definite for the smallest shift (eta must stay below 1/lambda_1)")
        alpha = torch.where(act, rs / torch.where(act, pq, torch.ones_like(pq)), torch.zeros_like(rs))
        den = alpha * beta_old * (zeta_old - zeta) + zeta_old * alpha_old * (1.0 + alpha * delta)
        zeta_new = torch.where(den.abs() > tiny, zeta * zeta_old * alpha_old / torch.where(
            den.abs() > tiny, den, torch.ones_like(den)), torch.zeros_like(den))
        ratio = torch.where(zeta.abs() > tiny, zeta_new / torch.where(zeta.abs() > tiny, zeta, torch.ones_like(zeta)),
                            torch.zeros_like(zeta))
        a_s = torch.where(live, alpha * ratio, torch.zeros_like(ratio))          # [G, K]
        active = live.any(1).nonzero().flatten().tolist()   # shifts with a column still iterating
        for s in active:  # a converged shift costs nothing more (the small etas converge first)
            x[s].addcmul_(a_s[s], ps[s])
        r.addcmul_(alpha, q, value=-1.0)   # r, p: owned by this loop, updated in place (no fresh [N, K] blocks)
        rs_new = space.col_dot(r, r)
        beta = torch.where(act, rs_new / torch.where(act, rs, torch.ones_like(rs)), torch.zeros_like(rs))
        rel = zeta_new.abs() * torch.sqrt(rs_new) / bn                          # [G, K] residual of each shift
        res.residuals.append(float(rel.max()) if rel.numel() else 0.0)
        live = live & (rel > tol)
        if not bool(torch.isfinite(rel).all()):
            raise FloatingPointError("multishift_cg produced a non-finite residual")
        if not bool(live.any()):
            res.converged, res.n_iter = True, j
            break
        stop = callback(j, res.residuals[-1]) if callback is not None else None
        if stop:
            res.stopped, res.n_iter = (stop if isinstance(stop, str) else "the callback asked to stop"), j
            break
        b_s = beta * ratio * ratio
        for s in live.any(1).nonzero().flatten().tolist():
            ps[s].mul_(b_s[s]).addcmul_(zeta_new[s], r)
        p.mul_(beta).add_(r)
        zeta_old, zeta = zeta, zeta_new
        alpha_old, beta_old, rs = alpha, beta, rs_new
    else:
        res.n_iter = int(max_iter)
    res.x = [space.settle(v) for v in x.unbind(0)]
    if not res.converged and warn and tol > 0:
        why = res.stopped or "increase max_iter"
        warnings.warn(f"multishift_cg stopped after {res.n_iter} iterations with relative residual "
                      f"{res.residuals[-1]:.3e} > tol={tol:.1e}; {why}", ConvergenceWarning, stacklevel=2)
    return res


def solve_shifted_laplacians(matvec: Callable[[Tensor], Tensor], b: Tensor, etas: Sequence[float],
                             max_iter: int = 1000, tol: float = 1e-10, warn: bool = True, callback=None,
                             space: VectorSpace | None = None) -> tuple[list[Tensor], MultiShiftResult]:
    """``(I - eta S)^{-1} b`` for every ``eta`` (STKR Eq. 22, and ``Q^{-1}`` of Eq. 20 for the
    inverse Laplacian), from one multi-shift CG on ``(1/eta) I - S``: ``x_eta = x'_eta / eta``.

    Needs ``0 < eta < 1/lambda_1(S)``. Returns the solutions in the order of ``etas`` and the
    :class:`MultiShiftResult` (its ``x`` are the unscaled ``x'``); ``space`` as in :func:`multishift_cg`.
    """
    for eta in etas:
        if not eta > 0:
            raise ValueError(f"eta must be > 0, got {eta}")
    res = multishift_cg(matvec, b, [1.0 / float(e) for e in etas], max_iter=max_iter, tol=tol, warn=warn,
                       callback=callback, space=space)
    return [xs / float(e) for xs, e in zip(res.x, etas)], res
