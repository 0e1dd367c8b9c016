"""Memory: the ceiling a working set is refused against (:func:`memory_limit`,
:func:`check_allocation`), the free memory a tile is sized to (:func:`memory_available`,
:func:`tile_rows`), and the peak a run records (:func:`peak_rss_gb`); docs/operators.md. The readers of
``/proc`` and the cgroup files are module functions, so tests replace them to simulate a limit.
``reuse_freed_memory`` is the allocator setting the runner applies (glibc only).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import re
import sys

import torch

from .exceptions import MemoryLimitError

try:
    import resource
except ImportError:  # pragma: no cover - Windows
    resource = None
try:
    import psutil   # optional dependency: memory figures where there is no /proc
except ImportError:  # pragma: no cover
    psutil = None

__all__ = ["check_allocation", "memory_limit", "memory_available", "tile_rows", "format_bytes", "parse_bytes",
           "peak_rss_gb"]

_UNITS = {"": 1, "B": 1, "KB": 10 ** 3, "MB": 10 ** 6, "GB": 10 ** 9, "TB": 10 ** 12,
          "KIB": 2 ** 10, "MIB": 2 ** 20, "GIB": 2 ** 30, "TIB": 2 ** 40}

TILE_SHARE = 0.5     # a tile may use at most this share of memory_available()
SMALL_TILE = 4 << 20  # tiles up to this size (4 MiB) are used as asked, without reading any limit
_UNBOUNDED = 2 ** 62
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
MALLOC_THRESHOLD = 128 << 20   # blocks up to 128 MiB come from the heap; freed memory is trimmed above 128 MiB


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


# ----------------------------------------------------------------------------- readers (tests replace these)
def _read_meminfo() -> dict[str, int]:
    """``/proc/meminfo`` as ``{field: bytes}`` (``{}`` where there is no such file)."""
    out: dict[str, int] = {}
    try:
        with open("/proc/meminfo", "rb") as fh:
            for line in fh.read().split(b"\n")[:8]:       # MemTotal, MemAvailable come first
                key, _, rest = line.partition(b":")
                parts = rest.split()
                if parts and parts[0].isdigit():
                    out[key.strip().decode()] = int(parts[0]) * (1024 if parts[1:] == [b"kB"] else 1)
    except OSError:
        pass
    if not out and psutil is not None:  # pragma: no cover - platforms without /proc
        vm = psutil.virtual_memory()
        out = {"MemTotal": int(vm.total), "MemAvailable": int(vm.available)}
    return out


def _read_rlimit_as() -> int | None:
    """The soft ``RLIMIT_AS`` in bytes, ``None`` when unlimited (or on a platform without it)."""
    if resource is None:  # pragma: no cover - Windows
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return None if soft in (resource.RLIM_INFINITY, -1) or soft < 0 else int(soft)


def _read_vmsize() -> int:
    """The address space this process holds (``VmSize`` of ``/proc/self/status``), in bytes."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:  # pragma: no cover
        pass
    return 0


def _read_file(path: str) -> str | None:
    try:
        with open(path) as fh:
            return fh.read()
    except OSError:
        return None


_CGROUP_DIRS: dict[int, list] = {}


def _cgroup_dirs() -> list[tuple[str, str]]:
    """``(directory, version)`` of the memory cgroup of this process and of each cgroup above it,
    deepest first, that exist under ``/sys/fs/cgroup`` (found once per process)."""
    pid = os.getpid()
    if pid not in _CGROUP_DIRS:
        _CGROUP_DIRS.clear()
        _CGROUP_DIRS[pid] = _find_cgroup_dirs()
    return _CGROUP_DIRS[pid]


def _find_cgroup_dirs() -> list[tuple[str, str]]:
    text = _read_file("/proc/self/cgroup") or ""
    out: list[tuple[str, str]] = []
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":
            root, version = "/sys/fs/cgroup", "v2"
        elif "memory" in controllers.split(","):
            root, version = "/sys/fs/cgroup/memory", "v1"
        else:
            continue
        path = path.strip().strip("/")
        seen = set()
        while True:
            d = os.path.join(root, path) if path else root
            if d not in seen and os.path.isdir(d):
                out.append((d, version))
                seen.add(d)
            if not path:
                break
            path = os.path.dirname(path)
    return out


