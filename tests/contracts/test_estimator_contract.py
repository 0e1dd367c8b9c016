"""One contract for every feature-matrix estimator that graphstk exports (``docs/estimators.md``).

The estimators are enumerated from the exports of ``graphstk``, ``graphstk.methods`` and
``graphstk.features``; every :class:`~sklearn.base.BaseEstimator` subclass there is either checked
here or named in :data:`GRAPH_ESTIMATORS` (the estimators that take a graph and node ids, whose
contract is checked with graph inputs elsewhere). For each one, on a small semi-supervised problem
(two Gaussian blobs, 40 points, 4 of them labeled, ``y = -1`` for the others):

* ``clone`` / ``get_params`` / ``set_params`` round trip, and ``__init__`` only stores its arguments;
* parameters are declared in ``_parameter_constraints`` and an invalid value set with
  ``set_params`` is refused at ``fit`` naming the parameter (scikit-learn's own
  ``check_param_validation``);
* the defaults fit the small problem;
* ``predict`` / ``decision_function`` / ``transform`` / ``score_samples`` shapes and types: NumPy in,
  NumPy out; a tensor in, a tensor out; classifiers give labels from ``classes_``, 1-D scores for
  two classes and ``[n, C]`` otherwise, and ``unreachable_`` over the fitted points;
* a pickled fitted estimator predicts the same;
* the same ``random_state`` gives the same output;
* ``NotFittedError`` before ``fit``.
"""
from __future__ import annotations

import inspect
import pickle

import numpy as np
import pytest
import torch
from sklearn.base import BaseEstimator, clone, is_classifier, is_outlier_detector, is_regressor
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import check_param_validation

import graphstk
import graphstk.features
import graphstk.methods

#: the estimators that take a graph (a PyG ``Data`` or a kernel operator) and node ids: their
#: contract is checked with graph inputs, not by this file
GRAPH_ESTIMATORS = ("STKR", "STKRCV", "LabelPropagation", "FeatureSTKR")

_MODULES = (graphstk, graphstk.methods, graphstk.features)


def exported_estimators() -> dict[str, type]:
    """``{name: class}`` of every ``BaseEstimator`` subclass exported by ``graphstk``,
    ``graphstk.methods`` and ``graphstk.features`` (subpackage names of ``graphstk`` left out)."""
    out = {}
    for module in _MODULES:
        names = [n for n in module.__all__ if n not in getattr(module, "_SUBMODULES", ())]
        for name in names:
            obj = getattr(module, name)
            if inspect.isclass(obj) and issubclass(obj, BaseEstimator):
                out[name] = obj
    return out


ESTIMATORS = exported_estimators()
FEATURE_ESTIMATORS = sorted(set(ESTIMATORS) - set(GRAPH_ESTIMATORS))


def blobs(n_classes: int = 2, per_class: int = 20, labeled: int = 2, seed: int = 0):
    """``(X [n, 2], y [n], y_semi [n])``: Gaussian blobs, ``labeled`` points per class kept in ``y_semi``."""
    rng = np.random.default_rng(seed)
    centres = 4.0 * np.array([[-1.0, 0.0], [1.0, 0.0], [0.0, 1.5]])[:n_classes]
    X = np.concatenate([rng.normal(c, 1.0, (per_class, 2)) for c in centres])
    y = np.repeat(np.arange(n_classes), per_class)
    y_semi = np.full_like(y, -1)
    for c in range(n_classes):
        y_semi[c * per_class:c * per_class + labeled] = c
    return X, y, y_semi


X2, Y2, YS2 = blobs()


def fit_args(est, X=X2, y=Y2, y_semi=YS2):
    """The ``fit`` arguments of ``est``'s kind: semi-supervised labels for classifiers (and the
    coupled embedding), real targets for regressors, no labels for the others."""
    if is_regressor(est):
        return X, y.astype(np.float64)
    if is_classifier(est) or type(est).__name__ == "CoupledKernelEmbedding":
        return X, y_semi
    return (X,)


def as_tensors(args):
    return tuple(torch.as_tensor(a) for a in args)


def outputs(est, X) -> dict:
    """Every output method ``est`` has, on ``X``."""
    names = ("predict", "decision_function", "transform", "score_samples")
    return {m: getattr(est, m)(X) for m in names if hasattr(est, m)}


def test_every_exported_estimator_is_covered():
    assert set(GRAPH_ESTIMATORS) <= set(ESTIMATORS), sorted(set(GRAPH_ESTIMATORS) - set(ESTIMATORS))
    expected = {"KernelRidge", "RandomFeatureRidge", "CoupledKernelEmbedding", "SpectralSupportEstimator",
                "ParzenWindow", "LRKPCA", "LSKPCA", "MVKPCA", "KernelPCAClassifier", "FredholmRLSC", "FredholmSVM",
                "RandomFeatureFredholm", "LapRLSC", "RandomFourierFeatures", "RandomBinningFeatures"}
    assert expected <= set(FEATURE_ESTIMATORS)
    assert set(FEATURE_ESTIMATORS) | set(GRAPH_ESTIMATORS) == set(ESTIMATORS)


@pytest.mark.parametrize("name", FEATURE_ESTIMATORS)
def test_params_round_trip_and_init_only_stores(name):
    cls = ESTIMATORS[name]
    est = cls()
    params = est.get_params()
    assert clone(est).get_params() == params
    assert est.set_params(**params) is est and est.get_params() == params
    assert repr(est).startswith(f"{name}(")
    bad = type("BadType", (), {})()
    for p in params:   # __init__ stores its arguments, whatever they are: validation waits for fit
        assert getattr(cls(**{p: bad}), p) is bad


