"""Inputs that once passed silently, ran away or got a raw message: each now gets a clear error, a
warning or an honest result. (Messages that suggest a fix are also cases of test_suggested_fixes.py,
where the fix is applied literally.)"""
from __future__ import annotations

import json
import re
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
from torch_geometric.data import Data

import graphstk.methods as M
from graphstk.exceptions import BudgetWarning, DataFileError

from dense_reference import RING_EDGES as EDGES
from dense_reference import RING_LABELS as LABELS
from dense_reference import RING_N as N
from dense_reference import RING_TRAIN as TRAIN
from dense_reference import ring_graph as graph


# -------------------------------------------------------------------------- 1. the shared grid block
def test_a_misspelt_key_of_the_shared_grid_is_refused_with_a_did_you_mean():
    from graphstk.experiments.config import ConfigError, parse_config
    raw = {"datasets": ["Cora"], "methods": ["LP (t)", "SP-poly (t)"],
           "grid": {"etta": [0.9], "beta": [1.0e-2], "T": [8]}}
    with pytest.raises(ConfigError, match=r"grid\.etta: unknown key; did you mean 'eta'\?"):
        parse_config(raw)
    raw["grid"]["eta"] = raw["grid"].pop("etta")
    cfg = parse_config(raw)
    lp = next(m for m in cfg.methods if m.label == "LP (t)")
    assert lp.grid["eta"] == [0.9]                      # the shared value reaches the method that has it


def test_a_shared_grid_value_is_checked_by_the_methods_declaration():
    from graphstk.experiments.config import ConfigError, parse_config
    with pytest.raises(ConfigError, match=r"eta"):
        parse_config({"datasets": ["Cora"], "methods": ["LP (t)"], "grid": {"eta": [1.5]}})


# --------------------------------------------------------------------------- 2. raw files that parse
@pytest.fixture
def cora_copy(tmp_path, dataset_root):
    src = dataset_root("Cora") / "Cora"
    dst = tmp_path / "Cora"
    shutil.copytree(src / "raw", dst / "raw")
    return tmp_path


def test_a_truncated_test_index_is_named_when_the_cache_is_built(cora_copy):
    from graphstk import load_dataset
    path = cora_copy / "Cora" / "raw" / "ind.cora.test.index"
    path.write_text("".join(path.read_text().splitlines(True)[:100]))    # cut at a line boundary: still parses
    with pytest.raises(DataFileError, match=r"Cora: expected 1,000 test nodes in its public split, the raw files "
                                            r"hold 100: .*ind\.cora\.test\.index differs from the published file"):
        load_dataset("Cora", root=cora_copy)
    assert not (cora_copy / "Cora" / "processed").exists()     # nothing cached: the next load checks again


def test_a_file_with_a_known_digest_is_checked_against_it(tmp_path):
    from graphstk.data.known import KNOWN, check_known
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "amazon_electronics_photo.npz").write_bytes(b"not the published bytes")
    data = Data(edge_index=torch.zeros(2, KNOWN["Photo"].edges, dtype=torch.long), num_nodes=KNOWN["Photo"].nodes)
    with pytest.raises(DataFileError, match=r"amazon_electronics_photo\.npz differs from the published file: "
                                            r"expected sha256 bdb1feb8"):
        check_known(data, "Photo", KNOWN["Photo"], raw, "copy an intact file")


# ------------------------------------------------------------------------ 3. results cache edited by hand
def test_an_edited_cache_entry_is_recomputed_with_a_warning(tmp_path):
    from graphstk.experiments import default_config
    from graphstk.experiments.pipeline import run_experiment
    cfg = default_config().with_overrides(seeds=1)
    first = run_experiment(cfg, str(tmp_path), progress=False)
    entry = sorted((tmp_path / "cache").glob("*.json"))[0]
    stored = json.loads(entry.read_text())
    stored["record"]["test_acc"] = 99.9
    entry.write_text(json.dumps(stored))
    with pytest.warns(UserWarning, match=r"does not match its digest \(edited or damaged\); recomputing it"):
        again = run_experiment(cfg, str(tmp_path), progress=False)
    assert [r["mean"] for r in again["rows"]] == [r["mean"] for r in first["rows"]]
    assert json.loads(entry.read_text())["record"]["test_acc"] != 99.9      # written back as computed


