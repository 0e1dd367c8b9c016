"""PyG-style propagation modules: Label-Prop (STKR Eq. 22) and STKR-Prop (Algorithms 1-2).

Both modules share the signature of
:class:`torch_geometric.nn.models.LabelPropagation`::

    out = module(y, edge_index, mask, edge_weight=None)   # [N, C] scores for every node

``y`` is a LongTensor ``[N]`` of labels (entries outside ``mask`` are ignored and may
be ``-1``) or a float ``[N, C]`` of soft labels / one-hot rows; ``mask`` is a boolean mask
``[N]`` or a LongTensor of ids of the labeled nodes, both meaning the same
(:func:`graphstk._index.as_index`; ``None``: every node is labeled). Rows that no label
reaches are all zero: each call flags them in ``module.unreachable_`` (BoolTensor ``[N]``)
and ``module.n_unreachable_`` and warns (:class:`~graphstk.methods.UnreachableNodesWarning`). The
setting is transductive: every node of ``edge_index`` is visible, and the kernel is
the normalized adjacency ``S = D^{-1/2} W D^{-1/2}`` (Eq. 23 up to its ``n + m``
factor), built on the device of ``edge_index``.

The mathematics lives in :mod:`graphstk.methods.propagation`; these modules only
turn PyG inputs into a :class:`~graphstk.methods.propagation.Problem` and pick
solvers that stay in torch (CG, GMRES, Richardson), so CPU and CUDA tensors take
the same path. ``solver="direct"`` is accepted but may go through scipy on CPU.

Differences from PyG's ``LabelPropagation``: no clamping of the scores to
``[0, 1]``, and the labeled rows ``[Y; 0]`` enter every step (Zhou et al.'s
``Yhat <- eta S Yhat + [Y; 0]``), so the fixed point is exactly Eq. 22 rather than
a clamped, mask-blind iterate. Scores are not normalised: ``Yhat`` solves
``(I - eta S) Yhat = [Y; 0]`` (PyG's ``(1 - alpha)`` factor is absent; the argmax is
unaffected).
"""
from __future__ import annotations

import torch
from torch import Tensor

from .._checks import check_int, check_real
from .._index import as_index
from ..methods import propagation as P
from ..methods.estimators import flag_unreachable
from ..operators.graph import GraphKernel
from ..spectral.transforms import Polynomial, ReciprocalPolynomial

__all__ = ["LabelPropagation", "STKRPropagation"]

_FLOATS = (torch.float32, torch.float64)


def _labels(y: Tensor, mask, num_classes: int | None, dtype: torch.dtype | None, device):
    """``(train, Y, out_dtype)``: labeled node ids, their ``[n, C]`` label rows in the
    computation dtype (``dtype``, float64 when ``None``) and the dtype of the output
    (``dtype`` if given, else ``y``'s float dtype, else the default dtype)."""
    if not isinstance(y, Tensor):
        raise TypeError(f"y must be a torch.Tensor, got {type(y).__name__}")
    hard = not y.dtype.is_floating_point and y.size(0) == y.numel()
    if not hard and y.dim() != 2:
        raise ValueError(f"y must be integer labels [N] or a float label matrix [N, C], got shape {tuple(y.shape)} "
                         f"and dtype {y.dtype}")
    if dtype is None:
        out_dtype = y.dtype if y.dtype.is_floating_point else torch.get_default_dtype()
        dtype = torch.float64
    else:
        out_dtype = dtype
    if dtype not in _FLOATS:
        raise ValueError(f"dtype must be torch.float32 or torch.float64, got {dtype}")
    N = y.size(0)
    y = y.to(device)
    train = as_index(mask, N, device, name="mask")
    if train.numel() == 0:
        raise ValueError("mask selects no labeled node")
    if torch.unique(train).numel() != train.numel():
        raise ValueError("mask (as an index) contains duplicates")
    if hard:
        y = y.view(-1)
        if y.dtype == torch.bool:
            y = y.long()
        yt = y[train].long()
        lo, hi = int(yt.min()), int(yt.max())
        C = int(num_classes) if num_classes is not None else hi + 1   # never y.max() over unlabeled nodes
        if num_classes is None and C > 2 * int(torch.unique(yt).numel()) + 100:
            raise ValueError(f"the labels of the masked nodes reach {hi} but only {int(torch.unique(yt).numel())} "
                             f"distinct values occur; relabel the classes as 0..K-1 or pass num_classes")
        if C < 1:
            raise ValueError(f"num_classes must be >= 1, got {C}")
        if lo < 0 or hi >= C:
            raise ValueError(f"labels of the masked nodes must lie in [0, {C - 1}], found values in [{lo}, {hi}]")
        P.warn_classes_without_labels(torch.bincount(yt, minlength=C))
        Y = torch.nn.functional.one_hot(yt, C).to(dtype)
    else:
        if num_classes is not None and y.size(1) != num_classes:
            raise ValueError(f"y has {y.size(1)} columns, but num_classes={num_classes}")
        Y = y[train].to(dtype)
        if not torch.isfinite(Y).all():
            raise ValueError("label rows of the masked nodes must be finite")
    return train, Y, out_dtype


