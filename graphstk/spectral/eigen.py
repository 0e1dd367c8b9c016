"""Eigenvalue tools: the largest eigenvalue of an operator, the top-``d`` eigenpairs of a sparse
symmetric matrix for kernel PCA (STKR Eq. 8), component by component and without a dense ``N x N``
matrix, and the graph Laplacian's eigenpairs with the diffusion kernel ``exp(-tau L)`` (Walder et al.,
Sec. 7.2), and the torch block eigensolver (Chebyshev-filtered subspace iteration, Zhou and Saad) with
warm starts. The routes and the Chebyshev filter are described in docs/operators.md.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Callable

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import torch
from scipy.sparse.csgraph import connected_components
import scipy.sparse.linalg as spla
from scipy.sparse.linalg import eigsh
from torch import Tensor

from .._hashing import content_hash
from ..memory import check_allocation, memory_limit
from ..operators.base import KernelOperator, SparseOperator, SpectralKernelOperator
from ..operators.graph import check_edge_index, normalized_adjacency


def power_iteration(op: KernelOperator, num_iter: int = 50, seed: int = 0, shift: float | None = None) -> float:
    """Estimate the largest (algebraic) eigenvalue of a symmetric operator.

    Power iteration on ``op + shift I`` (``shift`` default: ``1.01`` times :func:`spectral_radius`, making
    it PSD); returns the Rayleigh quotient minus the shift. ``num_iter``: iterations (default 50);
    ``seed``: seed of the random start vector.
    """
    n = op.shape[0]
    if n == 0:
        return 0.0
    if shift is None:
        shift = 1.01 * spectral_radius(op, num_iter=num_iter, seed=seed)
    g = torch.Generator(device="cpu").manual_seed(seed)
    v = torch.randn(n, 1, generator=g, dtype=op.dtype).to(op.device)
    v = v / v.norm()
    lam = 0.0
    for _ in range(num_iter):
        w = op @ v + shift * v
        lam = float((v * w).sum())
        nrm = w.norm()
        if nrm == 0:
            return -shift
        v = w / nrm
    return lam - shift


def spectral_radius(op: KernelOperator, num_iter: int = 50, seed: int = 0) -> float:
    """Estimate ``max |lambda|`` of a symmetric operator: power iteration on ``op @ op`` (PSD).

    ``op``: the operator (a :class:`~graphstk.operators.SparseOperator` gets the exact Gershgorin bound instead);
    ``num_iter``: iterations (default 50); ``seed``: seed of the random start vector.
    """
    n = op.shape[0]
    if isinstance(op, SparseOperator):  # exact upper bound from absolute row sums (Gershgorin)
        row, _, val = op.coo()
        return float(torch.zeros(n, dtype=op.dtype, device=op.device).index_add_(0, row, val.abs()).max()) if n else 0.0
    g = torch.Generator(device="cpu").manual_seed(seed)
    v = torch.randn(n, 1, generator=g, dtype=op.dtype).to(op.device)
    lam = 0.0
    for _ in range(num_iter):
        v = v / v.norm().clamp_min(torch.finfo(op.dtype).tiny)
        w = op @ (op @ v)
        lam = float((v * w).sum())
        v = w
    return max(lam, 0.0) ** 0.5


def _operator_top(op: KernelOperator, k: int, seed: int) -> tuple[Tensor, Tensor]:
    """Top-``k`` eigenpairs (descending) of an operator without a sparsity pattern: dense ``eigh`` or ARPACK."""
    n = op.shape[0]
    dense_fits = 2 * n * n * 8 <= memory_limit(op.device)[0]
    if 2 * k >= n or (n <= DENSE_OPERATOR_EIG and dense_fits):
        check_allocation(2 * n * n * 8, f"the dense {n} x {n} eigendecomposition of the kernel",
                         "ask for fewer components (d, with 2 d < n) so that ARPACK runs on products, or use a "
                         "sparse kernel", op.device)
        a = op.to_dense().double()
        w, v = torch.linalg.eigh((a + a.T) / 2)
        return w.flip(0)[:k].to(op.dtype), v.flip(1)[:, :k].to(op.dtype)

    def matvec(x):
        t = torch.as_tensor(np.asarray(x, dtype=np.float64).reshape(n, -1), device=op.device, dtype=op.dtype)
        return (op @ t).double().cpu().numpy()

    lin = spla.LinearOperator((n, n), matvec=matvec, matmat=matvec, dtype=np.float64)
    v0 = np.random.default_rng(seed).standard_normal(n)
    w, v = eigsh(lin, k=k, which="LA", v0=v0, tol=1e-10)
    order = np.argsort(-w, kind="stable")
    return (torch.as_tensor(w[order].copy(), dtype=op.dtype, device=op.device),
            torch.as_tensor(v[:, order].copy(), dtype=op.dtype, device=op.device))


DENSE_OPERATOR_EIG = 4000


def _to_scipy(op: SparseOperator) -> sp.csr_matrix:
    row, col, val = op.coo()
    return sp.csr_matrix((val.detach().cpu().numpy(), (row.cpu().numpy(), col.cpu().numpy())), shape=op.shape)


def top_eigenpairs(op: SparseOperator, k: int, dense_threshold: int = 3000, seed: int = 0,
                   upper_bound: float | None = None, method: str = "auto", start: Tensor | None = None,
                   record: list | None = None) -> tuple[Tensor, Tensor]:
    """The ``k`` largest (algebraic) eigenpairs of a symmetric sparse operator ``op``.

    Returns ``(values [k], vectors [N, k])`` on the operator's device/dtype, values descending,
    vectors orthonormal, ties broken by component size (larger first), then position.
    ``dense_threshold`` (default 3000): largest component solved by a dense ``eigh``; ``seed``: the
    Lanczos start vectors; ``upper_bound`` (e.g. 1 for a normalized adjacency): large components are
    skipped once the small ones supply ``k`` eigenvalues equal to it (within 1e-10).
    ``method``: ``"lanczos"`` (plain ``eigsh``), ``"filtered"`` (``eigsh`` on a Chebyshev filter,
    ``filtered_top_eigenpairs``), ``"block"`` (:func:`~graphstk.spectral.subspace_top_eigenpairs`
    on the operator's device) or ``"auto"`` (:func:`eigen_route`); docs/operators.md.
    ``start`` ``[N, q]``: a warm start for the ``"block"`` route (others ignore it). ``record``: a list
    that receives one dict per large component (``route``, ``n``, ``k``, ``residual``
    ``max ||A v - mu v||``, ``bound`` the route guarantees, ``products``).
    """
    if method not in ("auto", "lanczos", "filtered", "block"):
        raise ValueError(f"method must be 'auto', 'lanczos', 'filtered' or 'block', got {method!r}")
    n = op.shape[0]
    if op.shape[0] != op.shape[1]:
        raise ValueError(f"top_eigenpairs needs a square operator, got {op.shape}")
    if not 1 <= k <= n:
        raise ValueError(f"k must be in [1, {n}], got {k}")
    if not isinstance(op, SparseOperator):
        return _operator_top(op, k, seed)
    a = _to_scipy(op)
    ncomp, label = connected_components(a, directed=False)
    order = np.argsort(label, kind="stable")
    sizes = np.bincount(label, minlength=ncomp)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    vals, vecs, sizes_of = [], [], []  # vecs: list of (node ids, [size, j] array)
    big = []
    for c in range(ncomp):
        nodes = order[starts[c]: starts[c + 1]]
        if sizes[c] <= dense_threshold:
            block = a[nodes][:, nodes].toarray()
            block = (block + block.T) / 2
            take = min(k, nodes.size)
            if take == nodes.size:
                w, v = np.linalg.eigh(block)
            else:  # MRRR on the wanted eigenpairs only: several times faster than a full eigh
                w, v = scipy.linalg.eigh(block, subset_by_index=[nodes.size - take, nodes.size - 1], driver="evr")
            w, v = w[::-1][:take], v[:, ::-1][:, :take]
            vals.append(w); vecs.append((nodes, v)); sizes_of.append(np.full(take, sizes[c]))
        else:
            big.append(nodes)
    small_vals = np.concatenate(vals) if vals else np.zeros(0)
    rng = np.random.default_rng(seed)
    if upper_bound is not None and small_vals.size >= k and \
            np.sort(small_vals)[::-1][k - 1] >= upper_bound - 1e-10:
        big = []
    for bi, nodes in enumerate(big):
        kmax = min(k, nodes.size - 2)
        route = eigen_route(nodes.size, kmax, op.device, dense_threshold) if method == "auto" else method
        if route == "block":
            w, v = _block_top(op, nodes, kmax, start, seed + bi, record)
            vals.append(w); vecs.append((nodes, v)); sizes_of.append(np.full(w.size, nodes.size))
            small_vals = np.concatenate([small_vals, w])
            continue
        block = a[nodes][:, nodes].tocsr()
        block = (block + block.T) * 0.5
        # at least `missing` of the top k come from this component; double from 32 only when others could fill it
        later = sum(b.size for b in big[bi + 1:])
        missing = k - small_vals.size - later
        kk = min(kmax, max(32, missing))
        if method != "lanczos" and kmax >= FILTER_MIN_K:
            kk = kmax  # one filtered solve for all k costs about what a smaller one does: no doubling
        while True:  # stop once the smallest eigenvalue found can no longer enter the top k
            w, v = _large_top(block, kk, rng, method)
            union = np.sort(np.concatenate([small_vals, w]))[::-1]
            kth = union[k - 1] if union.size >= k else -np.inf
            if kk >= kmax or w[-1] < kth:
                break
            kk = min(2 * kk, kmax)
        if record is not None:   # ARPACK's tolerance 1e-10 (the filter accepts 1e3 * 1e-10 * max(1, radius))
            filtered = method == "filtered" or (method == "auto" and FILTER_MIN_K <= w.size < nodes.size // 2)
            radius = max(1.0, float(abs(block).sum(axis=1).max()))
            record.append(dict(route="arpack (filtered)" if filtered else "arpack (lanczos)", n=int(nodes.size),
                               k=int(w.size), residual=float(np.linalg.norm(block @ v - v * w, axis=0).max()),
                               bound=(1e-7 if filtered else 1e-10) * radius, products=None))
        vals.append(w); vecs.append((nodes, v)); sizes_of.append(np.full(w.size, nodes.size))
        small_vals = np.concatenate([small_vals, w])
    all_vals = np.concatenate(vals)
    all_sizes = np.concatenate(sizes_of)
    pos = np.arange(all_vals.size)
    pick = np.lexsort((pos, -all_sizes, -np.round(all_vals, 12)))[:k]
    if pick.size < k:
        warnings.warn(f"only {pick.size} eigenpairs available, fewer than k={k}", stacklevel=2)
    out_vecs = np.zeros((n, pick.size))
    offsets = np.concatenate([[0], np.cumsum([v.shape[1] for _, v in vecs])])
    for col, p in enumerate(pick):
        blk = np.searchsorted(offsets, p, side="right") - 1
        nodes, v = vecs[blk]
        out_vecs[nodes, col] = v[:, p - offsets[blk]]
    return (torch.as_tensor(all_vals[pick], dtype=op.dtype, device=op.device),
            torch.as_tensor(out_vecs, dtype=op.dtype, device=op.device))


FILTER_MIN_K = 64           # fewer eigenpairs: plain eigsh is as fast
FILTER_DEGREE = 10          # degree of the Chebyshev filter
MAX_FILTER_TRIES = 6        # tries of the filter (each lowering the cut) before a plain eigsh
FILTER_MAX_RESTARTS = 20    # ARPACK restarts of one try (a good cut needs none)
LAST_SOLVE: dict = {}       # diagnostics of the last filtered_top_eigenpairs call (products, tries, fallback)


def eigen_route(size: int, k: int, device, dense_threshold: int = 3000) -> str:
    """How :func:`top_eigenpairs` solves a component of ``size`` nodes for ``k`` eigenpairs: ``"dense"`` up
    to ``dense_threshold`` nodes, else ``"block"`` on an accelerator, else ``"filtered"`` for
    ``FILTER_MIN_K <= k < size / 2`` and ``"lanczos"`` otherwise (docs/operators.md); ``device`` is the
    operator's device (the block eigensolver runs there; ARPACK on the host)."""
    if size <= dense_threshold:
        return "dense"
    if torch.device(device).type != "cpu":
        return "block"
    return "filtered" if FILTER_MIN_K <= k < size // 2 else "lanczos"


def _block_top(op: SparseOperator, nodes: np.ndarray, k: int, start: Tensor | None, seed: int,
               record: list | None) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` top eigenpairs of the component ``nodes`` of ``op`` by the torch block method (warm ``start``)."""
    idx = torch.as_tensor(nodes, device=op.device)
    blk = op.block(idx, idx).to(dtype=torch.float64)
    radius = spectral_radius(blk)
    warm = None if start is None else start.to(op.device)[idx]
    res = subspace_top_eigenpairs(blk.matmul, int(nodes.size), k, lo=-radius, radius=radius,
                                  device=op.device, start=warm, seed=seed)
    if not res.converged:
        warnings.warn(f"block eigensolver: residual {res.residual:.2e} above the bound {res.bound:.2e} after "
                      f"{res.iterations} steps ({nodes.size} nodes, k={k})", stacklevel=3)
    if record is not None:
        record.append(dict(route="block" + (" (warm start)" if warm is not None else ""), n=int(nodes.size), k=k,
                           residual=res.residual, bound=res.bound, products=res.products))
    return res.values.cpu().numpy(), res.vectors.cpu().numpy()


def _large_top(block: sp.csr_matrix, kk: int, rng: np.random.Generator, method: str):
    """The ``kk`` largest eigenpairs of one large component, descending, by ``method``."""
    if method == "filtered" or (method == "auto" and FILTER_MIN_K <= kk < block.shape[0] // 2):
        return filtered_top_eigenpairs(block, kk, rng=rng)
    w, v = eigsh(block, k=kk, which="LA", v0=rng.standard_normal(block.shape[0]), tol=1e-10)
    idx = np.argsort(w)[::-1]
    return w[idx], v[:, idx]


def _chebyshev(a: sp.csr_matrix, degree: int, center: float, half_width: float):
    """``v -> T_degree((A - center I) / half_width) v`` (three-term recurrence, ``degree`` products)."""
    def apply(v):
        v = np.asarray(v).reshape(-1)
        y0, y1 = v, (a @ v - center * v) / half_width
        for _ in range(2, degree + 1):
            y0, y1 = y1, 2.0 * (a @ y1 - center * y1) / half_width - y0
        return y1
    return apply


def estimate_eigenvalue_at(a: sp.csr_matrix, index: int, lo: float, hi: float, rng: np.random.Generator,
                           probes: int = 16, moments: int = 120) -> float:
    """Estimate ``lambda_index`` (0-based, descending) of a symmetric matrix with spectrum in ``[lo, hi]``.

    Kernel polynomial method (docs/operators.md); ``probes``: Hutchinson probes, ``moments``: Chebyshev
    moments. A rough estimate: it only places the filter of ``filtered_top_eigenpairs``.
    """
    n = a.shape[0]
    c, e = (hi + lo) / 2, (hi - lo) / 2 * 1.001
    z = rng.choice([-1.0, 1.0], size=(n, probes))
    t0, t1 = z, (a @ z - c * z) / e
    mu = np.zeros(moments)
    mu[0], mu[1] = (z * t0).sum() / probes, (z * t1).sum() / probes
    for j in range(2, moments):
        t0, t1 = t1, 2.0 * (a @ t1 - c * t1) / e - t0
        mu[j] = (z * t1).sum() / probes
    jj = np.arange(moments)
    alpha = np.pi / (moments + 1)
    jackson = ((moments - jj + 1) * np.cos(alpha * jj) + np.sin(alpha * jj) / np.tan(alpha)) / (moments + 1)
    grid = np.linspace(0.999, -0.999, 1999)
    th = np.arccos(grid)
    coef = np.empty((grid.size, moments))  # Chebyshev coefficients of the indicator of [x, 1]
    coef[:, 0] = th / np.pi
    coef[:, 1:] = 2.0 * np.sin(np.outer(th, jj[1:])) / (jj[1:] * np.pi)
    count = (coef * (jackson * mu)).sum(axis=1)  # non-decreasing as x goes down, up to noise
    above = np.nonzero(count >= index + 1)[0]
    x = grid[above[0]] if above.size else grid[-1]
    return c + e * x


def filtered_top_eigenpairs(a: sp.csr_matrix, k: int, rng: np.random.Generator | None = None,
                            previous: np.ndarray | None = None, degree: int = FILTER_DEGREE,
                            tol: float = 1e-10, ncv_factor: float = 1.4) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` largest eigenpairs of a sparse symmetric ``a`` by Lanczos on a Chebyshev filter.

    ``p(A) = T_m((A - c I) / e)`` maps ``[lo, cut]`` into ``[-1, 1]`` and the top ``k`` eigenvalues above
    ``1``, so ARPACK converges without restarts; a final Rayleigh-Ritz step with ``A`` gives the
    eigenvalues, accepted only when all exceed ``cut`` with small residuals, else ``cut`` is lowered
    (``MAX_FILTER_TRIES`` tries, then plain ``eigsh``). The derivation: docs/operators.md.
    ``rng``: the start vectors' generator; ``previous``: eigenvalues of a similar matrix (warm start,
    places ``cut``); ``degree``: the filter's degree; ``tol``: ARPACK's tolerance; ``ncv_factor``:
    Lanczos basis size over ``k``. Returns ``(values [k] descending, vectors [n, k])``.
    """
    rng = np.random.default_rng(0) if rng is None else rng
    n = a.shape[0]
    if not 1 <= k < n - 1:
        raise ValueError(f"k must be in [1, {n - 2}], got {k}")
    radius = float(abs(a).sum(axis=1).max())
    theta = eigsh(a, k=1, which="SA", tol=1e-3, v0=rng.standard_normal(n))[0][0]
    lo = max(-radius, float(theta) - 0.05 * radius)
    w1, v1 = eigsh(a, k=1, which="LA", tol=1e-3, v0=rng.standard_normal(n))
    top = min(radius, float(w1[0]) + float(np.linalg.norm(a @ v1[:, 0] - w1[0] * v1[:, 0])))  # ~ lambda_1
    step = 0.02 * (top - lo)  # about the resolution of the estimate below; the smallest move of the cut
    target = min(n - 2, int(np.ceil(1.15 * k)) + 8)
    if previous is not None and previous.size > target:
        cut = float(previous[target])
    else:
        cut = estimate_eigenvalue_at(a, target, lo, radius, rng)
    # the estimate blurs a cluster at the top (DBLP): keep the cut a step below lambda_1
    cut = min(cut, top - step)
    ncv = min(n - 1, int(np.ceil(ncv_factor * k)) + 20)
    LAST_SOLVE.clear()
    LAST_SOLVE.update(n=n, k=k, tries=0, fallback=False, matvecs=0, products=0)

    def lower(cut, lo):   # after a miss: double cut's distance from top, never below the middle of [lo, cut]
        dist = max(top - cut, step)
        return max(top - 2.0 * dist, cut - 0.5 * (cut - lo)), max(-radius, lo - 0.05 * radius)

    for _ in range(MAX_FILTER_TRIES):
        LAST_SOLVE["tries"] += 1
        center, half = (cut + lo) / 2, (cut - lo) / 2
        cheb = _chebyshev(a, degree, center, half)

        def matvec(v, cheb=cheb):
            LAST_SOLVE["matvecs"] += 1
            LAST_SOLVE["products"] += degree
            return cheb(v)
        op = spla.LinearOperator((n, n), matvec=matvec, dtype=np.float64)
        try:
            # a good cut converges without restarts; many restarts mean the cut is above lambda_k
            _, v = eigsh(op, k=k, which="LA", ncv=ncv, tol=tol, v0=rng.standard_normal(n), maxiter=FILTER_MAX_RESTARTS)
        except spla.ArpackNoConvergence:
            cut, lo = lower(cut, lo)
            continue
        av = a @ v
        h = v.T @ av
        mu, w = np.linalg.eigh((h + h.T) / 2)
        mu, w = mu[::-1], w[:, ::-1]
        u = v @ w
        res = np.linalg.norm(av @ w - u * mu, axis=0)
        LAST_SOLVE["products"] += k  # the Rayleigh-Ritz product A V (k columns)
        if mu[-1] > cut and res.max() <= 1e3 * tol * max(1.0, radius):
            LAST_SOLVE.update(cut=cut, lo=lo, residual=float(res.max()))
            return mu, u
        cut, lo = lower(cut, lo)
    LAST_SOLVE["fallback"] = True
    w, v = eigsh(a, k=k, which="LA", tol=tol, v0=rng.standard_normal(n))
    idx = np.argsort(w)[::-1]
    return w[idx], v[:, idx]


def laplacian_eigenpairs(edge_index: Tensor, num_nodes: int, edge_weight: Tensor | None = None,
                         rank: int | None = None, dense_max: int = 4000, seed: int = 0) -> tuple[Tensor, Tensor]:
    """Eigenpairs ``(mu [r], U [N, r])`` of ``L = I - D^{-1/2} W D^{-1/2}``, smallest ``mu`` first.

    ``rank=None``: all ``N`` pairs by a dense ``eigh`` (also for ``N <= dense_max``); otherwise the
    ``rank`` smallest eigenvalues of ``L`` by :func:`graphstk.spectral.top_eigenpairs` on ``S``.

    ``edge_index [2, E]``, ``num_nodes`` and optional ``edge_weight [E]`` give the graph;
    ``dense_max`` is the largest graph decomposed densely; ``seed`` seeds the Lanczos start.
    """
    check_edge_index(edge_index, num_nodes, edge_weight)
    S = normalized_adjacency(edge_index, num_nodes, edge_weight)
    n = int(num_nodes)
    if rank is not None and (int(rank) != rank or int(rank) < 1):
        raise ValueError(f"rank must be a positive integer or None, got {rank!r}")
    if rank is None and n > dense_max:
        raise ValueError(f"a dense eigendecomposition of a {n}-node graph is too large; pass rank=r "
                         f"(the top-r eigenpairs by Lanczos, e.g. rank=500)")
    if rank is None or n <= dense_max:
        A = S.to_dense().numpy()
        mu, U = np.linalg.eigh(np.eye(n) - (A + A.T) / 2)
        r = n if rank is None else min(int(rank), n)
        return torch.as_tensor(mu[:r]), torch.as_tensor(U[:, :r])
    vals, vecs = top_eigenpairs(S, min(int(rank), n), seed=seed, upper_bound=1.0)
    return 1.0 - vals, vecs


def diffusion_kernel(edge_index: Tensor, num_nodes: int, tau: float, edge_weight: Tensor | None = None,
                     rank: int | None = None) -> SpectralKernelOperator:
    """The graph diffusion kernel ``exp(-tau L)``, ``L = I - D^{-1/2} W D^{-1/2}`` (Walder et al. Sec. 7.2).

    Parameters: ``edge_index``/``edge_weight`` (PyG convention, symmetric), ``num_nodes``,
    ``tau > 0`` (diffusion time), ``rank`` (``None``: exact, dense; ``r``: the best rank-``r``
    approximation from the ``r`` smallest eigenvalues of ``L``, for large graphs).
    To sweep ``tau``, compute :func:`laplacian_eigenpairs` once and call
    :meth:`~graphstk.operators.SpectralKernelOperator.from_laplacian` per ``tau``.
    """
    mu, U = laplacian_eigenpairs(edge_index, num_nodes, edge_weight, rank=rank)
    return SpectralKernelOperator.from_laplacian(mu, U, tau)


def operator_fingerprint(op: KernelOperator) -> str:
    """A content hash (hex string) of ``op``: its class, shape, dtype, device and entries (CSR arrays of a
    :class:`~graphstk.operators.SparseOperator`, else the dense matrix): equal hashes, equal eigenpairs."""
    if isinstance(op, SparseOperator):
        csr = op.csr
        parts = (csr.crow_indices(), csr.col_indices(), csr.values())
    else:
        parts = (op.to_dense(),)
    return content_hash(type(op).__name__, tuple(op.shape), str(op.dtype), str(op.device), *parts)


class EigenCache:
    """Top eigenpairs computed once per operator and reused: the kernel PCA of one run (STKR Eq. 8).

    Keyed on :func:`operator_fingerprint`, ``k`` and the options of :func:`top_eigenpairs` that change
    the answer. A run owns one (``graphstk.experiments.kernels.KernelCache.eigen``).

    Parameters
    ----------
    size : int, default 8
        Entries kept (the oldest are dropped first).

    Attributes
    ----------
    hits, computed : int
        Requests answered from the cache, and eigendecompositions computed.
    """

    def __init__(self, size: int = 8):
        if int(size) < 1:
            raise ValueError(f"size must be >= 1, got {size!r}")
        self.size = int(size)
        self._entries: dict[tuple, tuple[Tensor, Tensor, list]] = {}
        self.hits = 0
        self.computed = 0

    def top_eigenpairs(self, op: SparseOperator, k: int, **options) -> tuple[Tensor, Tensor]:
        """:func:`top_eigenpairs` ``(op, k, **options)``, cached (``start``, ``record`` not in the key); on a
        hit ``record`` receives the computing solve's records, ``route`` prefixed ``"cached: "``.
        Returns ``(values [k], vectors [N, k])``."""
        record = options.get("record")
        key = (operator_fingerprint(op), int(k),
               tuple(sorted((name, v) for name, v in options.items() if name not in ("start", "record"))))
        if key in self._entries:
            self.hits += 1
            self._entries[key] = self._entries.pop(key)   # most recently used last
            values, vectors, solved = self._entries[key]
            if record is not None:
                record += [dict(r, route=f"cached: {r['route']}") for r in solved]
            return values, vectors
        solved: list = []
        values, vectors = top_eigenpairs(op, k, **{**options, "record": solved})
        if record is not None:
            record += solved
        self.computed += 1
        self._entries[key] = (values, vectors, solved)
        while len(self._entries) > self.size:
            self._entries.pop(next(iter(self._entries)))
        return values, vectors

    def clear(self) -> None:
        """Drop every entry (the counters stay)."""
        self._entries = {}

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"EigenCache(size={self.size}, held={len(self)}, hits={self.hits}, computed={self.computed})"


#: degree of the Chebyshev filter between two Rayleigh-Ritz steps
SUBSPACE_DEGREE = 16


def guard_size(k: int, n: int) -> int:
    """The block size ``p`` for ``k`` wanted eigenpairs of an ``n x n`` operator: ``k`` plus
    ``max(16, k / 4)`` guard vectors, at most ``n``."""
    return min(n, k + max(16, (k + 3) // 4))


@dataclass
class SubspaceResult:
    """What :func:`subspace_top_eigenpairs` returns.

    Attributes
    ----------
    values : Tensor ``[k]``
        Ritz values, descending.
    vectors : Tensor ``[n, k]``
        Orthonormal Ritz vectors.
    basis : Tensor ``[n, p]``
        The whole final block (the ``k`` vectors then the guard vectors): a warm start for a similar
        operator.
    residual : float
        ``max_i ||A v_i - theta_i v_i||`` over the ``k`` pairs: each ``theta_i`` is within this of an
        eigenvalue of ``A``.
    bound : float
        The bound asked for, ``tol * radius``; ``converged`` is ``residual <= bound``.
    iterations : int
        Rayleigh-Ritz steps.
    products : int
        Block products with ``A`` (each with ``p`` columns).
    converged : bool
    """

    values: Tensor
    vectors: Tensor
    basis: Tensor
    residual: float
    bound: float
    iterations: int
    products: int
    converged: bool


def _orthonormal(x: Tensor) -> Tensor:
    """An orthonormal basis of the columns of ``x`` (Householder QR)."""
    return torch.linalg.qr(x, mode="reduced").Q


def subspace_top_eigenpairs(matmul: Callable[[Tensor], Tensor], n: int, k: int, *, lo: float, radius: float,
                            dtype: torch.dtype = torch.float64, device=None, start: Tensor | None = None,
                            block: int | None = None, tol: float = 1e-10, degree: int = SUBSPACE_DEGREE,
                            max_iter: int = 200, seed: int = 0) -> SubspaceResult:
    """The ``k`` largest (algebraic) eigenpairs of a symmetric operator by filtered subspace iteration.

    Parameters
    ----------
    matmul : callable ``Tensor [n, p] -> Tensor [n, p]``
        The product with the symmetric operator ``A`` (e.g. ``op.matmul`` of a
        :class:`~graphstk.operators.SparseOperator`), on ``device`` in ``dtype``.
    n, k : int
        Size of ``A`` and number of eigenpairs wanted, ``1 <= k < n``.
    lo, radius : float
        A lower bound of the spectrum and an upper bound of ``|lambda(A)|`` (e.g. ``-r`` and ``r``
        with ``r`` the largest absolute row sum, Gershgorin). The filter damps ``[lo, theta_p]``.
    dtype, device :
        Of the block (default float64; the operator's device).
    start : Tensor ``[n, q]``, optional
        A warm start: columns close to the wanted eigenvectors (any ``q``; the first ``p`` are used,
        Gaussian columns complete the block).
    block : int, optional
        Block size ``p > k`` (default ``guard_size(k, n)``: ``k + max(16, k / 4)``, at most ``n``).
    tol : float, default 1e-10
        Stop when every wanted Ritz pair has ``||A v - theta v|| <= tol * radius``.
    degree : int, default ``SUBSPACE_DEGREE``
        Degree of the Chebyshev filter between Rayleigh-Ritz steps.
    max_iter : int, default 200
        Rayleigh-Ritz steps at most (``converged=False`` if reached).
    seed : int, default 0
        Seeds the Gaussian columns (a private CPU generator).

    Returns
    -------
    SubspaceResult
        Eigenpairs descending, the residual reached and the bound asked for.
    """
    if not 1 <= k < n:
        raise ValueError(f"k must be in [1, {n - 1}] for an operator of size {n}, got {k}")
    if not radius > 0 or not math.isfinite(radius):
        raise ValueError(f"radius must be a finite upper bound of |lambda(A)| > 0, got {radius!r}")
    p = guard_size(k, n) if block is None else int(block)
    if not k < p <= n:
        raise ValueError(f"block must be in [{k + 1}, {n}], got {p}")
    device = torch.device(device) if device is not None else torch.device("cpu")
    gen = torch.Generator(device="cpu").manual_seed(seed)
    q = 0 if start is None else min(p, int(start.shape[1]))
    cols = [] if q == 0 else [start[:, :q].to(device=device, dtype=dtype)]
    if q < p:
        cols.append(torch.randn(n, p - q, generator=gen, dtype=dtype).to(device))
    v = _orthonormal(torch.cat(cols, dim=1))
    bound = float(tol) * float(radius)
    products = 0
    theta = res = None
    it = 0
    for it in range(1, max_iter + 1):
        av = matmul(v)
        products += 1
        h = v.T @ av
        theta, y = torch.linalg.eigh((h + h.T) / 2)
        theta, y = theta.flip(0), y.flip(1)
        v, av = v @ y, av @ y
        res = float((av[:, :k] - v[:, :k] * theta[:k]).norm(dim=0).max())
        if res <= bound or it == max_iter:
            break
        # Chebyshev filter on [lo, theta_p], scaled to 1 at theta_1 (three-term recurrence, Zhou-Saad)
        cut = float(theta[-1])
        top = float(theta[0])
        low = min(float(lo), cut - 1e-3 * radius)
        e, c = (cut - low) / 2, (cut + low) / 2
        if top <= cut + 1e-12 * radius:   # a flat block: nothing to separate yet, plain power step
            v = _orthonormal(av)
            continue
        sigma = e / (top - c)
        sigma1 = sigma
        y0, y1 = v, (av - c * v) * (sigma1 / e)
        for _ in range(2, degree + 1):
            sigma_new = 1.0 / (2.0 / sigma1 - sigma)
            y0, y1 = y1, (matmul(y1) - c * y1) * (2.0 * sigma_new / e) - (sigma * sigma_new) * y0
            products += 1
            sigma = sigma_new
        v = _orthonormal(y1)
    return SubspaceResult(values=theta[:k].clone(), vectors=v[:, :k].contiguous(), basis=v, residual=res,
                          bound=bound, iterations=it, products=products, converged=res <= bound)
