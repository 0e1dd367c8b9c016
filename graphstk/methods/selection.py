"""Model selection, the one rule of :class:`~graphstk.methods.STKRCV` and the runner: :func:`correct`, :func:`select`."""
from __future__ import annotations

import torch
from torch import Tensor

from .grid import unreachable
from .problem import argmax_of_labeled_classes

__all__ = ["correct", "select"]


def correct(scores: Tensor, y: Tensor, missing: list[int] = ()) -> tuple[Tensor, Tensor]:
    """``(hit, reached)``, BoolTensors ``[n]`` on the host: the argmax of ``scores`` ``[n, C]`` (non-finite entries
    zeroed, classes ``missing`` never winning) equals ``y`` ``[n]``; the row is not
    :func:`~graphstk.methods.grid.unreachable`."""
    pred = argmax_of_labeled_classes(torch.nan_to_num(scores), list(missing))
    return (pred.cpu() == y.cpu()), ~unreachable(scores).cpu()


def select(values: list[float], higher_is_better: bool = True) -> int:
    """Index of the best value; ties go to the first in grid order; NaN (or None) never wins."""
    best, best_i = None, 0
    for i, v in enumerate(values):
        if v is None or v != v:
            continue
        if best is None or (v > best if higher_is_better else v < best):
            best, best_i = v, i
    return best_i
