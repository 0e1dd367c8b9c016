"""The STKR methods by name (graphstk.experiments.registrations.stkr) against the engine called directly."""
from __future__ import annotations

import torch

from graphstk.experiments.kernels import KernelCache
from graphstk.experiments.registrations import stkr
from graphstk.experiments.registry import MethodInput, get_method
from graphstk.methods import STKRCV
from graphstk.operators import GraphKernel
from graphstk.spectral.transforms import InverseLaplacian, LabelPropagationFilter, TopD


def _graph(n=60, seed=0):
    from torch_geometric.data import Data
    from torch_geometric.utils import to_undirected

    g = torch.Generator().manual_seed(seed)
    ei = to_undirected(torch.randint(0, n, (2, 4 * n), generator=g))
    ei = ei[:, ei[0] != ei[1]]
    y = torch.arange(n) % 3
    return Data(edge_index=ei, y=y, num_nodes=n)


def test_every_label_declares_the_family_keys_with_one_declaration_each():
    for label, (family, setting, defaults) in stkr.STKR_METHODS.items():
        e = get_method(label)
        assert e.engine == family.name and "engine" not in e.fixed
        assert set(family.required) <= set(e.grid) and set(defaults) == set(e.grid) and e.setting == setting
        for k in (*family.required, *family.optional):
            assert e.param(k).low == stkr.PARAMS[k].low and e.param(k).optional == (k in family.optional)
        assert all(e.grid[k] == stkr.DEFAULT_GRID[k] for k in e.grid)


def _split_problem(data, kernels=None, options=None, hide_val=True):
    train, val, test = torch.arange(0, 12), torch.arange(12, 24), torch.arange(24, 36)
    y = torch.full((60,), -1)
    y[train] = data.y[train]
    rest = torch.ones(60, dtype=torch.bool)
    rest[torch.cat([train, val, test] if hide_val else [train])] = False
    return MethodInput(X=None, data=data, y=y, labeled=train, unlabeled=torch.nonzero(rest).flatten(), eval=val,
                   num_classes=3, options=options or {"dtype": "float64", "solver": "auto"}, kernels=kernels)


def test_scores_equal_stkrcv_on_the_kernel_over_the_visible_nodes():
    data = _graph()
    prob = _split_problem(data)
    train, val, test = torch.arange(0, 12), torch.arange(12, 24), torch.arange(24, 36)
    e = get_method("SP-Lap (i)")
    points = [{**e.fixed, "eta": eta, "beta": b} for eta in (0.9, 0.99) for b in (1.0, 1e-2)]
    got = e.fit_predict(prob, points)
    K = GraphKernel(data.edge_index, 60, hidden=torch.cat([val, test]), normalization="lazy")   # the default
    cv = STKRCV([InverseLaplacian(0.9), InverseLaplacian(0.99)], [1.0, 1e-2], num_classes=3, solver="auto")
    ref = {(p["transform"].eta, p["beta"]): s for p, s in cv.grid_scores(K, train, val, y=prob.y)}
    for p, s in zip(points, got):
        assert torch.equal(s, ref[(p["eta"], p["beta"])])
    assert stkr.graph_kernel(prob) is not stkr.graph_kernel(prob)      # no run: no cache shared between calls
    kernels = KernelCache()
    run_prob = _split_problem(data, kernels)
    assert stkr.graph_kernel(run_prob) is stkr.graph_kernel(run_prob)  # one kernel per (graph, visible set) in a run
    assert kernels.built == 1


