"""The README's Python examples run as written, in order, in one namespace (a later example uses
names an earlier one defined, as a reader following the tour would)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from graphstk.exceptions import DatasetNotFoundError

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def test_readme_has_python_examples():
    assert len(BLOCKS) >= 4, "the README's tour lost its examples"


def test_readme_examples_run(capsys):
    namespace: dict = {"__name__": "readme"}
    for i, block in enumerate(BLOCKS):
        try:
            exec(compile(block, f"README.md python block {i}", "exec"), namespace)
        except DatasetNotFoundError as err:
            pytest.skip(f"README block {i} needs a dataset that is absent here: {err}")
    assert capsys.readouterr().out.strip(), "the examples print their results"
