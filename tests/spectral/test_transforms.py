"""graphstk.spectral.transforms.horner: the one polynomial-in-an-operator evaluation, against explicit powers."""
from __future__ import annotations

import torch
from torch.autograd import gradcheck

from graphstk.spectral.transforms import Polynomial, ReciprocalPolynomial, horner

g = torch.Generator().manual_seed(0)
A = torch.rand(6, 6, dtype=torch.float64, generator=g)
X = torch.rand(6, 2, dtype=torch.float64, generator=g)


def powers(coeffs, x, shift=0):
    return sum(c * torch.linalg.matrix_power(A, p + shift) @ x for p, c in enumerate(coeffs))


def test_horner_equals_the_sum_of_powers():
    c = (0.5, -1.0, 0.0, 2.0)
    for shift in (0, 1, 3):
        torch.testing.assert_close(horner(c, lambda v: A @ v, X, shift=shift), powers(c, X, shift))
    torch.testing.assert_close(horner((3.0,), lambda v: A @ v, X), 3.0 * X)
    # continuing from a partial sum: h0 stands for the higher coefficients
    h0 = A @ (2.0 * X) + 0.0 * X
    torch.testing.assert_close(horner(c[:2], lambda v: A @ v, X, h0=h0), powers(c, X))


def test_transforms_apply_and_evaluate_through_horner():
    p = Polynomial([0.5, 0.0, 1.0])
    torch.testing.assert_close(p.apply(lambda v: A @ v, X), powers((0.0,) + p.coeffs, X))
    lam = torch.linspace(-1, 1, 7, dtype=torch.float64)
    torch.testing.assert_close(p(lam), 0.5 * lam + lam ** 3)
    r = ReciprocalPolynomial([1.0, -0.3, 0.1], 2)
    torch.testing.assert_close(r.apply_rho(lambda v: A @ v, X), powers(r.xi, X))
    torch.testing.assert_close(r.rho(lam), 1 - 0.3 * lam + 0.1 * lam ** 2)


def test_horner_is_differentiable_in_tensor_coefficients():
    assert gradcheck(lambda c, x: horner(c, lambda v: A @ v, x, shift=1),
                     (torch.tensor([0.3, -0.2, 0.7], dtype=torch.float64, requires_grad=True),
                      X.clone().requires_grad_()))
