"""Label propagation (Zhou et al., 2003; STKR Eq. 22), ``(I - eta S) Yhat = [Y; 0]``, for every ``eta`` of
a grid at once: the Label-Prop family of :func:`graphstk.methods.engine.solve`."""
from __future__ import annotations

from typing import Sequence

import torch

from ..spectral.solvers import SolveResult, solve_shifted_laplacians
from ..spectral.transforms import LabelPropagationFilter
from .linsolve import AUTO_FIX, iterate, spd_solve
from .problem import EngineResult, Problem, grid_pairs, per_column
from .routes import cg_iterations, cg_work, describe_work

__all__ = ["label_propagation"]


def label_propagation(prob: Problem, filters: Sequence[LabelPropagationFilter], betas: Sequence[float] = (), *,
                      solver: str = "auto", max_iter: int = 1000, tol: float = 1e-6, budgets: Sequence[int] = (),
                      callback=None, adjoint: bool = False) -> EngineResult:
    """Solve Eq. 22 for every filter's ``eta`` at once; ``budgets`` = fixed iteration counts ``T``.

    Richardson with ``gamma = 1`` is Zhou et al.'s iteration ``Yhat <- eta S Yhat + Ytilde``. Every
    solver but ``"gmres"`` needs ``0 < eta < 1/lambda_1`` (the series converges, ``I - eta S`` is SPD);
    GMRES solves ``I - eta S`` whenever it is non-singular (e.g. a propagation matrix with its weights
    as given, :class:`graphstk.nn.LabelPropagation`). The right-hand side is ``prob.b()``; ``adjoint``
    solves ``(I - eta S^T) x = b``. ``betas`` is ignored (Label-Prop has no ridge). Several ``eta`` solved
    to a tolerance by CG share one Krylov sequence (multi-shift CG).
    """
    if adjoint:
        prob = prob.with_targets(prob.Y, prob.rhs, transpose=True)
    etas = [f.eta for f in filters]
    for eta in etas:   # GMRES needs only I - eta S non-singular: Zhou's series and CG's SPD system need the bound
        if solver != "gmres" and not 0 < eta < 1.0 / max(prob.lambda_max, 1e-300):
            raise ValueError(f"label propagation needs 0 < eta < 1/lambda_1 = {1 / prob.lambda_max:g}, "
                             f"got eta={eta}")
    C, G, pairs = prob.C, len(etas), grid_pairs(filters, ())
    b = prob.b().repeat(1, G)
    eta_col = per_column(etas, C, b)

    def apply(x):
        return torch.addcmul(x, eta_col, prob.S(x), value=-1.0)

    train_rows, b_train = prob.train_rows, b[prob.train_rows]   # the labeled rows of this process's blocks

    def step(x):  # Zhou et al.'s update x <- eta S x + [Y; 0] (Eq. 22) in one pass
        if prob.rhs is not None:   # a right-hand side on every row
            return prob.S(x).mul_(eta_col).add_(b)
        return prob.S(x).mul_(eta_col).index_add_(0, train_rows, b_train)

    out = EngineResult()
    if budgets:
        solver = "richardson" if solver == "auto" else solver
        res = iterate(solver, apply, b, max(budgets), 0.0, 1.0, callback=callback, step=step, space=prob.space,
                      snapshots=budgets)
        if solver == "richardson":
            res.reason = f"fixed budget T={max(budgets)}: Zhou et al.'s iteration"
        out.history.append(res)
        for t in budgets:
            out.add(pairs, t, res.snapshots[t], res.snapshots[t])
        return out
    reason = "requested"
    if solver == "auto":
        its = min(int(max_iter), cg_iterations(max(etas), max(tol, 1e-300)))
        cost = describe_work("CG" if G == 1 else "multi-shift CG", C, cg_work(its, G))
        solver, reason = "cg", f"auto: I - eta S is symmetric positive definite for 0 < eta < 1/lambda_1; {cost}"
    if solver == "direct":
        x = torch.cat([spd_solve(prob, b[:, g * C:(g + 1) * C], eta, "lu")[0] for g, eta in enumerate(etas)], dim=1)
        out.record("direct (sparse LU of I - eta S)", "requested")
    elif solver == "cg" and G > 1:  # CG for every eta from one Krylov sequence on C columns, not G * C
        xs, ms = solve_shifted_laplacians(prob.S, prob.b(), etas, max_iter=max_iter, tol=tol,
                                          callback=callback, space=prob.space)
        x = torch.cat(xs, dim=1)
        out.history.append(SolveResult(x, ms.residuals, ms.n_iter, ms.converged, solver="multishift-cg",
                                       reason=reason + f"; all {G} etas from one Krylov sequence (multi-shift CG)",
                                       stopped=ms.stopped))
    else:
        res = iterate(solver, apply, b, max_iter, tol, 1.0, callback=callback, step=step,
                      fix=AUTO_FIX if reason.startswith("auto") else None, space=prob.space)
        res.reason = reason
        out.history.append(res)
        x = res.x
    out.add(pairs, None, x, x)
    return out
