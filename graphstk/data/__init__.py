"""Datasets and the split protocol of the STKR paper.

* :func:`load_dataset`: PyG benchmark graphs by name (Cora, CiteSeer, PubMed, Computers,
  Photo, CS, Physics, DBLP, CoraFull), ``.npz`` files, networkx graphs, PyG ``Data``.
* :func:`resolve_data_root`: ``root`` > ``$GRAPHSTK_DATA`` > ``./datasets``.
* :func:`make_split` / :class:`Split`: train / val / test / other (App. D.1).
* :func:`dataset_statistics`: node, edge, feature, class, isolated-node and component counts.

See ``docs/data.md``.
"""
from .datasets import (
    DATASETS,
    DatasetNotFoundError,
    FeaturesUnavailableWarning,
    build_data,
    dataset_statistics,
    from_networkx,
    get_spec,
    known_datasets,
    load_dataset,
    load_npz,
    resolve_data_root,
    validate_data,
)
from .splits import SETTINGS, Split, make_split

__all__ = [
    "DATASETS", "DatasetNotFoundError", "FeaturesUnavailableWarning", "SETTINGS", "Split",
    "build_data", "dataset_statistics", "from_networkx", "get_spec", "known_datasets",
    "load_dataset", "load_npz", "make_split", "resolve_data_root", "validate_data",
]
