"""Dataset loading: the PyG benchmark graphs of the STKR paper (:func:`load_dataset`, :data:`DATASETS`).

Every loader returns a PyG ``Data`` with ``edge_index``, ``y``, ``num_nodes``, ``x`` (or ``None``), ``name``
and ``split_protocol`` (``"planetoid"`` with a default split, else ``"random"``). Data root, offline
layout, downloads and damaged files: ``docs/data.md``.
"""
from __future__ import annotations

import contextlib
import os
import socket
import urllib.parse
import warnings
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Mapping

import numpy as np
import scipy.sparse as sp
import torch
from torch_geometric.data import Data
from torch_geometric.datasets import Amazon, CitationFull, Coauthor, Planetoid
from torch_geometric.utils import remove_self_loops, to_undirected

from ..exceptions import DataFileError, DatasetNotFoundError, FeaturesUnavailableWarning
from .files import check_index_range, load_pyg, processing_lock, read_index_file, reading
from .graph_io import _is_networkx, from_networkx, load_npz
from .known import KNOWN, Known, check_known
from .names import GRAPH_DATASET_NAMES, GRAPH_KEYS, dataset_key, vector_protocol_hint
from .roots import ENV_DATA_ROOT, ENV_OFFLINE, data_root_and_origin, download_timeout, offline
from .validation import validate_data

__all__ = ["DATASETS", "DatasetSpec", "get_spec", "known_datasets", "load_dataset"]


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
    known: Known | None = None      # published statistics and digests (graphstk.data.known), checked once


def _planetoid(name: str) -> DatasetSpec:
    low = name.lower()
    files = tuple(f"ind.{low}.{s}" for s in ("x", "tx", "allx", "y", "ty", "ally", "graph", "test.index"))
    return DatasetSpec(name, name, files, lambda r: Planetoid(r, name), f"Planetoid(root, {name!r})",
                       Planetoid.url, planetoid=True)


def _npz(name: str, dirname: str, file: str, cls, pyg_name: str) -> DatasetSpec:
    return DatasetSpec(name, dirname, (file,), lambda r: cls(r, pyg_name), f"{cls.__name__}(root, {pyg_name!r})",
                       cls.url, npz_graph=True)


_ALL = [
    _planetoid("Cora"),
    _planetoid("CiteSeer"),
    _planetoid("PubMed"),
    _npz("Computers", "Computers", "amazon_electronics_computers.npz", Amazon, "Computers"),
    _npz("Photo", "Photo", "amazon_electronics_photo.npz", Amazon, "Photo"),
    _npz("CS", "CS", "ms_academic_cs.npz", Coauthor, "CS"),
    _npz("Physics", "Physics", "ms_academic_phy.npz", Coauthor, "Physics"),
    _npz("DBLP", "dblp", "dblp.npz", CitationFull, "DBLP"),
    _npz("CoraFull", "cora", "cora.npz", CitationFull, "Cora"),
]
if [s.name for s in _ALL] != list(GRAPH_DATASET_NAMES):
    raise RuntimeError("graphstk.data.names.GRAPH_DATASET_NAMES and the graph registry disagree")
_SPECS = {s.name: replace(s, aliases=GRAPH_DATASET_NAMES[s.name], known=KNOWN.get(s.name)) for s in _ALL}

#: Canonical name -> :class:`DatasetSpec` of every named dataset.
DATASETS: Mapping[str, DatasetSpec] = MappingProxyType(_SPECS)


def known_datasets() -> list[str]:
    """Canonical names accepted by :func:`load_dataset` (aliases are also accepted)."""
    return list(DATASETS)


def get_spec(name: str) -> DatasetSpec:
    """The ``DatasetSpec`` of a graph dataset's ``name`` or alias (case, spaces, ``-`` and ``_`` ignored); a
    vector dataset's name is an error that says how to load it.
    """
    if not isinstance(name, str):
        raise TypeError(f"dataset name must be a str, got {type(name).__name__}")
    key = GRAPH_KEYS.get(dataset_key(name))
    if key is None:
        hint = vector_protocol_hint(name)
        if hint is not None:
            raise ValueError(hint)
        raise ValueError(f"unknown dataset {name!r}; known graph datasets: {', '.join(known_datasets())} "
                         "(or pass a path to an .npz file, a networkx graph or a PyG Data object)")
    return _SPECS[key]


