"""The baselines of the separating-kernel paper (Sec. 7): the Parzen window and the one-class SVM."""
from __future__ import annotations

from numbers import Real

import torch
from sklearn.base import _fit_context
from sklearn.svm import OneClassSVM

from ...operators.feature import FeatureKernelOperator, Kernel, check_positive, kernel_function
from .._constraints import OPTIONAL_POSITIVE_INT, POSITIVE_INT, kernel_names, store_params
from .base import DTYPE_CONSTRAINT, SIGMA_KNN, OneClassEstimator, as_float_offset

__all__ = ["ParzenWindow", "gaussian_one_class_svm"]


class ParzenWindow(OneClassEstimator):
    """Parzen window estimate ``p(x) = (1/n) sum_i K(x, x_i)`` with the normalised kernel (Sec. 7 baseline).

    ``fit(X, y=None)``: ``X [n, d]`` samples of the set (``y`` ignored). ``score_samples(X)`` returns
    ``p``; thresholding it at a varying offset gives the ROC curve. ``predict(X)`` is ``+1`` where
    ``p(x) >= offset_`` (default: the smallest training score, so that every training point is
    inside, as ``tau_n`` of the spectral estimator), ``-1`` elsewhere. Same kernel and width
    heuristic as :class:`~graphstk.methods.SpectralSupportEstimator` (Abel kernel, ``sigma`` =
    median 10th-neighbour distance). NumPy in gives NumPy out; tensors stay on their device.

    Parameters
    ----------
    kernel : str, default "abel"
        Feature kernel name (``"abel"``, ``"laplacian"``, ``"gaussian"``, ...), normalised to ``K(x, x) = 1``.
    sigma : float or None, default None
        Kernel width; ``None`` takes the median distance to the ``n_neighbors``-th nearest neighbour.
    n_neighbors : int, default 10. The neighbour rank of the width heuristic.
    threshold : float or None, default None. ``p(x) >= threshold`` is inside; ``None``: the smallest training score.
    dtype : {"float64", "float32"} or None, default None. Computation dtype (``None``: float64).
    block_size : int or None, default None
        Rows per block when the kernel is evaluated (``None``: the operator's default).

    Fitted attributes: ``sigma_``, ``kernel_``, ``X_fit_``, ``threshold_``, ``offset_``, ``n_features_in_``.
    """

    _parameter_constraints: dict = {
        "kernel": [kernel_names(), Kernel], "sigma": SIGMA_KNN, "n_neighbors": POSITIVE_INT,
        "threshold": [Real, None], "dtype": DTYPE_CONSTRAINT, "block_size": OPTIONAL_POSITIVE_INT,
    }

    def __init__(self, kernel="abel", sigma=None, n_neighbors=10, threshold=None, dtype=None, block_size=None):
        store_params(self, locals())

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Fit on samples ``X [n, d]`` of the set; returns ``self``."""
        X = self._points(X, reset=True)
        self._check_n(X.shape[0])
        self._resolve_kernel(X, kernel_function(self.kernel))
        self.X_fit_ = X
        if self.threshold is None:
            self.threshold_ = float(self._density(X).min())
            self.offset_ = as_float_offset(self.threshold_)
        else:
            self.threshold_ = self.offset_ = float(self.threshold)
        return self

    def _density(self, Z):
        op = FeatureKernelOperator(Z, self.X_fit_, kernel=self.kernel_, normalize=True, block_size=self.block_size)
        n = self.X_fit_.shape[0]
        return op @ torch.full((n,), 1.0 / n, dtype=op.dtype, device=Z.device)

    def _scores(self, X):
        self._check_fitted()
        return self._density(self._points(X, reset=False))


def gaussian_one_class_svm(sigma: float, nu: float = 0.9, **kwargs):
    """scikit-learn ``OneClassSVM`` with the Gaussian kernel ``exp(-||x-y||^2 / (2 sigma^2))`` (Sec. 7).

    ``gamma = 1 / (2 sigma^2)`` (graphstk's Gaussian convention); ``nu = 0.9`` as in the paper;
    ``kwargs`` go to ``OneClassSVM``. Score with ``decision_function`` (higher = more inside) at a
    varying offset for the ROC curve. Host only (libsvm): pass NumPy arrays.
    """
    sigma = check_positive("sigma", sigma)
    return OneClassSVM(kernel="rbf", gamma=1.0 / (2.0 * sigma * sigma), nu=nu, **kwargs)
