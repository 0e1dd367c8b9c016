"""The documentation against the code: every ``graphstk/...`` or ``tests/...`` path and every dotted
``graphstk.x.y`` name that README.md and docs/*.md mention exists; docs/architecture.md stays short; tests/ mirrors graphstk/ as that page says; and no
file refers to how the code was written instead of what it does."""
from __future__ import annotations

import importlib
import re
from pathlib import Path


REPO = Path(__file__).resolve().parents[1]
DOCS = sorted([REPO / "README.md", *(REPO / "docs").glob("*.md")])
MAX_ARCHITECTURE_LINES = 140

#: a path into the package or the tests: ``graphstk/methods/grid.py``, ``tests/nn/`` (templates
#: such as ``tests/<package>/`` are skipped)
PATH = re.compile(r"(?<![\w./-])((?:graphstk|tests)/[\w./<>-]*[\w>]/?)")
#: a path relative to graphstk/ in backticks: ``methods/propagation.py``, ``experiments/protocols/``
SUBPACKAGES = ("data", "distributed", "experiments", "features", "methods", "nn", "operators", "spectral")
RELATIVE = re.compile(r"`((?:%s)/(?:[\w./<>-]*\.py|[\w./<>-]*/)?)`" % "|".join(SUBPACKAGES))
#: a dotted name: ``graphstk.operators.KernelOperator``
DOTTED = re.compile(r"(?<![\w./-])(graphstk(?:\.\w+)+)")
#: words that tell how the code was written rather than what it does
PROVENANCE = re.compile(r"session [0-9]|issue [0-9]|other\s+helpers|DESIGN\.md", re.IGNORECASE)


def _mentions(pattern: re.Pattern, files=DOCS) -> list[tuple[str, str]]:
    out = []
    for doc in files:
        for name in pattern.findall(doc.read_text(encoding="utf-8")):
            name = name.rstrip(".")
            if "<" not in name and "*" not in name:
                out.append((doc.relative_to(REPO).as_posix(), name))
    return sorted(set(out))


def _resolves(dotted: str) -> bool:
    """``graphstk.a.b.c``: the longest importable module prefix, then attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def test_docs_name_paths_that_exist():
    sources = sorted([*(REPO / "graphstk").rglob("*.py"), *(REPO / "tests").rglob("*.py")])
    missing = [f"{doc}: {p}" for doc, p in _mentions(PATH, DOCS + sources) if not (REPO / p).exists()]
    missing += [f"{doc}: {p} (graphstk/{p})" for doc, p in _mentions(RELATIVE) if not (REPO / "graphstk" / p).exists()]
    assert not missing, "paths named in the docs that do not exist:\n" + "\n".join(missing)


def test_docs_name_modules_and_objects_that_exist():
    missing = [f"{doc}: {name}" for doc, name in _mentions(DOTTED) if not _resolves(name)]
    assert not missing, "dotted names in the docs that do not resolve:\n" + "\n".join(missing)


def test_architecture_page_is_short_and_names_every_package():
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    n = len(text.splitlines())
    assert n < MAX_ARCHITECTURE_LINES, f"docs/architecture.md has {n} lines"
    parts = [p for p in sorted((REPO / "graphstk").iterdir()) if p.name != "__init__.py"
             and (p.suffix == ".py" or (p / "__init__.py").exists())]
    unnamed = [p.name for p in parts if f"graphstk/{p.name}{'/' if p.is_dir() else ''}" not in text]
    assert not unnamed, f"docs/architecture.md does not name graphstk/{unnamed}"


#: test files that check several modules of one package together, each named after what it checks
ACROSS_MODULES = {
    "tests/data/test_bad_inputs.py": "bad input to every loader of graphstk.data",
    "tests/distributed/test_engines.py": "the engines on several processes against one process",
    "tests/experiments/registrations/test_separating_registration.py": "registrations/separating.py; "
    "pytest imports test files by base name, and tests/methods/test_separating.py has that one",
    "tests/experiments/test_vector_pipeline.py": "the experiment loop on vector data, end to end",
    "tests/operators/test_composed_kernels.py": "operators/composed.py and the kernels it composes",
    "tests/test_docs.py": "the documentation",
    "tests/test_readme.py": "the README's examples, run as a reader follows them",
}


def test_tests_mirror_the_package():
    """``tests/<package>/test_<module>.py`` tests ``graphstk/<package>/<module>.py`` (or the
    subpackage ``graphstk/<package>/<module>/``; ``test_index.py`` tests ``_index.py``); the
    contracts over many estimators are in ``tests/contracts/``."""
    stray = []
    for t in sorted((REPO / "tests").rglob("test_*.py")):
        rel = t.relative_to(REPO / "tests")
        if rel.parts[0] == "contracts" or f"tests/{rel.as_posix()}" in ACROSS_MODULES:
            continue
        name, where = t.stem[len("test_"):], REPO.joinpath("graphstk", *rel.parts[:-1])
        if not any(p.exists() for p in (where / f"{name}.py", where / f"_{name}.py", where / f"__{name}__.py",
                                        where / name)):
            stray.append(f"tests/{rel.as_posix()}")
    assert not stray, "test files with no module of that name at the matching path:\n" + "\n".join(stray)


def _text_files():
    """The .py, .md and .yaml files of the repository, less docs/results/ (recorded run outputs)
    and hidden or build folders."""
    skip = {"__pycache__", "build", "_build", "auto_examples", "dist", "node_modules", "venv"}
    for p in REPO.rglob("*"):
        rel = p.relative_to(REPO).parts
        if p.suffix not in (".py", ".md", ".yaml") or rel[:2] == ("docs", "results") or not p.is_file():
            continue
        if not skip.intersection(rel[:-1]) and not any(part.startswith(".") for part in rel[:-1]):
            yield p


def test_no_file_tells_how_it_was_written():
    found = []
    for p in _text_files():
        for i, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if PROVENANCE.search(line):
                found.append(f"{p.relative_to(REPO)}:{i}: {line.strip()[:100]}")
    assert not found, "\n".join(found)


# -- every public name has a description (the API reference is built from them) -----------------

#: the packages whose ``__all__`` is the public API (one page each in the API reference)
PUBLIC_PACKAGES = ("graphstk", "graphstk.operators", "graphstk.spectral", "graphstk.methods", "graphstk.nn",
                   "graphstk.features", "graphstk.data", "graphstk.experiments", "graphstk.distributed",
                   "graphstk.mmd", "graphstk.memory", "graphstk.exceptions")

#: Public names allowed without a description: none. Keyed by where the object is defined
#: (``module.Class.member``); the test fails when a listed name has one, so the list only shrinks.
UNDOCUMENTED_ALLOWED: frozenset[str] = frozenset()


def _constant_described(package, name: str) -> bool:
    """A constant has no docstring: its description is the ``#:`` comment above its assignment."""
    module = importlib.import_module(package)
    files = [Path(module.__file__)]
    if hasattr(module, "__path__"):
        files += sorted(Path(module.__path__[0]).rglob("*.py"))
    pattern = re.compile(r"^[ \t]*#:\s*\S.*\n%s\b\s*(?::[^=\n]*)?=" % re.escape(name), re.MULTILINE)
    return any(pattern.search(f.read_text(encoding="utf-8")) for f in files)


