"""A labeled propagation problem on any kernel operator (:func:`make_problem`, :class:`Problem`), and what the
engines behind :func:`graphstk.methods.engine.solve` return. Notation: ``S = G_K / (n+m)`` over the ``N = n + m``
visible points (Eq. 5; Eq. 23 for a graph), ``n`` labeled ones at ``train``, ``E`` the ``N x n`` labeled columns,
``Y`` the ``n x C`` labels.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Sequence

import torch
from torch import Tensor

from .._checks import user_stacklevel
from .._index import as_index
from ..exceptions import ClassesWithoutLabelsWarning
from ..operators.base import KernelOperator, SparseOperator
from ..spectral.solvers import SolveResult
from ..spectral.transforms import Transform
from .._spaces import VectorSpace

SOLVERS = ("auto", "richardson", "cg", "gmres", "direct")

__all__ = ["Problem", "GridPoint", "EngineResult", "grid_pairs", "make_problem", "warn_classes_without_labels",
           "SOLVERS"]


def warn_classes_without_labels(counts: Tensor, stacklevel: int | None = None, names=None) -> list[int]:
    """Warn (:class:`ClassesWithoutLabelsWarning`) naming the classes whose training count is 0;
    returns their positions. ``names``: how to print class ``i`` (default: ``i``)."""
    missing = (counts == 0).nonzero().flatten().tolist()
    if missing:
        stacklevel = user_stacklevel() if stacklevel is None else stacklevel
        label = (lambda i: str(names[i])) if names is not None else str
        shown = ", ".join(label(i) for i in missing[:10]) + (" ..." if len(missing) > 10 else "")
        warnings.warn(f"{len(missing)} of {counts.numel()} classes have no training node (classes {shown}): nothing "
                      "can be learned about them, so they are never predicted; add labeled nodes of these classes "
                      "or lower num_classes", ClassesWithoutLabelsWarning, stacklevel=stacklevel)
    return missing


def training_labels(yt: Tensor, num_classes: int | None = None) -> tuple[Tensor, int, list[int]]:
    """``(yt, num_classes, missing)`` for the class ids ``yt >= 0`` of the labeled nodes (``num_classes`` default
    ``max(yt) + 1``); warns naming the classes without a label (``missing``)."""
    if yt.dtype.is_floating_point or yt.dtype == torch.bool:
        raise TypeError(f"labels must be integer class ids, got {yt.dtype}")
    if int(yt.min()) < 0:
        raise ValueError(f"training labels must be class ids >= 0, found {int(yt.min())} "
                         "(use -1 only for nodes outside train_idx)")
    if num_classes is None:
        num_classes = int(yt.max()) + 1
        distinct = int(torch.unique(yt).numel())
        if num_classes > 2 * distinct + 100:   # e.g. a stray id of 10**9: one_hot would need terabytes
            raise ValueError(f"the training labels reach {num_classes - 1} but only {distinct} distinct values occur: "
                             f"that would make {num_classes} classes: relabel the classes as 0..K-1 or pass "
                             "num_classes explicitly")
    elif isinstance(num_classes, bool) or int(num_classes) != num_classes or int(num_classes) < 1:
        raise ValueError(f"num_classes must be an integer >= 1, got {num_classes!r}")
    num_classes = int(num_classes)
    if int(yt.max()) >= num_classes:
        raise ValueError(
            f"training labels must lie in [0, {num_classes - 1}] for num_classes={num_classes}, found values in "
            f"[{int(yt.min())}, {int(yt.max())}]; pass num_classes={int(yt.max()) + 1} or fix the labels"
        )
    return yt, num_classes, warn_classes_without_labels(torch.bincount(yt.long(), minlength=num_classes))


def argmax_of_labeled_classes(scores: Tensor, missing: list[int]) -> Tensor:
    """The argmax of ``scores`` over the classes that have training labels (``missing`` never wins)."""
    if missing:
        scores = scores.clone()
        scores[:, missing] = -torch.inf
    return scores.argmax(dim=1)


@dataclass
class Problem:
    """A labeled propagation problem on the visible points of a kernel operator.

    Attributes
    ----------
    op : KernelOperator ``[N, N]``
        ``S = G_K / (n+m)`` over the visible points (Eq. 5).
    lambda_max : float
        An upper bound on ``|lambda(S)|`` (exactly 1 for a graph kernel with an edge, Eq. 23).
    train : LongTensor ``[n]``
        Local (visible) ids of the labeled points.
    Y : Tensor ``[n, C]``
        Their one-hot (or centered) labels.
    kernel : KernelOperator ``[num_points, num_points]``, optional
        The operator the problem was built from (out-of-sample rows for scoring).
    visible : LongTensor ``[N]``, optional
        Global ids of the visible points (local id ``i`` is point ``visible[i]``).
    rhs : Tensor ``[N, C]``, optional
        The right-hand side of the ``N x N`` systems (Eqs. 20, 22) when it is not ``[Y; 0]`` (:meth:`b`): e.g. the
        scores a :mod:`graphstk.nn` module propagates, or an adjoint's cotangent.
    psd : bool, default False
        Whether ``S`` is positive semidefinite by construction (the kernel's
        :attr:`~graphstk.operators.KernelOperator.positive_semidefinite`): the spectrum is then taken in
        ``[0, lambda_max]``, else ``[-lambda_max, lambda_max]``.
    """

    op: KernelOperator
    lambda_max: float
    train: Tensor
    Y: Tensor
    kernel: KernelOperator | None = None
    visible: Tensor | None = None
    rhs: Tensor | None = None
    psd: bool = False
    _blocks: dict = field(default_factory=dict, repr=False)   # S E and E^T S, built on first use

    @property
    def lambda_min(self) -> float:
        """A lower bound on the spectrum of ``S``: ``0`` if :attr:`psd`, else ``-lambda_max``."""
        return 0.0 if self.psd else -self.lambda_max

    def b(self) -> Tensor:
        """The right-hand side ``[N, C]`` of the ``N x N`` systems: :attr:`rhs`, or ``[Y; 0]``."""
        return self.rhs if self.rhs is not None else self.scatter(self.Y)

    def with_targets(self, Y: Tensor | None = None, rhs: Tensor | None = None, transpose: bool = False) -> "Problem":
        """The same problem with targets ``Y`` ``[n, C]`` and / or ``rhs`` ``[N, C]``; ``transpose``: ``S^T`` for ``S``."""
        if rhs is not None and Y is None:
            Y = self.labeled(rhs)
        op = self.op.T if transpose else self.op
        return Problem(op, self.lambda_max, self.train, self.Y if Y is None else Y, kernel=self.kernel,
                       visible=self.visible, rhs=rhs, psd=self.psd, _blocks={} if transpose else self._blocks)

    @property
    def N(self) -> int:
        return int(self.op.shape[0])

    @property
    def n(self) -> int:
        return int(self.train.numel())

    @property
    def C(self) -> int:
        return int(self.Y.shape[1])

    @property
    def num_points(self) -> int:
        return int(self.kernel.shape[0]) if self.kernel is not None else self.N

    @property
    def space(self) -> VectorSpace:
        """Where the solvers reduce over rows: the operator's :attr:`~graphstk.operators.KernelOperator.vector_space`."""
        return self.op.vector_space

    @property
    def sparse(self) -> SparseOperator | None:
        """``S`` when it is a :class:`SparseOperator` (sparse LU, graph components), else ``None``."""
        return self.op if isinstance(self.op, SparseOperator) else None

    @property
    def nnz(self) -> int:
        """Stored entries of ``S`` (``N^2`` for an operator that is not sparse)."""
        return self.sparse.nnz if self.sparse is not None else self.N * self.N

    def S(self, x: Tensor) -> Tensor:
        return self.op @ x

    @property
    def local_range(self) -> tuple[int, int] | None:
        """``(lo, hi)`` when the vector blocks hold only rows ``lo .. hi - 1`` (sharded vectors), else ``None``."""
        return getattr(self.op, "local_range", None) if getattr(self.space, "sharded", False) else None

    @property
    def rows_here(self) -> int:
        """Rows of every ``[., K]`` vector block on this process (``N`` unless sharded)."""
        r = self.local_range
        return self.N if r is None else r[1] - r[0]

    def _labeled_rows(self) -> tuple[Tensor, Tensor]:
        if "train_rows" not in self._blocks:
            r = self.local_range
            if r is None:
                self._blocks["train_rows"] = (self.train, None)
            else:
                here = ((self.train >= r[0]) & (self.train < r[1])).nonzero().flatten()
                self._blocks["train_rows"] = (self.train[here] - r[0], here)
        return self._blocks["train_rows"]

    @property
    def train_rows(self) -> Tensor:
        """The rows of this process's vector blocks that are labeled points (``train`` unless sharded)."""
        return self._labeled_rows()[0]

    def labeled(self, x: Tensor) -> Tensor:
        """``E^T x``: the ``[n, K]`` labeled rows of a vector block, the same on every process."""
        rows, here = self._labeled_rows()
        if here is None:
            return x[rows]
        out = torch.zeros(self.n, *x.shape[1:], dtype=x.dtype, device=x.device)
        out[here] = x[rows]
        return self.space.reduce_sum(out)

    def pick(self, x: Tensor, ids: Tensor) -> Tensor:
        """``x[ids]`` for visible ids ``ids`` of a vector block, the same on every process."""
        r = self.local_range
        if r is None:
            return x[ids]
        mine = (ids >= r[0]) & (ids < r[1])
        out = torch.zeros(ids.numel(), *x.shape[1:], dtype=x.dtype, device=x.device)
        out[mine] = x[ids[mine] - r[0]]
        return self.space.reduce_sum(out)

    def S_cols(self) -> KernelOperator:
        """``S E``: the ``N x n`` labeled columns of ``S`` as an operator (built once)."""
        if "cols" not in self._blocks:
            self._blocks["cols"] = self.op.block(None, self.train)
        return self._blocks["cols"]

    def S_rows(self) -> KernelOperator:
        """``E^T S``: the ``n x N`` labeled rows of ``S`` as an operator (built once)."""
        if "rows" not in self._blocks:
            self._blocks["rows"] = self.op.block(self.train, None)
        return self._blocks["rows"]

    def scatter(self, a: Tensor) -> Tensor:
        """``E a``: ``[n, K]`` values at the labeled positions of an ``[N, K]`` block (this process's rows)."""
        rows, here = self._labeled_rows()
        out = torch.zeros(self.rows_here, a.shape[1], dtype=a.dtype, device=a.device)
        out[rows] = a if here is None else a[here]
        return out

    def _g2l(self) -> Tensor:
        if "g2l" not in self._blocks:
            g2l = torch.full((self.num_points,), -1, dtype=torch.long, device=self.train.device)
            vis = self.visible if self.visible is not None else torch.arange(self.N, device=self.train.device)
            g2l[vis] = torch.arange(self.N, device=self.train.device)
            self._blocks["g2l"] = g2l
        return self._blocks["g2l"]

    def local(self, idx) -> Tensor:
        """Local ids of points ``idx`` (``-1`` for hidden points)."""
        return self._g2l()[as_index(idx, self.num_points, self.train.device, name="idx")]

    def rows(self, idx) -> KernelOperator:
        """``K(x, visible) / (n+m)`` for points ``idx``: the rows every score is read from."""
        g = as_index(idx, self.num_points, self.train.device, name="idx")
        if self.kernel is None:
            return self.op.block(g, None)
        vis = self.visible if self.visible is not None else torch.arange(self.N, device=g.device)
        return self.kernel.normalized_rows(g, vis)


