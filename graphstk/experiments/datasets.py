"""Turn a config's dataset entries into PyG ``Data`` objects (through :mod:`graphstk.data`).

Named datasets and ``.npz`` paths go to :func:`graphstk.load_dataset`; generated graphs
(``graph: karate_club`` / ``graph: {kind: sbm, ...}``) are built with networkx here and
handed to the same loader, so every dataset reaches the runner the same way.
"""
from __future__ import annotations

import hashlib

import torch

from .config import DatasetSpec

__all__ = ["load_spec", "fingerprint", "split_fingerprint", "is_missing_error"]


def _networkx_graph(g: dict):
    import networkx as nx

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


def load_spec(spec: DatasetSpec, root: str | None):
    """Load one dataset; raises :class:`graphstk.data.DatasetNotFoundError` when it is absent."""
    from graphstk.data import load_dataset

    if spec.graph is not None:
        graph, label = _networkx_graph(spec.graph)
        data = load_dataset(graph, label=label)
        data.name = spec.name
        if "train_per_class" in spec.graph:
            _default_split(data, spec.graph["train_per_class"], spec.graph["val_per_class"])
        return data
    return load_dataset(spec.source, root=root)


def is_missing_error(err: BaseException) -> bool:
    try:
        from graphstk.data import DatasetNotFoundError
    except ImportError:  # pragma: no cover - data package not importable
        return isinstance(err, FileNotFoundError)
    return isinstance(err, (DatasetNotFoundError, FileNotFoundError))


def _hash_tensors(*tensors) -> str:
    h = hashlib.sha256()
    for t in tensors:
        t = torch.as_tensor(t).detach().cpu().contiguous()
        h.update(str((tuple(t.shape), str(t.dtype))).encode())
        h.update(t.numpy().tobytes())
    return h.hexdigest()[:24]


def fingerprint(data) -> str:
    """Hash of what the methods read (graph, labels, size): part of every cache key."""
    return _hash_tensors(data.edge_index, data.y, torch.tensor([int(data.num_nodes)]))


def split_fingerprint(split) -> str:
    return _hash_tensors(split.train, split.val, split.test)
