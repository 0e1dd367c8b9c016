r"""STKR-Prop (Zhai et al., ICLR 2024): transductive STKR (Eq. 7) as a differentiable module with PyG's
input conventions. A solve to tolerance is one call of the engine (``graphstk.methods.engine.solve``)
inside the implicit-gradient function of :mod:`graphstk.nn.autograd`; a fixed budget ``num_iter=T`` is
``T`` Richardson steps unrolled by autograd, watched for divergence. Equations: ``docs/nn.md``.
"""
from __future__ import annotations

import torch
from torch import Tensor

from .._checks import check_int, check_real
from .._index import as_index
from ..exceptions import ConvergenceError
from ..methods.estimators import DEFAULT_ETA
from ..methods.estimators import flag_unreachable as _flag
from ..methods.problem import SOLVERS as _SOLVERS
from ..methods.problem import make_problem
from ..methods.steps import richardson_step
from ..operators.graph import check_normalization
from ..spectral.solvers import richardson
from ..spectral.transforms import InverseLaplacian, Polynomial, ReciprocalPolynomial, horner
from ._common import AdjacencyKernelCache, check_edge_weight, diverging, label_matrix, warn_switch
from .autograd import engine_system, implicit_solve

__all__ = ["STKRPropagation"]

#: the attribute that holds each transform's parameter (a tensor; ``nn.Parameter`` with ``learnable``)
_PARAMETER = ((InverseLaplacian, "eta"), (ReciprocalPolynomial, "xi"), (Polynomial, "coeffs"))


