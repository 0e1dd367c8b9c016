"""One catalogue of bad inputs against every public estimator.

The estimators are the scikit-learn estimators exported by ``graphstk.methods`` and
``graphstk.features`` (``__all__``): the vector estimators take a feature matrix, the graph
estimators a ``torch_geometric`` graph and the labeled nodes. Each gets the same catalogue --
NaN, inf, empty, one sample, one class, wrong dtype, wrong shape, string labels, sparse input
and a size that does not fit in memory -- and must raise a clear error naming the problem, or,
where the input is legitimate for that estimator, behave as documented (the reason is given
next to each such case). A size that does not fit is refused from an estimate: the memory limit
is set to 1 MB and the refusal comes before anything of that size is allocated.
(The ``graphstk.nn`` modules are ``torch.nn`` layers, checked in ``tests/nn``.)
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import torch
from sklearn.base import BaseEstimator
from torch_geometric.data import Data

from dense_reference import RING_EDGES as EDGES
from dense_reference import RING_LABELS as LABELS
from dense_reference import RING_N as N
from dense_reference import RING_TRAIN as TRAIN

import graphstk.features as F
import graphstk.methods as M
from graphstk import InverseLaplacian
from graphstk.exceptions import ClassesWithoutLabelsWarning, LabelError, MemoryLimitError

rng = np.random.default_rng(0)
X = rng.normal(size=(30, 3))
Y_SEMI = np.r_[[0, 1] * 5, [-1] * 20]          # -1 marks an unlabeled point
Y_REG = rng.normal(size=30)

# name -> (factory, kind); kind: "semi" (fit(X, y), y = -1 unlabeled), "reg" (regressor), "one-class"
# (fit(X), outlier scores), "embedding" (fit(X), a kernel eigenproblem on the fit points), "map" (random
# features: fit reads the dimension, transform maps rows)
VECTOR = {
    "FredholmRLSC": (lambda: M.FredholmRLSC(outer_sigma=1.0, inner_sigma=1.0), "semi"),
    "FredholmSVM": (lambda: M.FredholmSVM(outer_sigma=1.0, inner_sigma=1.0, random_state=0), "semi"),
    "RandomFeatureFredholm": (lambda: M.RandomFeatureFredholm(outer_sigma=1.0, inner_sigma=1.0, n_components=20,
                                                              random_state=0), "semi"),
    "LapRLSC": (lambda: M.LapRLSC(sigma=1.0, n_neighbors=5), "semi"),
    "LSKPCA": (lambda: M.LSKPCA(), "semi"),
    "LRKPCA": (lambda: M.LRKPCA(), "semi"),
    "MVKPCA": (lambda: M.MVKPCA(), "semi"),
    "KernelPCAClassifier": (lambda: M.KernelPCAClassifier(n_components=2), "semi"),
    "KernelRidge": (lambda: M.KernelRidge(sigma=1.0), "reg"),
    "RandomFeatureRidge": (lambda: M.RandomFeatureRidge(n_features=20, random_state=0), "reg"),
    "CoupledKernelEmbedding": (lambda: M.CoupledKernelEmbedding(), "embedding"),
    "SpectralSupportEstimator": (lambda: M.SpectralSupportEstimator(), "one-class"),
    "ParzenWindow": (lambda: M.ParzenWindow(), "one-class"),
    "RandomFourierFeatures": (lambda: F.RandomFourierFeatures(random_state=0), "map"),
    "RandomBinningFeatures": (lambda: F.RandomBinningFeatures(n_grids=5, random_state=0), "map"),
}
class _STKRCVOnTheLastNodes(M.STKRCV):
    """STKRCV with the catalogue's ``fit(data, train_idx)``: validation on those of nodes 6 .. 11 that
    are not training nodes (validation nodes must be unlabeled)."""

    def fit(self, X, train_idx=None, hidden_idx=None, *, y=None):
        try:
            t = torch.as_tensor(train_idx)
            taken = set((t.nonzero().flatten() if t.dtype == torch.bool else t.flatten()).tolist())
        except (TypeError, ValueError, RuntimeError):      # a bad train_idx: the fit names it
            taken = set()
        val = torch.tensor([v for v in range(6, 12) if v not in taken], dtype=torch.long)
        return super().fit(X, train_idx, val, hidden_idx, y=y)


GRAPH = {
    "STKR": lambda: M.STKR(InverseLaplacian(0.9), beta=1e-2),
    "STKRCV": lambda: _STKRCVOnTheLastNodes([InverseLaplacian(0.5), InverseLaplacian(0.9)], [1.0, 1e-2]),
    "LabelPropagation": lambda: M.LabelPropagation(eta=0.9),
    "FeatureSTKR": lambda: M.FeatureSTKR(),
}
SPARSE_OK = {"FredholmRLSC", "FredholmSVM", "KernelRidge"}   # documented: tf-idf text as scipy.sparse
ONE_POINT_OK = {"KernelRidge": "alpha = y / (k(x, x) + lam) is defined for one point",
                "RandomFeatureRidge": "a ridge on the features of one point is defined",
                "RandomFourierFeatures": "fit reads only the number of columns of X",
                "RandomBinningFeatures": "the bins of one point are defined"}
SCORE = {"semi": "predict", "reg": "predict", "one-class": "score_samples", "embedding": "transform",
         "map": "transform"}


def test_every_public_estimator_is_in_the_catalogue():
    public = {name for mod in (M, F) for name in mod.__all__
              if isinstance(getattr(mod, name), type) and issubclass(getattr(mod, name), BaseEstimator)}
    assert public == set(VECTOR) | set(GRAPH)


_DEFAULT = object()


def _fit(name, Z, y=_DEFAULT):
    make, kind = VECTOR[name]
    est = make()
    if y is _DEFAULT:
        y = {"semi": Y_SEMI, "reg": Y_REG}.get(kind)
        y = None if y is None else y[: Z.shape[0]] if Z.shape[0] <= 30 else y
    return est.fit(Z) if kind in ("map", "embedding", "one-class") and y is None else est.fit(Z, y)


def _with(value, where=(3, 1)):
    Z = X.copy()
    Z[where] = value
    return Z


REFUSED = {   # case -> (input, error types, message)
    "nan": (lambda: _with(np.nan), ValueError, "NaN"),
    "inf": (lambda: _with(np.inf), ValueError, "infinity"),
    "empty": (lambda: np.empty((0, 3)), ValueError, "0 sample"),
    "complex": (lambda: X + 1j, ValueError, "Complex data not supported"),
    "strings_as_features": (lambda: np.array([["a"] * 3] * 30, dtype=object), ValueError, "could not convert string"),
    "one_dimensional": (lambda: X[:, 0], ValueError, "Expected 2D array"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
@pytest.mark.parametrize("name", sorted(VECTOR))
def test_vector_refuses(name, case):
    make_input, exc, msg = REFUSED[case]
    with pytest.raises(exc, match=msg):
        _fit(name, make_input())


@pytest.mark.parametrize("name", sorted(VECTOR))
def test_vector_one_sample(name):
    kind = VECTOR[name][1]
    if name in ONE_POINT_OK:                       # legitimate: the reason is in ONE_POINT_OK
        _fit(name, X[:1], None if kind == "map" else Y_REG[:1])
    elif kind == "semi":                           # one labeled point is one class
        with pytest.raises(LabelError, match="1 class"):
            _fit(name, X[:1], np.array([0]))
    else:
        with pytest.raises(ValueError, match="(at least|minimum of) 2"):
            _fit(name, X[:1])


@pytest.mark.parametrize("name", sorted(VECTOR))
def test_vector_one_class(name):
    kind = VECTOR[name][1]
    if kind == "semi":
        with pytest.raises(LabelError, match="1 class"):
            _fit(name, X, np.r_[[0] * 10, [-1] * 20])
    elif kind == "reg":                            # a constant target is a target: the fit is constant-ish
        assert np.isfinite(_fit(name, X, np.ones(30)).predict(X)).all()
    else:                                          # one class is the one-class estimators' input; maps read no y
        _fit(name, X)


@pytest.mark.parametrize("name", sorted(VECTOR))
def test_vector_wrong_number_of_features_after_fit(name):
    est = _fit(name, X)
    with pytest.raises(ValueError, match="3 features"):
        getattr(est, SCORE[VECTOR[name][1]])(X[:, :2])


@pytest.mark.parametrize("name", sorted(VECTOR))
def test_vector_string_labels(name):
    kind = VECTOR[name][1]
    y = np.where(Y_SEMI == -1, "-1", np.where(Y_SEMI == 0, "cat", "dog"))
    if kind == "semi":                             # strings are class labels ("-1" marks an unlabeled point)
        est = _fit(name, X, y)
        assert est.classes_.tolist() == ["cat", "dog"]
        assert set(np.asarray(est.predict(X)).tolist()) <= {"cat", "dog", "-1"}
    elif kind == "reg":
        with pytest.raises(ValueError, match="could not convert string to float"):
            _fit(name, X, y)
    else:                                          # y is not read by an unsupervised fit
        _make, _ = VECTOR[name]
        _make().fit(X, y)


@pytest.mark.parametrize("name", sorted(VECTOR))
def test_vector_sparse_input(name):
    Z = sp.csr_matrix(X)
    if name in SPARSE_OK:                          # documented sparse support (tf-idf text)
        _fit(name, Z)
    else:
        with pytest.raises(TypeError, match=r"dense data is required. Use '.toarray\(\)'"):
            _fit(name, Z)
    with pytest.raises((TypeError, ValueError), match="(?i)dense"):
        _fit(name, torch.as_tensor(X).to_sparse())


HUGE = 200_000


@pytest.fixture(scope="module")
def huge():
    return np.random.default_rng(1).normal(size=(HUGE, 3))


@pytest.mark.parametrize("name", sorted(VECTOR))
def test_vector_huge_is_refused_from_an_estimate(name, huge, monkeypatch):
    kind = VECTOR[name][1]
    est = _fit(name, X) if kind == "map" else None   # a map is fitted on a few rows; the output is what is large
    monkeypatch.setenv("GRAPHSTK_MAX_MEMORY", "1MB")
    with pytest.raises(MemoryLimitError, match=r"needs [0-9.]+ [KMGT]?B, more than the 1.0 MB of GRAPHSTK_MAX_MEMORY"):
        if est is not None:
            est.transform(huge)
        else:
            y = {"semi": np.r_[Y_SEMI, -np.ones(HUGE - 30, dtype=int)], "reg": np.zeros(HUGE)}.get(kind)
            _fit(name, huge, y)


# ------------------------------------------------------------------------------------------- graphs


def _graph(**kw):
    fields = dict(edge_index=EDGES, num_nodes=N, y=LABELS, x=torch.rand(N, 4, dtype=torch.float64,
                                                                        generator=torch.Generator().manual_seed(0)))
    fields.update(kw)
    return Data(**fields)


def _weights(value):
    w = torch.ones(EDGES.shape[1], dtype=torch.float64)
    w[3] = value
    return w


GRAPH_REFUSED = {   # case -> (graph, train_idx, error types, message)
    "nan": (lambda: _graph(edge_weight=_weights(float("nan"))), TRAIN, ValueError, "edge_weight must be finite"),
    "inf": (lambda: _graph(edge_weight=_weights(float("inf"))), TRAIN, ValueError, "edge_weight must be finite"),
    "empty": (_graph, torch.tensor([], dtype=torch.long), ValueError, "no labeled nodes"),
    "float_labels": (lambda: _graph(y=LABELS.double()), TRAIN, TypeError, "integer class ids"),
    "negative_label": (lambda: _graph(y=torch.where(torch.arange(N) == 1, -3, LABELS)), TRAIN, ValueError,
                       "class ids >= 0"),
    "float_ids": (_graph, TRAIN.double(), TypeError, "LongTensor of node ids or a boolean mask"),
    "mask_of_wrong_length": (_graph, torch.ones(N + 1, dtype=torch.bool), ValueError, "mask of length 13"),
    "two_dimensional_ids": (_graph, TRAIN.view(2, 3), ValueError, r"flatten it"),
    "string_labels": (lambda: _graph(y=["a"] * N), TRAIN, TypeError, "integer class ids"),
    "sparse_adjacency": (lambda: sp.csr_matrix(np.eye(N)), TRAIN, TypeError, "torch_geometric Data"),
}
def _params(cases):
    return [pytest.param(name, case) for name in sorted(GRAPH) for case in cases]


@pytest.mark.parametrize("name, case", _params(sorted(GRAPH_REFUSED)))
def test_graph_refuses(name, case):
    make, train, exc, msg = GRAPH_REFUSED[case]
    with pytest.raises(exc, match=msg):
        GRAPH[name]().fit(make(), train)


@pytest.mark.parametrize("name, case", _params(["one_class", "one_sample"]))
def test_graph_one_class(name, case):
    """Legitimate: a node can be labeled with one class only. The classes without a labeled node are
    named by a warning and never predicted."""
    train = torch.tensor([0, 3, 6]) if case == "one_class" else torch.tensor([0])
    with pytest.warns(ClassesWithoutLabelsWarning, match="classes 1, 2"):
        est = GRAPH[name]().fit(_graph(), train)
    pred = est.predict(torch.arange(N))
    assert set(pred.tolist()) <= {0, -1}


@pytest.mark.parametrize("name, case", _params(["huge"]))
def test_graph_huge_is_refused_from_an_estimate(name, case, monkeypatch):
    n = 300_000
    y = torch.zeros(n, dtype=torch.long)
    y[1::2] = 1
    data = Data(edge_index=torch.randint(0, n, (2, 1000), generator=torch.Generator().manual_seed(0)), num_nodes=n,
                y=y, x=torch.zeros(1, 4, dtype=torch.float64).expand(n, 4))
    monkeypatch.setenv("GRAPHSTK_MAX_MEMORY", "1MB")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(MemoryLimitError, match="more than the 1.0 MB of GRAPHSTK_MAX_MEMORY"):
            GRAPH[name]().fit(data, torch.arange(100))
