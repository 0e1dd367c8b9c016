"""Multi-shift CG (Eq. 22 / Example 1 for every eta) against per-shift dense solves."""
import pytest
import torch

from dense_reference import normalized_random_graph
from graphstk.spectral.multishift import multishift_cg, solve_shifted_laplacians


def _graph_S(n=120, p=0.05, seed=0, components=False):
    S = normalized_random_graph(n, p, seed)
    if components:
        S = torch.block_diag(S, normalized_random_graph(30, 0.2, seed + 1), normalized_random_graph(5, 0.9, seed + 2))
    return S


@pytest.mark.parametrize("components", [False, True])
def test_multishift_matches_per_shift_direct_solves(components):
    S = _graph_S(components=components)
    n = S.shape[0]
    b = torch.randn(n, 4, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    b[:, 3] = 0  # a zero right-hand side stays zero
    etas = [0.5, 0.9, 0.99, 0.999, 0.999999]
    xs, res = solve_shifted_laplacians(lambda v: S @ v, b, etas, tol=1e-12, max_iter=2000)
    assert res.converged
    for eta, x in zip(etas, xs):
        ref = torch.linalg.solve(torch.eye(n, dtype=torch.float64) - eta * S, b)
        assert torch.allclose(x, ref, rtol=1e-8, atol=1e-8 * ref.abs().max())
        assert x[:, 3].abs().max() == 0


def test_multishift_cg_general_shifts_and_order():
    S = _graph_S(seed=3)
    n = S.shape[0]
    b = torch.randn(n, 2, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    sigmas = [3.0, 1.05, 1.5]  # the seed (smallest shift) is not first
    res = multishift_cg(lambda v: S @ v, b, sigmas, tol=1e-12)
    for s, x in zip(sigmas, res.x):
        ref = torch.linalg.solve(s * torch.eye(n, dtype=torch.float64) - S, b)
        assert torch.allclose(x, ref, rtol=1e-9, atol=1e-10)


def test_multishift_rejects_an_indefinite_shift():
    S = _graph_S(seed=4)
    b = torch.ones(S.shape[0], 1, dtype=torch.float64)
    with pytest.raises(FloatingPointError, match="positive definite"):
        multishift_cg(lambda v: S @ v, b, [0.5, 2.0], tol=1e-10)
    with pytest.raises(ValueError, match="eta must be > 0"):
        solve_shifted_laplacians(lambda v: S @ v, b, [0.0])
