"""The train/val/test/other protocol of App. D (STKR paper) and its inductive views."""
from __future__ import annotations

import json
import warnings

import pytest
import torch
from hypothesis import given, settings, strategies as st
from torch_geometric.data import Data

import graphstk as gs
from graphstk.data import Split, make_split
from graphstk.operators import GraphKernel


def _labels_graph(n, c, seed=0, edges=None):
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, c, (n,), generator=g)
    if edges is None:
        e = torch.randint(0, n, (2, 3 * n), generator=g)
        edges = torch.cat([e, e.flip(0)], 1)
    return Data(edge_index=edges, y=y, num_nodes=n)


def _check_partition(s: Split, n: int):
    parts = [s.train, s.val, s.test, s.other]
    for p in parts:
        assert p.dtype == torch.long and p.dim() == 1
        assert torch.equal(p, torch.sort(p).values)
    allidx = torch.cat(parts)
    assert allidx.numel() == n and torch.equal(torch.sort(allidx).values, torch.arange(n))


# --------------------------------------------------------------------------- paper sizes
def test_cora_sizes_public(cora):
    s = make_split(cora, p_test=0.01, seed=0)
    assert s.sizes == {"train": 140, "val": 500, "test": 27, "other": 2708 - 667}
    assert torch.equal(s.mask("train"), cora.train_mask) and torch.equal(s.mask("val"), cora.val_mask)
    assert bool(cora.test_mask[s.test].all())   # test drawn from the public test set
    assert s.protocol == "planetoid-public"
    _check_partition(s, 2708)
    # train/val fixed across seeds, test varies
    s1 = make_split(cora, p_test=0.01, seed=1)
    assert torch.equal(s1.train, s.train) and not torch.equal(s1.test, s.test)


def test_cora_sizes_random(cora):
    s = make_split(cora, p_test=0.01, seed=0, planetoid_split="random")
    assert (s.sizes["train"], s.sizes["val"], s.sizes["test"]) == (140, 500, 27)
    assert torch.bincount(cora.y[s.train], minlength=7).tolist() == [20] * 7
    assert s.protocol == "planetoid-random"
    _check_partition(s, 2708)
    assert not torch.equal(make_split(cora, 0.01, 1, planetoid_split="random").train, s.train)


def test_dblp_sizes(dblp):
    s = make_split(dblp, p_test=0.01, seed=0)
    assert (s.sizes["train"], s.sizes["val"], s.sizes["test"]) == (80, 80, 177)
    assert s.protocol == "random"
    _check_partition(s, 17716)


def test_pubmed_large_p_test_fills_from_outside(load_shared):
    data = load_shared("PubMed")
    with pytest.warns(UserWarning, match="exceeds the default test set"):
        s = make_split(data, p_test=0.3, seed=0)
    assert s.sizes["test"] == 5915 and s.sizes["train"] == 60
    assert bool(data.test_mask[s.test].sum() == 1000)
    _check_partition(s, 19717)


def test_rounding_half_up():
    d = _labels_graph(250, 2)
    assert make_split(d, p_test=0.01, seed=0).sizes["test"] == 3   # 2.5 -> 3
    assert make_split(d, p_test=0.0101, seed=0).sizes["test"] == 3


# --------------------------------------------------------------------------- properties
@settings(max_examples=40, deadline=None)
@given(n=st.integers(60, 400), c=st.integers(1, 3), p=st.floats(0.01, 0.3), seed=st.integers(0, 2**31 - 1),
       label_seed=st.integers(0, 1000))
def test_random_protocol_properties(n, c, p, seed, label_seed):
    d = _labels_graph(n, c, label_seed)
    c_eff = int(d.y.max()) + 1
    n_test = int(p * n + 0.5)
    if n_test < 1 or 40 * c_eff + n_test > n:
        with pytest.raises(ValueError):
            make_split(d, p_test=p, seed=seed)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = make_split(d, p_test=p, seed=seed)
        again = make_split(d, p_test=p, seed=seed)
        other_seed = make_split(d, p_test=p, seed=seed + 1)
    _check_partition(s, n)
    assert s.sizes["train"] == s.sizes["val"] == 20 * c_eff and s.sizes["test"] == n_test
    assert s == again                 # determinism
    assert s != other_seed            # a different seed gives a different split


