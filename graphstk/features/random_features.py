"""Random features for shift-invariant kernels (Rahimi & Recht 2007; kernel-method slides Eqs. 2-8):
:class:`RandomFourierFeatures` (Gaussian, l1-Laplacian, Cauchy) and :class:`RandomBinningFeatures`
(l1-Laplacian), scikit-learn transformers with ``z(x)^T z(y) ~ k(x, y)``. The sampling densities and
their derivations are in ``docs/toolbox.md``.
"""
from __future__ import annotations

import math

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
import torch
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from torch import Tensor

from .._arrays import check_is_fitted, is_torch, to_output, torch_generator, validate_features
from ..memory import check_allocation, memory_limit
from ..operators.feature import as_features, check_positive

__all__ = ["RandomFourierFeatures", "RandomBinningFeatures", "bin_ids", "sample_frequencies"]

#: the shift-invariant kernels whose random Fourier features are sampled here
RFF_KERNELS = ("gaussian", "laplacian", "cauchy")


class _RandomFeatures(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Shared scikit-learn plumbing: validated input, output in the caller's array type."""

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Draw the random map for the dimension of ``X`` on its device: the frequencies (Eq. 2), or the
        grids (Lemma 7) and the bins the rows of ``X`` occupy.

        Parameters
        ----------
        X : array-like or Tensor ``[n, d]``
        y : ignored

        Returns
        -------
        self
        """
        self._draw(validate_features(self, X, reset=True))
        return self

    def transform(self, X):
        """The random features ``z(X)``: NumPy for NumPy input, a tensor on ``X``'s device for a tensor.

        Parameters
        ----------
        X : array-like or Tensor ``[n, n_features_in_]``

        Returns
        -------
        ndarray or Tensor ``[n, n_output_features_]`` (see the class for sparse output).
        """
        check_is_fitted(self)
        Xt = validate_features(self, X, reset=False)
        self._check_map_size(Xt, "transform")
        return self._output(self.map_tensor(Xt), X)

    def _map_bytes(self, n: int, itemsize: int) -> float:   # peak bytes of map_tensor on n rows
        return float(n) * self.n_output_features_ * itemsize

    def _check_map_size(self, X: Tensor, what: str) -> None:
        n = int(X.shape[0])
        need = self._map_bytes(n, X.element_size())
        limit, _ = memory_limit(X.device)
        rows = max(1, int(n * limit / max(need, 1.0)))
        param = "n_grids" if hasattr(self, "n_grids") else "n_features"
        check_allocation(need, f"{type(self).__name__}.{what} of {n} rows into {self.n_output_features_} features",
                         f"{what} X in row blocks of at most {rows} rows (e.g. a loop over X[i:i + {rows}]), or "
                         f"lower {param}=", X.device)

    def _output(self, Z: Tensor, like):
        return to_output(Z, like)

    def kernel_approximation(self, X, Y=None):
        """``z(X) z(Y)^T`` ``[a, b]``, the approximation of the Gram matrix (small inputs), as an
        array of ``X``'s type."""
        check_is_fitted(self)
        Xt = validate_features(self, X, reset=False)
        Yt = None if Y is None else validate_features(self, Y, reset=False).to(Xt.device)
        self._check_map_size(Xt if Yt is None else torch.empty(Xt.shape[0] + Yt.shape[0], 0, dtype=Xt.dtype,
                                                               device=Xt.device), "kernel_approximation")
        check_allocation(float(Xt.shape[0]) * (Xt.shape[0] if Yt is None else Yt.shape[0]) * Xt.element_size(),
                         "the approximated Gram matrix z(X) z(Y)^T", "pass fewer rows of X (and Y)", Xt.device)
        ZX = self._dense(self.map_tensor(Xt))
        ZY = ZX if Yt is None else self._dense(self.map_tensor(Yt))
        return to_output(ZX @ ZY.T, X)

    @staticmethod
    def _dense(Z: Tensor) -> Tensor:
        return Z.to_dense() if Z.layout != torch.strided else Z

    @property
    def _n_features_out(self) -> int:
        return self.n_output_features_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags


def sample_frequencies(kernel: str, sigma: float, d: int, n_features: int,
                       generator: torch.Generator | None = None,
                       dtype: torch.dtype = torch.float64) -> Tensor:
    """``[d, n_features]`` i.i.d. frequencies from the Fourier transform of ``kernel``.

    Gaussian: ``N(0, 1/sigma^2)``; laplacian (l1): ``Cauchy(0, 1/sigma)``; cauchy:
    ``Laplace(0, 1/sigma)`` (see the module docstring for the derivations).

    Parameters
    ----------
    kernel : {"gaussian", "laplacian", "cauchy"}
    sigma : float
    d : int, input dimension
    n_features : int
    generator : torch.Generator, optional
    dtype : torch.dtype, default torch.float64
    """
    sigma = check_positive("sigma", sigma)
    g = generator if generator is not None else torch.Generator().manual_seed(0)
    shape = (int(d), int(n_features))
    if kernel == "gaussian":
        return torch.randn(shape, generator=g, dtype=dtype) / sigma
    if kernel == "laplacian":
        u = torch.rand(shape, generator=g, dtype=dtype)
        return torch.tan(math.pi * (u - 0.5)) / sigma  # inverse CDF of Cauchy(0, 1/sigma)
    if kernel == "cauchy":
        e1 = -torch.log1p(-torch.rand(shape, generator=g, dtype=dtype))  # Exp(1)
        e2 = -torch.log1p(-torch.rand(shape, generator=g, dtype=dtype))
        return (e1 - e2) / sigma  # difference of two Exp(1) is Laplace(0, 1)
    raise ValueError(f"random Fourier features support kernel in {RFF_KERNELS}, got {kernel!r}")


class RandomFourierFeatures(_RandomFeatures):
    """Random Fourier features ``z`` with ``z(x)^T z(y) ~ k(x, y)`` (slides Eqs. 2-4).

    ``fit(X)`` draws the frequencies for ``X``'s dimension (``y`` is ignored); ``transform(X)``
    returns ``z(X)`` ``[n, n_output_features_]`` in ``X``'s floating dtype (float64 for integer
    input): NumPy for NumPy input, a tensor on ``X``'s device for a tensor (the frequencies are
    drawn on the host with a seeded generator and moved to the device once, in ``fit``).

    Parameters
    ----------
    kernel : {"gaussian", "laplacian", "cauchy"}, default "gaussian"
        ``laplacian`` is the l1 form (conventions of :mod:`graphstk.operators.feature`).
    sigma : float > 0, default 1.0
        The bandwidth.
    n_features : int >= 1, default 100
        The number ``D`` of frequencies.
    random_state : int, RandomState or None, default None
        Seeds the frequencies (an int gives the same draw on every device).
    map : {"cos_sin", "phase"}, default "cos_sin"
        ``"cos_sin"``: ``2D`` outputs ``sqrt(1/D)[cos, sin]`` (Eq. 4); ``"phase"``: ``D`` outputs
        ``sqrt(2/D) cos(W^T x + b)`` (slide after Eq. 3).

    Attributes
    ----------
    W_ : Tensor ``[d, D]`` float64 on the device of the data passed to ``fit``
    b_ : Tensor ``[D]`` (phase map) or None
    n_features_in_, n_output_features_ : int

    Example
    -------
    >>> import numpy as np
    >>> from graphstk.features import RandomFourierFeatures
    >>> X = np.random.default_rng(0).normal(size=(200, 3))
    >>> rff = RandomFourierFeatures(sigma=2.0, n_features=2000, random_state=0).fit(X)
    >>> Z = rff.transform(X)                                  # NumPy in, NumPy out
    >>> Z.shape
    (200, 4000)
    >>> exact = np.exp(-np.sum((X[0] - X[1]) ** 2) / (2 * 2.0 ** 2))
    >>> bool(abs(Z[0] @ Z[1] - exact) < 0.05)                 # z(x)^T z(y) ~ k(x, y)
    True
    """

    _parameter_constraints: dict = {
        "kernel": [StrOptions(set(RFF_KERNELS))], "sigma": [Interval(Real, 0, None, closed="neither")],
        "n_features": [Interval(Integral, 1, None, closed="left")], "random_state": ["random_state"],
        "map": [StrOptions({"cos_sin", "phase"})],
    }

    def __init__(self, kernel: str = "gaussian", sigma: float = 1.0, n_features: int = 100,
                 random_state=None, map: str = "cos_sin"):
        self.kernel, self.sigma, self.n_features = kernel, sigma, n_features
        self.random_state, self.map = random_state, map

    def _draw(self, Xt: Tensor) -> None:
        D, d = int(self.n_features), int(Xt.shape[1])
        check_allocation(8.0 * d * D * (3 if self.kernel == "cauchy" else 2) + 8.0 * D,
                         f"the [{d}, {D}] frequencies of {type(self).__name__}(n_features={D})",
                         "lower n_features= (the approximation error falls as 1/sqrt(n_features); "
                         "a few thousand usually suffice)", Xt.device)
        g = torch_generator(self.random_state)
        self.W_ = sample_frequencies(self.kernel, float(self.sigma), d, D, g).to(Xt.device)
        self.b_ = ((2 * math.pi * torch.rand(D, generator=g, dtype=torch.float64)).to(Xt.device)
                   if self.map == "phase" else None)
        self.n_output_features_ = 2 * D if self.map == "cos_sin" else D

    def _map_bytes(self, n: int, itemsize: int) -> float:
        D = int(self.W_.shape[1])
        return float(n) * itemsize * (D + self.n_output_features_ * 2)   # X W, cos and sin, their concatenation

    def map_tensor(self, X: Tensor) -> Tensor:
        """``z(X)`` of a validated tensor (no checks: the inner loops call this)."""
        W = self.W_.to(device=X.device, dtype=X.dtype)
        P, D = X @ W, W.shape[1]
        if self.map == "cos_sin":
            return torch.cat([torch.cos(P), torch.sin(P)], dim=1) * math.sqrt(1.0 / D)
        return torch.cos(P + self.b_.to(device=X.device, dtype=X.dtype)) * math.sqrt(2.0 / D)


def bin_ids(X, pitch: Tensor, shift: Tensor) -> Tensor:
    """Exact bin coordinates ``floor((x_m - u_m) / delta_m)`` (slides, binning algorithm).

    ``X`` ``[n, d]``; ``pitch``, ``shift`` broadcastable to ``[..., d]`` (e.g. ``[P, d]`` for
    ``P`` grids, giving ``[P, n, d]``). Returns int64 ids; no hashing. (The slide's ceiling
    differs only by a constant offset, which does not change which points share a bin.)
    """
    X = as_features(X)
    pitch = torch.as_tensor(pitch, dtype=X.dtype, device=X.device)
    shift = torch.as_tensor(shift, dtype=X.dtype, device=X.device)
    if pitch.dim() <= 1:
        return torch.floor((X - shift) / pitch).long()
    return torch.floor((X.unsqueeze(0) - shift.unsqueeze(1)) / pitch.unsqueeze(1)).long()


class RandomBinningFeatures(_RandomFeatures):
    """Random binning features for ``exp(-||x - y||_1 / sigma)`` (slides Eqs. 6-8, Lemma 7).

    ``z(x)`` has one entry ``1/sqrt(n_grids)`` per grid (the bin of ``x``), so ``z(x)^T z(y)`` is the fraction
    of grids in which ``x`` and ``y`` share a bin (Eq. 8). ``fit(X)`` finds the occupied bins;
    ``transform(X)`` returns ``z(X)`` ``[n, n_bins_]``, dense (NumPy for NumPy input, a tensor on ``X``'s
    device for a tensor) or with ``sparse_output=True`` a ``scipy.sparse.csr_matrix`` / coalesced sparse
    COO tensor. **Bins not occupied at fit time get no column**: fit on all points whose mutual kernel
    values you need (``docs/toolbox.md``).

    Parameters
    ----------
    sigma : float > 0, default 1.0
    n_grids : int >= 1, default 100
    random_state : int, RandomState or None, default None
        Seeds the grids.
    grid_chunk : int, optional
        Grids processed at once (memory bound of ``transform``).
    sparse_output : bool, default False
        Return a sparse matrix (``n_bins_`` can reach ``n * n_grids``; a dense output that does
        not fit in memory is refused with this hint).

    Attributes
    ----------
    pitch_, shift_ : Tensor ``[n_grids, d]`` float64
    bins_ : Tensor ``[n_bins_, 1 + d]`` int64 rows ``(grid, id_1, ..., id_d)``, sorted
    n_bins_, n_output_features_, n_features_in_ : int
    """

    _parameter_constraints: dict = {
        "sigma": [Interval(Real, 0, None, closed="neither")], "n_grids": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"], "grid_chunk": [Interval(Integral, 1, None, closed="left"), None],
        "sparse_output": ["boolean"],
    }

    def __init__(self, sigma: float = 1.0, n_grids: int = 100, random_state=None, grid_chunk: int | None = None,
                 sparse_output: bool = False):
        self.sigma, self.n_grids, self.random_state = sigma, n_grids, random_state
        self.grid_chunk, self.sparse_output = grid_chunk, sparse_output

    def _draw(self, Xt: Tensor) -> None:
        Xt, P, g = Xt.to(torch.float64), int(self.n_grids), torch_generator(self.random_state)
        d = Xt.shape[1]
        # Gamma(2, scale sigma) = sum of two Exp(scale sigma)
        e = -torch.log1p(-torch.rand((2, P, d), generator=g, dtype=torch.float64))
        pitch = float(self.sigma) * e.sum(0)
        shift = pitch * torch.rand((P, d), generator=g, dtype=torch.float64)
        self.pitch_, self.shift_ = pitch.to(Xt.device), shift.to(Xt.device)
        bins = [torch.unique(self._keys(Xt, self.pitch_[s:e_], self.shift_[s:e_], s), dim=0)
                for s, e_ in self._chunks(Xt.shape[0])]
        self.bins_ = torch.cat(bins)
        self.n_bins_ = self.n_output_features_ = int(self.bins_.shape[0])

    def _chunks(self, n):
        P, d = self.pitch_.shape
        step = self.grid_chunk or max(1, (1 << 22) // max(1, n * (d + 1)))
        for s in range(0, P, step):
            yield s, min(P, s + step)

    @staticmethod
    def _keys(X: Tensor, pitch: Tensor, shift: Tensor, s: int) -> Tensor:
        """Rows ``(grid, id_1..id_d)`` ``[p n, 1+d]`` for the grids ``s, s+1, ...`` of ``pitch``/``shift``."""
        ids = bin_ids(X, pitch, shift)  # [p, n, d]
        grid = torch.arange(s, s + pitch.shape[0], device=X.device).view(-1, 1, 1).expand(-1, X.shape[0], 1)
        return torch.cat([grid, ids], dim=2).reshape(-1, X.shape[1] + 1)

    def _map_bytes(self, n: int, itemsize: int) -> float:
        return 2.0 * n * self.pitch_.shape[0] * (16 + itemsize)   # one (row, column, value) per grid, coalesced

    def map_tensor(self, X_in: Tensor) -> Tensor:
        """``z(X)`` of a validated tensor as a coalesced sparse COO tensor on its device."""
        dev = X_in.device
        X = X_in.to(torch.float64)
        pitch, shift, bins = (t.to(dev) for t in (self.pitch_, self.shift_, self.bins_))  # no copy on the fit device
        n, P = X.shape[0], self.pitch_.shape[0]
        rows, cols = [], []
        # fitted bins of grid chunk s:e occupy a contiguous range of columns (bins_ is grid-sorted)
        starts = torch.searchsorted(bins[:, 0].contiguous(), torch.arange(P + 1, device=dev)).tolist()
        for s, e in self._chunks(n):
            keys = self._keys(X, pitch[s:e], shift[s:e], s)
            fitted = bins[starts[s]:starts[e]]
            _, inv = torch.unique(torch.cat([fitted, keys]), dim=0, return_inverse=True)
            lookup = torch.full((fitted.shape[0] + keys.shape[0],), -1, dtype=torch.long, device=dev)
            lookup[inv[:fitted.shape[0]]] = torch.arange(fitted.shape[0], device=dev) + starts[s]
            col = lookup[inv[fitted.shape[0]:]]
            row = torch.arange(n, device=dev).repeat(e - s)
            keep = col >= 0
            rows.append(row[keep])
            cols.append(col[keep])
        row, col = torch.cat(rows), torch.cat(cols)
        val = torch.full((row.numel(),), 1.0 / math.sqrt(P), dtype=X_in.dtype, device=dev)
        return torch.sparse_coo_tensor(torch.stack([row, col]), val, (n, self.n_bins_),
                                       check_invariants=False).coalesce()

    def _output(self, Z: Tensor, like):
        if self.sparse_output:
            if is_torch(like):
                return Z
            i = Z.indices().cpu().numpy()
            return sp.csr_matrix((Z.values().cpu().numpy(), (i[0], i[1])), shape=tuple(Z.shape))
        check_allocation(Z.shape[0] * Z.shape[1] * Z.values().element_size(),
                         f"the dense [{Z.shape[0]}, {Z.shape[1]}] random binning features",
                         "pass sparse_output=True (one entry per grid and row)", Z.device)
        return to_output(Z.to_dense(), like)
