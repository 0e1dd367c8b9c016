"""Feature kernels: kernel functions on ``R^d``, lazy Gram operators and kNN graphs.

Kernel conventions (stated once, used everywhere in graphstk; ``sigma > 0`` is the
bandwidth, ``d = x - y``):

=============  ==================================================  ==========================
name           k(x, y)                                             notes
=============  ==================================================  ==========================
gaussian/rbf   ``exp(-||d||_2^2 / (2 sigma^2))``                   slides, RFF table
laplacian      ``exp(-||d||_1 / sigma) = prod_m exp(-|d_m|/sigma)`` l1 form, a product of 1-D
               kernels (slides, random binning; "l1-Laplacian" of the separating-kernel paper)
abel           ``exp(-||d||_2 / sigma)``                           Abel kernel (separating-kernel
               paper); also called the (l2) Laplacian/exponential kernel elsewhere
cauchy         ``prod_m 1 / (1 + d_m^2 / sigma^2)``                slides, RFF table
linear         ``x^T y``                                           no bandwidth
polynomial     ``(x^T y + c)^degree``                              ``c >= 0``, ``degree >= 1``
=============  ==================================================  ==========================

Normalisation (errata, "Separating kernels"): ``K_n(x, y) = K(x, y) / sqrt(K(x, x) K(y, y))``,
applied to every point, test points included, so ``K_n(x, x) = 1``. Where ``K(x, x) = 0``
(only possible for the linear/polynomial kernels, e.g. the zero vector under the linear
kernel) the normalised row is defined as 0 instead of ``0/0``; for a positive semi-definite
kernel ``K(x, x) = 0`` forces ``K(x, y) = 0`` anyway.

Public API
----------
* :func:`kernel_function` (registry) -> :class:`Kernel`, a callable ``(X [a,d], Y [b,d]) -> [a,b]``;
* :func:`gram` - a dense Gram matrix (small problems);
* :class:`FeatureKernelOperator` - the lazy, row-blocked :class:`~graphstk.operators.KernelOperator`;
* :func:`knn_graph` - a blockwise kNN graph in PyG ``edge_index`` form;
* bandwidth heuristics :func:`median_distance`, :func:`kth_neighbor_distance_median`.

Inputs may be torch tensors, numpy arrays or nested lists of shape ``[n, d]``; outputs
are torch tensors.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np
import torch
from torch import Tensor

from .base import KernelOperator, as_index

__all__ = [
    "KERNELS", "Kernel", "kernel_function", "gram", "FeatureKernelOperator", "as_features",
    "knn_graph", "median_distance", "kth_neighbor_distance_median", "pairwise_distances",
]

# elements of one temporary block (e.g. rows x cols of a kernel block): 4M entries = 32 MB in float64
_BLOCK_ELEMS = 1 << 22


# ---------------------------------------------------------------------------
# input handling
# ---------------------------------------------------------------------------
def as_features(X, dtype: torch.dtype | None = None, device=None, name: str = "X") -> Tensor:
    """Convert ``X`` (tensor, numpy array, list) to a finite 2-D floating tensor ``[n, d]``.

    Integer/boolean inputs become ``torch.get_default_dtype()``; floating inputs keep their
    dtype unless ``dtype`` is given. Raises ``ValueError`` for a wrong rank or non-finite values.
    """
    if isinstance(X, Tensor):
        t = X
    else:
        try:
            t = torch.as_tensor(np.asarray(X))
        except Exception as exc:  # pragma: no cover - exotic inputs
            raise TypeError(f"{name} must be a tensor or array-like, got {type(X).__name__}") from exc
    if t.dim() != 2:
        raise ValueError(
            f"{name} must be 2-D [n_samples, n_features], got shape {tuple(t.shape)}"
            + (" (use X.reshape(-1, 1) for 1-D data)" if t.dim() == 1 else "")
        )
    if dtype is None and not (t.is_floating_point()):
        dtype = torch.get_default_dtype()
    t = t.to(device=device, dtype=dtype)
    if not t.is_floating_point():
        raise TypeError(f"{name} must be floating point, got {t.dtype}")
    if t.numel() and not bool(torch.isfinite(t).all()):
        raise ValueError(f"{name} contains NaN or infinite values")
    return t


def _pair(X, Y, dtype=None, device=None) -> tuple[Tensor, Tensor]:
    X = as_features(X, dtype, device, "X")
    Y = X if Y is None else as_features(Y, dtype, device, "Y")
    if X.shape[1] != Y.shape[1]:
        raise ValueError(f"dimension mismatch: X has {X.shape[1]} features, Y has {Y.shape[1]}")
    if X.dtype != Y.dtype:
        common = torch.promote_types(X.dtype, Y.dtype)
        X, Y = X.to(common), Y.to(common)
    if X.device != Y.device:
        raise ValueError(f"X is on {X.device} but Y is on {Y.device}")
    return X, Y


# ---------------------------------------------------------------------------
# distances
# ---------------------------------------------------------------------------
def _sqdist(X: Tensor, Y: Tensor) -> Tensor:
    """Squared Euclidean distances via ``|x|^2 + |y|^2 - 2 x.y`` (fast; clamped at 0)."""
    d = (X * X).sum(1, keepdim=True) + (Y * Y).sum(1).unsqueeze(0) - 2.0 * (X @ Y.T)
    return d.clamp_min_(0.0)


def _l2dist(X: Tensor, Y: Tensor) -> Tensor:
    """Euclidean distances computed from differences (exact ``0`` for identical points)."""
    return torch.cdist(X, Y, p=2.0, compute_mode="donot_use_mm_for_euclid_dist")


def _l1dist(X: Tensor, Y: Tensor) -> Tensor:
    return torch.cdist(X, Y, p=1.0)


def pairwise_distances(X, Y=None, metric: str = "euclidean") -> Tensor:
    """Dense distance matrix ``[a, b]`` for ``metric`` in euclidean | manhattan (l1, cityblock) |
    cosine (``1 - cos``; a zero vector has cosine similarity 0 with everything)."""
    X, Y = _pair(X, Y)
    return _distance_fn(metric)(X, Y)


def _cosine_dist(X: Tensor, Y: Tensor) -> Tensor:
    nx = X.norm(dim=1, keepdim=True)
    ny = Y.norm(dim=1, keepdim=True)
    Xn = torch.where(nx > 0, X / nx.clamp_min(torch.finfo(X.dtype).tiny), torch.zeros_like(X))
    Yn = torch.where(ny > 0, Y / ny.clamp_min(torch.finfo(Y.dtype).tiny), torch.zeros_like(Y))
    return (1.0 - Xn @ Yn.T).clamp_min_(0.0)


def _distance_fn(metric: str) -> Callable[[Tensor, Tensor], Tensor]:
    m = str(metric).lower()
    if m in ("euclidean", "l2"):
        return _l2dist
    if m in ("manhattan", "l1", "cityblock"):
        return _l1dist
    if m == "cosine":
        return _cosine_dist
    raise ValueError(f"unknown metric {metric!r}; choose euclidean, manhattan or cosine")


# ---------------------------------------------------------------------------
# kernels
# ---------------------------------------------------------------------------
def check_positive(name: str, value) -> float:
    """``float(value)``, or a clear error naming ``name`` unless it is finite and > 0."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a positive number, got {value!r}") from None
    if not (v > 0.0) or not math.isfinite(v):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return v


