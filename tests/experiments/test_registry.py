"""Methods by name: the registry lists the registrations and suggests close names."""
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


def test_registry_lists_baselines_and_suggests_close_names():
    names = registered_methods()
    assert {"RLSC", "KRLSC", "LinearSVM"} <= set(names)
    assert get_method("KRLSC").needs == frozenset({"features"}) and get_method("KRLSC").task == "classification"
    with pytest.raises(UnknownMethodError, match=r"did you mean 'KRLSC'.*registered:"):
        get_method("KRLS")
    with pytest.raises(ValueError, match="already registered"):
        register_method(MethodEntry("RLSC", frozenset({"features"}), "classification", {"lam": [1.0]},
                                    Spy.fit_predict))
    with pytest.raises(ValueError, match="needs"):
        MethodEntry("x", frozenset({"pixels"}), "classification", {}, Spy.fit_predict)
    with pytest.raises(ValueError, match="task"):
        MethodEntry("x", frozenset({"features"}), "regression", {}, Spy.fit_predict)
