"""Every benchmark script runs: ``python bench/NAME.py --quick`` (small sizes, seconds) in a fresh
process, from the repository root, as its README says. A script that breaks fails here, not on the
day its numbers are next needed. No timing is asserted: the subprocess timeout only stops a hang."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted((ROOT / "bench").glob("*.py"))
TIMEOUT_S = 600            # generous: a hang, not a slow machine, is what it catches


def test_the_bench_folder_has_scripts():
    assert len(SCRIPTS) >= 10, f"bench/*.py found {len(SCRIPTS)} scripts under {ROOT / 'bench'}"


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_quick_form_runs(script, tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
           "OMP_NUM_THREADS": "1", "GRAPHSTK_BENCH_OUT": str(tmp_path), "MPLBACKEND": "Agg"}
    before = set(_tracked_changes())
    out = subprocess.run([sys.executable, str(script), "--quick"], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=TIMEOUT_S)
    assert out.returncode == 0, f"{script.name} --quick exited {out.returncode}:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    assert out.stdout.strip(), f"{script.name} --quick printed nothing"
    assert set(_tracked_changes()) == before, f"{script.name} --quick changed files of the repository"


def _tracked_changes() -> list[str]:
    """``git status --porcelain`` of the repository (empty outside a git checkout)."""
    try:
        return subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True,
                              timeout=60).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        return []
