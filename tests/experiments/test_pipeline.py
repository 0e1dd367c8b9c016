"""The pipeline end to end (outputs, cache and resume) and the node-classification protocol's
selection (Appendix D of the STKR paper) through the registered STKR methods."""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys

import pytest
import torch

from graphstk.experiments import cache as cache_mod
from graphstk.experiments import pipeline as pipeline_mod
from graphstk.experiments.config import parse_config
from graphstk.experiments.datasets import load_spec
from graphstk.experiments.metrics import accuracies, accuracy, select
from graphstk.experiments.pipeline import RunError, run_experiment
from graphstk.experiments.kernels import GraphKernelFactory, KernelCache
from graphstk.experiments.protocols import get_protocol
from graphstk.experiments.registrations.stkr import PARAMS, graph_kernel
from graphstk.experiments.registry import MethodEntry, register_method

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _standin_scores(problem, points):
    """A deterministic stand-in for a graph method (truncated label propagation on the problem's kernel)."""
    kernel = graph_kernel(problem)
    S = kernel.S.to_dense()
    Y0 = torch.zeros(kernel.num_visible, problem.num_classes, dtype=S.dtype)
    Y0[kernel.local(problem.labeled), problem.y[problem.labeled]] = 1.0
    R = kernel.rows(problem.eval).to_dense()
    out = []
    for p in points:
        F = Y0.clone()
        for _ in range(int(p.get("T", p.get("k", 6)))):
            F = p.get("eta", 0.9) * (S @ F) + Y0
        out.append(R @ F + 1e-3 * p.get("beta", 0.0))
    return out


CALLS: list = []    # what the spy methods below were handed, in order


def _spy(problem, points):
    CALLS.append((problem, graph_kernel(problem), [dict(p) for p in points]))
    return _standin_scores(problem, points)


SPY_T = register_method(MethodEntry("test-spy (t)", frozenset({"graph"}), "classification",
                                    {"eta": [0.5, 0.9], "T": [2, 8]}, _spy, setting="transductive",
                                    params=(PARAMS["eta"], PARAMS["T"])))
SPY_I = register_method(MethodEntry("test-spy (i)", frozenset({"graph"}), "classification",
                                    {"eta": [0.5, 0.9], "beta": [1.0, 1e-3]}, _spy, setting="inductive",
                                    params=(PARAMS["eta"], PARAMS["beta"])))


class CountingFactory(GraphKernelFactory):
    """The single-process kernel factory, counting the kernels it builds and recording their hidden nodes."""

    def __init__(self):
        self.calls = []

    def __call__(self, data, hidden, **kw):
        self.calls.append((int(data.num_nodes), int(hidden.sum()), kw))
        return super().__call__(data, hidden, **kw)


def _evaluate(cfg, m, data, p_test=0.2, seed=0, split=None):
    """One (method, split) record of the node-classification protocol."""
    proto = get_protocol(cfg)
    unit = proto.prepare(cfg.datasets[0], data, p_test, seed)
    if split is not None:
        unit = {**unit, "split": split}
    return proto.evaluate(m, m.grid, data, unit, p_test, seed)


@pytest.fixture(autouse=True)
def _one_thread():
    old = torch.get_num_threads()
    torch.set_num_threads(1)     # tiny problems: threads only add contention
    yield
    torch.set_num_threads(old)


SMALL = {
    "name": "small",
    "seeds": 2,
    "p_test": 0.2,
    "planetoid_split": "random",
    "datasets": [
        {"name": "Karate", "graph": {"kind": "karate_club", "train_per_class": 3, "val_per_class": 3}},
        {"name": "SBM", "graph": {"kind": "sbm", "sizes": [80, 80, 80], "p_in": 0.08, "p_out": 0.015, "seed": 1}},
    ],
    "grid": {"T": [2, 8], "eta": [0.5, 0.9], "beta": [1.0, 1e-3], "k": [2], "d": [4, 8]},
    "methods": ["LP (t)", "SP-Lap (t)", "SP-poly (t)", "SP-topd (t)", "SP-Lap (i)", "SP-poly (i)",
                "SP-topd (i)", "KRR (i)"],
    "paper_table": None,
}


