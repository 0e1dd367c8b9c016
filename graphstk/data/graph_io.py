"""Bring-your-own graphs: an ``.npz`` file of arrays (:func:`load_npz`) or a networkx graph
(:func:`from_networkx`), both checked by :func:`graphstk.data.build_data`."""
from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np
from torch_geometric.data import Data

from .validation import build_data

__all__ = ["load_npz", "from_networkx"]

_NPZ_KEYS = {"edge_index", "y", "x", "edge_weight", "train_index", "val_index", "test_index"}


def load_npz(path: str | os.PathLike) -> Data:
    """Load a bring-your-own graph from an ``.npz`` file (format: see :func:`load_dataset`).

    Parameters
    ----------
    path : str or os.PathLike
        The ``.npz`` file.
    """
    from .files import reading    # the damaged-file handling is for files: from_networkx does not load it

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such .npz file: {path}")
    fix = ("write it again with np.savez(path, edge_index=..., y=..., x=...) (format: "
           "graphstk.load_dataset's docstring), or restore an intact copy")
    needs_pickle = None
    with reading(path, f"graph file {path.name}", fix):
        z = np.load(path, allow_pickle=False)
        if not hasattr(z, "files"):
            raise ValueError("it holds a single array, not an .npz archive of named arrays")
        with z:
            keys = list(z.files)
            arrays = {}
            for k in keys:
                if k in _NPZ_KEYS:
                    try:
                        arrays[k] = z[k]
                    except ValueError as err:   # object arrays need pickle: refused below
                        if "pickle" not in str(err):
                            raise
                        needs_pickle = (k, err)
                        break
    if needs_pickle is not None:
        raise ValueError(f"{path}: array {needs_pickle[0]!r} cannot be read without pickle ({needs_pickle[1]}); "
                         "store plain numeric arrays")
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
