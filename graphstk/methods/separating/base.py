"""What the one-class estimators of the separating-kernel paper share: scikit-learn's outlier-detector
contract (``score_samples``, ``decision_function = score_samples - offset_``, ``predict`` ``+1`` inside),
arrays in and arrays out, and the kernel width rule of Sec. 7."""
from __future__ import annotations

import numpy as np
import torch
from numbers import Real

from sklearn.base import BaseEstimator, OutlierMixin
from torch import Tensor

from .._constraints import Interval, Options, StrOptions
from ..._arrays import check_is_fitted, to_output, validate_features
from ...operators.feature import Kernel, median_width

__all__ = ["width_heuristic", "unit_scale", "OneClassEstimator", "ROUND_TOL", "DTYPE_CONSTRAINT"]

#: Rounding slack folded into ``offset_`` so that the threshold accepts every training point.
ROUND_TOL = 1e-10

_DTYPES = {"float64": torch.float64, "double": torch.float64, "float32": torch.float32, "float": torch.float32}
#: the ``dtype`` parameter: a name of ``_DTYPES``, ``torch.float32`` / ``torch.float64``, or None (float64)
DTYPE_CONSTRAINT = [StrOptions(set(_DTYPES)), Options(torch.dtype, {torch.float32, torch.float64}), None]
#: a width ``sigma > 0``, or None for the k-th-neighbour heuristic of Sec. 7
SIGMA_KNN = [Interval(Real, 0, None, closed="neither"), None]


def unit_scale(diag: Tensor, what: str) -> Tensor:
    """``diag^{-1/2}``, or a clear error where the kernel cannot be normalised."""
    if not torch.isfinite(diag).all():
        raise ValueError(f"the kernel diagonal K(x, x) of the {what} is not finite; check the inputs")
    bad = (diag <= 0).nonzero().flatten()
    if bad.numel():
        raise ValueError(
            f"the kernel cannot be normalised: K(x, x) <= 0 for {bad.numel()} {what} (first ids "
            f"{bad[:5].tolist()}); K(x, y)/sqrt(K(x, x) K(y, y)) needs K(x, x) > 0 -- use a kernel with a "
            "positive diagonal (e.g. kernel='abel', or a diffusion/regularised graph kernel instead of the "
            "adjacency)")
    return diag.rsqrt()


def width_heuristic(X, n_neighbors: int = 10, kernel: str | Kernel = "abel") -> float:
    """Sec. 7: the median over training points of the distance to their ``n_neighbors``-th nearest neighbour.

    Distances in the kernel's own metric: l1 for ``laplacian`` (``exp(-||x-y||_1/sigma)``), Euclidean
    otherwise (``abel``, ``gaussian``, ...). ``n_neighbors`` larger than ``n - 1`` is capped at
    ``n - 1`` with a warning (:func:`~graphstk.operators.median_width`).
    """
    name = kernel.name if isinstance(kernel, Kernel) else Kernel(kernel).name
    metric = "manhattan" if name == "laplacian" else "euclidean"
    return median_width(X, k=n_neighbors, metric=metric, param="n_neighbors")


class OneClassEstimator(OutlierMixin, BaseEstimator):
    """Shared outlier-detector behaviour; a subclass supplies ``_scores(X)`` (a tensor ``[n]``)
    and sets ``offset_`` in ``fit``."""

    def _compute_dtype(self) -> torch.dtype:
        d = self.dtype
        if d is None:
            return torch.float64
        return d if isinstance(d, torch.dtype) else _DTYPES[d]

    def _resolve_kernel(self, X: Tensor, base: Kernel) -> None:
        """Sets ``sigma_``, ``kernel_``: ``sigma``, else a Kernel instance's width, else :func:`width_heuristic`."""
        if "sigma" not in Kernel(base.name).params:
            if self.sigma is not None:
                raise ValueError(f"kernel {base.name!r} has no width; leave sigma=None")
            self.sigma_, self.kernel_ = None, base
            return
        if self.sigma is not None:
            sigma = float(self.sigma)
        elif isinstance(self.kernel, Kernel):
            sigma = self.kernel.params["sigma"]
        else:
            sigma = width_heuristic(X, self.n_neighbors, base)
        self.sigma_ = float(sigma)
        self.kernel_ = Kernel(base.name, **{**base.params, "sigma": self.sigma_})

    def _points(self, X, reset: bool) -> Tensor:
        return validate_features(self, X, reset=reset, dtype=self._compute_dtype())

    def _check_n(self, n: int):
        if n < 2:
            raise ValueError(f"{type(self).__name__} needs at least 2 training samples, got {n} sample(s) "
                             "(Eq. 19 with n = 1 accepts only the training point itself)")

    def _offset(self, like: Tensor) -> Tensor:
        return torch.as_tensor(self.offset_, dtype=like.dtype, device=like.device)

    def score_samples(self, X):
        """The score of each row of ``X``: higher = more inside the set."""
        return to_output(self._scores(X), X)

    def decision_function(self, X):
        """``score_samples(X) - offset_``: ``>= 0`` inside the estimated set."""
        F = self._scores(X)
        return to_output(F - self._offset(F), X)

    def predict(self, X):
        """``+1`` inside the estimated set (``decision_function >= 0``), ``-1`` outside."""
        F = self._scores(X)
        out = torch.where(F - self._offset(F) >= 0, 1, -1)
        return to_output(out, X)

    def _check_fitted(self):
        check_is_fitted(self, "offset_")


def as_float_offset(threshold) -> float | np.ndarray:
    """``threshold - ROUND_TOL`` as a float (one ``lambda``) or a NumPy array (a ``lambda`` path)."""
    if isinstance(threshold, Tensor):
        t = threshold.detach().cpu().numpy() - ROUND_TOL
        return float(t) if t.ndim == 0 else t
    return float(threshold) - ROUND_TOL
