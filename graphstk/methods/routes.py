"""How ``solver="auto"`` routes a solve: direct or iterative, sparse LU or CG, one CG per shift
or one multi-shift CG. Each decision is made from sizes known before the solve starts and
returns the reason that the fit's ``history_`` records.

The thresholds were measured on this project's 2-core reference machine (float64, 2 threads);
``bench/propagation.py`` and ``bench/suite.py`` rerun the measurements.
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
    """Whether ``solver="auto"`` (without a fixed budget) uses the direct solve: the ``n x n``
    system is small and the ``N x n`` blocks it is built from fit in memory."""
    return prob.n <= DIRECT_MAX_LABELED and prob.N * prob.n <= DIRECT_MAX_ENTRIES


def label_prop_route(eta: float, lambda_max: float, symmetric: bool) -> str:
    """The solver for Label-Prop's ``(I - eta S) Y = b`` on a propagation matrix taken as it is (a
    :mod:`graphstk.nn` adjacency): ``"cg"`` when ``I - eta S`` is symmetric positive definite (``symmetric``:
    ``S`` symmetric with its spectrum in ``[-1, 1]``, e.g. ``gcn_norm``-ed, and ``0 < eta < 1``),
    ``"richardson"`` while ``0 < eta lambda_max < 1`` (Zhou et al.'s series converges), else ``"gmres"``."""
    if symmetric and 0 < eta < 1:
        return "cg"
    return "richardson" if 0 < eta * lambda_max < 1 else "gmres"


def cg_iterations(eta: float, tol: float = 1e-12) -> int:
    """Bound on the CG iterations for ``(I - eta S) x = b``: its eigenvalues lie in
    ``[1 - eta, 1 + eta]`` (``|lambda(S)| <= 1``), so ``kappa <= (1 + eta) / (1 - eta)`` and CG
    needs at most :func:`krylov_iterations` of that ``kappa``."""
    return krylov_iterations((1 + abs(eta)) / max(1 - abs(eta), 1e-300), tol)


def lu_envelope(prob: Problem) -> int:
    """Entries in the lower envelope (profile) of ``I - eta S`` in reverse Cuthill-McKee order.

    A symmetric positive definite matrix factored in that order fills in only inside its
    envelope, so this is an upper bound on the fill a sparse factorization needs (SuperLU's
    minimum-degree ordering, which :func:`~graphstk.methods.linsolve.spd_solve` uses, fills in far less).
    ``O(nnz)`` to compute, cached on the operator.
    """
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

    A sparse LU's fill can grow like ``N^2`` (a random graph of 20k nodes and average degree 20:
    213 s and 2.45 GB; 2M nodes: not finished after 600 s), so it is bounded before it is
    computed: the LU is taken for ``N <= LU_MAX_NODES`` (a dense factor is cheap there) or when
    :func:`lu_envelope` bounds the fill by ``LU_MAX_ENVELOPE`` entries (DBLP: 3.1e7). Elsewhere CG
    on the symmetric positive definite ``I - eta S`` runs, whose cost is known in advance:
    ``n_rhs`` columns x :func:`cg_iterations` products with ``S`` (``O(nnz)`` each, memory
    ``O(N n_rhs)``), solved to a relative residual of 1e-12. CG stops once the residual is that
    small, so nodes many hops from every label keep a score of exactly 0 where the LU gives the
    tiny ``eta^k`` terms (visible for ``eta <= 0.1``): the LU is preferred whenever it is bounded.
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
    """Whether the ``(I - eta S)^{-1} E`` solves of a grid (inductive SP-Lap, direct route, ``solver="auto"``)
    go through one multi-shift CG rather than one solve per ``eta``.

    CG costs a number of products with ``n`` columns whatever the fill and the number of shifts, while
    the LU's fill grows much faster than ``nnz(S)`` (the thresholds come from ``bench/propagation.py``).
    Multi-shift is taken for at least ``MULTISHIFT_MIN_SHIFTS`` etas when ``nnz(S) >= MULTISHIFT_MIN_NNZ``
    (CPU, where the LU would run), for any number of etas from ``SINGLE_SHIFT_MIN_NNZ``, or when
    :func:`direct_route` would run CG for each eta anyway: one Krylov sequence then replaces one CG per eta.
    """
    if prob.Y.device.type == "cpu" and prob.sparse is not None:
        nnz = prob.nnz
        if nnz >= SINGLE_SHIFT_MIN_NNZ or (nnz >= MULTISHIFT_MIN_NNZ and n_shifts >= MULTISHIFT_MIN_SHIFTS):
            return True
    if n_shifts < MULTISHIFT_MIN_SHIFTS:
        return False
    return direct_route(prob, 0.5, prob.n)[0] == "cg"


@dataclass(frozen=True)
class Work:
    """The most an iterative solve does, counted before it starts.

    ``products``: calls of the solver's ``apply`` (each holds the products with ``S`` of one
    iteration); ``steps``: Krylov vector steps, each one column dot and one update ``w - h v``
    (:func:`~graphstk.spectral.solvers.mgs_step`) on ``[N, columns]`` blocks (``[n, columns]`` for
    Algorithm 1's ``n x n`` system); ``vectors``: how many such blocks the solver keeps (its
    working set, swept when a step is timed); ``lstsq``: GMRES's small least-squares problems, each
    at most ``[columns, restart + 1, restart]``; ``gathers``: basis vectors combined into ``x``
    (GMRES's ``x += V y`` at the end of each cycle).
    """

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
    """CG (``shifts = 1``) or multi-shift CG: per iteration one product, two column dots and three
    updates (three steps), and two updates per shift beyond the seed system's."""
    its = int(iterations)
    if shifts <= 1:
        return Work(its, its, 3 * its, vectors=4)
    return Work(its, its, its * (3 + 2 * shifts), vectors=3 + 2 * shifts)


