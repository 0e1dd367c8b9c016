"""Scores from the engine's solutions (STKR's out-of-sample rows, Label-Prop's ``Yhat``) and the labels read
off them (``-1`` where no label reaches a point): the last step of every graph estimator.
"""
from __future__ import annotations

import torch
from torch import Tensor

from .._index import as_index
from .problem import Problem

__all__ = ["scores_from", "lp_scores", "unreachable", "predict_labels"]


def scores_from(prob: Problem, h: Tensor, idx: Tensor) -> Tensor:
    """Scores ``rows(idx) @ h`` (after Algorithms 1-2, Eq. 8; ``h`` may hold ``k C`` columns). An isolated labeled
    point (a zero kernel row) keeps its label row of ``Y``, as Label-Prop's identity term gives it."""
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
    """BoolTensor ``[n]``: the rows of ``scores`` ``[n, C]`` that are all zero or non-finite (no label reaches them)."""
    return ~torch.isfinite(scores).all(dim=1) | (scores == 0).all(dim=1)


def predict_labels(scores: Tensor) -> Tensor:
    """LongTensor ``[n]``: the argmax class of ``scores`` ``[n, C]``, ``-1`` where :func:`unreachable`."""
    pred = scores.argmax(dim=1)
    pred[unreachable(scores)] = -1
    return pred
