"""Graph arrays in, a checked PyG ``Data`` out: :func:`build_data` and :func:`validate_data` (errors name the
problem and what to write instead).
"""
from __future__ import annotations

import numpy as np
import torch
from torch import Tensor
from torch_geometric.data import Data

__all__ = ["build_data", "check_edge_index", "check_mask", "validate_data"]


def check_edge_index(edge_index: Tensor, num_nodes: int, edge_weight: Tensor | None = None) -> None:
    """Raise a clear error for a malformed ``edge_index`` / ``edge_weight``.

    Parameters
    ----------
    edge_index : LongTensor ``[2, E]``
    num_nodes : int
    edge_weight : Tensor ``[E]``, optional
    """
    if not isinstance(edge_index, Tensor):
        raise TypeError(f"edge_index must be a torch.Tensor, got {type(edge_index).__name__}")
    if edge_index.dim() != 2 or edge_index.shape[0] != 2:
        raise ValueError(f"edge_index must have shape [2, E], got {tuple(edge_index.shape)}")
    if edge_index.dtype.is_floating_point or edge_index.dtype == torch.bool:
        raise TypeError(f"edge_index must be an integer tensor, got {edge_index.dtype}")
    if num_nodes < 0:
        raise ValueError(f"num_nodes must be >= 0, got {num_nodes}")
    if edge_index.numel() and (int(edge_index.min()) < 0 or int(edge_index.max()) >= num_nodes):
        raise ValueError(f"edge_index has node ids in [{int(edge_index.min())}, {int(edge_index.max())}], "
                         f"outside [0, {num_nodes - 1}] for num_nodes={num_nodes}")
    if edge_weight is not None:
        if edge_weight.shape != (edge_index.shape[1],):
            raise ValueError(f"edge_weight must have shape [E] = [{edge_index.shape[1]}], "
                             f"got {tuple(edge_weight.shape)}")
        if not torch.isfinite(edge_weight).all() or (edge_weight < 0).any():
            raise ValueError("edge_weight must be finite and non-negative")


def _as_tensor(arr, what: str, float_: bool = False) -> Tensor:   # float_: integer arrays become float32
    if not isinstance(arr, Tensor):
        a = np.asarray(arr)
        if a.dtype == object or a.dtype.kind in "USV":
            raise TypeError(f"{what} must be numeric, got dtype {a.dtype}")
        arr = torch.from_numpy(np.ascontiguousarray(a))
    return arr.float() if float_ and not arr.dtype.is_floating_point else arr


def _index(arr, n: int, what: str) -> Tensor:
    t = _as_tensor(arr, what)
    if t.dtype == torch.bool or t.dtype.is_floating_point or t.dtype.is_complex:
        raise TypeError(f"{what} must hold integer node ids, got {t.dtype}")
    t = t.long().flatten()
    if t.numel() and (int(t.min()) < 0 or int(t.max()) >= n):
        raise ValueError(f"{what} has node ids in [{int(t.min())}, {int(t.max())}], outside [0, {n - 1}]")
    if torch.unique(t).numel() != t.numel():
        raise ValueError(f"{what} contains duplicate node ids")
    return t


def _check_labels(y: Tensor, what: str = "y") -> None:
    if y.dim() != 1:
        hint = " (one-hot? pass the argmax)" if y.dim() == 2 else ""
        raise ValueError(f"{what} must be 1-D class ids of shape [N], got shape {tuple(y.shape)}{hint}")
    if y.dtype == torch.bool or y.dtype.is_floating_point or y.dtype.is_complex:
        raise TypeError(f"{what} (labels) must be an integer array, got {y.dtype}")
    if y.numel() == 0:
        raise ValueError(f"{what} is empty: a graph needs at least one labelled node")
    if int(y.min()) < 0:
        bad = int((y < 0).sum())
        raise ValueError(f"{what} has {bad} negative labels (min {int(y.min())}); labels must be class ids >= 0 "
                         "for every node")


def _check_features(x: Tensor, n: int) -> None:
    if x.dim() != 2:
        raise ValueError(f"x must have shape [N, F], got {tuple(x.shape)}")
    if x.shape[0] != n:
        raise ValueError(f"N mismatch: x has {x.shape[0]} rows but y has {n} labels")
    if x.dtype.is_floating_point and not bool(torch.isfinite(x).all()):
        raise ValueError("x contains NaN or infinite values")


