"""Sparse graph kernels built from a PyG ``edge_index`` (STKR paper, Zhai et al., ICLR 2024):
:func:`normalized_adjacency` (``S = D^{-1/2} W D^{-1/2}``, Eq. 22), :func:`random_walk_kernel`
(Proposition 5) and :class:`GraphKernel`, Eq. 23's base kernel over the visible nodes (or its lazy,
positive semidefinite form ``(I + S) / 2``) with the out-of-sample rows of hidden nodes;
:meth:`GraphKernel.from_edges` builds it from any of PyG's adjacency forms (:func:`read_adjacency`) for
:mod:`graphstk.nn`. Isolated nodes get zero rows (``D^{-1/2} = 0`` where ``D = 0``). See ``docs/kernels.md``.
"""
from __future__ import annotations

import warnings

import torch
from torch import Tensor
from torch.autograd.function import once_differentiable

from .._checks import user_stacklevel
from ..data.validation import check_edge_index  # noqa: F401  (re-exported)
from ..exceptions import EdgeListWarning  # noqa: F401  (re-exported)
from .base import KernelOperator, SparseOperator, as_index

try:  # optional dependency: torch_sparse (PyG's SparseTensor adjacency)
    from torch_sparse import SparseTensor as _SparseTensor
except ImportError:  # pragma: no cover - depends on the environment
    _SparseTensor = None


def edge_list_issues(edge_index: Tensor, num_nodes: int) -> tuple[int, int]:
    """``(duplicates, self_loops)``: entries of ``edge_index`` that repeat an earlier pair, and ``(i, i)`` ones."""
    if edge_index.numel() == 0:
        return 0, 0
    row, col = edge_index[0].long(), edge_index[1].long()
    keys = row * int(num_nodes) + col
    dup = int(keys.numel() - torch.unique(keys).numel())
    return dup, int((row == col).sum())


def clean_edge_list(edge_index: Tensor, num_nodes: int, edge_weight: Tensor | None = None
                    ) -> tuple[Tensor, Tensor | None]:
    """``(edge_index, edge_weight)`` without self-loops and with one copy (the first) of each ``(row, col)`` pair.

    Parameters
    ----------
    edge_index : LongTensor ``[2, E]``
    num_nodes : int
    edge_weight : Tensor ``[E]``, optional
    """
    row, col = edge_index[0].long(), edge_index[1].long()
    keep = row != col
    keys = row * int(num_nodes) + col
    order = torch.argsort(keys, stable=True)
    first = torch.ones_like(keep)
    sk = keys[order]
    first[order[1:]] = sk[1:] != sk[:-1]
    keep &= first
    return edge_index[:, keep], (edge_weight[keep] if edge_weight is not None else None)


def _edges(edge_index, num_nodes, edge_weight, dtype, device):
    check_edge_index(edge_index, num_nodes, edge_weight)
    row, col = edge_index[0].to(device).long(), edge_index[1].to(device).long()
    w = (torch.ones(row.numel(), dtype=dtype, device=device) if edge_weight is None
         else edge_weight.to(device=device, dtype=dtype))
    return row, col, w


