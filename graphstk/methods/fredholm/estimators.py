"""The Fredholm classifiers (Que, Belkin, Wang 2014): square loss (Eq. 3) and hinge loss (Eq. 7),
``fit(X, y)`` with ``y = -1`` marking the unlabeled points."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import torch
from torch import Tensor

from ..._arrays import check_is_fitted, to_output, validate_features
from ...memory import check_allocation
from ...operators.feature import Kernel
from .._constraints import (NON_NEGATIVE, OPTIONAL_POSITIVE_INT, POSITIVE, POSITIVE_INT, SIGMA, StrOptions,
                            kernel_names, store_params)
from ..semi_supervised import SemiSupervisedClassifier
from .kernel import FredholmKernel, _match, _n, _take, fredholm_instance
from .solvers import effective_lam, solve_hinge, solve_square

__all__ = ["FredholmRLSC", "FredholmSVM"]

_PARAMS = """    Parameters
    ----------
    outer, inner : str or Kernel, default "gaussian"
        The outer kernel ``k`` and inner kernel ``kH`` of Eq. 5 (``"gaussian"``, ``"linear"``, or
        any name / :class:`~graphstk.operators.Kernel` of :func:`graphstk.operators.kernel_function`).
    outer_sigma, inner_sigma : float > 0 or None, default None
        Width ``sigma`` of the Gaussian ``exp(-||x-z||^2 / (2 sigma^2))`` (the paper's Sec. 5 width
        is ``r = sigma^2``); the scale of other kernels with a width (e.g. ``"abel"``,
        ``exp(-||x-z|| / sigma)``); ignored for ``"linear"``. ``None``: the median heuristic, the
        median pairwise distance of the fit points ``X`` (a seeded subsample of at most 2000 rows),
        as scikit-learn's ``gamma="scale"`` picks a width from the data.
    normalized : bool, default False
        Eq. 6: outer weights divided by their row sum (a softmax for the Gaussian).
    lam : float > 0, default 1e-3
        The ``lambda`` of Eq. 3 / Eq. 7 (erratum convention: the paper's Eq. 4 / l.97 ``lambda``
        equals ``n^2 l lam``, ``n`` points, ``l`` of them labeled).
    lam_scale : {"absolute", "trace"}, default "absolute"
        ``"trace"`` multiplies ``lam`` by the mean of ``diag(K_F)`` over the labeled points (a
        scale-free grid; the value used is ``lam_``).
    block_size : int, optional
        Rows per temporary ``[rows, n]`` tile (default ``2**22 // n``).
"""


_FREDHOLM_CONSTRAINTS = {
    "outer": [kernel_names(), Kernel], "inner": [kernel_names(), Kernel],
    "outer_sigma": SIGMA, "inner_sigma": SIGMA, "normalized": ["boolean"], "lam": POSITIVE,
    "lam_scale": [StrOptions({"absolute", "trace"})], "block_size": OPTIONAL_POSITIVE_INT,
}


class _FredholmBase(SemiSupervisedClassifier):
    _loss = "square"
    _accept_sparse = True
    _width_params = "outer_sigma, inner_sigma"
    _parameter_constraints: dict = dict(_FREDHOLM_CONSTRAINTS)

    def __init__(self, outer="gaussian", inner="gaussian", outer_sigma=None, inner_sigma=None,
                 normalized: bool = False, lam: float = 1e-3, lam_scale: str = "absolute",
                 block_size: int | None = None):
        store_params(self, locals())

    @classmethod
    def instance(cls, name: str, sigma: float | None = None, **kwargs):
        """The Sec. 5 instance ``name`` (``FredLin1``, ..., ``FredGauss(N)``) with Gaussian width
        ``sigma`` (the paper's ``r = sigma^2``; ``None``: the median heuristic)."""
        return cls(**fredholm_instance(name, sigma), **kwargs)

    def _solve(self, K_LL: Tensor, Y: Tensor, lam: float) -> tuple[Tensor, int | None]:
        return solve_square(K_LL, Y, lam), None

    def _fit(self, X, labeled: Tensor, Y: Tensor):
        XL = _take(X, labeled)
        n, l = _n(X), _n(XL)
        device = torch.device("cpu") if sp.issparse(X) else X.device
        check_allocation(8.0 * n * (l + Y.shape[1]), f"the [{n}, {l}] Fredholm factor KH A_L^T",
                         "use RandomFeatureFredholm (memory linear in n) or fewer labeled points", device)
        op = FredholmKernel(XL, None, X, outer=self.outer, inner=self.inner, outer_sigma=self.outer_sigma,
                            inner_sigma=self.inner_sigma, normalized=self.normalized, block_size=self.block_size)
        self.outer_sigma_, self.inner_sigma_ = op.outer.sigma, op.inner.sigma
        K_LL = op.to_dense()
        self.lam_ = effective_lam(self.lam, self.lam_scale, K_LL)
        beta, n_iter = self._solve(K_LL, Y, self.lam_)
        if n_iter is not None:
            self.n_iter_ = n_iter
        self.dual_coef_ = beta
        self.operator_ = op
        self.gram_ = K_LL
        self._targets = Y
        self.h_ = op.right_factor() @ beta.to(device=op.device, dtype=op.dtype)
        if op.outer.name == "linear":
            U = op.U
            self.coef_ = (torch.from_numpy(np.asarray(U.T @ self.h_.cpu().numpy())) if sp.issparse(U)
                          else U.T @ self.h_) / _n(U)

    def _scores(self, X) -> Tensor:
        return self.operator_._weights_matmul(_match(X, self.operator_.U, "X"), self.h_)

    def _fit_scores(self) -> Tensor:
        return self.operator_._weights_matmul(self.operator_.U, self.h_)

    def decision_path(self, X, lams) -> list:
        """``decision_function(X)`` for every ``lam`` in ``lams`` (same ``lam_scale``) from one evaluation
        of ``K_F[X, L]``; the fitted state is unchanged. Returns a list of arrays of ``X``'s type."""
        check_is_fitted(self)
        P = validate_features(self, X, reset=False, accept_sparse=self._accept_sparse)
        K_PL = self.operator_.cross(P)
        out = []
        for lam in lams:
            beta, _ = self._solve(self.gram_, self._targets, effective_lam(lam, self.lam_scale, self.gram_))
            S = K_PL @ beta.to(K_PL.dtype)
            out.append(to_output(S[:, 0] if S.shape[1] == 1 else S, X))
        return out


class FredholmRLSC(_FredholmBase):
    __doc__ = """Fredholm kernel RLS classifier: square loss, Eq. 3 (Sec. 2; kernel form after Eq. 5).

    ``fit(X, y)``: ``X`` ``[n, d]`` every point (the integral of Eq. 2 runs over all of them; NumPy, a
    tensor on any device, or ``scipy.sparse``), ``y`` ``[n]`` with ``-1`` marking the unlabeled points;
    ``decision_function`` gives ``c(x) = sum_s kF(x, x_s) alpha_s`` (1-D for two classes),
    ``alpha = (K_F + l lam I)^{-1} Y`` with ``K_F`` the ``l x l`` Fredholm Gram matrix of Eq. 5
    (Eq. 6 when ``normalized``) over the labeled points and ``Y`` one-vs-rest ``+-1`` targets.

""" + _PARAMS + """
    Use :meth:`instance` for the paper's kernels: ``FredholmRLSC.instance("FredGauss(N)", sigma, lam=...)``,
    and :meth:`decision_path` for the scores of many ``lam`` from one fit.

    Attributes
    ----------
    classes_, n_features_in_, lam_
    outer_sigma_, inner_sigma_ : float or None, the widths used (``None`` for a kernel without one)
    unreachable_, n_unreachable_ : the fitted points with all scores zero or not finite, their count
    dual_coef_ : Tensor ``[l, C]`` (``alpha``; one column for two classes)
    gram_ : Tensor ``[l, l]``, ``K_F`` over the labeled points
    h_ : Tensor ``[n, C]``, ``KH A_L^T alpha`` (prediction needs only the outer weights of new points)
    operator_ : :class:`FredholmKernel`
    coef_ : Tensor ``[d, C]``, for a linear outer kernel (FredLin1): ``c(x) = x^T coef_``
    """


class FredholmSVM(_FredholmBase):
    __doc__ = """Fredholm SVM: hinge loss, Eq. 7, **no bias**, ``C = 1/(2 l lam)`` (dual after l.141).

    ``fit(X, y)`` with ``y = -1`` marking the unlabeled points, ``predict``, ``decision_function``,
    ``score``: the contract of :class:`FredholmRLSC`. Solved on the host by liblinear
    (``graphstk.methods.fredholm.solvers.solve_hinge``); ``dual_coef_`` holds ``a * y`` per column.

""" + _PARAMS + """    random_state : int, RandomState or None, default None
        Seeds liblinear's coordinate order.
    tol : float, default 1e-8
        liblinear's stopping tolerance.
    max_iter : int, default 100000
        liblinear's iteration cap per one-vs-rest column.

    Attributes: those of :class:`FredholmRLSC`, and ``n_iter_`` (liblinear's largest iteration
    count over the columns).
    """

    _loss = "hinge"
    _parameter_constraints: dict = {**_FREDHOLM_CONSTRAINTS, "random_state": ["random_state"],
                                    "tol": NON_NEGATIVE, "max_iter": POSITIVE_INT}

    def __init__(self, outer="gaussian", inner="gaussian", outer_sigma=None, inner_sigma=None,
                 normalized: bool = False, lam: float = 1e-3, lam_scale: str = "absolute",
                 block_size: int | None = None, random_state=None, tol: float = 1e-8, max_iter: int = 100000):
        store_params(self, locals())

    def _solve(self, K_LL: Tensor, Y: Tensor, lam: float) -> tuple[Tensor, int]:
        return solve_hinge(K_LL, Y, lam, tol=self.tol, max_iter=self.max_iter, random_state=self.random_state,
                           return_n_iter=True)
