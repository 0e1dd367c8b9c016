"""KPCA (Eq. 5), MV-KPCA (Eq. 6) and LS-KPCA's secular equation (Walder et al., Sec. 4) in the kernel
basis: one pencil ``P v = nu C v`` per ``c`` serves every ``s`` and target (``docs/methods.md``). Host
(LAPACK) work on ``r x r`` matrices."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.optimize
import torch

from ..semi_supervised import onevsrest_targets
from .basis import DECOMPOSITIONS, KernelBasis

__all__ = ["pencil", "SecularSolution", "secular_solve", "targets", "ls_kpca_path", "kpca_components",
           "mv_kpca_path", "within_class_scatter", "check_c", "check_s"]


def _check_number(name: str, v, strict: bool, what: str = "") -> float:
    bound = "> 0" if strict else ">= 0"
    try:
        v = float(v)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number {bound}, got {v!r}") from None
    if not (v > 0 if strict else v >= 0) or not math.isfinite(v):
        raise ValueError(f"{name} must be a finite number {bound}{what}, got {v!r}")
    return v


def check_s(s) -> float:
    """``s`` as a float ``> 0`` (the RMS deviation of ``f`` over the fit points), else a clear error."""
    return _check_number("s", s, True, " (the RMS deviation of f over the fit points)")


def check_c(c) -> float:
    """``c`` as a finite float ``>= 0`` (the weight of the labeled loss), else a clear error."""
    return _check_number("c", c, False)


def pencil(P: np.ndarray, C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``P v = nu C v`` with ``C`` positive definite: ``nu`` ascending, ``V^T C V = I``."""
    DECOMPOSITIONS["pencil"] += 1
    return scipy.linalg.eigh(P, C)


@dataclass
class SecularSolution:
    """A solution of ``min beta^T C beta - 2 b^T beta`` s.t. ``beta^T P beta = s^2``.

    ``beta``; ``zeta`` (the multiplier: ``(C - zeta P) beta = b`` with ``C - zeta P`` PSD, the
    certificate of global optimality); ``hard`` (the hard case ``u^T b ~ 0``).
    """

    beta: np.ndarray
    zeta: float
    hard: bool


def secular_solve(nu: np.ndarray, V: np.ndarray, b: np.ndarray, s2: float, hard_tol: float = 1e-10,
                  sign_hint: np.ndarray | None = None) -> SecularSolution:
    """Solve LS-KPCA's inner problem from one pencil decomposition (Sec. 4, errata).

    Parameters
    ----------
    nu, V : the output of ``scipy.linalg.eigh(P, C)`` (``nu`` ascending, ``V^T C V = I``).
    b : ``[r]`` right-hand side (``c Phi_L^T t`` for LS-KPCA).
    s2 : target ``beta^T P beta`` (> 0).
    hard_tol : the hard case is declared when the root would lie within a relative
        ``hard_tol`` of the pole (``sqrt(nu_max) |u^T b| / s <= hard_tol``).
    sign_hint : ``[r]`` vector; in the hard case the sign of ``theta u`` makes
        ``sign_hint^T beta >= 0`` when ``u^T b`` is exactly 0 (e.g. ``Phi_L^T t``: agree with the labels).

    The root of ``g(x) = sum_i nu_i d_i^2 / (1 - rho_i + x rho_i)^2 = s^2`` (``x = 1 - zeta nu_max``,
    ``d = V^T b``, ``rho = nu / nu_max``) by Brent's method in ``log x``.
    """
    s2 = float(s2)
    if not s2 > 0 or not math.isfinite(s2):
        raise ValueError(f"s^2 must be a finite number > 0, got {s2!r}")
    numax = float(nu[-1])
    if numax <= 0:
        raise ValueError("P is zero on this basis: no function has VAR[f] = s^2 > 0 (constant kernel?)")
    d = V.T @ b
    rho = np.clip(nu / numax, 0.0, 1.0)  # P is PSD: tiny negative nu are round-off
    w = np.clip(nu, 0.0, None) * d * d
    top = rho >= 1.0 - 1e-9
    rest = ~top
    dtop = float(np.sqrt((d[top] ** 2).sum()))
    s = math.sqrt(s2)

    def g(x, mask=None):
        den = 1.0 - rho + x * rho
        if mask is None:
            return float((w / (den * den)).sum())
        return float((w[mask] / (den[mask] ** 2)).sum())

    x1 = math.sqrt(numax) * dtop / s  # the top terms alone reach s^2 here: root x >= x1
    if x1 <= hard_tol:  # hard case: u^T b ~ 0
        g_star = g(0.0, rest)
        if s2 > g_star:
            base = V[:, rest] @ (d[rest] / (1.0 - rho[rest]))
            theta = math.sqrt((s2 - g_star) / numax)
            # u along +d_top (the sign of the exact, non-hard solution), else the sign that agrees with sign_hint
            u = V[:, top] @ (d[top] / dtop) if dtop > 0 else V[:, -1]
            sgn = -1.0 if dtop == 0 and sign_hint is not None and float(sign_hint @ u) < 0 else 1.0
            return SecularSolution(base + sgn * theta * u, 1.0 / numax, True)
        # root left of the pole on the remaining terms (g_rest(0) = g_star >= s^2)
        x_hi = 1.0 + numax * float((d * d).sum()) / (4 * s2) + 1.0
        x = scipy.optimize.brentq(lambda x: g(x, rest) - s2, 0.0, x_hi, xtol=1e-15, rtol=1e-15)
        den = 1.0 - rho + x * rho
        return SecularSolution(V[:, rest] @ (d[rest] / den[rest]), (1.0 - x) / numax, False)
    # regular case: g(x1) >= s^2 and g(x_hi) < s^2
    # bound g(zeta) <= ||d||^2 / (4 |zeta|) for zeta < 0 gives x_hi
    x_hi = 1.0 + numax * float((d * d).sum()) / (4 * s2) + 1.0
    while g(x_hi) >= s2:  # pragma: no cover - the bound guarantees the first try
        x_hi *= 2.0
    t_lo = math.log(x1)
    if g(math.exp(t_lo)) <= s2 * (1.0 + 1e-13):  # the top term alone reaches s^2 (up to rounding)
        x = math.exp(t_lo)
    else:
        t = scipy.optimize.brentq(lambda t: g(math.exp(t)) - s2, t_lo, math.log(x_hi),
                                  xtol=1e-14, rtol=4 * np.finfo(float).eps, maxiter=200)
        x = math.exp(t)
    den = 1.0 - rho + x * rho
    return SecularSolution(V @ (d / den), (1.0 - x) / numax, False)


