"""Feature-aware STKR: kernel ridge (Eq. 6-7) with the graph x feature kernel ``K(i, j) = k_X(phi_i, phi_j)``,
``phi = s(S_hat) X``, ``s(l) = ((1 - a) + a l)^K`` (``S_hat``: Eq. 23's kernel over ``n+m``; ``k_X``: cosine or
cosine-Gaussian on unit rows), closed form, every grid point sharing its filtered features and cosine blocks.
The kernels, preprocessing, label reuse and feature neighbours: docs/feature_stkr.md.
"""
from __future__ import annotations

import itertools
from collections import Counter
from numbers import Integral, Real

import torch
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted
from torch import Tensor

from ._constraints import Interval, Options, StrOptions
from .._index import as_index
from ..operators.composed import extended_adjacency, unit_rows
from ..memory import check_allocation
from ..operators.graph import GraphKernel, check_edge_index
from .estimators import (SETTINGS, ScoringMixin, _check_graph_size, _default_classes, _label_tensor, flag_unreachable,
                         fit_indices, graph_fit_inputs)
from .feature_propagation import (check_filter_point, check_ranges, cosine_blocks, feature_neighbor_graph,
                                  feature_neighbors, filter_group, k_negative, labeled_route_applies,
                                  preprocess_sparse, reuse_scores, shared_propagation, sparse_features)
from .problem import training_labels

__all__ = ["FeatureSTKR", "feature_stkr_scores", "balanced_targets", "preprocess_features", "FEATURES", "select_on_validation", "KERNELS", "MIXES", "DEFAULT_GRID"]

#: feature kernels on unit-length filtered rows
KERNELS = ("cosine", "cosine-gaussian")
#: how depths are combined: the depth K alone, or the mean kernel over depths 1, 2, 4, ..., K
MIXES = ("last", "dyadic")
#: feature preprocessing before the filter: rows scaled to sum 1, TF-IDF weights on unit rows, or X as given
FEATURES = ("sum", "tfidf", "raw")
#: the weight of a feature-neighbour edge where a point or the estimator does not give ``knn_weight``
KNN_WEIGHT = 0.1
#: the grid of :func:`select_on_validation` (and of the registered ``FeatureSTKR`` method)
DEFAULT_GRID = {"features": ["sum", "tfidf"], "depth": [4, 8, 16], "a": [0.5, 0.8], "mix": ["last", "dyadic"],
                "kernel": ["cosine-gaussian"], "sigma": [1.0, 0.7, 0.5],
                "beta": [1.0, 0.3, 0.1, 1e-2, 1e-3, 1e-4]}


def _depths(depth: int, mix: str) -> list[int]:
    if mix == "last" or depth == 0:
        return [depth]
    out, k = [], 1
    while k < depth:
        out.append(k)
        k *= 2
    return out + [depth]


def _check_point(p: dict) -> None:
    """``ValueError`` naming a bad key of a grid point (the kernel's, then the filter's)."""
    check_filter_point(p)
    depth = p["depth"]
    if isinstance(depth, bool) or int(depth) != depth or depth < 0:
        raise ValueError(f"depth must be an integer >= 0 (0: the features alone), got {depth!r}")
    check_ranges(p, [("a", lambda v: 0.0 < v <= 1.0, "lie in (0, 1] (the lazy-walk weight of the neighbours)")])
    for key, options, default in (("mix", MIXES, "last"), ("kernel", KERNELS, "cosine-gaussian"),
                                  ("features", FEATURES, "sum")):
        if p.get(key, default) not in options:
            raise ValueError(f"{key} must be one of {options}, got {p[key]!r}")
    gaussian = p.get("kernel", "cosine-gaussian") == "cosine-gaussian"
    sigma = [("sigma", lambda v: v > 0, "be > 0")] if gaussian else []
    check_ranges(p, sigma + [("beta", lambda v: v > 0, "be > 0 (the ridge of Eq. 7)")])


