"""``graphstk.data`` loads its names on first use: a graph run never loads the vector and text readers."""
from __future__ import annotations

import subprocess
import sys

import pytest

import graphstk.data as data


def test_every_public_name_resolves_and_is_listed():
    assert sorted(data.__all__) == data.__all__
    for name in data.__all__:
        assert getattr(data, name) is not None, name
        assert name in dir(data)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no_such_name"):
        data.no_such_name


def test_graph_modules_do_not_load_the_vector_readers():
    code = ("import sys, graphstk.data.splits, graphstk.data.datasets; "
            "print(sorted(m for m in sys.modules if m.startswith('graphstk.data')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    for heavy in ("graphstk.data.vector", "graphstk.data.vector_readers", "graphstk.data.text",
                  "graphstk.data.vector_dataset"):
        assert repr(heavy) not in out, out
