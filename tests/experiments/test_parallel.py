"""``run.py --jobs N``: rows computed by worker processes give the rows of one process, resume from the same
cache, and report a worker's error naming its unit (graphstk.experiments.parallel). The worker processes run
under a subprocess timeout or are stopped by the run itself, so nothing outlives a test."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml

from graphstk.exceptions import RunError
from graphstk.experiments.config import parse_config
from graphstk.experiments.parallel import compute_rows
from graphstk.experiments.pipeline import run_experiment

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

#: two generated graphs, four methods of different kinds (propagation, eigenpairs, kernel ridge), two seeds
CONFIG = {
    "name": "jobs",
    "seeds": 2,
    "p_test": 0.2,
    "datasets": [
        {"name": "Karate", "graph": {"kind": "karate_club", "train_per_class": 3, "val_per_class": 3}},
        {"name": "SBM", "graph": {"kind": "sbm", "sizes": [60, 60, 60], "p_in": 0.1, "p_out": 0.015, "seed": 1,
                                  "train_per_class": 5, "val_per_class": 5}},
    ],
    "grid": {"T": [2, 8], "eta": [0.5, 0.9], "beta": [1.0, 1e-3], "d": [4, 8]},
    "methods": ["LP (t)", "SP-Lap (i)", "SP-topd (t)", "KRR (i)"],
    "paper_table": None,
}


def _run(tmp_path, out: str, *args: str) -> dict:
    cfg = tmp_path / "jobs.yaml"
    cfg.write_text(yaml.safe_dump(CONFIG))
    r = subprocess.run([sys.executable, os.path.join(REPO, "run.py"), str(cfg), "--out", str(tmp_path / out),
                        "--no-progress", *args], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads((tmp_path / out / "results.json").read_text())


def _numbers(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k not in ("wall_time_s", "fit_time_s")} for r in rows]


def test_two_workers_give_the_rows_of_one_process_and_resume_from_its_cache(tmp_path):
    one = _run(tmp_path, "one", "--threads", "1")
    two = _run(tmp_path, "two", "--jobs", "2")
    assert _numbers(two["rows"]) == _numbers(one["rows"])          # every accuracy, choice and count
    assert (two["cache"]["computed"], two["cache"]["reused"]) == (16, 0)
    assert len(os.listdir(tmp_path / "two" / "cache")) == 16          # the run computed none of them again
    assert two["jobs"]["processes"] == 2 and two["jobs"]["threads"] == 1
    assert len(two["jobs"]["peak_rss_gb"]) == 2 and two["peak_rss_gb"] >= max(two["jobs"]["peak_rss_gb"])
    assert "jobs" not in one
    again = _run(tmp_path, "two", "--jobs", "2")                      # the same directory: all read back
    assert (again["cache"]["computed"], again["cache"]["reused"]) == (0, 16)
    assert again["rows"] == two["rows"]
    single = _run(tmp_path, "two", "--threads", "1")                  # and one process reads the workers' units
    assert (single["cache"]["computed"], single["cache"]["reused"]) == (0, 16)


def test_a_worker_error_stops_the_run_and_names_where(tmp_path):
    cfg = parse_config(CONFIG)
    bad = {"task": 0, "dataset": 0, "level": 0.2, "series": 99, "name": "LP (t)", "reps": [0], "code": "c",
           "data": "d", "size": 0}
    with pytest.raises(RunError, match=r"IndexError.*\n\(in worker process 0"):
        compute_rows(cfg, str(tmp_path), REPO, [bad], jobs=1, progress=False)


def test_jobs_is_checked_before_anything_runs(tmp_path):
    with pytest.raises(ValueError, match="jobs must be an integer >= 1"):
        run_experiment(parse_config(CONFIG), str(tmp_path), jobs=0)
    with pytest.raises(ValueError, match="use one or the other"):
        run_experiment(parse_config(CONFIG), str(tmp_path), jobs=2, kernel_factory=lambda *a, **k: None)
    for args, message in ((["--jobs", "0"], "--jobs: must be an integer >= 1"),
                          (["--jobs", "2", "--distributed"], "use one or the other")):
        r = subprocess.run([sys.executable, os.path.join(REPO, "run.py"), *args, "--out", str(tmp_path / "x")],
                           capture_output=True, text=True, cwd=REPO, timeout=120)
        assert r.returncode == 2 and message in r.stderr
