"""The STKR and Label-Prop estimators (graphstk.methods.estimators): on kernel operators that are
not graphs (a dense Gram matrix and a feature kernel evaluated in blocks, against the dense closed
forms of Eq. 5 and Eq. 7); classes absent from the training labels, label types, 0/1 masks and the
size check before the graph kernel is built."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from torch_geometric.data import Data

from dense_reference import random_graph, stkr_scores
from graphstk import STKR, LabelPropagation
from graphstk.exceptions import ClassesWithoutLabelsWarning, MemoryLimitError
from graphstk.operators import DenseOperator, FeatureKernelOperator, GraphKernel, gram
from graphstk.spectral.transforms import InverseLaplacian, Polynomial, TopD

N, C = 30, 3
TRAIN = [0, 1, 2, 3, 4, 5, 6, 7]
HIDDEN = [25, 26, 27, 28, 29]


def _points(seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(N, 4, generator=g, dtype=torch.float64)
    y = torch.randint(0, C, (N,), generator=g)
    y[:3] = torch.arange(3)
    return X, y


def _reference(K, y, hidden, s_of, pred_of, beta, eval_ids):
    vis = [i for i in range(N) if i not in hidden]
    Nv = len(vis)
    S = K[vis][:, vis] / Nv                                   # G_K / (n+m), Eq. 5
    tl = [vis.index(t) for t in TRAIN]
    Y = torch.nn.functional.one_hot(y[TRAIN], C).double()
    R = K[eval_ids][:, vis] / Nv                              # v_K(x) / (n+m)
    return stkr_scores(S, tl, Y, s_of(S), beta, R, pred_of(S))


@pytest.mark.parametrize("hidden", [[], HIDDEN], ids=["transductive", "inductive"])
@pytest.mark.parametrize("as_blocks", [False, True], ids=["dense-gram", "feature-kernel"])
def test_inverse_laplacian_on_a_feature_kernel_matches_eq7(hidden, as_blocks):
    X, y = _points()
    K = gram(X, kernel="gaussian", sigma=1.5).double()
    op = FeatureKernelOperator(X, kernel="gaussian", sigma=1.5) if as_blocks else DenseOperator(K)
    eta, beta = 0.8, 0.05
    eval_ids = list(range(8, N))

    def qinv(S):
        return torch.linalg.inv(torch.eye(S.shape[0], dtype=S.dtype) - eta * S)
    ref = _reference(K, y, hidden, lambda S: S @ qinv(S), qinv, beta, eval_ids)
    est = STKR(InverseLaplacian(eta), beta, setting="inductive" if hidden else "transductive", tol=1e-12)
    est.fit(op, TRAIN, hidden_idx=hidden or None, y=y)
    out = est.decision_function(eval_ids)              # a list of ids: NumPy out, [len(idx), C] for C = 3
    assert isinstance(out, np.ndarray)
    torch.testing.assert_close(torch.from_numpy(out), ref, atol=1e-8 * float(ref.abs().max()), rtol=0)
    assert est.predict(eval_ids).shape == (len(eval_ids),)
    assert np.array_equal(est.predict(eval_ids), ref.argmax(1).numpy())
    assert torch.equal(est.predict(torch.tensor(eval_ids)), ref.argmax(1))


@pytest.mark.parametrize("solver", ["direct", "cg", "richardson"])
def test_polynomial_on_a_dense_gram_matches_eq7(solver):
    X, y = _points(1)
    K = gram(X, kernel="gaussian", sigma=1.0).double()
    beta = 1.0 if solver == "richardson" else 0.05
    eval_ids = list(range(N))
    ref = _reference(K, y, [], lambda S: S @ S, lambda S: S, beta, eval_ids)
    est = STKR(Polynomial.monomial(2), beta, solver=solver, tol=1e-12, max_iter=20000).fit(DenseOperator(K), TRAIN,
                                                                                             y=y)
    torch.testing.assert_close(est.decision_function(), ref, atol=1e-7 * float(ref.abs().max()), rtol=0)


def test_spectral_bound_of_an_operator_guards_the_transform():
    X, y = _points(2)
    K = gram(X, kernel="gaussian", sigma=1.0).double()
    lam = float(torch.linalg.eigvalsh(K / N).max())
    est = STKR(InverseLaplacian(0.99), 0.1).fit(DenseOperator(K), TRAIN, y=y)
    assert est.problem_.lambda_max == pytest.approx(lam, rel=1e-10)
    with pytest.raises(ValueError, match="eta < 1/lambda_1"):
        STKR(InverseLaplacian(1.5 / lam), 0.1).fit(DenseOperator(K), TRAIN, y=y)


def test_graph_as_operator_equals_graph_as_data():
    W, ei, w = random_graph(N, 0.2, 3)
    _, y = _points()
    data = Data(edge_index=ei, edge_weight=w, y=y, num_nodes=N)
    for est in (lambda: STKR(InverseLaplacian(0.9), 1e-2), lambda: LabelPropagation(0.9),
                lambda: STKR(TopD(5), 1e-2)):
        a = est().fit(data, TRAIN).decision_function()
        kernel = GraphKernel(ei, N, edge_weight=w, normalization=est()._normalization())
        b = est().fit(kernel, TRAIN, y=y).decision_function()
        torch.testing.assert_close(a, b)


def test_inductive_graph_operator_needs_its_own_hidden_nodes():
    W, ei, w = random_graph(N, 0.2, 4)
    _, y = _points()
    K = GraphKernel(ei, N, hidden=HIDDEN, edge_weight=w, normalization="lazy")   # STKR's default kernel
    a = STKR(InverseLaplacian(0.9), 1e-2, setting="inductive").fit(K, TRAIN, y=y).decision_function(HIDDEN)
    b = STKR(InverseLaplacian(0.9), 1e-2, setting="inductive").fit(
        Data(edge_index=ei, edge_weight=w, y=y, num_nodes=N), TRAIN, hidden_idx=HIDDEN).decision_function(HIDDEN)
    torch.testing.assert_close(a, b)
    with pytest.raises(ValueError, match="hidden"):
        STKR(InverseLaplacian(0.9), 1e-2, setting="inductive").fit(K, TRAIN, hidden_idx=[20], y=y)


def test_fit_on_an_operator_needs_y():
    X, _ = _points()
    with pytest.raises(ValueError, match="needs the labels y"):
        STKR(InverseLaplacian(0.5), 0.1).fit(DenseOperator(gram(X).double()), TRAIN)


def test_a_class_without_training_labels_is_never_predicted():
    W, ei, w = random_graph(N, 0.3, 5)
    _, y = _points()
    y = y.clone()
    y[TRAIN] = torch.tensor([0, 2, 0, 2, 0, 2, 0, 2])        # class 1 has no training node
    with pytest.warns(UserWarning, match="classes 1"):
        est = STKR(InverseLaplacian(0.9), 1e-2, num_classes=3).fit(Data(edge_index=ei, y=y, num_nodes=N), TRAIN)
    scores = est.decision_function()
    assert torch.all(scores[:, 1] == 0)
    assert not bool((est.predict() == 1).any())
    assert est.missing_classes_ == [1]


def test_a_diverging_fixed_budget_raises_convergence_error():
    from graphstk.exceptions import ConvergenceError

    W, ei, w = random_graph(N, 0.2, 6)
    _, y = _points()
    data = Data(edge_index=ei, y=y, num_nodes=N)
    with pytest.raises(ConvergenceError, match="diverges"):
        STKR(InverseLaplacian(0.9), 1e-3, num_iter=10, step_size=5.0).fit(data, range(N))
    est = LabelPropagation(0.9, num_iter=10).fit(data, TRAIN)              # a converging budget: no error
    assert est.residuals_[-1] < 1 and bool(torch.isfinite(est.decision_function()).all())


# ------------------------------------------------------------------------ absent classes, labels, size
def _graph():
    ring = torch.stack([torch.arange(N), (torch.arange(N) + 1) % N])
    chords = torch.stack([torch.arange(N), (torch.arange(N) + 7) % N])
    ei = torch.cat([ring, ring.flip(0), chords, chords.flip(0)], 1)
    return Data(edge_index=ei, num_nodes=N, y=torch.arange(N) % 4)


@pytest.mark.parametrize("make", [lambda: STKR(InverseLaplacian(0.9), beta=1e-2), lambda: LabelPropagation(eta=0.9)])
@pytest.mark.parametrize("absent", [1, 3])
def test_class_absent_from_training_is_named_and_never_predicted(make, absent):
    """The highest class too: its score column stays (num_classes from y, as PyG's num_classes)."""
    data = _graph()
    train = torch.arange(16)[data.y[:16] != absent]
    with pytest.warns(ClassesWithoutLabelsWarning, match=rf"classes {absent}\)"):
        est = make().fit(data, train)
    assert est.num_classes_ == 4 and est.missing_classes_ == [absent]
    assert est.decision_function().shape == (N, 4)
    assert not (est.predict() == absent).any()


def test_explicit_num_classes_wins():
    data = _graph()
    train = torch.arange(16)[data.y[:16] != 3]
    est = STKR(InverseLaplacian(0.9), beta=1e-2, num_classes=3).fit(data, train)
    assert est.decision_function().shape == (N, 3)


@pytest.mark.parametrize("labels", [["a", "b"] * (N // 2), np.array(["a", "b"] * (N // 2))])
def test_string_labels_are_refused_naming_the_mapping(labels):
    data = _graph()
    with pytest.raises(TypeError, match=r"integer class ids.*np.unique\(y, return_inverse=True\)"):
        LabelPropagation().fit(data, torch.arange(6), y=labels)
    est = LabelPropagation().fit(data, torch.arange(8), y=np.arange(N) % 4)   # numeric NumPy labels are read
    assert est.num_classes_ == 4


def test_0_1_integer_masks_of_length_n_are_named_as_masks():
    """Not "train_idx contains duplicates": an integer 0/1 tensor of length N is named as a mask
    read as ids, with both ways to write it."""
    data = _graph()
    ref = LabelPropagation(eta=0.9).fit(data, torch.arange(8)).decision_function()
    for dtype in (torch.uint8, torch.int64):
        mask = torch.zeros(N, dtype=dtype)
        mask[:8] = 1
        with pytest.raises(ValueError, match=r"looks like a mask.*mask.bool\(\).*nonzero") as err:
            LabelPropagation(eta=0.9).fit(data, mask)
        assert "duplicates" not in str(err.value)
        torch.testing.assert_close(LabelPropagation(eta=0.9).fit(data, mask.bool()).decision_function(), ref)


def test_graph_too_large_for_memory_is_refused_before_the_kernel(monkeypatch):
    n = 500_000
    y = torch.zeros(n, dtype=torch.long)
    y[1::2] = 1
    data = Data(edge_index=torch.randint(0, n, (2, 100), generator=torch.Generator().manual_seed(0)), num_nodes=n, y=y)
    monkeypatch.setenv("GRAPHSTK_MAX_MEMORY", "10MB")
    with pytest.raises(MemoryLimitError, match=r"500000 nodes, 100 edges and 2 classes.*dtype=torch.float32"):
        STKR(InverseLaplacian(0.9), beta=1e-2).fit(data, torch.arange(10))
