"""The import structure of the package: modules are split by what they do, and their imports go one way.

Read from the source with :mod:`ast` (nothing is imported), counting the imports inside functions too:

* no import cycle among graphstk modules (the lazy ``__getattr__`` of ``graphstk/__init__.py`` is
  not an import of the package's own);
* every import at the top of its module (no ``noqa: E402``);
* a private name (a leading underscore, or a name inside a private module) is imported only inside
  the subpackage that owns it (``graphstk/_checks.py`` belongs to the whole package,
  ``graphstk/nn/_common.py`` to ``graphstk.nn``).

The lists of known exceptions below are empty and stay so: a listed entry that no longer applies
fails the test too.
"""
from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "graphstk"
_spec = importlib.util.spec_from_file_location("graphstk_shape", REPO / "tools" / "shape.py")
shape = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(shape)

#: Import cycles still present, each as the sorted tuple of its modules (a strongly connected
#: component of the import graph). Empty now: keep it so.
KNOWN_CYCLES: set[tuple[str, ...]] = set()
#: Files that still import below their top (``noqa: E402``). Empty now: keep it so.
KNOWN_LATE_TOP_IMPORTS: set[str] = set()


def _modules() -> dict[str, Path]:
    mods = {}
    for p in sorted(PACKAGE.rglob("*.py")):
        parts = list(p.relative_to(REPO).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = p
    return mods


MODULES = _modules()


def _base(module: str, path: Path, node: ast.ImportFrom) -> str:
    """The absolute module an ``ImportFrom`` names."""
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    if path.name != "__init__.py":
        parts = parts[:-1]
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join(parts + ([node.module] if node.module else []))


def _lazy_getattr(module: str, tree: ast.Module) -> set[int]:
    """Line numbers of the imports inside ``graphstk/__init__.py``'s module ``__getattr__``."""
    if module != "graphstk":
        return set()
    return {n.lineno for f in tree.body if isinstance(f, ast.FunctionDef) and f.name == "__getattr__"
            for n in ast.walk(f) if isinstance(n, (ast.Import, ast.ImportFrom))}


def _imports():
    """``(module, line, imported module, imported names)`` for every import of a graphstk module."""
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        lazy = _lazy_getattr(module, tree)
        for node in ast.walk(tree):
            if getattr(node, "lineno", None) in lazy:
                continue
            if isinstance(node, ast.ImportFrom):
                yield module, node.lineno, _base(module, path, node), [a.name for a in node.names]
            elif isinstance(node, ast.Import):
                for a in node.names:
                    yield module, node.lineno, a.name, []


def _graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {m: set() for m in MODULES}
    for module, _, base, names in _imports():
        targets = {f"{base}.{n}" if f"{base}.{n}" in MODULES else base for n in names} or {base}
        for t in targets:
            # a package's own __init__ runs before any of its modules: an edge to an ancestor says nothing
            if t in MODULES and t != module and not module.startswith(t + "."):
                edges[module].add(t)
    return edges


def _cycles(edges: dict[str, set[str]]) -> set[tuple[str, ...]]:
    """The strongly connected components with more than one module (``tools/shape.py``'s Tarjan walk)."""
    return {tuple(group) for group in shape.cycles(edges)}


def test_no_import_cycle():
    found = _cycles(_graph())
    new = sorted(found - KNOWN_CYCLES)
    assert not new, "import cycles among graphstk modules (counting imports inside functions):\n" + \
        "\n".join(" <-> ".join(c) for c in new)
    fixed = sorted(KNOWN_CYCLES - found)
    assert not fixed, f"no longer cycles: remove them from KNOWN_CYCLES: {fixed}"


def test_imports_are_at_the_top():
    late = sorted(p.relative_to(REPO).as_posix() for p in MODULES.values() if "noqa: E402" in p.read_text())
    assert set(late) <= KNOWN_LATE_TOP_IMPORTS, \
        f"imports below the top of a module (noqa: E402): {sorted(set(late) - KNOWN_LATE_TOP_IMPORTS)}"
    fixed = sorted(KNOWN_LATE_TOP_IMPORTS - set(late))
    assert not fixed, f"no longer late: remove them from KNOWN_LATE_TOP_IMPORTS: {fixed}"


def _owner(dotted: str) -> str | None:
    """The subpackage that owns the first private part of ``dotted`` (``None``: nothing private)."""
    parts = dotted.split(".")
    for i, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:2]) if i >= 2 and ".".join(parts[:2]) in MODULES \
                and MODULES[".".join(parts[:2])].name == "__init__.py" else parts[0]
    return None


def test_private_names_stay_in_their_subpackage():
    wrong = []
    for module, line, base, names in _imports():
        if not base.startswith("graphstk"):
            continue
        for dotted in [f"{base}.{n}" for n in names] or [base]:
            owner = _owner(dotted)
            if owner is not None and module != owner and not module.startswith(owner + "."):
                wrong.append(f"{MODULES[module].relative_to(REPO)}:{line}: {dotted} (private to {owner})")
    assert not wrong, "private names imported outside their subpackage:\n" + "\n".join(wrong)
