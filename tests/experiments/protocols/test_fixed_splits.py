"""fixed-splits: folds, no unlabeled label in any fit, selection blind to test labels, bad input."""
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


def test_cv_folds_leave_one_out_at_10_labels_and_stratified_at_100():
    y10 = torch.tensor([0] * 6 + [1] * 4)
    folds, strat = cv_folds(y10, 10, seed=0)
    assert not strat and len(folds) == 10 and all(len(va) == 1 for _, va in folds)
    y100 = torch.tensor([0] * 50 + [1] * 30 + [2] * 20)
    folds, strat = cv_folds(y100, 10, seed=3)
    assert strat and len(folds) == 10
    held = np.concatenate([va for _, va in folds])
    assert sorted(held.tolist()) == list(range(100))            # the folds partition the labeled points
    for tr, va in folds:
        assert not set(tr) & set(va)
        assert np.bincount(y100.numpy()[va]).tolist() == [5, 3, 2]   # stratified
    assert [v.tolist() for _, v in cv_folds(y100, 10, seed=3)[0]] == [v.tolist() for _, v in folds]


def test_cv_folds_leave_one_out_at_any_label_count():
    y100 = torch.tensor([0] * 50 + [1] * 30 + [2] * 20)
    folds, strat = cv_folds(y100, "leave-one-out", seed=3)
    assert not strat and len(folds) == 100
    held = sorted(int(va[0]) for _, va in folds)
    assert held == list(range(100)) and all(len(va) == 1 and len(tr) == 99 for tr, va in folds)
    with pytest.raises(ProtocolError, match="leave-one-out"):
        cv_folds(y100, "loocv", seed=0)


def test_config_cv_folds_accepts_leave_one_out_and_names_the_choices():
    cfg = _cfg(protocol="fixed-splits", n_labeled=[10], datasets=["Digit1"], methods=["KRLSC"],
               cv_folds="leave-one-out")
    assert cfg.protocol_options["cv_folds"] == "leave-one-out"
    assert _cfg(protocol="fixed-splits", n_labeled=[10], datasets=["Digit1"], methods=["KRLSC"],
                cv_folds="LOO").protocol_options["cv_folds"] == "leave-one-out"
    with pytest.raises(ConfigError, match="leave-one-out"):
        _cfg(protocol="fixed-splits", n_labeled=[10], datasets=["Digit1"], methods=["KRLSC"], cv_folds="all")


def _fixed(**kw):
    return _cfg(**{"protocol": "fixed-splits", "n_labeled": [6, 12], "datasets": ["Digits"],
                   "methods": ["test-Spy"], **kw})


def test_fixed_splits_problems_never_carry_unlabeled_labels(tiny):
    cfg = _fixed(cv_folds=3)
    proto = get_protocol(cfg)
    (m,) = cfg.methods
    Spy.calls.clear()
    unit = proto.prepare(cfg.datasets[0], tiny, 12, 1)
    rec = proto.evaluate(m, m.grid, tiny, unit, 12, 1)
    L, U = unit["labeled"], unit["unlabeled"]
    assert not set(L.tolist()) & set(U.tolist())
    assert len(Spy.calls) == 3 + 1                    # one call per fold with the whole grid, then the refit
    for prob, pts in Spy.calls[:3]:
        assert len(pts) == 3
        assert set(prob.labeled.tolist()) | set(prob.eval.tolist()) == set(L.tolist())
        assert not set(prob.eval.tolist()) & set(U.tolist())                   # never scored on test points in CV
        assert bool((prob.y[U] == -1).all()) and bool((prob.y[prob.eval] == -1).all())
        assert torch.equal(prob.y[prob.labeled], tiny.y[prob.labeled])
    final, pts = Spy.calls[3]
    assert pts == [rec["chosen"]] and torch.equal(final.eval, U) and torch.equal(final.labeled, L)
    assert bool((final.y[U] == -1).all())
    assert rec["n_labeled"] == 12 and rec["n_test"] == tiny.num_points - 12 and rec["n_folds"] == 3


def test_fixed_splits_leave_one_out_calls_the_method_once_per_labeled_point(tiny):
    cfg = _fixed(cv_folds="leave-one-out")
    proto = get_protocol(cfg)
    (m,) = cfg.methods
    Spy.calls.clear()
    unit = proto.prepare(cfg.datasets[0], tiny, 12, 0)
    rec = proto.evaluate(m, m.grid, tiny, unit, 12, 0)
    assert len(Spy.calls) == 12 + 1 and rec["n_folds"] == 12
    held = sorted(int(prob.eval[0]) for prob, _ in Spy.calls[:12])
    assert all(prob.eval.numel() == 1 for prob, _ in Spy.calls[:12])
    assert held == sorted(unit["labeled"].tolist())
    assert "leave-one-out" in proto.describe()["selection"]



@pytest.mark.parametrize("method", ["test-Spy", "KRLSC"])
def test_fixed_splits_scrambling_test_labels_keeps_every_choice(tiny, method):
    cfg = _fixed(cv_folds=4, methods=[{"label": method, "grid": {"lam": [1e-3, 1e-1, 10.0]}} if method == "KRLSC"
                                      else method])
    proto = get_protocol(cfg)
    (m,) = cfg.methods
    for level in (6, 12):
        for rep in range(4):
            unit = proto.prepare(cfg.datasets[0], tiny, level, rep)
            a = proto.evaluate(m, m.grid, tiny, unit, level, rep)
            b = proto.evaluate(m, m.grid, _scramble(tiny, unit["unlabeled"]), unit, level, rep)
            assert a["chosen"] == b["chosen"] and [g["val"] for g in a["grid"]] == [g["val"] for g in b["grid"]]
            assert a == {**b, "test": a["test"], "wall_time_s": a["wall_time_s"]}   # deterministic otherwise


def test_fixed_splits_bad_input(tiny):
    proto = get_protocol(_cfg(protocol="fixed-splits", n_labeled=[7], datasets=["Digits"], methods=["KRLSC"]))
    with pytest.raises(ProtocolError, match=r"no supplied splits with 7 labeled points.*\[6, 12\]"):
        proto.check(proto.cfg.datasets[0], tiny)
    proto = get_protocol(_cfg(protocol="fixed-splits", n_labeled=[6], splits=[0, 9], datasets=["Digits"],
                              methods=["KRLSC"]))
    with pytest.raises(ProtocolError, match=r"split indices \[9\] do not exist"):
        proto.check(proto.cfg.datasets[0], tiny)
    bad = _digits()
    lab, unl = bad.splits[6][2]
    bad.splits[6][2] = (lab, torch.cat([unl, lab[:1]]))          # an overlapping split set
    proto = get_protocol(_cfg(protocol="fixed-splits", n_labeled=[6], datasets=["Digits"], methods=["KRLSC"]))
    with pytest.raises(ProtocolError, match="split 2 at 6 labels: the labeled and unlabeled sets overlap"):
        proto.check(proto.cfg.datasets[0], bad)
    with pytest.raises(ValueError, match="not a partition"):     # the dataset object refuses it as well
        VectorDataset(bad.name, bad.X, bad.y, bad.classes, {}, {6: bad.splits[6]})
    with pytest.raises(ConfigError, match="instead of 'seeds'"):
        _cfg(protocol="fixed-splits", n_labeled=[6], seeds=3, datasets=["Digits"], methods=["KRLSC"])
