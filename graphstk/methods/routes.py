"""How ``solver="auto"`` routes a solve (direct or iterative, sparse LU or CG, multi-shift CG), from sizes known
before it starts, with the reason ``history_`` records (docs/methods.md, "How solver="auto" decides"). The
thresholds were measured on a 2-core machine (``bench/propagation.py``, ``bench/suite.py``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import reverse_cuthill_mckee

from ..exceptions import ConvergenceError
from ..spectral.solvers import GMRES_RESTART
from ..spectral.transforms import spectrum_points
from .problem import Problem

DENSE_LIMIT = 4000  # visible points up to which "direct" inner solves may use a dense matrix
DIRECT_MAX_LABELED = 4000     # solver="auto" takes the direct solve up to n labels ...
DIRECT_MAX_ENTRIES = 2 ** 25  # ... and up to N * n entries in its dense N x n blocks (256 MiB in float64)
LU_MAX_NODES = 4000  # solver="auto": sparse LU of Q = I - eta S always up to this many visible nodes (see direct_route)
LU_MAX_ENVELOPE = 50_000_000  # ... and above it while the RCM envelope of Q holds at most this many entries (400 MB)


def auto_is_direct(prob: Problem) -> bool:
    """Whether ``solver="auto"`` takes the direct solve: a small ``n x n`` system from ``N x n`` blocks that fit."""
    return prob.n <= DIRECT_MAX_LABELED and prob.N * prob.n <= DIRECT_MAX_ENTRIES


def label_prop_route(eta: float, lambda_max: float, symmetric: bool) -> str:
    """Label-Prop's solver on a :mod:`graphstk.nn` adjacency: ``"cg"`` for an SPD ``I - eta S`` (``symmetric`` and
    ``0 < eta < 1``), ``"richardson"`` while ``0 < eta lambda_max < 1``, else ``"gmres"``."""
    if symmetric and 0 < eta < 1:
        return "cg"
    return "richardson" if 0 < eta * lambda_max < 1 else "gmres"


def cg_iterations(eta: float, tol: float = 1e-12) -> int:
    """CG's iteration bound for ``(I - eta S) x = b``: :func:`krylov_iterations` of ``kappa <= (1 + eta) / (1 - eta)``."""
    return krylov_iterations((1 + abs(eta)) / max(1 - abs(eta), 1e-300), tol)


def lu_envelope(prob: Problem) -> int:
    """Entries in the lower envelope of ``I - eta S`` in reverse Cuthill-McKee order: a bound on an SPD LU's fill
    (cached on the operator)."""
    S = prob.sparse
    if S is None:
        raise TypeError("lu_envelope needs a sparse operator")
    cached = getattr(S, "_lu_envelope", None)
    if cached is not None:
        return cached
    N = prob.N
    row, col, _ = S.coo()
    A = sp.csr_matrix((np.ones(row.numel()), (row.cpu().numpy(), col.cpu().numpy())), shape=(N, N))
    perm = reverse_cuthill_mckee(A, symmetric_mode=True)
    Ap = A[perm][:, perm].tocoo()
    first = np.arange(N)
    low = Ap.col < Ap.row
    np.minimum.at(first, Ap.row[low], Ap.col[low])
    env = int((np.arange(N) - first).sum()) + N
    S._lu_envelope = env
    return env


def direct_route(prob: Problem, eta: float, n_rhs: int) -> tuple[str, str]:
    """How ``solver="auto"`` applies ``(I - eta S)^{-1}`` to ``n_rhs`` columns: ``("lu" | "cg", reason)``.

    The sparse LU (whose fill can grow like ``N^2``) for ``N <= LU_MAX_NODES`` or when :func:`lu_envelope` bounds
    its fill by ``LU_MAX_ENVELOPE``; elsewhere CG to 1e-12 (``n_rhs`` x :func:`cg_iterations` products).
    """
    N, nnz = prob.N, prob.nnz
    if prob.space.sharded:
        return "cg", (f"the vectors are sharded over processes (N = {N}): no process holds S to factor; CG on "
                      f"I - eta S (SPD), at most {cg_iterations(eta)} products")
    if N <= LU_MAX_NODES:
        return "lu", f"N = {N} <= {LU_MAX_NODES}: the sparse LU of I - eta S is cheap even if it fills in"
    if prob.sparse is None:
        it = cg_iterations(eta)
        return "cg", (f"N = {N} > {LU_MAX_NODES} and S is not sparse: CG on I - eta S (SPD) costs at most "
                      f"{n_rhs} columns x {it} products with S")
    env = lu_envelope(prob)
    if env <= LU_MAX_ENVELOPE:
        return "lu", (f"N = {N} > {LU_MAX_NODES}, but the fill of I - eta S is bounded by its reverse Cuthill-McKee "
                      f"envelope, {env} <= {LU_MAX_ENVELOPE} entries: sparse LU")
    it = cg_iterations(eta)
    return "cg", (f"N = {N} > {LU_MAX_NODES} and the fill of a sparse LU cannot be bounded (reverse Cuthill-McKee "
                  f"envelope {env} > {LU_MAX_ENVELOPE} entries; on random graphs it grows like N^2); CG on "
                  f"I - eta S (SPD, kappa <= {(1 + eta) / (1 - eta):.3g}) costs at most {n_rhs} columns x {it} "
                  f"products with S ({nnz} nonzeros)")


