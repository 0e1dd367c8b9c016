"""graphstk.nn.CorrectAndSmooth: PyG's checks and equality with torch_geometric's class."""
from __future__ import annotations

import pytest
import torch
from test_label_prop import EI6, Y6, adj_t_forms, every_mask
from torch_geometric.nn.models import CorrectAndSmooth as PyGCorrectAndSmooth

from graphstk.nn import CorrectAndSmooth

REPR = ("CorrectAndSmooth(\n"
        "  correct: num_layers=2, alpha=0.5\n"
        "  smooth:  num_layers=2, alpha=0.5\n"
        "  autoscale=True, scale=1.0\n"
        ")")


@pytest.mark.parametrize("bits", range(64))
def test_pyg_correct_and_smooth_checks(bits):
    """PyG's test_correct_and_smooth: repr, shapes of correct/smooth with and without autoscale,
    every adjacency form alike, for each of the 64 masks (PyG's test draws one at random)."""
    y_soft = torch.tensor([0.1, 0.5, 0.4]).repeat(6, 1)
    mask = every_mask(bits)
    model = CorrectAndSmooth(num_correction_layers=2, correction_alpha=0.5, num_smoothing_layers=2,
                             smoothing_alpha=0.5)
    assert str(model) == REPR
    for autoscale in (True, False):
        model.autoscale = autoscale
        out = model.correct(y_soft, Y6[mask], mask, EI6)
        assert out.size() == (6, 3)
        for adj in adj_t_forms(EI6, 6):
            # an all-False mask gives 0/0 = NaN in the autoscale, in PyG as here
            assert torch.allclose(out, model.correct(y_soft, Y6[mask], mask, adj), equal_nan=True)
    out = model.smooth(y_soft, Y6[mask], mask, EI6)
    assert out.size() == (6, 3)
    for adj in adj_t_forms(EI6, 6):
        assert torch.allclose(out, model.smooth(y_soft, Y6[mask], mask, adj))


@pytest.mark.parametrize("autoscale", [True, False])
@pytest.mark.parametrize("alphas", [(0.5, 0.8), (1.0, 0.8), (0.0, 0.0)])
@pytest.mark.parametrize("weighted", [False, True])
def test_equals_torch_geometric(autoscale, alphas, weighted):
    for seed in range(4):
        g = torch.Generator().manual_seed(seed)
        n = 40
        ei = torch.randint(0, n, (2, 120), generator=g)
        y = torch.randint(0, 5, (n,), generator=g)
        mask = torch.rand(n, generator=g) < 0.3
        w = torch.rand(120, generator=g) if weighted else None
        z = torch.softmax(torch.randn(n, 5, generator=g), 1)
        args = (3, alphas[0], 4, alphas[1], autoscale, 0.7)
        ours, ref = CorrectAndSmooth(*args), PyGCorrectAndSmooth(*args)
        for m in (mask, mask.nonzero().view(-1)):
            a, b = ours.correct(z, y[m], m, ei, w), ref.correct(z, y[m], m, ei, w)
            torch.testing.assert_close(a, b)
            torch.testing.assert_close(ours.smooth(a, y[m], m, ei, w), ref.smooth(b, y[m], m, ei, w))
            torch.testing.assert_close(ours(z, y[m], m, ei, w), ref.smooth(ref.correct(z, y[m], m, ei, w),
                                                                          y[m], m, ei, w))


def test_gradient_flows_to_the_base_predictions():
    g = torch.Generator().manual_seed(0)
    ei = torch.randint(0, 20, (2, 60), generator=g)
    y = torch.randint(0, 3, (20,), generator=g)
    mask = torch.rand(20, generator=g) < 0.4
    logits = torch.randn(20, 3, dtype=torch.float64, generator=g, requires_grad=True)

    def f(x):
        return CorrectAndSmooth(2, 0.5, 2, 0.5, autoscale=False)(torch.softmax(x, 1), y[mask], mask, ei)
    assert torch.autograd.gradcheck(f, (logits,))


def test_y_true_must_match_the_mask():
    with pytest.raises(ValueError, match="masked nodes"):
        CorrectAndSmooth(2, 0.5, 2, 0.5).correct(torch.rand(6, 3), Y6, torch.tensor([True] * 3 + [False] * 3), EI6)


def test_autoscale_gradient_is_finite_with_rows_without_error_mass():
    """``correct(autoscale=True)`` divides by each row's error mass; a row without any (an isolated node,
    a node the correction does not reach) keeps scale 1 and a finite gradient (gradcheck)."""
    from graphstk.nn import CorrectAndSmooth

    ei = torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])          # node 3 is isolated
    y_soft = torch.rand(4, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0), requires_grad=True)
    mask = torch.tensor([True, False, False, False])
    cs = CorrectAndSmooth(2, 0.5, 2, 0.5, autoscale=True)
    cs.correct(y_soft, torch.tensor([1]), mask, ei).sum().backward()
    assert torch.isfinite(y_soft.grad).all()
    assert torch.autograd.gradcheck(lambda y: cs.correct(y, torch.tensor([1]), mask, ei),
                                    (y_soft.detach().requires_grad_(),))
