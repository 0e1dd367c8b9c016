"""Fredholm kernels (Que, Belkin, Wang, "Learning with Fredholm Kernels", NIPS 2014).

``kF(x, z) = (1/n^2) sum_{i,j} k(x, x_i) kH(x_i, x_j) k(z, x_j)`` (Eq. 5; Eq. 6 normalised) over the
labeled + unlabeled points: :mod:`.kernel` (the lazy operator, dense block, Gaussian path over widths),
:mod:`.solvers` (Eq. 3 and Eq. 7 on a Gram block), :mod:`.estimators` (:class:`FredholmRLSC`,
:class:`FredholmSVM`), :mod:`.random_features` (Sec. 5.3). Derivations, the ``lam`` convention of the
erratum and the memory layout: ``docs/methods.md``.
"""
from .estimators import FredholmRLSC, FredholmSVM
from .kernel import (FREDHOLM_INSTANCES, FredholmKernel, fredholm_gram, fredholm_instance, gaussian_fredholm_path,
                     kernel_from_sigma, median_sigma)
from .random_features import RandomFeatureFredholm, fredholm_random_features
from .solvers import effective_lam, onevsrest_targets, solve_hinge, solve_square

__all__ = [
    "FREDHOLM_INSTANCES", "fredholm_instance", "kernel_from_sigma", "median_sigma", "fredholm_gram", "FredholmKernel",
    "FredholmRLSC", "FredholmSVM", "RandomFeatureFredholm", "fredholm_random_features", "gaussian_fredholm_path",
    "solve_square", "solve_hinge", "effective_lam", "onevsrest_targets",
]
