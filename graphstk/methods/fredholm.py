"""Fredholm kernels (Que, Belkin, Wang, "Learning with Fredholm Kernels", NIPS 2014).

The Fredholm learning problem (Eq. 3) over ``n = l + u`` points ``U`` (labeled + unlabeled)

    f* = argmin_f (1/l) sum_{i<=l} ((K_phat f)(x_i) - y_i)^2 + lam ||f||_H^2,
    (K_phat f)(x) = (1/n) sum_{j<=n} k(x, x_j) f(x_j)                              (Eq. 2)

is kernel RLS with the data-dependent *Fredholm kernel* (Eq. 5)

    kF(x, z) = (1/n^2) sum_{i,j<=n} k(x, x_i) kH(x_i, x_j) k(z, x_j)  =  a(x)^T KH a(z),

``k`` the *outer* and ``kH`` the *inner* kernel, ``a(x) = k(x, U) / n`` and ``KH = kH(U, U)``.
The normalised kernel (Eq. 6) replaces ``k(x, x_i)`` by ``k(x, x_i) / sum_m k(x, x_m)``; for a
Gaussian outer kernel these weights are a softmax of ``-||x - x_i||^2 / (2 r)``, computed as one
(stable for tiny widths). Eq. 6 is implemented as printed, with its ``1/n^2``: the discretised
Eq. 9 would not have it; the constant factor only rescales ``lam``.

Kernel conventions (the paper's, Sec. 5): Gaussians are ``exp(-||x - z||^2 / (2 r))`` with the
*width* ``r`` (``r = sigma^2`` of :mod:`graphstk.operators.feature`); linear is ``x^T z``.
Any feature kernel of :func:`graphstk.operators.kernel_function` may be used as outer or inner
kernel by passing a :class:`~graphstk.operators.Kernel` instead of a name.

Instances (Sec. 5, l.274-288): ``FredLin1`` (outer linear, inner Gaussian), ``FredLin2`` (outer
Gaussian, inner linear), ``FredGauss`` (both Gaussian, one width ``r``) and the normalised
``FredLin2(N)``, ``FredGauss(N)``; see :data:`FREDHOLM_INSTANCES` and :func:`fredholm_instance`.

Lambda convention (erratum, "Scaling errata"): ``lam`` here is the ``lambda`` of **Eq. 3**, so
the dual solution is ``alpha = (K_F + l lam I)^{-1} y`` with ``K_F`` the ``l x l`` matrix of
Eq. 5 (with its ``1/n^2``). The paper's Eq. 4 / l.97 ``lambda`` equals ``n^2 l lam``; with it,
Eq. 4 as printed returns this classifier divided by ``n^2`` (it solves Eq. 3 for the targets
``y / n^2``), so the predictions agree (checked in ``tests/test_fredholm.py``).

Memory: nothing here forms an ``n x n`` matrix. The blocks a method needs (labeled x labeled,
eval x labeled) are ``A_X (KH A_L^T)``: one product of the inner kernel with the thin
``[n, l]`` block ``A_L^T``, evaluated in row blocks, then row blocks of the outer weights of the
rows. A linear inner kernel is applied as ``U (U^T B)`` (no kernel matrix at all), so FredLin2
is a linear kernel on the kernel-smoothed features ``m(x) = a(x)^T U``; a linear outer kernel
makes the classifier linear, ``c(x) = x^T w`` (FredLin1, :attr:`FredholmRLSC.coef_`).

Points may be dense (torch tensor / numpy array ``[n, d]``) or ``scipy.sparse`` matrices
(tf-idf text); sparse points support the linear, Gaussian and polynomial kernels.
"""
from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
import torch
from sklearn.base import BaseEstimator, ClassifierMixin
from torch import Tensor

from ..operators.base import KernelOperator, as_index
from ..operators.feature import Kernel, as_features, check_positive, kernel_function

__all__ = [
    "FREDHOLM_INSTANCES", "fredholm_instance", "fredholm_gram", "FredholmKernel", "FredholmRLSC",
    "FredholmSVM", "RandomFeatureFredholm", "fredholm_random_features", "gaussian_fredholm_path", "solve_square",
    "solve_hinge",
    "onevsrest_targets",
]

_BLOCK_ELEMS = 1 << 22  # entries of one temporary [rows, n] tile (32 MB in float64)

#: name -> (outer, inner, normalized); one width r for every Gaussian in the instance
FREDHOLM_INSTANCES: dict[str, tuple[str, str, bool]] = {
    "FredLin1": ("linear", "gaussian", False),
    "FredLin2": ("gaussian", "linear", False),
    "FredLin2(N)": ("gaussian", "linear", True),
    "FredGauss": ("gaussian", "gaussian", False),
    "FredGauss(N)": ("gaussian", "gaussian", True),
}


def fredholm_instance(name: str, width: float) -> dict:
    """Keyword arguments of a Sec. 5 instance (``FredLin1``, ``FredLin2``, ``FredLin2(N)``,
    ``FredGauss``, ``FredGauss(N)``) with Gaussian width ``r = width``, for
    :class:`FredholmKernel`, :class:`FredholmRLSC`, :class:`FredholmSVM`.

    >>> fredholm_instance("FredGauss(N)", 2.0)
    {'outer': 'gaussian', 'inner': 'gaussian', 'normalized': True, 'outer_width': 2.0, 'inner_width': 2.0}
    """
    if name not in FREDHOLM_INSTANCES:
        raise ValueError(f"unknown Fredholm instance {name!r}; choose one of {list(FREDHOLM_INSTANCES)}")
    outer, inner, normalized = FREDHOLM_INSTANCES[name]
    return {"outer": outer, "inner": inner, "normalized": normalized,
            "outer_width": width if outer == "gaussian" else None,
            "inner_width": width if inner == "gaussian" else None}


