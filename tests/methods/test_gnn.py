"""GNN baselines (graphstk.methods.gnn): optimiser set-up and a short training run."""
from __future__ import annotations

import torch

from graphstk.methods.gnn import MODELS, param_groups, train_gnn


def test_appnp_decays_first_layer_only():
    net = MODELS["APPNP"][0](10, 3)
    groups = param_groups("APPNP", net, 5e-3)
    decayed = {id(q) for g in groups if g["weight_decay"] > 0 for q in g["params"]}
    assert decayed == {id(q) for q in net.l1.parameters()}
    assert {id(q) for g in groups for q in g["params"]} == {id(q) for q in net.parameters()}
    gcn = MODELS["GCN"][0](10, 3)
    assert all(g["weight_decay"] == 5e-3 for g in param_groups("GCN", gcn, 5e-3))


def test_appnp_fits_separable_classes():
    """Two clusters with class-revealing features: APPNP with its published decay must fit them."""
    g = torch.Generator().manual_seed(0)
    n = 60
    y = torch.arange(n) % 2
    x = torch.rand(n, 8, generator=g) * 0.1
    x[y == 0, :4] += 1.0
    x[y == 1, 4:] += 1.0
    same = (y[:, None] == y[None, :]) & (torch.rand(n, n, generator=g) < 0.15)
    ei = (same | same.T).fill_diagonal_(False).nonzero().T
    train = torch.arange(10)
    ev = torch.arange(10, n)
    s = train_gnn("APPNP", x, ei, y, train, ev, seed=0, epochs=150)
    assert float((s.argmax(1) == y[ev]).double().mean()) == 1.0
