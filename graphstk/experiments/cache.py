"""A resumable, crash-safe cache of finished (dataset, method, setting, p_test, seed) results.

One JSON file per entry in ``DIR/cache/``, written to a temporary name and moved into place
(:func:`os.replace`); the key payload is stored inside and checked on reading, and a sha256 digest
of key and record makes a damaged entry recompute, with a warning.
"""
from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import re
import socket
import tempfile
import warnings

import torch

from ..exceptions import RunError

try:
    import fcntl
except ImportError:   # pragma: no cover - not POSIX: nothing is locked
    fcntl = None

__all__ = ["ResultCache", "atomic_write_text", "cache_key", "code_fingerprint", "record_digest", "run_lock", "umask_mode"]

LOCK_NAME = ".graphstk-run.lock"

# Source code whose change can change a cached result: the engines and the method resolution
# (each protocol adds its own modules and the registrations, Protocol.extra_code).
CODE_PACKAGES = ("graphstk.methods", "graphstk.spectral", "graphstk.operators")
CODE_MODULES = ("graphstk.experiments.registry", "graphstk.experiments.kernels", "graphstk._spaces")

CACHE_VERSION = 2  # bump when the meaning of a cached record changes


def umask_mode(mode: int = 0o666) -> int:
    """``mode`` with the process umask applied: what ``open()`` would give a new file."""
    mask = os.umask(0)
    os.umask(mask)
    return mode & ~mask


def atomic_write_text(path: str, text: str) -> None:
    """Write ``text`` to ``path`` so that readers see the old file or the new one, never half.

    The file gets the permissions of a file created with ``open()`` (``0o666`` minus the
    umask, e.g. ``0o644`` under umask 022), not the ``0o600`` of the temporary file.
    """
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".part", dir=folder)
    try:
        os.fchmod(fd, umask_mode())
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def cache_key(payload: dict) -> str:
    """sha256 of the canonical JSON of ``payload`` (plus the cache format version)."""
    text = json.dumps({"cache_version": CACHE_VERSION, **payload}, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def record_digest(key: str, record: dict) -> str:
    """sha256 of the canonical JSON of a cache entry's ``key`` and ``record``: stored beside them and
    checked on reading."""
    text = json.dumps({"key": key, "record": record}, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def code_fingerprint(packages=CODE_PACKAGES, modules=CODE_MODULES) -> str:
    """Hash of the source files of the engine and the protocol, plus the torch version.

    Part of every cache key, so that results computed by other code are never reused.
    """
    h = hashlib.sha256(torch.__version__.encode())
    files = []
    for name in packages:     # the files are found from the import specs: nothing is imported to hash its source
        try:
            spec = importlib.util.find_spec(name)
        except ImportError:
            spec = None
        for folder in (spec and spec.submodule_search_locations) or []:
            for dirpath, _dirs, names in os.walk(folder):
                files += [os.path.join(dirpath, f) for f in names if f.endswith(".py")]
    for name in modules:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.has_location:
            files.append(spec.origin)
    for path in sorted(set(files)):
        with open(path, "rb") as fh:
            h.update(os.path.basename(path).encode())
            h.update(hashlib.sha256(fh.read()).digest())
    return h.hexdigest()[:24]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "-", text).strip("-") or "x"


class ResultCache:
    """``get``/``put`` JSON records by key payload in a folder (created on first write)."""

    def __init__(self, directory: str):
        self.directory = directory
        self.hits = 0
        self.writes = 0

    def _path(self, label: str, key: str) -> str:
        return os.path.join(self.directory, f"{_slug(label)}-{key[:16]}.json")

    def get(self, label: str, payload: dict) -> dict | None:
        key = cache_key(payload)
        path = self._path(label, key)
        try:
            with open(path, encoding="utf-8") as fh:
                stored = json.load(fh)
        except (FileNotFoundError, json.JSONDecodeError, UnicodeDecodeError):
            return None
        if not isinstance(stored, dict) or stored.get("key") != key:
            return None
        if stored.get("digest") != record_digest(key, stored.get("record")):
            warnings.warn(f"the cached result {path} does not match its digest (edited or damaged); "
                          "recomputing it", UserWarning, stacklevel=2)
            return None
        self.hits += 1
        return stored["record"]

    def put(self, label: str, payload: dict, record: dict) -> None:
        key = cache_key(payload)
        # key order is kept (not sorted) so that a record read back equals the one written
        record = json.loads(json.dumps(record, default=str))     # what a reader gets back
        text = json.dumps({"key": key, "payload": payload, "record": record, "digest": record_digest(key, record)},
                          indent=1, default=str)
        atomic_write_text(self._path(label, key), text)
        self.writes += 1


@contextlib.contextmanager
def run_lock(out_dir: str):
    """Hold ``out_dir/.graphstk-run.lock`` for the length of a run; a second run on the same output
    folder is refused at once (:class:`~graphstk.exceptions.RunError` naming the folder and the
    process that holds it, its pid and host) instead of doing all the work again beside the first
    and racing on its results files. ``run.py --distributed`` takes the same lock on process 0 and
    shares its decision with the other processes (:func:`graphstk.experiments.distributed_run.run_distributed`).
    The lock is an ``fcntl`` lock: it goes with the process, so a killed run never leaves a stale
    lock behind. Without ``fcntl`` (Windows) nothing is locked."""
    if fcntl is None:   # pragma: no cover - not POSIX
        yield
        return
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, LOCK_NAME)
    fh = open(path, "a+")
    try:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read().strip() or "another process"
            raise RunError(f"another run is using the output folder {out_dir} (its lock {path} is held by "
                           f"{holder}); wait for it to finish (this run would then reuse its finished results "
                           "from the cache), or pass a different --out") from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"pid {os.getpid()} on {socket.gethostname()}\n")
        fh.flush()
        try:
            yield
        finally:
            fh.seek(0)
            fh.truncate()
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
    finally:
        fh.close()