def _read_cgroup() -> tuple[int, int, str] | None:
    """``(limit, used, file)`` of the tightest memory cgroup (limit less use smallest), or ``None``
    when no cgroup limits memory. ``used`` leaves out the cgroup's reclaimable ``inactive_file``."""
    best = None
    for d, version in _cgroup_dirs():
        lim_file, use_file = (("memory.max", "memory.current") if version == "v2"
                              else ("memory.limit_in_bytes", "memory.usage_in_bytes"))
        lim_text = (_read_file(os.path.join(d, lim_file)) or "").strip()
        if not lim_text.isdigit():          # "max", or no such file
            continue
        limit = int(lim_text)
        if limit >= _UNBOUNDED:              # v1 writes 2^63 - page for "no limit"
            continue
        used = int((_read_file(os.path.join(d, use_file)) or "0").strip() or 0)
        stat = _read_file(os.path.join(d, "memory.stat")) or ""
        key = "inactive_file" if version == "v2" else "total_inactive_file"
        m = re.search(rf"^{key} (\d+)$", stat, re.M)
        if m:
            used = max(0, used - int(m.group(1)))
        if best is None or limit - used < best[0] - best[1]:
            best = (limit, used, os.path.join(d, lim_file))
    return best


# ----------------------------------------------------------------------------- the two numbers
def _env_limit() -> int | None:
    text = os.environ.get("GRAPHSTK_MAX_MEMORY")
    return parse_bytes(text) if text else None


def _device(device) -> torch.device:
    return torch.device(device) if device is not None else torch.device("cpu")


def memory_limit(device: torch.device | str | None = None, _info: dict | None = None) -> tuple[int, str]:
    """``(bytes, bound)``: the most memory a working set of this process may ever use on ``device``.

    The smallest of the physical memory (``MemTotal``; on CUDA the device's total), ``RLIMIT_AS``
    less the address space this process holds, the memory cgroup's limit less its use, and
    ``GRAPHSTK_MAX_MEMORY``; ``bound`` names the one that decided, for messages. It does not
    depend on what other programs hold at this instant (except through a shared cgroup's use):
    refusals (:func:`check_allocation`) compare with it.
    """
    device = _device(device)
    cands: list[tuple[int, str]] = []
    env = _env_limit()
    if env is not None:
        cands.append((env, "GRAPHSTK_MAX_MEMORY"))
    if device.type == "cuda":
        _, total = torch.cuda.mem_get_info(device)
        cands.append((int(total), f"the total memory of {device}"))
    else:
        info = _read_meminfo() if _info is None else _info
        if "MemTotal" in info:
            cands.append((info["MemTotal"], "physical memory (MemTotal)"))
        rl = _read_rlimit_as()
        if rl is not None:
            held = _read_vmsize()
            cands.append((max(0, rl - held), f"the address-space limit RLIMIT_AS (ulimit -v: {format_bytes(rl)}) "
                                             f"less the {format_bytes(held)} this process holds"))
        cg = _read_cgroup()
        if cg is not None:
            limit, used, path = cg
            cands.append((max(0, limit - used), f"the cgroup limit {path} ({format_bytes(limit)}) less the "
                                                f"{format_bytes(used)} the cgroup uses"))
    if not cands:  # pragma: no cover
        return _UNBOUNDED, "unknown (no /proc/meminfo, no psutil)"
    return min(cands, key=lambda c: c[0])


def memory_available(device: torch.device | str | None = None) -> tuple[int, str]:
    """``(bytes, bound)``: the memory free for this process at this instant, the smaller of
    :func:`memory_limit` and ``MemAvailable`` (on CUDA: the device's free memory).

    It changes with what other programs hold, so it only sizes tiles (:func:`tile_rows`) and
    never decides a refusal or a route.
    """
    device = _device(device)
    info = _read_meminfo() if device.type != "cuda" else {}
    limit = memory_limit(device, info)
    if device.type == "cuda":
        free, _ = torch.cuda.mem_get_info(device)
        now = (int(free), f"free memory on {device}")
    else:
        now = (info["MemAvailable"], "available system memory (MemAvailable)") if "MemAvailable" in info else limit
    return min(limit, now, key=lambda c: c[0])


