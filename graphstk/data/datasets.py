"""Dataset loading: the PyG benchmark graphs of the STKR paper and bring-your-own graphs.

Entry point: :func:`load_dataset`. Every loader returns a
:class:`torch_geometric.data.Data` with at least ``edge_index`` (``[2, E]``, both
directions of an undirected edge, as PyG stores it), ``y`` (``[N]`` int64 class ids,
all ``>= 0``), ``num_nodes`` and ``x`` (``[N, F]`` or ``None`` when features are
unavailable), plus two plain attributes:

``name``
    Canonical dataset name (``"Cora"``, ``"DBLP"``, ...) or the file / object it came from.
``split_protocol``
    ``"planetoid"`` when the graph carries a *default* split
    (``train_mask``/``val_mask``/``test_mask``: the Planetoid datasets and bring-your-own
    files with ``train_index``/``val_index``/``test_index``), else ``"random"``.
    :func:`graphstk.data.make_split` reads it to pick the protocol of App. D of the STKR paper.

Data root (see :func:`resolve_data_root`): ``root`` argument > environment variable
``GRAPHSTK_DATA`` > ``./datasets``. Layout inside the root is PyG's own
(``<root>/<Dir>/raw/<files>``, see :data:`DATASETS` and ``docs/data.md``). PyG writes
``<root>/<Dir>/processed/`` beside ``raw/`` on first load, so the root must be writable
then; copy a read-only root (e.g. a shared or CI copy) to a temporary directory first.

Offline behaviour: raw files present -> load them; absent -> let PyG download them,
unless ``GRAPHSTK_OFFLINE=1`` or the download host is unreachable, in which case a
:class:`DatasetNotFoundError` names the directory searched and the files expected there.
"""
from __future__ import annotations

import contextlib
import os
import socket
import urllib.parse
import warnings
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np
import torch
from torch import Tensor
from torch_geometric.data import Data

from ..operators import check_edge_index

__all__ = [
    "DATASETS", "DatasetNotFoundError", "DatasetSpec", "FeaturesUnavailableWarning", "build_data",
    "dataset_statistics", "from_networkx", "get_spec", "known_datasets", "load_dataset", "load_npz",
    "resolve_data_root", "validate_data",
]

ENV_DATA_ROOT = "GRAPHSTK_DATA"
ENV_OFFLINE = "GRAPHSTK_OFFLINE"
ENV_DOWNLOAD_TIMEOUT = "GRAPHSTK_DOWNLOAD_TIMEOUT"
DEFAULT_DATA_ROOT = "datasets"
_DEFAULT_TIMEOUT_S = 10.0


from ..exceptions import DatasetNotFoundError, FeaturesUnavailableWarning  # noqa: E402,F401  (re-exported)


# --------------------------------------------------------------------------- data root
def resolve_data_root(root: str | os.PathLike | None = None) -> Path:
    """Return the data root: ``root`` if given, else ``$GRAPHSTK_DATA``, else ``./datasets``.

    The path is expanded (``~``) and made absolute; it does not need to exist yet
    (PyG creates it when it downloads). The command line passes ``--data-root`` as ``root``.
    """
    return _resolve_data_root(root)[0]


def _resolve_data_root(root) -> tuple[Path, str]:
    """``(path, where it came from)``; a ``root`` equal to ``$GRAPHSTK_DATA`` or to the default
    (as the command line passes it on) is reported as coming from there."""
    env = os.environ.get(ENV_DATA_ROOT)
    env_path = Path(env).expanduser().absolute() if env else None
    default_path = Path(DEFAULT_DATA_ROOT).absolute()
    if root is not None and str(root) != "":
        path = Path(root).expanduser().absolute()
        if env_path is not None and path == env_path:
            where = f"${ENV_DATA_ROOT}"
        elif env_path is None and path == default_path:
            where = f"the default ./{DEFAULT_DATA_ROOT} (no --data-root, ${ENV_DATA_ROOT} unset)"
        else:
            where = "the root argument (--data-root on the command line)"
        return path, where
    if env_path is not None:
        return env_path, f"${ENV_DATA_ROOT}"
    return default_path, f"the default ./{DEFAULT_DATA_ROOT} (no --data-root, ${ENV_DATA_ROOT} unset)"