class STKRPropagation(torch.nn.Module):
    r"""STKR-Prop: transductive STKR (Eq. 7) with a polynomial or reciprocal transform, differentiable.

    Parameters
    ----------
    transform : Polynomial | ReciprocalPolynomial | InverseLaplacian, optional
        ``s(lambda)`` (STKR Sec. 3, Eq. 20, Example 1). ``None`` (default): ``InverseLaplacian(0.9)``,
        as :class:`graphstk.methods.STKR`. ``TopD`` is refused: kernel PCA is not one
        linear solve, so the engine has no adjoint for it (``graphstk.methods.STKR`` runs it).
    beta : float or Tensor > 0, default 1e-2
        Ridge parameter ``beta_n``.
    max_iter : int, default 1000
        Iteration cap of a solve to tolerance.
    tol : float, default 1e-6
        Relative residual of a solve to tolerance; ``0`` means ``max_iter`` Richardson steps.
    solver : {"auto", "richardson", "cg", "gmres", "direct"}, default "auto"
        The engine's solver (``graphstk.methods.engine.solve``), also for the adjoint solve of the backward
        pass; ``"auto"`` routes from sizes and counted work (:mod:`graphstk.methods.routes`).
    step_size : "auto" | "paper" | float, default "auto"
        Richardson step: ``1 / (N max|s| + n beta)`` (Algorithm 1) or ``1 / (N + n beta max rho)``
        (Algorithm 2) for ``"auto"``; ``"paper"``: Proposition 10's ``1 / n`` for Algorithm 2.
    dtype : torch.dtype, optional
        Computation and output dtype (default: compute in float64, return ``y``'s float dtype, or the
        default dtype for integer labels).
    num_classes : int, optional
        Columns for integer labels (default ``max(y) + 1``).
    num_iter : int, optional
        A fixed budget of ``T`` Richardson steps (Algorithms 1 and 2; same as ``max_iter=T, tol=0``).
    learnable : bool, default False
        Register ``beta`` and the transform's parameters (``coeffs`` of a polynomial, ``eta`` of an
        inverse Laplacian, ``xi`` of a reciprocal polynomial) as ``nn.Parameter``\ s. Tensors that
        require grad can also be assigned to these attributes directly.
    flag_unreachable : bool, default True
        Record all-zero rows in ``unreachable_`` and warn.
    normalization : {"lazy", "symmetric"}, default "lazy"
        The graph kernel: the lazy ``(I + S) / 2`` (positive semidefinite, as STKR assumes) or Eq. 23's
        ``S = D^{-1/2} W D^{-1/2}`` (:class:`~graphstk.operators.GraphKernel`'s ``normalization``).

    Attributes
    ----------
    transform : the transform given (its family; the current parameter values are the attributes below).
    coeffs | eta | xi : Tensor, the transform's parameter (``Polynomial``, ``InverseLaplacian``,
        ``ReciprocalPolynomial``), differentiable.
    route_ : str, what the last call ran.
    unreachable_, n_unreachable_ : rows no label reaches (with ``flag_unreachable``).
    """

    def __init__(self, transform=None, beta=1e-2, max_iter: int = 1000, tol: float = 1e-6, solver: str = "auto",
                 step_size: str | float = "auto", dtype: torch.dtype | None = None, num_classes: int | None = None,
                 *, num_iter: int | None = None, learnable: bool = False, flag_unreachable: bool = True,
                 normalization: str = "lazy"):
        super().__init__()
        self.normalization = check_normalization(normalization)
        transform = InverseLaplacian(DEFAULT_ETA) if transform is None else transform
        if not isinstance(transform, (Polynomial, ReciprocalPolynomial)):
            raise TypeError("transform must be a Polynomial or a ReciprocalPolynomial/InverseLaplacian, got "
                            f"{type(transform).__name__} (TopD, kernel PCA plus a ridge probe, is not one linear "
                            "solve and has no adjoint system to differentiate through: use graphstk.methods.STKR)")
        if solver not in _SOLVERS:
            raise ValueError(f"solver must be one of {_SOLVERS}, got {solver!r}")
        if dtype is not None and dtype not in (torch.float32, torch.float64):
            raise ValueError(f"dtype must be torch.float32, torch.float64 or None, got {dtype}")
        num_iter = check_int("num_iter", num_iter, allow_none=True)
        if num_iter is not None:
            max_iter, tol = num_iter, 0.0
        self.max_iter, self.tol = check_int("max_iter", max_iter), check_real("tol", tol, low=0.0, low_open=False)
        if self.tol == 0 and solver not in ("auto", "richardson"):
            raise ValueError(f"a fixed budget (num_iter, or tol=0) runs Richardson steps; got solver={solver!r}")
        if not (step_size in ("auto", "paper") or isinstance(step_size, (int, float))):
            raise ValueError(f"step_size must be 'auto', 'paper' or a number, got {step_size!r}")
        self.num_iter, self.solver, self.step_size, self.dtype = num_iter, solver, step_size, dtype
        self.num_classes = check_int("num_classes", num_classes, allow_none=True)
        self.flag_unreachable = bool(flag_unreachable)
        self.transform, self._poly = transform, isinstance(transform, Polynomial)
        if not self._poly:
            transform.validate(1.0)
        wrap = torch.nn.Parameter if learnable else (lambda t: t)
        if not isinstance(beta, Tensor):
            beta = torch.tensor(check_real("beta", beta), dtype=torch.float64)
        elif not float(beta.detach()) > 0:
            raise ValueError(f"beta must be > 0, got {float(beta.detach())}")
        self.beta = wrap(beta.detach().clone()) if learnable else beta
        self._param = next(name for cls, name in _PARAMETER if isinstance(transform, cls))
        setattr(self, self._param, wrap(torch.tensor(getattr(transform, self._param), dtype=torch.float64)))
        self._cache = AdjacencyKernelCache()
        self.route_ = ""
        self.unreachable_: Tensor | None = None
        self.n_unreachable_ = 0

    def _params(self, dtype, device) -> tuple[Tensor, Tensor]:
        """``(coeffs, beta)``: ``pi`` (polynomial) or ``xi`` (reciprocal) and ``beta`` in ``dtype``."""
        c = getattr(self, self._param).to(dtype=dtype, device=device)
        if isinstance(self.transform, InverseLaplacian):
            if not float(c.detach()) < 1.0:
                raise ValueError(f"InverseLaplacian needs eta < 1/lambda_1 = 1, got eta={float(c.detach())}")
            c = torch.stack([torch.ones_like(c), -c])
        return c, self.beta.to(dtype=dtype, device=device)

    def _transform(self, c: Tensor):
        """The engine's (float-valued) transform of the transform's family for coefficients ``c``."""
        c = c.detach().tolist()
        if self._poly:
            return Polynomial(c)
        if isinstance(self.transform, InverseLaplacian):
            return InverseLaplacian(-c[1])
        return ReciprocalPolynomial(c, self.transform.r)

    def forward(self, y: Tensor, edge_index, mask=None, edge_weight: Tensor | None = None) -> Tensor:
        """Scores ``f`` ``[N, C]`` of every node.

        Parameters
        ----------
        y : LongTensor ``[N]`` of labels or float ``[N, C]`` (soft labels, logits)
        edge_index : LongTensor ``[2, E]`` | EdgeIndex | torch.sparse adj_t | SparseTensor
            An undirected graph (each edge in both directions with the same weight).
        mask : BoolTensor ``[N]`` or LongTensor of ids, optional
            The labeled nodes (default: all).
        edge_weight : Tensor ``[E]``, optional
            Edge weights ``W`` (normalised to ``S``), differentiable.
        """
        Yall = label_matrix(y, self.num_classes, mask)
        out_dtype = self.dtype or Yall.dtype
        dtype = self.dtype or torch.float64
        N = Yall.size(0)
        train = as_index(mask, N, Yall.device, name="mask")
        if train.numel() == 0:
            raise ValueError("mask selects no labeled node: STKR needs at least one label")
        Y = Yall[train].to(dtype)
        if edge_weight is not None:
            check_edge_weight(edge_weight, "STKRPropagation")
        kernel = self._cache.get(edge_index, N, edge_weight, dtype, normalize=True, lazy=self.normalization == "lazy")
        if not kernel.is_symmetric():
            raise ValueError("STKRPropagation needs an undirected graph (each edge in both directions, same weight): "
                             "use torch_geometric.utils.to_undirected(edge_index, edge_weight)")
        ctx = _Context(kernel, train, *self._params(dtype, Y.device))
        f = self._budget(ctx, Y) if self.tol == 0 else self._to_tol(ctx, Y, self.solver, self.tol, self.max_iter)
        f = f.to(out_dtype)
        return _flag(self, f) if self.flag_unreachable else f

    def _apply(self, ctx: "_Context"):
        """``A(theta) x`` of Algorithm 1 or Algorithm 2's ``M`` (Eq. 20), differentiable in ``(x, c, beta, v)``."""
        N, n, train = ctx.N, ctx.n, ctx.train
        if self._poly:
            def apply(a, c_, b_, v_):
                return N * horner(c_, ctx.S(v_), ctx.embed(a), shift=1)[train] + n * b_ * a
            return apply
        lab = torch.zeros(N, 1, dtype=ctx.beta.dtype, device=train.device).index_fill_(0, train, 1.0)
        r = self.transform.r

        def apply(th, c_, b_, v_):
            return N * lab * horner((1.0,), ctx.S(v_), th, shift=r) + n * b_ * horner(c_, ctx.S(v_), th)
        return apply

    def _scores(self, ctx: "_Context", x: Tensor) -> Tensor:
        """``f = N s(S) E alpha`` (Algorithm 1) or ``N S^r theta`` (Algorithm 2), differentiable."""
        if self._poly:
            return ctx.N * horner(ctx.c, ctx.S(ctx.v), ctx.embed(x), shift=1)
        return ctx.N * horner((1.0,), ctx.S(ctx.v), x, shift=self.transform.r)

    def _to_tol(self, ctx: "_Context", Y: Tensor, solver: str, tol: float, max_iter: int) -> Tensor:
        problem = make_problem(ctx.kernel, None, ctx.train, targets=Y.detach())
        system = engine_system(problem, [self._transform(ctx.c)], [float(ctx.beta.detach())], self._apply(ctx),
                               labeled_rhs=self._poly, solver=solver, tol=tol, max_iter=max_iter,
                               step_size=self.step_size)
        x = implicit_solve(system, Y if self._poly else ctx.embed(Y), [ctx.c, ctx.beta, ctx.v])
        last = system.history[-1] if system.history else None
        self.route_ = (f"{last.solver if last is not None else solver} (engine), implicit gradient"
                       + (f": {last.reason}" if last is not None and last.reason else ""))
        return self._scores(ctx, x)

    def _budget(self, ctx: "_Context", Y: Tensor) -> Tensor:
        """``T`` Richardson steps, the engine's step in the parameters' tensors; divergence switches to the solve."""
        gamma = self.step_size if isinstance(self.step_size, (int, float)) else richardson_step(
            "polynomial" if self._poly else "reciprocal", self.step_size, ctx.c, ctx.beta, ctx.N, ctx.n,
            0.0 if self.normalization == "lazy" else -1.0, 1.0, r=getattr(self.transform, "r", 1))
        system, seen = self._apply(ctx), []

        def watch(t: int, rel: float):
            seen.append(rel)
            return "diverging" if diverging(rel, seen[0]) else None
        algorithm = 1 if self._poly else 2
        try:
            x = richardson(lambda x: system(x, ctx.c, ctx.beta, ctx.v), Y if self._poly else ctx.embed(Y), gamma,
                           self.max_iter, callback=watch, warn=False, differentiable=True).x
        except (ConvergenceError, FloatingPointError) as err:
            t, rel = (len(seen), seen[-1]) if isinstance(err, ConvergenceError) else (len(seen) + 1, float("inf"))
            warn_switch(self, f"the {self.max_iter}-step Richardson budget (Algorithm {algorithm})", t, rel,
                        "the solve to tolerance (tol=1e-6, solver='auto')")
            f = self._to_tol(ctx, Y, "auto", 1e-6, max(self.max_iter, 1000))
            self.route_ = f"solve to tolerance after a diverging budget: {self.route_}"
            return f
        self.route_ = f"{self.max_iter} Richardson steps (Algorithm {algorithm}), unrolled"
        return self._scores(ctx, x)

    def __repr__(self) -> str:
        c, beta = self._params(torch.float64, "cpu")
        budget = f"num_iter={self.max_iter}" if self.tol == 0 else f"tol={self.tol:g}"
        return (f"{type(self).__name__}({self._transform(c)!r}, beta={float(beta.detach()):g}, {budget}, "
                f"solver={self.solver!r}, normalization={self.normalization!r})")


class _Context:
    """One call's kernel, edge values ``v``, labeled ids, transform coefficients (``pi`` or ``xi``) and ``beta``."""

    def __init__(self, kernel, train: Tensor, c: Tensor, beta: Tensor):
        self.kernel, self.v, self.train, self.c, self.beta = kernel, kernel.edges[2], train, c, beta
        self.N, self.n = kernel.num_nodes, int(train.numel())

    def S(self, v: Tensor):
        """``x -> S x`` with edge values ``v`` (``(x + P x) / 2`` for the lazy kernel), differentiable in both."""
        if self.kernel.positive_semidefinite:
            return lambda x: 0.5 * (x + self.kernel.propagate(x, v))
        return lambda x: self.kernel.propagate(x, v)

    def embed(self, a: Tensor) -> Tensor:
        """``E a``: ``[n, C]`` values at the labeled rows of an ``[N, C]`` block (differentiable)."""
        return torch.zeros(self.N, a.size(1), dtype=a.dtype, device=a.device).index_put((self.train,), a)
