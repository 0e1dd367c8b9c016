"""Config errors of the vector protocols name the key, the value and the protocol that runs a method."""
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


@pytest.mark.parametrize("raw, words", [
    ({"protocol": "fixed-split"}, ["protocol", "did you mean 'fixed-splits'", "node-classification"]),
    ({"protocol": "fixed-splits", "n_labeled": [10], "datasets": ["Digitz1"]}, ["unknown dataset 'Digitz1'",
                                                                               "Digit1", "MNIST"]),
    ({"protocol": "fixed-splits", "n_labeled": [10], "methods": ["test-GraphOnly"]},
     ["is a node-classification method", "needs a graph", "this task's protocol is fixed-splits", "KRLSC"]),
    ({"protocol": "fixed-splits", "n_labeled": [10], "p_test": 0.1}, ["p_test", "node-classification protocol"]),
    ({"protocol": "labeled-per-class", "n_labeled": [10], "cv_folds": 3}, ["cv_folds", "fixed-splits"]),
    ({"protocol": "labeled-per-class"}, ["n_labeled", "missing"]),
    ({"protocol": "labeled-per-class", "n_labeled": [10], "methods": ["SP-Lap (t)"]},
     ["'SP-Lap (t)' is a node-classification method", "this task's protocol is labeled-per-class"]),
    ({"protocol": "fixed-splits", "n_labeled": [10], "methods": [{"label": "KRLSC", "grid": {"sigma": [-1]}}]},
     ["methods[0].grid.sigma[0]", "got -1"]),
    ({"protocol": "fixed-splits", "n_labeled": [10], "methods": [{"label": "KRLSC", "grid": {"sigma": [0]}}]},
     ["methods[0].grid.sigma[0]", "got 0"]),
    ({"protocol": "fixed-splits", "n_labeled": [10], "methods": [{"label": "KRLSC", "grid": {"lam": [-1]}}]},
     ["methods[0].grid.lam[0]", "got -1"]),
    ({"protocol": "labeled-per-class", "n_labeled": [3], "test": "held-out"}, ["test_size", "test_part"]),
    ({"protocol": "fixed-splits", "n_labeled": [10], "methods": [{"label": "KRLSC", "grid": {"gamma": [1]}}]},
     ["methods[0].grid.gamma", "unknown key", "sigma"]),
    ({"protocol": "fixed-splits", "n_labeled": [10], "methods": ["KRLS"]}, ["did you mean 'KRLSC'"]),
])
def test_config_errors_name_the_problem(raw, words):
    full = {"datasets": ["Digit1"], "methods": ["KRLSC"], **raw}
    with pytest.raises(ConfigError) as err:
        parse_config(full)
    for w in words:
        assert w in str(err.value), (w, str(err.value))


def test_nan_features_are_refused_by_the_loader_object():
    X = np.ones((6, 2))
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN or infinite"):
        VectorDataset.from_arrays(X, [0, 1] * 3)


# ------------------------------------------------------------------ generated dcsbm graphs
def _dcsbm_cfg(**graph):
    return {"name": "g", "seeds": 1, "p_test": 0.1, "methods": ["LP (t)"], "grid": {"eta": [0.9], "T": [4]},
            "datasets": [{"name": "G", "graph": {"kind": "dcsbm", **graph}}]}


def test_dcsbm_graph_entries_are_checked():
    (spec,) = parse_config(_dcsbm_cfg(nodes=400, edges=1600, classes=3, seed=1)).all_tasks()[0].datasets
    assert spec.graph == {"kind": "dcsbm", "nodes": 400, "edges": 1600, "classes": 3, "seed": 1}
    with pytest.raises(ConfigError, match="edges"):
        parse_config(_dcsbm_cfg(nodes=400))
    with pytest.raises(ConfigError, match="p_in"):
        parse_config(_dcsbm_cfg(nodes=400, edges=1600, p_in=0.1))
    with pytest.raises(ConfigError, match="nodes"):
        parse_config({**_dcsbm_cfg(), "datasets": [{"name": "G", "graph": {"kind": "sbm", "nodes": 5}}]})


def test_dcsbm_graph_runs_and_quick_shrinks_it(tmp_path):
    from graphstk.experiments.datasets import load_spec
    from graphstk.experiments.overrides import QUICK_DCSBM_NODES

    cfg = parse_config(_dcsbm_cfg(nodes=QUICK_DCSBM_NODES * 4, edges=QUICK_DCSBM_NODES * 16, classes=3,
                                  partitioned=str(tmp_path / "nowhere")))
    quick = cfg.with_overrides(quick=True)
    (spec,) = quick.all_tasks()[0].datasets
    assert spec.graph["nodes"] == QUICK_DCSBM_NODES and spec.graph["edges"] == QUICK_DCSBM_NODES * 4
    assert "partitioned" not in spec.graph          # the stored form is the large graph's
    data = load_spec(spec, None)                     # one process: generated whole
    assert int(data.num_nodes) == QUICK_DCSBM_NODES and int(data.y.max()) == 2
    res = run_experiment(quick, str(tmp_path / "run"), progress=False, log=lambda m: None, write=False)
    assert [r["method"] for r in res["rows"]] == ["LP (t)"]
