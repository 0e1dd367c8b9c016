"""The linear solves the engine families share: an iterative solver by name (Richardson, CG, GMRES of
:mod:`graphstk.spectral.solvers`) and ``(I - eta S)^{-1}`` (Label-Prop's Eq. 22, the inverse
Laplacian's ``Q`` in Eq. 20) by sparse LU, a dense solve or CG, as :mod:`graphstk.methods.routes` decides."""
from __future__ import annotations

import scipy.sparse as sp
import scipy.sparse.linalg as spla
import torch
from torch import Tensor

from ..spectral.solvers import SolveResult, cg, gmres, richardson
from .problem import SOLVERS, Problem
from .routes import DENSE_LIMIT, cg_iterations

__all__ = ["AUTO_FIX", "iterate", "spd_solve"]

# the advice of a solve that solver='auto' chose: naming 'auto' again would send the user in a circle
AUTO_FIX = ("solver='auto' chose this route from the problem's sizes; pass solver='direct' (the exact solve; its "
            "memory is checked before it starts), a larger max_iter, or a fixed budget (num_iter=T, the paper's "
            "protocol)")


def iterate(solver: str, apply, b, max_iter, tol, gamma, callback=None, step=None, fix=None, space=None,
            snapshots=()) -> SolveResult:
    """Run the iterative ``solver`` (``"richardson"`` with step ``gamma``, ``"cg"``, ``"gmres"``) on ``apply``."""
    if solver == "richardson":
        return richardson(apply, b, gamma, max_iter, tol, callback=callback, step=step, fix=fix, space=space,
                          snapshots=snapshots)
    if solver == "cg":
        return cg(apply, b, max_iter, tol, callback=callback, fix=fix, space=space, snapshots=snapshots)
    if solver == "gmres" and not snapshots:
        return gmres(apply, b, max_iter, tol, callback=callback, fix=fix, space=space)
    if snapshots:
        raise ValueError(f"a fixed iteration budget T needs solver 'richardson' or 'cg', got {solver!r}")
    raise ValueError(f"unknown solver {solver!r}; choose one of {SOLVERS}")


def spd_solve(prob: Problem, rhs: Tensor, eta: float, route: str) -> tuple[Tensor, int]:
    """``(I - eta S)^{-1} rhs`` by ``route`` (:func:`~graphstk.methods.routes.direct_route`); returns
    ``(X, CG iterations)``.

    ``"lu"``: sparse LU on CPU (dense solve / CG on accelerators or without a sparsity pattern);
    ``"cg"``: CG to a relative residual of 1e-12 (the matrix is SPD with ``kappa <= (1 + eta)/(1 - eta)``).
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
        return spd_solve(prob, rhs, eta, "cg")
    row, col, val = prob.sparse.coo()
    Ssp = sp.csc_matrix((val.cpu().numpy(), (row.cpu().numpy(), col.cpu().numpy())), shape=(N, N))
    # a symmetric fill-reducing ordering: ~10x less fill than the default COLAMD on citation graphs
    lu = spla.splu((sp.identity(N, format="csc") - eta * Ssp).tocsc(), permc_spec="MMD_AT_PLUS_A",
                   options=dict(SymmetricMode=True))
    return torch.as_tensor(lu.solve(rhs.detach().cpu().numpy()), dtype=rhs.dtype, device=rhs.device), 0
