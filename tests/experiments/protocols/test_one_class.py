"""one-class: sets, AUC, determinism and bad input."""
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


def _one_class(**kw):
    base = dict(protocol="one-class", seeds=3, n_train=8, n_test=12, train_pool=40, test_pool=30,
                datasets=["Digits 1vs2"], methods=["test-OneClass"])
    return _cfg(**{**base, **kw})


def test_one_class_sets_auc_and_determinism(tiny):
    from sklearn.metrics import roc_auc_score

    cfg = _one_class()
    proto = get_protocol(cfg)
    spec = cfg.datasets[0]
    assert spec.vector == {"positive": 1, "negative": 2} and spec.source == "Digits"
    proto.check(spec, tiny)
    (m,) = cfg.methods
    train_part, test_part = set(tiny.parts["train"].tolist()), set(tiny.parts["test"].tolist())
    pool_tr, pool_te = proto._pools(spec, tiny, 0)                 # class-balanced reduced sets (40 // 3, 30 // 3)
    assert torch.bincount(tiny.y[pool_tr]).tolist() == [13, 13, 13]
    assert torch.bincount(tiny.y[pool_te]).tolist() == [10, 10, 10]
    assert not torch.equal(proto._pools(spec, tiny, 1)[0], pool_tr)     # redrawn per trial (pool_seed: null)
    for rep in cfg.seeds:
        OneClassSpy.calls.clear()
        unit = proto.prepare(spec, tiny, 8, rep)
        tr, te = unit["train"], unit["test"]
        assert set(tr.tolist()) <= train_part and set(te.tolist()) <= test_part
        assert bool((tiny.y[tr] == 1).all()) and set(tiny.y[te].tolist()) == {1, 2} and te.numel() == 12
        rec = proto.evaluate(m, m.grid, tiny, unit, 8, rep)
        (prob, _), = OneClassSpy.calls
        assert prob.num_classes == 1 and prob.unlabeled.numel() == 0 and torch.equal(prob.eval, te)
        assert bool((prob.y[te] == -1).all())
        scores = OneClassSpy.fit_predict(prob, [{"width": 1.0}])[0]
        assert rec["test"] == pytest.approx(roc_auc_score((tiny.y[te] == 1).numpy(), scores.numpy()))
        assert 0.0 <= rec["test"] <= 1.0
        again = proto.prepare(spec, tiny, 8, rep)
        assert torch.equal(again["train"], tr) and torch.equal(again["test"], te)


def test_one_class_bad_input(tiny):
    with pytest.raises(ConfigError, match="one-class task names its classes"):
        _one_class(datasets=["Digits"])
    with pytest.raises(ConfigError, match="one-class protocol needs a one-class method"):
        _one_class(methods=["KRLSC"])
    with pytest.raises(ConfigError, match="classification protocol|needs a classification method"):
        _cfg(protocol="labeled-per-class", n_labeled=[2], datasets=["Digits"], methods=["test-OneClass"])
    proto = get_protocol(_one_class(methods=[{"label": "test-OneClass", "grid": {"width": [1.0, 2.0]}}]))
    with pytest.raises(ProtocolError, match="no labels to select"):
        proto.check(proto.cfg.datasets[0], tiny)
    proto = get_protocol(_one_class(n_train=20))
    with pytest.raises(ProtocolError, match="fewer than n_train = 20"):
        proto.check(proto.cfg.datasets[0], tiny)
    proto = get_protocol(_one_class(datasets=["Digits 1vs7"]))
    with pytest.raises(ProtocolError, match="has no class 7"):
        proto.check(proto.cfg.datasets[0], tiny)
