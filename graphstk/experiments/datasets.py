"""Turn a config's dataset entries into :class:`DatasetEntry` objects, and graph ones into PyG ``Data``:
named datasets and ``.npz`` paths by :func:`graphstk.load_dataset`, generated graphs (``karate_club``,
``sbm``) by networkx, ``dcsbm`` by :func:`graphstk.data.make_dcsbm` (or its partitioned form under
``--distributed``). Vector entries are checked here and loaded by :mod:`graphstk.experiments.vector_data`.
"""
from __future__ import annotations

import importlib
import os
import re
from dataclasses import dataclass

import networkx as nx
import torch

from .. import data   # lazy (PEP 562): the dataset readers and generators load when a config names them
from .._hashing import content_hash
from ..data.names import GRAPH_KEYS, VECTOR_DATASET_NAMES, vector_dataset_name, vector_protocol_hint
from .params import fail, hint

__all__ = ["DatasetEntry", "graph_dataset", "vector_dataset", "load_spec", "fingerprint", "split_fingerprint",
           "ids_fingerprint", "is_missing_error"]


@dataclass(frozen=True)
class DatasetEntry:
    """One dataset: a name (what rows show) and where it comes from: ``source`` (a dataset name or
    an ``.npz`` path), ``graph`` (a generated networkx graph) or, for the vector protocols,
    ``vector`` ({part, n_per_class, subsample_seed, options, positive, negative, noise_std, ...})."""
    name: str
    source: str | None = None
    graph: dict | None = None
    vector: dict | None = None

    def identity(self) -> dict:
        out = {"name": self.name, "source": self.source, "graph": self.graph}
        return out if self.vector is None else {**out, "vector": self.vector}


def _known_graph(name: str, *at) -> None:
    """Refuse (at the key path ``at``) a graph dataset name that no registration knows, naming the
    closest known names; checked when the config is read, before any run."""
    try:
        data.get_spec(name)
    except ValueError:
        names = data.known_datasets()
        near = hint(name, names, 2, 0.5) or hint(name, list(GRAPH_KEYS), 1, 0.6)
        raise fail(f"unknown graph dataset {name!r}{near} (known: {', '.join(names)}; case, spaces, '-' and '_' are "
                   "ignored; or give a path to an .npz file)", *at) from None


def graph_dataset(d, base_dir: str | None, *at) -> DatasetEntry:
    """The :class:`DatasetEntry` of a graph dataset entry (at ``at``): a name, an ``.npz`` path (relative
    to the config's folder ``base_dir`` when the file is there) or a ``GraphDataset`` mapping."""
    src = d if isinstance(d, str) else d.path
    if src is None and d.graph is not None:
        return DatasetEntry(name=d.name or d.graph.kind, graph=d.graph.resolved())
    if src is None and d.name is None:
        raise fail("a dataset mapping needs 'name', 'path' or 'graph'", *at)
    if src is None:
        src = d.name
    if not src.endswith(".npz"):
        wrong = vector_protocol_hint(src)
        if wrong is not None:
            raise fail(wrong, *at)
        _known_graph(src, *at, *(() if isinstance(d, str) else ("name",)))
    if not isinstance(d, str) and d.path is None:
        return DatasetEntry(name=d.name, source=d.name)
    if not isinstance(d, str) and d.graph is not None:
        raise fail("give either 'path' or 'graph', not both", *at)
    local = os.path.join(base_dir or "", src)
    if src.endswith(".npz") and base_dir and not os.path.isabs(src) and not os.path.exists(src) \
            and os.path.exists(local):
        src = local
    name = os.path.splitext(os.path.basename(src))[0] if src.endswith(".npz") else src
    return DatasetEntry(name=name if isinstance(d, str) else d.name or name, source=src)


_TASK_NAME = re.compile(r"^(?P<source>.*\S)\s+(?P<pos>[^\s]+?)\s*vs\s*(?P<neg>[^\s]+)$")


def vector_dataset(d, protocol: str, *at) -> DatasetEntry:
    """The :class:`DatasetEntry` of a vector dataset entry (at ``at``): a name or a ``VectorDatasetModel`` mapping."""
    d = {"name": d} if isinstance(d, str) else d.model_dump(exclude_none=True)
    vec = {k: d[k] for k in ("part", "n_per_class", "options", "noise_std") if k in d}
    for seed, need in (("subsample_seed", "n_per_class"), ("noise_seed", "noise_std")):
        if seed in d and need not in d:
            raise fail(f"only with {need}", *at, seed)
        if need in d:
            vec[seed] = d.get(seed, 0)
    source = d.get("source")
    if protocol == "one-class":
        m = _TASK_NAME.match(d["name"])
        pos, neg = d.get("positive", m and m.group("pos")), d.get("negative", m and m.group("neg"))
        if pos is None or neg is None:
            raise fail("a one-class task names its classes: write 'SOURCE AvsB' (e.g. 'MNIST 3vs8': train on 3, "
                       f"test on 3 and 8) or give 'positive' and 'negative'; got {d['name']!r}", *at)
        vec["positive"], vec["negative"] = (int(v) if isinstance(v, str) and re.fullmatch(r"-?\d+", v) else v
                                            for v in (pos, neg))
        if vec["positive"] == vec["negative"]:
            raise fail(f"positive and negative class are the same ({vec['positive']!r})", *at)
        source = source or (m.group("source") if m else None)
    elif "positive" in d or "negative" in d:
        raise fail("only one-class tasks have positive/negative classes", *at,
                   "positive" if "positive" in d else "negative")
    source = source or d["name"]
    if vector_dataset_name(source) is None:
        raise fail(f"unknown dataset {source!r} for the {protocol} protocol"
                   f"{hint(source, list(VECTOR_DATASET_NAMES), 1, 0.5)} "
                   f"(allowed: {', '.join(VECTOR_DATASET_NAMES)}; case-insensitive)",
                   *at, *(("source",) if "source" in d else ()))
    return DatasetEntry(name=d["name"], source=source, vector=vec)


