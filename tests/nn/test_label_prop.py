"""graphstk.nn.LabelPropagation: PyG's checks, equality with torch_geometric's class, graphstk's options."""
from __future__ import annotations

import pytest
import torch
import torch_geometric.typing
from nn_graphs import dense_S, labels, random_graph
from torch_geometric import EdgeIndex
from torch_geometric.nn.models import LabelPropagation as PyGLabelPropagation

from graphstk.methods import UnreachableNodesWarning
from graphstk.nn import DivergenceWarning, LabelPropagation

# ---------------------------------------------------------------------------- what PyG's own test checks
Y6 = torch.tensor([1, 0, 0, 2, 1, 1])
EI6 = torch.tensor([[0, 1, 1, 2, 4, 5], [1, 0, 2, 1, 5, 4]])


def adj_t_forms(edge_index: torch.Tensor, n: int) -> list:
    """``adj.t()`` of ``edge_index`` as torch.sparse COO and CSR (and SparseTensor when installed)."""
    coo = torch.sparse_coo_tensor(edge_index.flip(0), torch.ones(edge_index.size(1)), (n, n)).coalesce()
    forms = [coo, coo.to_sparse_csr(), EdgeIndex(edge_index, sparse_size=(n, n))]
    if torch_geometric.typing.WITH_TORCH_SPARSE:
        from torch_sparse import SparseTensor
        forms.append(SparseTensor.from_edge_index(edge_index, sparse_sizes=(n, n)).t())
    return forms


def every_mask(bits: int) -> torch.Tensor:
    """The ``bits``-th of the 64 boolean masks of 6 nodes (PyG's test draws one at random)."""
    return torch.tensor([(bits >> i) & 1 for i in range(6)], dtype=torch.bool)


@pytest.mark.parametrize("bits", range(64))
def test_pyg_label_prop_checks(bits):
    """PyG's test_label_prop: repr, shapes with and without a mask (here every one of the 64), every
    adjacency form alike."""
    mask = every_mask(bits)
    model = LabelPropagation(num_layers=2, alpha=0.5)
    assert str(model) == "LabelPropagation(num_layers=2, alpha=0.5)"
    out = model(Y6, EI6)
    assert out.size() == (6, 3)
    for adj in adj_t_forms(EI6, 6):
        assert torch.allclose(model(Y6, adj), out)
    out = model(Y6, EI6, mask)
    assert out.size() == (6, 3)
    for adj in adj_t_forms(EI6, 6):
        assert torch.allclose(model(Y6, adj, mask), out)
    assert torch.allclose(out, PyGLabelPropagation(2, 0.5)(Y6, EI6, mask))


def test_positional_pyg_order_and_post_step():
    model = LabelPropagation(2, 0.5)
    assert model.num_layers == 2 and model.alpha == 0.5
    seen = []
    out = model(Y6, EI6, post_step=lambda x: seen.append(1) or x * 2)
    assert len(seen) == 2 and float(out.max()) > 1   # post_step replaces the clamp
    assert torch.equal(model(Y6, EI6, torch.zeros(6, dtype=torch.bool)), torch.zeros(6, 3))   # all-False mask


# ---------------------------------------------------------------------------- equality with torch_geometric
def _random(seed: int, n: int = 30, e: int = 90, classes: int = 4):
    g = torch.Generator().manual_seed(seed)
    ei = torch.randint(0, n, (2, e), generator=g)             # directed, duplicates and self-loops allowed
    y = torch.randint(0, classes, (n,), generator=g)
    mask = torch.rand(n, generator=g) < 0.3
    w = torch.rand(e, generator=g)
    return ei, y, mask, w


