"""Every graph estimator on every device: inputs on ``device`` give results on ``device`` that
equal the CPU results (argmax identical, scores to 1e-8 relative in float64)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch
from torch_geometric.data import Data

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from dense_reference import random_graph  # noqa: E402

from graphstk import STKR, LabelPropagation  # noqa: E402
from graphstk.operators import DenseOperator, gram  # noqa: E402
from graphstk.transforms import InverseLaplacian, Polynomial, TopD  # noqa: E402

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA"))]
ESTIMATORS = {
    "LP": lambda s: LabelPropagation(0.9, setting=s),
    "SP-Lap": lambda s: STKR(InverseLaplacian(0.9), 1e-2, setting=s),
    "SP-poly": lambda s: STKR(Polynomial.monomial(4), 1e-2, setting=s),
    "SP-topd": lambda s: STKR(TopD(6), 1e-2, setting=s),
    "KRR": lambda s: STKR(Polynomial.monomial(1), 1e-2, setting=s),
}


def _graph(device):
    W, ei, w = random_graph(40, 0.15, 7)
    y = torch.randint(0, 3, (40,), generator=torch.Generator().manual_seed(7))
    return Data(edge_index=ei.to(device), edge_weight=w.to(device), y=y.to(device), num_nodes=40)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(ESTIMATORS))
@pytest.mark.parametrize("setting", ["transductive", "inductive"])
def test_graph_estimators_on_device_equal_cpu(device, name, setting):
    hidden = [35, 36, 37, 38, 39] if setting == "inductive" else None
    train = torch.arange(10)
    ref = ESTIMATORS[name](setting).fit(_graph("cpu"), train, hidden_idx=hidden)
    est = ESTIMATORS[name](setting).fit(_graph(device), train.to(device), hidden_idx=hidden)
    scores = est.decision_function()
    assert scores.device.type == device
    torch.testing.assert_close(scores.cpu(), ref.decision_function(), rtol=1e-8, atol=1e-10)
    assert torch.equal(est.predict().cpu(), ref.predict())


@pytest.mark.parametrize("device", DEVICES)
def test_stkr_on_a_dense_gram_on_device_equals_cpu(device):
    X = torch.randn(30, 3, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    y = torch.randint(0, 2, (30,), generator=torch.Generator().manual_seed(2))
    K = gram(X, kernel="gaussian", sigma=1.0).double()
    ref = STKR(InverseLaplacian(0.9), 1e-2).fit(DenseOperator(K), torch.arange(8), y=y).decision_function()
    out = STKR(InverseLaplacian(0.9), 1e-2).fit(DenseOperator(K.to(device)), torch.arange(8), y=y.to(device))
    scores = out.decision_function()
    assert scores.device.type == device
    torch.testing.assert_close(scores.cpu(), ref, rtol=1e-8, atol=1e-10)
