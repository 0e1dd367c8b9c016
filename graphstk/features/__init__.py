"""Explicit feature maps for kernels: random Fourier and random binning features (``docs/toolbox.md``)."""
from .random_features import RandomBinningFeatures, RandomFourierFeatures, bin_ids, sample_frequencies

__all__ = ["RandomFourierFeatures", "RandomBinningFeatures", "bin_ids", "sample_frequencies"]