def small_config(**over):
    """SMALL with ``over``; the shared grid keeps the keys of the methods chosen (a shared key that no
    method of the config has is an error)."""
    from graphstk.experiments.registry import get_method
    raw = {**SMALL, **over}
    if "grid" not in over:
        labels = [m if isinstance(m, str) else m["label"] for m in raw["methods"]]
        keys = {k for label in labels for k in get_method(label).grid}
        raw["grid"] = {k: v for k, v in SMALL["grid"].items() if k in keys}
    return parse_config(raw)


def strip_times(rows):
    return [{k: v for k, v in r.items() if k != "wall_time_s"} for r in rows]


# ----------------------------------------------------------------------------- units
def test_accuracy_counts_all_zero_rows_as_wrong_not_class_0():
    scores = torch.tensor([[0.0, 0.0], [0.2, 0.1], [0.0, 1.0], [float("nan"), 1.0]])
    y = torch.tensor([0, 0, 1, 1])
    acc, unreachable = accuracy(scores, y)
    assert unreachable == 2              # the all-zero row and the NaN row
    assert acc == pytest.approx(50.0)    # row 0 would be "right" if argmax gave class 0


def test_select_first_of_ties_and_never_nan():
    assert select([50.0, 70.0, 70.0, 60.0]) == 1
    assert select([float("nan"), 10.0]) == 1
    assert select([3.0, 1.0, 1.0], higher_is_better=False) == 1


def test_transductive_and_inductive_calls_follow_appendix_d():
    """Which kernel, which labels and which eval nodes each method call gets (graph methods
    registered for this test, with the protocol's settings)."""
    cfg = small_config(datasets=[SMALL["datasets"][1]], methods=["test-spy (t)", "test-spy (i)"])
    data = load_spec(cfg.datasets[0], None)
    from graphstk import make_split

    split = make_split(data, 0.2, 0)
    CALLS.clear()
    spy_t = next(m for m in cfg.methods if m.label == "test-spy (t)")
    rec = _evaluate(cfg, spy_t, data, split=split)
    (prob, kernel, points), = CALLS
    y, ev = prob.y, prob.eval
    assert kernel.num_visible == data.num_nodes and len(points) == 4
    assert torch.equal(ev, torch.cat([split.val, split.test]))
    assert torch.equal(y[split.train], data.y[split.train]) and bool((y[split.val] == -1).all())
    assert bool((y[split.test] == -1).all())
    assert rec["chosen"] == rec["grid"][rec["chosen_index"]]["params"]
    assert len(rec["grid"]) == 4 and all("test_acc" in g for g in rec["grid"])

    CALLS.clear()
    spy_i = next(m for m in cfg.methods if m.label == "test-spy (i)")
    rec = _evaluate(cfg, spy_i, data, split=split)
    (p1, k1, g1), (p2, k2, g2) = CALLS
    assert torch.equal(p1.eval, split.val) and torch.equal(p2.eval, split.test)
    assert k1.num_visible == data.num_nodes - split.val.numel() - split.test.numel()    # val + test hidden
    assert k2.num_visible == data.num_nodes - split.test.numel()                        # test hidden
    assert len(g1) == 4 and g2 == [rec["chosen"]]
    assert "test_acc" not in rec["grid"][0]        # no test accuracy exists at selection time


