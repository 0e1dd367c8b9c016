"""Learning sets with separating kernels (De Vito, Rosasco, Toigo, ACHA 2014): spectral support
estimation and novelty detection.

* :mod:`.filters`: the spectral filters of Table 1 (Tikhonov, cut-off, Landweber, kernel PCA,
  nu-method), their iterative forms (Sec. 4.2) and the lambda heuristic (Sec. 7, Fig. 3);
* :mod:`.estimator`: :class:`SpectralSupportEstimator`, ``F_n`` of Eq. 19 (exact or low rank);
* :mod:`.baselines`: :class:`ParzenWindow` and :func:`gaussian_one_class_svm` (Sec. 7);
* :mod:`.base`: the outlier-detector contract they share and the width heuristic.
"""
from .base import width_heuristic  # noqa: F401
from .baselines import ParzenWindow, gaussian_one_class_svm  # noqa: F401
from .estimator import SpectralSupportEstimator  # noqa: F401
from .filters import (  # noqa: F401
    FILTERS, filter_g, filter_r, landweber_iteration, landweber_steps, max_curvature_lambda, nu_method_iteration,
    nu_steps,
)

__all__ = [
    "FILTERS", "width_heuristic", "filter_g", "filter_r", "landweber_steps", "nu_steps", "max_curvature_lambda",
    "landweber_iteration", "nu_method_iteration", "SpectralSupportEstimator", "ParzenWindow",
    "gaussian_one_class_svm",
]