def row_normalize(X: Tensor) -> Tensor:
    """Rows scaled to sum 1 (PyG's ``NormalizeFeatures``); all-zero rows stay zero."""
    return X / X.sum(dim=1, keepdim=True).clamp_min(torch.finfo(X.dtype).tiny)


def check_features_kind(X: Tensor, kind: str) -> None:
    """Refuse ``kind="sum"`` for features with negative entries: their rows can sum to zero or
    change sign, and scaling them to sum 1 gives rows that say nothing about the node."""
    if kind != "sum":
        return
    if hasattr(X, "tocsr"):          # scipy.sparse: its stored entries
        negative = int((X.tocsr().data < 0).sum())
    else:
        values = X.coalesce().values() if X.layout == torch.sparse_coo else (
            X.values() if X.layout == torch.sparse_csr else X)
        negative = int((values < 0).sum()) if values.numel() else 0
    if negative:
        raise ValueError("features='sum' scales each row of x to sum 1, which needs non-negative features, "
                         f"and x has {negative} negative entries; use features='raw' (x as given, "
                         "e.g. standardized or PCA features) or features='tfidf' (from which entries are non-zero)")


def preprocess_features(X: Tensor, kind: str = "sum", visible: Tensor | None = None) -> Tensor:
    """Node features before the graph filter.

    * ``"sum"``: rows scaled to sum 1 (PyG's ``NormalizeFeatures``);
    * ``"tfidf"``: ``B_ij idf_j`` with ``B = (X != 0)`` the presence of feature ``j`` at node ``i``
      and ``idf_j = max(0, log(n_V / (1 + df_j)))``, ``df_j`` the number of visible nodes with
      feature ``j`` and ``n_V`` the number of visible nodes, then rows scaled to unit length: rare
      words weigh more than words present at many nodes (bag-of-words features such as Cora's and
      CiteSeer's). Only visible nodes (``visible``, a boolean mask; default all) count in ``df``, so a
      hidden node's features reach no other node's row;
    * ``"raw"``: ``X`` as given.
    """
    if kind == "raw":
        return X
    if kind == "sum":
        check_features_kind(X, kind)
        return row_normalize(X)
    if kind != "tfidf":
        raise ValueError(f"features must be one of {FEATURES}, got {kind!r}")
    B = (X != 0).to(X.dtype)
    Bv = B if visible is None else B[visible]
    idf = torch.log(Bv.shape[0] / (1.0 + Bv.sum(0))).clamp_min(0.0)
    return unit_rows(B * idf)


def balanced_targets(Y: Tensor) -> Tensor:
    """One-hot targets ``[n, C]`` with class ``c``'s column scaled by ``n / (C n_c)`` (class mass normalisation,
    which removes the cosine-Gaussian kernel's constant offset per class: docs/feature_stkr.md)."""
    counts = Y.sum(0)
    present = counts > 0
    scale = torch.zeros_like(counts)
    scale[present] = Y.shape[0] / (int(present.sum()) * counts[present])
    return Y * scale


def _hidden_mask(hidden, train: Tensor, N: int, device) -> Tensor | None:
    """The boolean mask of the ``hidden`` nodes (``None``: transductive); refuses a hidden labeled node."""
    if hidden is None:
        return None
    mask = torch.zeros(N, dtype=torch.bool, device=device)
    mask[as_index(hidden, N, device, name="hidden")] = True
    if bool(mask[train].any()):
        raise ValueError("train and hidden overlap: a labeled node cannot be hidden from fit")
    return mask


