"""Keep freed large blocks for reuse instead of handing them back to the OS (glibc only).

glibc's ``malloc`` serves every block above ``M_MMAP_THRESHOLD`` (at most 32 MiB by default) with
a fresh ``mmap`` and unmaps it on ``free``. Each such block is then zero-filled page by page on
first touch, every time: on this project's 2-core machine a fresh ``[18333, 300]`` float64
tensor (44 MB) costs 11-13 ms before it is written, against 1.6 ms for an in-place pass over
it, so the engines' temporaries (one per operator product, per out-of-place update) cost more
than the arithmetic on wide blocks. With ``M_MMAP_THRESHOLD`` and ``M_TRIM_THRESHOLD`` raised,
freed blocks stay in the heap and the next tensor of that size reuses them: the same
out-of-place ``addcmul`` takes 2.6 ms instead of 13.6 ms. The price is that the process keeps
its peak heap until it exits, which suits a benchmark run.

Only blocks up to ``THRESHOLD`` (128 MiB) come from the heap. Larger ones (the ``[N, K]`` blocks
of a graph of millions of nodes) are mapped and unmapped as glibc does by default: a heap that
holds them grows with every pattern of sizes it cannot fit into its freed holes, and keeps that
peak. On ``configs/dcsbm_10m.yaml`` (10^7 nodes, blocks of 0.25 to 0.8 GB) a 1 GiB threshold left
the processes of ``torchrun --nproc-per-node 2 ... --distributed`` well above what their live
blocks need; the peaks measured with this threshold are in ``docs/results/dcsbm_10m_distributed/``.
At that size zero-filling a fresh block costs little beside the sparse product that writes it.

The runner (``run.py``, ``python -m graphstk``) and ``bench/suite.py`` call
:func:`reuse_freed_memory` at start; library code never does (it changes the whole process).
Set ``GRAPHSTK_MALLOC=default`` to keep glibc's defaults.
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
