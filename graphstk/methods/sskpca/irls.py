"""LR-KPCA (Walder et al., Eqs. 16-21, corrected IRLS step): logistic labeled loss by iteratively
reweighted LS-KPCA in the kernel basis (host ``r x r`` work; the step: ``docs/methods.md``)."""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ...exceptions import ConvergenceWarning
from .basis import KernelBasis
from .secular import ls_kpca_path, pencil, secular_solve

__all__ = ["LRResult", "lr_objective", "lr_kpca", "ConvergenceWarning"]


@dataclass
class LRResult:
    """Outcome of :func:`lr_kpca`: ``beta``, ``objective`` (final), ``history`` (objective after
    each accepted step, starting with the initial point), ``n_iter``, ``converged``,
    ``backoffs`` (proximal retries)."""

    beta: np.ndarray
    objective: float
    history: list
    n_iter: int
    converged: bool
    backoffs: int


def lr_objective(basis: KernelBasis, lab: np.ndarray, t: np.ndarray, c: float, beta: np.ndarray) -> float:
    """``||f||_H^2 + c sum_{i in L} log(1 + exp(-t_i f(x_i)))`` (Eq. 18 with the logistic loss)."""
    g = basis.Phi[lab] @ beta
    return float(beta @ beta + c * np.logaddexp(0.0, -t * g).sum())


def lr_kpca(basis: KernelBasis, lab: np.ndarray, t: np.ndarray, c: float, s2: float,
            beta0: np.ndarray | None = None, max_iter: int = 50, tol: float = 1e-10,
            max_backoff: int = 30) -> LRResult:
    """LR-KPCA for one target column ``t`` (``+-1``) of the labeled positions ``lab``: IRLS with LS-KPCA
    inner solves (:func:`secular_solve`, ``VAR[f] = s2``, labeled loss weight ``c``), a step that does not
    lower the objective redone with a proximal term up to ``max_backoff`` times. Starts from ``beta0``
    (default: LS-KPCA with the same ``c``, ``s2``); stops after ``max_iter`` steps or a relative decrease
    below ``tol``. Returns an :class:`LRResult`.
    """
    c, s2 = float(c), float(s2)
    t = np.asarray(t, dtype=np.float64)
    G = basis.Phi[lab]
    if beta0 is None:
        beta = ls_kpca_path(basis, lab, t[:, None], [c], [s2])[(c, s2)][:, 0]
    else:
        beta = np.asarray(beta0, dtype=np.float64).copy()
    J = lr_objective(basis, lab, t, c, beta)
    history, backoffs, converged, it = [J], 0, False, 0
    I = np.eye(basis.r)
    for it in range(1, max_iter + 1):
        g = G @ beta
        z = 1.0 / (1.0 + np.exp(-t * g))
        r = z * (1.0 - z)
        C = I + (c / 2) * (G.T * r) @ G
        b = (c / 2) * (G.T @ (r * g + t * (1.0 - z)))
        lam, accepted = 0.0, False
        scale = float(np.abs(C).max())
        for _ in range(max_backoff + 1):
            nu, V = pencil(basis.P, C + lam * I)
            cand = secular_solve(nu, V, b + lam * beta, s2, sign_hint=G.T @ t).beta
            Jc = lr_objective(basis, lab, t, c, cand)
            if Jc < J:
                accepted = True
                break
            backoffs += 1
            lam = 1e-6 * scale if lam == 0.0 else 10.0 * lam
        if not accepted:
            converged = True
            break
        dJ = J - Jc
        beta, J = cand, Jc
        history.append(J)
        if dJ <= tol * max(1.0, abs(J)):
            converged = True
            break
    if not converged:
        warnings.warn(f"LR-KPCA did not converge in {max_iter} iterations (objective {J:.6g}); "
                      "raise max_iter", ConvergenceWarning, stacklevel=2)
    return LRResult(beta, J, history, it, converged, backoffs)


