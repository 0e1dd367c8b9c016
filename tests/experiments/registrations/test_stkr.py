"""The STKR methods by name (graphstk.experiments.registrations.stkr) against the engine called directly."""
from __future__ import annotations

import torch

from graphstk.experiments.registrations import stkr
from graphstk.experiments.registry import Problem, get_method
from graphstk.methods import grid_keys, predict_grid
from graphstk.operators import GraphKernel


def _graph(n=60, seed=0):
    from torch_geometric.data import Data
    from torch_geometric.utils import to_undirected

    g = torch.Generator().manual_seed(seed)
    ei = to_undirected(torch.randint(0, n, (2, 4 * n), generator=g))
    ei = ei[:, ei[0] != ei[1]]
    y = torch.arange(n) % 3
    return Data(edge_index=ei, y=y, num_nodes=n)


def test_every_label_declares_the_engine_keys_with_one_declaration_each():
    for label, (engine, setting, defaults) in stkr.STKR_METHODS.items():
        e = get_method(label)
        required, optional = grid_keys(engine)
        assert set(required) <= set(e.grid) and set(defaults) == set(e.grid) and e.setting == setting
        for k in (*required, *optional):
            assert e.param(k).low == stkr.PARAMS[k].low and e.param(k).optional == (k in optional)
        assert all(e.grid[k] == stkr.DEFAULT_GRID[k] for k in e.grid)


def test_scores_equal_predict_grid_on_the_kernel_over_the_visible_nodes():
    data = _graph()
    train, val, test = torch.arange(0, 12), torch.arange(12, 24), torch.arange(24, 36)
    y = torch.full((60,), -1)
    y[train] = data.y[train]
    rest = torch.ones(60, dtype=torch.bool)
    rest[torch.cat([train, val, test])] = False
    prob = Problem(X=None, data=data, y=y, labeled=train, unlabeled=torch.nonzero(rest).flatten(), eval=val,
                   num_classes=3, options={"dtype": "float64", "solver": "auto"})
    e = get_method("SP-Lap (i)")
    points = [{**e.fixed, "eta": eta, "beta": b} for eta in (0.9, 0.99) for b in (1.0, 1e-2)]
    got = stkr.stkr_fit_predict(prob, points)
    K = GraphKernel(data.edge_index, 60, hidden=torch.cat([val, test]))
    ref = dict((tuple(p.values()), s) for p, s in predict_grid("stkr-lap", K, y, train, val,
                                                               {"eta": [0.9, 0.99], "beta": [1.0, 1e-2]}, 3,
                                                               solver="auto"))
    for p, s in zip(points, got):
        assert torch.equal(s, ref[(p["eta"], p["beta"])])
    assert stkr.graph_kernel(prob) is stkr.graph_kernel(prob)          # one kernel per (graph, visible set)
