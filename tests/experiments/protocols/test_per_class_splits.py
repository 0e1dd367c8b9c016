"""The per-class-splits protocol: per-class draws per seed, the largest connected component, labels by role,
and configs/shchur_protocol.yaml loading from the repository."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from graphstk.experiments.config import load_config, parse_config
from graphstk.experiments.pipeline import run_experiment
from graphstk.experiments.protocols import ProtocolError
from graphstk.experiments.protocols.per_class_splits import largest_component, per_class_split
from graphstk.experiments.registry import MethodEntry, register_method
from graphstk.methods.feature_propagation import sparse_features

REPO = Path(__file__).resolve().parents[3]


def toy_npz(path: Path, n_per_class: int = 40, seed: int = 0, island: int = 5) -> Path:
    """Three communities plus ``island`` nodes joined only among themselves (a second component)."""
    g = np.random.default_rng(seed)
    y = np.concatenate([np.repeat(np.arange(3), n_per_class), np.zeros(island, dtype=np.int64)])
    n, m = y.size, 3 * n_per_class
    P = np.where(y[:, None] == y[None, :], 0.2, 0.02)
    P[m:, :] = P[:, m:] = 0.0
    P[m:, m:] = 1.0
    A = np.triu(g.random((n, n)) < P, 1)
    A = A | A.T
    x = g.random((n, 8)) + np.eye(3)[y] @ g.random((3, 8)) * 2
    np.savez(path, edge_index=np.array(A.nonzero()), y=y, x=x)
    return path


def toy_config(path: Path, methods, seeds=3, **opts):
    return parse_config({"name": "toy", "protocol": "per-class-splits", "seeds": seeds, "train_per_class": 4,
                         "val_per_class": 6, "datasets": [{"name": "toy", "path": str(path)}], "methods": methods,
                         **opts})


SEEN: list = []


def _spy(problem, points):
    SEEN.append(problem)
    return [torch.rand(problem.eval.numel(), problem.num_classes, generator=torch.Generator().manual_seed(i))
            for i, _ in enumerate(points)]


register_method(MethodEntry(name="_PerClassSpy", needs=frozenset({"graph"}), task="classification",
                            grid={"i": [0, 1]}, fit_predict=_spy))


CLOSED: list = []


def _closed(problem, points):
    """A closed form: each point's scores a fixed function of the node, whatever the rows asked for."""
    CLOSED.append((problem.eval.numel(), len(points)))
    out = []
    for p in points:
        table = torch.rand(problem.data.num_nodes, problem.num_classes, generator=torch.Generator().manual_seed(p["i"]))
        out.append(table[problem.eval])
    return out


_closed.deterministic = True
register_method(MethodEntry(name="_PerClassClosed", needs=frozenset({"graph"}), task="classification",
                            grid={"i": [0, 1, 2, 3]}, fit_predict=_closed))


def _data(path):
    from graphstk.data import load_dataset

    return load_dataset(str(path))


def test_draws_per_class_disjoint_and_the_rest_is_test(tmp_path):
    data = _data(toy_npz(tmp_path / "t.npz"))
    s = per_class_split(data, 0, 4, 6)
    assert torch.bincount(data.y[s["train"]]).tolist() == [4, 4, 4]
    assert torch.bincount(data.y[s["val"]]).tolist() == [6, 6, 6]
    ids = torch.cat([s["train"], s["val"], s["test"]])
    assert ids.unique().numel() == ids.numel() == data.num_nodes
    t = per_class_split(data, 0, 4, 6, n_test=50)
    assert t["test"].numel() == 50 and torch.equal(t["train"], s["train"])


def test_seeds_give_different_splits_deterministically(tmp_path):
    data = _data(toy_npz(tmp_path / "t.npz"))
    a, b, c = per_class_split(data, 1, 4, 6), per_class_split(data, 1, 4, 6), per_class_split(data, 2, 4, 6)
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not torch.equal(a["train"], c["train"])


def test_largest_component_drops_the_island(tmp_path):
    data = _data(toy_npz(tmp_path / "t.npz", island=5))
    lcc = largest_component(data)
    assert lcc.num_nodes == data.num_nodes - 5
    assert int(lcc.edge_index.max()) < lcc.num_nodes and lcc.x.shape[0] == lcc.y.numel() == lcc.num_nodes
    torch.testing.assert_close(lcc.x, data.x[:lcc.num_nodes])