def feature_stkr_scores(edge_index: Tensor, X, y: Tensor, train, eval_idx, points: list[dict], *,
                        hidden=None, num_classes: int | None = None, normalize_features: bool = True,
                        dtype: torch.dtype = torch.float64, device=None, edge_weight=None,
                        cache: dict | None = None, route: str = "auto") -> list[Tensor]:
    """Scores ``[len(eval_idx), C]`` of feature-aware STKR for every grid point (shared computations).

    Parameters
    ----------
    edge_index : LongTensor ``[2, E]``
        The graph (PyG convention); self-loops and repeated edges are dropped.
    X : Tensor ``[N, d]`` (or numpy / scipy.sparse)
        Node features; ``N`` is the number of nodes.
    y : LongTensor ``[N]``
        Labels; only ``y[train]`` is read.
    train, eval_idx : node ids or boolean masks
        The labeled nodes and the nodes to score.
    points : list of dict
        Grid points with keys ``features`` (:data:`FEATURES`, ``preprocess_features``; default
        ``"sum"``, or ``"raw"`` with ``normalize_features=False``), ``depth`` (``K >= 0``), ``a``
        (default 0.5), ``mix`` (``"last"`` |
        ``"dyadic"``, default ``"last"``), ``kernel`` (``"cosine"`` | ``"cosine-gaussian"``, default
        the latter), ``sigma`` (default 1.0) and ``beta`` (the ridge of Eq. 7). The graph filter:
        ``filter`` (``"lazy"`` (default), ``"sgc"``, ``"s2gc"``, ``"dgc"``, ``"ggcm"``: the filters of
        ``graphstk.spectral.filters``, ``depth`` their ``K``), ``alpha`` (S2GC's and GGCM's feature
        weight), ``t`` (DGC's end time), ``decline_neg`` (GGCM). Label reuse: ``reuse_eta``,
        ``reuse_beta`` and ``smooth_eta`` (0: skipped; ``graphstk.methods.feature_propagation.reuse_scores``).
        Feature neighbours: ``knn`` (default 0: the graph alone) and ``knn_weight`` (default 0.1): the
        graph gains an edge of that weight from each node to its ``knn`` visible nodes of largest
        TF-IDF cosine (``graphstk.methods.feature_propagation.feature_neighbor_graph``); the points of
        one ``(knn, knn_weight)`` share one graph.
    hidden : node ids or mask, optional
        Inductive setting: these nodes and their edges are not seen at fit time; their filtered
        features come from Eq. 23's out-of-sample rows (:func:`extended_adjacency`).
    num_classes : int, optional
        Default ``max(y[train]) + 1``.
    normalize_features : bool, default True
        The preprocessing of points without a ``features`` key: ``"sum"`` (rows scaled to sum 1),
        or ``"raw"`` (``X`` as given) when False.
    dtype, device : of the computation (default float64, the device of ``edge_index``).
    edge_weight : Tensor ``[E]``, optional
        Non-negative edge weights (``W`` of Eq. 23); default 1.
    cache : dict, optional
        Kept by the caller across calls on the same graph and features (the splits of one graph): the work that
        does not depend on the labels is done once and kept in it, the norms of the filtered rows
        (:func:`graphstk.methods.feature_propagation.cosine_blocks`) and the feature-neighbour lists
        (:func:`graphstk.methods.feature_propagation.feature_neighbors`). Default: done on every call.
    route : {"auto", "columns", "labeled", "rows"}, default "auto"
        How the cosine blocks are formed (:func:`~graphstk.methods.feature_propagation.cosine_blocks`): the
        routes give the same scores to rounding; ``"auto"`` chooses from the sizes. Where the labeled and rows
        routes do not apply (GGCM's filter with hidden nodes, ``labeled_route_applies``) the column route is taken.
    """
    device = torch.device(device) if device is not None else edge_index.device
    Xs = sparse_features(X)
    N = Xs.shape[0]
    check_edge_index(edge_index, N, edge_weight)
    train = as_index(train, N, device, name="train", allow_none=False)
    ev = as_index(eval_idx, N, device, name="eval_idx", allow_none=False)
    if train.numel() == 0:
        raise ValueError("train is empty: feature-aware STKR needs labeled nodes")
    if route not in ("auto", "columns", "labeled", "rows"):
        raise ValueError(f"route must be 'auto', 'columns', 'labeled' or 'rows', got {route!r}")
    for p in points:
        _check_point(p)
    default_features = "sum" if normalize_features else "raw"
    if any(p.get("features", default_features) == "sum" for p in points):
        check_features_kind(Xs, "sum")
    yl = y.to(device)[train].long()
    C = int(num_classes) if num_classes is not None else int(yl.max()) + 1
    Y = torch.zeros(train.numel(), C, dtype=dtype, device=device)
    Y[torch.arange(train.numel(), device=device), yl] = 1.0
    Y = balanced_targets(Y)
    hidden_mask = _hidden_mask(hidden, train, N, device)
    visible = None if hidden_mask is None else ~hidden_mask
    prepared: dict[str, object] = {}

    def features(kind: str):
        if kind not in prepared:
            prepared[kind] = preprocess_sparse(Xs, kind, visible)
        return prepared[kind]

    graphs: dict[tuple, list[int]] = {}      # (knn, knn_weight) -> the points sharing one graph
    for i, p in enumerate(points):
        k = int(p.get("knn", 0))
        graphs.setdefault((k, float(p.get("knn_weight", KNN_WEIGHT)) if k else 0.0), []).append(i)
    out: list[Tensor | None] = [None] * len(points)
    k_max = max(k for k, _ in graphs)
    # neighbours by the cosine of TF-IDF rows (df over the visible nodes): one search, for the largest knn
    nbr = feature_neighbors(features("tfidf"), k_max, hidden_mask, cache) if k_max else None
    for (k, w), idx in sorted(graphs.items()):
        ei, ew = edge_index, edge_weight
        if k:
            ei, ew = feature_neighbor_graph(edge_index, N, features("tfidf"), k, w, edge_weight, hidden_mask,
                                            neighbors=nbr)
        graph = GraphKernel(ei, N, hidden=hidden_mask, edge_weight=ew, dtype=dtype, device=device, clean_edges=True)
        for i, s in zip(idx, _scores_on_graph(graph, features, [points[i] for i in idx], train, ev, Y,
                                              default_features, dtype, device, cache, route)):
            out[i] = s
    return out


