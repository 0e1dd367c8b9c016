"""node-classification: the cache key and methods by name on graphs."""
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


def test_node_classification_cache_key_holds_everything_that_affects_the_result():
    from graphstk.experiments.datasets import load_spec

    cfg = parse_config({"seeds": 1, "p_test": 0.2, "planetoid_split": "random", "paper_table": None,
                        "datasets": [{"name": "Karate", "graph": {"kind": "karate_club", "train_per_class": 3,
                                                                   "val_per_class": 3}}],
                        "methods": ["LP (t)"]})
    proto = get_protocol(cfg)
    spec, (m,) = cfg.datasets[0], cfg.methods
    data = load_spec(spec, None)
    unit = proto.prepare(spec, data, 0.2, 0)
    payload = proto.payload(spec, "fp", 0.2, 0, unit, m, m.grid, "code")
    assert payload == {"protocol": "node-classification", "dataset": {"name": "Karate", "source": None,
                                                                       "graph": spec.graph},
                       "data": "fp", "p_test": 0.2, "seed": 0, "split": unit["sfp"], "method": "LP (t)",
                       "setting": "transductive", "options": {"labels": "onehot", "normalization": "symmetric"},
                       "grid": m.grid,
                       "solver": cfg.solver.model_dump(), "unreachable": "wrong", "device": "cpu",
                       "code": "code"}
    assert proto.label("Karate", "LP (t)", 0.2, 0) == "Karate_LP (t)_p0.2_s0"


# methods by name on graphs
def _neighbour_vote(problem: MethodInput, grid: list[dict]) -> list[torch.Tensor]:
    """A graph-only method: each eval node scores the labels of its labeled neighbours."""
    ei = problem.data.edge_index
    Y = torch.zeros(problem.num_points, problem.num_classes, dtype=torch.float64)
    lab = problem.labeled
    Y[lab, problem.y[lab]] = 1.0
    A = torch.zeros(problem.num_points, problem.num_points, dtype=torch.float64)
    A[ei[0], ei[1]] = 1.0
    F = Y
    out = []
    for p in grid:
        for _ in range(int(p["hops"])):
            F = A @ F + Y
        out.append(F[problem.eval].clone())
    return out


if "test-Vote" not in registered_methods():
    register_method(MethodEntry("test-Vote", frozenset({"graph"}), "classification", {"hops": [1, 2, 4]},
                                _neighbour_vote, "test only"))


def test_methods_by_name_run_in_the_node_classification_protocol(tmp_path):
    from graphstk.experiments.datasets import load_spec

    sbm = {"name": "SBM", "graph": {"kind": "sbm", "sizes": [40, 40], "p_in": 0.2, "p_out": 0.02, "seed": 0,
                                    "train_per_class": 3, "val_per_class": 5}}
    cfg = parse_config({"seeds": 2, "p_test": 0.3, "planetoid_split": "random", "paper_table": None,
                        "datasets": [sbm], "methods": ["test-Vote", "LP (t)"]})
    assert [m.engine for m in cfg.methods] == ["registry", "LabelPropagationFilter"]
    proto = get_protocol(cfg)
    data = load_spec(cfg.datasets[0], None)
    (m, _lp) = cfg.methods
    for rep in (0, 1):
        unit = proto.prepare(cfg.datasets[0], data, 0.3, rep)
        split = unit["split"]
        a = proto.evaluate(m, m.grid, data, unit, 0.3, rep)
        scrambled = data.clone()
        scrambled.y = (data.y + (torch.isin(torch.arange(data.num_nodes), split.test)).long()) % 2
        b = proto.evaluate(m, m.grid, scrambled, unit, 0.3, rep)
        assert a["chosen"] == b["chosen"] and [g["val_acc"] for g in a["grid"]] == [g["val_acc"] for g in b["grid"]]
        assert a["n_train"] == 6 and len(a["grid"]) == 3
    res = run_experiment(cfg, str(tmp_path), progress=False, log=lambda m: None)
    vote = res["rows"][0]
    assert vote["method"] == "test-Vote" and vote["metric"] == "accuracy" and vote["n_labeled"] == 6
    assert vote["engine"] == "registry" and vote["mean"] > 60
    # a method needing features on a graph without features: refused before any computation
    cfg = parse_config({"seeds": 1, "p_test": 0.3, "planetoid_split": "random", "paper_table": None,
                        "datasets": [sbm], "methods": ["KRLSC"]})
    with pytest.raises(ProtocolError, match="needs node features"):
        run_experiment(cfg, str(tmp_path / "x"), progress=False, log=lambda m: None)
