"""The kernel basis of semi-supervised KPCA: one eigendecomposition of the fit kernel
(``K = U diag(lam) U^T``, ``Phi = U_r diag(lam_r)^{1/2}``), run on the host and reused across fits on the
same points through :data:`BASIS_CACHE` (``docs/methods.md``)."""
from __future__ import annotations

from collections import Counter, OrderedDict
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse.linalg
import torch
from torch import Tensor

from ..._hashing import content_hash
from ..._arrays import check_positive_int
from ...memory import check_allocation, memory_limit
from ...operators.bandwidth import median_width
from ...operators.base import KernelOperator, SparseOperator, SpectralKernelOperator
from ...spectral.eigen import top_eigenpairs

__all__ = ["DECOMPOSITIONS", "BASIS_CACHE", "KernelBasis", "kernel_basis", "basis_from_eigenpairs", "BasisCache",
           "array_key", "median_pairwise_distance"]

#: Counts of the decompositions done: ``"kernel"`` (of ``K``, dense or Lanczos), ``"pencil"`` (``P v = nu C v``).
DECOMPOSITIONS: Counter = Counter()


@dataclass
class KernelBasis:
    """``K ~ U diag(lam) U^T`` and the derived ``Phi = U diag(lam)^{1/2}``, ``P = Phi^T H Phi``.

    Attributes: ``U [m, r]``, ``lam [r]`` (positive, descending), ``centered``, ``Phi [m, r]``,
    ``P [r, r]`` (``Phi^T (I - E_m) Phi`` centred, ``diag(lam)`` uncentred), ``m``, ``r``
    (NumPy float64, on the host).
    """

    U: np.ndarray
    lam: np.ndarray
    centered: bool = True
    Phi: np.ndarray = field(init=False, repr=False)
    P: np.ndarray = field(init=False, repr=False)

    def __post_init__(self):
        self.Phi = self.U * np.sqrt(self.lam)
        if self.centered:
            s = self.Phi.sum(0)
            P = self.Phi.T @ self.Phi - np.outer(s, s) / self.m
            self.P = (P + P.T) / 2
        else:
            self.P = np.diag(self.lam)

    m = property(lambda self: int(self.U.shape[0]))
    r = property(lambda self: int(self.U.shape[1]))

    @property
    def nbytes(self) -> int:
        return int(self.U.nbytes + self.Phi.nbytes + self.P.nbytes)

    def coef(self, beta: np.ndarray) -> np.ndarray:
        """Representer coefficients ``alpha = U diag(lam)^{-1/2} beta`` (``[m]`` or ``[m, k]``)."""
        scale = 1.0 / np.sqrt(self.lam)
        return self.U @ (beta * (scale if beta.ndim == 1 else scale[:, None]))

    def values(self, beta: np.ndarray) -> np.ndarray:
        """``f = K alpha = Phi beta`` on the fit points."""
        return self.Phi @ beta

    def variance(self, beta: np.ndarray) -> np.ndarray:
        """``VAR[f] = beta^T P beta`` (per column)."""
        return np.einsum("i...,ij,j...->...", beta, self.P, beta)


class BasisCache:
    """A least-recently-used store of decompositions bounded by bytes: ``get(key, make)`` returns the stored
    value of ``key`` or stores ``make()``; ``clear()`` empties it."""

    def __init__(self, max_bytes: float = 900e6):
        self.max_bytes, self.data, self.bytes = float(max_bytes), OrderedDict(), 0

    @staticmethod
    def _size(v) -> int:
        if isinstance(v, np.ndarray):
            return int(v.nbytes)
        if isinstance(v, Tensor):
            return int(v.numel() * v.element_size())
        if isinstance(v, (tuple, list)):
            return sum(BasisCache._size(x) for x in v)
        if isinstance(v, KernelBasis):
            return v.nbytes
        return 64

    def get(self, key, make):
        if key is None:
            return make()
        if key in self.data:
            self.data.move_to_end(key)
            return self.data[key][0]
        v = make()
        n = self._size(v)
        self.data[key] = (v, n)
        self.bytes += n
        while self.bytes > self.max_bytes and len(self.data) > 1:
            _, (_, n0) = self.data.popitem(last=False)
            self.bytes -= n0
        return v

    def clear(self) -> None:
        self.data.clear()
        self.bytes = 0