def _scores_on_graph(graph: GraphKernel, features, points: list[dict], train: Tensor, ev: Tensor, Y: Tensor,
                     default_features: str, dtype: torch.dtype, device, norm_cache: dict | None = None,
                     route: str = "auto") -> list[Tensor]:
    """:func:`feature_stkr_scores` for the points of one graph (``features(kind)``: the preprocessed ``X``)."""
    N, (n, C) = graph.num_nodes, Y.shape
    S_csr = extended_adjacency(graph).csr
    reuse = any(float(p.get("reuse_eta", 0.0)) > 0 or float(p.get("smooth_eta", 0.0)) > 0 for p in points)
    scored = torch.arange(N, device=device) if reuse else ev      # label reuse smooths over every node
    rows = torch.cat([train, scored])
    k_neg = k_negative(graph) if any(p.get("filter") == "ggcm" for p in points) else 2
    groups: dict[tuple, list[int]] = {}       # (features, filter group) -> the points sharing one propagation
    for i, p in enumerate(points):
        groups.setdefault((p.get("features", default_features), filter_group(p)), []).append(i)
    eye = torch.eye(n, dtype=dtype, device=device)
    out: list[Tensor | None] = [None] * len(points)
    s2gc: dict[str, list[tuple]] = {}         # features -> their S2GC groups: one propagation gives all their norms
    for f, group in groups:
        if group[0] == "s2gc":
            s2gc.setdefault(f, []).append(group)
    depths_of = {key: sorted({k for i in idx for k in _depths(int(points[i]["depth"]), points[i].get("mix", "last"))})
                 for key, idx in groups.items()}
    # the rows route's propagation, shared by the feature kinds (and S2GC's alpha values) of one shared_propagation
    # at the same depths: the calls that share it are made one after the other, and it is dropped after them
    def shares(key: tuple) -> tuple:
        return shared_propagation(key[1]), tuple(depths_of[key])
    sharing = Counter(shares(key) for key in groups)
    propagated: dict = {}
    current = None
    for (f, group), idx in sorted(groups.items(), key=lambda kv: repr((shares(kv[0]), kv[0][1], kv[0][0]))):
        depths = depths_of[f, group]
        if shares((f, group)) != current:
            propagated.clear()
            current = shares((f, group))
        cos = cosine_blocks(S_csr, graph, features(f), group, depths, rows, n, dtype, k_neg, norm_cache,
                            route if labeled_route_applies(group, graph) else "auto", norm_groups=s2gc.get(f, ()),
                            propagated=propagated, shared_by=sharing[current])
        by_kernel: dict[tuple, list[int]] = {}     # (depths, sigma or None) -> the points of one kernel
        for i in idx:
            p = points[i]
            sig = None if p.get("kernel", "cosine-gaussian") == "cosine" else float(p.get("sigma", 1.0))
            by_kernel.setdefault((tuple(_depths(int(p["depth"]), p.get("mix", "last"))), sig), []).append(i)
        kernels = _MeanKernels(cos)
        for (ks, sig), members in sorted(by_kernel.items(), key=lambda kv: (repr(kv[0][1]), kv[0][0])):
            G = kernels.mean(ks, sig)
            for i in members:
                alpha = torch.linalg.solve(G[:n] + n * float(points[i]["beta"]) * eye, Y)
                out[i] = G[n:] @ alpha
            del G
        del cos, kernels
        if reuse:
            F = torch.stack([out[i] for i in idx])
            for i, s in zip(idx, reuse_scores(F, Y, train, graph, [points[i] for i in idx], C)):
                out[i] = s[ev]
    return out


