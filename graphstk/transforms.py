"""Alias of :mod:`graphstk.spectral.transforms` (``graphstk.transforms.Polynomial`` etc.)."""
from .spectral.transforms import InverseLaplacian, Polynomial, ReciprocalPolynomial, TopD, Transform

__all__ = ["Transform", "Polynomial", "ReciprocalPolynomial", "InverseLaplacian", "TopD"]
