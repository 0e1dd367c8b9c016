"""Spectral transforms s(lambda), linear solvers and eigensolvers.

A transform maps the eigenvalues ``lambda`` of the base kernel to those of the kernel STKR
predicts with (Zhai et al., ICLR 2024): :class:`Polynomial` (Algorithm 1),
:class:`ReciprocalPolynomial` (Algorithm 2, Eq. 20), :class:`InverseLaplacian` (Example 1) and
:class:`TopD` (kernel PCA, Sec. 4). The solvers (:func:`richardson`, :func:`cg`, :func:`gmres`)
take a callable ``X -> A X`` on blocks ``[n, C]`` and return a :class:`SolveResult`.

Example
-------
>>> import torch
>>> from graphstk.spectral import InverseLaplacian, Polynomial, cg
>>> InverseLaplacian(eta=0.5)(torch.tensor([0.0, 0.5, 1.0]))        # s(l) = l / (1 - eta l)
tensor([0.0000, 0.6667, 2.0000], dtype=torch.float64)
>>> Polynomial.monomial(2)(torch.tensor([0.5, 1.0]))                 # s(l) = l^2
tensor([0.2500, 1.0000], dtype=torch.float64)
>>> A = torch.tensor([[4.0, 1.0], [1.0, 3.0]], dtype=torch.float64)
>>> res = cg(lambda X: A @ X, torch.ones(2, 1, dtype=torch.float64), max_iter=10, tol=1e-12)
>>> torch.allclose(A @ res.x, torch.ones(2, 1, dtype=torch.float64))
True
"""
from .eigen import power_iteration, spectral_radius, top_eigenpairs
from .solvers import ConvergenceError, ConvergenceWarning, SolveResult, cg, gmres, richardson
from .transforms import InverseLaplacian, Polynomial, ReciprocalPolynomial, TopD, Transform

__all__ = ["Transform", "Polynomial", "ReciprocalPolynomial", "InverseLaplacian", "TopD",
           "richardson", "cg", "gmres", "SolveResult", "ConvergenceWarning", "ConvergenceError",
           "power_iteration", "spectral_radius", "top_eigenpairs"]