@settings(max_examples=25, deadline=None)
@given(n=st.integers(30, 200), seed=st.integers(0, 10_000), mode=st.sampled_from(["public", "random"]))
def test_planetoid_protocol_properties(n, seed, mode):
    d = _labels_graph(n, 2, seed)
    g = torch.Generator().manual_seed(seed)
    perm = torch.randperm(n, generator=g)
    for name, idx in (("train_mask", perm[:4]), ("val_mask", perm[4:10]), ("test_mask", perm[10:30])):
        m = torch.zeros(n, dtype=torch.bool)
        m[idx] = True
        d[name] = m
    d.split_protocol = "planetoid"
    # keep the per-class train counts satisfiable
    d.y[perm[:4]] = torch.tensor([0, 0, 1, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = make_split(d, p_test=0.05, seed=seed, planetoid_split=mode)
        assert s == make_split(d, p_test=0.05, seed=seed, planetoid_split=mode)
    _check_partition(s, n)
    assert (s.sizes["train"], s.sizes["val"], s.sizes["test"]) == (4, 6, int(0.05 * n + 0.5))
    if mode == "public":
        assert torch.equal(s.mask("train"), d.train_mask) and bool(d.test_mask[s.test].all())


def test_global_rng_untouched():
    d = _labels_graph(300, 3)
    state = torch.get_rng_state()
    torch.manual_seed(123)
    a = make_split(d, seed=5)
    torch.manual_seed(456)
    b = make_split(d, seed=5)
    assert a == b
    torch.set_rng_state(state)
    before = torch.get_rng_state()
    make_split(d, seed=5)
    assert torch.equal(before, torch.get_rng_state())


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("p", [0, 1, -0.1, 1.5, "0.1", True, float("nan")])
def test_bad_p_test(p):
    with pytest.raises(ValueError, match="p_test must be a number in"):
        make_split(_labels_graph(300, 2), p_test=p)


def test_split_errors():
    with pytest.raises(ValueError, match="rounds to an empty test set"):
        make_split(_labels_graph(100, 2), p_test=0.001)
    with pytest.raises(ValueError, match=r"not enough nodes: 100 nodes cannot hold 80 train \+ 80 val"):
        make_split(_labels_graph(100, 4, seed=1), p_test=0.01)
    with pytest.raises(ValueError, match="labels missing"):
        make_split(Data(edge_index=torch.zeros(2, 0, dtype=torch.long), num_nodes=5))
    d = _labels_graph(300, 2)
    d.y[0] = -1
    with pytest.raises(ValueError, match="negative labels"):
        make_split(d)
    with pytest.raises(ValueError, match="needs data.train_mask"):
        make_split(_labels_graph(300, 2), protocol="planetoid")
    with pytest.raises(ValueError, match="planetoid_split must be"):
        make_split(_labels_graph(300, 2), planetoid_split="geom-gcn")
    with pytest.raises(TypeError, match="seed must be an int"):
        make_split(_labels_graph(300, 2), seed=1.5)
    with pytest.raises(TypeError, match="expects a torch_geometric Data"):
        make_split(torch.zeros(3))


def test_missing_class_warning():
    y = torch.zeros(400, dtype=torch.long)
    y[0] = 1   # class 1 has a single node: almost never drawn for train
    d = Data(edge_index=torch.zeros(2, 0, dtype=torch.long), y=y, num_nodes=400)
    seed = next(s for s in range(50) if 0 not in make_split(d, seed=s).train.tolist())
    with pytest.warns(UserWarning, match=r"classes \[1\] have no training node"):
        make_split(d, seed=seed)


def test_split_constructor_validation():
    t = torch.tensor
    with pytest.raises(ValueError, match="appear more than once"):
        Split(t([0, 1]), t([1]), t([2]), t([3]), num_nodes=4)
    with pytest.raises(ValueError, match="does not cover 1 of 5"):
        Split(t([0]), t([1]), t([2]), t([3]), num_nodes=5)
    with pytest.raises(ValueError, match="outside"):
        Split(t([0]), t([1]), t([2]), t([3, 4]), num_nodes=4)
    s = Split(t([3, 0]), t([1]), t([2]), t([], dtype=torch.long), num_nodes=4)
    assert s.train.tolist() == [0, 3]


# --------------------------------------------------------------------------- views
def test_hidden_sets():
    d = _labels_graph(300, 2)
    s = make_split(d, p_test=0.1, seed=0)
    train, hidden = s.transductive()
    assert torch.equal(train, s.train) and hidden is None
    assert s.hidden("transductive").numel() == 0 and s.hidden("transductive", selection=True).numel() == 0
    assert torch.equal(s.hidden("inductive"), s.test)
    both = s.hidden("inductive", selection=True)
    assert torch.equal(both, torch.sort(torch.cat([s.test, s.val])).values)
    assert torch.equal(s.inductive(selection=True)[1], both)
    with pytest.raises(ValueError, match="unknown setting"):
        s.hidden("semi")


@pytest.mark.parametrize("selection", [False, True])
def test_inductive_subgraph(cora, selection):
    s = make_split(cora, p_test=0.05, seed=3)
    sub = s.inductive_subgraph(cora, selection=selection)
    hidden = s.hidden("inductive", selection)
    hidden_mask = torch.zeros(cora.num_nodes, dtype=torch.bool)
    hidden_mask[hidden] = True
    # no edge of the subgraph touches a hidden node
    glob = sub.node_ids[sub.edge_index]
    assert not bool(hidden_mask[glob].any())
    # ... and every edge between visible nodes is kept
    ei = cora.edge_index
    assert sub.edge_index.shape[1] == int((~hidden_mask[ei[0]] & ~hidden_mask[ei[1]]).sum())
    assert sub.num_nodes == cora.num_nodes - hidden.numel()
    assert torch.equal(sub.x, cora.x[sub.node_ids]) and torch.equal(sub.y, cora.y[sub.node_ids])
    assert int(sub.train_mask.sum()) == 140 and int(sub.val_mask.sum()) == (0 if selection else 500)
    assert int(sub.other_mask.sum()) == s.sizes["other"]
    # same visible set as the operator layer uses
    assert GraphKernel(cora.edge_index, cora.num_nodes, hidden=hidden).num_visible == sub.num_nodes


def test_inductive_subgraph_size_mismatch():
    s = make_split(_labels_graph(300, 2), seed=0)
    with pytest.raises(ValueError, match="split is for 300 nodes but data has 301"):
        s.inductive_subgraph(_labels_graph(301, 2))


def test_dict_roundtrip():
    s = make_split(_labels_graph(300, 3), p_test=0.05, seed=7)
    d = json.loads(json.dumps(s.to_dict()))
    back = Split.from_dict(d)
    assert back == s and back.seed == 7 and back.p_test == 0.05 and back.protocol == "random"
    d["other"] = d["other"][1:]
    with pytest.raises(ValueError, match="does not cover"):
        Split.from_dict(d)
    with pytest.raises(ValueError, match="lacks keys"):
        Split.from_dict({"train": []})


def test_split_takes_masks_too():
    from graphstk.data import Split
    m = torch.zeros(5, dtype=torch.bool)
    m[:2] = True
    s = Split(m, torch.tensor([2]), [3], torch.tensor([4]), num_nodes=5)
    assert torch.equal(s.train, torch.tensor([0, 1])) and torch.equal(s.mask("train"), m)
    with pytest.raises(TypeError, match="split.train must be a LongTensor of node ids or a boolean mask"):
        Split(torch.ones(3), [2], [3], [4], num_nodes=5)


def test_make_split_on_karate_club_and_a_small_sbm():
    import networkx as nx
    from torch_geometric.utils import stochastic_blockmodel_graph

    karate = gs.load_dataset(nx.karate_club_graph(), label="club")
    with pytest.raises(ValueError, match=r"n_test=<count>.*p_test >="):
        gs.make_split(karate)
    with pytest.raises(ValueError, match="train_per_class and val_per_class"):
        gs.make_split(karate, n_test=5)
    s = gs.make_split(karate, n_test=10, train_per_class=4, val_per_class=4, seed=3)
    assert s.sizes == {"train": 8, "val": 8, "test": 10, "other": 8}
    assert torch.bincount(karate.y[s.train]).tolist() == [4, 4]
    assert s == gs.make_split(karate, n_test=10, train_per_class=4, val_per_class=4, seed=3)
    with pytest.raises(ValueError, match="lower train_per_class"):
        gs.make_split(karate, n_test=5, train_per_class=9)
    with pytest.raises(ValueError, match="p_test .* or n_test .* not both"):
        gs.make_split(karate, p_test=0.2, n_test=5)

    with torch.random.fork_rng():   # PyG draws from the global generator: seed it, or the test is flaky
        torch.manual_seed(0)
        ei = stochastic_blockmodel_graph([40, 40, 40], [[0.3, 0.02, 0.02], [0.02, 0.3, 0.02], [0.02, 0.02, 0.3]])
    sbm = Data(edge_index=ei, y=torch.arange(3).repeat_interleave(40), num_nodes=120)
    with pytest.raises(ValueError, match="train_per_class"):
        gs.make_split(sbm, p_test=0.1)
    s = gs.make_split(sbm, p_test=0.1, train_per_class=5)
    assert s.sizes["train"] == 15 and s.sizes["val"] == 15 and s.sizes["test"] == 12
    # the split feeds the estimators directly, as ids or as masks
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # beta = 10: with beta = 1e-2 this SBM's indefinite S makes the 15-label fit overshoot
        # (test accuracy 0.33-0.92 over graph seeds 0-9); with 10 it is 1.0 on all ten
        est = gs.STKR(gs.InverseLaplacian(0.9), beta=10.0).fit(sbm, s.mask("train"))
    assert (est.decision_function(s.mask("test")).argmax(1) == sbm.y[s.test]).float().mean() > 0.5
