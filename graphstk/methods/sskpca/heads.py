"""The classifier head of semi-supervised KPCA (Walder et al., Sec. 7.1): linear SVMs on eigenfunction
values (hard margin when separable, else ``C = 1``; one-vs-rest), trained on the host."""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.optimize
import torch
from sklearn.svm import SVC
from torch import Tensor

__all__ = ["LinearHead", "fit_linear_head", "head_scores"]


@dataclass
class LinearHead:
    """One-vs-rest linear classifiers on eigenfunction values: ``score = Z @ W + b``.

    ``W [k, n_out]``, ``b [n_out]``, ``hard [n_out]`` (hard margin used, i.e. separable).
    """

    W: np.ndarray
    b: np.ndarray
    hard: np.ndarray

    def scores(self, Z):
        """``Z @ W + b`` for ``Z [n, k]``: NumPy, or a tensor on its own device."""
        if isinstance(Z, Tensor):
            W = torch.as_tensor(self.W, dtype=Z.dtype, device=Z.device)
            return Z @ W + torch.as_tensor(self.b, dtype=Z.dtype, device=Z.device)
        return Z @ self.W + self.b


def _separable(Z: np.ndarray, t: np.ndarray) -> bool:
    """Whether some ``(w, b)`` has ``t_i (w . z_i + b) >= 1`` for all ``i`` (LP feasibility)."""
    A = -t[:, None] * np.hstack([Z, np.ones((Z.shape[0], 1))])
    res = scipy.optimize.linprog(np.zeros(Z.shape[1] + 1), A_ub=A, b_ub=-np.ones(Z.shape[0]),
                                 bounds=[(None, None)] * (Z.shape[1] + 1), method="highs")
    return res.status == 0


def _hard_margin_1d(z: np.ndarray, t: np.ndarray) -> tuple[float, float] | None:
    """``(w, b)`` of the hard-margin SVM on one feature (threshold at the gap's midpoint), or ``None``."""
    pos, neg = z[t > 0], z[t < 0]
    if pos.size == 0 or neg.size == 0:
        return None
    if neg.max() < pos.min():
        lo, hi, sgn = neg.max(), pos.min(), 1.0
    elif pos.max() < neg.min():
        lo, hi, sgn = pos.max(), neg.min(), -1.0
    else:
        return None
    w = sgn * 2.0 / (hi - lo)
    return w, -w * 0.5 * (lo + hi)


def _soft_margin_1d(z: np.ndarray, t: np.ndarray, C: float) -> tuple[float, float]:
    """``argmin_{w, b} w^2 / 2 + C sum_i max(0, 1 - t_i (w z_i + b))`` on one feature: bounded Brent on the
    convex profile in ``w`` (``|w| <= sqrt(2 C n)``), ``b`` at the ``n_+``-th breakpoint."""
    z = np.asarray(z, dtype=np.float64)
    n = z.size
    k = int((t > 0).sum()) - 1

    def best_b(w):
        bp = np.where(t > 0, 1.0 - w * z, -1.0 - w * z)
        b = float(np.partition(bp, k)[k])
        return b, float(np.maximum(0.0, 1.0 - t * (w * z + b)).sum())

    def F(w):
        return 0.5 * w * w + C * best_b(w)[1]

    W = math.sqrt(2.0 * C * n) + 1e-12
    res = scipy.optimize.minimize_scalar(F, bounds=(-W, W), method="bounded", options={"xatol": 1e-10 * W})
    w = float(res.x)
    return w, float(best_b(w)[0])


def fit_linear_head(Z_lab: np.ndarray, T: np.ndarray, hard_C: float = 1e8, soft_C: float = 1.0,
                    paired: bool = False) -> LinearHead:
    """A linear SVM per ``+-1`` column of ``T`` on the labeled features ``Z_lab [l, k]``
    (scikit-learn ``SVC(kernel="linear")``): hard margin (``C = hard_C``) when the column is
    linearly separable, soft margin ``C = soft_C`` otherwise (Sec. 7.1: "hard margin, linear SVM";
    for one feature this only sets a threshold).

    ``paired=True`` (one-vs-rest LS-/LR-KPCA: one eigenfunction per class): the classifier of
    column ``j`` of ``T`` sees only feature ``j`` (a 1-D threshold); ``W`` is then diagonal.
    """
    Z_lab = np.asarray(Z_lab, dtype=np.float64)
    if paired:
        if Z_lab.shape[1] != T.shape[1]:
            raise ValueError(f"paired heads need one feature per target column, got {Z_lab.shape[1]} and {T.shape[1]}")
        parts = [fit_linear_head(Z_lab[:, j:j + 1], T[:, j:j + 1], hard_C, soft_C) for j in range(T.shape[1])]
        W = np.zeros((T.shape[1], T.shape[1]))
        W[np.arange(T.shape[1]), np.arange(T.shape[1])] = [h.W[0, 0] for h in parts]
        return LinearHead(W, np.array([h.b[0] for h in parts]), np.array([h.hard[0] for h in parts]))
    Ws, bs, hard = [], [], []
    for j in range(T.shape[1]):
        t = T[:, j]
        if Z_lab.shape[1] == 1:
            closed = _hard_margin_1d(Z_lab[:, 0], t)
            w1, b1 = closed if closed is not None else _soft_margin_1d(Z_lab[:, 0], t, soft_C)
            Ws.append(np.array([w1]))
            bs.append(b1)
            hard.append(closed is not None)
            continue
        sep = _separable(Z_lab, t)
        svm = SVC(kernel="linear", C=hard_C if sep else soft_C, max_iter=1_000_000)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            svm.fit(Z_lab, t)
        # SVC orders classes_ as [-1, 1]: decision_function > 0 means +1
        Ws.append(svm.coef_.ravel().copy())
        bs.append(float(svm.intercept_[0]))
        hard.append(sep)
    return LinearHead(np.stack(Ws, 1), np.asarray(bs), np.asarray(hard))


def head_scores(head: LinearHead, Z: np.ndarray, n_out_classes: int) -> np.ndarray:
    """Per-class scores ``[n, C]`` (binary: ``[-s, s]``)."""
    s = head.scores(Z)
    if n_out_classes == 2 and s.shape[1] == 1:
        return np.hstack([-s, s])
    return s


