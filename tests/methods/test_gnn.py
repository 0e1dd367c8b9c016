"""GNN baselines (graphstk.methods.gnn): published presets, layers against PyG's, the sparse feature
product and its gradient, dropout (F.dropout's draws, and on the nonzero entries), early stopping, and short
training runs."""
from __future__ import annotations

import pytest
import torch

from graphstk.methods.gnn import (MODELS, PRESETS, Features, _InputProjection, _Model, dropout, gcn_adjacency,
                                  gnn_setting, param_groups, symmetric_product, train_gnn)


def _toy(n=60, seed=0):
    """Two clusters with class-revealing features."""
    g = torch.Generator().manual_seed(seed)
    y = torch.arange(n) % 2
    x = torch.rand(n, 8, generator=g) * 0.1
    x[y == 0, :4] += 1.0
    x[y == 1, 4:] += 1.0
    same = (y[:, None] == y[None, :]) & (torch.rand(n, n, generator=g) < 0.15)
    ei = (same | same.T).fill_diagonal_(False).nonzero().T
    return x, ei, y


def test_published_presets_are_pinned():
    """Kipf & Welling (Planetoid) and Shchur et al. (Amazon / Coauthor) settings, key by key."""
    assert gnn_setting("GCN") == dict(features="sum", lr=0.01, weight_decay=5e-4, dropout=0.5, hidden=16, epochs=200,
                                      patience=None)
    assert gnn_setting("GCN", "shchur") == dict(features="none", lr=0.01, weight_decay=1e-3, dropout=0.8, hidden=64,
                                                epochs=1000, patience=50)
    assert gnn_setting("GAT") == dict(features="sum", lr=0.005, weight_decay=5e-4, dropout=0.6, hidden=64, epochs=200,
                                      patience=None, att_dropout=0.6, heads=8)
    assert gnn_setting("GAT", "shchur") == dict(features="none", lr=0.01, weight_decay=1e-2, dropout=0.6, hidden=64,
                                                epochs=1000, patience=50, att_dropout=0.3, heads=8)
    assert gnn_setting("APPNP") == dict(features="sum", lr=0.01, weight_decay=5e-3, dropout=0.5, hidden=64, epochs=300,
                                        patience=None, K=10, alpha=0.1)
    assert gnn_setting("APPNP", "shchur") == dict(features="none", lr=0.01, weight_decay=5e-3, dropout=0.5, hidden=64,
                                                  epochs=1000, patience=100, K=10, alpha=0.1)
    assert gnn_setting("MLP") == gnn_setting("MLP+C&S") == dict(features="sum", lr=0.01, weight_decay=5e-4,
                                                                dropout=0.5, hidden=64, epochs=200, patience=None)
    assert gnn_setting("MLP", "shchur") == gnn_setting("MLP+C&S", "shchur") == dict(
        features="none", lr=0.005, weight_decay=1e-2, dropout=0.8, hidden=64, epochs=1000, patience=50)
    assert set(PRESETS) == set(MODELS)


def test_overrides_and_bad_names():
    assert gnn_setting("GCN", "shchur", weight_decay=0.0, hidden=None)["weight_decay"] == 0.0
    assert gnn_setting("GCN", "shchur", hidden=None)["hidden"] == 64
    with pytest.raises(ValueError, match="unknown preset 'kipf'.*kipf-welling, shchur"):
        gnn_setting("GCN", "kipf")
    with pytest.raises(ValueError, match="no hyperparameter 'heads'"):
        gnn_setting("GCN", heads=2)
    for p in (1.0, 1.5, -0.1):
        with pytest.raises(ValueError, match=rf"dropout is the probability .* lies in \[0, 1\); got {p}"):
            gnn_setting("MLP", "shchur", dropout=p)
    with pytest.raises(ValueError, match="features must be 'sum'"):
        gnn_setting("GCN", features="l2")


