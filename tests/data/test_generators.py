"""The Fredholm paper's toy generators (graphstk.data.generators)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from graphstk.data import load_vector_dataset, make_circle, make_two_lines


# --------------------------------------------------------------------------- generators
@pytest.mark.parametrize("make", [make_two_lines, make_circle])
def test_generators_are_deterministic(make):
    a, b, c = make(300, seed=3), make(300, seed=3), make(300, seed=4)
    assert torch.equal(a.X, b.X) and torch.equal(a.y, b.y)
    assert not torch.equal(a.X, c.X)
    assert a.X.shape == (300, 100) and a.X.dtype == torch.float64 and a.classes == [0, 1]


def test_two_lines_structure():
    clean = make_two_lines(101, noise=0.0, dim=5, seed=1)
    X = clean.X
    assert float(X[:, 0].abs().max()) <= 1.0
    assert sorted(set(X[:, 1].tolist())) == [-1.0, 1.0] and int((X[:, 1] > 0).sum()) == 51
    assert float(X[:, 2:].abs().max()) == 0.0
    assert torch.equal(clean.y, (X[:, 0] >= 0).long())
    noisy = make_two_lines(4000, noise=0.3, seed=2)
    assert abs(float(noisy.X[:, 2:].std()) - 0.3) < 0.005
    assert torch.equal(noisy.y, (noisy.X[:, 0] >= 0).long())       # x1 carries no noise


def test_circle_structure():
    clean = make_circle(200, noise=0.0, dim=3, seed=0)
    np.testing.assert_allclose(clean.X[:, :2].norm(dim=1).numpy(), 1.0, rtol=1e-12)
    noisy = make_circle(4000, noise=0.1, seed=5)
    X = noisy.X
    quad13 = ((X[:, 0] >= 0) & (X[:, 1] >= 0)) | ((X[:, 0] < 0) & (X[:, 1] < 0))
    assert torch.equal(noisy.y, quad13.long())
    assert abs(float(X[:, 2:].std()) - 0.1) < 0.002
    assert abs(float(X[:, :2].norm(dim=1).mean()) - 1.0) < 0.02


def test_generators_by_name_and_bad_arguments():
    a = load_vector_dataset("two-lines", n=50, noise=0.1, seed=7)
    assert torch.equal(a.X, make_two_lines(50, noise=0.1, seed=7).X)
    assert torch.equal(load_vector_dataset("Circle", n=20).X, make_circle(20).X)
    with pytest.raises(TypeError, match="give the number of points"):
        load_vector_dataset("Circle")
    with pytest.raises(ValueError, match="dim must be an integer >= 2"):
        make_circle(10, dim=1)
    with pytest.raises(ValueError, match="noise must be"):
        make_two_lines(10, noise=-0.1)


# ---------------------------------------------------------------------------
# make_dcsbm: the labelled large-graph generator
# ---------------------------------------------------------------------------
from graphstk.data import dcsbm_edges, make_dcsbm  # noqa: E402


def _dcsbm(**kw):
    args = dict(num_nodes=20000, num_edges=100000, num_classes=5, homophily=0.7, seed=3)
    args.update(kw)
    return make_dcsbm(**args)


def test_dcsbm_is_a_simple_undirected_labelled_graph():
    d = _dcsbm(num_features=8)
    N, ei = d.num_nodes, d.edge_index
    assert N == 20000 and d.y.shape == (N,) and d.y.dtype == torch.long
    assert int(d.y.min()) >= 0 and int(d.y.max()) == 4
    E = ei.shape[1] // 2
    assert ei.shape[1] == 2 * E and 0.95 * 100000 <= E <= 100000     # self-loops and repeats dropped
    assert bool((ei[0] != ei[1]).all())
    assert torch.equal(ei[:, E:], ei[:, :E].flip(0))                   # both directions
    key = ei[0, :E] * N + ei[1, :E]
    assert bool((ei[0, :E] < ei[1, :E]).all()) and torch.unique(key).numel() == E
    assert d.x.shape == (N, 8) and d.x.dtype == torch.float32


def test_dcsbm_homophily_is_close_to_the_parameter():
    for h in (0.2, 0.9):
        d = _dcsbm(homophily=h)
        ei = d.edge_index
        assert abs(float((d.y[ei[0]] == d.y[ei[1]]).double().mean()) - h) < 0.01


def test_dcsbm_degrees_are_heavy_tailed():
    d = _dcsbm(num_nodes=50000, num_edges=250000, exponent=2.5)
    deg = torch.bincount(d.edge_index[0], minlength=d.num_nodes).double()
    mean = float(deg.mean())
    # a Poisson (Erdos-Renyi) graph of this mean (~10) has no node above 4x its mean among 5e4;
    # a power law with tail exponent 1.5 has a fraction of ~4^-1.5 / ... of them, and a maximum far above
    assert float(deg.max()) > 20 * mean
    assert float((deg > 4 * mean).double().mean()) > 0.005
    assert float(deg.median()) < mean                                   # right-skewed
    flat = _dcsbm(num_nodes=50000, num_edges=250000, exponent=50.0)
    fdeg = torch.bincount(flat.edge_index[0], minlength=flat.num_nodes).double()
    assert float(fdeg.max()) < 4 * float(fdeg.mean())                  # a thin tail for a large exponent


def test_dcsbm_is_deterministic_under_its_seed():
    a, b, c = _dcsbm(num_features=4), _dcsbm(num_features=4), _dcsbm(num_features=4, seed=4)
    assert torch.equal(a.edge_index, b.edge_index) and torch.equal(a.y, b.y) and torch.equal(a.x, b.x)
    assert not torch.equal(a.y, c.y)
    # features come from a stream of their own: asking for them does not change the graph
    assert torch.equal(_dcsbm().edge_index, a.edge_index)


def test_dcsbm_features_carry_the_class():
    d = _dcsbm(num_features=16, feature_signal=2.0)
    means = torch.stack([d.x[d.y == c].mean(0) for c in range(5)])
    centred = d.x - means[d.y]
    assert float(centred.std()) == pytest.approx(1.0, abs=0.05)      # unit noise around the class mean
    assert float(torch.cdist(means, means).max()) > 2.0


def test_dcsbm_memory_is_linear_in_nodes_and_edges():
    # numpy reports its allocations to tracemalloc: the peak of 2e5 nodes and 1e3 edges stays within a
    # few dozen bytes per node (a table over node pairs would need 4e10 entries)
    import tracemalloc

    tracemalloc.start()
    try:
        y, u, v = dcsbm_edges(200000, 1000, num_classes=4, seed=0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert y.shape == (200000,) and u.shape == v.shape and u.size <= 1000
    assert peak < 64 * 200000
    # and the edge arrays scale with the edges: ten times the edges, about ten times the entries
    _, u10, _ = dcsbm_edges(2000, 20000, num_classes=4, seed=0)
    _, u1, _ = dcsbm_edges(2000, 2000, num_classes=4, seed=0)
    assert 5 * u1.size < u10.size <= 20000


@pytest.mark.parametrize("kw, match", [(dict(num_nodes=1), "num_nodes"), (dict(homophily=1.5), "homophily"),
                                       (dict(exponent=1.0), "exponent"), (dict(num_classes=1), "one class"),
                                       (dict(num_edges=-1), "num_edges"), (dict(seed=1.5), "seed")])
def test_dcsbm_rejects_bad_arguments(kw, match):
    with pytest.raises(ValueError, match=match):
        _dcsbm(**kw)