# ---------------------------------------------------------------------------
# points (dense torch tensors or scipy CSR) and kernels on them
# ---------------------------------------------------------------------------
def _as_points(X, name: str, dtype=None):
    """A dense float tensor ``[n, d]`` or a float64 scipy CSR matrix, checked."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        if X.nnz and not np.isfinite(X.data).all():
            raise ValueError(f"{name} contains NaN or infinite values")
        return X
    return as_features(X, dtype=dtype, name=name)


def _match(P, like, name: str):
    """``P`` as points of the same kind (dense / scipy.sparse) and dtype as ``like``."""
    if sp.issparse(like):
        if not sp.issparse(P):
            P = sp.csr_matrix(np.asarray(P.cpu().numpy() if isinstance(P, Tensor) else P, dtype=np.float64))
        return _as_points(P, name)
    if sp.issparse(P):
        P = torch.from_numpy(P.toarray())
    return _as_points(P, name, dtype=like.dtype).to(like.device)


def _n(P) -> int:
    return int(P.shape[0])


def _take(P, idx: Tensor):
    if sp.issparse(P):
        return P[idx.cpu().numpy()]
    return P.index_select(0, idx.to(P.device))


def _slice(P, s: int, e: int):
    return P[s:e]


def _concat(A, B):
    if sp.issparse(A) or sp.issparse(B):
        if not (sp.issparse(A) and sp.issparse(B)):
            raise TypeError("labeled and unlabeled points must both be dense or both be scipy.sparse")
        return sp.vstack([A, B], format="csr")
    return torch.cat([A, B.to(A.dtype)])


def _dot(A, B, dtype=torch.float64) -> Tensor:
    """``A B^T`` as a dense torch tensor."""
    if sp.issparse(A) or sp.issparse(B):
        M = A @ B.T
        return torch.from_numpy(np.asarray(M.todense() if sp.issparse(M) else M, dtype=np.float64)).to(dtype)
    return A @ B.T


def _sqnorms(A, dtype=torch.float64) -> Tensor:
    if sp.issparse(A):
        return torch.from_numpy(np.asarray(A.multiply(A).sum(1)).ravel()).to(dtype)
    return (A * A).sum(1)


def _dtype(P) -> torch.dtype:
    return torch.float64 if sp.issparse(P) else P.dtype


def _make_kernel(kernel, width, role: str) -> Kernel:
    """A :class:`Kernel` from a name and the paper's width (Gaussian ``r = sigma^2``)."""
    if isinstance(kernel, Kernel):
        if width is not None:
            raise TypeError(f"{role}_width must be None when {role} is a Kernel instance (it has its own parameters)")
        return kernel
    name = str(kernel).lower()
    if name in ("gaussian", "rbf"):
        if width is None:
            raise ValueError(f"{role} kernel 'gaussian' needs {role}_width = r > 0 in exp(-||x-z||^2/(2r))")
        return kernel_function("gaussian", sigma=math.sqrt(check_positive(f"{role}_width", width)))
    if name == "linear":
        return kernel_function("linear")  # a width is meaningless for x^T z and ignored
    if width is not None:
        return kernel_function(name, sigma=check_positive(f"{role}_width", width))
    return kernel_function(name)


def _kblock(kernel: Kernel, A, B, log: bool = False) -> Tensor:
    """Dense kernel block ``k(A, B)`` (``log=True``: the log-kernel, Gaussian only)."""
    if not (sp.issparse(A) or sp.issparse(B)):
        if log:
            d = torch.addmm(_sqnorms(A).unsqueeze(1) + _sqnorms(B).unsqueeze(0), A, B.T, alpha=-2.0)
            return d.clamp_(min=0.0).mul_(-0.5 / kernel.sigma ** 2)
        return kernel._raw(A, B)
    G = _dot(A, B)
    if kernel.name == "linear":
        return G
    if kernel.name == "polynomial":
        return (G + kernel.params["c"]) ** kernel.params["degree"]
    if kernel.name == "gaussian":
        d = G.mul_(-2.0).add_(_sqnorms(A).unsqueeze(1)).add_(_sqnorms(B).unsqueeze(0)).clamp_(min=0.0)
        d.mul_(-0.5 / kernel.sigma ** 2)
        return d if log else d.exp_()
    raise ValueError(f"kernel {kernel.name!r} needs dense points; sparse input supports linear, gaussian, polynomial")


