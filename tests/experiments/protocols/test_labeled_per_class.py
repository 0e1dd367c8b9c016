"""labeled-per-class: draw invariants, selection blind to test labels, too many labels refused early."""
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


@pytest.mark.parametrize("mode", ["unlabeled", "held-out-size", "held-out-part"])
def test_labeled_per_class_draw_invariants(tiny, mode):
    kw = {"unlabeled": {}, "held-out-size": {"test": "held-out", "test_size": 20},
          "held-out-part": {"test": "held-out", "test_ids": tiny.parts["test"]}}[mode]
    d = draw_labeled_per_class(tiny.y, 3, 4, 3, seed=5, n_unlabeled=None, **kw)
    again = draw_labeled_per_class(tiny.y, 3, 4, 3, seed=5, n_unlabeled=None, **kw)
    assert all(torch.equal(d[k], again[k]) for k in d)                      # deterministic
    assert torch.bincount(tiny.y[d["labeled"]]).tolist() == [4, 4, 4]
    assert torch.bincount(tiny.y[d["val"]]).tolist() == [3, 3, 3]
    L, V, U, T = (set(d[k].tolist()) for k in ("labeled", "val", "unlabeled", "test"))
    assert not L & V and not L & U and not V & U and not (L | V) & T
    if mode == "unlabeled":
        assert T == U and len(L | V | U) == tiny.num_points
    else:
        assert not T & U and len(L | V | U | T) == tiny.num_points
    if mode == "held-out-part":
        assert T == set(tiny.parts["test"].tolist())
    if mode == "held-out-size":
        assert len(T) == 20
    bigger = draw_labeled_per_class(tiny.y, 3, 6, 3, seed=5, **kw)
    assert torch.equal(bigger["labeled"].view(3, 6)[:, :4].flatten(), d["labeled"])   # nested in k


def test_labeled_per_class_scrambling_test_labels_keeps_every_choice(tiny):
    for test in ({"test": "unlabeled"}, {"test": "held-out", "test_size": 0.3}):
        cfg = _cfg(protocol="labeled-per-class", n_labeled=[3], val_per_class=4, seeds=3, datasets=["Digits"],
                   methods=["test-Spy", {"label": "KRLSC", "grid": {"lam": [1e-4, 1e-1]}}], **test)
        proto = get_protocol(cfg)
        for m in cfg.methods:
            for rep in cfg.seeds:
                Spy.calls.clear()
                unit = proto.prepare(cfg.datasets[0], tiny, 3, rep)
                a = proto.evaluate(m, m.grid, tiny, unit, 3, rep)
                b = proto.evaluate(m, m.grid, _scramble(tiny, unit["test"]), unit, 3, rep)
                assert a["chosen"] == b["chosen"] and [g["val"] for g in a["grid"]] == [g["val"] for g in b["grid"]]
                for prob, _ in Spy.calls:
                    assert torch.equal(prob.labeled, unit["labeled"])
                    assert bool((prob.y[torch.cat([unit["val"], unit["test"]])] == -1).all())
                    assert int((prob.y >= 0).sum()) == unit["labeled"].numel()
                    if test["test"] == "held-out":
                        assert not set(prob.unlabeled.tolist()) & set(unit["test"].tolist())


def test_labeled_per_class_too_many_labels_is_refused_before_any_computation(tiny, fake_loader, tmp_path):
    Spy.calls.clear()
    cfg = _cfg(protocol="labeled-per-class", n_labeled=[5, 25], val_per_class=10, seeds=2, datasets=["Digits"],
               methods=["test-Spy"])
    with pytest.raises(ProtocolError, match=r"class 0 has 30 points available, fewer than n_labeled \+ "
                                            r"val_per_class = 25 \+ 10"):
        run_experiment(cfg, str(tmp_path), progress=False, log=lambda m: None)
    assert Spy.calls == [] and not (tmp_path / "cache").exists()
