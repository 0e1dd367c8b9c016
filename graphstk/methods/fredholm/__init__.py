"""Fredholm kernels (Que, Belkin, Wang, "Learning with Fredholm Kernels", NIPS 2014).

The Fredholm learning problem (Eq. 3) over ``n = l + u`` points ``U`` (labeled + unlabeled)

    f* = argmin_f (1/l) sum_{i<=l} ((K_phat f)(x_i) - y_i)^2 + lam ||f||_H^2,
    (K_phat f)(x) = (1/n) sum_{j<=n} k(x, x_j) f(x_j)                              (Eq. 2)

is kernel RLS with the data-dependent *Fredholm kernel* (Eq. 5)

    kF(x, z) = (1/n^2) sum_{i,j<=n} k(x, x_i) kH(x_i, x_j) k(z, x_j)  =  a(x)^T KH a(z),

``k`` the *outer* and ``kH`` the *inner* kernel, ``a(x) = k(x, U) / n`` and ``KH = kH(U, U)``.
The normalised kernel (Eq. 6) replaces ``k(x, x_i)`` by ``k(x, x_i) / sum_m k(x, x_m)``; for a
Gaussian outer kernel these weights are a softmax of ``-||x - x_i||^2 / (2 sigma^2)``, computed as one
(stable for tiny widths). Eq. 6 is implemented as printed, with its ``1/n^2``: the discretised
Eq. 9 would not have it; the constant factor only rescales ``lam``.

Kernel conventions: Gaussians are ``exp(-||x - z||^2 / (2 sigma^2))`` with the width ``sigma``
(graphstk's one convention, :mod:`graphstk.operators.kernels`; the paper's Sec. 5 writes
``exp(-||x - z||^2 / (2 r))``, so its width is ``r = sigma^2``); linear is ``x^T z``. A width left
at ``None`` is the median heuristic: the median pairwise distance of the fit points
(:func:`graphstk.operators.median_sigma`).
Any feature kernel of :func:`graphstk.operators.kernel_function` may be used as outer or inner
kernel by passing a :class:`~graphstk.operators.Kernel` instead of a name.

Instances (Sec. 5, l.274-288): ``FredLin1`` (outer linear, inner Gaussian), ``FredLin2`` (outer
Gaussian, inner linear), ``FredGauss`` (both Gaussian, one width ``sigma``) and the normalised
``FredLin2(N)``, ``FredGauss(N)``; see :data:`FREDHOLM_INSTANCES` and :func:`fredholm_instance`.

Lambda convention (erratum, "Scaling errata"): ``lam`` here is the ``lambda`` of **Eq. 3**, so
the dual solution is ``alpha = (K_F + l lam I)^{-1} y`` with ``K_F`` the ``l x l`` matrix of
Eq. 5 (with its ``1/n^2``). The paper's Eq. 4 / l.97 ``lambda`` equals ``n^2 l lam``; with it,
Eq. 4 as printed returns this classifier divided by ``n^2`` (it solves Eq. 3 for the targets
``y / n^2``), so the predictions agree (checked in ``tests/methods/test_fredholm.py``).

Memory: nothing here forms an ``n x n`` matrix: a block is ``A_X (KH A_L^T)``, the inner kernel
times the thin ``[n, l]`` block ``A_L^T`` in row blocks, then the outer weights of the rows. A linear
inner kernel is ``U (U^T B)`` (FredLin2: a linear kernel on ``m(x) = a(x)^T U``); a linear outer
kernel makes the classifier linear, ``c(x) = x^T w`` (FredLin1, :attr:`FredholmRLSC.coef_`).
Points may be dense (any device) or ``scipy.sparse`` (tf-idf, CPU; linear, Gaussian and polynomial
kernels). The classifiers take ``fit(X, y)`` with ``y = -1`` marking the unlabeled points.

Modules: :mod:`.kernel` (the operator, the dense block, the Gaussian path over widths),
:mod:`.solvers` (Eq. 3 and Eq. 7 on a Gram block), :mod:`.estimators` (:class:`FredholmRLSC`,
:class:`FredholmSVM`), :mod:`.random_features` (Sec. 5.3).
"""
from .estimators import FredholmRLSC, FredholmSVM
from .kernel import (FREDHOLM_INSTANCES, FredholmKernel, fredholm_gram, fredholm_instance, gaussian_fredholm_path,
                     kernel_from_sigma, median_sigma)
from .random_features import RandomFeatureFredholm, fredholm_random_features
from .solvers import effective_lam, onevsrest_targets, solve_hinge, solve_square

__all__ = [
    "FREDHOLM_INSTANCES", "fredholm_instance", "kernel_from_sigma", "median_sigma", "fredholm_gram", "FredholmKernel",
    "FredholmRLSC", "FredholmSVM", "RandomFeatureFredholm", "fredholm_random_features", "gaussian_fredholm_path",
    "solve_square", "solve_hinge", "effective_lam", "onevsrest_targets",
]