MULTISHIFT_MIN_NNZ = 50_000   # nnz(S) from which multi-shift CG beats one sparse LU per eta (measured)
MULTISHIFT_MIN_SHIFTS = 4     # from MULTISHIFT_MIN_NNZ: one CG costs about as much as 2-4 LUs there
SINGLE_SHIFT_MIN_NNZ = 400_000  # from here one CG beats one LU even for a single eta (measured, see below)
MULTISHIFT_TOL = 1e-12        # relative residual of every shifted system (the LU reaches ~1e-15)


def use_multishift(prob: Problem, n_shifts: int) -> bool:
    """Whether a grid's ``(I - eta S)^{-1} E`` solves go through one multi-shift CG: from ``SINGLE_SHIFT_MIN_NNZ``,
    from ``MULTISHIFT_MIN_NNZ`` with ``MULTISHIFT_MIN_SHIFTS`` etas (CPU), or where :func:`direct_route` runs CG."""
    if prob.Y.device.type == "cpu" and prob.sparse is not None:
        nnz = prob.nnz
        if nnz >= SINGLE_SHIFT_MIN_NNZ or (nnz >= MULTISHIFT_MIN_NNZ and n_shifts >= MULTISHIFT_MIN_SHIFTS):
            return True
    if n_shifts < MULTISHIFT_MIN_SHIFTS:
        return False
    return direct_route(prob, 0.5, prob.n)[0] == "cg"


@dataclass(frozen=True)
class Work:
    """The most an iterative solve does, counted before it starts: ``products`` (calls of ``apply``), ``steps``
    (Krylov vector steps, :func:`~graphstk.spectral.solvers.mgs_step`), ``vectors`` (blocks kept), ``lstsq``
    (GMRES's least-squares problems) and ``gathers`` (basis vectors combined into ``x``)."""

    iterations: int
    products: int
    steps: int
    vectors: int = 4
    lstsq: int = 0
    gathers: int = 0
    restart: int = GMRES_RESTART

    def describe(self) -> str:
        text = f"at most {self.iterations} iterations: {self.products} operator products, {self.steps} vector steps"
        return text + (f", {self.lstsq} least-squares updates" if self.lstsq else "")


def cg_work(iterations: int, shifts: int = 1) -> Work:
    """CG (``shifts = 1``) or multi-shift CG: one product and 3 steps per iteration, 2 more per extra shift."""
    its = int(iterations)
    if shifts <= 1:
        return Work(its, its, 3 * its, vectors=4)
    return Work(its, its, its * (3 + 2 * shifts), vectors=3 + 2 * shifts)


def gmres_work(max_iter: int, restart: int = GMRES_RESTART) -> Work:
    """Restarted GMRES(``restart``) run to ``max_iter`` products: ``m (m + 1) / 2 + 3 m + 2`` steps per cycle of
    ``m``, one residual product per restart, ``m + 1`` gathered vectors (docs/methods.md)."""
    T, m = int(max_iter), max(int(restart), 1)
    full, rem = divmod(T, m)
    cycles = full + (rem > 0)

    def steps(k):
        return k * (k + 1) // 2 + 3 * k + 2
    return Work(T, T + max(cycles - 1, 0), full * steps(m) + (steps(rem) if rem else 0), vectors=m + 2,
                lstsq=T, gathers=full * (m + 1) + (rem + 1 if rem else 0), restart=m)


def describe_work(route: str, columns: int, work: Work) -> str:
    """The route ``solver="auto"`` chose and the most work it does (counted, never timed), for ``history_``."""
    return f"{route} on {columns} columns, {work.describe()}"


def spectrum_grid(prob: Problem):
    """:func:`~graphstk.spectral.transforms.spectrum_points` of ``[Problem.lambda_min, Problem.lambda_max]``."""
    return spectrum_points(prob.lambda_min, prob.lambda_max)


