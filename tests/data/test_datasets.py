"""Dataset loading: Table 3 counts, data root, offline errors, bring-your-own graphs, bad input."""
from __future__ import annotations

import os
import socket
import warnings
from types import SimpleNamespace

import networkx as nx
import numpy as np
import pytest
import torch
from torch_geometric.data import Data

import graphstk
from graphstk.exceptions import DataFileError
from graphstk.data import (
    DATASETS,
    DatasetNotFoundError,
    FeaturesUnavailableWarning,
    dataset_statistics,
    get_spec,
    known_datasets,
    load_dataset,
    make_split,
    resolve_data_root,
)

# Table 3 of the STKR paper (classes, nodes, edges, train %, val %); edges are PyG's directed count.
TABLE3 = {
    "Cora": (7, 2708, 10556, 5.17, 18.46),
    "CiteSeer": (6, 3327, 9104, 3.61, 15.03),
    "PubMed": (3, 19717, 88648, 0.3, 2.54),
    "Computers": (10, 13752, 491722, 1.45, 1.45),
    "Photo": (8, 7650, 238162, 2.09, 2.09),
    "CS": (15, 18333, 163788, 1.64, 1.64),
    "Physics": (5, 34493, 495924, 0.29, 0.29),
    "DBLP": (4, 17716, 105734, 0.45, 0.45),
    "CoraFull": (70, 19793, 126842, 7.07, 7.07),
}
# features of the PyG loaders (SOURCES.md of the shared datasets)
FEATURES = {"Cora": 1433, "CiteSeer": 3703, "Computers": 767, "Photo": 745, "CS": 6805, "Physics": 8415,
            "DBLP": 1639, "CoraFull": 8710}
# PyG densifies 6,805 / 8,415 features of CS / Physics on first load (10-20 s each): opt in.
RUN_SLOW = os.environ.get("GRAPHSTK_RUN_SLOW", "") not in ("", "0")
SLOW = pytest.mark.skipif(not RUN_SLOW, reason="full-feature CS/Physics load takes 10-20 s each; "
                                               "set GRAPHSTK_RUN_SLOW=1 (their graphs are checked without features)")
FULL_PARAMS = [pytest.param(k, marks=[pytest.mark.slow, SLOW]) if k in ("CS", "Physics") else k
               for k in FEATURES]


# --------------------------------------------------------------------------- Table 3
@pytest.mark.parametrize("name", list(TABLE3))
def test_table3_counts(load_shared, name):
    classes, nodes, edges, _, _ = TABLE3[name]
    data = load_shared(name, features=False)
    stats = dataset_statistics(data)
    assert (stats["classes"], stats["nodes"], stats["edges"]) == (classes, nodes, edges)
    assert stats["undirected"] and stats["self_loops"] == 0
    assert data.name == name and data.x is None
    assert data.y.dtype == torch.long and data.y.shape == (nodes,)


@pytest.mark.parametrize("name", list(TABLE3))
def test_table3_split_fractions(load_shared, name):
    """The train/val fractions of Table 3 follow from make_split's sizes."""
    *_, train_pct, val_pct = TABLE3[name]
    data = load_shared(name, features=False)
    s = make_split(data, p_test=0.01, seed=0)
    assert round(100 * s.sizes["train"] / data.num_nodes, 2) == train_pct
    assert round(100 * s.sizes["val"] / data.num_nodes, 2) == val_pct


@pytest.mark.parametrize("name", FULL_PARAMS)
def test_full_load_matches_graph_only(load_shared, name):
    """PyG's full loader and the graph-only path give the same graph, labels and masks."""
    full, graph = load_shared(name), load_shared(name, features=False)
    assert full.x.shape == (graph.num_nodes, FEATURES[name])
    assert torch.equal(full.edge_index, graph.edge_index) and torch.equal(full.y, graph.y)
    assert full.split_protocol == graph.split_protocol
    for k in ("train_mask", "val_mask", "test_mask"):
        assert (getattr(full, k, None) is None) == (getattr(graph, k, None) is None)


