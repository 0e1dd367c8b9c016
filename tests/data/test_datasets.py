"""Dataset loading: Table 3 counts, data root, offline errors, bring-your-own graphs, bad input."""
from __future__ import annotations

import os
import socket

import pytest
import torch

import graphstk
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


def test_top_level_exports():
    assert graphstk.load_dataset is load_dataset and graphstk.make_split is make_split
    assert graphstk.dataset_statistics is dataset_statistics and graphstk.Split is not None


def test_missing_dataset_message_names_the_real_source(tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPHSTK_OFFLINE", "1")
    monkeypatch.setenv("GRAPHSTK_DATA", str(tmp_path))
    for root in (None, str(tmp_path)):      # the command line passes the resolved root on
        with pytest.raises(DatasetNotFoundError) as err:
            load_dataset("Cora", root=root)
        msg = str(err.value)
        assert "$GRAPHSTK_DATA" in msg and "root argument" not in msg and "--data-root PATH" in msg
        assert msg.count("not found") == 1 and "dataset 'Cora' not found" not in msg
    with pytest.raises(DatasetNotFoundError, match="came from the root argument"):
        load_dataset("Cora", root=str(tmp_path / "elsewhere"))