def read_adjacency(adj, num_nodes: int):
    """An adjacency in one of PyG's forms as ``(tgt, src, values or None, PyG normalises?, is an edge_index)``.

    ``(P x)[i] = sum_{j -> i} w_ji x[j]``: an ``edge_index`` ``[2, E]`` (or ``EdgeIndex``) has the source in
    row 0; a ``torch.sparse`` COO / CSR or ``SparseTensor`` ``adj_t`` ``[N, N]`` has row = target. PyG
    ``gcn_norm``-s an ``edge_index`` without weights, a ``torch.sparse`` ``adj_t`` always, a
    ``SparseTensor`` without values.
    """
    if _SparseTensor is not None and isinstance(adj, _SparseTensor):
        row, col, value = adj.coo()
        _check_square(tuple(adj.sizes()), num_nodes)
        return row, col, value, value is None, False
    if not isinstance(adj, Tensor):
        raise TypeError(f"edge_index must be a LongTensor [2, E], a torch.sparse adjacency or a SparseTensor, "
                        f"got {type(adj).__name__}")
    if adj.layout in (torch.sparse_coo, torch.sparse_csr):
        _check_square(tuple(adj.shape), num_nodes)
        if adj.layout == torch.sparse_coo:
            adj = adj.coalesce()
            tgt, src = adj.indices()
        else:
            crow = adj.crow_indices()
            tgt = torch.repeat_interleave(torch.arange(num_nodes, device=adj.device), crow[1:] - crow[:-1])
            src = adj.col_indices()
        return tgt, src, adj.values(), True, False
    if adj.layout != torch.strided:
        raise ValueError(f"sparse layout {adj.layout} is not supported: pass a COO or CSR adj_t, or an edge_index")
    if hasattr(adj, "as_tensor"):   # torch_geometric.EdgeIndex
        adj = adj.as_tensor()
    if adj.dim() != 2 or adj.size(0) != 2 or adj.dtype.is_floating_point:
        raise ValueError(f"edge_index must be an integer tensor of shape [2, E], got {adj.dtype} of shape "
                         f"{tuple(adj.shape)} (or pass a torch.sparse / SparseTensor adj_t [N, N])")
    adj = adj.long()
    if adj.numel() and (int(adj.min()) < 0 or int(adj.max()) >= num_nodes):
        raise IndexError(f"edge_index holds node ids in [{int(adj.min())}, {int(adj.max())}] but y has "
                         f"{num_nodes} rows: ids must lie in [0, {num_nodes - 1}]")
    return adj[1], adj[0], None, True, True


def _check_square(shape: tuple, num_nodes: int) -> None:
    if len(shape) != 2 or shape[0] != shape[1] or shape[0] != num_nodes:
        raise ValueError(f"the adjacency must be [N, N] with N = {num_nodes} (rows of y), got {shape}")


def _csr_layout(rows: Tensor, n: int) -> tuple[Tensor, Tensor]:   # (edges in CSR order, row pointers)
    perm = torch.argsort(rows, stable=True)
    crow = torch.zeros(n + 1, dtype=torch.long, device=rows.device)
    torch.cumsum(torch.bincount(rows[perm], minlength=n), 0, out=crow[1:])
    return perm, crow


class _SpMM(torch.autograd.Function):
    """``P(value) x`` by CSR products, differentiable in the edge values and in ``x`` (``P^T`` backward)."""

    @staticmethod
    def forward(ctx, value: Tensor, x: Tensor, kernel: "GraphKernel") -> Tensor:
        ctx.kernel = kernel
        ctx.save_for_backward(value, x)
        return kernel.csr(value) @ x

    @staticmethod
    @once_differentiable
    def backward(ctx, g: Tensor):
        value, x = ctx.saved_tensors
        k = ctx.kernel
        tgt, src, _ = k.edges
        gx = k.csr(value, transpose=True) @ g if ctx.needs_input_grad[1] else None
        gv = (g[tgt] * x[src]).sum(1) if ctx.needs_input_grad[0] else None
        return gv, gx, None


def inv_sqrt_degree(deg: Tensor) -> Tensor:
    """``deg ** -1/2`` where ``deg > 0``, ``0`` elsewhere (isolated nodes, zero kernel diagonals);
    differentiable in ``deg``."""
    pos = deg > 0
    return torch.where(pos, torch.where(pos, deg, torch.ones_like(deg)).rsqrt(), torch.zeros_like(deg))


def symmetric_normalization(row: Tensor, col: Tensor, w: Tensor, num_nodes: int) -> tuple[Tensor, Tensor, Tensor]:
    """The entries ``w / sqrt(D[row] D[col])`` of ``D^{-1/2} W D^{-1/2}`` (``D`` the row sums of ``W = (row, col, w)``).

    The package's one symmetric normalisation (also the ``gcn_norm`` of :mod:`graphstk.nn`, ``row`` = target);
    a node of degree 0 gets factor 0, never NaN; differentiable in ``w``.

    Returns
    -------
    ``(values [E], degree [num_nodes], degree^-1/2 [num_nodes])``
    """
    deg = torch.zeros(num_nodes, dtype=w.dtype, device=w.device).index_add(0, row, w)
    dis = inv_sqrt_degree(deg)
    return dis[row] * w * dis[col], deg, dis


