"""The Fredholm kernel (Eqs. 5-6) as a lazy operator, its dense block, and the Gaussian family's blocks
over a grid of widths. Points: dense ``[n, d]`` (any device) or ``scipy.sparse`` (CPU, float64; linear,
Gaussian and polynomial kernels)."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import torch
from torch import Tensor

from ..._arrays import check_positive_int
from ...memory import tile_rows
from ...operators.base import KernelOperator, as_index
from ...operators.bandwidth import median_distance, median_sigma
from ...operators.feature import Kernel, as_features, check_positive, kernel_function

__all__ = ["FREDHOLM_INSTANCES", "fredholm_instance", "kernel_from_sigma", "median_sigma", "FredholmKernel",
           "fredholm_gram", "gaussian_fredholm_path"]

_BLOCK_ELEMS = 1 << 22  # entries of one temporary [rows, n] tile (32 MB in float64)

#: name -> (outer, inner, normalized); one width sigma for every Gaussian in the instance
FREDHOLM_INSTANCES: dict[str, tuple[str, str, bool]] = {
    "FredLin1": ("linear", "gaussian", False),
    "FredLin2": ("gaussian", "linear", False),
    "FredLin2(N)": ("gaussian", "linear", True),
    "FredGauss": ("gaussian", "gaussian", False),
    "FredGauss(N)": ("gaussian", "gaussian", True),
}


def fredholm_instance(name: str, sigma: float | None = None) -> dict:
    """Keyword arguments of a Sec. 5 instance (``FredLin1``, ``FredLin2``, ``FredLin2(N)``,
    ``FredGauss``, ``FredGauss(N)``) with Gaussian width ``sigma`` (``exp(-||x-z||^2 / (2 sigma^2))``;
    the paper's width is ``r = sigma^2``; ``None``: the median heuristic at fit time), for
    :class:`FredholmKernel`, :class:`FredholmRLSC`, :class:`FredholmSVM`.

    >>> fredholm_instance("FredGauss(N)", 2.0)
    {'outer': 'gaussian', 'inner': 'gaussian', 'normalized': True, 'outer_sigma': 2.0, 'inner_sigma': 2.0}
    """
    if name not in FREDHOLM_INSTANCES:
        raise ValueError(f"unknown Fredholm instance {name!r}; choose one of {list(FREDHOLM_INSTANCES)}")
    outer, inner, normalized = FREDHOLM_INSTANCES[name]
    return {"outer": outer, "inner": inner, "normalized": normalized,
            "outer_sigma": sigma if outer == "gaussian" else None,
            "inner_sigma": sigma if inner == "gaussian" else None}


def _as_points(X, name: str, dtype=None):
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        if X.nnz and not np.isfinite(X.data).all():
            raise ValueError(f"{name} contains NaN or infinite values")
        return X
    return as_features(X, dtype=dtype, name=name)


def _match(P, like, name: str):
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


def _dot(A, B, dtype=torch.float64) -> Tensor:
    if sp.issparse(A) or sp.issparse(B):
        M = A @ B.T
        return torch.from_numpy(np.asarray(M.todense() if sp.issparse(M) else M, dtype=np.float64)).to(dtype)
    return A @ B.T


def _sqnorms(A, dtype=torch.float64) -> Tensor:
    if sp.issparse(A):
        return torch.from_numpy(np.asarray(A.multiply(A).sum(1)).ravel()).to(dtype)
    return (A * A).sum(1)


def _check_against(U, **points) -> None:
    if _n(U) == 0:
        raise ValueError("U is empty: the Fredholm kernel needs at least one (unlabeled) point to integrate over")
    for name, P in points.items():
        if P.shape[1] != U.shape[1]:
            raise ValueError(f"dimension mismatch: {name} has {P.shape[1]} features, U has {U.shape[1]}")


def _dtype(P) -> torch.dtype:
    return torch.float64 if sp.issparse(P) else P.dtype


def kernel_from_sigma(kernel, sigma=None, role: str = "kernel", X=None, param: str | None = None,
                      **params) -> Kernel:
    """A :class:`~graphstk.operators.Kernel` from a name and its width ``sigma``: the one width rule of the
    kernel estimators (Fredholm, LapRLSC, KernelRidge, the KPCA family, CoupledKernelEmbedding).

    Parameters
    ----------
    kernel : str or Kernel
        ``"gaussian"`` / ``"rbf"``: ``exp(-||x - z||^2 / (2 sigma^2))`` (the Fredholm paper's width
        ``r`` of ``exp(-||x - z||^2 / (2 r))`` is ``sigma^2``); any other name of
        :func:`graphstk.operators.kernel_function` with a width takes ``sigma`` as its scale (e.g.
        ``"abel"``: ``exp(-||x - z|| / sigma)``). A :class:`~graphstk.operators.Kernel` is returned
        unchanged (``sigma`` and ``params`` must then be ``None``: ``TypeError``).
    sigma : float, optional
        ``None``: the median heuristic, the median pairwise distance of the rows of ``X`` (a seeded
        subsample of at most 2000; :func:`graphstk.operators.median_sigma`). Ignored for ``"linear"``;
        must be ``None`` for another kernel without a width (``"polynomial"``: ``ValueError``).
    role : str, default "kernel". The kernel's parameter name in error messages (``"outer"`` names ``outer_sigma``).
    X : points, optional
        The points the median heuristic runs over (required when ``sigma`` is ``None`` and the
        kernel has a width).
    param : str, optional. The width's parameter name in error messages (default ``sigma`` / ``<role>_sigma``).
    **params
        Other parameters of a kernel without a width (``degree``, ``c``).
    """
    param = param or ("sigma" if role == "kernel" else f"{role}_sigma")
    if isinstance(kernel, Kernel):
        return kernel_function(kernel, sigma=sigma, **params)   # TypeError when a parameter is given too
    base = kernel_function(str(kernel).lower(), **params)
    if base.name == "linear":
        return base  # a width is meaningless for x^T z and ignored
    if "sigma" not in base.params:
        if sigma is not None:
            raise ValueError(f"kernel {base.name!r} has no width; leave {param}=None")
        return base
    if sigma is None:
        if X is None:
            raise ValueError(f"{param}=None (the median heuristic) needs the points it runs over: pass X=, or a "
                             "width sigma=<float > 0>")
        sigma = median_sigma(X) if sp.issparse(X) else median_distance(X)
        if not sigma > 0:
            raise ValueError(f"the fit points have median pairwise distance 0: the default width (the median "
                             f"heuristic) is undefined; pass {param}= explicitly")
    return kernel_function(base.name, sigma=check_positive(param, sigma))


def _kblock(kernel: Kernel, A, B, log: bool = False) -> Tensor:
    """``k(A, B)`` dense (``log=True``: the log-kernel, Gaussian only)."""
    if not (sp.issparse(A) or sp.issparse(B)):
        if log:
            d = torch.addmm(_sqnorms(A).unsqueeze(1) + _sqnorms(B).unsqueeze(0), A, B.T, alpha=-2.0)
            return d.clamp_(min=0.0).mul_(-0.5 / kernel.sigma ** 2)
        return kernel.raw(A, B)
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


def _rows_per_block(n_cols: int, block_size: int | None, itemsize: int = 8, adapt: bool = True) -> int:
    """Rows of one ``[rows, n_cols]`` tile, fewer while memory is short unless ``adapt=False`` (sums over tiles)."""
    rows = int(block_size) if block_size else max(1, _BLOCK_ELEMS // max(1, n_cols))
    if not adapt:
        return rows
    return tile_rows(rows, 2.0 * n_cols * itemsize, what=f"one row of a Fredholm kernel tile ({n_cols} entries)",
                     hint="subsample the points")


def _kernel_matmul(kernel: Kernel, P, Q, B: Tensor, block_size: int | None = None) -> Tensor:
    """``k(P, Q) @ B`` in row blocks of ``P`` (linear: ``P (Q^T B)``)."""
    if kernel.name == "linear":
        QtB = torch.from_numpy(np.asarray(Q.T @ B.cpu().numpy())).to(B.dtype) if sp.issparse(Q) else Q.T @ B
        return torch.from_numpy(np.asarray(P @ QtB.numpy())).to(B.dtype) if sp.issparse(P) else P @ QtB
    bs = _rows_per_block(_n(Q), block_size)
    out = [_kblock(kernel, P[s:s + bs], Q) @ B for s in range(0, _n(P), bs)]
    return torch.cat(out) if out else B.new_zeros(0, B.shape[1])


class FredholmKernel(KernelOperator):
    """The Fredholm kernel block ``kF(X, Z)`` over the points ``U`` (Eq. 5; Eq. 6 when
    ``normalized``) as a lazy :class:`~graphstk.operators.KernelOperator`.

    Parameters
    ----------
    X : ``[a, d]`` row points (dense or scipy.sparse).
    Z : ``[b, d]`` column points, optional (``X`` when omitted).
    U : ``[n, d]`` the points the integral runs over (labeled + unlabeled), ``n >= 1``.
    outer, inner : ``"gaussian"`` | ``"linear"`` (or any name / :class:`~graphstk.operators.Kernel` of
        :func:`graphstk.operators.kernel_function`); defaults ``"gaussian"``.
    outer_sigma, inner_sigma : Gaussian width ``sigma > 0`` of ``exp(-||x-z||^2 / (2 sigma^2))`` (the
        paper's ``r = sigma^2``; for other kernels with a width: their ``sigma``); ignored for
        ``linear``; must be ``None`` with a Kernel; ``None``: the median heuristic over ``U``
        (:func:`graphstk.operators.median_sigma`).
    normalized : bool, default False. Eq. 6: outer weights divided by their row sum
        (a softmax for the Gaussian); the row sums must be positive.
    block_size : rows per temporary ``[rows, n]`` tile (default ``2**22 // n``).

    Products cost ``O((a + b + n) n d)`` and hold ``[block, n]`` tiles only; ``KH A_Z^T`` ``[n, b]`` is
    computed once and shared by the row blocks of :meth:`block`. ``T`` swaps rows and columns.
    """

    def __init__(self, X, Z=None, U=None, outer="gaussian", inner="gaussian", outer_sigma=None,
                 inner_sigma=None, normalized: bool = False, block_size: int | None = None):
        if U is None:
            raise ValueError("U (the labeled + unlabeled points the integral runs over) is required")
        Up = _as_points(U, "U")
        Xp = _match(X, Up, "X")
        Zp = Xp if Z is None else _match(Z, Up, "Z")
        _check_against(Up, X=Xp, Z=Zp)
        self.X, self.Z, self.U = Xp, Zp, Up
        self.outer = kernel_from_sigma(outer, outer_sigma, "outer", Up)
        self.inner = kernel_from_sigma(inner, inner_sigma, "inner", Up)
        self.normalized = bool(normalized)
        self.block_size = None if block_size is None else check_positive_int("block_size", block_size)
        self._right = None  # cached KH A_Z^T [n, b]

    @classmethod
    def _like(cls, other: "FredholmKernel", X, Z, right=None) -> "FredholmKernel":
        op = cls.__new__(cls)
        op.__dict__.update(other.__dict__)
        op.X, op.Z, op._right = X, Z, right
        return op

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
        bs = _rows_per_block(_n(self.U), self.block_size)
        out = [self.weights(P[s:s + bs]) @ B for s in range(0, _n(P), bs)]
        return torch.cat(out) if out else B.new_zeros(0, B.shape[1])

    def _weights_t_matmul(self, P, V: Tensor) -> Tensor:
        bs = _rows_per_block(_n(self.U), self.block_size, adapt=False)
        out = V.new_zeros(_n(self.U), V.shape[1])
        for s in range(0, _n(P), bs):
            e = min(_n(P), s + bs)
            out += self.weights(P[s:e]).T @ V[s:e]
        return out

    def inner_matmul(self, B: Tensor) -> Tensor:
        """``KH @ B`` for ``B`` ``[n, C]``: row blocks of ``kH(U, U)``, or ``U (U^T B)`` if linear."""
        return _kernel_matmul(self.inner, self.U, self.U, B, self.block_size)

    def right_factor(self) -> Tensor:
        """``KH A_Z^T`` ``[n, b]`` (cached): ``kF(x, Z) = a(x)^T KH A_Z^T``."""
        if self._right is None:
            bs = _rows_per_block(_n(self.U), self.block_size)
            AZt = torch.cat([self.weights(self.Z[s:s + bs]).T
                             for s in range(0, _n(self.Z), bs)], dim=1) if _n(self.Z) else \
                torch.zeros(_n(self.U), 0, dtype=self.dtype, device=self.device)
            self._right = self.inner_matmul(AZt.contiguous())
        return self._right

    def cross(self, P) -> Tensor:
        """``kF(P, Z)`` ``[|P|, b]`` for new row points ``P`` (e.g. validation/test points),
        sharing the cached right factor: ``A_P (KH A_Z^T)`` in row blocks of ``P``."""
        return self._weights_matmul(_match(P, self.U, "P"), self.right_factor())

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
            AX = self.weights(self.X[s:e])
            AZ = AX if self.Z is self.X else self.weights(self.Z[s:e])
            out.append((AX * self.inner_matmul(AZ.T.contiguous()).T).sum(1))
        return torch.cat(out) if out else torch.zeros(0, dtype=self.dtype, device=self.device)

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


def fredholm_gram(X, Z, U, outer="gaussian", inner="gaussian", outer_sigma=None, inner_sigma=None,
                  normalized: bool = False) -> Tensor:
    """The dense block ``kF(X, Z)`` ``[|X|, |Z|]`` over the points ``U`` (Eq. 5; Eq. 6 when ``normalized``):
    ``FredholmKernel(X, Z, U, ...).to_dense()`` (``Z=None``: ``X``). ``outer``, ``inner``: the two kernels;
    ``outer_sigma``, ``inner_sigma``: their widths (``None``: the median heuristic over ``U``)."""
    return FredholmKernel(X, Z, U, outer=outer, inner=inner, outer_sigma=outer_sigma,
                          inner_sigma=inner_sigma, normalized=normalized).to_dense()


def gaussian_fredholm_path(XL, XE, U, sigmas, normalized=(False, True),
                           block_size: int | None = None) -> dict:
    """The blocks ``(K_F[L, L], K_F[E, L])`` of the FredGauss family (outer and inner Gaussian
    ``exp(-||x - z||^2 / (2 sigma^2))`` of one width ``sigma``, Eq. 5 and/or Eq. 6) for every
    ``sigma`` in ``sigmas`` and every flag in ``normalized``, from two passes over the dense points
    ``U`` (the squared distances shared by all widths; never an ``n x n`` matrix, ``docs/methods.md``).
    ``XL`` are the labeled points, ``XE`` the points to evaluate; ``block_size``: rows per tile.

    Returns ``{(sigma, normalized): (K_LL [l, l], K_EL [|XE|, l])}``.
    """
    U = as_features(U, name="U")
    XL = as_features(XL, dtype=U.dtype, name="XL")
    XE = as_features(XE, dtype=U.dtype, name="XE")
    _check_against(U, XL=XL, XE=XE)
    sigmas = [check_positive("sigma", v) for v in sigmas]
    flags = [bool(v) for v in normalized]
    n = U.shape[0]
    sqU = _sqnorms(U)

    def sqdist(P):
        return torch.addmm(_sqnorms(P).unsqueeze(1) + sqU.unsqueeze(0), P, U.T, alpha=-2.0).clamp_(min=0.0)

    def weights(D, sig, norm):
        logk = D * (-0.5 / sig ** 2)
        return (torch.softmax(logk, dim=1) if norm else logk.exp_()).div_(n)

    DL = sqdist(XL)
    AL = {(sig, v): weights(DL, sig, v) for sig in sigmas for v in flags}
    del DL
    R = {key: U.new_zeros(n, XL.shape[0]) for key in AL}
    bs = _rows_per_block(n, block_size)
    for s in range(0, n, bs):
        D = sqdist(U[s:s + bs])
        for sig in sigmas:
            K = (D * (-0.5 / sig ** 2)).exp_()
            for v in flags:
                R[(sig, v)][s:s + bs] = K @ AL[(sig, v)].T
    out = {key: (AL[key] @ R[key], U.new_zeros(XE.shape[0], XL.shape[0])) for key in AL}
    for s in range(0, XE.shape[0], bs):
        D = sqdist(XE[s:s + bs])
        for sig in sigmas:
            for v in flags:
                out[(sig, v)][1][s:s + bs] = weights(D, sig, v) @ R[(sig, v)]
    return out

