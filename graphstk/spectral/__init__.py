"""Spectral transforms s(lambda), linear solvers and eigensolvers."""
from .eigen import power_iteration, spectral_radius, top_eigenpairs
from .solvers import ConvergenceError, ConvergenceWarning, SolveResult, cg, gmres, richardson
from .transforms import InverseLaplacian, LabelPropagationFilter, Polynomial, ReciprocalPolynomial, TopD, Transform

__all__ = ["Transform", "Polynomial", "ReciprocalPolynomial", "InverseLaplacian", "TopD", "LabelPropagationFilter",
           "richardson", "cg", "gmres", "SolveResult", "ConvergenceWarning", "ConvergenceError",
           "power_iteration", "spectral_radius", "top_eigenpairs"]