#: edges per chunk of the symmetry probe (bounds its temporaries at a few times this many floats)
SYMMETRY_CHUNK = 1 << 22


def _symmetric(row: Tensor, col: Tensor, w: Tensor, n: int, chunk: int = SYMMETRY_CHUNK) -> bool:
    """Whether ``W = W^T`` (duplicates summed), to a relative 1e-10 per row (1e-5 on MPS), in ``O(N)`` memory."""
    # W v = W^T v for two seeded Gaussian probes v: an asymmetric W breaks it except on a null set of v;
    # index-adds over `chunk` edges at a time, where coalescing W - W^T would copy the edge list
    if row.numel() == 0:
        return True
    dt = torch.float32 if row.device.type == "mps" else torch.float64     # MPS has no float64
    g = torch.Generator().manual_seed(0)
    v = torch.randn(n, 2, generator=g, dtype=torch.float64).to(device=row.device, dtype=dt)
    fw = torch.zeros(n, 2, dtype=dt, device=row.device)
    bw, scale = torch.zeros_like(fw), torch.zeros_like(fw)
    for s in range(0, row.numel(), chunk):
        r, c = row[s:s + chunk], col[s:s + chunk]
        ww = w[s:s + chunk].detach().to(dt)[:, None]
        vc, vr = v[c], v[r]
        fw.index_add_(0, r, ww * vc)
        bw.index_add_(0, c, ww * vr)
        wa = ww.abs()
        scale.index_add_(0, r, wa * vc.abs()).index_add_(0, c, wa * vr.abs())
    rel = 1e-10 if dt == torch.float64 else 1e-5
    return bool(((fw - bw).abs() <= rel * scale + torch.finfo(dt).tiny).all())


def normalized_adjacency(edge_index: Tensor, num_nodes: int, edge_weight: Tensor | None = None,
                         dtype: torch.dtype = torch.float64, device=None) -> SparseOperator:
    """``S = D^{-1/2} W D^{-1/2}`` with ``D = diag(W 1)`` (Zhou et al. 2003; STKR Eq. 22).

    Rows/columns of isolated nodes are zero. Duplicate edges are summed.

    Parameters
    ----------
    edge_index : LongTensor ``[2, E]``
    num_nodes : int
    edge_weight : Tensor ``[E]``, optional (1 for every edge)
    dtype : torch.dtype, default torch.float64
    device : torch.device, optional
    """
    row, col, w = _edges(edge_index, num_nodes, edge_weight, dtype, device)
    return SparseOperator(row, col, symmetric_normalization(row, col, w, num_nodes)[0], (num_nodes, num_nodes))


def random_walk_kernel(edge_index: Tensor, num_nodes: int, edge_weight: Tensor | None = None,
                       dtype: torch.dtype = torch.float64, device=None) -> SparseOperator:
    """``K = Tr(D) D^{-1} W D^{-1}`` of STKR Proposition 5 (zero rows for isolated nodes).

    Parameters
    ----------
    edge_index, num_nodes, edge_weight, dtype, device : as in :func:`normalized_adjacency`.
    """
    row, col, w = _edges(edge_index, num_nodes, edge_weight, dtype, device)
    deg = torch.zeros(num_nodes, dtype=dtype, device=row.device).index_add_(0, row, w)
    inv = torch.where(deg > 0, 1.0 / deg.clamp_min(torch.finfo(dtype).tiny), torch.zeros_like(deg))
    return SparseOperator(row, col, deg.sum() * inv[row] * w * inv[col], (num_nodes, num_nodes))


