"""Conventions every graph estimator and module keeps: masks and ids alike, PyG's names,
help() and repr, and bad inputs and faults named clearly."""
from __future__ import annotations

import inspect
import re
import warnings

import pytest
import torch
from torch_geometric.data import Data

import graphstk as gs
from dense_reference import labeled_graph
from graphstk.methods import STKR, STKRCV, LabelPropagation, UnreachableNodesWarning
from graphstk.spectral.transforms import LabelPropagationFilter
from graphstk.exceptions import ClassesWithoutLabelsWarning
from graphstk.nn import LabelPropagation as LPModule
from graphstk.nn import STKRPropagation
from graphstk.operators import EdgeListWarning, GraphKernel
from graphstk.spectral.transforms import InverseLaplacian, Polynomial, TopD

N, C = 60, 3


def ids(mask):
    return mask.nonzero().flatten()


# ----------------------------------------------------------------------------- masks and ids
ESTIMATORS = [
    lambda: LabelPropagation(eta=0.9),
    lambda: LabelPropagation(eta=0.9, num_iter=8),
    lambda: STKR(Polynomial.monomial(2), beta=0.1),
    lambda: STKR(InverseLaplacian(0.9), beta=0.1),
    lambda: STKR(InverseLaplacian(0.9), beta=0.1, num_iter=8),
    lambda: STKR(TopD(8), beta=0.1),
    lambda: STKR(Polynomial.monomial(2), beta=0.1, setting="inductive"),
    lambda: STKR(InverseLaplacian(0.9), beta=0.1, setting="inductive"),
    lambda: LabelPropagation(eta=0.9, setting="inductive"),
]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("make", ESTIMATORS, ids=lambda f: "")
def test_every_estimator_takes_masks_and_ids_alike(make):
    data, train, mask = labeled_graph()
    hidden_mask = torch.zeros(N, dtype=torch.bool)
    hidden_mask[40:50] = True
    est = make()
    hid = (hidden_mask, ids(hidden_mask)) if est.setting == "inductive" else (None, None)
    evm = ~mask
    a = make().fit(data, mask, hidden_idx=hid[0]).decision_function(evm)
    b = make().fit(data, train, hidden_idx=hid[1]).decision_function(ids(evm))
    assert a.shape == (int(evm.sum()), C)
    torch.testing.assert_close(a, b)
    # fit(data) alone uses data.train_mask
    data.train_mask = mask
    torch.testing.assert_close(make().fit(data, hidden_idx=hid[0]).decision_function(evm), a)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_bool_mask_in_label_propagation_is_not_read_as_ids_0_and_1():
    """A boolean mask passed to LabelPropagation.fit selects the masked nodes, not the ids 0 and 1."""
    data, train, mask = labeled_graph()
    lp = LabelPropagation(eta=0.9).fit(data, mask)
    ref = LabelPropagation(eta=0.9).fit(data, train)
    torch.testing.assert_close(lp.yhat_, ref.yhat_)
    # every labeled node predicts its own class, not that of node 1
    assert torch.equal(lp.decision_function(mask).argmax(1), data.y[mask])
    out = lp.decision_function(mask)                    # the masked rows, not N rows from nodes 0 and 1
    assert out.shape == (int(mask.sum()), C)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("module", [lambda: LPModule(None, 0.9, clamp=False), lambda: LPModule(5, 0.9),
                                    lambda: STKRPropagation(InverseLaplacian(0.9), 0.1),
                                    lambda: STKRPropagation(Polynomial.monomial(2), 0.1, num_iter=4)])
def test_every_module_takes_masks_and_ids_alike(module):
    data, train, mask = labeled_graph(1)
    a = module()(data.y, data.edge_index, mask)
    b = module()(data.y, data.edge_index, train)
    torch.testing.assert_close(a, b)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_stkrcv_takes_masks():
    data, train, mask = labeled_graph(2)
    k = GraphKernel(data.edge_index, N)
    cv = STKRCV([LabelPropagationFilter(0.5)], num_classes=C)
    a = cv.grid_scores(k, mask, ~mask, y=data.y)[0][1]
    b = cv.grid_scores(k, train, ids(~mask), y=data.y)[0][1]
    torch.testing.assert_close(a, b)
    fitted = STKRCV([LabelPropagationFilter(0.5), LabelPropagationFilter(0.9)]).fit(data, mask, ~mask)
    assert torch.equal(fitted.predict(~mask), fitted.predict(ids(~mask)))


