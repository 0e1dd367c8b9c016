"""Scores from the engine's solutions: the out-of-sample rows of STKR, Label-Prop's ``Yhat``, and
the labels read off scores (``-1`` where no label reaches a point).

These are the last step of every estimator (:class:`~graphstk.methods.STKR`,
:class:`~graphstk.methods.LabelPropagation`, :class:`~graphstk.methods.STKRCV`).
"""
from __future__ import annotations

import torch
from torch import Tensor

from .._index import as_index
from .problem import Problem

__all__ = ["scores_from", "lp_scores", "unreachable", "predict_labels"]


def scores_from(prob: Problem, h: Tensor, idx: Tensor) -> Tensor:
    """Scores ``rows(idx) @ h`` (the out-of-sample formulas of Algorithms 1-2 and Eq. 8); ``h`` may
    hold several grid points side by side (``k C`` columns).

    A labeled point whose row of the base kernel is zero (an isolated training node: Eq. 23 gives it
    no entry, so every ``s(K)`` with ``s(0) = 0`` has none either) gets all-zero scores from the
    formula, i.e. it would be reported as unreached although its label is given. It keeps its own
    label row of ``Y`` instead, as the identity term of Label-Prop's ``(I - eta S)^-1`` gives it, so
    STKR and Label-Prop agree on it."""
    S = prob.rows(idx) @ h
    dead = (S == 0).all(dim=1)
    if bool(dead.any()):
        loc = prob.local(idx)
        pos = torch.full((prob.N + 1,), -1, dtype=torch.long, device=loc.device)
        pos[prob.train.to(loc.device)] = torch.arange(prob.n, device=loc.device)
        at = pos[torch.where(loc < 0, prob.N, loc)]       # position among the labeled points, -1: unlabeled
        keep = dead.to(loc.device) & (at >= 0)
        if bool(keep.any()):
            Y = prob.Y.to(device=S.device, dtype=S.dtype).repeat(1, S.shape[1] // prob.C)
            S = S.clone()
            S[keep.to(S.device)] = Y[at[keep].to(S.device)]
    return S


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