class NormalizedGraphKernel(KernelOperator):
    """A graph kernel holding ``S = D^{-1/2} W D^{-1/2}`` over the visible nodes (Eq. 23) as ``self.S``, its
    top eigenvalue ``self.lambda_max`` and the out-of-sample :meth:`rows`; each subclass's
    ``_check_visible`` says which visible nodes it was built with.
    """

    S: KernelOperator
    lambda_max: float

    def _check_visible(self, visible: Tensor) -> None:
        raise NotImplementedError

    def rows(self, idx) -> KernelOperator:
        """``K(x, visible) / (n+m)`` for the nodes ``idx`` (Eq. 23); defined by each subclass."""
        raise NotImplementedError

    def normalized_gram(self, visible: Tensor) -> tuple[KernelOperator, float]:
        """``(S, lambda_max)``: ``G_K / (n+m) = D^{-1/2} W D^{-1/2}`` over the visible nodes (Eq. 23)."""
        self._check_visible(visible)
        return self.S, self.lambda_max

    def normalized_rows(self, rows: Tensor, visible: Tensor) -> KernelOperator:
        """``K(x, visible) / (n+m)`` for nodes ``rows`` (:meth:`rows`)."""
        self._check_visible(visible)
        return self.rows(rows)


#: the graph kernels :class:`GraphKernel` builds: Eq. 23's ``D^-1/2 W D^-1/2`` and the lazy ``(I + S) / 2``
NORMALIZATIONS = ("lazy", "symmetric")


def check_normalization(normalization: str) -> str:
    """``normalization`` if it names a graph kernel of :data:`NORMALIZATIONS`, else a ``ValueError``."""
    if normalization not in NORMALIZATIONS:
        raise ValueError(f"normalization must be 'lazy' (the positive semidefinite (I + S) / 2) or 'symmetric' "
                         f"(Eq. 23's D^-1/2 W D^-1/2, whose spectrum reaches -1), got {normalization!r}")
    return normalization


