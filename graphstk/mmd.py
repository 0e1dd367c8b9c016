"""Kernel mean embeddings and the maximum mean discrepancy (MMD): :func:`mmd2` (the biased, unbiased and
equal-size estimators of the kernel-method slides, Eqs. 19-23), :func:`mean_embedding` (Eq. 16) and the
permutation test :func:`mmd_test`, on :class:`~graphstk.operators.FeatureKernelOperator` products,
differentiable in the samples. Estimators, errata and the test's cost: ``docs/toolbox.md``.
"""
from __future__ import annotations

import time
import warnings
from typing import NamedTuple

import torch
from torch import Tensor

from ._checks import user_stacklevel
from .memory import TILE_SHARE, check_allocation, memory_available
from .operators.bandwidth import median_width
from .operators.feature import SHIFT_INVARIANT, FeatureKernelOperator, as_feature_pair, as_features, kernel_function
from .operators.kernels import BLOCK_ELEMS

__all__ = ["mmd2", "mmd_test", "MMDTestResult", "mean_embedding", "MeanEmbedding", "median_heuristic"]

_ESTIMATORS = ("unbiased", "biased", "equal_size")


def median_heuristic(X, Y=None, max_samples: int | None = 2000, seed: int = 0) -> float:
    """Bandwidth ``sigma`` = median pairwise Euclidean distance of the pooled sample ``[X; Y]``
    (pairs ``i < j``; ``max_samples`` rows drawn at random beyond that size, seeded).

    The pairwise rule of :func:`graphstk.operators.median_width` on the pooled sample. Raises
    ``ValueError`` when the median is 0 (more than half of the pairs coincide), since that is no
    usable bandwidth.

    Parameters
    ----------
    X : Tensor or array ``[n, d]``
    Y : Tensor or array ``[m, d]``, optional
        Pooled with ``X``.
    max_samples : int or None, default 2000
    seed : int, default 0
    """
    Z = as_features(X, name="X")
    if Y is not None:
        Xp, Yp = as_feature_pair(Z, Y)
        Z = torch.cat([Xp, Yp])
    return median_width(Z, max_samples=max_samples, seed=seed)


def _resolve_kernel(kernel, sigma, X, Y=None, **params):
    """The kernel; ``sigma=None`` for a bandwidth kernel means the median heuristic."""
    name = kernel if isinstance(kernel, str) else None
    if sigma is None and name is not None and name.lower() in SHIFT_INVARIANT + ("rbf", "l1", "exponential"):
        sigma = median_heuristic(X, Y)
    return kernel_function(kernel, sigma=sigma, **params)


class MeanEmbedding:
    """Empirical kernel mean embedding ``mu(t) = sum_i a_i k(x_i, t)`` (Eq. 16; ``a_i = 1/n``
    by default, Definition 8 for the empirical measure). Call it on points ``T [t, d]`` to get
    ``[t]``; ``inner(other)`` is ``<mu, nu>_H = sum_{i,j} a_i b_j k(x_i, y_j)`` (Eq. 17 / reproducing
    property) and ``norm2()`` is ``||mu||_H^2``.
    """

    def __init__(self, X, kernel="gaussian", sigma: float | None = None, weights=None, **params):
        self.X = as_features(X)
        if self.X.shape[0] == 0:
            raise ValueError("mean embedding of an empty sample")
        self.kernel = _resolve_kernel(kernel, sigma, self.X, **params)
        n = self.X.shape[0]
        if weights is None:
            self.weights = torch.full((n,), 1.0 / n, dtype=self.X.dtype, device=self.X.device)
        else:
            w = torch.as_tensor(weights, dtype=self.X.dtype, device=self.X.device)
            if w.shape != (n,):
                raise ValueError(f"weights must have shape [{n}], got {tuple(w.shape)}")
            self.weights = w

    def __call__(self, T) -> Tensor:
        T = as_features(T, dtype=self.X.dtype, device=self.X.device, name="T")
        if T.shape[1] != self.X.shape[1]:
            raise ValueError(f"dimension mismatch: points have {T.shape[1]} features, the sample {self.X.shape[1]}")
        return FeatureKernelOperator(T, self.X, kernel=self.kernel) @ self.weights

    def inner(self, other: "MeanEmbedding") -> Tensor:
        """The RKHS inner product ``<mu_P, mu_Q> = sum_ij a_i b_j k(x_i, y_j)`` with another
        embedding of the same kernel (a 0-dim tensor); raises ``ValueError`` for another kernel."""
        if other.kernel != self.kernel:
            raise ValueError(f"embeddings use different kernels: {self.kernel} vs {other.kernel}")
        return self.weights @ (FeatureKernelOperator(self.X, other.X, kernel=self.kernel) @ other.weights)

    def norm2(self) -> Tensor:
        """The squared RKHS norm ``||mu_P||^2 = <mu_P, mu_P>`` (a 0-dim tensor)."""
        return self.inner(self)

    def __repr__(self) -> str:
        return f"MeanEmbedding(n={self.X.shape[0]}, kernel={self.kernel!r})"