def test_too_small_class_is_a_clear_error(tmp_path):
    data = _data(toy_npz(tmp_path / "t.npz", n_per_class=8))
    with pytest.raises(ProtocolError, match="train_per_class"):
        per_class_split(data, 0, 4, 6)


def test_methods_see_train_labels_only_and_validation_for_stopping(tmp_path):
    cfg = toy_config(toy_npz(tmp_path / "t.npz"), ["_PerClassSpy"], largest_component=True)
    SEEN.clear()
    res = run_experiment(cfg, str(tmp_path / "out"), progress=False, write=False)
    assert len(SEEN) == 3                          # one call per seed: a split per seed
    trains = []
    for prob in SEEN:
        assert prob.data.num_nodes == 120          # the island is gone
        known = (prob.y >= 0).nonzero().flatten()
        assert torch.equal(known.sort().values, prob.labeled.sort().values)
        assert prob.val.numel() == 18 and prob.y_val.numel() == 18
        assert not set(prob.val.tolist()) & set(prob.labeled.tolist())
        assert prob.eval.numel() == 120 - 12       # validation then test: every node but the train nodes
        trains.append(frozenset(prob.labeled.tolist()))
    assert len(set(trains)) == 3
    (row,) = res["rows"]
    assert row["n_labeled"] == 12 and row["seeds"] == [0, 1, 2] and len(row["test_acc"]) == 3


def test_grid_test_chosen_scores_a_closed_form_twice_and_gives_the_same_rows(tmp_path):
    """``grid_test: chosen``: a closed form scores the validation nodes at every grid point, then the test nodes at
    the chosen one; a trained method is called once, as before. The rows are those of ``grid_test: every``, without
    the ceiling ``grid_test_max`` for the closed form."""
    path = toy_npz(tmp_path / "t.npz")
    rows = {}
    for mode in ("every", "chosen"):
        CLOSED.clear()
        SEEN.clear()
        cfg = toy_config(path, ["_PerClassClosed", "_PerClassSpy"], grid_test=mode)
        rows[mode] = run_experiment(cfg, str(tmp_path / mode), progress=False, write=False)["rows"]
        n_test = int(_data(path).num_nodes) - 30
        if mode == "every":
            assert CLOSED == [(18 + n_test, 4)] * 3
        else:
            assert CLOSED == [(18, 4), (n_test, 1)] * 3
        assert [p.eval.numel() for p in SEEN] == [18 + n_test] * 3
    for every, chosen in zip(rows["every"], rows["chosen"]):
        assert every["method"] == chosen["method"]
        for key in ("test_acc", "best_params", "val"):
            assert every[key] == chosen[key], key
    closed_every, spy_every = rows["every"]
    closed_chosen, spy_chosen = rows["chosen"]
    assert all(v is not None for v in closed_every["grid_test_max"])
    assert closed_chosen["grid_test_max"] == [None, None, None]
    assert spy_chosen["grid_test_max"] == spy_every["grid_test_max"]


def test_grid_test_chosen_gives_feature_stkr_the_same_rows(tmp_path):
    path = toy_npz(tmp_path / "t.npz")
    methods = [{"label": "FeatureSTKR", "grid": {"depth": [1, 4], "sigma": [1.0, 0.5], "beta": [1e-2, 1e-4]}}]
    rows = [run_experiment(toy_config(path, methods, grid_test=mode), str(tmp_path / mode), progress=False,
                           write=False)["rows"][0] for mode in ("every", "chosen")]
    assert rows[0]["test_acc"] == rows[1]["test_acc"] and rows[0]["best_params"] == rows[1]["best_params"]
    assert rows[1]["grid_test_max"] == [None, None, None]


def test_shchur_config_loads_from_the_repository():
    cfg = load_config(REPO / "configs" / "shchur_protocol.yaml")
    for t in cfg.all_tasks():
        assert t.protocol == "per-class-splits" and {d.name for d in t.datasets} <= {"Photo", "CS"}
        assert (t.train_per_class, t.val_per_class, t.n_test, t.largest_component) == (20, 30, None, True)
        assert t.grid_test == "chosen"
    assert {d.name for d in cfg.datasets} == {"Photo", "CS"}
    for m in cfg.methods:
        if m.label in ("GCN", "GAT", "APPNP", "MLP"):
            assert m.options["preset"] == "shchur"