def _rows_per_block(n_cols: int, block_size: int | None) -> int:
    return int(block_size) if block_size else max(1, _BLOCK_ELEMS // max(1, n_cols))


def _kernel_matmul(kernel: Kernel, P, Q, B: Tensor, block_size: int | None = None) -> Tensor:
    """``k(P, Q) @ B`` without the ``|P| x |Q|`` matrix: row blocks of ``P``; a linear kernel
    is applied as ``P (Q^T B)``."""
    if kernel.name == "linear":
        QtB = torch.from_numpy(np.asarray(Q.T @ B.cpu().numpy())).to(B.dtype) if sp.issparse(Q) else Q.T @ B
        return torch.from_numpy(np.asarray(P @ QtB.numpy())).to(B.dtype) if sp.issparse(P) else P @ QtB
    bs = _rows_per_block(_n(Q), block_size)
    out = [_kblock(kernel, _slice(P, s, min(_n(P), s + bs)), Q) @ B for s in range(0, _n(P), bs)]
    return torch.cat(out) if out else B.new_zeros(0, B.shape[1])


class FredholmKernel(KernelOperator):
    """The Fredholm kernel block ``kF(X, Z)`` over the points ``U`` (Eq. 5; Eq. 6 when
    ``normalized``) as a lazy :class:`~graphstk.operators.KernelOperator`.

    Parameters
    ----------
    X : ``[a, d]`` row points (dense or scipy.sparse).
    Z : ``[b, d]`` column points, optional (``X`` when omitted).
    U : ``[n, d]`` the points the integral runs over (labeled + unlabeled), ``n >= 1``.
    outer, inner : ``"gaussian"`` | ``"linear"`` (or any name / :class:`Kernel` of
        :func:`graphstk.operators.kernel_function`); defaults ``"gaussian"``.
    outer_width, inner_width : Gaussian width ``r > 0`` of ``exp(-||x-z||^2 / (2r))`` (for other
        bandwidth kernels: their ``sigma``); ignored for ``linear``; must be ``None`` with a Kernel.
    normalized : bool, default False. Eq. 6: outer weights divided by their row sum
        (a softmax for the Gaussian); the row sums must be positive.
    block_size : rows per temporary ``[rows, n]`` tile (default ``2**22 // n``).

    Products cost ``O((a + b + n) n d)`` and hold ``[block, n]`` tiles only; ``to_dense`` computes
    ``KH A_Z^T`` once (``[n, b]``, cached and shared by row blocks from :meth:`block`), then
    ``A_X`` in row blocks. ``T`` swaps rows and columns (``kF`` is symmetric when ``kH`` is).
    """

    def __init__(self, X, Z=None, U=None, outer="gaussian", inner="gaussian", outer_width=None,
                 inner_width=None, normalized: bool = False, block_size: int | None = None):
        if U is None:
            raise ValueError("U (the labeled + unlabeled points the integral runs over) is required")
        Up = _as_points(U, "U")
        Xp = _match(X, Up, "X")
        Zp = Xp if Z is None else _match(Z, Up, "Z")
        if _n(Up) == 0:
            raise ValueError("U is empty: the Fredholm kernel needs at least one (unlabeled) point to integrate over")
        for name, P in (("X", Xp), ("Z", Zp)):
            if P.shape[1] != Up.shape[1]:
                raise ValueError(f"dimension mismatch: {name} has {P.shape[1]} features, U has {Up.shape[1]}")
        if block_size is not None and (int(block_size) != block_size or int(block_size) < 1):
            raise ValueError(f"block_size must be a positive integer, got {block_size!r}")
        self.X, self.Z, self.U = Xp, Zp, Up
        self.outer = _make_kernel(outer, outer_width, "outer")
        self.inner = _make_kernel(inner, inner_width, "inner")
        self.normalized = bool(normalized)
        self.block_size = block_size
        self._right = None  # cached KH A_Z^T [n, b]

    @classmethod
    def _like(cls, other: "FredholmKernel", X, Z, right=None) -> "FredholmKernel":
        op = cls.__new__(cls)
        op.__dict__.update(other.__dict__)
        op.X, op.Z, op._right = X, Z, right
        return op

    # -- the outer weights a(x) = k(x, U) / n (Eq. 5) or the Eq. 6 row-normalised form ---------
    def weights(self, P) -> Tensor:
        """``A_P = [k(p, x_i) / n]_{p, i}`` (Eq. 5) or, when ``normalized``,
        ``[k(p, x_i) / sum_m k(p, x_m) / n]`` (Eq. 6; a softmax for the Gaussian): ``[|P|, n]``."""
        n = _n(self.U)
        if self.normalized and self.outer.name == "gaussian":
            W = torch.softmax(_kblock(self.outer, P, self.U, log=True), dim=1)
        else:
            W = _kblock(self.outer, P, self.U)
            if self.normalized:
                s = W.sum(1, keepdim=True)
                if bool((s <= 0).any()):
                    raise ValueError("normalized Fredholm kernel: an outer-kernel row sum sum_m k(x, x_m) is <= 0; "
                                     "use a positive outer kernel (e.g. 'gaussian') or normalized=False")
                W = W / s
        return W.div_(n)

    def _weights_matmul(self, P, B: Tensor) -> Tensor:
        """``A_P @ B`` in row blocks of ``P``."""
        bs = _rows_per_block(_n(self.U), self.block_size)
        out = [self.weights(_slice(P, s, min(_n(P), s + bs))) @ B for s in range(0, _n(P), bs)]
        return torch.cat(out) if out else B.new_zeros(0, B.shape[1])

    def _weights_t_matmul(self, P, V: Tensor) -> Tensor:
        """``A_P^T @ V`` (``[n, C]``) in row blocks of ``P``."""
        bs = _rows_per_block(_n(self.U), self.block_size)
        out = V.new_zeros(_n(self.U), V.shape[1])
        for s in range(0, _n(P), bs):
            e = min(_n(P), s + bs)
            out += self.weights(_slice(P, s, e)).T @ V[s:e]
        return out

    def inner_matmul(self, B: Tensor) -> Tensor:
        """``KH @ B`` for ``B`` ``[n, C]``: row blocks of ``kH(U, U)``, or ``U (U^T B)`` if linear."""
        return _kernel_matmul(self.inner, self.U, self.U, B, self.block_size)

    def right_factor(self) -> Tensor:
        """``KH A_Z^T`` ``[n, b]`` (cached): ``kF(x, Z) = a(x)^T KH A_Z^T``."""
        if self._right is None:
            bs = _rows_per_block(_n(self.U), self.block_size)
            AZt = torch.cat([self.weights(_slice(self.Z, s, min(_n(self.Z), s + bs))).T
                             for s in range(0, _n(self.Z), bs)], dim=1) if _n(self.Z) else \
                torch.zeros(_n(self.U), 0, dtype=self.dtype)
            self._right = self.inner_matmul(AZt.contiguous())
        return self._right

    def cross(self, P) -> Tensor:
        """``kF(P, Z)`` ``[|P|, b]`` for new row points ``P`` (e.g. validation/test points),
        sharing the cached right factor: ``A_P (KH A_Z^T)`` in row blocks of ``P``."""
        return self._weights_matmul(_match(P, self.U, "P"), self.right_factor())

    # -- KernelOperator interface ------------------------------------------------------------
    shape = property(lambda self: (_n(self.X), _n(self.Z)))
    dtype = property(lambda self: _dtype(self.X))
    device = property(lambda self: torch.device("cpu") if sp.issparse(self.X) else self.X.device)

    def _matmul(self, x: Tensor) -> Tensor:
        x = x.to(self.dtype)
        if self._right is not None:
            return self._weights_matmul(self.X, self._right @ x)
        return self._weights_matmul(self.X, self.inner_matmul(self._weights_t_matmul(self.Z, x)))

    def to_dense(self) -> Tensor:
        return self._weights_matmul(self.X, self.right_factor())

    def diagonal(self) -> Tensor:
        m = min(self.shape)
        bs = max(1, min(256, _rows_per_block(_n(self.U), self.block_size)))
        out = []
        for s in range(0, m, bs):
            e = min(m, s + bs)
            AX = self.weights(_slice(self.X, s, e))
            AZ = AX if self.Z is self.X else self.weights(_slice(self.Z, s, e))
            out.append((AX * self.inner_matmul(AZ.T.contiguous()).T).sum(1))
        return torch.cat(out) if out else torch.zeros(0, dtype=self.dtype)

    def block(self, rows=None, cols=None) -> "FredholmKernel":
        X = self.X if rows is None else _take(self.X, as_index(rows, self.shape[0]))
        Z = self.Z if cols is None else _take(self.Z, as_index(cols, self.shape[1]))
        return FredholmKernel._like(self, X, Z, self._right if cols is None else None)

    @property
    def T(self) -> "FredholmKernel":
        return FredholmKernel._like(self, self.Z, self.X)

    def to(self, device=None, dtype=None) -> "FredholmKernel":
        if sp.issparse(self.X):
            raise TypeError("a FredholmKernel on scipy.sparse points stays on the CPU in float64")
        mv = (lambda t: None if t is None else t.to(device=device, dtype=dtype))
        op = FredholmKernel._like(self, mv(self.X), mv(self.Z), mv(self._right))
        op.U = mv(self.U)
        return op

    def __repr__(self) -> str:
        return (f"FredholmKernel(shape={self.shape}, n_integral={_n(self.U)}, outer={self.outer!r}, "
                f"inner={self.inner!r}, normalized={self.normalized})")


def fredholm_gram(X, Z, U, outer="gaussian", inner="gaussian", outer_width=None, inner_width=None,
                  normalized: bool = False) -> Tensor:
    """The dense block ``kF(X, Z)`` ``[|X|, |Z|]`` over the points ``U`` (Eq. 5; Eq. 6 when
    ``normalized``).

    ``outer``/``inner`` are ``"linear"`` or ``"gaussian"`` (``exp(-||x - z||^2 / (2 r))`` with
    ``r`` the width, as in the paper), or any kernel of :func:`graphstk.operators.kernel_function`.
    ``outer_width`` and ``inner_width`` are the widths ``r`` of the two kernels.
    ``Z=None`` means ``Z = X``. For small inputs and checks; the estimators never need it (it is
    ``FredholmKernel(X, Z, U, ...).to_dense()``, which holds ``[|Z|, n]`` and ``[rows, n]`` tiles).
    """
    return FredholmKernel(X, Z, U, outer=outer, inner=inner, outer_width=outer_width,
                          inner_width=inner_width, normalized=normalized).to_dense()


def gaussian_fredholm_path(XL, XE, U, widths, normalized=(False, True),
                           block_size: int | None = None) -> dict:
    """The blocks ``(K_F[L, L], K_F[E, L])`` of the FredGauss family (outer and inner Gaussian
    of one width ``r``, Eq. 5 and/or Eq. 6) for every ``r`` in ``widths`` and every flag in
    ``normalized``, from two passes over the points (what a grid search needs).

    Pass 1 evaluates ``||u - u'||^2`` in row blocks of ``U`` once and, per width and variant,
    accumulates ``R = KH A_L^T`` ``[n, l]``; pass 2 evaluates ``||x - u||^2`` in row blocks of
    ``XE`` once and forms ``A_E R``. The squared distances are shared by all widths, so the
    cost is ``~2 n^2 d + 2 n^2 l |widths| |normalized|`` and the memory ``[block, n]`` tiles plus
    the ``[n, l]`` factors; never an ``n x n`` matrix. Dense points only.

    Returns ``{(r, normalized): (K_LL [l, l], K_EL [|XE|, l])}``.
    """
    U = as_features(U, name="U")
    XL = as_features(XL, dtype=U.dtype, name="XL")
    XE = as_features(XE, dtype=U.dtype, name="XE")
    for name, P in (("XL", XL), ("XE", XE)):
        if P.shape[1] != U.shape[1]:
            raise ValueError(f"dimension mismatch: {name} has {P.shape[1]} features, U has {U.shape[1]}")
    if U.shape[0] == 0:
        raise ValueError("U is empty: the Fredholm kernel needs at least one (unlabeled) point to integrate over")
    rs = [check_positive("width", r) for r in widths]
    flags = [bool(v) for v in normalized]
    n = U.shape[0]
    sqU = _sqnorms(U)

    def sqdist(P):
        return torch.addmm(_sqnorms(P).unsqueeze(1) + sqU.unsqueeze(0), P, U.T, alpha=-2.0).clamp_(min=0.0)

    def weights(D, r, norm):
        logk = D * (-0.5 / r)
        return (torch.softmax(logk, dim=1) if norm else logk.exp_()).div_(n)

    DL = sqdist(XL)
    AL = {(r, v): weights(DL, r, v) for r in rs for v in flags}
    del DL
    R = {key: U.new_zeros(n, XL.shape[0]) for key in AL}
    bs = _rows_per_block(n, block_size)
    for s in range(0, n, bs):
        D = sqdist(U[s:s + bs])
        for r in rs:
            K = (D * (-0.5 / r)).exp_()
            for v in flags:
                R[(r, v)][s:s + bs] = K @ AL[(r, v)].T
    out = {key: (AL[key] @ R[key], U.new_zeros(XE.shape[0], XL.shape[0])) for key in AL}
    for s in range(0, XE.shape[0], bs):
        D = sqdist(XE[s:s + bs])
        for r in rs:
            for v in flags:
                out[(r, v)][1][s:s + bs] = weights(D, r, v) @ R[(r, v)]
    return out


# ---------------------------------------------------------------------------
# solvers: square loss (Eq. 3) and hinge loss (Eq. 7) on a Fredholm Gram block
# ---------------------------------------------------------------------------
def onevsrest_targets(y, classes=None) -> tuple[np.ndarray, Tensor]:
    """``(classes, Y)``: one-vs-rest targets ``Y[i, c] = +1`` if ``y_i`` is class ``c`` else ``-1``."""
    yn = np.asarray(y.cpu().numpy() if isinstance(y, Tensor) else y).ravel()
    cls = np.unique(yn) if classes is None else np.asarray(classes)
    if len(cls) < 2:
        raise ValueError(f"need labeled points of at least 2 classes, got classes {cls.tolist()}")
    Y = np.where(yn[:, None] == cls[None, :], 1.0, -1.0)
    return cls, torch.from_numpy(Y)


def _check_lam(lam) -> float:
    return check_positive("lam", lam)


def solve_square(K_LL: Tensor, Y: Tensor, lam: float) -> Tensor:
    """Eq. 3 on the Fredholm Gram block: ``alpha = (K_F + l lam I)^{-1} Y`` (erratum convention;
    the paper's Eq. 4 ``lambda`` is ``n^2 l lam``). ``K_LL`` ``[l, l]``, ``Y`` ``[l, C]``."""
    lam = _check_lam(lam)
    l = K_LL.shape[0]
    A = K_LL.to(torch.float64).clone()
    A.diagonal().add_(l * lam)
    L, info = torch.linalg.cholesky_ex(A)
    Yd = Y.to(torch.float64)
    return torch.cholesky_solve(Yd, L) if int(info) == 0 else torch.linalg.solve(A, Yd)


def solve_hinge(K_LL: Tensor, Y: Tensor, lam: float, tol: float = 1e-8, max_iter: int = 100000,
                seed: int = 0) -> Tensor:
    """Eq. 7 (hinge loss, no bias) on the Fredholm Gram block, one binary SVM per column of ``Y``.

    The dual after l.141 is ``max_a sum_i a_i - 1/2 sum_ij a_i a_j y_i y_j K_F(x_i, x_j)``,
    ``0 <= a_i <= C``, ``C = 1/(2 l lam)``, **without** the equality constraint
    ``sum_i a_i y_i = 0`` that an intercept adds. It is solved by liblinear's dual coordinate
    descent (scikit-learn's ``LinearSVC(loss="hinge", dual=True, fit_intercept=False)``), which
    solves exactly this box-constrained dual for an explicit feature map: here
    ``Phi = V diag(sqrt(max(ev, 0)))`` from ``K_F = V diag(ev) V^T``, so ``Phi Phi^T = K_F``
    (up to clipped negative round-off). scikit-learn's ``SVC`` was not used: its dual carries the
    intercept's equality constraint, a different problem. Returns ``beta = a * y`` ``[l, C]``
    so that the decision function is ``c(x) = sum_s K_F(x, x_s) beta_s``.
    """
    from sklearn.svm import LinearSVC

    lam = _check_lam(lam)
    l = K_LL.shape[0]
    C = 1.0 / (2.0 * l * lam)
    K = K_LL.to(torch.float64)
    K = 0.5 * (K + K.T)
    ev, V = torch.linalg.eigh(K)
    keep = ev > ev.abs().max().clamp_min(1e-300) * 1e-12
    V, ev = V[:, keep], ev[keep]
    Phi = (V * ev.sqrt()).numpy()
    out = torch.zeros(l, Y.shape[1], dtype=torch.float64)
    for c in range(Y.shape[1]):
        yc = Y[:, c].numpy()
        if np.all(yc == yc[0]):  # one class only: the dual optimum is a = C (all margins violated)
            out[:, c] = torch.from_numpy(C * yc)
            continue
        svm = LinearSVC(loss="hinge", dual=True, fit_intercept=False, C=C, tol=tol, max_iter=max_iter,
                        random_state=seed).fit(Phi, yc)
        w = torch.from_numpy(svm.coef_.ravel().astype(np.float64))
        # w = Phi^T beta; every beta with Phi^T beta = w gives the same K_F-predictions
        out[:, c] = V @ (w / ev.sqrt())
    return out


# ---------------------------------------------------------------------------
# estimators
# ---------------------------------------------------------------------------
class _FredholmBase(ClassifierMixin, BaseEstimator):
    _loss = "square"

    def __init__(self, outer="gaussian", inner="gaussian", outer_width=None, inner_width=None,
                 normalized: bool = False, lam: float = 1e-3, lam_scale: str = "absolute",
                 block_size: int | None = None):
        self.outer = outer
        self.inner = inner
        self.outer_width = outer_width
        self.inner_width = inner_width
        self.normalized = normalized
        self.lam = lam
        self.lam_scale = lam_scale
        self.block_size = block_size

    @classmethod
    def instance(cls, name: str, width: float, **kwargs):
        """The Sec. 5 instance ``name`` (``FredLin1``, ..., ``FredGauss(N)``) with width ``r``."""
        return cls(**fredholm_instance(name, width), **kwargs)

    def _effective_lam(self, K_LL: Tensor) -> float:
        lam = _check_lam(self.lam)
        if self.lam_scale == "absolute":
            return lam
        if self.lam_scale == "trace":
            return lam * float(K_LL.diagonal().mean())
        raise ValueError(f"lam_scale must be 'absolute' or 'trace', got {self.lam_scale!r}")

    def fit(self, X_labeled, y, X_unlabeled):
        """Fit on ``l`` labeled points ``X_labeled`` with labels ``y`` and the unlabeled points
        ``X_unlabeled`` (``u >= 1``); the integral of Eq. 2 runs over both (``n = l + u``)."""
        XL = _as_points(X_labeled, "X_labeled")
        XU = _match(X_unlabeled, XL, "X_unlabeled")
        if _n(XU) == 0:
            raise ValueError("X_unlabeled is empty: Fredholm kernels need unlabeled points (Eq. 2); "
                             "pass the unlabeled features, or use graphstk.methods.KernelRidge for supervised RLS")
        if XL.shape[1] != XU.shape[1]:
            raise ValueError(f"dimension mismatch: X_labeled has {XL.shape[1]} features, X_unlabeled has {XU.shape[1]}")
        yn = np.asarray(y.cpu().numpy() if isinstance(y, Tensor) else y).ravel()
        if len(yn) != _n(XL):
            raise ValueError(f"y has {len(yn)} labels but X_labeled has {_n(XL)} rows")
        self.classes_, Y = onevsrest_targets(yn)
        op = FredholmKernel(XL, None, _concat(XL, XU), outer=self.outer, inner=self.inner,
                            outer_width=self.outer_width, inner_width=self.inner_width,
                            normalized=self.normalized, block_size=self.block_size)
        K_LL = op.to_dense()
        lam = self._effective_lam(K_LL)
        self.lam_ = lam
        beta = solve_square(K_LL, Y, lam) if self._loss == "square" else solve_hinge(K_LL, Y, lam)
        self.dual_coef_ = beta
        self.operator_ = op
        # c(x) = a(x)^T (KH A_L^T beta): keep h = KH A_L^T beta [n, C]; prediction needs a(x) only
        self.h_ = op.right_factor() @ beta.to(op.dtype)
        op._right = None  # release the [n, l] factor
        self.n_features_in_ = XL.shape[1]
        if self.operator_.outer.name == "linear":
            U = op.U
            self.coef_ = (torch.from_numpy(np.asarray(U.T @ self.h_.numpy())) if sp.issparse(U) else U.T @ self.h_) \
                / _n(U)
        return self

    def decision_function(self, X) -> Tensor:
        """Scores ``[m, C]`` (one-vs-rest, column ``c`` for ``classes_[c]``):
        ``c(x) = sum_s kF(x, x_s) beta_s``. A linear outer kernel gives ``x^T coef_``."""
        if not hasattr(self, "h_"):
            raise RuntimeError(f"{type(self).__name__} is not fitted; call fit(X_labeled, y, X_unlabeled) first")
        P = _match(X, self.operator_.U, "X")
        if P.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {P.shape[1]} features, but the model was fitted with {self.n_features_in_}")
        return self.operator_._weights_matmul(P, self.h_)

    def predict(self, X) -> np.ndarray:
        """``classes_[argmax_c scores]``."""
        scores = self.decision_function(X)
        return self.classes_[scores.argmax(1).numpy()]


class FredholmRLSC(_FredholmBase):
    """Fredholm kernel RLS classifier: square loss, Eq. 3 (Sec. 2; kernel form after Eq. 5).

    ``alpha = (K_F + l lam I)^{-1} Y`` with ``K_F`` the ``l x l`` Fredholm Gram matrix of
    Eq. 5 (Eq. 6 when ``normalized``) and ``Y`` one-vs-rest ``+-1`` targets; scores
    ``c(x) = sum_s kF(x, x_s) alpha_s``, prediction the argmax.

    **Lambda convention** (erratum): ``lam`` is the ``lambda`` of Eq. 3; the paper's Eq. 4 /
    l.97 ``lambda`` equals ``n^2 l lam`` (``n = l + u``). ``lam_scale="trace"`` multiplies
    ``lam`` by the mean of ``diag(K_F)`` over the labeled points (a scale-free grid; the
    effective value is ``lam_``).

    Parameters
    ----------
    outer, inner, outer_width, inner_width, normalized : the kernel, see :class:`FredholmKernel`
        (defaults: Gaussian outer and inner, unnormalised; widths are required for Gaussians).
    lam : float > 0, default 1e-3.  lam_scale : ``"absolute"`` (default) or ``"trace"``.
    block_size : rows per temporary ``[rows, n]`` tile.

    Use :meth:`instance` for the paper's kernels: ``FredholmRLSC.instance("FredGauss(N)", r, lam=...)``.

    Attributes after ``fit``: ``classes_``, ``dual_coef_`` (``alpha``, ``[l, C]``), ``lam_``,
    ``h_`` (``KH A_L^T alpha``, ``[n, C]``: prediction needs only the outer weights of new
    points), ``operator_`` (the :class:`FredholmKernel`), and for a linear outer kernel
    (FredLin1) ``coef_`` ``[d, C]`` with ``c(x) = x^T coef_``.
    """


class FredholmSVM(_FredholmBase):
    """Fredholm SVM: hinge loss, Eq. 7, **no bias**, ``C = 1/(2 l lam)`` (dual after l.141).

    Same parameters and attributes as :class:`FredholmRLSC` (``outer``, ``inner``, ``outer_width``,
    ``inner_width``, ``normalized``, ``lam``, ``lam_scale``, ``block_size``; ``lam`` is Eq. 7's ``lambda``);
    ``dual_coef_`` holds ``a * y`` per one-vs-rest column. Solved by :func:`solve_hinge`
    (liblinear dual coordinate descent on an exact feature map of ``K_F``; see there why not
    ``sklearn.svm.SVC``).
    """

    _loss = "hinge"


# ---------------------------------------------------------------------------
# random features (Sec. 5.3, corrected by the erratum)
# ---------------------------------------------------------------------------
def fredholm_random_features(X, U, outer="gaussian", outer_width=None, inner_width=None,
                             normalized: bool = False, n_components: int = 500, seed: int | None = 0,
                             features=None, block_size: int | None = None) -> Tensor:
    """``z_F(X) = A_X z(U)`` ``[|X|, F]`` with ``z_F(x)^T z_F(x') ~ kF(x, x')`` (Sec. 5.3).

    Corrected map (erratum): ``z`` are random Fourier features of the inner Gaussian
    ``exp(-||u-v||^2/(2t))`` with ``omega ~ N(0, I/t)`` and ``z(u) = sqrt(1/D)[cos, sin]``
    (:class:`graphstk.features.RandomFourierFeatures`, ``z(u)^T z(v) ~ kH(u, v)``; the paper's
    extra ``1/D`` is dropped). ``A_X`` are the Eq. 5 / Eq. 6 outer weights ``k(x, U)/n``.
    ``z(U)`` is never stored: it is accumulated in row blocks of ``U`` (memory
    ``O(|X| F + block n)``, linear in ``n``). ``features`` may be a pre-fitted map (then
    ``inner_width``/``n_components``/``seed`` are unused). ``outer_width``: width of the outer
    Gaussian; ``normalized``: Eq. 6 outer weights; ``block_size``: rows of ``U`` per block.
    """
    ctx = _RFContext(X, U, outer, outer_width, inner_width, normalized, n_components, seed, features, block_size)
    return ctx.features_of(ctx.X)


class _RFContext:
    def __init__(self, X, U, outer, outer_width, inner_width, normalized, n_components, seed, features, block_size):
        from ..features import RandomFourierFeatures

        self.op = FredholmKernel(X, None, U, outer=outer, inner="linear", outer_width=outer_width,
                                 normalized=normalized, block_size=block_size)
        if sp.issparse(self.op.U):
            raise TypeError("random Fredholm features need dense points (the Fourier map of sparse tf-idf is dense)")
        self.X, self.U, self.block_size = self.op.X, self.op.U, block_size
        if features is None:
            if inner_width is None:
                raise ValueError("inner_width = t > 0 of the inner Gaussian exp(-||u-v||^2/(2t)) is required")
            t = check_positive("inner_width", inner_width)
            features = RandomFourierFeatures("gaussian", sigma=math.sqrt(t), n_features=n_components,
                                             seed=seed).fit(self.U[:1])
        self.z = features

    def _u_blocks(self):
        n = _n(self.U)
        bs = max(1, _BLOCK_ELEMS // max(1, 2 * self.z.W_.shape[1]))
        for s in range(0, n, bs):
            yield s, min(n, s + bs)

    def features_of(self, P) -> Tensor:
        """``A_P z(U)``: row chunks of ``P`` (up to ``2**24`` weights each), ``z`` evaluated on row
        blocks of ``U`` once per chunk."""
        F = self.z.n_output_features_
        out = []
        rb = max(1, 4 * _BLOCK_ELEMS // max(1, _n(self.U)))
        for s in range(0, _n(P), rb):
            A = self.op.weights(_slice(P, s, min(_n(P), s + rb)))
            acc = A.new_zeros(A.shape[0], F)
            for us, ue in self._u_blocks():
                acc += A[:, us:ue] @ self.z.transform(self.U[us:ue]).to(A.dtype)
            out.append(acc)
        return torch.cat(out) if out else torch.zeros(0, F, dtype=self.op.dtype)

    def lift(self, w: Tensor) -> Tensor:
        """``z(U) w`` ``[n, C]`` in row blocks of ``U``."""
        return torch.cat([self.z.transform(self.U[s:e]).to(w.dtype) @ w for s, e in self._u_blocks()])


class RandomFeatureFredholm(ClassifierMixin, BaseEstimator):
    """Square-loss Fredholm classifier (Eq. 3) on the random-feature approximation of Sec. 5.3
    (corrected map and density, erratum): ``kF(x, z) ~ z_F(x)^T z_F(z)``, see
    :func:`fredholm_random_features`. The inner kernel is the Gaussian of width ``inner_width``;
    the outer kernel is exact (``"gaussian"`` with ``outer_width``, or ``"linear"``).

    Ridge in the dual over the ``l`` labeled points, ``alpha = (Z_L Z_L^T + l lam I)^{-1} Y``
    (the same Eq. 3 ``lam`` as :class:`FredholmRLSC`, which it approaches as ``n_components``
    grows), ``w = Z_L^T alpha``; prediction ``c(x) = a(x)^T (z(U) w)``. Memory is linear in
    ``n``: ``z(U)`` is never stored, only ``[l, 2D]``, ``[n, C]`` and ``[block, n]`` tiles.

    Parameters: ``outer``, ``outer_width``, ``inner_width``, ``normalized`` (Eq. 6),
    ``n_components`` (``D`` frequencies, ``2D`` features, default 500), ``lam`` (default 1e-3),
    ``lam_scale`` (``"absolute"``/``"trace"`` as in :class:`FredholmRLSC`), ``seed``, ``block_size``.

    Attributes after ``fit``: ``classes_``, ``coef_`` (``w``, ``[2D, C]``), ``dual_coef_``,
    ``features_`` (the fitted Fourier map), ``h_`` (``z(U) w``), ``lam_``.
    """

    def __init__(self, outer="gaussian", outer_width=None, inner_width=None, normalized: bool = False,
                 n_components: int = 500, lam: float = 1e-3, lam_scale: str = "absolute", seed: int | None = 0,
                 block_size: int | None = None):
        self.outer = outer
        self.outer_width = outer_width
        self.inner_width = inner_width
        self.normalized = normalized
        self.n_components = n_components
        self.lam = lam
        self.lam_scale = lam_scale
        self.seed = seed
        self.block_size = block_size

    @classmethod
    def instance(cls, name: str, width: float, **kwargs):
        """``FredGauss`` / ``FredGauss(N)`` with width ``r`` for both kernels."""
        kw = fredholm_instance(name, width)
        if kw.pop("inner") != "gaussian":
            raise ValueError(f"random features approximate a Gaussian inner kernel; {name} has a linear one "
                             "(use FredholmRLSC: a linear inner kernel needs no n x n matrix)")
        return cls(**kw, **kwargs)

    def fit(self, X_labeled, y, X_unlabeled):
        XL = _as_points(X_labeled, "X_labeled")
        XU = _match(X_unlabeled, XL, "X_unlabeled")
        if _n(XU) == 0:
            raise ValueError("X_unlabeled is empty: Fredholm kernels need unlabeled points (Eq. 2)")
        if XL.shape[1] != XU.shape[1]:
            raise ValueError(f"dimension mismatch: X_labeled has {XL.shape[1]} features, X_unlabeled has {XU.shape[1]}")
        yn = np.asarray(y.cpu().numpy() if isinstance(y, Tensor) else y).ravel()
        if len(yn) != _n(XL):
            raise ValueError(f"y has {len(yn)} labels but X_labeled has {_n(XL)} rows")
        self.classes_, Y = onevsrest_targets(yn)
        ctx = _RFContext(XL, _concat(XL, XU), self.outer, self.outer_width, self.inner_width, self.normalized,
                         self.n_components, self.seed, None, self.block_size)
        ZL = ctx.features_of(XL)
        K = ZL @ ZL.T
        lam = _check_lam(self.lam)
        if self.lam_scale == "trace":
            lam *= float(K.diagonal().mean())
        elif self.lam_scale != "absolute":
            raise ValueError(f"lam_scale must be 'absolute' or 'trace', got {self.lam_scale!r}")
        self.lam_ = lam
        self.dual_coef_ = solve_square(K, Y, lam)
        self.coef_ = ZL.T @ self.dual_coef_.to(ZL.dtype)
        self.h_ = ctx.lift(self.coef_)
        self.features_ = ctx.z
        ctx.op._right = None
        self._op = ctx.op
        self.n_features_in_ = XL.shape[1]
        return self

    def decision_function(self, X) -> Tensor:
        """Scores ``[m, C]``: ``a(x)^T z(U) w``."""
        if not hasattr(self, "h_"):
            raise RuntimeError("RandomFeatureFredholm is not fitted; call fit(X_labeled, y, X_unlabeled) first")
        P = _match(X, self._op.U, "X")
        if P.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {P.shape[1]} features, but the model was fitted with {self.n_features_in_}")
        return self._op._weights_matmul(P, self.h_)

    def predict(self, X) -> np.ndarray:
        """``classes_[argmax_c scores]``."""
        scores = self.decision_function(X)
        return self.classes_[scores.argmax(1).numpy()]
