"""Keep freed large blocks (up to ``THRESHOLD``) for reuse instead of handing them back to the OS
(glibc only): fresh blocks are zero-filled on first touch, which costs more than the engines'
arithmetic on wide blocks. The runner calls :func:`reuse_freed_memory`, library code never does;
``GRAPHSTK_MALLOC=default`` keeps glibc's defaults. Measurements: docs/operators.md.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
THRESHOLD = 128 << 20   # blocks up to 128 MiB come from the heap; freed memory is trimmed above 128 MiB


def reuse_freed_memory() -> bool:
    """Raise glibc's mmap and trim thresholds to ``THRESHOLD`` (see the module docstring).

    Returns ``True`` when applied; ``False`` off Linux/glibc or with ``GRAPHSTK_MALLOC=default``.
    """
    if os.environ.get("GRAPHSTK_MALLOC", "").lower() == "default" or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):   # musl and others have no mallopt
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    # ``man mallopt`` caps M_MMAP_THRESHOLD at 32 MiB on 64-bit; glibc 2.36 (this project's machines)
    # accepts 128 MiB and then serves a 100 MiB block from the heap. Where it is refused, nothing changes.
    return bool(mallopt(M_MMAP_THRESHOLD, THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, THRESHOLD))