def test_quick_caps_the_epochs_of_gnns_left_to_their_preset():
    from graphstk.experiments.config import with_overrides
    from graphstk.experiments.overrides import QUICK_MAX_EPOCHS

    cfg = with_overrides(load_config(REPO / "configs" / "shchur_protocol.yaml"), quick=True)
    grids = {m.label: m.grid for t in cfg.all_tasks() for m in t.methods}
    assert grids["GCN"] == {"epochs": [QUICK_MAX_EPOCHS]}
    assert "epochs" not in grids["SGC"]


FEATURES_SEEN: list = []


def _features_spy(problem, points):
    FEATURES_SEEN.append((problem.X, problem.kernels.feature_cache.get("csr_features")))
    return _spy(problem, points)


register_method(MethodEntry(name="_PerClassFeaturesSpy", needs=frozenset({"graph", "features"}),
                            task="classification", grid={"i": [0]}, fit_predict=_features_spy))

#: every registered graph method that reads the features, on one grid point each (GNNs: a few epochs)
FEATURE_METHODS = [
    {"label": "FeatureSTKR", "grid": {"depth": [2], "sigma": [1.0], "beta": [1e-2]}},
    {"label": "FeatureSTKR (feature kNN)", "grid": {"depth": [2], "sigma": [1.0], "beta": [1e-2], "knn": [3],
                                                    "knn_weight": [0.1]}},
    {"label": "FeatureSTKR (S2GC filter)", "grid": {"depth": [2], "sigma": [1.0], "beta": [1e-2]}},
    {"label": "FeatureSTKR (GGCM filter)", "grid": {"depth": [2], "sigma": [1.0], "beta": [1e-2]}},
    {"label": "FeatureSTKR + C&S", "grid": {"depth": [2], "sigma": [1.0], "beta": [1e-2]}},
    {"label": "KRR (features)", "grid": {"sigma": [1.0], "beta": [1e-2]}},
    {"label": "SGC (ridge)", "grid": {"beta": [1e-2]}},
    *({"label": m, "grid": {"weight_decay": [1e-4]}} for m in ("SGC", "S2GC", "GGCM")),
    {"label": "DGC", "grid": {"t": [1.0], "weight_decay": [1e-4]}},
    *({"label": m, "preset": "shchur", "grid": {"epochs": [3]}} for m in ("GCN", "GAT", "APPNP", "MLP")),
    {"label": "MLP+C&S", "grid": {"epochs": [3]}},
    "_PerClassFeaturesSpy",
]


def test_features_are_converted_once_and_no_method_writes_them(tmp_path):
    """The protocol converts the features to float64 once per dataset and hands that one matrix to every split and
    method: no split copies it again, and none of the feature methods writes into it (a write would reach every
    later split)."""
    toy = dict(np.load(toy_npz(tmp_path / "t.npz")))
    g = np.random.default_rng(1)
    toy["x"] = (g.random((toy["y"].size, 30)) < 0.1 + 0.3 * (np.arange(30) % 3 == toy["y"][:, None])).astype(np.float32)
    path = tmp_path / "binary.npz"
    np.savez(path, **toy)           # binary bag-of-words rows in float32, as PyG stores them
    FEATURES_SEEN.clear()
    cfg = toy_config(path, FEATURE_METHODS, seeds=2, largest_component=True)
    res = run_experiment(cfg, str(tmp_path / "out"), progress=False, write=False)
    assert len(res["rows"]) == len(FEATURE_METHODS)
    (first, csr), (second, csr_again) = FEATURES_SEEN
    assert first is second and first.dtype == torch.float64
    data = largest_component(_data(path))
    assert data.x.dtype == torch.float32            # so a conversion per split would hand over a new copy
    assert torch.equal(first, data.x.double())
    # the CSR form the sparse readers share: made once, from this matrix, and unchanged by its readers
    assert csr is csr_again and csr[0] is first
    fresh = sparse_features(data.x.double())
    assert (csr[1] != fresh).nnz == 0 and np.array_equal(csr[1].indptr, fresh.indptr)