def test_graph_only_needs_no_writable_root(monkeypatch, dataset_root):
    root = dataset_root("Photo")
    monkeypatch.setattr(os, "access", lambda *a, **k: False)
    data = load_dataset("amazon-photo", root=root, features=False)
    assert data.num_nodes == 7650 and data.x is None   # read the raw npz only, wrote nothing


def test_dblp_statistics(dblp):
    stats = dataset_statistics(dblp)
    print(f"DBLP: {stats['nodes']:,} nodes, {stats['edges']:,} edges, {stats['components']} components")
    assert stats["nodes"] == 17716 and stats["edges"] == 105734
    assert stats["features"] == 1639 and stats["label_counts"] == [7920, 5645, 1982, 2169]
    assert stats["components"] > 1   # DBLP is disconnected
    assert dblp.split_protocol == "random" and not hasattr(dblp, "train_mask")


def test_planetoid_public_masks(cora):
    assert cora.split_protocol == "planetoid"
    assert (int(cora.train_mask.sum()), int(cora.val_mask.sum()), int(cora.test_mask.sum())) == (140, 500, 1000)
    assert cora.x.shape == (2708, 1433)


def test_pubmed_alt_graph_and_labels(dataset_root):
    root = dataset_root("PubMed")
    if all((root / "PubMed" / "raw" / f).is_file() for f in get_spec("PubMed").raw_files):
        pytest.skip("full PubMed raw files present; the alt fallback is not used")
    with pytest.warns(FeaturesUnavailableWarning, match="without node features"):
        data = load_dataset("pubmed", root=root)
    assert data.x is None and data.num_nodes == 19717 and data.name == "PubMed"
    assert data.split_protocol == "planetoid"
    assert (int(data.train_mask.sum()), int(data.val_mask.sum()), int(data.test_mask.sum())) == (60, 500, 1000)
    assert dataset_statistics(data)["features"] == 0


def test_corafull_absent_skips(data_root):
    data_root.require("CoraFull")   # skips with a reason when the shared copy lacks it (expected here)
    data = load_dataset("CoraFull", root=data_root.path)
    assert data.num_nodes == 19793


# --------------------------------------------------------------------------- names and roots
@pytest.mark.parametrize("alias,canonical", [
    ("cora", "Cora"), ("CITESEER", "CiteSeer"), ("PubMed", "PubMed"), ("amazon-computers", "Computers"),
    ("Amazon - Computers", "Computers"), ("amazon_photo", "Photo"), ("Amazon - Photos", "Photo"),
    ("coauthor-cs", "CS"), ("Coauthor - Physics", "Physics"), ("dblp", "DBLP"), ("cora_full", "CoraFull"),
    ("CoraFull", "CoraFull"),
])
def test_aliases(alias, canonical):
    assert get_spec(alias).name == canonical


def test_unknown_name_lists_known():
    with pytest.raises(ValueError, match="unknown dataset 'Karate'.*Cora, CiteSeer, PubMed"):
        load_dataset("Karate")
    assert set(known_datasets()) == set(TABLE3)


def _pyg_raw_paths(spec, root):
    """raw_paths as the PyG class computes them (without running its constructor)."""
    from torch_geometric.datasets import Amazon, CitationFull, Coauthor, Planetoid
    cls, name = {"Planetoid": (Planetoid, spec.name), "Amazon": (Amazon, spec.name.lower()),
                 "Coauthor": (Coauthor, spec.name), "CitationFull": (CitationFull, spec.pyg_class.split("'")[1].lower())
                 }[spec.pyg_class.split("(")[0]]
    obj = cls.__new__(cls)
    obj.root, obj.name, obj.split = str(root), name, "public"
    files = obj.raw_file_names
    files = [files] if isinstance(files, str) else files
    return sorted(os.path.join(obj.raw_dir, f) for f in files)


@pytest.mark.parametrize("name", list(TABLE3))
def test_registry_layout_matches_pyg(tmp_path, name):
    spec = DATASETS[name]
    ours = sorted(str(tmp_path / spec.dirname / "raw" / f) for f in spec.raw_files)
    assert ours == _pyg_raw_paths(spec, tmp_path)


