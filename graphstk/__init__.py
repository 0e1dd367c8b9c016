"""graphstk: graph semi-supervised learning with spectrally transformed kernels.

See README.md for a tour. Public entry points are re-exported here:

* estimators: :class:`~graphstk.methods.STKR`, :class:`~graphstk.methods.LabelPropagation` (``fit(data, train_idx)`` /
  ``predict(idx)``; node arguments are LongTensor ids or boolean masks of length ``N``) and
  :class:`~graphstk.methods.STKRCV`, a whole hyperparameter grid in one engine call, chosen on validation nodes
  (``fit(data, train_idx, val_idx)``);
* transforms: :class:`~graphstk.spectral.Polynomial`, :class:`~graphstk.spectral.InverseLaplacian`, :class:`~graphstk.spectral.ReciprocalPolynomial`, :class:`~graphstk.spectral.TopD`;
* data: :func:`~graphstk.data.load_dataset`, :func:`~graphstk.data.make_split`, :class:`~graphstk.data.Split`, :func:`~graphstk.data.resolve_data_root`;
  vector and text benchmarks: :func:`~graphstk.data.load_vector_dataset`, :class:`~graphstk.data.VectorDataset`, :func:`~graphstk.data.make_two_lines`,
  :func:`~graphstk.data.make_circle`;
* operators: :class:`~graphstk.operators.GraphKernel`, :class:`~graphstk.operators.SparseOperator`, :class:`~graphstk.operators.DenseOperator`, :class:`~graphstk.operators.KernelOperator`;
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
    "InverseLaplacian": "spectral", "Polynomial": "spectral", "ReciprocalPolynomial": "spectral",
    "TopD": "spectral",
}
_SUBMODULES = ("operators", "features", "mmd", "data", "methods", "spectral", "nn", "experiments")

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
