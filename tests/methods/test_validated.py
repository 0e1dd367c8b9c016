"""STKRCV: the whole grid in one engine call equals a loop of STKR / LabelPropagation fits, point by
point, and chooses the same point; scikit-learn's parameter contract (get_params / clone)."""
import numpy as np
import pytest
import torch
from sklearn.base import clone
from torch_geometric.data import Data

from dense_reference import random_graph
from graphstk.methods import STKR, STKRCV, LabelPropagation
from graphstk.operators import GraphKernel
from graphstk.spectral.transforms import InverseLaplacian, LabelPropagationFilter, Polynomial, TopD

N, C = 48, 3
TRAIN, VAL, TEST = torch.arange(0, 9), torch.arange(9, 21), torch.arange(21, 33)


def graph(seed=0):
    _, ei, _ = random_graph(N, 0.12, seed)
    y = torch.randint(0, C, (N,), generator=torch.Generator().manual_seed(seed + 1))
    return Data(edge_index=ei, y=y, num_nodes=N)


def accuracy(pred, y):
    return float((pred == y).double().mean())


CASES = [
    ("lap-budgets", [InverseLaplacian(0.5), InverseLaplacian(0.9)], [1.0, 1e-2], [2, 8], {}),
    ("lap-direct", [InverseLaplacian(0.5), InverseLaplacian(0.9), InverseLaplacian(0.99)], [1.0, 1e-3], None,
     {"solver": "direct"}),
    ("poly", [Polynomial.monomial(1), Polynomial.monomial(2), Polynomial.monomial(4)], [1.0, 1e-2], [4, 16], {}),
    ("topd", [TopD(4), TopD(8)], [1.0, 1e-2], None, {}),
    ("lp", [LabelPropagationFilter(0.5), LabelPropagationFilter(0.9)], None, [2, 8], {}),
    ("lp-direct", [LabelPropagationFilter(0.5), LabelPropagationFilter(0.9)], None, None, {"solver": "direct"}),
]


def single_fit(transform, beta, T, opts, setting="transductive"):
    if isinstance(transform, LabelPropagationFilter):
        return LabelPropagation(transform.eta, num_iter=T, setting=setting, **opts)
    return STKR(transform, beta, setting=setting, num_iter=T, **opts)


@pytest.mark.parametrize("setting", ["transductive", "inductive"])
@pytest.mark.parametrize("name,transforms,betas,budgets,opts", CASES, ids=[c[0] for c in CASES])
def test_grid_equals_a_loop_of_single_fits(name, transforms, betas, budgets, opts, setting):
    data = graph()
    hidden = torch.cat([VAL, TEST]) if setting == "inductive" else None
    cv = STKRCV(transforms, betas, setting, num_iter=budgets, **opts).fit(data, TRAIN, VAL, hidden)
    res = cv.cv_results_
    G = len(transforms) * len(betas or [None]) * len(budgets or [None])
    assert len(res["params"]) == G and res["mean_test_score"].shape == (G,)
    accs = []
    for i, p in enumerate(res["params"]):
        one = single_fit(p["transform"], p["beta"], p["num_iter"], opts, setting).fit(data, TRAIN, hidden)
        want = one.decision_function(VAL)
        got = cv._point_scores(VAL, [i])[0]
        assert torch.allclose(got, want, atol=1e-10 * max(float(want.abs().max()), 1e-300), rtol=0), p
        accs.append(accuracy(one.predict(VAL), data.y[VAL]))
    np.testing.assert_allclose(res["mean_test_score"], accs)
    best = int(np.argmax(accs))                                   # the first of the best
    assert cv.best_index_ == best and cv.best_score_ == accs[best] and cv.best_params_ == res["params"][best]
    assert res["rank_test_score"][best] == 1 and res["rank_test_score"].min() == 1
    p = cv.best_params_
    chosen = single_fit(p["transform"], p["beta"], p["num_iter"], opts, setting).fit(data, TRAIN, hidden)
    assert torch.allclose(cv.decision_function(TEST), chosen.decision_function(TEST), atol=1e-10, rtol=1e-9)
    assert torch.equal(cv.predict(TEST), chosen.predict(TEST))


def test_the_grid_is_one_multi_right_hand_side_solve():
    """Every (eta, beta) pair of the grid is a column block of ONE Richardson run (Algorithm 2),
    whose snapshots serve every budget T."""
    cv = STKRCV([InverseLaplacian(e) for e in (0.5, 0.9, 0.99)], [1.0, 1e-2, 1e-4], num_iter=[2, 8]).fit(
        graph(), TRAIN, VAL)
    (run,) = cv.history_
    assert run.solver == "richardson" and run.x.shape[1] == 3 * 3 * C and sorted(run.snapshots) == [2, 8]


def test_grid_scores_in_grid_order_and_kernel_operator_input():
    data = graph(1)
    K = GraphKernel(data.edge_index, N)
    cv = STKRCV([InverseLaplacian(0.5), InverseLaplacian(0.9)], [1.0, 1e-2], num_iter=[3, 5])
    out = cv.grid_scores(K, TRAIN, TEST, y=data.y)
    assert [(p["transform"].eta, p["beta"], p["num_iter"]) for p, _ in out] == [
        (e, b, T) for e in (0.5, 0.9) for b in (1.0, 1e-2) for T in (3, 5)]
    assert all(s.shape == (TEST.numel(), C) for _, s in out)
    assert [dict(p) for p, _ in out] == cv.get_grid()
    with pytest.raises(ValueError, match="needs the labels y"):
        cv.grid_scores(K, TRAIN, TEST)


def test_get_params_and_clone_round_trip():
    cv = STKRCV([InverseLaplacian(0.9)], [1.0, 1e-3], "inductive", num_iter=[4, 8], labels="centered",
                solver="richardson", max_seconds=10.0)
    params = cv.get_params()
    assert params["transforms"] == [InverseLaplacian(0.9)] and params["betas"] == [1.0, 1e-3]
    assert params["num_iter"] == [4, 8] and params["setting"] == "inductive" and params["labels"] == "centered"
    twin = clone(cv)
    assert twin is not cv and twin.get_params() == params
    assert STKRCV(**params).get_params() == params
    twin.set_params(betas=[0.5])
    assert twin.betas == [0.5] and cv.betas == [1.0, 1e-3]
    assert "STKRCV" in repr(cv)


def test_defaults_and_bad_parameters_fail_at_fit():
    data = graph()
    cv = STKRCV().fit(data, TRAIN, VAL)              # Appendix D's eta and beta grids, solved to tol
    assert len(cv.cv_results_["params"]) == 8 * 12 and 0.0 <= cv.best_score_ <= 1.0
    for bad, err, text in ((dict(betas=[]), ValueError, "betas is empty"),
                           (dict(betas=[-1.0]), ValueError, "beta"),
                           (dict(transforms=[]), ValueError, "transforms is empty"),
                           (dict(transforms=["lap"]), TypeError, "Transform objects"),
                           (dict(transforms=[TopD(4), InverseLaplacian(0.5)]), ValueError, "one family"),
                           (dict(num_iter=[0]), ValueError, "num_iter"),
                           (dict(num_iter=[4], solver="gmres"), ValueError, "num_iter"),
                           (dict(setting="both"), ValueError, "setting"),
                           (dict(labels="centred"), ValueError, "labels")):
        est = STKRCV(**bad)                          # scikit-learn's rule: __init__ stores, fit validates
        with pytest.raises(err, match=text):
            est.fit(data, TRAIN, VAL)
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        STKRCV().predict(TEST)