def test_options_reach_the_engine():
    """``support`` (top-d), ``labels``, ``step_size`` and the budgets ``T`` go into STKRCV's transforms and options."""
    data = _graph()
    options = {"dtype": "float64", "solver": "auto", "step_size": "paper"}
    prob = _split_problem(data, options=options, hide_val=False)
    train, val = torch.arange(0, 12), torch.arange(12, 24)
    K = GraphKernel(data.edge_index, 60)                                   # Label-Prop's kernel, Eq. 23
    lazy = GraphKernel(data.edge_index, 60, normalization="lazy")           # the STKR methods' default
    e = get_method("SP-topd (t)")
    points = [{**e.fixed, "support": "all", "d": d, "beta": 1e-2} for d in (4, 8)]
    ref = STKRCV([TopD(4, support="all"), TopD(8, support="all")], [1e-2], num_classes=3).grid_scores(
        lazy, train, val, y=prob.y)
    for (_, r), s in zip(ref, e.fit_predict(prob, points)):
        assert torch.equal(r, s)
    e = get_method("LP (t)")
    points = [{**e.fixed, "labels": "centered", "eta": eta, "T": T} for eta in (0.5, 0.9) for T in (2, 8)]
    cv = STKRCV([LabelPropagationFilter(0.5), LabelPropagationFilter(0.9)], num_iter=[2, 8], labels="centered",
                num_classes=3, step_size="paper")
    for (_, r), s in zip(cv.grid_scores(K, train, val, y=prob.y), e.fit_predict(prob, points)):
        assert torch.equal(r, s)


def test_kernel_pca_of_a_run_solves_each_operator_once():
    """The transductive top-d rows of a run whose labeled nodes stay the same between seeds (Planetoid's
    public split) share one eigendecomposition through the run's ``KernelCache.eigen``; other labeled
    nodes are another ``S_UU``, solved again; the scores equal a call without a cache."""
    data = _graph()
    kernels = KernelCache()
    e = get_method("SP-topd (t)")
    points = [{**e.fixed, "d": d, "beta": b} for d in (4, 8) for b in (1.0, 1e-2)]
    seed0 = e.fit_predict(_split_problem(data, kernels, hide_val=False), points)
    seed1 = e.fit_predict(_split_problem(data, kernels, hide_val=False), points)
    assert (kernels.eigen.computed, kernels.eigen.hits) == (1, 1)
    alone = e.fit_predict(_split_problem(data, hide_val=False), points)
    for a, b, c in zip(seed0, seed1, alone):
        assert torch.equal(a, b) and torch.equal(a, c)
    import dataclasses

    other = _split_problem(data, kernels, hide_val=False)
    e.fit_predict(dataclasses.replace(other, labeled=torch.arange(0, 11)), points)
    assert kernels.eigen.computed == 2
    kernels.clear()
    assert len(kernels.eigen) == 0


def test_feature_stkr_of_a_run_computes_the_row_norms_once_per_graph():
    """FeatureSTKR by name keeps the filtered rows' norms and the features' CSR form in the run's
    ``KernelCache.feature_cache``: a second split of the same graph and features adds no entry and makes neither
    again, and the scores equal a call made outside a run."""
    data = _graph()
    g = torch.Generator().manual_seed(1)
    X = torch.rand(60, 30, generator=g, dtype=torch.float64)
    X[torch.rand(60, 30, generator=g) < 0.7] = 0.0
    X[:, 0] += 0.05
    e = get_method("FeatureSTKR")
    points = [{**e.fixed, "depth": 4, "a": 0.5, "mix": mix, "kernel": "cosine-gaussian", "sigma": 0.7,
               "beta": 1e-2, "features": "sum"} for mix in ("last", "dyadic")]
    kernels = KernelCache()

    def split(seed, run_kernels):
        train = torch.randperm(60, generator=torch.Generator().manual_seed(seed))[:9]
        y = torch.full((60,), -1, dtype=torch.long)
        y[train] = data.y[train]
        rest = torch.tensor([i for i in range(60) if i not in train.tolist()])
        return MethodInput(X=X, data=data, y=y, labeled=train, unlabeled=rest, eval=rest, num_classes=3,
                           kernels=run_kernels)

    def norms():
        return [k for k in kernels.feature_cache if k != "csr_features"]

    first = e.fit_predict(split(0, kernels), points)
    assert len(norms()) == 1
    csr = kernels.feature_cache["csr_features"]
    assert csr[0] is X                              # the features' CSR form, made from this matrix
    second = e.fit_predict(split(1, kernels), points)
    assert len(norms()) == 1
    assert kernels.feature_cache["csr_features"] is csr      # made once: the second split reads it
    for got, alone in zip(first + second, e.fit_predict(split(0, None), points) + e.fit_predict(split(1, None), points)):
        torch.testing.assert_close(got, alone, rtol=1e-9, atol=1e-12)
