"""Toy problems of the Fredholm-kernel paper (Que, Belkin & Wang 2014, Sec. 5.1.2, Tables 1 and 2).

"Each example is based on 1-dimensional manifold(s), and corrupted with additional Gaussian
noise in R^100" (Sec. 5.1.2). The paper's Figure 3 is missing from the text; the generators
below follow the first author's public generators as described in the project notes
(``notes/kernel_papers_errata.md``, Fredholm section):

* :func:`make_two_lines` ("twoline-nocluster", Table 1, linear): ``x1 ~ U(-1, 1)``,
  ``x2 = +-1`` plus noise, ``dim - 2`` pure-noise coordinates, label ``[x1 >= 0]``. The two
  lines are two clusters that do *not* carry the label, so the cluster assumption fails while
  the noise assumption holds.
* :func:`make_circle` ("circle-quad", Table 2, non-linear): angle ``~ U(0, 2 pi)``, point
  ``(cos, sin)`` plus noise, ``dim - 2`` pure-noise coordinates, label 1 in quadrants I and III.

Noise is Gaussian with standard deviation ``noise`` (the paper's noise scale: 0.1 or 0.3 for
the two lines, 0.1 for the circle) on every coordinate except ``x1`` of the two lines.
Randomness comes from one :func:`numpy.random.default_rng` seeded with ``seed``: the same
arguments give the same data on every machine. The paper draws labeled, 2000 unlabeled and
held-out test points from one distribution; draw ``n`` = their total and split with a protocol.
"""
from __future__ import annotations

import numbers

import numpy as np
import torch

from .vector_dataset import VectorDataset

__all__ = ["make_circle", "make_two_lines"]


def _check(n, noise, dim, seed, fn: str) -> None:
    if n is None:
        raise TypeError(f"{fn}: give the number of points, e.g. n=3200 (200 labeled + 2000 unlabeled + 1000 test)")
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise ValueError(f"{fn}: n must be a positive integer number of points, got {n!r}")
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral) or dim < 2:
        raise ValueError(f"{fn}: dim must be an integer >= 2 (two manifold coordinates + noise), got {dim!r}")
    if not isinstance(noise, numbers.Real) or not np.isfinite(noise) or noise < 0:
        raise ValueError(f"{fn}: noise must be a finite standard deviation >= 0, got {noise!r}")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise ValueError(f"{fn}: seed must be an integer, got {seed!r}")


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
