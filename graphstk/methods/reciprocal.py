"""STKR for ``1/s(l) = sum_p xi_p l^(p-r)`` (Algorithm 2, Eq. 20), every ``(transform, beta)`` pair at once:
the reciprocal family of :func:`graphstk.methods.engine.solve` (routes: :func:`~graphstk.methods.routes.reciprocal_route`).
"""
from __future__ import annotations

from typing import Sequence

import torch
from torch import Tensor

from ..exceptions import ConvergenceError
from ..spectral.solvers import cg, metric_cg, safe_norm, solve_shifted_laplacians
from ..spectral.transforms import ReciprocalPolynomial, horner
from .linsolve import AUTO_FIX, iterate, spd_solve
from .problem import EngineResult, Problem, grid_pairs, per_column, sym_solve_path
from .routes import (DENSE_LIMIT, DIRECT_MAX_ENTRIES, DIRECT_MAX_LABELED, MULTISHIFT_TOL, SINGLE_SHIFT_MIN_NNZ,
                     auto_is_direct, cg_iterations, cg_work, describe_work, direct_route, reciprocal_route,
                     use_multishift)
from .steps import DIVERGED_RESIDUAL, guard_safe_budget, reciprocal_step

__all__ = ["stkr_reciprocal", "direct_other_rhs"]


def stkr_reciprocal(prob: Problem, transforms: Sequence[ReciprocalPolynomial], betas: Sequence[float], *,
                    solver: str = "auto", max_iter: int = 1000, tol: float = 1e-6, budgets: Sequence[int] = (),
                    step_size: str | float = "auto", callback=None, unstable: str = "raise",
                    adjoint: bool = False) -> EngineResult:
    """STKR (Eq. 7) for ``1/s(l) = sum_p xi_p l^(p-r)``, every (transform, beta) pair at once (one batch per ``r``).

    Solves ``M theta = prob.b()`` with ``M = N I_n~ S^r + n beta Q``, ``Q = sum_p xi_p S^p`` (Eq. 20), by the
    route of :func:`~graphstk.methods.routes.reciprocal_route`; Richardson's step is
    :func:`~graphstk.methods.steps.reciprocal_step`'s (``step_size``: ``"auto"``, ``"paper"`` or a number).
    With ``step_size="auto"`` a pair proved to have no stable step raises :class:`ConvergenceError` naming a
    route that converges, unless ``unstable="run"`` or the fixed budget stays below the divergence guard
    (:func:`~graphstk.methods.steps.guard_safe_budget`); the proof is then kept in ``history``. ``adjoint=True``
    solves ``M^T lambda = rhs`` (an implicit gradient's adjoint). Predictions: ``f(x) = v_K(x)^T S^(r-1) theta``
    (after Algorithm 2). The routes and proofs: docs/methods.md and docs/kernels.md.
    """
    for tr in transforms:
        tr.validate(prob.lambda_max)
    if unstable not in ("raise", "run"):
        raise ValueError(f"unstable must be 'raise' or 'run', got {unstable!r}")
    if solver == "cg" and budgets:
        raise ValueError("a fixed iteration budget T for Algorithm 2 needs solver 'richardson': CG needs a "
                         "symmetric positive definite system and Algorithm 2's M (Eq. 20) is not symmetric")
    if budgets and solver not in ("auto", "richardson"):
        raise ValueError(f"a fixed iteration budget T for Algorithm 2 needs solver 'richardson', got {solver!r}")
    out = EngineResult()
    for r in dict.fromkeys(tr.r for tr in transforms):
        batch = [tr for tr in transforms if tr.r == r]
        route, why = reciprocal_route(prob, batch, betas, solver, budgets, adjoint, max_iter, tol)
        fix = AUTO_FIX if solver == "auto" else None
        if route == "symmetric":
            one = _symmetric(prob, batch, betas, max_iter, tol, callback, why, fix)
        elif route == "direct":
            one = _direct(prob, batch, betas, solver, why, adjoint, callback)
        else:
            one = _iterative(prob, batch, betas, route, why, max_iter, tol, budgets, step_size, callback, unstable,
                             adjoint)
        out.points += one.points
        out.history += one.history
    return out


