"""Spectral filters, one hierarchy: functions ``s(l)`` of an operator's eigenvalues (:class:`Filter`).

**Graph filters** (:class:`PropagationFilter`: SGC, S2GC, DGC's heat kernel, GGCM) of a normalised
adjacency ``S`` applied to a feature block by ``apply(matmul, X)`` (one sparse product per step),
``iter_depths`` (several depths from one propagation) and ``coefficients()`` (the polynomial, ``p = 0``
term included; ``docs/feature_stkr.md``). **Regularisation filters** (:class:`RegularizationFilter`):
``g_lambda(s)`` of Table 1 of De Vito, Rosasco, Toigo (ACHA 2014) and the nu-method (Lo Gerfo et al.
2008) on the eigenvalues of ``K_n / n``, named in :data:`REGULARIZATION_FILTERS` / :data:`FILTER_NAMES`
(``docs/methods.md``).

>>> regularization_filter("tsvd", 0.5)(torch.tensor([0.25, 1.0])).tolist()
[2.0, 1.0]
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

import torch
from torch import Tensor

from ..operators.base import blockwise_columns
from ..operators.kernels import check_positive
from .transforms import Transform, horner

__all__ = ["Filter", "PropagationFilter", "SGCFilter", "S2GCFilter", "HeatKernelFilter", "GGCMFilter",
           "negative_degree", "random_negative_graph", "negative_permutations", "permutation_graph",
           "permutation_graph_product", "permutation_graph_columns",
           "degree_projection", "RegularizationFilter", "Tikhonov", "SpectralCutoff", "Landweber", "KernelPCAFilter", "NuMethod", "REGULARIZATION_FILTERS", "FILTER_NAMES",
           "regularization_filter_name", "regularization_filter", "nu_coefficients"]

MatMul = Callable[[Tensor], Tensor]


def _int_at_least(name: str, v, low: int) -> int:
    if isinstance(v, bool) or int(v) != v or v < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {v!r}")
    return int(v)


def _unit(name: str, v) -> float:
    v = float(v)
    if not 0.0 <= v <= 1.0:
        raise ValueError(f"{name} must lie in [0, 1], got {v!r}")
    return v


def _depths(depths, K: int) -> list[int]:
    out = sorted({_int_at_least("depth", k, 1) for k in ([K] if depths is None else depths)})
    if not out:
        raise ValueError("depths must name at least one depth")
    return out


class Filter(Transform):
    """Base class of the spectral filters: ``f(lam)`` is ``s`` on eigenvalues (module docstring)."""

    def coefficients(self) -> tuple[float, ...]:
        """``(pi_0, ..., pi_q)`` with ``s(l) = sum_{p=0}^q pi_p l^p`` (index ``p`` is the power)."""
        raise TypeError(f"{type(self).__name__} is not a polynomial in S alone")

    def __call__(self, lam):
        lam = torch.as_tensor(lam, dtype=torch.float64)
        return horner(self.coefficients(), lambda v: v * lam, torch.ones_like(lam))


class PropagationFilter(Filter):
    """Base class of the graph filters: ``s(S) X`` by a loop of ``K`` sparse products (module docstring)."""

    K: int

    def __post_init__(self):
        object.__setattr__(self, "K", _int_at_least("K", self.K, 1))

    def with_depth(self, K: int) -> "PropagationFilter":  # pragma: no cover - abstract
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


@dataclass(frozen=True)
class SGCFilter(PropagationFilter):
    """SGC's filter, ``s(l) = l^K``: ``S^K X`` (Wu et al., ICML 2019, Eq. 8:
    ``Y = softmax(S^K X Theta)`` with ``S = D~^{-1/2} A~ D~^{-1/2}``, ``A~ = A + I``).

    Parameters
    ----------
    K : int >= 1, default 2. Number of propagation steps (the paper's ``K = 2`` on the citation graphs).
    """

    K: int = 2

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
class S2GCFilter(PropagationFilter):
    """S2GC's filter (Zhu & Koniusz, ICLR 2021, Sec. 4): ``s(l) = alpha + (1 - alpha) / K sum_{k=1}^{K} l^k``.

    Parameters
    ----------
    K : int >= 1, default 16. Number of powers averaged (the paper's ``K = 16`` on the citation graphs).
    alpha : float in [0, 1], default 0.05. Weight of the node's own features.
    """

    K: int = 16
    alpha: float = 0.05

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "alpha", _unit("alpha", self.alpha))

    def with_depth(self, K: int) -> "S2GCFilter":
        return S2GCFilter(K, self.alpha)

    def coefficients(self) -> tuple[float, ...]:
        return (self.alpha,) + ((1.0 - self.alpha) / self.K,) * self.K

    def iter_power_sums(self, matmul, x, depths=None) -> Iterator[tuple[int, Tensor]]:
        """``(K, sum_{k=1}^K S^k x)`` for each ``K`` of ``depths`` (default ``[self.K]``), increasing ``K``, from one
        propagation: the sums that :meth:`mix` turns into the filter of any ``alpha``."""
        Z, total, done = x, torch.zeros_like(x), 0
        for k in _depths(depths, self.K):
            while done < k:
                Z, done = matmul(Z), done + 1
                total = total + Z
            yield k, total

    def mix(self, x: Tensor, total: Tensor, K: int) -> Tensor:
        """``alpha x + (1 - alpha) / K total``: the filter of depth ``K`` from the sum of the powers up to ``K``."""
        return self.alpha * x + ((1.0 - self.alpha) / K) * total

    def iter_depths(self, matmul, x, depths=None):
        for k, total in self.iter_power_sums(matmul, x, depths):
            yield k, self.mix(x, total, k)


@dataclass(frozen=True)
class HeatKernelFilter(PropagationFilter):
    """DGC's heat kernel ``exp(-t (1 - l))`` in ``K`` Euler steps (Wang et al., NeurIPS 2021, Sec. 3-4):
    ``s(l) = (1 - (t/K) (1 - l))^K``, each step the lazy walk ``(1 - t/K) I + (t/K) S``.

    Parameters
    ----------
    t : float > 0, default 5.27. End time ``T`` (the paper's Cora value; CiteSeer 3.78, PubMed 6.05).
    K : int >= 1, default 250
        Number of steps (the paper's Cora value); with ``t / K <= 1`` each step is a lazy walk.
    """

    t: float = 5.27
    K: int = 250

    def __post_init__(self):
        super().__post_init__()
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
        """``s(S) x`` for each step count ``K'`` of ``depths`` at the same end time ``t`` (step ``t / K'``,
        ``K'`` products each: not a prefix of a longer run)."""
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


def negative_permutations(num_nodes: int, degree: int, generator: torch.Generator | None = None,
                          device=None) -> Tensor:
    """The ``degree / 2`` uniformly random permutations ``pi_j`` ``[degree / 2, num_nodes]`` of a random
    ``degree``-regular multigraph ``A = sum_j P_j + P_j^T`` (the permutation model), drawn from ``generator``:
    what :func:`random_negative_graph` draws, in the same order."""
    degree = _int_at_least("degree", degree, 2)
    if degree % 2:
        raise ValueError(f"degree must be even (the union of degree/2 permutations), got {degree}")
    N = int(num_nodes)
    return torch.stack([torch.randperm(N, generator=generator) for _ in range(degree // 2)]).to(device)


def random_negative_graph(num_nodes: int, degree: int, generator: torch.Generator | None = None,
                          device=None, dtype=torch.float64) -> Tensor:
    """A random ``degree``-regular multigraph on ``num_nodes`` nodes, normalised by its degree: the
    union of ``degree / 2`` uniformly random permutations ``pi_j`` and their inverses
    (``A = sum_j P_j + P_j^T``, the permutation model of random regular graphs,
    :func:`negative_permutations`), returned as the sparse CSR matrix ``A / degree`` (rows sum to 1), drawn
    from ``generator`` in ``O(N degree)``."""
    perms = negative_permutations(num_nodes, degree, generator, device)
    N = int(num_nodes)
    src = torch.arange(N, device=perms.device).repeat(perms.shape[0])
    dst = perms.flatten()
    rows, cols = torch.cat([src, dst]), torch.cat([dst, src])
    vals = torch.full((rows.numel(),), 1.0 / (2 * perms.shape[0]), dtype=dtype, device=perms.device)
    return torch.sparse_coo_tensor(torch.stack([rows, cols]), vals, (N, N),
                                   check_invariants=False).coalesce().to_sparse_csr()


def permutation_graph(perms: Tensor, dtype=torch.float64) -> Tensor:
    """``A = sum_j P_j + P_j^T`` for :func:`negative_permutations`' ``perms`` ``[m, N]`` as a sparse CSR ``[N, N]``
    with ``2 m`` unit entries in every row, repeated columns kept (a product sums them): row ``i`` holds
    ``pi_1(i), pi_1^-1(i), pi_2(i), pi_2^-1(i), ...`` in that order (``A``'s edges ``(i, pi_j(i))`` and
    ``(pi_j(i), i)``). Built in ``O(N m)`` without sorting; int32 indices when they fit."""
    m, N = perms.shape
    inverse = torch.empty_like(perms).scatter_(1, perms, torch.arange(N, device=perms.device).expand(m, N))
    itype = torch.int32 if 2 * m * N < 2 ** 31 else torch.int64
    col = torch.stack([perms, inverse], 1).reshape(2 * m, N).T.reshape(-1).to(itype)
    crow = torch.arange(0, 2 * m * N + 1, 2 * m, device=perms.device, dtype=itype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)       # torch: "sparse CSR support is in beta"
        return torch.sparse_csr_tensor(crow, col, torch.ones(col.numel(), dtype=dtype, device=perms.device), (N, N),
                                       check_invariants=False)


def permutation_graph_product(graph: Tensor, Z: Tensor) -> Tensor:
    """``(A / degree) Z`` for :func:`permutation_graph`'s ``graph`` ``A`` (``degree = 2 m``, the row length): the
    product of :func:`random_negative_graph`'s matrix up to the order of the sums, a cache-sized block of columns at
    a time (:func:`~graphstk.operators.base.blockwise_columns`). The degree is read from the sizes (``nnz / N``),
    never from the device's memory."""
    N = graph.shape[0]
    return blockwise_columns(lambda B: graph @ B, Z) / (graph.values().numel() // max(N, 1))


def permutation_graph_columns(graph: Tensor, idx: Tensor) -> Tensor:
    """``(A / degree)[:, idx]`` ``[N, len(idx)]`` for :func:`permutation_graph`'s ``graph`` ``A``: the product
    :func:`permutation_graph_product` of the identity's columns ``idx``, read off the rows ``idx`` instead (``A`` is
    symmetric, repeated entries counted). ``O(len(idx) degree)`` entries are counted, no product over all ``N`` rows;
    each count is an integer, so the numbers are those of the product bit for bit."""
    N = graph.shape[0]
    degree = graph.values().numel() // max(N, 1)
    idx = idx.to(graph.col_indices().device).long()
    cols = graph.col_indices().view(N, degree)[idx].long()           # row idx_j holds the neighbours of idx_j
    out = torch.zeros(N, idx.numel(), dtype=graph.dtype, device=graph.device)
    which = torch.arange(idx.numel(), device=out.device).repeat_interleave(degree)
    out.index_put_((cols.flatten(), which), torch.ones(cols.numel(), dtype=out.dtype, device=out.device),
                   accumulate=True)
    return out / degree


def degree_projection(degree: Tensor) -> MatMul:
    """``Z -> u (u^T Z)`` with ``u = sqrt(d) / ||sqrt(d)||``: the top eigenvector of
    ``S = D^{-1/2} W D^{-1/2}`` on a connected graph (``S u = u``), and the normalised adjacency of
    a negative graph whose edges join nodes in proportion to their degrees (``E[A_neg] ~ d d^T / vol``):
    the mean of GGCM's negative graph that commutes with ``S`` (``GGCMFilter``, ``negative=None``)."""
    u = degree.clamp_min(0).sqrt()
    u = u / u.norm().clamp_min(torch.finfo(u.dtype).tiny)
    return lambda Z: u[:, None] * (u.to(Z.dtype) @ Z)[None, :] if Z.dim() == 2 else u * (u @ Z)


@dataclass(frozen=True)
class GGCMFilter(PropagationFilter):
    """GGCM's filter (Wang et al. 2023, IEEE TNNLS, the section introducing GGCM): ``K`` lazy graph
    convolutions, each averaged with an inverse one on a random negative graph, plus a residual:

        U_0 = X,   U_k = ((1 - b_k) I + b_k S) U_{k-1},                    b_k = beta decline^(k-1),
        V_k = ((1 - c_k) I + c_k (2 I - k_neg A_neg) / (k_neg + 2)) U_{k-1},  c_k = beta_neg decline_neg^(k-1),
        X'  = alpha X + (1 - alpha) / K sum_{k=1}^{K} (U_k + V_k) / 2,

    with ``A_neg`` the row-normalised adjacency of a random ``k_neg``-regular graph drawn at each step.
    ``apply(matmul, X, negative=...)``: ``negative(k, Z)`` returns ``A_neg^(k) Z`` (``random_negative_graph``);
    with ``negative=None`` the negative graph is its mean ``P = u u^T`` (``projection``,
    ``degree_projection``), and on a connected graph

        nu(l) = (2 - k_neg [l = 1]) / (k_neg + 2),
        s(l)  = alpha + (1 - alpha) / K sum_k ((1 - b_k + b_k l) + (1 - c_k + c_k nu(l))) / 2 prod_{j<k} (1 - b_j + b_j l)

    (``__call__``, with ``[l = 1]`` read as ``l >= 1 - 1e-9``).

    Parameters
    ----------
    K : int >= 1, default 16
    alpha : float in [0, 1], default 0.15. Weight of the features (the paper's 0.15 on Cora and CiteSeer).
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
        super().__post_init__()
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

    def apply_transposed(self, matmul: MatMul, x: Tensor, negative: Callable[[int, Tensor], Tensor]) -> Tensor:
        """``G^T x`` for the linear map ``G: X -> X'`` of the class docstring, with ``S`` and every ``A_neg^(k)``
        symmetric (``negative(k, Z) = A_neg^(k) Z``). With ``L_k = (1 - b_k) I + b_k S`` and ``R_k`` the inverse
        step, ``G = alpha I + (1 - alpha) / K sum_k (L_k + R_k) / 2 L_{k-1} ... L_1``, and the ``L_k`` (polynomials
        of ``S``) commute, so ``G^T x = alpha x + (1 - alpha) / K (Y_1 + L_1 (Y_2 + L_2 (... + L_{K-1} Y_K)))``
        with ``Y_k = (L_k + R_k) x / 2``: ``2 K - 1`` products, the negative graphs read from step ``K`` down."""
        kn = float(self.k_neg)
        Z = None
        for k in range(self.K, 0, -1):
            b, c = self._weights(k)
            L = (1.0 - b) * x + b * matmul(x) if b < 1.0 else matmul(x)
            Y = 0.5 * (L + (1.0 - c + 2.0 * c / (kn + 2.0)) * x - (c * kn / (kn + 2.0)) * negative(k, x))
            if Z is not None:
                Z = Y + ((1.0 - b) * Z + b * matmul(Z) if b < 1.0 else matmul(Z))
            else:
                Z = Y
        return self.alpha * x + ((1.0 - self.alpha) / self.K) * Z

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


def _positive(name: str, v) -> float:
    v = float(v)
    if not (v > 0 and math.isfinite(v)):
        raise ValueError(f"{name} must be finite and > 0 (the regularisation parameter of Table 1), got {v!r}")
    return v


def nu_coefficients(t: int, nu: float) -> tuple[float, float]:
    """``(u_t, omega_t)`` of step ``t`` of the nu-method (Lo Gerfo et al. 2008, Sec. 4; Engl et al. 1996,
    Sec. 6.3): ``u_1 = 0``, ``omega_1 = (4nu+2)/(4nu+1)`` and, for ``t >= 2``,
    ``u_t = (t-1)(2t-3)(2t+2nu-1) / ((t+2nu-1)(2t+4nu-1)(2t+2nu-3))``,
    ``omega_t = 4(2t+2nu-1)(t+nu-1) / ((t+2nu-1)(2t+4nu-1))``."""
    if t == 1:
        return 0.0, (4 * nu + 2) / (4 * nu + 1)
    u = ((t - 1) * (2 * t - 3) * (2 * t + 2 * nu - 1)) / ((t + 2 * nu - 1) * (2 * t + 4 * nu - 1) * (2 * t + 2 * nu - 3))
    w = 4 * (2 * t + 2 * nu - 1) * (t + nu - 1) / ((t + 2 * nu - 1) * (2 * t + 4 * nu - 1))
    return u, w


@dataclass(frozen=True)
class RegularizationFilter(Filter):
    """Base class of the regularisation filters ``g_lambda(s)`` (module docstring, Table 1 of De Vito et al.).

    ``f(s)``: ``g_lambda`` on eigenvalues ``s`` (any shape; values below 0 count as 0), float64,
    on ``s``'s device; ``f.r(s) = s g_lambda(s)`` (Sec. 4.1).

    Parameters
    ----------
    lam : float > 0. The regularisation parameter ``lambda``.
    """

    lam: float

    def __post_init__(self):
        object.__setattr__(self, "lam", _positive("lam", self.lam))

    def _g(self, s: Tensor) -> Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    def __call__(self, s):
        return self._g(torch.as_tensor(s).to(torch.float64).clamp_min(0.0))

    def r(self, s) -> Tensor:
        """``r_lambda(s) = s g_lambda(s)``."""
        s = torch.as_tensor(s).to(torch.float64).clamp_min(0.0)
        return s * self._g(s)


class Tikhonov(RegularizationFilter):
    """Tikhonov (ridge): ``g(s) = 1 / (s + lambda)``."""

    def _g(self, s):
        return 1.0 / (s + self.lam)


class SpectralCutoff(RegularizationFilter):
    """Spectral cut-off (truncated SVD): ``g(s) = 1/s`` for ``s > lambda``, ``1/lambda`` below."""

    def _g(self, s):
        return torch.where(s > self.lam, 1.0 / s.clamp_min(self.lam), 1.0 / self.lam)


class KernelPCAFilter(RegularizationFilter):
    """Kernel PCA (Sec. 5.4): ``g(s) = 1/s`` for ``s >= lambda``, 0 below."""

    def _g(self, s):
        return torch.where(s >= self.lam, 1.0 / s.clamp_min(self.lam), torch.zeros((), dtype=s.dtype, device=s.device))


class Landweber(RegularizationFilter):
    """Landweber: ``g(s) = sum_{k=0}^{m} (1 - s)^k`` with ``m = ceil(1/lambda) - 1`` (``steps = m + 1`` terms)."""

    @property
    def steps(self) -> int:
        """``m + 1``, the number of Landweber iterations (Sec. 4.2, errata)."""
        lam = torch.tensor(self.lam, dtype=torch.float64)
        return int(torch.clamp(torch.ceil(1.0 / lam - 1e-9) - 1, min=0)) + 1

    def _g(self, s):
        m1, sc = float(self.steps), s.clamp(max=1.0)
        # sum_{k=0}^{m} (1-s)^k = (1 - (1-s)^(m+1)) / s, written with expm1/log1p for small s
        num = -torch.expm1(m1 * torch.log1p(-sc))
        return torch.where(sc > 0, num / sc.clamp_min(torch.finfo(s.dtype).tiny), torch.full_like(num, m1))


@dataclass(frozen=True)
class NuMethod(RegularizationFilter):
    """The nu-method (Lo Gerfo et al. 2008): ``steps = ceil(lambda^{-1/2})`` accelerated Landweber steps,
    ``c_t = c_{t-1} + u_t (c_{t-1} - c_{t-2}) + omega_t (1 - s c_{t-1})`` (:func:`nu_coefficients`).

    Parameters
    ----------
    lam : float > 0
    nu : float > 0, default 1.0. The order (qualification) of the method.
    """

    nu: float = 1.0

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "nu", check_positive("nu", self.nu))

    @property
    def steps(self) -> int:
        """``t = ceil(lambda^{-1/2})`` (``lambda = t^-2``)."""
        return int(torch.clamp(torch.ceil(torch.tensor(self.lam, dtype=torch.float64).rsqrt() - 1e-9), min=1))

    def _g(self, s):
        c_prev, c = torch.zeros_like(s), torch.zeros_like(s)
        for t in range(1, self.steps + 1):
            u, w = nu_coefficients(t, self.nu)
            c_prev, c = c, c + u * (c - c_prev) + w * (1.0 - s * c)
        return c


#: config-facing name -> regularisation filter class (``Spectral-<name>`` in configs)
REGULARIZATION_FILTERS: dict[str, type[RegularizationFilter]] = {
    "tikhonov": Tikhonov, "cutoff": SpectralCutoff, "landweber": Landweber, "kpca": KernelPCAFilter, "nu": NuMethod}
#: every accepted spelling -> its name in :data:`REGULARIZATION_FILTERS`
FILTER_NAMES = {"tikhonov": "tikhonov", "ridge": "tikhonov", "cutoff": "cutoff", "spectral_cutoff": "cutoff",
                "spectral-cutoff": "cutoff", "tsvd": "cutoff", "landweber": "landweber", "kpca": "kpca",
                "kernel_pca": "kpca", "kernelpca": "kpca", "nu": "nu", "nu_method": "nu", "nu-method": "nu"}


def _key(name) -> str:
    return str(name).lower().replace("-", "").replace("_", "").replace(" ", "")


_BY_KEY = {_key(k): v for k, v in FILTER_NAMES.items()}


def regularization_filter_name(name: str) -> str:
    """The name in :data:`REGULARIZATION_FILTERS` of a spelling of :data:`FILTER_NAMES` (case, ``-``, ``_``
    and spaces ignored), else a ``ValueError`` naming the filters."""
    if _key(name) not in _BY_KEY:
        raise ValueError(f"filter must be one of {tuple(REGULARIZATION_FILTERS)}, got {name!r}")
    return _BY_KEY[_key(name)]


def regularization_filter(name: str, lam: float, nu: float = 1.0) -> RegularizationFilter:
    """The filter ``name`` (any spelling of :data:`FILTER_NAMES`) with parameter ``lam > 0``;
    ``nu`` (> 0) is the order of the nu-method, ignored by the other filters."""
    cls = REGULARIZATION_FILTERS[regularization_filter_name(name)]
    return cls(lam, nu) if cls is NuMethod else cls(lam)