def check_allocation(nbytes: float, what: str, hint: str, device: torch.device | str | None = None) -> None:
    """Raise ``MemoryLimitError`` before allocating ``nbytes`` if they exceed :func:`memory_limit`.

    Parameters
    ----------
    nbytes : float
        The working set about to be allocated (e.g. ``n * n * 8`` for a float64 kernel matrix).
    what : str
        What it is, for the message (``"the 60000 x 60000 kernel matrix"``).
    hint : str
        What to set instead (``"pass solver='cg' (products in blocks) or approx='nystroem'"``).
    device : torch.device, optional
        Where it would live (CPU by default).

    Compared with the ceiling of the process, never with the memory free at this instant: a
    working set that fits the ceiling is allocated even while another program holds memory.
    """
    limit, bound = memory_limit(device)
    if nbytes > limit:
        raise MemoryLimitError(f"{what} needs {format_bytes(nbytes)}, more than the {format_bytes(limit)} of "
                               f"{bound}; {hint}")


def tile_rows(rows: int, bytes_per_row: float, *, what: str, hint: str, min_rows: int = 1,
              fixed_bytes: float = 0.0, device: torch.device | str | None = None) -> int:
    """Rows of one tile: at most ``rows``, fewer when ``rows`` tiles would take more than
    ``TILE_SHARE`` of :func:`memory_available`, never fewer than ``min_rows``.

    Parameters
    ----------
    rows : int
        The rows asked for (a ``block_size``, or the default that fills ``2**22`` entries).
    bytes_per_row : float
        Bytes one row of the tile holds, temporaries included.
    what, hint : str
        For the refusal: raised (``MemoryLimitError``) only when ``fixed_bytes`` plus a tile
        of ``min_rows`` rows exceeds :func:`memory_limit`, i.e. cannot fit the process at all.
    min_rows : int, default 1
    fixed_bytes : float, default 0
        Bytes held beside the tile for the whole loop (outputs, accumulators).
    device : torch.device, optional

    Returns
    -------
    int
        The rows per tile, in ``[min(min_rows, rows), rows]``. A tile of at most ``SMALL_TILE``
        bytes (4 MiB, outputs included) is returned as asked without reading the limits (unless
        ``GRAPHSTK_MAX_MEMORY`` is set): the check would cost more than the product.
    """
    rows, min_rows = max(1, int(rows)), max(1, min(int(min_rows), int(rows)))
    if fixed_bytes + rows * bytes_per_row <= SMALL_TILE and not os.environ.get("GRAPHSTK_MAX_MEMORY"):
        return rows          # a few MB: nothing to shrink, and no file read inside a product loop
    check_allocation(fixed_bytes + min_rows * bytes_per_row, what, hint, device)
    free, _ = memory_available(device)
    fit = int((TILE_SHARE * free - fixed_bytes) // max(bytes_per_row, 1.0))
    return max(min_rows, min(rows, fit))


def peak_rss_gb() -> float:
    """This process's peak resident memory so far, in GiB (``2**30`` bytes): ``VmHWM`` of
    ``/proc/self/status``, else ``ru_maxrss``."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 2 ** 20          # kB
    except OSError:
        pass
    if resource is None:  # pragma: no cover - Windows: neither /proc nor getrusage
        return float("nan")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss      # KiB on Linux, bytes on macOS
    return peak / 2 ** 30 if sys.platform == "darwin" else peak / 2 ** 20


def reuse_freed_memory() -> bool:
    """Keep freed large blocks (up to ``MALLOC_THRESHOLD``) for reuse instead of handing them back to the OS.

    Raises glibc's mmap and trim thresholds: fresh blocks are zero-filled on first touch, which costs more
    than the engines' arithmetic on wide blocks. The runner calls it, library code never does
    (docs/operators.md). Returns ``True`` when applied; ``False`` off Linux/glibc or with
    ``GRAPHSTK_MALLOC=default`` (glibc's defaults kept).
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
    return bool(mallopt(M_MMAP_THRESHOLD, MALLOC_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, MALLOC_THRESHOLD))