def _direct_routes(prob: Problem, transforms, solver: str, route_why: str) -> list[tuple[str, str]]:
    """How ``Q^{-1} E`` is applied for each transform of the direct route: ``(route, reason)``."""
    N, n = prob.N, prob.n
    if solver == "cg" and not auto_is_direct(prob):
        raise ValueError(f"solver='cg' with a reciprocal transform on a kernel that is not positive semidefinite runs "
                         f"CG on Q = sum_p xi_p S^p for each of the n = {n} labeled columns (Algorithm 2's M itself is "
                         f"not symmetric), which needs N n = {N * n} > {DIRECT_MAX_ENTRIES} entries here; use the "
                         "positive semidefinite lazy kernel (normalization='lazy'), on which CG solves Algorithm 2's "
                         "symmetric form")
    routes = []
    for tr in transforms:
        if solver == "cg":
            route, why = "cg", "requested (CG on the SPD Q; Algorithm 2's M is not symmetric)"
        elif solver == "direct":
            route, why = ("lu" if len(tr.xi) <= 2 else "dense"), "requested"
        elif len(tr.xi) <= 2:
            route, why = direct_route(prob, -tr.xi[1] / tr.xi[0] if len(tr.xi) == 2 else 0.0, n)
            why = f"{route_why}; Q^-1 E by {route}: {why}"
            if route == "cg" and len(tr.xi) == 2:    # the most work of its CG, counted
                its = cg_iterations(-tr.xi[1] / tr.xi[0])
                why += "; " + describe_work("CG of (I - eta S)^-1 E", n, cg_work(its))
        else:
            route, why = "dense", f"auto: N = {N} <= {DENSE_LIMIT}, dense solve with Q"
        routes.append((route, why))
    return routes


def _direct(prob: Problem, transforms, betas, solver: str, route_why: str, adjoint: bool, callback) -> EngineResult:
    """Algorithm 2's direct route: ``X = Q^{-1} E``, ``A = N (S^r X)_{nn} + n beta I``, one ``eigh`` for every ``beta``."""
    N, n = prob.N, prob.n
    out = EngineResult()
    E = prob.scatter(torch.eye(n, dtype=prob.Y.dtype, device=prob.Y.device))
    routes = _direct_routes(prob, transforms, solver, route_why)
    Xs = None
    if solver == "auto" and not adjoint:
        Xs, cost = _reciprocal_multishift(prob, transforms, E, callback)
        if Xs is not None and len(transforms) > 1:
            out.record("direct (n x n system; (I - eta S)^-1 E for every eta by one multi-shift CG)",
                       f"auto: {len(transforms)} inverse-Laplacian shifts of one operator "
                       f"(N = {N}, nnz(S) = {prob.nnz}): one Krylov sequence serves them all; {cost}")
        elif Xs is not None:
            out.record("direct (n x n system; (I - eta S)^-1 E by CG)",
                       f"auto: nnz(S) = {prob.nnz} >= {SINGLE_SHIFT_MIN_NNZ}: one CG to 1e-12 beats "
                       f"a sparse LU of I - eta S; {cost}")
    for t, tr in enumerate(transforms):
        pairs, r = grid_pairs([tr], betas), tr.r
        if Xs is not None:
            X = Xs[t]
        else:
            X, it = _reciprocal_direct(prob, tr, E, routes[t][0])
            out.record(f"direct (n x n system; Q^-1 E by {routes[t][0]})", routes[t][1], n_iter=it)
        Z = _powers(prob, X, r - 1)
        B = prob.S_rows() @ Z  # = S(Z)[train]: only the labeled rows of the last product
        if adjoint or prob.rhs is not None:   # M^T lambda = B, or M theta = B on every point (direct_other_rhs)
            for pair, x in zip(pairs, direct_other_rhs(prob, tr, X, Z, B, betas, routes[t][0], adjoint)):
                out.add([pair], None, N * _powers(prob, x, r - 1), x)
            continue
        for pair, a in zip(pairs, sym_solve_path(B, float(N), [n * bt for bt in betas], prob.Y,
                                                 "STKR (Algorithm 2, direct)")):
            out.add([pair], None, N * (Z @ a), X @ a)   # theta = Q^{-1} E alpha solves M theta = [Y; 0]
    return out