class GraphKernel(NormalizedGraphKernel):
    """The STKR base kernel (Eq. 23) of a graph, or its lazy form, as a ``[num_nodes, num_nodes]``
    kernel operator.

    Entries: ``K(x, x') = (n+m) W(x, x') / sqrt(D(x) D(x'))`` between visible nodes (degrees over
    visible nodes only), the out-of-sample rows ``K(x, visible)`` of hidden nodes through their edges to
    visible nodes, zero columns for hidden nodes. ``normalized_gram`` is exactly ``S = G_K / (n+m)``
    with ``lambda_max`` in closed form; ``normalized_rows`` are :meth:`rows`.

    Parameters
    ----------
    edge_index : LongTensor ``[2, E]``
        Graph edges in PyG convention (both directions present for an undirected graph).
    num_nodes : int
        Number of nodes of the full graph.
    hidden : index, optional
        Nodes the learner may not see (the inductive setting). Every edge touching a
        hidden node is dropped before anything is computed; degrees are counted over
        visible nodes only (App. D.1: ``D(x_i) = sum_{j not hidden} W(x_i, x_j)``).
    edge_weight : Tensor ``[E]``, optional
        Non-negative weights ``W``; 1 for every edge by default.
    dtype : torch.dtype, default torch.float64
    device : torch.device, optional
        Default: the device of ``edge_index``.
    clean_edges : bool, default False
        ``False``: duplicate ``(row, col)`` entries are summed and self-loops kept, with one
        :class:`EdgeListWarning` saying so; ``True``: self-loops dropped and one copy of each edge kept,
        silently (the usual reading of an unweighted benchmark graph).
    normalization : {"symmetric", "lazy"}, default "symmetric"
        ``"symmetric"``: Eq. 23 as written, ``S = D^{-1/2} W D^{-1/2}`` (eigenvalues in ``[-1, 1]``,
        not positive semidefinite). ``"lazy"``: ``S_lazy = (I + S) / 2``, i.e. ``K_lazy(x, x') =
        (K(x, x') + (n+m) delta(x, x')) / 2``: positive semidefinite, eigenvalues ``(1 + lambda) / 2``,
        the same eigenvectors; a hidden node's row is half its Eq. 23 row. ``docs/kernels.md`` derives both.

    Attributes
    ----------
    visible : LongTensor ``[N]``
        Global ids of the visible nodes; local id ``i`` is global node ``visible[i]``.
    isolated : BoolTensor ``[N]``
        Visible nodes without a visible neighbour (zero rows of ``S``).
    positive_semidefinite : bool
        ``True`` for the lazy kernel, ``False`` for Eq. 23's.
    """

    def __init__(self, edge_index: Tensor, num_nodes: int, hidden=None, edge_weight: Tensor | None = None,
                 dtype: torch.dtype = torch.float64, device=None, clean_edges: bool = False,
                 normalization: str = "symmetric"):
        self.normalization = check_normalization(normalization)
        self.positive_semidefinite = normalization == "lazy"
        device = torch.device(device) if device is not None else edge_index.device
        check_edge_index(edge_index, num_nodes, edge_weight)
        if dtype not in (torch.float32, torch.float64):
            raise ValueError(f"dtype must be torch.float32 or torch.float64, got {dtype}")
        dup, loops = edge_list_issues(edge_index, num_nodes)
        if dup or loops:
            if clean_edges:
                edge_index, edge_weight = clean_edge_list(edge_index, num_nodes, edge_weight)
            else:
                what = " and ".join(x for x in (f"{dup} duplicate edges (their weights are summed)" if dup else "",
                                                f"{loops} self-loops (kept)" if loops else "") if x)
                warnings.warn(f"edge_index has {what}: a weighted graph with loops. For an unweighted graph pass "
                              "clean_edges=True (or clean it first with torch_geometric.utils.coalesce and "
                              "remove_self_loops)", EdgeListWarning, stacklevel=user_stacklevel())
        self._source = (edge_index, edge_weight)
        row, col, w = _edges(edge_index, num_nodes, edge_weight, dtype, device)
        hidden_mask = torch.zeros(num_nodes, dtype=torch.bool, device=device)
        if hidden is not None:
            hidden_mask[as_index(hidden, num_nodes, device)] = True
        self._nodes(int(num_nodes), hidden_mask, dtype, device)
        if hidden is None:          # every node visible: the edge list as it is, not a copy
            r, c, wv = row, col, w
        else:
            vis = ~hidden_mask[row] & ~hidden_mask[col]
            r, c, wv = self._g2l[row[vis]], self._g2l[col[vis]], w[vis]
        n_vis = self.visible.numel()
        if not _symmetric(r, c, wv, n_vis):
            warnings.warn("edge_index is not symmetric; using W = (W + W^T) / 2 so that the kernel is "
                          "symmetric", stacklevel=2)
            r, c, wv = torch.cat([r, c]), torch.cat([c, r]), torch.cat([wv, wv]) / 2
        self._setup(r, c, wv, True, self.positive_semidefinite, None)
        self._symmetric_w = self._unit = True
        self.lambda_max = 1.0 if bool((self.degree > 0).any()) else 0.0
        if self.positive_semidefinite:
            self.lambda_max = 1.0 if self.lambda_max else (0.5 if n_vis else 0.0)
        if hidden is not None:      # edges from hidden nodes to visible ones: the out-of-sample rows
            cross = hidden_mask[row] & ~hidden_mask[col]
            self._cross = (row[cross], self._g2l[col[cross]], w[cross])

    def _nodes(self, num_nodes: int, hidden_mask: Tensor, dtype, device) -> None:
        self.num_nodes, self._dtype, self._device = num_nodes, dtype, device
        self._full_op = None
        self.hidden_mask = hidden_mask
        self.visible = (~hidden_mask).nonzero().flatten()
        self._g2l = torch.full((num_nodes,), -1, dtype=torch.long, device=device)
        self._g2l[self.visible] = torch.arange(self.visible.numel(), device=device)
        e = torch.zeros(0, dtype=torch.long, device=device)
        self._cross = (e, e, torch.zeros(0, dtype=dtype, device=device))

    def _setup(self, r: Tensor, c: Tensor, w: Tensor, normalize: bool, lazy: bool, layout: dict | None) -> None:
        n = self.visible.numel()
        if normalize:
            values, self.degree, self._dis = symmetric_normalization(r, c, w, n)
        else:
            values, self.degree, self._dis = w, torch.zeros(n, dtype=w.dtype, device=w.device).index_add(0, r, w), None
        self.isolated = self.degree <= 0
        self._half = 0.5 if lazy else 1.0   # the lazy kernel halves every edge entry
        self.edges, self._weights, self._S = (r, c, values), w, None
        self._layout = {} if layout is None else layout
        self._symmetric_w = self._lambda = self._unit = None

    @classmethod
    def from_edges(cls, tgt: Tensor, src: Tensor, weight: Tensor, num_nodes: int, *, normalize: bool = True,
                   lazy: bool = False, layout: dict | None = None, unit_bound: bool | None = None) -> "GraphKernel":
        """The propagation matrix ``P[tgt, src] = w`` (duplicates summed, self-loops kept, directed graphs as
        they are: PyG's reading) as a kernel with every node visible: ``S = P``, or ``(I + P) / 2`` with ``lazy``.

        Parameters
        ----------
        tgt, src : LongTensor ``[E]``
            Row (target) and column (source) of each edge.
        weight : Tensor ``[E]``
            Edge weights; may require grad (:meth:`propagate` is differentiable in them).
        num_nodes : int
        normalize : bool, default True
            ``gcn_norm`` without self-loops, ``w_ji / sqrt(d_j d_i)`` with in-degrees ``d``
            (``symmetric_normalization``); ``False``: the weights as given.
        lazy : bool, default False
            ``S = (I + P) / 2``: positive semidefinite for a normalised undirected ``P``, bound 1.
        layout : dict, optional
            Shared by kernels of one structure (the CSR orders of ``P`` and ``P^T``, built once).
        unit_bound : bool, optional
            Whether ``|lambda(S)| <= 1`` is known; default: when ``P`` is normalised, non-negative
            and symmetric. Otherwise ``lambda_max`` is ``min(max row sum, max column sum)`` of ``|S|``.
        """
        self = cls.__new__(cls)
        self.normalization = "lazy" if lazy else ("symmetric" if normalize else "none")
        self.positive_semidefinite = bool(lazy)
        self._source = None
        self._nodes(int(num_nodes), torch.zeros(int(num_nodes), dtype=torch.bool, device=tgt.device),
                    weight.dtype, tgt.device)
        self._setup(tgt, src, weight, normalize, lazy, layout)
        self._unit = unit_bound if unit_bound is not None else (
            lambda: normalize and bool((weight.detach() >= 0).all()) and self.is_symmetric())
        return self

    @property
    def lambda_max(self) -> float:
        """Largest eigenvalue of :attr:`S`: 1 when ``S`` has an edge, else 0 (``1/2`` for the lazy kernel); for a
        :meth:`from_edges` kernel that is not Eq. 23's, ``min(max row sum, max column sum)`` of ``|S|``."""
        if self._lambda is None:
            self._lambda = self._bound()
        return self._lambda

    @lambda_max.setter
    def lambda_max(self, value: float) -> None:
        self._lambda = value

    def _bound(self) -> float:   # lambda_max of a from_edges kernel (see there)
        r, c, v = self.edges
        if not r.numel():
            return 0.5 if self.positive_semidefinite else 0.0
        if self.positive_semidefinite or self.unit_bound():
            return 1.0
        a, v = torch.zeros(self.num_nodes, dtype=v.dtype, device=v.device), v.detach().abs()
        return min(float(a.index_add(0, r, v).max()), float(a.index_add(0, c, v).max()))

    def unit_bound(self) -> bool:
        """Whether ``|lambda(S)| <= 1`` is known (Eq. 23's normalisation of a symmetric graph)."""
        if callable(self._unit):
            self._unit = bool(self._unit())
        return self._unit

    def is_symmetric(self) -> bool:
        """Whether ``W = W^T`` (duplicate edges summed), the weights before normalisation."""
        if self._symmetric_w is None:
            r, c, _ = self.edges
            self._symmetric_w = _symmetric(r, c, self._weights, self.num_visible)
        return self._symmetric_w

    def row_scaled(self, d: Tensor) -> "GraphKernel":
        """``D S`` for a diagonal ``d`` ``[N]`` or ``[N, 1]`` in ``[0, 1]`` (``LabelPropagation(keep_labels=True)``'s
        unlabeled rows), keeping this kernel's spectral bound rule (``||D S|| <= ||S||``)."""
        r, c, v = self.edges
        return GraphKernel.from_edges(r, c, v * d.view(-1)[r].to(v.dtype), self.num_nodes, normalize=False,
                                      layout=self._layout, unit_bound=self.unit_bound())

    @property
    def S(self) -> KernelOperator:
        """``G_K / (n+m)`` over the visible nodes in *local* numbering (``[N, N]``, ``N = n + m`` visible nodes),
        values detached; built on first use."""
        if self._S is None:
            r, c, v = self.edges
            v, n = v.detach(), self.visible.numel()
            if self.positive_semidefinite:       # (I + S) / 2: the edges halved, 1/2 on the diagonal
                diag = torch.arange(n, device=r.device)
                r, c = torch.cat([r, diag]), torch.cat([c, diag])
                v = torch.cat([v * 0.5, torch.full((n,), 0.5, dtype=v.dtype, device=v.device)])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)   # "CSR support is in beta"
                self._S = SparseOperator(r, c, v, (n, n))
        return self._S

    @S.setter
    def S(self, value: KernelOperator) -> None:
        self._S = value

    def csr(self, value: Tensor | None = None, transpose: bool = False) -> Tensor:
        """The edge matrix (``S`` without the lazy diagonal) or its transpose as a ``torch.sparse_csr_tensor``,
        with ``value`` (edge order; default the kernel's own values), detached."""
        r, c, own = self.edges
        if transpose:
            r, c = c, r
        if transpose not in self._layout:
            self._layout[transpose] = _csr_layout(r, self.num_visible)
        perm, crow = self._layout[transpose]
        v = (own if value is None else value).detach()[perm]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return torch.sparse_csr_tensor(crow, c[perm], v, (self.num_visible,) * 2, check_invariants=False)

    def propagate(self, x: Tensor, value: Tensor | None = None) -> Tensor:
        """``P x`` with the edge values (``value``: others of the same structure), differentiable in ``x``
        and the values (``P^T`` in the backward pass); without grad one CSR product."""
        value = self.edges[2] if value is None else value
        if value.dtype != x.dtype:
            value = value.to(x.dtype)
        if torch.is_grad_enabled() and (value.requires_grad or x.requires_grad):
            return _SpMM.apply(value, x, self)
        return self.csr(value) @ x

    shape = property(lambda self: (self.num_nodes, self.num_nodes))
    dtype = property(lambda self: self._dtype)
    device = property(lambda self: self._device)

    def full(self) -> SparseOperator:
        """All of ``K`` (Eq. 23 with the out-of-sample rows of hidden nodes) as a sparse operator in
        global numbering; built on first use."""
        if self._full_op is None:
            n = float(self.num_visible)
            vr, vc, vv = self.S.coo()
            hidden = self.hidden_mask.nonzero().flatten()
            hr, hc, hv = self.rows(hidden).coo()
            row = torch.cat([self.visible[vr], hidden[hr]])
            col = torch.cat([self.visible[vc], self.visible[hc]])
            self._full_op = SparseOperator(row, col, torch.cat([vv, hv]) * n, self.shape)
        return self._full_op

    def _matmul(self, x: Tensor) -> Tensor:
        return self.full() @ x

    def block(self, rows=None, cols=None) -> SparseOperator:
        return self.full().block(rows, cols)

    def diagonal(self) -> Tensor:
        return self.full().diagonal()

    def to_dense(self) -> Tensor:
        return self.full().to_dense()

    @property
    def T(self) -> SparseOperator:
        return self.full().T

    def to(self, device=None, dtype=None) -> "GraphKernel":
        """The same kernel built on ``device`` in ``dtype`` (the edge list moves; nothing is densified)."""
        if self._source is None:      # from_edges
            r, c, _ = self.edges
            return GraphKernel.from_edges(r.to(device), c.to(device), self._weights.to(device=device, dtype=dtype),
                                          self.num_nodes, normalize=self._dis is not None,
                                          lazy=self.positive_semidefinite)
        edge_index, edge_weight = self._source
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", EdgeListWarning)
            return GraphKernel(edge_index, self.num_nodes, hidden=self.hidden_mask.to(edge_index.device),
                               edge_weight=edge_weight, dtype=dtype or self.dtype,
                               device=device if device is not None else self.device,
                               normalization=self.normalization)

    def spectral_bound(self) -> float:
        """``(n+m) lambda_max``: the spectral bound of the visible block ``G_K`` (Eq. 23)."""
        return float(self.num_visible) * self.lambda_max

    def _check_visible(self, visible: Tensor) -> None:
        if visible.numel() != self.num_visible or not torch.equal(visible.to(self.device), self.visible):
            raise ValueError("the visible nodes differ from those this GraphKernel was built with; build it with "
                             "hidden= the nodes to hide (Eq. 23 counts degrees over visible nodes only, App. D.1)")

    @property
    def num_visible(self) -> int:
        """``n + m``: the number of nodes the learner sees."""
        return int(self.visible.numel())

    def base_kernel(self) -> SparseOperator:
        """The Gram matrix ``G_K = (n+m) S`` of Eq. 23 on the visible nodes."""
        return self.S.scale(float(self.num_visible))

    def local(self, idx) -> Tensor:
        """Local (visible) ids of global nodes ``idx``; error if any of them is hidden."""
        g = as_index(idx, self.num_nodes, self.device)
        loc = self._g2l[g]
        if (loc < 0).any():
            bad = g[loc < 0][:5].tolist()
            raise ValueError(f"nodes {bad} are hidden from this kernel (inductive setting); "
                             "use rows() for out-of-sample predictions")
        return loc

    def is_hidden(self, idx) -> Tensor:
        """A boolean tensor ``[len(idx)]``: whether each node of ``idx`` (ids or a boolean mask)
        is hidden (inductive test node, absent from the visible graph of Eq. 23)."""
        return self.hidden_mask[as_index(idx, self.num_nodes, self.device)]

    def rows(self, idx) -> SparseOperator:
        """``K(x, visible) / (n+m)`` (``v_K(x) / (n+m)`` of Eq. 5) for global nodes ``idx``: ``[len(idx), N]``.

        Visible nodes give their rows of ``S``; a hidden node ``x`` gives ``W(x, v) / sqrt(D(x) D(v))``
        over its visible neighbours ``v`` (Eq. 23, ``D(x)`` its degree into visible nodes), a zero row
        when it has none.
        """
        g = as_index(idx, self.num_nodes, self.device)
        e = torch.zeros(0, dtype=torch.long, device=self.device)
        out_rows, out_cols, out_vals = [e], [e], [torch.zeros(0, dtype=self.dtype, device=self.device)]
        loc = self._g2l[g]
        vis_pos = (loc >= 0).nonzero().flatten()
        if vis_pos.numel():
            b = self.S.block(loc[vis_pos], None)
            br, bc, bv = b.coo()
            out_rows.append(vis_pos[br]); out_cols.append(bc); out_vals.append(bv)
        hid_pos = (loc < 0).nonzero().flatten()
        if hid_pos.numel():
            cr, cc, cw = self._cross
            pos = torch.full((self.num_nodes,), -1, dtype=torch.long, device=self.device)
            pos[g[hid_pos]] = hid_pos
            keep = pos[cr] >= 0
            cr, cc, cw = pos[cr[keep]], cc[keep], cw[keep]
            dx = torch.zeros(g.numel(), dtype=self.dtype, device=self.device).index_add_(0, cr, cw)
            out_rows.append(cr); out_cols.append(cc)
            out_vals.append(inv_sqrt_degree(dx)[cr] * cw * self._dis[cc] * self._half)
        return SparseOperator(torch.cat(out_rows), torch.cat(out_cols), torch.cat(out_vals),
                              (g.numel(), self.num_visible))

    def __repr__(self) -> str:
        return (f"GraphKernel(visible={self.num_visible}/{self.num_nodes}, nnz={self.S.nnz}, "
                f"normalization={self.normalization!r}, "
                f"isolated={int(self.isolated.sum())}, dtype={self.dtype}, device={self.device})")
