"""Protocols of the one pipeline (fixed-splits, labeled-per-class, one-class), methods by name and
the supervised baselines: set invariants, determinism, no test label in model selection,
tiny end-to-end runs, and bad input refused before any computation."""
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
from graphstk.experiments.registry import (MethodEntry, Problem, UnknownMethodError, get_method, register_method,
                                           registered_methods)


@pytest.fixture(autouse=True)
def _one_thread():
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


# ----------------------------------------------------------------------------- small data
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


class Spy:
    """A registered classification method recording every Problem it gets (nearest class mean,
    with a grid parameter that only rescales the scores of class 0)."""
    calls: list = []

    @staticmethod
    def fit_predict(problem: Problem, grid: list[dict]) -> list[torch.Tensor]:
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
    def fit_predict(problem: Problem, grid: list[dict]) -> list[torch.Tensor]:
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


# ----------------------------------------------------------------------------- registry
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


def _problem(X, y, labeled, eval_ids, C):
    ym = torch.full_like(y, -1)
    ym[labeled] = y[labeled]
    rest = torch.tensor(sorted(set(range(len(y))) - set(labeled.tolist())))
    return Problem(X=X, data=None, y=ym, labeled=labeled, unlabeled=rest, eval=eval_ids, num_classes=C, seed=0)


def test_rlsc_and_krlsc_equal_an_independent_kernel_ridge():
    """Scores against scikit-learn's KernelRidge (alpha = l * lam) on one-vs-rest +-1 targets."""
    from sklearn.kernel_ridge import KernelRidge

    g = torch.Generator().manual_seed(0)
    X = torch.randn(40, 5, generator=g, dtype=torch.float64)
    y = torch.randint(0, 3, (40,), generator=g)
    L, E = torch.arange(0, 15), torch.arange(15, 40)
    prob = _problem(X, y, L, E, 3)
    T = -np.ones((15, 3))
    T[np.arange(15), y[L].numpy()] = 1.0
    lin = get_method("RLSC")
    (s,) = lin.fit_predict(prob, lin.points({"lam": [0.1]}))
    ref = KernelRidge(alpha=15 * 0.1, kernel="linear").fit(X[L].numpy(), T).predict(X[E].numpy())
    np.testing.assert_allclose(s.numpy(), ref, rtol=1e-8, atol=1e-10)
    gau = get_method("KRLSC")
    from scipy.spatial.distance import pdist

    m = float(np.median(pdist(X.numpy())))        # all 40 points are fit points (labeled + unlabeled)
    (s,) = gau.fit_predict(prob, gau.points({"sigma": [0.7], "lam": [1e-3]}))
    ref = KernelRidge(alpha=15 * 1e-3, kernel="rbf", gamma=1 / (2 * (0.7 * m) ** 2)).fit(
        X[L].numpy(), T).predict(X[E].numpy())
    np.testing.assert_allclose(s.numpy(), ref, rtol=1e-7, atol=1e-9)


def test_baselines_accept_sparse_features_with_the_same_scores():
    g = torch.Generator().manual_seed(1)
    X = torch.rand(30, 8, generator=g, dtype=torch.float64) * (torch.rand(30, 8, generator=g) < 0.3)
    y = torch.arange(30) % 2
    prob_d = _problem(X, y, torch.arange(10), torch.arange(10, 30), 2)
    prob_s = _problem(sp.csr_matrix(X.numpy()), y, torch.arange(10), torch.arange(10, 30), 2)
    for name in ("RLSC", "KRLSC", "LinearSVM"):
        e = get_method(name)
        pts = e.points({k: v[:2] for k, v in e.grid.items()})
        for a, b in zip(e.fit_predict(prob_d, pts), e.fit_predict(prob_s, pts)):
            assert a.shape == (20, 2)
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-8)


def test_linear_svm_is_sklearn_linearsvc_and_survives_a_single_labeled_class():
    from sklearn.svm import LinearSVC

    g = torch.Generator().manual_seed(2)
    X = torch.randn(30, 4, generator=g, dtype=torch.float64)
    y = torch.arange(30) % 3
    prob = _problem(X, y, torch.arange(12), torch.arange(12, 30), 3)
    (s,) = get_method("LinearSVM").fit_predict(prob, [{"C": 1.0}])
    ref = LinearSVC(C=1.0, dual="auto", max_iter=10000, random_state=0).fit(X[:12].numpy(), y[:12].numpy())
    np.testing.assert_allclose(s.numpy(), ref.decision_function(X[12:].numpy()))
    one = _problem(X, torch.zeros(30, dtype=torch.long), torch.arange(5), torch.arange(5, 30), 3)
    (s,) = get_method("LinearSVM").fit_predict(one, [{"C": 1.0}])
    assert bool((s.argmax(1) == 0).all())


# ----------------------------------------------------------------------------- fixed-splits
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


def _scramble(ds, ids):
    y = ds.y.clone()
    C = ds.num_classes
    y[ids] = (y[ids] + 1 + torch.arange(ids.numel()) % (C - 1)) % C
    assert bool((y[ids] != ds.y[ids]).all())
    return VectorDataset(ds.name, ds.X, y, ds.classes, ds.parts, ds.splits)


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


# ----------------------------------------------------------------------------- labeled-per-class
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


# ----------------------------------------------------------------------------- one-class
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


# ----------------------------------------------------------------------------- config errors
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


# ----------------------------------------------------------------------------- end to end
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

    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    cfg = load_config(os.path.join(repo, "configs", "ssl_benchmark_rlsc.yaml"))
    assert cfg.protocol == "fixed-splits" and cfg.protocol_options["n_labeled"] == [10, 100]
    assert [d.name for d in cfg.datasets] == ["Digit1", "USPS", "COIL2", "BCI", "g241c", "COIL", "g241d", "Text"]
    assert [m.label for m in cfg.methods] == ["KRLSC"]
    quick = load_config(os.path.join(repo, "configs", "quick.yaml"))
    assert {t.protocol for t in quick.all_tasks()} == {"node-classification", "labeled-per-class"}


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
                       "setting": "transductive", "options": {"labels": "onehot"}, "grid": m.grid,
                       "solver": cfg.solver.model_dump(), "unreachable": "wrong", "device": "cpu",
                       "code": "code"}
    assert proto.label("Karate", "LP (t)", 0.2, 0) == "Karate_LP (t)_p0.2_s0"


# ----------------------------------------------------------------------------- methods by name on graphs
def _neighbour_vote(problem: Problem, grid: list[dict]) -> list[torch.Tensor]:
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
    assert [m.engine for m in cfg.methods] == ["registry", "lp"]
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
