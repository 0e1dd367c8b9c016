"""Linear solvers for multi-right-hand-side systems ``A X = B``, one operator product per iteration for all
``K`` columns (classes and grid points), scalars kept per column: :func:`richardson` (Algorithms 1-2, Label-Prop;
``max_iter=T, tol=0`` is the paper's fixed budget), :func:`cg` (SPD ``A``), :func:`metric_cg` (``A`` self-adjoint
in the inner product of a PSD ``G``), :func:`gmres` (restarted, general ``A``) and :func:`multishift_cg`
(``(sigma_s I - S) X_s = B`` for every shift from one Krylov sequence, Frommer & Maass 1999; docs/methods.md,
"Multi-shift CG"). Written in torch because scipy solves one right-hand side at a time, on the CPU only.
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

import torch
from torch import Tensor

from .._checks import user_stacklevel
from .._spaces import LOCAL, VectorSpace, _space  # noqa: F401  (re-exported)
from ..exceptions import ConvergenceError, ConvergenceWarning  # noqa: F401  (re-exported)

Apply = Callable[[Tensor], Tensor]


@dataclass
class SolveResult:
    """Solution and history of an iterative solve (or a record of a direct one).

    Attributes
    ----------
    x : Tensor, the solution.
    residuals : list of float, ``residuals[t]`` the largest relative residual ``||b - A x|| / ||b||`` over the
        columns after iteration ``t + 1``.
    n_iter : int, iterations (operator products) that ran.
    converged : bool, whether ``tol`` was reached (direct routes: True).
    snapshots : dict, ``x_T`` for each requested budget ``T``.
    solver, reason : str, the route that ran (``"cg"``, ``"direct (sparse LU)"``, ...) and why it was chosen.
    stopped : str, why the solve ended early (a time budget, see ``time_budget``, or a stall), else ``""``.
    image : Tensor or None, ``G x`` for ``metric_cg`` (else ``None``).
    """

    x: Tensor
    residuals: list[float] = field(default_factory=list)
    n_iter: int = 0
    converged: bool = False
    snapshots: dict[int, Tensor] = field(default_factory=dict)
    solver: str = ""
    reason: str = ""
    stopped: str = ""
    image: Tensor | None = None


def time_budget(callback: Callable[[int, float], object] | None, max_seconds: float | None
                ) -> Callable[[int, float], object] | None:
    """``callback`` extended with a time budget: the result returns a reason (stopping the solver, recorded in
    :attr:`SolveResult.stopped`) once ``max_seconds`` have passed since this call; ``None``: ``callback`` itself."""
    if max_seconds is None:
        return callback
    limit = float(max_seconds)
    if not limit > 0:
        raise ValueError(f"max_seconds must be a positive number of seconds or None, got {max_seconds!r}")
    start = time.monotonic()

    def budgeted(t: int, rel: float):
        stop = callback(t, rel) if callback is not None else None
        if stop:
            return stop
        if time.monotonic() - start > limit:
            return f"the time budget max_seconds={limit:g} ran out"
        return None
    return budgeted


def safe_norm(b: Tensor, space: VectorSpace) -> Tensor:
    """Column norms of ``b`` with zeros replaced by 1 (the divisor of a relative residual)."""
    n = space.col_norm(b)
    return torch.where(n > 0, n, torch.ones_like(n))


def _trend(residuals: list[float]) -> str:
    if not residuals:
        return "stalled"
    first, last = residuals[0], residuals[-1]
    if last > 1.0 or last > 10 * first:
        return "diverging"
    tail = residuals[-max(len(residuals) // 5, 1):]
    if len(residuals) >= 10 and min(tail) > 0.5 * max(tail):   # the last fifth gained less than 2x
        return "stalled"
    return "decreasing"


def _div(num: Tensor, den: Tensor, ok: Tensor) -> Tensor:
    """``num / den`` where ``ok``, else 0 (a masked-out ``den`` is never divided by)."""
    q = num / torch.where(ok, den, torch.ones_like(den))
    return torch.where(ok, q, torch.zeros_like(q))


def _fix(name: str, fix: str | None = None) -> str:
    text = fix or _FIX.get(name, _FIX["gmres"])
    return text[0].upper() + text[1:]


_FIX = {
    "richardson": "use solver='auto', 'cg' (symmetric positive definite systems), 'gmres' or 'direct', or a "
                  "smaller step_size, or a fixed budget (num_iter=T, the paper's protocol)",
    "cg": "use solver='direct' or 'auto' (or 'gmres' if the system is not positive definite)",
    "gmres": "use solver='direct' or 'auto' (restarted GMRES stagnates on indefinite systems such as "
             "Algorithm 2's M on graphs with negative eigenvalues), or a fixed budget (num_iter=T)",
}


_STILL_DECREASING = "use solver='direct' / 'auto'"
#: a stalled solve in single precision whose residual is below this stopped at rounding, not for want of iterations
FLOAT32_STALL = 1e-4


def _finish(res: SolveResult, tol: float, name: str, warn: bool, fix: str | None = None,
            space: VectorSpace = LOCAL) -> SolveResult:
    """Record the solver; a missed ``tol`` raises (diverging, or residual >= 1) or warns (stalled, still
    decreasing) with advice (``fix``, else the ``solver=`` choices)."""
    res.solver = res.solver or name
    _settle(res, space)
    if res.stopped and not res.converged:
        last = res.residuals[-1] if res.residuals else float("nan")
        if _trend(res.residuals) == "diverging":
            raise ConvergenceError(f"{name} was stopped ({res.stopped}) after {res.n_iter} iterations while "
                                   f"diverging (relative residual {last:.3e}). {_fix(name, fix)}", result=res)
        if warn:
            then = (_fix(name, fix) if res.stopped.startswith("stalled") else
                    "Raise max_seconds (or leave it unset) for a solve to tolerance")
            warnings.warn(f"{name} stopped after {res.n_iter} iterations: {res.stopped}; relative residual "
                          f"{last:.3e}" + (f" > tol={tol:.1e}" if tol > 0 else "") + f". {then}",
                          ConvergenceWarning, stacklevel=user_stacklevel())
        return res
    if tol > 0 and not res.converged:
        last = res.residuals[-1] if res.residuals else float("nan")
        trend = _trend(res.residuals)
        head = f"{name} did not reach tol={tol:.1e}: relative residual {last:.3e} after {res.n_iter} iterations"
        if trend == "diverging" or not last < 1.0:
            raise ConvergenceError(f"{head}, diverging (the iteration moves away from the solution); its result "
                                   f"is not usable. {_fix(name, fix)}", result=res)
        if warn:
            if trend == "stalled" and res.x.dtype in (torch.float32, torch.float16, torch.bfloat16) \
                    and last < FLOAT32_STALL:
                reach = 2.0 * max(res.residuals[-max(len(res.residuals) // 5, 1):])
                msg = (f"{head}, stalled at {res.x.dtype} rounding: the residual cannot go lower in this precision "
                       f"(more iterations do not help). Pass float64 inputs for tol={tol:.1e}, or a tol >= "
                       f"{reach:.1e} in {res.x.dtype}")
            elif trend == "stalled":
                msg = (f"{head}, stalled (no progress over the last iterations): the result can be far from the "
                       f"exact solution even at a small residual. {_fix(name, fix)}")
            else:
                msg = f"{head}, still decreasing: increase max_iter (or {fix or _STILL_DECREASING})"
            warnings.warn(msg, ConvergenceWarning, stacklevel=user_stacklevel())
    return res


def _settle(res: SolveResult, space: VectorSpace) -> None:
    if type(space) is VectorSpace:
        return
    done = {id(res.x): space.settle(res.x)}
    res.x = done[id(res.x)]
    if res.image is not None:
        res.image = space.settle(res.image)
    for t, v in res.snapshots.items():
        res.snapshots[t] = done[id(v)] if id(v) in done else done.setdefault(id(v), space.settle(v))


def _check_finite(r: Tensor, name: str, it: int) -> None:
    if not torch.isfinite(r).all():
        raise FloatingPointError(
            f"{name} diverged at iteration {it} (non-finite residual); the step size is too large "
            "or the system is indefinite: solve to a tolerance instead, num_iter=None with solver='gmres' or 'direct'"
        )


def richardson(apply: Apply, b: Tensor, gamma: float | Tensor, max_iter: int, tol: float = 0.0,
               snapshots: Iterable[int] = (), callback: Callable[[int, float], None] | None = None,
               warn: bool = True, step: Apply | None = None, fix: str | None = None,
               space: VectorSpace | None = None, differentiable: bool = False) -> SolveResult:
    """Richardson iteration ``x <- x + gamma (b - A x)`` from ``x = 0``, one call of ``apply`` (or ``step``) each.

    Stops when every column's relative residual is below ``tol`` (``tol=0``: exactly ``max_iter`` iterations,
    the paper's budget ``T``; residuals then only at the snapshots and the end).

    Parameters
    ----------
    apply : callable ``[N, K] -> [N, K]``, the product with ``A``.
    b : Tensor ``[N, K]``
    gamma : float or Tensor ``[K]``
        The step, or one per column.
    max_iter : int
    tol : float, default 0.0
    snapshots : iterable of int, default ()
        Iteration counts ``T`` whose iterate ``x_T`` is kept.
    callback : callable ``(t, relative residual)``, optional
        A true return value stops the solve (``time_budget``).
    warn : bool, default True
        Warn (``ConvergenceWarning``) when a solve to ``tol`` stalls; a diverging one raises ``ConvergenceError``.
    fix : str, optional
        The advice a failed solve gives (default: the ``solver=`` choices that can do better).
    step : callable ``[N, K] -> [N, K]``, optional
        The whole update ``x -> x + gamma (b - A x)`` fused into one call returning a new tensor (the
        residual is then read off ``(x_{t+1} - x_t) / gamma``; the product count is ``max_iter`` either way).
    space : VectorSpace, optional
        Where the column reductions run; default ``LOCAL`` (a partitioned operator's sums over its processes).
    differentiable : bool, default False
        Update out of place, so that autograd differentiates ``x_T`` through the iterates (``step`` unused).
    """
    space = _space(space)
    snaps = set(int(t) for t in snapshots)
    bn = safe_norm(b.detach(), space)
    track = tol > 0 or callback is not None  # otherwise residuals only at snapshots and the end
    # gamma = 0: r_t is not (x_{t+1} - x_t) / gamma
    if step is not None and not differentiable and bool((torch.as_tensor(gamma) != 0).all()):
        return _finish(_richardson_fused(apply, step, b, gamma, max_iter, tol, snaps, callback, bn, track, space),
                       tol, "richardson", warn, fix, space)
    x = torch.zeros_like(b)
    r = b
    res = SolveResult(x)
    for t in range(1, max_iter + 1):
        x = x + gamma * r if t == 1 or differentiable else x.add_(gamma * r)
        r = b - apply(x) if differentiable else apply(x).neg_().add_(b)
        ends = (track or t in snaps or t == max_iter) and _ends(res, r, _relative(r, bn, space), t, tol, callback)
        if t in snaps:
            res.snapshots[t] = x.clone()
        if ends:
            break
    else:
        res.n_iter = max_iter
    res.x = x
    for t in snaps:  # requested budgets beyond an early stop equal the converged x
        res.snapshots.setdefault(t, x)
    return _finish(res, tol, "richardson", warn, fix, space)


#: Richardson to a tolerance ends when its residual fell by less than ``STALL_GAIN`` over ``STALL_WINDOW`` iterations
STALL_WINDOW, STALL_GAIN = 100, 0.01


def _stalled(res: SolveResult) -> bool:
    """Whether Richardson gained less than ``STALL_GAIN`` in ``STALL_WINDOW`` iterations (then ``res.stopped``)."""
    hist = res.residuals
    if len(hist) <= STALL_WINDOW:
        return False
    before, now = hist[-STALL_WINDOW - 1], hist[-1]
    if now < before * (1.0 - STALL_GAIN):
        return False
    res.stopped = (f"stalled: the relative residual went from {before:.3e} to {now:.3e} over the last "
                   f"{STALL_WINDOW} iterations (less than {STALL_GAIN:.0%} progress)")
    return True


def _relative(r: Tensor, bn: Tensor, space: VectorSpace) -> float:
    return float((space.col_norm(r.detach()) / bn).max()) if r.numel() else 0.0


def _ends(res: SolveResult, r: Tensor, rel: float, t: int, tol: float, callback, confirmed: bool = False) -> bool:
    """Record Richardson's finite ``rel`` at iteration ``t``; True when the solve ends there: ``tol`` met, the
    callback stopped it, or (``_finish`` says so) diverging, stalled, or a ``confirmed`` rounding freeze."""
    res.residuals.append(rel)
    if rel != rel or rel == float("inf"):
        _check_finite(r, "richardson", t)
    stop = _ask(res, callback, t, rel)
    res.converged = tol > 0 and rel < tol
    if res.converged or stop or (tol > 0 and (rel > 1e8 or confirmed or _stalled(res))):
        res.n_iter = t
        return True
    return False


def _ask(res: SolveResult, callback, t: int, rel: float) -> bool:
    if callback is None:
        return False
    stop = callback(t, rel)
    if stop:
        res.stopped = stop if isinstance(stop, str) else "the callback asked to stop"
        return True
    return False


def _richardson_fused(apply: Apply, step: Apply, b: Tensor, gamma: float | Tensor, max_iter: int, tol: float,
                      snaps: set[int], callback, bn: Tensor, track: bool, space: VectorSpace) -> SolveResult:
    """:func:`richardson` with a fused ``step`` (``x_t`` never modified in place; ``r_t = (x_{t+1} - x_t) / gamma``).
    A ``tol`` seemingly met is confirmed once with the true residual: rounding can freeze the iterate."""
    x = gamma * b if max_iter >= 1 else torch.zeros_like(b)   # x_1 = x_0 + gamma (b - A x_0), x_0 = 0
    res = SolveResult(x)
    for t in range(1, max_iter + 1):
        need = track or t in snaps or t == max_iter
        confirmed = False
        if t < max_iter:
            x_next = step(x)
            r = (x_next - x).div_(gamma) if need else None
            rel = _relative(r, bn, space) if need else None
            if tol > 0 and rel < tol:   # tol > 0 records every iteration (need is True)
                r, confirmed = apply(x).neg_().add_(b), True
                rel = _relative(r, bn, space)
        else:
            x_next, r = None, apply(x).neg_().add_(b)
            rel = _relative(r, bn, space)
        if need:
            if t in snaps:
                res.snapshots[t] = x
            if _ends(res, r, rel, t, tol, callback, confirmed):
                break
        if x_next is None:
            res.n_iter = max_iter
            break
        x = x_next
    res.x = x
    for t in snaps:  # requested budgets beyond an early stop equal the converged x
        res.snapshots.setdefault(t, x)
    return res


def cg(apply: Apply, b: Tensor, max_iter: int, tol: float = 1e-6, x0: Tensor | None = None,
       snapshots: Iterable[int] = (), callback: Callable[[int, float], None] | None = None,
       warn: bool = True, fix: str | None = None, space: VectorSpace | None = None) -> SolveResult:
    """Conjugate gradient, one independent CG per column of ``b``; ``A`` must be SPD (a non-positive curvature
    ``p^T A p <= 0`` raises ``FloatingPointError`` naming ``solver='gmres'``).

    Parameters
    ----------
    apply : callable ``[N, K] -> [N, K]``, the product with ``A``.
    b : Tensor ``[N, K]``
    max_iter : int
    tol : float, default 1e-6
        Relative residual per column (``0``: run ``max_iter`` iterations).
    x0 : Tensor ``[N, K]``, optional
    snapshots, callback, warn, fix, space : as in :func:`richardson`.
    """
    space = _space(space)
    snaps = set(int(t) for t in snapshots)
    x = torch.zeros_like(b) if x0 is None else x0.clone()
    r = b - apply(x) if x0 is not None else b.clone()
    p = r.clone()
    rs = space.col_dot(r, r)
    bn = safe_norm(b, space)
    res = SolveResult(x)
    done = torch.sqrt(rs) / bn < tol if tol > 0 else torch.zeros_like(rs, dtype=torch.bool)
    if tol > 0 and bool(done.all()):
        res.converged = True
        return _finish(res, tol, "cg", warn, fix, space)
    for t in range(1, max_iter + 1):
        ap = apply(p)
        pap = space.col_dot(p, ap)
        active = rs > (torch.finfo(b.dtype).eps * bn) ** 2  # columns not yet solved to machine precision
        if bool((pap[active] <= 0).any()):
            raise FloatingPointError(
                "cg met non-positive curvature p^T A p <= 0: the system is not positive definite "
                "(e.g. an odd-power transform on a graph with negative eigenvalues); use solver='gmres'"
            )
        alpha = _div(rs, pap, active)
        x = x + alpha * p
        r = r - alpha * ap
        rs_new = space.col_dot(r, r)
        if t in snaps:
            res.snapshots[t] = x
        if _cg_done(res, rs_new, bn, t, tol, callback):
            break
        beta = _div(rs_new, rs, rs > 0)   # 0 for a column already solved
        p = r + beta * p
        rs = rs_new
    else:
        res.n_iter = max_iter
    res.x = x
    for t in snaps:
        res.snapshots.setdefault(t, x)
    return _finish(res, tol, "cg", warn, fix, space)


def _cg_done(res: SolveResult, rs_new: Tensor, bn: Tensor, t: int, tol: float, callback) -> bool:
    """Record CG's iteration ``t``; True when it ends (``tol`` met, or the callback stopped it)."""
    rel = float((torch.sqrt(rs_new) / bn).max()) if rs_new.numel() else 0.0
    res.residuals.append(rel)
    stop = _ask(res, callback, t, rel)
    if (tol > 0 and rel < tol) or stop:
        res.converged, res.n_iter = tol > 0 and rel < tol, t
        return True
    return False


def metric_cg(apply: Callable[[Tensor, Tensor], tuple[Tensor, Tensor]], b: Tensor, gb: Tensor, max_iter: int,
              tol: float = 1e-6, callback: Callable[[int, float], None] | None = None, warn: bool = True,
              fix: str | None = None, space: VectorSpace | None = None) -> SolveResult:
    """Conjugate gradient for ``A x = b`` with ``A`` self-adjoint and positive definite in ``<u, v>_G = u^T G v``
    (``G`` symmetric PSD), one CG per column: CG on ``(G A) x = G b`` preconditioned by ``G^{-1}``, which is never
    applied (``G``-images follow the same recurrences; one ``apply`` per iteration; docs/kernels.md).

    Parameters
    ----------
    apply : callable ``(p, G p) -> (A p, G A p)``
        Given a direction and its ``G``-image (the caller can use ``G p`` to save products).
    b : Tensor ``[N, K]``
    gb : Tensor ``[N, K]``, ``G b``.
    max_iter : int
    tol : float, default 1e-6
        Relative residual per column in the ``G``-norm, ``sqrt(r^T G r / b^T G b)``.
    callback, warn, fix, space : as in :func:`richardson`.

    Returns
    -------
    SolveResult
        ``x`` and ``image = G x`` (``x``'s null-space components of ``G`` are not controlled: use ``G x``).
    """
    space = _space(space)
    x, gx = torch.zeros_like(b), torch.zeros_like(b)
    r, gr = b.clone(), gb.clone()
    p, gp = r.clone(), gr.clone()
    rs = space.col_dot(r, gr).clamp_min(0)
    bn = torch.sqrt(rs)
    bn = torch.where(bn > 0, bn, torch.ones_like(bn))
    res = SolveResult(x)
    tiny = torch.finfo(b.dtype).eps
    if tol > 0 and bool((torch.sqrt(rs) / bn < tol).all()):
        res.converged, res.image = True, gx
        return _finish(res, tol, "cg", warn, fix, space)
    for t in range(1, max_iter + 1):
        ap, gap = apply(p, gp)
        pap = space.col_dot(p, gap)
        active = rs > (tiny * bn) ** 2
        if bool((pap[active] <= 0).any()):
            raise FloatingPointError("cg met non-positive curvature p^T G A p <= 0: A is not positive definite in the "
                                     "inner product of G (the kernel is not positive semidefinite)")
        alpha = _div(rs, pap, active)
        x.add_(alpha * p)
        gx.add_(alpha * gp)
        r.sub_(alpha * ap)
        gr.sub_(alpha * gap)
        rs_new = space.col_dot(r, gr).clamp_min(0)
        if _cg_done(res, rs_new, bn, t, tol, callback):
            break
        beta = _div(rs_new, rs, rs > 0)   # 0 for a column already solved
        p = r + beta * p
        gp = gr + beta * gp
        rs = rs_new
    else:
        res.n_iter = max_iter
    res.x, res.image = x, gx
    return _finish(res, tol, "cg", warn, fix, space)


def _lstsq(h: Tensor, rhs: Tensor) -> Tensor:
    """GMRES's batch of small least-squares problems (on the CPU on one thread: a threaded ``gelsd`` is slower)."""
    if h.device.type != "cpu":
        return torch.linalg.lstsq(h, rhs).solution
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return torch.linalg.lstsq(h, rhs, driver="gelsd").solution
    finally:
        torch.set_num_threads(threads)


def mgs_step(w: Tensor, v: Tensor, inplace: bool = False, space: VectorSpace | None = None
             ) -> tuple[Tensor, Tensor]:
    """One modified Gram-Schmidt step of :func:`gmres`: ``(h, w - h v)``, ``h = <w, v>`` per column (into ``w`` if ``inplace``)."""
    hij = _space(space).col_dot(w, v)
    return hij, (w.addcmul_(v, hij, value=-1.0) if inplace else w - hij * v)


GMRES_RESTART = 50         # gmres's default restart length (the Krylov basis kept per cycle)
GMRES_STALL_CYCLES = 2     # a solve to tol stops when GMRES_STALL_CYCLES restart cycles ...
GMRES_STALL_RATIO = 0.99   # ... together lowered the relative residual by less than 1% (stagnation)


def gmres(apply: Apply, b: Tensor, max_iter: int, tol: float = 1e-6, restart: int = GMRES_RESTART,
          x0: Tensor | None = None, callback: Callable[[int, float], None] | None = None,
          warn: bool = True, fix: str | None = None, space: VectorSpace | None = None) -> SolveResult:
    """Restarted GMRES(``restart``), an independent Arnoldi process per column, for any non-singular ``A``.

    ``max_iter`` counts operator products. A solve to ``tol`` whose last ``GMRES_STALL_CYCLES`` restart cycles
    lowered the residual by less than 1% together stops there, reported as stalled.

    Parameters
    ----------
    apply : callable ``[N, K] -> [N, K]``, the product with ``A``.
    b : Tensor ``[N, K]``
    max_iter : int
    tol : float, default 1e-6
    restart : int, default 50
    x0 : Tensor ``[N, K]``, optional
    callback, warn, fix, space : as in :func:`richardson`.
    """
    space = _space(space)
    n, k = b.shape
    x = torch.zeros_like(b) if x0 is None else x0.clone()
    bn = safe_norm(b, space)
    res = SolveResult(x)
    total = 0
    tiny = torch.finfo(b.dtype).tiny ** 0.5
    cycle_ends: list[float] = []
    while total < max_iter:
        r = b - apply(x) if (total > 0 or x0 is not None) else b.clone()
        beta = space.col_norm(r)
        rel0 = float((beta / bn).max()) if k else 0.0
        if tol > 0 and rel0 < tol:
            res.converged = True
            break
        m = min(restart, max_iter - total)
        basis = [r / torch.where(beta > tiny, beta, torch.ones_like(beta))]
        h = torch.zeros(k, m + 1, m, dtype=b.dtype, device=b.device)
        y = None
        for j in range(m):
            w = apply(basis[j])
            total += 1
            for i in range(j + 1):  # modified Gram-Schmidt (in place once w is a block of its own)
                hij, w = mgs_step(w, basis[i], inplace=i > 0, space=space)
                h[:, i, j] = hij
            hn = space.col_norm(w)
            h[:, j + 1, j] = hn
            basis.append(_div(w, hn, hn > tiny))
            e1 = torch.zeros(k, j + 2, 1, dtype=b.dtype, device=b.device)
            e1[:, 0, 0] = beta
            hj = h[:, : j + 2, : j + 1]
            y = _lstsq(hj, e1)
            rel = float((LOCAL.col_norm((e1 - hj @ y).squeeze(-1).T) / bn).max())   # a small block, the same everywhere
            res.residuals.append(rel)
            stop = _ask(res, callback, total, rel)
            if not torch.isfinite(torch.tensor(rel)):
                raise FloatingPointError("gmres produced a non-finite residual")
            if (tol > 0 and rel < tol) or stop:
                break
        if y is not None:
            vj = torch.stack(basis[: y.shape[1]], dim=-1)  # [n, k, j+1]
            x = x + torch.einsum("nkj,kj->nk", vj, y.squeeze(-1))
        if tol > 0 and res.residuals and res.residuals[-1] < tol:
            res.converged = True
            break
        if res.stopped:
            break
        if tol > 0 and res.residuals:
            cycle_ends.append(res.residuals[-1])
            if len(cycle_ends) > GMRES_STALL_CYCLES and cycle_ends[-1] > GMRES_STALL_RATIO * cycle_ends[-1 - GMRES_STALL_CYCLES]:
                break   # restarted GMRES stagnates: more cycles would not reach tol (``_finish`` says so)
    res.x = x
    res.n_iter = total
    return _finish(res, tol, "gmres", warn, fix, space)


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
        A true return value stops the solve (``graphstk.spectral.solvers.time_budget``), recorded in ``stopped``.
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
        alpha = _div(rs, pq, act)
        den = alpha * beta_old * (zeta_old - zeta) + zeta_old * alpha_old * (1.0 + alpha * delta)
        zeta_new = _div(zeta * zeta_old * alpha_old, den, den.abs() > tiny)
        ratio = _div(zeta_new, zeta, zeta.abs() > tiny)
        a_s = torch.where(live, alpha * ratio, torch.zeros_like(ratio))          # [G, K]
        active = live.any(1).nonzero().flatten().tolist()   # shifts with a column still iterating
        for s in active:  # a converged shift costs nothing more (the small etas converge first)
            x[s].addcmul_(a_s[s], ps[s])
        r.addcmul_(alpha, q, value=-1.0)   # r, p: owned by this loop, updated in place (no fresh [N, K] blocks)
        rs_new = space.col_dot(r, r)
        beta = _div(rs_new, rs, act)
        rel = zeta_new.abs() * torch.sqrt(rs_new) / bn                          # [G, K] residual of each shift
        res.residuals.append(float(rel.max()) if rel.numel() else 0.0)
        live = live & (rel > tol)
        if not bool(torch.isfinite(rel).all()):
            raise FloatingPointError("multishift_cg produced a non-finite residual")
        if not bool(live.any()):
            res.converged, res.n_iter = True, j
            break
        if _ask(res, callback, j, res.residuals[-1]):
            res.n_iter = j
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