class _Propagation(torch.nn.Module):
    def __init__(self, max_iter: int, tol: float, solver: str, dtype, num_classes, cached: bool,
                 clean_edges: bool = False):
        super().__init__()
        P.check_solver_options(solver, max_iter, tol)
        if dtype is not None and dtype not in _FLOATS:
            raise ValueError(f"dtype must be torch.float32, torch.float64 or None, got {dtype}")
        self.max_iter, self.tol, self.solver = int(max_iter), float(tol), solver
        self.dtype, self.num_classes, self.cached = dtype, check_int("num_classes", num_classes, allow_none=True), \
            bool(cached)
        self.clean_edges = bool(clean_edges)
        self._cached_kernel: GraphKernel | None = None
        self.history_ = []
        self.unreachable_: Tensor | None = None
        self.n_unreachable_ = 0

    def reset_cache(self) -> None:
        """Forget the kernel kept by ``cached=True``."""
        self._cached_kernel = None

    def _problem(self, y, edge_index, mask, edge_weight) -> tuple[P.Problem, torch.dtype]:
        device = edge_index.device
        train, Y, out_dtype = _labels(y, mask, self.num_classes, self.dtype, device)
        dtype = Y.dtype
        kernel = self._cached_kernel
        if kernel is None or kernel.dtype != dtype or kernel.device != device or kernel.num_nodes != y.size(0):
            kernel = GraphKernel(edge_index, y.size(0), edge_weight=edge_weight, dtype=dtype, device=device,
                                 clean_edges=self.clean_edges)
            if self.cached:
                self._cached_kernel = kernel
        # Transductive: every node is visible, so local ids are global ids.
        return P.Problem(kernel.S, kernel.lambda_max, train, Y, kernel=kernel, visible=kernel.visible), out_dtype

    def _finish(self, res: P.EngineResult, out: Tensor) -> Tensor:
        self.history_ = res.history
        return flag_unreachable(self, out)