def test_resolve_data_root(monkeypatch, tmp_path):
    monkeypatch.delenv("GRAPHSTK_DATA", raising=False)
    monkeypatch.chdir(tmp_path)
    assert resolve_data_root() == tmp_path / "datasets"
    monkeypatch.setenv("GRAPHSTK_DATA", str(tmp_path / "env"))
    assert resolve_data_root() == tmp_path / "env"
    assert resolve_data_root(tmp_path / "arg") == tmp_path / "arg"
    assert resolve_data_root("rel") == tmp_path / "rel"


# --------------------------------------------------------------------------- offline
def test_offline_missing_dataset_error(monkeypatch, tmp_path):
    monkeypatch.setenv("GRAPHSTK_OFFLINE", "1")
    with pytest.raises(DatasetNotFoundError) as info:
        load_dataset("Cora", root=tmp_path)
    msg = str(info.value)
    assert str(tmp_path / "Cora" / "raw") in msg and "ind.cora.allx" in msg and "ind.cora.test.index" in msg
    assert "GRAPHSTK_OFFLINE" in msg
    assert isinstance(info.value, FileNotFoundError)
    assert not (tmp_path / "Cora").exists()   # nothing created, PyG never called


def test_offline_env_root_named(monkeypatch, tmp_path):
    monkeypatch.setenv("GRAPHSTK_OFFLINE", "1")
    monkeypatch.setenv("GRAPHSTK_DATA", str(tmp_path))
    with pytest.raises(DatasetNotFoundError, match=r"GRAPHSTK_DATA.*dblp\.npz"):
        load_dataset("DBLP")


def test_unreachable_host_error(monkeypatch, tmp_path):
    """No network: the reachability probe fails, PyG is not called, the error is clear."""
    for k in ("GRAPHSTK_OFFLINE", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(k, raising=False)

    def refuse(*a, **k):
        raise OSError("Name or service not known")

    monkeypatch.setattr(socket, "create_connection", refuse)
    with pytest.raises(DatasetNotFoundError, match=r"cannot reach github\.com.*ms_academic_cs\.npz"):
        load_dataset("coauthor-cs", root=tmp_path)


def test_download_failure_converted(monkeypatch, tmp_path):
    """Host reachable but PyG's download fails: converted to DatasetNotFoundError."""
    import torch_geometric.io.fs as pyg_fs
    for k in ("GRAPHSTK_OFFLINE", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(k, raising=False)

    class _Conn:
        def __enter__(self):
            return self

        def __exit__(self, *a):
            return False

    def fail(*a, **k):
        raise OSError("simulated network failure")

    monkeypatch.setattr(socket, "create_connection", lambda *a, **k: _Conn())
    monkeypatch.setattr(pyg_fs, "cp", fail)
    with pytest.raises(DatasetNotFoundError, match=r"download failed: simulated network failure.*ind\.citeseer\.x"):
        load_dataset("CiteSeer", root=tmp_path)


def test_pubmed_offline_mentions_alt(monkeypatch, tmp_path):
    monkeypatch.setenv("GRAPHSTK_OFFLINE", "1")
    with pytest.raises(DatasetNotFoundError, match=r"ind\.pubmed\.allx.*alt.pubmed_graph_labels\.npz"):
        load_dataset("PubMed", root=tmp_path)


def test_readonly_root_error(monkeypatch, dataset_root, tmp_path):
    import shutil
    src = dataset_root("Cora") / "Cora" / "raw"
    shutil.copytree(src, tmp_path / "Cora" / "raw")
    monkeypatch.setattr(os, "access", lambda *a, **k: False)   # as if read-only (tests may run as root)
    with pytest.raises(PermissionError, match="not writable.*Copy the dataset folder"):
        load_dataset("Cora", root=tmp_path)


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


def test_top_level_exports():
    assert graphstk.load_dataset is load_dataset and graphstk.make_split is make_split
    assert graphstk.dataset_statistics is dataset_statistics and graphstk.Split is not None
