#!/usr/bin/env python
"""The package's shape in figures: ``python tools/shape.py [--json]``.

Prints, for the tree this script sits in:

- ``product lines``: lines of every ``graphstk/**/*.py`` file (``wc -l``);
- ``modules loaded``: graphstk modules imported by the default ``python run.py`` (run in a
  subprocess, counted when it exits);
- ``imports inside functions``: ``import`` statements nested in a function body;
- ``subpackage cycles``: strongly connected groups of graphstk subpackages under every import,
  those inside functions included (a top-level module such as ``graphstk/mmd.py`` is its own node);
- ``longest function``: the longest function in ``graphstk/methods`` and ``graphstk/nn``;
- ``copies``: definitions of the spectrum grid (a literal ``2049``), of Appendix D's eta and beta grids
  (literals holding ``0.999999``, or ``1e3`` and ``1e-8``; the figure is the larger count)
  and of Richardson's step (``1 / (... + ... beta ...)``).

Each figure is compared with its target; the exit code is 0 when all hold, 1 otherwise.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "graphstk"

TARGETS = {
    "product lines": 22000,
    "modules loaded by the default run": 50,
    "imports inside functions": 10,
    "subpackage cycles": 0,
    "longest function in methods/ and nn/": 100,
    "copies of the spectrum grid": 1,
    "copies of the default eta/beta grids": 1,
    "copies of Richardson's step": 1,
}


def _sources():
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path, path.read_text()


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _node(module: str) -> str:
    """The subpackage a module belongs to (``graphstk.methods.sskpca.base`` -> ``methods``)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "graphstk"


def _walk_with_function(tree):
    """Yield ``(node, inside_function)`` for every node."""
    stack = [(tree, False)]
    while stack:
        node, inside = stack.pop()
        yield node, inside
        nested = inside or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        stack.extend((child, nested) for child in ast.iter_child_nodes(node))


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> list[str]:
    if node.level == 0:
        base = node.module or ""
    else:
        parts = module.split(".")
        if not is_package:
            parts = parts[:-1]
        parts = parts[: len(parts) - (node.level - 1)]
        base = ".".join(parts + ([node.module] if node.module else []))
    if node.module is None:   # from . import a, b
        return [f"{base}.{alias.name}" for alias in node.names]
    return [base]


def import_facts():
    """Imports inside functions (with places) and the subpackage import graph."""
    inside, edges = [], {}
    for path, text in _sources():
        module = _module_name(path)
        tree = ast.parse(text)
        for node, in_function in _walk_with_function(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                targets = _resolve(module, path.name == "__init__.py", node)
            else:
                continue
            if in_function:
                inside.append(f"{path.relative_to(ROOT)}:{node.lineno}")
            for target in targets:
                if target == "graphstk" or target.startswith("graphstk."):
                    a, b = _node(module), _node(target)
                    if a != b and "graphstk" not in (a, b):
                        edges.setdefault(a, set()).add(b)
    return inside, edges


def cycles(edges):
    """Strongly connected groups of more than one node of ``edges`` (node -> set of nodes it imports; Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(set(edges) | {w for ws in edges.values() for w in ws}):
        if v not in index:
            visit(v)
    return out


def longest_functions(top=5):
    rows = []
    for path, text in _sources():
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] not in ("methods", "nn"):
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                rows.append((node.end_lineno - node.lineno + 1, f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"))
    rows.sort(reverse=True)
    return rows[:top]


def _is_step(node) -> bool:
    """``1 / (... + ... beta ...)``: a Richardson step written out."""
    return (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)
            and isinstance(node.left, ast.Constant) and node.left.value in (1, 1.0, 2, 2.0)
            and isinstance(node.right, ast.BinOp) and isinstance(node.right.op, ast.Add)
            and "beta" in ast.unparse(node.right))


def copies():
    """Places that define the spectrum grid, the default eta/beta grids and Richardson's step."""
    grid, defaults, step = [], [], []
    for path, text in _sources():
        rel = str(path.relative_to(ROOT))
        tree = ast.parse(text)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and node.value == 2049 and type(node.value) is int \
                    and not rel.startswith("graphstk/data/"):   # data/: IDX magic numbers (0x801)
                grid.append(f"{rel}:{node.lineno}")
            if isinstance(node, (ast.List, ast.Tuple)) and len(node.elts) >= 4:
                values = [e.value for e in node.elts if isinstance(e, ast.Constant)]
                if len(values) == len(node.elts):
                    if 0.999999 in values:
                        defaults.append(f"{rel}:{node.lineno} eta")
                    if 1e3 in values and 1e-8 in values:
                        defaults.append(f"{rel}:{node.lineno} beta")
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                    _is_step(inner) for inner in ast.walk(node)
                    if not isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)) or inner is node):
                step.append(f"{rel}:{node.lineno} {node.name}")
    return grid, defaults, step