@dataclass
class GridPoint:
    """One solved grid point: ``transform``, ridge ``beta`` (``None``: Label-Prop), budget ``T`` (``None``: to tol).

    ``h`` ``[N, C]``: scores of a point ``x`` are ``Problem.rows(x) @ h`` (Label-Prop: ``Yhat``, Eq. 22). ``x``: the
    solution of the system solved (Label-Prop's ``Yhat``, Algorithm 1 / 3's ``alpha`` ``[n, C]`` (Eq. 7),
    Algorithm 2's ``theta`` (Eq. 20)); ``None`` for TopD.
    """

    transform: Transform
    beta: float | None
    T: int | None
    h: Tensor
    x: Tensor | None = None


@dataclass
class EngineResult:
    """What :func:`graphstk.methods.engine.solve` returns: ``points`` (one :class:`GridPoint` per
    ``(transform, beta, T)``, in grid order) and ``history`` (the :class:`~graphstk.spectral.solvers.SolveResult` s)."""

    points: list[GridPoint] = field(default_factory=list)
    history: list[SolveResult] = field(default_factory=list)

    def add(self, pairs: Sequence[tuple[Transform, float | None]], T: int | None, h: Tensor,
            x: Tensor | None = None) -> None:
        """Append a point per ``(transform, beta)`` of ``pairs`` with its block of ``C`` columns of ``h`` (and ``x``)."""
        C = h.shape[1] // max(len(pairs), 1)
        xs = x.split(C, dim=1) if x is not None else [None] * len(pairs)
        for (tr, bt), hb, xb in zip(pairs, h.split(C, dim=1), xs):
            self.points.append(GridPoint(tr, bt, T, hb, xb))

    def record(self, route: str, reason: str, n_iter: int = 0) -> None:
        """Put a direct route (no iterate history) into ``history`` with why it was chosen."""
        self.history.append(SolveResult(torch.empty(0), n_iter=n_iter, converged=True, solver=route, reason=reason))


