"""Graphs and engine calls shared by the multi-process workers and the single-process references."""
from __future__ import annotations

import torch
from torch_geometric.data import Data

from graphstk.experiments.registry import MethodInput, get_method, grid_points
from graphstk.methods.engine import solve
from graphstk.methods.grid import lp_scores
from graphstk.methods.problem import make_problem
from graphstk.spectral.transforms import InverseLaplacian, LabelPropagationFilter, Polynomial


def lpf(etas):
    """Label-Prop's filters for the ``eta`` values ``etas``."""
    return [LabelPropagationFilter(e) for e in etas]

C = 3


def random_graph(n: int = 240, m: int = 720, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    ei = torch.randint(0, n, (2, m), generator=g)
    ei = ei[:, ei[0] != ei[1]]
    ei = torch.unique(torch.cat([ei, ei.flip(0)], 1), dim=1)
    return ei, n


def components_graph():
    """Three components (a path, a cycle, a clique), five isolated nodes, and nodes
    numbered so that every component spreads over several processes' ranges."""
    parts = [torch.stack([torch.arange(0, 39), torch.arange(1, 40)]),
             torch.stack([torch.arange(40, 70), torch.arange(41, 71) % 31 + 40]),
             torch.combinations(torch.arange(71, 81)).T]
    ei = torch.cat(parts, 1)
    n = 86                                       # 81 .. 85 isolated
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(1))
    ei = perm[ei]
    return torch.unique(torch.cat([ei, ei.flip(0)], 1), dim=1), n


def labels_and_split(n: int, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, C, (n,), generator=g)
    order = torch.randperm(n, generator=g)
    train, hidden = order[: min(max(n // 8, C), 40)], order[-max(n // 6, 2):]   # few labels: small direct solves
    return y, train, hidden


ENGINES = ("lp-T", "lp-cg", "lp-multishift", "lp-direct", "poly-T", "poly-cg", "poly-direct", "lap-T", "lap-cg",
           "lap-gmres", "lap-auto")
FLOAT32 = ("lp-T", "poly-T", "lap-T")


def run_engine(kernel, name: str, y, train, num_classes: int = C):
    """Scores of every node of the graph (in node order) for one engine call (on any kernel; a
    partitioned kernel's points are mapped through its ``order`` / ``position``, and its problem
    brings the reductions over the partition to the solvers)."""
    n = kernel.shape[0]
    pos = getattr(kernel, "position", torch.arange(n))
    order = getattr(kernel, "order", torch.arange(n))
    prob = make_problem(kernel, y[order], pos[train], num_classes)
    if name == "lp-T":
        h = solve(prob, lpf([0.9, 0.5]), budgets=[5, 20]).points[1].h   # (eta 0.9, T 5), (0.9, 20), ...
    elif name == "lp-cg":
        h = solve(prob, lpf([0.9]), solver="cg", tol=1e-12).points[0].h
    elif name == "lp-multishift":
        h = solve(prob, lpf([0.9, 0.5]), solver="cg", tol=1e-12).points[1].h
    elif name == "lp-direct":   # sparse LU of the gathered matrix on every process
        h = solve(prob, lpf([0.9]), solver="direct").points[0].h
    elif name == "poly-T":
        h = solve(prob, [Polynomial.monomial(2)], [1.0, 1e-3], budgets=[8]).points[1].h
    elif name == "poly-cg":
        h = solve(prob, [Polynomial.monomial(2)], [1e-2], solver="cg", tol=1e-12).points[0].h
    elif name == "poly-direct":
        h = solve(prob, [Polynomial.monomial(2)], [1e-2], solver="direct").points[0].h
    elif name == "lap-T":
        h = solve(prob, [InverseLaplacian(0.9)], [1.0], budgets=[10]).points[0].h
    elif name == "lap-cg":
        h = solve(prob, [InverseLaplacian(0.9)], [1.0], solver="cg").points[0].h
    elif name == "lap-gmres":
        h = solve(prob, [InverseLaplacian(0.9)], [1.0], solver="gmres", max_iter=15,
                              tol=0.0).points[0].h   # a fixed count short of convergence: GMRES stalls on
        # some of these graphs, and Arnoldi steps past convergence multiply rounding noise
    elif name == "lap-auto":    # small graphs: the n x n system with Q^-1 E by sparse LU
        h = solve(prob, [InverseLaplacian(0.9)], [1.0]).points[0].h
    else:
        raise ValueError(name)
    every = pos                 # the point of node 0, 1, ...: scores in node order
    if name.startswith("lp"):   # Yhat on visible nodes, one step of Eq. 22 for hidden ones
        return lp_scores(prob, h, 0.5 if name == "lp-multishift" else 0.9, every)
    return prob.rows(every) @ h


GRIDS = {   # the runner's STKR methods by name, with and without a budget T
    "lp": ("LP (t)", {"eta": [0.9, 0.5], "T": [4, 16]}),
    "lp-tol": ("LP (t)", {"eta": [0.9, 0.5]}),
    "stkr-lap": ("SP-Lap (t)", {"eta": [0.9], "beta": [1.0, 1e-3], "T": [8]}),
    "stkr-lap-tol": ("SP-Lap (i)", {"eta": [0.9, 0.99], "beta": [1.0]}),
    "stkr-poly": ("SP-poly (i)", {"k": [2], "beta": [1.0, 1e-3]}),
    "stkr-topd": ("SP-topd (i)", {"d": [8], "beta": [1.0]}),
    "krr": ("KRR (i)", {"beta": [1.0], "T": [8]}),
}


def run_grid(kernels, name: str, edge_index, y, train, hidden, num_nodes: int, data=None,
             settings=("transductive", "inductive")):
    """Scores of every grid point stacked (``[points, len(eval), C]``), transductive and inductive,
    from the runner's registered method with its kernels from ``kernels`` (a KernelCache: the
    single-process factory, or the partitioned one of ``run.py --distributed``)."""
    label, grid = GRIDS[name]
    entry = get_method(label)
    data = Data(edge_index=edge_index, num_nodes=num_nodes) if data is None else data
    eq23 = {"normalization": "symmetric"} if "normalization" in entry.fixed else {}   # the stored parts' kernel
    points = [{**entry.fixed, **eq23, **p} for p in grid_points(grid)]
    out = {}
    rest = torch.ones(num_nodes, dtype=torch.bool)
    rest[train] = False
    y_in = torch.full((num_nodes,), -1, dtype=torch.long)
    y_in[train] = y[train]
    for setting, hid in (("transductive", None), ("inductive", hidden)):
        if setting not in settings:
            continue
        seen = rest.clone()
        if hid is not None:
            seen[hid] = False
        prob = MethodInput(X=None, data=data, y=y_in, labeled=train, unlabeled=seen.nonzero().flatten(),
                       eval=rest.nonzero().flatten(), num_classes=C, options={"dtype": "float64"}, kernels=kernels)
        out[setting] = torch.stack(entry.fit_predict(prob, points))
    return out