def _iterative(prob: Problem, transforms, betas, route: str, route_why: str, max_iter, tol, budgets, step_size,
               callback, unstable: str, adjoint: bool) -> EngineResult:
    """Algorithm 2 by Richardson (a fixed budget, or to ``tol``) or GMRES on Eq. 20's ``M``."""
    pairs = grid_pairs(transforms, betas)
    gamma, certs = reciprocal_step(prob, transforms, betas, step_size, certify=route in ("richardson", "budget"))
    proofs = [c for c in certs if c is not None]
    T_safe = guard_safe_budget(prob, transforms, betas, gamma) if proofs and budgets else 0
    if proofs and step_size == "auto" and unstable == "raise" and (not budgets or max(budgets) > T_safe):
        raise ConvergenceError(
            f"STKR Algorithm 2 (Richardson, step_size='auto'): no stable step exists, checked before iterating: "
            f"{proofs[0]}" + (f" (and {len(proofs) - 1} more grid points)" if len(proofs) > 1 else "") +
            f". {_converging_route(prob)}"
            + (f"; or a fixed budget num_iter <= {T_safe}, whose residual provably stays below "
               f"{DIVERGED_RESIDUAL:g} (the paper's truncated iteration, a filter that solves no equation)"
               if budgets and T_safe > 0 else "") + ".")
    apply, step = _system(prob, pairs, gamma, adjoint)
    b = prob.b().repeat(1, len(pairs))
    r = transforms[0].r
    out = EngineResult()
    if budgets:
        res = iterate("richardson", apply, b, max(budgets), 0.0, gamma, callback=callback, step=step,
                      space=prob.space, snapshots=budgets)
        res.reason = f"fixed budget T={max(budgets)}: Algorithm 2's truncated iteration" + "".join(
            f"; {c}" for c in proofs)
        out.history.append(res)
        for t in budgets:
            out.add(pairs, t, prob.N * _powers(prob, res.snapshots[t], r - 1), res.snapshots[t])
        return out
    res = iterate(route, apply, b, max_iter, tol, gamma, callback=callback, step=step,
                  fix=AUTO_FIX if route_why.startswith("auto") else None, space=prob.space)
    res.reason = route_why
    out.history.append(res)
    out.add(pairs, None, prob.N * _powers(prob, res.x, r - 1), res.x)
    return out


def _system(prob: Problem, pairs, gamma, adjoint: bool):
    """``(apply, step)``: Eq. 20's ``M`` (``M^T`` for ``adjoint``) on the ``[N, len(pairs) C]`` block, and
    Richardson's fused update where one exists (``None``: the solver's own update)."""
    N, n = prob.N, prob.n
    r = pairs[0][0].r
    xi, beta_col, train_mask = _columns(prob, pairs)
    q = xi.shape[0]
    if adjoint:   # M^T theta = N S^r (I_n~ theta) + n beta Q theta (S symmetric)
        def apply(theta):
            return N * _powers(prob, train_mask * theta, r) + n * beta_col * horner(xi, prob.S, theta)
        return apply, None
    if r == 1 and q <= 2:  # e.g. the inverse Laplacian: M theta = (N I~ + n beta xi_1) S theta + n beta xi_0 theta
        xi_1 = xi[1] if q == 2 else 0.0
        coef_s = N * train_mask + n * beta_col * xi_1   # [N, K], built once
        coef_0 = n * beta_col * xi[0]

        def apply(theta):  # M theta (Eq. 20): one sparse product and one fused multiply-add
            return torch.addcmul(coef_0 * theta, coef_s, prob.S(theta))

        if prob.rhs is not None:   # the fused step assumes b lives on the labeled rows
            return apply, None
        # Richardson's update theta + gamma ([Y; 0] - M theta) (Algorithm 2, lines 3-5) fused into one
        # product and two passes: (1 - gamma coef_0) theta - gamma (n beta xi_1) S theta on every row,
        # plus, on the labeled rows only, gamma ([Y; 0] - N S theta).
        g = torch.as_tensor(gamma, dtype=prob.Y.dtype, device=prob.Y.device).expand(beta_col.shape)
        keep, neg_c, gN = 1.0 - g * coef_0, -g * n * beta_col * xi_1, g * N
        train_rows = prob.train_rows
        gb_train = (g * prob.b().repeat(1, len(pairs)))[train_rows]

        def step(theta):
            s_theta = prob.S(theta)
            lab = torch.addcmul(gb_train, gN, s_theta[train_rows], value=-1.0)
            return s_theta.mul_(neg_c).addcmul_(theta, keep).index_add_(0, train_rows, lab)
        return apply, step

    def apply(theta):  # lines 3-5 of Algorithm 2, sharing the powers S^p theta
        powers = [theta]
        for _ in range(max(r, q - 1)):
            powers.append(prob.S(powers[-1]))
        return N * train_mask * powers[r] + n * beta_col * sum(xi[p] * powers[p] for p in range(q))
    return apply, None


