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


def test_shipped_names_map_to_the_module_that_registers_them():
    """``SHIPPED`` (the registry's map from a method name to its registration module) is complete and right."""
    from graphstk.experiments.registry import SHIPPED

    methods = registered_methods()
    assert set(SHIPPED) <= set(methods)
    for name, module in SHIPPED.items():
        assert methods[name].fit_predict.__module__.endswith(f".registrations.{module}"), name
    shipped = {n for n, e in methods.items() if ".registrations." in getattr(e.fit_predict, "__module__", "")}
    assert shipped == set(SHIPPED)


def test_a_config_loads_only_the_registrations_and_protocols_it_names():
    """A fresh interpreter parsing an STKR config imports the STKR registration and the node-classification
    protocol only; an unknown name still lists every method, without importing a method module."""
    import subprocess
    import sys

    code = ("import sys\nfrom graphstk.experiments.config import parse_config\n"
            "from graphstk.experiments.config import DEFAULT\nfrom graphstk.experiments.protocols import get_protocol\n"
            "from graphstk.experiments.registry import get_method\n"
            "get_protocol(parse_config(DEFAULT))\n"
            "try:\n    get_method('FredGaus')\nexcept ValueError as e:\n    print(e)\n"
            "print(sorted(m for m in sys.modules if '.registrations.' in m or '.protocols.' in m))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "did you mean 'FredGauss'" in out and "FredLin1" in out and "1CSVM" in out
    assert out.strip().splitlines()[-1] == str(["graphstk.experiments.protocols.base",
                                                "graphstk.experiments.protocols.node_classification",
                                                "graphstk.experiments.registrations.stkr"])
