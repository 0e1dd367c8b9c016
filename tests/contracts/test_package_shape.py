"""The package holds every idea once: the figures of ``tools/shape.py`` stay within their targets.

Read from the source with :mod:`ast` (nothing of graphstk is imported here): no cycle between
subpackages, at most 10 imports inside functions (each saying why in a comment), no function in
``methods/`` or ``nn/`` over 100 lines, and one copy each of the spectrum grid, Appendix D's default
grids and Richardson's step formula.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("graphstk_shape", REPO / "tools" / "shape.py")
shape = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(shape)

FIGURES = shape.measure(run_default=False)


def _check(name: str):
    value, target = FIGURES["figures"][name], shape.TARGETS[name]
    assert value <= target, f"{name}: {value} > {target}:\n" + "\n".join(map(str, FIGURES["details"][name]))


def test_no_cycle_between_subpackages():
    _check("subpackage cycles")


def test_imports_inside_functions_are_few_and_say_why():
    _check("imports inside functions")
    silent = []
    for where in FIGURES["details"]["imports inside functions"]:
        path, line = where.rsplit(":", 1)
        lines = (REPO / path).read_text().splitlines()
        context = " ".join(lines[max(int(line) - 3, 0): int(line)])
        if "#" not in context:
            silent.append(where)
    assert not silent, "imports inside functions without a comment saying why:\n" + "\n".join(silent)


def test_no_long_function_in_methods_or_nn():
    _check("longest function in methods/ and nn/")


def test_one_copy_of_the_spectrum_grid_the_default_grids_and_the_step():
    for name in ("copies of the spectrum grid", "copies of the default eta/beta grids", "copies of Richardson's step"):
        _check(name)
        assert FIGURES["figures"][name] == 1, f"{name}: none found; tools/shape.py no longer recognises it"


def test_the_shape_detectors_find_what_they_look_for():
    """The detectors themselves: a written-out step, a 2049 literal and an import in a function are found."""
    import ast

    tree = ast.parse("def f(N, n, beta, s):\n    import os\n    return 1.0 / (N * s + n * beta)\n")
    func = tree.body[0]
    assert any(shape._is_step(node) for node in ast.walk(func))
    inside = [node for node, in_function in shape._walk_with_function(tree) if in_function
              and isinstance(node, ast.Import)]
    assert len(inside) == 1
    assert shape.cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