def test_gcn_layers_equal_pyg_gcnconv():
    """Our two layers, with GCNConv's weights copied in, give GCNConv's output (eval mode)."""
    from torch_geometric.nn import GCNConv

    x, ei, _ = _toy()
    net = MODELS["GCN"](8, 2, hidden=5, dropout=0.5).eval()
    c1, c2 = GCNConv(8, 5), GCNConv(5, 2)
    with torch.no_grad():
        c1.lin.weight.copy_(net.l1.weight.T), c2.lin.weight.copy_(net.l2.weight.T)
        c1.bias.copy_(torch.randn(5)), c2.bias.copy_(torch.randn(2))
        net.b1.copy_(c1.bias), net.b2.copy_(c2.bias)
    want = c2(torch.relu(c1(x, ei)), ei)
    got = net(Features(x, "none"), gcn_adjacency(ei, x.shape[0]))
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("density", [0.05, 0.6])
def test_gat_equals_pyg_gatconv_bit_for_bit(density):
    """Our GAT against two plain GATConv layers built from the same seed: output and every gradient equal bit for
    bit (sparse features: the first projection's contiguous transposed weight; dense: F.linear)."""
    from torch_geometric.nn import GATConv

    _, ei, _ = _toy(n=80)
    g = torch.Generator().manual_seed(3)
    x = torch.rand(80, 300, generator=g) * (torch.rand(80, 300, generator=g) < density)
    f = Features(x, "sum")
    assert f.sparse == (density < 0.25)
    torch.manual_seed(0)
    net = MODELS["GAT"](300, 3, hidden=16, dropout=0.0, heads=4, att_dropout=0.0)
    assert isinstance(net.l1.lin, _InputProjection)
    assert [k for k, _ in net.named_parameters()].count("l1.lin.weight") == 1
    torch.manual_seed(0)
    c1, c2 = GATConv(300, 4, heads=4, dropout=0.0), GATConv(16, 3, heads=1, concat=False, dropout=0.0)
    got = net(f, ei)
    want = c2(torch.nn.functional.elu(c1(f.as_tensor(f.dropped(0.0, False)), ei)), ei)
    assert torch.equal(got, want)
    grads = torch.autograd.grad(got.square().sum(), [net.l1.lin.weight, net.l1.att_src, net.c2.lin.weight])
    wants = torch.autograd.grad(want.square().sum(), [c1.lin.weight, c1.att_src, c2.lin.weight])
    assert all(torch.equal(a, b) for a, b in zip(grads, wants))


def test_appnp_propagation_equals_pyg_appnp():
    from torch_geometric.nn import APPNP

    x, ei, _ = _toy()
    torch.manual_seed(0)
    net = MODELS["APPNP"](8, 2, hidden=6, dropout=0.5, K=10, alpha=0.1).eval()
    f = Features(x, "sum")
    H = super(type(net), net).forward(f)
    torch.testing.assert_close(net(f, gcn_adjacency(ei, x.shape[0])), APPNP(K=10, alpha=0.1)(H, ei),
                               rtol=1e-5, atol=1e-5)


def test_symmetric_product_gradient_is_the_dense_transpose_product():
    """``symmetric_product``'s gradient (``S G``) against autograd through the dense ``S`` and ``gradcheck``;
    GCN's adjacency is symmetric, which the shortcut needs."""
    _, ei, _ = _toy()
    S = gcn_adjacency(ei, 60)
    D = S.to_dense()
    torch.testing.assert_close(D, D.T, rtol=0, atol=0)
    Sd = S.to(torch.float64)
    Z = torch.randn(60, 3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda z: symmetric_product(Sd, z), (Z,))
    G = torch.randn(60, 3, dtype=torch.float64)
    (symmetric_product(Sd, Z) * G).sum().backward()
    torch.testing.assert_close(Z.grad, D.double().T @ G)


