"""Batched propagation engines: Label-Prop (Eq. 22) and STKR-Prop (Algorithms 1-3,
Eqs. 7-9 of Zhai et al., ICLR 2024) on any kernel operator.

The engines see a :class:`~graphstk.methods.problem.Problem` (built by :func:`make_problem`
from any square :class:`~graphstk.operators.KernelOperator`): products with ``S``, its
labeled rows and columns, and its spectral bound. Routes that need the sparsity pattern (a
sparse LU, the connected components) are taken only when ``S`` is a
:class:`~graphstk.operators.SparseOperator`; any other operator takes dense solves (small
``N``) or CG, whose cost is a number of products.

Notation (local, visible numbering): ``S = G_K / (n+m)`` (Eq. 5; Eq. 23 for a graph), ``N = n + m``
visible nodes, ``n`` labeled ones at positions ``train``, ``E`` the ``N x n``
selection of the labeled columns, ``Y`` the ``n x C`` one-hot labels.

Every engine solves *several grid points at once*: the right-hand sides of all
classes and of all grid points that share the operator ``S`` are stacked into one
``[N, G*C]`` block, so one sparse product per iteration serves them all. Grid point
``g`` owns columns ``g*C ... g*C + C-1``.

Each engine returns, per grid point (and per iteration budget ``T`` when asked),
a block ``h`` ``[N, C]`` such that the scores of any node ``x`` are
``rows(x) @ h`` with ``rows(x) = K(x, visible) / (n+m)`` (:meth:`Problem.rows`):
for visible nodes the row of ``S``, for hidden nodes their edges into the visible
graph. This is the out-of-sample formula after Algorithm 1, after Algorithm 2, and
Eq. 8 for top-d. Label-Prop (transductive by definition) returns ``Yhat`` itself.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
import torch
from torch import Tensor

from ..exceptions import ClassesWithoutLabelsWarning  # noqa: F401  (re-exported)
from ..spectral.multishift import solve_shifted_laplacians
from ..spectral.solvers import SolveResult, cg, gmres, richardson, time_budget
from ..spectral.transforms import Polynomial, ReciprocalPolynomial, horner
from .reciprocal_rhs import _powers, direct_other_rhs
from .problem import (SOLVERS, EngineResult, Problem, _per_col, _record, _split, _sym_solve_path, _tile,  # noqa: F401
                      check_solver_options, make_problem, warn_classes_without_labels)
from .routes import (DENSE_LIMIT, DIRECT_MAX_ENTRIES, DIRECT_MAX_LABELED, LU_MAX_ENVELOPE, LU_MAX_NODES,  # noqa: F401
                     MULTISHIFT_MIN_NNZ, MULTISHIFT_MIN_SHIFTS, MULTISHIFT_TOL, SINGLE_SHIFT_MIN_NNZ,
                     auto_is_direct, cg_iterations, cg_work, describe_work, direct_route, gmres_work, lu_envelope,
                     use_multishift)


# ---------------------------------------------------------------------------
# Label propagation, Zhou et al. (2003); STKR Eq. 22: (I - eta S) Yhat = [Y; 0]
# ---------------------------------------------------------------------------
def label_propagation(prob: Problem, etas: Sequence[float], solver: str = "auto", max_iter: int = 1000,
                      tol: float = 1e-6, budgets: Sequence[int] = (), callback=None,
                      max_seconds: float | None = None) -> EngineResult:
    """Solve Eq. 22 for every ``eta`` at once; ``budgets`` = fixed iteration counts ``T``.

    Richardson with ``gamma = 1`` is Zhou et al.'s iteration ``Yhat <- eta S Yhat + Ytilde``. Every
    solver but ``"gmres"`` needs ``0 < eta < 1/lambda_1`` (the series converges, ``I - eta S`` is SPD);
    GMRES solves ``I - eta S`` whenever it is non-singular (e.g. a propagation matrix with its weights
    as given, :class:`graphstk.nn.LabelPropagation`). The right-hand side is ``prob.b()``.
    ``max_seconds``: a time budget for the iterative solve (:func:`~graphstk.spectral.solvers.time_budget`).
    """
    callback = time_budget(callback, max_seconds)
    for eta in etas:   # GMRES needs only I - eta S non-singular: Zhou's series and CG's SPD system need the bound
        if solver != "gmres" and not 0 < eta < 1.0 / max(prob.lambda_max, 1e-300):
            raise ValueError(f"label propagation needs 0 < eta < 1/lambda_1 = {1 / prob.lambda_max:g}, "
                             f"got eta={eta}")
    C, G = prob.C, len(etas)
    b = _tile(prob.b(), G)
    eta_col = _per_col(etas, C, b)

    def apply(x):
        return torch.addcmul(x, eta_col, prob.S(x), value=-1.0)

    b_train = b[prob.train]

    def step(x):  # Zhou et al.'s update x <- eta S x + [Y; 0] (Eq. 22) in one pass (b lives on the labeled rows)
        return prob.S(x).mul_(eta_col).index_add_(0, prob.train, b_train)

    if prob.rhs is not None:   # a right-hand side on every row
        def step(x):  # noqa: F811
            return prob.S(x).mul_(eta_col).add_(b)

    out = EngineResult({})
    if budgets:
        solver = "richardson" if solver == "auto" else solver
        T = max(budgets)
        if solver == "richardson":
            res = richardson(apply, b, 1.0, T, 0.0, snapshots=budgets, callback=callback, step=step)
            res.reason = f"fixed budget T={T}: Zhou et al.'s iteration"
        elif solver == "cg":
            res = cg(apply, b, T, 0.0, snapshots=budgets, callback=callback)
        else:
            raise ValueError(f"a fixed iteration budget T needs solver 'richardson' or 'cg', got {solver!r}")
        out.history.append(res)
        for t in budgets:
            for g, blk in enumerate(_split(res.snapshots[t], C)):
                out.h[(g, t)] = out.x[(g, t)] = blk
        return out
    reason = "requested"
    if solver == "auto":
        its = min(int(max_iter), cg_iterations(max(etas), max(tol, 1e-300)))
        cost = describe_work("CG" if G == 1 else "multi-shift CG", C, cg_work(its, G))
        solver, reason = "cg", f"auto: I - eta S is symmetric positive definite for 0 < eta < 1/lambda_1; {cost}"
    if solver == "direct":
        xs = []
        for g, eta in enumerate(etas):
            x_g, _ = _spd_solve(prob, b[:, g * C:(g + 1) * C], eta, "lu")
            xs.append(x_g)
        _record(out, "direct (sparse LU of I - eta S)", "requested")
        x = torch.cat(xs, dim=1)
    elif solver == "cg" and G > 1:  # CG for every eta from one Krylov sequence on C columns, not G * C
        xs, ms = solve_shifted_laplacians(prob.S, prob.b(), etas, max_iter=max_iter, tol=tol,
                                          callback=callback)
        x = torch.cat(xs, dim=1)
        out.history.append(SolveResult(x, ms.residuals, ms.n_iter, ms.converged, solver="multishift-cg",
                                       reason=reason + f"; all {G} etas from one Krylov sequence (multi-shift CG)",
                                       stopped=ms.stopped))
    else:
        res = _iterate(solver, apply, b, max_iter, tol, gamma=1.0, callback=callback, step=step)
        res.reason = reason
        out.history.append(res)
        x = res.x
    for g, blk in enumerate(_split(x, C)):
        out.h[(g, None)] = out.x[(g, None)] = blk
    return out


def _iterate(solver: str, apply, b, max_iter, tol, gamma, callback=None, step=None) -> SolveResult:
    if solver == "richardson":
        return richardson(apply, b, gamma, max_iter, tol, callback=callback, step=step)
    if solver == "cg":
        return cg(apply, b, max_iter, tol, callback=callback)
    if solver == "gmres":
        return gmres(apply, b, max_iter, tol, callback=callback)
    raise ValueError(f"unknown solver {solver!r}; choose one of {SOLVERS}")


def _spd_direct(prob: Problem, rhs: Tensor, eta: float) -> Tensor:
    """Solve ``(I - eta S) X = rhs`` directly: dense for small graphs, sparse LU otherwise."""
    return _spd_solve(prob, rhs, eta, "lu")[0]


def _spd_solve(prob: Problem, rhs: Tensor, eta: float, route: str) -> tuple[Tensor, int]:
    """``(I - eta S)^{-1} rhs`` by ``route`` (see :func:`direct_route`); returns ``(X, CG iterations)``.

    ``"lu"``: sparse LU on CPU (dense solve / CG on accelerators); ``"cg"``: CG to a relative
    residual of 1e-12 (the matrix is SPD with ``kappa <= (1 + eta)/(1 - eta)``).
    """
    N = prob.N
    if route == "cg":
        def apply(v):
            return torch.addcmul(v, torch.tensor(eta, dtype=v.dtype, device=v.device), prob.S(v), value=-1.0)
        res = cg(apply, rhs, max_iter=max(4 * cg_iterations(eta), 100), tol=1e-12)
        return res.x, res.n_iter
    if rhs.device.type != "cpu" or prob.sparse is None:  # accelerators, or an operator without a pattern
        if N <= DENSE_LIMIT:
            Q = torch.eye(N, dtype=rhs.dtype, device=rhs.device) - eta * prob.op.to_dense()
            return torch.linalg.solve(Q, rhs), 0
        return _spd_solve(prob, rhs, eta, "cg")
    row, col, val = prob.sparse.coo()
    Ssp = sp.csc_matrix((val.cpu().numpy(), (row.cpu().numpy(), col.cpu().numpy())), shape=(N, N))
    # a symmetric fill-reducing ordering: ~10x less fill than the default COLAMD on citation graphs
    lu = spla.splu((sp.identity(N, format="csc") - eta * Ssp).tocsc(), permc_spec="MMD_AT_PLUS_A",
                   options=dict(SymmetricMode=True))
    return torch.as_tensor(lu.solve(rhs.detach().cpu().numpy()), dtype=rhs.dtype, device=rhs.device), 0


# ---------------------------------------------------------------------------
# STKR with a polynomial transform: Algorithm 1 (Richardson / Krylov) and 3 (direct)
# ---------------------------------------------------------------------------
def _horner(prob: Problem, coeffs: Sequence[float], a: Tensor) -> Tensor:
    """``sum_p pi_p S^(p-1) a`` for ``a = E alpha`` (line 4 of Algorithm 1, q - 1 products)."""
    return horner(coeffs, prob.S, a)


def _gram_apply(prob: Problem, coeffs: Sequence[float], alpha: Tensor) -> Tensor:
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


def stkr_polynomial(prob: Problem, transform: Polynomial, betas: Sequence[float], solver: str = "auto",
                    max_iter: int = 1000, tol: float = 1e-6, budgets: Sequence[int] = (),
                    step_size: str | float = "auto", callback=None, max_seconds: float | None = None) -> EngineResult:
    """STKR (Eq. 7) with ``s(l) = sum_p pi_p l^p`` for every ``beta`` at once.

    ``A = N [s(S)]_{nn} + n beta I`` (``G_{Khat_s,n} = (n+m) s(S)_{nn}`` since
    ``G_{Khat^p} = (n+m) S^p`` on visible nodes, Eq. 5). Richardson is Algorithm 1;
    ``direct`` is Algorithm 3 (``A`` formed from ``q`` products with the ``N x n``
    block ``E``, then one ``eigh`` serves every ``beta``). Prediction
    ``f(x) = N rows(x) sum_p pi_p S^(p-1) E alpha`` is the formula after Algorithm 1.
    """
    N, n, C = prob.N, prob.n, prob.C
    coeffs = transform.coeffs
    callback = time_budget(callback, max_seconds)
    out = EngineResult({})
    if solver == "direct" or (solver == "auto" and not budgets and auto_is_direct(prob)):
        _record(out, "direct (Algorithm 3)", "requested" if solver == "direct" else
                f"auto: n = {n} <= {DIRECT_MAX_LABELED} labels and N n = {N * n} <= {DIRECT_MAX_ENTRIES} entries")
        hp_E = _horner(prob, coeffs, prob.scatter(torch.eye(n, dtype=prob.Y.dtype, device=prob.Y.device)))
        B = prob.S_rows() @ hp_E  # = S(hp_E)[train]: only the labeled rows of the last product
        alphas = _sym_solve_path(B, float(N), [n * bt for bt in betas], prob.Y, "STKR (Algorithm 3)")
        for g, a in enumerate(alphas):
            out.h[(g, None)], out.x[(g, None)] = N * (hp_E @ a), a
        return out
    G = len(betas)
    b = _tile(prob.Y, G)
    beta_col = _per_col(betas, C, b)

    def apply(alpha):  # lines 3-5 of Algorithm 1, q - 2 full products (see _gram_apply)
        return N * _gram_apply(prob, coeffs, alpha) + n * beta_col * alpha

    lam = prob.lambda_max
    s_lo, s_hi = transform.value_range(-lam, lam)
    if step_size == "auto" or step_size == "paper":
        gamma = 1.0 / (N * max(s_hi, abs(s_lo), 1e-300) + n * beta_col)
    else:
        gamma = float(step_size)
    if budgets:
        solver = "richardson" if solver == "auto" else solver
        if solver == "richardson":
            res = richardson(apply, b, gamma, max(budgets), 0.0, snapshots=budgets, callback=callback)
        elif solver == "cg":
            res = cg(apply, b, max(budgets), 0.0, snapshots=budgets, callback=callback)
        else:
            raise ValueError(f"a fixed iteration budget T needs solver 'richardson' or 'cg', got {solver!r}")
        out.history.append(res)
        for t in budgets:
            h = N * _horner(prob, coeffs, prob.scatter(res.snapshots[t]))
            for g, (blk, a) in enumerate(zip(_split(h, C), _split(res.snapshots[t], C))):
                out.h[(g, t)], out.x[(g, t)] = blk, a
        return out
    reason = "requested"
    if solver == "auto":
        solver = "cg" if s_lo >= 0 else "gmres"
        its = int(max_iter)
        if s_lo >= 0:   # kappa(A) <= (N s_hi + n beta) / (n beta): the CG bound
            kappa = (N * s_hi + n * min(betas)) / (n * min(betas))
            its = min(its, int(np.ceil(np.sqrt(kappa) / 2 * np.log(2 / max(tol, 1e-300)))))
        cost = describe_work(solver.upper(), G * C, cg_work(its) if s_lo >= 0 else gmres_work(its))
        reason = (f"auto: too large for the direct solve (n = {n}, N n = {N * n}); "
                  + ("s >= 0 on [-lambda_1, lambda_1], so the system is SPD" if s_lo >= 0 else
                     "s < 0 somewhere on [-lambda_1, lambda_1], so the system is indefinite") + f"; {cost}")
    res = _iterate(solver, apply, b, max_iter, tol, gamma, callback=callback)
    res.reason = reason
    out.history.append(res)
    h = N * _horner(prob, coeffs, prob.scatter(res.x))
    for g, (blk, a) in enumerate(zip(_split(h, C), _split(res.x, C))):
        out.h[(g, None)], out.x[(g, None)] = blk, a
    return out


# ---------------------------------------------------------------------------
# STKR with a simple reciprocal 1/s: Algorithm 2 (Eq. 20) and its direct solve
# ---------------------------------------------------------------------------
def stkr_reciprocal(prob: Problem, transforms: Sequence[ReciprocalPolynomial], betas: Sequence[float],
                    solver: str = "auto", max_iter: int = 1000, tol: float = 1e-6, budgets: Sequence[int] = (),
                    step_size: str | float = "auto", callback=None, max_seconds: float | None = None,
                    adjoint: bool = False) -> EngineResult:
    """STKR (Eq. 7) for ``1/s(l) = sum_p xi_p l^(p-r)``, every (transform, beta) pair at once.

    Iterative solvers work on ``M theta = [y; 0]`` with
    ``M = N I_n~ S^r + n beta Q``, ``Q = sum_p xi_p S^p`` (Eq. 20); ``M`` is not
    symmetric, so the Krylov choice is GMRES. Richardson (Algorithm 2) uses
    ``gamma = 1 / (N lambda^r + n beta rho_max)`` (``step_size="auto"``, a bound on the
    spectrum of ``M`` that keeps it stable on graphs, where ``||G_{K,n}||`` can reach
    ``N lambda`` rather than the ``n lambda`` assumed by Prop. 10) or Prop. 10's
    ``gamma = 1/(n lambda^r)`` (``step_size="paper"``). ``direct`` solves
    ``Q X = E`` (dense, or sparse LU on large graphs), forms the ``n x n`` matrix
    ``A = N (S^r X)_{nn} + n beta I`` and serves every ``beta`` with one ``eigh``.
    Grid point ``g = t * len(betas) + b`` pairs ``transforms[t]`` with ``betas[b]``.
    Prediction: ``f(x) = v_K(x)^T S^(r-1) theta`` (the formula after Algorithm 2).

    The right-hand side is ``prob.b()`` (``[Y; 0]`` unless the problem carries a full ``rhs`` ``B``;
    the direct route then also solves ``Q^{-1} B_U`` for ``B``'s unlabeled rows ``B_U``:
    ``theta = X u + Q^{-1} B_U / (n beta)`` with
    ``(N (S^r X)_{nn} + n beta I) u = B_n - N (S^r Q^{-1} B_U)_n / (n beta)``; :mod:`.reciprocal_rhs`).
    ``adjoint=True`` solves ``M^T lambda = rhs`` instead (``M^T = N S^r I_n~ + n beta Q`` for the
    symmetric ``S``; an implicit gradient's adjoint): the iterative routes with ``M^T``, the direct
    route with ``W = Q^{-1} rhs``, ``(N (S^r X)_{nn} + n beta I) mu = W_n`` and
    ``lambda = (W - N S^r X mu) / (n beta)``.
    """
    lam = prob.lambda_max
    for tr in transforms:
        tr.validate(lam)
    rs = {tr.r for tr in transforms}
    if len(rs) != 1:
        raise ValueError("all transforms of one batch must share r")
    r = rs.pop()
    N, n, C = prob.N, prob.n, prob.C
    callback = time_budget(callback, max_seconds)
    out = EngineResult({})
    if solver == "cg" and budgets:
        raise ValueError("a fixed iteration budget T for Algorithm 2 needs solver 'richardson': CG needs a "
                         "symmetric positive definite system and Algorithm 2's M (Eq. 20) is not symmetric")
    if solver == "cg" and not auto_is_direct(prob):
        raise ValueError(f"solver='cg' with a reciprocal transform runs CG on Q = sum_p xi_p S^p for each of the "
                         f"n = {n} labeled columns (Algorithm 2's M itself is not symmetric), which needs "
                         f"N n = {N * n} > {DIRECT_MAX_ENTRIES} entries here; use solver='gmres' or 'auto'")
    dense_ok = all(len(tr.xi) <= 2 for tr in transforms) or N <= DENSE_LIMIT
    direct = solver in ("direct", "cg") or (solver == "auto" and not budgets and auto_is_direct(prob)
                                           and dense_ok)
    if direct:
        E = prob.scatter(torch.eye(n, dtype=prob.Y.dtype, device=prob.Y.device))
        routes = []
        for tr in transforms:
            if solver == "cg":
                route, why = "cg", "requested (CG on the SPD Q; Algorithm 2's M is not symmetric)"
            elif solver == "direct":
                route, why = ("lu" if len(tr.xi) <= 2 else "dense"), "requested"
            elif len(tr.xi) <= 2:
                route, why = direct_route(prob, -tr.xi[1] / tr.xi[0] if len(tr.xi) == 2 else 0.0, n)
                why = (f"auto: n = {n} <= {DIRECT_MAX_LABELED} labels and N n = {N * n} <= {DIRECT_MAX_ENTRIES}, so "
                       f"the n x n system; Q^-1 E by {route}: {why}")
            else:
                route, why = "dense", f"auto: N = {N} <= {DENSE_LIMIT}, dense solve with Q"
            routes.append((route, why))
        Xs = None
        if solver == "auto" and not adjoint:
            Xs, cost = _reciprocal_multishift(prob, transforms, E, callback)
            if Xs is not None and len(transforms) > 1:
                _record(out, "direct (n x n system; (I - eta S)^-1 E for every eta by one multi-shift CG)",
                        f"auto: {len(transforms)} inverse-Laplacian shifts of one operator "
                        f"(N = {N}, nnz(S) = {prob.nnz}): one Krylov sequence serves them all; {cost}")
            elif Xs is not None:
                _record(out, "direct (n x n system; (I - eta S)^-1 E by CG)",
                        f"auto: nnz(S) = {prob.nnz} >= {SINGLE_SHIFT_MIN_NNZ}: one CG to 1e-12 beats "
                        f"a sparse LU of I - eta S; {cost}")
            for t, tr in enumerate(transforms if Xs is None else ()):   # the most work of every CG, counted
                if routes[t][0] == "cg" and len(tr.xi) == 2:
                    its = cg_iterations(-tr.xi[1] / tr.xi[0])
                    routes[t] = ("cg", routes[t][1] + "; " + describe_work("CG of (I - eta S)^-1 E", n, cg_work(its)))
        for t, tr in enumerate(transforms):
            if Xs is not None:
                X = Xs[t]
            else:
                route, why = routes[t]
                X, it = _reciprocal_direct(prob, tr, E, route)
                _record(out, f"direct (n x n system; Q^-1 E by {route})", why, n_iter=it)
            Z = X
            for _ in range(r - 1):
                Z = prob.S(Z)
            B = prob.S_rows() @ Z  # = S(Z)[train]: only the labeled rows of the last product
            if adjoint or prob.rhs is not None:   # M^T lambda = B, or M theta = B on every point (see the docstring)
                for b_i, x in enumerate(direct_other_rhs(prob, tr, X, Z, B, betas, routes[t][0], adjoint)):
                    out.x[(t * len(betas) + b_i, None)] = x
                    out.h[(t * len(betas) + b_i, None)] = N * _powers(prob, x, r - 1)
                continue
            alphas = _sym_solve_path(B, float(N), [n * bt for bt in betas], prob.Y, "STKR (Algorithm 2, direct)")
            for b_i, a in enumerate(alphas):
                out.h[(t * len(betas) + b_i, None)] = N * (Z @ a)
                out.x[(t * len(betas) + b_i, None)] = X @ a   # theta = Q^{-1} E alpha solves M theta = [Y; 0]
        return out
    q = max(len(tr.xi) for tr in transforms)
    pairs = [(tr, bt) for tr in transforms for bt in betas]
    xi = torch.tensor([[tr.xi[p] if p < len(tr.xi) else 0.0 for tr, _ in pairs] for p in range(q)],
                      dtype=prob.Y.dtype, device=prob.Y.device).repeat_interleave(C, dim=1)  # [q, K]
    beta_col = _per_col([bt for _, bt in pairs], C, prob.Y)
    train_mask = torch.zeros(N, 1, dtype=prob.Y.dtype, device=prob.Y.device)
    train_mask[prob.train] = 1.0
    b = _tile(prob.b(), len(pairs))
    npow = max(r, q - 1)

    rho_max = torch.tensor([max(tr.rho(torch.linspace(-lam, lam, 2049, dtype=torch.float64)).max().item(), 1e-300)
                            for tr, _ in pairs], dtype=prob.Y.dtype, device=prob.Y.device).repeat_interleave(C)
    if step_size == "auto":
        gamma = 1.0 / (N * lam ** r + n * beta_col * rho_max)
    elif step_size == "paper":
        gamma = 1.0 / (n * lam ** r)
    else:
        gamma = float(step_size)

    step = None
    if adjoint:   # M^T theta = N S^r (I_n~ theta) + n beta Q theta (S symmetric)
        def apply(theta):
            return N * _powers(prob, train_mask * theta, r) + n * beta_col * horner(xi, prob.S, theta)
    elif r == 1 and q <= 2:  # e.g. the inverse Laplacian: M theta = (N I~ + n beta xi_1) S theta + n beta xi_0 theta
        xi_1 = xi[1] if q == 2 else 0.0
        coef_s = N * train_mask + n * beta_col * xi_1   # [N, K], built once
        coef_0 = n * beta_col * xi[0]

        def apply(theta):  # M theta (Eq. 20): one sparse product and one fused multiply-add
            return torch.addcmul(coef_0 * theta, coef_s, prob.S(theta))

        # Richardson's update theta + gamma ([Y; 0] - M theta) (Algorithm 2, lines 3-5) fused into one
        # product and two passes: (1 - gamma coef_0) theta - gamma (n beta xi_1) S theta on every row,
        # plus, on the labeled rows only, gamma ([Y; 0] - N S theta).
        g = torch.as_tensor(gamma, dtype=prob.Y.dtype, device=prob.Y.device).expand(beta_col.shape)
        keep = 1.0 - g * coef_0
        neg_c = -g * n * beta_col * xi_1
        gb_train = (g * b)[prob.train]
        gN = g * N

        def step(theta):
            s_theta = prob.S(theta)
            lab = torch.addcmul(gb_train, gN, s_theta[prob.train], value=-1.0)
            return s_theta.mul_(neg_c).addcmul_(theta, keep).index_add_(0, prob.train, lab)
        if prob.rhs is not None:   # the fused step assumes b lives on the labeled rows
            step = None
    else:
        def apply(theta):  # lines 3-5 of Algorithm 2, sharing the powers S^p theta
            powers = [theta]
            for _ in range(npow):
                powers.append(prob.S(powers[-1]))
            qt = sum(xi[p] * powers[p] for p in range(q))
            return N * train_mask * powers[r] + n * beta_col * qt

    def predict_block(theta):
        for _ in range(r - 1):
            theta = prob.S(theta)
        return N * theta

    if budgets:
        solver = "richardson" if solver == "auto" else solver
        if solver != "richardson":
            raise ValueError(f"a fixed iteration budget T for Algorithm 2 needs solver 'richardson', got {solver!r}")
        res = richardson(apply, b, gamma, max(budgets), 0.0, snapshots=budgets, callback=callback, step=step)
        out.history.append(res)
        for t in budgets:
            for g, (blk, th) in enumerate(zip(_split(predict_block(res.snapshots[t]), C), _split(res.snapshots[t], C))):
                out.h[(g, t)], out.x[(g, t)] = blk, th
        return out
    reason = "requested"
    if solver == "auto":
        solver = "gmres"
        cost = describe_work("GMRES", len(pairs) * C, gmres_work(max_iter))
        reason = (f"auto: too large for the direct solve (n = {n}, N n = {N * n}"
                  + (f", or a degree-{q - 1} Q with N = {N} > {DENSE_LIMIT}" if not dense_ok else "")
                  + f"); Algorithm 2's M is not symmetric; {cost}")
    res = _iterate(solver, apply, b, max_iter, tol, gamma, callback=callback, step=step)
    res.reason = reason
    out.history.append(res)
    for g, (blk, th) in enumerate(zip(_split(predict_block(res.x), C), _split(res.x, C))):
        out.h[(g, None)], out.x[(g, None)] = blk, th
    return out




def _reciprocal_multishift(prob: Problem, transforms: Sequence[ReciprocalPolynomial], rhs: Tensor, callback=None
                           ) -> tuple[list[Tensor] | None, str]:
    """``(Q_t^{-1} rhs for every transform, its counted work)`` by one multi-shift CG when all are
    inverse-Laplacian type (``Q = xi_0 (I - eta S)``, ``eta > 0``) and :func:`use_multishift` says so;
    else ``(None, "")``."""
    lap = [len(tr.xi) == 2 and tr.xi[1] < 0 for tr in transforms]
    if not all(lap) or not use_multishift(prob, len(transforms)):
        return None, ""
    etas = [-tr.xi[1] / tr.xi[0] for tr in transforms]
    work = cg_work(cg_iterations(max(etas), MULTISHIFT_TOL), len(etas))
    cost = describe_work("multi-shift CG of (I - eta S)^-1 E", rhs.shape[1], work)
    xs, _ = solve_shifted_laplacians(prob.S, rhs, etas, max_iter=20 * prob.N, tol=MULTISHIFT_TOL, callback=callback)
    return [x / tr.xi[0] for x, tr in zip(xs, transforms)], cost


def _reciprocal_direct(prob: Problem, tr: ReciprocalPolynomial, rhs: Tensor, route: str = "lu"
                       ) -> tuple[Tensor, int]:
    """``(Q^{-1} rhs, CG iterations)`` with ``Q = sum_p xi_p S^p``, by ``route``: ``"lu"`` (inverse
    Laplacian: sparse LU), ``"dense"`` (``N <= DENSE_LIMIT``) or ``"cg"`` (``Q`` must be SPD)."""
    if len(tr.xi) == 2 and route in ("lu", "cg"):  # Q = xi_0 I + xi_1 S: the inverse-Laplacian case
        return _spd_solve(prob, rhs / tr.xi[0], -tr.xi[1] / tr.xi[0], route)
    if len(tr.xi) == 1:
        return rhs / tr.xi[0], 0
    N = prob.N
    if route == "cg":
        def apply(v):
            return tr.apply_rho(prob.S, v)
        res = cg(apply, rhs, max_iter=100 * N, tol=1e-12)
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


from .topd import labeled_components, stkr_topd  # noqa: E402,F401  (Eqs. 8-9, re-exported)
