"""The vector-data object :class:`VectorDataset` (validated on construction), :func:`encode_labels` and
:func:`check_partition`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
import torch

__all__ = ["VectorDataset", "encode_labels", "check_partition"]


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
    name, X = ds.name, ds.X
    if not (sp.issparse(X) or isinstance(X, torch.Tensor)):
        raise TypeError(f"{name}: X must be a torch.Tensor or a scipy sparse matrix, got {type(X).__name__}; "
                        "use VectorDataset.from_arrays to convert arrays")
    if len(X.shape) != 2:
        raise ValueError(f"{name}: X must be 2-D [n, d], got shape {tuple(X.shape)}")
    if sp.issparse(X):
        bad = ~np.isfinite(X.data)
        rows, count = np.unique(X.tocoo().row[bad]), int(bad.sum())
    else:
        if not X.is_floating_point():
            raise TypeError(f"{name}: X must be a floating tensor, got {X.dtype}; convert it with X.double()")
        rows = _nonfinite_rows(X)
        count = int((~torch.isfinite(X[rows])).sum())
    if len(rows):
        raise ValueError(f"{name}: X has {count} NaN or infinite entries (rows {rows[:10].tolist()}"
                         f"{' ...' if len(rows) > 10 else ''}); clean or impute the features before loading")
    n, y = X.shape[0], ds.y
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
    """Ids of the rows of ``X`` holding a NaN or an infinity, without an ``[n, d]`` temporary (0.5 GB
    for MNIST): only rows with a non-finite sum (NaN and inf propagate; or an overflow) are checked."""
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
    for ids, which in ((labeled, "labeled"), (unlabeled, "unlabeled")):
        if ids.numel() == 0:
            raise ValueError(f"{what} has no {which} ids: an empty split cannot be trained on or scored")
    count = torch.bincount(torch.cat([labeled, unlabeled]), minlength=n)
    if bool((count == 1).all()):
        return
    twice, missing = torch.nonzero(count > 1).flatten(), torch.nonzero(count == 0).flatten()
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


def class_counts(y: torch.Tensor, classes: list) -> dict:
    """``{label value: number of points}`` for class ids ``y`` and their label values ``classes``."""
    return dict(zip(classes, torch.bincount(y, minlength=len(classes)).tolist()))


def _as_ids(v) -> torch.Tensor:
    t = torch.as_tensor(np.asarray(v) if not isinstance(v, torch.Tensor) else v)
    if t.dtype == torch.bool:
        return torch.nonzero(t).flatten()
    return t.to(torch.long).flatten()


def _as_features(X, dtype: torch.dtype = torch.float64):
    if sp.issparse(X):
        kind = X.dtype.kind
    elif isinstance(X, torch.Tensor):
        kind = "c" if X.is_complex() else "f"
    else:
        X = np.asarray(X)
        kind = X.dtype.kind
    if kind == "c":
        raise TypeError(f"X is complex ({X.dtype}); features must be real: pass X.real (or stack the real and "
                        "imaginary parts as features) explicitly")
    if kind not in "biuf":
        raise TypeError(f"X must hold numbers, got dtype {X.dtype}; convert it first (e.g. X.astype(float), or "
                        "encode text with graphstk.data.text.tfidf_features)")
    if sp.issparse(X):
        return _csr64(X)
    if isinstance(X, torch.Tensor):
        return X.to(dtype)
    return torch.as_tensor(X, dtype=dtype)


def _csr64(X) -> sp.csr_matrix:
    out = sp.csr_matrix(X, dtype=np.float64)
    out.sort_indices()
    return out
