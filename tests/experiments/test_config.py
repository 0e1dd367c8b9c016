"""Config schema and strict validation (graphstk.experiments.config)."""
from __future__ import annotations

import glob
import os
import textwrap

import pytest

from graphstk.experiments.registrations.stkr import DEFAULT_GRID, STKR_METHODS as METHODS
from graphstk.experiments.config import (ConfigError, load_config, parse_config,
                                         thin_grid)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def base(**over):
    cfg = {"datasets": ["Cora"], "methods": ["LP (t)", "SP-Lap (i)"]}
    cfg.update(over)
    return cfg


def error_of(raw) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        parse_config(raw)
    return info.value


# ----------------------------------------------------------------------------- happy paths
def test_defaults_follow_appendix_d():
    cfg = parse_config(base())
    lp, lap = cfg.methods
    assert (lp.engine, lp.setting) == ("LabelPropagationFilter", "transductive")
    assert lp.grid == {"eta": DEFAULT_GRID["eta"], "T": [1, 2, 4, 8, 16, 32]}
    assert (lap.engine, lap.setting) == ("InverseLaplacian", "inductive")
    assert lap.grid == {"eta": DEFAULT_GRID["eta"], "beta": DEFAULT_GRID["beta"]}   # no T when inductive
    assert len(DEFAULT_GRID["beta"]) == 12 and DEFAULT_GRID["beta"][0] == 1e3 and DEFAULT_GRID["beta"][-1] == 1e-8
    assert cfg.seeds == list(range(10)) and cfg.p_test == [0.01]
    assert cfg.datasets[0].name == "Cora" and cfg.datasets[0].source == "Cora"


def test_every_method_label_maps_to_engine_and_setting():
    cfg = parse_config(base(methods=list(METHODS)))
    got = {m.label: (m.engine, m.setting, tuple(m.grid)) for m in cfg.methods}
    assert got["SP-poly (t)"] == ("Polynomial", "transductive", ("k", "beta", "T"))
    assert got["SP-topd (i)"] == ("TopD", "inductive", ("d", "beta"))
    assert got["KRR (i)"] == ("KRR", "inductive", ("beta",))
    assert cfg.methods[2].grid["k"] == [8]          # Tables 1/4/5 use s(l) = l^8


def test_grid_overrides_top_level_then_method_and_null_removes_T():
    cfg = parse_config(base(grid={"eta": [0.9], "T": [4]},
                            methods=["LP (t)", {"label": "SP-Lap (t)", "grid": {"T": None, "beta": [1.0]}},
                                     "SP-Lap (i)"]))
    lp, lap_t, lap_i = cfg.methods
    assert lp.grid == {"eta": [0.9], "T": [4]}
    assert lap_t.grid == {"eta": [0.9], "beta": [1.0]}      # T removed: solve to tolerance
    assert "T" not in lap_i.grid                            # top-level T does not add T to inductive methods


