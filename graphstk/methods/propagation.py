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

from ..exceptions import ClassesWithoutLabelsWarning, ConvergenceError  # noqa: F401  (re-exported)
from .._spaces import LOCAL
from ..operators.base import SparseOperator
from ..spectral.multishift import solve_shifted_laplacians
from ..spectral.solvers import SolveResult, cg, gmres, metric_cg, richardson, time_budget
from ..spectral.transforms import Polynomial, ReciprocalPolynomial, horner
from .problem import (SOLVERS, EngineResult, Problem, _per_col, _record, _split, _sym_solve_path, _tile,  # noqa: F401
                      check_solver_options, make_problem, warn_classes_without_labels)
from .topd import labeled_components, stkr_topd  # noqa: F401  (Eqs. 8-9, re-exported)
from .routes import (DENSE_LIMIT, DIRECT_MAX_ENTRIES, DIRECT_MAX_LABELED, LU_MAX_ENVELOPE, LU_MAX_NODES,  # noqa: F401
                     MULTISHIFT_MIN_NNZ, MULTISHIFT_MIN_SHIFTS, MULTISHIFT_TOL, SINGLE_SHIFT_MIN_NNZ,
                     auto_is_direct, cg_iterations, cg_work, describe_work, direct_route, gmres_work,
                     SPECTRUM_POINTS, lu_envelope, reciprocal_route, spectrum_grid,
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

    train_rows = prob.train_rows      # the labeled rows of this process's blocks (all of them on one process)
    b_train = b[train_rows]

    def step(x):  # Zhou et al.'s update x <- eta S x + [Y; 0] (Eq. 22) in one pass (b lives on the labeled rows)
        return prob.S(x).mul_(eta_col).index_add_(0, train_rows, b_train)

    if prob.rhs is not None:   # a right-hand side on every row
        def step(x):  # noqa: F811
            return prob.S(x).mul_(eta_col).add_(b)

    out = EngineResult({})
    if budgets:
        solver = "richardson" if solver == "auto" else solver
        T = max(budgets)
        if solver == "richardson":
            res = richardson(apply, b, 1.0, T, 0.0, snapshots=budgets, callback=callback, step=step, space=prob.space)
            res.reason = f"fixed budget T={T}: Zhou et al.'s iteration"
        elif solver == "cg":
            res = cg(apply, b, T, 0.0, snapshots=budgets, callback=callback, space=prob.space)
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
                                          callback=callback, space=prob.space)
        x = torch.cat(xs, dim=1)
        out.history.append(SolveResult(x, ms.residuals, ms.n_iter, ms.converged, solver="multishift-cg",
                                       reason=reason + f"; all {G} etas from one Krylov sequence (multi-shift CG)",
                                       stopped=ms.stopped))
    else:
        res = _iterate(solver, apply, b, max_iter, tol, gamma=1.0, callback=callback, step=step,
                       fix=AUTO_FIX if reason.startswith("auto") else None, space=prob.space)
        res.reason = reason
        out.history.append(res)
        x = res.x
    for g, blk in enumerate(_split(x, C)):
        out.h[(g, None)] = out.x[(g, None)] = blk
    return out


# the advice of a solve that solver='auto' chose: naming 'auto' again would send the user in a circle
AUTO_FIX = ("solver='auto' chose this route from the problem's sizes; pass solver='direct' (the exact solve; its "
            "memory is checked before it starts), a larger max_iter, or a fixed budget (num_iter=T, the paper's "
            "protocol)")


