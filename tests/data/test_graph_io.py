"""Bring-your-own graphs (graphstk.data.graph_io and the checks of graphstk.data.validation): .npz
files, networkx graphs, PyG Data objects."""
from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import torch
from torch_geometric.data import Data

from graphstk.data import dataset_statistics, load_dataset, make_split
from graphstk.exceptions import DataFileError


# --------------------------------------------------------------------------- bring your own
def _toy(n=6):
    edges = [(0, 1), (1, 2), (2, 0), (3, 4)]   # node 5 isolated
    ei = np.array(edges + [(b, a) for a, b in edges]).T.astype(np.int64)
    y = np.array([0, 0, 1, 1, 2, 2], dtype=np.int64)[:n]
    x = np.arange(n * 3, dtype=np.float32).reshape(n, 3)
    return ei, y, x


def test_npz_roundtrip(tmp_path):
    ei, y, x = _toy()
    path = tmp_path / "toy.npz"
    np.savez(path, edge_index=ei, y=y, x=x, train_index=[0, 2], val_index=[3], test_index=[4, 5])
    data = load_dataset(str(path))
    assert torch.equal(data.edge_index, torch.from_numpy(ei)) and torch.equal(data.y, torch.from_numpy(y))
    assert torch.equal(data.x, torch.from_numpy(x)) and data.num_nodes == 6
    assert data.train_mask.tolist() == [True, False, True, False, False, False]
    assert data.val_mask.nonzero().flatten().tolist() == [3]
    assert data.test_mask.nonzero().flatten().tolist() == [4, 5]
    assert data.split_protocol == "planetoid" and data.name == "toy"
    s = make_split(data, p_test=0.2, seed=1)
    assert s.train.tolist() == [0, 2] and s.val.tolist() == [3] and s.sizes["test"] == 1
    stats = dataset_statistics(data)
    assert (stats["nodes"], stats["edges"], stats["features"], stats["classes"]) == (6, 8, 3, 3)
    assert (stats["isolated_nodes"], stats["components"]) == (1, 3)


def test_npz_without_split_or_features(tmp_path):
    ei, y, _ = _toy()
    path = tmp_path / "g.npz"
    np.savez_compressed(path, edge_index=ei.astype(np.int32), y=y)
    data = load_dataset(path)   # PathLike accepted
    assert data.x is None and data.split_protocol == "random" and data.num_nodes == 6
    assert data.edge_index.dtype == torch.long
    ei, y, x = _toy()
    np.savez(tmp_path / "h.npz", edge_index=ei, y=y, x=x)
    assert load_dataset(tmp_path / "h.npz", features=False).x is None


def test_karate_club_networkx():
    G = nx.karate_club_graph()
    data = load_dataset(G, label="club")
    assert data.num_nodes == 34 and data.edge_index.shape[1] == 2 * G.number_of_edges()
    assert data.label_names == ["Mr. Hi", "Officer"]
    expect = [0 if G.nodes[v]["club"] == "Mr. Hi" else 1 for v in G.nodes()]
    assert data.y.tolist() == expect
    stats = dataset_statistics(data)
    assert stats["undirected"] and stats["components"] == 1 and stats["classes"] == 2
    with pytest.raises(ValueError, match="not enough nodes: 34 nodes"):   # 20 x 2 train alone exceeds 34
        make_split(data, p_test=0.1, seed=0)


def test_networkx_features_and_names():
    G = nx.Graph()
    G.add_nodes_from([("a", {"label": 1, "f": [1.0, 2.0]}), ("b", {"label": 0, "f": [0.0, 1.0]}),
                      ("c", {"label": 1, "f": [3.0, 3.0]})])
    G.add_edges_from([("a", "b"), ("b", "c")])
    data = load_dataset(G, feature_attr="f")
    assert data.y.tolist() == [1, 0, 1] and data.node_names == ["a", "b", "c"]
    assert data.x.shape == (3, 2) and data.edge_index.shape == (2, 4)


def test_networkx_missing_label():
    G = nx.path_graph(4)
    nx.set_node_attributes(G, {0: "x", 1: "y"}, "cls")
    with pytest.raises(ValueError, match=r"labels missing: node attribute 'cls' is absent on 2 of 4 nodes"):
        load_dataset(G, label="cls")
    with pytest.raises(ValueError, match=r"labels missing.*'label'.*present: \['cls'\]"):
        load_dataset(G)


