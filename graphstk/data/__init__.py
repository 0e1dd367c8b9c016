"""Datasets and the split protocol of the STKR paper: :func:`load_dataset` (PyG benchmark graphs,
``.npz`` files, networkx graphs), :func:`make_split` / :class:`Split` (App. D.1),
:func:`load_vector_dataset` / :class:`VectorDataset` (vector and text benchmarks), the generators and
:func:`dataset_key` (one normal form of dataset names). See ``docs/data.md``.

Names are loaded from their modules on first use (PEP 562): a graph run never loads the vector readers.
"""
from __future__ import annotations

import importlib

#: Public name -> the module of this package that defines it.
_EXPORTS = {
    "DataFileError": "graphstk.exceptions", "DatasetNotFoundError": "graphstk.exceptions",
    "FeaturesUnavailableWarning": "graphstk.exceptions",
    "DATASETS": ".datasets", "get_spec": ".datasets", "known_datasets": ".datasets", "load_dataset": ".datasets",
    "from_networkx": ".graph_io", "load_npz": ".graph_io",
    "dataset_key": ".names", "match_datasets": ".names",
    "resolve_data_root": ".roots",
    "SETTINGS": ".splits", "Split": ".splits", "make_split": ".splits",
    "dataset_statistics": ".statistics",
    "build_data": ".validation", "validate_data": ".validation",
    "VECTOR_DATASETS": ".vector", "load_vector_dataset": ".vector", "vector_dataset_files": ".vector",
    "VectorDataset": ".vector_dataset",
    "dcsbm_edges": ".generators", "make_circle": ".generators", "make_dcsbm": ".generators",
    "make_two_lines": ".generators",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name], __name__), name)   # not cached: monkeypatch-safe


def __dir__():
    return sorted(set(globals()) | set(__all__))
