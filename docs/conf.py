"""Sphinx configuration of graphstk's documentation.

Build (offline, warnings are errors)::

    sphinx-build -W -n --keep-going -b html docs docs/_build/html

The API reference (``docs/api/<package>.rst``) is written at every build from each public
package's ``__all__`` by :func:`write_api_pages`, so a name added to an ``__all__`` gets its page
without editing any rst by hand. Nothing in the build reaches the network: no intersphinx
inventories are downloaded, MathJax is served from the local ``sphinx-mathjax-offline`` copy,
and the gallery runs on generated graphs or on datasets under ``$GRAPHSTK_DATA``.
"""
from __future__ import annotations

import importlib
import inspect
import os
import pkgutil
import re
import shutil
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
REPO = DOCS.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("GRAPHSTK_OFFLINE", "1")

from docutils import nodes  # noqa: E402
from sphinx import addnodes  # noqa: E402
from sphinx.util import logging  # noqa: E402
from sphinx.transforms.post_transforms import SphinxPostTransform  # noqa: E402

import graphstk  # noqa: E402

project = "graphstk"
author = "graphstk developers"
copyright = "graphstk developers"
release = version = graphstk.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx.ext.doctest",
    "sphinx.ext.viewcode",
    "sphinx-mathjax-offline",          # MathJax copied into _static: math renders offline
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = [
    "_build", "results/**", "reproduction/build.py", "auto_examples/*.ipynb", "auto_examples/*.py",
    "auto_examples/*.zip", "auto_examples/*.json", "auto_examples/*.md5", "**/*.codeobj.json",
]
html_theme = "alabaster"
html_static_path: list[str] = []
html_theme_options = {"description": "graph semi-supervised learning with spectrally transformed kernels",
                      "page_width": "1180px", "sidebar_width": "260px"}
suppress_warnings = ["config.cache"]   # sphinx-gallery's callables in the config are not picklable

# -- autodoc / napoleon ----------------------------------------------------------------------------
autodoc_default_options = {"members": True, "member-order": "groupwise", "show-inheritance": True}
autodoc_inherit_docstrings = True
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
autoclass_content = "both"
napoleon_google_docstring = True
napoleon_numpy_docstring = True
napoleon_use_rtype = False
napoleon_use_param = False      # parameter types stay text ("int, default 1"), not cross-references
napoleon_use_ivar = False
add_module_names = False
# Type hints name objects of other libraries; without intersphinx (no downloads) they cannot be
# linked, so references into these packages are not errors. graphstk's own names must resolve.
nitpick_ignore_regex = [
    ("py:.*", r"(torch|numpy|np|scipy|sklearn|torch_geometric|networkx|nx|pydantic|collections|typing|"
              r"abc|pathlib|os|concurrent|multiprocessing|warnings|argparse|types|builtins|enum|"
              r"dataclasses|datetime|io|json|yaml|tqdm|matplotlib)(\..*)?"),
    ("py:.*", r"(Tensor|Data|ndarray|Path|Callable|Iterable|Iterator|Sequence|Mapping|Any|Optional|Union|"
              r"Literal|ArrayLike|NDArray|SparseTensor|Module|Parameter|Generator|Number|BaseModel|"
              r"PathLike|TextIO|Self|ClassVar|Hashable|MutableMapping|Adj|OptTensor|spmatrix|"
              r"LinearOperator|Figure|Axes|dtype|device|Size|ProcessGroup|Work|Event|Queue|Process)"),
    ("py:.*", r"(int|float|str|bool|bytes|dict|list|tuple|set|frozenset|object|type|callable|complex|"
              r"None|optional|default|array-like|array_like|sequence|iterable|mapping|function|"
              r"Exception|ValueError|TypeError|RuntimeError|KeyError|IndexError|FileNotFoundError|"
              r"OSError|UserWarning|RuntimeWarning|Warning|NotImplementedError|ImportError|"
              r"AttributeError|MemoryError|TimeoutError|StopIteration|slice|range|ellipsis|"
              r"NotFittedError|BaseEstimator|ClassifierMixin|TransformerMixin|RegressorMixin|"
              r"OutlierMixin|ClusterMixin|DensityMixin)"),
    # free text in a docstring's type or attribute field ("int, default 1", "classes"): not a name
    ("py:class", r"(?!graphstk\.)(?![A-Z]\w*$)(?![A-Z]\w*\.[A-Z]\w*$).*"),
    # the engine modules' helpers and types named in signatures and docstrings, not exported
    ("py:.*", r"graphstk\.methods\.(propagation|routes|problem)\.\w+"),
    ("py:.*", r"graphstk\.distributed\.exchange\._Pending|GraphKernel\.rows|Problem|BoolTensor|LongTensor"),
    # return types that are not exported (documented on the function that returns them)
    ("py:class", r"graphstk\.(data\.datasets\.DatasetSpec|experiments\.schema\.(MultiTask|TaskBase)|"
                 r"methods\.coupled_embedding\.CKEResult|spectral\.solvers\.VectorSpace|_spaces\.VectorSpace)"),
    ("py:.*", r".*\b(IndexLike|TensorLike|ArrayOrTensor|Index|Array|Float|Int)\b.*"),
]