def test_data_passthrough_and_bad_type():
    ei, y, x = _toy()
    d = Data(edge_index=torch.from_numpy(ei), y=torch.from_numpy(y), x=torch.from_numpy(x))
    assert load_dataset(d) is d
    with pytest.raises(TypeError, match="expects a dataset name"):
        load_dataset(123)
    with pytest.raises(ValueError, match="labels missing"):
        load_dataset(Data(edge_index=torch.from_numpy(ei), num_nodes=6))


def _bad(**override):
    ei, y, x = _toy()
    arrays = dict(edge_index=ei, y=y, x=x)
    arrays.update(override)
    return {k: v for k, v in arrays.items() if v is not None}


@pytest.mark.parametrize("arrays,err,match", [
    (_bad(edge_index=np.array([[0, 1], [1, 6]])), ValueError, r"node ids in \[0, 6\], outside \[0, 5\]"),
    (_bad(edge_index=np.array([[0, -1], [1, 2]])), ValueError, r"outside \[0, 5\]"),
    (_bad(edge_index=np.array([[0.0, 1.0], [1.0, 2.0]])), TypeError, "edge_index must be an integer"),
    (_bad(edge_index=np.array([[0, 1, 2]])), ValueError, r"edge_index must have shape \[2, E\]"),
    (_bad(y=None), ValueError, "labels missing"),
    (_bad(y=np.array([0, 1, -1, 0, 1, 1])), ValueError, "1 negative labels"),
    (_bad(y=np.array([0.0, 1, 1, 0, 1, 1])), TypeError, "must be an integer array"),
    (_bad(y=np.eye(6, dtype=np.int64)), ValueError, r"1-D class ids.*one-hot"),
    (_bad(x=np.zeros((5, 3), np.float32)), ValueError, "N mismatch: x has 5 rows but y has 6 labels"),
    (_bad(x=np.full((6, 2), np.nan)), ValueError, "NaN"),
    (_bad(x=np.zeros(6)), ValueError, r"x must have shape \[N, F\]"),
    (_bad(train_index=np.array([0])), ValueError, "all of train_index, val_index, test_index or none"),
    (_bad(train_index=[0, 1], val_index=[1], test_index=[2]), ValueError, "must be disjoint"),
    (_bad(train_index=[0, 9], val_index=[1], test_index=[2]), ValueError, r"train_index has node ids .* outside"),
    (_bad(edge_weight=np.array([1.0])), ValueError, r"edge_weight must have shape \[E\]"),
    (_bad(train_index=[0, 1], val_index=[2], test_index=np.zeros(0, np.int64)), ValueError,
     r"bad.npz.*: test_index is empty: a split without test nodes cannot be scored"),
    (_bad(train_index=np.zeros(0, np.int64), val_index=[2], test_index=[3]), ValueError,
     r"bad.npz.*: train_index is empty"),
])
def test_npz_bad_input(tmp_path, arrays, err, match):
    path = tmp_path / "bad.npz"
    np.savez(path, **arrays)
    with pytest.raises(err, match=match):
        load_dataset(path)


def test_npz_missing_edges_and_unreadable(tmp_path):
    np.savez(tmp_path / "a.npz", y=np.zeros(3, np.int64))
    with pytest.raises(ValueError, match="no 'edge_index'"):
        load_dataset(tmp_path / "a.npz")
    (tmp_path / "b.npz").write_text("not a zip")
    with pytest.raises(DataFileError, match=r"graph file b\.npz: cannot read .*b\.npz.*Fix: write it again"):
        load_dataset(tmp_path / "b.npz")
    np.savez(tmp_path / "c.npz", edge_index=np.zeros((2, 0), np.int64), y=np.array(["a", "b"], dtype=object))
    with pytest.raises(ValueError, match="without pickle"):
        load_dataset(tmp_path / "c.npz")
    with pytest.raises(FileNotFoundError, match="no such .npz"):
        load_dataset(tmp_path / "missing.npz")


def test_npz_unknown_keys_warn(tmp_path):
    ei, y, _ = _toy()
    np.savez(tmp_path / "w.npz", edge_index=ei, y=y, features=np.zeros((6, 2)))
    with pytest.warns(UserWarning, match=r"ignoring unknown arrays \['features'\]"):
        load_dataset(tmp_path / "w.npz")
