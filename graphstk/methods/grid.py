"""Scores from the engine's solutions: the out-of-sample rows of STKR, Label-Prop's ``Yhat``, and
the labels read off scores (``-1`` where no label reaches a point).

These are the last step of every estimator (:class:`~graphstk.methods.STKR`,
:class:`~graphstk.methods.LabelPropagation`, :class:`~graphstk.methods.STKRCV`).
"""
from __future__ import annotations

import torch
from torch import Tensor

from .._index import as_index
from ..exceptions import NonFiniteScoresWarning  # noqa: F401  (re-exported)
from .problem import Problem

__all__ = ["scores_from", "lp_scores", "unreachable", "predict_labels"]


def scores_from(prob: Problem, h: Tensor, idx: Tensor) -> Tensor:
    """Scores ``rows(idx) @ h`` (the out-of-sample formulas of Algorithms 1-2 and Eq. 8)."""
    return prob.rows(idx) @ h


def lp_scores(prob: Problem, yhat: Tensor, eta: float, idx: Tensor) -> Tensor:
    """Label-Prop scores: ``Yhat`` on visible points; ``eta S(x, visible) Yhat`` for hidden ones
    (one step of the fixed-point equation of Eq. 22, an inductive extension not in the paper)."""
    idx = as_index(idx, prob.num_points, prob.train.device, name="idx")
    loc = prob.local(idx)
    hidden = loc < 0
    out = torch.empty(idx.numel(), yhat.shape[1], dtype=yhat.dtype, device=yhat.device)
    if bool((~hidden).any()):
        out[~hidden] = prob.pick(yhat, loc[~hidden])
    if bool(hidden.any()):
        out[hidden] = eta * (prob.rows(idx[hidden]) @ yhat)
    return out


def unreachable(scores: Tensor) -> Tensor:
    """Rows with no information (all zero or non-finite): no label reaches these nodes.

    Parameters
    ----------
    scores : Tensor ``[n, C]``

    Returns
    -------
    BoolTensor ``[n]``
    """
    return ~torch.isfinite(scores).all(dim=1) | (scores == 0).all(dim=1)


def predict_labels(scores: Tensor) -> Tensor:
    """Argmax class, ``-1`` for unreachable rows (never silently class 0).

    Parameters
    ----------
    scores : Tensor ``[n, C]``

    Returns
    -------
    LongTensor ``[n]``: the class, or ``-1`` where :func:`unreachable`.
    """
    pred = scores.argmax(dim=1)
    pred[unreachable(scores)] = -1
    return pred