def modules_loaded() -> tuple[int, list[str]]:
    code = (
        "import atexit, sys, runpy\n"
        "def _count():\n"
        "    names = sorted(m for m in sys.modules if m == 'graphstk' or m.startswith('graphstk.'))\n"
        "    sys.__stdout__.write('\\nGRAPHSTK_MODULES ' + ' '.join(names) + '\\n')\n"
        "atexit.register(_count)\n"
        f"sys.argv = ['run.py', '--no-progress', '--out', {repr(os.path.join(os.environ.get('TMPDIR', '/tmp'), 'shape_run'))}]\n"
        f"runpy.run_path({repr(str(ROOT / 'run.py'))}, run_name='__main__')\n"
    )
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    for line in proc.stdout.splitlines():
        if line.startswith("GRAPHSTK_MODULES"):
            names = line.split()[1:]
            return len(names), names
    raise RuntimeError(f"the default run did not report its modules:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")


def measure(run_default: bool = True) -> dict:
    lines = sum(text.count("\n") for _, text in _sources())
    inside, edges = import_facts()
    grid, defaults, step = copies()
    longest = longest_functions()
    figures = {
        "product lines": lines,
        "imports inside functions": len(inside),
        "subpackage cycles": len(cycles(edges)),
        "longest function in methods/ and nn/": longest[0][0] if longest else 0,
        "copies of the spectrum grid": len(grid),
        "copies of the default eta/beta grids": max(sum(d.endswith(" eta") for d in defaults),
                                                    sum(d.endswith(" beta") for d in defaults)),
        "copies of Richardson's step": len(step),
    }
    details = {"imports inside functions": inside, "subpackage cycles": cycles(edges),
               "longest function in methods/ and nn/": [f"{n} {where}" for n, where in longest],
               "copies of the spectrum grid": grid, "copies of the default eta/beta grids": defaults,
               "copies of Richardson's step": step}
    if run_default:
        count, names = modules_loaded()
        figures["modules loaded by the default run"] = count
        details["modules loaded by the default run"] = names
    return {"figures": figures, "details": details}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures and their details as JSON")
    parser.add_argument("--details", action="store_true", help="list the places behind each figure")
    parser.add_argument("--no-run", action="store_true", help="skip the default run (modules loaded)")
    args = parser.parse_args(argv)
    result = measure(run_default=not args.no_run)
    if args.json:
        print(json.dumps(result, indent=2))
    ok = True
    if not args.json:
        print(f"{'figure':40s} {'now':>8s} {'target':>8s}")
    for name, target in TARGETS.items():
        if name not in result["figures"]:
            continue
        value = result["figures"][name]
        holds = value <= target
        ok &= holds
        if not args.json:
            print(f"{name:40s} {value:8d} {target:8d}  {'PASS' if holds else 'FAIL'}")
            if args.details and result["details"].get(name):
                for item in result["details"][name]:
                    print(f"    {item}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
