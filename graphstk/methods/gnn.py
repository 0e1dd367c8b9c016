"""Trained GNN baselines built from PyG's own layers (GCN, GAT, APPNP, MLP, MLP + C&S), for side-by-side
tables. Each model declares its hyperparameters (:data:`HYPERPARAMETERS`) with named published settings
(:data:`PRESETS`: ``kipf-welling``, ``shchur``; ``docs/feature_stkr.md``); explicit values override the
preset's. Validation labels are read only for early stopping; ``seed`` seeds initialisation and dropout.
"""
from __future__ import annotations

import copy
import warnings

import numpy as np
import scipy.sparse as sp
import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch_geometric.nn import GATConv
from torch_geometric.nn.conv.gcn_conv import gcn_norm
from torch_geometric.nn.inits import glorot
from torch_geometric.nn.models import CorrectAndSmooth

__all__ = ["MODELS", "PRESETS", "HYPERPARAMETERS", "DEFAULT_PRESET", "Features", "gcn_adjacency", "gnn_setting",
           "param_groups", "train_gnn"]

#: the declared hyperparameters of every model (see the module doc)
HYPERPARAMETERS = ("features", "weight_decay", "lr", "dropout", "hidden", "epochs", "patience")
#: the preset a model uses when none is named
DEFAULT_PRESET = "kipf-welling"


class _SparseProduct(torch.autograd.Function):
    """``X @ W`` for a constant sparse CSR ``X`` whose transpose ``XT`` is given (the gradient ``XT @ G``)."""

    @staticmethod
    def forward(ctx, X, XT, W):
        ctx.XT = XT
        return X @ W

    @staticmethod
    def backward(ctx, G):
        return None, None, ctx.XT @ G


class _SymmetricProduct(torch.autograd.Function):
    """``S @ Z`` for a constant symmetric sparse ``S`` (GCN's ``D~^{-1/2} (A + I) D~^{-1/2}``): the gradient
    ``S^T G`` is ``S G``, one product of the same matrix. Autograd's own backward for a CSR product forms the
    transpose at every call, which costs several products (``bench/baseline_products.py``)."""

    @staticmethod
    def forward(ctx, S, Z):
        ctx.S = S
        return S @ Z

    @staticmethod
    def backward(ctx, G):
        return None, ctx.S @ G


