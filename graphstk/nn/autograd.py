"""Differentiation through the :mod:`graphstk.nn` solves: :func:`implicit_solve` gives ``x = A(theta)^{-1} b``
the implicit gradient (adjoint ``A^T lambda = g``; ``dL/db = lambda``, ``dL/dtheta = -lambda^T (dA/dtheta) x``,
one vector-Jacobian product of ``A(theta) x``; memory of one solve), and :func:`engine_system` the system whose
forward and adjoint solves are both one call of :func:`graphstk.methods.engine.solve`.
"""
from __future__ import annotations

from typing import Callable, Sequence

import torch
from torch import Tensor
from torch.autograd.function import once_differentiable

from ..methods.engine import solve as engine_solve

__all__ = ["implicit_solve", "LinearSystem", "engine_system"]


class LinearSystem:
    """A linear system ``A(theta) x = b`` for :func:`implicit_solve`.

    Parameters
    ----------
    apply : callable ``(x, *theta) -> A(theta) x``
        Written in differentiable torch operations (it is differentiated once, in the backward).
    solve : callable ``(rhs, transpose) -> x``
        Solves ``A x = rhs`` (``transpose=False``) or ``A^T x = rhs`` (``transpose=True``) with
        ``theta`` fixed, without grad (any engine: Richardson, CG, GMRES, a fixed budget).
    """

    def __init__(self, apply: Callable[..., Tensor], solve: Callable[[Tensor, bool], Tensor]):
        self.apply, self.solve = apply, solve


def engine_system(problem, transforms, betas, apply: Callable[..., Tensor], labeled_rhs: bool,
                  **options) -> LinearSystem:
    """The :class:`LinearSystem` whose forward and adjoint solves are each one call of the engine on ``problem``
    with the right-hand side as its targets (``adjoint=True`` for the adjoint); ``system.history`` holds the
    engine's history of the last solve.

    Parameters
    ----------
    problem : graphstk.methods.problem.Problem
    transforms, betas : one transform (a float-valued copy of the module's) and its ridges
    apply : callable ``(x, *theta) -> A(theta) x``
        The same system in differentiable torch operations (for the parameters' vector-Jacobian product).
    labeled_rhs : bool
        ``True``: the right-hand side is ``Y`` ``[n, C]`` (Algorithms 1 / 3); ``False``: a block on
        every point ``[N, C]`` (Label-Prop, Algorithm 2).
    **options : the engine's ``solver``, ``tol``, ``max_iter``, ``step_size``.
    """

    def solve(rhs: Tensor, transpose: bool) -> Tensor:
        prob = problem.with_targets(Y=rhs) if labeled_rhs else problem.with_targets(rhs=rhs)
        res = engine_solve(prob, transforms, betas, adjoint=transpose, **options)
        system.history = res.history
        return res.points[0].x

    system = LinearSystem(apply, solve)
    system.history = []
    return system


class _Implicit(torch.autograd.Function):
    @staticmethod
    def forward(ctx, system: LinearSystem, b: Tensor, *theta: Tensor) -> Tensor:
        x = system.solve(b, False)
        ctx.system = system
        ctx.save_for_backward(x, *theta)
        return x

    @staticmethod
    @once_differentiable
    def backward(ctx, g: Tensor):
        x, *theta = ctx.saved_tensors
        lam = ctx.system.solve(g.contiguous(), True)
        need = [i for i in range(len(theta)) if ctx.needs_input_grad[2 + i]]
        grads: list[Tensor | None] = [None] * len(theta)
        if need:
            with torch.enable_grad():
                ps = [t.detach().requires_grad_(i in need) for i, t in enumerate(theta)]
                ax = ctx.system.apply(x, *ps)
                got = torch.autograd.grad(ax, [ps[i] for i in need], -lam, allow_unused=True)
            for i, gi in zip(need, got):
                grads[i] = gi
        return (None, lam if ctx.needs_input_grad[1] else None, *grads)


def implicit_solve(system: LinearSystem, b: Tensor, theta: Sequence[Tensor]) -> Tensor:
    """``x = A(theta)^{-1} b`` with the implicit gradient described in the module docstring.

    Parameters
    ----------
    system : LinearSystem
    b : Tensor ``[N, C]``
    theta : sequence of Tensor
        The tensors ``A`` depends on (those that require grad receive one).

    Returns
    -------
    Tensor ``[N, C]``, differentiable in ``b`` and every ``theta`` that requires grad.
    """
    theta = [t if isinstance(t, Tensor) else torch.as_tensor(t, dtype=b.dtype, device=b.device) for t in theta]
    if torch.is_grad_enabled() and (b.requires_grad or any(t.requires_grad for t in theta)):
        return _Implicit.apply(system, b, *theta)
    with torch.no_grad():
        return system.solve(b, False)