def test_runner_takes_its_kernels_from_the_injected_factory(tmp_path):
    """run_experiment(kernel_factory=) builds every graph kernel of the run through the factory,
    once per (split, stage): the three stages of a split share their kernels within the run."""
    cfg = small_config(seeds=1, datasets=[SMALL["datasets"][1]], methods=["LP (t)", "SP-Lap (t)", "SP-Lap (i)"])
    factory = CountingFactory()
    res = run_experiment(cfg, str(tmp_path / "a"), progress=False, log=lambda m: None, kernel_factory=factory)
    n = res["rows"][0]["n_test"][0]
    hidden = sorted(h for _, h, _ in factory.calls)
    assert len(factory.calls) == 4                   # transductive (LP on Eq. 23's kernel, SP-Lap on the lazy one),
                                                     # selection, final
    assert hidden[:2] == [0, 0] and hidden[2] == n   # transductive (two kernels): nothing hidden; final: test nodes
    assert all(kw["dtype"] == torch.float64 and not kw["whole"] for _, _, kw in factory.calls)
    plain = run_experiment(cfg, str(tmp_path / "b"), progress=False, log=lambda m: None)
    assert strip_times(plain["rows"]) == strip_times(res["rows"])
    with pytest.raises(RunError, match="kernel factory refused"):
        def refuse(data, hidden, **kw):
            raise ValueError("kernel factory refused")
        run_experiment(cfg, str(tmp_path / "c"), progress=False, log=lambda m: None, kernel_factory=refuse)


def test_kernel_cache_belongs_to_the_run(tmp_path):
    """Two runs never share kernels: each builds its own (same factory object, same config)."""
    cfg = small_config(seeds=1, datasets=[SMALL["datasets"][1]], methods=["SP-Lap (t)"])
    factory = CountingFactory()
    run_experiment(cfg, str(tmp_path / "a"), progress=False, log=lambda m: None, kernel_factory=factory,
                   write=False)
    first = len(factory.calls)
    run_experiment(cfg, str(tmp_path / "b"), progress=False, log=lambda m: None, kernel_factory=factory,
                   write=False)
    assert first == 1 and len(factory.calls) == 2     # the second run built its kernel again
    cache = KernelCache(factory)
    data = load_spec(cfg.datasets[0], None)
    hidden = torch.zeros(int(data.num_nodes), dtype=torch.bool)
    assert cache.kernel(data, hidden) is cache.kernel(data, hidden) and (cache.built, cache.reused) == (1, 1)
    assert KernelCache(factory).kernel(data, hidden) is not cache.kernel(data, hidden)


def test_scrambling_test_labels_keeps_every_chosen_hyperparameter():
    cfg = small_config(seeds=1)
    from graphstk import make_split

    for raw in SMALL["datasets"]:
        one = small_config(seeds=1, datasets=[raw])
        data = load_spec(one.datasets[0], None)
        split = make_split(data, 0.2, 0, planetoid_split="random")
        scrambled = data.clone()
        y = scrambled.y.clone()
        n_cls = int(y.max()) + 1
        y[split.test] = (y[split.test] + 1 + torch.arange(split.test.numel()) % (n_cls - 1)) % n_cls
        assert bool((y[split.test] != data.y[split.test]).all())
        scrambled.y = y
        for m in one.methods:
            a = _evaluate(one, m, data, split=split)
            b = _evaluate(one, m, scrambled, split=split)
            assert a["chosen"] == b["chosen"], (raw["name"], m.label)
            assert [g["val_acc"] for g in a["grid"]] == [g["val_acc"] for g in b["grid"]]