@pytest.mark.parametrize("num_layers", [0, 1, 3, 10])
@pytest.mark.parametrize("alpha", [0.0, 0.5, 0.9, 1.0])
@pytest.mark.parametrize("weighted", [False, True])
def test_equals_torch_geometric(num_layers, alpha, weighted):
    for seed in range(5):
        ei, y, mask, w = _random(seed)
        w = w if weighted else None
        ours, ref = LabelPropagation(num_layers, alpha), PyGLabelPropagation(num_layers, alpha)
        for m in (mask, mask.nonzero().view(-1), None):
            torch.testing.assert_close(ours(y, ei, m, w), ref(y, ei, m, w))
        soft = torch.rand(30, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
        torch.testing.assert_close(ours(soft, ei, mask, w), ref(soft, ei, mask, w))
        step = (lambda x: x.clamp(-0.5, 0.7))
        torch.testing.assert_close(ours(soft, ei, mask, w, post_step=step), ref(soft, ei, mask, w, post_step=step))


def test_equals_torch_geometric_on_sparse_adjacency():
    ei, y, mask, _ = _random(7)
    for adj in adj_t_forms(ei, 30):
        torch.testing.assert_close(LabelPropagation(4, 0.8)(y, adj, mask), PyGLabelPropagation(4, 0.8)(y, adj, mask))
    weighted = torch.sparse_coo_tensor(ei.flip(0), torch.rand(90, generator=torch.Generator().manual_seed(1)),
                                       (30, 30)).coalesce().to_sparse_csr()   # values are gcn_norm'ed, as in PyG
    torch.testing.assert_close(LabelPropagation(4, 0.8)(y, weighted, mask),
                               PyGLabelPropagation(4, 0.8)(y, weighted, mask))


def test_class_count_is_max_y_plus_one():
    ei, y, _, _ = _random(3)
    mask = y < 2                                  # labeled nodes hold classes 0 and 1 only
    assert LabelPropagation(3, 0.9)(y, ei, mask).shape == (30, int(y.max()) + 1)
    assert LabelPropagation(3, 0.9, num_classes=6)(y, ei, mask).shape == (30, 6)


# ---------------------------------------------------------------------------- graphstk's options
def _dense_P(ei, n, w=None):
    w = torch.ones(ei.size(1), dtype=torch.float64) if w is None else w.double()
    A = torch.zeros(n, n, dtype=torch.float64).index_put_((ei[1], ei[0]), w, accumulate=True)
    return A


def test_fixed_point_is_zhou_closed_form():
    ei, w, W = random_graph(0)
    y, mask = labels(0)
    Y0 = torch.nn.functional.one_hot(y, 3).double() * mask[:, None]
    S = dense_S(W)
    ref = 0.9 * 0 + (1 - 0.9) * torch.linalg.solve(torch.eye(40, dtype=torch.float64) - 0.9 * S, Y0)
    lp = LabelPropagation(None, 0.9, clamp=False, tol=1e-12, normalize=True)
    torch.testing.assert_close(lp(Y0, ei, mask, w), ref, atol=1e-10, rtol=1e-9)
    assert lp.route_ == "fixed point"


def test_keep_labels_fixes_the_training_rows_at_every_step():
    ei, w, W = random_graph(1)
    y, mask = labels(1)
    Y0 = torch.nn.functional.one_hot(y, 3).double() * mask[:, None]
    out = LabelPropagation(5, 0.9, keep_labels=True, clamp=False, normalize=True)(Y0, ei, mask, w)
    torch.testing.assert_close(out[mask], Y0[mask])
    P, x = dense_S(W), Y0.clone()
    for _ in range(5):
        x = 0.9 * P @ x + 0.1 * Y0
        x[mask] = Y0[mask]
    torch.testing.assert_close(out, x)
    # its fixed point is the harmonic solution X_U = alpha P_UU X_U + alpha P_UL Y_L
    fp = LabelPropagation(None, 0.9, keep_labels=True, clamp=False, tol=1e-12, normalize=True)(Y0, ei, mask, w)
    U = ~mask
    A = torch.eye(int(U.sum()), dtype=torch.float64) - 0.9 * P[U][:, U]
    torch.testing.assert_close(fp[U], torch.linalg.solve(A, 0.9 * P[U][:, mask] @ Y0[mask]), atol=1e-9, rtol=1e-8)


def test_no_clamp_scores_leave_unit_interval():
    ei, w, _ = random_graph(2)
    y, mask = labels(2)
    Y3 = 3.0 * torch.nn.functional.one_hot(y, 3).double()
    assert float(LabelPropagation(3, 0.9, clamp=False, normalize=True)(Y3, ei, mask, w).max()) > 1.0
    assert float(LabelPropagation(3, 0.9, normalize=True)(Y3, ei, mask, w).max()) <= 1.0


def test_unreachable_nodes_flagged():
    ei = torch.tensor([[0, 1, 2, 3], [1, 0, 3, 2]])
    y = torch.tensor([0, 1, 1, 0])
    mask = torch.tensor([True, False, False, False])
    lp = LabelPropagation(3, 0.9, flag_unreachable=True)
    with pytest.warns(UnreachableNodesWarning, match="2 of 4"):
        lp(y, ei, mask)
    assert lp.unreachable_.tolist() == [False, False, True, True]


def test_operator_cached_while_the_graph_comes_back():
    ei, w, _ = random_graph(3)
    y, mask = labels(3)
    w = w / 10                                 # weights as given: small enough not to saturate the clamp
    lp = LabelPropagation(3, 0.9)
    a = lp(y, ei, mask, w)
    op = lp._cache._op
    b = lp(y, ei, mask, w)
    assert lp._cache._op is op and torch.equal(a, b)
    w.mul_(2.0)                               # an in-place change rebuilds
    c = lp(y, ei, mask, w)
    assert lp._cache._op is not op and not torch.equal(a, c)
    torch.testing.assert_close(c, PyGLabelPropagation(3, 0.9)(y, ei, mask, w))


def test_divergent_unclamped_budget_switches_to_the_fixed_point():
    ei, w, _ = random_graph(4)
    y, mask = labels(4)
    w = w * 2.0                                # weights as given: alpha P has spectral radius > 1
    lp = LabelPropagation(60, 0.9, clamp=False)
    with pytest.warns(DivergenceWarning, match="GMRES"):
        out = lp(y.double() if False else torch.nn.functional.one_hot(y, 3).double(), ei, mask, w)
    P = _dense_P(ei, 40, w)
    Y0 = torch.nn.functional.one_hot(y, 3).double() * mask[:, None]
    ref = 0.1 * torch.linalg.solve(torch.eye(40, dtype=torch.float64) - 0.9 * P, Y0)
    torch.testing.assert_close(out, ref, atol=1e-6, rtol=1e-5)
    assert "GMRES" in lp.route_


def test_errors():
    with pytest.raises(ValueError, match="clamp=False"):
        LabelPropagation(None, 0.9)
    with pytest.raises(ValueError, match="backward"):
        LabelPropagation(3, 0.9, backward="adjoint")
    with pytest.raises(ValueError, match=r"shape \[2, E\]"):
        LabelPropagation(3, 0.9)(Y6, torch.zeros(3, 4, dtype=torch.long))
    with pytest.raises(IndexError, match="ids must lie"):
        LabelPropagation(3, 0.9)(Y6, torch.tensor([[0, 7], [7, 0]]))
    with pytest.raises(ValueError, match=r"\[N, N\]"):
        LabelPropagation(3, 0.9)(Y6, torch.eye(5).to_sparse())
    with pytest.raises(ValueError, match="relabel the classes"):
        LabelPropagation(3, 0.9)(torch.tensor([0, 1, 10 ** 9]), torch.tensor([[0, 1], [1, 2]]))


def _ring(n: int = 500):
    g = torch.Generator().manual_seed(0)
    ring = torch.stack([torch.arange(n), (torch.arange(n) + 1) % n])
    y = torch.randint(0, 3, (n,), generator=g)
    return torch.cat([ring, ring.flip(0)], 1), y, torch.rand(n, generator=g) < 0.1


def _warnings_of(model, *args):
    import warnings
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        model(*args)
    return [str(x.message) for x in w]


def test_fixed_point_advice_works_when_followed():
    """The fixed-point warning gives the fix that works: float64 (or a larger tol) where float32
    rounding is the limit; the fixed point is a CG solve, so a slow Zhou iteration (alpha = 0.99)
    needs no larger max_iter."""
    import re
    ei, y, mask = _ring()
    Y32 = torch.nn.functional.one_hot(y, 3).float()
    msg = _warnings_of(LabelPropagation(None, 0.9, clamp=False, tol=1e-7), Y32, ei, mask)
    assert len(msg) == 1 and "float32 rounding" in msg[0] and "Pass float64 inputs" in msg[0]
    assert "increase max_iter" not in msg[0]
    assert _warnings_of(LabelPropagation(None, 0.9, clamp=False, tol=1e-7), Y32.double(), ei, mask) == []
    tol = float(re.search(r"tol >= ([0-9.e+-]+)", msg[0]).group(1))
    assert _warnings_of(LabelPropagation(None, 0.9, clamp=False, tol=tol), Y32, ei, mask) == []
    assert _warnings_of(LabelPropagation(None, 0.99, clamp=False), Y32.double(), ei, mask) == []


@pytest.mark.filterwarnings("ignore:edge_index has")
@pytest.mark.parametrize("solver", ["auto", "cg", "direct"])
def test_fixed_point_equals_the_estimator(solver):
    """``LabelPropagation(num_layers=None)`` is Zhou et al.'s fixed point, the same engine solve as
    ``methods.LabelPropagation``: ``(1 - alpha) (I - alpha S)^{-1} [Y; 0]`` against ``(I - eta S)^{-1} [Y; 0]``."""
    from torch_geometric.data import Data

    from graphstk.methods import LabelPropagation as LPEstimator
    ei, w, _ = random_graph(5)
    y, mask = labels(5)
    est = LPEstimator(eta=0.9, solver=solver, tol=1e-12).fit(Data(edge_index=ei, edge_weight=w, y=y, num_nodes=40),
                                                             mask.nonzero().flatten())
    out = LabelPropagation(None, 0.9, clamp=False, tol=1e-12, normalize=True)(y, ei, mask, w)
    assert out.dtype == torch.float64
    torch.testing.assert_close(out, 0.1 * est.decision_function(torch.arange(40)), atol=1e-10, rtol=1e-9)
