"""Explicit feature maps for kernels: random Fourier and random binning features.

See :mod:`graphstk.features.random_features` for the formulas (kernel-methods slides,
Eqs. 2-8) and the sampling densities.
"""
from .random_features import RandomBinningFeatures, RandomFourierFeatures, bin_ids, sample_frequencies

__all__ = ["RandomFourierFeatures", "RandomBinningFeatures", "bin_ids", "sample_frequencies"]
