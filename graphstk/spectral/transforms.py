"""Spectral transforms ``s(lambda)`` of STKR (Zhai et al., ICLR 2024): :class:`Polynomial` (Algorithm 1),
:class:`ReciprocalPolynomial` and :class:`InverseLaplacian` (Algorithm 2, Eq. 20; Example 1), :class:`TopD`
(Eqs. 8-9) and Label-Prop's :class:`LabelPropagationFilter` (Eq. 22).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, ClassVar, Sequence

import torch
from torch import Tensor

from ..operators.base import horner

__all__ = ["horner", "Transform", "Polynomial", "ReciprocalPolynomial", "InverseLaplacian", "TopD",
           "LabelPropagationFilter", "SPECTRUM_POINTS", "spectrum_points"]

#: points of the grid on which a transform's extremes over the spectrum are taken (steps, bounds, checks)
SPECTRUM_POINTS = 2049


def spectrum_points(lo: float, hi: float, dtype: torch.dtype = torch.float64, device=None) -> Tensor:
    """``SPECTRUM_POINTS`` evenly spaced points of ``[lo, hi]``, both ends included: a 1-D tensor of the
    given ``dtype`` (default float64) on ``device`` (default the CPU)."""
    return torch.linspace(lo, hi, SPECTRUM_POINTS, dtype=dtype, device=device)


class Transform:
    """Base class: a spectral transform ``s`` evaluated on eigenvalues.

    Class attributes: ``family``, the class whose engine (``graphstk.methods.engine.solve``) solves it
    (``None``: none; ``class X(Transform, engine_family=True)`` starts a family); ``ridge``, whether it takes
    ridges ``beta`` (Eq. 7); ``grid_key``, the grid parameter :meth:`from_grid` builds it from, or ``None``.
    """

    family: ClassVar[type | None] = None
    ridge: ClassVar[bool] = True
    grid_key: ClassVar[str | None] = None

    def __init_subclass__(cls, engine_family: bool = False, **kwargs):
        super().__init_subclass__(**kwargs)
        if engine_family:
            cls.family = cls

    @classmethod
    def from_grid(cls, value, **options) -> "Transform":
        """The transform of the grid value ``value`` of ``grid_key``: ``cls(value)`` unless the class says
        otherwise (``options``: fixed keys, e.g. TopD's ``support``)."""
        if cls.grid_key is None:
            raise TypeError(f"{cls.__name__} is not built from one grid value")
        return cls(value)

    def __call__(self, lam):  # pragma: no cover - abstract
        raise NotImplementedError

    def value_range(self, lo: float, hi: float) -> tuple[float, float]:
        """``(min s, max s)`` over ``[lo, hi]`` (``spectrum_points``, both endpoints included)."""
        vals = self(spectrum_points(lo, hi))
        return float(vals.min()), float(vals.max())

    def validate(self, lambda_max: float) -> None:
        """Raise ``ValueError`` if the transform is not defined on ``[0, lambda_max]``."""


@dataclass(frozen=True)
class Polynomial(Transform, engine_family=True):
    """``s(l) = sum_{p=1}^{q} pi_p l^p`` with ``coeffs[p-1] = pi_p`` (STKR Sec. 3, Algorithm 1).

    Grid key ``"k"``: :meth:`from_grid` gives :meth:`monomial` ``(k)``."""

    coeffs: tuple[float, ...]
    grid_key: ClassVar[str] = "k"

    def __init__(self, coeffs: Sequence[float]):
        coeffs = tuple(float(c) for c in coeffs)
        if not coeffs:
            raise ValueError("Polynomial needs at least one coefficient (coeffs[p-1] = pi_p)")
        if any(c != c or abs(c) == float("inf") for c in coeffs):
            raise ValueError(f"Polynomial coefficients must be finite, got {coeffs}")
        if all(c == 0 for c in coeffs):
            raise ValueError("Polynomial coefficients are all zero: s(lambda) = 0 gives no predictor")
        object.__setattr__(self, "coeffs", coeffs)

    @classmethod
    def monomial(cls, k: int) -> "Polynomial":
        """``s(l) = l^k`` (the paper's SP-poly uses ``k = 8``)."""
        if int(k) != k or k < 1:
            raise ValueError(f"monomial degree must be an integer >= 1, got {k}")
        return cls([0.0] * (int(k) - 1) + [1.0])

    @classmethod
    def from_grid(cls, value, **options) -> "Polynomial":
        return cls.monomial(int(value))

    @property
    def degree(self) -> int:
        """``q``, the highest power of ``l`` in ``s(l) = sum_{p=1}^q pi_p l^p``."""
        return len(self.coeffs)

    def apply(self, matmul: Callable[[Tensor], Tensor], x: Tensor) -> Tensor:
        """``s(M) x = sum_p pi_p M^p x`` (``horner``, ``q`` products with ``M``)."""
        return horner(self.coeffs, matmul, x, shift=1)

    def __call__(self, lam):
        lam = torch.as_tensor(lam, dtype=torch.float64)
        return self.apply(lambda v: v * lam, torch.ones_like(lam))


@dataclass(frozen=True)
class ReciprocalPolynomial(Transform, engine_family=True):
    """``1/s(l) = sum_{p=0}^{q-1} xi_p l^(p-r)`` (STKR Algorithm 2, Eq. 20).

    ``rho(l) = l^r / s(l) = sum_p xi_p l^p`` must be positive on ``[0, lambda_1]``
    (``rho(0) = xi_0 > 0``), as in the analysis of Proposition 10.

    Parameters
    ----------
    xi : sequence of float
        ``xi_0, ..., xi_{q-1}`` (``xi_0 > 0``).
    r : int >= 1
        The power of ``l^-r``.
    """

    xi: tuple[float, ...]
    r: int

    def __init__(self, xi: Sequence[float], r: int):
        xi = tuple(float(v) for v in xi)
        if not xi or xi[0] <= 0:
            raise ValueError(f"ReciprocalPolynomial needs xi_0 > 0 (rho(0) = xi_0), got xi={xi}")
        if int(r) != r or r < 1:
            raise ValueError(f"r must be an integer >= 1, got {r}")
        object.__setattr__(self, "xi", xi)
        object.__setattr__(self, "r", int(r))

    def rho(self, lam):
        """``rho(l) = l^r / s(l) = sum_p xi_p l^p``."""
        lam = torch.as_tensor(lam, dtype=torch.float64)
        return self.apply_rho(lambda v: v * lam, torch.ones_like(lam))

    def apply_rho(self, matmul: Callable[[Tensor], Tensor], x: Tensor) -> Tensor:
        """``rho(M) x = sum_p xi_p M^p x`` (Algorithm 2's ``Q`` for ``M = S``; ``horner``)."""
        return horner(self.xi, matmul, x)

    def __call__(self, lam):
        lam = torch.as_tensor(lam, dtype=torch.float64)
        return lam ** self.r / self.rho(lam)

    def validate(self, lambda_max: float) -> None:
        lo = self.rho(spectrum_points(0, lambda_max)).min().item()
        if lo <= 0:
            raise ValueError(
                f"rho(lambda) = lambda^r / s(lambda) must stay positive on [0, lambda_1={lambda_max:.6g}] "
                f"(min {lo:.3e}): s has a pole inside the spectrum"
            )


class InverseLaplacian(ReciprocalPolynomial):
    """Inverse Laplacian, STKR Example 1: ``s(l) = l / (1 - eta l)``, ``1/s(l) = l^-1 - eta``.

    Needs ``0 < eta < 1/lambda_1`` (``lambda_1 = 1`` for a normalized adjacency, so
    ``eta < 1``); checked before any work by :meth:`validate`. Grid key ``"eta"``.
    """

    grid_key: ClassVar[str] = "eta"

    def __init__(self, eta: float):
        eta = float(eta)
        if not eta > 0:
            raise ValueError(f"InverseLaplacian needs eta > 0, got {eta}")
        super().__init__((1.0, -eta), r=1)
        object.__setattr__(self, "eta", eta)

    def validate(self, lambda_max: float) -> None:
        if lambda_max > 0 and self.eta >= 1.0 / lambda_max:
            raise ValueError(
                f"InverseLaplacian needs eta < 1/lambda_1 = {1.0 / lambda_max:.6g}, got eta={self.eta}: "
                "s(lambda) = lambda/(1 - eta lambda) has a pole inside the spectrum"
            )

    def __repr__(self) -> str:
        return f"InverseLaplacian(eta={self.eta})"


@dataclass(frozen=True)
class TopD(Transform, engine_family=True):
    """Kernel PCA truncation (STKR Sec. 4, Eqs. 8-9): keep the top ``d`` eigenpairs of the
    Gram matrix of the unlabeled visible nodes, then fit a ridge probe.

    Parameters
    ----------
    d : int >= 1
        Number of kernel-PCA directions.
    support : {"labeled", "all"}, default "labeled"
        ``"labeled"``: the kernel PCA runs over the connected components that contain a
        labeled node (a documented variant: it only drops directions whose probe weight is
        zero, and works on graphs with many components such as DBLP). ``"all"``: Eq. 8 as
        written, over every unlabeled visible node; on a graph with more label-free
        components than ``d`` every direction is wasted and all scores are zero.

    Grid key ``"d"`` (:meth:`from_grid` takes ``support`` as an option).
    """

    d: int
    support: str = "labeled"
    grid_key: ClassVar[str] = "d"

    def __init__(self, d: int, support: str = "labeled"):
        if int(d) != d or d < 1:
            raise ValueError(f"TopD needs an integer d >= 1, got {d}")
        if support not in ("all", "labeled"):
            raise ValueError(f"TopD support must be 'all' (Eq. 8) or 'labeled', got {support!r}")
        object.__setattr__(self, "d", int(d))
        object.__setattr__(self, "support", support)

    @classmethod
    def from_grid(cls, value, support: str = "labeled", **options) -> "TopD":
        return cls(int(value), support=support)

    def __call__(self, lam):  # s(l_i) = l_i for i <= d, else 0: not a function of l alone
        raise TypeError("TopD is a truncation of the spectrum, not a function of lambda")


@dataclass(frozen=True)
class LabelPropagationFilter(Transform, engine_family=True):
    """Label Propagation's filter (Zhou et al., 2003; STKR Eq. 22): ``h(l) = 1 / (1 - eta l)``, applied to
    ``[Y; 0]`` by solving ``(I - eta S) Yhat = [Y; 0]`` (no ridge; grid key ``"eta"``).

    Parameters
    ----------
    eta : float
        Propagation weight, ``0 < eta < 1/lambda_1`` (``eta < 1`` on a normalized adjacency).
    """

    eta: float
    ridge: ClassVar[bool] = False
    grid_key: ClassVar[str] = "eta"

    def __init__(self, eta: float):
        eta = float(eta)
        if not 0 < eta < float("inf"):
            raise ValueError(f"LabelPropagationFilter needs eta > 0, got {eta}")
        object.__setattr__(self, "eta", eta)

    def __call__(self, lam):
        lam = torch.as_tensor(lam, dtype=torch.float64)
        return 1.0 / (1.0 - self.eta * lam)

    def validate(self, lambda_max: float, name: str = "eta") -> None:
        """Refuse ``eta >= 1/lambda_max``; ``name`` is the caller's spelling of ``eta`` (PyG's ``alpha``)."""
        if lambda_max > 0 and self.eta >= 1.0 / lambda_max:
            raise ValueError(f"label propagation needs 0 < {name} < 1/lambda_1 = {1.0 / lambda_max:g}, "
                             f"got {name}={self.eta}")