# ----------------------------------------------------------------------------- end to end
def test_end_to_end_writes_the_three_outputs_with_the_contract_schema(tmp_path):
    out = tmp_path / "run"
    res = run_experiment(small_config(), str(out), progress=False, log=lambda m: None)
    for f in ("results.json", "results.csv", "results.md"):
        assert (out / f).is_file()
    js = json.loads((out / "results.json").read_text())
    assert {"config", "rows", "wall_time_s"} <= set(js)
    assert len(js["rows"]) == 2 * 8
    keys = {"dataset", "method", "setting", "p_test", "seeds", "test_acc", "mean", "std", "best_params",
            "paper", "wall_time_s", "unreachable"}
    for row in js["rows"]:
        assert keys <= set(row)
        assert row["setting"] in ("transductive", "inductive")
        assert row["seeds"] == [0, 1] and len(row["test_acc"]) == 2 and len(row["best_params"]) == 2
        assert all(0.0 <= a <= 100.0 for a in row["test_acc"])
        assert row["mean"] == pytest.approx(sum(row["test_acc"]) / 2)
        assert row["std"] == pytest.approx(abs(row["test_acc"][0] - row["test_acc"][1]) / 2 ** 0.5)  # ddof=1
        assert row["paper"] is None
    assert len({(r["dataset"], r["method"], r["setting"], r["p_test"]) for r in js["rows"]}) == 16
    with open(out / "results.csv", newline="") as fh:
        assert len(list(csv.DictReader(fh))) == 16
    md = (out / "results.md").read_text()
    assert "| dataset | method |" in md and "paper" in md and "SP-Lap (t)" in md
    assert res["cache"]["computed"] == 32 and len(os.listdir(out / "cache")) == 32


def test_paper_column_and_sweep_rows(tmp_path):
    cfg = small_config(seeds=1, datasets=[SMALL["datasets"][1]],
                       methods=[{"label": "SP-poly (i)", "sweep": {"param": "k", "values": [1, 2]}}],
                       plot={"file": "fig.png"})
    res = run_experiment(cfg, str(tmp_path), progress=False, log=lambda m: None)
    assert [r["sweep"] for r in res["rows"]] == [{"k": 1}, {"k": 2}]
    assert all(p["k"] == r["sweep"]["k"] for r in res["rows"] for p in r["best_params"])
    assert (tmp_path / "fig.png").stat().st_size > 1000
    from graphstk.experiments.paper import paper_cell

    assert paper_cell("Cora", "SP-Lap (t)", 0.01) == {"mean": 77.04, "std": 5.74, "source": "Table 4"}
    assert paper_cell("DBLP", "SP-poly (i)", 0.01, "table1")["mean"] == 64.51
    assert paper_cell("Cora", "SP-topd (i)", 0.3)["source"] == "Table 5"
    assert paper_cell("Cora", "LP (t)", 0.01, sweep={"k": 1}) is None


def test_interrupted_then_resumed_run_equals_uninterrupted(tmp_path, monkeypatch):
    cfg = small_config()
    full = run_experiment(cfg, str(tmp_path / "full"), progress=False, log=lambda m: None)

    real_put = cache_mod.ResultCache.put
    count = {"n": 0}

    def flaky_put(self, label, payload, record):
        if count["n"] == 7:
            raise KeyboardInterrupt   # Ctrl-C after 7 finished units
        count["n"] += 1
        real_put(self, label, payload, record)

    monkeypatch.setattr(cache_mod.ResultCache, "put", flaky_put)
    out = tmp_path / "resumed"
    with pytest.raises(KeyboardInterrupt):
        run_experiment(cfg, str(out), progress=False, log=lambda m: None)
    files = os.listdir(out / "cache")
    assert len(files) == 7 and all(f.endswith(".json") for f in files)     # nothing half-written
    assert not (out / "results.json").exists()
    monkeypatch.setattr(cache_mod.ResultCache, "put", real_put)

    resumed = run_experiment(cfg, str(out), progress=False, log=lambda m: None)
    assert (resumed["cache"]["reused"], resumed["cache"]["computed"]) == (7, 25)
    assert strip_times(resumed["rows"]) == strip_times(full["rows"])

    factory = CountingFactory()
    again = run_experiment(cfg, str(out), progress=False, log=lambda m: None, kernel_factory=factory)
    assert not factory.calls and again["cache"]["reused"] == 32      # nothing recomputed: no kernel built
    assert again["rows"] == resumed["rows"]         # identical numbers, wall times included
    assert [list(p) for r in again["rows"] for p in r["best_params"]] == \
        [list(p) for r in full["rows"] for p in r["best_params"]]      # same key order as computed