def _dcsbm_graph(spec: DatasetEntry):
    """A ``graph: {kind: dcsbm, ...}`` entry: generated whole (:func:`graphstk.data.make_dcsbm`), or,
    with ``partitioned: DIR`` inside a ``torch.distributed`` run, its partitioned form
    (:func:`graphstk.experiments.distributed_run.partitioned_dcsbm`)."""
    g = spec.graph
    kw = dict(num_nodes=g["nodes"], num_edges=g["edges"], seed=g.get("seed", 0),
              **{k: g[c] for k, c in (("num_classes", "classes"), ("homophily", "homophily"),
                                      ("exponent", "exponent")) if c in g})
    directory = g.get("partitioned")
    if directory is not None and torch.distributed.is_available() and torch.distributed.is_initialized():
        # the partitioned form belongs to the distributed runner: loaded only when a config names it
        graph = importlib.import_module(".distributed_run", __package__).partitioned_dcsbm(directory, kw)
    else:
        graph = data.make_dcsbm(**kw)
    graph.name = spec.name
    return graph


def _networkx_graph(g: dict):
    if g["kind"] == "karate_club":
        return nx.karate_club_graph(), "club"
    sizes = g["sizes"]
    probs = [[g["p_in"] if i == j else g["p_out"] for j in range(len(sizes))] for i in range(len(sizes))]
    return nx.stochastic_block_model(sizes, probs, seed=g["seed"]), "block"


def _default_split(data, train_per_class: int, val_per_class: int, seed: int = 0):
    """Attach a default split (per-class train/val draws, the rest is the test pool).

    Small generated graphs cannot hold the paper's 20 x #classes train and val nodes, so
    they get a "Planetoid-style" default split instead; ``make_split`` then draws test
    nodes from the pool (``planetoid_split: public``) or redraws every set with these
    sizes per seed (``planetoid_split: random``).
    """
    g = torch.Generator().manual_seed(seed)
    y = data.y
    train, val = [], []
    for c in range(int(y.max()) + 1):
        pool = (y == c).nonzero().flatten()
        pool = pool[torch.randperm(pool.numel(), generator=g)]
        if pool.numel() < train_per_class + val_per_class + 1:
            raise ValueError(f"class {c} has {pool.numel()} nodes: too few for {train_per_class} train + "
                             f"{val_per_class} val per class")
        train.append(pool[:train_per_class])
        val.append(pool[train_per_class:train_per_class + val_per_class])
    n = int(data.num_nodes)
    masks = {k: torch.zeros(n, dtype=torch.bool) for k in ("train_mask", "val_mask", "test_mask")}
    masks["train_mask"][torch.cat(train)] = True
    masks["val_mask"][torch.cat(val)] = True
    masks["test_mask"] = ~(masks["train_mask"] | masks["val_mask"])
    for k, m in masks.items():
        data[k] = m
    data.split_protocol = "planetoid"
    return data


def load_spec(spec: DatasetEntry, root: str | None):
    """Load one dataset; raises :class:`graphstk.data.DatasetNotFoundError` when it is absent."""
    if spec.graph is not None and spec.graph["kind"] == "dcsbm":
        return _dcsbm_graph(spec)
    if spec.graph is not None:
        graph, label = _networkx_graph(spec.graph)
        out = data.from_networkx(graph, label=label)
        out.name = spec.name
        if "train_per_class" in spec.graph:
            _default_split(out, spec.graph["train_per_class"], spec.graph["val_per_class"])
        return out
    return data.load_dataset(spec.source, root=root)


def is_missing_error(err: BaseException) -> bool:
    """Whether ``err`` says a dataset is absent (:class:`graphstk.data.DatasetNotFoundError` is a
    ``FileNotFoundError``)."""
    return isinstance(err, FileNotFoundError)


def fingerprint(data) -> str:
    """Hash of what the methods read (graph, labels, size): part of every cache key."""
    return content_hash(data.edge_index, data.y, int(data.num_nodes))[:24]


def ids_fingerprint(*ids) -> str:
    """Hash of a unit's id sets (tensors; any protocol's split): part of its cache key."""
    return content_hash(*ids)[:24]


def split_fingerprint(split) -> str:
    """:func:`ids_fingerprint` of a :class:`~graphstk.data.Split`'s train, val and test ids."""
    return ids_fingerprint(split.train, split.val, split.test)
