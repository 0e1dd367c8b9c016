"""STKR and LabelPropagation (graphstk.methods.estimators): classes absent from the training labels,
label types, 0/1 masks and the size check before the graph kernel is built."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from torch_geometric.data import Data

from graphstk import InverseLaplacian, LabelPropagation, STKR
from graphstk.exceptions import ClassesWithoutLabelsWarning, MemoryLimitError

N = 30


def _graph():
    ring = torch.stack([torch.arange(N), (torch.arange(N) + 1) % N])
    chords = torch.stack([torch.arange(N), (torch.arange(N) + 7) % N])
    ei = torch.cat([ring, ring.flip(0), chords, chords.flip(0)], 1)
    return Data(edge_index=ei, num_nodes=N, y=torch.arange(N) % 4)


@pytest.mark.parametrize("make", [lambda: STKR(InverseLaplacian(0.9), beta=1e-2), lambda: LabelPropagation(eta=0.9)])
@pytest.mark.parametrize("absent", [1, 3])
def test_class_absent_from_training_is_named_and_never_predicted(make, absent):
    """The highest class too: its score column stays (num_classes from y, as PyG's num_classes)."""
    data = _graph()
    train = torch.arange(16)[data.y[:16] != absent]
    with pytest.warns(ClassesWithoutLabelsWarning, match=rf"classes {absent}\)"):
        est = make().fit(data, train)
    assert est.num_classes_ == 4 and est.missing_classes_ == [absent]
    assert est.decision_function().shape == (N, 4)
    assert not (est.predict() == absent).any()


def test_explicit_num_classes_wins():
    data = _graph()
    train = torch.arange(16)[data.y[:16] != 3]
    est = STKR(InverseLaplacian(0.9), beta=1e-2, num_classes=3).fit(data, train)
    assert est.decision_function().shape == (N, 3)


@pytest.mark.parametrize("labels", [["a", "b"] * (N // 2), np.array(["a", "b"] * (N // 2))])
def test_string_labels_are_refused_naming_the_mapping(labels):
    data = _graph()
    with pytest.raises(TypeError, match=r"integer class ids.*np.unique\(y, return_inverse=True\)"):
        LabelPropagation().fit(data, torch.arange(6), y=labels)
    est = LabelPropagation().fit(data, torch.arange(8), y=np.arange(N) % 4)   # numeric NumPy labels are read
    assert est.num_classes_ == 4


def test_0_1_integer_masks_of_length_n_are_named_as_masks():
    """Not "train_idx contains duplicates": an integer 0/1 tensor of length N is named as a mask
    read as ids, with both ways to write it."""
    data = _graph()
    ref = LabelPropagation(eta=0.9).fit(data, torch.arange(8)).decision_function()
    for dtype in (torch.uint8, torch.int64):
        mask = torch.zeros(N, dtype=dtype)
        mask[:8] = 1
        with pytest.raises(ValueError, match=r"looks like a mask.*mask.bool\(\).*nonzero") as err:
            LabelPropagation(eta=0.9).fit(data, mask)
        assert "duplicates" not in str(err.value)
        torch.testing.assert_close(LabelPropagation(eta=0.9).fit(data, mask.bool()).decision_function(), ref)


def test_graph_too_large_for_memory_is_refused_before_the_kernel(monkeypatch):
    n = 500_000
    y = torch.zeros(n, dtype=torch.long)
    y[1::2] = 1
    data = Data(edge_index=torch.randint(0, n, (2, 100), generator=torch.Generator().manual_seed(0)), num_nodes=n, y=y)
    monkeypatch.setenv("GRAPHSTK_MAX_MEMORY", "10MB")
    with pytest.raises(MemoryLimitError, match=r"500000 nodes, 100 edges and 2 classes.*dtype=torch.float32"):
        STKR(InverseLaplacian(0.9), beta=1e-2).fit(data, torch.arange(10))
