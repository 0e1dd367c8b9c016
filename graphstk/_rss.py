"""The peak resident memory of this process, as the runner records it in ``results.json``.

``VmHWM`` of ``/proc/self/status`` is the high-water mark of this process's own resident set;
``ru_maxrss`` (:func:`resource.getrusage`) is the fallback where ``/proc`` is absent (it can also
count pages a forked child shared with its parent at the fork, which ``VmHWM`` does not).
"""
from __future__ import annotations

import resource
import sys

__all__ = ["peak_rss_gb"]


def peak_rss_gb() -> float:
    """This process's peak resident memory so far, in GiB (``2**30`` bytes)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 2 ** 20          # kB
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss      # KiB on Linux, bytes on macOS
    return peak / 2 ** 30 if sys.platform == "darwin" else peak / 2 ** 20
