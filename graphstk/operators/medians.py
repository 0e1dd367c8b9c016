"""The median of given distances, with the one rule for a zero median (duplicate points).

:func:`median_of` is shared by the width heuristics of :mod:`graphstk.operators.bandwidth` and the
Gaussian kNN weights of :func:`graphstk.operators.knn_graph`; both import it from here.
"""
from __future__ import annotations

import numpy as np
from torch import Tensor

__all__ = ["median_of"]


def median_of(values: Tensor, what: str = "the distances", *, lower: bool = False, allow_zero: bool = False) -> float:
    """Median of ``values`` as a float.

    Parameters
    ----------
    values : Tensor
        Any shape; flattened.
    what : str
        What the values are, for error messages.
    lower : bool, default False
        ``False``: the usual median (mean of the two middle values for an even count);
        ``True``: the lower of the two middle values (:func:`torch.median`).
    allow_zero : bool, default False
        Return a zero median instead of raising ``ValueError``.
    """
    v = values.detach().flatten()
    if v.numel() == 0:
        raise ValueError(f"{what}: no values to take the median of")
    if lower:
        m = float(v.median())
    else:
        m = float(np.median(v.cpu().numpy()))
    if not allow_zero and not m > 0:
        raise ValueError(f"{what} have median {m} (more than half of them are duplicate points): a width from "
                         "them is undefined; pass the width (sigma) explicitly, e.g. sigma=1.0")
    return m
