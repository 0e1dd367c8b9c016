"""Graph baselines of the planetoid / per-class-splits protocols, registered by name: feature-aware STKR
(``FeatureSTKR`` and its variants, ``KRR (features)``), ``SGC (ridge)``, ``Label-Prop``, the GNNs (``GCN``,
``GAT``, ``APPNP``, ``MLP``, ``MLP+C&S``; :data:`GNN_PARAMS`) and the non-neural filters with a logistic
read-out (``SGC``, ``S2GC``, ``DGC``, ``GGCM``). Details: docs/experiments.md, "Graph baselines".
"""
from __future__ import annotations

import warnings

import scipy.sparse as sp
import torch
from torch_geometric.nn.conv.gcn_conv import gcn_norm

from graphstk.methods.estimators import LabelPropagation
from graphstk.methods.feature_propagation import sparse_features
from graphstk.methods.feature_stkr import DEFAULT_GRID, feature_stkr_scores, row_normalize
from graphstk.methods.gnn import DEFAULT_PRESET, PRESETS, Features, gnn_setting, train_gnn
from graphstk.methods.linear_filters import (READOUT_LR, WEIGHT_DECAYS, FilteredRows, filtered_features, ggcm_filter,
                                             logistic_regressions, readout_route)
from graphstk.spectral.filters import HeatKernelFilter, S2GCFilter, SGCFilter

from ..params import Param
from ..registry import MethodEntry, MethodInput, register_method

__all__ = ["feature_stkr_fit_predict", "sgc_ridge_fit_predict", "label_prop_fit_predict", "gnn_fit_predict",
           "filter_lr_fit_predict", "ggcm_lr_fit_predict"]

_FEATURES_GRAPH = frozenset({"features", "graph"})


def _hidden(problem: MethodInput) -> torch.Tensor:
    seen = torch.zeros(problem.num_points, dtype=torch.bool)
    seen[problem.fit_points] = True
    return (~seen).nonzero().flatten()


def _features(problem: MethodInput) -> torch.Tensor:
    X = problem.X
    return torch.from_numpy(X.toarray()) if sp.issparse(X) else torch.as_tensor(X)


def _csr_features(problem: MethodInput) -> sp.csr_matrix:
    """The features as a float64 CSR matrix (:func:`~graphstk.methods.feature_propagation.sparse_features`), for the
    methods that read them sparse. The protocol hands every split of a dataset the same feature matrix, so the run's
    cache keeps its CSR form beside it (held with the matrix it came from, checked by identity): one conversion per
    dataset, not one per split and method."""
    cache = None if problem.kernels is None else problem.kernels.feature_cache
    held = None if cache is None else cache.get("csr_features")
    if held is not None and held[0] is problem.X:
        return held[1]
    csr = sparse_features(problem.X)
    if cache is not None:
        cache["csr_features"] = (problem.X, csr)
    return csr


def feature_stkr_fit_predict(problem: MethodInput, points: list[dict]) -> list[torch.Tensor]:
    """Feature-aware STKR for every grid point; ``setting: inductive`` hides the nodes outside the fit points. The
    norms of the filtered rows and the feature-neighbour lists are kept in the run's cache, so the splits of one
    graph compute them once."""
    inductive = points[0].get("setting", "transductive") == "inductive"
    hidden = _hidden(problem) if inductive else None
    keys = ("features", "depth", "a", "mix", "kernel", "sigma", "beta", "filter", "alpha", "t", "decline_neg",
            "reuse_eta", "reuse_beta", "smooth_eta", "knn", "knn_weight")
    return feature_stkr_scores(problem.data.edge_index, _csr_features(problem), problem.y, problem.labeled,
                               problem.eval, [{k: p[k] for k in keys if k in p} for p in points], hidden=hidden,
                               num_classes=problem.num_classes,
                               cache=None if problem.kernels is None else problem.kernels.feature_cache)


