"""How ``solver="auto"`` routes a solve: direct or iterative, sparse LU or CG, one CG per shift
or one multi-shift CG. Each decision is made from sizes known before the solve starts and
returns the reason that the fit's ``history_`` records.

The thresholds were measured on this project's 2-core reference machine (float64, 2 threads);
``bench/propagation.py`` and ``bench/suite.py`` rerun the measurements.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

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


def cg_iterations(eta: float, tol: float = 1e-12) -> int:
    """Bound on the CG iterations for ``(I - eta S) x = b``: its eigenvalues lie in
    ``[1 - eta, 1 + eta]`` (``|lambda(S)| <= 1``), so ``kappa <= (1 + eta) / (1 - eta)`` and CG
    needs at most ``ceil(sqrt(kappa) / 2 * ln(2 / tol))`` iterations."""
    kappa = (1 + abs(eta)) / max(1 - abs(eta), 1e-300)
    return int(np.ceil(np.sqrt(kappa) / 2 * np.log(2 / tol)))


def lu_envelope(prob: Problem) -> int:
    """Entries in the lower envelope (profile) of ``I - eta S`` in reverse Cuthill-McKee order.

    A symmetric positive definite matrix factored in that order fills in only inside its
    envelope, so this is an upper bound on the fill a sparse factorization needs (SuperLU's
    minimum-degree ordering, which :func:`_spd_solve` uses, fills in far less on the benchmark
    graphs). ``O(nnz)`` to compute, cached on the operator: Cora 5.8e5, DBLP 3.1e7, a random graph of
    20k nodes and average degree 20 1.6e8 (where the LU took 213 s and 2.45 GB).
    """
    S = prob.sparse
    if S is None:
        raise TypeError("lu_envelope needs a sparse operator")
    cached = getattr(S, "_lu_envelope", None)
    if cached is not None:
        return cached
    from scipy.sparse.csgraph import reverse_cuthill_mckee

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

    Measured on the select views of seeds 0 and 1 (8 etas of Appendix D, ``E`` with n columns,
    2 threads, idle machine), LU per eta vs multi-shift CG: Cora
    (nnz(S) 10.6k) 0.2-0.3 s vs 0.4-0.5 s, CiteSeer (9.1k) 0.1-0.2 s vs 0.8-0.9 s, PubMed (88.6k)
    3.3-3.4 s vs 2.2-2.6 s, DBLP (106k, LU fill 4.8M) 5.5-6.2 s vs 4.1-4.4 s, Photo (238k)
    4.7-5.1 s vs 2.4-2.9 s, CS (164k) 29.5-32.1 s vs 24.2-24.5 s, Computers (492k, fill 13M)
    about 3x. CG costs about 170-400 products with ``n`` columns whatever the fill and the
    number of shifts; the LU's fill grows much faster than ``nnz(S)`` on these graphs. Multi-shift is
    taken for at least ``MULTISHIFT_MIN_SHIFTS`` etas when ``nnz(S) >= MULTISHIFT_MIN_NNZ`` (CPU, where
    the LU would run), for any number of etas from ``SINGLE_SHIFT_MIN_NNZ`` (Computers' final view, one
    eta, seeds 0-1: 1.3-1.6 s against 4.1-4.2 s for the LU at eta = 0.9, 3.2-4.2 s against 4.2 s at
    eta = 0.999999; DBLP's single LU, 0.7 s, stays), or when :func:`direct_route` would run CG for
    each eta anyway (the LU's fill is unbounded): one Krylov sequence then replaces one CG per eta.
    """
    if prob.Y.device.type == "cpu" and prob.sparse is not None:
        nnz = prob.nnz
        if nnz >= SINGLE_SHIFT_MIN_NNZ or (nnz >= MULTISHIFT_MIN_NNZ and n_shifts >= MULTISHIFT_MIN_SHIFTS):
            return True
    if n_shifts < MULTISHIFT_MIN_SHIFTS:
        return False
    return direct_route(prob, 0.5, prob.n)[0] == "cg"


CHEAP_WORK = 1e10          # nnz x columns x products below which no estimate is timed (seconds at most)
AUTO_MAX_SECONDS = 600.0   # solver="auto" refuses an iterative solve estimated above this (GRAPHSTK_AUTO_MAX_SECONDS)


def _timed(fn) -> float:
    import time

    import torch

    t0 = time.perf_counter()
    fn()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return time.perf_counter() - t0


def estimate_seconds(prob: Problem, columns: int, products: int, krylov: int = 0) -> float:
    """Seconds an iterative solve of ``products`` products with ``S`` on ``columns`` columns will take,
    from one timed product and one timed vector update on this machine (``krylov``: vector
    updates per product, e.g. GMRES's orthogonalisation against up to ``restart`` vectors)."""
    import torch

    x = torch.zeros(prob.N, max(int(columns), 1), dtype=prob.Y.dtype, device=prob.Y.device)
    t_prod = min(_timed(lambda: prob.S(x)) for _ in range(2))
    t_axpy = min(_timed(lambda: x.add_(x, alpha=0.5)) for _ in range(2)) if krylov else 0.0
    return products * (t_prod + krylov * t_axpy)


def check_affordable(prob: Problem, route: str, columns: int, products: int, krylov: int = 0) -> str:
    """Refuse an iterative solve that ``solver="auto"`` chose when its estimated time
    (:func:`estimate_seconds`) exceeds ``AUTO_MAX_SECONDS`` (or ``$GRAPHSTK_AUTO_MAX_SECONDS``); return the
    estimate as text for the fit's history otherwise.

    The estimate is an upper bound on the work (``products`` is the iteration cap, or the CG
    bound from the conditioning where it is known): a refused solve might have converged sooner,
    and the message says which cheaper settings to use.
    """
    import os

    cap = float(os.environ.get("GRAPHSTK_AUTO_MAX_SECONDS", AUTO_MAX_SECONDS))
    if prob.nnz * columns * products * (1 + krylov) < CHEAP_WORK:
        return f"{route}: at most {products} products with S on {columns} columns"
    secs = estimate_seconds(prob, columns, products, krylov)
    what = f"{route}: at most {products} products with S on {columns} columns, estimated {secs:.0f} s"
    if secs > cap:
        raise ValueError(f"solver='auto' would run {what} (N = {prob.N} points, n = {prob.n} labels, nnz(S) = "
                         f"{prob.nnz}), above the {cap:.0f} s cap; set num_iter= for a fixed budget (the paper's T), "
                         "lower max_iter=, use fewer labeled points or grid points, or raise "
                         "GRAPHSTK_AUTO_MAX_SECONDS to run it anyway")
    return what
