"""Adjacency inputs of the :mod:`graphstk.nn` modules, read as PyG's ``LabelPropagation`` reads them.

Every module takes ``edge_index_or_adj`` in one of PyG's forms and turns it into a
propagation matrix ``P`` with ``(P x)[i] = sum_{edges j -> i} w_ji x[j]`` (PyG's
``flow="source_to_target"``):

* ``edge_index`` ``[2, E]`` (a LongTensor or a :class:`torch_geometric.EdgeIndex`), source in
  row 0, target in row 1. Without ``edge_weight`` the values are ``gcn_norm``'s
  ``d_j^-1/2 d_i^-1/2`` (in-degrees, no self-loops added); with ``edge_weight`` the weights are
  the propagation matrix as given (PyG's ``LabelPropagation`` never renormalises them).
* a ``torch.sparse`` COO or CSR ``adj_t`` ``[N, N]`` (row = target, column = source): its values
  are ``gcn_norm``-normalised (PyG normalises a sparse ``adj_t`` whenever ``edge_weight`` is absent).
* a ``torch_sparse.SparseTensor`` ``adj_t`` (when ``torch_sparse`` is installed): ``gcn_norm`` when
  it has no values, its values as given otherwise.

``normalize=True`` / ``False`` overrides the rule (always / never ``gcn_norm``).

The matrix is an :class:`Operator`, a :class:`~graphstk.operators.KernelOperator` (products
differentiable in the values), normalised by the package's one
:func:`~graphstk.operators.graph.symmetric_normalization`; :class:`AdjacencyKernel` presents it to
:func:`graphstk.methods.problem.make_problem`, so that the modules solve through the engine.

The structure (CSR order of the edges and of the transposed edges) is kept by
:class:`OperatorCache` for as long as the same tensors come back unmodified (same objects,
same in-place version counter), so a module called on a fixed graph pays for it once; values
that require grad are recomputed differentiably from the cached structure on every call.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import torch
from torch.autograd.function import once_differentiable
from torch import Tensor

from .._checks import user_stacklevel
from ..operators.base import KernelOperator, SparseOperator
from ..operators.graph import symmetric_normalization

try:  # torch_sparse is optional, as in PyG
    from torch_sparse import SparseTensor as _SparseTensor
except ImportError:  # pragma: no cover - depends on the environment
    _SparseTensor = None

__all__ = ["Operator", "OperatorCache", "AdjacencyKernel", "build_operator", "gcn_values"]


def gcn_values(tgt: Tensor, src: Tensor, w: Tensor, num_nodes: int) -> Tensor:
    """``gcn_norm`` without self-loops: ``w_ji / sqrt(d_j d_i)`` with ``d`` the weighted in-degree
    (sum of the weights into a node); a node of degree 0 gets factor 0, never NaN. This is the
    package's one symmetric normalisation, :func:`graphstk.operators.graph.symmetric_normalization`,
    of ``P`` (row = target); differentiable in ``w``."""
    return symmetric_normalization(tgt, src, w, num_nodes)[0]


def _csr(order: Tensor, rows: Tensor, num_nodes: int) -> Tensor:
    counts = torch.bincount(rows[order], minlength=num_nodes)
    crow = torch.zeros(num_nodes + 1, dtype=torch.long, device=rows.device)
    torch.cumsum(counts, 0, out=crow[1:])
    return crow


@dataclass(eq=False)
class Operator(KernelOperator):
    """The propagation matrix ``P`` ``[N, N]`` as edge lists plus CSR layouts of ``P`` and ``P^T``:
    a :class:`~graphstk.operators.KernelOperator`.

    ``value`` may require grad: ``P @ x`` (:func:`graphstk.nn.adjacency.spmm`) is differentiable in
    ``value`` and in the dense block, at the speed of a CSR product. :meth:`sparse` is the same
    matrix, detached, as a :class:`~graphstk.operators.SparseOperator`: what the engine
    (:func:`graphstk.methods.engine.solve`) iterates with inside the implicit-gradient function.
    """

    tgt: Tensor
    src: Tensor
    value: Tensor | None   # None: no values of its own (the structure of a cache)
    num_nodes: int
    perm: Tensor          # edges in target-major (CSR) order
    crow: Tensor
    normalized: bool = False   # values from gcn_norm: for a symmetric graph ||P||_2 <= 1
    # Built on first use and shared by every copy with other values: "t" the (perm, crow) of P^T,
    # "rev" the edge pairing of P and P^T (False: not symmetric in structure).
    _lazy: dict = field(default_factory=dict, repr=False)

    def csr(self, value: Tensor | None = None) -> Tensor:
        """``P`` as a ``torch.sparse_csr_tensor`` (with ``value`` in edge order, default ``self.value``)."""
        v = (self.value if value is None else value).detach()[self.perm]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)   # "CSR support is in beta"
            return torch.sparse_csr_tensor(self.crow, self.src[self.perm], v, (self.num_nodes,) * 2,
                                           check_invariants=False)

    def csr_t(self, value: Tensor | None = None) -> Tensor:
        """``P^T`` as a CSR tensor."""
        perm, crow = self._lazy_t()
        v = (self.value if value is None else value).detach()[perm]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return torch.sparse_csr_tensor(crow, self.tgt[perm], v, (self.num_nodes,) * 2, check_invariants=False)

    # -- the operator interface --------------------------------------------------------------------
    shape = property(lambda self: (self.num_nodes, self.num_nodes))
    dtype = property(lambda self: self.value.dtype)
    device = property(lambda self: self.tgt.device)

    def _matmul(self, x: Tensor) -> Tensor:
        return spmm(self, x)

    @property
    def T(self) -> "Operator":
        """``P^T`` (the edges reversed, the same values)."""
        return Operator(self.src, self.tgt, self.value, self.num_nodes, *self._lazy_t(), normalized=self.normalized)

    def _lazy_t(self):
        if "t" not in self._lazy:
            perm = torch.argsort(self.src, stable=True)
            self._lazy["t"] = (perm, _csr(perm, self.src, self.num_nodes))
        return self._lazy["t"]

    def sparse(self) -> SparseOperator:
        """``P`` with detached values as a :class:`~graphstk.operators.SparseOperator` (built once per values)."""
        key = (id(self.value), self.value._version)
        got = self._lazy.get("sparse")
        if got is None or got[0] != key or got[2] is not self.value:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                got = (key, SparseOperator(self.tgt, self.src, self.value.detach(), self.shape), self.value)
            self._lazy["sparse"] = got
        return got[1]

    def with_value(self, value: Tensor) -> "Operator":
        """The same structure with other values (edge order), sharing the transposed layout."""
        return Operator(self.tgt, self.src, value, self.num_nodes, self.perm, self.crow, _lazy=self._lazy)

    def is_symmetric(self) -> bool:
        """Whether ``P = P^T`` (duplicate edges summed); the edge pairing is computed once per structure."""
        if "rev" not in self._lazy:
            n = self.num_nodes
            k1, inv1 = torch.unique(self.tgt * n + self.src, return_inverse=True)
            k2, inv2 = torch.unique(self.src * n + self.tgt, return_inverse=True)
            self._lazy["rev"] = (inv1, inv2, k1.numel()) if torch.equal(k1, k2) else False
        if self._lazy["rev"] is False:
            return False
        inv1, inv2, u = self._lazy["rev"]
        v = self.value.detach()
        a = torch.zeros(u, dtype=v.dtype, device=v.device).index_add_(0, inv1, v)
        b = torch.zeros(u, dtype=v.dtype, device=v.device).index_add_(0, inv2, v)
        return bool(torch.allclose(a, b, rtol=1e-6, atol=1e-12))

    def to_dense(self) -> Tensor:
        """``P`` as a dense matrix (small graphs, tests)."""
        out = torch.zeros(self.num_nodes, self.num_nodes, dtype=self.value.dtype, device=self.value.device)
        return out.index_put((self.tgt, self.src), self.value, accumulate=True)


class AdjacencyKernel(KernelOperator):
    """The kernel ``K = N D P`` of a propagation matrix ``P`` (an :class:`Operator`) over its ``N``
    nodes, every node visible, so that ``make_problem`` hands the engine ``S = K / N = D P`` (Eq. 5):
    for a ``gcn_norm``-ed undirected graph that is Eq. 23's ``D^{-1/2} W D^{-1/2}``. ``D`` is an
    optional diagonal row scaling ``[N, 1]`` (``LabelPropagation(keep_labels=True)``'s unlabeled rows).

    Products use ``P``'s values detached (the engine runs inside the implicit-gradient function of
    :mod:`graphstk.nn.autograd`; the gradient comes from the adjoint solve). The spectral bound is
    ``1`` for a ``gcn_norm``-ed symmetric ``P`` with non-negative weights (``lambda_1 = 1``, Eq. 23),
    else ``min(max row sum, max column sum)`` of ``|D P|``, an upper bound on its spectral radius.

    ``lazy=True`` gives the lazy kernel ``S = (I + P) / 2`` of a ``gcn_norm``-ed undirected ``P``
    (:class:`~graphstk.operators.GraphKernel`'s ``normalization="lazy"``): positive semidefinite by
    construction (:attr:`positive_semidefinite`), spectral bound ``1``.
    """

    def __init__(self, op: Operator, row_scale: Tensor | None = None, lazy: bool = False):
        self.op, self.row_scale, self.lazy = op, row_scale, bool(lazy)
        if self.lazy and (row_scale is not None or not (op.normalized and op.is_symmetric())):
            raise ValueError("lazy=True needs a gcn_norm-ed undirected propagation matrix without a row scaling")
        self.positive_semidefinite = self.lazy

    shape = property(lambda self: self.op.shape)
    dtype = property(lambda self: self.op.dtype)
    device = property(lambda self: self.op.device)

    def _S(self) -> SparseOperator:
        if self.lazy:     # (I + P) / 2: the edges halved, 1/2 on the diagonal
            N = self.shape[0]
            diag = torch.arange(N, device=self.op.tgt.device)
            v = self.op.value.detach()
            return SparseOperator(torch.cat([self.op.tgt, diag]), torch.cat([self.op.src, diag]),
                                  torch.cat([0.5 * v, torch.full((N,), 0.5, dtype=v.dtype, device=v.device)]),
                                  self.shape)
        if self.row_scale is None:
            return self.op.sparse()
        v = self.op.value.detach() * self.row_scale.view(-1)[self.op.tgt].to(self.op.dtype)
        return SparseOperator(self.op.tgt, self.op.src, v, self.shape)

    def _matmul(self, x: Tensor) -> Tensor:
        return self._S() @ x * float(self.shape[0])

    def block(self, rows=None, cols=None) -> SparseOperator:
        return self._S().scale(float(self.shape[0])).block(rows, cols)

    def _check(self, visible: Tensor) -> None:
        if visible.numel() != self.shape[0]:
            raise ValueError("an AdjacencyKernel is transductive: every node is visible")

    def normalized_gram(self, visible: Tensor) -> tuple[SparseOperator, float]:
        self._check(visible)
        S = self._S()
        if self.lazy:
            return S, (1.0 if self.op.tgt.numel() else 0.5)
        if self.op.normalized and self.op.is_symmetric():
            return S, (1.0 if S.nnz else 0.0)
        a = torch.zeros(self.shape[0], dtype=S.dtype, device=S.device)
        row, col, val = S.coo()
        bound = min(float(a.index_add(0, row, val.abs()).max()), float(a.index_add(0, col, val.abs()).max())) \
            if S.nnz else 0.0
        return S, bound

    def normalized_rows(self, rows: Tensor, visible: Tensor) -> SparseOperator:
        self._check(visible)
        return self._S().block(rows, None)


def _edges(adj, num_nodes: int):
    """``(tgt, src, the adjacency's own values or None, PyG normalises them?, is an edge_index)``."""
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


def build_operator(adj, num_nodes: int, edge_weight: Tensor | None = None, dtype: torch.dtype = torch.float32,
                   normalize: bool | None = None) -> Operator:
    """The propagation matrix of ``adj`` (see the module docstring) with values in ``dtype``.

    Parameters
    ----------
    adj : LongTensor ``[2, E]`` | EdgeIndex | torch.sparse ``[N, N]`` | SparseTensor
    num_nodes : int
    edge_weight : Tensor ``[E]``, optional
        Only read with an ``edge_index``; kept differentiable.
    dtype : torch.dtype, default float32
    normalize : bool, optional
        ``None`` (default): PyG's rule; ``True``: always ``gcn_norm``; ``False``: never.
    """
    return OperatorCache().get(adj, num_nodes, edge_weight, dtype, normalize)


class OperatorCache:
    """Keeps the last operator while the same adjacency (and weights) come back.

    Two levels: the structure (edge lists, CSR order) is keyed on the identity and in-place version
    of ``adj`` and ``num_nodes``; the values on those of ``edge_weight``, ``dtype`` and
    ``normalize``. Modifying a tensor in place, or passing another one, rebuilds that level. Weights
    that require grad reuse the structure and get their values recomputed, differentiably, every call.
    """

    def __init__(self):
        self.clear()

    @staticmethod
    def _version(t):
        return None if t is None else (id(t), getattr(t, "_version", None))

    def get(self, adj, num_nodes: int, edge_weight: Tensor | None, dtype: torch.dtype,
            normalize: bool | None) -> Operator:
        """The operator of ``adj`` with ``edge_weight`` (cached as described above)."""
        skey = (self._version(adj), num_nodes)
        if skey != self._skey:
            tgt, src, own, pyg_norm, is_edge_index = _edges(adj, num_nodes)
            perm = torch.argsort(tgt, stable=True)
            self._base = Operator(tgt, src, own, num_nodes, perm, _csr(perm, tgt, num_nodes))
            self._norm_rule, self._is_edge_index = pyg_norm, is_edge_index
            self._skey, self._vkey, self._adj = skey, None, adj    # the reference keeps id(adj) valid
        base = self._base
        if edge_weight is not None:
            if not self._is_edge_index:
                warnings.warn("edge_weight is not read with a sparse adjacency (as in PyG): its own values are the "
                              "weights", UserWarning, stacklevel=user_stacklevel())
                edge_weight = None
            elif not isinstance(edge_weight, Tensor) or edge_weight.dim() != 1 or edge_weight.numel() != base.tgt.numel():
                raise ValueError(f"edge_weight must be a 1-D tensor with one entry per edge ({base.tgt.numel()}), got "
                                 f"{tuple(edge_weight.shape) if isinstance(edge_weight, Tensor) else edge_weight!r}")
        grad = edge_weight is not None and edge_weight.requires_grad and torch.is_grad_enabled()
        vkey = (self._version(edge_weight), dtype, normalize)
        if not grad and vkey == self._vkey:
            return self._op
        if edge_weight is not None:
            w, rule = edge_weight.to(dtype), False            # PyG: given weights are the matrix
        elif base.value is not None:
            w, rule = base.value.to(dtype), self._norm_rule   # a sparse adjacency's own values
        else:
            w, rule = torch.ones(base.tgt.numel(), dtype=dtype, device=base.tgt.device), True
        norm = normalize if normalize is not None else rule
        if norm:
            w = gcn_values(base.tgt, base.src, w, num_nodes)
        op = base.with_value(w)
        op.normalized = bool(norm) and bool((w.detach() >= 0).all())
        if not grad:
            self._vkey, self._op, self._weight = vkey, op, edge_weight
        return op

    def clear(self) -> None:
        """Forget the cached operator."""
        self._skey = self._vkey = self._adj = self._weight = self._op = self._base = None


class _SpMM(torch.autograd.Function):
    @staticmethod
    def forward(ctx, value: Tensor, x: Tensor, op: "Operator") -> Tensor:
        ctx.op = op
        ctx.save_for_backward(value, x)
        return op.csr(value) @ x

    @staticmethod
    @once_differentiable
    def backward(ctx, g: Tensor):
        value, x = ctx.saved_tensors
        op = ctx.op
        gx = op.csr_t(value) @ g if ctx.needs_input_grad[1] else None
        gv = (g[op.tgt] * x[op.src]).sum(1) if ctx.needs_input_grad[0] else None
        return gv, gx, None


def spmm(op: "Operator", x: Tensor, value: Tensor | None = None) -> Tensor:
    """``P x`` with ``P`` the operator's matrix (``value``: other edge values, same structure).

    Differentiable with respect to ``x`` and the values; without grad it is one CSR product.
    """
    value = op.value if value is None else value
    if value.dtype != x.dtype:
        value = value.to(x.dtype)
    if torch.is_grad_enabled() and (value.requires_grad or x.requires_grad):
        return _SpMM.apply(value, x, op)
    return op.csr(value) @ x