def sgc_ridge_fit_predict(problem: MethodInput, points: list[dict]) -> list[torch.Tensor]:
    """Ridge on SGC's filtered features ``S~^K X`` (linear kernel, ``alpha = (Z_L Z_L^T + n beta I)^{-1} Y``)."""
    X = row_normalize(_features(problem).double())
    n_nodes = X.shape[0]
    ei, w = gcn_norm(problem.data.edge_index, None, n_nodes, add_self_loops=True, dtype=torch.float64)
    A = torch.sparse_coo_tensor(ei.flip(0), w, (n_nodes, n_nodes)).coalesce()
    L, E = problem.labeled, problem.eval
    Y = torch.nn.functional.one_hot(problem.y[L], problem.num_classes).double()
    Z, depth, out, feats = X, 0, [], {}
    for K in sorted({int(p["K"]) for p in points}):
        while depth < K:
            Z, depth = torch.sparse.mm(A, Z), depth + 1
        feats[K] = Z
    for p in points:
        Z = feats[int(p["K"])]
        G = Z[L] @ Z[L].T
        alpha = torch.linalg.solve(G + L.numel() * float(p["beta"]) * torch.eye(L.numel(), dtype=G.dtype), Y)
        out.append(Z[E] @ (Z[L].T @ alpha))
    return out


def label_prop_fit_predict(problem: MethodInput, points: list[dict]) -> list[torch.Tensor]:
    """Label propagation (Eq. 22) solved to tolerance, one fit per ``eta``."""
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # unreachable nodes: all-zero rows, scored as wrong
        for p in points:
            est = LabelPropagation(eta=float(p["eta"]), num_classes=problem.num_classes, clean_edges=True)
            out.append(est.fit(problem.data, problem.labeled).class_scores(problem.eval))
    return out


def gnn_fit_predict(problem: MethodInput, points: list[dict]) -> list[torch.Tensor]:
    """A GNN (``model`` fixed key) trained on the labeled nodes for each grid point: the hyperparameters
    of its ``preset`` (:data:`graphstk.methods.gnn.PRESETS`), overridden by the point's; early stopping
    on the validation nodes the protocol hands over (``MethodInput.val``), when the setting has a patience."""
    out, feats = [], {}
    for p in points:
        hp = gnn_setting(p["model"], p["preset"], **{k: p[k] for k in p if k in GNN_PARAMS and k != "preset"})
        if hp["features"] not in feats:
            feats[hp["features"]] = Features(_csr_features(problem), hp["features"])
        out.append(train_gnn(p["model"], feats[hp["features"]], problem.data.edge_index, problem.y, problem.labeled,
                             problem.eval, seed=problem.seed, val=problem.val, y_val=problem.y_val,
                             **{k: v for k, v in hp.items() if k != "features"}))
    return out


def _filter_of(problem: MethodInput, p: dict):
    if p["filter"] == "sgc":
        return SGCFilter(int(p["K"]))
    if p["filter"] == "s2gc":
        return S2GCFilter(int(p["K"]), float(p["alpha"]))
    if p["filter"] == "dgc":
        return HeatKernelFilter(float(p["t"]), int(p["K"]))
    if p["filter"] == "ggcm":
        return ggcm_filter(problem.data.edge_index, problem.num_points, K=int(p["K"]), alpha=float(p["alpha"]),
                           decline_neg=float(p["decline_neg"]))
    raise ValueError(f"unknown filter {p['filter']!r}")


def filter_lr_fit_predict(problem: MethodInput, points: list[dict]) -> list[torch.Tensor]:
    """Logistic regression (weight decay ``weight_decay``) on ``s(S~) X`` for the filter of each point;
    the filtered features of each distinct filter computed once, or read by rows (``FilteredRows``) where
    ``readout_route`` finds fewer columns to propagate that way, and the read-outs of its weight decays trained
    side by side (:func:`~graphstk.methods.linear_filters.logistic_regressions`)."""
    if any(p["readout"] == "best-val" for p in points) and (problem.val is None or problem.val.numel() == 0):
        raise ValueError("readout 'best-val' keeps the epoch of best validation accuracy and needs validation "
                         "nodes, which only the planetoid and per-class-splits protocols hand over; with this "
                         "protocol write readout: 'last'")
    out = [None] * len(points)
    filters = [_filter_of(problem, p) for p in points]
    for f in dict.fromkeys(filters):            # one filter at a time: its features (or rows) dropped after it
        idx = [i for i, g in enumerate(filters) if g == f]
        n_rows = problem.labeled.numel() + (problem.val.numel() if points[idx[0]]["readout"] == "best-val" else 0)
        route = readout_route(n_rows, len(idx), problem.num_classes, problem.X.shape[1])
        feats = FilteredRows(problem.data.edge_index, _csr_features(problem), f, seed=problem.seed) \
            if route == "rows" else filtered_features(problem.data.edge_index, _features(problem), f, seed=problem.seed)
        by_readout: dict[tuple, list[int]] = {}      # (lr, readout) -> the points trained side by side
        for i in idx:
            by_readout.setdefault((float(points[i]["lr"]), points[i]["readout"]), []).append(i)
        for (lr, readout), same in by_readout.items():
            best_val = readout == "best-val"
            scores = logistic_regressions(feats, problem.y, problem.labeled, problem.eval,
                                          [float(points[i]["weight_decay"]) for i in same], seed=problem.seed, lr=lr,
                                          val=problem.val if best_val else None,
                                          y_val=problem.y_val if best_val else None)
            for i, score in zip(same, scores):
                out[i] = score
        del feats
    return out


