"""The Fredholm paper's toy generators (graphstk.data.generators)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from graphstk.data import load_vector_dataset, make_circle, make_two_lines


# --------------------------------------------------------------------------- generators
@pytest.mark.parametrize("make", [make_two_lines, make_circle])
def test_generators_are_deterministic(make):
    a, b, c = make(300, seed=3), make(300, seed=3), make(300, seed=4)
    assert torch.equal(a.X, b.X) and torch.equal(a.y, b.y)
    assert not torch.equal(a.X, c.X)
    assert a.X.shape == (300, 100) and a.X.dtype == torch.float64 and a.classes == [0, 1]


def test_two_lines_structure():
    clean = make_two_lines(101, noise=0.0, dim=5, seed=1)
    X = clean.X
    assert float(X[:, 0].abs().max()) <= 1.0
    assert sorted(set(X[:, 1].tolist())) == [-1.0, 1.0] and int((X[:, 1] > 0).sum()) == 51
    assert float(X[:, 2:].abs().max()) == 0.0
    assert torch.equal(clean.y, (X[:, 0] >= 0).long())
    noisy = make_two_lines(4000, noise=0.3, seed=2)
    assert abs(float(noisy.X[:, 2:].std()) - 0.3) < 0.005
    assert torch.equal(noisy.y, (noisy.X[:, 0] >= 0).long())       # x1 carries no noise


def test_circle_structure():
    clean = make_circle(200, noise=0.0, dim=3, seed=0)
    np.testing.assert_allclose(clean.X[:, :2].norm(dim=1).numpy(), 1.0, rtol=1e-12)
    noisy = make_circle(4000, noise=0.1, seed=5)
    X = noisy.X
    quad13 = ((X[:, 0] >= 0) & (X[:, 1] >= 0)) | ((X[:, 0] < 0) & (X[:, 1] < 0))
    assert torch.equal(noisy.y, quad13.long())
    assert abs(float(X[:, 2:].std()) - 0.1) < 0.002
    assert abs(float(X[:, :2].norm(dim=1).mean()) - 1.0) < 0.02


def test_generators_by_name_and_bad_arguments():
    a = load_vector_dataset("two-lines", n=50, noise=0.1, seed=7)
    assert torch.equal(a.X, make_two_lines(50, noise=0.1, seed=7).X)
    assert torch.equal(load_vector_dataset("Circle", n=20).X, make_circle(20).X)
    with pytest.raises(TypeError, match="give the number of points"):
        load_vector_dataset("Circle")
    with pytest.raises(ValueError, match="dim must be an integer >= 2"):
        make_circle(10, dim=1)
    with pytest.raises(ValueError, match="noise must be"):
        make_two_lines(10, noise=-0.1)
