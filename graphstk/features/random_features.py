"""Random features for shift-invariant kernels (kernel-methods slides, "Random Features
for Large-Scale Kernel Machines", Rahimi & Recht 2007).

Both maps follow scikit-learn's ``fit`` / ``transform`` convention and return torch tensors,
with ``z(x)^T z(y) ~ k(x, y)`` and no extra normalisation (the errata's fix to the Fredholm
paper's doubly-normalised map). Kernel conventions are those of
:mod:`graphstk.operators.feature`.

Random Fourier features (slides Eqs. 2-4, Algorithm "Random Fourier Features")
--------------------------------------------------------------------------------
Bochner (Theorem 6): ``k(x - y) = E_omega[cos(omega^T (x - y))]`` with ``omega ~ p``, the
Fourier transform of ``k`` (density prefactor ``(2 pi)^-d`` in ``R^d``; the slides' table of
``p`` is a missing figure, errata). The densities, per coordinate ``omega_m``:

* Gaussian ``exp(-||d||^2 / (2 sigma^2))``: ``omega ~ N(0, I / sigma^2)``;
* Laplacian (l1) ``exp(-||d||_1 / sigma) = prod_m exp(-|d_m|/sigma)``: each ``omega_m ~
  Cauchy(0, 1/sigma)``, since ``(1/2pi) int e^{-i w t} e^{-|t|/sigma} dt =
  (1/pi) (1/sigma) / ((1/sigma)^2 + w^2)``;
* Cauchy ``prod_m 1 / (1 + d_m^2 / sigma^2)``: each ``omega_m ~ Laplace(0, 1/sigma)``, since
  ``(1/2pi) int e^{-i w t} / (1 + t^2/sigma^2) dt = (sigma/2) e^{-sigma |w|}`` (the errata's
  ``Laplace(0, 1)`` is the case ``sigma = 1``).

Maps (Eq. 3 and the slide after it), ``D = n_features`` frequencies:

* ``map="cos_sin"``: ``z(x) = sqrt(1/D) [cos(W^T x), sin(W^T x)]`` (``2D`` outputs, Eq. 4 /
  Algorithm), ``z(x)^T z(y) = (1/D) sum_j cos(omega_j^T (x - y))``;
* ``map="phase"``: ``z(x) = sqrt(2/D) cos(W^T x + b)``, ``b ~ U[0, 2 pi)`` (``D`` outputs).

Both are unbiased; the error decays as ``O(1/sqrt(D))`` (Eq. 5, Proposition 4).

Random binning features (slides Eqs. 6-8, Lemma 7, Algorithm "Random Binning Features")
---------------------------------------------------------------------------------------
For the l1-Laplacian ``exp(-||x - y||_1 / sigma)``: for each of ``P = n_grids`` grids and each
dimension ``m``, a pitch ``delta ~ p(delta) = delta k''(delta) = Gamma(shape 2, scale sigma)``
(Lemma 7) and a shift ``u ~ U[0, delta)``; the bin of ``x`` is
``floor((x_m - u_m) / delta_m)`` per dimension. For a fixed pitch ``P_u[same bin] =
max(0, 1 - |x - y| / delta)`` (Eq. 6; the slide drops the ``1 -``, errata), and averaging over
the pitch gives ``exp(-|x - y| / sigma)``; dimensions are independent, so the product is the
l1-Laplacian. ``z(x) = sqrt(1/P) [z_1(x), ..., z_P(x)]`` (Eq. 8) with ``z_p`` the one-hot
indicator of ``x``'s bin in grid ``p``: ``z(x)^T z(y)`` is the fraction of grids in which
``x`` and ``y`` collide.
"""
from __future__ import annotations

import math

import torch
from sklearn.base import BaseEstimator, TransformerMixin
from torch import Tensor

from ..operators.feature import as_features, check_positive

__all__ = ["RandomFourierFeatures", "RandomBinningFeatures", "bin_ids", "sample_frequencies"]

_RFF_KERNELS = ("gaussian", "laplacian", "cauchy")


def _check_count(name: str, value) -> int:
    if isinstance(value, bool) or int(value) != value or int(value) < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def _generator(seed) -> torch.Generator:
    g = torch.Generator()
    if seed is None:
        g.seed()
    else:
        g.manual_seed(int(seed))
    return g


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
    raise ValueError(f"random Fourier features support kernel in {_RFF_KERNELS}, got {kernel!r}")


