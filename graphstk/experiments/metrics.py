"""The metrics and the model-selection rule every protocol shares: argmax accuracy (two conventions for
unreachable rows), classification error, ROC AUC, :func:`select` (ties: the first grid point; NaN never
wins) and :func:`mean_std` over repetitions.
"""
from __future__ import annotations

import math
import statistics

import torch
from sklearn.metrics import roc_auc_score

from ..methods.selection import correct, select

__all__ = ["accuracies", "accuracy", "n_wrong", "error_rate", "auc", "select", "mean_std", "UNREACHABLE"]

#: how a score row that is all zero (or not finite) is scored: "wrong" (a wrong prediction) or
#: "class0" (the plain argmax, i.e. class 0: the convention behind the STKR paper's numbers)
UNREACHABLE = ("wrong", "class0")


def accuracies(scores: torch.Tensor, y_true: torch.Tensor) -> dict:
    """Argmax accuracy in percent under both conventions for unreachable rows.

    Parameters
    ----------
    scores : Tensor ``[n, C]``
    y_true : LongTensor ``[n]``

    Returns
    -------
    ``{"wrong": acc, "class0": acc, "unreachable": k}``: ``wrong`` counts the ``k`` unreachable
    rows (all zero or not finite) as wrong predictions; ``class0`` is the plain argmax of every row
    (non-finite entries zeroed first), so an all-zero row predicts class 0.
    """
    if scores.shape[0] != y_true.shape[0]:
        raise ValueError(f"the method returned {scores.shape[0]} score rows for {y_true.shape[0]} nodes")
    if y_true.numel() == 0:
        return {"wrong": float("nan"), "class0": float("nan"), "unreachable": 0}
    hit, reached = correct(scores, y_true)
    n = y_true.numel()
    return {"wrong": 100.0 * float((hit & reached).sum()) / n, "class0": 100.0 * float(hit.sum()) / n,
            "unreachable": int((~reached).sum())}


def accuracy(scores: torch.Tensor, y_true: torch.Tensor, unreachable: str = "wrong") -> tuple[float, int]:
    """Argmax accuracy in percent, unreachable rows scored by ``unreachable`` (``"wrong"`` |
    ``"class0"``, see :func:`accuracies`), and the number of unreachable rows."""
    if unreachable not in UNREACHABLE:
        raise ValueError(f"unreachable must be 'wrong' or 'class0', got {unreachable!r}")
    acc = accuracies(scores, y_true)
    return acc[unreachable], acc["unreachable"]


def n_wrong(scores: torch.Tensor, y_true: torch.Tensor) -> int:
    """Number of misclassified points: argmax of each score row against ``y_true``; a row with a
    non-finite entry counts as an error (no prediction was made)."""
    if scores.shape[0] != y_true.shape[0]:
        raise ValueError(f"the method returned {scores.shape[0]} score rows for {y_true.shape[0]} points")
    finite = torch.isfinite(scores).all(dim=1)
    pred = torch.nan_to_num(scores).argmax(dim=1)
    return int(((pred != y_true.to(pred.device)) | ~finite).sum())


def error_rate(scores: torch.Tensor, y_true: torch.Tensor) -> float:
    """Classification error in percent (:func:`n_wrong` over the number of points; NaN for none)."""
    n = y_true.numel()
    return 100.0 * n_wrong(scores, y_true) / n if n else float("nan")


def auc(scores: torch.Tensor, inside: torch.Tensor) -> float:
    """Area under the ROC curve (``sklearn.metrics.roc_auc_score``) of ``scores`` (higher = more
    inside) for the boolean ``inside`` labels, over every threshold; in [0, 1]."""
    s = scores.detach().cpu().double().numpy()
    if not math.isfinite(float(s.sum())):
        raise ValueError("the method returned non-finite one-class scores; the ROC AUC is undefined")
    return float(roc_auc_score(inside.cpu().numpy().astype(bool), s))


def mean_std(values: list[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (ddof = 1; 0 for one value) of the finite values (NaN if none)."""
    vals = [v for v in values if v is not None and v == v]
    if not vals:
        return float("nan"), float("nan")
    return statistics.fmean(vals), (statistics.stdev(vals) if len(vals) > 1 else 0.0)
