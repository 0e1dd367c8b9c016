r"""STKR-Prop (Zhai et al., ICLR 2024) as a differentiable module with PyG's input conventions.

Transductive STKR (Eq. 7) on the graph of ``edge_index_or_adj``: with ``S = D^{-1/2} W D^{-1/2}``
(``gcn_norm``, no self-loops; Eq. 23 with every node visible), ``N`` nodes and ``n`` labeled ones,

``f = N s(S) E alpha``,  ``(N [s(S)]_{nn} + n beta I) alpha = Y_L``   (``E``: the labeled columns).

Routes (``route_`` names the one that ran, ``solver`` picks):

* ``Polynomial`` ``s(l) = sum_p pi_p l^p``: the ``n x C`` system above by CG (``s >= 0`` on
  ``[-1, 1]``: SPD) or GMRES, or by a dense solve of the ``n x n`` matrix (``"direct"``,
  Algorithm 3); ``num_iter=T``: ``T`` Richardson steps (Algorithm 1).
* ``ReciprocalPolynomial`` / ``InverseLaplacian`` ``1/s(l) = sum_p xi_p l^(p-r)``:
  ``Z = Q^{-1} E`` by CG on the SPD ``Q = sum_p xi_p S^p`` (``I - eta S`` for the inverse
  Laplacian), then the dense ``n x n`` system ``N (S^r Z)_{nn} + n beta I`` (for ``n N`` up to
  :data:`DIRECT_MAX_ENTRIES`), else GMRES on Algorithm 2's ``M theta = [Y_L; 0]``,
  ``M = N I_n S^r + n beta Q`` (Eq. 20), ``f = N S^r theta``; ``num_iter=T``: ``T`` Richardson
  steps of Algorithm 2.

Gradients: a solve to tolerance is differentiated implicitly (:mod:`graphstk.nn.autograd`: the
adjoint system through the same solver, memory independent of the iteration count); the dense
``n x n`` solve by autograd; a fixed budget ``T`` by unrolling its ``T`` steps (memory grows with
``T``). Every fixed budget watches its residual: a residual more than 10x the first and above
``||Y||`` cannot belong to a converging solve, so the module warns once
(:class:`~graphstk.nn.DivergenceWarning`) and returns the solve to tolerance for that call.
"""
from __future__ import annotations

import torch
from torch import Tensor

from .._checks import check_int, check_real
from .._index import as_index
from ..methods.estimators import flag_unreachable as _flag
from ..spectral.solvers import cg, gmres, richardson
from ..spectral.transforms import InverseLaplacian, Polynomial, ReciprocalPolynomial
from ._common import diverging, label_matrix, warn_switch
from .adjacency import OperatorCache
from .autograd import LinearSystem, implicit_solve, spmm

__all__ = ["STKRPropagation", "DIRECT_MAX_ENTRIES"]

#: Largest ``n N`` for which the reciprocal route forms ``Z = Q^{-1} E`` (``N x n``) and the dense ``n x n`` system.
DIRECT_MAX_ENTRIES = 2 ** 22
_SOLVERS = ("auto", "richardson", "cg", "gmres", "direct")


def _powsum(op, v, coeffs: Tensor, x: Tensor, shift: int) -> Tensor:
    """``sum_p coeffs[p] S^(p + shift) x`` by Horner (``len(coeffs) - 1 + shift`` products)."""
    h = coeffs[-1] * x
    for c in reversed(coeffs[:-1]):
        h = spmm(op, h, v) + c * x
    for _ in range(shift):
        h = spmm(op, h, v)
    return h


def _check_edge_weight(w: Tensor) -> None:
    """STKR's kernel is a similarity: NaN, infinite or negative weights are named as such (not
    reported as a directed graph by the symmetry check they would fail)."""
    w = w.detach()
    if not w.dtype.is_floating_point:
        w = w.double()
    bad = ~torch.isfinite(w)
    if bool(bad.any()):
        i = int(bad.nonzero()[0, 0])
        raise ValueError(f"STKRPropagation: edge_weight has {int(bad.sum())} NaN or infinite entries (e.g. edge {i}: "
                         f"{float(w[i])}); pass finite weights (e.g. torch.nan_to_num(edge_weight, nan=0.0), or drop "
                         "those edges)")
    neg = w < 0
    if bool(neg.any()):
        i = int(neg.nonzero()[0, 0])
        raise ValueError(f"STKRPropagation: edge_weight has {int(neg.sum())} negative entries (e.g. edge {i}: "
                         f"{float(w[i]):g}); the graph kernel needs similarities >= 0: pass e.g. "
                         "edge_weight.clamp(min=0) or edge_weight.abs(), or a transform of distances such as "
                         "exp(-d^2 / (2 sigma^2))")


