"""Random-feature Fredholm classification (Sec. 5.3, corrected by the erratum): memory linear in ``n``."""
from __future__ import annotations

import scipy.sparse as sp
import torch
from torch import Tensor

from ..._arrays import check_positive_int
from ...features import RandomFourierFeatures
from ...memory import check_allocation, tile_rows
from ...operators.feature import Kernel, check_positive
from .._constraints import OPTIONAL_POSITIVE_INT, POSITIVE, POSITIVE_INT, SIGMA, StrOptions, store_params
from ..semi_supervised import SemiSupervisedClassifier
from .kernel import _BLOCK_ELEMS, FredholmKernel, _n, _take, fredholm_instance, median_sigma
from .solvers import effective_lam, solve_square

__all__ = ["fredholm_random_features", "RandomFeatureFredholm"]


def fredholm_random_features(X, U, outer="gaussian", outer_sigma=None, inner_sigma=None,
                             normalized: bool = False, n_components: int = 500, random_state=0,
                             features=None, block_size: int | None = None) -> Tensor:
    """``z_F(X) = A_X z(U)`` ``[|X|, F]`` with ``z_F(x)^T z_F(x') ~ kF(x, x')`` (Sec. 5.3).

    ``z``: random Fourier features of the inner Gaussian with the erratum's map
    (:class:`graphstk.features.RandomFourierFeatures`, ``n_components`` frequencies seeded by
    ``random_state``); ``A_X``: the Eq. 5 / Eq. 6 (``normalized``) outer weights of ``outer``. ``z(U)`` is
    accumulated in row blocks of ``U`` (``block_size`` rows), never stored. ``features`` may be a
    pre-fitted map (then ``inner_sigma``/``n_components``/``random_state`` are unused). ``outer_sigma``,
    ``inner_sigma``: widths of the two Gaussians (``None``: the median heuristic over ``U``). Dense
    points on any device; returns a tensor there.
    """
    ctx = _RFContext(X, U, outer, outer_sigma, inner_sigma, normalized, n_components, random_state, features,
                     block_size)
    return ctx.features_of(ctx.X)


