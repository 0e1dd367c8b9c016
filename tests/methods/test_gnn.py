"""GNN baselines (graphstk.methods.gnn): optimiser set-up and a short training run."""
from __future__ import annotations

import pytest
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


def test_input_dropout_has_dropouts_distribution_on_sparse_inputs():
    """Zeros stay zero, each nonzero is kept with probability 1 - p and scaled by 1 / (1 - p)."""
    from graphstk.methods.gnn import input_dropout

    g = torch.Generator().manual_seed(0)
    x = torch.rand(400, 300, generator=g) * (torch.rand(400, 300, generator=g) < 0.05)
    torch.manual_seed(1)
    out = input_dropout(x, 0.5)
    assert torch.equal(out[x == 0], torch.zeros_like(out[x == 0]))
    kept = out[x != 0] != 0
    assert torch.allclose(out[x != 0][kept], 2 * x[x != 0][kept])
    frac = kept.double().mean().item()                 # ~6000 nonzeros: 0.5 +- 0.02 (3 sd)
    assert abs(frac - 0.5) < 0.02, frac
    assert torch.allclose(out.mean(), x.mean(), rtol=0.05)  # unbiased, as F.dropout
    assert input_dropout(x, 0.5, training=False) is x
    assert torch.equal(input_dropout(x, 1.0), torch.zeros_like(x))


def test_input_dropout_on_dense_inputs_is_f_dropout():
    from graphstk.methods.gnn import input_dropout

    x = torch.rand(50, 20) + 0.1
    torch.manual_seed(3)
    a = input_dropout(x, 0.3)
    torch.manual_seed(3)
    assert torch.equal(a, torch.nn.functional.dropout(x, 0.3, True))
    with pytest.raises(ValueError, match=r"dropout probability must be in \[0, 1\]"):
        input_dropout(x, 1.5)


def test_input_dropout_passes_gradients_to_the_kept_entries():
    from graphstk.methods.gnn import input_dropout

    x = (torch.rand(30, 40, dtype=torch.float64) * (torch.rand(30, 40) < 0.1)).requires_grad_()
    torch.manual_seed(0)
    out = input_dropout(x, 0.5)
    out.sum().backward()
    kept = (out != 0)
    assert torch.equal(x.grad[kept], torch.full_like(x.grad[kept], 2.0))
    assert torch.equal(x.grad[~kept], torch.zeros_like(x.grad[~kept]))
