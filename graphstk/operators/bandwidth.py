"""Kernel widths from the data: the median heuristics, in one place.

:func:`median_width` is the one public heuristic: the median pairwise distance (``k=None``; Gretton
et al., JMLR 2012, Sec. 8) or the median distance to the ``k``-th nearest neighbour (De Vito et al.,
"Learning sets with separating kernels", Sec. 7), in row blocks sized to the free memory.
"""
from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
import torch
from torch import Tensor

from .._checks import check_int
from ..memory import tile_rows
from .kernels import BLOCK_ELEMS, _distance_fn, _l2dist, as_features
from .knn import nearest_neighbors
from .medians import median_of

__all__ = ["median_width", "median_sigma", "median_of", "median_distance", "kth_neighbor_distance_median"]


def median_width(X, Y=None, *, k: int | None = None, metric: str = "euclidean",
                 max_samples: int | None = 2000, seed: int = 0, block_size: int | None = None,
                 allow_zero: bool = False, param: str = "k", width: str = "sigma") -> float:
    """A kernel width from the data (see the module docstring for the two rules).

    Parameters
    ----------
    X : Tensor or array ``[n, d]``
    Y : Tensor or array ``[m, d]``, optional
        Pairwise rule only: the median over cross pairs ``(x_i, y_j)``; pool the samples first
        for the two-sample median heuristic.
    k : int, optional
        ``None`` (default): the pairwise rule; an integer >= 1: the ``k``-th-neighbour rule.
    metric : {"euclidean", "manhattan", "cosine"}, default "euclidean"
    max_samples : int or None, default 2000
        Pairwise rule: with more rows, a seeded random subset of ``max_samples`` rows of each
        array is used (``None``: all rows; the kept distances are checked against the memory
        ceiling, :func:`graphstk.memory.memory_limit`).
    seed : int, default 0
        Seeds the subsampling.
    block_size : int, optional
        Rows per distance tile.
    allow_zero : bool, default False
        Return a zero median instead of raising ``ValueError``.
    param : str, default "k"
        The caller's name for ``k`` (e.g. ``"n_neighbors"``), for the cap warning.
    width : str, default "sigma"
        The caller's parameter that gives the width explicitly, named when too few points refuse the rule.

    Returns
    -------
    float
    """
    X = as_features(X, name="X")
    if k is not None:
        if Y is not None:
            raise ValueError("the k-th-neighbour rule takes one sample X; pass Y=None (or k=None for cross pairs)")
        k = check_int(param, k)
        n = X.shape[0]
        if n < 2:
            raise ValueError(f"the k-th-neighbour width needs at least 2 points, got {n}; pass {width}= "
                             "(the kernel width) explicitly")
        if k > n - 1:
            warnings.warn(f"{param}={k} neighbours requested, but there are only {n} points: capped at "
                          f"{param}={n - 1} (each point's farthest neighbour); pass {param} <= {n - 1}",
                          UserWarning, stacklevel=3)
            k = n - 1
        _, dist = nearest_neighbors(X, k, metric, block_size)
        return median_of(dist[:, k - 1], f"the distances to the {k}-th nearest neighbour", allow_zero=allow_zero)
    gen = torch.Generator().manual_seed(int(seed))
    X = _subsample(X, max_samples, gen)
    dist = _l2dist if str(metric).lower() in ("euclidean", "l2") else _distance_fn(metric)
    if Y is None:
        if X.shape[0] < 2:
            raise ValueError(f"the median pairwise distance needs at least 2 points, got {X.shape[0]}; pass {width}= "
                             "(the kernel width) explicitly")
        m = X.shape[0]
        count = m * (m - 1) // 2
        other = X
    else:
        Y = as_features(Y, name="Y")
        if X.shape[1] != Y.shape[1]:
            raise ValueError(f"dimension mismatch: X has {X.shape[1]} features, Y has {Y.shape[1]}")
        Y = _subsample(Y.to(X.dtype), max_samples, gen)
        if X.shape[0] == 0 or Y.shape[0] == 0:
            raise ValueError("the median cross distance needs non-empty X and Y")
        count = X.shape[0] * Y.shape[0]
        other = Y
    bs = int(block_size) if block_size else max(1, BLOCK_ELEMS // max(1, other.shape[0]))
    itemsize = X.element_size()
    # the distances are the working set (refused only beyond the process's ceiling); the tile that
    # computes them shrinks to the memory free now
    bs = tile_rows(min(bs, X.shape[0]), other.shape[0] * itemsize * 2.0, fixed_bytes=count * itemsize * 2.0,
                   what=f"the median heuristic over {count} distances", hint="pass max_samples=2000 (a seeded "
                   f"random subset of the points), or give the width ({width}) explicitly", device=X.device)
    values = X.new_empty(count)
    pos = 0
    for s in range(0, X.shape[0], bs):
        e = min(X.shape[0], s + bs)
        if Y is None:
            D = dist(X[s:e], X[s:])                     # columns s.. : keep j > i
            keep = torch.ones(D.shape, dtype=torch.bool, device=D.device).triu_(1)
            block = D[keep]
        else:
            block = dist(X[s:e], Y).flatten()
        values[pos:pos + block.numel()] = block
        pos += block.numel()
    what = "the pairwise distances" if Y is None else "the cross distances"
    return median_of(values, what, allow_zero=allow_zero)


def median_sigma(X, width: str = "sigma") -> float:
    """The default kernel width ``sigma`` of the estimators (``sigma=None``): the median heuristic,
    the median Euclidean distance over pairs of a seeded subsample of at most 2000 rows of ``X``
    (the pairwise rule of :func:`median_width`; Gretton et al. 2012, Sec. 8), as scikit-learn's
    ``gamma="scale"`` picks a width from the data. ``X`` may be dense or ``scipy.sparse`` (the
    subsample is densified on the host). Raises ``ValueError`` for a zero median (duplicate points).

    Parameters
    ----------
    X : Tensor, array or scipy.sparse matrix ``[n, d]``, ``n >= 2``
    width : str, default "sigma"
        The caller's width parameter, named when ``X`` has fewer than 2 rows.

    Returns
    -------
    float
    """
    if sp.issparse(X):
        n = X.shape[0]
        if n > 2000:
            sel = np.sort(torch.randperm(n, generator=torch.Generator().manual_seed(0))[:2000].numpy())
            X = X[sel]
        X = torch.from_numpy(np.asarray(X.toarray(), dtype=np.float64))
    return median_width(X, width=width)


def _subsample(X: Tensor, max_samples: int | None, gen: torch.Generator) -> Tensor:
    if max_samples is not None and X.shape[0] > max_samples:
        sel = torch.randperm(X.shape[0], generator=gen)[:max_samples].to(X.device)
        X = X.index_select(0, sel)
    return X


def median_distance(X, Y=None, max_samples: int | None = 2000, seed: int = 0) -> float:
    """Median Euclidean distance over pairs ``i < j`` of ``X`` (or cross pairs with ``Y``); zero
    allowed. The pairwise rule of :func:`median_width` (same parameters).

    Parameters
    ----------
    X : Tensor or array ``[n, d]``
    Y : Tensor or array ``[m, d]``, optional
    max_samples : int or None, default 2000
    seed : int, default 0
    """
    return median_width(X, Y, max_samples=max_samples, seed=seed, allow_zero=True)


def kth_neighbor_distance_median(X, k: int = 10, metric: str = "euclidean", block_size: int | None = None) -> float:
    """Median over points of the distance to their ``k``-th nearest neighbour (self excluded);
    zero allowed. The neighbour rule of :func:`median_width` (``k`` capped at ``n - 1`` with a warning).

    Parameters
    ----------
    X : Tensor or array ``[n, d]``
    k : int, default 10
    metric : {"euclidean", "manhattan", "cosine"}, default "euclidean"
    block_size : int, optional
    """
    return median_width(X, k=k, metric=metric, block_size=block_size, allow_zero=True)
