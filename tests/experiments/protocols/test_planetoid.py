"""The planetoid protocol: public split sizes, selection blind to validation/test labels beyond their roles,
train+val refits, and a small end-to-end run of configs/planetoid_features.yaml."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
import torch

from graphstk.experiments.config import load_config, parse_config, with_overrides
from graphstk.experiments.pipeline import run_experiment
from graphstk.experiments.protocols.planetoid import Planetoid, public_split
from graphstk.experiments.registry import MethodEntry, register_method

REPO = Path(__file__).resolve().parents[3]


def toy_npz(path: Path, n_per_class: int = 30, seed: int = 0) -> Path:
    """Three noisy communities with informative features and a public split: 6 train, 15 val, 30 test nodes."""
    g = np.random.default_rng(seed)
    y = np.repeat(np.arange(3), n_per_class)
    n = y.size
    P = np.where(y[:, None] == y[None, :], 0.2, 0.02)
    A = np.triu(g.random((n, n)) < P, 1)
    A = A | A.T
    ei = np.array(A.nonzero())
    x = g.random((n, 8)) + np.eye(3)[y] @ g.random((3, 8)) * 2
    order = g.permutation(n)
    train = np.concatenate([order[y[order] == c][:2] for c in range(3)])
    rest = np.setdiff1d(order, train, assume_unique=True)
    np.savez(path, edge_index=ei, y=y, x=x, train_index=train, val_index=rest[:15], test_index=rest[15:45])
    return path


def toy_config(path: Path, methods, fit_labels=("train", "train+val"), seeds=2):
    return parse_config({"name": "toy", "protocol": "planetoid", "fit_labels": list(fit_labels), "seeds": seeds,
                         "datasets": [{"name": "toy", "path": str(path)}], "methods": methods})


SEEN: list = []


def _spy(problem, points):
    SEEN.append(problem)
    return [torch.rand(problem.eval.numel(), problem.num_classes, generator=torch.Generator().manual_seed(i))
            for i, _ in enumerate(points)]


register_method(MethodEntry(name="_PlanetoidSpy", needs=frozenset({"graph"}), task="classification",
                            grid={"i": [0, 1, 2, 3]}, fit_predict=_spy))


def test_split_sizes_on_cora(load_shared):
    data = load_shared("Cora")
    s = public_split(data)
    assert (s["train"].numel(), s["val"].numel(), s["test"].numel()) == (140, 500, 1000)
    assert torch.bincount(data.y[s["train"]]).tolist() == [20] * 7


def test_methods_see_only_the_labels_of_their_role(tmp_path):
    cfg = toy_config(toy_npz(tmp_path / "toy.npz"), ["_PlanetoidSpy"], seeds=1)
    SEEN.clear()
    res = run_experiment(cfg, str(tmp_path / "out"), progress=False, write=False)
    data = np.load(tmp_path / "toy.npz")
    train, val, test = (torch.as_tensor(data[k]) for k in ("train_index", "val_index", "test_index"))
    for prob in SEEN:
        known = prob.y >= 0
        assert torch.equal(known.nonzero().flatten().sort().values, prob.labeled.sort().values)
        assert torch.equal(prob.data.y, prob.y)                      # the graph carries no other label
        assert not hasattr(prob.data, "val_mask") and not hasattr(prob.data, "test_mask")
    assert set(SEEN[0].labeled.tolist()) == set(train.tolist())
    assert set(SEEN[-1].labeled.tolist()) == set(train.tolist()) | set(val.tolist())   # train+val refit
    assert set(SEEN[-1].eval.tolist()) == set(test.tolist())
    rows = {r["options"]["fit_labels"]: r for r in res["rows"]}
    assert rows["train"]["n_labeled"] == 6 and rows["train+val"]["n_labeled"] == 21


@pytest.mark.parametrize("method", ["FeatureSTKR", "FeatureSTKR (i)", "Label-Prop"])
def test_selection_ignores_test_labels(tmp_path, method):
    path = toy_npz(tmp_path / "toy.npz")
    cfg = toy_config(path, [{"label": method, "grid": {"depth": [1, 4], "beta": [1e-1, 1e-3]}} if "STKR" in method
                            else method], fit_labels=["train"], seeds=1)
    proto = Planetoid(cfg)
    data = proto.load(cfg.datasets[0], None)
    unit = proto.prepare(cfg.datasets[0], data, "train", 0)
    m = cfg.methods[0]
    first = proto.evaluate(m, m.grid, data, unit, "train", 0)
    shuffled = data.clone()
    shuffled.y = data.y.clone()
    te = unit["test"]
    shuffled.y[te] = (data.y[te] + 1) % 3                                   # every test label changed
    second = proto.evaluate(m, m.grid, shuffled, unit, "train", 0)
    assert first["chosen"] == second["chosen"] and first["val"] == second["val"]
    assert [g["val"] for g in first["grid"]] == [g["val"] for g in second["grid"]]
    assert first["test"] != second["test"]


TINY = {"FeatureSTKR": {"depth": [1, 4], "beta": [1e-1, 1e-3]},
        "FeatureSTKR (i)": {"depth": [1, 4], "beta": [1e-1, 1e-3]},
        "FeatureSTKR (S2GC filter)": {"depth": [4], "alpha": [0.05], "beta": [1e-1, 1e-3]},
        "FeatureSTKR (GGCM filter)": {"depth": [4], "decline_neg": [0.5], "beta": [1e-1, 1e-3]},
        "FeatureSTKR + C&S": {"depth": [4], "beta": [1e-1], "reuse_eta": [0.0, 0.9], "smooth_eta": [0.0, 0.8]},
        "FeatureSTKR (feature kNN)": {"depth": [4], "beta": [1e-1], "knn": [2], "knn_weight": [0.1, 0.3]},
        "FeatureSTKR (i, feature kNN)": {"depth": [4], "beta": [1e-1], "knn": [2], "knn_weight": [0.1, 0.3]},
        "S2GC": {"weight_decay": [1e-5, 1e-3]}, "DGC": {"t": [5.27], "weight_decay": [1e-5, 1e-3]},
        "GGCM": {"decline_neg": [0.5], "weight_decay": [1e-5, 1e-3]}}


@pytest.mark.parametrize("method", list(TINY))
def test_train_only_fit_reads_no_validation_or_test_label(tmp_path, method):
    """Every validation and test label permuted and shifted: the train-only fit gives the same scores at every
    grid point (the labels reach a method only through Problem.y, -1 outside the labeled nodes)."""
    from graphstk.experiments.protocols.base import call_method
    from graphstk.experiments.registry import get_method, grid_points

    path = toy_npz(tmp_path / "toy.npz")
    cfg = toy_config(path, [{"label": method, "grid": TINY[method]}], fit_labels=["train"], seeds=1)
    proto = Planetoid(cfg)
    data = proto.load(cfg.datasets[0], None)
    unit = proto.prepare(cfg.datasets[0], data, "train", 0)
    m = cfg.methods[0]
    entry = get_method(m.label)
    tr, va, te = unit["train"], unit["val"], unit["test"]
    hide = te if {**entry.fixed, **m.options}.get("setting") == "inductive" else None
    other = torch.cat([va, te])
    permuted = data.clone()
    permuted.y = data.y.clone()
    permuted.y[other] = (data.y[other][torch.randperm(other.numel(), generator=torch.Generator().manual_seed(0))]
                         + 1) % 3
    assert not torch.equal(permuted.y, data.y)
    x = data.x.double()
    if "knn" in TINY[method]:     # feature neighbours need sparse (bag-of-words-like) features
        x = x * (torch.rand(x.shape, generator=torch.Generator().manual_seed(1)) < 0.4)
    scores = []
    for d in (data, permuted):
        prob = proto._problem(d, x, tr, other, hide, 3, 0)
        scores.append(call_method(entry, m.options, prob, grid_points(m.grid)))
    assert len(scores[0]) == len(grid_points(m.grid)) > 1
    for a, b in zip(*scores):
        assert torch.equal(a, b)


def test_end_to_end_config_small(tmp_path, dataset_root, monkeypatch):
    monkeypatch.setenv("GRAPHSTK_DATA", str(dataset_root("Cora")))
    cfg = with_overrides(load_config(str(REPO / "configs" / "planetoid_features.yaml")), seeds=1, datasets=["Cora"])
    tiny = {"FeatureSTKR": {"depth": [8], "a": [0.5], "mix": ["last"], "sigma": [0.7], "beta": [1e-3]},
            "FeatureSTKR (i)": {"depth": [8], "a": [0.5], "mix": ["last"], "sigma": [0.7], "beta": [1e-3]},
            "KRR (features)": {"sigma": [0.7], "beta": [1e-3]}, "SGC (ridge)": {"K": [2], "beta": [1e-3]},
            "Label-Prop": {"eta": [0.9]}, "SGC": {"weight_decay": [5e-5]},
            **{k: v for k, v in TINY.items() if k not in ("FeatureSTKR", "FeatureSTKR (i)")}}
    methods = [dataclasses.replace(m, grid={**m.grid, **tiny.get(m.label, {"epochs": [2]})}) for m in cfg.methods]
    cfg = cfg.model_copy(update={"methods": methods})
    out = tmp_path / "out"
    res = run_experiment(cfg, str(out), progress=False)
    assert {p.name for p in out.iterdir()} >= {"results.json", "results.csv", "results.md"}
    rows = json.loads((out / "results.json").read_text())["rows"]
    assert len(rows) == 2 * len(cfg.methods)
    assert {r["options"]["fit_labels"] for r in rows} == {"train", "train+val"}
    by = {(r["method"], r["options"]["fit_labels"]): r for r in rows}
    assert by[("FeatureSTKR", "train")]["mean"] > 70 and by[("GCN", "train")]["paper"]["mean"] == 81.5
    assert by[("FeatureSTKR", "train+val")]["paper"] is None
    md = (out / "results.md").read_text()
    assert "fit_labels=train+val" in md and "time per seed (s)" in md
    assert res["rows"][0]["protocol"] == "planetoid"