# -- MyST: docs/*.md are the user guide ----------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 4
myst_url_schemes = ["http", "https", "mailto"]

# -- sphinx-gallery: examples/ with their output and figures -------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": str(REPO / "examples"),
    "gallery_dirs": "auto_examples",
    # run the cheap figure scripts; the Cora timing scripts are rendered with their recorded output
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"(_common|__init__)\.py",
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "plot_gallery": "True",
    "within_subsection_order": "FileNameSortKey",
    "reset_modules": ("matplotlib",),
    "image_scrapers": ("matplotlib",),
    "show_memory": False,
    "show_signature": False,
    "write_computation_times": False,
}

# -- the API reference, written from __all__ ----------------------------------------------------
#: the public packages, one page each, and what the page says about the package; an object is
#: documented on the first page whose ``__all__`` names it, and later pages link to that entry
API_PACKAGES = {
    "graphstk.operators": "the kernel-operator interface, graph kernels, feature kernels and their compositions",
    "graphstk.spectral": "spectral transforms s(lambda), iterative solvers and eigensolvers",
    "graphstk.methods": "estimators: STKR, Label-Prop, KRR, Fredholm kernels, SS-KPCA, support estimation",
    "graphstk.nn": "torch.nn modules with PyG's signatures, differentiable",
    "graphstk.features": "random Fourier and random binning features",
    "graphstk.data": "datasets, bring-your-own graphs, vector benchmarks and splits",
    "graphstk.experiments": "configs, protocols, runs over seeds and grids, results files",
    "graphstk.distributed": "the row-partitioned operator over torch.distributed processes",
    "graphstk.mmd": "kernel mean embeddings and the maximum mean discrepancy",
    "graphstk.memory": "the process's memory ceiling, the memory free now, and the checks before large allocations",
    "graphstk.exceptions": "the exceptions and warnings graphstk raises",
    "graphstk": "the top level: the names most users need, re-exported from the subpackages",
}
_ROLE = {"Classes": "class", "Exceptions and warnings": "exc", "Functions": "func", "Constants": "data"}


def public_names(package: str) -> dict[str, list[str]]:
    """The names of ``package.__all__`` grouped by kind: classes, exceptions and warnings,
    functions, constants, and subpackages."""
    module = importlib.import_module(package)
    groups: dict[str, list[str]] = {"Classes": [], "Functions": [], "Exceptions and warnings": [],
                                    "Constants": [], "Subpackages": []}
    for name in module.__all__:
        obj = getattr(module, name)
        if inspect.ismodule(obj):
            groups["Subpackages"].append(obj.__name__)
        elif inspect.isclass(obj) and issubclass(obj, BaseException):
            groups["Exceptions and warnings"].append(name)
        elif inspect.isclass(obj):
            groups["Classes"].append(name)
        elif inspect.isroutine(obj):
            groups["Functions"].append(name)
        else:
            groups["Constants"].append(name)
    return {k: sorted(v, key=str.lower) for k, v in groups.items() if v}