def targets(y_lab: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """``+-1`` targets: one column for two classes (``classes[1]`` is ``+1``), else one per class."""
    match = np.asarray(y_lab)[:, None] == np.asarray(classes)[None, :]
    codes = torch.from_numpy(np.where(match.any(1), match.argmax(1), -1))
    return onevsrest_targets(codes, classes.size).numpy()


def ls_kpca_path(basis: KernelBasis, lab: np.ndarray, T: np.ndarray, cs, s2s) -> dict:
    """LS-KPCA (Eqs. 10, 11, 14) for every ``(c, s^2)`` of a grid: ``{(c, s2): beta [r, k]}``.

    ``lab``: positions of the labeled points among the fit points; ``T [l, k]``: ``+-1``
    targets (``k`` one-vs-rest columns). One pencil ``P v = nu (I + c Phi_L^T Phi_L) v`` per
    ``c`` serves every ``s^2`` and every column.
    """
    G = basis.Phi[lab]
    T = np.asarray(T, dtype=np.float64).reshape(len(lab), -1)
    out = {}
    GtG = G.T @ G
    for c in cs:
        c = check_c(c)
        nu, V = pencil(basis.P, np.eye(basis.r) + c * GtG)
        B = c * (G.T @ T)
        hints = G.T @ T
        for s2 in s2s:
            out[(c, float(s2))] = np.stack(
                [secular_solve(nu, V, B[:, j], s2, sign_hint=hints[:, j]).beta for j in range(T.shape[1])], 1)
    return out


def kpca_components(basis: KernelBasis, k: int) -> tuple[np.ndarray, np.ndarray]:
    """KPCA (Eq. 5): the top ``k`` of ``P a = mu K a``; returns ``(mu [k], beta [r, k])``,
    ``beta^T beta = I`` (``a^T K a = 1``). In the basis this is ``eigh(P)``."""
    mu, W = np.linalg.eigh(basis.P)
    DECOMPOSITIONS["pencil"] += 1
    k = min(int(k), basis.r)
    return mu[::-1][:k], W[:, ::-1][:, :k]


def within_class_scatter(G: np.ndarray, y_lab: np.ndarray) -> np.ndarray:
    """``sum_g G_g^T (I - E_|g|) G_g`` over the label groups ``g`` of ``y_lab`` (Eq. 6, in the basis)."""
    W = np.zeros((G.shape[1], G.shape[1]))
    for g in np.unique(y_lab):
        Gg = G[y_lab == g]
        sg = Gg.sum(0)
        W += Gg.T @ Gg - np.outer(sg, sg) / Gg.shape[0]
    return (W + W.T) / 2


def mv_kpca_path(basis: KernelBasis, lab: np.ndarray, y_lab: np.ndarray, cs, k: int) -> dict:
    """MV-KPCA (Eq. 6) for every ``c``: ``{c: (mu [k], beta [r, k])}``, the top ``k`` of
    ``P a = mu Q a``, ``Q = K + c sum_g K_g^T (I - E_|g|) K_g`` (groups = classes of ``y_lab``),
    normalised ``beta^T Q beta = I``."""
    W = within_class_scatter(basis.Phi[lab], y_lab)
    out = {}
    for c in cs:
        c = check_c(c)
        mu, V = pencil(basis.P, np.eye(basis.r) + c * W)
        kk = min(int(k), basis.r)
        out[c] = (mu[::-1][:kk], V[:, ::-1][:, :kk])
    return out
