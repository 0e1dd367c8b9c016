"""k-nearest-neighbour graphs of feature rows, built in row blocks (never an ``n x n`` matrix).

:func:`knn_graph` returns PyG's ``(edge_index, edge_weight)``; :func:`nearest_neighbors` is shared with
:mod:`graphstk.operators.bandwidth`; :func:`cosine_neighbors` searches sparse (CSR) rows among candidates.
Outputs are checked against the memory ceiling; tiles are sized to the free memory.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import torch
from torch import Tensor

from .._checks import check_int
from .._index import as_index
from ..memory import check_allocation, memory_limit, tile_rows
from .kernels import BLOCK_ELEMS, _distance_fn, _sqdist, as_features, check_positive
from .medians import median_of

__all__ = ["knn_graph", "nearest_neighbors", "cosine_neighbors"]

#: rows at least this dense (nonzero fraction of the whole matrix) are compared in dense tiles
DENSE_TILE_DENSITY = 0.05

_EUCLIDEAN = ("euclidean", "l2")
_MANHATTAN = ("manhattan", "l1", "cityblock")


def nearest_neighbors(X: Tensor, k: int, metric: str = "euclidean",
                      block_size: int | None = None) -> tuple[Tensor, Tensor]:
    """Indices and distances ``[n, k]`` of the ``k`` nearest neighbours of each row of ``X``
    (self excluded), neighbours in increasing distance.

    Parameters
    ----------
    X : Tensor ``[n, d]`` (checked by :func:`~graphstk.operators.kernels.as_features`)
    k : int
        Number of neighbours, ``1 <= k <= n - 1``.
    metric : {"euclidean", "manhattan", "cosine"}, default "euclidean"
    block_size : int, optional
        Rows per distance tile (default: as many as fit into ``2**22`` entries); fewer while
        the free memory is short (:func:`graphstk.memory.tile_rows`; the result is the same).
    """
    n = X.shape[0]
    if isinstance(k, bool) or int(k) != k or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    k = int(k)
    if k >= n:
        raise ValueError(f"k = {k} neighbours need at least k + 1 = {k + 1} points, got {n}; "
                         f"pass k <= {max(n - 1, 0)}")
    m = str(metric).lower()
    dist_fn = _distance_fn(m)  # validates the name
    block_size = check_int("block_size", block_size, allow_none=True)
    check_allocation(n * k * 24.0, f"the kNN indices and distances of {n} points x {k} neighbours",
                     "lower k or subsample the points", X.device)
    bs = int(block_size) if block_size else max(1, BLOCK_ELEMS // max(1, n))
    # the tile shrinks to the memory free now (the result does not depend on it); refused only
    # when one row of it cannot fit the process's ceiling
    bs = tile_rows(min(bs, n), 2.0 * n * X.element_size(), fixed_bytes=n * k * 24.0, device=X.device,
                   what=f"one row of the distance tile of the kNN search ({n} float distances, 2 copies)",
                   hint="subsample the points")
    tile = (lambda A: _sqdist(A, X)) if m in _EUCLIDEAN else (lambda A: dist_fn(A, X))  # rank only
    idx = torch.empty(n, k, dtype=torch.long, device=X.device)
    for s in range(0, n, bs):
        e = min(n, s + bs)
        D = tile(X[s:e])
        ar = torch.arange(e - s, device=X.device)
        D[ar, ar + s] = float("inf")
        idx[s:e] = torch.topk(D, k, dim=1, largest=False, sorted=True).indices
        del D
    dist = _pair_distances(X, idx, m)
    # re-sort by the exact distances (ties from the fast ranking path)
    dist, order = dist.sort(dim=1, stable=True)
    return idx.gather(1, order), dist


def _pair_distances(X: Tensor, idx: Tensor, metric: str) -> Tensor:
    """Exact distances ``[n, k]`` between each row and its selected neighbours, in row blocks of
    at most ``2**22`` gathered entries (``O(n k d)`` work, ``O(block)`` memory)."""
    n, k = idx.shape
    d = max(1, X.shape[1])
    out = torch.empty(n, k, dtype=X.dtype, device=X.device)
    step = max(1, BLOCK_ELEMS // (k * d))
    for s in range(0, n, step):
        e = min(n, s + step)
        rows = X[s:e].unsqueeze(1)                    # [b, 1, d]
        nbrs = X[idx[s:e]]                            # [b, k, d]
        if metric in _EUCLIDEAN:
            out[s:e] = (rows - nbrs).norm(dim=2)
        elif metric in _MANHATTAN:
            out[s:e] = (rows - nbrs).abs().sum(2)
        else:
            out[s:e] = _cosine_paired(rows.expand_as(nbrs), nbrs)
    return out


def _cosine_paired(A: Tensor, B: Tensor) -> Tensor:
    na, nb = A.norm(dim=-1), B.norm(dim=-1)
    denom = na * nb
    cos = torch.where(denom > 0, (A * B).sum(-1) / denom.clamp_min(torch.finfo(A.dtype).tiny), torch.zeros_like(denom))
    return (1.0 - cos).clamp_min(0.0)


def knn_graph(X, k: int, metric: str = "euclidean", mode: str = "connectivity",
              sigma: float | None = None, symmetric: bool = True,
              block_size: int | None = None) -> tuple[Tensor, Tensor]:
    """k-nearest-neighbour graph of the rows of ``X`` as ``(edge_index [2, E], edge_weight [E])``.

    Built blockwise (a ``block_size x n`` distance tile at a time, ``torch.topk`` per block),
    never an ``n x n`` matrix. A point is never its own neighbour (no self loops).

    Parameters
    ----------
    X : Tensor or array ``[n, d]``
    k : int
        Neighbours per point, ``1 <= k <= n - 1``.
    metric : {"euclidean", "manhattan", "cosine"}, default "euclidean"
    mode : {"connectivity", "distance", "gaussian"}, default "connectivity"
        Weight 1; the distance itself; or ``exp(-dist^2 / (2 sigma^2))`` with ``sigma``
        defaulting to the lower median of all ``n k`` kNN distances
        (``graphstk.operators.medians.median_of`` with ``lower=True``).
    sigma : float, optional
        Width of the ``"gaussian"`` weights.
    symmetric : bool, default True
        ``True`` returns the union ``i ~ j`` if ``j`` is among the k nearest of ``i`` *or* vice
        versa, both directions present, sorted by (row, col): the form
        :class:`~graphstk.operators.GraphKernel` and PyG expect. ``False`` returns the directed
        edges ``(i, j)`` with ``edge_index[0] = i`` (the query) and ``edge_index[1] = j`` one of its
        k neighbours (``n k`` edges, neighbours in increasing distance).
    block_size : int, optional
        Rows per distance tile.
    """
    X = as_features(X)
    if mode not in ("connectivity", "distance", "gaussian"):
        raise ValueError(f"mode must be 'connectivity', 'distance' or 'gaussian', got {mode!r}")
    n = X.shape[0]
    idx, dist = nearest_neighbors(X, k, metric, block_size)
    row = torch.arange(n, device=X.device).repeat_interleave(idx.shape[1])
    col = idx.flatten()
    dist = dist.flatten()
    if mode == "connectivity":
        w = torch.ones_like(dist)
    elif mode == "distance":
        w = dist
    else:
        s = median_of(dist, "the kNN distances", lower=True) if sigma is None else check_positive("sigma", sigma)
        w = torch.exp(-dist.square() / (2.0 * s * s))
    edge_index = torch.stack([row, col])
    if not symmetric:
        return edge_index, w
    # union of both directions; a pair found from both ends keeps one (equal) weight
    row2, col2 = torch.cat([row, col]), torch.cat([col, row])
    key, inv = torch.unique(row2 * n + col2, sorted=True, return_inverse=True)
    w_u = torch.full((key.numel(),), float("-inf"), dtype=w.dtype, device=w.device)
    w_u = w_u.scatter_reduce(0, inv, torch.cat([w, w]), reduce="amax")
    return torch.stack([key // n, key % n]), w_u


def _stable_top_k(T: Tensor, k: int) -> Tensor:
    """The columns of the ``k`` largest entries of each row of ``T`` ``[m, c]`` (no NaN, ``k <= c``), in
    decreasing value, ties by increasing column: the first ``k`` columns of a stable descending sort of each row.
    ``torch.topk`` finds each row's ``k``-th value ``v`` in linear time but is not order-stable on ties; the
    entries above ``v`` and the first ties at ``v`` (``k`` in all) are then sorted alone, stably."""
    v = torch.topk(T, k, dim=1, sorted=True).values[:, -1:]
    above, tied = T > v, T == v
    take = above | (tied & (tied.cumsum(1) <= k - above.sum(1, keepdim=True)))
    cols = take.nonzero()[:, 1].view(T.shape[0], k)        # row-major: increasing column within a row
    return cols.gather(1, torch.sort(T.gather(1, cols), dim=1, descending=True, stable=True).indices)


def cosine_neighbors(X, k: int, candidates: Tensor | None = None, tiles: str = "auto") -> tuple[Tensor, Tensor]:
    """The ``k`` candidate rows of largest cosine similarity to each row of a sparse matrix.

    Parameters
    ----------
    X : scipy.sparse matrix or array ``[n, d]``
        Rows to compare. Each tile is a ``[block, len(candidates)]`` dense block of at most ``2**22``
        similarities (or one row): the sparse product ``X[block] X[candidates]^T`` for sparse rows;
        for rows at least ``DENSE_TILE_DENSITY`` nonzero (bag-of-words rows of Amazon's graphs
        are 35 % dense, where a sparse-by-sparse product does far more work per entry than a dense
        one), a dense product with the candidate rows held dense once, provided that copy
        (``8 d len(candidates)`` bytes) takes at most an eighth of the memory ceiling
        (:func:`graphstk.memory.memory_limit`); the route depends on sizes alone.
    tiles : {"auto", "dense", "sparse"}, default "auto"
        The tile product: by density as above, or forced (both give the same neighbours up to
        floating-point rounding).
    k : int
        Neighbours per row, ``>= 1``; at most the number of candidates (minus one for a row that
        is itself a candidate).
    candidates : LongTensor of distinct row ids, or a boolean mask ``[n]``, optional
        The rows that may be neighbours (default every row). A row is never its own neighbour.

    Returns
    -------
    (index, similarity) : LongTensor and float64 Tensor ``[n, k]``
        Row ids of the neighbours (ids of ``X``) in decreasing similarity (ties: the lower
        candidate position first), and the cosine similarities. A pair with similarity ``<= 0``
        (an all-zero row, or no shared feature) has index ``-1``: no neighbour.
    """
    A = sp.csr_matrix(X, dtype=np.float64)
    n = A.shape[0]
    if isinstance(k, bool) or int(k) != k or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    k = int(k)
    if candidates is None:
        cand = np.arange(n)
    else:
        cand = as_index(candidates, n, "cpu", name="candidates", allow_none=False).numpy()
        if np.unique(cand).size != cand.size:
            raise ValueError(f"candidates has {cand.size - np.unique(cand).size} repeated row ids; pass each "
                             "candidate row once (e.g. candidates.unique())")
    if k > cand.size - 1:
        raise ValueError(f"k = {k} neighbours need at least k + 1 = {k + 1} candidate rows, got {cand.size}; "
                         f"pass k <= {max(cand.size - 1, 0)}")
    check_allocation(n * k * 16.0, f"the indices and similarities of {n} rows x {k} neighbours",
                     "lower k", "cpu")
    norms = np.sqrt(np.asarray(A.multiply(A).sum(1)).ravel())
    A = sp.diags(np.where(norms > 0, 1.0 / np.maximum(norms, np.finfo(np.float64).tiny), 0.0)) @ A
    if tiles not in ("auto", "dense", "sparse"):
        raise ValueError(f"tiles must be 'auto', 'dense' or 'sparse', got {tiles!r}")
    dense = tiles == "dense" or (tiles == "auto" and A.nnz >= DENSE_TILE_DENSITY * n * max(1, A.shape[1])
                                 and 8.0 * A.shape[1] * cand.size <= memory_limit("cpu")[0] / 8)
    if dense:
        Cd = torch.from_numpy(A[cand].toarray())                       # [c, d], once

        def tile(s: int, e: int) -> Tensor:
            return torch.from_numpy(A[s:e].toarray()) @ Cd.T
    else:
        Ct = A[cand].T.tocsc()

        def tile(s: int, e: int) -> Tensor:
            return torch.from_numpy(np.asarray((A[s:e] @ Ct).todense()))
    pos = np.full(n, -1)
    pos[cand] = np.arange(cand.size)
    idx = np.empty((n, k), dtype=np.int64)
    sim = np.empty((n, k))
    step = max(1, BLOCK_ELEMS // max(1, cand.size))
    for s in range(0, n, step):
        e = min(n, s + step)
        T = tile(s, e)
        own = pos[s:e]
        hit = np.nonzero(own >= 0)[0]
        T[hit, own[hit]] = float("-inf")
        order = _stable_top_k(T, k)
        sim[s:e] = T.gather(1, order).numpy()
        idx[s:e] = cand[order.numpy()]
    idx[~(sim > 0)] = -1
    return torch.from_numpy(idx), torch.from_numpy(np.where(sim > 0, sim, 0.0))