@pytest.mark.parametrize("density", [0.05, 0.6])
def test_feature_product_and_gradient_match_dense(density):
    g = torch.Generator().manual_seed(1)
    X = torch.rand(40, 30, generator=g, dtype=torch.float64) * (torch.rand(40, 30, generator=g) < density)
    f = Features(X, "sum")
    assert f.sparse == (density < 0.25)
    Xs = (X / X.sum(1, keepdim=True).clamp_min(1e-12)).float()
    W = torch.randn(30, 4, requires_grad=True)
    G = torch.randn(40, 4)
    v = f.dropped(0.0, False)
    (f.matmul(v, W) * G).sum().backward()
    torch.testing.assert_close(f.matmul(v, W).detach(), Xs @ W.detach())
    torch.testing.assert_close(W.grad, Xs.T @ G, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("density", [0.05, 0.6])
def test_features_without_dropout_are_built_once_and_products_agree_with_and_without_gradient(density):
    g = torch.Generator().manual_seed(2)
    X = torch.rand(40, 30, generator=g, dtype=torch.float64) * (torch.rand(40, 30, generator=g) < density)
    f = Features(X, "none")
    v = f.dropped(0.5, False)
    assert f.dropped(0.5, False) is v and f.dropped(0.0, True) is v      # no dropout: the same tensor
    torch.manual_seed(0)
    assert f.dropped(0.5, True) is not v
    torch.testing.assert_close(f.as_tensor(v).to_dense().double(), X)
    W = torch.randn(30, 4, requires_grad=True)
    with torch.no_grad():
        plain = f.matmul(v, W)                                              # no transpose formed
    assert torch.equal(plain, f.matmul(v, W).detach())


@pytest.mark.parametrize("density", [0.05, 0.2, 0.6])
def test_feature_rows_keep_the_form_and_the_mlp_gives_the_rows_of_its_whole_output(density):
    """``Features.rows`` keeps the whole matrix's form (CSR or dense, even where the rows alone are denser or sparser
    than the threshold) and its values; an MLP in evaluation on those rows gives the rows of its whole output bit
    for bit, the validation pass ``train_gnn`` runs for the graph-free models."""
    g = torch.Generator().manual_seed(5)
    X = torch.rand(300, 200, generator=g, dtype=torch.float64) * (torch.rand(300, 200, generator=g) < density)
    X[:40] = X[:40] * (torch.rand(40, 200, generator=g) < 0.2) if density > 0.25 else X[:40] + (X[:40] == 0) * 0.1
    f = Features(X, "sum")
    idx = torch.tensor([7, 250, 3, 0, 39, 21, 7])
    sub = f.rows(idx)
    assert sub.sparse == f.sparse and sub.shape == (7, 200)
    whole = f.as_tensor(f.dropped(0.0, False))
    assert torch.equal(sub.as_tensor(sub.dropped(0.0, False)).to_dense(), whole.to_dense()[idx])
    torch.manual_seed(0)
    net = MODELS["MLP"](200, 3, hidden=16, dropout=0.5).eval()
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)         # one thread: the dense products compute each row alike
        with torch.no_grad():
            assert torch.equal(net(sub), net(f)[idx])
    finally:
        torch.set_num_threads(threads)


@pytest.mark.parametrize("model", ["GAT", "MLP", "GCN", "APPNP"])
@pytest.mark.parametrize("density", [0.05, 0.6])
def test_rows_pass_gives_the_rows_of_the_whole_pass_bit_for_bit(model, density):
    """The validation pass of every epoch, ``rows_pass``, against the rows of the whole evaluation pass: GAT from
    the rows' two-hop in-neighbourhood (a graph with self-loops, an isolated row and a repeated edge), the MLP from
    the rows alone, the others whole; sparse and dense features. Bit for bit with one thread; with more, a dense
    product may split a few rows to another kernel, so the numbers agree to rounding. GAT's pass refuses training
    mode."""
    x, ei, _ = _toy(n=90)
    g = torch.Generator().manual_seed(6)
    x = torch.rand(90, 40, generator=g) * (torch.rand(90, 40, generator=g) < density)
    ei = ei[:, (ei[0] != 5) & (ei[1] != 5)]                               # node 5 isolated
    ei = torch.cat([ei, torch.tensor([[3, 7, 7], [3, 7, 1]]), ei[:, :4]], 1)  # self-loops, repeated edges
    f = Features(x, "sum")
    torch.manual_seed(0)
    net = MODELS[model](40, 3, hidden=16, dropout=0.5).eval()
    graph = {"adjacency": gcn_adjacency(ei, 90), "edge_index": ei, None: None}[net.graph]
    rows = torch.tensor([7, 5, 60, 3, 1, 88, 7])                          # a repeated row
    mask = torch.zeros(90, dtype=torch.bool)
    mask[rows] = True
    threads = torch.get_num_threads()
    try:
        with torch.no_grad():
            torch.testing.assert_close(net.rows_pass(f, graph, rows)(), net(f, graph)[rows], rtol=1e-6, atol=0)
            torch.set_num_threads(1)     # one thread: every dense product computes each row alike
            assert torch.equal(net.rows_pass(f, graph, rows)(), net(f, graph)[rows])
            assert torch.equal(net.rows_pass(f, graph, mask)(), net(f, graph)[mask])
    finally:
        torch.set_num_threads(threads)
    if model == "GAT":
        with pytest.raises(RuntimeError, match="evaluation pass"):
            net.train().rows_pass(f, graph, rows)()


