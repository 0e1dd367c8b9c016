"""The spectral filters of "Learning sets with separating kernels" (Table 1, Sec. 5.4) on a path of
``lambda`` values, their iterative forms (Sec. 4.2) and the lambda heuristic (Sec. 7, Fig. 3). The filters
are the :class:`~graphstk.spectral.filters.RegularizationFilter` classes; every function runs on the
device of its tensor inputs."""
from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from ...spectral.filters import (REGULARIZATION_FILTERS, Landweber, NuMethod, nu_coefficients, regularization_filter,
                                 regularization_filter_name)

__all__ = ["FILTERS", "filter_g", "filter_r", "landweber_steps", "nu_steps", "landweber_iteration",
           "nu_method_iteration", "max_curvature_lambda", "check_lams"]

#: the names of the filters of Table 1 (``filter=`` of the estimator; ``Spectral-<name>`` in configs)
FILTERS = tuple(REGULARIZATION_FILTERS)


def check_lams(lam) -> tuple[Tensor, bool]:
    """``lam`` (float, sequence or tensor) -> (float64 host tensor [L], was_scalar); every value must be > 0."""
    if isinstance(lam, Tensor):
        lam = lam.detach().cpu().numpy()
    scalar = np.ndim(lam) == 0
    arr = np.atleast_1d(np.asarray(lam, dtype=np.float64)).ravel()
    if arr.size == 0:
        raise ValueError("lam is an empty sequence; pass one value or a non-empty list, e.g. lam=[1e-3, 1e-2]")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"lam must be finite and > 0 (the regularisation parameter of Table 1), got {lam!r}")
    return torch.from_numpy(arr), bool(scalar)


def landweber_steps(lam) -> Tensor:
    """Landweber ``m_lambda = ceil(1/lambda) - 1`` (so ``g`` has ``m + 1`` terms, ``L_lambda = m + 1``)."""
    return torch.tensor([Landweber(v).steps - 1 for v in check_lams(lam)[0].tolist()])


def nu_steps(lam) -> Tensor:
    """nu-method iterations ``t = ceil(lambda^{-1/2})`` (Lo Gerfo et al. 2008: ``lambda = t^-2``)."""
    return torch.tensor([NuMethod(v).steps for v in check_lams(lam)[0].tolist()])


def filter_g(name: str, s, lam, nu: float = 1.0) -> Tensor:
    """The filter ``g_lambda(s)`` of Table 1 (and Sec. 5.4, the nu-method) on eigenvalues ``s``, for a path of ``lambda``.

    Parameters
    ----------
    name : one of :data:`FILTERS` (or a spelling of :data:`graphstk.spectral.filters.FILTER_NAMES`).
    s : tensor ``[n]`` of eigenvalues of ``K_n / n`` (values below 0 are clamped to 0).
    lam : float or sequence of ``L`` floats, all ``> 0``.
    nu : the order of the nu-method (``nu > 0``; ignored by the other filters).

    Returns ``[n, L]`` float64 (``L = 1`` for a scalar ``lam``): column ``j`` is
    ``regularization_filter(name, lam[j], nu)(s)``.
    """
    name = regularization_filter_name(name)
    s = torch.as_tensor(s).reshape(-1)
    return torch.stack([regularization_filter(name, v, nu)(s) for v in check_lams(lam)[0].tolist()], 1)


def filter_r(name: str, s, lam, nu: float = 1.0) -> Tensor:
    """``r_lambda(s) = s g_lambda(s)`` (Sec. 4.1), ``[n, L]``."""
    s = torch.as_tensor(s).to(torch.float64).clamp_min(0.0)
    return s.reshape(-1, 1) * filter_g(name, s, lam, nu)


def landweber_iteration(K_n: Tensor, K_x: Tensor, steps: int) -> Tensor:
    """``F_n`` by the plain Landweber iteration of Sec. 4.2 (no eigendecomposition).

    ``alpha^0 = 0``, ``alpha^t = alpha^{t-1} + (1/n)(K_x - K_n alpha^{t-1})`` for ``t = 1..steps``,
    ``F_n(x) = K_x^T alpha^{steps}(x)`` (Eq. 20). ``steps = m + 1`` equals the spectral filter of
    Table 1 with ``m + 1`` terms (errata). ``K_n`` ``[n, n]`` normalised Gram, ``K_x`` ``[n, N]``.
    Returns ``[N]``.
    """
    n = K_n.shape[0]
    alpha = torch.zeros_like(K_x)
    for _ in range(int(steps)):
        alpha = alpha + (K_x - K_n @ alpha) / n
    return (K_x * alpha).sum(0)


def nu_method_iteration(K_n: Tensor, K_x: Tensor, steps: int, nu: float = 1.0) -> Tensor:
    """``F_n`` by the nu-method iteration (Lo Gerfo et al. 2008, Sec. 4), ``[N]``.

    ``alpha_0 = 0``; ``alpha_t = alpha_{t-1} + u_t (alpha_{t-1} - alpha_{t-2})
    + (omega_t / n)(K_x - K_n alpha_{t-1})``, with ``u_1 = 0``, ``omega_1 = (4nu+2)/(4nu+1)`` and, for
    ``t >= 2``, ``u_t = (t-1)(2t-3)(2t+2nu-1) / ((t+2nu-1)(2t+4nu-1)(2t+2nu-3))``,
    ``omega_t = 4(2t+2nu-1)(t+nu-1) / ((t+2nu-1)(2t+4nu-1))``; ``F_n(x) = K_x^T alpha_steps``.
    """
    n = K_n.shape[0]
    prev, cur = torch.zeros_like(K_x), torch.zeros_like(K_x)
    for t in range(1, int(steps) + 1):
        u, w = nu_coefficients(t, float(nu))
        prev, cur = cur, cur + u * (cur - prev) + w * (K_x - K_n @ cur) / n
    return (K_x * cur).sum(0)


def max_curvature_lambda(eigvals, floor: float = 1e-12) -> float:
    """``lambda`` at the point of maximum curvature of the eigenvalue decay (Sec. 7, Fig. 3).

    The elbow of the curve ``(j, log10 s_j)`` of the eigenvalues ``eigvals`` of ``K_n / n``, both axes
    rescaled to ``[0, 1]``: the point farthest below the chord ("Kneedle", ``docs/methods.md``); returns
    ``s_{j*}``. Eigenvalues below ``floor * s_1`` are dropped first.
    """
    s = np.sort(np.asarray(torch.as_tensor(eigvals, dtype=torch.float64).cpu(), dtype=np.float64))[::-1]
    if s.size == 0 or not np.isfinite(s).all() or s[0] <= 0:
        raise ValueError("max_curvature_lambda needs finite eigenvalues with a positive largest one")
    s = s[s > floor * s[0]]
    if s.size < 3:
        return float(s[-1])
    y = np.log10(s)
    span = y[0] - y[-1]
    if span <= 0:
        return float(s[-1])
    y = (y - y[-1]) / span                       # 1 at the top eigenvalue, 0 at the last
    x = np.linspace(0.0, 1.0, s.size)
    return float(s[int(np.argmax((1.0 - x) - y))])