def _columns(prob: Problem, pairs) -> tuple[Tensor, Tensor, Tensor]:
    """``(xi [q, K], beta per column [K], the labeled rows as an [N, 1] mask)`` of a ``[N, len(pairs) C]`` block."""
    q = max(len(tr.xi) for tr, _ in pairs)
    xi = torch.tensor([[tr.xi[p] if p < len(tr.xi) else 0.0 for tr, _ in pairs] for p in range(q)],
                      dtype=prob.Y.dtype, device=prob.Y.device).repeat_interleave(prob.C, dim=1)
    mask = prob.scatter(torch.ones(prob.n, 1, dtype=prob.Y.dtype, device=prob.Y.device))
    return xi, per_column([bt for _, bt in pairs], prob.C, prob.Y), mask


def _converging_route(prob: Problem) -> str:
    """The advice of a refused Algorithm 2 solve on a non-PSD kernel: the direct route where it fits, the lazy kernel."""
    lazy = ("the positive semidefinite lazy graph kernel (normalization='lazy'), on which the automatic step is "
            "provably stable and CG solves Algorithm 2's symmetric form")
    if auto_is_direct(prob):
        return (f"Solve Eq. 20 exactly with solver='direct' (the n x n system: n = {prob.n} <= {DIRECT_MAX_LABELED} "
                f"labels and N n = {prob.N * prob.n} <= {DIRECT_MAX_ENTRIES} entries), or use {lazy}")
    return f"Use {lazy}"


def _symmetric(prob: Problem, transforms: Sequence[ReciprocalPolynomial], betas: Sequence[float],
                          max_iter: int, tol: float, callback, reason: str, fix: str | None) -> EngineResult:
    """Algorithm 2 (Eq. 20) on a positive semidefinite ``S`` with ``r = 1``, by CG on its symmetric form.

    Derivation (``S M`` symmetric, ``theta`` recovered from ``w = S theta``): docs/kernels.md, "Algorithm 2's
    symmetric form".
    """
    N, n = prob.N, prob.n
    pairs = grid_pairs(transforms, betas)
    xi, beta_col, mask = _columns(prob, pairs)   # mask: P as a column
    q, nb = xi.shape[0], n * beta_col
    R = prob.b().repeat(1, len(pairs))

    def apply(p, sp):   # (M p, S M p) from p and S p: q - 1 products of S
        us = [sp]
        for _ in range(q - 1):
            us.append(prob.S(us[-1]))                  # us[k] = S^{k+1} p
        qp, sqp = xi[0] * p, xi[0] * sp
        for k in range(1, q):
            qp = qp + xi[k] * us[k - 1]
            sqp = sqp + xi[k] * us[k]
        mp = N * mask * sp + nb * qp
        smp = N * (prob.S_cols() @ prob.labeled(sp)) + nb * sqp
        return mp, smp

    SR = (prob.S_cols() @ prob.Y).repeat(1, len(pairs)) if prob.rhs is None else prob.S(R)
    res = metric_cg(apply, R, SR, max_iter, tol, callback=callback, fix=fix, space=prob.space)
    w = res.image
    theta = (R - N * mask * w) / nb
    sw = w
    for k in range(1, q):                              # minus sum_{p >= 1} xi_p S^{p-1} w
        theta = theta - xi[k] * sw
        if k + 1 < q:
            sw = prob.S(sw)
    theta = theta / xi[0]
    check, _ = apply(theta, prob.S(theta))             # Eq. 20's residual of the recovered theta (one product)
    rel = float((prob.space.col_norm(R - check) / safe_norm(R, prob.space)).max()) if R.numel() else 0.0
    res.x, res.image = theta, None
    res.solver = "cg (Algorithm 2, symmetric form)"
    res.reason = f"{reason}; Eq. 20's relative residual of the recovered theta {rel:.2e}"
    out = EngineResult(history=[res])
    out.add(pairs, None, N * theta, theta)
    return out