def mean_embedding(X, kernel="gaussian", sigma: float | None = None, weights=None, **params) -> MeanEmbedding:
    """The empirical mean embedding ``mu_X(t) = (1/n) sum_i k(x_i, t)`` (Definition 8, Eq. 16).

    ``sigma=None`` with a bandwidth kernel uses the median heuristic on ``X``.
    """
    return MeanEmbedding(X, kernel, sigma, weights, **params)


def _check_sizes(estimator: str, m: int, n: int) -> None:
    if estimator not in _ESTIMATORS:
        raise ValueError(f"estimator must be one of {_ESTIMATORS}, got {estimator!r}")
    if estimator == "biased" and (m < 1 or n < 1):
        raise ValueError(f"the biased MMD needs non-empty samples, got m={m}, n={n}")
    if estimator == "unbiased" and (m < 2 or n < 2):
        raise ValueError(f"the unbiased MMD (Eq. 21) needs at least 2 points per sample, got m={m}, n={n}")
    if estimator == "equal_size" and m != n:
        raise ValueError(f"the equal-size MMD (Eq. 22) needs m == n, got m={m}, n={n}")
    if estimator == "equal_size" and m < 2:
        raise ValueError(f"the equal-size MMD (Eq. 22) needs at least 2 points per sample, got m={m}")


def _combine(estimator: str, m: int, n: int, Sxx, Syy, Sxy, txx, tyy, txy=None):
    """The three estimators from kernel sums ``S`` and traces ``t`` (all may be batched)."""
    if estimator == "biased":  # Eq. 23 (Eq. 19 in kernel form)
        return Sxx / m**2 + Syy / n**2 - 2.0 * Sxy / (m * n)
    if estimator == "unbiased":  # Eq. 21
        return (Sxx - txx) / (m * (m - 1)) + (Syy - tyy) / (n * (n - 1)) - 2.0 * Sxy / (m * n)
    # Eq. 22: sum_{i != j} [k(xi,xj) + k(yi,yj) - k(xi,yj) - k(xj,yi)]
    return ((Sxx - txx) + (Syy - tyy) - 2.0 * (Sxy - txy)) / (m * (m - 1))


