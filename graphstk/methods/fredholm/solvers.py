"""Solvers of the Fredholm problem on a Gram block ``K_F[L, L]``: square loss (Eq. 3), hinge loss (Eq. 7)
and the scaling rule of their ``lam``."""
from __future__ import annotations

import numpy as np
import torch
from sklearn.svm import LinearSVC
from torch import Tensor

from ...operators.feature import check_positive
from ..semi_supervised import onevsrest_targets as _codes_targets

__all__ = ["onevsrest_targets", "effective_lam", "solve_square", "solve_hinge"]


def onevsrest_targets(y, classes=None) -> tuple[np.ndarray, Tensor]:
    """``(classes, Y)``: one-vs-rest targets ``Y[i, c] = +1`` if ``y_i`` is class ``c`` else ``-1``."""
    yn = np.asarray(y.cpu().numpy() if isinstance(y, Tensor) else y).ravel()
    cls = np.unique(yn) if classes is None else np.asarray(classes)
    if len(cls) < 2:
        raise ValueError(f"need labeled points of at least 2 classes, got classes {cls.tolist()}")
    match = yn[:, None] == cls[None, :]
    codes = np.where(match.any(1), match.argmax(1), -1)
    return cls, _codes_targets(torch.from_numpy(codes), len(cls), full=True)


def effective_lam(lam: float, lam_scale: str, K_LL: Tensor) -> float:
    """The ``lam`` a solver uses: ``lam`` itself (``lam_scale="absolute"``) or ``lam`` times the
    mean of ``diag(K_LL)`` (``"trace"``: a grid that does not change with the kernel's scale)."""
    lam = check_positive("lam", lam)
    if lam_scale == "absolute":
        return lam
    if lam_scale == "trace":
        return lam * float(K_LL.diagonal().mean())
    raise ValueError(f"lam_scale must be 'absolute' or 'trace', got {lam_scale!r}")


def shifted_solve(A: Tensor, B: Tensor, lam: float, fallback=torch.linalg.solve) -> Tensor:
    """``(A + lam I)^{-1} B`` for symmetric ``A``: Cholesky, else ``fallback(A + lam I, B)``."""
    A = A.clone()
    A.diagonal().add_(lam)
    L, info = torch.linalg.cholesky_ex(A)
    return torch.cholesky_solve(B, L) if int(info) == 0 else fallback(A, B)


def solve_square(K_LL: Tensor, Y: Tensor, lam: float) -> Tensor:
    """Eq. 3 on the Fredholm Gram block: ``alpha = (K_F + l lam I)^{-1} Y`` (erratum convention;
    the paper's Eq. 4 ``lambda`` is ``n^2 l lam``). ``K_LL`` ``[l, l]``, ``Y`` ``[l, C]``."""
    lam = check_positive("lam", lam)
    return shifted_solve(K_LL.to(torch.float64), Y.to(device=K_LL.device, dtype=torch.float64), K_LL.shape[0] * lam)


def solve_hinge(K_LL: Tensor, Y: Tensor, lam: float, tol: float = 1e-8, max_iter: int = 100000,
                random_state=0, return_n_iter: bool = False):
    """Eq. 7 (hinge loss, no bias) on the Fredholm Gram block, one binary SVM per column of ``Y``.

    The dual after l.141 without an intercept, ``0 <= a_i <= C = 1/(2 l lam)``, by liblinear on an exact
    feature map of ``K_F`` (``docs/methods.md``), on the host: ``K_LL`` ``[l, l]`` and ``Y`` ``[l, C]``
    are copied to the CPU once. Returns ``beta = a * y`` ``[l, C]`` on ``K_LL``'s device (and liblinear's
    largest iteration count when ``return_n_iter``); ``c(x) = sum_s K_F(x, x_s) beta_s``. ``tol``,
    ``max_iter``: liblinear's stopping rule; ``random_state``: its coordinate order.
    """
    lam = check_positive("lam", lam)
    l = K_LL.shape[0]
    C = 1.0 / (2.0 * l * lam)
    device = K_LL.device
    K = K_LL.detach().to(device="cpu", dtype=torch.float64)
    Y = Y.detach().cpu()
    K = 0.5 * (K + K.T)
    ev, V = torch.linalg.eigh(K)
    keep = ev > ev.abs().max().clamp_min(1e-300) * 1e-12
    V, ev = V[:, keep], ev[keep]
    Phi = (V * ev.sqrt()).numpy()
    out = torch.zeros(l, Y.shape[1], dtype=torch.float64)
    n_iter = 1
    for c in range(Y.shape[1]):
        yc = Y[:, c].numpy()
        if np.all(yc == yc[0]):  # one class only: the dual optimum is a = C (all margins violated)
            out[:, c] = torch.from_numpy(C * yc)
            continue
        svm = LinearSVC(loss="hinge", dual=True, fit_intercept=False, C=C, tol=tol, max_iter=max_iter,
                        random_state=random_state).fit(Phi, yc)
        n_iter = max(n_iter, int(np.max(svm.n_iter_)))
        w = torch.from_numpy(svm.coef_.ravel().astype(np.float64))
        out[:, c] = V @ (w / ev.sqrt())
    return (out.to(device), n_iter) if return_n_iter else out.to(device)

