"""Toy problems of the Fredholm-kernel paper (Que, Belkin & Wang 2014, Sec. 5.1.2, Tables 1 and 2:
:func:`make_two_lines`, :func:`make_circle`) and a degree-corrected block model of any size
(:func:`make_dcsbm`). Every generator draws from one ``numpy.random.default_rng(seed)``: the same
arguments give the same data on every machine (``docs/data.md``).
"""
from __future__ import annotations

import numbers

import numpy as np
import torch
from torch_geometric.data import Data

from .vector_dataset import VectorDataset

__all__ = ["dcsbm_edges", "make_circle", "make_dcsbm", "make_two_lines"]


def _integer(v, name: str, lo: int | None, fn: str, what: str = "") -> None:
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or (lo is not None and v < lo):
        raise ValueError(f"{fn}: {name} must be {what or f'an integer >= {lo}'}, got {v!r}")


def _check(n, noise, dim, seed, fn: str) -> None:
    if n is None:
        raise TypeError(f"{fn}: give the number of points, e.g. n=3200 (200 labeled + 2000 unlabeled + 1000 test)")
    _integer(n, "n", 1, fn, "a positive integer number of points")
    _integer(dim, "dim", 2, fn, "an integer >= 2 (two manifold coordinates + noise)")
    if not isinstance(noise, numbers.Real) or not np.isfinite(noise) or noise < 0:
        raise ValueError(f"{fn}: noise must be a finite standard deviation >= 0, got {noise!r}")
    _integer(seed, "seed", None, fn, "an integer")


