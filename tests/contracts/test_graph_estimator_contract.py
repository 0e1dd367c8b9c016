"""One contract for the graph estimators (docs/estimators.md, "Graph estimators"): STKR,
LabelPropagation, STKRCV and FeatureSTKR fit with the same argument names and types, are checked
at fit (``set_params`` cannot bypass a check), fit with their defaults, and predict in
scikit-learn's shapes and in the caller's array type.

Everything runs on networkx's karate club (34 nodes, two classes) with four labels, or on a small
random graph with three classes."""
from __future__ import annotations

import inspect
import pickle
import re
import warnings

import networkx as nx
import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from torch_geometric.data import Data

import graphstk as gs
from dense_reference import labeled_graph
from graphstk.exceptions import UnreachableNodesWarning
from graphstk.methods import STKR, STKRCV, FeatureSTKR, LabelPropagation
from graphstk.spectral.transforms import InverseLaplacian

TRAIN = torch.tensor([0, 33, 1, 32])     # two labels per class ("Mr. Hi" 0, "Officer" 1)
VAL = torch.tensor([2, 31, 3, 30])
EVAL = torch.tensor([4, 5, 6, 7, 8, 29, 28, 27])


def _karate() -> Data:
    data = gs.load_dataset(nx.karate_club_graph(), label="club")
    data.x = torch.eye(data.num_nodes, dtype=torch.float64)    # FeatureSTKR needs node features
    return data


def _three_classes() -> tuple[Data, torch.Tensor]:
    data, train, _ = labeled_graph(3, n=40, p=0.15)
    data.x = torch.eye(40, dtype=torch.float64)
    return data, train


ESTIMATORS = [STKR, LabelPropagation, STKRCV, FeatureSTKR]
#: a value each estimator must refuse at fit, and the words of the refusal
INVALID = {
    STKR: [("beta", -1.0, "beta must be > 0"), ("setting", "bogus", "The 'setting' parameter of STKR must be a str among"),
           ("step_size", "fast", "The 'step_size' parameter of STKR must be a str among"),
           ("transform", "laplacian", "The 'transform' parameter of STKR must be an instance of 'graphstk.spectral.transforms.Polynomial'")],
    LabelPropagation: [("eta", -0.5, "eta must be > 0"),
                       ("setting", "bogus", "The 'setting' parameter of LabelPropagation must be a str among"),
                       ("solver", "lu", "The 'solver' parameter of LabelPropagation must be a str among")],
    STKRCV: [("betas", [1.0, -1.0], "betas must be > 0"),
             ("setting", "bogus", "The 'setting' parameter of STKRCV must be a str among"),
             ("labels", "binary", "The 'labels' parameter of STKRCV must be a str among")],
    FeatureSTKR: [("beta", 0.0, "beta must be > 0"), ("setting", "bogus", "setting must be 'transductive' or"),
                  ("depth", -2, "depth must be an integer >= 0"), ("mix", "sum", "mix must be one of")],
}


def _fit(est, data, train, **kwargs):
    """``est.fit`` with the arguments of the contract (STKRCV adds its validation nodes)."""
    val = kwargs.pop("val_idx", VAL)
    if isinstance(est, STKRCV):
        return est.fit(data, train, val, **kwargs)
    return est.fit(data, train, **kwargs)


@pytest.fixture(scope="module")
def karate():
    return _karate()


@pytest.fixture(scope="module", params=ESTIMATORS, ids=lambda c: c.__name__)
def fitted(request, karate):
    """Each estimator fitted with its defaults on the karate club."""
    return _fit(request.param(), karate, TRAIN)


