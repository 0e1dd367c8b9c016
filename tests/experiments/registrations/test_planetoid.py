"""The registrations of the Planetoid and Shchur tables: every live baseline's registered defaults are its paper's: the GNN presets (pinned key by key in
tests/methods/test_gnn.py) as each registration's default, the closed-form peers' filters and read-out grid."""
from __future__ import annotations

import graphstk.experiments.registrations  # noqa: F401  (registers the methods)
from graphstk.experiments.registry import get_method
from graphstk.methods.gnn import DEFAULT_PRESET, PRESETS
from graphstk.methods.linear_filters import WEIGHT_DECAYS


def test_gnn_registrations_default_to_the_planetoid_setting_and_declare_every_hyperparameter():
    for name in ("GCN", "GAT", "APPNP", "MLP", "MLP+C&S"):
        e = get_method(name)
        assert e.fixed == {"model": name, "preset": DEFAULT_PRESET} and DEFAULT_PRESET == "kipf-welling"
        assert e.options == ("preset",)
        assert {"features", "weight_decay", "lr", "dropout", "hidden", "epochs", "patience"} <= set(e.gridable)
        assert set(e.param("preset").choices) == set(PRESETS[name])


def test_closed_form_peers_are_their_papers():
    """SGC: K=2 (Wu et al. 2019, Eq. 8); S2GC: K=16, alpha=0.05 (Zhu & Koniusz 2021, Cora setting);
    DGC: K=250, T in {5.27, 3.78} (Wang et al. 2021, Cora / CiteSeer); GGCM: K=16, alpha=0.15,
    decline_neg in {0.5, 1.0} (Wang et al. 2023); read-out weight decays: SGC's range [1e-10, 1e-4]
    widened upwards, strongest first."""
    assert get_method("SGC").fixed == {"filter": "sgc", "K": 2}
    assert get_method("S2GC").fixed == {"filter": "s2gc", "K": 16, "alpha": 0.05}
    assert get_method("DGC").fixed == {"filter": "dgc", "K": 250} and get_method("DGC").grid["t"] == [5.27, 3.78]
    assert get_method("GGCM").fixed == {"filter": "ggcm", "K": 16, "alpha": 0.15}
    assert get_method("GGCM").grid["decline_neg"] == [0.5, 1.0]
    for name in ("SGC", "S2GC", "DGC", "GGCM"):
        assert get_method(name).grid["weight_decay"] == list(WEIGHT_DECAYS)
    assert WEIGHT_DECAYS[0] > 1e-4 and WEIGHT_DECAYS[-1] == 1e-10
    assert list(WEIGHT_DECAYS) == sorted(WEIGHT_DECAYS, reverse=True)
