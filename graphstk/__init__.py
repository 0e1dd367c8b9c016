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
import importlib
import sys

__version__ = "0.1.0"


def _lazy_exports(package: str, names: dict[str, str], submodules: tuple[str, ...] = ()):
    """``(__getattr__, __dir__, __all__)`` for the package named ``package``.

    ``names`` maps each defining module, relative to ``package`` (``".estimators"``), to the
    space-separated public names it defines; ``submodules`` are public names that are submodules
    themselves. ``__all__`` lists every name in the order given, so ``from package import *``,
    ``dir()`` and Sphinx see them all.
    """
    where = {name: module for module, listed in names.items() for name in listed.split()}
    where.update({name: f".{name}" for name in submodules})

    def __getattr__(name: str):
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(where[name], package)
        value = module if name in submodules else getattr(module, name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__():
        return sorted(set(vars(sys.modules[package])) | set(where))

    return __getattr__, __dir__, list(where)


__getattr__, __dir__, __all__ = _lazy_exports(__name__, {
    ".operators": "DenseOperator GraphKernel KernelOperator SparseOperator",
    ".data": "DatasetNotFoundError Split dataset_statistics load_dataset make_split resolve_data_root VECTOR_DATASETS "
             "VectorDataset load_vector_dataset make_circle make_two_lines",
    ".methods": "STKR STKRCV LabelPropagation",
    ".spectral": "InverseLaplacian Polynomial ReciprocalPolynomial TopD",
}, submodules=("operators", "features", "mmd", "data", "methods", "spectral", "nn", "experiments"))