def mmd2(X, Y, kernel="gaussian", sigma: float | None = None, estimator: str = "unbiased",
         **params) -> Tensor:
    """Squared MMD between samples ``X [m, d]`` and ``Y [n, d]`` (0-dim tensor).

    ``estimator``: ``"unbiased"`` (U-statistic, Eq. 21; needs ``m, n >= 2``; may be negative),
    ``"biased"`` (V-statistic, Eq. 19 / kernel form Eq. 23; ``= ||mu_X - mu_Y||^2 >= 0``),
    ``"equal_size"`` (Eq. 22; needs ``m = n >= 2``; pairs ``x_i`` with ``y_i``).
    ``kernel``/``sigma``/``degree``/``c`` as in :func:`graphstk.operators.kernel_function`;
    ``sigma=None`` with a bandwidth kernel uses :func:`median_heuristic` on the pooled sample.

    Example
    -------
    >>> import torch
    >>> from graphstk.mmd import mmd2
    >>> g = torch.Generator().manual_seed(0)
    >>> X = torch.randn(200, 2, generator=g, dtype=torch.float64)
    >>> same = mmd2(X, torch.randn(200, 2, generator=g, dtype=torch.float64), sigma=1.0)
    >>> shifted = mmd2(X, torch.randn(200, 2, generator=g, dtype=torch.float64) + 1.0, sigma=1.0)
    >>> bool(abs(same) < 0.02 < shifted)
    True
    """
    X, Y = as_feature_pair(X, Y)
    m, n = X.shape[0], Y.shape[0]
    _check_sizes(estimator, m, n)
    k = _resolve_kernel(kernel, sigma, X, Y, **params)
    opx, opy = FeatureKernelOperator(X, kernel=k), FeatureKernelOperator(Y, kernel=k)
    oxy = FeatureKernelOperator(X, Y, kernel=k)
    one_m, one_n = X.new_ones(m), X.new_ones(n)
    Sxx, Syy, Sxy = one_m @ (opx @ one_m), one_n @ (opy @ one_n), one_m @ (oxy @ one_n)
    txx, tyy = opx.diagonal().sum(), opy.diagonal().sum()
    txy = oxy.diagonal().sum() if estimator == "equal_size" else None
    return _combine(estimator, m, n, Sxx, Syy, Sxy, txx, tyy, txy)


class MMDTestResult(NamedTuple):
    """``statistic``: the MMD^2 estimate on the observed split; ``p_value``: permutation p-value."""
    statistic: float
    p_value: float