#: The decompositions the estimators reuse across fits on the same fit points.
BASIS_CACHE = BasisCache()


def array_key(X) -> tuple:
    """A content key of an array or tensor (shape, dtype and a SHA-256 of the content) for :data:`BASIS_CACHE`."""
    a = X.detach().cpu().numpy() if isinstance(X, Tensor) else np.asarray(X)
    return (a.shape, str(a.dtype), content_hash(a))


def _as_numpy_square(K) -> np.ndarray:
    if isinstance(K, KernelOperator):
        K = K.to_dense()
    if isinstance(K, Tensor):
        K = K.detach().to(torch.float64).cpu().numpy()
    K = np.asarray(K, dtype=np.float64)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"the kernel matrix must be square [m, m], got shape {K.shape}")
    if not np.isfinite(K).all():
        raise ValueError("the kernel matrix contains NaN or infinite values")
    return K


def _check_psd(lam: np.ndarray, psd_tol: float, what: str = "kernel matrix") -> None:
    top = float(np.abs(lam).max()) if lam.size else 0.0
    if top == 0.0:
        raise ValueError(f"the {what} is zero: semi-supervised KPCA needs a non-zero kernel")
    low = float(lam.min())
    if low < -psd_tol * top:
        raise ValueError(
            f"the {what} is not positive semi-definite: smallest eigenvalue {low:.3g} (largest {top:.3g}); "
            "use a PSD kernel (Gaussian, diffusion exp(-tau L), a non-negative mixture of them) or a spectral "
            "transform with non-negative values")


def basis_from_eigenpairs(lam, U, rank: int | None = None, centered: bool = True, tol: float = 1e-10) -> KernelBasis:
    """A :class:`KernelBasis` from eigenpairs ``(lam [r], U [m, r])`` of the fit kernel: sorted by decreasing
    ``lam``, those below ``tol * lam_max`` dropped, the top ``rank`` kept when given (``centered``: the VAR)."""
    lam = lam.detach().cpu().numpy() if isinstance(lam, Tensor) else np.asarray(lam, dtype=np.float64)
    U = U.detach().cpu().numpy() if isinstance(U, Tensor) else np.asarray(U, dtype=np.float64)
    order = np.argsort(-lam, kind="stable")
    lam, U = lam[order].astype(np.float64), U[:, order].astype(np.float64)
    keep = lam > tol * lam[0]
    if rank is not None:
        keep &= np.arange(lam.size) < int(rank)
    return KernelBasis(np.ascontiguousarray(U[:, keep]), lam[keep].copy(), centered=centered)