class _MeanKernels:
    """The kernel blocks of one filter group from its cosine blocks ``cos[K]``: ``k_X`` at depth ``K`` (the
    cosine, or the cosine-Gaussian ``exp((cos - 1) / sigma^2)``), and the mean over a tuple of depths. The means
    over ``1, 2, 4, ..., K`` are running sums: the sum over a tuple extends the sum kept for its longest summed
    prefix, added in the same order, so every kernel is the one the plain mean gives, bit for bit."""

    def __init__(self, cos: dict[int, Tensor]):
        self.cos = cos
        self.blocks: dict[tuple, Tensor] = {}     # (depth, sigma or None) -> k_X block
        self.sums: dict[tuple, Tensor] = {}       # (depths, sigma or None) -> sum of their blocks

    def block(self, k: int, sig: float | None) -> Tensor:
        if (k, sig) not in self.blocks:
            c = self.cos[k]
            self.blocks[(k, sig)] = c if sig is None else (c - 1.0).div_(sig ** 2).exp_()
        return self.blocks[(k, sig)]

    def mean(self, ks: tuple, sig: float | None) -> Tensor:
        """The mean kernel over the depths ``ks``, ``(b_1 + b_2 + ...) / len(ks)`` summed left to right."""
        if len(ks) == 1:
            return self.block(ks[0], sig)
        start = max((j for j in range(2, len(ks)) if (ks[:j], sig) in self.sums), default=1)
        total = self.sums.get((ks[:start], sig), self.block(ks[0], sig))
        for j in range(start, len(ks)):
            total = total + self.block(ks[j], sig)
            self.sums[(ks[:j + 1], sig)] = total
        return total / len(ks)


def select_on_validation(edge_index: Tensor, X, y: Tensor, train, val, grid: dict | None = None,
                         **kwargs) -> tuple[dict, list[float]]:
    """The grid point with the best accuracy on ``val`` (ties: the first), and every point's accuracy.

    Only ``y[train]`` (to fit) and ``y[val]`` (to choose) are read. ``grid`` maps each key of
    :func:`feature_stkr_scores` to a list (default :data:`DEFAULT_GRID`); ``kwargs`` go to it.
    """
    grid = DEFAULT_GRID if grid is None else grid
    keys = list(grid)
    points = [dict(zip(keys, v)) for v in itertools.product(*(grid[k] for k in keys))]
    scores = feature_stkr_scores(edge_index, X, y, train, val, points, **kwargs)
    yv = y[as_index(val, y.numel(), y.device, name="val", allow_none=False)]
    accs = [float((s.argmax(1).to(yv.device) == yv).double().mean()) * 100 for s in scores]
    best = max(range(len(accs)), key=lambda i: (accs[i], -i))
    return points[best], accs