def test_feature_dropout_keeps_zeros_and_scales_the_kept_entries():
    g = torch.Generator().manual_seed(0)
    X = torch.rand(400, 300, generator=g) * (torch.rand(400, 300, generator=g) < 0.05)
    f = Features(X, "none")
    torch.manual_seed(1)
    v = f.dropped(0.5, True)
    out = f.as_tensor(v).to_dense()
    assert torch.equal(out[X == 0], torch.zeros_like(out[X == 0]))
    kept = out[X != 0] != 0
    torch.testing.assert_close(out[X != 0][kept], 2 * X[X != 0][kept])
    frac = kept.double().mean().item()                 # ~6000 nonzeros: 0.5 +- 0.02 (3 sd)
    assert abs(frac - 0.5) < 0.02, frac
    torch.testing.assert_close(f.as_tensor(f.dropped(0.5, False)).to_dense(), X)


def _portable_bernoulli() -> bool:
    """Whether torch's CPU ``bernoulli_`` draws one double per entry from the default generator (its portable path;
    an Intel CPU with MKL draws through MKL instead)."""
    torch.manual_seed(0)
    a = torch.empty(1000).bernoulli_(0.3)
    torch.manual_seed(0)
    return torch.equal(a, (torch.rand(1000, dtype=torch.float64) < 0.3).float())


@pytest.mark.parametrize("p", [0.3, 0.5, 0.6, 0.8])
def test_dropout_is_f_dropout_bit_for_bit(p):
    """Output, gradient and the generator's state after the draw equal ``F.dropout``'s on the CPU."""
    if not _portable_bernoulli():
        pytest.skip("torch's CPU bernoulli draws through MKL here, so F.dropout's draws are MKL's")
    import torch.nn.functional as F

    x = torch.randn(257, 33)
    outs = []
    for fn in (F.dropout, dropout):
        xi = x.clone().requires_grad_()
        torch.manual_seed(7)
        out = fn(xi, p, True)
        (out * torch.arange(out.numel()).view_as(out)).sum().backward()
        outs.append((out.detach(), xi.grad, torch.rand(4)))
    for a, b in zip(*outs):
        assert torch.equal(a, b)


def test_dropout_distribution_and_edge_cases():
    g = torch.Generator().manual_seed(0)
    x = torch.rand(200, 100, generator=g) + 0.5
    torch.manual_seed(3)
    out = dropout(x, 0.8, True)
    kept = out != 0
    torch.testing.assert_close(out[kept], x[kept] / 0.2)
    assert abs(kept.double().mean().item() - 0.2) < 0.012         # 20000 entries: 0.2 +- 0.009 (3 sd)
    assert dropout(x, 0.8, False) is x and dropout(x, 0.0, True) is x
    assert torch.equal(dropout(x, 1.0, True), torch.zeros_like(x))
    for p in (-0.1, 1.5):
        with pytest.raises(ValueError, match="between 0 and 1"):
            dropout(x, p, True)


def test_first_layer_decay_for_gcn_and_appnp_only():
    for name in ("GCN", "APPNP"):
        net = MODELS[name](10, 3)
        groups = param_groups(name, net, 5e-3)
        decayed = {id(q) for g in groups if g["weight_decay"] > 0 for q in g["params"]}
        assert decayed == {id(q) for q in net.l1.parameters()}
        assert {id(q) for g in groups for q in g["params"]} == {id(q) for q in net.parameters()}
    gat = MODELS["GAT"](10, 3)
    assert all(g["weight_decay"] == 5e-3 for g in param_groups("GAT", gat, 5e-3))


