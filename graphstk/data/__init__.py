"""Datasets and the split protocol of the STKR paper.

* :func:`load_dataset`: PyG benchmark graphs by name (Cora, CiteSeer, PubMed, Computers,
  Photo, CS, Physics, DBLP, CoraFull), ``.npz`` files, networkx graphs, PyG ``Data``.
* :func:`resolve_data_root`: ``root`` > ``$GRAPHSTK_DATA`` > ``./datasets``.
* :func:`make_split` / :class:`Split`: train / val / test / other (App. D.1).
* :func:`dataset_statistics`: node, edge, feature, class, isolated-node and component counts.
* :func:`load_vector_dataset` / :class:`VectorDataset`: vector and text benchmarks (SSL book
  sets, MNIST, USPS, movie reviews, WebKB, scikit-learn digits) and the Fredholm paper's toy
  generators :func:`make_two_lines` / :func:`make_circle`; names in :data:`VECTOR_DATASETS`.
* :func:`dataset_key` / :func:`match_datasets`: the one normal form of dataset names.
* Damaged files raise :class:`~graphstk.exceptions.DataFileError` (:mod:`graphstk.data.files`).

See ``docs/data.md``.
"""
from ..exceptions import DataFileError
from .datasets import (
    DATASETS,
    DatasetNotFoundError,
    FeaturesUnavailableWarning,
    get_spec,
    known_datasets,
    load_dataset,
)
from .graph_io import from_networkx, load_npz
from .names import dataset_key, match_datasets
from .roots import resolve_data_root
from .splits import SETTINGS, Split, make_split
from .statistics import dataset_statistics
from .validation import build_data, validate_data
from .vector import VECTOR_DATASETS, VectorDataset, load_vector_dataset, vector_dataset_files
from .generators import dcsbm_edges, make_circle, make_dcsbm, make_two_lines

__all__ = [
    "DATASETS", "DataFileError", "DatasetNotFoundError", "FeaturesUnavailableWarning", "SETTINGS", "Split",
    "build_data", "dataset_key", "dataset_statistics", "from_networkx", "get_spec", "known_datasets",
    "load_dataset", "load_npz", "make_split", "match_datasets", "resolve_data_root", "validate_data",
    "VECTOR_DATASETS", "VectorDataset", "dcsbm_edges", "load_vector_dataset", "make_circle", "make_dcsbm",
    "make_two_lines",
    "vector_dataset_files",
]
