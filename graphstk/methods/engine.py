"""The one door into the STKR / Label-Prop engine: :func:`solve`, for the estimators, the runner, the
:mod:`graphstk.nn` modules and distributed runs. It takes transform objects of one family (the transform class's
``family``): ``LabelPropagationFilter`` (Eq. 22, :mod:`~graphstk.methods.labelprop`), ``Polynomial`` (Algorithms 1
and 3, :mod:`~graphstk.methods.polynomial`), ``ReciprocalPolynomial`` / ``InverseLaplacian`` (Algorithm 2, Eq. 20,
:mod:`~graphstk.methods.reciprocal`) and ``TopD`` (Eqs. 8-9, :mod:`~graphstk.methods.topd`).
"""
from __future__ import annotations

from typing import Callable, Sequence

from ..spectral.solvers import time_budget
from ..spectral.transforms import LabelPropagationFilter, Polynomial, ReciprocalPolynomial, TopD, Transform
from .labelprop import label_propagation
from .polynomial import stkr_polynomial
from .problem import EngineResult, Problem
from .reciprocal import stkr_reciprocal
from .topd import stkr_topd

__all__ = ["solve", "transform_family", "one_family"]

#: the engine of each transform family (the class a transform names as its ``family``)
ENGINES = {LabelPropagationFilter: label_propagation, Polynomial: stkr_polynomial,
           ReciprocalPolynomial: stkr_reciprocal, TopD: stkr_topd}


def transform_family(transform: Transform) -> type:
    """The engine family of ``transform`` (its class's ``family``); ``TypeError`` for a transform no engine solves."""
    family = getattr(transform, "family", None)
    if family not in ENGINES:
        raise TypeError(f"the engine solves LabelPropagationFilter, Polynomial, ReciprocalPolynomial / "
                        f"InverseLaplacian or TopD transforms, got {type(transform).__name__}")
    return family


def one_family(transforms: Sequence[Transform], what: str) -> type:
    """The family of every transform of ``transforms`` (``ValueError`` naming the others, in ``what``'s words)."""
    family = transform_family(transforms[0])
    odd = [type(t).__name__ for t in transforms if transform_family(t) is not family]
    if odd:
        raise ValueError(f"all transforms of one {what} must be of one family ({family.__name__}); got {odd}")
    return family


def solve(problem: Problem, transforms: Sequence[Transform], betas: Sequence[float] = (), *,
          budgets: Sequence[int] = (), solver: str = "auto", max_iter: int = 1000, tol: float = 1e-6,
          step_size: str | float = "auto", callback: Callable[[int, float], None] | None = None,
          max_seconds: float | None = None, unstable: str = "raise", adjoint: bool = False,
          eigen_cache=None) -> EngineResult:
    """Solve ``problem`` for every ``(transform, beta)`` pair of a grid in one batched (multi-right-hand-side) solve.

    Parameters
    ----------
    problem : Problem
        Built by :func:`~graphstk.methods.problem.make_problem` from any square kernel operator.
    transforms : sequence of Transform
        One family (see the module docstring); at least one.
    betas : sequence of float
        Ridge parameters ``beta_n`` of Eq. 7 (ignored, and may be empty, for Label-Prop).
    budgets : sequence of int, default ()
        Fixed iteration counts ``T`` (the paper's transductive grid); empty: solve to ``tol``.
    solver : {"auto", "richardson", "cg", "gmres", "direct"}, default "auto"
        ``"auto"`` picks the route from sizes and counted work only (:mod:`graphstk.methods.routes`).
    max_iter, tol : int, float
        Iteration cap and relative residual of a solve to tolerance.
    step_size : "auto" | "paper" | float
        Richardson step of Algorithms 1 and 2 (:func:`~graphstk.methods.steps.richardson_step`).
    callback : callable ``(iteration, relative residual)``, optional
        Called by the iterative solvers after every iteration (progress display).
    max_seconds : float, optional
        A time budget the caller asks for: an iterative solve stops after this many seconds and its
        history says so (``converged=False``). ``None`` (default): no time limit.
    unstable : {"raise", "run"}, default "raise"
        Algorithm 2 with ``step_size="auto"`` where no Richardson step provably converges
        (:func:`~graphstk.methods.steps.reciprocal_step`): refuse before iterating, or run a fixed budget anyway
        (the paper's truncated iteration) with the proof in the history.
    adjoint : bool, default False
        Solve the transposed system (an implicit gradient's, :mod:`graphstk.nn.autograd`): Label-Prop's
        ``I - eta S^T``, Algorithm 1 / 3's own (symmetric) system, Algorithm 2's ``M^T``; not for TopD.
    eigen_cache : :class:`~graphstk.spectral.EigenCache`, optional
        TopD: eigenpairs already computed for the same operator; other families ignore it.

    Returns
    -------
    EngineResult
        ``points``: one :class:`~graphstk.methods.problem.GridPoint` per ``(transform, beta, T)``, in the order of
        ``transforms``, then ``betas``, then ``budgets`` (ascending, ``None`` for a solve to tolerance), with
        ``h`` ``[N, C]`` (scores of ``x``: ``problem.rows(x) @ h``) and ``x``; ``history``: the solves that ran.
    """
    transforms = list(transforms)
    if not transforms:
        raise ValueError("solve needs at least one transform")
    family = one_family(transforms, "solve")
    betas = [float(b) for b in betas] if family.ridge else []
    if family.ridge and not betas:
        raise ValueError(f"{family.__name__} needs at least one ridge parameter beta")
    if adjoint and family is TopD:
        raise ValueError("adjoint=True: TopD (kernel PCA + ridge probe) is not one linear solve and has no "
                         "adjoint here")
    opts = {LabelPropagationFilter: dict(adjoint=adjoint), Polynomial: dict(step_size=step_size),
            ReciprocalPolynomial: dict(step_size=step_size, unstable=unstable, adjoint=adjoint),
            TopD: dict(eigen_cache=eigen_cache)}[family]
    if family is not TopD:   # kernel PCA is one eigendecomposition: no solver options
        opts.update(solver=solver, max_iter=int(max_iter), tol=float(tol), budgets=sorted(int(t) for t in budgets),
                    callback=time_budget(callback, max_seconds))
    res = ENGINES[family](problem, transforms, betas, **opts)
    at = {id(t): i for i, t in enumerate(transforms)}
    res.points.sort(key=lambda p: (at[id(p.transform)], betas.index(p.beta) if betas else 0,
                                   -1 if p.T is None else p.T))
    return res
