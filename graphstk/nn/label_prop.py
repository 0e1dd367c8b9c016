r"""Label propagation with the signature, defaults and outputs of PyG's ``LabelPropagation``, differentiable,
plus graphstk's keyword-only options (``keep_labels``, ``clamp``, ``flag_unreachable``, ``num_layers=None``,
``backward="implicit"``); equations and options in ``docs/nn.md``.
"""
from __future__ import annotations

from typing import Callable

import torch
from torch import Tensor

from .._checks import check_int, check_real
from ..methods.estimators import flag_unreachable as _flag
from ..methods.problem import make_problem
from ..methods.routes import label_prop_route
from ..spectral.transforms import LabelPropagationFilter
from ._common import AdjacencyKernelCache, check_edge_weight, diverging, label_matrix, row_mask, warn_switch
from .autograd import engine_system, implicit_solve

__all__ = ["LabelPropagation"]


def _norm(x: Tensor) -> float:
    return float(torch.linalg.vector_norm(x.detach()))


def _watched(t: int, steps: int) -> bool:
    """Whether a budget of ``steps`` checks its residual after step ``t + 1``: steps 1, 2, 4, 8, ... and the last."""
    return (t + 1) & t == 0 or t + 1 == steps


class LabelPropagation(torch.nn.Module):
    r"""Label propagation, PyG's :class:`~torch_geometric.nn.models.LabelPropagation` (same
    signature, defaults, hop count, class count and outputs), differentiable.

    Parameters
    ----------
    num_layers : int or None
        Number of propagation steps ``T`` (``0``: the masked labels themselves). ``None``: solve the
        fixed point ``(I - alpha D P) Y = b`` to ``tol`` (needs ``clamp=False``; implicit gradient).
    alpha : float or Tensor
        The weight of the propagated term; a tensor that requires grad receives a gradient.
    clamp : bool, default True
        Clip to ``[0, 1]`` after each step when no ``post_step`` is given (PyG's behaviour).
    keep_labels : bool, default False
        Reset the labeled rows to their labels after every step (``D`` above is then the
        diagonal of the unlabeled rows; ``D = I`` otherwise).
    flag_unreachable : bool, default False
        Record all-zero rows in ``unreachable_`` / ``n_unreachable_`` and warn
        (:class:`~graphstk.methods.UnreachableNodesWarning`).
    normalize : bool, optional
        ``None``: PyG's rule (``gcn_norm`` when no ``edge_weight`` is given, weights as given
        otherwise); ``True`` / ``False``: always / never ``gcn_norm``.
    num_classes : int, optional
        Columns for integer labels (default ``max(y) + 1``, as PyG).
    tol : float, default 1e-6
        Relative residual ``||Y^{(t+1)} - Y^{(t)}|| / ||b||`` of the solve to tolerance (and of its
        adjoint).
    max_iter : int, default 1000
        Iteration cap of the solve to tolerance.
    backward : {"unroll", "implicit"}, default "unroll"
        Gradient of a fixed budget: autograd through the ``num_layers`` steps (exact; memory grows with
        ``T``), or the implicit gradient of the fixed point (memory of one solve): its adjoint
        ``(I - alpha P^T D) lambda = g`` solved to ``tol`` by the engine. Needs ``clamp=False`` and no
        ``post_step``.

    Attributes
    ----------
    route_ : str
        What the last call ran (``"layers"``, ``"fixed point"``, or the fallback after divergence).
    unreachable_, n_unreachable_ : BoolTensor ``[N]``, int (with ``flag_unreachable=True``).
    """

    def __init__(self, num_layers: int | None, alpha: float | Tensor, *, clamp: bool = True,
                 keep_labels: bool = False, flag_unreachable: bool = False, normalize: bool | None = None,
                 num_classes: int | None = None, tol: float = 1e-6, max_iter: int = 1000,
                 backward: str = "unroll"):
        super().__init__()
        self.num_layers = check_int("num_layers", num_layers, allow_none=True, low=0)
        if not isinstance(alpha, Tensor):
            alpha = check_real("alpha", alpha, low=None)
        if backward not in ("unroll", "implicit"):
            raise ValueError(f"backward must be 'unroll' or 'implicit', got {backward!r}")
        if (num_layers is None or backward == "implicit") and clamp:
            raise ValueError("the fixed-point solve (num_layers=None) and backward='implicit' need clamp=False: the "
                             "clamp makes the iteration nonlinear")
        self.alpha = alpha
        self.clamp, self.keep_labels, self.flag_unreachable = bool(clamp), bool(keep_labels), bool(flag_unreachable)
        self.normalize, self.backward = normalize, backward
        self.num_classes = check_int("num_classes", num_classes, allow_none=True)
        self.tol, self.max_iter = float(tol), check_int("max_iter", max_iter)
        self._cache = AdjacencyKernelCache()
        self.route_ = ""
        self.unreachable_: Tensor | None = None
        self.n_unreachable_ = 0

    def reset_cache(self) -> None:
        """Forget the propagation matrix kept for a graph that comes back unchanged."""
        self._cache.clear()

    def forward(self, y: Tensor, edge_index, mask: Tensor | None = None, edge_weight: Tensor | None = None,
                post_step: Callable[[Tensor], Tensor] | None = None) -> Tensor:
        """Propagated scores ``[N, C]``.

        Parameters
        ----------
        y : LongTensor ``[N]`` of labels (one-hot with ``max(y) + 1`` classes) or float ``[N, C]``
        edge_index : LongTensor ``[2, E]`` | EdgeIndex | torch.sparse adj_t | SparseTensor
        mask : BoolTensor ``[N]`` or LongTensor of ids, optional
            The nodes whose labels are propagated (default: all). An all-False mask gives zeros.
        edge_weight : Tensor ``[E]``, optional
            The propagation weights as given (PyG), differentiable.
        post_step : callable, optional
            Applied after every step instead of the clamp (PyG).
        """
        Y = label_matrix(y, self.num_classes, mask)
        if edge_weight is not None:
            check_edge_weight(edge_weight, type(self).__name__)
        if isinstance(edge_weight, Tensor) and edge_weight.dtype.is_floating_point:
            Y = Y.to(torch.promote_types(Y.dtype, edge_weight.dtype))   # PyG's w * x_j promotes likewise
        N = Y.size(0)
        m = row_mask(mask, N, Y.device, Y.dtype)
        out = Y if m is None else Y * m
        kernel = self._cache.get(edge_index, N, edge_weight, Y.dtype, self.normalize)
        free = None
        if self.keep_labels:
            free = torch.zeros(N, 1, dtype=Y.dtype, device=Y.device) if m is None else 1.0 - m
        linear = not self.clamp and post_step is None
        if self.num_layers is None or self.backward == "implicit":
            if post_step is not None:
                raise ValueError("post_step needs a fixed num_layers and backward='unroll' (it is applied per step)")
            out = self._fixed_point(kernel, out, free, self.num_layers)
        else:
            out = self._layers(kernel, out, free, post_step, linear)
        if self.flag_unreachable:
            _flag(self, out)
        return out

    def _layers(self, kernel, out: Tensor, free, post_step, linear: bool) -> Tensor:
        self.route_ = "layers"
        alpha = self.alpha
        grad = torch.is_grad_enabled() and (out.requires_grad or kernel.edges[2].requires_grad
                                             or (isinstance(alpha, Tensor) and alpha.requires_grad))
        if isinstance(alpha, Tensor) and not grad:
            alpha = float(alpha)
        y0 = out
        fixed = None if free is None else (1 - free) * y0   # the labeled rows, reset after every step
        res = (1 - alpha) * out
        csr = None if grad else kernel.csr()
        # without grad or post_step (which may keep the tensors it sees), two buffers serve every step
        bufs = (torch.empty_like(out), torch.empty_like(out)) if not grad and post_step is None else None
        first = None
        for t in range(self.num_layers):
            prev = out
            if grad:
                out = kernel.propagate(out) * alpha + res
            elif bufs is not None:
                out = torch.addmm(res, csr, out, alpha=alpha, out=bufs[0] if out is not bufs[0] else bufs[1])
            else:
                out = torch.addmm(res, csr, out, alpha=alpha)
            if post_step is not None:
                out = post_step(out)
            elif self.clamp:
                out = out.clamp(0.0, 1.0) if grad else out.clamp_(0.0, 1.0)
            if free is not None:
                out = free * out + fixed if grad else out.mul_(free).add_(fixed)
            if linear and _watched(t, self.num_layers):   # the residual of the iteration is the step itself
                rel = _norm(out - prev) / max(_norm(y0), 1e-300)
                first = rel if first is None else first
                if diverging(rel, first):
                    warn_switch(self, f"the {self.num_layers}-layer iteration", t + 1, rel,
                                "the fixed point (I - alpha D P) Y = b solved by GMRES to tol")
                    return self._fixed_point(kernel, y0, free, None, route="gmres")
        return out

    def _fixed_point(self, kernel, y0: Tensor, free, budget: int | None, route: str = "auto") -> Tensor:
        """``(I - alpha D P) Y = b`` (Eq. 22 with ``S = D P``) through the engine, differentiated implicitly; with a
        ``budget`` the forward value is PyG's ``num_layers`` steps (:meth:`_layers`), the gradient the fixed point's.
        """
        N = y0.size(0)
        alpha = self.alpha if isinstance(self.alpha, Tensor) else torch.tensor(self.alpha, dtype=y0.dtype,
                                                                               device=y0.device)
        alpha = alpha.to(y0.dtype)
        b = (1 - alpha) * y0 if free is None else (1 - alpha) * free * y0 + (1 - free) * y0

        def apply(x, a, v):   # A x = x - alpha D P x
            px = kernel.propagate(x, v)
            return x - a * (px if free is None else free * px)

        a_f = float(alpha.detach())
        problem = make_problem(kernel if free is None else kernel.row_scaled(free), None,
                               torch.arange(N, device=y0.device), targets=b.detach())
        if route == "auto":
            route = label_prop_route(a_f, problem.lambda_max, free is None and kernel.unit_bound())
        system = engine_system(problem, [LabelPropagationFilter(a_f)], [], apply, labeled_rhs=False, solver=route,
                               tol=max(self.tol, 1e-10) if route == "gmres" else self.tol, max_iter=self.max_iter)
        if budget is not None:   # PyG's layers forward, the fixed point's gradient backward
            adjoint = system.solve

            def solve(rhs: Tensor, transpose: bool) -> Tensor:
                if transpose:
                    return adjoint(rhs, True)
                with torch.no_grad():
                    return self._layers(kernel, y0.detach(), free, None, True)
            system.solve = solve
        out = implicit_solve(system, b, [alpha, kernel.edges[2]])
        self.route_ = "fixed point" if route != "gmres" else "fixed point (GMRES)"
        return out

    def __repr__(self) -> str:
        return f"{type(self).__name__}(num_layers={self.num_layers}, alpha={self.alpha})"
