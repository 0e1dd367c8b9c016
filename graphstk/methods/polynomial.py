"""STKR with a polynomial transform ``s(l) = sum_p pi_p l^p`` (Eq. 7): Algorithm 1 (Richardson or a Krylov
solver on the ``n x n`` system) and Algorithm 3 (the direct solve), every ``beta`` at once: the polynomial
family of :func:`graphstk.methods.engine.solve`."""
from __future__ import annotations

from typing import Sequence

import torch
from torch import Tensor

from .._spaces import LOCAL
from ..spectral.transforms import Polynomial, horner
from .linsolve import AUTO_FIX, iterate
from .problem import EngineResult, Problem, grid_pairs, per_column, sym_solve_path
from .routes import DIRECT_MAX_ENTRIES, DIRECT_MAX_LABELED, auto_is_direct, cg_work, describe_work, gmres_work, \
    krylov_iterations
from .steps import richardson_step

__all__ = ["stkr_polynomial", "gram_apply"]


def gram_apply(prob: Problem, coeffs: Sequence[float], alpha: Tensor) -> Tensor:
    """``E^T S sum_p pi_p S^(p-1) E alpha = [s(S)]_{nn} alpha`` (lines 3-5 of Algorithm 1) with
    ``q - 2`` full products of ``S`` instead of ``q``: the first product acts on ``E alpha``, which
    is zero off the labeled rows, so it is ``(S E) alpha`` with the ``N x n`` labeled columns; of
    the last one only the labeled rows are needed, ``(E^T S) h``. Same sums in the same order as
    the full products (the skipped terms are exact zeros)."""
    q = len(coeffs)
    a = prob.scatter(alpha)
    if q == 1:
        return prob.S_rows() @ (coeffs[0] * a)
    h = prob.S_cols() @ (coeffs[-1] * alpha) + coeffs[-2] * a
    return prob.S_rows() @ horner(coeffs[:-2], prob.S, a, h0=h)


def stkr_polynomial(prob: Problem, transforms: Sequence[Polynomial], betas: Sequence[float], *, solver: str = "auto",
                    max_iter: int = 1000, tol: float = 1e-6, budgets: Sequence[int] = (),
                    step_size: str | float = "auto", callback=None) -> EngineResult:
    """STKR (Eq. 7) with ``s(l) = sum_p pi_p l^p``: one Algorithm 1 / 3 solve per polynomial, every
    ``beta`` at once.

    ``A = N [s(S)]_{nn} + n beta I`` (``G_{Khat_s,n} = (n+m) s(S)_{nn}`` since
    ``G_{Khat^p} = (n+m) S^p`` on visible nodes, Eq. 5). Richardson is Algorithm 1;
    ``direct`` is Algorithm 3 (``A`` formed from ``q`` products with the ``N x n``
    block ``E``, then one ``eigh`` serves every ``beta``). Prediction
    ``f(x) = N rows(x) sum_p pi_p S^(p-1) E alpha`` is the formula after Algorithm 1.
    """
    out = EngineResult()
    for tr in transforms:
        one = _one_polynomial(prob, tr, betas, solver, max_iter, tol, budgets, step_size, callback)
        out.points += one.points
        out.history += one.history
    return out


def _one_polynomial(prob: Problem, transform: Polynomial, betas, solver, max_iter, tol, budgets, step_size,
                    callback) -> EngineResult:
    N, n, C = prob.N, prob.n, prob.C
    coeffs, pairs = transform.coeffs, grid_pairs([transform], betas)
    out = EngineResult()

    def scores(alpha):   # N sum_p pi_p S^(p-1) E alpha, the formula after Algorithm 1
        return N * horner(coeffs, prob.S, prob.scatter(alpha))

    if solver == "direct" or (solver == "auto" and not budgets and auto_is_direct(prob)):
        out.record("direct (Algorithm 3)", "requested" if solver == "direct" else
                   f"auto: n = {n} <= {DIRECT_MAX_LABELED} labels and N n = {N * n} <= {DIRECT_MAX_ENTRIES} entries")
        hp_E = horner(coeffs, prob.S, prob.scatter(torch.eye(n, dtype=prob.Y.dtype, device=prob.Y.device)))
        B = prob.S_rows() @ hp_E  # = S(hp_E)[train]: only the labeled rows of the last product
        alphas = sym_solve_path(B, float(N), [n * bt for bt in betas], prob.Y, "STKR (Algorithm 3)")
        for pair, a in zip(pairs, alphas):
            out.add([pair], None, N * (hp_E @ a), a)
        return out
    b = prob.Y.repeat(1, len(betas))   # alpha is n x K, the same on every process: its solver reduces locally
    beta_col = per_column(betas, C, b)

    def apply(alpha):  # lines 3-5 of Algorithm 1, q - 2 full products (see gram_apply)
        return N * gram_apply(prob, coeffs, alpha) + n * beta_col * alpha

    lam = prob.lambda_max
    gamma = richardson_step("polynomial", step_size, coeffs, beta_col, N, n, prob.lambda_min, lam)
    if budgets:
        solver = "richardson" if solver == "auto" else solver
        res = iterate(solver, apply, b, max(budgets), 0.0, gamma, callback=callback, space=LOCAL, snapshots=budgets)
        out.history.append(res)
        for t in budgets:
            out.add(pairs, t, scores(res.snapshots[t]), res.snapshots[t])
        return out
    reason = "requested"
    if solver == "auto":
        s_lo, s_hi = transform.value_range(prob.lambda_min, lam)
        solver = "cg" if s_lo >= 0 else "gmres"
        its = int(max_iter)
        if s_lo >= 0:   # kappa(A) <= (N s_hi + n beta) / (n beta): the CG bound
            its = min(its, krylov_iterations((N * s_hi + n * min(betas)) / (n * min(betas)), tol))
        cost = describe_work(solver.upper(), len(betas) * C, cg_work(its) if s_lo >= 0 else gmres_work(its))
        reason = (f"auto: too large for the direct solve (n = {n}, N n = {N * n}); "
                  + ("s >= 0 on [-lambda_1, lambda_1], so the system is SPD" if s_lo >= 0 else
                     "s < 0 somewhere on [-lambda_1, lambda_1], so the system is indefinite") + f"; {cost}")
    res = iterate(solver, apply, b, max_iter, tol, gamma, callback=callback,
                  fix=AUTO_FIX if reason.startswith("auto") else None, space=LOCAL)
    res.reason = reason
    out.history.append(res)
    out.add(pairs, None, scores(res.x), res.x)
    return out
