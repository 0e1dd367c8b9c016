"""Load a config's vector dataset entries (checked by :func:`graphstk.experiments.datasets.vector_dataset`) as
:class:`graphstk.data.VectorDataset` objects: a loader (``source``) with ``options``, then ``part``, ``n_per_class``
(seeded balanced subsample) and ``noise_std`` (seeded Gaussian noise), in this order; supplied splits survive a
restriction only when every split lies inside the kept points. Keys: docs/experiments.md, "Vector dataset entries".
"""
from __future__ import annotations

import dataclasses

import scipy.sparse as sp
import torch

from .._hashing import content_hash
from .. import data   # lazy (PEP 562): the vector readers load when a config names a vector dataset
from .datasets import DatasetEntry

__all__ = ["load_vector_spec", "subset", "balanced_subsample", "add_gaussian_noise", "vector_fingerprint"]

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
