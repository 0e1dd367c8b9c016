"""The one place where an argument naming nodes (or rows) becomes a LongTensor of ids: a boolean
mask of length ``N`` and a tensor of ids mean the same thing everywhere (:func:`as_index`).
"""
from __future__ import annotations

from typing import Sequence

import torch
from torch import Tensor

__all__ = ["as_index", "IndexLike"]

IndexLike = Tensor | Sequence[int] | Sequence[bool] | None

_INT_DTYPES = (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8)


def _describe(idx) -> str:
    if isinstance(idx, Tensor):
        return f"a {idx.dtype} tensor of shape {tuple(idx.shape)}"
    return f"a {type(idx).__name__}"


def _looks_like_mask(idx: Tensor, size: int) -> bool:
    """A 0/1 integer tensor of length ``size`` that repeats a value: a mask in integer form (an
    ``uint8`` mask of old PyTorch, ``mask.long()``), never a list of distinct ids."""
    if idx.numel() != size or size < 3:
        return False
    return bool(((idx == 0) | (idx == 1)).all())


def as_index(idx: IndexLike, size: int, device: torch.device | str | None = None, *, name: str = "index",
             allow_none: bool = True) -> Tensor:
    """Turn a node selection into a checked 1-D LongTensor of ids in ``[0, size)``.

    Parameters
    ----------
    idx : LongTensor | BoolTensor | sequence | numpy array | int | None
        Either the ids themselves (any integer dtype, a list, a numpy array or one int), or
        a boolean mask with exactly ``size`` entries (``True`` = selected; PyG's
        ``data.train_mask``). ``None`` selects all ``size`` entries (when ``allow_none``).
    size : int
        The number of nodes (rows) the ids refer to.
    device : torch.device, optional
        Device of the result (default: that of ``idx``).
    name : str, default "index"
        The argument's name, used in error messages (``"train_idx"``, ``"mask"``, ...).
    allow_none : bool, default True
        Whether ``None`` means "all"; otherwise it is an error.

    Returns
    -------
    LongTensor ``[k]``
        The selected ids, in the order given (a mask gives them in increasing order).

    Raises
    ------
    TypeError
        ``idx`` is neither integer ids nor a boolean mask (e.g. a float tensor).
    ValueError
        A boolean mask whose length is not ``size``, a mask/ids of more than one dimension, or a
        0/1 integer tensor of length ``size`` (a mask in integer form: pass ``mask.bool()``).
    IndexError
        Ids outside ``[0, size)`` (negative ids are not wrapped around).
    """
    what = f"{name} must be a LongTensor of node ids or a boolean mask of length {size}"
    if idx is None:
        if not allow_none:
            raise TypeError(f"{what}, got None")
        return torch.arange(size, device=device)
    if not isinstance(idx, Tensor):
        try:
            if isinstance(idx, int) and not isinstance(idx, bool):
                idx = torch.tensor([idx])
            elif hasattr(idx, "__array__"):
                idx = torch.as_tensor(idx)
            else:
                items = list(idx)
                idx = torch.as_tensor(items) if items else torch.empty(0, dtype=torch.long)
        except (TypeError, ValueError, RuntimeError):
            raise TypeError(f"{what}, got {_describe(idx)}") from None
    if idx.dim() == 0:
        if idx.dtype == torch.bool:
            raise TypeError(f"{what}, got a single bool")
        idx = idx.reshape(1)
    if idx.dim() != 1:
        kind = "mask" if idx.dtype == torch.bool else "ids"
        raise ValueError(f"{what}; got {kind} of shape {tuple(idx.shape)} (flatten it, e.g. .view(-1))")
    if idx.dtype == torch.bool:
        if idx.numel() != size:
            raise ValueError(f"{what}; got a boolean mask of length {idx.numel()} "
                             f"(a mask needs one entry per node)")
        idx = idx.nonzero().flatten()
    elif idx.dtype not in _INT_DTYPES:
        raise TypeError(f"{what}, got {_describe(idx)}")
    elif _looks_like_mask(idx, size):
        raise ValueError(f"{name} is a {idx.dtype} tensor of 0/1 values with one entry per node ({size}): it "
                         f"looks like a mask, but integer values are read as node ids (0 and 1, repeated); "
                         f"pass mask.bool() (a boolean mask) or mask.nonzero().flatten() (the ids)")
    idx = idx.to(torch.long)
    if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= size):
        raise IndexError(f"{name} out of range: ids in [{int(idx.min())}, {int(idx.max())}] "
                         f"for {size} nodes (valid ids are 0..{size - 1})")
    return idx.to(device) if device is not None else idx
