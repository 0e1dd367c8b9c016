"""Independent dense computations of the STKR paper's closed forms, for tests only.

Everything here is written directly from the equations with dense matrices and
``torch.linalg`` (no code shared with graphstk's engines), with the small random graphs the
tests check them on.
"""
from __future__ import annotations

import torch


def random_graph(n: int, p: float, seed: int, psd: bool = False, isolated: int = 0):
    """A random undirected graph as (dense W, edge_index, edge_weight).

    ``psd=True`` adds self-loops of weight ``degree + 1`` so that ``W`` (hence ``S``) is
    positive semidefinite, as Prop. 5 assumes. The last ``isolated`` nodes get no edge.
    """
    g = torch.Generator().manual_seed(seed)
    A = (torch.rand(n, n, generator=g) < p).double()
    A = torch.triu(A, 1)
    A = A + A.T
    if isolated:
        A[-isolated:] = 0
        A[:, -isolated:] = 0
    if psd:
        deg = A.sum(1)
        A = A + torch.diag(torch.where(deg > 0, deg + 1, torch.zeros_like(deg)))
    ei = A.nonzero().T
    return A, ei, A[ei[0], ei[1]]


def labeled_graph(seed: int = 0, n: int = 60, p: float = 0.12, num_classes: int = 3):
    """A random graph with labels: ``(Data, train ids, train mask)``.

    Labels are drawn uniformly from ``num_classes`` classes, the first ``num_classes`` nodes
    taking one class each; the training nodes are 0, 1, 2, 5, 9, 14, 20 and 27.
    """
    from torch_geometric.data import Data

    _, ei, _ = random_graph(n, p, seed)
    y = torch.randint(0, num_classes, (n,), generator=torch.Generator().manual_seed(seed + 7))
    y[:num_classes] = torch.arange(num_classes)
    train = torch.tensor([0, 1, 2, 5, 9, 14, 20, 27])
    mask = torch.zeros(n, dtype=torch.bool)
    mask[train] = True
    return Data(edge_index=ei, y=y, num_nodes=n), train, mask


def normalized(W: torch.Tensor) -> torch.Tensor:
    d = W.sum(1)
    dis = torch.where(d > 0, d.clamp_min(1e-300).rsqrt(), torch.zeros_like(d))
    return dis[:, None] * W * dis[None, :]


def normalized_random_graph(n: int, p: float, seed: int) -> torch.Tensor:
    """``normalized(W)`` of ``random_graph(n, p, seed)``: the dense S of one random graph."""
    return normalized(random_graph(n, p, seed)[0])


def visible_kernel(W: torch.Tensor, hidden: list[int]):
    """(S on visible nodes, visible ids, out-of-sample row function) per Eq. 23."""
    n = W.shape[0]
    vis = torch.tensor([i for i in range(n) if i not in set(hidden)])
    Wv = W[vis][:, vis]
    S = normalized(Wv)
    dv = Wv.sum(1)

    def rows(nodes: list[int]) -> torch.Tensor:
        R = torch.zeros(len(nodes), len(vis), dtype=W.dtype)
        for i, x in enumerate(nodes):
            if x in set(hidden):
                w = W[x, vis]
                dx = w.sum()
                if dx > 0:
                    R[i] = torch.where(dv > 0, w / torch.sqrt(dx * dv.clamp_min(1e-300)), torch.zeros_like(w))
            else:
                R[i] = S[(vis == x).nonzero()[0, 0]]
        return R

    return S, vis, rows


def stkr_scores(S, train_local, Y, s_of_S, beta, R, pred_matrix):
    """Eq. 7: alpha = (N s(S)_nn + n beta I)^-1 Y; scores = N R pred_matrix E alpha."""
    N, n = S.shape[0], len(train_local)
    E = torch.zeros(N, n, dtype=S.dtype)
    E[train_local, torch.arange(n)] = 1.0
    A = N * E.T @ s_of_S @ E + n * beta * torch.eye(n, dtype=S.dtype)
    alpha = torch.linalg.solve(A, Y)
    return N * R @ pred_matrix @ E @ alpha


#: a 12-node ring with three classes and six training nodes: the contract tests' small graph
RING_N = 12
_RING = torch.stack([torch.arange(RING_N), (torch.arange(RING_N) + 1) % RING_N])
RING_EDGES = torch.cat([_RING, _RING.flip(0)], 1)
RING_LABELS = torch.arange(RING_N) % 3
RING_TRAIN = torch.arange(6)


def ring_graph(**kw):
    """The ring as a PyG ``Data`` (``edge_index``, ``num_nodes``, ``y``); ``kw`` replaces or adds fields,
    ``None`` drops one."""
    from torch_geometric.data import Data

    fields = dict(edge_index=RING_EDGES, num_nodes=RING_N, y=RING_LABELS)
    fields.update(kw)
    return Data(**{k: v for k, v in fields.items() if v is not None})