class LabelPropagation(_Propagation):
    r"""Label propagation (Zhou et al., 2003): ``(I - eta S) Yhat = [Y; 0]``, STKR Eq. 22.

    Parameters
    ----------
    eta : float in ``(0, 1)``, default 0.99
        Propagation weight.
    num_iter : int, optional
        Run exactly ``T = num_iter`` steps of ``Yhat <- eta S Yhat + [Y; 0]`` from
        ``Yhat = 0`` (Richardson; ``solver="cg"`` runs ``T`` CG steps instead). ``None``:
        solve Eq. 22 to the relative residual ``tol`` (CG by default).
    tol : float, default 1e-6
        Relative residual of the solve to tolerance.
    max_iter : int, default 1000
        Iteration cap of the solve to tolerance.
    solver : {"auto", "richardson", "cg", "gmres", "direct"}, default "auto"
    dtype : torch.dtype, optional
        Computation and output dtype. ``None`` (default): compute in float64 (as the
        estimators; float32 Krylov solves of ill-conditioned STKR systems can stall near a
        relative residual of 1e-4) and return ``y``'s float dtype, or the default dtype
        for integer labels.
    num_classes : int, optional
        Columns of the output for integer labels (default: ``max(y[mask]) + 1``; labels outside
        ``mask`` are never read).
    cached : bool, default False
        Keep the normalized kernel of the first call (as PyG's ``cached``); only for a fixed graph.
    alpha : float, optional
        PyG's spelling of ``eta`` (:class:`torch_geometric.nn.models.LabelPropagation`).
    num_layers : int, optional
        PyG's spelling of ``num_iter``.
    clean_edges : bool, default False
        Drop self-loops and duplicate edges (else kept / summed, with an ``EdgeListWarning``).

    Attributes
    ----------
    history_ : list of SolveResult (route and reason of each solve of the last call)
    unreachable_ : BoolTensor ``[N]``, n_unreachable_ : int
        Nodes of the last call that no label reaches (all-zero rows), and their number.
    """

    def __init__(self, eta: float | None = 0.99, num_iter: int | None = None, tol: float = 1e-6,
                 max_iter: int = 1000, solver: str = "auto", dtype: torch.dtype | None = None,
                 num_classes: int | None = None, cached: bool = False, *, alpha: float | None = None,
                 num_layers: int | None = None, clean_edges: bool = False):
        super().__init__(max_iter, tol, solver, dtype, num_classes, cached, clean_edges)
        from ..methods.estimators import _resolve_alias
        eta = _resolve_alias("eta", eta, "alpha", alpha, 0.99)
        num_iter = _resolve_alias("num_iter", num_iter, "num_layers", num_layers, None)
        eta = check_real("eta", eta)
        if not eta < 1:
            hint = (" (PyG's LabelPropagation takes (num_layers, alpha) in that order; here write "
                    f"LabelPropagation(num_layers={eta:g}, alpha=...) or LabelPropagation(eta=..., num_iter={eta:g}))"
                    if eta == int(eta) else "")
            raise ValueError(f"eta must lie in (0, 1), got {eta}{hint}")
        num_iter = check_int("num_iter", num_iter, allow_none=True)
        if num_iter is not None and solver not in ("auto", "richardson", "cg"):
            raise ValueError(f"num_iter needs solver 'richardson' or 'cg', got {solver!r}")
        self.eta = eta
        self.num_iter = num_iter

    @torch.no_grad()
    def forward(self, y: Tensor, edge_index: Tensor, mask=None, edge_weight: Tensor | None = None) -> Tensor:
        """Scores ``Yhat`` ``[N, C]`` of every node.

        Parameters
        ----------
        y : LongTensor ``[N]`` of labels, or float ``[N, C]`` soft labels
        edge_index : LongTensor ``[2, E]``
        mask : BoolTensor ``[N]`` or LongTensor of ids, optional
            The labeled nodes (default: all).
        edge_weight : Tensor ``[E]``, optional

        Returns
        -------
        Tensor ``[N, C]``; all-zero rows (no label reaches them) are flagged in ``unreachable_``.
        """
        prob, out_dtype = self._problem(y, edge_index, mask, edge_weight)
        budgets = (self.num_iter,) if self.num_iter is not None else ()
        res = P.label_propagation(prob, [self.eta], solver=self.solver, max_iter=self.max_iter, tol=self.tol,
                                  budgets=budgets)
        return self._finish(res, next(iter(res.h.values())).to(out_dtype))

    def __repr__(self) -> str:
        it = f"num_iter={self.num_iter}" if self.num_iter is not None else f"tol={self.tol:g}"
        return f"{type(self).__name__}(eta={self.eta}, {it}, solver={self.solver!r})"