def grid_pairs(transforms: Sequence[Transform], betas: Sequence[float]) -> list[tuple[Transform, float | None]]:
    """The ``(transform, beta)`` pairs of a grid, ridges varying fastest (``beta = None`` without ridges)."""
    return [(tr, bt) for tr in transforms for bt in (betas or [None])]


def _hidden_mask(K: KernelOperator, hidden, n: int, device) -> Tensor:
    """The hidden points: ``hidden``, or the operator's own (a graph kernel built with ``hidden=``); both must agree."""
    own = getattr(K, "hidden_mask", None)
    mask = torch.zeros(n, dtype=torch.bool, device=device)
    if hidden is not None:
        mask[as_index(hidden, n, device, name="hidden_idx")] = True
    if own is None:
        return mask
    own = own.to(device)
    if hidden is not None and not torch.equal(mask, own):
        raise ValueError(f"hidden_idx ({int(mask.sum())} points) differs from the points hidden when the kernel was "
                         f"built ({int(own.sum())}): build the kernel with the same hidden nodes (a graph kernel's "
                         "degrees count visible nodes only, App. D.1), or omit hidden_idx")
    return own


def make_problem(K: KernelOperator, y: Tensor | None, train_idx, num_classes: int | None = None,
                 labels: str = "onehot", hidden=None, targets: Tensor | None = None) -> Problem:
    """Check labels and build the :class:`Problem` for a square operator ``K``.

    Parameters
    ----------
    K : KernelOperator ``[num_points, num_points]``
        Any kernel operator over all points: a :class:`~graphstk.operators.GraphKernel` (Eq. 23),
        a dense Gram matrix, a feature kernel, a kNN graph. Its visible block, divided by the
        number of visible points, is the ``S`` the engines iterate with (Eq. 5).
    y : Tensor ``[num_points]``
        Class ids; only ``y[train_idx]`` is read, so other entries may be anything (``-1``).
    train_idx : LongTensor of ids or boolean mask of length ``num_points``
    num_classes : int, optional
        ``None`` takes ``max(y[train_idx]) + 1``. Classes in ``0..C-1`` without a training
        point are named by a :class:`ClassesWithoutLabelsWarning`.
    labels : "onehot" | "centered"
        ``"onehot"``: ``Y`` is the one-hot matrix (Appendix D). ``"centered"``: minus its
        column means over the labeled points (a common variant the paper does not state; every
        engine is linear in ``Y``, so it shifts each score row by ``-f(1) c^T``).
    hidden : LongTensor or boolean mask, optional
        Points the learner may not see (inductive setting); they are scored out of sample.
        A graph kernel built with ``hidden=`` brings its own.
    targets : float Tensor ``[num_points, C]`` or ``[n, C]``, optional
        Scores to propagate instead of class labels (soft labels, logits, the input block of a
        :mod:`graphstk.nn` module): ``Y`` is ``targets[train_idx]`` (or ``targets`` itself when it has
        one row per labeled point, in ``train_idx`` order). ``y`` and ``num_classes`` are then not
        read (``y`` may be ``None``); ``labels="centered"`` still centres the columns.
    """
    if labels not in ("onehot", "centered"):
        raise ValueError(f"labels must be 'onehot' or 'centered', got {labels!r}")
    if not isinstance(K, KernelOperator):
        raise TypeError(f"the kernel must be a graphstk KernelOperator (GraphKernel, DenseOperator, a feature "
                        f"kernel, ...), got {type(K).__name__}; wrap a dense Gram matrix as DenseOperator(G)")
    n_pts, m = K.shape
    if n_pts != m:
        raise ValueError(f"the kernel must be square (one row and column per point), got shape {tuple(K.shape)}")
    if targets is not None:
        return _problem_from_targets(K, targets, train_idx, labels, hidden)
    if not isinstance(y, Tensor) or y.dim() != 1:
        raise ValueError(f"y must be a 1-D tensor of class ids with one entry per node, got "
                         f"{tuple(y.shape) if isinstance(y, Tensor) else type(y).__name__}")
    if y.numel() != n_pts:
        raise ValueError(f"y has {y.numel()} entries but the kernel has {n_pts} points (nodes)")
    visible, gidx = _visible_and_labeled(K, train_idx, hidden)
    yt, num_classes, _ = training_labels(y.to(K.device)[gidx], num_classes)
    S, lam = K.normalized_gram(visible)
    Y = torch.nn.functional.one_hot(yt.long(), num_classes).to(S.dtype)
    return _assemble(K, S, lam, visible, gidx, Y, labels)


