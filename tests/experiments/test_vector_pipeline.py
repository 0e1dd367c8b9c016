"""The vector protocols end to end: resume, multi-task overrides, paper numbers, dataset entries, shipped configs."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from graphstk.data.vector import VectorDataset
from graphstk.experiments import vector_data
from graphstk.experiments.config import ConfigError, parse_config
from graphstk.experiments.pipeline import run_experiment
from graphstk.experiments.protocols import (FixedSplits, LabeledPerClass, OneClass, ProtocolError, cv_folds,
                                            draw_labeled_per_class, get_protocol)
from graphstk.experiments.registry import (MethodEntry, MethodInput, UnknownMethodError, get_method, register_method,
                                           registered_methods)

from vector_doubles import OneClassSpy, Spy, _cfg, _digits, _one_thread, _scramble, fake_loader, tiny  # noqa: F401


def _rows(res):
    return [{k: v for k, v in r.items() if k != "wall_time_s"} for r in res["rows"]]


def test_end_to_end_every_vector_protocol_and_resume(tmp_path, fake_loader):
    raw = {"name": "e2e", "tasks": [
        {"name": "fs", "protocol": "fixed-splits", "n_labeled": [6, 12], "splits": [0, 1], "cv_folds": 3,
         "datasets": ["Digits"], "methods": ["RLSC", {"label": "KRLSC", "grid": {"sigma": [0.5, 1.0]}}]},
        {"name": "lpc", "protocol": "labeled-per-class", "n_labeled": [2, 4], "seeds": 2,
         "datasets": [{"name": "Half", "source": "Digits", "n_per_class": 20}], "methods": ["LinearSVM"]},
        {"name": "oc", "protocol": "one-class", "seeds": 2, "n_train": 8, "n_test": 12, "train_pool": None,
         "test_pool": None, "datasets": ["Digits 0vs1"],
         "methods": [{"label": "test-OneClass", "sweep": {"param": "width", "values": [0.5, 2.0]}}]},
    ]}
    cfg = parse_config(raw)
    res = run_experiment(cfg, str(tmp_path / "a"), progress=False, log=lambda m: None)
    rows = res["rows"]
    assert [(r["task"], r["method"], r["n_labeled"]) for r in rows] == [
        ("fs", "RLSC", 6), ("fs", "RLSC", 12), ("fs", "KRLSC", 6), ("fs", "KRLSC", 12),
        ("lpc", "LinearSVM", 2), ("lpc", "LinearSVM", 4), ("oc", "test-OneClass", 8), ("oc", "test-OneClass", 8)]
    for r in rows:
        assert {"dataset", "method", "setting", "p_test", "seeds", "test_acc", "mean", "std", "best_params",
                "paper", "metric", "n_labeled", "n_labeled_unit", "protocol"} <= set(r)
        assert r["p_test"] is None and r["paper"] is None and len(r["test_acc"]) == 2
    assert {r["metric"] for r in rows if r["task"] != "oc"} == {"error"}
    assert all(r["metric"] == "auc" and 0 <= r["mean"] <= 1 for r in rows if r["task"] == "oc")
    assert [r["seeds"] for r in rows[:1]] == [[0, 1]]                      # split indices
    assert rows[0]["n_labeled_unit"] == "per split" and rows[4]["n_labeled_unit"] == "per class"
    assert [r["sweep"] for r in rows[-2:]] == [{"width": 0.5}, {"width": 2.0}]
    assert rows[4]["dataset"] == "Half" and max(rows[4]["n_test"]) == 60 - 2 * 3 * 2
    js = json.loads((tmp_path / "a" / "results.json").read_text())
    assert set(js["protocol"]) == {"fs", "lpc", "oc"} and js["config"]["tasks"][0]["protocol"] == "fixed-splits"
    md = (tmp_path / "a" / "results.md").read_text()
    assert "## Task fs: fixed-splits" in md and "| n_labeled |" in md and "error %" in md and "AUC" in md
    csv_text = (tmp_path / "a" / "results.csv").read_text()
    assert csv_text.count("\n") == 1 + len(rows) and ",fixed-splits,error," in csv_text
    again = run_experiment(cfg, str(tmp_path / "a"), progress=False, log=lambda m: None)
    assert again["cache"]["computed"] == 0 and _rows(again) == _rows(res)
    fresh = run_experiment(cfg, str(tmp_path / "b"), progress=False, log=lambda m: None)
    assert _rows(fresh) == _rows(res)                                       # deterministic


def test_multi_task_overrides_and_paper_numbers(tmp_path, fake_loader, monkeypatch):
    cfg = parse_config({"name": "mt", "seeds": 3, "tasks": [
        {"name": "g", "p_test": 0.2, "planetoid_split": "random",
         "datasets": [{"name": "Karate", "graph": {"kind": "karate_club", "train_per_class": 3,
                                                    "val_per_class": 3}}],
         "methods": [{"label": "LP (t)", "grid": {"eta": [0.9], "T": [4]}}], "paper_table": None},
        {"name": "v", "protocol": "labeled-per-class", "n_labeled": [3], "datasets": ["Digits"],
         "methods": [{"label": "RLSC", "grid": {"lam": [0.1]}}], "paper": "i9runner_test"}]})
    assert [t.task for t in cfg.tasks] == ["g", "v"] and [d.name for d in cfg.datasets] == ["Karate", "Digits"]
    only = cfg.with_overrides(datasets=["digits"], seeds=2)
    assert [t.task for t in only.tasks] == ["v"] and only.tasks[0].seeds == [0, 1]
    with pytest.raises(ConfigError, match="--datasets"):
        cfg.with_overrides(datasets=["Cora"])
    with pytest.raises(ConfigError, match=r"tasks\[1\]\.n_labeled"):
        parse_config({"tasks": [{"datasets": ["Cora"], "methods": ["LP (t)"]},
                                {"protocol": "labeled-per-class", "n_labeled": [0], "datasets": ["Digits"],
                                 "methods": ["RLSC"]}]})
    res = run_experiment(cfg.with_overrides(seeds=2), str(tmp_path), progress=False, log=lambda m: None)
    g, v = res["rows"]
    assert g["protocol"] == "node-classification" and g["metric"] == "accuracy" and g["n_labeled"] == 6
    assert g["p_test"] == 0.2 and v["p_test"] is None and v["task"] == "v"
    assert v["paper"] == {"mean": 12.5, "std": 1.5, "source": "Table 9"}
    assert "## Task g: node-classification" in (tmp_path / "results.md").read_text()


@pytest.fixture(autouse=True)
def _paper_file(monkeypatch, tmp_path_factory):
    """A paper_numbers file for the tests (the real ones come from the method branches)."""
    from graphstk.experiments import paper as paper_mod

    d = tmp_path_factory.mktemp("paper_numbers")
    (d / "i9runner_test.json").write_text(json.dumps({"paper": "test", "entries": [
        {"source": "Table 9", "dataset": "digits", "method": "RLSC", "protocol": "labeled-per-class",
         "n_labeled": 3, "metric": "error", "mean": 12.5, "std": 1.5},
        {"source": "Table 9", "dataset": "Digits", "method": "RLSC", "n_labeled": 4, "metric": "error",
         "mean": 1.0, "std": None, "sweep": {"lam": 0.1}}]}))
    monkeypatch.setattr(paper_mod, "_DIR", str(d))
    paper_mod.paper_numbers.cache_clear()
    yield
    paper_mod.paper_numbers.cache_clear()


def test_vector_paper_cell_matching():
    from graphstk.experiments.paper import paper_files, vector_paper_cell

    assert "i9runner_test" in paper_files()
    cell = vector_paper_cell("i9runner_test", "auto", "Digits", "RLSC", 3, "error", "labeled-per-class")
    assert cell == {"mean": 12.5, "std": 1.5, "source": "Table 9"}
    assert vector_paper_cell("i9runner_test", "Table 1", "Digits", "RLSC", 3, "error", "labeled-per-class") is None
    assert vector_paper_cell("i9runner_test", "auto", "Digits", "RLSC", 3, "error", "fixed-splits") is None
    assert vector_paper_cell("i9runner_test", "auto", "Digits", "RLSC", 4, "error", "x") is None
    assert vector_paper_cell("i9runner_test", "auto", "Digits", "RLSC", 4, "error", "x", {"lam": 0.1})["mean"] == 1.0
    assert vector_paper_cell(None, "auto", "Digits", "RLSC", 3, "error", "labeled-per-class") is None


def test_dataset_entry_part_and_balanced_subsample(tiny, fake_loader):
    cfg = _cfg(protocol="labeled-per-class", n_labeled=[2], datasets=[
        {"name": "P", "source": "Digits", "part": "test"},
        {"name": "S", "source": "Digits", "n_per_class": 5, "subsample_seed": 3, "options": {"dtype": "x"}}],
        methods=["RLSC"])
    p = vector_data.load_vector_spec(cfg.datasets[0], None)
    assert p.num_points == tiny.parts["test"].numel()
    assert torch.equal(p.y, tiny.y[torch.sort(tiny.parts["test"]).values]) and p.splits == {}
    s = vector_data.load_vector_spec(cfg.datasets[1], None)
    assert torch.bincount(s.y).tolist() == [5, 5, 5] and fake_loader[-1] == ("Digits", {"dtype": "x"})
    assert torch.equal(vector_data.load_vector_spec(cfg.datasets[1], None).X, s.X)      # seeded
    noisy = _cfg(protocol="labeled-per-class", n_labeled=[2], methods=["RLSC"], datasets=[
        {"name": "N", "source": "Digits", "part": "train", "noise_std": 0.3, "noise_seed": 1}])
    nz = vector_data.load_vector_spec(noisy.datasets[0], None)
    clean = tiny.X[torch.sort(tiny.parts["train"]).values]
    assert float((nz.X - clean).std()) == pytest.approx(0.3, rel=0.1)
    assert torch.equal(vector_data.load_vector_spec(noisy.datasets[0], None).X, nz.X)
    bad = _cfg(protocol="labeled-per-class", n_labeled=[2], datasets=[{"name": "B", "source": "Digits",
                                                                         "part": "validation"}], methods=["RLSC"])
    with pytest.raises(ValueError, match="no part 'validation'"):
        vector_data.load_vector_spec(bad.datasets[0], None)


def test_shipped_vector_configs_parse():
    from graphstk.experiments.config import load_config

    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    cfg = load_config(os.path.join(repo, "configs", "ssl_benchmark_rlsc.yaml"))
    assert cfg.protocol == "fixed-splits" and cfg.protocol_options["n_labeled"] == [10, 100]
    assert [d.name for d in cfg.datasets] == ["Digit1", "USPS", "COIL2", "BCI", "g241c", "COIL", "g241d", "Text"]
    assert [m.label for m in cfg.methods] == ["KRLSC"]
    quick = load_config(os.path.join(repo, "configs", "quick.yaml"))
    assert {t.protocol for t in quick.all_tasks()} == {"node-classification", "labeled-per-class"}
