"""Small data and test doubles shared by the protocol tests: a subset of scikit-learn's digits with
supplied splits and parts, and registered methods that record the MethodInput they get."""
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


def _digits(n_per_class: int = 30, classes=(0, 1, 2), seed: int = 0) -> VectorDataset:
    """A small balanced subset of scikit-learn's digits, with 4 supplied splits at 6 and 12 labels
    and a train/test partition."""
    from sklearn.datasets import load_digits

    d = load_digits()
    rng = np.random.default_rng(seed)
    ids = np.concatenate([rng.choice(np.flatnonzero(d.target == c), n_per_class, replace=False) for c in classes])
    X, y = d.data[ids] / 16.0, d.target[ids]
    n = len(y)
    splits = {}
    for L in (6, 12):
        pairs = []
        for r in range(4):
            perm = np.random.default_rng(100 + r + L).permutation(n)
            pairs.append((np.sort(perm[:L]), np.sort(perm[L:])))
        splits[L] = pairs
    parts = {"train": np.arange(0, n, 2), "test": np.arange(1, n, 2)}
    return VectorDataset.from_arrays(X, y, name="TinyDigits", parts=parts, splits=splits)


class Spy:
    """A registered classification method recording every MethodInput it gets (nearest class mean,
    with a grid parameter that only rescales the scores of class 0)."""
    calls: list = []

    @staticmethod
    def fit_predict(problem: MethodInput, grid: list[dict]) -> list[torch.Tensor]:
        Spy.calls.append((problem, [dict(p) for p in grid]))
        X = torch.as_tensor(problem.X.toarray() if sp.issparse(problem.X) else problem.X)
        means = torch.zeros(problem.num_classes, X.shape[1], dtype=torch.float64)
        for c in range(problem.num_classes):
            ids = problem.labeled[problem.y[problem.labeled] == c]
            if ids.numel():
                means[c] = X[ids].mean(0)
        d = -torch.cdist(X[problem.eval], means)
        return [d + torch.tensor([p["shift"]] + [0.0] * (problem.num_classes - 1)) for p in grid]


class OneClassSpy:
    calls: list = []

    @staticmethod
    def fit_predict(problem: MethodInput, grid: list[dict]) -> list[torch.Tensor]:
        OneClassSpy.calls.append((problem, grid))
        X = torch.as_tensor(problem.X)
        K = torch.exp(-torch.cdist(X[problem.eval], X[problem.labeled]) ** 2 / (2 * grid[0]["width"] ** 2))
        return [K.mean(1) for _ in grid]


def _register_test_methods():
    have = registered_methods()
    if "test-Spy" not in have:
        register_method(MethodEntry("test-Spy", frozenset({"features"}), "classification",
                                    {"shift": [0.0, 0.3, -0.3]}, Spy.fit_predict, "test only"))
    if "test-OneClass" not in have:
        register_method(MethodEntry("test-OneClass", frozenset({"features"}), "one-class", {"width": [1.0]},
                                    OneClassSpy.fit_predict, "test only"))
    if "test-GraphOnly" not in have:
        register_method(MethodEntry("test-GraphOnly", frozenset({"graph"}), "classification", {"a": [1]},
                                    Spy.fit_predict, "test only"))


_register_test_methods()


def _cfg(**kw):
    return parse_config({"name": "t", **kw})


# fixtures (imported by the test modules that use them)
@pytest.fixture(autouse=True)
def _one_thread():
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


@pytest.fixture(scope="module")
def tiny():
    return _digits()


@pytest.fixture
def fake_loader(monkeypatch, tiny):
    """Every vector dataset entry loads the tiny digits (part / n_per_class / options still applied)."""
    calls = []

    def load(name, root=None, **options):
        calls.append((name, options))
        return tiny

    monkeypatch.setattr("graphstk.data.vector.load_vector_dataset", load)
    return calls

def _scramble(ds, ids):
    y = ds.y.clone()
    C = ds.num_classes
    y[ids] = (y[ids] + 1 + torch.arange(ids.numel()) % (C - 1)) % C
    assert bool((y[ids] != ds.y[ids]).all())
    return VectorDataset(ds.name, ds.X, y, ds.classes, ds.parts, ds.splits)
