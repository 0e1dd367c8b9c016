"""Validation of numeric hyperparameters at the public boundary (one message style everywhere)."""
from __future__ import annotations

import errno
import math
import numbers
import os
import sys
import tempfile

import torch

__all__ = ["check_real", "check_positive", "check_int"]


def _scalar(value):
    """A 0-d torch tensor / numpy array as a Python number; anything else unchanged."""
    if not isinstance(value, (numbers.Real, str)) and hasattr(value, "item"):
        try:
            return value.item()
        except (ValueError, RuntimeError):
            return value
    return value


def check_real(name: str, value, *, low: float | None = 0.0, high: float | None = None,
               low_open: bool = True, high_open: bool = True) -> float:
    """``float(value)`` if ``value`` is a finite real number in the given interval, else a clear error.

    Parameters
    ----------
    name : str
        The parameter's name, used in the message (``"beta"``).
    value : int | float | numpy / torch scalar
        Strings, booleans, complex numbers, NaN and infinities are refused.
    low, high : float or None, default 0.0 and None
        Interval bounds (``None``: unbounded). The default accepts positive numbers.
    low_open, high_open : bool, default True
        Whether the bounds themselves are excluded.

    Returns
    -------
    float

    Raises
    ------
    TypeError
        ``value`` is not a real number (e.g. the string ``"1e-3"``).
    ValueError
        ``value`` is NaN, infinite or outside the interval.
    """
    value = _scalar(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        hint = f" (write {name}={value}, without quotes)" if isinstance(value, str) else ""
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}{hint}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if low is not None and (v <= low if low_open else v < low):
        raise ValueError(f"{name} must be {'>' if low_open else '>='} {low:g}, got {value!r}")
    if high is not None and (v >= high if high_open else v > high):
        raise ValueError(f"{name} must be {'<' if high_open else '<='} {high:g}, got {value!r}")
    return v


def check_positive(name: str, value) -> float:
    """``float(value)``, or a clear error naming ``name`` unless it is finite and > 0."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a positive number, got {value!r}") from None
    if not (v > 0.0) or not math.isfinite(v):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return v


def check_int(name: str, value, *, low: int | None = 1, allow_none: bool = False) -> int | None:
    """``int(value)`` if ``value`` is an integer ``>= low`` (``None`` passes when ``allow_none``)."""
    if value is None and allow_none:
        return None
    value = _scalar(value)
    ok = not isinstance(value, bool) and isinstance(value, numbers.Real) and float(value) == int(value) \
        if isinstance(value, numbers.Real) and math.isfinite(float(value)) else False
    if not ok or (low is not None and int(value) < low):
        bound = f" >= {low}" if low is not None else ""
        raise ValueError(f"{name} must be an integer{bound}, got {value!r}")
    return int(value)


def user_stacklevel() -> int:
    """The ``stacklevel`` that makes a warning point at the first caller outside graphstk and torch
    (so that a warning raised deep inside ``module(...)`` or ``est.fit(...)`` shows the user's line)."""
    skip = (os.path.dirname(os.path.abspath(__file__)), os.path.dirname(os.path.abspath(torch.__file__)))
    frame, level = sys._getframe(1), 1   # level 1 = the function calling warnings.warn's caller, adjusted below
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(skip):
        frame, level = frame.f_back, level + 1
    return level


def check_device(device, name: str = "device"):
    """``device`` as a :class:`torch.device` (``None`` stays ``None``), refused with a clear message
    when it names CUDA and this torch has no CUDA (a CPU build, or no visible GPU), instead of
    torch's own assertion at the first allocation."""
    if device is None:
        return None
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as err:
        raise ValueError(f"{name}={device!r} is not a torch device ({err}); pass e.g. 'cpu' or 'cuda:0'") from None
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            why = ("this torch build has no CUDA support" if torch.version.cuda is None
                   else "no CUDA device is visible (check CUDA_VISIBLE_DEVICES and the driver)")
            raise ValueError(f"{name}={device!r}: {why} (torch {torch.__version__}); pass {name}='cpu', or leave "
                             f"{name}=None to compute where the inputs are")
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise ValueError(f"{name}={device!r}: only {torch.cuda.device_count()} CUDA device(s) are visible "
                             f"(cuda:0..cuda:{torch.cuda.device_count() - 1})")
    return dev


def check_out_dir(path: str, name: str = "results") -> None:
    """Make ``path`` a writable output folder, or raise ``ValueError`` saying what is wrong with it (an
    existing file, a folder that cannot be created or written: read-only, ``/proc``) and the folder to
    pass instead. Creates the folder when it is missing, as the run would. ``name`` names the
    suggested folder (under the system's temporary folder)."""
    where = os.path.join(tempfile.gettempdir(), name)
    if os.path.exists(path) and not os.path.isdir(path):
        raise ValueError(f"--out {path}: is an existing file, not a folder; pass a writable folder, e.g. --out {where}")
    try:
        os.makedirs(path, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".graphstk-probe-", dir=path)
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        why = {errno.EACCES: "no permission to write there", errno.EPERM: "no permission to write there",
               errno.EROFS: "a read-only file system", errno.ENOTDIR: "a part of the path is a file, not a folder",
               errno.ENOSPC: "no space left on the device"}.get(err.errno, err.strerror or str(err))
        raise ValueError(f"--out {path}: cannot write results there ({why}); pass a writable folder, e.g. "
                         f"--out {where}") from None