def _visible_and_labeled(K: KernelOperator, train_idx, hidden) -> tuple[Tensor, Tensor]:
    n_pts, device = K.shape[0], K.device
    hidden_mask = _hidden_mask(K, hidden, n_pts, device)
    visible = (~hidden_mask).nonzero().flatten()
    gidx = as_index(train_idx, n_pts, device, name="train_idx", allow_none=False)
    if gidx.numel() == 0:
        raise ValueError("no labeled nodes: train_idx is empty")
    if bool(hidden_mask[gidx].any()):
        bad = gidx[hidden_mask[gidx]][:5].tolist()
        raise ValueError(f"labeled nodes {bad} are hidden: a labeled node cannot be hidden from fit")
    if torch.unique(gidx).numel() != gidx.numel():
        raise ValueError("train_idx contains duplicates")
    return visible, gidx


def _assemble(K, S, lam, visible, gidx, Y, labels) -> Problem:
    if labels == "centered":
        Y = Y - Y.mean(dim=0, keepdim=True)
    g2l = torch.full((K.shape[0],), -1, dtype=torch.long, device=K.device)
    g2l[visible] = torch.arange(visible.numel(), device=K.device)
    return Problem(S, float(lam), g2l[gidx], Y, kernel=K, visible=visible,
                   psd=bool(getattr(K, "positive_semidefinite", False)))


