"""graphstk._checks: the shared argument checks (here: devices)."""
from __future__ import annotations

import pytest
import torch
from torch_geometric.data import Data

from graphstk import STKR, LabelPropagation
from graphstk._checks import check_device
from graphstk.spectral.transforms import InverseLaplacian


@pytest.fixture
def cpu_build(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.version, "cuda", None)


def test_cuda_on_a_cpu_build_is_a_clear_error_and_cpu_works(cpu_build):
    d = Data(edge_index=torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]]), y=torch.tensor([0, 1, 0]), num_nodes=3)
    with pytest.raises(ValueError, match=r"device='cuda': this torch build has no CUDA support .*pass device='cpu'"):
        STKR(InverseLaplacian(0.9), 0.1, device="cuda").fit(d, torch.tensor([0, 1]))   # checked at fit
    with pytest.raises(ValueError, match=r"device='cuda'"):
        LabelPropagation(device="cuda").fit(d, torch.tensor([0, 1]))
    est = STKR(InverseLaplacian(0.9), 0.1, device="cpu")          # the fix
    assert est.fit(d, torch.tensor([0, 1])).predict().shape == (3,)
    est.set_params(device="cuda")                                   # set_params skips __init__: fit checks again
    with pytest.raises(ValueError, match="no CUDA support"):
        est.fit(d, torch.tensor([0, 1]))


def test_check_device_names_bad_values():
    assert check_device(None) is None and check_device("cpu") == torch.device("cpu")
    with pytest.raises(ValueError, match=r"device='gpu' is not a torch device"):
        check_device("gpu")
