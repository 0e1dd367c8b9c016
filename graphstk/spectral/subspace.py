"""Top eigenpairs of a symmetric operator by Chebyshev-filtered subspace iteration (Zhou and Saad), in
torch on the operator's device: the device-native route of :func:`graphstk.spectral.top_eigenpairs`
(kernel PCA, STKR Eq. 8), with warm starts. The method is described in docs/operators.md.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import torch
from torch import Tensor

__all__ = ["SubspaceResult", "subspace_top_eigenpairs", "guard_size"]

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