def ggcm_lr_fit_predict(problem: MethodInput, points: list[dict]) -> list[torch.Tensor]:
    """GGCM: :func:`filter_lr_fit_predict` with negative graphs drawn from the problem's seed."""
    return filter_lr_fit_predict(problem, points)


# closed forms: the same numbers for every seed, so the planetoid protocol runs them once
for _fn in (feature_stkr_fit_predict, sgc_ridge_fit_predict, label_prop_fit_predict):
    _fn.deterministic = True

_STKR_GRID = {k: list(v) for k, v in DEFAULT_GRID.items()}
#: feature neighbours per node and their edge weight (``feature_neighbor_graph``), beside the registered grid
FEATURE_KNN_GRID = {"knn": [10, 20, 40, 80], "knn_weight": [0.01, 0.03, 0.1]}
_BASE = {k: list(v) for k, v in DEFAULT_GRID.items() if k not in ("depth", "a", "mix")}
_T, _I = {"setting": "transductive"}, {"setting": "inductive"}
for _name, _grid, _fixed, _what in (
        ("FeatureSTKR", _STKR_GRID, _T, "feature-aware STKR: cosine-Gaussian kernel on lazy-walk-filtered features "
                                         "(sum-1 or TF-IDF rows), ridge (transductive)"),
        ("FeatureSTKR (i)", _STKR_GRID, _I,
         "feature-aware STKR, inductive: test nodes and their edges hidden, out-of-sample rows (Eq. 23)"),
        ("FeatureSTKR (feature kNN)", {**_STKR_GRID, **FEATURE_KNN_GRID}, _T,
         "feature-aware STKR on the graph plus feature-neighbour edges (TF-IDF cosine), transductive"),
        ("FeatureSTKR (i, feature kNN)", {**_STKR_GRID, **FEATURE_KNN_GRID}, _I,
         "feature-aware STKR, inductive, on the graph plus feature-neighbour edges: a hidden node is joined "
         "to its most similar visible nodes by its own features"),
        ("FeatureSTKR (S2GC filter)", {"depth": [8, 16, 32], "alpha": [0.05, 0.15], **_BASE}, {"filter": "s2gc", **_T},
         "feature-aware STKR with S2GC's filter alpha + (1 - alpha) mean_k l^k on STKR's base kernel"),
        ("FeatureSTKR (GGCM filter)", {"depth": [8, 16], "decline_neg": [0.5, 1.0], **_BASE},
         {"filter": "ggcm", "alpha": 0.15, **_T},
         "feature-aware STKR with GGCM's filter (its negative graph replaced by its mean) on STKR's base kernel"),
        ("FeatureSTKR + C&S", {**_STKR_GRID, "reuse_eta": [0.0, 0.9], "smooth_eta": [0.0, 0.8]},
         {"reuse_beta": 1e-2, **_T}, "feature-aware STKR, then its training residuals regressed by STKR (inverse "
                                     "Laplacian, Algorithm 2) and the scores smoothed by label propagation (Eq. 22), "
                                     "training labels only"),
        ("KRR (features)", {"sigma": [1.0, 0.7, 0.5], "beta": [1e-1, 1e-2, 1e-3, 1e-4]},
         {"depth": 0, "kernel": "cosine-gaussian", **_T},
         "kernel ridge, cosine-Gaussian kernel on the node features alone")):
    register_method(MethodEntry(
        name=_name, needs=frozenset({"features"}) if _name == "KRR (features)" else _FEATURES_GRAPH,
        task="classification", grid={k: list(v) for k, v in _grid.items()}, fit_predict=feature_stkr_fit_predict,
        fixed=dict(_fixed), description=_what))
