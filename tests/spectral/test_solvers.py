"""Iterative solvers (graphstk.spectral.solvers): restarted GMRES stops on stagnation."""
from __future__ import annotations

import warnings

import pytest
import torch

from graphstk.exceptions import ConvergenceError
from graphstk.spectral import solvers


def test_gmres_stops_when_restart_cycles_stagnate():
    """A cyclic shift is the classic case where GMRES(m) with m < n makes no progress: the solve to
    tol ends after a few cycles (here with a ConvergenceError: the residual never left 1, no better
    than x = 0) instead of running all of max_iter."""
    n, restart = 200, 10
    P = torch.roll(torch.eye(n, dtype=torch.float64), 1, dims=0)
    b = torch.zeros(n, 1, dtype=torch.float64)
    b[0] = 1.0
    with pytest.raises(ConvergenceError, match="after 30 iterations") as err:
        solvers.gmres(lambda v: P @ v, b, max_iter=5000, tol=1e-8, restart=restart)
    assert err.value.result.n_iter == (solvers.GMRES_STALL_CYCLES + 1) * restart
    with warnings.catch_warnings():           # a fixed budget (tol=0) runs every product
        warnings.simplefilter("ignore")
        assert solvers.gmres(lambda v: P @ v, b, max_iter=100, tol=0.0, restart=restart).n_iter == 100


def test_gmres_still_converges_on_a_well_conditioned_system():
    g = torch.Generator().manual_seed(0)
    A = torch.eye(50, dtype=torch.float64) * 3 + 0.1 * torch.randn(50, 50, generator=g, dtype=torch.float64)
    b = torch.randn(50, 2, generator=g, dtype=torch.float64)
    res = solvers.gmres(lambda v: A @ v, b, max_iter=500, tol=1e-10, restart=5)
    assert res.converged
    torch.testing.assert_close(res.x, torch.linalg.solve(A, b), rtol=1e-8, atol=1e-8)
