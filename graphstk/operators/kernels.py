"""Kernel functions on ``R^d``: the registry, the input check, and pairwise distances.

The kernel conventions (``gaussian``, ``laplacian`` (l1), ``abel`` (l2), ``cauchy``, ``linear``,
``polynomial``) are tabled in docs/toolbox.md; a dense evaluation is checked against the memory
ceiling before it is allocated (docs/operators.md).
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import torch
from torch import Tensor

from .._checks import check_positive
from ..memory import check_allocation, format_bytes

__all__ = [
    "KERNELS", "KERNEL_NAMES", "SHIFT_INVARIANT", "Kernel", "kernel_function", "as_features", "check_positive",
    "pairwise_distances", "check_dense", "as_feature_pair", "BLOCK_ELEMS",
]

#: Elements of one temporary block (e.g. rows x cols of a kernel block) that the blocked evaluations
#: (feature kernels, distances, kNN, the MMD permutations) hold at a time: 4M entries = 32 MB in float64.
BLOCK_ELEMS = 1 << 22

_BLOCKED_HINT = ("evaluate it in row blocks with graphstk.operators.FeatureKernelOperator(X, Y, kernel=...) "
                 "(products `op @ v` hold block_size x n entries at a time), or subsample the points")


def check_dense(rows: int, cols: int, dtype: torch.dtype, device, what: str, hint: str = _BLOCKED_HINT,
                copies: int = 1) -> None:
    """Refuse a dense ``[rows, cols]`` allocation of ``dtype`` (``copies`` buffers of that size) that
    does not fit (:func:`graphstk.memory.check_allocation`), naming ``what`` and the ``hint``."""
    itemsize = torch.empty((), dtype=dtype).element_size()
    extra = "" if copies == 1 else f" (and {copies - 1} temporar{'y' if copies == 2 else 'ies'} of its size)"
    check_allocation(float(rows) * float(cols) * itemsize * copies,
                     f"{what}, {rows} x {cols} {str(dtype).replace('torch.', '')}{extra},", hint, device)


def as_features(X, dtype: torch.dtype | None = None, device=None, name: str = "X") -> Tensor:
    """Convert ``X`` (tensor, numpy array, list) to a finite 2-D floating tensor ``[n, d]``.

    Integer/boolean inputs become ``torch.get_default_dtype()``; floating inputs keep their
    dtype unless ``dtype`` is given.

    Parameters
    ----------
    X : Tensor, numpy array or nested list ``[n, d]``
    dtype : torch.dtype, optional
    device : torch.device, optional
    name : str, default "X"
        The argument's name in error messages.

    Raises
    ------
    TypeError
        Sparse input (scipy or torch: the message says to densify and how large that is),
        complex input, non-numeric input.
    ValueError
        A wrong rank, or NaN / infinite values.
    """
    if isinstance(X, Tensor):
        t = X
        if t.layout != torch.strided:
            raise TypeError(f"{name} is a sparse {t.layout} tensor; the feature kernels need dense features: "
                            f"pass {name}.to_dense()" + _dense_size(t.shape, t.dtype))
    else:
        if _is_scipy_sparse(X):
            raise TypeError(f"{name} is a scipy.sparse {type(X).__name__}; the feature kernels need dense "
                            f"features: pass {name}.toarray()" + _dense_size(X.shape, X.dtype)
                            + ", or reduce the dimension first (e.g. sklearn.decomposition.TruncatedSVD)")
        try:
            t = torch.as_tensor(np.asarray(X))
        except Exception as exc:  # pragma: no cover - exotic inputs
            raise TypeError(f"{name} must be a 2-D tensor or array [n_samples, n_features], got "
                            f"{type(X).__name__}") from exc
    if t.is_complex():
        raise TypeError(f"{name} is complex ({t.dtype}); the kernels are defined on real features: pass "
                        f"{name}.real (or stack real and imaginary parts as features) explicitly")
    if t.dim() != 2:
        raise ValueError(
            f"{name} must be 2-D [n_samples, n_features], got shape {tuple(t.shape)}"
            + (" (use X.reshape(-1, 1) for 1-D data)" if t.dim() == 1 else "")
        )
    if dtype is None and not (t.is_floating_point()):
        dtype = torch.get_default_dtype()
    t = t.to(device=device, dtype=dtype)
    if not t.is_floating_point():
        raise TypeError(f"{name} must be floating point, got {t.dtype}")
    if t.numel() and not bool(torch.isfinite(t).all()):
        bad = (~torch.isfinite(t)).any(dim=1).nonzero().flatten()
        raise ValueError(f"{name} contains NaN or infinite values in {bad.numel()} of {t.shape[0]} rows (first "
                         f"rows {bad[:5].tolist()}): remove those rows or impute the values (e.g. "
                         "sklearn.impute.SimpleImputer) before computing a kernel")
    return t


def _is_scipy_sparse(X) -> bool:
    return type(X).__module__.startswith("scipy.sparse")


def _dense_size(shape, dtype) -> str:
    try:
        n = float(np.prod(shape)) * np.dtype(dtype if not isinstance(dtype, torch.dtype)
                                             else str(dtype).replace("torch.", "")).itemsize
    except TypeError:   # pragma: no cover - exotic dtype
        return ""
    return f" (dense: {format_bytes(n)})"


def as_feature_pair(X, Y=None, dtype=None, device=None) -> tuple[Tensor, Tensor]:
    """``(X, Y)`` checked by :func:`as_features` (``Y = X`` when ``None``), with one dtype (promoted) and
    the same number of features; a ``ValueError`` when they differ in width or device."""
    X = as_features(X, dtype, device, "X")
    Y = X if Y is None else as_features(Y, dtype, device, "Y")
    if X.shape[1] != Y.shape[1]:
        raise ValueError(f"dimension mismatch: X has {X.shape[1]} features, Y has {Y.shape[1]}")
    if X.dtype != Y.dtype:
        common = torch.promote_types(X.dtype, Y.dtype)
        X, Y = X.to(common), Y.to(common)
    if X.device != Y.device:
        raise ValueError(f"X is on {X.device} but Y is on {Y.device}")
    return X, Y


def _sqdist(X: Tensor, Y: Tensor) -> Tensor:
    """Squared Euclidean distances via ``|x|^2 + |y|^2 - 2 x.y`` (fast; clamped at 0)."""
    d = (X * X).sum(1, keepdim=True) + (Y * Y).sum(1).unsqueeze(0) - 2.0 * (X @ Y.T)
    return d.clamp_min_(0.0)


def _l2dist(X: Tensor, Y: Tensor) -> Tensor:
    """Euclidean distances computed from differences (exact ``0`` for identical points)."""
    return torch.cdist(X, Y, p=2.0, compute_mode="donot_use_mm_for_euclid_dist")


def _l1dist(X: Tensor, Y: Tensor) -> Tensor:
    return torch.cdist(X, Y, p=1.0)


def pairwise_distances(X, Y=None, metric: str = "euclidean") -> Tensor:
    """Dense distance matrix ``[a, b]`` for ``metric`` in euclidean | manhattan (l1, cityblock) |
    cosine (``1 - cos``; a zero vector has cosine similarity 0 with everything).

    Parameters
    ----------
    X : Tensor or array ``[a, d]``
    Y : Tensor or array ``[b, d]``, optional (``X`` when omitted)
    metric : str, default "euclidean"

    Raises :class:`~graphstk.exceptions.MemoryLimitError` before allocating when ``[a, b]`` does not fit.
    """
    X, Y = as_feature_pair(X, Y)
    fn = _distance_fn(metric)
    check_dense(X.shape[0], Y.shape[0], X.dtype, X.device, "the distance matrix",
                "use graphstk.operators.knn_graph for nearest neighbours (row blocks), or subsample", copies=2)
    return fn(X, Y)


def _cosine_dist(X: Tensor, Y: Tensor) -> Tensor:
    nx = X.norm(dim=1, keepdim=True)
    ny = Y.norm(dim=1, keepdim=True)
    Xn = torch.where(nx > 0, X / nx.clamp_min(torch.finfo(X.dtype).tiny), torch.zeros_like(X))
    Yn = torch.where(ny > 0, Y / ny.clamp_min(torch.finfo(Y.dtype).tiny), torch.zeros_like(Y))
    return (1.0 - Xn @ Yn.T).clamp_min_(0.0)


def _distance_fn(metric: str) -> Callable[[Tensor, Tensor], Tensor]:
    m = str(metric).lower()
    if m in ("euclidean", "l2"):
        return _l2dist
    if m in ("manhattan", "l1", "cityblock"):
        return _l1dist
    if m == "cosine":
        return _cosine_dist
    raise ValueError(f"unknown metric {metric!r}; choose euclidean, manhattan or cosine")


def _gaussian(X, Y, sigma):
    if X.requires_grad or Y.requires_grad:
        return torch.exp(_sqdist(X, Y) * (-0.5 / sigma**2))
    # no autograd: fused, in-place (one [a, b] buffer instead of five)
    d = torch.addmm((X * X).sum(1, keepdim=True) + (Y * Y).sum(1).unsqueeze(0), X, Y.T, alpha=-2.0)
    return d.clamp_(min=0.0).mul_(-0.5 / sigma**2).exp_()


def _gaussian_p(X, Y, sigma):
    return torch.exp(((X - Y) ** 2).sum(1) * (-0.5 / sigma**2))


def _laplacian(X, Y, sigma):
    return torch.exp(_l1dist(X, Y) * (-1.0 / sigma))


def _laplacian_p(X, Y, sigma):
    return torch.exp((X - Y).abs().sum(1) * (-1.0 / sigma))


def _abel(X, Y, sigma):
    return torch.exp(_l2dist(X, Y) * (-1.0 / sigma))


def _abel_p(X, Y, sigma):
    return torch.exp((X - Y).norm(dim=1) * (-1.0 / sigma))


def _cauchy(X, Y, sigma):
    a, b, d = X.shape[0], Y.shape[0], X.shape[1]
    out = torch.ones(a, b, dtype=X.dtype, device=X.device)
    step = max(1, BLOCK_ELEMS // max(1, a * b))
    inv = 1.0 / sigma**2
    for s in range(0, d, step):
        diff = X[:, None, s:s + step] - Y[None, :, s:s + step]
        out = out * (1.0 / (1.0 + diff.square() * inv)).prod(-1)
    return out


def _cauchy_p(X, Y, sigma):
    return (1.0 / (1.0 + (X - Y).square() / sigma**2)).prod(1)


def _linear(X, Y):
    return X @ Y.T


def _linear_p(X, Y):
    return (X * Y).sum(1)


def _poly(X, Y, degree, c):
    return (X @ Y.T + c) ** degree


def _poly_p(X, Y, degree, c):
    return ((X * Y).sum(1) + c) ** degree


# name -> (matrix fn, paired fn, parameter defaults, formula)
KERNELS: dict[str, tuple[Callable, Callable, dict, str]] = {
    "gaussian": (_gaussian, _gaussian_p, {"sigma": 1.0}, "exp(-||x-y||_2^2 / (2 sigma^2))"),
    "laplacian": (_laplacian, _laplacian_p, {"sigma": 1.0}, "exp(-||x-y||_1 / sigma)"),
    "abel": (_abel, _abel_p, {"sigma": 1.0}, "exp(-||x-y||_2 / sigma)"),
    "cauchy": (_cauchy, _cauchy_p, {"sigma": 1.0}, "prod_m 1/(1 + (x_m-y_m)^2/sigma^2)"),
    "linear": (_linear, _linear_p, {}, "x^T y"),
    "polynomial": (_poly, _poly_p, {"degree": 2, "c": 1.0}, "(x^T y + c)^degree"),
}
# dense [a, b] buffers alive at the peak of each matrix evaluation (without autograd)
_TEMPORARIES = {"gaussian": 1, "linear": 1, "laplacian": 2, "abel": 2, "polynomial": 2, "cauchy": 3}
_ALIASES = {"rbf": "gaussian", "l1": "laplacian", "poly": "polynomial", "exponential": "abel"}
#: every name :func:`kernel_function` accepts, aliases included
KERNEL_NAMES = tuple(KERNELS) + tuple(_ALIASES)
#: kernels of the form k(x - y) with a bandwidth ``sigma``
SHIFT_INVARIANT = ("gaussian", "laplacian", "abel", "cauchy")


class Kernel:
    """A kernel function with fixed parameters; ``k(X [a,d], Y [b,d]) -> [a,b]``.

    Build it with :func:`kernel_function`. Besides the matrix call it offers
    ``paired(X, Y)`` (``k(x_i, y_i)`` for ``i < n``, shape ``[n]``) and ``diag(X)``
    (``k(x_i, x_i)``), both exact and ``O(n d)``. Every kernel here is symmetric.

    Parameters
    ----------
    name : str
        The kernel's name (``"gaussian"``, ``"laplacian"``, ...; see :func:`kernel_function`).
    **params
        Its parameters (``sigma``, ``degree``, ``c``).
    """

    def __init__(self, name: str, **params):
        key = _ALIASES.get(str(name).lower(), str(name).lower())
        if key not in KERNELS:
            raise ValueError(
                f"unknown kernel {name!r}; choose one of {sorted(KERNELS) + sorted(_ALIASES)}"
            )
        fn, pfn, defaults, formula = KERNELS[key]
        unknown = set(params) - set(defaults)
        if unknown:
            allowed = ", ".join(sorted(defaults)) or "no parameters"
            raise TypeError(f"kernel {key!r} got unexpected parameter(s) {sorted(unknown)} (takes {allowed})")
        p = {k: (params[k] if params.get(k) is not None else v) for k, v in defaults.items()}
        if "sigma" in p:
            p["sigma"] = check_positive("sigma", p["sigma"])
        if key == "polynomial":
            deg = p["degree"]
            if int(deg) != deg or int(deg) < 1:
                raise ValueError(f"polynomial degree must be an integer >= 1, got {deg!r}")
            p["degree"] = int(deg)
            p["c"] = float(p["c"])
            if p["c"] < 0:
                raise ValueError(f"polynomial offset c must be >= 0 (positive definite kernel), got {p['c']}")
        self.name, self.params, self.formula = key, p, formula
        self._fn, self._pfn = fn, pfn

    @property
    def sigma(self) -> float | None:
        """The kernel width ``sigma`` (None for a kernel without one, e.g. ``"linear"``)."""
        return self.params.get("sigma")

    @property
    def shift_invariant(self) -> bool:
        """Whether ``k(x, y)`` depends on ``x - y`` only (Gaussian, Laplacian, Cauchy ...)."""
        return self.name in SHIFT_INVARIANT

    def __call__(self, X, Y=None) -> Tensor:
        X, Y = as_feature_pair(X, Y)
        self.check_dense(X, Y, "the kernel matrix")
        return self._fn(X, Y, **self.params)

    def check_dense(self, X: Tensor, Y: Tensor, what: str = "the kernel matrix", hint: str = _BLOCKED_HINT) -> None:
        """Refuse (:class:`~graphstk.exceptions.MemoryLimitError`) a dense ``k(X, Y)`` that does not fit,
        counting the temporaries this kernel's evaluation holds at its peak."""
        grad = X.requires_grad or Y.requires_grad
        copies = _TEMPORARIES.get(self.name, 2) + (2 if grad else 0)
        check_dense(X.shape[0], Y.shape[0], X.dtype, X.device, what, hint, copies=copies)

    def paired(self, X, Y) -> Tensor:
        """``k(X_i, Y_i)`` for each row ``i``: a ``[n]`` tensor (``X``, ``Y``: ``[n, d]``)."""
        X, Y = as_feature_pair(X, Y)
        if X.shape[0] != Y.shape[0]:
            raise ValueError(f"paired evaluation needs equal lengths, got {X.shape[0]} and {Y.shape[0]}")
        return self._pfn(X, Y, **self.params)

    def diag(self, X) -> Tensor:
        """``k(X_i, X_i)`` for each row of ``X [n, d]``: the diagonal of the Gram matrix, ``[n]``."""
        X = as_features(X)
        return self._pfn(X, X, **self.params)

    def raw(self, X: Tensor, Y: Tensor) -> Tensor:
        """``k(X, Y)`` ``[a, b]`` of checked tensors (``as_feature_pair``), without the checks and the
        memory guard of ``__call__`` (for blocked evaluations that did both once)."""
        return self._fn(X, Y, **self.params)

    def raw_paired(self, X: Tensor, Y: Tensor) -> Tensor:
        """``k(x_i, y_i)`` ``[a]`` of row pairs of checked tensors, without checks (see :meth:`raw`)."""
        return self._pfn(X, Y, **self.params)

    def __eq__(self, other) -> bool:
        return isinstance(other, Kernel) and other.name == self.name and other.params == self.params

    def __hash__(self) -> int:
        return hash((self.name, tuple(sorted(self.params.items()))))

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"Kernel({self.name!r}{', ' if args else ''}{args})"


def kernel_function(name: str | Kernel = "gaussian", **params) -> Kernel:
    """Registry look-up: a :class:`Kernel` (callable ``(X [a,d], Y [b,d]) -> [a,b]``).

    ``name`` is one of ``gaussian`` (alias ``rbf``), ``laplacian`` (l1 form, alias ``l1``),
    ``abel`` (alias ``exponential``), ``cauchy``, ``linear``, ``polynomial`` (alias ``poly``);
    see the module docstring for the formulas. Parameters: ``sigma`` (bandwidth kernels,
    default 1.0), ``degree`` and ``c`` (polynomial, defaults 2 and 1.0). A parameter a
    kernel does not take (e.g. ``sigma`` for ``linear``) is an error; ``None`` means "default".
    Passing a :class:`Kernel` returns it unchanged (no extra parameters allowed).
    """
    if isinstance(name, Kernel):
        if any(v is not None for v in params.values()):
            raise TypeError("pass either a Kernel instance or a kernel name with parameters, not both")
        return name
    return Kernel(name, **{k: v for k, v in params.items() if v is not None})