def _gaussian(X, Y, sigma):
    if X.requires_grad or Y.requires_grad:
        return torch.exp(_sqdist(X, Y) * (-0.5 / sigma**2))
    # no autograd: fused, in-place (one [a, b] buffer instead of five)
    d = torch.addmm((X * X).sum(1, keepdim=True) + (Y * Y).sum(1).unsqueeze(0), X, Y.T, alpha=-2.0)
    return d.clamp_(min=0.0).mul_(-0.5 / sigma**2).exp_()


def _gaussian_p(X, Y, sigma):
    return torch.exp(((X - Y) ** 2).sum(1) * (-0.5 / sigma**2))


def _laplacian(X, Y, sigma):
    return torch.exp(_l1dist(X, Y) * (-1.0 / sigma))


def _laplacian_p(X, Y, sigma):
    return torch.exp((X - Y).abs().sum(1) * (-1.0 / sigma))


def _abel(X, Y, sigma):
    return torch.exp(_l2dist(X, Y) * (-1.0 / sigma))


def _abel_p(X, Y, sigma):
    return torch.exp((X - Y).norm(dim=1) * (-1.0 / sigma))


def _cauchy(X, Y, sigma):
    a, b, d = X.shape[0], Y.shape[0], X.shape[1]
    out = torch.ones(a, b, dtype=X.dtype, device=X.device)
    step = max(1, _BLOCK_ELEMS // max(1, a * b))
    inv = 1.0 / sigma**2
    for s in range(0, d, step):
        diff = X[:, None, s:s + step] - Y[None, :, s:s + step]
        out = out * (1.0 / (1.0 + diff.square() * inv)).prod(-1)
    return out


def _cauchy_p(X, Y, sigma):
    return (1.0 / (1.0 + (X - Y).square() / sigma**2)).prod(1)


def _linear(X, Y):
    return X @ Y.T


def _linear_p(X, Y):
    return (X * Y).sum(1)


def _poly(X, Y, degree, c):
    return (X @ Y.T + c) ** degree


def _poly_p(X, Y, degree, c):
    return ((X * Y).sum(1) + c) ** degree


# name -> (matrix fn, paired fn, parameter defaults, formula)
KERNELS: dict[str, tuple[Callable, Callable, dict, str]] = {
    "gaussian": (_gaussian, _gaussian_p, {"sigma": 1.0}, "exp(-||x-y||_2^2 / (2 sigma^2))"),
    "laplacian": (_laplacian, _laplacian_p, {"sigma": 1.0}, "exp(-||x-y||_1 / sigma)"),
    "abel": (_abel, _abel_p, {"sigma": 1.0}, "exp(-||x-y||_2 / sigma)"),
    "cauchy": (_cauchy, _cauchy_p, {"sigma": 1.0}, "prod_m 1/(1 + (x_m-y_m)^2/sigma^2)"),
    "linear": (_linear, _linear_p, {}, "x^T y"),
    "polynomial": (_poly, _poly_p, {"degree": 2, "c": 1.0}, "(x^T y + c)^degree"),
}
_ALIASES = {"rbf": "gaussian", "l1": "laplacian", "poly": "polynomial", "exponential": "abel"}
#: kernels of the form k(x - y) with a bandwidth ``sigma``
SHIFT_INVARIANT = ("gaussian", "laplacian", "abel", "cauchy")


class Kernel:
    """A kernel function with fixed parameters; ``k(X [a,d], Y [b,d]) -> [a,b]``.

    Build it with :func:`kernel_function`. Besides the matrix call it offers
    ``paired(X, Y)`` (``k(x_i, y_i)`` for ``i < n``, shape ``[n]``) and ``diag(X)``
    (``k(x_i, x_i)``), both exact and ``O(n d)``. Every kernel here is symmetric.

    Parameters
    ----------
    name : str
        The kernel's name (``"gaussian"``, ``"laplacian"``, ...; see :func:`kernel_function`).
    **params
        Its parameters (``sigma``, ``degree``, ``c``).
    """

    def __init__(self, name: str, **params):
        key = _ALIASES.get(str(name).lower(), str(name).lower())
        if key not in KERNELS:
            raise ValueError(
                f"unknown kernel {name!r}; choose one of {sorted(KERNELS) + sorted(_ALIASES)}"
            )
        fn, pfn, defaults, formula = KERNELS[key]
        unknown = set(params) - set(defaults)
        if unknown:
            allowed = ", ".join(sorted(defaults)) or "no parameters"
            raise TypeError(f"kernel {key!r} got unexpected parameter(s) {sorted(unknown)} (takes {allowed})")
        p = {k: (params[k] if params.get(k) is not None else v) for k, v in defaults.items()}
        if "sigma" in p:
            p["sigma"] = check_positive("sigma", p["sigma"])
        if key == "polynomial":
            deg = p["degree"]
            if int(deg) != deg or int(deg) < 1:
                raise ValueError(f"polynomial degree must be an integer >= 1, got {deg!r}")
            p["degree"] = int(deg)
            p["c"] = float(p["c"])
            if p["c"] < 0:
                raise ValueError(f"polynomial offset c must be >= 0 (positive definite kernel), got {p['c']}")
        self.name, self.params, self.formula = key, p, formula
        self._fn, self._pfn = fn, pfn

    @property
    def sigma(self) -> float | None:
        return self.params.get("sigma")

    @property
    def shift_invariant(self) -> bool:
        return self.name in SHIFT_INVARIANT

    def __call__(self, X, Y=None) -> Tensor:
        X, Y = _pair(X, Y)
        return self._fn(X, Y, **self.params)

    def paired(self, X, Y) -> Tensor:
        X, Y = _pair(X, Y)
        if X.shape[0] != Y.shape[0]:
            raise ValueError(f"paired evaluation needs equal lengths, got {X.shape[0]} and {Y.shape[0]}")
        return self._pfn(X, Y, **self.params)

    def diag(self, X) -> Tensor:
        X = as_features(X)
        return self._pfn(X, X, **self.params)

    # raw versions without input checks (internal hot loops)
    def _raw(self, X: Tensor, Y: Tensor) -> Tensor:
        return self._fn(X, Y, **self.params)

    def _raw_paired(self, X: Tensor, Y: Tensor) -> Tensor:
        return self._pfn(X, Y, **self.params)

    def __eq__(self, other) -> bool:
        return isinstance(other, Kernel) and other.name == self.name and other.params == self.params

    def __hash__(self) -> int:
        return hash((self.name, tuple(sorted(self.params.items()))))

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"Kernel({self.name!r}{', ' if args else ''}{args})"


def kernel_function(name: str | Kernel = "gaussian", **params) -> Kernel:
    """Registry look-up: a :class:`Kernel` (callable ``(X [a,d], Y [b,d]) -> [a,b]``).

    ``name`` is one of ``gaussian`` (alias ``rbf``), ``laplacian`` (l1 form, alias ``l1``),
    ``abel`` (alias ``exponential``), ``cauchy``, ``linear``, ``polynomial`` (alias ``poly``);
    see the module docstring for the formulas. Parameters: ``sigma`` (bandwidth kernels,
    default 1.0), ``degree`` and ``c`` (polynomial, defaults 2 and 1.0). A parameter a
    kernel does not take (e.g. ``sigma`` for ``linear``) is an error; ``None`` means "default".
    Passing a :class:`Kernel` returns it unchanged (no extra parameters allowed).
    """
    if isinstance(name, Kernel):
        if any(v is not None for v in params.values()):
            raise TypeError("pass either a Kernel instance or a kernel name with parameters, not both")
        return name
    return Kernel(name, **{k: v for k, v in params.items() if v is not None})


def _inv_sqrt(d: Tensor) -> Tensor:
    out = torch.zeros_like(d)
    pos = d > 0
    out[pos] = d[pos].rsqrt()
    return out


def gram(X, Y=None, kernel: str | Kernel = "gaussian", sigma: float | None = None,
         normalize: bool = False, dtype: torch.dtype | None = None, device=None, **params) -> Tensor:
    """Dense Gram matrix ``K[i, j] = k(X_i, Y_j)`` (``Y = X`` when omitted).

    ``normalize=True`` returns ``K(x,y) / sqrt(K(x,x) K(y,y))`` (unit diagonal). For large
    inputs use :class:`FeatureKernelOperator`, which never forms the full matrix.

    Parameters
    ----------
    X : Tensor or array ``[a, d]``
    Y : Tensor or array ``[b, d]``, optional
    kernel : str or Kernel, default "gaussian"
    sigma : float, optional
        Bandwidth (kernels that have one).
    normalize : bool, default False
    dtype : torch.dtype, optional
    device : torch.device, optional
    **params
        Further kernel parameters (``degree``, ``c``).
    """
    k = kernel_function(kernel, sigma=sigma, **params)
    X, Y = _pair(X, Y, dtype, device)
    K = k._raw(X, Y)
    if normalize:
        K = _inv_sqrt(k._raw_paired(X, X)).unsqueeze(1) * K * _inv_sqrt(k._raw_paired(Y, Y)).unsqueeze(0)
    return K


# ---------------------------------------------------------------------------
# the operator
# ---------------------------------------------------------------------------
class FeatureKernelOperator(KernelOperator):
    """The kernel matrix ``K[i, j] = k(X_i, Y_j)`` as a lazy :class:`KernelOperator`.

    Parameters
    ----------
    X : ``[n_rows, d]`` tensor or array
        Row points (e.g. test points for out-of-sample rows).
    Y : ``[n_cols, d]``, optional
        Column points (``X`` when omitted: the square training Gram matrix).
    kernel : str or Kernel
        See :func:`kernel_function`; ``sigma``/``degree``/``c`` are forwarded to it.
    normalize : bool
        Use ``K(x,y) / sqrt(K(x,x) K(y,y))`` for rows and columns alike (test points
        included), so the square operator has a unit diagonal.
    block_size : int, optional
        Rows evaluated at a time in products and materialisation. Default: as many rows
        as fit into ~4M kernel entries (``2**22 // n_cols``), so a product with an
        ``[n_cols, C]`` block holds a ``block_size x n_cols`` tile, never ``n x n``.
    dtype, device : optional
        Cast/move the point arrays (floating inputs keep their dtype otherwise).

    The operator is differentiable with respect to the point arrays (plain torch ops).
    ``block`` returns another :class:`FeatureKernelOperator` on the indexed sub-arrays,
    ``T`` swaps rows and columns (all kernels here are symmetric), ``diagonal`` evaluates
    ``k(X_i, Y_i)`` exactly in ``O(n d)``.
    """

    def __init__(self, X, Y=None, kernel: str | Kernel = "gaussian", sigma: float | None = None, *,
                 normalize: bool = False, block_size: int | None = None,
                 dtype: torch.dtype | None = None, device=None, **params):
        k = kernel_function(kernel, sigma=sigma, **params)
        Xt, Yt = _pair(X, Y, dtype, device)
        self._init(Xt, Yt, k, bool(normalize), block_size)

    def _init(self, X, Y, kernel, normalize, block_size, dr=None, dc=None):
        if block_size is not None and (int(block_size) != block_size or int(block_size) < 1):
            raise ValueError(f"block_size must be a positive integer, got {block_size!r}")
        self.X, self.Y, self.kernel, self.normalize = X, Y, kernel, normalize
        self._block_size = None if block_size is None else int(block_size)
        if normalize:
            self._isr = _inv_sqrt(kernel._raw_paired(X, X)) if dr is None else dr
            self._isc = _inv_sqrt(kernel._raw_paired(Y, Y)) if dc is None else dc
        else:
            self._isr = self._isc = None

    @classmethod
    def _make(cls, X, Y, kernel, normalize, block_size, dr=None, dc=None) -> "FeatureKernelOperator":
        op = cls.__new__(cls)
        op._init(X, Y, kernel, normalize, block_size, dr, dc)
        return op

    # -- interface -------------------------------------------------------------
    shape = property(lambda self: (int(self.X.shape[0]), int(self.Y.shape[0])))
    dtype = property(lambda self: self.X.dtype)
    device = property(lambda self: self.X.device)

    @property
    def block_size(self) -> int:
        if self._block_size is not None:
            return self._block_size
        return max(1, _BLOCK_ELEMS // max(1, self.shape[1]))

    def _blocks(self):
        n, bs = self.shape[0], self.block_size
        for s in range(0, n, bs):
            yield s, min(n, s + bs)

    def _matmul(self, x: Tensor) -> Tensor:
        x = x.to(self.dtype)
        if self.normalize:
            x = self._isc.unsqueeze(1) * x
        if self.shape[0] == 0:
            out = x.new_zeros(0, x.shape[1])
        else:
            out = torch.cat([self.kernel._raw(self.X[s:e], self.Y) @ x for s, e in self._blocks()])
        if self.normalize:
            out = self._isr.unsqueeze(1) * out
        return out

    def to_dense(self) -> Tensor:
        if self.shape[0] == 0:
            return self.X.new_zeros(self.shape)
        K = torch.cat([self.kernel._raw(self.X[s:e], self.Y) for s, e in self._blocks()])
        if self.normalize:
            K = self._isr.unsqueeze(1) * K * self._isc.unsqueeze(0)
        return K

    def diagonal(self) -> Tensor:
        n = min(self.shape)
        d = self.kernel._raw_paired(self.X[:n], self.Y[:n])
        if self.normalize:
            d = self._isr[:n] * d * self._isc[:n]
        return d

    def block(self, rows=None, cols=None) -> "FeatureKernelOperator":
        r = None if rows is None else as_index(rows, self.shape[0], self.device)
        c = None if cols is None else as_index(cols, self.shape[1], self.device)
        X = self.X if r is None else self.X.index_select(0, r)
        Y = self.Y if c is None else self.Y.index_select(0, c)
        dr = dc = None
        if self.normalize:
            dr = self._isr if r is None else self._isr.index_select(0, r)
            dc = self._isc if c is None else self._isc.index_select(0, c)
        return FeatureKernelOperator._make(X, Y, self.kernel, self.normalize, self._block_size, dr, dc)

    @property
    def T(self) -> "FeatureKernelOperator":
        return FeatureKernelOperator._make(self.Y, self.X, self.kernel, self.normalize, self._block_size,
                                           self._isc, self._isr)

    def to(self, device=None, dtype=None) -> "FeatureKernelOperator":
        mv = (lambda t: None if t is None else t.to(device=device, dtype=dtype))
        return FeatureKernelOperator._make(mv(self.X), mv(self.Y), self.kernel, self.normalize,
                                           self._block_size, mv(self._isr), mv(self._isc))

    def __repr__(self) -> str:
        return (f"FeatureKernelOperator(shape={self.shape}, kernel={self.kernel!r}, normalize={self.normalize}, "
                f"dtype={self.dtype}, device={self.device})")


# ---------------------------------------------------------------------------
# kNN graphs and bandwidth heuristics
# ---------------------------------------------------------------------------
def _knn(X: Tensor, k: int, metric: str, block_size: int | None) -> tuple[Tensor, Tensor]:
    """Indices and distances ``[n, k]`` of the k nearest neighbours of each row (self excluded)."""
    n = X.shape[0]
    if int(k) != k or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    if k >= n:
        raise ValueError(f"k = {k} needs at least k + 1 = {k + 1} points, got {n}")
    m = str(metric).lower()
    _distance_fn(m)  # validates the name
    bs = block_size or max(1, _BLOCK_ELEMS // max(1, n))
    if m in ("euclidean", "l2"):
        dist = lambda A: _sqdist(A, X)  # ranking by squared distance, fast mm path
    else:
        dist = lambda A: _distance_fn(m)(A, X)
    idx = []
    for s in range(0, n, bs):
        e = min(n, s + bs)
        D = dist(X[s:e])
        ar = torch.arange(e - s, device=X.device)
        D[ar, ar + s] = float("inf")
        _, j = torch.topk(D, k, dim=1, largest=False, sorted=True)
        idx.append(j)
    idx = torch.cat(idx)
    # exact distances of the selected pairs (O(n k d))
    rows = X.unsqueeze(1).expand(-1, k, -1).reshape(n * k, -1)
    nbrs = X.index_select(0, idx.flatten())
    if m in ("euclidean", "l2"):
        dist_sel = (rows - nbrs).norm(dim=1)
    elif m in ("manhattan", "l1", "cityblock"):
        dist_sel = (rows - nbrs).abs().sum(1)
    else:
        dist_sel = _cosine_paired(rows, nbrs)
    dist_sel = dist_sel.view(n, k)
    # re-sort by the exact distances (ties from the fast ranking path)
    dist_sel, order = dist_sel.sort(dim=1, stable=True)
    return idx.gather(1, order), dist_sel


def _cosine_paired(A: Tensor, B: Tensor) -> Tensor:
    na, nb = A.norm(dim=1), B.norm(dim=1)
    denom = na * nb
    cos = torch.where(denom > 0, (A * B).sum(1) / denom.clamp_min(torch.finfo(A.dtype).tiny),
                      torch.zeros_like(denom))
    return (1.0 - cos).clamp_min(0.0)


def knn_graph(X, k: int, metric: str = "euclidean", mode: str = "connectivity",
              sigma: float | None = None, symmetric: bool = True,
              block_size: int | None = None) -> tuple[Tensor, Tensor]:
    """k-nearest-neighbour graph of the rows of ``X`` as ``(edge_index [2, E], edge_weight [E])``.

    Built blockwise (a ``block_size x n`` distance tile at a time, ``torch.topk`` per block),
    never an ``n x n`` matrix. A point is never its own neighbour (no self loops).

    * ``mode="connectivity"``: weight 1; ``"distance"``: the distance itself;
      ``"gaussian"``: ``exp(-dist^2 / (2 sigma^2))`` with ``sigma`` defaulting to the median of
      all kNN distances.
    * ``symmetric=True`` (default) returns the union ``i ~ j`` if ``j`` is among the k nearest
      of ``i`` *or* vice versa, both directions present, sorted by (row, col): the form
      :class:`~graphstk.operators.GraphKernel` and PyG expect. ``symmetric=False`` returns the
      directed edges ``(i, j)`` with ``edge_index[0] = i`` (the query) and ``edge_index[1] = j``
      one of its k neighbours (``n k`` edges, neighbours in increasing distance).
    * ``metric``: ``euclidean`` | ``manhattan`` | ``cosine``.
    """
    X = as_features(X)
    if mode not in ("connectivity", "distance", "gaussian"):
        raise ValueError(f"mode must be 'connectivity', 'distance' or 'gaussian', got {mode!r}")
    n = X.shape[0]
    idx, dist = _knn(X, k, metric, block_size)
    row = torch.arange(n, device=X.device).repeat_interleave(k)
    col = idx.flatten()
    dist = dist.flatten()
    if mode == "connectivity":
        w = torch.ones_like(dist)
    elif mode == "distance":
        w = dist
    else:
        s = float(dist.median()) if sigma is None else check_positive("sigma", sigma)
        if s <= 0:
            raise ValueError("all kNN distances are 0 (duplicate points); pass sigma explicitly")
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


def _subsample(X: Tensor, max_samples: int | None, gen: torch.Generator) -> Tensor:
    if max_samples is not None and X.shape[0] > max_samples:
        sel = torch.randperm(X.shape[0], generator=gen)[:max_samples].to(X.device)
        X = X.index_select(0, sel)
    return X


def median_distance(X, Y=None, max_samples: int | None = 2000, seed: int = 0) -> float:
    """Median Euclidean distance: over pairs ``i < j`` of ``X``, or over all cross pairs
    ``(x_i, y_j)`` when ``Y`` is given (pool the samples first for the usual two-sample
    median heuristic, see :func:`graphstk.mmd.median_heuristic`).

    With more than ``max_samples`` rows, a random subset of ``max_samples`` rows (seeded)
    is used from each array. Returns a float (the usual median: mean of the two middle
    values for an even count). Raises ``ValueError`` with fewer than 2 points.

    Parameters
    ----------
    X : Tensor or array ``[n, d]``
    Y : Tensor or array ``[m, d]``, optional
    max_samples : int or None, default 2000
    seed : int, default 0
        Seeds the subsampling.
    """
    X = as_features(X, name="X")
    gen = torch.Generator().manual_seed(int(seed))
    X = _subsample(X, max_samples, gen)
    if Y is None:
        if X.shape[0] < 2:
            raise ValueError(f"median_distance needs at least 2 points, got {X.shape[0]}")
        D = _l2dist(X, X)
        iu = torch.triu_indices(X.shape[0], X.shape[0], offset=1, device=X.device)
        v = D[iu[0], iu[1]]
    else:
        Y = as_features(Y, name="Y")
        if X.shape[1] != Y.shape[1]:
            raise ValueError(f"dimension mismatch: X has {X.shape[1]} features, Y has {Y.shape[1]}")
        Y = _subsample(Y.to(X.dtype), max_samples, gen)
        if X.shape[0] == 0 or Y.shape[0] == 0:
            raise ValueError("median_distance needs non-empty X and Y")
        v = _l2dist(X, Y).flatten()
    return float(np.median(v.detach().cpu().numpy()))


def kth_neighbor_distance_median(X, k: int = 10, metric: str = "euclidean",
                                 block_size: int | None = None) -> float:
    """Median over points of the distance to their k-th nearest neighbour (self excluded).

    The bandwidth rule of the separating-kernel experiments (errata: "sigma = median
    distance to the 10th nearest neighbour"). Computed blockwise, no ``n x n`` matrix.

    Parameters
    ----------
    X : Tensor or array ``[n, d]``
    k : int, default 10
    metric : {"euclidean", "manhattan", "cosine"}, default "euclidean"
    block_size : int, optional
        Rows per block of the distance computation.
    """
    X = as_features(X)
    _, dist = _knn(X, k, metric, block_size)
    return float(np.median(dist[:, k - 1].detach().cpu().numpy()))
