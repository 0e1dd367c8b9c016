"""The scikit-learn boundary: arrays in, arrays out, and semi-supervised labels as ``y = -1``.

NumPy input goes through scikit-learn's ``validate_data`` and comes back as NumPy
(:func:`to_output`); a torch tensor is checked in torch and stays on its device (the array-API
convention). ``-1`` marks an unlabeled point, as in :class:`sklearn.semi_supervised.LabelSpreading`.
"""
from __future__ import annotations

import numbers
import re
import warnings

import numpy as np
import scipy.sparse as sp
import torch
from sklearn.exceptions import DataConversionWarning
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data  # noqa: F401  (re-exported)
from torch import Tensor

from .exceptions import LabelError

__all__ = ["validate_features", "to_output", "semi_supervised_labels", "is_torch", "check_is_fitted",
           "check_positive_int", "torch_generator"]

_TORCH_FLOATS = (torch.float32, torch.float64)


def is_torch(X) -> bool:
    """Whether ``X`` is a torch tensor (results then go back as tensors on its device)."""
    return isinstance(X, Tensor)


def validate_features(estimator, X, *, reset: bool, dtype: torch.dtype | None = None,
                      ensure_min_samples: int = 1, accept_sparse: bool = False):
    """Check a feature matrix ``X`` ``[n_samples, n_features]`` and return it as a float tensor.

    Parameters
    ----------
    estimator : BaseEstimator
        Gets ``n_features_in_`` when ``reset`` (in ``fit``); when not, ``X`` must have that
        many columns (``predict``/``transform``).
    X : array-like or Tensor
        NumPy input is checked by :func:`sklearn.utils.validation.validate_data` (which
        refuses sparse, complex, object, empty and non-finite input with scikit-learn's
        messages); a tensor is checked the same way in torch, on its device.
    reset : bool
        ``True`` in ``fit``.
    dtype : torch.dtype, optional
        The computation dtype. Default: float32 input stays float32, anything else becomes float64.
    ensure_min_samples : int, default 1
    accept_sparse : bool, default False
        Let ``scipy.sparse`` input through (as a float64 CSR matrix, for estimators that work
        on sparse points); otherwise it is refused with scikit-learn's message.

    Returns
    -------
    Tensor ``[n_samples, n_features]`` of ``dtype``, on the input's device (CPU for NumPy), or
    a ``scipy.sparse.csr_matrix`` when ``accept_sparse`` and ``X`` is sparse.
    """
    if not is_torch(X):
        if accept_sparse and sp.issparse(X):
            return validate_data(estimator, X, reset=reset, accept_sparse="csr", dtype=np.float64,
                                 ensure_min_samples=ensure_min_samples)
        try:
            Xn = validate_data(estimator, X, reset=reset, dtype=[np.float64, np.float32],
                               ensure_min_samples=ensure_min_samples)
        except ValueError as err:     # scikit-learn's feature-count message, with what to pass
            m = None if reset else re.match(r"X has (\d+) features, but \w+ is expecting (\d+) features", str(err))
            if m is None:
                raise
            raise ValueError(f"{err} Pass X with the {m.group(2)} columns it was fitted on, in the same order (or "
                             f"refit it on these {m.group(1)} columns).") from None
        out = torch.from_numpy(np.ascontiguousarray(Xn))
        return out.to(dtype) if dtype is not None else out
    name = type(estimator).__name__
    if X.is_sparse or X.layout != torch.strided:
        raise TypeError(f"{name} needs a dense feature matrix, got a {X.layout} tensor; pass X.to_dense() "
                        "(or a dense NumPy array)")
    if X.is_complex():
        raise ValueError(f"Complex data not supported: {name} got a {X.dtype} tensor; pass its real part "
                         "explicitly (X.real) if that is what you mean")
    if X.dim() != 2:
        raise ValueError(f"Expected 2D array, got {X.dim()}D tensor of shape {tuple(X.shape)} instead: reshape "
                         "it to [n_samples, n_features] (X.reshape(-1, 1) for a single feature)")
    if X.shape[0] < ensure_min_samples:
        raise ValueError(f"Found array with {X.shape[0]} sample(s) (shape={tuple(X.shape)}) while a minimum of "
                         f"{ensure_min_samples} is required by {name}.")
    if X.shape[1] < 1:
        raise ValueError(f"Found array with 0 feature(s) (shape={tuple(X.shape)}) while a minimum of 1 is "
                         f"required by {name}.")
    if dtype is None:
        dtype = X.dtype if X.dtype in _TORCH_FLOATS else torch.float64
    X = X.to(dtype)
    if not bool(torch.isfinite(X).all()):
        raise ValueError(f"Input X contains NaN or infinity: {name} needs finite features")
    if reset:
        estimator.n_features_in_ = int(X.shape[1])
    else:
        check_is_fitted(estimator, "n_features_in_")
        if X.shape[1] != estimator.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but {name} is expecting {estimator.n_features_in_} "
                             f"features as input. Pass X with the {estimator.n_features_in_} columns it was fitted "
                             f"on, in the same order (or refit it on these {X.shape[1]} columns).")
    return X


