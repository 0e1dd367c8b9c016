"""The command line (``python -m graphstk`` and ``run.py``)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def test_cli_prog_names_and_instant_help():
    env = dict(os.environ, PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, "-m", "graphstk", "--help"], cwd=REPO, env=env, capture_output=True,
                         text=True)
    assert out.returncode == 0 and out.stdout.startswith("usage: python -m graphstk")
    out = subprocess.run([sys.executable, "run.py", "--help"], cwd=REPO, env=env, capture_output=True, text=True)
    assert out.stdout.startswith("usage: run.py")
    # help imports neither torch nor torch_geometric
    code = "import sys, runpy; sys.argv=['run.py','--help']\ntry:\n runpy.run_path('run.py', run_name='__main__')\n" \
           "except SystemExit: pass\nprint('torch' in sys.modules, 'torch_geometric' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True)
    assert out.stdout.strip().endswith("False False"), out.stdout + out.stderr


def test_non_utf8_config_is_a_clean_exit_2(tmp_path, capsys):
    from graphstk.__main__ import main
    bad = tmp_path / "b.yaml"
    bad.write_bytes(b"\x89PNG")
    with pytest.raises(SystemExit) as ex:
        main([str(bad)], prog="run.py")
    assert ex.value.code == 2
    assert "not a UTF-8 text file" in capsys.readouterr().err