# ----------------------------------------------------------------------------- parameters
@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_clone_get_params_set_params_round_trip(cls):
    est = cls()
    params = est.get_params()
    assert set(params) == set(inspect.signature(cls.__init__).parameters) - {"self"}
    copy = clone(est)
    assert copy is not est and repr(copy.get_params()) == repr(params)
    assert repr(cls().set_params(**params).get_params()) == repr(params)
    assert repr(est) == f"{cls.__name__}()"


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_invalid_parameter_is_refused_at_fit_naming_it(cls, karate):
    for name, bad, text in INVALID[cls]:
        est = clone(cls()).set_params(**{name: bad})       # set_params only stores
        assert est.get_params()[name] == bad
        assert re.search(rf"\b{name}\b", text), "the message names the parameter as spelled"
        with pytest.raises((ValueError, TypeError), match=re.escape(text)):
            _fit(est, karate, TRAIN)
        with pytest.raises((ValueError, TypeError), match=re.escape(text)):
            _fit(cls(**{name: bad}), karate, TRAIN)        # the constructor stores it too


def test_stkr_set_params_cannot_bypass_the_ridge_check(karate):
    est = clone(STKR(InverseLaplacian(0.9), beta=1e-2)).set_params(beta=-1.0)
    with pytest.raises(ValueError, match=r"beta must be > 0, got -1\.0"):
        est.fit(karate, TRAIN)
    assert not hasattr(est, "h_")


# ----------------------------------------------------------------------------- fit
@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_one_fit_signature(cls):
    sig = inspect.signature(cls.fit)
    names = [p for p in sig.parameters if p != "self"]
    want = ["data", "train_idx", "val_idx", "hidden_idx", "y"] if cls is STKRCV else \
        ["data", "train_idx", "hidden_idx", "y"]
    assert names == want
    assert sig.parameters["y"].kind is inspect.Parameter.KEYWORD_ONLY
    assert sig.parameters["hidden_idx"].default is None and sig.parameters["y"].default is None


def test_defaults_fit_and_predict_better_than_chance(fitted, karate):
    rest = torch.ones(karate.num_nodes, dtype=torch.bool)
    rest[TRAIN] = False
    pred = fitted.predict(rest)
    assert pred.shape == (int(rest.sum()),)
    assert set(pred.tolist()) <= set(fitted.classes_.tolist()) | {-1}
    assert float((pred == karate.y[rest]).double().mean()) > 0.7


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_ids_masks_numpy_and_y_keyword_fit_the_same(cls, karate):
    ref = _fit(cls(), karate, TRAIN).class_scores(EVAL)
    mask = np.zeros(karate.num_nodes, dtype=bool)
    mask[TRAIN.numpy()] = True
    y = karate.y.numpy()
    bare = Data(edge_index=karate.edge_index, edge_weight=karate.edge_weight, x=karate.x,
                num_nodes=karate.num_nodes)
    for train, kwargs in ((TRAIN.numpy(), {}), (torch.from_numpy(mask), {}), (mask, {}),
                          (TRAIN, {"y": karate.y}), (TRAIN.numpy(), {"y": y})):
        data = bare if "y" in kwargs else karate
        got = _fit(cls(), data, train, **kwargs).class_scores(EVAL)
        torch.testing.assert_close(got, ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_the_same_input_errors_in_all(cls, karate):
    with pytest.raises(TypeError, match="train_idx must be a LongTensor of node ids or a boolean mask of length 34"):
        _fit(cls(), karate, torch.tensor([0.0, 33.0]))
    with pytest.raises(ValueError, match="setting='transductive' sees every node; pass hidden_idx only with"):
        _fit(cls(), karate, TRAIN, hidden_idx=torch.tensor([20, 21]))
    bare = Data(edge_index=karate.edge_index, x=karate.x, num_nodes=karate.num_nodes)
    with pytest.raises(ValueError, match=r"data.y is missing: .* \(or pass y=\)"):
        _fit(cls(), bare, TRAIN)
    with pytest.raises(ValueError, match="train_idx is required"):
        _fit(cls(), bare, None, y=karate.y)


# ----------------------------------------------------------------------------- outputs
def test_shapes_for_two_classes(fitted):
    n = EVAL.numel()
    S = fitted.class_scores(EVAL)
    d = fitted.decision_function(EVAL)
    assert S.shape == (n, 2) and d.shape == (n,)
    torch.testing.assert_close(d, S[:, 1] - S[:, 0])
    pred = fitted.predict(EVAL)
    assert pred.dtype == torch.int64
    reached = ~fitted.unreachable_
    # scikit-learn's rule for a 1-D decision function: classes_[1] where it is positive
    assert torch.equal(pred[reached], fitted.classes_[(d[reached] > 0).long()])
    assert fitted.decision_function().shape == (34,) and fitted.class_scores().shape == (34, 2)


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_shapes_for_three_classes(cls):
    data, train = _three_classes()
    val = torch.tensor([3, 4, 6, 7, 8])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnreachableNodesWarning)
        est = _fit(cls(), data, train, val_idx=val)
        d = est.decision_function(torch.arange(10, 20))
        assert d.shape == (10, 3) and est.classes_.tolist() == [0, 1, 2]
        torch.testing.assert_close(d, est.class_scores(torch.arange(10, 20)))
        assert torch.equal(est.predict(torch.arange(10, 20))[~est.unreachable_], d.argmax(1)[~est.unreachable_])


