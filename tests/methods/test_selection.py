"""Model selection shared by STKRCV and the runner (graphstk.methods.selection)."""
from __future__ import annotations

import math

import torch

from graphstk.experiments import metrics
from graphstk.methods.selection import correct, select


def test_select_keeps_the_first_of_the_best_and_never_nan():
    assert select([0.5, 0.9, 0.9, 0.1]) == 1
    assert select([3.0, 1.0, 1.0], higher_is_better=False) == 1
    assert select([math.nan, 0.2, None, 0.2]) == 1
    assert select([]) == 0
    assert metrics.select is select


def test_correct_flags_unreachable_rows_and_skips_missing_classes():
    scores = torch.tensor([[0.0, 1.0, 2.0], [0.0, 0.0, 0.0], [float("nan"), 1.0, 0.0], [1.0, 0.5, 0.0]])
    y = torch.tensor([2, 0, 1, 1])
    hit, reached = correct(scores, y)
    assert hit.tolist() == [True, True, True, False] and reached.tolist() == [True, False, False, True]
    hit, _ = correct(scores, y, missing=[0])
    assert hit.tolist() == [True, False, True, True]
    acc = metrics.accuracies(scores, y)
    assert acc == {"wrong": 25.0, "class0": 75.0, "unreachable": 2}