def _submodules(package: str) -> list[str]:
    """The modules under ``package`` (for :mod: cross-references), private ones excluded."""
    module = importlib.import_module(package)
    if not hasattr(module, "__path__"):
        return []
    out = []
    for info in pkgutil.walk_packages(module.__path__, package + "."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            out.append(info.name)
    return sorted(out)


_ROLE_RE = re.compile(r":(?:py:)?\w+:`~?([^`<]*?)(?:\s*<[^>]*>)?`")


def _summary(obj) -> str:
    """The first sentence of ``obj``'s docstring (a period inside ``literal`` does not end it),
    its roles turned into literals so that it reads the same on any page."""
    doc = (inspect.getdoc(obj) or "").strip().split("\n\n")[0].replace("\n", " ")
    doc = _ROLE_RE.sub(lambda m: f"``{m.group(1).split('.')[-1] if '.' in m.group(1) else m.group(1)}``", doc)
    in_literal, i = False, 0
    while i < len(doc):
        if doc.startswith("``", i):
            in_literal, i = not in_literal, i + 2
            continue
        if doc[i] == "." and not in_literal and (i + 1 == len(doc) or doc[i + 1] == " "):
            return doc[:i + 1]
        i += 1
    return doc


#: public names whose entry would have no description (each one is a build warning)
UNDESCRIBED: list[str] = []

_DIRECTIVE = {"Classes": "autoclass", "Exceptions and warnings": "autoexception", "Functions": "autofunction",
              "Constants": "autodata"}


def constant_doc(package: str, name: str) -> str:
    """The ``#:`` comment above ``NAME = ...`` (or ``NAME: type = ...``) in the package or one of
    its modules: the description of a public constant, which has no docstring of its own."""
    module = importlib.import_module(package)
    files = [Path(module.__file__)]
    if hasattr(module, "__path__"):
        files += sorted(Path(module.__path__[0]).rglob("*.py"))
    pattern = re.compile(r"((?:^[ \t]*#:.*\n)+)%s\b\s*(?::[^=\n]*)?=" % re.escape(name), re.MULTILINE)
    for f in files:
        m = pattern.search(f.read_text(encoding="utf-8"))
        if m:
            return " ".join(line.strip()[2:].strip() for line in m.group(1).splitlines())
    return ""


def _object_page(package: str, name: str, group: str) -> str:
    title = f"{package}.{name}"
    if group == "Constants":
        return "\n".join([title, "=" * len(title), "", f".. py:data:: {package}.{name}", "",
                          "   " + _ROLE_RE.sub(lambda m: f"``{m.group(1)}``", constant_doc(package, name)), ""])
    lines = [title, "=" * len(title), "", f".. currentmodule:: {package}", "", f".. {_DIRECTIVE[group]}:: {name}"]
    if group in ("Classes", "Exceptions and warnings"):
        lines += ["   :members:", "   :show-inheritance:"]
    if group == "Constants":
        lines += ["   :no-value:"]
    return "\n".join(lines) + "\n"


def _pages() -> dict[str, str]:
    """``{relative path: text}`` of every API page: one per package of :data:`API_PACKAGES`, one
    per object it documents (under ``generated/``)."""
    home: dict[int, str] = {}          # id(object) -> the dotted name it is documented under
    pages = {}
    registered: set[str] = set()       # modules given a target (for :mod: references)
    for package, about in API_PACKAGES.items():
        module = importlib.import_module(package)
        title = f"``{package}``"
        lines = [title, "=" * len(title), "", f".. automodule:: {package}", "   :no-members:", "",
                 about[:1].upper() + about[1:] + ".", ""]
        own_pages = []
        for group, names in public_names(package).items():
            lines += [group, "-" * len(group), ""]
            if group == "Subpackages":
                lines += [f"* :mod:`{n}`" + (f" (:doc:`{n}`)" if n in API_PACKAGES else "") for n in names] + [""]
                continue
            lines += [".. list-table::", "   :widths: 30 70", ""]
            for n in names:
                obj = getattr(module, n)
                key = id(obj) if group != "Constants" else id(obj) ^ hash(n)
                if key not in home:
                    home[key] = f"{package}.{n}"
                    pages[f"generated/{package}.{n}"] = _object_page(package, n, group)
                    own_pages.append(f"generated/{package}.{n}")
                    where = ""
                else:
                    where = f" (documented as ``{home[key]}``)"
                summary = _summary(obj) if group != "Constants" else constant_doc(package, n)
                if not summary.strip() or (group != "Constants" and not (obj.__doc__ or "").strip()):
                    UNDESCRIBED.append(f"{package}.{n}")
                summary = _ROLE_RE.sub(lambda m: f"``{m.group(1)}``", summary)
                lines += [f"   * - :{_ROLE[group]}:`~{home[key]}`", f"     - {summary}{where}"]
            lines.append("")
        if own_pages:
            lines += [".. toctree::", "   :hidden:", ""] + [f"   {p}" for p in own_pages] + [""]
        subs = [m for m in _submodules(package) if m not in API_PACKAGES and m not in registered]
        registered.update(subs)
        if subs:
            lines += ["Modules", "-------", "", "The modules of this package (import the names above from the "
                      "package itself):", ""]
            for sub in subs:
                lines += [f".. py:module:: {sub}", ""]
            lines += [f"* ``{sub}``" for sub in subs] + [""]
        pages[package] = "\n".join(lines)
    return pages


def write_api_pages(app=None) -> None:
    """Write ``docs/api/<package>.rst`` and ``docs/api/generated/<name>.rst`` (only the files whose
    text changes, so Sphinx's incremental build stays incremental; stale pages are removed)."""
    out = DOCS / "api"
    (out / "generated").mkdir(parents=True, exist_ok=True)
    pages = _pages()
    for rel, text in pages.items():
        path = out / f"{rel}.rst"
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    for path in (out / "generated").glob("*.rst"):
        if f"generated/{path.stem}" not in pages:
            path.unlink()
    for name in UNDESCRIBED:
        logging.getLogger(__name__).warning(f"public name without a description: {name} (give it a docstring)",
                                            type="graphstk", subtype="undocumented")


def _skip_member(app, what, name, obj, skip, options):
    """Leave out scikit-learn's generated metadata-routing setters (``set_fit_request`` ...)."""
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return None


class RepositoryLinks(SphinxPostTransform):
    """Markdown links from the user guide to files of the repository that are not pages (a results
    folder, a benchmark log, ``bench/README.md``): a file under ``docs/results/`` links to its copy
    in the built site (see :func:`_copy_results`); any other existing file becomes its path as
    text. A link to a path that does not exist is left to MyST, which warns (an error under -W)."""

    default_priority = 5          # before MyST's resolver

    def run(self, **kwargs):
        for node in list(self.document.findall(addnodes.pending_xref)):
            if node.get("reftype") != "myst":
                continue
            target = node.get("reftarget", "")
            if node.get("refdomain") == "doc":
                if target in self.env.all_docs:
                    continue
                rel = target + ".md"
                path = (DOCS / rel).resolve() if not os.path.isabs(target) else Path(rel)
            else:
                if target.startswith("#") or ":" in target:
                    continue
                here = (DOCS / self.env.docname).parent
                path = (here / target).resolve()
            if not path.exists() or REPO not in path.parents:
                continue
            results = DOCS / "results"
            if results == path or results in path.parents:
                depth = self.env.docname.count("/")
                uri = "../" * depth + path.relative_to(DOCS).as_posix() + ("/" if path.is_dir() else "")
                new = nodes.reference("", "", internal=False, refuri=uri)
                new += node[0].deepcopy() if len(node) else nodes.literal(target, target)
            else:
                new = nodes.literal(path.relative_to(REPO).as_posix(), path.relative_to(REPO).as_posix())
            node.replace_self(new)


def _copy_results(app, exc):
    """Copy the recorded run outputs ``docs/results/`` (less caches) into the built site, so the
    reproduction pages' links to them work offline."""
    if exc is not None or app.builder.format != "html":
        return
    src, dst = DOCS / "results", Path(app.outdir) / "results"
    shutil.copytree(src, dst, dirs_exist_ok=True, ignore=shutil.ignore_patterns("cache", "__pycache__"))


def _documented() -> set[str]:
    out = set()
    for package in API_PACKAGES:
        module = importlib.import_module(package)
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj):
                out.add(f"{obj.__module__}.{obj.__qualname__}")
    return out


_DOCUMENTED: set[str] = set()


def _public_bases(app, name, obj, options, bases):
    """``show-inheritance`` names only bases a reader can look up: a private or undocumented
    graphstk base is replaced by its own bases, recursively."""
    if not _DOCUMENTED:
        _DOCUMENTED.update(_documented())
    out, todo = [], list(bases)
    while todo:
        base = todo.pop(0)
        qual = f"{getattr(base, '__module__', '')}.{getattr(base, '__qualname__', '')}"
        if qual.startswith("graphstk.") and qual not in _DOCUMENTED:
            todo[:0] = [b for b in getattr(base, "__bases__", ()) if b is not object]
        elif base not in out:
            out.append(base)
    bases[:] = out or [object]


def setup(app):
    app.connect("autodoc-skip-member", _skip_member)
    app.connect("autodoc-process-bases", _public_bases)
    app.add_post_transform(RepositoryLinks)
    app.connect("build-finished", _copy_results)
    app.connect("builder-inited", write_api_pages)     # before Sphinx looks for source files