def test_arrays_in_arrays_out(fitted):
    mask = np.zeros(34, dtype=bool)
    mask[EVAL.numpy()] = True
    for method in ("predict", "decision_function", "class_scores"):
        f = getattr(fitted, method)
        as_tensor = f(EVAL)
        assert isinstance(as_tensor, torch.Tensor) and as_tensor.device == EVAL.device
        as_numpy = f(EVAL.numpy())
        assert isinstance(as_numpy, np.ndarray)
        np.testing.assert_array_equal(as_numpy, as_tensor.numpy())
        assert isinstance(f(EVAL.tolist()), np.ndarray)
        np.testing.assert_array_equal(f(mask), f(torch.from_numpy(mask)).numpy())
        assert isinstance(f(), torch.Tensor)          # idx=None: every node, as a tensor
    assert fitted.predict(EVAL.numpy()).dtype == np.int64


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_unreachable_nodes_are_labeled_minus_one_and_flagged(cls, karate):
    data = karate.clone()
    keep = (data.edge_index != 11).all(0)             # node 11 (one neighbour in the club) cut off
    data.edge_index, data.edge_weight = data.edge_index[:, keep], data.edge_weight[keep]
    est = cls() if cls is not FeatureSTKR else cls(kernel="cosine", mix="last")
    _fit(est, data, TRAIN)
    with pytest.warns(UnreachableNodesWarning):
        pred = est.predict(torch.tensor([10, 11, 12]))
    assert pred[1] == -1 and (pred[[0, 2]] >= 0).all()
    assert est.unreachable_.tolist() == [False, True, False] and est.n_unreachable_ == 1
    with pytest.warns(UnreachableNodesWarning):
        assert float(est.decision_function(np.array([11]))[0]) == 0.0


def test_pickled_estimator_predicts_the_same(fitted):
    again = pickle.loads(pickle.dumps(fitted))
    assert torch.equal(again.predict(), fitted.predict())
    assert torch.equal(again.decision_function(EVAL), fitted.decision_function(EVAL))


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_same_inputs_same_outputs(cls, karate):
    # no graph estimator draws random numbers (none takes random_state): two fits agree exactly
    assert "random_state" not in cls().get_params()
    a, b = _fit(cls(), karate, TRAIN), _fit(cls(), karate, TRAIN)
    assert torch.equal(a.class_scores(), b.class_scores())


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_not_fitted_error_before_fit(cls):
    est = cls()
    for method in ("predict", "decision_function", "class_scores"):
        with pytest.raises(NotFittedError):
            getattr(est, method)(EVAL)


def test_every_graph_estimator_of_the_exports_is_held_here():
    """The feature-matrix contract leaves exactly these names to this file."""
    from tests.contracts.test_estimator_contract import GRAPH_ESTIMATORS
    assert sorted(c.__name__ for c in ESTIMATORS) == sorted(GRAPH_ESTIMATORS)