def dropout(x: Tensor, p: float, training: bool) -> Tensor:
    """``F.dropout(x, p, training)``: each entry kept with probability ``1 - p`` and scaled by ``1 / (1 - p)``.

    The mask is drawn as ``torch.rand(x.shape, dtype=float64) < 1 - p``, which is the draw of torch's own CPU
    dropout (``bernoulli_(1 - p)`` on its portable path: one double per entry from the same generator, in the same
    order), so on the CPU the output, the gradient and the generator's state after it are ``F.dropout``'s bit for
    bit, in less time: the draw skips the bernoulli kernel's cost per entry (``bench/baseline_products.py``).
    Where torch's CPU bernoulli draws through MKL instead (Intel CPUs), and on other devices, it is the same
    distribution from the device's default generator."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, got {p!r}")
    if not training or p == 0:
        return x
    if p == 1:
        return x * torch.zeros((), dtype=x.dtype, device=x.device)
    keep = torch.rand(x.shape, dtype=torch.float64, device=x.device) < 1.0 - p
    return x * keep.to(x.dtype).div_(1.0 - p)


def symmetric_product(S: Tensor, Z: Tensor) -> Tensor:
    """``S @ Z`` for a symmetric sparse ``S`` (not checked: the caller builds it symmetric), with the gradient
    with respect to ``Z`` computed as ``S @ G``."""
    return _SymmetricProduct.apply(S, Z)


class Features:
    """Node features prepared once for training: float32, rows scaled to sum 1 (``features="sum"``)
    or raw (``"none"``); kept as CSR (with its transpose, for the weight gradient) when at most a
    quarter of the entries are nonzero, else dense. :meth:`dropped` draws dropout for the nonzero
    entries only (their positions found once): each kept with probability ``1 - p`` and scaled by
    ``1 / (1 - p)``, ``F.dropout``'s distribution; :meth:`matmul` is the product with a weight ``[d, h]``."""

    def __init__(self, x, features: str = "sum"):
        if isinstance(x, Tensor):
            x = x.detach().cpu()
            x = sp.csr_matrix(x.to_dense().numpy() if x.is_sparse else x.numpy())
        A = sp.csr_matrix(x, dtype=np.float32)
        A.sum_duplicates()
        A.eliminate_zeros()
        if features == "sum":
            rows = np.asarray(A.sum(1)).ravel()
            A = sp.csr_matrix(sp.diags(1.0 / np.maximum(rows, 1e-12)).astype(np.float32) @ A)
        self._prepare(A, 4 * A.nnz <= A.shape[0] * A.shape[1])

    def _prepare(self, A: sp.csr_matrix, sparse: bool):
        self.shape = A.shape
        self.sparse = sparse
        self.values = torch.from_numpy(A.data.astype(np.float32))
        if self.sparse:
            self.crow, self.col = torch.from_numpy(A.indptr).long(), torch.from_numpy(A.indices).long()
            At = sp.csr_matrix((np.arange(A.nnz, dtype=np.float64), A.indices, A.indptr), shape=A.shape).T.tocsr()
            self.perm = torch.from_numpy(At.data.astype(np.int64))
            self.crow_t, self.col_t = torch.from_numpy(At.indptr).long(), torch.from_numpy(At.indices).long()
        else:
            rows = torch.from_numpy(np.repeat(np.arange(A.shape[0]), np.diff(A.indptr)))
            self.flat = rows * A.shape[1] + torch.from_numpy(A.indices).long()
        self._undropped = None       # the features without dropout (evaluation), built on first use
        self._coo_index = None       # the COO indices of as_tensor, built on first use

    def dropped(self, p: float, training: bool):
        """The features with dropout ``p`` on the nonzero entries (``training``), in the form :meth:`matmul` takes.
        Without dropout the same tensor is returned every time (evaluation passes do not rebuild it)."""
        v = self.values
        if not (training and p > 0):
            if self._undropped is None:
                self._undropped = v if self.sparse else self._dense(v)
            return self._undropped
        v = v * ((torch.rand(v.numel()) >= p).to(v.dtype) / (1.0 - p)) if p < 1 else v * 0
        return v if self.sparse else self._dense(v)

    def _dense(self, v: Tensor) -> Tensor:
        out = torch.zeros(self.shape[0] * self.shape[1])
        out[self.flat] = v
        return out.view(self.shape)

    def matmul(self, v, W: Tensor) -> Tensor:
        """``X_v @ W`` for the dropped features ``v`` of :meth:`dropped`; the transpose (the weight's gradient) is
        formed only where a gradient is taken."""
        if not self.sparse:
            return v @ W
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)       # torch: "sparse CSR support is in beta"
            X = torch.sparse_csr_tensor(self.crow, self.col, v, self.shape, check_invariants=False)
            if not (torch.is_grad_enabled() and W.requires_grad):
                return X @ W
            XT = torch.sparse_csr_tensor(self.crow_t, self.col_t, v[self.perm], self.shape[::-1], check_invariants=False)
        return _SparseProduct.apply(X, XT, W)

    def rows(self, idx: Tensor) -> "Features":
        """These features restricted to the rows ``idx`` (in that order), prepared alike and kept in the same form
        (CSR or dense), so a model that reads each row alone (the MLP) gives those rows' outputs of the whole
        matrix (:meth:`_Model.rows_pass`)."""
        if self.sparse:
            A = sp.csr_matrix((self.values.numpy(), self.col.numpy(), self.crow.numpy()), shape=self.shape)
        else:
            A = sp.csr_matrix(self._dense(self.values).numpy())
        out = Features.__new__(Features)
        out._prepare(A[idx.cpu().numpy()], self.sparse)
        return out

    def as_tensor(self, v) -> Tensor:
        """The dropped features as a tensor PyG's layers take (sparse COO when sparse)."""
        if not self.sparse:
            return v
        if self._coo_index is None:
            rows = torch.repeat_interleave(torch.arange(self.shape[0]), self.crow.diff())
            self._coo_index = torch.stack([rows, self.col])
        return torch.sparse_coo_tensor(self._coo_index, v, self.shape, is_coalesced=True)