class RandomFourierFeatures(TransformerMixin, BaseEstimator):
    """Random Fourier features ``z`` with ``z(x)^T z(y) ~ k(x, y)`` (slides Eqs. 2-4).

    Parameters
    ----------
    kernel : ``"gaussian"`` | ``"laplacian"`` (l1 form) | ``"cauchy"``
    sigma : float > 0, bandwidth (conventions of :mod:`graphstk.operators.feature`).
    n_features : int >= 1, the number ``D`` of frequencies.
    seed : int or None, seeds the frequencies (``None``: nondeterministic).
    map : ``"cos_sin"`` (``2D`` outputs ``sqrt(1/D)[cos, sin]``, Eq. 4) or ``"phase"``
        (``D`` outputs ``sqrt(2/D) cos(W^T x + b)``, slide after Eq. 3).

    Attributes after ``fit``: ``W_`` ``[d, D]`` (float64, cast to the input's dtype in
    ``transform``), ``b_`` ``[D]`` (phase map) or ``None``, ``n_features_in_``,
    ``n_output_features_``. ``transform`` returns a torch tensor ``[n, n_output_features_]``
    in the input's floating dtype (float64 for numpy / integer input).
    """

    def __init__(self, kernel: str = "gaussian", sigma: float = 1.0, n_features: int = 100,
                 seed: int | None = None, map: str = "cos_sin"):
        self.kernel = kernel
        self.sigma = sigma
        self.n_features = n_features
        self.seed = seed
        self.map = map

    def fit(self, X, y=None):
        """Draw the frequencies (Eq. 2) for the dimension of ``X``.

        Parameters
        ----------
        X : Tensor or array ``[n, d]``
            Only its number of columns and dtype are used.
        y : ignored
            (scikit-learn's signature).

        Returns
        -------
        self
        """
        X = as_features(X)
        if self.kernel not in _RFF_KERNELS:
            raise ValueError(f"kernel must be one of {_RFF_KERNELS}, got {self.kernel!r}")
        if self.map not in ("cos_sin", "phase"):
            raise ValueError(f"map must be 'cos_sin' or 'phase', got {self.map!r}")
        D = _check_count("n_features", self.n_features)
        sigma = check_positive("sigma", self.sigma)
        g = _generator(self.seed)
        self.W_ = sample_frequencies(self.kernel, sigma, X.shape[1], D, g)
        self.b_ = (2 * math.pi * torch.rand(D, generator=g, dtype=torch.float64)
                   if self.map == "phase" else None)
        self.n_features_in_ = X.shape[1]
        self.n_output_features_ = 2 * D if self.map == "cos_sin" else D
        return self

    def _check_fitted(self):
        if not hasattr(self, "W_"):
            raise RuntimeError(f"{type(self).__name__} is not fitted; call fit(X) first")

    def transform(self, X) -> Tensor:
        """The random features ``z(X)`` (Eq. 4, or the phase map).

        Parameters
        ----------
        X : Tensor or array ``[n, d]``

        Returns
        -------
        Tensor ``[n, n_output_features_]`` with ``z(X) z(Y)^T ~ k(X, Y)``.
        """
        self._check_fitted()
        X = as_features(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but the map was fitted with {self.n_features_in_}")
        W = self.W_.to(device=X.device, dtype=X.dtype)
        P = X @ W
        D = W.shape[1]
        if self.map == "cos_sin":
            return torch.cat([torch.cos(P), torch.sin(P)], dim=1) * math.sqrt(1.0 / D)
        return torch.cos(P + self.b_.to(device=X.device, dtype=X.dtype)) * math.sqrt(2.0 / D)

    def kernel_approximation(self, X, Y=None) -> Tensor:
        """``z(X) z(Y)^T``, the ``[a, b]`` approximation of the Gram matrix (small inputs)."""
        ZX = self.transform(X)
        return ZX @ (ZX if Y is None else self.transform(Y)).T


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


class RandomBinningFeatures(TransformerMixin, BaseEstimator):
    """Random binning features for ``exp(-||x - y||_1 / sigma)`` (slides Eqs. 6-8, Lemma 7).

    Per grid ``p`` and dimension ``m``: pitch ``delta ~ Gamma(2, scale sigma)`` (``delta k''``),
    shift ``u ~ U[0, delta)``, bin ``floor((x_m - u_m)/delta_m)``. Output: a sparse torch
    tensor (COO, coalesced) ``[n, n_bins_]`` with one entry ``1/sqrt(n_grids)`` per grid, so
    ``z(x)^T z(y)`` = fraction of grids in which ``x`` and ``y`` share a bin (Eq. 8).

    Columns are the occupied bins of the data passed to ``fit`` (exact tuples of
    per-dimension bin ids, found with ``torch.unique``; no hashing, no collisions).
    **Bins not occupied at fit time get no column**: a point that falls into such a bin
    at ``transform`` time has no entry for that grid. Its products with the fitted
    (training) points are still exact (no training point shares that bin), but collisions
    among new points in unseen bins are not represented. Fit on all points whose mutual
    kernel values you need (e.g. training + test in a transductive setting).

    Attributes after ``fit``: ``pitch_``, ``shift_`` ``[n_grids, d]`` (float64),
    ``bins_`` ``[n_bins_, 1 + d]`` (int64 rows ``(grid, id_1, ..., id_d)``, sorted), ``n_bins_``.

    Parameters
    ----------
    sigma : float, default 1.0
    n_grids : int, default 100
    seed : int, optional
        Seeds the grids.
    grid_chunk : int, optional
        Grids processed at once (memory bound of ``transform``).
    """

    def __init__(self, sigma: float = 1.0, n_grids: int = 100, seed: int | None = None,
                 grid_chunk: int | None = None):
        self.sigma = sigma
        self.n_grids = n_grids
        self.seed = seed
        self.grid_chunk = grid_chunk

    def fit(self, X, y=None):
        X = as_features(X, dtype=torch.float64).cpu()  # bin bookkeeping runs on the CPU
        sigma = check_positive("sigma", self.sigma)
        P = _check_count("n_grids", self.n_grids)
        d = X.shape[1]
        g = _generator(self.seed)
        # Gamma(2, scale sigma) = sum of two Exp(scale sigma)
        e = -torch.log1p(-torch.rand((2, P, d), generator=g, dtype=torch.float64))
        self.pitch_ = sigma * e.sum(0)
        self.shift_ = self.pitch_ * torch.rand((P, d), generator=g, dtype=torch.float64)
        self.n_features_in_ = d
        bins = [torch.unique(self._keys(X, s, e_), dim=0) for s, e_ in self._chunks(X.shape[0])]
        self.bins_ = torch.cat(bins) if bins else torch.zeros(0, d + 1, dtype=torch.long)
        self.n_bins_ = int(self.bins_.shape[0])
        return self

    def _chunks(self, n):
        P, d = self.pitch_.shape
        step = self.grid_chunk or max(1, (1 << 22) // max(1, n * (d + 1)))
        for s in range(0, P, step):
            yield s, min(P, s + step)

    def _keys(self, X: Tensor, s: int, e: int) -> Tensor:
        """Rows ``(grid, id_1..id_d)`` for grids ``s:e``, grid-major: ``[(e-s) n, 1+d]``."""
        ids = bin_ids(X, self.pitch_[s:e], self.shift_[s:e])  # [p, n, d]
        grid = torch.arange(s, e).view(-1, 1, 1).expand(-1, X.shape[0], 1)
        return torch.cat([grid, ids], dim=2).reshape(-1, X.shape[1] + 1)

    def transform(self, X) -> Tensor:
        if not hasattr(self, "bins_"):
            raise RuntimeError("RandomBinningFeatures is not fitted; call fit(X) first")
        X_in = as_features(X)
        if X_in.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X_in.shape[1]} features, but the map was fitted with {self.n_features_in_}")
        X = X_in.to(device="cpu", dtype=torch.float64)
        n = X.shape[0]
        P = self.pitch_.shape[0]
        rows, cols = [], []
        # fitted bins of grid chunk s:e occupy a contiguous range of columns (bins_ is grid-sorted)
        starts = torch.searchsorted(self.bins_[:, 0].contiguous(), torch.arange(P + 1))
        for s, e in self._chunks(n):
            keys = self._keys(X, s, e)
            fitted = self.bins_[starts[s]:starts[e]]
            _, inv = torch.unique(torch.cat([fitted, keys]), dim=0, return_inverse=True)
            lookup = torch.full((int(inv.max()) + 1 if inv.numel() else 0,), -1, dtype=torch.long)
            lookup[inv[:fitted.shape[0]]] = torch.arange(fitted.shape[0]) + starts[s]
            col = lookup[inv[fitted.shape[0]:]]
            row = torch.arange(n).repeat(e - s)
            keep = col >= 0
            rows.append(row[keep])
            cols.append(col[keep])
        row = torch.cat(rows) if rows else torch.zeros(0, dtype=torch.long)
        col = torch.cat(cols) if cols else torch.zeros(0, dtype=torch.long)
        val = torch.full((row.numel(),), 1.0 / math.sqrt(P), dtype=X_in.dtype)
        Z = torch.sparse_coo_tensor(torch.stack([row, col]), val, (n, self.n_bins_), check_invariants=False)
        return Z.coalesce().to(X_in.device)

    def kernel_approximation(self, X, Y=None) -> Tensor:
        """Dense ``z(X) z(Y)^T`` (fraction of colliding grids; small inputs)."""
        ZX = self.transform(X).to_dense()
        return ZX @ (ZX if Y is None else self.transform(Y).to_dense()).T