def test_yaml_scientific_notation_is_a_number(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("datasets: [Cora]\nmethods:\n  - label: KRR (i)\n    grid: {beta: [1e3, 1e-8]}\n")
    cfg = load_config(str(p))
    assert cfg.methods[0].grid["beta"] == [1000.0, 1e-8]
    assert cfg.name == "c"


def test_sweep_makes_one_series_per_value():
    cfg = parse_config(base(methods=[{"label": "SP-poly (i)", "sweep": {"param": "k", "values": [1, 2, 8]},
                                      "grid": {"beta": [1.0, 0.1]}}], plot={"file": "f.png"}))
    m = cfg.methods[0]
    series = m.series()
    assert [s for s, _ in series] == [{"k": 1}, {"k": 2}, {"k": 8}]
    assert series[1][1] == {"beta": [1.0, 0.1], "k": [2]}
    assert cfg.plot.x == "k"


def test_datasets_by_name_path_and_graph():
    cfg = parse_config(base(datasets=["CiteSeer", "some/dir/my_graph.npz",
                                      {"name": "K", "graph": "karate_club"},
                                      {"name": "S", "graph": {"kind": "sbm", "sizes": [10, 10]}}]))
    names = [d.name for d in cfg.datasets]
    assert names == ["CiteSeer", "my_graph", "K", "S"]
    assert cfg.datasets[1].source == "some/dir/my_graph.npz"
    assert cfg.datasets[3].graph["p_in"] == 0.1


def test_cli_overrides_seeds_and_quick():
    cfg = parse_config(base()).with_overrides(seeds=3)
    assert cfg.seeds == [0, 1, 2]
    q = parse_config(base()).with_overrides(quick=True)
    assert q.quick and q.seeds == [0, 1]
    assert q.methods[0].grid["eta"] == [0.7, 0.999, 0.999999]
    assert thin_grid([1, 2]) == [1, 2]
    with pytest.raises(ConfigError, match="--seeds"):
        parse_config(base()).with_overrides(seeds=0)


def test_cli_override_datasets_keeps_config_order_and_rejects_unknown_names():
    cfg = parse_config(base(datasets=["Cora", "DBLP", "Computers"]))
    assert [d.name for d in cfg.with_overrides(datasets=["dblp", "Cora"]).datasets] == ["Cora", "DBLP"]
    assert [d.name for d in cfg.datasets] == ["Cora", "DBLP", "Computers"]   # the original is untouched
    with pytest.raises(ConfigError, match=r"--datasets: unknown dataset\(s\) \['PubMed'\].*allowed"):
        cfg.with_overrides(datasets=["Cora", "PubMed"])


def test_shipped_configs_are_valid():
    files = sorted(glob.glob(os.path.join(REPO, "configs", "*.yaml")))
    names = {os.path.basename(f) for f in files}
    assert {"table1.yaml", "table4.yaml", "table5.yaml", "figure2.yaml", "eta_ablation.yaml",
            "quick.yaml"} <= names
    for f in files:
        cfg = load_config(f)
        assert cfg.methods and cfg.datasets
    t1 = load_config(os.path.join(REPO, "configs", "table1.yaml"))
    assert [d.name for d in t1.datasets] == ["Cora", "DBLP", "Computers"]
    assert [m.label for m in t1.methods] == list(METHODS) and t1.p_test == [0.01] and len(t1.seeds) == 10
    assert load_config(os.path.join(REPO, "configs", "table4.yaml")).skip_missing


def test_default_experiment_config_is_valid():
    from graphstk.experiments import default_config

    cfg = default_config()
    assert cfg.name == "default" and {d.graph["kind"] for d in cfg.datasets} == {"karate_club", "sbm"}


# ----------------------------------------------------------------------------- errors name the key path
@pytest.mark.parametrize("raw, path, words", [
    (base(seedz=3), "seedz", ["unknown key", "did you mean 'seeds'"]),
    (base(methods=["LP (t)", {"label": "LP (t)", "grid": {"eta": [0.9]}, "gird": {}}]),
     "methods[1].gird", ["unknown key", "grid"]),
    (base(methods=["LP (t)", "KRR (i)", {"label": "SP-Lap (i)", "grid": {"beta": []}}]),
     "methods[2].grid.beta", ["empty list"]),
    (base(methods=["LP (t)", "SP-lap (t)"]), "methods[1]", ["unknown method", "did you mean 'SP-Lap (t)'"]),
    (base(methods=[{"label": "SP-Poly(i)"}]), "methods[0].label", ["did you mean 'SP-poly (i)'"]),
    (base(methods=[{"label": "LP (t)", "grid": {"eta": [0.5, "high"]}}]), "methods[0].grid.eta[1]",
     ["expected a number in (0, 1)", "str"]),
    (base(methods=[{"label": "LP (t)", "grid": {"T": [2.5]}}]), "methods[0].grid.T[0]", ["integer"]),
    (base(methods=[{"label": "LP (t)", "grid": {"eta": [1.0]}}]), "methods[0].grid.eta[0]", ["(0, 1)"]),
    (base(methods=[{"label": "KRR (i)", "grid": {"eta": [0.9]}}]), "methods[0].grid.eta", ["unknown key"]),
    (base(methods=[{"label": "KRR (i)", "grid": {"beta": None}}]), "methods[0].grid.beta", ["null"]),
    (base(methods=[{"label": "SP-poly (i)", "sweep": {"param": "eta", "values": [0.9]}}]),
     "methods[0].sweep.param", ["not a parameter"]),
    (base(methods=["LP (t)", "LP (t)"]), "methods[1]", ["listed twice"]),
    (base(methods=[]), "methods", ["empty list"]),
    (base(p_test=1.5), "p_test", ["(0, 1)"]),
    (base(p_test=[0.01, 0.0]), "p_test[1]", ["(0, 1)"]),
    (base(p_test="0.01"), "p_test", ["expected a number"]),
    (base(seeds=0), "seeds", [">= 1"]),
    (base(seeds=2.5), "seeds", ["integer"]),
    (base(seeds=True), "seeds", ["integer"]),
    (base(skip_missing="yes"), "skip_missing", ["true or false"]),
    (base(datasets=[]), "datasets", ["empty list"]),
    (base(datasets=["Cora", "Cora"]), "datasets[1]", ["duplicate"]),
    (base(datasets=[{"name": "x", "graph": {"kind": "sbn"}}]), "datasets[0].graph.kind", ["did you mean 'sbm'"]),
    (base(datasets=[{"nmae": "Cora"}]), "datasets[0].nmae", ["unknown key"]),
    (base(solver={"dtype": "float16"}), "solver.dtype", ["float32", "float64"]),
    (base(solver={"tol": -1}), "solver.tol", ["must be > 0"]),
    (base(solver={"solver": "gmers"}), "solver.solver", ["did you mean 'gmres'"]),
    (base(solver={"max_iter": 0}), "solver.max_iter", [">= 1"]),
    (base(solver={"maxiter": 10}), "solver.maxiter", ["did you mean 'max_iter'"]),
    (base(paper_table="table2"), "paper_table", ["allowed"]),
    (base(planetoid_split="public-ish"), "planetoid_split", ["did you mean 'public'", "public, random"]),
    (base(plot={"file": "x.png"}), "plot", ["sweep"]),
    (base(name="my run"), "name", ["letters"]),
    ({"methods": ["LP (t)"]}, "datasets", ["missing"]),
])
def test_errors_name_the_key_path(raw, path, words):
    err = error_of(raw)
    assert err.path == path, str(err)
    assert str(err).startswith(f"{path}: ")
    for w in words:
        assert w in str(err), str(err)


def test_yaml_errors(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text("datasets: [Cora\nmethods: x")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(str(p))
    with pytest.raises(ConfigError, match="not found"):
        load_config(str(tmp_path / "nope.yaml"))
    p.write_text(textwrap.dedent("""\
        datasets: [Cora]
        methods:
          - label: SP-Lap (t)
            grid:
              beta: [1e3, 1e2, ten]
        """))
    with pytest.raises(ConfigError, match=r"methods\[0\]\.grid\.beta\[2\]: expected a number > 0, got str 'ten'"):
        load_config(str(p))


# ----------------------------------------------------------------------------- reproduction options
def test_unreachable_step_size_and_support_defaults_and_values():
    cfg = parse_config(base(methods=["LP (t)", "SP-topd (t)", "SP-topd (i)"]))
    assert cfg.unreachable == "wrong" and cfg.to_dict()["unreachable"] == "wrong"
    assert cfg.solver.step_size == "auto"
    lp, topd_t, topd_i = cfg.methods
    assert lp.options == {"labels": "onehot", "normalization": "symmetric"}          # Label-Prop: Eq. 23
    assert topd_t.options == topd_i.options == {"support": "labeled", "labels": "onehot",
                                                "normalization": "lazy"}   # the defaults
    cfg = parse_config(base(unreachable="class0", solver={"step_size": "paper"},
                            methods=["SP-topd (t)", {"label": "SP-topd (t)", "support": "all"},
                                     {"label": "SP-topd (i)", "support": "all", "grid": {"d": [4]}}]))
    assert cfg.unreachable == "class0" and cfg.solver.step_size == "paper"
    assert [m.options["support"] for m in cfg.methods] == ["labeled", "all", "all"]   # both rows allowed
    assert cfg.methods[1].display() == "SP-topd (t) [support=all]" and cfg.methods[0].display() == "SP-topd (t)"
    assert cfg.to_dict()["methods"][1]["options"] == {"support": "all", "labels": "onehot", "normalization": "lazy"}
    assert cfg.to_dict()["solver"]["step_size"] == "paper"
    assert parse_config(base(solver={"step_size": 0.25})).solver.step_size == 0.25
    assert parse_config(base(solver={"step_size": 1})).solver.step_size == 1.0


def test_labels_option_for_every_method():
    cfg = parse_config(base(methods=["SP-Lap (t)", {"label": "SP-Lap (t)", "labels": "centered"}]))
    assert [m.options["labels"] for m in cfg.methods] == ["onehot", "centered"]
    assert cfg.methods[1].display() == "SP-Lap (t) [labels=centered]"
    err = error_of(base(methods=[{"label": "KRR (i)", "labels": "centred"}]))
    assert err.path == "methods[0].labels" and "did you mean 'centered'" in str(err)


@pytest.mark.parametrize("raw, path, words", [
    (base(unreachable="class_0"), "unreachable", ["did you mean 'class0'", "wrong, class0"]),
    (base(unreachable="zero"), "unreachable", ["unknown value 'zero'", "wrong, class0"]),
    (base(unreachable=0), "unreachable", ["expected one of: wrong, class0", "int"]),
    (base(unreachable=None), "unreachable", ["expected one of"]),
    (base(solver={"step_size": "papr"}), "solver.step_size", ["did you mean 'paper'", "positive number"]),
    (base(solver={"step_size": "0.5"}), "solver.step_size", ["unknown step size '0.5'"]),
    (base(solver={"step_size": -1}), "solver.step_size", ["positive"]),
    (base(solver={"step_size": 0}), "solver.step_size", ["positive"]),
    (base(solver={"step_size": float("inf")}), "solver.step_size", ["positive"]),
    (base(solver={"step_size": True}), "solver.step_size", ["auto, paper or a positive number", "bool"]),
    (base(solver={"step_size": [0.1]}), "solver.step_size", ["auto, paper or a positive number"]),
    (base(methods=["SP-topd (t)", {"label": "LP (t)", "support": "labeled"}]), "methods[1].support",
     ["'LP (t)' has no option 'support'", "SP-topd (t), SP-topd (i)"]),
    (base(methods=[{"label": "KRR (i)", "support": "all"}]), "methods[0].support", ["has no option"]),
    (base(methods=[{"label": "SP-topd (i)", "support": "labelled"}]), "methods[0].support",
     ["did you mean 'labeled'", "all, labeled"]),
    (base(methods=[{"label": "SP-topd (i)", "support": True}]), "methods[0].support", ["expected one of"]),
    (base(methods=[{"label": "SP-topd (t)", "suport": "all"}]), "methods[0].suport", ["did you mean 'support'"]),
    (base(methods=["SP-topd (i)", {"label": "SP-topd (i)", "support": "labeled"}]), "methods[1]",
     ["listed twice with the same options (labels: onehot, normalization: lazy, support: labeled)"]),
])
def test_reproduction_option_errors_name_the_key_path(raw, path, words):
    err = error_of(raw)
    assert err.path == path, str(err)
    assert str(err).startswith(f"{path}: ")
    for w in words:
        assert w in str(err), str(err)


def test_paper_protocol_config_is_table1_with_class0():
    t1 = load_config(os.path.join(REPO, "configs", "table1.yaml")).to_dict()
    pp = load_config(os.path.join(REPO, "configs", "table1_paper_protocol.yaml")).to_dict()
    assert t1["unreachable"] == "wrong" and pp["unreachable"] == "class0"
    differ = {k for k in t1 if t1[k] != pp[k]}
    assert differ <= {"name", "description", "unreachable"}, differ
    assert pp["name"] != t1["name"]           # its own output folder and cache


@pytest.mark.parametrize("entry", ["Digit1", {"name": "usps"}])
def test_a_vector_dataset_in_a_graph_config_names_the_protocol_to_set(entry):
    with pytest.raises(ConfigError) as err:
        parse_config({"datasets": ["Cora", entry], "methods": ["LP (t)"]})
    assert err.value.path == "datasets[1]"
    assert "is a vector dataset" in err.value.message and "protocol: labeled-per-class" in err.value.message


def test_quick_thins_grids_sweeps_and_levels_and_caps_drawn_datasets():
    """``--quick``: grids and sweeps keep at most three values, a task its first level, and a
    vector dataset drawn per class at most QUICK_MAX_PER_CLASS per class; the config is untouched."""
    from graphstk.experiments.overrides import QUICK_MAX_PER_CLASS

    digits = load_config(os.path.join(REPO, "configs", "fredholm_digits.yaml"))
    quick = digits.with_overrides(quick=True)
    noisy = quick.all_tasks()[1]
    assert noisy.n_labeled == [10] and digits.all_tasks()[1].n_labeled == [10, 20, 40, 80]
    assert noisy.datasets[0].vector["n_per_class"] == QUICK_MAX_PER_CLASS
    assert digits.all_tasks()[1].datasets[0].vector["n_per_class"] == 1000
    eta = load_config(os.path.join(REPO, "configs", "eta_ablation.yaml")).with_overrides(quick=True)
    (m,) = eta.methods
    assert m.sweep.values == (0.001, 0.5, 0.9999) and quick.quick and eta.quick


@pytest.mark.parametrize("raw, path", [
    (base(grid={"etta": [0.9]}), "grid.etta"),                                              # the config's grid
    (base(methods=[{"label": "SP-Lap (t)", "grid": {"etta": [0.9]}}]), "methods[0].grid.etta"),   # a method's
    ({"tasks": [base(grid={"etta": [0.9]})]}, "tasks[0].grid.etta"),                        # a task's
    ({"grid": {"etta": [0.9]}, "tasks": [base()]}, "tasks[0].grid.etta"),                   # shared by the tasks
    ({"tasks": [base(methods=[{"label": "LP (t)", "grid": {"etta": [0.9]}}])]}, "tasks[0].methods[0].grid.etta"),
])
def test_a_misspelt_grid_key_is_an_error_naming_the_right_key(raw, path):
    """``etta`` never silently runs the default eta grid: every place a grid can be written refuses it
    before anything runs, with the key it meant."""
    err = error_of(raw)
    assert err.path == path and "unknown key" in str(err) and "did you mean 'eta'" in str(err), str(err)
    assert "did you mean 'beta'" in str(error_of(base(methods=["SP-Lap (t)"], grid={"bta": [1.0]})))