# ------------------------------------------------------------------- 6. long iterative fits show progress
def test_a_cg_fit_shows_its_progress(capsys):
    X = np.random.default_rng(0).normal(size=(200, 3))
    est = M.KernelRidge(sigma=1.0, solver="cg", verbose=True).fit(X, X[:, 0])
    err = capsys.readouterr().err
    assert "KernelRidge cg" in err and "product" in err and est.n_iter_ > 1
    M.KernelRidge(sigma=1.0, solver="cg", verbose=False).fit(X, X[:, 0])
    assert "KernelRidge cg" not in capsys.readouterr().err


# ------------------------------------------------------------------------ 9. the names the user wrote
def test_label_propagation_names_the_parameters_as_written():
    with pytest.raises(ValueError, match=r"0 < alpha < 1/lambda_1 = 1, got alpha=1\.5"):
        M.LabelPropagation(alpha=1.5).fit(graph(), TRAIN)
    with pytest.raises(ValueError, match=r"0 < eta < 1/lambda_1 = 1, got eta=1\.5"):
        M.LabelPropagation(eta=1.5).fit(graph(), TRAIN)
    with pytest.raises(ValueError, match=r"^The 'num_layers' parameter of LabelPropagation must be an int in the range"):
        M.LabelPropagation(num_layers=-3).fit(graph(), TRAIN)
    with pytest.raises(ValueError, match=r"^The 'num_iter' parameter of LabelPropagation must be an int in the range"):
        M.LabelPropagation(num_iter=-3).fit(graph(), TRAIN)


# ------------------------------------------------------------------------------ 10. STKRCV's budget
def test_a_budget_that_the_route_cannot_bound_is_said_not_ignored():
    val = torch.arange(6, N)
    with pytest.warns(BudgetWarning, match=r"STKRCV: max_seconds=1e-06 bounds iterative solves only"):
        M.STKRCV(max_seconds=1e-6).fit(graph(), TRAIN, val)
    with pytest.warns(BudgetWarning, match=r"STKR: max_seconds"):
        M.STKR(max_seconds=1e-6).fit(graph(), TRAIN)
    with warnings.catch_warnings():
        warnings.simplefilter("error", BudgetWarning)
        M.STKRCV().fit(graph(), TRAIN, val)                  # no budget asked: nothing to say


# ----------------------------------------------------------------------- 11. validation inside training
def test_validation_nodes_that_are_training_nodes_are_refused():
    with pytest.raises(ValueError, match=r"train_idx and val_idx overlap in 1 nodes \(e\.g\. node 5\)"):
        M.STKRCV().fit(graph(), TRAIN, torch.arange(5, N))
    mask = torch.zeros(N, dtype=torch.bool)
    mask[:7] = True                                          # masks too, and data.train_mask
    with pytest.raises(ValueError, match=r"overlap in 7 nodes"):
        M.STKRCV().fit(graph(train_mask=mask), None, mask)


# ------------------------------------------------------------------------------------- 12. --out
def _main_error(capsys, argv) -> str:
    from graphstk.__main__ import main
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    return capsys.readouterr().err


def test_out_problems_are_said_with_what_to_pass(tmp_path, capsys):
    import os
    (tmp_path / "afile").write_text("x")
    err = _main_error(capsys, ["--out", str(tmp_path / "afile"), "--no-progress"])
    assert re.search(r"--out .*afile: is an existing file, not a folder; pass a writable folder, e\.g\. --out ", err)
    err = _main_error(capsys, ["--out", "/proc/graphstk-results", "--no-progress"])
    assert re.search(r"--out /proc/graphstk-results: cannot write results there \(.*\); pass a writable folder", err)
    if os.geteuid() != 0:                                    # root writes into a read-only folder anyway
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o555)
        err = _main_error(capsys, ["--out", str(ro / "run"), "--no-progress"])
        assert "no permission to write there" in err