@torch.no_grad()
def mmd_test(X, Y, kernel="gaussian", sigma: float | None = None, n_permutations: int = 500,
             seed: int = 0, estimator: str = "unbiased", batch_size: int = 128, max_seconds: float | None = None,
             **params) -> MMDTestResult:
    """Permutation two-sample test of ``H0: P = Q`` with the MMD^2 statistic.

    The pooled sample ``Z = [X; Y]`` is split at random ``n_permutations`` times (seeded by ``seed``) into
    parts of sizes ``m`` and ``n``; the statistic (``estimator``, see :func:`mmd2`, bandwidth fixed once on the
    pooled sample) is recomputed on each split, and ``p = (1 + #{b : T_b >= T_obs}) / (1 + n_permutations)``.

    Parameters
    ----------
    X : Tensor or array ``[m, d]``
    Y : Tensor or array ``[n, d]``
    kernel, sigma, **params
        As in :func:`mmd2`.
    n_permutations : int >= 1, default 500
    seed : int, default 0
    estimator : {"unbiased", "biased", "equal_size"}, default "unbiased"
    batch_size : int >= 1, default 128
        Splits evaluated per operator product (halved while a batch takes more than half the free memory;
        the p-value does not change with it).
    max_seconds : float, optional
        A time budget: when it runs out the test stops after the current batch and the p-value is
        computed over the permutations drawn so far, with a warning. Default: no limit.

    Returns
    -------
    MMDTestResult
        ``(statistic, p_value)`` as floats; unpacks as a pair.
    """
    X, Y = as_feature_pair(X, Y)
    m, n = X.shape[0], Y.shape[0]
    _check_sizes(estimator, m, n)
    if int(n_permutations) != n_permutations or n_permutations < 1:
        raise ValueError(f"n_permutations must be an integer >= 1, got {n_permutations!r}")
    if isinstance(batch_size, bool) or int(batch_size) != batch_size or batch_size < 1:
        raise ValueError(f"batch_size must be an integer >= 1, got {batch_size!r}")
    N = m + n
    batch_size = int(min(int(batch_size), n_permutations))
    batch_size = _check_test_memory(X, N, m, batch_size, estimator)
    k = _resolve_kernel(kernel, sigma, X, Y, **params)
    Z = torch.cat([X, Y])
    op = FeatureKernelOperator(Z, kernel=k)
    if max_seconds is not None and not (isinstance(max_seconds, (int, float)) and max_seconds > 0):
        raise ValueError(f"max_seconds must be a positive number of seconds or None, got {max_seconds!r}")
    diag = op.diagonal()
    rowsum = (op @ Z.new_ones(N, 1))[:, 0]          # K 1: the sums that involve the Y part follow from it
    total, trace = rowsum.sum(), diag.sum()

    def stats(perms: Tensor) -> Tensor:  # perms [B, N], first m entries form the X part
        B = perms.shape[0]
        A = torch.zeros(N, B, dtype=Z.dtype, device=Z.device)
        A[perms[:, :m].T, torch.arange(B, device=Z.device).expand(m, B)] = 1.0
        Sxx = (A * (op @ A)).sum(0)                 # a^T K a
        ar = rowsum @ A                             # a^T K 1
        Sxy, Syy = ar - Sxx, total - 2.0 * ar + Sxx  # a^T K b and b^T K b with b = 1 - a
        txx, txy = diag @ A, None
        tyy = trace - txx
        if estimator == "equal_size":
            xs, ys = Z[perms[:, :m].reshape(-1)], Z[perms[:, m:].reshape(-1)]
            txy = k.raw_paired(xs, ys).view(B, m).sum(1)
        return _combine(estimator, m, n, Sxx, Syy, Sxy, txx, tyy, txy)

    observed = stats(torch.arange(N, device=Z.device).unsqueeze(0))[0]
    g = torch.Generator().manual_seed(int(seed))
    exceed, done, start = torch.zeros((), dtype=torch.long, device=Z.device), 0, time.monotonic()
    while done < n_permutations:
        b = min(batch_size, n_permutations - done)
        perms = torch.argsort(torch.rand(b, N, generator=g), dim=1).to(Z.device)
        exceed += (stats(perms) >= observed).sum()
        done += b
        if max_seconds is not None and done < n_permutations and time.monotonic() - start > max_seconds:
            warnings.warn(f"mmd_test: the time budget max_seconds={max_seconds:g} ran out after {done} of "
                          f"{n_permutations} permutations; the p-value is computed over those {done} (its "
                          f"resolution is 1/{done + 1})", RuntimeWarning, stacklevel=user_stacklevel())
            break
    return MMDTestResult(float(observed), (1.0 + int(exceed)) / (1.0 + done))


def _batch_bytes(N: int, m: int, B: int, d: int, itemsize: int, estimator: str, tile: int | None = None) -> float:
    """Bytes of one batch of ``B`` splits: the draws ``[B, N]``, ``A``, ``K A`` and their product ``[N, B]``,
    one kernel row block, and for ``equal_size`` the paired rows ``[B m, d]`` twice."""
    per = B * N * (4 + 8 + 8) + 3.0 * N * B * itemsize + 3.0 * (BLOCK_ELEMS if tile is None else tile) * itemsize
    if estimator == "equal_size":
        per += 2.0 * B * m * d * itemsize
    return per


def _check_test_memory(X: Tensor, N: int, m: int, batch_size: int, estimator: str) -> int:
    """``batch_size``, halved while a batch takes more than ``TILE_SHARE`` of the free memory (see :func:`mmd_test`)."""
    d, itemsize = int(X.shape[1]), X.element_size()
    check_allocation(_batch_bytes(N, m, 1, d, itemsize, estimator, tile=N), f"mmd_test on {N} points (one split at a time)",
                     "test a random subsample of X and Y", X.device)
    free, _ = memory_available(X.device)
    while batch_size > 1 and _batch_bytes(N, m, batch_size, d, itemsize, estimator) > TILE_SHARE * free:
        batch_size = max(1, batch_size // 2)
    return batch_size
