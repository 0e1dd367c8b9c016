"""The vector-data object (graphstk.data.vector_dataset): validation and bring-your-own arrays."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from graphstk.data import VectorDataset


# --------------------------------------------------------------------------- the object
def test_nan_features_are_refused_naming_the_rows():
    X = torch.randn(6, 3, dtype=torch.float64)
    X[4, 1] = float("nan")
    with pytest.raises(ValueError, match=r"1 NaN or infinite entries \(rows \[4\]\)"):
        VectorDataset.from_arrays(X, [0, 1, 0, 1, 0, 1])
    S = sp.random(5, 4, density=0.5, format="csr", random_state=0)
    S.data[0] = np.inf
    with pytest.raises(ValueError, match="NaN or infinite"):
        VectorDataset.from_arrays(S, np.arange(5) % 2)


def test_huge_finite_values_are_not_mistaken_for_nan():
    X = torch.zeros(3, 2, dtype=torch.float64)
    X[1] = 1e308                                   # the row sum overflows; the entries are finite
    ds = VectorDataset.from_arrays(X, [0, 1, 1])
    assert ds.num_points == 3


def test_from_arrays_maps_labels_and_validates():
    ds = VectorDataset.from_arrays(np.ones((4, 2)), ["b", "a", "b", "c"], name="toy",
                                   parts={"train": np.array([True, True, False, False])},
                                   splits={2: [(np.array([0, 3]), np.array([1, 2]))]})
    assert ds.classes == ["a", "b", "c"] and ds.y.tolist() == [1, 0, 1, 2]
    assert ds.parts["train"].tolist() == [0, 1]
    assert repr(ds) == ("VectorDataset(name='toy', n=4, d=2, X=float64, classes=3, parts={train=2}, "
                        "splits={2: 1})")
    with pytest.raises(ValueError, match="not a partition"):
        VectorDataset.from_arrays(np.ones((4, 2)), [0, 1, 0, 1], splits={2: [(np.array([0, 1]), np.array([1, 2]))]})
    with pytest.raises(ValueError, match="ids must lie in 0..3"):
        VectorDataset.from_arrays(np.ones((4, 2)), [0, 1, 0, 1], parts={"test": np.array([4])})
    with pytest.raises(ValueError, match=r"y must be a LongTensor of shape \[4\]"):
        VectorDataset("bad", torch.ones(4, 2, dtype=torch.float64), torch.zeros(3, dtype=torch.long), [0])


def test_a_split_with_no_labeled_ids_is_named():
    from graphstk.data.vector_dataset import check_partition
    with pytest.raises(ValueError, match=r"splits1-labeled10.mat, row 3 has no labeled ids"):
        check_partition(torch.zeros(0, dtype=torch.long), torch.arange(5), 5, "splits1-labeled10.mat, row 3")
    check_partition(torch.tensor([0]), torch.arange(1, 5), 5, "ok")