def _offline() -> bool:
    return os.environ.get(ENV_OFFLINE, "").strip().lower() in {"1", "true", "yes", "on"}


def _timeout() -> float:
    raw = os.environ.get(ENV_DOWNLOAD_TIMEOUT)
    try:
        return float(raw) if raw else _DEFAULT_TIMEOUT_S
    except ValueError:
        raise ValueError(f"${ENV_DOWNLOAD_TIMEOUT} must be a number of seconds, got {raw!r}") from None


# --------------------------------------------------------------------------- registry
@dataclass(frozen=True)
class DatasetSpec:
    """Where a named dataset lives under the data root and how PyG builds it."""

    name: str                       # canonical name
    dirname: str                    # <root>/<dirname>/{raw,processed}
    raw_files: tuple[str, ...]      # files PyG needs in <root>/<dirname>/raw
    pyg: Callable[[str], Any]       # root -> PyG dataset (downloads what is missing)
    pyg_class: str                  # for messages, e.g. "Planetoid(root, 'Cora')"
    url: str                        # download location (host used for the reachability probe)
    planetoid: bool = False
    aliases: tuple[str, ...] = ()
    npz_graph: bool = False         # raw file is a gnn-benchmark npz: graph-only fast path


def _planetoid(name: str) -> DatasetSpec:
    from torch_geometric.datasets import Planetoid
    low = name.lower()
    files = tuple(f"ind.{low}.{s}" for s in ("x", "tx", "allx", "y", "ty", "ally", "graph", "test.index"))
    return DatasetSpec(name, name, files, lambda r: Planetoid(r, name), f"Planetoid(root, {name!r})",
                       Planetoid.url, planetoid=True)


def _registry() -> dict[str, DatasetSpec]:
    from torch_geometric.datasets import Amazon, CitationFull, Coauthor
    specs = [
        _planetoid("Cora"),
        _planetoid("CiteSeer"),
        _planetoid("PubMed"),
        DatasetSpec("Computers", "Computers", ("amazon_electronics_computers.npz",),
                    lambda r: Amazon(r, "Computers"), "Amazon(root, 'Computers')", Amazon.url, npz_graph=True,
                    aliases=("amazon-computers", "amazon computers", "amazoncomputers")),
        DatasetSpec("Photo", "Photo", ("amazon_electronics_photo.npz",),
                    lambda r: Amazon(r, "Photo"), "Amazon(root, 'Photo')", Amazon.url, npz_graph=True,
                    aliases=("photos", "amazon-photo", "amazon-photos")),
        DatasetSpec("CS", "CS", ("ms_academic_cs.npz",),
                    lambda r: Coauthor(r, "CS"), "Coauthor(root, 'CS')", Coauthor.url, npz_graph=True,
                    aliases=("coauthor-cs",)),
        DatasetSpec("Physics", "Physics", ("ms_academic_phy.npz",),
                    lambda r: Coauthor(r, "Physics"), "Coauthor(root, 'Physics')", Coauthor.url, npz_graph=True,
                    aliases=("coauthor-physics", "coauthor-phy", "phy")),
        DatasetSpec("DBLP", "dblp", ("dblp.npz",),
                    lambda r: CitationFull(r, "DBLP"), "CitationFull(root, 'DBLP')", CitationFull.url, npz_graph=True,
                    aliases=("citationfull-dblp", "dblpfull")),
        DatasetSpec("CoraFull", "cora", ("cora.npz",),
                    lambda r: CitationFull(r, "Cora"), "CitationFull(root, 'Cora')", CitationFull.url, npz_graph=True,
                    aliases=("cora-full", "citationfull-cora")),
    ]
    return {s.name: s for s in specs}