# ------------------------------------------------------------------------------- 13. partition
def test_partition_command_line_problems_are_named(tmp_path, capsys):
    from graphstk.__main__ import main
    from graphstk.distributed.store import load_part, write_partition
    assert main(["partition", "dcsbm:nodes=abc,edges=400", "--parts", "2", "--out", str(tmp_path / "a")]) == 1
    assert "nodes='abc' is not a number; write nodes=1000" in capsys.readouterr().err
    assert main(["partition", "dcsbm:nodes=200,edges=800", "--parts", "500", "--out", str(tmp_path / "b")]) == 1
    assert "parts=500 is more than the graph's 200 nodes" in capsys.readouterr().err
    write_partition(graph(), 2, tmp_path / "c", "contiguous")
    part = tmp_path / "c" / "part-0001.pt" if (tmp_path / "c" / "part-0001.pt").exists() else \
        sorted((tmp_path / "c").glob("part-*.pt"))[1]
    part.write_bytes(part.read_bytes()[: part.stat().st_size // 2])           # a copy cut short
    with pytest.raises(DataFileError, match=re.escape(str(part)) + r".*truncated, corrupted.*partition again"):
        load_part(tmp_path / "c", 1, 2)


# ------------------------------------------------------------------ 14. regressors and the -1 marker
def test_regressors_state_that_they_take_no_unlabeled_marker():
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    marker = readme.index("`y = -1` for unlabeled points")
    assert re.search(r"regressors `KernelRidge` and\s+`RandomFeatureRidge` are supervised, and for them `-1` is a "
                     r"target value", readme[marker:marker + 600])
    assert "not an unlabeled marker" in M.KernelRidge.fit.__doc__
    assert "not an unlabeled marker" in M.RandomFeatureRidge.fit.__doc__
    X = np.random.default_rng(0).normal(size=(30, 2))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)                     # +-1 targets: -1 is a value, fitted as such
    est = M.KernelRidge(sigma=1.0, lam=1e-3).fit(X, y)
    assert est.predict(X)[y == -1].mean() < -0.8 and est.predict(X)[y == 1].mean() > 0.8


# ---------------------------------------------------------------------- 15. nn.LabelPropagation weights
def test_nn_label_propagation_refuses_negative_edge_weights_as_stkr_propagation_does():
    from graphstk import InverseLaplacian
    from graphstk.nn import LabelPropagation, STKRPropagation
    w = torch.ones(EDGES.shape[1], dtype=torch.float64)
    w[[3, 15]] = -0.5
    with pytest.raises(ValueError, match=r"LabelPropagation: edge_weight has 2 negative entries"):
        LabelPropagation(3, alpha=0.9)(LABELS, EDGES, TRAIN, edge_weight=w)
    with pytest.raises(ValueError, match=r"STKRPropagation: edge_weight has 2 negative entries"):
        STKRPropagation(InverseLaplacian(0.9), beta=1e-2)(LABELS, EDGES, TRAIN, edge_weight=w)
    LabelPropagation(3, alpha=0.9)(LABELS, EDGES, TRAIN, edge_weight=w.clamp(min=0))


# ---------------------------------------------------------------------------- 16. a one-node graph
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_stkr_and_label_propagation_agree_on_an_isolated_training_node():
    one = Data(edge_index=torch.zeros(2, 0, dtype=torch.long), num_nodes=1, y=torch.tensor([2]))
    node = torch.tensor([0])
    lp = M.LabelPropagation().fit(one, node)
    for solver in ("auto", "cg", "richardson"):
        stkr = M.STKR(solver=solver).fit(one, node)
        assert stkr.predict(node).tolist() == lp.predict(node).tolist() == [2]
        assert int(stkr.n_unreachable_) == 0
    # an isolated unlabeled node is still unreached, and flagged
    three = Data(edge_index=torch.tensor([[0, 1], [1, 0]]), num_nodes=3, y=torch.tensor([0, 1, 1]))
    # Eq. 23's kernel, as Label-Prop's: on the lazy one nodes 0 and 1 have the same row (their
    # antisymmetric eigenvector has eigenvalue 0 there), so no kernel method can tell them apart
    stkr = M.STKR(normalization="symmetric").fit(three, torch.tensor([0, 1]))
    assert stkr.predict(torch.arange(3)).tolist() == M.LabelPropagation().fit(three, torch.tensor([0, 1])).predict(
        torch.arange(3)).tolist() == [0, 1, -1]