def gcn_adjacency(edge_index: Tensor, num_nodes: int) -> Tensor:
    """GCN's ``D~^{-1/2} (A + I) D~^{-1/2}`` (PyG's ``gcn_norm``) as a float32 sparse CSR tensor ``[N, N]``."""
    ei, w = gcn_norm(edge_index, None, int(num_nodes), add_self_loops=True, dtype=torch.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return torch.sparse_coo_tensor(ei.flip(0), w, (int(num_nodes),) * 2).coalesce().to_sparse_csr()


class _Linear(nn.Module):
    """``X W + b`` on :class:`Features` (dense or CSR), initialised as ``torch.nn.Linear``."""

    def __init__(self, d, h, bias=True):
        super().__init__()
        lin = nn.Linear(d, h, bias=bias)
        self.weight = nn.Parameter(lin.weight.detach().T.contiguous())
        self.bias = nn.Parameter(lin.bias.detach()) if bias else None

    def forward(self, feats: Features, v):
        out = feats.matmul(v, self.weight)
        return out if self.bias is None else out + self.bias


class _Model(nn.Module):
    """A model of :data:`MODELS`: ``forward(feats, graph)`` on the whole graph, in the form ``graph`` names
    (``"adjacency"``: :func:`gcn_adjacency`; ``"edge_index"``; ``None``: no graph)."""
    graph: str | None = None

    def rows_pass(self, feats: "Features", graph, rows: Tensor):
        """A callable that returns ``self(feats, graph)[rows]`` in evaluation mode (the validation pass of every
        epoch), built once for the rows: here the whole pass, then the rows. A model that reaches only part of the
        graph from ``rows`` computes that part: the same numbers, bit for bit where every dense product computes
        each row alike (one thread), else to rounding (a few rows may go to another BLAS kernel). The validation
        losses only decide when to stop, so training is unchanged but for losses that tie to rounding."""
        return lambda: self(feats, graph)[rows]


def _in_neighbourhood(edge_index: Tensor, targets: Tensor, num_nodes: int) -> tuple[Tensor, Tensor]:
    """``(sources, edges)``: the nodes with an edge into ``targets`` (distinct ids), ``targets`` first in their order,
    then the others in node order; and those edges, in their order in ``edge_index``, relabeled as a bipartite graph
    (source: its place in ``sources``; target: its place in ``targets``), so a node's self-loop stays one."""
    src, dst = edge_index
    dev, targets = edge_index.device, targets.to(edge_index.device)
    place = torch.full((int(num_nodes),), -1, dtype=torch.long, device=dev)
    place[targets] = torch.arange(targets.numel(), device=dev)
    keep = place[dst] >= 0
    src, dst = src[keep], dst[keep]
    seen = torch.zeros(int(num_nodes), dtype=torch.bool, device=dev)
    seen[src] = True
    seen[targets] = False
    sources = torch.cat([targets, seen.nonzero().flatten()])
    where = torch.full((int(num_nodes),), -1, dtype=torch.long, device=dev)
    where[sources] = torch.arange(sources.numel(), device=dev)
    return sources, torch.stack([where[src], place[dst]])


class _GCN(_Model):
    """Kipf & Welling's two layers, ``S~ relu(S~ X W1) W2`` (Eq. 9), each as ``GCNConv``: the product
    with the weight, then ``S~``, then the bias (``S~``: :func:`gcn_adjacency`)."""
    graph = "adjacency"

    def __init__(self, d, C, hidden=16, dropout=0.5):
        super().__init__()
        self.p = dropout
        self.l1, self.l2 = _Linear(d, hidden, bias=False), _Linear(hidden, C, bias=False)
        glorot(self.l1.weight), glorot(self.l2.weight)
        self.b1, self.b2 = nn.Parameter(torch.zeros(hidden)), nn.Parameter(torch.zeros(C))

    def forward(self, feats, S):
        h = symmetric_product(S, self.l1(feats, feats.dropped(self.p, self.training))) + self.b1
        h = dropout(F.relu(h), self.p, self.training)
        return symmetric_product(S, h @ self.l2.weight) + self.b2


class _InputProjection(nn.Module):
    """The input projection ``x W^T`` of PyG's ``GATConv`` (its ``lin``, holding the same parameter ``weight``)
    for sparse COO features: the product with ``W^T`` made contiguous, which torch's COO kernel reads row by row,
    gives ``F.linear``'s numbers and gradient bit for bit, the forward product in about half the time
    (``bench/baseline_products.py``); dense features go through ``F.linear`` as in PyG."""

    def __init__(self, weight: nn.Parameter):
        super().__init__()
        self.weight = weight

    def reset_parameters(self):
        glorot(self.weight)

    def forward(self, x: Tensor) -> Tensor:
        return x @ self.weight.t().contiguous() if x.is_sparse else F.linear(x, self.weight)


class _GAT(_Model):
    """Velickovic et al.'s two attention layers, each PyG's ``GATConv`` (the first one's input projection
    :class:`_InputProjection`), ELU and dropout between them."""
    graph = "edge_index"

    def __init__(self, d, C, hidden=64, dropout=0.6, heads=8, att_dropout=0.6):
        super().__init__()
        self.p = dropout
        self.l1 = GATConv(d, hidden // heads, heads=heads, dropout=att_dropout)
        self.l1.lin = _InputProjection(self.l1.lin.weight)
        self.c2 = GATConv(hidden // heads * heads, C, heads=1, concat=False, dropout=att_dropout)

    def forward(self, feats, ei):
        x = feats.as_tensor(feats.dropped(self.p, self.training))
        x = dropout(F.elu(self.l1(x, ei)), self.p, self.training)
        return self.c2(x, ei)

    def rows_pass(self, feats, ei, rows):
        """The rows' outputs from their two-hop in-neighbourhood: the second layer on the edges into ``rows``, the
        first on the edges into those edges' sources, each ``GATConv`` run bipartite (sources, targets first among
        them; PyG adds the targets' self-loops after their other edges, as on the whole graph). Each target's
        softmax and sum run over the same edges in the same order, so the numbers are the whole pass's
        (:meth:`_Model.rows_pass`). ``rows``: node ids (repeats allowed) or a boolean mask."""
        rows = rows.nonzero().flatten() if rows.dtype == torch.bool else rows
        rows, again = torch.unique(rows, return_inverse=True)       # each target once, read back per entry
        hidden_nodes, second = _in_neighbourhood(ei, rows, feats.shape[0])
        input_nodes, first = _in_neighbourhood(ei, hidden_nodes, feats.shape[0])
        sources, targets = feats.rows(input_nodes), feats.rows(hidden_nodes)
        n = rows.numel()

        def run() -> Tensor:
            if self.training:
                raise RuntimeError("rows_pass is an evaluation pass: call .eval() first")
            x = (sources.as_tensor(sources.dropped(self.p, False)), targets.as_tensor(targets.dropped(self.p, False)))
            h = F.elu(self.l1(x, first))
            return self.c2((h, h[:n]), second)[again]
        return run


class _MLP(_Model):
    """Two linear layers, ReLU and dropout between them."""
    graph = None

    def __init__(self, d, C, hidden=64, dropout=0.5):
        super().__init__()
        self.p = dropout
        self.l1, self.l2 = _Linear(d, hidden), nn.Linear(hidden, C)

    def forward(self, feats, graph=None):
        x = F.relu(self.l1(feats, feats.dropped(self.p, self.training)))
        return self.l2(dropout(x, self.p, self.training))

    def rows_pass(self, feats, graph, rows):
        """The rows alone (:meth:`Features.rows`): each row's output reads only that row."""
        part = feats.rows(rows)
        return lambda: self(part)


class _APPNP(_MLP):
    """Gasteiger et al.'s prediction then propagation, ``Z <- (1 - alpha) S~ Z + alpha H``, ``K`` times
    (Eq. 7; PyG's ``APPNP``, without edge dropout)."""
    graph = "adjacency"

    def __init__(self, d, C, hidden=64, dropout=0.5, K=10, alpha=0.1):
        super().__init__(d, C, hidden, dropout)
        self.K, self.alpha = int(K), float(alpha)

    rows_pass = _Model.rows_pass           # K steps of propagation reach (nearly) every node

    def forward(self, feats, S):
        H = super().forward(feats)
        Z = H
        for _ in range(self.K):
            Z = (1.0 - self.alpha) * symmetric_product(S, Z) + self.alpha * H
        return Z


#: name -> module class
MODELS = {"GCN": _GCN, "GAT": _GAT, "APPNP": _APPNP, "MLP": _MLP, "MLP+C&S": _MLP}

_KW = dict(features="sum", lr=0.01, weight_decay=5e-4, dropout=0.5, hidden=64, epochs=200, patience=None)
_SHCHUR = dict(features="none", lr=0.01, weight_decay=1e-3, dropout=0.8, hidden=64, epochs=1000, patience=50)
#: Shchur et al.'s MLP: their GCN's setting but for learning rate 5e-3 and L2 1e-2 (the settings they chose for each
#: model on Cora and CiteSeer and ran on every graph, released with their benchmark as ``config/optimized/*.yaml``)
_SHCHUR_MLP = {**_SHCHUR, "lr": 0.005, "weight_decay": 1e-2}
_APPNP_PAPER = dict(features="sum", lr=0.01, weight_decay=5e-3, dropout=0.5, hidden=64, epochs=300, patience=None)
#: model -> preset name -> hyperparameters (see the module doc); model-specific keys: GAT's ``heads`` and
#: ``att_dropout``, APPNP's ``K`` and ``alpha``
PRESETS = {
    "GCN": {"kipf-welling": {**_KW, "hidden": 16}, "shchur": dict(_SHCHUR)},
    "GAT": {"kipf-welling": {**_KW, "lr": 0.005, "dropout": 0.6, "att_dropout": 0.6, "heads": 8},
            "shchur": {**_SHCHUR, "weight_decay": 1e-2, "dropout": 0.6, "att_dropout": 0.3, "heads": 8}},
    "APPNP": {"kipf-welling": {**_APPNP_PAPER, "K": 10, "alpha": 0.1},
              "shchur": {**_APPNP_PAPER, "features": "none", "epochs": 1000, "patience": 100, "K": 10, "alpha": 0.1}},
    "MLP": {"kipf-welling": dict(_KW), "shchur": dict(_SHCHUR_MLP)},
    "MLP+C&S": {"kipf-welling": dict(_KW), "shchur": dict(_SHCHUR_MLP)},
}

#: models whose weight decay applies to the first layer (``l1``) only
FIRST_LAYER_DECAY = frozenset({"GCN", "APPNP"})


def gnn_setting(model: str, preset: str | None = None, **overrides) -> dict:
    """The hyperparameters of ``model`` under ``preset`` (default :data:`DEFAULT_PRESET`), with the
    ``overrides`` that are not ``None`` applied. Raises ``ValueError`` naming the allowed values."""
    if model not in MODELS:
        raise ValueError(f"unknown model {model!r} (allowed: {', '.join(MODELS)})")
    preset = DEFAULT_PRESET if preset is None else preset
    if preset not in PRESETS[model]:
        raise ValueError(f"unknown preset {preset!r} for {model} (allowed: {', '.join(PRESETS[model])})")
    out = dict(PRESETS[model][preset])
    for k, v in overrides.items():
        if k not in out:
            raise ValueError(f"{model} has no hyperparameter {k!r} (allowed: {', '.join(out)})")
        if v is not None:
            out[k] = v
    if not 0.0 <= float(out["dropout"]) < 1.0:       # the configs' declaration (registrations.planetoid.GNN_PARAMS)
        raise ValueError(f"dropout is the probability of zeroing an entry and lies in [0, 1); got {out['dropout']!r}")
    if out["features"] not in ("sum", "none"):
        raise ValueError(f"features must be 'sum' (rows scaled to sum 1) or 'none' (raw), got {out['features']!r}")
    return out


def param_groups(model: str, net: nn.Module, weight_decay: float) -> list[dict]:
    """Adam parameter groups: ``weight_decay`` on every parameter, or on the first layer only
    (:data:`FIRST_LAYER_DECAY`: GCN's and APPNP's published regularisation)."""
    if model not in FIRST_LAYER_DECAY:
        return [{"params": list(net.parameters()), "weight_decay": weight_decay}]
    first = list(net.l1.parameters())
    ids = {id(q) for q in first}
    return [{"params": first, "weight_decay": weight_decay},
            {"params": [q for q in net.parameters() if id(q) not in ids], "weight_decay": 0.0}]


def train_gnn(model: str, x, edge_index: Tensor, y: Tensor, train: Tensor, eval_idx: Tensor, *, seed: int = 0,
              val: Tensor | None = None, y_val: Tensor | None = None, preset: str | None = None,
              **hyperparameters) -> Tensor:
    """Train ``model`` (a key of :data:`MODELS`) on ``y[train]`` and return scores ``[len(eval_idx), C]``.

    Parameters
    ----------
    model : {"GCN", "GAT", "APPNP", "MLP", "MLP+C&S"}
    x : Tensor ``[N, d]`` (dense or sparse) or a SciPy sparse matrix. Node features.
    edge_index : LongTensor ``[2, E]``
    y : LongTensor ``[N]``. Labels; only ``y[train]`` is read.
    train, eval_idx : LongTensor. Labeled nodes and nodes to score.
    seed : int, default 0
    val, y_val : LongTensor, optional
        Validation nodes and their labels, read only for early stopping (``patience``); without
        them training runs ``epochs`` epochs.
    preset : str, optional. A key of ``PRESETS[model]`` (default :data:`DEFAULT_PRESET`).
    **hyperparameters
        :data:`HYPERPARAMETERS` and the model's own keys, overriding the preset; ``None`` keeps the preset's.

    Returns log-probabilities (GNNs, MLP) or C&S-smoothed probabilities (``MLP+C&S``) of ``eval_idx``.
    """
    hp = gnn_setting(model, preset, **hyperparameters)
    torch.manual_seed(int(seed))
    feats = x if isinstance(x, Features) else Features(x, hp["features"])
    C = int(y[train].max()) + 1 if y_val is None else int(max(int(y[train].max()), int(y_val.max()))) + 1
    own = {k: v for k, v in hp.items() if k not in HYPERPARAMETERS}
    net = MODELS[model](feats.shape[1], C, hidden=hp["hidden"], dropout=float(hp["dropout"]), **own)
    n = feats.shape[0]
    graph = {"adjacency": lambda: gcn_adjacency(edge_index, n), "edge_index": lambda: edge_index,
             None: lambda: None}[net.graph]()
    opt = torch.optim.Adam(param_groups(model, net, float(hp["weight_decay"])), lr=float(hp["lr"]))
    yt = y[train].long()
    stop = hp["patience"] is not None and val is not None and val.numel() > 0
    best, best_state, waited = float("inf"), None, 0
    validation_pass = net.rows_pass(feats, graph, val) if stop else None
    for _ in range(int(hp["epochs"])):
        net.train()
        opt.zero_grad()
        F.cross_entropy(net(feats, graph)[train], yt).backward()
        opt.step()
        if stop:
            net.eval()
            with torch.no_grad():
                loss = float(F.cross_entropy(validation_pass(), y_val.long()))
            if loss < best:
                best, best_state, waited = loss, copy.deepcopy(net.state_dict()), 0
            else:
                waited += 1
                if waited >= int(hp["patience"]):
                    break
    if best_state is not None:
        net.load_state_dict(best_state)
    net.eval()
    with torch.no_grad():
        out = net(feats, graph)
    if model != "MLP+C&S":
        return F.log_softmax(out, 1)[eval_idx].double()
    cs = CorrectAndSmooth(num_correction_layers=50, correction_alpha=1.0, num_smoothing_layers=50,
                          smoothing_alpha=0.8, autoscale=True)
    prob = out.softmax(1)
    prob = cs.correct(prob, yt, train, edge_index)
    prob = cs.smooth(prob, yt, train, edge_index)
    return prob[eval_idx].double()
