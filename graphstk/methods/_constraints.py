"""Parameter constraints: scikit-learn's constraint objects (imported from its private module here alone) and the
constraints the estimators share, checked at ``fit`` (``InvalidParameterError`` naming the parameter).
"""
from __future__ import annotations

from numbers import Integral, Real

from sklearn.utils._param_validation import HasMethods, Interval, Options, StrOptions

__all__ = ["Interval", "StrOptions", "Options", "HasMethods", "Integral", "Real", "kernel_names", "SIGMA", "POSITIVE",
           "NON_NEGATIVE", "POSITIVE_INT", "OPTIONAL_POSITIVE_INT", "store_params"]


def kernel_names(*extra: str) -> StrOptions:
    """``StrOptions`` of every name :func:`graphstk.operators.kernel_function` accepts (aliases included), plus
    ``extra`` (e.g. ``"precomputed"``). The kernel registry is read here, when a feature-kernel estimator is
    defined, so the graph estimators' constraints do not load it."""
    from ..operators.kernels import KERNEL_NAMES   # imported here: an STKR-only run never loads the kernel registry
    return StrOptions(set(KERNEL_NAMES) | set(extra))


def store_params(estimator, params: dict) -> None:
    """Set every ``__init__`` argument in ``params`` (the ``__init__``'s ``locals()``) as an attribute."""
    for name, value in params.items():
        if name not in ("self", "__class__"):
            setattr(estimator, name, value)


#: a kernel width ``sigma > 0``, or ``None`` for the median heuristic
SIGMA = [Interval(Real, 0, None, closed="neither"), None]
POSITIVE = [Interval(Real, 0, None, closed="neither")]
NON_NEGATIVE = [Interval(Real, 0, None, closed="left")]
POSITIVE_INT = [Interval(Integral, 1, None, closed="left")]
OPTIONAL_POSITIVE_INT = [Interval(Integral, 1, None, closed="left"), None]