def gmres_work(max_iter: int, restart: int = GMRES_RESTART) -> Work:
    """Restarted GMRES(``restart``) run to ``max_iter`` products, as
    :func:`~graphstk.spectral.solvers.gmres` runs it: a cycle of ``m`` iterations orthogonalises
    iteration ``j`` against ``j + 1`` basis vectors (``m (m + 1) / 2`` steps), normalises every new
    vector (a norm, a division and a guard: ``3 m``), gathers ``x += V y`` (``m + 1`` vectors) and,
    from the second cycle on, starts from one more product for the residual (``+ 2`` steps for its
    norm and the first basis vector). The orthogonalisation is
    ``(m + 1) / 2`` steps per product on average (25.5 for ``restart = 50``): on a sparse graph it
    costs more than the product with ``S``. Restarted GMRES on Algorithm 2's non-normal ``M`` has no
    iteration bound from the conditioning, so ``max_iter`` is the count (the stagnation stop can
    only end it sooner)."""
    T, m = int(max_iter), max(int(restart), 1)
    full, rem = divmod(T, m)
    cycles = full + (rem > 0)

    def steps(k):
        return k * (k + 1) // 2 + 3 * k + 2
    return Work(T, T + max(cycles - 1, 0), full * steps(m) + (steps(rem) if rem else 0), vectors=m + 2,
                lstsq=T, gathers=full * (m + 1) + (rem + 1 if rem else 0), restart=m)


def describe_work(route: str, columns: int, work: Work) -> str:
    """The route ``solver="auto"`` chose and the most work it does, as text for the fit's
    ``history_``: counted from sizes only, never timed, so the same inputs give the same text (and
    the same route) on an idle or a busy machine. Nothing is refused here: a time limit is the
    caller's choice (``max_seconds=``), and long solves report progress through their callback."""
    return f"{route} on {columns} columns, {work.describe()}"


def spectrum_grid(prob: Problem):
    """:func:`~graphstk.spectral.transforms.spectrum_points` of the interval that holds the spectrum of ``S``:
    ``[0, lambda_max]`` for a positive semidefinite ``S`` (:attr:`Problem.psd`), else ``[-lambda_max, lambda_max]``."""
    return spectrum_points(prob.lambda_min, prob.lambda_max)


def symmetric_iterations(prob: Problem, transforms, betas, tol: float) -> int:
    """A bound on CG's iterations for Algorithm 2's symmetric form on a positive semidefinite ``S``
    with ``r = 1`` (:func:`~graphstk.methods.reciprocal.stkr_reciprocal`).

    In the inner product of ``S``, ``M``'s eigenvalues are those of the symmetric
    ``R = n beta Q + N S^{1/2} P S^{1/2}`` (``P`` the labeled rows, ``Q = rho(S)``). With every point
    labeled (``P = I``) they lie in ``[n beta rho_min, N lambda + n beta rho_max]``. Otherwise
    ``N S^{1/2} P S^{1/2}`` has rank ``n``, so (Weyl's interlacing) all but the ``n`` largest
    eigenvalues of ``R`` lie in ``[n beta rho_min, n beta rho_max]``, and CG needs at most ``n``
    iterations more than it needs for a condition number ``rho_max / rho_min`` (``rho`` on
    ``[0, lambda]``). The bound is counted from sizes; the measured counts are far below it (the
    ``n`` large eigenvalues cluster near ``N [S]_aa``)."""
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
    """Whether Algorithm 2 can take its symmetric form (:func:`~graphstk.methods.reciprocal.stkr_reciprocal`):
    ``S`` positive semidefinite by construction, ``r = 1``, and for an adjoint solve every point labeled
    (``n = N``, where ``M`` itself is symmetric)."""
    return prob.psd and all(tr.r == 1 for tr in transforms) and (not adjoint or prob.n == prob.N)


def reciprocal_route(prob: Problem, transforms, betas, solver: str, budgets, adjoint: bool, max_iter: int,
                     tol: float) -> tuple[str, str]:
    """How Algorithm 2 runs: ``("budget" | "direct" | "symmetric" | "gmres" | "richardson", reason)``.

    ``"symmetric"`` is CG on Algorithm 2's symmetric form (a positive semidefinite ``S``, ``r = 1``):
    its iterations are bounded by :func:`symmetric_iterations`. ``solver="auto"`` takes the direct
    ``n x n`` route on a positive semidefinite ``S`` only where it fits (:func:`auto_is_direct`), some
    point is unlabeled, and ``N <= LU_MAX_NODES`` (the sparse LU of ``Q`` is cheap there, and one
    eigendecomposition serves every ``beta`` of a grid); elsewhere one CG solve on the symmetric form,
    so every point labeled (``n = N``, a GNN layer) never forms an ``n x n`` system. On a kernel that is not positive
    semidefinite no iterative route is guaranteed to converge (``M`` can have eigenvalues with
    non-positive real part): ``"auto"`` takes the direct route where it fits and otherwise refuses
    before any work (:class:`~graphstk.exceptions.ConvergenceError`), naming the routes that converge.
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

