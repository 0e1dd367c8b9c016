"""Gradients of every graphstk.nn module (float64 gradcheck for each differentiable argument), and the
implicit gradient of a solve equal to the unrolled one at convergence."""
from __future__ import annotations

import warnings

import pytest
import torch
from nn_graphs import labels, random_graph
from torch.autograd import gradcheck

from graphstk.nn import LabelPropagation, STKRPropagation
from graphstk.nn.autograd import LinearSystem, implicit_solve
from graphstk.operators import GraphKernel
from graphstk.spectral.transforms import InverseLaplacian, Polynomial, ReciprocalPolynomial

n = 12
EI, W0, W_DENSE = random_graph(1, n)
Y, MASK = labels(1, n, 0.4)
HALF = W0[: W0.numel() // 2].clone()           # random_graph lists every edge, then its reverse
SOFT = torch.rand(n, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
# For STKR: self-loops of weight degree + 1 make S positive definite, so Richardson budgets converge.
LOOPS = torch.arange(n)
EI_S = torch.cat([EI, torch.stack([LOOPS, LOOPS])], 1)
LOOP_W = W_DENSE.sum(1) + 1.0


def stkr_w(u):
    return torch.cat([u, u, LOOP_W])


def sym(u):
    return torch.cat([u, u])


def leaf(t):
    return t.detach().clone().requires_grad_()


# ----------------------------------------------------------------------------- building blocks
def test_propagate_gradcheck():
    kernel = GraphKernel.from_edges(EI[1], EI[0], W0, n, normalize=False)
    x = leaf(SOFT)
    assert gradcheck(lambda v, x: kernel.propagate(x, v), (leaf(W0), x))


def test_implicit_solve_matches_dense_solve_gradient():
    A0 = torch.eye(5, dtype=torch.float64) * 3 + 0.3 * torch.rand(5, 5, dtype=torch.float64,
                                                                  generator=torch.Generator().manual_seed(2))

    def solve(rhs, transpose, A):
        return torch.linalg.solve(A.T if transpose else A, rhs)

    def f(A, b):
        system = LinearSystem(lambda x, A_: A_ @ x, lambda rhs, tr: solve(rhs, tr, A.detach()))
        return implicit_solve(system, b, [A])
    assert gradcheck(f, (leaf(A0), leaf(torch.rand(5, 2, dtype=torch.float64))))


# ----------------------------------------------------------------------------- LabelPropagation
LP_CASES = {
    "unrolled": dict(num_layers=6, clamp=False),
    "clamped (PyG default)": dict(num_layers=6),
    "fixed point (implicit)": dict(num_layers=None, clamp=False, tol=1e-13, max_iter=5000),
    "keep_labels, implicit": dict(num_layers=None, clamp=False, keep_labels=True, tol=1e-13, max_iter=5000),
}


@pytest.mark.parametrize("case", list(LP_CASES))
def test_label_propagation_gradcheck(case):
    kw = LP_CASES[case]
    soft = SOFT * 0.8 + 0.1 if "clamped" in case else SOFT   # away from the clamp's kinks
    norm = dict(normalize=True)

    def f_y(y):
        return LabelPropagation(alpha=0.7, **kw, **norm)(y, EI, MASK, W0)

    def f_alpha(a):
        return LabelPropagation(alpha=a, **kw, **norm)(soft, EI, MASK, W0)

    def f_w(w):
        return LabelPropagation(alpha=0.7, **kw, **norm)(soft, EI, MASK, w)
    assert gradcheck(f_y, (leaf(soft),))
    assert gradcheck(f_alpha, (leaf(torch.tensor(0.7, dtype=torch.float64)),))
    assert gradcheck(f_w, (leaf(W0),))


def test_label_propagation_weights_as_given_gradcheck():
    def f(w):
        return LabelPropagation(4, 0.5, clamp=False)(SOFT, EI, MASK, w)
    assert gradcheck(f, (leaf(W0 / 8),))


def test_implicit_equals_unrolled_at_convergence():
    """The fixed point's implicit gradient is the limit of the unrolled one (alpha = 0.5: 0.5^80 ~ 1e-24)."""
    grads = []
    for kw in (dict(num_layers=80), dict(num_layers=None, tol=1e-14, max_iter=5000),
               dict(num_layers=80, backward="implicit", tol=1e-14)):
        y, a, w = leaf(SOFT), leaf(torch.tensor(0.5, dtype=torch.float64)), leaf(W0)
        out = LabelPropagation(alpha=a, clamp=False, normalize=True, **kw)(y, EI, MASK, w)
        (out * torch.linspace(-1, 1, out.numel(), dtype=out.dtype).view_as(out)).sum().backward()
        grads.append([y.grad, a.grad, w.grad])
    for other in grads[1:]:
        for g_ref, g in zip(grads[0], other):
            torch.testing.assert_close(g, g_ref, atol=1e-12, rtol=1e-10)


# ----------------------------------------------------------------------------- STKRPropagation
STKR_CASES = {
    "poly, CG (implicit)": (Polynomial([0.0, 0.5, 0.0, 1.0]), dict(tol=1e-13, max_iter=5000, solver="cg")),
    "poly, GMRES (implicit)": (Polynomial([0.5, 0.0, 1.0]), dict(tol=1e-13, max_iter=5000)),
    "poly, direct": (Polynomial([0.5, 0.0, 1.0]), dict(solver="direct")),
    "poly, 15 steps (unrolled)": (Polynomial([0.0, 0.5, 0.0, 1.0]), dict(num_iter=15)),
    "inv. Laplacian, Q^-1 E by CG": (InverseLaplacian(0.8), dict(tol=1e-13, max_iter=5000)),
    "inv. Laplacian, GMRES on M (implicit)": (InverseLaplacian(0.8), dict(tol=1e-13, max_iter=5000, solver="gmres")),
    "inv. Laplacian, 15 steps (unrolled)": (InverseLaplacian(0.8), dict(num_iter=15)),
    "reciprocal r=2, GMRES on M (implicit)": (ReciprocalPolynomial([1.0, -0.5, 0.1], 2),
                                              dict(tol=1e-13, max_iter=5000, solver="gmres")),
}
PARAM = {Polynomial: "coeffs", InverseLaplacian: "eta", ReciprocalPolynomial: "xi"}


@pytest.mark.parametrize("case", list(STKR_CASES))
def test_stkr_gradcheck(case):
    transform, kw = STKR_CASES[case]
    m = STKRPropagation(transform, 0.3, dtype=torch.float64, flag_unreachable=False, **kw)
    W = stkr_w(HALF)
    y = leaf(SOFT[:, :2])
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # a budget that diverged would test another route
        assert gradcheck(lambda y: m(y, EI_S, MASK, W), (y,), fast_mode=True)
        assert gradcheck(lambda u: m(y.detach(), EI_S, MASK, stkr_w(u)), (leaf(HALF),), fast_mode=True)
        name = PARAM[type(m.transform)]
        for attr in ("beta", name):
            value = getattr(m, attr)

            def f(p, attr=attr):
                setattr(m, attr, p)
                try:
                    return m(y.detach(), EI_S, MASK, W)
                finally:
                    setattr(m, attr, value)
            assert gradcheck(f, (leaf(value),)), attr


def test_stkr_learnable_parameters_train():
    m = STKRPropagation(InverseLaplacian(0.5), 0.3, learnable=True, flag_unreachable=False)
    assert {k for k, _ in m.named_parameters()} == {"beta", "eta"}
    out = m(Y, EI, MASK, W0)
    torch.nn.functional.cross_entropy(out, Y).backward()
    assert m.beta.grad is not None and m.eta.grad is not None and float(m.eta.grad.abs()) > 0


def test_stkr_implicit_equals_unrolled_at_convergence():
    """A converged Richardson budget (unrolled autograd) and the CG solve (implicit) give the same gradients."""
    grads = []
    for kw in (dict(num_iter=400), dict(tol=1e-14, max_iter=5000, solver="cg")):
        y, u, beta = leaf(SOFT), leaf(HALF), leaf(torch.tensor(0.5, dtype=torch.float64))
        m = STKRPropagation(Polynomial([1.0, 1.0]), beta, dtype=torch.float64, flag_unreachable=False, **kw)
        (m(y, EI_S, MASK, stkr_w(u)) ** 2).sum().backward()
        grads.append([y.grad, u.grad, beta.grad])
    for g_ref, g in zip(*grads):
        torch.testing.assert_close(g, g_ref, atol=1e-9, rtol=1e-8)


# ----------------------------------------------------------------------------- against a dense direct computation
def _dense_scores(poly, r, y, u, c, beta):
    """Eq. 7 from dense matrices, differentiated by autograd through ``torch.linalg.solve``."""
    W = torch.zeros(n, n, dtype=torch.float64).index_put((EI_S[1], EI_S[0]), stkr_w(u), accumulate=True)
    d = W.sum(1).rsqrt()
    S = d[:, None] * W * d[None, :]
    I = torch.eye(n, dtype=torch.float64)
    if poly:
        sS = sum(c[p] * torch.linalg.matrix_power(S, p + 1) for p in range(c.numel()))
    else:
        Q = sum(c[p] * torch.linalg.matrix_power(S, p) for p in range(c.numel()))
        sS = torch.linalg.matrix_power(S, r) @ torch.linalg.solve(Q, I)
    idx = MASK.nonzero().flatten()
    A = n * sS[idx][:, idx] + idx.numel() * beta * torch.eye(idx.numel(), dtype=torch.float64)
    return n * sS[:, idx] @ torch.linalg.solve(A, y[idx])


DENSE_CASES = {
    "poly, Algorithm 3": (Polynomial([0.5, 0.0, 1.0]), dict(solver="direct")),
    "poly, CG": (Polynomial([0.0, 0.5, 0.0, 1.0]), dict(solver="cg", tol=1e-13, max_iter=5000)),
    "inv. Laplacian, direct (M^T by Q^-1)": (InverseLaplacian(0.8), dict(solver="direct")),
    "inv. Laplacian, GMRES (M^T)": (InverseLaplacian(0.8), dict(solver="gmres", tol=1e-13, max_iter=5000)),
    "reciprocal r=2, direct": (ReciprocalPolynomial([1.0, -0.5, 0.1], 2), dict(solver="direct")),
    "reciprocal r=2, GMRES (M^T)": (ReciprocalPolynomial([1.0, -0.5, 0.1], 2),
                                    dict(solver="gmres", tol=1e-13, max_iter=5000)),
}


@pytest.mark.parametrize("case", list(DENSE_CASES))
def test_stkr_implicit_gradient_equals_dense_direct(case):
    """The engine's solve and adjoint solve (implicit gradient) against autograd through the dense closed form
    of Eq. 7: gradients in the input scores, the edge weights, ``beta`` and the transform's coefficients."""
    transform, kw = DENSE_CASES[case]
    weights = torch.linspace(-1, 1, n * 2, dtype=torch.float64).view(n, 2)
    grads = []
    for dense in (False, True):
        m = STKRPropagation(transform, 0.3, dtype=torch.float64, flag_unreachable=False, normalization="symmetric", **kw)
        name = PARAM[type(m.transform)]
        y, u, beta, p = leaf(SOFT[:, :2]), leaf(HALF), leaf(m.beta), leaf(getattr(m, name))
        if dense:
            c = p if not isinstance(transform, InverseLaplacian) else torch.stack([torch.ones_like(p), -p])
            out = _dense_scores(isinstance(transform, Polynomial), getattr(transform, "r", 0), y, u, c, beta)
        else:
            m.beta = beta
            setattr(m, name, p)
            out = m(y, EI_S, MASK, stkr_w(u))
        (out * weights).sum().backward()
        grads.append([y.grad, u.grad, beta.grad, p.grad])
    for g, ref in zip(*grads):
        torch.testing.assert_close(g, ref, atol=1e-8, rtol=1e-7)


@pytest.mark.parametrize("keep_labels", [False, True])
def test_label_propagation_implicit_gradient_equals_dense_direct(keep_labels):
    """The fixed point through the engine (its adjoint ``I - alpha P^T D`` for ``keep_labels``, a
    non-symmetric system) against autograd through ``torch.linalg.solve``."""
    grads = []
    for dense in (False, True):
        y, a, w = leaf(SOFT), leaf(torch.tensor(0.7, dtype=torch.float64)), leaf(W0)
        if dense:
            W = torch.zeros(n, n, dtype=torch.float64).index_put((EI[1], EI[0]), w, accumulate=True)
            d = W.sum(1).rsqrt()
            P = d[:, None] * W * d[None, :]
            m = MASK.to(torch.float64)[:, None]
            y0 = y * m
            if keep_labels:
                free = 1 - m
                b = (1 - a) * free * y0 + (1 - free) * y0
                A = torch.eye(n, dtype=torch.float64) - a * free * P
            else:
                b, A = (1 - a) * y0, torch.eye(n, dtype=torch.float64) - a * P
            out = torch.linalg.solve(A, b)
        else:
            out = LabelPropagation(None, a, clamp=False, keep_labels=keep_labels, normalize=True, tol=1e-13,
                                   max_iter=5000)(y, EI, MASK, w)
        (out * torch.linspace(-1, 1, out.numel(), dtype=out.dtype).view_as(out)).sum().backward()
        grads.append([y.grad, a.grad, w.grad])
    for g, ref in zip(*grads):
        torch.testing.assert_close(g, ref, atol=1e-9, rtol=1e-8)
