"""graphstk.methods.linear_filters: the filters on S~ = D~^{-1/2} (A + I) D~^{-1/2} against dense matrices,
and the papers' logistic-regression read-out."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from graphstk.methods.linear_filters import (FilteredRows, filtered_features, logistic_regression,
                                             logistic_regressions, readout_route,
                                             renormalized_adjacency)
from graphstk.spectral.filters import GGCMFilter, HeatKernelFilter, S2GCFilter, SGCFilter
from tests.dense_reference import random_graph

W, EI, _ = random_graph(20, 0.3, seed=1)
g = torch.Generator().manual_seed(0)
X = torch.rand(20, 5, generator=g, dtype=torch.float64)


def dense_S():
    A = W + torch.eye(20, dtype=torch.float64)
    d = A.sum(1)
    return A / d.sqrt()[:, None] / d.sqrt()[None, :]


def test_renormalized_adjacency():
    torch.testing.assert_close(renormalized_adjacency(EI, 20).to_dense(), dense_S())


def test_filtered_features_against_dense_powers():
    S, P = dense_S(), torch.linalg.matrix_power
    Xn = X / X.sum(1, keepdim=True)
    I = torch.eye(20, dtype=torch.float64)
    torch.testing.assert_close(filtered_features(EI, X, SGCFilter(2)), P(S, 2) @ Xn)
    torch.testing.assert_close(filtered_features(EI, X, S2GCFilter(4, 0.05)),
                               sum(0.95 * P(S, k) @ Xn + 0.05 * Xn for k in range(1, 5)) / 4)
    torch.testing.assert_close(filtered_features(EI, X, HeatKernelFilter(2.0, 10)), P(I - 0.2 * (I - S), 10) @ Xn)


def test_ggcm_negative_graphs_come_from_the_seed():
    f = GGCMFilter(3, 0.15, 4)
    a, b, c = (filtered_features(EI, X, f, seed=s) for s in (0, 0, 1))
    torch.testing.assert_close(a, b)
    assert not torch.allclose(a, c)


@pytest.mark.parametrize("filt", [SGCFilter(2), S2GCFilter(4, 0.05), HeatKernelFilter(2.0, 10),
                                  GGCMFilter(3, 0.15, 4), GGCMFilter(4, 0.15, 4, decline_neg=0.5)], ids=str)
def test_filtered_rows_are_the_rows_of_the_filtered_features(filt):
    """``(G^T E_idx)^T X~`` and ``G (X~ W^T)`` against the rows of ``G X~`` and their read-out (GGCM: the same
    negative graphs from the same seed); the logistic read-out on either gives the same log-probabilities
    (last epoch and best validation epoch)."""
    Z, R = filtered_features(EI, X, filt, seed=3), FilteredRows(EI, X, filt, seed=3)
    idx = torch.tensor([3, 0, 17, 9])
    torch.testing.assert_close(R.rows(idx), Z[idx])
    assert R.shape == tuple(Z.shape)
    lin = torch.nn.Linear(5, 3).double()
    torch.testing.assert_close(R.linear(lin.weight, lin.bias, idx), lin(Z[idx]).detach())
    y = torch.randint(0, 3, (20,), generator=torch.Generator().manual_seed(2))
    train, val, ev = torch.arange(8), torch.arange(8, 14), torch.arange(20)
    for kw in ({}, {"val": val, "y_val": y[val]}):
        torch.testing.assert_close(logistic_regression(R, y, train, ev, 1e-3, seed=1, **kw),
                                   logistic_regression(Z, y, train, ev, 1e-3, seed=1, **kw))
        for a, b in zip(logistic_regressions(R, y, train, ev, [1e-1, 1e-3], seed=1, **kw),
                        logistic_regressions(Z, y, train, ev, [1e-1, 1e-3], seed=1, **kw)):
            torch.testing.assert_close(a, b)


@pytest.mark.parametrize("filt", [SGCFilter(2), S2GCFilter(4, 0.05), HeatKernelFilter(2.0, 10), GGCMFilter(3, 0.15, 4)],
                         ids=str)
def test_filters_carried_through_in_column_blocks_give_the_numbers_of_one_call(filt, monkeypatch):
    """``filtered_features`` (19 feature columns) and ``FilteredRows.rows`` (11 rows, so 11 columns propagated) with
    the filter run on blocks of 8 columns equal one call's numbers bit for bit (GGCM: the same negative graphs)."""
    import graphstk.operators.base as OB

    Xw = torch.rand(20, 19, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    idx = torch.tensor([3, 0, 17, 9, 11, 1, 2, 4, 5, 19, 12])
    one = filtered_features(EI, Xw, filt, seed=3), FilteredRows(EI, Xw, filt, seed=3).rows(idx)
    monkeypatch.setattr(OB, "WIDE_BLOCK_BYTES", 0)
    monkeypatch.setattr(OB, "CACHE_BLOCK_BYTES", 8 * 8 * 20)
    blocked = filtered_features(EI, Xw, filt, seed=3), FilteredRows(EI, Xw, filt, seed=3).rows(idx)
    assert all(torch.equal(a, b) for a, b in zip(one, blocked))


def test_readout_route_from_the_sizes():
    assert readout_route(140, 9, 7, 1433) == "rows"            # Cora: 140 + 63 columns against 1433
    assert readout_route(300, 9, 15, 400) == "columns"         # 435 columns: more than the 400 features
    with pytest.raises(TypeError, match="filters SGC, S2GC, DGC, GGCM"):
        FilteredRows(EI, X, object())


def test_logistic_regression_is_the_papers_adam_readout():
    """A seeded torch.nn.Linear trained by full-batch Adam (lr 0.2, 100 epochs, weight decay as Adam's L2
    term), written out independently here."""
    y = torch.randint(0, 3, (20,), generator=g)
    y[:3] = torch.arange(3)
    train = torch.arange(12)
    out = logistic_regression(X, y, train, torch.arange(20), weight_decay=1e-2, seed=5)
    assert out.shape == (20, 3)
    torch.testing.assert_close(out.exp().sum(1), torch.ones(20, dtype=torch.float64))
    torch.manual_seed(5)
    lin = torch.nn.Linear(5, 3).double()
    opt = torch.optim.Adam(lin.parameters(), lr=0.2, weight_decay=1e-2)
    for _ in range(100):
        opt.zero_grad()
        F.cross_entropy(lin(X[train]), y[train]).backward()
        opt.step()
    torch.testing.assert_close(out, F.log_softmax(lin(X), 1).detach())
    again = logistic_regression(X, y, train, torch.arange(20), weight_decay=1e-2, seed=5)
    torch.testing.assert_close(out, again)
    assert not torch.allclose(out, logistic_regression(X, y, train, torch.arange(20), weight_decay=1e-2, seed=6))


def _adam_readout(Xd, y, train, val, weight_decay, *, seed, epochs):
    """The papers' read-out written out independently: a seeded ``torch.nn.Linear`` trained by full-batch Adam
    (lr 0.2). Returns the log-probabilities of every row at the last epoch and at the epoch of best accuracy on
    ``val`` (ties: the later epoch), and that epoch."""
    torch.manual_seed(seed)
    lin = torch.nn.Linear(Xd.shape[1], int(y.max()) + 1).double()
    opt = torch.optim.Adam(lin.parameters(), lr=0.2, weight_decay=weight_decay)
    best, kept, best_epoch = -1.0, None, None
    for epoch in range(epochs):
        opt.zero_grad()
        F.cross_entropy(lin(Xd[train]), y[train]).backward()
        opt.step()
        acc = (lin(Xd[val]).argmax(1) == y[val]).double().mean().item()
        if acc >= best:
            best, kept, best_epoch = acc, F.log_softmax(lin(Xd), 1).detach(), epoch
    return F.log_softmax(lin(Xd), 1).detach(), kept, best_epoch


def test_logistic_regression_best_validation_epoch():
    """With validation nodes the read-out keeps the epoch of best validation accuracy, ties going to the
    later epoch (GGCM's released read-out), written out independently here; without them, the last epoch."""
    y = torch.randint(0, 3, (20,), generator=torch.Generator().manual_seed(0))
    y[:3] = torch.arange(3)
    train, val = torch.arange(8), torch.arange(8, 14)
    out = logistic_regression(X, y, train, torch.arange(20), weight_decay=1e-3, seed=0, epochs=30, val=val,
                              y_val=y[val])
    final, kept, last_best = _adam_readout(X, y, train, val, 1e-3, seed=0, epochs=30)
    torch.testing.assert_close(out, kept)
    last = logistic_regression(X, y, train, torch.arange(20), weight_decay=1e-3, seed=0, epochs=30)
    torch.testing.assert_close(last, final)
    assert last_best < 29, "the test needs an earlier best epoch to tell the two read-outs apart"
    with pytest.raises(ValueError, match="val and y_val go together: .* got only val"):
        logistic_regression(X, y, train, torch.arange(20), weight_decay=1e-3, val=val)


@pytest.mark.parametrize("best_val", [False, True], ids=["last-epoch", "best-val-epoch"])
def test_read_outs_trained_side_by_side_are_each_the_read_out_alone(best_val):
    """``logistic_regressions`` over several weight decays (one wide product per epoch) gives, for each decay, the
    read-out trained alone, written out independently here (a seeded ``torch.nn.Linear``, its own Adam); the
    validation epochs it keeps are each read-out's own, so the decays are chosen where they disagree."""
    gen = torch.Generator().manual_seed(7)
    Xr = torch.rand(40, 6, generator=gen, dtype=torch.float64)
    y = torch.randint(0, 3, (40,), generator=gen)
    y[:3] = torch.arange(3)
    train, val, ev = torch.arange(12), torch.arange(12, 24), torch.arange(40)
    decays = [1.0, 1e-2, 0.0, 1e-2]
    kw = {"val": val, "y_val": y[val]} if best_val else {}
    together = logistic_regressions(Xr, y, train, ev, decays, seed=4, epochs=40, **kw)
    assert len(together) == len(decays)
    for wd, out in zip(decays, together):
        final, kept, _ = _adam_readout(Xr, y, train, val, wd, seed=4, epochs=40)
        torch.testing.assert_close(out, kept if best_val else final)
    assert not torch.allclose(together[0], together[2]), "the decays must give different read-outs"
    torch.testing.assert_close(together[1], together[3])
    with pytest.raises(ValueError, match="weight_decays is empty"):
        logistic_regressions(Xr, y, train, ev, [])


def test_closed_form_peers_are_their_papers():
    """SGC: K=2 (Wu et al. 2019, Eq. 8); S2GC: K=16, alpha=0.05 (Zhu & Koniusz 2021, Cora setting);
    DGC: K=250, T in {5.27, 3.78} (Wang et al. 2021, Cora / CiteSeer); GGCM: K=16, alpha=0.15,
    decline_neg in {0.5, 1.0} (Wang et al. 2023); read-out weight decays: SGC's range [1e-10, 1e-4]
    widened upwards, strongest first."""
    import graphstk.experiments.registrations  # noqa: F401  (registers the methods)
    from graphstk.experiments.registry import get_method
    from graphstk.methods.linear_filters import WEIGHT_DECAYS

    readout = {"lr": 0.2, "readout": "last"}
    assert get_method("SGC").fixed == {"filter": "sgc", "K": 2, **readout}
    assert get_method("S2GC").fixed == {"filter": "s2gc", "K": 16, "alpha": 0.05, **readout}
    assert get_method("DGC").fixed == {"filter": "dgc", "K": 250, **readout}
    assert get_method("DGC").grid["t"] == [5.27, 3.78]
    assert get_method("GGCM").fixed == {"filter": "ggcm", "K": 16, "alpha": 0.15, **readout}
    assert get_method("GGCM").grid["decline_neg"] == [0.5, 1.0]
    for name in ("SGC", "S2GC", "DGC", "GGCM"):
        assert get_method(name).grid["weight_decay"] == list(WEIGHT_DECAYS)
    assert WEIGHT_DECAYS[0] > 1e-4 and WEIGHT_DECAYS[-1] == 1e-10
    assert list(WEIGHT_DECAYS) == sorted(WEIGHT_DECAYS, reverse=True)


#: DGC's released per-dataset settings (Wang et al. 2021, the authors' code: ``main.py --dataset cora --T 5.27
#: --K 250 --lr 0.156 --weight_decay 3.544e-5``; citeseer ``--T 3.78 --K 300 --lr 1.39 --weight_decay 2e-4``)
DGC_RELEASED = {"Cora": {"t": 5.27, "K": 250, "lr": 0.156, "weight_decay": 3.544e-5},
                "CiteSeer": {"t": 3.78, "K": 300, "lr": 1.39, "weight_decay": 2e-4}}
#: GGCM's released per-dataset settings (Wang et al. 2023, the authors' ``ggcm.py``: 16 steps, alpha 0.15, lr 0.2,
#: 100 epochs, the epoch of best validation accuracy kept; CiteSeer ``--decline_neg 1.0 --wd 1e-3``, the
#: script's defaults; Cora ``--decline_neg=0.5 --wd=1e-5``)
GGCM_RELEASED = {"Cora": {"K": 16, "alpha": 0.15, "lr": 0.2, "readout": "best-val", "decline_neg": 0.5,
                          "weight_decay": 1e-5},
                 "CiteSeer": {"K": 16, "alpha": 0.15, "lr": 0.2, "readout": "best-val", "decline_neg": 1.0,
                              "weight_decay": 1e-3}}


def released_rows(method: str, keys) -> dict:
    """``{dataset: setting}`` of the one-dataset tasks of ``configs/planetoid_baselines.yaml`` that run
    ``method`` away from its registered read-out (one grid point each)."""
    from graphstk.experiments.config import load_config
    from graphstk.experiments.registry import get_method

    fixed = get_method(method).fixed
    out = {}
    for task in load_config("configs/planetoid_baselines.yaml").tasks:
        for m in task.methods:
            if m.label == method and any(m.options.get(k, fixed[k]) != fixed[k] for k in ("lr", "readout")):
                (ds,) = [d.name for d in task.datasets]
                point = {**fixed, **m.options, **{k: v for k, (v,) in m.grid.items()}}
                out[ds] = {k: point[k] for k in keys}
    return out


def test_planetoid_baselines_config_runs_dgc_and_ggcm_with_their_released_settings():
    """The recorded Planetoid table runs DGC and GGCM as their authors released them: per dataset one
    setting (one grid point), beside the validation-chosen registrations."""
    from graphstk.experiments.registry import get_method

    assert released_rows("DGC", ("t", "K", "lr", "weight_decay")) == DGC_RELEASED
    assert released_rows("GGCM", tuple(GGCM_RELEASED["Cora"])) == GGCM_RELEASED
    assert get_method("DGC").fixed["K"] == DGC_RELEASED["Cora"]["K"]
