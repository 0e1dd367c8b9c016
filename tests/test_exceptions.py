"""The package's errors and warnings (graphstk.exceptions): every class is defined there and
re-exported where it is raised, and importing the package leaves Python's warning filters alone."""
from __future__ import annotations

import ast
import builtins
import subprocess
import sys
from pathlib import Path

import graphstk.exceptions as exc

REPO = Path(__file__).resolve().parents[1]


def _is_exception_base(node: ast.expr) -> bool:
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")
    builtin = getattr(builtins, name, None)
    return (isinstance(builtin, type) and issubclass(builtin, BaseException)) or name.endswith(
        ("Error", "Warning", "Exception", "Failure")) or name in exc.__all__


def test_every_error_and_warning_class_is_in_graphstk_exceptions():
    stray = []
    for path in sorted((REPO / "graphstk").rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        if rel == "graphstk/exceptions.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and any(_is_exception_base(b) for b in node.bases):
                stray.append(f"{rel}: class {node.name}")
    assert not stray, "error and warning classes outside graphstk/exceptions.py:\n" + "\n".join(stray)


def test_every_class_of_graphstk_exceptions_is_listed_and_documented():
    classes = {n for n, v in vars(exc).items() if isinstance(v, type) and issubclass(v, BaseException)
               and v.__module__ == exc.__name__}
    assert classes == set(exc.__all__)
    assert all((getattr(exc, n).__doc__ or "").strip() for n in classes)


def test_importing_the_package_sets_no_warning_filter():
    code = ("import warnings, numpy, scipy, sklearn, torch, torch_geometric\n"
            "base = list(warnings.filters)\n"
            "import graphstk, graphstk.data, graphstk.operators, graphstk.spectral, graphstk.methods, graphstk.nn, "
            "graphstk.features, graphstk.mmd, graphstk.distributed, graphstk.experiments\n"
            "print([f for f in warnings.filters if f not in base])")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout
