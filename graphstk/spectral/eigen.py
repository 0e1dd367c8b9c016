"""Eigenvalue tools: the largest eigenvalue of an operator, and the top-``d``
eigenpairs of a sparse symmetric matrix for kernel PCA (STKR Eq. 8).

:func:`top_eigenpairs` never forms a dense ``N x N`` matrix at graph scale. It
splits the matrix into connected components (the spectrum of a block-diagonal
matrix is the union of the blocks' spectra), solves small components densely and
large ones with Lanczos (``scipy.sparse.linalg.eigsh``), and asks a large component
only for as many eigenpairs as can still enter the global top ``d``. This matters
on graphs such as DBLP (hundreds of components): each component without a labeled
node contributes an eigenvalue exactly 1, and a single Lanczos run over the whole
matrix converges very slowly on such a multiple eigenvalue.
"""
from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import torch
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import eigsh
from torch import Tensor

from ..operators.base import KernelOperator, SparseOperator


def power_iteration(op: KernelOperator, num_iter: int = 50, seed: int = 0, shift: float | None = None) -> float:
    """Estimate the largest (algebraic) eigenvalue of a symmetric operator.

    Runs power iteration on ``op + shift I`` (``shift`` defaults to an upper bound of
    the spectral radius from the row sums, making the shifted operator PSD) and
    returns the Rayleigh quotient minus the shift.
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
    """Estimate ``max |lambda|`` of a symmetric operator: power iteration on ``op @ op`` (PSD)."""
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


def _to_scipy(op: SparseOperator) -> sp.csr_matrix:
    row, col, val = op.coo()
    return sp.csr_matrix((val.detach().cpu().numpy(), (row.cpu().numpy(), col.cpu().numpy())), shape=op.shape)


def top_eigenpairs(op: SparseOperator, k: int, dense_threshold: int = 3000, seed: int = 0,
                   upper_bound: float | None = None) -> tuple[Tensor, Tensor]:
    """The ``k`` largest (algebraic) eigenpairs of a symmetric sparse operator.

    Returns ``(values [k], vectors [N, k])`` on the operator's device/dtype, values in
    descending order, vectors orthonormal. Ties are broken by component size
    (larger first) and then by position, so the result is deterministic.
    Components of at most ``dense_threshold`` nodes use a dense ``eigh``.

    ``upper_bound`` (e.g. 1 for a block of a normalized adjacency): when the small
    components already supply ``k`` eigenvalues equal to it (within 1e-10), no large
    component can contribute a larger one and its Lanczos run is skipped (ties at the
    bound are then resolved in favour of the eigenpairs already found).
    """
    n = op.shape[0]
    if op.shape[0] != op.shape[1]:
        raise ValueError(f"top_eigenpairs needs a square operator, got {op.shape}")
    if not 1 <= k <= n:
        raise ValueError(f"k must be in [1, {n}], got {k}")
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
        block = a[nodes][:, nodes].tocsr()
        block = (block + block.T) * 0.5
        kmax = min(k, nodes.size - 2)
        # The top k needs at least `missing` eigenpairs from this component: the other
        # components hold only small_vals.size (found) + later.size (not yet computed) of them.
        # Start there; double from 32 only when the others could fill the top k.
        later = sum(b.size for b in big[bi + 1:])
        missing = k - small_vals.size - later
        kk = min(kmax, max(32, missing))
        while True:  # stop once the smallest eigenvalue found can no longer enter the top k
            w, v = eigsh(block, k=kk, which="LA", v0=rng.standard_normal(nodes.size), tol=1e-10)
            idx = np.argsort(w)[::-1]
            w, v = w[idx], v[:, idx]
            union = np.sort(np.concatenate([small_vals, w]))[::-1]
            kth = union[k - 1] if union.size >= k else -np.inf
            if kk >= kmax or w[-1] < kth:
                break
            kk = min(2 * kk, kmax)
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
