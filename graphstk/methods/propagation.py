"""Batched propagation engines: Label-Prop (Eq. 22) and STKR-Prop (Algorithms 1-3,
Eqs. 7-9 of Zhai et al., ICLR 2024) on a :class:`~graphstk.operators.GraphKernel`.

Notation (local, visible numbering): ``S = G_K / (n+m)`` (Eq. 23), ``N = n + m``
visible nodes, ``n`` labeled ones at positions ``train``, ``E`` the ``N x n``
selection of the labeled columns, ``Y`` the ``n x C`` one-hot labels.

Every engine solves *several grid points at once*: the right-hand sides of all
classes and of all grid points that share the operator ``S`` are stacked into one
``[N, G*C]`` block, so one sparse product per iteration serves them all. Grid point
``g`` owns columns ``g*C ... g*C + C-1``.

Each engine returns, per grid point (and per iteration budget ``T`` when asked),
a block ``h`` ``[N, C]`` such that the scores of any node ``x`` are
``rows(x) @ h`` with ``rows(x) = K(x, visible) / (n+m)`` (:meth:`GraphKernel.rows`):
for visible nodes the row of ``S``, for hidden nodes their edges into the visible
graph. This is the out-of-sample formula after Algorithm 1, after Algorithm 2, and
Eq. 8 for top-d. Label-Prop (transductive by definition) returns ``Yhat`` itself.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.sparse.csgraph import connected_components
import torch
from torch import Tensor

from .._index import as_index
from ..operators.graph import GraphKernel
from ..spectral import eigen
from ..spectral.multishift import solve_shifted_laplacians
from ..spectral.solvers import SolveResult, cg, gmres, richardson
from ..spectral.transforms import Polynomial, ReciprocalPolynomial

SOLVERS = ("auto", "richardson", "cg", "gmres", "direct")
DENSE_LIMIT = 4000  # on accelerators: visible nodes up to which "direct" inner solves use a dense matrix
DIRECT_MAX_LABELED = 4000     # solver="auto" takes the direct solve up to n labels ...
DIRECT_MAX_ENTRIES = 2 ** 25  # ... and up to N * n entries in its dense N x n blocks (256 MiB in float64)
LU_MAX_NODES = 4000  # solver="auto": sparse LU of Q = I - eta S always up to this many visible nodes (see direct_route)
LU_MAX_ENVELOPE = 50_000_000  # ... and above it while the RCM envelope of Q holds at most this many entries (400 MB)


from ..exceptions import ClassesWithoutLabelsWarning  # noqa: E402,F401  (re-exported)


def auto_is_direct(prob: "Problem") -> bool:
    """Whether ``solver="auto"`` (without a fixed budget) uses the direct solve: the ``n x n``
    system is small and the ``N x n`` blocks it is built from fit in memory."""
    return prob.n <= DIRECT_MAX_LABELED and prob.N * prob.n <= DIRECT_MAX_ENTRIES


def cg_iterations(eta: float, tol: float = 1e-12) -> int:
    """Bound on the CG iterations for ``(I - eta S) x = b``: its eigenvalues lie in
    ``[1 - eta, 1 + eta]`` (``|lambda(S)| <= 1``), so ``kappa <= (1 + eta) / (1 - eta)`` and CG
    needs at most ``ceil(sqrt(kappa) / 2 * ln(2 / tol))`` iterations."""
    kappa = (1 + abs(eta)) / max(1 - abs(eta), 1e-300)
    return int(np.ceil(np.sqrt(kappa) / 2 * np.log(2 / tol)))


def lu_envelope(prob: "Problem") -> int:
    """Entries in the lower envelope (profile) of ``I - eta S`` in reverse Cuthill-McKee order.

    A symmetric positive definite matrix factored in that order fills in only inside its
    envelope, so this is an upper bound on the fill a sparse factorization needs (SuperLU's
    minimum-degree ordering, which :func:`_spd_solve` uses, fills in far less on the benchmark
    graphs). ``O(nnz)`` to compute, cached on the kernel: Cora 5.8e5, DBLP 3.1e7, a random graph of
    20k nodes and average degree 20 1.6e8 (where the LU took 213 s and 2.45 GB).
    """
    kernel = prob.kernel
    cached = getattr(kernel, "_lu_envelope", None)
    if cached is not None:
        return cached
    from scipy.sparse.csgraph import reverse_cuthill_mckee

    N = prob.N
    row, col, _ = kernel.S.coo()
    A = sp.csr_matrix((np.ones(row.numel()), (row.cpu().numpy(), col.cpu().numpy())), shape=(N, N))
    perm = reverse_cuthill_mckee(A, symmetric_mode=True)
    Ap = A[perm][:, perm].tocoo()
    first = np.arange(N)
    low = Ap.col < Ap.row
    np.minimum.at(first, Ap.row[low], Ap.col[low])
    env = int((np.arange(N) - first).sum()) + N
    try:
        kernel._lu_envelope = env
    except AttributeError:  # pragma: no cover - a kernel type without a __dict__
        pass
    return env


def direct_route(prob: "Problem", eta: float, n_rhs: int) -> tuple[str, str]:
    """How ``solver="auto"`` applies ``(I - eta S)^{-1}`` to ``n_rhs`` columns: ``("lu" | "cg", reason)``.

    A sparse LU's fill can grow like ``N^2`` (a random graph of 20k nodes and average degree 20:
    213 s and 2.45 GB; 2M nodes: not finished after 600 s), so it is bounded before it is
    computed: the LU is taken for ``N <= LU_MAX_NODES`` (a dense factor is cheap there) or when
    :func:`lu_envelope` bounds the fill by ``LU_MAX_ENVELOPE`` entries (DBLP: 3.1e7). Elsewhere CG
    on the symmetric positive definite ``I - eta S`` runs, whose cost is known in advance:
    ``n_rhs`` columns x :func:`cg_iterations` products with ``S`` (``O(nnz)`` each, memory
    ``O(N n_rhs)``), solved to a relative residual of 1e-12. CG stops once the residual is that
    small, so nodes many hops from every label keep a score of exactly 0 where the LU gives the
    tiny ``eta^k`` terms (visible for ``eta <= 0.1``): the LU is preferred whenever it is bounded.
    """
    N, nnz = prob.N, prob.kernel.S.nnz
    if N <= LU_MAX_NODES:
        return "lu", f"N = {N} <= {LU_MAX_NODES}: the sparse LU of I - eta S is cheap even if it fills in"
    env = lu_envelope(prob)
    if env <= LU_MAX_ENVELOPE:
        return "lu", (f"N = {N} > {LU_MAX_NODES}, but the fill of I - eta S is bounded by its reverse Cuthill-McKee "
                      f"envelope, {env} <= {LU_MAX_ENVELOPE} entries: sparse LU")
    it = cg_iterations(eta)
    return "cg", (f"N = {N} > {LU_MAX_NODES} and the fill of a sparse LU cannot be bounded (reverse Cuthill-McKee "
                  f"envelope {env} > {LU_MAX_ENVELOPE} entries; on random graphs it grows like N^2); CG on "
                  f"I - eta S (SPD, kappa <= {(1 + eta) / (1 - eta):.3g}) costs at most {n_rhs} columns x {it} "
                  f"products with S ({nnz} nonzeros)")


def _record(out: "EngineResult", route: str, reason: str, n_iter: int = 0) -> None:
    """Put a direct route (no iterate history) into ``out.history`` with why it was chosen."""
    out.history.append(SolveResult(torch.empty(0), n_iter=n_iter, converged=True, solver=route, reason=reason))


def warn_classes_without_labels(counts: Tensor, stacklevel: int | None = None) -> list[int]:
    """Warn (:class:`ClassesWithoutLabelsWarning`) naming the classes whose training count is 0;
    returns them."""
    missing = (counts == 0).nonzero().flatten().tolist()
    if missing:
        from .._checks import user_stacklevel
        stacklevel = user_stacklevel() if stacklevel is None else stacklevel
        shown = ", ".join(map(str, missing[:10])) + (" ..." if len(missing) > 10 else "")
        warnings.warn(f"{len(missing)} of {counts.numel()} classes have no training node (classes {shown}): nothing "
                      "can be learned about them and their scores carry no information; add labeled nodes of "
                      "these classes or lower num_classes", ClassesWithoutLabelsWarning, stacklevel=stacklevel)
    return missing


def check_solver_options(solver: str, max_iter: int, tol: float) -> None:
    """Raise a clear error for an unknown solver, ``max_iter < 1`` or ``tol < 0`` (or non-numbers)."""
    if solver not in SOLVERS:
        raise ValueError(f"unknown solver {solver!r}; choose one of {SOLVERS}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer, float)) \
            or int(max_iter) != max_iter or max_iter < 1:
        raise ValueError(f"max_iter must be an integer >= 1, got {max_iter!r}")
    if isinstance(tol, bool) or not isinstance(tol, (int, float, np.floating, np.integer)) \
            or not (tol >= 0 and np.isfinite(tol)):
        raise ValueError(f"tol must be a finite number >= 0, got {tol!r}")


@dataclass
class Problem:
    """A labeled propagation problem on the visible nodes of a graph kernel."""

    kernel: GraphKernel
    train: Tensor          # local ids of labeled nodes [n]
    Y: Tensor              # one-hot labels [n, C]
    _blocks: dict = field(default_factory=dict, repr=False)   # S E and E^T S, built on first use

    @property
    def N(self) -> int:
        return self.kernel.num_visible

    @property
    def n(self) -> int:
        return int(self.train.numel())

    @property
    def C(self) -> int:
        return int(self.Y.shape[1])

    def S(self, x: Tensor) -> Tensor:
        return self.kernel.S @ x

    def S_cols(self):
        """``S E``: the ``N x n`` labeled columns of ``S`` as a sparse operator (built once)."""
        if "cols" not in self._blocks:
            self._blocks["cols"] = self.kernel.S.block(None, self.train)
        return self._blocks["cols"]

    def S_rows(self):
        """``E^T S``: the ``n x N`` labeled rows of ``S`` as a sparse operator (built once)."""
        if "rows" not in self._blocks:
            self._blocks["rows"] = self.kernel.S.block(self.train, None)
        return self._blocks["rows"]

    def scatter(self, a: Tensor) -> Tensor:
        """``E a``: put ``[n, K]`` values at the labeled positions of an ``[N, K]`` block."""
        out = torch.zeros(self.N, a.shape[1], dtype=a.dtype, device=a.device)
        out[self.train] = a
        return out


@dataclass
class EngineResult:
    """``h[key]`` per grid point ``g`` and budget ``T`` (``None`` = solved to tolerance)."""

    h: dict[tuple[int, int | None], Tensor]
    history: list[SolveResult] = field(default_factory=list)


def make_problem(kernel: GraphKernel, y: Tensor, train_idx, num_classes: int | None = None,
                 labels: str = "onehot") -> Problem:
    """Check labels and build the right-hand side ``Y`` (``y`` holds global labels).

    ``train_idx`` is a LongTensor of node ids or a boolean mask of length ``num_nodes``
    (:func:`graphstk._index.as_index`); only ``y[train_idx]`` is read, so the labels of other
    nodes may be anything (``-1``, a stray value). ``num_classes=None`` takes
    ``max(y[train_idx]) + 1``. Classes in ``0..C-1`` without a training node are reported by
    a :class:`ClassesWithoutLabelsWarning` naming them.

    ``labels="onehot"``: ``Y`` is the one-hot matrix (Appendix D). ``labels="centered"``: the
    one-hot matrix minus its column means over the labeled nodes (the class frequencies), a
    common variant the paper does not state; every engine is linear in ``Y``, so it shifts each
    score row by ``-f(1) c^T`` (``c`` the class frequencies) and favours rarer classes.
    """
    if labels not in ("onehot", "centered"):
        raise ValueError(f"labels must be 'onehot' or 'centered', got {labels!r}")
    if not isinstance(y, Tensor) or y.dim() != 1:
        raise ValueError(f"y must be a 1-D tensor of class ids with one entry per node, got "
                         f"{tuple(y.shape) if isinstance(y, Tensor) else type(y).__name__}")
    if y.numel() != kernel.num_nodes:
        raise ValueError(f"y has {y.numel()} entries but the graph has {kernel.num_nodes} nodes")
    gidx = as_index(train_idx, kernel.num_nodes, kernel.device, name="train_idx", allow_none=False)
    train_local = kernel.local(gidx)
    if train_local.numel() == 0:
        raise ValueError("no labeled nodes: train_idx is empty")
    if torch.unique(train_local).numel() != train_local.numel():
        raise ValueError("train_idx contains duplicates")
    yt = y.to(kernel.device)[gidx]
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
    warn_classes_without_labels(torch.bincount(yt.long(), minlength=num_classes))
    Y = torch.nn.functional.one_hot(yt.long(), num_classes).to(kernel.dtype)
    if labels == "centered":
        Y = Y - Y.mean(dim=0, keepdim=True)
    return Problem(kernel, train_local, Y)


def _tile(Y: Tensor, g: int) -> Tensor:
    return Y.repeat(1, g)


def _per_col(values: Sequence[float], C: int, like: Tensor) -> Tensor:
    return torch.as_tensor(list(values), dtype=like.dtype, device=like.device).repeat_interleave(C)


def _split(x: Tensor, C: int) -> list[Tensor]:
    return list(x.split(C, dim=1))


def _sym_solve_path(B: Tensor, scale: float, shifts: Sequence[float], rhs: Tensor, what: str) -> list[Tensor]:
    """Solve ``(scale * B + shift I) a = rhs`` for every shift with one ``eigh`` of ``B``.

    The eigendecomposition is always computed in float64 (``B`` is only ``n x n``): torch's
    float32 ``eigh`` on CPU was seen to return NaN eigenpairs, without an error, for a very
    sparse ``B`` with many zero rows (the KRR system of a Cora split). The solutions are
    returned in the dtype of ``rhs``; a non-finite decomposition raises FloatingPointError.
    """
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


# ---------------------------------------------------------------------------
# Label propagation, Zhou et al. (2003); STKR Eq. 22: (I - eta S) Yhat = [Y; 0]
# ---------------------------------------------------------------------------
def label_propagation(prob: Problem, etas: Sequence[float], solver: str = "auto", max_iter: int = 1000,
                      tol: float = 1e-6, budgets: Sequence[int] = (), callback=None) -> EngineResult:
    """Solve Eq. 22 for every ``eta`` at once; ``budgets`` = fixed iteration counts ``T``.

    Richardson with ``gamma = 1`` is Zhou et al.'s iteration ``Yhat <- eta S Yhat + Ytilde``.
    """
    for eta in etas:
        if not 0 < eta < 1.0 / max(prob.kernel.lambda_max, 1e-300):
            raise ValueError(f"label propagation needs 0 < eta < 1/lambda_1 = {1 / prob.kernel.lambda_max:g}, "
                             f"got eta={eta}")
    C, G = prob.C, len(etas)
    b = _tile(prob.scatter(prob.Y), G)
    eta_col = _per_col(etas, C, b)

    def apply(x):
        return torch.addcmul(x, eta_col, prob.S(x), value=-1.0)

    b_train = b[prob.train]

    def step(x):  # Zhou et al.'s update x <- eta S x + [Y; 0] (Eq. 22) in one pass (b lives on the labeled rows)
        return prob.S(x).mul_(eta_col).index_add_(0, prob.train, b_train)

    out = EngineResult({})
    if budgets:
        solver = "richardson" if solver == "auto" else solver
        T = max(budgets)
        if solver == "richardson":
            res = richardson(apply, b, 1.0, T, 0.0, snapshots=budgets, callback=callback, step=step)
            res.reason = f"fixed budget T={T}: Zhou et al.'s iteration"
        elif solver == "cg":
            res = cg(apply, b, T, 0.0, snapshots=budgets, callback=callback)
        else:
            raise ValueError(f"a fixed iteration budget T needs solver 'richardson' or 'cg', got {solver!r}")
        out.history.append(res)
        for t in budgets:
            for g, blk in enumerate(_split(res.snapshots[t], C)):
                out.h[(g, t)] = blk
        return out
    reason = "requested"
    if solver == "auto":
        solver, reason = "cg", "auto: I - eta S is symmetric positive definite for 0 < eta < 1/lambda_1"
    if solver == "direct":
        xs = []
        for g, eta in enumerate(etas):
            x_g, _ = _spd_solve(prob, b[:, g * C:(g + 1) * C], eta, "lu")
            xs.append(x_g)
        _record(out, "direct (sparse LU of I - eta S)", "requested")
        x = torch.cat(xs, dim=1)
    elif solver == "cg" and G > 1:  # CG for every eta from one Krylov sequence on C columns, not G * C
        xs, ms = solve_shifted_laplacians(prob.S, prob.scatter(prob.Y), etas, max_iter=max_iter, tol=tol)
        x = torch.cat(xs, dim=1)
        out.history.append(SolveResult(x, ms.residuals, ms.n_iter, ms.converged, solver="multishift-cg",
                                       reason=reason + f"; all {G} etas from one Krylov sequence (multi-shift CG)"))
    else:
        res = _iterate(solver, apply, b, max_iter, tol, gamma=1.0, callback=callback, step=step)
        res.reason = reason
        out.history.append(res)
        x = res.x
    for g, blk in enumerate(_split(x, C)):
        out.h[(g, None)] = blk
    return out


def _iterate(solver: str, apply, b, max_iter, tol, gamma, callback=None, step=None) -> SolveResult:
    if solver == "richardson":
        return richardson(apply, b, gamma, max_iter, tol, callback=callback, step=step)
    if solver == "cg":
        return cg(apply, b, max_iter, tol, callback=callback)
    if solver == "gmres":
        return gmres(apply, b, max_iter, tol, callback=callback)
    raise ValueError(f"unknown solver {solver!r}; choose one of {SOLVERS}")


def _spd_direct(prob: Problem, rhs: Tensor, eta: float) -> Tensor:
    """Solve ``(I - eta S) X = rhs`` directly: dense for small graphs, sparse LU otherwise."""
    return _spd_solve(prob, rhs, eta, "lu")[0]


def _spd_solve(prob: Problem, rhs: Tensor, eta: float, route: str) -> tuple[Tensor, int]:
    """``(I - eta S)^{-1} rhs`` by ``route`` (see :func:`direct_route`); returns ``(X, CG iterations)``.

    ``"lu"``: sparse LU on CPU (dense solve / CG on accelerators); ``"cg"``: CG to a relative
    residual of 1e-12 (the matrix is SPD with ``kappa <= (1 + eta)/(1 - eta)``).
    """
    N = prob.N
    if route == "cg":
        def apply(v):
            return torch.addcmul(v, torch.tensor(eta, dtype=v.dtype, device=v.device), prob.S(v), value=-1.0)
        res = cg(apply, rhs, max_iter=max(4 * cg_iterations(eta), 100), tol=1e-12)
        return res.x, res.n_iter
    if rhs.device.type != "cpu":  # keep the data on the accelerator
        if N <= DENSE_LIMIT:
            Q = torch.eye(N, dtype=rhs.dtype, device=rhs.device) - eta * prob.kernel.S.to_dense()
            return torch.linalg.solve(Q, rhs), 0
        return _spd_solve(prob, rhs, eta, "cg")
    row, col, val = prob.kernel.S.coo()
    Ssp = sp.csc_matrix((val.cpu().numpy(), (row.cpu().numpy(), col.cpu().numpy())), shape=(N, N))
    # a symmetric fill-reducing ordering: ~10x less fill than the default COLAMD on citation graphs
    lu = spla.splu((sp.identity(N, format="csc") - eta * Ssp).tocsc(), permc_spec="MMD_AT_PLUS_A",
                   options=dict(SymmetricMode=True))
    return torch.as_tensor(lu.solve(rhs.detach().cpu().numpy()), dtype=rhs.dtype, device=rhs.device), 0


# ---------------------------------------------------------------------------
# STKR with a polynomial transform: Algorithm 1 (Richardson / Krylov) and 3 (direct)
# ---------------------------------------------------------------------------
def _horner(prob: Problem, coeffs: Sequence[float], a: Tensor) -> Tensor:
    """``sum_p pi_p S^(p-1) a`` for ``a = E alpha`` (line 4 of Algorithm 1, q - 1 products)."""
    h = coeffs[-1] * a
    for c in reversed(coeffs[:-1]):
        h = prob.S(h) + c * a
    return h


def _gram_apply(prob: Problem, coeffs: Sequence[float], alpha: Tensor) -> Tensor:
    """``E^T S sum_p pi_p S^(p-1) E alpha = [s(S)]_{nn} alpha`` (lines 3-5 of Algorithm 1) with
    ``q - 2`` full products of ``S`` instead of ``q``: the first product acts on ``E alpha``, which
    is zero off the labeled rows, so it is ``(S E) alpha`` with the ``N x n`` labeled columns; of
    the last one only the labeled rows are needed, ``(E^T S) h``. Same sums in the same order as
    the full products (the skipped terms are exact zeros)."""
    q = len(coeffs)
    a = prob.scatter(alpha)
    if q == 1:
        return prob.S_rows() @ (coeffs[0] * a)
    h = prob.S_cols() @ (coeffs[-1] * alpha) + coeffs[-2] * a
    for c in reversed(coeffs[:-2]):
        h = prob.S(h) + c * a
    return prob.S_rows() @ h


def stkr_polynomial(prob: Problem, transform: Polynomial, betas: Sequence[float], solver: str = "auto",
                    max_iter: int = 1000, tol: float = 1e-6, budgets: Sequence[int] = (),
                    step_size: str | float = "auto", callback=None) -> EngineResult:
    """STKR (Eq. 7) with ``s(l) = sum_p pi_p l^p`` for every ``beta`` at once.

    ``A = N [s(S)]_{nn} + n beta I`` (``G_{Khat_s,n} = (n+m) s(S)_{nn}`` since
    ``G_{Khat^p} = (n+m) S^p`` on visible nodes, Eq. 5). Richardson is Algorithm 1;
    ``direct`` is Algorithm 3 (``A`` formed from ``q`` products with the ``N x n``
    block ``E``, then one ``eigh`` serves every ``beta``). Prediction
    ``f(x) = N rows(x) sum_p pi_p S^(p-1) E alpha`` is the formula after Algorithm 1.
    """
    N, n, C = prob.N, prob.n, prob.C
    coeffs = transform.coeffs
    out = EngineResult({})
    if solver == "direct" or (solver == "auto" and not budgets and auto_is_direct(prob)):
        _record(out, "direct (Algorithm 3)", "requested" if solver == "direct" else
                f"auto: n = {n} <= {DIRECT_MAX_LABELED} labels and N n = {N * n} <= {DIRECT_MAX_ENTRIES} entries")
        hp_E = _horner(prob, coeffs, prob.scatter(torch.eye(n, dtype=prob.Y.dtype, device=prob.Y.device)))
        B = prob.S_rows() @ hp_E  # = S(hp_E)[train]: only the labeled rows of the last product
        alphas = _sym_solve_path(B, float(N), [n * bt for bt in betas], prob.Y, "STKR (Algorithm 3)")
        for g, a in enumerate(alphas):
            out.h[(g, None)] = N * (hp_E @ a)
        return out
    G = len(betas)
    b = _tile(prob.Y, G)
    beta_col = _per_col(betas, C, b)

    def apply(alpha):  # lines 3-5 of Algorithm 1, q - 2 full products (see _gram_apply)
        return N * _gram_apply(prob, coeffs, alpha) + n * beta_col * alpha

    lam = prob.kernel.lambda_max
    s_lo, s_hi = transform.value_range(-lam, lam)
    if step_size == "auto" or step_size == "paper":
        gamma = 1.0 / (N * max(s_hi, abs(s_lo), 1e-300) + n * beta_col)
    else:
        gamma = float(step_size)
    if budgets:
        solver = "richardson" if solver == "auto" else solver
        if solver == "richardson":
            res = richardson(apply, b, gamma, max(budgets), 0.0, snapshots=budgets, callback=callback)
        elif solver == "cg":
            res = cg(apply, b, max(budgets), 0.0, snapshots=budgets, callback=callback)
        else:
            raise ValueError(f"a fixed iteration budget T needs solver 'richardson' or 'cg', got {solver!r}")
        out.history.append(res)
        for t in budgets:
            h = N * _horner(prob, coeffs, prob.scatter(res.snapshots[t]))
            for g, blk in enumerate(_split(h, C)):
                out.h[(g, t)] = blk
        return out
    reason = "requested"
    if solver == "auto":
        solver = "cg" if s_lo >= 0 else "gmres"
        reason = (f"auto: too large for the direct solve (n = {n}, N n = {N * n}); "
                  + ("s >= 0 on [-lambda_1, lambda_1], so the system is SPD" if s_lo >= 0 else
                     "s < 0 somewhere on [-lambda_1, lambda_1], so the system is indefinite"))
    res = _iterate(solver, apply, b, max_iter, tol, gamma, callback=callback)
    res.reason = reason
    out.history.append(res)
    h = N * _horner(prob, coeffs, prob.scatter(res.x))
    for g, blk in enumerate(_split(h, C)):
        out.h[(g, None)] = blk
    return out


# ---------------------------------------------------------------------------
# STKR with a simple reciprocal 1/s: Algorithm 2 (Eq. 20) and its direct solve
# ---------------------------------------------------------------------------
def stkr_reciprocal(prob: Problem, transforms: Sequence[ReciprocalPolynomial], betas: Sequence[float],
                    solver: str = "auto", max_iter: int = 1000, tol: float = 1e-6, budgets: Sequence[int] = (),
                    step_size: str | float = "auto", callback=None) -> EngineResult:
    """STKR (Eq. 7) for ``1/s(l) = sum_p xi_p l^(p-r)``, every (transform, beta) pair at once.

    Iterative solvers work on ``M theta = [y; 0]`` with
    ``M = N I_n~ S^r + n beta Q``, ``Q = sum_p xi_p S^p`` (Eq. 20); ``M`` is not
    symmetric, so the Krylov choice is GMRES. Richardson (Algorithm 2) uses
    ``gamma = 1 / (N lambda^r + n beta rho_max)`` (``step_size="auto"``, a bound on the
    spectrum of ``M`` that keeps it stable on graphs, where ``||G_{K,n}||`` can reach
    ``N lambda`` rather than the ``n lambda`` assumed by Prop. 10) or Prop. 10's
    ``gamma = 1/(n lambda^r)`` (``step_size="paper"``). ``direct`` solves
    ``Q X = E`` (dense, or sparse LU on large graphs), forms the ``n x n`` matrix
    ``A = N (S^r X)_{nn} + n beta I`` and serves every ``beta`` with one ``eigh``.
    Grid point ``g = t * len(betas) + b`` pairs ``transforms[t]`` with ``betas[b]``.
    Prediction: ``f(x) = v_K(x)^T S^(r-1) theta`` (the formula after Algorithm 2).
    """
    lam = prob.kernel.lambda_max
    for tr in transforms:
        tr.validate(lam)
    rs = {tr.r for tr in transforms}
    if len(rs) != 1:
        raise ValueError("all transforms of one batch must share r")
    r = rs.pop()
    N, n, C = prob.N, prob.n, prob.C
    out = EngineResult({})
    if solver == "cg" and budgets:
        raise ValueError("a fixed iteration budget T for Algorithm 2 needs solver 'richardson': CG needs a "
                         "symmetric positive definite system and Algorithm 2's M (Eq. 20) is not symmetric")
    if solver == "cg" and not auto_is_direct(prob):
        raise ValueError(f"solver='cg' with a reciprocal transform runs CG on Q = sum_p xi_p S^p for each of the "
                         f"n = {n} labeled columns (Algorithm 2's M itself is not symmetric), which needs "
                         f"N n = {N * n} > {DIRECT_MAX_ENTRIES} entries here; use solver='gmres' or 'auto'")
    dense_ok = all(len(tr.xi) <= 2 for tr in transforms) or N <= DENSE_LIMIT
    direct = solver in ("direct", "cg") or (solver == "auto" and not budgets and auto_is_direct(prob)
                                           and dense_ok)
    if direct:
        E = prob.scatter(torch.eye(n, dtype=prob.Y.dtype, device=prob.Y.device))
        routes = []
        for tr in transforms:
            if solver == "cg":
                route, why = "cg", "requested (CG on the SPD Q; Algorithm 2's M is not symmetric)"
            elif solver == "direct":
                route, why = ("lu" if len(tr.xi) <= 2 else "dense"), "requested"
            elif len(tr.xi) <= 2:
                route, why = direct_route(prob, -tr.xi[1] / tr.xi[0] if len(tr.xi) == 2 else 0.0, n)
                why = (f"auto: n = {n} <= {DIRECT_MAX_LABELED} labels and N n = {N * n} <= {DIRECT_MAX_ENTRIES}, so "
                       f"the n x n system; Q^-1 E by {route}: {why}")
            else:
                route, why = "dense", f"auto: N = {N} <= {DENSE_LIMIT}, dense solve with Q"
            routes.append((route, why))
        Xs = None
        if solver == "auto":
            Xs = _reciprocal_multishift(prob, transforms, E)
            if Xs is not None and len(transforms) > 1:
                _record(out, "direct (n x n system; (I - eta S)^-1 E for every eta by one multi-shift CG)",
                        f"auto: {len(transforms)} inverse-Laplacian shifts of one operator "
                        f"(N = {N}, nnz(S) = {prob.kernel.S.nnz}): one Krylov sequence serves them all")
            elif Xs is not None:
                _record(out, "direct (n x n system; (I - eta S)^-1 E by CG)",
                        f"auto: nnz(S) = {prob.kernel.S.nnz} >= {SINGLE_SHIFT_MIN_NNZ}: one CG to 1e-12 beats "
                        "a sparse LU of I - eta S")
        for t, tr in enumerate(transforms):
            if Xs is not None:
                X = Xs[t]
            else:
                route, why = routes[t]
                X, it = _reciprocal_direct(prob, tr, E, route)
                _record(out, f"direct (n x n system; Q^-1 E by {route})", why, n_iter=it)
            Z = X
            for _ in range(r - 1):
                Z = prob.S(Z)
            B = prob.S_rows() @ Z  # = S(Z)[train]: only the labeled rows of the last product
            alphas = _sym_solve_path(B, float(N), [n * bt for bt in betas], prob.Y, "STKR (Algorithm 2, direct)")
            for b_i, a in enumerate(alphas):
                out.h[(t * len(betas) + b_i, None)] = N * (Z @ a)
        return out
    q = max(len(tr.xi) for tr in transforms)
    pairs = [(tr, bt) for tr in transforms for bt in betas]
    xi = torch.tensor([[tr.xi[p] if p < len(tr.xi) else 0.0 for tr, _ in pairs] for p in range(q)],
                      dtype=prob.Y.dtype, device=prob.Y.device).repeat_interleave(C, dim=1)  # [q, K]
    beta_col = _per_col([bt for _, bt in pairs], C, prob.Y)
    train_mask = torch.zeros(N, 1, dtype=prob.Y.dtype, device=prob.Y.device)
    train_mask[prob.train] = 1.0
    b = _tile(prob.scatter(prob.Y), len(pairs))
    npow = max(r, q - 1)

    rho_max = torch.tensor([max(tr.rho(torch.linspace(-lam, lam, 2049, dtype=torch.float64)).max().item(), 1e-300)
                            for tr, _ in pairs], dtype=prob.Y.dtype, device=prob.Y.device).repeat_interleave(C)
    if step_size == "auto":
        gamma = 1.0 / (N * lam ** r + n * beta_col * rho_max)
    elif step_size == "paper":
        gamma = 1.0 / (n * lam ** r)
    else:
        gamma = float(step_size)

    step = None
    if r == 1 and q <= 2:  # e.g. the inverse Laplacian: M theta = (N I~ + n beta xi_1) S theta + n beta xi_0 theta
        xi_1 = xi[1] if q == 2 else 0.0
        coef_s = N * train_mask + n * beta_col * xi_1   # [N, K], built once
        coef_0 = n * beta_col * xi[0]

        def apply(theta):  # M theta (Eq. 20): one sparse product and one fused multiply-add
            return torch.addcmul(coef_0 * theta, coef_s, prob.S(theta))

        # Richardson's update theta + gamma ([Y; 0] - M theta) (Algorithm 2, lines 3-5) fused into one
        # product and two passes: (1 - gamma coef_0) theta - gamma (n beta xi_1) S theta on every row,
        # plus, on the labeled rows only, gamma ([Y; 0] - N S theta).
        g = torch.as_tensor(gamma, dtype=prob.Y.dtype, device=prob.Y.device).expand(beta_col.shape)
        keep = 1.0 - g * coef_0
        neg_c = -g * n * beta_col * xi_1
        gb_train = (g * b)[prob.train]
        gN = g * N

        def step(theta):
            s_theta = prob.S(theta)
            lab = torch.addcmul(gb_train, gN, s_theta[prob.train], value=-1.0)
            return s_theta.mul_(neg_c).addcmul_(theta, keep).index_add_(0, prob.train, lab)
    else:
        def apply(theta):  # lines 3-5 of Algorithm 2, sharing the powers S^p theta
            powers = [theta]
            for _ in range(npow):
                powers.append(prob.S(powers[-1]))
            qt = sum(xi[p] * powers[p] for p in range(q))
            return N * train_mask * powers[r] + n * beta_col * qt

    def predict_block(theta):
        for _ in range(r - 1):
            theta = prob.S(theta)
        return N * theta

    if budgets:
        solver = "richardson" if solver == "auto" else solver
        if solver != "richardson":
            raise ValueError(f"a fixed iteration budget T for Algorithm 2 needs solver 'richardson', got {solver!r}")
        res = richardson(apply, b, gamma, max(budgets), 0.0, snapshots=budgets, callback=callback, step=step)
        out.history.append(res)
        for t in budgets:
            for g, blk in enumerate(_split(predict_block(res.snapshots[t]), C)):
                out.h[(g, t)] = blk
        return out
    reason = "requested"
    if solver == "auto":
        solver = "gmres"
        reason = (f"auto: too large for the direct solve (n = {n}, N n = {N * n}"
                  + (f", or a degree-{q - 1} Q with N = {N} > {DENSE_LIMIT}" if not dense_ok else "")
                  + "); Algorithm 2's M is not symmetric")
    res = _iterate(solver, apply, b, max_iter, tol, gamma, callback=callback, step=step)
    res.reason = reason
    out.history.append(res)
    for g, blk in enumerate(_split(predict_block(res.x), C)):
        out.h[(g, None)] = blk
    return out


MULTISHIFT_MIN_NNZ = 50_000   # nnz(S) from which multi-shift CG beats one sparse LU per eta (measured)
MULTISHIFT_MIN_SHIFTS = 4     # from MULTISHIFT_MIN_NNZ: one CG costs about as much as 2-4 LUs there
SINGLE_SHIFT_MIN_NNZ = 400_000  # from here one CG beats one LU even for a single eta (measured, see below)
MULTISHIFT_TOL = 1e-12        # relative residual of every shifted system (the LU reaches ~1e-15)


def use_multishift(prob: Problem, n_shifts: int) -> bool:
    """Whether the ``(I - eta S)^{-1} E`` solves of a grid (inductive SP-Lap, direct route, ``solver="auto"``)
    go through one multi-shift CG rather than one solve per ``eta``.

    Measured on the select views of seeds 0 and 1 (8 etas of Appendix D, ``E`` with n columns,
    2 threads, idle machine, engine of session 5), LU per eta vs multi-shift CG: Cora
    (nnz(S) 10.6k) 0.2-0.3 s vs 0.4-0.5 s, CiteSeer (9.1k) 0.1-0.2 s vs 0.8-0.9 s, PubMed (88.6k)
    3.3-3.4 s vs 2.2-2.6 s, DBLP (106k, LU fill 4.8M) 5.5-6.2 s vs 4.1-4.4 s, Photo (238k)
    4.7-5.1 s vs 2.4-2.9 s, CS (164k) 29.5-32.1 s vs 24.2-24.5 s, Computers (492k, fill 13M)
    about 3x. CG costs about 170-400 products with ``n`` columns whatever the fill and the
    number of shifts; the LU's fill grows much faster than ``nnz(S)`` on these graphs. Multi-shift is
    taken for at least ``MULTISHIFT_MIN_SHIFTS`` etas when ``nnz(S) >= MULTISHIFT_MIN_NNZ`` (CPU, where
    the LU would run), for any number of etas from ``SINGLE_SHIFT_MIN_NNZ`` (Computers' final view, one
    eta, seeds 0-1: 1.3-1.6 s against 4.1-4.2 s for the LU at eta = 0.9, 3.2-4.2 s against 4.2 s at
    eta = 0.999999; DBLP's single LU, 0.7 s, stays), or when :func:`direct_route` would run CG for
    each eta anyway (the LU's fill is unbounded): one Krylov sequence then replaces one CG per eta.
    """
    if prob.Y.device.type == "cpu":
        nnz = prob.kernel.S.nnz
        if nnz >= SINGLE_SHIFT_MIN_NNZ or (nnz >= MULTISHIFT_MIN_NNZ and n_shifts >= MULTISHIFT_MIN_SHIFTS):
            return True
    if n_shifts < MULTISHIFT_MIN_SHIFTS:
        return False
    return direct_route(prob, 0.5, prob.n)[0] == "cg"


def _reciprocal_multishift(prob: Problem, transforms: Sequence[ReciprocalPolynomial], rhs: Tensor
                           ) -> list[Tensor] | None:
    """``Q_t^{-1} rhs`` for every transform by one multi-shift CG when all are inverse-Laplacian type
    (``Q = xi_0 (I - eta S)``, ``eta > 0``) and :func:`use_multishift` says so; else ``None``."""
    lap = [len(tr.xi) == 2 and tr.xi[1] < 0 for tr in transforms]
    if not all(lap) or not use_multishift(prob, len(transforms)):
        return None
    etas = [-tr.xi[1] / tr.xi[0] for tr in transforms]
    xs, _ = solve_shifted_laplacians(prob.S, rhs, etas, max_iter=20 * prob.N, tol=MULTISHIFT_TOL)
    return [x / tr.xi[0] for x, tr in zip(xs, transforms)]


def _reciprocal_direct(prob: Problem, tr: ReciprocalPolynomial, rhs: Tensor, route: str = "lu"
                       ) -> tuple[Tensor, int]:
    """``(Q^{-1} rhs, CG iterations)`` with ``Q = sum_p xi_p S^p``, by ``route``: ``"lu"`` (inverse
    Laplacian: sparse LU), ``"dense"`` (``N <= DENSE_LIMIT``) or ``"cg"`` (``Q`` must be SPD)."""
    if len(tr.xi) == 2 and route in ("lu", "cg"):  # Q = xi_0 I + xi_1 S: the inverse-Laplacian case
        return _spd_solve(prob, rhs / tr.xi[0], -tr.xi[1] / tr.xi[0], route)
    if len(tr.xi) == 1:
        return rhs / tr.xi[0], 0
    N = prob.N
    if route == "cg":
        def apply(v):
            out, p = tr.xi[0] * v, v
            for c in tr.xi[1:]:
                p = prob.S(p)
                out = out + c * p
            return out
        res = cg(apply, rhs, max_iter=100 * N, tol=1e-12)
        return res.x, res.n_iter
    if N > DENSE_LIMIT:
        raise ValueError(f"solver='direct' for a reciprocal polynomial of degree > 1 needs N <= {DENSE_LIMIT}; "
                         "use solver='gmres' or 'auto'")
    S = prob.kernel.S.to_dense()
    Q = torch.zeros_like(S)
    P = torch.eye(N, dtype=S.dtype, device=S.device)
    for c in tr.xi:
        Q = Q + c * P
        P = P @ S
    return torch.linalg.solve(Q, rhs), 0


# ---------------------------------------------------------------------------
# Kernel PCA features + ridge probe: Eqs. 8-9
# ---------------------------------------------------------------------------
def labeled_components(prob: Problem) -> Tensor:
    """Mask of visible nodes whose connected component contains a labeled node."""
    row, col, _ = prob.kernel.S.coo()
    a = sp.csr_matrix((np.ones(row.numel()), (row.cpu().numpy(), col.cpu().numpy())), shape=(prob.N, prob.N))
    _, label = connected_components(a, directed=False)
    label = torch.as_tensor(label, device=prob.train.device)
    hit = torch.zeros(int(label.max()) + 1 if label.numel() else 0, dtype=torch.bool, device=label.device)
    hit[label[prob.train]] = True
    return hit[label]


def stkr_topd(prob: Problem, ds: Sequence[int], betas: Sequence[float], support: str = "all") -> EngineResult:
    """Top-``d`` kernel PCA on the unlabeled visible nodes with a ridge probe (Eqs. 8-9).

    ``G_{K,m} = N S_UU`` over the unlabeled visible nodes ``U``; with ``S_UU u_i = mu_i u_i``
    (``||u_i|| = 1``) Eq. 8's normalisation ``<v_i, v_i> = 1/(m lambda~_i)``,
    ``m lambda~_i = N mu_i`` gives ``v_i = u_i / sqrt(N mu_i)`` and
    ``psi_i(x) = sum_j v_i[j] K(x_{U_j}, x) = sqrt(N / mu_i) rows(x)[:, U] u_i``.
    One eigendecomposition (``max(ds)`` pairs) serves every ``d`` and ``beta``.
    Grid point ``g = i_d * len(betas) + i_beta``.

    ``support="all"`` is Eq. 8 as written (every unlabeled visible node). On a
    disconnected graph each component without a label contributes an eigenvalue 1
    whose eigenvector vanishes on the labeled nodes, so it gets a zero probe weight
    and only wastes one of the ``d`` dimensions (on DBLP the top 32 are all such).
    ``support="labeled"`` (a documented variant, not the paper's) restricts ``U`` to
    the components that contain a labeled node, spending all ``d`` dimensions there.
    """
    N, n, C = prob.N, prob.n, prob.C
    is_train = torch.zeros(N, dtype=torch.bool, device=prob.Y.device)
    is_train[prob.train] = True
    keep = ~is_train
    if support == "labeled":
        keep &= labeled_components(prob)
    elif support != "all":
        raise ValueError(f"support must be 'all' or 'labeled', got {support!r}")
    U = keep.nonzero().flatten()
    dmax = max(ds)
    if U.numel() == 0:   # e.g. an edgeless graph with support="labeled": no node shares a component with a label
        warnings.warn("kernel PCA: no unlabeled node shares a connected component with a labeled node; every score "
                      "is zero", stacklevel=2)
        return EngineResult({(g, None): torch.zeros(N, C, dtype=prob.Y.dtype, device=prob.Y.device)
                             for g in range(len(ds) * len(betas))})
    k = min(dmax, U.numel())
    mu, u = eigen.top_eigenpairs(prob.kernel.S.block(U, U), k, upper_bound=prob.kernel.lambda_max)
    pos = mu > torch.finfo(mu.dtype).eps * 10
    if int(pos.sum()) < dmax:
        warnings.warn(f"kernel PCA: only {int(pos.sum())} positive eigenvalues among the top {k} of G_K,m; "
                      f"d is capped there (Eq. 8 needs lambda~_i > 0)", stacklevel=2)
    mu, u = mu[pos], u[:, pos]
    scaled = u * torch.sqrt(N / mu)                            # columns sqrt(N/mu_i) u_i
    phi_train = prob.kernel.S.block(prob.train, U) @ scaled     # Psi(X_n)^T  [n, k]
    out = EngineResult({})
    for i_d, d in enumerate(ds):
        dd = min(d, mu.numel())
        F = phi_train[:, :dd]
        ws = _sym_solve_path(F.T @ F, 1.0, [n * bt for bt in betas], F.T @ prob.Y, "kernel PCA ridge (Eq. 9)")
        for i_b, w in enumerate(ws):
            h = torch.zeros(N, C, dtype=prob.Y.dtype, device=prob.Y.device)
            h[U] = scaled[:, :dd] @ w
            out.h[(i_d * len(betas) + i_b, None)] = h
    return out