def test_cache_key_changes_with_anything_that_affects_the_result(tmp_path, monkeypatch):
    cfg = small_config(seeds=1, datasets=[SMALL["datasets"][1]], methods=["KRR (i)"])
    run_experiment(cfg, str(tmp_path), progress=False, log=lambda m: None)
    for changed in (small_config(seeds=1, datasets=[SMALL["datasets"][1]], methods=[
                        {"label": "KRR (i)", "grid": {"beta": [1.0]}}]),
                    small_config(seeds=1, datasets=[SMALL["datasets"][1]], methods=["KRR (i)"], p_test=0.1),
                    small_config(seeds=[1], datasets=[SMALL["datasets"][1]], methods=["KRR (i)"]),
                    small_config(seeds=1, datasets=[SMALL["datasets"][1]], methods=["KRR (i)"],
                                 solver={"dtype": "float32"})):
        res = run_experiment(changed, str(tmp_path), progress=False, log=lambda m: None, write=False)
        assert res["cache"]["reused"] == 0 and res["cache"]["computed"] == 1
    monkeypatch.setattr(pipeline_mod, "code_fingerprint", lambda *a: "other engine code")
    res = run_experiment(cfg, str(tmp_path), progress=False, log=lambda m: None, write=False)
    assert res["cache"]["reused"] == 0 and res["cache"]["computed"] == 1