def _reciprocal_multishift(prob: Problem, transforms: Sequence[ReciprocalPolynomial], rhs: Tensor, callback=None
                           ) -> tuple[list[Tensor] | None, str]:
    """``(Q_t^{-1} rhs per transform, its counted work)`` by one multi-shift CG for inverse-Laplacian ``Q`` where
    :func:`use_multishift` says so; else ``(None, "")``."""
    lap = [len(tr.xi) == 2 and tr.xi[1] < 0 for tr in transforms]
    if not all(lap) or not use_multishift(prob, len(transforms)):
        return None, ""
    etas = [-tr.xi[1] / tr.xi[0] for tr in transforms]
    work = cg_work(cg_iterations(max(etas), MULTISHIFT_TOL), len(etas))
    cost = describe_work("multi-shift CG of (I - eta S)^-1 E", rhs.shape[1], work)
    xs, _ = solve_shifted_laplacians(prob.S, rhs, etas, max_iter=20 * prob.N, tol=MULTISHIFT_TOL, callback=callback,
                                     space=prob.space)
    return [x / tr.xi[0] for x, tr in zip(xs, transforms)], cost


def _reciprocal_direct(prob: Problem, tr: ReciprocalPolynomial, rhs: Tensor, route: str = "lu"
                       ) -> tuple[Tensor, int]:
    """``(Q^{-1} rhs, CG iterations)``, ``Q = sum_p xi_p S^p``, by ``route``: ``"lu"``, ``"dense"`` or ``"cg"``."""
    if len(tr.xi) == 2 and route in ("lu", "cg"):  # Q = xi_0 I + xi_1 S: the inverse-Laplacian case
        return spd_solve(prob, rhs / tr.xi[0], -tr.xi[1] / tr.xi[0], route)
    if len(tr.xi) == 1:
        return rhs / tr.xi[0], 0
    N = prob.N
    if route == "cg":
        def apply(v):
            return tr.apply_rho(prob.S, v)
        res = cg(apply, rhs, max_iter=100 * N, tol=1e-12, space=prob.space)
        return res.x, res.n_iter
    if N > DENSE_LIMIT:
        raise ValueError(f"solver='direct' for a reciprocal polynomial of degree > 1 needs N <= {DENSE_LIMIT}; "
                         "use solver='gmres' or 'auto'")
    S = prob.op.to_dense()
    Q = torch.zeros_like(S)
    P = torch.eye(N, dtype=S.dtype, device=S.device)
    for c in tr.xi:
        Q = Q + c * P
        P = P @ S
    return torch.linalg.solve(Q, rhs), 0


def _powers(prob: Problem, x: Tensor, k: int) -> Tensor:
    """``S^k x``."""
    for _ in range(k):
        x = prob.S(x)
    return x


def direct_other_rhs(prob: Problem, tr: ReciprocalPolynomial, X: Tensor, Z: Tensor, B: Tensor,
                     betas: Sequence[float], route: str, adjoint: bool) -> list[Tensor]:
    """``theta`` (``adjoint``: ``lambda``) ``[N, C]`` per ridge ``beta`` for the right-hand side ``prob.b()``:
    Algorithm 2's direct route (Eq. 20) for right-hand sides other than ``[Y; 0]``.

    ``X = Q^{-1} E``, ``Z = S^{r-1} X`` and ``B = (S^r X)_{nn}`` come from :func:`stkr_reciprocal`; ``route``
    applies ``Q^{-1}`` (``"lu"``, ``"dense"``, ``"cg"``) once more on ``C`` columns. The formulas:
    docs/kernels.md, "Other right-hand sides of the direct route".
    """
    N, n, r, R = prob.N, prob.n, tr.r, prob.b()
    if adjoint:
        W, _ = _reciprocal_direct(prob, tr, R, route)
        SZ = prob.S(Z)
        mus = sym_solve_path(B, float(N), [n * bt for bt in betas], prob.labeled(W),
                              "STKR (Algorithm 2, direct adjoint)")
        return [(W - N * (SZ @ mu)) / (n * bt) for bt, mu in zip(betas, mus)]
    free = R.clone()
    free[prob.train_rows] = 0
    R_n = prob.labeled(R)
    if not bool(prob.space.reduce_sum((free != 0).sum().reshape(1).double()) > 0):   # the same on every process
        return [X @ a for a in sym_solve_path(B, float(N), [n * bt for bt in betas], R_n,
                                               "STKR (Algorithm 2, direct)")]
    free = _reciprocal_direct(prob, tr, free, route)[0]
    lab = prob.labeled(_powers(prob, free, r))
    out = []
    for bt in betas:
        u = sym_solve_path(B, float(N), [n * bt], R_n - N * lab / (n * bt), "STKR (Algorithm 2, direct)")[0]
        out.append(X @ u + free / (n * bt))
    return out