register_method(MethodEntry(
    name="SGC (ridge)", needs=_FEATURES_GRAPH, task="classification",
    grid={"K": [2], "beta": [1e-1, 1e-2, 1e-3, 1e-4, 1e-5]}, fit_predict=sgc_ridge_fit_predict,
    description="ridge on SGC's filtered features S~^K X, linear kernel"))
register_method(MethodEntry(
    name="Label-Prop", needs=frozenset({"graph"}), task="classification", grid={"eta": [0.8, 0.9, 0.99]},
    fit_predict=label_prop_fit_predict, description="label propagation (Zhou et al. 2003), graph only"))
#: the declared hyperparameters of the GNNs (every one may be given a grid in a config; default: the preset's)
GNN_PARAMS = {p.name: p for p in (
    Param("features", str, choices=("sum", "none"), optional=True, doc="feature rows scaled to sum 1, or raw"),
    Param("weight_decay", float, low=0, optional=True, doc="Adam's L2 term"),
    Param("lr", float, low=0, low_open=True, optional=True, doc="Adam's learning rate"),
    Param("dropout", float, low=0, high=1, high_open=True, optional=True, doc="dropout probability"),
    Param("hidden", int, low=1, optional=True, doc="hidden units (GAT: over all heads)"),
    Param("epochs", int, low=1, optional=True, doc="most epochs trained"),
    Param("patience", int, low=1, optional=True, doc="early stopping: epochs without a lower validation loss"),
    Param("preset", str, choices=("kipf-welling", "shchur"), doc="the published setting the others default to"))}
for _name in ("GCN", "GAT", "APPNP", "MLP", "MLP+C&S"):
    register_method(MethodEntry(
        name=_name, needs=_FEATURES_GRAPH, task="classification", grid={},
        fit_predict=gnn_fit_predict, fixed={"model": _name, "preset": DEFAULT_PRESET}, options=("preset",),
        params=tuple(GNN_PARAMS.values()),
        description=f"{_name} with PyG's layers, hyperparameters of a named published setting (preset: "
                    f"{', '.join(PRESETS[_name])})"))
_LR_DECAY = list(WEIGHT_DECAYS)
#: the declared parameters of the closed-form peers' filters and read-out
PEER_PARAMS = (
    Param("K", int, low=1, doc="propagation steps (DGC: Euler steps of the heat kernel)"),
    Param("t", float, low=0, low_open=True, doc="DGC's end time T"),
    Param("lr", float, low=0, low_open=True, doc="the read-out's Adam learning rate"),
    Param("weight_decay", float, low=0, doc="the read-out's Adam L2 term"),
    Param("readout", str, choices=("last", "best-val"),
          doc="the read-out's parameters: the last epoch's (SGC), or the epoch of best validation accuracy (GGCM)"))
for _name, _fit, _grid, _fixed, _what in (
        ("SGC", filter_lr_fit_predict, {}, {"filter": "sgc", "K": 2},
         "SGC (Wu et al. 2019): logistic regression on S~^K X, K=2 (Eq. 8)"),
        ("S2GC", filter_lr_fit_predict, {}, {"filter": "s2gc", "K": 16, "alpha": 0.05},
         "S2GC (Zhu & Koniusz 2021): logistic regression on alpha X + (1 - alpha) mean_k S~^k X, K=16"),
        ("DGC", filter_lr_fit_predict, {"t": [5.27, 3.78]}, {"filter": "dgc", "K": 250},
         "DGC (Wang et al. 2021): logistic regression on the heat kernel (I - (T/K)(I - S~))^K X, "
         "K=250, T among the published Cora / CiteSeer values"),
        ("GGCM", ggcm_lr_fit_predict, {"decline_neg": [0.5, 1.0]}, {"filter": "ggcm", "K": 16, "alpha": 0.15},
         "GGCM (Wang et al. 2023): logistic regression on lazy and negative-graph inverse steps, "
         "0.15 X + 0.85 mean over 16 steps; decline_neg among the published Cora / CiteSeer values")):
    register_method(MethodEntry(name=_name, needs=_FEATURES_GRAPH, task="classification",
                                grid={**_grid, "weight_decay": _LR_DECAY}, fit_predict=_fit,
                                fixed={**_fixed, "lr": READOUT_LR, "readout": "last"}, options=("K", "lr", "readout"),
                                params=tuple(q for q in PEER_PARAMS
                                             if q.name in {*_grid, *_fixed, "lr", "weight_decay", "readout"}),
                                description=_what))