def _iterate(solver: str, apply, b, max_iter, tol, gamma, callback=None, step=None, fix=None,
             space=None) -> SolveResult:
    if solver == "richardson":
        return richardson(apply, b, gamma, max_iter, tol, callback=callback, step=step, fix=fix, space=space)
    if solver == "cg":
        return cg(apply, b, max_iter, tol, callback=callback, fix=fix, space=space)
    if solver == "gmres":
        return gmres(apply, b, max_iter, tol, callback=callback, fix=fix, space=space)
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
    if route == "cg" or prob.space.sharded:   # sharded vectors: no process holds S to factor
        def apply(v):
            return torch.addcmul(v, torch.tensor(eta, dtype=v.dtype, device=v.device), prob.S(v), value=-1.0)
        res = cg(apply, rhs, max_iter=max(4 * cg_iterations(eta), 100), tol=1e-12, space=prob.space)
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
    b = _tile(prob.Y, G)      # alpha is n x K, the same on every process: its solver reduces locally (LOCAL)
    beta_col = _per_col(betas, C, b)

    def apply(alpha):  # lines 3-5 of Algorithm 1, q - 2 full products (see _gram_apply)
        return N * _gram_apply(prob, coeffs, alpha) + n * beta_col * alpha

    lam = prob.lambda_max
    s_lo, s_hi = transform.value_range(prob.lambda_min, lam)
    gamma = richardson_step("polynomial", step_size, coeffs, beta_col, N, n, prob.lambda_min, lam)
    if budgets:
        solver = "richardson" if solver == "auto" else solver
        if solver == "richardson":
            res = richardson(apply, b, gamma, max(budgets), 0.0, snapshots=budgets, callback=callback, space=LOCAL)
        elif solver == "cg":
            res = cg(apply, b, max(budgets), 0.0, snapshots=budgets, callback=callback, space=LOCAL)
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
    res = _iterate(solver, apply, b, max_iter, tol, gamma, callback=callback,
                   fix=AUTO_FIX if reason.startswith("auto") else None, space=LOCAL)
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
                    unstable: str = "raise", adjoint: bool = False) -> EngineResult:
    """STKR (Eq. 7) for ``1/s(l) = sum_p xi_p l^(p-r)``, every (transform, beta) pair at once.

    Iterative solvers work on ``M theta = [y; 0]`` with
    ``M = N I_n~ S^r + n beta Q``, ``Q = sum_p xi_p S^p`` (Eq. 20); ``M`` is not
    symmetric, so the Krylov choice is GMRES. Richardson (Algorithm 2) uses the step of
    :func:`reciprocal_step`: ``gamma = 1 / (N lambda^r + n beta rho_max)`` for
    ``step_size="auto"`` (stable whenever ``S^r`` is positive semidefinite, Prop. 10 with ``N``
    for ``n``), Prop. 10's ``gamma = 1/(n lambda^r)`` for ``step_size="paper"``, or a number.
    Before Richardson runs with ``step_size="auto"``, a pair for which :func:`reciprocal_step`
    proves that no positive step converges (Eq. 7's ``A`` indefinite, so ``M`` has a real
    eigenvalue ``<= 0``; common on graphs with small ``beta``) raises :class:`ConvergenceError`
    naming ``solver="gmres"`` -- unless the fixed budget is at most the number of iterations whose
    residual provably stays below ``DIVERGED_RESIDUAL`` (:func:`_guard_safe_budget`), or
    ``unstable="run"`` (the grid's fixed budgets ``T``); then the paper's truncated iteration runs
    and ``history`` records the proof in ``reason``. An
    explicit ``step_size`` always runs (the guard of the caller judges its residual). ``direct`` solves
    ``Q X = E`` (dense, or sparse LU on large graphs), forms the ``n x n`` matrix
    ``A = N (S^r X)_{nn} + n beta I`` and serves every ``beta`` with one ``eigh``.
    Grid point ``g = t * len(betas) + b`` pairs ``transforms[t]`` with ``betas[b]``.
    Prediction: ``f(x) = v_K(x)^T S^(r-1) theta`` (the formula after Algorithm 2).

    The right-hand side is ``prob.b()`` (``[Y; 0]`` unless the problem carries a full ``rhs`` ``B``;
    the direct route then also solves ``Q^{-1} B_U`` for ``B``'s unlabeled rows ``B_U``:
    ``theta = X u + Q^{-1} B_U / (n beta)`` with
    ``(N (S^r X)_{nn} + n beta I) u = B_n - N (S^r Q^{-1} B_U)_n / (n beta)``; :func:`direct_other_rhs`).
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
    route, route_why = reciprocal_route(prob, transforms, betas, solver, budgets, adjoint, max_iter, tol)
    if route == "symmetric":
        return _reciprocal_symmetric(prob, transforms, betas, max_iter, tol, callback, route_why,
                                     AUTO_FIX if solver == "auto" else None)
    if solver == "cg" and not auto_is_direct(prob):
        raise ValueError(f"solver='cg' with a reciprocal transform on a kernel that is not positive semidefinite runs "
                         f"CG on Q = sum_p xi_p S^p for each of the n = {n} labeled columns (Algorithm 2's M itself is "
                         f"not symmetric), which needs N n = {N * n} > {DIRECT_MAX_ENTRIES} entries here; use the "
                         "positive semidefinite lazy kernel (normalization='lazy'), on which CG solves Algorithm 2's "
                         "symmetric form")
    if route == "direct":
        E = prob.scatter(torch.eye(n, dtype=prob.Y.dtype, device=prob.Y.device))
        routes = []
        for tr in transforms:
            if solver == "cg":
                route, why = "cg", "requested (CG on the SPD Q; Algorithm 2's M is not symmetric)"
            elif solver == "direct":
                route, why = ("lu" if len(tr.xi) <= 2 else "dense"), "requested"
            elif len(tr.xi) <= 2:
                route, why = direct_route(prob, -tr.xi[1] / tr.xi[0] if len(tr.xi) == 2 else 0.0, n)
                why = f"{route_why}; Q^-1 E by {route}: {why}"
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
    train_mask = prob.scatter(torch.ones(n, 1, dtype=prob.Y.dtype, device=prob.Y.device))
    train_rows = prob.train_rows
    b = _tile(prob.b(), len(pairs))
    npow = max(r, q - 1)

    if unstable not in ("raise", "run"):
        raise ValueError(f"unstable must be 'raise' or 'run', got {unstable!r}")
    iterates = route in ("richardson", "budget")
    gamma, certs = reciprocal_step(prob, transforms, betas, step_size, certify=iterates)
    proofs = [c for c in certs if c is not None]
    T_safe = _guard_safe_budget(prob, transforms, betas, gamma) if proofs and budgets else 0
    if proofs and step_size == "auto" and unstable == "raise" and (not budgets or max(budgets) > T_safe):
        raise ConvergenceError(
            f"STKR Algorithm 2 (Richardson, step_size='auto'): no stable step exists, checked before iterating: "
            f"{proofs[0]}" + (f" (and {len(proofs) - 1} more grid points)" if len(proofs) > 1 else "") +
            f". {_converging_route(prob)}"
            + (f"; or a fixed budget num_iter <= {T_safe}, whose residual provably stays below "
               f"{DIVERGED_RESIDUAL:g} (the paper's truncated iteration, a filter that solves no equation)"
               if budgets and T_safe > 0 else "") + ".")

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
        gb_train = (g * b)[train_rows]
        gN = g * N

        def step(theta):
            s_theta = prob.S(theta)
            lab = torch.addcmul(gb_train, gN, s_theta[train_rows], value=-1.0)
            return s_theta.mul_(neg_c).addcmul_(theta, keep).index_add_(0, train_rows, lab)
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
        res = richardson(apply, b, gamma, max(budgets), 0.0, snapshots=budgets, callback=callback, step=step,
                         space=prob.space)
        res.reason = f"fixed budget T={max(budgets)}: Algorithm 2's truncated iteration" + "".join(
            f"; {c}" for c in proofs)
        out.history.append(res)
        for t in budgets:
            for g, (blk, th) in enumerate(zip(_split(predict_block(res.snapshots[t]), C), _split(res.snapshots[t], C))):
                out.h[(g, t)], out.x[(g, t)] = blk, th
        return out
    reason = route_why
    solver = route
    res = _iterate(solver, apply, b, max_iter, tol, gamma, callback=callback, step=step,
                   fix=AUTO_FIX if reason.startswith("auto") else None, space=prob.space)
    res.reason = reason
    out.history.append(res)
    for g, (blk, th) in enumerate(zip(_split(predict_block(res.x), C), _split(res.x, C))):
        out.h[(g, None)], out.x[(g, None)] = blk, th
    return out


def _converging_route(prob: Problem) -> str:
    """The advice of a refused Algorithm 2 solve on a kernel that is not positive semidefinite: a route
    that converges for this problem (the direct ``n x n`` solve where it fits, by sizes only), and the
    positive semidefinite lazy kernel."""
    lazy = ("the positive semidefinite lazy graph kernel (normalization='lazy'), on which the automatic step is "
            "provably stable and CG solves Algorithm 2's symmetric form")
    if auto_is_direct(prob):
        return (f"Solve Eq. 20 exactly with solver='direct' (the n x n system: n = {prob.n} <= {DIRECT_MAX_LABELED} "
                f"labels and N n = {prob.N * prob.n} <= {DIRECT_MAX_ENTRIES} entries), or use {lazy}")
    return f"Use {lazy}"


def _reciprocal_symmetric(prob: Problem, transforms: Sequence[ReciprocalPolynomial], betas: Sequence[float],
                          max_iter: int, tol: float, callback, reason: str, fix: str | None) -> EngineResult:
    """Algorithm 2 (Eq. 20) on a positive semidefinite ``S`` with ``r = 1``, by CG on its symmetric form.

    **The symmetric form.** With ``P = I~_n`` (the labeled rows) and ``Q = rho(S) = sum_p xi_p S^p``,
    Eq. 20 reads ``M theta = R``, ``M = N P S + n beta Q`` (``R = [Y; 0]``, or any right-hand side
    ``Problem.rhs``). ``M`` is not symmetric, but ``S M = N S P S + n beta S Q`` is (``S`` and ``Q``
    commute), and for a positive semidefinite ``S`` it is positive semidefinite: ``M`` is self-adjoint
    and positive in the inner product ``<u, v>_S = u^T S v``. On the range of ``S`` its eigenvalues are
    those of the symmetric ``R_M = N S^{1/2} P S^{1/2} + n beta Q`` (``S^{1/2} M = R_M S^{1/2}``, Prop. 10's
    proof), which lie in ``[n beta rho_min, N lambda_1 + n beta rho_max]`` with ``rho`` on ``[0, lambda_1]``
    (:func:`~graphstk.methods.routes.symmetric_iterations`). CG in that inner product
    (:func:`~graphstk.spectral.solvers.metric_cg`: CG on ``(S M) theta = S R`` preconditioned by ``S^{-1}``,
    which is never applied) converges at the rate of that condition number, with one product of ``S``
    per iteration for the inverse Laplacian (``q - 1`` for a ``Q`` of degree ``q - 1``).

    **The solution.** The iteration determines ``w = S theta`` (the null space of ``S`` is invisible to
    ``<., .>_S``; every solution of ``S M theta = S R`` has the same ``S theta``, since ``M z = n beta xi_0 z``
    for ``S z = 0``). ``theta`` follows from ``w`` exactly, without another solve: Eq. 20 gives
    ``n beta Q theta = R - N P w``, i.e.
    ``theta = ((R - N P w) / (n beta) - sum_{p >= 1} xi_p S^{p-1} w) / xi_0``.
    The predictions are the formula after Algorithm 2 with ``r = 1``: ``f(x) = N v_K(x)^T theta``
    (``h = N theta``; on visible nodes ``f = N w``). The history records the relative residual of Eq. 20
    itself for the recovered ``theta``.

    When every point is labeled (``n = N``, a GNN layer) ``P = I`` and ``M = N S + n beta Q`` is itself
    symmetric; the same iteration solves it, and the adjoint ``M^T = M``.
    """
    N, n, C = prob.N, prob.n, prob.C
    pairs = [(tr, bt) for tr in transforms for bt in betas]
    q = max(len(tr.xi) for tr in transforms)
    dtype, device = prob.Y.dtype, prob.Y.device
    xi = torch.tensor([[tr.xi[p] if p < len(tr.xi) else 0.0 for tr, _ in pairs] for p in range(q)],
                      dtype=dtype, device=device).repeat_interleave(C, dim=1)    # [q, K]
    nb = n * _per_col([bt for _, bt in pairs], C, prob.Y)                         # [1, K]
    mask = prob.scatter(torch.ones(n, 1, dtype=dtype, device=device))            # P as a column
    R = _tile(prob.b(), len(pairs))

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

    SR = _tile(prob.S_cols() @ prob.Y, len(pairs)) if prob.rhs is None else prob.S(R)
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
    rel = float((prob.space.col_norm(R - check) / _safe_col_norm(R, prob.space)).max()) if R.numel() else 0.0
    res.x, res.image = theta, None
    res.solver = "cg (Algorithm 2, symmetric form)"
    res.reason = f"{reason}; Eq. 20's relative residual of the recovered theta {rel:.2e}"
    out = EngineResult({}, history=[res])
    for g, blk in enumerate(_split(theta, C)):
        out.h[(g, None)], out.x[(g, None)] = N * blk, blk
    return out


def _safe_col_norm(x: Tensor, space) -> Tensor:
    nrm = space.col_norm(x)
    return torch.where(nrm > 0, nrm, torch.ones_like(nrm))


# ---------------------------------------------------------------------------
# Algorithm 2's Richardson step: when a stable one exists, and a certificate when none does
# ---------------------------------------------------------------------------
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

    The extremes are taken on ``SPECTRUM_POINTS`` points of ``[lam_min, lam_max]`` (``lam_min = 0``
    for a positive semidefinite ``S``). ``coeffs`` and ``beta`` may be tensors that require grad:
    the step is then differentiable in them (an unrolled fixed budget's gradient includes the
    step's dependence on its parameters). Returns ``gamma`` shaped like ``beta``.
    """
    if not isinstance(step_size, str):
        return float(step_size)
    if step_size == "paper" and family == "reciprocal":
        return 1.0 / (n * lam_max ** r)
    c = coeffs if isinstance(coeffs, Tensor) else torch.tensor([float(v) for v in coeffs], dtype=torch.float64)
    grid = torch.linspace(lam_min, lam_max, SPECTRUM_POINTS, dtype=c.dtype, device=c.device)
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

    **Why the automatic step is stable when S^r is positive semidefinite** (Prop. 10, with
    ``N`` for ``n``). Richardson ``theta <- theta + gamma ([y; 0] - M theta)`` on Eq. 20,
    ``M = N I~ S^r + n beta Q``, ``Q = rho(S) = sum_p xi_p S^p``, converges for every right-hand
    side iff ``|1 - gamma mu| < 1`` for every eigenvalue ``mu`` of ``M``. ``M`` is not symmetric,
    but ``S^r M = N S^r I~ S^r + n beta S^r Q`` is (``S`` and ``Q`` commute). When ``S^r`` is
    positive semidefinite its square root ``S^{r/2}`` is real and ``S^{r/2} M = R S^{r/2}`` with
    the symmetric ``R = N S^{r/2} I~ S^{r/2} + n beta Q`` (Prop. 10's proof); by continuity
    (``S + eps I``, ``eps -> 0``) every eigenvalue of ``M`` is one of ``R``, real, in
    ``[n beta rho_min, N lambda^r + n beta rho_max]``: ``||S^{r/2} I~ S^{r/2}|| <= lambda^r``
    (Sylvester: it has the non-zero eigenvalues of the labeled block ``[S^r]_nn``), which on a
    graph can reach ``lambda^r`` itself, so the bound carries ``N``, not Prop. 10's ``n`` (whose
    ``||G_{K,n}|| <= n lambda`` holds for a kernel sampled i.i.d., not for a graph's block).
    With ``gamma = 1 / (N lambda^r + n beta rho_max)``, ``0 < gamma mu <= 1`` and the error
    contracts by ``1 - gamma n beta rho_min`` per iteration. This holds for even ``r`` on any
    operator, and for every ``r`` on a positive semidefinite ``S`` (a Gram matrix; a graph made
    positive semidefinite).

    **Why no positive step converges on most graphs with small beta.** A graph's
    ``S = D^{-1/2} W D^{-1/2}`` has trace ``0`` (no self-loops), so eigenvalues down to
    ``-lambda``: for odd ``r`` (the inverse Laplacian, ``r = 1``) ``S^{r/2}`` is not real and the
    argument above fails. Write ``M = n beta Q + N E (E^T S^r)``, ``E`` the ``N x n`` labeled
    columns; for ``mu`` outside the spectrum of ``n beta Q`` (which is positive) the determinant
    lemma gives ``det(M - mu I) = det(n beta Q - mu I) det F(mu)`` with
    ``F(mu) = I_n + N E^T S^r (n beta Q - mu I)^{-1} E``. For real ``mu <= 0``, ``F(mu)`` is
    symmetric, continuous in ``mu``, and ``F(mu) -> I_n`` as ``mu -> -inf``. Hence ``M`` has a real
    eigenvalue ``mu* <= 0`` *iff* ``F(mu)`` fails to be positive definite for some ``mu <= 0`` (if it
    fails at ``mu_0``, its smallest eigenvalue crosses ``0`` at some ``mu* <= mu_0``), and then
    ``|1 - gamma mu*| >= 1`` for **every** ``gamma > 0``: no step rule, no precision (float32 or
    float64) and no ``beta`` below the threshold helps. Krylov solvers (GMRES on ``M``; CG on
    ``Q``, then the ``n x n`` system) need no step and are unaffected (``M`` is non-singular).
    For ``r = 1``, ``Q = xi_0 (I - eta S)`` (the inverse Laplacian: ``xi_0 = 1``, ``xi_1 = -eta``),
    ``n beta Q - mu I = (n beta xi_0 - mu)(I - e S)`` with ``e = n beta eta xi_0 / (n beta xi_0 - mu)``,
    which runs over ``(0, eta]`` as ``mu`` runs over ``(-inf, 0]``, and ``F(mu) = I_n + (N / (n beta
    |xi_1|)) ([(I - e S)^{-1}]_nn - I_n)``. So ``M`` has a real eigenvalue ``<= 0`` iff
    ``lambda_min([(I - e S)^{-1}]_nn) <= 1 - n beta |xi_1| / N`` for some ``e`` in ``(0, eta]``. At
    ``e = eta`` this says that Eq. 7's matrix ``A = N [s(S)]_nn + n beta I`` is not positive
    definite (``F(0) = A / (n beta)``), but ``A`` positive definite is not enough: a labeled edge
    ``(a, b)`` gives ``[(I - e S)^{-1}]_{ab} ~ e S_ab`` against diagonals ``~ 1 + e^2 (S^2)_aa``,
    a dip of about ``S_ab^2 / (4 (S^2)_aa)`` at an interior ``e``, and the threshold
    ``n beta eta / N`` is tiny when ``N / n`` is large. On the reported random graph (200,000
    nodes, average degree 10, 2,000 labels, ``eta = 0.9``) the certificate below proves it for
    every ``beta`` up to about 8.8 (at ``e = eta``, where the best pair's quotient is 0.92): that is
    the failure at ``beta`` = 0.1 and 1, and the 20,000-node, 200-label run of the same shape
    (proved up to ``beta`` about 6.6) diverges too; its 62 iterations merely ended before the
    growth passed the guard.

    **The certificate** (``r = 1``, ``Q = xi_0 I + xi_1 S`` with ``xi_1 < 0``; other shapes get
    none and are iterated under the caller's divergence guard). For the labeled pairs ``(a, b)``
    with the largest ``|S_ab|`` (at most ``STEP_CERT_PAIRS``, ties by position: deterministic)
    take ``v = e_a - sign(S_ab) e_b`` and solve ``(I - e S) x = v`` for ``e = eta 2^(-j/2)``,
    ``j < STEP_CERT_SHIFTS``, by one multi-shift CG of ``STEP_CERT_ITERS`` iterations in float64.
    For any ``x``, with ``r = v - (I - e S) x`` recomputed, ``L(x) = 2 x^T v - x^T (I - e S) x <=
    v^T (I - e S)^{-1} v <= L(x) + ||r||^2 / (1 - e lambda)`` (the gap is ``r^T (I - e S)^{-1} r``).
    When an upper bound divided by ``||v||^2`` is below ``1 - n beta |xi_1| / N`` by
    ``STEP_CERT_MARGIN``, ``lambda_min`` is too (Courant-Fischer), and the pair has no stable step;
    the sentence names the nodes, ``e`` and the real eigenvalue bound ``mu* <= n beta xi_0 (1 - eta
    / e)``. The work is counted (pairs x shifts x iterations), never timed. When nothing is proved
    (no labeled edge, or a bound too loose), ``M`` may still be unstable through complex eigenvalues
    with non-positive real part; then the iteration runs and the caller's guard stays.
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


def _guard_safe_budget(prob: Problem, transforms: Sequence[ReciprocalPolynomial], betas: Sequence[float],
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
    """For ``r = 1``, ``Q = xi_0 (I - eta S)`` with ``eta = -xi_1 / xi_0 > 0`` (the inverse Laplacian):
    per beta, a sentence proving that Eq. 20's ``M`` has a real eigenvalue ``<= 0``, or ``None``.

    ``M`` has one iff ``lambda_min([(I - e S)^{-1}]_nn) <= 1 - n beta |xi_1| / N`` for some ``e`` in
    ``(0, eta]`` (see :func:`reciprocal_step`); tested on ``e = eta 2^(-j/2)``, ``j < STEP_CERT_SHIFTS``,
    and on ``v = e_a - sign(S_ab) e_b`` for the labeled pairs with the largest ``|S_ab|``, with
    upper bounds on ``v^T (I - e S)^{-1} v`` from one multi-shift CG (float64). A partitioned operator
    (rows spread over processes) gets none: the iteration runs under the caller's divergence guard."""
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
    xs, _ = solve_shifted_laplacians(prob.S, rhs, etas, max_iter=20 * prob.N, tol=MULTISHIFT_TOL, callback=callback,
                                     space=prob.space)
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


# ---------------------------------------------------------------------------
# Algorithm 2's direct route for other right-hand sides (implicit gradients)
# ---------------------------------------------------------------------------
def _powers(prob: Problem, x: Tensor, k: int) -> Tensor:
    """``S^k x``."""
    for _ in range(k):
        x = prob.S(x)
    return x


def direct_other_rhs(prob: Problem, tr: ReciprocalPolynomial, X: Tensor, Z: Tensor, B: Tensor,
                     betas: Sequence[float], route: str, adjoint: bool) -> list[Tensor]:
    """``theta`` (or, with ``adjoint``, ``lambda``) ``[N, C]`` per ridge ``beta`` for the right-hand side
    ``prob.b()``; ``route``: how ``Q^{-1}`` is applied (``"lu"``, ``"dense"``, ``"cg"``).

    Algorithm 2's direct route (Eq. 20) for right-hand sides other than ``[Y; 0]``.
    
    With ``X = Q^{-1} E`` (``Q = sum_p xi_p S^p``, ``E`` the labeled columns), ``Z = S^{r-1} X`` and
    ``B = (S^r X)_{nn}`` already formed by :func:`graphstk.methods.propagation.stkr_reciprocal`:
    
    * ``M theta = R`` for a block ``R`` on every point (``Problem.rhs``): with ``R_U`` its unlabeled
      rows, ``theta = X u + Q^{-1} R_U / (n beta)`` where
      ``(N B + n beta I) u = R_n - N (S^r Q^{-1} R_U)_n / (n beta)``;
    * ``M^T lambda = R`` (the adjoint of an implicit gradient; ``S`` symmetric, so
      ``M^T = N S^r I_n~ + n beta Q``): with ``W = Q^{-1} R``, ``(N B + n beta I) mu = W_n`` and
      ``lambda = (W - N S^r X mu) / (n beta)``.
    
    Both need one more ``Q^{-1}`` solve on ``C`` columns, by the route ``X`` took.
    """
    N, n, r, R = prob.N, prob.n, tr.r, prob.b()
    if adjoint:
        W, _ = _reciprocal_direct(prob, tr, R, route)
        SZ = prob.S(Z)
        mus = _sym_solve_path(B, float(N), [n * bt for bt in betas], prob.labeled(W),
                              "STKR (Algorithm 2, direct adjoint)")
        return [(W - N * (SZ @ mu)) / (n * bt) for bt, mu in zip(betas, mus)]
    free = R.clone()
    free[prob.train_rows] = 0
    R_n = prob.labeled(R)
    if not bool(prob.space.reduce_sum((free != 0).sum().reshape(1).double()) > 0):   # the same on every process
        return [X @ a for a in _sym_solve_path(B, float(N), [n * bt for bt in betas], R_n,
                                               "STKR (Algorithm 2, direct)")]
    free = _reciprocal_direct(prob, tr, free, route)[0]
    lab = prob.labeled(_powers(prob, free, r))
    out = []
    for bt in betas:
        u = _sym_solve_path(B, float(N), [n * bt], R_n - N * lab / (n * bt), "STKR (Algorithm 2, direct)")[0]
        out.append(X @ u + free / (n * bt))
    return out