@pytest.mark.parametrize("name", FEATURE_ESTIMATORS)
def test_invalid_parameter_is_refused_at_fit_naming_it(name):
    est = ESTIMATORS[name]()
    check_param_validation(name, est)     # scikit-learn's own check: every parameter, every fit method
    first = next(p for p, c in est._parameter_constraints.items() if c != "no_validation")
    est.set_params(**{first: type("BadType", (), {})()})
    with pytest.raises(InvalidParameterError, match=f"The '{first}' parameter of {name} must be"):
        est.fit(*fit_args(est))


@pytest.mark.parametrize("name", FEATURE_ESTIMATORS)
def test_defaults_fit_a_small_semi_supervised_problem(name):
    est = ESTIMATORS[name]()
    assert est.fit(*fit_args(est)) is est
    if is_classifier(est):
        assert (est.predict(X2) == Y2).mean() >= 0.9
    elif is_regressor(est):
        assert est.score(X2, Y2.astype(np.float64)) > 0.5
    elif is_outlier_detector(est):
        assert set(np.unique(est.predict(X2))) <= {-1, 1} and (est.predict(X2) == 1).all()
    else:
        Z = est.transform(X2)
        assert Z.shape[0] == len(X2) and np.isfinite(Z).all()


@pytest.mark.parametrize("name", FEATURE_ESTIMATORS)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_output_shapes_and_array_types(name, n_classes):
    est = ESTIMATORS[name]()
    if n_classes == 3 and not is_classifier(est):
        pytest.skip("three classes: classifiers only")
    if "random_state" in est.get_params():
        est.set_params(random_state=0)
    X, y, y_semi = blobs(n_classes)
    args = fit_args(est, X, y, y_semi)
    n = len(X)
    numpy_out = outputs(clone(est).fit(*args), X)
    tensor_fit = clone(est).fit(*as_tensors(args))
    tensor_out = outputs(tensor_fit, torch.as_tensor(X))
    assert numpy_out and set(numpy_out) == set(tensor_out)
    for method, out in numpy_out.items():
        assert isinstance(out, np.ndarray), (method, type(out))
        assert isinstance(tensor_out[method], torch.Tensor), (method, type(tensor_out[method]))
        assert tuple(tensor_out[method].shape) == out.shape
    if "predict" in numpy_out:
        assert numpy_out["predict"].shape == (n,)
    if is_classifier(est):
        scores = numpy_out["decision_function"]
        assert scores.shape == ((n,) if n_classes == 2 else (n, n_classes))
        assert set(np.unique(numpy_out["predict"])) <= set(est.fit(*args).classes_)
        np.testing.assert_array_equal(est.classes_, np.arange(n_classes))
        if n_classes == 2:     # positive scores are classes_[1]
            np.testing.assert_array_equal(numpy_out["predict"], est.classes_[(scores > 0).astype(int)])
        else:
            np.testing.assert_array_equal(numpy_out["predict"], est.classes_[scores.argmax(1)])
        assert tensor_out["predict"].dtype in (torch.int64, torch.int32)
        unr = est.unreachable_
        assert isinstance(unr, np.ndarray) and unr.dtype == bool and unr.shape == (n,) and not unr.any()
        assert est.n_unreachable_ == 0
        assert isinstance(tensor_fit.unreachable_, torch.Tensor) and tensor_fit.unreachable_.shape == (n,)
    if is_outlier_detector(est):
        for method in ("decision_function", "score_samples"):
            assert numpy_out[method].shape == (n,)
        assert set(np.unique(numpy_out["predict"])) <= {-1, 1}
    if "transform" in numpy_out:
        assert numpy_out["transform"].ndim == 2 and numpy_out["transform"].shape[0] == n


@pytest.mark.parametrize("name", FEATURE_ESTIMATORS)
def test_pickled_fitted_estimator_predicts_the_same(name):
    est = ESTIMATORS[name]()
    if "random_state" in est.get_params():
        est.set_params(random_state=0)
    est.fit(*fit_args(est))
    again = pickle.loads(pickle.dumps(est))
    before, after = outputs(est, X2), outputs(again, X2)
    assert before.keys() == after.keys()
    for method in before:
        np.testing.assert_array_equal(before[method], after[method], err_msg=method)


@pytest.mark.parametrize("name", [n for n in FEATURE_ESTIMATORS if "random_state" in ESTIMATORS[n]().get_params()])
def test_same_random_state_same_output(name):
    a = ESTIMATORS[name](random_state=3)
    b = clone(a)
    oa, ob = outputs(a.fit(*fit_args(a)), X2), outputs(b.fit(*fit_args(b)), X2)
    for method in oa:
        np.testing.assert_array_equal(oa[method], ob[method], err_msg=method)
    # a RandomState instance is accepted too
    ESTIMATORS[name](random_state=np.random.RandomState(0)).fit(*fit_args(a))


@pytest.mark.parametrize("name", FEATURE_ESTIMATORS)
def test_not_fitted_error_before_fit(name):
    est = ESTIMATORS[name]()
    methods = [m for m in ("predict", "decision_function", "transform", "score_samples") if hasattr(est, m)]
    assert methods
    for method in methods:
        with pytest.raises(NotFittedError):
            getattr(est, method)(X2)
    if is_classifier(est):
        with pytest.raises(NotFittedError):
            est.unreachable_
