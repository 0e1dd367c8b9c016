"""Non-neural graph filters as spectral transforms: SGC, S2GC, DGC (heat kernel) and GGCM.

Each filter is a transform ``s(lambda)`` of a normalised adjacency ``S`` (eigenvalues in
``[-1, 1]``), with the interface of ``graphstk.spectral.transforms.Polynomial``:

* ``f(lam)``: ``s`` on eigenvalues (``f(lam)`` for a tensor of eigenvalues);
* ``f.apply(matmul, X)``: ``s(S) X`` for a block ``X [N, d]`` (multi-right-hand-side), given the
  product ``Z -> S Z`` (one sparse product per step, no other work on ``N``-sized data beyond a
  running sum);
* ``f.iter_depths(matmul, X, depths)``: ``s_K(S) X`` for several depths ``K`` of the same filter
  from ONE propagation, yielded in increasing ``K`` (a grid over depths costs its deepest member);
* ``f.coefficients()``: ``(pi_0, ..., pi_q)`` of ``s(l) = sum_p pi_p l^p`` (the polynomial
  filters), so that ``s(S)`` is a graph kernel operator
  (``graphstk.operators.composed.GraphFilter``, ``Filter.kernel``).

Unlike STKR's ``graphstk.spectral.transforms.Polynomial`` (``p >= 1``), these filters have a
``p = 0`` term (the identity, a node's own features).

* ``SGCFilter``: ``s(l) = l^K`` (Wu et al. 2019, Eq. 8);
* ``S2GCFilter``: ``s(l) = alpha + (1 - alpha) / K sum_{k=1}^K l^k`` (Zhu & Koniusz 2021, Sec. 4);
* ``HeatKernelFilter``: DGC's ``s(l) = (1 - (t/K)(1 - l))^K``, the heat kernel ``exp(-t (1 - l))``
  in ``K`` Euler steps (Wang et al. 2021, Sec. 3-4);
* ``GGCMFilter``: lazy steps, each averaged with an inverse step on a negative graph, plus a
  residual ``alpha X`` (Wang et al. 2023, the section introducing GGCM).

The papers apply their filter to ``S~ = D~^{-1/2} (A + I) D~^{-1/2}`` (GCN's renormalisation);
here ``S`` is whatever the caller's ``matmul`` multiplies by (``FeatureSTKR`` uses STKR's base
kernel of Eq. 23, the peers of the Planetoid table use ``S~``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

import torch
from torch import Tensor

from .transforms import Transform, horner

__all__ = ["Filter", "SGCFilter", "S2GCFilter", "HeatKernelFilter", "GGCMFilter", "negative_degree",
           "random_negative_graph", "degree_projection"]

MatMul = Callable[[Tensor], Tensor]


def _int_at_least(name: str, v, low: int) -> int:
    if isinstance(v, bool) or int(v) != v or v < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {v!r}")
    return int(v)


def _unit(name: str, v, *, open_low: bool = False) -> float:
    v = float(v)
    if not (0.0 < v <= 1.0 if open_low else 0.0 <= v <= 1.0):
        raise ValueError(f"{name} must lie in {'(0, 1]' if open_low else '[0, 1]'}, got {v!r}")
    return v


def _depths(depths, K: int) -> list[int]:
    out = sorted({_int_at_least("depth", k, 1) for k in ([K] if depths is None else depths)})
    if not out:
        raise ValueError("depths must name at least one depth")
    return out


class Filter(Transform):
    """Base class of the graph filters: ``s(S) X`` by a loop of sparse products (module docstring)."""

    K: int

    def with_depth(self, K: int) -> "Filter":  # pragma: no cover - abstract
        """The same filter with ``K`` steps."""
        raise NotImplementedError

    def iter_depths(self, matmul: MatMul, x: Tensor, depths: Sequence[int] | None = None
                    ) -> Iterator[tuple[int, Tensor]]:  # pragma: no cover - abstract
        """``(K, s_K(S) x)`` for each ``K`` of ``depths`` (default ``[self.K]``), increasing ``K``,
        from one propagation (``max(depths)`` products with ``S``)."""
        raise NotImplementedError

    def apply(self, matmul: MatMul, x: Tensor) -> Tensor:
        """``s(S) x`` for a block ``x [N, d]`` given ``matmul: Z -> S Z``; ``K`` products with ``S``."""
        return next(iter(self.iter_depths(matmul, x, [self.K])))[1]

    def coefficients(self) -> tuple[float, ...]:
        """``(pi_0, ..., pi_q)`` with ``s(l) = sum_{p=0}^q pi_p l^p`` (index ``p`` is the power)."""
        raise TypeError(f"{type(self).__name__} is not a polynomial in S alone")

    def kernel(self, graph):
        """``s(S_hat)`` as a kernel operator over all nodes
        (``graphstk.operators.composed.GraphFilter``; out-of-sample rows for hidden nodes of
        a ``graphstk.operators.GraphKernel``, Eq. 5 and 23 of Zhai et al.)."""
        from ..operators.composed import GraphFilter

        return GraphFilter(graph, self.coefficients())

    def __call__(self, lam):
        lam = torch.as_tensor(lam, dtype=torch.float64)
        return horner(self.coefficients(), lambda v: v * lam, torch.ones_like(lam))


@dataclass(frozen=True)
class SGCFilter(Filter):
    """SGC's filter, ``s(l) = l^K``: ``S^K X`` (Wu et al., ICML 2019, Eq. 8:
    ``Y = softmax(S^K X Theta)`` with ``S = D~^{-1/2} A~ D~^{-1/2}``, ``A~ = A + I``).

    Parameters
    ----------
    K : int >= 1, default 2
        Number of propagation steps (the paper's ``K = 2`` on the citation graphs).
    """

    K: int = 2

    def __post_init__(self):
        object.__setattr__(self, "K", _int_at_least("K", self.K, 1))

    def with_depth(self, K: int) -> "SGCFilter":
        return SGCFilter(K)

    def coefficients(self) -> tuple[float, ...]:
        return (0.0,) * self.K + (1.0,)

    def iter_depths(self, matmul, x, depths=None):
        Z, done = x, 0
        for k in _depths(depths, self.K):
            while done < k:
                Z, done = matmul(Z), done + 1
            yield k, Z


@dataclass(frozen=True)
class S2GCFilter(Filter):
    """S2GC's filter (Zhu & Koniusz, "Simple spectral graph convolution", ICLR 2021, Sec. 4, the S2GC filter:
    ``X' = (1/K) sum_{k=1}^{K} ((1 - alpha) T~^k X + alpha X)``, ``T~ = D~^{-1/2} A~ D~^{-1/2}``):

        s(l) = alpha + (1 - alpha) / K * sum_{k=1}^{K} l^k.

    Parameters
    ----------
    K : int >= 1, default 16
        Number of powers averaged (the paper's ``K = 16`` on the citation graphs).
    alpha : float in [0, 1], default 0.05
        Weight of the node's own features.
    """

    K: int = 16
    alpha: float = 0.05

    def __post_init__(self):
        object.__setattr__(self, "K", _int_at_least("K", self.K, 1))
        object.__setattr__(self, "alpha", _unit("alpha", self.alpha))

    def with_depth(self, K: int) -> "S2GCFilter":
        return S2GCFilter(K, self.alpha)

    def coefficients(self) -> tuple[float, ...]:
        return (self.alpha,) + ((1.0 - self.alpha) / self.K,) * self.K

    def iter_depths(self, matmul, x, depths=None):
        Z, total, done = x, torch.zeros_like(x), 0
        for k in _depths(depths, self.K):
            while done < k:
                Z, done = matmul(Z), done + 1
                total = total + Z
            yield k, self.alpha * x + ((1.0 - self.alpha) / k) * total


@dataclass(frozen=True)
class HeatKernelFilter(Filter):
    """DGC's heat kernel in ``K`` Euler steps (Wang et al., NeurIPS 2021, "Dissecting the diffusion
    process in linear graph convolutional networks", Sec. 3-4: the heat kernel ``exp(-T L~)`` of
    ``L~ = I - T~`` applied as ``X' = (I - (T/K) L~)^K X`` with step ``Delta t = T / K``):

        s(l) = (1 - (t/K) (1 - l))^K  ->  exp(-t (1 - l))  as  K -> infinity.

    Each step is the lazy walk ``(1 - t/K) I + (t/K) S``: one sparse product.

    Parameters
    ----------
    t : float > 0, default 5.27
        End time ``T`` (the paper's Cora value; CiteSeer 3.78, PubMed 6.05).
    K : int >= 1, default 250
        Number of steps (the paper's Cora value); with ``t / K <= 1`` each step is a lazy walk.
    """

    t: float = 5.27
    K: int = 250

    def __post_init__(self):
        object.__setattr__(self, "K", _int_at_least("K", self.K, 1))
        t = float(self.t)
        if not 0.0 < t < float("inf"):
            raise ValueError(f"the end time t must be a finite number > 0, got {self.t!r}")
        object.__setattr__(self, "t", t)

    def with_depth(self, K: int) -> "HeatKernelFilter":
        return HeatKernelFilter(self.t, K)

    def coefficients(self) -> tuple[float, ...]:
        h = self.t / self.K
        return tuple(math.comb(self.K, p) * h ** p * (1.0 - h) ** (self.K - p) for p in range(self.K + 1))

    def __call__(self, lam):
        lam = torch.as_tensor(lam, dtype=torch.float64)
        return (1.0 - (self.t / self.K) * (1.0 - lam)) ** self.K

    def iter_depths(self, matmul, x, depths=None):
        """``s(S) x`` for each step count ``K'`` of ``depths`` at the SAME end time ``t``: every ``K'``
        has its own step ``t / K'`` and runs its own ``K'`` products (the heat kernel at one end time
        is not a prefix of a longer one)."""
        for k in _depths(depths, self.K):
            h = self.t / k
            Z = x
            for _ in range(k):
                Z = (1.0 - h) * Z + h * matmul(Z)
            yield k, Z


def negative_degree(edge_index: Tensor, num_nodes: int, rate: float = 20.0) -> int:
    """GGCM's negative-graph degree: ``rate`` times the mean degree of the graph (self-loops not
    counted), rounded up to an even integer (a ``k``-regular graph on ``N`` nodes needs ``N k`` even),
    at least 2 and below ``num_nodes``."""
    if not float(rate) > 0:
        raise ValueError(f"rate must be > 0, got {rate!r}")
    E = int((edge_index[0] != edge_index[1]).sum())
    k = int(float(rate) * E / max(int(num_nodes), 1))
    k = max(2, k + (k % 2))
    return min(k, (int(num_nodes) - 1) // 2 * 2)


def random_negative_graph(num_nodes: int, degree: int, generator: torch.Generator | None = None,
                          device=None, dtype=torch.float64) -> Tensor:
    """A random ``degree``-regular multigraph on ``num_nodes`` nodes, normalised by its degree: the
    union of ``degree / 2`` uniformly random permutations ``pi_j`` and their inverses
    (``A = sum_j P_j + P_j^T``, the permutation model of random regular graphs), returned as the
    sparse CSR matrix ``A / degree`` (rows sum to 1). GGCM's negative graph is a random
    regular graph; this draws one with torch alone, in ``O(N degree)``."""
    degree = _int_at_least("degree", degree, 2)
    if degree % 2:
        raise ValueError(f"degree must be even (the union of degree/2 permutations), got {degree}")
    N = int(num_nodes)
    src = torch.arange(N, device=device).repeat(degree // 2)
    dst = torch.cat([torch.randperm(N, generator=generator).to(device) for _ in range(degree // 2)])
    rows, cols = torch.cat([src, dst]), torch.cat([dst, src])
    vals = torch.full((rows.numel(),), 1.0 / degree, dtype=dtype, device=device)
    return torch.sparse_coo_tensor(torch.stack([rows, cols]), vals, (N, N),
                                   check_invariants=False).coalesce().to_sparse_csr()


def degree_projection(degree: Tensor) -> MatMul:
    """``Z -> u (u^T Z)`` with ``u = sqrt(d) / ||sqrt(d)||``: the top eigenvector of
    ``S = D^{-1/2} W D^{-1/2}`` on a connected graph (``S u = u``), and the normalised adjacency of
    a negative graph whose edges join nodes in proportion to their degrees (``E[A_neg] ~ d d^T / vol``):
    the mean of GGCM's negative graph that commutes with ``S`` (``GGCMFilter``, ``negative=None``)."""
    u = degree.clamp_min(0).sqrt()
    u = u / u.norm().clamp_min(torch.finfo(u.dtype).tiny)
    return lambda Z: u[:, None] * (u.to(Z.dtype) @ Z)[None, :] if Z.dim() == 2 else u * (u @ Z)


@dataclass(frozen=True)
class GGCMFilter(Filter):
    """GGCM's filter (Wang et al. 2023, "From cluster assumption to graph convolution: graph-based
    semi-supervised learning revisited", IEEE TNNLS, the section introducing GGCM): ``K`` lazy graph convolutions, each averaged
    with an inverse graph convolution on a random negative graph, and a residual of the features:

        U_0 = X,   U_k = ((1 - b_k) I + b_k S) U_{k-1},                    b_k = beta decline^(k-1),
        V_k = ((1 - c_k) I + c_k (2 I - k_neg A_neg) / (k_neg + 2)) U_{k-1},  c_k = beta_neg decline_neg^(k-1),
        X'  = alpha X + (1 - alpha) / K sum_{k=1}^{K} (U_k + V_k) / 2,

    with ``A_neg`` the degree-normalised adjacency (rows sum to 1) of a random ``k_neg``-regular
    graph, drawn afresh at each step as in the authors' DGL implementation (``(2 I - k_neg A_neg) / (k_neg + 2)`` is the paper's inverse step
    with its re-normalisation).

    ``apply(matmul, X, negative=...)``: ``negative(k, Z)`` returns ``A_neg^(k) Z`` for step ``k``
    (``random_negative_graph``). Without it (``negative=None``) the negative graph is its mean,
    the projection ``P = u u^T`` on the top eigenvector of ``S`` (``degree_projection``, given as
    ``projection``): deterministic, and a function of ``S`` on a connected graph, where

        nu(l) = (2 - k_neg [l = 1]) / (k_neg + 2),
        s(l)  = alpha + (1 - alpha) / K sum_k ((1 - b_k + b_k l) + (1 - c_k + c_k nu(l))) / 2 prod_{j<k} (1 - b_j + b_j l)

    (``__call__``, with ``[l = 1]`` read as ``l >= 1 - 1e-9``).

    Parameters
    ----------
    K : int >= 1, default 16
    alpha : float in [0, 1], default 0.15
        Weight of the features (the paper's 0.15 on Cora and CiteSeer).
    k_neg : int, even, >= 2, default 80
        Degree of the negative graph (``negative_degree``: the paper draws ``20`` times the mean
        degree of the graph).
    beta, decline : floats, default 1.0, 1.0
        Lazy weight of the first positive step and its decay per step (``b_k``).
    beta_neg, decline_neg : floats, default 1.0, 1.0
        Lazy weight of the first inverse step and its decay (``c_k``; the paper's Cora setting has
        ``decline_neg = 0.5``, CiteSeer 1.0).
    """

    K: int = 16
    alpha: float = 0.15
    k_neg: int = 80
    beta: float = 1.0
    decline: float = 1.0
    beta_neg: float = 1.0
    decline_neg: float = 1.0

    def __post_init__(self):
        object.__setattr__(self, "K", _int_at_least("K", self.K, 1))
        object.__setattr__(self, "alpha", _unit("alpha", self.alpha))
        k = _int_at_least("k_neg", self.k_neg, 2)
        if k % 2:
            raise ValueError(f"k_neg must be even, got {k}")
        object.__setattr__(self, "k_neg", k)
        for name in ("beta", "decline", "beta_neg", "decline_neg"):
            object.__setattr__(self, name, _unit(name, getattr(self, name)))

    def with_depth(self, K: int) -> "GGCMFilter":
        return GGCMFilter(K, self.alpha, self.k_neg, self.beta, self.decline, self.beta_neg, self.decline_neg)

    def _weights(self, k: int) -> tuple[float, float]:
        return self.beta * self.decline ** (k - 1), self.beta_neg * self.decline_neg ** (k - 1)

    def __call__(self, lam):
        lam = torch.as_tensor(lam, dtype=torch.float64)
        nu = (2.0 - self.k_neg * (lam >= 1.0 - 1e-9).double()) / (self.k_neg + 2.0)
        prod, total = torch.ones_like(lam), torch.zeros_like(lam)
        for k in range(1, self.K + 1):
            b, c = self._weights(k)
            pos = 1.0 - b + b * lam
            total = total + ((pos + 1.0 - c + c * nu) / 2.0) * prod
            prod = prod * pos
        return self.alpha + (1.0 - self.alpha) * total / self.K

    def apply(self, matmul: MatMul, x: Tensor, negative: Callable[[int, Tensor], Tensor] | None = None,
              projection: MatMul | None = None) -> Tensor:
        """``X'`` of the class docstring; ``2 K`` products (``K`` with ``S``, ``K`` with ``A_neg``)."""
        return next(iter(self.iter_depths(matmul, x, [self.K], negative=negative, projection=projection)))[1]

    def iter_depths(self, matmul, x, depths=None, negative=None, projection=None):
        """``X'`` for each ``K`` of ``depths`` from one loop (the running mean is read off at each ``K``)."""
        if negative is None:
            if projection is None:
                raise ValueError("GGCMFilter needs negative (the random negative graph's product per step) or "
                                 "projection (its mean, graphstk.spectral.filters.degree_projection)")
            negative = lambda k, Z: projection(Z)  # noqa: E731 - the mean negative graph, the same at every step
        kn = float(self.k_neg)
        U, total, done = x, torch.zeros_like(x), 0
        for K in _depths(depths, self.K):
            while done < K:
                done += 1
                b, c = self._weights(done)
                V = (1.0 - c + 2.0 * c / (kn + 2.0)) * U - (c * kn / (kn + 2.0)) * negative(done, U)
                U = (1.0 - b) * U + b * matmul(U) if b < 1.0 else matmul(U)
                total = total + 0.5 * (U + V)
            yield K, self.alpha * x + ((1.0 - self.alpha) / K) * total