def test_estimators_use_the_index_helper_messages():
    data, _, _ = labeled_graph()
    with pytest.raises(ValueError, match="train_idx must be a LongTensor of node ids or a boolean mask of length 60"):
        STKR(Polynomial([1.0]), 0.1).fit(data, torch.ones(5, dtype=torch.bool))
    with pytest.raises(TypeError, match="idx must be"):
        LabelPropagation().fit(data, [0, 1, 2]).decision_function(torch.ones(3))
    with pytest.raises(ValueError, match="mask must be"):
        LPModule(3, 0.9)(data.y, data.edge_index, torch.ones(5, dtype=torch.bool))


# ----------------------------------------------------------------------------- PyG's names and keywords
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_pyg_spellings_are_accepted():
    data, train, mask = labeled_graph(3)
    a = LPModule(num_layers=3, alpha=0.9)(data.y, data.edge_index, mask)
    b = LPModule(3, 0.9)(data.y, data.edge_index, mask)     # PyG's positional order (num_layers, alpha)
    torch.testing.assert_close(a, b)
    e1 = LabelPropagation(alpha=0.9, num_layers=3).fit(data, mask)
    e2 = LabelPropagation(eta=0.9, num_iter=3).fit(data, mask)
    torch.testing.assert_close(e1.yhat_, e2.yhat_)
    assert e1.n_iter_ == 3


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_num_iter_is_the_fixed_budget_everywhere():
    data, train, mask = labeled_graph(4)
    a = STKR(InverseLaplacian(0.9), 0.5, num_iter=6).fit(data, mask)
    b = STKR(InverseLaplacian(0.9), 0.5, max_iter=6, tol=0).fit(data, mask)
    torch.testing.assert_close(a.h_, b.h_)
    assert a.n_iter_ == 6
    m1 = STKRPropagation(InverseLaplacian(0.9), 0.5, num_iter=6)(data.y, data.edge_index, mask)
    m2 = STKRPropagation(InverseLaplacian(0.9), 0.5, max_iter=6, tol=0)(data.y, data.edge_index, mask)
    torch.testing.assert_close(m1, m2)


def test_unknown_keyword_names_no_private_class():
    for make in (lambda: gs.LabelPropagation(bogus=1), lambda: gs.STKR(gs.TopD(4), 0.1, bogus=1),
                 lambda: LPModule(3, 0.9, bogus=1)):
        with pytest.raises(TypeError) as err:
            make()
        assert "bogus" in str(err.value) and not re.search(r"\b_[A-Za-z]", str(err.value))


# ----------------------------------------------------------------------------- help() and repr
PUBLIC_MODULES = ["graphstk", "graphstk.methods", "graphstk.nn", "graphstk.data", "graphstk.spectral",
                  "graphstk.operators", "graphstk.features", "graphstk.spectral.transforms"]
MUST_DOCUMENT = {"STKR": ["fit", "predict"], "LabelPropagation": ["fit", "predict", "forward"],
                 "STKRPropagation": ["forward"], "KernelRidge": ["fit", "predict"],
                 "RandomFeatureRidge": ["fit", "predict"], "RandomFourierFeatures": ["fit", "transform"]}


def _params(fn):
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return []
    return [p for p in sig.parameters if p not in ("self", "cls") and not p.startswith("_")
            and sig.parameters[p].kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)]


