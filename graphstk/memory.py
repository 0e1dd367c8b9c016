"""Memory checks before large allocations: refuse early, with the size and the option that fits.

Every exact path that materialises something of size ``O(n^2)`` or ``O(n D)`` (a kernel
matrix, a Gram block, an eigendecomposition, a feature map, an MMD statistic) calls
:func:`check_allocation` first. It compares the bytes needed with the memory available:

* the limit ``GRAPHSTK_MAX_MEMORY`` (bytes, or with a unit: ``8GB``, ``512MiB``), when set;
* else, on CPU, the memory the operating system reports available (``/proc/meminfo``'s
  ``MemAvailable``, or :mod:`psutil` elsewhere); on CUDA, ``torch.cuda.mem_get_info``.

and raises :class:`~graphstk.exceptions.MemoryLimitError` naming the size, what is free, and
the option that fits (``approx=``, ``rank=``, ``n_components=``, a block size, a subsample).
The check costs microseconds; nothing is allocated before it.
"""
from __future__ import annotations

import os
import re

import torch

from .exceptions import MemoryLimitError

__all__ = ["check_allocation", "available_bytes", "format_bytes", "parse_bytes"]

_UNITS = {"": 1, "B": 1, "KB": 10 ** 3, "MB": 10 ** 6, "GB": 10 ** 9, "TB": 10 ** 12,
          "KIB": 2 ** 10, "MIB": 2 ** 20, "GIB": 2 ** 30, "TIB": 2 ** 40}


def parse_bytes(text: str) -> int:
    """``"8GB"`` -> 8e9, ``"512MiB"`` -> 536870912, ``"1e9"`` -> 1e9 (a clear error otherwise)."""
    m = re.fullmatch(r"\s*([0-9.eE+]+)\s*([A-Za-z]*)\s*", str(text))
    if not m or m.group(2).upper() not in _UNITS:
        raise ValueError(f"cannot read {text!r} as a memory size; write e.g. 8GB, 512MiB or 1e9")
    return int(float(m.group(1)) * _UNITS[m.group(2).upper()])


def format_bytes(n: float) -> str:
    """``2.9e10`` -> ``'28.8 GB'``."""
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if abs(n) < 1000 or unit == "PB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1000.0
    return f"{n:.1f} PB"  # pragma: no cover


def available_bytes(device: torch.device | str | None = None) -> tuple[int, str]:
    """``(bytes, where)``: what an allocation on ``device`` may use, and where that number comes from."""
    limit = os.environ.get("GRAPHSTK_MAX_MEMORY")
    if limit:
        return parse_bytes(limit), "GRAPHSTK_MAX_MEMORY"
    device = torch.device(device) if device is not None else torch.device("cpu")
    if device.type == "cuda":
        free, _ = torch.cuda.mem_get_info(device)
        return int(free), f"free memory on {device}"
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024, "available system memory"
    except OSError:
        pass
    try:  # pragma: no cover - platforms without /proc
        import psutil
        return int(psutil.virtual_memory().available), "available system memory"
    except ImportError:  # pragma: no cover
        return 2 ** 62, "unknown (no /proc/meminfo, no psutil)"


def check_allocation(nbytes: float, what: str, hint: str, device: torch.device | str | None = None) -> None:
    """Raise :class:`MemoryLimitError` before allocating ``nbytes`` if they do not fit.

    Parameters
    ----------
    nbytes : float
        The size about to be allocated (e.g. ``n * n * 8`` for a float64 kernel matrix).
    what : str
        What it is, for the message (``"the 60000 x 60000 kernel matrix"``).
    hint : str
        What to set instead (``"pass solver='cg' (products in blocks) or approx='nystroem'"``).
    device : torch.device, optional
        Where it would live (CPU by default).
    """
    free, where = available_bytes(device)
    if nbytes > free:
        raise MemoryLimitError(f"{what} needs {format_bytes(nbytes)}, more than the {format_bytes(free)} of "
                               f"{where}; {hint}")
