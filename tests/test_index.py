"""graphstk._index.as_index: ids or a boolean mask mean the same thing; a mask in integer form is
named as such."""
import numpy as np
import pytest
import torch

from graphstk._index import as_index


def test_ids_and_boolean_masks_agree():
    mask = torch.tensor([True, False, True, True, False])
    assert torch.equal(as_index(mask, 5), torch.tensor([0, 2, 3]))
    assert torch.equal(as_index([0, 2, 3], 5), torch.tensor([0, 2, 3]))
    assert torch.equal(as_index(np.array([3, 0]), 5), torch.tensor([3, 0]))
    assert torch.equal(as_index(None, 3), torch.arange(3))


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int64, torch.int32])
def test_integer_mask_is_named_as_a_mask(dtype):
    mask = torch.zeros(10, dtype=dtype)
    mask[[1, 4]] = 1
    with pytest.raises(ValueError, match=rf"train_idx is a {dtype} tensor of 0/1 values with one entry per node "
                                         r"\(10\): it looks like a mask.*pass mask.bool\(\)"):
        as_index(mask, 10, name="train_idx")
    with pytest.raises(ValueError, match="looks like a mask"):
        as_index(mask.numpy(), 10, name="train_idx")


def test_ids_that_happen_to_be_zero_and_one_are_ids():
    assert torch.equal(as_index(torch.tensor([1, 0]), 2), torch.tensor([1, 0]))       # a permutation
    assert torch.equal(as_index(torch.tensor([0, 1, 1]), 5), torch.tensor([0, 1, 1]))  # not of length N


def test_integer_mask_reaches_the_estimators_as_a_mask_error():
    from graphstk import LabelPropagation
    from torch_geometric.data import Data

    edge_index = torch.tensor([[0, 1, 1, 2, 2, 3], [1, 0, 2, 1, 3, 2]])
    data = Data(edge_index=edge_index, y=torch.tensor([0, 0, 1, 1]), num_nodes=4)
    mask = torch.tensor([1, 0, 0, 1], dtype=torch.uint8)
    with pytest.raises(ValueError, match=r"looks like a mask.*pass mask.bool\(\)"):
        LabelPropagation().fit(data, mask)
    LabelPropagation().fit(data, mask.bool())


def test_out_of_range_and_float_ids():
    with pytest.raises(IndexError, match=r"ids in \[0, 7\] for 5 nodes"):
        as_index([0, 7], 5)
    with pytest.raises(TypeError, match="LongTensor of node ids or a boolean mask"):
        as_index(torch.tensor([0.0, 1.0]), 5)
    with pytest.raises(ValueError, match="boolean mask of length 3"):
        as_index(torch.tensor([True, False, True]), 5)


@pytest.mark.parametrize("bad, err, text", [
    (torch.ones(3), TypeError, "LongTensor of node ids or a boolean mask of length 10"),
    (torch.ones(4, dtype=torch.bool), ValueError, "boolean mask of length 4"),
    (torch.zeros(2, 5, dtype=torch.long), ValueError, "shape"),
    (torch.tensor([3, 10]), IndexError, r"ids in \[3, 10\] for 10 nodes"),
    (torch.tensor([-1]), IndexError, "valid ids are 0..9"),
    ("abc", TypeError, "got a str"),
])
def test_index_helper_gives_one_clear_error(bad, err, text):
    with pytest.raises(err, match=text):
        as_index(bad, 10, name="train_idx")
    assert torch.equal(as_index([1, 2], 10), torch.tensor([1, 2]))
    assert torch.equal(as_index(torch.tensor([True, False, True]), 3), torch.tensor([0, 2]))