def _public_callables():
    import importlib
    seen = {}
    for modname in PUBLIC_MODULES:
        mod = importlib.import_module(modname)
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name)
            if inspect.isclass(obj) or inspect.isfunction(obj):
                seen[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return seen


NOT_YET: tuple[str, ...] = ()   # module prefixes exempt from the check (none)


def test_every_public_callable_has_a_docstring_naming_its_parameters():
    missing = []
    for qual, obj in _public_callables().items():
        if NOT_YET and qual.startswith(NOT_YET):
            continue
        doc = inspect.getdoc(obj) or ""
        if not doc:
            missing.append(f"{qual}: no docstring")
            continue
        if inspect.isclass(obj):
            if issubclass(obj, BaseException) or not callable(getattr(obj, "__init__", None)):
                continue
            init = obj.__init__
            if init is object.__init__ or "__init__" not in vars(obj) and not any(
                    "__init__" in vars(b) for b in obj.__mro__[1:-1]):
                continue
            params = _params(init)
            doc = doc + "\n" + (inspect.getdoc(init) or "")
        else:
            params = _params(obj)
        absent = [p for p in params if not re.search(rf"\b{re.escape(p)}\b", doc)]
        if absent:
            missing.append(f"{qual}: parameters {absent} not documented")
    assert not missing, "\n".join(missing)


def test_methods_users_call_have_docstrings_that_name_their_parameters():
    import graphstk.features as F
    import graphstk.methods as M
    import graphstk.nn as NN
    for cls_name, methods in MUST_DOCUMENT.items():
        cls = getattr(M, cls_name, None) or getattr(NN, cls_name, None) or getattr(F, cls_name)
        for m in methods:
            fn = getattr(cls, m, None)
            if fn is None:
                continue
            doc = inspect.getdoc(fn) or ""
            assert doc, f"{cls_name}.{m} has no docstring"
            for p in _params(fn):
                assert re.search(rf"\b{p}\b", doc), f"{cls_name}.{m}: parameter {p} not documented"
    sig = inspect.signature(STKR.__init__)
    for p in ("solver", "max_iter", "tol", "dtype", "device", "num_iter", "num_classes"):
        assert p in sig.parameters       # explicit keywords, no **kwargs
    assert not any(v.kind == v.VAR_KEYWORD for v in sig.parameters.values())


def test_readable_repr_with_hyperparameters():
    assert repr(STKR(InverseLaplacian(0.99), beta=1e-3)) == "STKR(beta=0.001, transform=InverseLaplacian(eta=0.99))"
    assert repr(LabelPropagation(alpha=0.9, num_layers=4)) == "LabelPropagation(alpha=0.9, num_layers=4)"
    assert repr(STKR()) == "STKR()" and repr(LabelPropagation()) == "LabelPropagation()"
    assert "at 0x" not in repr(STKR(TopD(8), 0.1, setting="inductive"))
    from sklearn.base import clone
    est = STKR(TopD(8), 0.1, solver="direct")
    assert repr(clone(est)) == repr(est)


# ----------------------------------------------------------------------------- unreachable nodes
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_unreachable_count_kept_on_the_estimator_in_a_loop():
    data, train, mask = labeled_graph(5)
    data.edge_index = data.edge_index[:, (data.edge_index < 50).all(0)]   # nodes 50.. isolated
    counts = []
    for _ in range(3):
        est = LabelPropagation(eta=0.5).fit(data, mask)
        est.decision_function()
        counts.append(est.n_unreachable_)
    assert counts == [10, 10, 10]
    assert est.unreachable_[50:].all() and not est.unreachable_[:50].any()
    assert "n_unreachable_" in (inspect.getdoc(LabelPropagation) or "")


# ----------------------------------------------------------------------------- bad inputs and faults
def test_classes_without_training_nodes_warn_and_num_classes_comes_from_training_labels():
    data, train, mask = labeled_graph(6)
    y = data.y.clone()
    y[train] = torch.where(y[train] == 1, torch.zeros_like(y[train]), y[train])   # class 1 never in train
    y[~mask] = -1
    y[55] = 10 ** 9                                                                  # a stray unlabeled label
    data.y = y
    with pytest.warns(ClassesWithoutLabelsWarning, match=r"classes 1\b"):
        est = STKR(InverseLaplacian(0.9), 0.1).fit(data, mask)
    assert est.num_classes_ == C and est.missing_classes_ == [1]
    with pytest.warns(ClassesWithoutLabelsWarning, match=r"classes 1, 3, 4"):
        LabelPropagation(num_classes=5).fit(data, mask)
    out = LPModule(3, 0.9, num_classes=C)(y, data.edge_index, mask)   # labels outside the mask are not read
    assert out.shape == (N, C)


def test_a_stray_huge_training_label_is_refused_before_allocating():
    data, train, mask = labeled_graph(6)
    data.y = data.y.clone()
    data.y[train[0]] = 10 ** 9
    with pytest.raises(ValueError, match="relabel the classes as 0..K-1 or pass num_classes"):
        STKR(InverseLaplacian(0.9), 0.1).fit(data, mask)
    with pytest.raises(ValueError, match="relabel the classes"):
        LPModule(3, 0.9)(data.y, data.edge_index, mask)


def test_nn_modules_flag_unreachable_nodes():
    data, train, mask = labeled_graph(7)
    ei = data.edge_index[:, (data.edge_index < 50).all(0)]
    for mod in (LPModule(10, 0.5, flag_unreachable=True), STKRPropagation(Polynomial.monomial(2), 0.1)):
        with pytest.warns(UnreachableNodesWarning, match="10 of 60"):
            mod(data.y, ei, mask)
        assert mod.n_unreachable_ == 10 and mod.unreachable_[50:].all()


def test_edgeless_graph_with_topd():
    data = Data(edge_index=torch.empty(2, 0, dtype=torch.long), y=torch.tensor([0, 1, 0, 1, 0, 1]), num_nodes=6)
    for support in ("labeled", "all"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = STKR(TopD(2, support=support), 1e-2).fit(data, [0, 1])
            want = torch.zeros(6, 2, dtype=torch.float64)
            want[0, 0] = want[1, 1] = 1.0                   # the training nodes keep their labels, as in Label-Prop
            assert torch.equal(est.class_scores(), want)
            assert torch.equal(est.decision_function(), want[:, 1] - want[:, 0])   # two classes: 1-D margin
            assert torch.equal(est.predict(), torch.tensor([0, 1, -1, -1, -1, -1]))
        assert est.n_unreachable_ == 4


@pytest.mark.parametrize("beta, err, text", [
    (float("inf"), ValueError, "beta must be a finite number"),
    ("1e-3", TypeError, "beta must be a real number, got str '1e-3' .*without quotes"),
    (0.0, ValueError, "beta must be > 0"),
    (float("nan"), ValueError, "finite"),
])
def test_beta_is_validated_at_the_boundary(beta, err, text):
    data, train, mask = labeled_graph()
    est = STKR(InverseLaplacian(0.9), beta)            # __init__ only stores; fit checks
    assert est.beta is beta or est.beta == beta
    with pytest.raises(err, match=text):
        est.fit(data, train)
    with pytest.raises(err, match=text):
        STKR(InverseLaplacian(0.9)).set_params(beta=beta).fit(data, train)
    with pytest.raises(err, match=text):
        STKRPropagation(InverseLaplacian(0.9), beta)
    with pytest.raises(err, match=text.replace("beta", "betas")):
        STKRCV([Polynomial.monomial(1)], [beta]).grid_scores(GraphKernel(data.edge_index, N), train, train, y=data.y)


def test_duplicate_edges_and_self_loops_warn_once_with_the_option():
    data, train, mask = labeled_graph(8)
    loops = torch.arange(5).repeat(2, 1)
    ei = torch.cat([data.edge_index, data.edge_index[:, :4], loops], 1)
    with pytest.warns(EdgeListWarning, match="4 duplicate edges .* and 5 self-loops .*clean_edges=True"):
        GraphKernel(ei, N)
    with warnings.catch_warnings():
        warnings.simplefilter("error", EdgeListWarning)
        clean = GraphKernel(ei, N, clean_edges=True)
        ref = GraphKernel(data.edge_index, N)
        dirty = Data(edge_index=ei, y=data.y, num_nodes=N)
        a = LabelPropagation(eta=0.5, clean_edges=True).fit(dirty, mask).yhat_
    torch.testing.assert_close(clean.S.to_dense(), ref.S.to_dense())
    torch.testing.assert_close(a, LabelPropagation(eta=0.5).fit(data, mask).yhat_)




# ----------------------------------------------------------------------------- one meaning per name
#: public class names defined in more than one module, each with the modules allowed to define it:
#: the scikit-learn estimator and PyG's module of the same name, in two namespaces
SHARED_CLASS_NAMES = {"LabelPropagation": {"graphstk/methods/estimators.py", "graphstk/nn/label_prop.py"}}


def test_one_meaning_per_public_class_name():
    import ast
    from pathlib import Path

    root = Path(gs.__file__).resolve().parent
    where: dict[str, set[str]] = {}
    for path in root.rglob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                where.setdefault(node.name, set()).add(path.relative_to(root.parent).as_posix())
    twice = {name: files for name, files in where.items() if len(files) > 1}
    assert twice == SHARED_CLASS_NAMES, f"public class names defined in several modules: {twice}"
    import graphstk.methods as methods
    import graphstk.nn as nn
    assert methods.LabelPropagation is not nn.LabelPropagation
    assert gs.LabelPropagation is methods.LabelPropagation      # the top-level name is the estimator's