def to_output(values: Tensor, like):
    """``values`` in the caller's array type: a tensor when ``like`` is a tensor, else NumPy."""
    if is_torch(like):
        return values.to(like.device) if values.device != like.device else values
    return values.detach().cpu().numpy()


def semi_supervised_labels(y, n_samples: int, *, min_classes: int = 1):
    """Read ``y`` with ``-1`` marking unlabeled points (:class:`sklearn.semi_supervised.LabelSpreading`).

    Parameters
    ----------
    y : array-like or Tensor ``[n_samples]``
        Class labels of any type scikit-learn accepts (ints, strings); ``-1`` (or the string
        ``"-1"`` for string labels) marks an unlabeled point.
    n_samples : int
        Rows of ``X`` (``y`` must have as many entries).
    min_classes : int, default 1
        Fewest distinct classes among the labeled points (2 for a classifier).

    Returns
    -------
    labeled : ndarray of bool ``[n_samples]``
    classes : ndarray
        The sorted distinct labels of the labeled points (the estimator's ``classes_``).
    codes : ndarray of int64 ``[n_samples]``
        ``classes[codes[i]] == y[i]`` for labeled points, ``-1`` elsewhere.

    Raises
    ------
    LabelError
        A label is NaN or infinite, negative other than ``-1``, continuous (non-integer
        floats), or of mixed types; the message names the first offending entries.
    """
    yn = y.detach().cpu().numpy() if is_torch(y) else np.asarray(y)
    if yn.ndim == 2 and yn.shape[1] == 1:
        warnings.warn("A column-vector y was passed when a 1d array was expected. Please change the shape of y "
                      "to (n_samples,), for example using ravel().", DataConversionWarning, stacklevel=3)
        yn = yn.ravel()
    if yn.ndim != 1:
        raise LabelError(f"y must be 1-D with one label per sample, got shape {yn.shape}")
    if yn.shape[0] != n_samples:
        raise LabelError(f"y has {yn.shape[0]} entries but X has {n_samples} samples")
    if yn.dtype == object:
        kinds = {type(v).__name__ for v in yn if not isinstance(v, (str, np.str_))}
        if kinds and any(isinstance(v, (str, np.str_)) for v in yn):
            bad = [i for i, v in enumerate(yn) if not isinstance(v, (str, np.str_))][:5]
            raise LabelError(f"y mixes strings and {', '.join(sorted(kinds))} (entries {bad}): use one label type")
        if not kinds:
            yn = yn.astype(str)
    if yn.dtype.kind in "US":
        labeled = yn != "-1"
    elif yn.dtype.kind in "biuf" or yn.dtype == object:
        if yn.dtype.kind == "c":
            raise LabelError("complex labels are not class labels")
        try:
            yf = yn.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise LabelError(f"y cannot be read as class labels: {exc}") from exc
        bad = np.flatnonzero(~np.isfinite(yf))
        if bad.size:
            raise LabelError(f"y has NaN or infinite entries at positions {bad[:5].tolist()}: mark unlabeled "
                             "points with -1")
        labeled = yf != -1
        if yn.dtype.kind == "f" and labeled.any() and not np.all(yf[labeled] == np.round(yf[labeled])):
            raise LabelError(f"Unknown label type: continuous. y has non-integer values (e.g. "
                             f"{yf[labeled][yf[labeled] != np.round(yf[labeled])][:3].tolist()}); a classifier "
                             "needs class labels")
        bad = np.flatnonzero((yf < 0) & (yf != -1))
        if bad.size:
            raise LabelError(f"y has negative labels other than -1 at positions {bad[:5].tolist()} (values "
                             f"{yf[bad[:5]].tolist()}): only -1 marks an unlabeled point")
    else:
        raise LabelError(f"y of dtype {yn.dtype} cannot be read as class labels")
    if labeled.any():
        kind = type_of_target(yn[labeled])
        if kind not in ("binary", "multiclass"):
            raise LabelError(f"Unknown label type: {kind}. A classifier needs class labels")
    classes, codes_lab = np.unique(yn[labeled], return_inverse=True)
    if classes.size < min_classes:
        raise LabelError(f"the labeled points have {classes.size} class(es) ({classes.tolist()}); at least "
                         f"{min_classes} are needed (only -1 marks an unlabeled point)")
    codes = np.full(n_samples, -1, dtype=np.int64)
    codes[labeled] = codes_lab
    return labeled, classes, codes


def check_positive_int(name: str, value) -> int:
    """``int(value)`` for an integer ``>= 1`` (NumPy integers included), else a ``ValueError`` naming it."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def torch_generator(random_state) -> torch.Generator:
    """A CPU :class:`torch.Generator` from scikit-learn's ``random_state``: an int seeds it
    directly (``manual_seed(random_state)``), ``None`` seeds it from the operating system, a
    :class:`numpy.random.RandomState` / ``Generator`` draws its seed (so the caller's stream advances).
    Draw on the host with it and move the result to the device once."""
    g = torch.Generator()
    if random_state is None:
        g.seed()
    elif isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        g.manual_seed(int(random_state))
    elif isinstance(random_state, np.random.Generator):
        g.manual_seed(int(random_state.integers(np.iinfo(np.int32).max)))
    else:
        g.manual_seed(int(check_random_state(random_state).randint(np.iinfo(np.int32).max)))
    return g