class _RFContext:
    def __init__(self, X, U, outer, outer_sigma, inner_sigma, normalized, n_components, random_state, features,
                 block_size):
        self.op = FredholmKernel(X, None, U, outer=outer, inner="linear", outer_sigma=outer_sigma,
                                 normalized=normalized, block_size=block_size)
        if sp.issparse(self.op.U):
            raise TypeError("random Fredholm features need dense points (the Fourier map of sparse tf-idf is dense)")
        self.X, self.U, self.block_size = self.op.X, self.op.U, block_size
        self.inner_sigma = None
        if features is None:
            self.inner_sigma = (median_sigma(self.U, width="inner_sigma") if inner_sigma is None
                                else check_positive("inner_sigma", inner_sigma))
            n_components = check_positive_int("n_components", n_components)
            features = RandomFourierFeatures("gaussian", sigma=self.inner_sigma, n_features=n_components,
                                             random_state=random_state).fit(self.U[:1])
        self.z = features

    def _u_blocks(self):
        n = _n(self.U)
        bs = max(1, _BLOCK_ELEMS // max(1, 2 * self.z.W_.shape[1]))
        for s in range(0, n, bs):
            yield s, min(n, s + bs)

    def features_of(self, P) -> Tensor:
        """``A_P z(U)`` in row chunks of ``P`` (independent: they shrink to the free memory)."""
        F = self.z.n_output_features_
        out = []
        rb = tile_rows(max(1, 4 * _BLOCK_ELEMS // max(1, _n(self.U))), 8.0 * (_n(self.U) + F),
                       what=f"one row of the Fredholm weights ({_n(self.U)} entries)", hint="subsample the points")
        for s in range(0, _n(P), rb):
            A = self.op.weights(P[s:s + rb])
            acc = A.new_zeros(A.shape[0], F)
            for us, ue in self._u_blocks():
                acc += A[:, us:ue] @ self.z.map_tensor(self.U[us:ue]).to(A.dtype)
            out.append(acc)
        return torch.cat(out) if out else torch.zeros(0, F, dtype=self.op.dtype, device=self.op.device)

    def lift(self, w: Tensor) -> Tensor:
        return torch.cat([self.z.map_tensor(self.U[s:e]).to(w.dtype) @ w for s, e in self._u_blocks()])


class RandomFeatureFredholm(SemiSupervisedClassifier):
    """Square-loss Fredholm classifier (Eq. 3) on the random-feature approximation of Sec. 5.3
    (corrected map and density, erratum): ``kF(x, z) ~ z_F(x)^T z_F(z)``, see
    :func:`fredholm_random_features`; the outer kernel is exact. The contract of :class:`FredholmRLSC`
    (dense ``X`` only), with ``alpha = (Z_L Z_L^T + l lam I)^{-1} Y`` (the same Eq. 3 ``lam``; it approaches
    :class:`FredholmRLSC` as ``n_components`` grows), ``w = Z_L^T alpha``, ``c(x) = a(x)^T (z(U) w)``.

    Parameters
    ----------
    outer : {"gaussian", "linear"} or Kernel, default "gaussian"
    outer_sigma : float > 0 or None, default None
        Width ``sigma`` of the outer Gaussian (the paper's ``r = sigma^2``); ``None``: the median heuristic.
    inner_sigma : float > 0 or None, default None
        Width ``sigma`` of the inner Gaussian; ``None``: the median heuristic.
    normalized : bool, default False. Eq. 6 outer weights.
    n_components : int, default 500. ``D`` frequencies, ``2D`` features.
    lam : float > 0, default 1e-3
    lam_scale : {"absolute", "trace"}, default "absolute". As in :class:`FredholmRLSC`.
    random_state : int, RandomState or None, default None. Seeds the frequencies.
    block_size : int, optional. Rows per temporary tile.

    Attributes
    ----------
    classes_, n_features_in_, lam_
    outer_sigma_, inner_sigma_ : float or None, the widths used
    unreachable_ : ``[n]``, fitted points with all scores zero
    coef_ : Tensor ``[2D, C]`` (``w``)
    dual_coef_ : Tensor ``[l, C]``
    features_ : the fitted :class:`~graphstk.features.RandomFourierFeatures`
    h_ : Tensor ``[n, C]`` (``z(U) w``)
    """

    _width_params = "outer_sigma, inner_sigma"
    _parameter_constraints: dict = {
        "outer": [StrOptions({"gaussian", "rbf", "linear"}), Kernel], "outer_sigma": SIGMA, "inner_sigma": SIGMA,
        "normalized": ["boolean"], "n_components": POSITIVE_INT, "lam": POSITIVE,
        "lam_scale": [StrOptions({"absolute", "trace"})], "random_state": ["random_state"],
        "block_size": OPTIONAL_POSITIVE_INT,
    }

    def __init__(self, outer="gaussian", outer_sigma=None, inner_sigma=None, normalized: bool = False,
                 n_components: int = 500, lam: float = 1e-3, lam_scale: str = "absolute", random_state=None,
                 block_size: int | None = None):
        store_params(self, locals())

    @classmethod
    def instance(cls, name: str, sigma: float | None = None, **kwargs):
        """``FredGauss`` / ``FredGauss(N)`` with width ``sigma`` for both kernels (``None``: the median
        heuristic)."""
        kw = fredholm_instance(name, sigma)
        if kw.pop("inner") != "gaussian":
            raise ValueError(f"random features approximate a Gaussian inner kernel; {name} has a linear one "
                             "(use FredholmRLSC: a linear inner kernel needs no n x n matrix)")
        return cls(**kw, **kwargs)

    def _fit(self, X: Tensor, labeled: Tensor, Y: Tensor):
        XL = _take(X, labeled)
        n, l, F = _n(X), _n(XL), 2 * int(self.n_components)
        check_allocation(8.0 * (n * Y.shape[1] + l * (F + l) + n + F + _BLOCK_ELEMS),
                         f"the random-feature Fredholm fit on {n} points ([{n}, {Y.shape[1]}] scores, [{l}, {F}] "
                         "labeled features, row tiles)", "fit on a random subsample of the unlabeled points, or "
                         "lower n_components=", X.device)
        ctx = _RFContext(XL, X, self.outer, self.outer_sigma, self.inner_sigma, self.normalized,
                         self.n_components, self.random_state, None, self.block_size)
        self.outer_sigma_, self.inner_sigma_ = ctx.op.outer.sigma, ctx.inner_sigma
        ZL = ctx.features_of(XL)
        K = ZL @ ZL.T
        self.lam_ = effective_lam(self.lam, self.lam_scale, K)
        self.dual_coef_ = solve_square(K, Y, self.lam_)
        self.coef_ = ZL.T @ self.dual_coef_.to(ZL.dtype)
        self.h_ = ctx.lift(self.coef_)
        self.features_ = ctx.z
        ctx.op._right = None
        self.operator_ = ctx.op

    def _scores(self, X: Tensor) -> Tensor:
        return self.operator_._weights_matmul(X.to(device=self.h_.device, dtype=self.operator_.dtype), self.h_)

    def _fit_scores(self) -> Tensor:
        return self.operator_._weights_matmul(self.operator_.U, self.h_)