def test_missing_dataset_is_skipped_and_recorded(tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPHSTK_OFFLINE", "1")
    cfg = small_config(seeds=1, datasets=["CoraFull", SMALL["datasets"][1]], methods=["KRR (i)"],
                       skip_missing=True)
    res = run_experiment(cfg, str(tmp_path / "o"), data_root=str(tmp_path / "empty"), progress=False,
                         log=lambda m: None)
    assert [s["dataset"] for s in res["skipped"]] == ["CoraFull"]
    assert "not found" in res["skipped"][0]["reason"] and str(tmp_path / "empty") in res["skipped"][0]["reason"]
    assert [r["dataset"] for r in res["rows"]] == ["SBM"]
    from graphstk.experiments.pipeline import DatasetMissingError

    with pytest.raises(DatasetMissingError, match="CoraFull"):
        run_experiment(small_config(seeds=1, datasets=["CoraFull"], methods=["KRR (i)"]), str(tmp_path / "p"),
                       data_root=str(tmp_path / "empty"), progress=False)


# ----------------------------------------------------------------------------- command line
def _run_cli(*args, env=None, timeout=120):
    e = dict(os.environ, **(env or {}))
    return subprocess.run([sys.executable, os.path.join(REPO, "run.py"), *args], capture_output=True, text=True,
                          cwd=REPO, env=e, timeout=timeout)


def test_cli_help(capsys):
    r = _run_cli("--help")               # the real entry point, in a fresh interpreter
    assert r.returncode == 0
    for word in ("config", "--out", "--data-root", "--seeds", "--datasets", "--quick", "GRAPHSTK_DATA", "exit codes"):
        assert word in r.stdout
    from graphstk.__main__ import main

    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0 and capsys.readouterr().out == r.stdout


def test_cli_config_error_exit_2_names_the_key(tmp_path, capsys):
    from graphstk.__main__ import main

    p = tmp_path / "bad.yaml"
    p.write_text("datasets: [Cora]\nmethods:\n  - LP (t)\n  - KRR (i)\n  - label: SP-Lap (i)\n    grid: {beta: []}\n")
    with pytest.raises(SystemExit) as info:
        main([str(p)])
    assert info.value.code == 2
    assert "methods[2].grid.beta: empty list" in capsys.readouterr().err


def test_cli_missing_dataset_exit_1(tmp_path, capsys, monkeypatch):
    from graphstk.__main__ import main

    monkeypatch.setenv("GRAPHSTK_OFFLINE", "1")
    p = tmp_path / "c.yaml"
    p.write_text("datasets: [CoraFull]\nmethods: [KRR (i)]\nseeds: 1\n")
    assert main([str(p), "--data-root", str(tmp_path / "none"), "--out", str(tmp_path / "o"), "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert "CoraFull" in err and "skip_missing" in err and str(tmp_path / "none") in err


def test_cli_default_run_without_arguments(tmp_path):
    r = subprocess.run([sys.executable, "-m", "graphstk", "--out", str(tmp_path / "d"), "--no-progress"],
                       capture_output=True, text=True, cwd=REPO, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "Karate" in r.stdout and "SBM" in r.stdout and "SP-Lap (i)" in r.stdout
    js = json.loads((tmp_path / "d" / "results.json").read_text())
    assert js["config"]["name"] == "default" and len(js["rows"]) == 16


# ----------------------------------------------------------------------------- reproduction options
# A sparse SBM with 3 + 3 labels per class: KRR (i) and SP-topd leave some test nodes unreachable.
SPARSE_SBM = {"name": "SparseSBM", "graph": {"kind": "sbm", "sizes": [40, 40, 40], "p_in": 0.04, "p_out": 0.005,
                                             "seed": 1, "train_per_class": 3, "val_per_class": 3}}


def test_accuracy_class0_convention_is_plain_argmax():
    scores = torch.tensor([[0.0, 0.0], [0.2, 0.1], [0.0, 1.0], [0.0, 0.0]])
    y = torch.tensor([0, 0, 1, 1])
    assert accuracy(scores, y, "class0") == (pytest.approx(75.0), 2)    # row 0 -> class 0 (right), row 3 wrong
    assert accuracy(scores, y, "wrong") == (pytest.approx(50.0), 2)
    assert accuracies(scores, y) == {"wrong": 50.0, "class0": 75.0, "unreachable": 2}
    with pytest.raises(ValueError, match="class0"):
        accuracy(scores, y, "zero")


def _two_betas(problem, points):
    """beta = 0.5 reaches every node: class 0 for every 4th node, else class 1; beta = 1: every other
    node class 1, the rest all zero (unreachable)."""
    out = []
    for p in points:
        s = torch.zeros(problem.eval.numel(), problem.num_classes, dtype=torch.float64)
        if p["beta"] == 0.5:
            s[:, 1] = 1.0
            s[::4] = torch.tensor([1.0, 0.0, 0.0], dtype=torch.float64)
        else:
            s[::2, 1] = 1.0
        out.append(s)
    return out


TWO_BETAS = register_method(MethodEntry("test-two-betas (i)", frozenset({"graph"}), "classification",
                                        {"beta": [0.5, 1.0]}, _two_betas, setting="inductive",
                                        params=(PARAMS["beta"],)))


def test_class0_convention_also_drives_selection_on_val():
    """A grid point whose val rows are all zero wins under class0 when val is all class 0."""
    kw = dict(datasets=[SMALL["datasets"][1]], methods=[{"label": "test-two-betas (i)", "grid": {"beta": [0.5, 1.0]}}])
    cfg = small_config(**kw)
    data = load_spec(cfg.datasets[0], None)
    from graphstk import make_split

    split = make_split(data, 0.2, 0, planetoid_split="random")
    data = data.clone()
    data.y = data.y.clone()
    data.y[split.val] = 0

    wrong = _evaluate(cfg, cfg.methods[0], data, split=split)
    c0 = small_config(unreachable="class0", **kw)
    class0 = _evaluate(c0, c0.methods[0], data, split=split)
    (w05, w1), (c05, c1) = ([g["val_acc"] for g in r["grid"]] for r in (wrong, class0))
    assert w1 == 0.0 < w05 == c05 < c1                    # unreachable val nodes are right only under class0
    assert wrong["chosen"] == {"beta": 0.5} and class0["chosen"] == {"beta": 1.0}
    assert wrong["grid"][1]["val_unreachable"] == class0["grid"][1]["val_unreachable"] > 0
    assert class0["test_acc"] == class0["test_acc_class0"] and wrong["test_acc"] == wrong["test_acc_wrong"]


def test_class0_run_rows_carry_both_accuracies(tmp_path):
    cfg = small_config(unreachable="class0", datasets=[SPARSE_SBM], solver={"step_size": "paper"},
                       grid={"beta": [1.0, 1e-3], "d": [4, 8]},
                       methods=["KRR (i)", "SP-topd (t)", {"label": "SP-topd (t)", "support": "all"},
                                {"label": "SP-topd (i)", "support": "all"}])
    res = run_experiment(cfg, str(tmp_path), progress=False, log=lambda m: None)
    rows = res["rows"]
    lazy = {"normalization": "lazy"}                  # the STKR methods' default graph kernel
    assert [(r["method"], r["options"]) for r in rows] == [
        ("KRR (i)", {"labels": "onehot", **lazy}), ("SP-topd (t)", {"support": "labeled", "labels": "onehot", **lazy}),
        ("SP-topd (t)", {"support": "all", "labels": "onehot", **lazy}),
        ("SP-topd (i)", {"support": "all", "labels": "onehot", **lazy})]   # support defaults to labeled
    for r in rows:
        assert r["test_acc"] == r["test_acc_class0"] and r["mean"] == pytest.approx(r["mean_class0"])
        assert len(r["test_acc_wrong"]) == 2
        assert all(w <= c for w, c in zip(r["test_acc_wrong"], r["test_acc_class0"]))
        assert r["mean_wrong"] == pytest.approx(sum(r["test_acc_wrong"]) / 2)
    krr = rows[0]       # the engine leaves test nodes unreachable here: the gap shows
    assert sum(krr["unreachable"]) > 0 and krr["mean_wrong"] < krr["mean_class0"]
    js = json.loads((tmp_path / "results.json").read_text())
    assert js["config"]["unreachable"] == "class0" and "class0" in js["protocol"]["unreachable"]
    md = (tmp_path / "results.md").read_text()
    assert "SP-topd (t) [support=labeled]" in md and "SP-topd (t) [support=all]" in md   # support always shown
    assert "`unreachable: class0`" in md
    with open(tmp_path / "results.csv", newline="") as fh:
        csv_rows = list(csv.DictReader(fh))
    assert [c["options"] for c in csv_rows] == ["labels=onehot,normalization=lazy",
                                                   "support=labeled,labels=onehot,normalization=lazy",
                                                   "support=all,labels=onehot,normalization=lazy",
                                                   "support=all,labels=onehot,normalization=lazy"]
    assert all(c["mean_wrong"] and c["mean_class0"] for c in csv_rows)

    wrong = run_experiment(small_config(datasets=[SPARSE_SBM], methods=["KRR (i)"]), str(tmp_path / "w"),
                           progress=False, log=lambda m: None)
    (r,) = wrong["rows"]
    assert r["test_acc"] == r["test_acc_wrong"] and "test_acc_class0" in r
    assert "`unreachable: wrong`" in (tmp_path / "w" / "results.md").read_text()


def test_cache_key_includes_unreachable_step_size_and_support(tmp_path):
    kw = dict(seeds=1, datasets=[SPARSE_SBM], grid={"beta": [1.0], "d": [4]})
    run = lambda cfg: run_experiment(cfg, str(tmp_path), progress=False,  # noqa: E731
                                     log=lambda m: None, write=False)["cache"]
    assert run(small_config(methods=["SP-topd (t)"], **kw))["computed"] == 1
    for changed in (small_config(methods=["SP-topd (t)"], unreachable="class0", **kw),
                    small_config(methods=["SP-topd (t)"], solver={"step_size": 0.5}, **kw),
                    small_config(methods=[{"label": "SP-topd (t)", "support": "all"}], **kw)):
        first, again = run(changed), run(changed)
        assert (first["reused"], first["computed"]) == (0, 1)       # not the cached unit of the first config
        assert (again["reused"], again["computed"]) == (1, 0)       # ... but cached under its own key
    for changed, expect_reused in ((small_config(methods=[{"label": "SP-topd (t)", "support": "labeled"}], **kw), 1),
                                   (small_config(methods=["SP-topd (t)"], unreachable="wrong", **kw), 1)):
        assert run(changed)["reused"] == expect_reused      # explicit defaults are the same unit


# ----------------------------------------------------------------------------- devices
DIGITS_TASK = {"name": "digits", "protocol": "labeled-per-class", "n_labeled": [5], "val_per_class": 5,
               "datasets": [{"name": "Digits", "n_per_class": 30}], "seeds": 1,
               "grid": {"lam": [1e-2, 1.0], "sigma": [1.0], "C": [1.0]}, "methods": ["RLSC", "KRLSC", "LinearSVM"]}


def _two_protocols(**over):
    graph = {**{k: v for k, v in SMALL.items() if k != "name"}, "name": "graph", "seeds": 1,
             "datasets": [SMALL["datasets"][1]]}
    return parse_config({"name": "devices", "tasks": [graph, DIGITS_TASK], **over})


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not torch.cuda.is_available(), reason="CUDA is not available on this machine"))])
def test_every_protocol_on_a_device_gives_the_cpu_argmaxes(tmp_path, device):
    ref = run_experiment(_two_protocols(), str(tmp_path / "ref"), progress=False, log=lambda m: None, write=False)
    by_config = run_experiment(_two_protocols(device=device), str(tmp_path / "cfg"), progress=False,
                               log=lambda m: None, write=False)
    by_flag = run_experiment(_two_protocols().with_overrides(device=device), str(tmp_path / "flag"),
                             progress=False, log=lambda m: None, write=False)
    assert {t["device"] for t in by_config["config"]["tasks"]} == {device}
    for res in (by_config, by_flag):
        assert [(r["method"], r["test_acc"], r["best_params"]) for r in res["rows"]] == \
            [(r["method"], r["test_acc"], r["best_params"]) for r in ref["rows"]]


