"""Richardson's step for Algorithms 1 and 2 (:func:`richardson_step`, the one formula of the engine and the
:mod:`graphstk.nn` modules), and for Algorithm 2 the proof, before iterating, that no positive step
converges (:func:`reciprocal_step`) with the longest fixed budget that stays below the divergence guard."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch
from torch import Tensor

from .._spaces import LOCAL
from ..operators.base import SparseOperator
from ..spectral.solvers import solve_shifted_laplacians
from ..spectral.transforms import ReciprocalPolynomial, horner, spectrum_points
from .problem import Problem
from .routes import DENSE_LIMIT, spectrum_grid

__all__ = ["DIVERGED_RESIDUAL", "richardson_step", "reciprocal_step", "guard_safe_budget"]

#: a fixed budget whose final relative residual exceeds this cannot come from a converging iteration
#: (Richardson from x = 0 starts at 1): the estimators raise ConvergenceError instead of returning scores
DIVERGED_RESIDUAL = 1e3
#: labeled pairs tested for a certificate that no Richardson step converges (columns of one CG on Q)
STEP_CERT_PAIRS = 8
#: iterations of the certificate's one multi-shift CG (counted work, never a timing)
STEP_CERT_ITERS = 64
#: shifts e = eta 2^(-j/2), j < STEP_CERT_SHIFTS, at which the certificate looks for M's real eigenvalue
STEP_CERT_SHIFTS = 8
#: a certificate's quotient must fall this far below its threshold (rounding of float32 operators)
STEP_CERT_MARGIN = 1e-7


def richardson_step(family: str, step_size, coeffs, beta, N: int, n: int, lam_min: float, lam_max: float,
                    r: int = 1):
    """Richardson's step for Algorithms 1 and 2: the one formula the engine and the
    :mod:`graphstk.nn` modules use.

    ``step_size="auto"``:

    * ``family="polynomial"``, ``s(l) = sum_p pi_p l^(p+1)`` (``coeffs = pi``): Algorithm 1's
      ``A = N [s(S)]_nn + n beta I`` has ``||A|| <= N max |s| + n beta``, so
      ``gamma = 1 / (N max_l |s(l)| + n beta)`` (``"paper"`` is the same);
    * ``family="reciprocal"``, ``rho(l) = sum_p xi_p l^p`` (``coeffs = xi``): Algorithm 2's
      ``gamma = 1 / (N lambda_max^r + n beta max_l rho(l))`` (:func:`reciprocal_step`), stable on a
      positive semidefinite ``S``; ``"paper"``: Prop. 10's ``1 / (n lambda_max^r)``.

    A number is that step.

    The extremes are taken on ``spectrum_points`` of ``[lam_min, lam_max]`` (``lam_min = 0``
    for a positive semidefinite ``S``). ``coeffs`` and ``beta`` may be tensors that require grad:
    the step is then differentiable in them (an unrolled fixed budget's gradient includes the
    step's dependence on its parameters). Returns ``gamma`` shaped like ``beta``.
    """
    if not isinstance(step_size, str):
        return float(step_size)
    if step_size == "paper" and family == "reciprocal":
        return 1.0 / (n * lam_max ** r)
    c = coeffs if isinstance(coeffs, Tensor) else torch.tensor([float(v) for v in coeffs], dtype=torch.float64)
    grid = spectrum_points(lam_min, lam_max, dtype=c.dtype, device=c.device)
    vals = horner(c, lambda v: v * grid, torch.ones_like(grid))            # sum_p c_p l^p
    if family == "polynomial":
        return 1.0 / (N * (vals * grid).abs().max().clamp_min(1e-300) + n * beta)
    return 1.0 / (N * lam_max ** r + n * beta * vals.max().clamp_min(1e-300))


def reciprocal_step(prob: Problem, transforms: Sequence[ReciprocalPolynomial], betas: Sequence[float],
                    step_size: str | float = "auto", certify: bool = True) -> tuple[Tensor, list[str | None]]:
    """Algorithm 2's Richardson step ``gamma`` for every (transform, beta) pair, and, per pair, a
    certificate (a sentence) when no positive step can make the iteration on Eq. 20 converge.

    Returns ``(gamma [K], certificates)``: ``gamma`` per column of the ``[N, K]`` block
    (``K = len(transforms) * len(betas) * C``, pair ``g = t * len(betas) + b`` owns columns
    ``g*C ... g*C + C-1``), and ``certificates[g]`` is ``None`` or why pair ``g`` has no stable
    step. ``step_size="auto"``: ``gamma = 1 / (N lambda^r + n beta rho_max)``, ``rho_max`` the
    maximum of ``rho`` on ``[-lambda, lambda]``; ``"paper"``: Prop. 10's ``1 / (n lambda^r)``;
    a number: that step. The certificates do not depend on ``step_size``; ``certify=False`` skips
    them (a Krylov route that needs no step).

    The proofs (stability on a PSD ``S^r``, the determinant lemma, the certificate) are in docs/methods.md,
    "Algorithm 2's Richardson step: the proofs" (Eq. 20, Prop. 10).
    """
    lam = prob.lambda_max
    N, n, C = prob.N, prob.n, prob.C
    pairs = [(tr, bt) for tr in transforms for bt in betas]
    gamma = torch.tensor([float(richardson_step("reciprocal", step_size, tr.xi, bt, N, n, prob.lambda_min, lam,
                                                r=tr.r)) for tr, bt in pairs],
                         dtype=prob.Y.dtype, device=prob.Y.device).repeat_interleave(C)
    certs: list[str | None] = [None] * len(pairs)
    for t, tr in enumerate(transforms if certify and not prob.psd else ()):   # on a PSD S the step is stable
        if tr.r == 1 and len(tr.xi) == 2:
            for b_i, msg in enumerate(_negative_eigenvalue_certificates(prob, tr, betas)):
                certs[t * len(betas) + b_i] = msg
    return gamma, certs


def guard_safe_budget(prob: Problem, transforms: Sequence[ReciprocalPolynomial], betas: Sequence[float],
                       gamma: Tensor) -> int:
    """The largest fixed budget ``T`` whose relative residual provably stays at most ``DIVERGED_RESIDUAL``
    for every column, whatever the spectrum of ``M``: Richardson from ``theta = 0`` has the residual
    ``r_T = (I - gamma M)^T [y; 0]`` and ``||I - gamma M|| <= max_l |1 - gamma n beta rho(l)| + gamma N
    lambda^r`` over ``l`` in ``[-lambda, lambda]`` (``M = n beta Q + N I~ S^r``, ``||I~ S^r|| <= lambda^r``).
    So ``T <= log(DIVERGED_RESIDUAL) / log(that bound)`` never trips the divergence guard (about 9 with
    the automatic step, whose bound is just below 2)."""
    lam, N, n, C = prob.lambda_max, prob.N, prob.n, prob.C
    grid = spectrum_grid(prob)
    g = torch.as_tensor(gamma, dtype=torch.float64).cpu().reshape(-1)
    worst = 1.0
    for t, tr in enumerate(transforms):
        rho = tr.rho(grid)
        for b_i, bt in enumerate(betas):
            col = (t * len(betas) + b_i) * C
            gc = float(g[col] if g.numel() > 1 else g[0])
            worst = max(worst, float((1 - gc * n * bt * rho).abs().max()) + gc * N * lam ** tr.r)
    if worst <= 1.0:
        return 2 ** 31 - 1
    return int(np.floor(np.log(DIVERGED_RESIDUAL) / np.log(worst) + 1e-12))


def _labeled_pairs(prob: Problem, k: int) -> tuple[Tensor, Tensor, Tensor]:
    """The ``k`` labeled pairs ``(a, b)``, ``a < b`` (local labeled positions), with the largest
    ``|S_ab|``, and those entries; ties broken by position, so the choice is deterministic."""
    blk = prob.op.block(prob.train, prob.train)
    if isinstance(blk, SparseOperator):
        a, b, v = blk.coo()
    elif prob.n <= DENSE_LIMIT:
        dense = blk.to_dense()
        a, b = dense.nonzero(as_tuple=True)
        v = dense[a, b]
    else:
        z = torch.zeros(0, dtype=torch.long, device=prob.train.device)
        return z, z, torch.zeros(0, dtype=torch.float64, device=prob.train.device)
    keep = (a < b) & (v != 0)
    a, b, v = a[keep], b[keep], v[keep].double()
    if a.numel() == 0:
        return a, b, v
    key = a.double() * prob.n + b.double()        # positions break ties: a stable order
    order = torch.argsort(key)
    a, b, v = a[order], b[order], v[order]
    top = torch.argsort(-v.abs(), stable=True)[:k]
    return a[top], b[top], v[top]


def _negative_eigenvalue_certificates(prob: Problem, tr: ReciprocalPolynomial, betas: Sequence[float]
                                      ) -> list[str | None]:
    """Per beta, :func:`reciprocal_step`'s certificate (a sentence) for ``Q = xi_0 (I - eta S)``, or ``None``
    (also for a partitioned operator: the iteration then runs under the caller's divergence guard)."""
    N, n, lam = prob.N, prob.n, prob.lambda_max
    xi0, xi1 = tr.xi
    eta = -xi1 / xi0
    if not (xi1 < 0 and eta * lam < 1):
        return [None] * len(betas)
    if prob.space is not LOCAL:   # rows spread over processes: no certificate (each would test its own pairs)
        return [None] * len(betas)
    a, b, s_ab = _labeled_pairs(prob, STEP_CERT_PAIRS)
    if a.numel() == 0:
        return [None] * len(betas)
    k = int(a.numel())
    dev = prob.Y.device
    V = torch.zeros(n, k, dtype=torch.float64, device=dev)
    cols = torch.arange(k, device=dev)
    V[a, cols] = 1.0
    V[b, cols] = -torch.sign(s_ab).to(dev)
    v = prob.scatter(V)                                    # [N, k], the pairs' vectors on the labeled rows
    op = prob.op
    if isinstance(op, SparseOperator) and op.dtype != torch.float64:
        op = op.to(dtype=torch.float64)

    def S(x):
        return (op @ x.to(op.dtype)).double()

    shifts = [eta * 2.0 ** (-j / 2) for j in range(STEP_CERT_SHIFTS)]
    space = prob.space
    xs, _ = solve_shifted_laplacians(S, v, shifts, max_iter=STEP_CERT_ITERS, tol=1e-12, warn=False, space=space)
    vv = space.col_dot(v, v)                               # = 2 per column
    best = []                                              # per shift: (upper bound of the quotient [k], shift)
    for e, x in zip(shifts, xs):
        qx = x - e * S(x)
        r = v - qx
        lower = 2.0 * space.col_dot(x, v) - space.col_dot(x, qx)     # L(x) <= v^T (I - e S)^{-1} v
        upper = lower + space.col_dot(r, r) / (1.0 - e * lam)         # >= v^T (I - e S)^{-1} v
        best.append((upper / vv, e))
    out: list[str | None] = []
    for bt in betas:
        tau = 1.0 - n * bt * (-xi1) / N
        found = None
        for q, e in best:
            j = int(torch.argmin(q))
            if float(q[j]) < tau - STEP_CERT_MARGIN and (found is None or float(q[j]) - tau < found[0]):
                found = (float(q[j]) - tau, float(q[j]), e, j)
        if found is None:
            out.append(None)
            continue
        _, q, e, j = found
        mu0 = n * bt * xi0 * (1.0 - eta / e)
        ia, ib = int(prob.train[a[j]]), int(prob.train[b[j]])
        need = N * (1.0 - q) / (n * -xi1)
        out.append(f"{tr!r}, beta={bt:g}: Eq. 20's M has a real eigenvalue <= {mu0:.4g} <= 0 (labeled nodes {ia} "
                   f"and {ib}, S_ab = {float(s_ab[j]):.3g}: for v = e_a - e_b and e = {e:.4g}, v^T [(I - e S)^-1]_nn v"
                   f" / v^T v <= {q:.6f} < 1 - n beta |xi_1| / N = {tau:.6f}), so |1 - gamma mu| > 1 for every "
                   f"step gamma > 0; no beta <= {need:.3g} converges for this pair")
    return out


