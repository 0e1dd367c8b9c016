"""Small random graphs and dense closed forms for the graphstk.nn tests."""
from __future__ import annotations

import torch

N, C = 40, 3


def random_graph(seed: int, n: int = N):
    """A connected undirected random graph (a ring plus random chords) with positive weights:
    ``(edge_index, weights, dense W)``."""
    g = torch.Generator().manual_seed(seed)
    ring = torch.stack([torch.arange(n), (torch.arange(n) + 1) % n])
    extra = torch.randint(0, n, (2, 2 * n), generator=g)
    extra = extra[:, extra[0] != extra[1]]
    ei = torch.cat([ring, extra], 1)
    w = torch.rand(ei.shape[1], generator=g, dtype=torch.float64) + 0.5
    ei, w = torch.cat([ei, ei.flip(0)], 1), torch.cat([w, w])
    W = torch.zeros(n, n, dtype=torch.float64).index_put_((ei[0], ei[1]), w, accumulate=True)
    return ei, w, W


def labels(seed: int, n: int = N, frac: float = 0.3):
    """Labels in ``0..C-1`` (every class present) and a boolean mask of about ``frac n`` nodes."""
    g = torch.Generator().manual_seed(seed + 1)
    y = torch.randint(0, C, (n,), generator=g)
    mask = torch.zeros(n, dtype=torch.bool)
    mask[torch.randperm(n, generator=g)[: int(frac * n)]] = True
    y[:C] = torch.arange(C)
    mask[:C] = True
    return y, mask


def dense_S(W: torch.Tensor) -> torch.Tensor:
    """``D^-1/2 W D^-1/2``."""
    d = W.sum(1).rsqrt()
    return d[:, None] * W * d[None, :]


def spectral(S: torch.Tensor, f) -> torch.Tensor:
    """``f(S)`` by the eigendecomposition of the symmetric ``S``."""
    ev, U = torch.linalg.eigh(S)
    return U @ torch.diag(f(ev)) @ U.T


def stkr_closed_form(sS, mask, Y, beta):
    """Eq. 7 with ``G_{Khat_s} = N s(S)``: ``f = N s(S)[:, n] (N s(S)_nn + n beta I)^{-1} Y``."""
    Nn = sS.shape[0]
    idx = mask.nonzero().flatten() if mask.dtype == torch.bool else mask
    n = idx.numel()
    A = Nn * sS[idx][:, idx] + n * beta * torch.eye(n, dtype=sS.dtype)
    return Nn * sS[:, idx] @ torch.linalg.solve(A, Y)
