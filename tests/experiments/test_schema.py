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
