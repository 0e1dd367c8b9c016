"""Every shipped config runs to the end from its defaults.

Each config under ``configs/`` runs through the runner in its ``--quick`` variant (one seed,
every grid thinned to at most three values), on the smallest of its datasets per task that is on
disk, with every method it lists, each once (in a multi-task config, in the task on the smallest
graph that lists it): what a user's ``python run.py configs/NAME.yaml`` does, on less data. The full Table 1 and Table 4 runs, with their wall times, are recorded in
docs/benchmarks.md. One cell of Table 1 also runs whole: Computers, SP-Lap (i), its full grid,
one seed (the inductive inverse Laplacian on the largest graph of that table).
"""
from __future__ import annotations

import glob
import os
import warnings

import pytest

from graphstk.experiments.config import load_config
from graphstk.experiments.pipeline import run_experiment

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIGS = sorted(glob.glob(os.path.join(REPO, "configs", "*.yaml")))

#: graph datasets by node count, so that the quick check runs each task on its smallest graph
GRAPH_SIZES = {"Cora": 2708, "CiteSeer": 3327, "Photo": 7650, "Computers": 13752, "DBLP": 17716,
               "CS": 18333, "PubMed": 19717, "CoraFull": 19793, "Physics": 34493}


@pytest.fixture(scope="module")
def all_datasets(tmp_path_factory):
    """A writable copy of every shared dataset folder (PyG writes processed/ beside raw/)."""
    import shutil

    from conftest import _make_writable, shared_datasets_dir

    source = shared_datasets_dir()
    if not source.is_dir():
        pytest.skip(f"benchmark datasets not found at {source} (set GRAPHSTK_DATA or put shared/ beside the repo)")
    root = tmp_path_factory.mktemp("all_datasets")
    shutil.copytree(source, root, dirs_exist_ok=True, ignore=shutil.ignore_patterns("processed"))
    _make_writable(root)
    return str(root)


def _each_method_once(cfg):
    """A multi-task config with each method (label and options) of a protocol kept in one task only: the
    first task of that protocol on the smallest graph among those that list it (the tasks of a config
    such as ``shchur_protocol.yaml`` differ in their datasets and numbers of splits, not in what a
    method runs)."""
    if not hasattr(cfg, "tasks"):
        return cfg
    size = {id(t): min(GRAPH_SIZES.get(d.name, 0) for d in t.datasets) for t in cfg.tasks}
    home = {}
    for t in sorted(cfg.tasks, key=lambda t: size[id(t)]):
        for m in t.methods:
            home.setdefault((t.protocol, m.display()), id(t))
    tasks = [t.model_copy(update={"methods": kept}) for t in cfg.tasks
             if (kept := [m for m in t.methods if home[(t.protocol, m.display())] == id(t)])]
    return cfg.model_copy(update={"tasks": tasks})


def _smallest_present(task, root: str) -> str | None:
    """The task's dataset to run: the smallest graph (or the first vector set) that is on disk."""
    from graphstk.experiments.datasets import is_missing_error, load_spec
    from graphstk.experiments.vector_data import load_vector_spec

    for spec in sorted(task.datasets, key=lambda d: GRAPH_SIZES.get(d.name, 0)):
        if spec.graph is not None:   # a generated graph is always there (and --quick generates a small one)
            return spec.name
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                (load_spec if task.GRAPH else load_vector_spec)(spec, root)
        except Exception as err:  # noqa: BLE001 - only "absent" is a reason to try the next one
            if is_missing_error(err):
                continue
            raise
        return spec.name
    return None


@pytest.mark.slow
@pytest.mark.parametrize("path", CONFIGS, ids=[os.path.basename(p) for p in CONFIGS])
def test_shipped_config_runs_to_the_end(path, tmp_path, all_datasets):
    cfg = load_config(path)
    chosen = [c for c in (_smallest_present(t, all_datasets) for t in cfg.all_tasks()) if c]
    if not chosen:
        pytest.skip(f"{os.path.basename(path)}: none of its datasets is on disk")
    quick = _each_method_once(cfg.with_overrides(seeds=1, quick=True, datasets=chosen))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = run_experiment(quick, str(tmp_path), all_datasets, progress=False, log=lambda m: None)
    assert res["rows"], f"{os.path.basename(path)} produced no results row"
    for name in ("results.json", "results.csv", "results.md"):
        assert (tmp_path / name).is_file()


@pytest.mark.slow
def test_table1_computers_inductive_inverse_laplacian_cell_runs_whole(tmp_path, dataset_root):
    """Computers / SP-Lap (i) / p_test = 0.01 / seed 0 with Appendix D's whole grid (8 etas x 12
    betas) through the runner, ``solver: auto`` as configs/table1.yaml sets it."""
    root = dataset_root("Computers")
    cfg = load_config(os.path.join(REPO, "configs", "table1.yaml")).with_overrides(seeds=1, datasets=["Computers"])
    cfg = cfg.model_copy(update={"methods": [m for m in cfg.methods if m.label == "SP-Lap (i)"]})
    res = run_experiment(cfg, str(tmp_path), str(root), progress=False, log=lambda m: None)
    (row,) = res["rows"]
    assert (row["dataset"], row["method"], row["setting"]) == ("Computers", "SP-Lap (i)", "inductive")
    assert len(row["test_acc"]) == 1 and 50.0 < row["test_acc"][0] <= 100.0
    assert set(row["best_params"][0]) == {"eta", "beta"}