def _norm(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


_SPECS: dict[str, DatasetSpec] | None = None
_ALIASES: dict[str, str] = {}


def _specs() -> dict[str, DatasetSpec]:
    global _SPECS
    if _SPECS is None:
        _SPECS = _registry()
        for s in _SPECS.values():
            for a in (s.name, *s.aliases):
                _ALIASES[_norm(a)] = s.name
    return _SPECS


class _LazyRegistry(Mapping):
    """Read-only view ``canonical name -> DatasetSpec`` (built on first use)."""

    def __getitem__(self, key):
        return _specs()[key]

    def __iter__(self):
        return iter(_specs())

    def __len__(self):
        return len(_specs())


#: Canonical name -> :class:`DatasetSpec` of every named dataset.
DATASETS: Mapping[str, DatasetSpec] = _LazyRegistry()


def known_datasets() -> list[str]:
    """Canonical names accepted by :func:`load_dataset` (aliases are also accepted)."""
    return list(_specs())


def get_spec(name: str) -> DatasetSpec:
    """Look up a dataset by name or alias (case, spaces, ``-`` and ``_`` are ignored)."""
    if not isinstance(name, str):
        raise TypeError(f"dataset name must be a str, got {type(name).__name__}")
    _specs()
    key = _ALIASES.get(_norm(name))
    if key is None:
        raise ValueError(f"unknown dataset {name!r}; known datasets: {', '.join(known_datasets())} "
                         "(or pass a path to an .npz file, a networkx graph or a PyG Data object)")
    return _specs()[key]


# --------------------------------------------------------------------------- public entry
def load_dataset(name_or_path, root: str | os.PathLike | None = None, *, features: bool = True,
                 label: str = "label", feature_attr: str | None = None) -> Data:
    """Load a graph as a PyG :class:`~torch_geometric.data.Data`.

    Parameters
    ----------
    name_or_path
        * a dataset name (case-insensitive, aliases accepted): ``Cora``, ``CiteSeer``,
          ``PubMed``, ``Computers``, ``Photo``, ``CS``, ``Physics``, ``DBLP``, ``CoraFull``;
        * a path to an ``.npz`` file with ``edge_index`` (int ``[2, E]``) and ``y``
          (int ``[N]``), optionally ``x`` (``[N, F]``), ``edge_weight`` (``[E]``) and
          ``train_index``/``val_index``/``test_index`` (all three or none; they become
          ``train_mask``/``val_mask``/``test_mask`` and ``split_protocol = "planetoid"``);
        * a :mod:`networkx` graph whose nodes carry the attribute ``label`` (e.g.
          ``load_dataset(nx.karate_club_graph(), label="club")``); string labels are
          mapped to ``0..C-1`` in sorted order and the names kept in ``data.label_names``;
        * a :class:`~torch_geometric.data.Data`: validated and returned unchanged.
    root
        Data root for named datasets (see :func:`resolve_data_root`); ignored otherwise.
    features
        ``False`` loads graph and labels only (``x = None``). For the npz-based datasets
        (Computers, Photo, CS, Physics, DBLP, CoraFull) this reads the raw file directly,
        exactly as PyG's ``read_npz`` builds ``edge_index`` and ``y`` but without densifying
        the features (1.1 GB for Physics) and without writing ``processed/`` (so a read-only
        root works). Label-Prop and graph-kernel STKR need nothing more.
    label, feature_attr
        networkx input only: node attribute holding the class label, and (optional) node
        attribute holding a feature vector.

    Notes
    -----
    * PubMed: if ``<root>/PubMed/raw`` lacks any of PyG's 8 files but
      ``<root>/PubMed/alt/pubmed_graph_labels.npz`` exists, that graph + labels + public
      split is loaded with ``x = None`` (and a :class:`FeaturesUnavailableWarning`):
      methods that need features fail loudly instead of silently using empty features.
    * Planetoid datasets keep PyG's public masks and get ``split_protocol = "planetoid"``.

    Raises
    ------
    ValueError
        Unknown name, or malformed input (the message names the problem).
    DatasetNotFoundError
        Named dataset missing and no download possible (``GRAPHSTK_OFFLINE=1``, or the
        download host is unreachable). The message names the directory and files expected.
    """
    if isinstance(name_or_path, Data):
        validate_data(name_or_path)
        return name_or_path
    if _is_networkx(name_or_path):
        data = from_networkx(name_or_path, label=label, features=feature_attr)
    elif isinstance(name_or_path, (str, os.PathLike)):
        text = os.fspath(name_or_path)
        if not (text.lower().endswith(".npz") or os.path.isfile(text)):
            return _load_named(get_spec(text), root, features=bool(features))
        data = load_npz(text)
    else:
        raise TypeError("load_dataset expects a dataset name, a path to an .npz file, a networkx graph "
                        f"or a torch_geometric Data, got {type(name_or_path).__name__}")
    if not features:
        data.x = None
    return data


# --------------------------------------------------------------------------- named datasets
def _missing(raw_dir: Path, files) -> list[str]:
    return [f for f in files if not (raw_dir / f).is_file()]


_PUBMED_ALT = ("alt", "pubmed_graph_labels.npz")


def _load_named(spec: DatasetSpec, root, features: bool = True) -> Data:
    root_path, where = _resolve_data_root(root)
    ds_dir = root_path / spec.dirname
    raw_dir = ds_dir / "raw"
    missing = _missing(raw_dir, spec.raw_files)

    if missing and spec.name == "PubMed" and ds_dir.joinpath(*_PUBMED_ALT).is_file():
        return _load_pubmed_alt(ds_dir.joinpath(*_PUBMED_ALT), missing, warn=features)
    if not missing and not features and spec.npz_graph:
        return _finish(_read_npz_graph(raw_dir / spec.raw_files[0]), spec)

    if spec.name == "CoraFull":
        _check_case_collision(root_path)

    if missing:
        _ensure_downloadable(spec, root_path, where, raw_dir, missing)
        _ensure_writable(ds_dir if ds_dir.exists() else root_path, spec)
        try:
            with _socket_timeout(_timeout()), _processing_lock(ds_dir):
                dataset = spec.pyg(str(root_path))
        except OSError as err:
            if _missing(raw_dir, spec.raw_files):   # the download itself failed
                raise _not_found(spec, root_path, where, raw_dir,
                                 _missing(raw_dir, spec.raw_files), reason=f"download failed: {err}") from err
            raise
    else:
        if not (ds_dir / "processed" / "data.pt").is_file():
            _ensure_writable(ds_dir, spec)
        with _processing_lock(ds_dir):
            dataset = spec.pyg(str(root_path))

    data = dataset[0]
    if not features:
        data.num_nodes = int(data.x.shape[0]) if data.x is not None else int(data.num_nodes)
        data.x = None
    return _finish(data, spec)


def _finish(data: Data, spec: DatasetSpec) -> Data:
    data.name = spec.name
    data.split_protocol = "planetoid" if spec.planetoid else "random"
    return data


def _read_npz_graph(path: Path) -> Data:
    """``edge_index`` and ``y`` of a gnn-benchmark / graph2gauss npz, built exactly as PyG's
    :func:`torch_geometric.io.read_npz` builds them (self-loops removed, made undirected), but
    without the feature matrix."""
    import scipy.sparse as sp
    from torch_geometric.utils import remove_self_loops, to_undirected

    with np.load(path) as f:   # allow_pickle=False: the pickled 'class_names' entry is never read
        adj = sp.csr_matrix((f["adj_data"], f["adj_indices"], f["adj_indptr"]), tuple(f["adj_shape"])).tocoo()
        y = torch.from_numpy(f["labels"]).to(torch.long)
    n = int(adj.shape[0])
    edge_index = torch.stack([torch.from_numpy(adj.row).long(), torch.from_numpy(adj.col).long()])
    edge_index, _ = remove_self_loops(edge_index)
    edge_index = to_undirected(edge_index, num_nodes=n)
    return Data(x=None, edge_index=edge_index, y=y, num_nodes=n)


def _not_found(spec, root_path, where, raw_dir, missing, reason) -> DatasetNotFoundError:
    extra = ""
    if spec.name == "PubMed":
        extra = (f" Alternatively, a graph+labels-only copy is read from "
                 f"{root_path / spec.dirname / _PUBMED_ALT[0] / _PUBMED_ALT[1]}.")
    return DatasetNotFoundError(
        f"{spec.name} files not found on disk ({reason}). The data root {root_path} came from {where}; "
        f"{spec.pyg_class} needs {', '.join(spec.raw_files)} in {raw_dir}; missing: "
        f"{'all of them' if len(missing) == len(spec.raw_files) else ', '.join(missing)}. Fix: put the files there "
        f"(see docs/data.md), or point at a folder that has them with `--data-root PATH` (Python: root=PATH) or "
        f"`export {ENV_DATA_ROOT}=PATH`, or go online so that PyG can download them.{extra}"
    )


def _ensure_downloadable(spec, root_path, where, raw_dir, missing) -> None:
    if _offline():
        raise _not_found(spec, root_path, where, raw_dir, missing, reason=f"offline: ${ENV_OFFLINE} is set")
    if any(os.environ.get(k) for k in ("https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY")):
        return   # a proxy decides reachability; let the download try
    host = urllib.parse.urlparse(spec.url).hostname
    port = urllib.parse.urlparse(spec.url).port or 443
    try:
        with socket.create_connection((host, port), timeout=_timeout()):
            pass
    except OSError as err:
        raise _not_found(spec, root_path, where, raw_dir, missing,
                         reason=f"offline: cannot reach {host}: {err}") from err


def _ensure_writable(path: Path, spec: DatasetSpec) -> None:
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not os.access(probe, os.W_OK):
        raise PermissionError(
            f"cannot load {spec.name!r}: {probe} is not writable, and PyG writes "
            f"{path / 'processed'} next to raw/ on first load. Copy the dataset folder "
            f"{spec.dirname}/ to a writable data root first (e.g. a temporary directory)."
        )


def _check_case_collision(root_path: Path) -> None:
    a, b = root_path / "Cora", root_path / "cora"
    if a.exists() and b.exists() and os.path.samefile(a, b):
        raise ValueError(
            f"{a} and {b} are the same directory (case-insensitive file system): PyG's Planetoid "
            "Cora and CitationFull CoraFull would share processed/data.pt. Use a separate data root "
            "for CoraFull.")


@contextlib.contextmanager
def _processing_lock(ds_dir: Path):
    """Hold an exclusive lock on ``<ds_dir>/.graphstk-processing.lock`` while PyG downloads or
    writes ``processed/``: two processes loading a dataset for the first time (two ``run.py``
    on one data root) would otherwise race, and one reads a half-written ``processed/data.pt``
    (``EOFError`` / ``PytorchStreamReader failed``). The second waits, then loads the finished
    files. Without ``fcntl`` (Windows) or on a read-only root nothing is locked."""
    try:
        import fcntl
    except ImportError:   # pragma: no cover - not POSIX
        yield
        return
    try:
        ds_dir.mkdir(parents=True, exist_ok=True)
        fh = open(ds_dir / ".graphstk-processing.lock", "a")
    except OSError:        # read-only root: processed/ must already exist, nothing is written
        yield
        return
    with fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


@contextlib.contextmanager
def _socket_timeout(seconds: float):
    """Bound urllib-based downloads (PyG's ``download_url``) so an offline call cannot hang."""
    old = socket.getdefaulttimeout()
    socket.setdefaulttimeout(seconds if old is None else old)
    try:
        yield
    finally:
        socket.setdefaulttimeout(old)


def _load_pubmed_alt(path: Path, missing, warn: bool = True) -> Data:
    if warn:
        warnings.warn(
            f"PubMed: {path.parent.parent / 'raw'} lacks {', '.join(missing)}; loading graph, labels and "
            f"public split from {path} without node features (data.x is None). Label-Prop and "
            "graph-kernel STKR work; feature-based methods do not.",
            FeaturesUnavailableWarning, stacklevel=4)
    data = load_npz(path)
    data.name = "PubMed"
    return data


# --------------------------------------------------------------------------- bring your own
_NPZ_KEYS = {"edge_index", "y", "x", "edge_weight", "train_index", "val_index", "test_index"}


def load_npz(path: str | os.PathLike) -> Data:
    """Load a bring-your-own graph from an ``.npz`` file (format: see :func:`load_dataset`).

    Parameters
    ----------
    path : str or os.PathLike
        The ``.npz`` file.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such .npz file: {path}")
    try:
        z = np.load(path, allow_pickle=False)
    except (ValueError, OSError, zipfile.BadZipFile) as err:
        raise ValueError(f"{path} is not a readable .npz file: {err}") from err
    if not hasattr(z, "files"):
        raise ValueError(f"{path} holds a single array, not an .npz archive of named arrays")
    with z:
        keys = list(z.files)
        arrays = {}
        for k in keys:
            if k in _NPZ_KEYS:
                try:
                    arrays[k] = z[k]
                except ValueError as err:   # object arrays need pickle: refused
                    raise ValueError(f"{path}: array {k!r} cannot be read without pickle ({err}); "
                                     "store plain numeric arrays") from err
    ignored = sorted(set(keys) - _NPZ_KEYS)
    if ignored:
        warnings.warn(f"{path}: ignoring unknown arrays {ignored}; known: {sorted(_NPZ_KEYS)}", stacklevel=3)
    if "y" not in arrays:
        raise ValueError(f"labels missing: {path} has no 'y' array (arrays: {keys})")
    if "edge_index" not in arrays:
        raise ValueError(f"{path} has no 'edge_index' array (arrays: {keys})")
    return build_data(arrays["edge_index"], arrays["y"], x=arrays.get("x"),
                      edge_weight=arrays.get("edge_weight"), train_index=arrays.get("train_index"),
                      val_index=arrays.get("val_index"), test_index=arrays.get("test_index"),
                      name=path.stem, source=str(path))


def _is_networkx(obj) -> bool:
    mod = type(obj).__module__ or ""
    return mod.startswith("networkx") and hasattr(obj, "nodes") and hasattr(obj, "edges")


def from_networkx(G, label: str = "label", features: str | None = None) -> Data:
    """Build a :class:`Data` from a networkx graph whose nodes carry a class attribute.

    Nodes are numbered in ``G.nodes()`` order (kept in ``data.node_names`` when they are
    not already ``0..N-1``). An undirected graph gets both directions of every edge
    (PyG convention); a directed graph keeps its edge directions. Edge attribute
    ``weight`` is used as ``edge_weight`` when every edge has one. Integer labels are kept;
    string (or other non-integer) labels are mapped to ``0..C-1`` in sorted order, with
    the originals in ``data.label_names``.

    Parameters
    ----------
    G : networkx.Graph
    label : str, default "label"
        Node attribute holding the class.
    features : str, optional
        Node attribute holding a feature vector (becomes ``x``).
    """
    nodes = list(G.nodes())
    n = len(nodes)
    if n == 0:
        raise ValueError("the networkx graph has no nodes")
    pos = {v: i for i, v in enumerate(nodes)}
    attrs = dict(G.nodes(data=True))
    lacking = [v for v in nodes if label not in attrs[v]]
    if lacking:
        present = sorted({k for d in attrs.values() for k in d})
        raise ValueError(f"labels missing: node attribute {label!r} is absent on {len(lacking)} of {n} nodes "
                         f"(e.g. {lacking[:3]}); node attributes present: {present}. Pass label=...")
    raw = [attrs[v][label] for v in nodes]
    label_names = None
    if all(isinstance(r, (int, np.integer)) and not isinstance(r, bool) for r in raw):
        y = np.asarray(raw, dtype=np.int64)
    else:
        try:
            classes = sorted(set(raw))
        except TypeError as err:
            raise TypeError(f"labels in node attribute {label!r} cannot be sorted (mixed types?): {err}") from err
        index = {c: i for i, c in enumerate(classes)}
        y = np.asarray([index[r] for r in raw], dtype=np.int64)
        label_names = list(classes)

    edges = list(G.edges(data=True))
    src = [pos[u] for u, _, _ in edges]
    dst = [pos[v] for _, v, _ in edges]
    weights = [d.get("weight") for _, _, d in edges]
    w = None
    if edges and all(isinstance(x, (int, float, np.number)) for x in weights):
        w = np.asarray(weights, dtype=np.float32)
    if not G.is_directed():
        loops = [i for i, (a, b) in enumerate(zip(src, dst)) if a == b]
        keep = [i for i in range(len(src)) if src[i] != dst[i]]
        src, dst = ([src[i] for i in keep] + [dst[i] for i in keep] + [src[i] for i in loops],
                    [dst[i] for i in keep] + [src[i] for i in keep] + [dst[i] for i in loops])
        if w is not None:
            w = np.concatenate([w[keep], w[keep], w[loops]])
    edge_index = np.asarray([src, dst], dtype=np.int64).reshape(2, -1)

    x = None
    if features is not None:
        lacking = [v for v in nodes if features not in attrs[v]]
        if lacking:
            raise ValueError(f"node attribute {features!r} (features) is absent on {len(lacking)} nodes "
                             f"(e.g. {lacking[:3]})")
        try:
            x = np.asarray([np.asarray(attrs[v][features], dtype=np.float64).ravel() for v in nodes])
        except ValueError as err:
            raise ValueError(f"node attribute {features!r} must be numeric vectors of equal length: {err}") from err

    data = build_data(edge_index, y, x=x, edge_weight=w, name=getattr(G, "name", "") or "networkx",
                      source="networkx graph")
    if nodes != list(range(n)):
        data.node_names = nodes
    if label_names is not None:
        data.label_names = label_names
    return data


# --------------------------------------------------------------------------- validation
def _as_tensor(arr, what: str) -> Tensor:
    if isinstance(arr, Tensor):
        return arr
    a = np.asarray(arr)
    if a.dtype == object or a.dtype.kind in "USV":
        raise TypeError(f"{what} must be numeric, got dtype {a.dtype}")
    return torch.from_numpy(np.ascontiguousarray(a))


def _index(arr, n: int, what: str) -> Tensor:
    t = _as_tensor(arr, what)
    if t.dtype == torch.bool or t.dtype.is_floating_point or t.dtype.is_complex:
        raise TypeError(f"{what} must hold integer node ids, got {t.dtype}")
    t = t.long().flatten()
    if t.numel() and (int(t.min()) < 0 or int(t.max()) >= n):
        raise ValueError(f"{what} has node ids in [{int(t.min())}, {int(t.max())}], outside [0, {n - 1}]")
    if torch.unique(t).numel() != t.numel():
        raise ValueError(f"{what} contains duplicate node ids")
    return t


def _check_labels(y: Tensor, what: str = "y") -> None:
    if y.dim() != 1:
        hint = " (one-hot? pass the argmax)" if y.dim() == 2 else ""
        raise ValueError(f"{what} must be 1-D class ids of shape [N], got shape {tuple(y.shape)}{hint}")
    if y.dtype == torch.bool or y.dtype.is_floating_point or y.dtype.is_complex:
        raise TypeError(f"{what} (labels) must be an integer array, got {y.dtype}")
    if y.numel() == 0:
        raise ValueError(f"{what} is empty: a graph needs at least one labelled node")
    if int(y.min()) < 0:
        bad = int((y < 0).sum())
        raise ValueError(f"{what} has {bad} negative labels (min {int(y.min())}); labels must be class ids >= 0 "
                         "for every node")


def _check_features(x: Tensor, n: int) -> None:
    if x.dim() != 2:
        raise ValueError(f"x must have shape [N, F], got {tuple(x.shape)}")
    if x.shape[0] != n:
        raise ValueError(f"N mismatch: x has {x.shape[0]} rows but y has {n} labels")
    if x.dtype.is_floating_point and not bool(torch.isfinite(x).all()):
        raise ValueError("x contains NaN or infinite values")


def build_data(edge_index, y, x=None, edge_weight=None, train_index=None, val_index=None,
               test_index=None, name: str = "", source: str = "input") -> Data:
    """Validate arrays (numpy or torch) and assemble a :class:`Data` (format of :func:`load_dataset`).

    ``N`` is ``len(y)``. Errors name the problem: wrong shapes or dtypes, edge ids out of
    ``[0, N)``, missing or negative labels, ``x``/``y`` size mismatch, overlapping or
    partial train/val/test indices.

    Parameters
    ----------
    edge_index : int array ``[2, E]``
    y : int array ``[N]``
    x : float array ``[N, F]``, optional
    edge_weight : float array ``[E]``, optional
    train_index, val_index, test_index : int arrays, optional (all three or none)
        A default split: stored as ``train_mask``/``val_mask``/``test_mask``.
    name : str, default ""
        Stored as ``data.name``.
    source : str, default "input"
        Where the arrays came from, for error messages.
    """
    if y is None:
        raise ValueError(f"labels missing: {source} has no y")
    y_t = _as_tensor(y, "y")
    _check_labels(y_t)
    y_t = y_t.long()
    n = int(y_t.numel())

    ei = _as_tensor(edge_index, "edge_index")
    check_edge_index(ei, n)
    ei = ei.long().contiguous()

    data = Data(edge_index=ei, y=y_t, num_nodes=n)
    if edge_weight is not None:
        w = _as_tensor(edge_weight, "edge_weight")
        if not w.dtype.is_floating_point:
            w = w.float()
        check_edge_index(ei, n, w)
        data.edge_weight = w
    if x is not None:
        x_t = _as_tensor(x, "x")
        if not x_t.dtype.is_floating_point:
            x_t = x_t.float()
        _check_features(x_t, n)
        data.x = x_t
    else:
        data.x = None

    given = {k: v for k, v in (("train_index", train_index), ("val_index", val_index),
                               ("test_index", test_index)) if v is not None}
    if given and len(given) != 3:
        raise ValueError(f"{source}: give all of train_index, val_index, test_index or none of them "
                         f"(got only {sorted(given)})")
    if given:
        masks = {}
        for key, idx in given.items():
            t = _index(idx, n, key)
            m = torch.zeros(n, dtype=torch.bool)
            m[t] = True
            masks[key.replace("_index", "_mask")] = m
        if bool((masks["train_mask"] & masks["val_mask"]).any() | (masks["train_mask"] & masks["test_mask"]).any()
                | (masks["val_mask"] & masks["test_mask"]).any()):
            raise ValueError(f"{source}: train_index, val_index and test_index must be disjoint")
        for k, m in masks.items():
            data[k] = m
        data.split_protocol = "planetoid"
    else:
        data.split_protocol = "random"
    data.name = name
    return data


def validate_data(data: Data) -> None:
    """Raise a clear error unless ``data`` is a usable labelled graph (the checks of :func:`build_data`)."""
    if not isinstance(data, Data):
        raise TypeError(f"expected a torch_geometric.data.Data, got {type(data).__name__}")
    y = getattr(data, "y", None)
    if y is None:
        raise ValueError("labels missing: data.y is None")
    _check_labels(y, "data.y")
    n = int(data.num_nodes) if data.num_nodes is not None else y.numel()
    if y.numel() != n:
        raise ValueError(f"N mismatch: data.y has {y.numel()} labels but data.num_nodes is {n}")
    if data.edge_index is None:
        raise ValueError("data.edge_index is None")
    check_edge_index(data.edge_index, n, getattr(data, "edge_weight", None))
    if data.x is not None:
        _check_features(data.x, n)
    for k in ("train_mask", "val_mask", "test_mask"):
        m = getattr(data, k, None)
        if m is not None and (m.dtype != torch.bool or m.shape != (n,)):
            raise ValueError(f"data.{k} must be a bool tensor of shape [{n}], got {m.dtype} {tuple(m.shape)}")


# --------------------------------------------------------------------------- statistics
def dataset_statistics(data: Data) -> dict:
    """Summary counts of a graph.

    Returns a dict with ``nodes``, ``edges`` (``edge_index.shape[1]``: directed count, as
    PyG reports it, e.g. 10,556 for Cora), ``features`` (0 when ``x`` is None),
    ``classes`` (``max(y) + 1``, PyG's convention), ``isolated_nodes`` (no edge to another
    node), ``self_loops``, ``components`` (connected components of the undirected graph,
    isolated nodes included; via :func:`scipy.sparse.csgraph.connected_components`),
    ``undirected`` (bool), ``label_counts`` (list) and, when the data carries a default
    split, ``train``/``val``/``test`` mask sizes.
    """
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    validate_data(data)
    n = int(data.num_nodes)
    ei = data.edge_index.cpu().long()
    row, col = ei[0].numpy(), ei[1].numpy()
    off = row != col
    deg = np.bincount(row[off], minlength=n) + np.bincount(col[off], minlength=n)
    adj = sp.csr_matrix((np.ones(int(off.sum()), dtype=np.int8), (row[off], col[off])), shape=(n, n))
    n_comp, _ = connected_components(adj, directed=False)
    sym = adj.astype(bool)
    y = data.y.cpu().long()
    stats = {
        "nodes": n,
        "edges": int(ei.shape[1]),
        "features": int(data.x.shape[1]) if data.x is not None else 0,
        "classes": int(y.max()) + 1,
        "isolated_nodes": int((deg == 0).sum()),
        "self_loops": int((~off).sum()),
        "components": int(n_comp),
        "undirected": bool((sym != sym.T).nnz == 0),
        "label_counts": torch.bincount(y).tolist(),
    }
    for k in ("train", "val", "test"):
        m = getattr(data, f"{k}_mask", None)
        if m is not None:
            stats[k] = int(m.sum())
    return stats
