"""Coupled kernel embedding (CKE; kernel-methods slides, "Coupled Kernel Embedding", Eqs. 24-28, after
Ren, Dai & Yan, IEEE TIP 2012): two modes mapped by two kernels into a common ``R^c`` by the generalised
eigenproblem ``Zk G Zk u = lambda Zk Zk u`` on the bipartite-graph Laplacian ``G`` of the affinity ``W``
(Eq. 26), the constant solution removed, with an optional RKHS-norm penalty ``reg`` (derivation and
solve: ``docs/methods.md``).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.linalg
import torch
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin, _fit_context
from torch import Tensor

from .._arrays import check_is_fitted, semi_supervised_labels, to_output, validate_features
from ._constraints import NON_NEGATIVE, OPTIONAL_POSITIVE_INT, POSITIVE_INT, SIGMA, kernel_names, store_params
from ..operators.base import KernelOperator
from ..operators.feature import FeatureKernelOperator, as_features, gram, knn_graph, median_distance
from .fredholm.kernel import kernel_from_sigma

__all__ = ["CoupledKernelEmbedding", "coupled_kernel_embedding", "CKEResult", "bipartite_laplacian"]


class CKEResult(NamedTuple):
    eigenvalues: Tensor       # [c], ascending, trivial one removed
    coef_l: Tensor            # U_L [n_L, c]
    coef_h: Tensor            # U_H [n_H, c]
    embedding_l: Tensor       # Y_L = K_L U_L [n_L, c]
    embedding_h: Tensor       # Y_H = K_H U_H [n_H, c]
    constant_residual: float  # ||P_range 1 - 1|| / ||1||: 0 when the constant is exactly representable
    eps: float                # the absolute regularisation weight used


def bipartite_laplacian(W: Tensor) -> Tensor:
    """``G = [[D_L, -W], [-W^T, D_H]]`` with ``D_L = diag(W 1)``, ``D_H = diag(W^T 1)`` (Eq. 26)."""
    nl, nh = W.shape
    G = torch.zeros(nl + nh, nl + nh, dtype=W.dtype, device=W.device)
    G[:nl, nl:] = -W
    G[nl:, :nl] = -W.T
    G.diagonal()[:nl] = W.sum(1)
    G.diagonal()[nl:] = W.sum(0)
    return G


def _dense(K) -> np.ndarray:
    if isinstance(K, KernelOperator):
        K = K.to_dense()
    if isinstance(K, Tensor):
        K = K.detach().cpu().double().numpy()
    K = np.asarray(K, dtype=np.float64)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"kernel matrices must be square, got shape {K.shape}")
    return 0.5 * (K + K.T)


def coupled_kernel_embedding(K_L, K_H, W, n_components: int = 2, reg: float = 1e-3,
                             rcond: float = 1e-10) -> CKEResult:
    """Solve Eq. 28 for given Gram matrices (tensors, arrays or :class:`~graphstk.operators.KernelOperator`\\ s).

    ``K_L [n_L, n_L]``, ``K_H [n_H, n_H]`` symmetric PSD; ``W [n_L, n_H]`` non-negative affinities
    (Eq. 25). Returns the ``n_components`` smallest non-trivial eigenpairs as torch float64 tensors
    (``CKEResult``).

    Parameters
    ----------
    K_L, K_H, W : see above.
    n_components : int, default 2
    reg : float >= 0, default 1e-3
        Relative weight of the RKHS-norm penalty, ``eps = reg * s_max * mean(diag G)`` (``0``: Eq. 28
        as printed).
    rcond : float, default 1e-10. Relative cutoff below which eigenvalues of the constraint matrix count as zero.
    """
    KL, KH = _dense(K_L), _dense(K_H)
    nl, nh = KL.shape[0], KH.shape[0]
    Wt = torch.as_tensor(np.asarray(W.detach().cpu() if isinstance(W, Tensor) else W, dtype=np.float64))
    if Wt.shape != (nl, nh):
        raise ValueError(f"W must have shape [n_L, n_H] = [{nl}, {nh}], got {tuple(Wt.shape)}")
    if not bool(torch.isfinite(Wt).all()) or bool((Wt < 0).any()):
        raise ValueError("W must be finite and non-negative")
    if float(Wt.sum()) <= 0:
        raise ValueError("W has no positive entry: the two modes are not coupled")
    if reg < 0:
        raise ValueError(f"reg must be >= 0, got {reg}")
    N = nl + nh
    sL, VL = scipy.linalg.eigh(KL)
    sH, VH = scipy.linalg.eigh(KH)
    smax = max(float(sL.max(initial=0.0)), float(sH.max(initial=0.0)))
    if smax <= 0:
        raise ValueError("kernel matrices are zero")
    keepL, keepH = sL > rcond * smax, sH > rcond * smax
    s = np.concatenate([sL[keepL], sH[keepH]])
    r = s.size
    V = np.zeros((N, r))
    V[:nl, :keepL.sum()] = VL[:, keepL]
    V[nl:, keepL.sum():] = VH[:, keepH]
    G = bipartite_laplacian(Wt).numpy()
    eps = float(reg) * smax * float(np.mean(np.diag(G)))
    M = V.T @ G @ V
    M = 0.5 * (M + M.T)
    M[np.diag_indices(r)] += eps / s
    ones = np.ones(N)
    p1 = V.T @ ones
    constant_residual = float(np.linalg.norm(V @ p1 - ones) / np.sqrt(N))
    if r - 1 < n_components:
        raise ValueError(f"n_components = {n_components} exceeds the {r - 1} non-trivial directions "
                         "available (rank of the kernels minus the constant)")
    # Y^T 1 = q^T V^T 1 = 0: q in the orthogonal complement of p1
    Q = scipy.linalg.null_space(p1[None, :] / np.linalg.norm(p1))  # [r, r-1], orthonormal
    lam, Cq = scipy.linalg.eigh(Q.T @ M @ Q, subset_by_index=[0, n_components - 1])
    q = Q @ Cq
    coef = V @ (q / s[:, None])   # u = V S^-1 q
    emb = V @ q                   # Y = Zk u
    t = lambda a: torch.from_numpy(np.ascontiguousarray(a))
    return CKEResult(t(lam), t(coef[:nl]), t(coef[nl:]), t(emb[:nl]), t(emb[nl:]), constant_residual, eps)


class CoupledKernelEmbedding(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Coupled kernel embedding of two modes ``L`` and ``H`` (slides Eqs. 24-28), a scikit-learn transformer.

    ``fit(X, y=None)``: each row of ``X`` is one object seen in both modes, its ``L`` features
    first (``n_features_l`` columns) and its ``H`` features after them; ``W`` is the default
    affinity (:meth:`default_affinity`) on the ``H`` mode, zero between labeled points of
    different classes when labels ``y`` are given (``-1`` marks an unlabeled point).
    ``transform(X)`` returns ``[f_L(x_L), g_H(x_H)]`` (``2 n_components`` columns: both modes'
    positions in the common space). Unpaired modes, or an explicit affinity ``W``:
    :meth:`fit_modes`; single modes out of sample: :meth:`transform_l`, :meth:`transform_h`;
    Eq. 24's distances: :meth:`distances`.

    The eigendecomposition of Eq. 28 runs on the host; kernels and out-of-sample maps on the input's device.

    Parameters
    ----------
    n_components : int, default 2. Dimension ``c`` of the common space.
    kernel_l, sigma_l, kernel_h, sigma_h : str / float or None, defaults "gaussian", None
        The kernels of the two modes (:func:`graphstk.operators.kernel_function`; the Gaussian is
        ``exp(-||x - y||^2 / (2 sigma^2))``, other kernels with a width take ``sigma`` as their scale,
        e.g. ``"abel"``: ``exp(-||x - y|| / sigma)``). ``sigma=None``: the median heuristic on that mode.
    reg : float >= 0, default 1e-3
        Relative weight of the RKHS-norm penalty, ``eps = reg * s_max * mean(diag G)``; ``0`` is
        Eq. 28 as printed.
    affinity_sigma : float or None, default None
        Bandwidth ``t`` of the default affinity (``None``: the median distance of the H mode).
    n_neighbors : int or None, default None. Sparsify the default affinity to a symmetrised kNN graph.
    rcond : float, default 1e-10. Relative cut-off for the numerical range of the kernel matrices.
    n_features_l : int or None, default None
        Columns of ``X`` that belong to the ``L`` mode in :meth:`fit`/:meth:`transform`
        (``None``: the first half, ``d // 2``).

    Attributes after ``fit``: ``eigenvalues_`` ``[c]`` (``lambda_k = J_k + eps ||f_k||_H^2``, ``J_k``
    the Eq. 25 objective of component ``k``), ``coef_l_``/``coef_h_`` (``U_L``, ``U_H``),
    ``embedding_l_``/``embedding_h_`` (training embeddings, jointly orthonormal and centred),
    ``W_`` (the affinity used), ``constant_residual_``, ``eps_``, ``n_features_in_`` (``fit``
    only), ``XL_fit_``, ``XH_fit_`` (tensors on the input's device).
    """

    _parameter_constraints: dict = {
        "n_components": POSITIVE_INT, "kernel_l": [kernel_names()], "sigma_l": SIGMA, "kernel_h": [kernel_names()],
        "sigma_h": SIGMA, "reg": NON_NEGATIVE, "affinity_sigma": SIGMA, "n_neighbors": OPTIONAL_POSITIVE_INT,
        "rcond": NON_NEGATIVE, "n_features_l": OPTIONAL_POSITIVE_INT,
    }

    def __init__(self, n_components: int = 2, kernel_l: str = "gaussian", sigma_l: float | None = None,
                 kernel_h: str = "gaussian", sigma_h: float | None = None, reg: float = 1e-3,
                 affinity_sigma: float | None = None, n_neighbors: int | None = None, rcond: float = 1e-10,
                 n_features_l: int | None = None):
        store_params(self, locals())

    def default_affinity(self, XH, y=None) -> Tensor:
        """``W_ij = exp(-||h_i - h_j||^2 / (2 t^2))`` on the H mode for paired data (``l_i`` and
        ``h_i`` the same object; ``W_ii = 1`` couples each pair), ``t`` = ``affinity_sigma`` or the
        median distance; zero between labeled points of different classes when labels ``y`` are
        given (``-1``: unlabeled); restricted to the symmetrised ``n_neighbors``-NN graph (plus the
        pairs) when ``n_neighbors`` is set."""
        XH = as_features(XH, dtype=torch.float64)
        t = self.affinity_sigma if self.affinity_sigma is not None else median_distance(XH)
        W = gram(XH, kernel="gaussian", sigma=t)
        if y is not None:
            labeled, _, codes = semi_supervised_labels(y, XH.shape[0])
            c = torch.as_tensor(codes, device=W.device)
            lab = torch.as_tensor(labeled, device=W.device)
            W = W * ~((c[:, None] != c[None, :]) & lab[:, None] & lab[None, :])
        if self.n_neighbors is not None:
            ei, _ = knn_graph(XH, int(self.n_neighbors))
            mask = torch.zeros_like(W, dtype=torch.bool)
            mask[ei[0], ei[1]] = True
            mask.fill_diagonal_(True)
            W = W * mask.to(W.dtype)
        return W

    def _split(self, X: Tensor) -> tuple[Tensor, Tensor]:
        d = X.shape[1]
        k = d // 2 if self.n_features_l is None else self.n_features_l
        if not 1 <= k < d:
            raise ValueError(f"X has {d} feature(s): the L mode takes the first n_features_l columns and the H "
                             f"mode the rest, so both need at least one (n_features_l = {k!r}; pass "
                             f"1 <= n_features_l < {d})")
        return X[:, :k], X[:, k:]

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Fit on paired rows ``X = [x_L | x_H]`` ``[n, d_L + d_H]`` with the default affinity
        (:meth:`default_affinity`), labels ``y`` (``-1`` unlabeled; optional). Two matrices, or an
        explicit affinity ``W``: :meth:`fit_modes`. Returns ``self``."""
        Xt = validate_features(self, X, reset=True, dtype=torch.float64, ensure_min_samples=2)
        XL, XH = self._split(Xt)
        self._fit(XL, XH, None, y)
        return self

    def fit_modes(self, XL, XH, W=None, y=None):
        """Fit on two modes ``XL [n_L, d_L]`` and ``XH [n_H, d_H]`` (parameters checked as in :meth:`fit`).
        ``W [n_L, n_H]`` (Eq. 25) is the affinity between ``l_i`` and ``h_j``; if omitted the data
        must be paired (``n_L = n_H``) and :meth:`default_affinity` is used (with labels ``y`` when
        given, ``-1`` unlabeled). ``transform`` (paired rows) is not available after it; use
        :meth:`transform_l`, :meth:`transform_h` and :meth:`distances`. Returns ``self``."""
        self._validate_params()
        self.__dict__.pop("n_features_in_", None)
        XL = as_features(XL, dtype=torch.float64, name="XL")
        XH = as_features(XH, dtype=torch.float64, name="XH")
        self._fit(XL, XH, W, y)
        return self

    def _fit(self, XL: Tensor, XH: Tensor, W, y):
        device = XL.device
        if W is None:
            if XL.shape[0] != XH.shape[0]:
                raise ValueError("without W the modes must be paired (n_L == n_H), "
                                 f"got {XL.shape[0]} and {XH.shape[0]}")
            W = self.default_affinity(XH, y)
        else:
            W = torch.as_tensor(np.asarray(W.detach().cpu() if isinstance(W, Tensor) else W, dtype=np.float64))
        self.kernel_l_ = kernel_from_sigma(self.kernel_l, self.sigma_l, X=XL, param="sigma_l")
        self.kernel_h_ = kernel_from_sigma(self.kernel_h, self.sigma_h, X=XH, param="sigma_h")
        res = coupled_kernel_embedding(FeatureKernelOperator(XL, kernel=self.kernel_l_),
                                       FeatureKernelOperator(XH, kernel=self.kernel_h_), W,
                                       int(self.n_components), float(self.reg), float(self.rcond))
        self.XL_fit_, self.XH_fit_, self.W_ = XL, XH, W
        self.eigenvalues_ = res.eigenvalues.to(device)
        self.coef_l_, self.coef_h_ = res.coef_l.to(device), res.coef_h.to(device)
        self.embedding_l_, self.embedding_h_ = res.embedding_l.to(device), res.embedding_h.to(device)
        self.constant_residual_ = res.constant_residual
        self.eps_ = res.eps
        self._n_features_out = 2 * int(self.n_components)

    def _map(self, X: Tensor, mode: str) -> Tensor:
        train, k, coef = ((self.XL_fit_, self.kernel_l_, self.coef_l_) if mode == "L"
                          else (self.XH_fit_, self.kernel_h_, self.coef_h_))
        if X.shape[1] != train.shape[1]:
            raise ValueError(f"mode {mode} has {train.shape[1]} features, got {X.shape[1]}")
        return FeatureKernelOperator(X, train.to(X.device), kernel=k) @ coef.to(X.device)

    def _mode(self, X, mode: str):
        check_is_fitted(self, "coef_l_")
        Xt = as_features(X, dtype=torch.float64)
        return to_output(self._map(Xt, mode), X)

    def transform(self, X):
        """``[f_L(x_L), g_H(x_H)]`` of paired rows ``X = [x_L | x_H]``: ``[n, 2 n_components]``
        (after :meth:`fit`; single modes: :meth:`transform_l`, :meth:`transform_h`)."""
        check_is_fitted(self, "coef_l_")
        if not hasattr(self, "n_features_in_"):
            raise ValueError("transform takes paired rows [x_L | x_H] after fit(X); after fit_modes(XL, XH) use "
                             "transform_l(XL) and transform_h(XH)")
        Xt = validate_features(self, X, reset=False, dtype=torch.float64)
        XL, XH = self._split(Xt)
        return to_output(torch.cat([self._map(XL, "L"), self._map(XH, "H")], 1), X)

    def transform_l(self, X):
        """Out-of-sample embedding ``f_L(x) = U_L^T k_L(L, x)`` of ``L``-mode points ``X [n, d_L]``."""
        return self._mode(X, "L")

    def transform_h(self, X):
        """Out-of-sample embedding ``g_H(x) = U_H^T k_H(H, x)`` of ``H``-mode points ``X [n, d_H]``."""
        return self._mode(X, "H")

    def distances(self, XL, XH):
        """``d_ij = ||g(l_i) - f(h_j)||`` in the common space (Eq. 24), ``[n_l, n_h]``."""
        check_is_fitted(self, "coef_l_")
        A = self._map(as_features(XL, dtype=torch.float64), "L")
        B = self._map(as_features(XH, dtype=torch.float64), "H")
        return to_output(torch.cdist(A, B.to(A.device)), XL)