class STKRPropagation(_Propagation):
    r"""STKR-Prop (Zhai et al., ICLR 2024): transductive STKR (Eq. 7) as a PyG-style module.

    Solves ``alpha = (G_{Khat_s,n} + n beta I)^{-1} Y`` with the base kernel of Eq. 23
    on the graph of ``edge_index`` and returns ``f(x) = Khat_s(x, X_n) alpha`` for every
    node ``x``.

    Parameters
    ----------
    transform : Polynomial | ReciprocalPolynomial | InverseLaplacian
        ``Polynomial`` (e.g. ``Polynomial.monomial(8)``) runs Algorithm 1's operator;
        ``ReciprocalPolynomial``/``InverseLaplacian`` Algorithm 2's (Eq. 20).
    beta : float > 0
        Ridge parameter ``beta_n``.
    max_iter : int, default 1000
        Iteration cap of a solve to tolerance.
    tol : float, default 1e-6
        Relative residual of a solve to tolerance (``0``: run exactly ``max_iter`` iterations).
    solver : "auto" | "richardson" | "cg" | "gmres" | "direct"
        ``auto``: for a ``Polynomial``, CG when it is non-negative on ``[-1, 1]`` (a
        positive definite system), GMRES otherwise. For a reciprocal transform, the
        engine's direct solve when it is small (``n <= 4000`` labels and ``N n <= 2^25``:
        it holds ``N x n`` blocks; on CPU it factorises ``Q`` with scipy's sparse LU, on
        accelerators it stays in torch), GMRES otherwise: Algorithm 2's ``M`` is not
        symmetric and, on graphs whose ``S`` has negative eigenvalues (most real graphs),
        indefinite, where restarted GMRES can stall for small ``beta`` (Cora, ``beta =
        1e-3``: relative residual 6e-5 after 5000 products, while the direct solve takes
        0.1 s). ``tol=0`` always means ``max_iter`` Richardson steps.
    step_size : "auto" | "paper" | float, default "auto"
        Richardson step, see :func:`graphstk.methods.propagation.stkr_reciprocal`.
    dtype, num_classes, cached, clean_edges : as in :class:`LabelPropagation`.
    num_iter : int, optional
        Run exactly ``T = num_iter`` Richardson iterations (the paper's budget; the same as
        ``max_iter=T, tol=0``).

    Attributes
    ----------
    history_, unreachable_, n_unreachable_ : as in :class:`LabelPropagation`.
    """

    def __init__(self, transform, beta: float, max_iter: int = 1000, tol: float = 1e-6, solver: str = "auto",
                 step_size: str | float = "auto", dtype: torch.dtype | None = None,
                 num_classes: int | None = None, cached: bool = False, *, num_iter: int | None = None,
                 clean_edges: bool = False):
        num_iter = check_int("num_iter", num_iter, allow_none=True)
        if num_iter is not None:
            max_iter, tol = num_iter, 0.0
        super().__init__(max_iter, tol, solver, dtype, num_classes, cached, clean_edges)
        if not isinstance(transform, (Polynomial, ReciprocalPolynomial)):
            raise TypeError("transform must be a Polynomial or a ReciprocalPolynomial/InverseLaplacian, got "
                            f"{type(transform).__name__} (TopD needs scipy: use graphstk.methods.STKR)")
        beta = check_real("beta", beta)
        self.num_iter = num_iter
        if tol == 0 and solver not in ("auto", "richardson", "cg"):
            raise ValueError(f"a fixed budget (tol=0) needs solver 'richardson' or 'cg', got {solver!r}")
        if tol == 0 and solver == "cg" and isinstance(transform, ReciprocalPolynomial):
            raise ValueError("a fixed budget (tol=0) for a reciprocal transform needs solver 'richardson'")
        self.transform, self.beta, self.step_size = transform, float(beta), step_size

    def _solver(self, prob: P.Problem) -> str:
        if self.solver != "auto" or self.tol == 0:
            return self.solver
        if isinstance(self.transform, Polynomial):
            lo, _ = self.transform.value_range(-prob.lambda_max, prob.lambda_max)
            return "cg" if lo >= 0 else "gmres"
        small = P.auto_is_direct(prob)
        dense_ok = len(self.transform.xi) <= 2 or prob.N <= P.DENSE_LIMIT  # what the direct path supports
        return "auto" if small and dense_ok else "gmres"   # auto: the engine picks the inner route and says why

    @torch.no_grad()
    def forward(self, y: Tensor, edge_index: Tensor, mask=None, edge_weight: Tensor | None = None) -> Tensor:
        """Scores ``f(x)`` ``[N, C]`` of every node ``x``.

        Parameters
        ----------
        y, edge_index, mask, edge_weight : as in :meth:`LabelPropagation.forward`.

        Returns
        -------
        Tensor ``[N, C]``; all-zero rows (no label reaches them) are flagged in ``unreachable_``.
        """
        prob, out_dtype = self._problem(y, edge_index, mask, edge_weight)
        budgets = (self.max_iter,) if self.tol == 0 else ()
        opts = dict(solver=self._solver(prob), max_iter=self.max_iter, tol=self.tol, budgets=budgets,
                    step_size=self.step_size)
        if isinstance(self.transform, Polynomial):
            res = P.stkr_polynomial(prob, self.transform, [self.beta], **opts)
        else:
            res = P.stkr_reciprocal(prob, [self.transform], [self.beta], **opts)
        h = next(iter(res.h.values()))
        # Every node is visible: its out-of-sample row K(x, visible) / (n+m) is its row of S.
        return self._finish(res, (prob.op @ h).to(out_dtype))

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.transform!r}, beta={self.beta:g}, "
                f"{'max_iter=' + str(self.max_iter) if self.tol == 0 else 'tol=' + format(self.tol, 'g')}, "
                f"solver={self.solver!r})")