def test_device_errors_name_the_key_and_the_fix(tmp_path, capsys):
    from graphstk.__main__ import main
    from graphstk.experiments.config import ConfigError
    from graphstk.experiments.protocols import ProtocolError

    with pytest.raises(ConfigError, match=r"^device: expected a torch device such as cpu, cuda.*got 'gpu'"):
        small_config(device="gpu")
    with pytest.raises(ConfigError, match=r"^--device: expected a torch device"):
        small_config().with_overrides(device="tpu0")
    if not torch.cuda.is_available():
        with pytest.raises(ProtocolError, match="CUDA is not available.*--device cpu"):
            run_experiment(small_config(device="cuda"), str(tmp_path / "c"), progress=False, log=lambda m: None)
    p = tmp_path / "c.yaml"
    p.write_text("datasets: [{name: K, graph: {kind: karate_club, train_per_class: 3, val_per_class: 3}}]\n"
                 "methods: [LP (t)]\nseeds: 1\np_test: 0.2\nplanetoid_split: random\ngrid: {eta: [0.9], T: [4]}\n")
    assert main([str(p), "--device", "cpu", "--out", str(tmp_path / "o"), "--no-progress"]) == 0
    assert json.loads((tmp_path / "o" / "results.json").read_text())["config"]["device"] == "cpu"
    with pytest.raises(SystemExit) as info:
        main([str(p), "--device", "gpu"])
    assert info.value.code == 2 and "--device: expected a torch device" in capsys.readouterr().err
