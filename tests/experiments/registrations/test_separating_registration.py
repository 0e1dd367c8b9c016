"""The separating-kernel methods by name (one-class task) and the Table 2 config."""
import os

import numpy as np
import pytest
import torch
from sklearn.svm import OneClassSVM

from graphstk.experiments.config import load_config
from graphstk.experiments.registry import MethodInput, get_method
from graphstk.methods import ParzenWindow, SpectralSupportEstimator
from graphstk.methods.separating import FILTERS, width_heuristic

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def _problem(seed=0):
    rng = np.random.default_rng(seed)
    X = torch.from_numpy(np.vstack([rng.normal(size=(40, 4)), 2.5 + rng.normal(size=(20, 4))]))
    y = torch.full((60,), -1, dtype=torch.long)
    train = torch.arange(0, 30)
    y[train] = 0
    return MethodInput(X=X, data=None, y=y, labeled=train, unlabeled=torch.empty(0, dtype=torch.long),
                   eval=torch.arange(30, 60), num_classes=1, seed=seed)


def _call(name, points):
    e = get_method(name)
    return e.fit_predict(_problem(), [{**e.fixed, **p} for p in points])


def test_registered_names_and_task():
    for name in ["Spectral", "Parzen", "1CSVM"] + [f"Spectral-{f}" for f in FILTERS]:
        e = get_method(name)
        assert e.task == "one-class" and e.needs == frozenset({"features"})
    assert get_method("Spectral").fixed["filter"] == "tikhonov"
    assert get_method("1CSVM").fixed["nu"] == 0.9


def test_spectral_scores_equal_the_estimator_and_share_the_path():
    p = _problem()
    X = p.X
    (auto,) = _call("Spectral", [{"lam": "auto"}])
    est = SpectralSupportEstimator().fit(X[p.labeled])
    torch.testing.assert_close(auto, est.score_samples(X[p.eval]))
    lams = [1e-3, 1e-2, 0.1]
    got = _call("Spectral-landweber", [{"lam": v} for v in lams])
    for v, s in zip(lams, got):
        ref = SpectralSupportEstimator(filter="landweber", lam=v).fit(X[p.labeled]).score_samples(X[p.eval])
        torch.testing.assert_close(s, ref)


def test_baselines_by_name():
    p = _problem()
    Xtr, Z = p.X[p.labeled], p.X[p.eval]
    (parzen,) = _call("Parzen", [{}])
    torch.testing.assert_close(parzen, ParzenWindow().fit(Xtr).score_samples(Z))
    (svm,) = _call("1CSVM", [{}])
    s = width_heuristic(Xtr)
    ref = OneClassSVM(kernel="rbf", gamma=1 / (2 * s * s), nu=0.9).fit(Xtr.numpy()).decision_function(Z.numpy())
    np.testing.assert_allclose(svm.numpy(), ref, rtol=1e-10, atol=1e-12)


def test_table2_config_parses():
    cfg = load_config(os.path.join(ROOT, "configs", "separating_table2.yaml"))
    tasks = cfg.all_tasks()
    datasets = {d.name for t in tasks for d in t.datasets}
    assert datasets == {"MNIST 3vs8", "MNIST 8vs3", "MNIST 1vs7", "MNIST 9vs4"}
    methods = {m.label for t in tasks for m in t.methods}
    assert methods == {"Spectral", "Parzen", "1CSVM"} | {f"Spectral-{f}" for f in FILTERS}
    for t in tasks:
        assert t.protocol == "one-class" and t.paper == "separating_kernels" and len(t.seeds) == 20
        o = t.protocol_options
        assert (o["train_pool"], o["test_pool"]) == (None, 1000)
        assert (o["n_train"], o["n_test"], o["balanced"], o["pool_seed"]) == (500, 200, True, 0)


def test_paper_numbers_table2():
    from graphstk.experiments.paper import paper_numbers
    d = paper_numbers("separating_kernels")
    cells = {(e["dataset"], e["method"]): e["mean"] for e in d["entries"]}
    assert cells[("MNIST 3vs8", "Spectral")] == 0.837 and cells[("MNIST 9vs4", "1CSVM")] == 0.753
    assert cells[("CBCL", "Parzen")] == 0.878 and len(cells) == 15
    assert all(e["metric"] == "auc" and 0 <= e["mean"] <= 1 for e in d["entries"])


@pytest.mark.parametrize("bad", [{"lam": -1.0}, {"lam": 0.0}])
def test_bad_grid_values(bad):
    with pytest.raises(ValueError, match="lam must be"):
        _call("Spectral", [bad])