def kernel_basis(K, rank: int | None = None, centered: bool = True, tol: float = 1e-10,
                 psd_tol: float = 1e-8, dense_max: int = 6000, seed: int = 0) -> KernelBasis:
    """Eigendecompose the fit-point kernel ``K`` (``[m, m]``) once: a :class:`KernelBasis`.

    Parameters
    ----------
    K : KernelOperator, Tensor or ndarray ``[m, m]``
        Symmetric PSD. A :class:`~graphstk.operators.SpectralKernelOperator` hands over its eigenpairs.
        Up to ``dense_max`` points: dense ``eigh`` on the host; larger operators need ``rank`` (Lanczos:
        ARPACK, or :func:`graphstk.spectral.top_eigenpairs` for a sparse operator).
    rank : int, optional. Keep the top ``rank`` eigenpairs (``None``: all above ``tol * lam_max``).
    centered : bool, default True. Centred ``VAR`` (``P = K K - K E_m K``) or uncentred (``P = K K``), Sec. 2.
    tol : float, default 1e-10. Relative cut-off for the numerical rank.
    psd_tol : float, default 1e-8. A negative eigenvalue below ``-psd_tol * lam_max`` is an error (kernel not PSD).
    dense_max : int, default 6000. The largest ``m`` decomposed densely.
    seed : int, default 0. Seeds the Lanczos start vector.

    Raises
    ------
    MemoryLimitError
        The dense ``m x m`` decomposition does not fit in memory (pass ``rank=``).
    """
    rank = None if rank is None else check_positive_int("rank", rank)
    if isinstance(K, SpectralKernelOperator):
        lam, U = K.values.detach().cpu().numpy(), K.U.detach().cpu().numpy()
        _check_psd(lam, psd_tol)
        return basis_from_eigenpairs(lam, U, rank, centered, tol)
    m = int(K.shape[0])
    # with rank= given, a dense decomposition that does not fit the process gives way to Lanczos
    if m <= dense_max and (rank is None or 3.0 * m * m * 8 <= memory_limit()[0]):
        check_allocation(3.0 * m * m * 8, f"the dense eigendecomposition of the {m} x {m} kernel matrix",
                         "pass rank=r (e.g. rank=500) to keep the top-r eigenpairs by Lanczos")
        A = _as_numpy_square(K)
        asym = np.abs(A - A.T).max()
        if asym > 1e-8 * max(1.0, np.abs(A).max()):
            raise ValueError(f"the kernel matrix is not symmetric (max |K - K^T| = {asym:.3g})")
        lam, U = np.linalg.eigh((A + A.T) / 2)
        DECOMPOSITIONS["kernel"] += 1
        _check_psd(lam, psd_tol)
        return basis_from_eigenpairs(lam, U, rank, centered, tol)
    if rank is None:
        raise ValueError(f"a dense eigendecomposition of a {m} x {m} kernel is too large; pass rank=r "
                         "to keep the top-r eigenpairs (Lanczos)")
    check_allocation(4.0 * m * int(rank) * 8, f"the top-{rank} eigenvectors of the {m} x {m} kernel",
                     "pass a smaller rank=")
    if isinstance(K, SparseOperator):
        v, W = top_eigenpairs(K.to("cpu"), int(rank), seed=seed)
        lam, U = v.numpy(), W.numpy()
    else:
        if isinstance(K, KernelOperator):
            op = K.to("cpu", torch.float64)
            mat = lambda x: (op @ torch.as_tensor(x)).numpy()  # noqa: E731
        else:
            A = K.detach().cpu().to(torch.float64).numpy() if isinstance(K, Tensor) else np.asarray(K)
            mat = lambda x: A @ x  # noqa: E731
        lin = scipy.sparse.linalg.LinearOperator((m, m), matvec=mat, matmat=mat, dtype=np.float64)
        v0 = np.random.default_rng(seed).standard_normal(m)
        lam, U = scipy.sparse.linalg.eigsh(lin, k=int(rank), which="LA", v0=v0)
    DECOMPOSITIONS["kernel"] += 1
    if lam.max() <= 0:
        raise ValueError("the top eigenvalues of the kernel are not positive: not a PSD kernel")
    return basis_from_eigenpairs(lam, U, rank, centered, tol)


def median_pairwise_distance(X) -> float:
    """The exact median Euclidean distance over the pairs ``i < j`` of the rows of ``X`` (every row, float64,
    host; the width unit of the KPCA experiments), cached by content."""
    A = X.detach().cpu().double() if isinstance(X, Tensor) else torch.as_tensor(np.asarray(X, dtype=np.float64))
    med = float(BASIS_CACHE.get(("median", array_key(A)),
                                lambda: np.array(median_width(A, max_samples=None, allow_zero=True))))
    if not med > 0:
        raise ValueError("the fit points have median pairwise distance 0: the Gaussian width "
                         "(sigma x median distance) is undefined")
    return med
