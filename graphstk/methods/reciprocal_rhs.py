"""Algorithm 2's direct route (Zhai et al., Eq. 20) for right-hand sides other than ``[Y; 0]``.

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
from __future__ import annotations

from typing import Sequence

from torch import Tensor

from ..spectral.transforms import ReciprocalPolynomial
from .problem import Problem, _sym_solve_path

__all__ = ["direct_other_rhs"]


def _powers(prob: Problem, x: Tensor, k: int) -> Tensor:
    """``S^k x``."""
    for _ in range(k):
        x = prob.S(x)
    return x


def direct_other_rhs(prob: Problem, tr: ReciprocalPolynomial, X: Tensor, Z: Tensor, B: Tensor,
                     betas: Sequence[float], route: str, adjoint: bool) -> list[Tensor]:
    """``theta`` (or, with ``adjoint``, ``lambda``) ``[N, C]`` per ridge ``beta`` for the right-hand side
    ``prob.b()`` (module docstring); ``route``: how ``Q^{-1}`` is applied (``"lu"``, ``"dense"``, ``"cg"``)."""
    from .propagation import _reciprocal_direct

    N, n, r, R = prob.N, prob.n, tr.r, prob.b()
    if adjoint:
        W, _ = _reciprocal_direct(prob, tr, R, route)
        SZ = prob.S(Z)
        mus = _sym_solve_path(B, float(N), [n * bt for bt in betas], W[prob.train],
                              "STKR (Algorithm 2, direct adjoint)")
        return [(W - N * (SZ @ mu)) / (n * bt) for bt, mu in zip(betas, mus)]
    free = R.clone()
    free[prob.train] = 0
    if not bool(free.any()):
        return [X @ a for a in _sym_solve_path(B, float(N), [n * bt for bt in betas], R[prob.train],
                                               "STKR (Algorithm 2, direct)")]
    free = _reciprocal_direct(prob, tr, free, route)[0]
    lab = _powers(prob, free, r)[prob.train]
    out = []
    for bt in betas:
        u = _sym_solve_path(B, float(N), [n * bt], R[prob.train] - N * lab / (n * bt), "STKR (Algorithm 2, direct)")[0]
        out.append(X @ u + free / (n * bt))
    return out