def make_two_lines(n: int | None = None, noise: float = 0.3, dim: int = 100, seed: int = 0) -> VectorDataset:
    """The "two lines" toy problem of the Fredholm paper's Table 1 (linear classifiers).

    ``X[:, 0] = x1 ~ U(-1, 1)`` (no noise), ``X[:, 1] = s + noise * N(0, 1)`` with ``s = +1`` for
    ``ceil(n/2)`` points and ``-1`` for the others (in random order), ``X[:, 2:] = noise * N(0, 1)``;
    label ``y = 1`` where ``x1 >= 0``, else 0 (``classes = [0, 1]``).

    Parameters
    ----------
    n : int
        Number of points (required).
    noise : float, default 0.3
        Standard deviation of the Gaussian noise (the paper uses 0.3 and 0.1).
    dim : int, default 100
        Ambient dimension (``dim - 2`` pure-noise coordinates).
    seed : int, default 0
        Seed of the :func:`numpy.random.default_rng` that draws everything.

    Returns
    -------
    VectorDataset
        ``X`` float64 ``[n, dim]``, no parts, no splits.
    """
    _check(n, noise, dim, seed, "make_two_lines")
    rng = np.random.default_rng(seed)
    x1 = rng.uniform(-1.0, 1.0, size=n)
    side = np.where(rng.permutation(n) < (n + 1) // 2, 1.0, -1.0)
    X = noise * rng.standard_normal((n, dim))
    X[:, 0] = x1
    X[:, 1] += side
    y = (x1 >= 0).astype(np.int64)
    desc = (f"TwoLines: the Fredholm-kernel paper's linear toy problem (Table 1; Que, Belkin & Wang 2014, Sec. "
            f"5.1.2): x1 ~ U(-1, 1), x2 = +-1 (two parallel lines, half the points each) plus Gaussian noise of "
            f"standard deviation {noise}, {dim - 2} further coordinates of pure noise, label [x1 >= 0]; "
            f"n = {n}, dim = {dim}, seed = {seed} (numpy default_rng). The lines are clusters that do not carry "
            "the label (cluster assumption violated, noise assumption holds). Generated, not the paper's draw.")
    return VectorDataset("TwoLines", torch.from_numpy(X), torch.from_numpy(y), [0, 1], {}, {}, desc)


def make_circle(n: int | None = None, noise: float = 0.1, dim: int = 100, seed: int = 0) -> VectorDataset:
    """The "circle" toy problem of the Fredholm paper's Table 2 (Gaussian-kernel classifiers).

    Angle ``t ~ U(0, 2 pi)``; ``X[:, :2] = (cos t, sin t) + noise * N(0, I_2)``,
    ``X[:, 2:] = noise * N(0, 1)``; label ``y = 1`` when the observed point ``(X[:, 0], X[:, 1])``
    lies in quadrant I or III (``X0 >= 0 and X1 >= 0``, or ``X0 < 0 and X1 < 0``), else 0. As in the
    first author's generator, the quadrant is read from the noisy coordinates.

    Parameters
    ----------
    n : int
        Number of points (required).
    noise : float, default 0.1
        Standard deviation of the Gaussian noise.
    dim : int, default 100
        Ambient dimension (``dim - 2`` pure-noise coordinates).
    seed : int, default 0
        Seed of the :func:`numpy.random.default_rng` that draws everything.

    Returns
    -------
    VectorDataset
        ``X`` float64 ``[n, dim]``, ``classes = [0, 1]``, no parts, no splits.
    """
    _check(n, noise, dim, seed, "make_circle")
    rng = np.random.default_rng(seed)
    angle = rng.uniform(0.0, 2.0 * np.pi, size=n)
    X = noise * rng.standard_normal((n, dim))
    X[:, 0] += np.cos(angle)
    X[:, 1] += np.sin(angle)
    y = ((X[:, 0] >= 0) == (X[:, 1] >= 0)).astype(np.int64)
    desc = (f"Circle: the Fredholm-kernel paper's non-linear toy problem (Table 2; Que, Belkin & Wang 2014, Sec. "
            f"5.1.2): angle ~ U(0, 2 pi), (cos, sin) on the unit circle plus Gaussian noise of standard deviation "
            f"{noise}, {dim - 2} further coordinates of pure noise, label 1 in quadrants I and III of the observed "
            f"first two coordinates; n = {n}, dim = {dim}, seed = {seed} (numpy default_rng). One connected "
            "manifold carrying both labels (no cluster structure). Generated, not the paper's draw.")
    return VectorDataset("Circle", torch.from_numpy(X), torch.from_numpy(y), [0, 1], {}, {}, desc)


# --------------------------------------------------------------------------- degree-corrected block model
#: edges drawn per batch by :func:`dcsbm_edges`: a constant, so the graph of a seed never depends on
#: the machine (the batches consume the generator's stream in the same order everywhere)
DCSBM_BATCH = 1 << 22


def _check_dcsbm(num_nodes, num_edges, num_classes, homophily, exponent, max_weight, num_features, seed) -> None:
    for v, name, lo in ((num_nodes, "num_nodes", 2), (num_edges, "num_edges", 0), (num_classes, "num_classes", 1),
                        (num_features, "num_features", 0), (seed, "seed", None)):
        _integer(v, name, lo, "make_dcsbm", "" if lo is not None else "an integer")
    if not isinstance(homophily, numbers.Real) or not 0.0 <= homophily <= 1.0:
        raise ValueError(f"make_dcsbm: homophily is the fraction of edges inside a class, in [0, 1]; got {homophily!r}")
    if num_classes == 1 and homophily != 1.0:
        raise ValueError("make_dcsbm: with one class every edge is inside it: pass homophily=1.0 or num_classes >= 2")
    if not isinstance(exponent, numbers.Real) or not exponent > 1.0:
        raise ValueError(f"make_dcsbm: exponent (of the power-law degree tail) must be > 1, got {exponent!r}")
    if max_weight is not None and (not isinstance(max_weight, numbers.Real) or not max_weight >= 1.0):
        raise ValueError(f"make_dcsbm: max_weight must be >= 1 (or None: sqrt(num_nodes)), got {max_weight!r}")


def dcsbm_edges(num_nodes: int, num_edges: int, num_classes: int = 10, homophily: float = 0.8,
                exponent: float = 2.5, max_weight: float | None = None, seed: int = 0
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The classes and undirected edges of :func:`make_dcsbm` as NumPy arrays ``(y, u, v)``: ``y`` int64
    ``[num_nodes]``, ``u < v`` int64 ``[E]`` sorted by ``(u, v)``, no self-loops or repeats (``E <= num_edges``).

    Parameters
    ----------
    num_nodes, num_edges, num_classes, homophily, exponent, max_weight, seed
        As in :func:`make_dcsbm`.
    """
    _check_dcsbm(num_nodes, num_edges, num_classes, homophily, exponent, max_weight, 0, seed)
    N, E, C = int(num_nodes), int(num_edges), int(num_classes)
    rng = np.random.default_rng(seed)
    y = rng.integers(0, C, size=N, dtype=np.int64)
    cap = float(np.sqrt(N)) if max_weight is None else float(max_weight)
    # Pareto propensities: P(theta >= t) = t^-(exponent - 1), t >= 1; expected degrees are proportional
    theta = np.minimum((1.0 - rng.random(N)) ** (-1.0 / (float(exponent) - 1.0)), cap)
    order = np.argsort(y, kind="stable")                  # node ids sorted by class
    cum = np.cumsum(theta[order])
    total = float(cum[-1])
    ends = np.searchsorted(y[order], np.arange(C), side="right")          # one past each class's last slot
    starts = np.concatenate([[0], ends[:-1]])
    before = np.where(starts > 0, cum[np.maximum(starts - 1, 0)], 0.0)    # weight of the classes before c
    weight = np.where(ends > starts, cum[np.maximum(ends - 1, 0)] - before, 0.0)
    ys = y[order]
    keys = []
    for lo in range(0, E, DCSBM_BATCH):
        m = min(DCSBM_BATCH, E - lo)
        src = np.minimum(np.searchsorted(cum, rng.random(m) * total, side="right"), N - 1)
        cs = ys[src]
        ct = cs if C == 1 else np.where(rng.random(m) < homophily, cs, (cs + rng.integers(1, C, size=m)) % C)
        dst = np.searchsorted(cum, before[ct] + rng.random(m) * weight[ct], side="right")
        dst = np.clip(dst, starts[ct], ends[ct] - 1)      # rounding at a class's last slot
        a, b = order[src], order[dst]
        keep = a != b
        a, b = a[keep], b[keep]
        keys.append(np.minimum(a, b) * N + np.maximum(a, b))
        del src, cs, ct, dst, a, b, keep
    key = np.concatenate(keys) if keys else np.zeros(0, dtype=np.int64)
    del keys
    key.sort()                                            # in place: repeats become neighbours
    if key.size:
        key = key[np.concatenate([[True], key[1:] != key[:-1]])]
    u, v = np.divmod(key, N)
    return y, u, v


def make_dcsbm(num_nodes: int, num_edges: int, num_classes: int = 10, homophily: float = 0.8,
               exponent: float = 2.5, max_weight: float | None = None, num_features: int = 0,
               feature_signal: float = 1.0, seed: int = 0):
    """A labelled graph of any size: the degree-corrected stochastic block model (Karrer & Newman, 2011).

    Expected degrees follow Pareto propensities ``theta`` and the edge homophily is ``homophily``; work and
    memory are ``O(num_nodes + num_edges)`` (``docs/data.md`` describes the draw).

    Parameters
    ----------
    num_nodes : int
        ``N >= 2``.
    num_edges : int
        Undirected edges drawn; self-loops and repeated pairs are dropped, so the graph has at most
        this many (``edge_index`` stores each in both directions: up to ``2 num_edges`` columns).
    num_classes : int, default 10
    homophily : float in [0, 1], default 0.8
        The fraction of edges whose ends share a class (``1 / num_classes``: no class signal).
    exponent : float > 1, default 2.5
        Tail exponent of the degree propensities (smaller: heavier tail).
    max_weight : float, optional
        Cap of the propensities (default ``sqrt(num_nodes)``).
    num_features : int, default 0
        Node features ``x`` ``[N, num_features]`` float32: a class mean (``feature_signal`` times a
        standard normal vector per class) plus standard normal noise; 0: no ``x``.
    feature_signal : float, default 1.0
    seed : int, default 0
        Seed of the :func:`numpy.random.default_rng` that draws everything.

    Returns
    -------
    torch_geometric.data.Data
        ``edge_index`` int64 ``[2, 2E]`` (the edges ``(u, v)``, ``u < v``, sorted, then reversed),
        ``y`` int64 ``[N]``, ``x`` (when ``num_features > 0``), ``num_nodes``.
    """
    _check_dcsbm(num_nodes, num_edges, num_classes, homophily, exponent, max_weight, num_features, seed)
    if not isinstance(feature_signal, numbers.Real) or not np.isfinite(feature_signal):
        raise ValueError(f"make_dcsbm: feature_signal must be a finite number, got {feature_signal!r}")
    y, u, v = dcsbm_edges(num_nodes, num_edges, num_classes, homophily, exponent, max_weight, seed)
    E = u.size
    ei = torch.empty(2, 2 * E, dtype=torch.long)          # each edge (u, v), u < v, then (v, u)
    ei[0, :E], ei[1, E:] = torch.from_numpy(u), torch.from_numpy(u)
    del u
    ei[1, :E], ei[0, E:] = torch.from_numpy(v), torch.from_numpy(v)
    del v
    data = Data(edge_index=ei, y=torch.from_numpy(y), num_nodes=int(num_nodes))
    if num_features:
        frng = np.random.default_rng([int(seed), 1])      # a stream of its own: x does not change the graph
        centers = (float(feature_signal) * frng.standard_normal((int(num_classes), int(num_features)))).astype(np.float32)
        x = frng.standard_normal((int(num_nodes), int(num_features)), dtype=np.float32)
        x += centers[y]
        data.x = torch.from_numpy(x)
    return data