def _problem_from_targets(K: KernelOperator, targets: Tensor, train_idx, labels: str, hidden) -> Problem:
    if not isinstance(targets, Tensor) or targets.dim() != 2 or not targets.dtype.is_floating_point:
        got = (targets.dtype, tuple(targets.shape)) if isinstance(targets, Tensor) else type(targets).__name__
        raise ValueError(f"targets must be a float tensor [num_points, C] or [n, C], got {got}")
    visible, gidx = _visible_and_labeled(K, train_idx, hidden)
    if targets.shape[0] == K.shape[0]:
        Y = targets.to(K.device)[gidx]
    elif targets.shape[0] == gidx.numel():
        Y = targets.to(K.device)
    else:
        raise ValueError(f"targets has {targets.shape[0]} rows: give one per point ({K.shape[0]}) or one per labeled "
                         f"point ({gidx.numel()})")
    S, lam = K.normalized_gram(visible)
    return _assemble(K, S, lam, visible, gidx, Y.to(S.dtype), labels)


def per_column(values: Sequence[float], C: int, like: Tensor) -> Tensor:
    """``values`` repeated ``C`` times each: one entry per column of a grid's ``[., len(values) C]`` block."""
    return torch.as_tensor(list(values), dtype=like.dtype, device=like.device).repeat_interleave(C)


def sym_solve_path(B: Tensor, scale: float, shifts: Sequence[float], rhs: Tensor, what: str) -> list[Tensor]:
    """Solve ``(scale * B + shift I) a = rhs`` for every shift with one float64 ``eigh`` of ``B`` (float32's can
    return NaN on a sparse ``B``); solutions in ``rhs``'s dtype."""
    if B.numel() == 0:   # no features at all (e.g. kernel PCA on an edgeless graph): the zero predictor
        return [torch.zeros(0, rhs.shape[1], dtype=rhs.dtype, device=rhs.device) for _ in shifts]
    lam, V = torch.linalg.eigh(((B + B.T) / 2).double())
    if not (bool(torch.isfinite(lam).all()) and bool(torch.isfinite(V).all())):
        raise FloatingPointError(f"{what}: the eigendecomposition of the {B.shape[0]} x {B.shape[0]} "
                                 "system matrix is not finite")
    proj = V.T @ rhs.double()
    out = []
    for s in shifts:
        d = scale * lam + s
        tiny = torch.finfo(B.dtype).eps * max(1.0, float(d.abs().max()))
        if bool((d.abs() <= tiny).any()):
            warnings.warn(f"{what}: the system is numerically singular for shift {s:g}; "
                          "its solution is the least-norm one", stacklevel=3)
            d = torch.where(d.abs() <= tiny, torch.full_like(d, float("inf")), d)
        out.append((V @ (proj / d.unsqueeze(1))).to(rhs.dtype))
    return out