def _member_doc(cls, name: str) -> str:
    """The docstring of ``cls.name``, inherited from a base class where the override has none (as
    ``help()`` and the API reference show it)."""
    for base in cls.__mro__:
        attr = vars(base).get(name)
        if attr is None:
            continue
        doc = (attr.fget.__doc__ if isinstance(attr, property) and attr.fget else None) or \
            getattr(getattr(attr, "__func__", attr), "__doc__", None)
        if doc and doc.strip():
            return doc
    return ""


def _undocumented() -> list[str]:
    import inspect

    missing = set()
    for package in PUBLIC_PACKAGES:
        module = importlib.import_module(package)
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.ismodule(obj):
                continue
            if not (inspect.isclass(obj) or inspect.isroutine(obj)):
                if not _constant_described(package, name):
                    missing.add(f"{package}.{name} (constant: no #: comment above its assignment)")
                continue
            where = f"{obj.__module__}.{obj.__qualname__}"
            if not (obj.__doc__ or "").strip():          # its own: a class does not inherit one
                missing.add(where)
            if inspect.isclass(obj):
                for member, attr in vars(obj).items():
                    if member.startswith("_") or not (isinstance(attr, (property, classmethod, staticmethod))
                                                      or inspect.isfunction(attr)):
                        continue
                    if not _member_doc(obj, member).strip():
                        missing.add(f"{where}.{member}")
    return sorted(missing)


def test_every_public_name_has_a_description():
    missing = _undocumented()
    new = [m for m in missing if m not in UNDOCUMENTED_ALLOWED]
    assert not new, ("public names without a docstring (the API reference shows an empty entry); "
                     "describe what they do:\n" + "\n".join(new))
    fixed = sorted(UNDOCUMENTED_ALLOWED - set(missing))
    assert not fixed, "documented now; remove from UNDOCUMENTED_ALLOWED:\n" + "\n".join(fixed)


def test_api_reference_has_a_page_per_public_package():
    """docs/conf.py writes one API page per package of its ``API_PACKAGES``: the same packages as
    :data:`PUBLIC_PACKAGES`, so a new public package is documented as soon as it is listed here."""
    import ast

    tree = ast.parse((REPO / "docs" / "conf.py").read_text(encoding="utf-8"))
    pages = next(ast.literal_eval(node.value) for node in ast.walk(tree) if isinstance(node, ast.Assign)
                 and any(getattr(t, "id", None) == "API_PACKAGES" for t in node.targets))
    assert sorted(pages) == sorted(PUBLIC_PACKAGES)
    index = (REPO / "docs" / "api" / "index.rst").read_text(encoding="utf-8")
    assert not [p for p in PUBLIC_PACKAGES if f"   {p}\n" not in index], "docs/api/index.rst lists every page"


def test_rendered_tables_are_what_the_recorded_results_give():
    """Every table between ``<!-- table -->`` / ``<!-- include -->`` markers of the docs is what
    ``docs/reproduction/build.py`` renders from ``docs/results/`` now: no number was typed over."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, str(REPO / "docs" / "reproduction" / "build.py"), "--check"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