@pytest.mark.parametrize("model", ["GCN", "APPNP", "GAT", "MLP", "MLP+C&S"])
def test_models_fit_separable_classes(model):
    x, ei, y = _toy()
    train, ev = torch.arange(10), torch.arange(10, 60)
    s = train_gnn(model, x, ei, y, train, ev, seed=0, epochs=150)
    assert float((s.argmax(1) == y[ev]).double().mean()) == 1.0


def test_early_stopping_returns_the_epoch_of_lowest_validation_loss():
    """With patience, the result is the model of the best validation epoch: rerunning without patience
    for exactly that many epochs gives the same scores."""
    import torch.nn.functional as F

    x, ei, y = _toy(seed=3)
    train, val, ev = torch.arange(6), torch.arange(6, 20), torch.arange(20, 60)
    losses = []
    for e in range(1, 41):
        s = train_gnn("GCN", x, ei, y, train, val, seed=0, epochs=e, lr=0.05)
        losses.append(float(F.nll_loss(s.float(), y[val])))
    stopped = train_gnn("GCN", x, ei, y, train, ev, seed=0, val=val, y_val=y[val], epochs=40, patience=40, lr=0.05)
    best = 1 + min(range(40), key=losses.__getitem__)
    torch.testing.assert_close(stopped, train_gnn("GCN", x, ei, y, train, ev, seed=0, epochs=best, lr=0.05))


@pytest.mark.parametrize("model", ["GAT", "MLP"])
def test_early_stopping_through_the_rows_pass_keeps_the_whole_pass_epochs(model, monkeypatch):
    """train_gnn with patience on GAT and the MLP, whose validation pass reads part of the graph, gives the scores
    of the same training with the whole pass (the base class's ``rows_pass``), one thread, bit for bit; the
    validation losses of the two passes are recorded and equal."""
    x, ei, y = _toy(seed=4)
    train, val, ev = torch.arange(8), torch.arange(8, 24), torch.arange(24, 60)
    kw = dict(seed=1, val=val, y_val=y[val], epochs=120, patience=2, lr=0.05, dropout=0.5)
    cls = MODELS[model]
    seen: dict[str, list] = {"rows": [], "whole": []}

    def recording(pass_of, key):
        def rows_pass(self, feats, graph, rows):
            run = pass_of(self, feats, graph, rows)
            return lambda: seen[key].append(run()) or seen[key][-1]
        return rows_pass
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        monkeypatch.setattr(cls, "rows_pass", recording(cls.rows_pass, "rows"))
        ours = train_gnn(model, x, ei, y, train, ev, **kw)
        monkeypatch.setattr(cls, "rows_pass", recording(_Model.rows_pass, "whole"))
        whole = train_gnn(model, x, ei, y, train, ev, **kw)
    finally:
        torch.set_num_threads(threads)
    assert 0 < len(seen["rows"]) == len(seen["whole"]) < 120     # stopped early, after the same epochs
    assert all(torch.equal(a, b) for a, b in zip(seen["rows"], seen["whole"]))
    assert torch.equal(ours, whole)


def test_gnn_registrations_default_to_the_planetoid_setting_and_declare_every_hyperparameter():
    import graphstk.experiments.registrations  # noqa: F401  (registers the methods)
    from graphstk.experiments.registry import get_method
    from graphstk.methods.gnn import DEFAULT_PRESET

    for name in ("GCN", "GAT", "APPNP", "MLP", "MLP+C&S"):
        e = get_method(name)
        assert e.fixed == {"model": name, "preset": DEFAULT_PRESET} and DEFAULT_PRESET == "kipf-welling"
        assert e.options == ("preset",)
        assert {"features", "weight_decay", "lr", "dropout", "hidden", "epochs", "patience"} <= set(e.gridable)
        assert set(e.param("preset").choices) == set(PRESETS[name])