class STKRPropagation(torch.nn.Module):
    r"""STKR-Prop: transductive STKR (Eq. 7) with a polynomial or reciprocal transform, differentiable.

    Parameters
    ----------
    transform : Polynomial | ReciprocalPolynomial | InverseLaplacian
        ``s(lambda)`` (STKR Sec. 3, Eq. 20, Example 1).
    beta : float or Tensor > 0
        Ridge parameter ``beta_n``.
    max_iter : int, default 1000
        Iteration cap of a solve to tolerance.
    tol : float, default 1e-6
        Relative residual of a solve to tolerance; ``0`` means ``max_iter`` Richardson steps.
    solver : {"auto", "richardson", "cg", "gmres", "direct"}, default "auto"
        See the module docstring; ``"auto"``: CG or GMRES for a polynomial (by the sign of ``s``),
        the ``Q^{-1} E`` route for a reciprocal transform when ``n N <= DIRECT_MAX_ENTRIES``, GMRES
        on Algorithm 2's ``M`` otherwise.
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

    Attributes
    ----------
    route_ : str, what the last call ran.
    unreachable_, n_unreachable_ : rows no label reaches (with ``flag_unreachable``).
    """

    def __init__(self, transform, beta, max_iter: int = 1000, tol: float = 1e-6, solver: str = "auto",
                 step_size: str | float = "auto", dtype: torch.dtype | None = None, num_classes: int | None = None,
                 *, num_iter: int | None = None, learnable: bool = False, flag_unreachable: bool = True):
        super().__init__()
        if not isinstance(transform, (Polynomial, ReciprocalPolynomial)):
            raise TypeError("transform must be a Polynomial or a ReciprocalPolynomial/InverseLaplacian, got "
                            f"{type(transform).__name__} (TopD needs scipy: use graphstk.methods.STKR)")
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
        self.kind = "poly" if isinstance(transform, Polynomial) else (
            "invlap" if isinstance(transform, InverseLaplacian) else "recip")
        self.r = 0 if self.kind == "poly" else transform.r
        if self.kind != "poly":
            transform.validate(1.0)
        wrap = torch.nn.Parameter if learnable else (lambda t: t)
        if not isinstance(beta, Tensor):
            beta = torch.tensor(check_real("beta", beta), dtype=torch.float64)
        elif not float(beta.detach()) > 0:
            raise ValueError(f"beta must be > 0, got {float(beta.detach())}")
        self.beta = wrap(beta.detach().clone()) if learnable else beta
        if self.kind == "poly":
            self.coeffs = wrap(torch.tensor(transform.coeffs, dtype=torch.float64))
        elif self.kind == "invlap":
            self.eta = wrap(torch.tensor(transform.eta, dtype=torch.float64))
        else:
            self.xi = wrap(torch.tensor(transform.xi, dtype=torch.float64))
        self._cache = OperatorCache()
        self.route_ = ""
        self.unreachable_: Tensor | None = None
        self.n_unreachable_ = 0

    # -- parameters ----------------------------------------------------------------------------------
    def _params(self, dtype, device) -> tuple[Tensor, Tensor]:
        """``(coeffs, beta)``: ``pi`` (polynomial) or ``xi`` (reciprocal) and ``beta`` in ``dtype``."""
        beta = self.beta.to(dtype=dtype, device=device)
        if self.kind == "poly":
            return self.coeffs.to(dtype=dtype, device=device), beta
        if self.kind == "invlap":
            eta = self.eta.to(dtype=dtype, device=device)
            if not float(eta.detach()) < 1.0:
                raise ValueError(f"InverseLaplacian needs eta < 1/lambda_1 = 1, got eta={float(eta.detach())}")
            return torch.stack([torch.ones_like(eta), -eta]), beta
        return self.xi.to(dtype=dtype, device=device), beta

    def _gamma(self, c: Tensor, beta: Tensor, N: int, n: int):
        """Richardson's step as a function of the parameters (so that the gradient of a fixed budget
        includes the step's dependence on ``beta`` and the coefficients)."""
        if self.step_size == "paper" and self.kind != "poly":
            return 1.0 / n
        grid = torch.linspace(-1.0, 1.0, 2049, dtype=c.dtype, device=c.device)
        vals = torch.zeros_like(grid)
        for cp in reversed(c):   # Horner: sum_p c_p l^p
            vals = vals * grid + cp
        if self.kind == "poly":
            return 1.0 / (N * (vals * grid).abs().max().clamp_min(1e-300) + n * beta)
        return 1.0 / (N + n * beta * vals.max().clamp_min(1e-300))

    # -- forward -------------------------------------------------------------------------------------
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
            _check_edge_weight(edge_weight)
        op = self._cache.get(edge_index, N, edge_weight, dtype, normalize=True)
        if not op.is_symmetric():
            raise ValueError("STKRPropagation needs an undirected graph (each edge in both directions, same weight): "
                             "use torch_geometric.utils.to_undirected(edge_index, edge_weight)")
        c, beta = self._params(dtype, Y.device)
        ctx = (op, op.value, train, N, c, beta)
        if self.tol == 0:
            f = self._budget(ctx, Y)
        else:
            f = self._to_tol(ctx, Y, self.solver)
        f = f.to(out_dtype)
        return _flag(self, f) if self.flag_unreachable else f

    def _embed(self, a: Tensor, train: Tensor, N: int) -> Tensor:
        return torch.zeros(N, a.size(1), dtype=a.dtype, device=a.device).index_put((train,), a)

    def _to_tol(self, ctx, Y: Tensor, solver: str) -> Tensor:
        op, v, train, N, c, beta = ctx
        n = train.numel()
        if self.kind == "poly":
            return self._poly_tol(ctx, Y, solver)
        if solver in ("cg", "direct") or (solver == "auto" and n * N <= DIRECT_MAX_ENTRIES):
            return self._recip_z(ctx, Y)
        return self._recip_m(ctx, Y, "gmres" if solver == "auto" else solver)

    def _poly_tol(self, ctx, Y, solver) -> Tensor:
        op, v, train, N, c, beta = ctx
        n = train.numel()
        if solver == "direct":   # Algorithm 3: s(S) E formed by q products of the N x n block, then a dense solve
            self.route_ = "direct (n x n, Algorithm 3)"
            eye = torch.eye(n, dtype=Y.dtype, device=Y.device)
            SE = _powsum(op, v, c, self._embed(eye, train, N), 1)
            A = N * SE[train] + n * beta * eye
            return N * SE @ torch.linalg.solve(A, Y)

        def apply(a, c_, b_, v_):
            return N * _powsum(op, v_, c_, self._embed(a, train, N), 1)[train] + n * b_ * a
        if solver == "auto":
            grid = torch.linspace(-1.0, 1.0, 2049, dtype=torch.float64)
            s_lo = float(sum(float(cp) * grid ** (p + 1) for p, cp in enumerate(c.detach().cpu())).min())
            solver = "cg" if s_lo >= 0 else "gmres"
        self.route_ = f"{solver} on the n x C system (Eq. 7), implicit gradient"
        gamma = float(self._gamma(c.detach(), beta.detach(), N, n))
        system = LinearSystem(apply, self._solver_fn(solver, apply, (c, beta, v), gamma, symmetric=True))
        alpha = implicit_solve(system, Y, [c, beta, v])
        return N * _powsum(op, v, c, self._embed(alpha, train, N), 1)

    def _recip_z(self, ctx, Y) -> Tensor:
        op, v, train, N, c, beta = ctx
        n = train.numel()
        self.route_ = "Q^-1 E by CG (Q SPD), then the dense n x n system"

        def q_apply(x, c_, v_):
            return _powsum(op, v_, c_, x, 0)
        eye = torch.eye(n, dtype=Y.dtype, device=Y.device)
        E = self._embed(eye, train, N)
        system = LinearSystem(q_apply, self._solver_fn("cg", q_apply, (c, v), 1.0, symmetric=True, tol=1e-12,
                                                       max_iter=max(self.max_iter, 5000)))
        Z = implicit_solve(system, E, [c, v])
        for _ in range(self.r):
            Z = spmm(op, Z, v)
        A = N * Z[train] + n * beta * eye
        return N * Z @ torch.linalg.solve(A, Y)

    def _m_apply(self, ctx, transpose: bool):
        op, _, train, N, _, _ = ctx
        n = train.numel()
        lab = torch.zeros(N, 1, dtype=ctx[5].dtype, device=train.device).index_fill_(0, train, 1.0)

        def apply(th, c_, b_, v_):   # M theta = N I_n S^r theta + n beta Q theta;  M^T: N S^r I_n theta + ...
            z = lab * th if transpose else th
            for _ in range(self.r):
                z = spmm(op, z, v_)
            return N * (z if transpose else lab * z) + n * b_ * _powsum(op, v_, c_, th, 0)
        return apply

    def _recip_m(self, ctx, Y, solver) -> Tensor:
        op, v, train, N, c, beta = ctx
        self.route_ = f"{solver} on Algorithm 2's M (Eq. 20), implicit gradient"
        apply, apply_t = self._m_apply(ctx, False), self._m_apply(ctx, True)
        gamma = float(self._gamma(c.detach(), beta.detach(), N, train.numel()))
        solve = self._solver_fn(solver, apply, (c, beta, v), gamma, symmetric=False, apply_t=apply_t)
        theta = implicit_solve(LinearSystem(apply, solve), self._embed(Y, train, N), [c, beta, v])
        for _ in range(self.r):
            theta = spmm(op, theta, v)
        return N * theta

    def _solver_fn(self, name, apply, params, gamma, symmetric, apply_t=None, tol=None, max_iter=None):
        tol = self.tol if tol is None else tol
        max_iter = self.max_iter if max_iter is None else max_iter
        # a route solver='auto' chose: the advice names what the user can change, not 'auto' again
        fix = None
        if self.solver == "auto":
            fix = (f"{type(self).__name__}(solver='auto') chose {name} from the problem's sizes; pass "
                   "solver='direct' (the exact solve), a larger max_iter, or num_iter=T (a fixed budget)")

        def solve(rhs: Tensor, transpose: bool) -> Tensor:
            fn = apply_t if (transpose and not symmetric) else apply
            ps = [p.detach() for p in params]

            def mat(x):
                with torch.no_grad():
                    return fn(x, *ps)
            if name == "cg":
                return cg(mat, rhs, max_iter, tol, fix=fix).x
            if name == "gmres":
                return gmres(mat, rhs, max_iter, tol, fix=fix).x
            return richardson(mat, rhs, gamma, max_iter, tol, fix=fix).x
        return solve

    # -- fixed budget: T Richardson steps, unrolled, with a residual watch ---------------------------
    def _budget(self, ctx, Y: Tensor) -> Tensor:
        op, v, train, N, c, beta = ctx
        n = train.numel()
        gamma = self.step_size if isinstance(self.step_size, (int, float)) else self._gamma(c, beta, N, n)
        if self.kind == "poly":
            def apply(a):
                return N * _powsum(op, v, c, self._embed(a, train, N), 1)[train] + n * beta * a
            b = Y
        else:
            m = self._m_apply(ctx, False)

            def apply(th):
                return m(th, c, beta, v)
            b = self._embed(Y, train, N)
        x = torch.zeros_like(b)
        r, bn, first = b, max(float(torch.linalg.vector_norm(b.detach())), 1e-300), None
        for t in range(self.max_iter):
            x = x + gamma * r
            r = b - apply(x)
            rel = float(torch.linalg.vector_norm(r.detach())) / bn
            first = rel if first is None else first
            if diverging(rel, first):
                warn_switch(self, f"the {self.max_iter}-step Richardson budget (Algorithm {1 if self.kind == 'poly' else 2})",
                            t + 1, rel, "the solve to tolerance (tol=1e-6, solver='auto')")
                saved, self.tol, self.max_iter = (self.tol, self.max_iter), 1e-6, max(self.max_iter, 1000)
                try:
                    f = self._to_tol(ctx, Y, "auto")
                finally:
                    self.tol, self.max_iter = saved
                self.route_ = f"solve to tolerance after a diverging budget: {self.route_}"
                return f
        self.route_ = f"{self.max_iter} Richardson steps (Algorithm {1 if self.kind == 'poly' else 2}), unrolled"
        if self.kind == "poly":
            return N * _powsum(op, v, c, self._embed(x, train, N), 1)
        for _ in range(self.r):
            x = spmm(op, x, v)
        return N * x

    def __repr__(self) -> str:
        tr = {"poly": lambda: f"Polynomial({self.coeffs.tolist()})",
              "invlap": lambda: f"InverseLaplacian(eta={float(self.eta.detach()):g})",
              "recip": lambda: f"ReciprocalPolynomial({self.xi.tolist()}, r={self.r})"}[self.kind]()
        budget = f"num_iter={self.max_iter}" if self.tol == 0 else f"tol={self.tol:g}"
        return f"{type(self).__name__}({tr}, beta={float(self.beta.detach()):g}, {budget}, solver={self.solver!r})"
