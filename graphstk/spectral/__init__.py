r"""Spectral transforms s(lambda), linear solvers and eigensolvers.

A transform maps the eigenvalues :math:`\lambda_i` of the base kernel
:math:`K = \sum_i \lambda_i \psi_i \psi_i^\top` to those of the kernel STKR predicts with,
:math:`K_s = \sum_i s(\lambda_i) \psi_i \psi_i^\top` (Zhai et al., ICLR 2024):

* :class:`Polynomial` :math:`s(\lambda) = \sum_{p=1}^{q} \pi_p \lambda^p` (Algorithm 1);
* :class:`ReciprocalPolynomial` :math:`s(\lambda)^{-1} = \sum_{p=0}^{q-1} \xi_p \lambda^{p-r}`
  (Algorithm 2, Eq. 20);
* :class:`InverseLaplacian` :math:`s(\lambda) = \lambda / (1 - \eta \lambda)`,
  :math:`0 < \eta < 1/\lambda_1` (Example 1);
* :class:`TopD` :math:`s(\lambda_i) = \lambda_i` for the top :math:`d` eigenvalues, else 0
  (kernel PCA, Sec. 4).

The non-neural graph filters of :mod:`graphstk.spectral.filters` are transforms of the same kind,
applied to node features as ``s(S) X``: :class:`SGCFilter`, :class:`S2GCFilter`,
:class:`HeatKernelFilter` (DGC) and :class:`GGCMFilter`.

The solvers (:func:`richardson`, :func:`cg`, :func:`gmres`) take a callable ``X -> A X`` on blocks ``[n, C]`` and return a :class:`SolveResult`.

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
from .. import _lazy_exports

__getattr__, __dir__, __all__ = _lazy_exports(__name__, {
    ".transforms": "Transform Polynomial ReciprocalPolynomial InverseLaplacian TopD LabelPropagationFilter",
    ".filters": "SGCFilter S2GCFilter HeatKernelFilter GGCMFilter",
    ".solvers": "richardson cg gmres SolveResult ConvergenceWarning ConvergenceError",
    ".eigen": "power_iteration spectral_radius top_eigenpairs EigenCache eigen_route operator_fingerprint "
              "laplacian_eigenpairs diffusion_kernel subspace_top_eigenpairs SubspaceResult",
})