# --------------------------------------------------------------------------- public entry
def load_dataset(name_or_path, root: str | os.PathLike | None = None, *, features: bool = True,
                 label: str = "label", feature_attr: str | None = None) -> Data:
    """Load a graph as a PyG :class:`~torch_geometric.data.Data`.

    Parameters
    ----------
    name_or_path
        A dataset name (case-insensitive, aliases accepted: ``Cora``, ``CiteSeer``, ``PubMed``,
        ``Computers``, ``Photo``, ``CS``, ``Physics``, ``DBLP``, ``CoraFull``), a path to an ``.npz`` file
        (format in ``docs/data.md``), a :mod:`networkx` graph whose nodes carry the attribute ``label``, or
        a PyG ``Data`` (validated and returned unchanged).
    root
        Data root for named datasets (see :func:`resolve_data_root`); ignored otherwise.
    features
        ``False`` loads graph and labels only (``x = None``); the npz-based datasets are then read from
        the raw file directly, without densifying the features or writing ``processed/``.
    label, feature_attr
        networkx input only: node attribute holding the class label, and (optional) node
        attribute holding a feature vector.

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
    root_path, where = data_root_and_origin(root)
    ds_dir = root_path / spec.dirname
    raw_dir = ds_dir / "raw"
    missing = _missing(raw_dir, spec.raw_files)

    if missing and spec.name == "PubMed" and ds_dir.joinpath(*_PUBMED_ALT).is_file():
        return _load_pubmed_alt(ds_dir.joinpath(*_PUBMED_ALT), missing, warn=features)
    if not missing and not features and spec.npz_graph:
        data = _read_npz_graph(raw_dir / spec.raw_files[0], spec.name)
        check_known(data, spec.name, spec.known, raw_dir, _redownload(spec, root_path), digests=False)
        return _finish(data, spec)

    if spec.name == "CoraFull":
        _check_case_collision(root_path)
    if spec.planetoid and not missing:   # before PyG reads it: an empty test index would load as no test node
        read_index_file(raw_dir / f"ind.{spec.name.lower()}.test.index", spec.name, _index_fix(spec, raw_dir))

    if missing:
        _ensure_downloadable(spec, root_path, where, raw_dir, missing)
        _ensure_writable(ds_dir if ds_dir.exists() else root_path, spec)
        try:
            with _socket_timeout(download_timeout()), processing_lock(ds_dir):
                dataset = _load_pyg(spec, root_path)
        except OSError as err:
            if _missing(raw_dir, spec.raw_files):   # the download itself failed
                raise _not_found(spec, root_path, where, raw_dir,
                                 _missing(raw_dir, spec.raw_files), reason=f"download failed: {err}") from err
            raise
    else:
        if not (ds_dir / "processed" / "data.pt").is_file():
            _ensure_writable(ds_dir, spec)
        with processing_lock(ds_dir):
            dataset = _load_pyg(spec, root_path)

    data = dataset[0]
    if spec.planetoid:
        _check_planetoid_split(data, raw_dir, spec)
    if not features:
        data.num_nodes = int(data.x.shape[0]) if data.x is not None else int(data.num_nodes)
        data.x = None
    return _finish(data, spec)


def _index_fix(spec: DatasetSpec, raw_dir: Path) -> str:
    return (f"replace it with an intact copy of the Planetoid file (see SOURCES.md in the shared datasets folder), "
            f"or delete it and load {spec.name} online (PyG downloads it again into {raw_dir})")


def _check_planetoid_split(data: Data, raw_dir: Path, spec: DatasetSpec) -> None:
    """The test index file checked against the loaded graph: ids inside ``[0, N)`` and no empty public mask."""
    path = raw_dir / f"ind.{spec.name.lower()}.test.index"
    if not path.is_file():
        return
    ids = read_index_file(path, spec.name, _index_fix(spec, raw_dir))
    check_index_range(ids, int(data.num_nodes), path, spec.name, _index_fix(spec, raw_dir))
    for key in ("train_mask", "val_mask", "test_mask"):
        m = getattr(data, key, None)
        if m is not None and int(m.sum()) == 0:
            raise DataFileError(f"{spec.name}: the public split loaded from {raw_dir} has an empty {key}. Fix: "
                                f"{_index_fix(spec, raw_dir)}")


def _redownload(spec: DatasetSpec, root_path: Path) -> str:
    return (f"copy an intact {'/'.join(spec.raw_files) if len(spec.raw_files) == 1 else 'set of raw files'} "
            f"into {root_path / spec.dirname / 'raw'} (see docs/data.md)")


def _load_pyg(spec: DatasetSpec, root_path: Path):
    raw_dir = root_path / spec.dirname / "raw"
    return load_pyg(spec.pyg, root_path, spec.dirname, spec.name, spec.raw_files, _redownload(spec, root_path),
                    check=lambda dataset: check_known(dataset[0], spec.name, spec.known, raw_dir,
                                                      _redownload(spec, root_path)))


def _finish(data: Data, spec: DatasetSpec) -> Data:
    data.name = spec.name
    data.split_protocol = "planetoid" if spec.planetoid else "random"
    return data


def _read_npz_graph(path: Path, dataset: str) -> Data:
    """``edge_index`` and ``y`` of a gnn-benchmark npz exactly as PyG's ``read_npz`` builds them, without the features.
    """
    fix = (f"delete {path} and load again online (PyG downloads it again), or copy an intact copy there "
           "(see docs/data.md)")
    with reading(path, dataset, fix), np.load(path) as f:   # allow_pickle=False: 'class_names' is never read
        adj = sp.csr_matrix((f["adj_data"], f["adj_indices"], f["adj_indptr"]), tuple(f["adj_shape"])).tocoo()
        y = torch.from_numpy(f["labels"]).to(torch.long)
    n = int(adj.shape[0])
    edge_index = torch.stack([torch.from_numpy(adj.row).long(), torch.from_numpy(adj.col).long()])
    edge_index, _ = remove_self_loops(edge_index)
    edge_index = to_undirected(edge_index, num_nodes=n)
    return Data(x=None, edge_index=edge_index, y=y, num_nodes=n)


def _not_found(spec, root_path, where, raw_dir, missing, reason) -> DatasetNotFoundError:
    extra = (f" Alternatively, a graph+labels-only copy is read from "
             f"{root_path / spec.dirname / _PUBMED_ALT[0] / _PUBMED_ALT[1]}." if spec.name == "PubMed" else "")
    return DatasetNotFoundError(
        f"{spec.name} files not found on disk ({reason}). The data root {root_path} came from {where}; "
        f"{spec.pyg_class} needs {', '.join(spec.raw_files)} in {raw_dir}; missing: "
        f"{'all of them' if len(missing) == len(spec.raw_files) else ', '.join(missing)}. Fix: put the files there "
        f"(see docs/data.md), or point at a folder that has them with `--data-root PATH` (Python: root=PATH) or "
        f"`export {ENV_DATA_ROOT}=PATH`, or go online so that PyG can download them.{extra}")


def _ensure_downloadable(spec, root_path, where, raw_dir, missing) -> None:
    if offline():
        raise _not_found(spec, root_path, where, raw_dir, missing, reason=f"offline: ${ENV_OFFLINE} is set")
    if any(os.environ.get(k) for k in ("https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY")):
        return   # a proxy decides reachability; let the download try
    url = urllib.parse.urlparse(spec.url)
    host, port = url.hostname, url.port or 443
    try:
        with socket.create_connection((host, port), timeout=download_timeout()):
            pass
    except OSError as err:
        raise _not_found(spec, root_path, where, raw_dir, missing,
                         reason=f"offline: cannot reach {host}: {err}") from err


def _ensure_writable(path: Path, spec: DatasetSpec) -> None:
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not os.access(probe, os.W_OK):
        raise PermissionError(f"cannot load {spec.name!r}: {probe} is not writable, and PyG writes "
                              f"{path / 'processed'} next to raw/ on first load. Copy the dataset folder "
                              f"{spec.dirname}/ to a writable data root first (e.g. a temporary directory).")


def _check_case_collision(root_path: Path) -> None:
    a, b = root_path / "Cora", root_path / "cora"
    if a.exists() and b.exists() and os.path.samefile(a, b):
        raise ValueError(
            f"{a} and {b} are the same directory (case-insensitive file system): PyG's Planetoid "
            "Cora and CitationFull CoraFull would share processed/data.pt. Use a separate data root "
            "for CoraFull.")


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