def build_data(edge_index, y, x=None, edge_weight=None, train_index=None, val_index=None,
               test_index=None, name: str = "", source: str = "input") -> Data:
    """Validate arrays (numpy or torch) and assemble a :class:`Data` (format of :func:`load_dataset`).

    ``N`` is ``len(y)``. Errors name the problem: wrong shapes or dtypes, edge ids out of
    ``[0, N)``, missing or negative labels, ``x``/``y`` size mismatch, overlapping or
    partial train/val/test indices.

    Parameters
    ----------
    edge_index : int array ``[2, E]``
    y : int array ``[N]``
    x : float array ``[N, F]``, optional
    edge_weight : float array ``[E]``, optional
    train_index, val_index, test_index : int arrays, optional (all three or none)
        A default split: stored as ``train_mask``/``val_mask``/``test_mask``.
    name : str, default ""
        Stored as ``data.name``.
    source : str, default "input"
        Where the arrays came from, for error messages.
    """
    if y is None:
        raise ValueError(f"labels missing: {source} has no y")
    y_t = _as_tensor(y, "y")
    _check_labels(y_t)
    y_t, n = y_t.long(), int(y_t.numel())
    ei = _as_tensor(edge_index, "edge_index")
    check_edge_index(ei, n)
    ei = ei.long().contiguous()

    data = Data(edge_index=ei, y=y_t, num_nodes=n)
    if edge_weight is not None:
        data.edge_weight = _as_tensor(edge_weight, "edge_weight", float_=True)
        check_edge_index(ei, n, data.edge_weight)
    if x is not None:
        data.x = _as_tensor(x, "x", float_=True)
        _check_features(data.x, n)

    given = {k: v for k, v in (("train_index", train_index), ("val_index", val_index),
                               ("test_index", test_index)) if v is not None}
    if given and len(given) != 3:
        raise ValueError(f"{source}: give all of train_index, val_index, test_index or none of them "
                         f"(got only {sorted(given)})")
    data.split_protocol = "planetoid" if given else "random"
    for key, idx in given.items():
        t = _index(idx, n, f"{source}: {key}")
        if t.numel() == 0 and key != "val_index":
            raise ValueError(f"{source}: {key} is empty: a split without "
                             f"{'training' if key == 'train_index' else 'test'} nodes cannot be "
                             f"{'trained on' if key == 'train_index' else 'scored'}")
        data[key.replace("_index", "_mask")] = torch.zeros(n, dtype=torch.bool).index_fill_(0, t, True)
    if given and bool((data.train_mask.long() + data.val_mask.long() + data.test_mask.long() > 1).any()):
        raise ValueError(f"{source}: train_index, val_index and test_index must be disjoint")
    data.name = name
    return data


def validate_data(data: Data) -> None:
    """Raise a clear error unless ``data`` is a usable labelled graph (the checks of :func:`build_data`)."""
    if not isinstance(data, Data):
        raise TypeError(f"expected a torch_geometric.data.Data, got {type(data).__name__}")
    y = getattr(data, "y", None)
    if y is None:
        raise ValueError("labels missing: data.y is None")
    _check_labels(y, "data.y")
    n = int(data.num_nodes) if data.num_nodes is not None else y.numel()
    if y.numel() != n:
        raise ValueError(f"N mismatch: data.y has {y.numel()} labels but data.num_nodes is {n}")
    if data.edge_index is None:
        raise ValueError("data.edge_index is None")
    check_edge_index(data.edge_index, n, getattr(data, "edge_weight", None))
    if data.x is not None:
        _check_features(data.x, n)
    for k in ("train_mask", "val_mask", "test_mask"):
        if getattr(data, k, None) is not None:
            check_mask(data, k, n)


def check_mask(data: Data, key: str, n: int) -> torch.Tensor:
    """``data.<key>`` (a default split's mask), checked to be a bool tensor of shape ``[n]``."""
    m = getattr(data, key)
    if m.dtype != torch.bool or m.shape != (n,):
        raise ValueError(f"data.{key} must be a bool tensor of shape [{n}], got {m.dtype} {tuple(m.shape)}")
    return m