def symmetric_iterations(prob: Problem, transforms, betas, tol: float) -> int:
    """A bound on CG's iterations for Algorithm 2's symmetric form (``n = N``: the condition number of ``R``;
    else ``n`` more than for ``rho_max / rho_min``, by Weyl's interlacing: docs/kernels.md)."""
    grid = spectrum_grid(prob)
    its = 0
    for tr in transforms:
        rho = tr.rho(grid)
        lo, hi = float(rho.min()), float(rho.max())
        for bt in betas:
            nb = prob.n * float(bt)
            if prob.n == prob.N:
                its = max(its, krylov_iterations((prob.N * prob.lambda_max + nb * hi) / max(nb * lo, 1e-300), tol))
            else:
                its = max(its, prob.n + krylov_iterations(hi / max(lo, 1e-300), tol))
    return its


def krylov_iterations(kappa: float, tol: float) -> int:
    """The CG bound ``ceil(sqrt(kappa) / 2 * ln(2 / tol))`` for a condition number ``kappa``."""
    return int(np.ceil(np.sqrt(max(kappa, 1.0)) / 2 * np.log(2 / max(tol, 1e-300))))


def symmetric_reciprocal_ok(prob: Problem, transforms, adjoint: bool) -> bool:
    """Whether Algorithm 2 can take its symmetric form: a PSD ``S``, ``r = 1``, and ``n = N`` for an adjoint."""
    return prob.psd and all(tr.r == 1 for tr in transforms) and (not adjoint or prob.n == prob.N)


def reciprocal_route(prob: Problem, transforms, betas, solver: str, budgets, adjoint: bool, max_iter: int,
                     tol: float) -> tuple[str, str]:
    """How Algorithm 2 runs: ``("budget" | "direct" | "symmetric" | "gmres" | "richardson", reason)``.

    ``solver="auto"`` on a PSD ``S``: the direct route where it fits with some point unlabeled and
    ``N <= LU_MAX_NODES``, else CG on the symmetric form. On a non-PSD kernel: the direct route where it fits,
    else :class:`~graphstk.exceptions.ConvergenceError` before any work (docs/kernels.md).
    """
    N, n = prob.N, prob.n
    if budgets:
        return "budget", f"fixed budget T={max(budgets)}: Algorithm 2's truncated iteration"
    symmetric = symmetric_reciprocal_ok(prob, transforms, adjoint)
    if solver == "direct":
        return "direct", "requested"
    if solver == "cg":
        return ("symmetric", "requested: CG on Algorithm 2's symmetric form (S positive semidefinite)") if symmetric \
            else ("direct", "requested (CG on the SPD Q; Algorithm 2's M is not symmetric)")
    if solver in ("gmres", "richardson"):
        return solver, "requested"
    dense_ok = all(len(tr.xi) <= 2 for tr in transforms) or N <= DENSE_LIMIT
    fits = auto_is_direct(prob) and dense_ok
    if symmetric:
        if fits and n < N <= LU_MAX_NODES:
            return "direct", (f"auto: n = {n} < N = {N} <= {LU_MAX_NODES} and N n = {N * n} <= {DIRECT_MAX_ENTRIES}: "
                              f"the n x n system")
        columns = len(transforms) * len(betas) * prob.C
        its = min(int(max_iter), symmetric_iterations(prob, transforms, betas, tol))
        return "symmetric", ("auto: S is positive semidefinite, so Algorithm 2's M is self-adjoint and positive in "
                             "the inner product of S: CG on its symmetric form; "
                             + describe_work("CG", columns, cg_work(its)))
    if fits:
        return "direct", (f"auto: n = {n} <= {DIRECT_MAX_LABELED} labels and N n = {N * n} <= {DIRECT_MAX_ENTRIES}: "
                          f"the n x n system")
    if prob.psd:
        return "gmres", ("auto: S is positive semidefinite, so M's eigenvalues are real and positive (M is similar to "
                         "the symmetric R of Prop. 10), but the symmetric form needs r = 1 and, for an adjoint solve, "
                         "n = N; " + describe_work("GMRES", len(transforms) * len(betas) * prob.C, gmres_work(max_iter)))
    raise ConvergenceError(
        f"STKR Algorithm 2 to a tolerance on a kernel that is not positive semidefinite (N = {N}, n = {n}): the "
        f"direct n x n route does not fit (n <= {DIRECT_MAX_LABELED} and N n = {N * n} <= {DIRECT_MAX_ENTRIES} "
        "needed), and no iterative route is guaranteed to converge: Eq. 20's M can have eigenvalues with "
        "non-positive real part (GMRES stalls, no Richardson step converges). Use the positive semidefinite lazy "
        "graph kernel (normalization='lazy', or GraphKernel(..., normalization='lazy')), on which CG converges; "
        "or a fixed budget num_iter=T (the paper's truncated iteration); or solver='gmres' to try anyway")

