"""graphstk: graph semi-supervised learning with spectrally transformed kernels.

See README.md for a tour. Public entry points are re-exported here:

* estimators: :class:`STKR`, :class:`LabelPropagation` (``fit(data, train_idx)`` /
  ``predict(idx)``; node arguments are LongTensor ids or boolean masks of length ``N``) and
  :class:`STKRCV`, a whole hyperparameter grid in one engine call, chosen on validation nodes
  (``fit(data, train_idx, val_idx)``);
* transforms: :class:`Polynomial`, :class:`InverseLaplacian`, :class:`ReciprocalPolynomial`, :class:`TopD`;
* data: :func:`load_dataset`, :func:`make_split`, :class:`Split`, :func:`resolve_data_root`;
  vector and text benchmarks: :func:`load_vector_dataset`, :class:`VectorDataset`, :func:`make_two_lines`,
  :func:`make_circle`;
* operators: :class:`GraphKernel`, :class:`SparseOperator`, :class:`DenseOperator`, :class:`KernelOperator`;
* the subpackages ``data``, ``operators``, ``spectral``, ``methods``, ``nn``, ``features``, ``mmd``, ``experiments``.

Submodules are imported on first use (PEP 562), so ``import graphstk`` and the command line's
``--help`` do not pay for torch_geometric until something needs it.
"""
from __future__ import annotations

import importlib

__version__ = "0.1.0"

_EXPORTS = {
    "DenseOperator": "operators", "GraphKernel": "operators", "KernelOperator": "operators",
    "SparseOperator": "operators",
    "DatasetNotFoundError": "data", "Split": "data", "dataset_statistics": "data", "load_dataset": "data",
    "make_split": "data", "resolve_data_root": "data",
    "VECTOR_DATASETS": "data", "VectorDataset": "data", "load_vector_dataset": "data", "make_circle": "data",
    "make_two_lines": "data",
    "STKR": "methods", "STKRCV": "methods", "LabelPropagation": "methods",
    "InverseLaplacian": "transforms", "Polynomial": "transforms", "ReciprocalPolynomial": "transforms",
    "TopD": "transforms",
}
_SUBMODULES = ("operators", "features", "mmd", "data", "methods", "spectral", "transforms", "nn", "experiments")

__all__ = sorted(_EXPORTS) + list(_SUBMODULES)


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module 'graphstk' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
