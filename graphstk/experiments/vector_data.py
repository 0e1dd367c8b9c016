"""Turn a config's vector dataset entries into :class:`graphstk.data.VectorDataset` objects: a loader
(``source``) with ``options``, then ``part``, ``n_per_class`` (seeded balanced subsample) and ``noise_std``
(seeded Gaussian noise), in this order; supplied splits survive a restriction only when every split lies
inside the kept points. Keys: docs/experiments.md, "Vector dataset entries".
"""
from __future__ import annotations

import dataclasses
import re

import scipy.sparse as sp
import torch

from .._hashing import content_hash
from .. import data   # lazy (PEP 562): the vector readers load when a config names a vector dataset
from ..data.names import VECTOR_DATASET_NAMES, vector_dataset_name
from .datasets import DatasetEntry
from .params import fail, hint

__all__ = ["vector_dataset", "load_vector_spec", "subset", "balanced_subsample", "add_gaussian_noise",
           "vector_fingerprint", "ids_fingerprint"]

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


def subset(ds, ids: torch.Tensor, name: str | None = None):
    """The points ``ids`` of ``ds`` as a new ``VectorDataset`` (point ``ids[i]`` becomes ``i``)."""
    ids = torch.as_tensor(ids, dtype=torch.long)
    n = ds.num_points
    new_id = torch.full((n,), -1, dtype=torch.long)
    new_id[ids] = torch.arange(ids.numel())
    X = ds.X[ids.numpy()] if sp.issparse(ds.X) else ds.X[ids]
    parts = {}
    for key, p in ds.parts.items():
        m = new_id[p]
        parts[key] = m[m >= 0]
    splits = {}
    for L, pairs in ds.splits.items():
        mapped = [(new_id[lab], new_id[unl]) for lab, unl in pairs]
        if mapped and all(bool((a >= 0).all()) and bool((b >= 0).all()) for a, b in mapped):
            splits[L] = mapped
    return dataclasses.replace(ds, name=name or ds.name, X=X, y=ds.y[ids].clone(), classes=list(ds.classes),
                               parts=parts, splits=splits)


def balanced_subsample(y: torch.Tensor, n_per_class: int, seed: int, num_classes: int,
                       what: str = "dataset") -> torch.Tensor:
    """Sorted ids of ``n_per_class`` points of every class, drawn at random with ``seed``."""
    g = torch.Generator().manual_seed(int(seed))
    smallest = min(int((y == c).sum()) for c in range(num_classes))   # the bound that holds for every class
    out = []
    for c in range(num_classes):
        pool = torch.nonzero(y == c).flatten()
        if pool.numel() < n_per_class:
            raise ValueError(f"{what}: class {c} has {pool.numel()} points, fewer than n_per_class = {n_per_class}; "
                             f"lower n_per_class to at most {smallest}")
        out.append(pool[torch.randperm(pool.numel(), generator=g)[:n_per_class]])
    return torch.sort(torch.cat(out)).values


def load_vector_spec(spec: DatasetEntry, root: str | None):
    """Load one vector dataset entry (see the module doc); the loaders' own errors pass through
    (unknown name: ``ValueError``; absent files: ``DatasetNotFoundError``)."""
    vec = spec.vector or {}
    ds = data.load_vector_dataset(spec.source, root=root, **vec.get("options", {}))
    if "part" in vec:
        part = vec["part"]
        if part not in ds.parts:
            raise ValueError(f"dataset {spec.name!r}: {ds.name} has no part {part!r} "
                             f"(its parts: {', '.join(ds.parts) or 'none'})")
        ds = subset(ds, torch.sort(ds.parts[part]).values)
    if "n_per_class" in vec:
        ids = balanced_subsample(ds.y, vec["n_per_class"], vec.get("subsample_seed", 0), ds.num_classes,
                                 what=f"dataset {spec.name!r}")
        ds = subset(ds, ids)
    if "noise_std" in vec:
        ds = add_gaussian_noise(ds, vec["noise_std"], vec.get("noise_seed", 0), what=f"dataset {spec.name!r}")
    return ds


def add_gaussian_noise(ds, std: float, seed: int, what: str = "dataset"):
    """``ds`` with ``N(0, std^2)`` noise added to every feature (seeded; dense ``X`` only)."""
    if sp.issparse(ds.X):
        raise ValueError(f"{what}: noise_std needs dense features ({ds.name} is sparse)")
    g = torch.Generator().manual_seed(int(seed))
    X = ds.X + float(std) * torch.randn(ds.X.shape, generator=g, dtype=ds.X.dtype)
    return dataclasses.replace(ds, X=X, classes=list(ds.classes), parts=dict(ds.parts), splits=dict(ds.splits))


def vector_fingerprint(ds) -> str:
    """Hash of what the methods read (features, labels): part of every cache key."""
    return content_hash(ds.X, ds.y)[:24]


def ids_fingerprint(*tensors) -> str:
    return content_hash(*(torch.as_tensor(t) for t in tensors))[:24]