class FeatureSTKR(ScoringMixin, BaseEstimator):
    """Feature-aware STKR: kernel ridge with ``k_X(phi_i, phi_j)``, ``phi = s(S_hat) X`` (module doc).

    Parameters
    ----------
    depth : int, default 16
        ``K``: steps of the lazy walk ``(1 - a) I + a S`` (``0``: features only).
    a : float in (0, 1], default 0.5
        Neighbour weight of the lazy walk (``1``: ``s(l) = l^K``).
    mix : {"last", "dyadic"}, default "dyadic"
        The kernel of depth ``K``, or the mean of the kernels of depths ``1, 2, 4, ..., K``.
    kernel : {"cosine", "cosine-gaussian"}, default "cosine-gaussian"
        Feature kernel on unit-length filtered rows.
    sigma : float, default 0.7
        Width of the cosine-Gaussian ``exp((cos - 1) / sigma^2)``.
    beta : float, default 1e-3
        Ridge of Eq. 7 (the system is ``G_{K,n} + n beta I``).
    setting : {"transductive", "inductive"}, default "transductive"
        Inductive: ``hidden_idx`` nodes and their edges are unseen at fit time.
    features : {"sum", "tfidf", "raw"}, default "sum"
        Preprocessing of ``data.x`` before the filter (``preprocess_features``).
    normalize_features : bool, default True
        With ``features=None``: ``"sum"`` if True, ``"raw"`` if False.
    knn : int, default 0
        Feature neighbours per node added to the graph (``0``: the graph alone): each node is joined
        to its ``knn`` visible nodes of largest TF-IDF cosine, with weight ``knn_weight``
        (``graphstk.methods.feature_propagation.feature_neighbor_graph``).
    knn_weight : float, default 0.1
        Weight of a feature-neighbour edge, against 1 for an edge of the graph.
    dtype : torch.dtype, default torch.float64
        Precision of the kernel and the solve.

    Attributes
    ----------
    classes_ : LongTensor ``[C]``
    num_classes_ : int
    missing_classes_ : list of int
        Classes without a labeled node (never predicted).
    unreachable_ : BoolTensor
        Set by each ``predict`` / ``decision_function`` / ``class_scores``: rows with all-zero
        scores, as in :class:`~graphstk.methods.STKR`.
    n_unreachable_ : int
        How many rows of the last call are unreachable.

    Examples
    --------
    >>> model = FeatureSTKR(depth=16).fit(data, data.train_mask)      # doctest: +SKIP
    >>> pred = model.predict(data.test_mask)                            # doctest: +SKIP
    """

    _parameter_constraints: dict = {
        "depth": [Interval(Integral, 0, None, closed="left")],
        "a": [Interval(Real, 0, 1, closed="right")],
        "mix": [StrOptions(set(MIXES))],
        "kernel": [StrOptions(set(KERNELS))],
        "sigma": [Interval(Real, 0, None, closed="neither")],
        "beta": [Interval(Real, 0, None, closed="neither")],
        "setting": [StrOptions(set(SETTINGS))],
        "features": [StrOptions(set(FEATURES)), None],
        "normalize_features": ["boolean"],
        "knn": [Interval(Integral, 0, None, closed="left")],
        "knn_weight": [Interval(Real, 0, None, closed="neither")],
        "dtype": [Options(torch.dtype, {torch.float32, torch.float64})],
    }

    def __init__(self, depth: int = 16, a: float = 0.5, mix: str = "dyadic", kernel: str = "cosine-gaussian",
                 sigma: float = 0.7, beta: float = 1e-3, setting: str = "transductive",
                 features: str | None = "sum", normalize_features: bool = True, knn: int = 0,
                 knn_weight: float = KNN_WEIGHT, dtype: torch.dtype = torch.float64):
        self.depth, self.a, self.mix, self.kernel, self.sigma, self.beta = depth, a, mix, kernel, sigma, beta
        self.features, self.knn, self.knn_weight = features, knn, knn_weight
        self.setting, self.normalize_features, self.dtype = setting, normalize_features, dtype

    def _point(self) -> dict:
        p = {k: getattr(self, k) for k in ("depth", "a", "mix", "kernel", "sigma", "beta", "knn", "knn_weight")}
        if self.features is not None:
            p["features"] = self.features
        return p

    def _validate_params(self):
        _check_point(self._point())
        if self.setting not in SETTINGS:
            raise ValueError(f"setting must be 'transductive' or 'inductive', got {self.setting!r}")
        super()._validate_params()

    def fit(self, data, train_idx=None, hidden_idx=None, *, y=None) -> "FeatureSTKR":
        """Check and remember the graph, features and labels of ``train_idx`` (the solve runs per
        ``predict``: its rows ``K(x, labeled)`` are computed with the ridge system, one closed form).

        Parameters
        ----------
        data : torch_geometric.data.Data
            A graph with node features: ``x``, ``edge_index`` (optionally ``edge_weight``).
        train_idx : LongTensor / NumPy array of node ids, or a boolean mask ``[N]``
            The labeled nodes; ``None`` reads ``data.train_mask``.
        hidden_idx : node ids or a boolean mask ``[N]``, optional
            ``setting="inductive"``: nodes (and their edges) unseen at fit time.
        y : Tensor or ndarray ``[N]``, optional
            Class ids (only ``y[train_idx]`` is read); default ``data.y``.

        The labels, node ids and memory are checked as :class:`~graphstk.methods.STKR` checks them,
        and a class of ``y`` without a labeled node is named by a warning and never predicted.

        Returns
        -------
        self
        """
        self._validate_params()
        n, y, train_idx = graph_fit_inputs(data, train_idx, y, ("edge_index", "num_nodes", "x"),
                                           "FeatureSTKR.fit takes a torch_geometric Data with node features (x, "
                                           "edge_index; labels in data.y or y=)")
        self.train_, self.hidden_ = fit_indices(n, train_idx, hidden_idx, self.setting)
        y = _label_tensor(y)
        if self.train_.numel() == 0:
            raise ValueError("no labeled nodes: train_idx is empty")
        check_edge_index(data.edge_index, n, getattr(data, "edge_weight", None))
        _check_graph_size(data, n, y, self.dtype)
        check_features_kind(data.x, self.features or ("sum" if self.normalize_features else "raw"))
        item = torch.finfo(self.dtype).bits // 8
        d = int(data.x.shape[1]) if data.x.dim() == 2 else 1
        check_allocation(3.0 * n * d * item, f"the filtered features of {n} nodes x {d} features",
                         "use fewer features (e.g. a PCA of x, with features='raw': its columns have signs), "
                         "dtype=torch.float32, or a subgraph", data.x.device)
        _, self.num_classes_, self.missing_classes_ = training_labels(y[self.train_], _default_classes(y, None))
        self.classes_ = torch.arange(self.num_classes_)
        self.data_, self.y_ = data, y
        return self

    def _all_scores(self, idx) -> Tensor:
        check_is_fitted(self, "data_")
        d = self.data_
        ids = as_index(idx, int(d.num_nodes), d.edge_index.device, name="idx")
        scores = feature_stkr_scores(d.edge_index, d.x, self.y_, self.train_, ids, [self._point()],
                                     hidden=self.hidden_, num_classes=self.num_classes_,
                                     normalize_features=self.normalize_features, dtype=self.dtype,
                                     edge_weight=getattr(d, "edge_weight", None))[0]
        return flag_unreachable(self, scores)
