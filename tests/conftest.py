"""Shared test fixtures: writable per-session copies of the benchmark datasets.

The benchmark graphs live outside the repository, in ``$GRAPHSTK_DATA`` if set, else in
``<repo>/../shared/datasets`` (CI clones the repository next to ``shared/``). That folder
is read-only and PyG writes ``processed/`` next to ``raw/``, so each dataset folder a
test asks for is copied, once per session and only when first needed, into a temporary
data root. Tests that need an absent dataset skip with a reason.

Fixtures (all session-scoped):

``data_root``
    A :class:`DatasetCopies`; ``data_root.path`` is the temporary data root (in
    ``$GRAPHSTK_TEST_TMPDIR``, else ``/dev/shm`` when it has room, else the system temp
    directory; removed at the end of the session) and
    ``data_root.require(name)`` copies one dataset folder into it and returns the root.
``dataset_root``
    ``dataset_root(name) -> Path``: the temporary data root, with ``name`` copied into it.
``load_shared``
    ``load_shared(name, features=True) -> Data``: ``graphstk.load_dataset(name, root=...,
    features=features)``, loaded at most once per session. The object is shared between
    tests: do not modify it in place. ``features=False`` (graph + labels only) is fast for
    every dataset; with features, CS and Physics take 10-20 s each (PyG densifies them).
``cora``, ``dblp``
    ``load_shared("Cora")`` and ``load_shared("DBLP")``.
"""
from __future__ import annotations

import os
import shutil
import stat
import tempfile
import warnings
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def shared_datasets_dir() -> Path:
    """Where the read-only benchmark copies live: ``$GRAPHSTK_DATA`` or ``<repo>/../shared/datasets``."""
    env = os.environ.get("GRAPHSTK_DATA")
    return Path(env).expanduser().resolve() if env else (REPO.parent / "shared" / "datasets").resolve()


def _make_writable(path: Path) -> None:
    for dirpath, dirnames, filenames in os.walk(path):
        os.chmod(dirpath, os.stat(dirpath).st_mode | stat.S_IWUSR | stat.S_IXUSR | stat.S_IRUSR)
        for f in filenames:
            p = os.path.join(dirpath, f)
            os.chmod(p, os.stat(p).st_mode | stat.S_IWUSR | stat.S_IRUSR)


class DatasetCopies:
    """Lazily copies dataset folders from a read-only source into a writable temporary root."""

    def __init__(self, source: Path, path: Path):
        self.source = source
        self.path = path
        self._done: set[str] = set()

    def require(self, name: str) -> Path:
        """Copy the folder of dataset ``name`` (if not yet copied) and return the data root.

        Skips the calling test when the dataset is not in the source folder.
        """
        from graphstk.data import get_spec

        spec = get_spec(name)
        if spec.name in self._done:
            return self.path
        src = self.source / spec.dirname
        raw_ok = all((src / "raw" / f).is_file() for f in spec.raw_files)
        alt_ok = spec.name == "PubMed" and (src / "alt" / "pubmed_graph_labels.npz").is_file()
        if not (raw_ok or alt_ok):
            pytest.skip(f"dataset {spec.name} is not available in {self.source} "
                        f"(expected {spec.dirname}/raw/{', '.join(spec.raw_files)}; see SOURCES.md there)")
        dst = self.path / spec.dirname
        if not dst.exists():
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("processed"))
            _make_writable(dst)
        self._done.add(spec.name)
        return self.path


def _scratch_base() -> str | None:
    """Where to put the session's data root: ``$GRAPHSTK_TEST_TMPDIR``, else ``/dev/shm`` when it
    has room (PyG writes about 1.7 GB of processed/ files for CS + Physics; RAM halves the load
    time), else the system temporary directory."""
    env = os.environ.get("GRAPHSTK_TEST_TMPDIR")
    if env:
        return env
    shm = Path("/dev/shm")
    try:
        if shm.is_dir() and os.access(shm, os.W_OK) and shutil.disk_usage(shm).free > 6 * 2**30:
            return str(shm)
    except OSError:
        pass
    return None


@pytest.fixture(scope="session")
def data_root():
    """Writable temporary data root filled lazily from the shared datasets; removed at session end."""
    source = shared_datasets_dir()
    if not source.is_dir():
        pytest.skip(f"benchmark datasets not found at {source} (set GRAPHSTK_DATA or put shared/ beside the repo)")
    path = Path(tempfile.mkdtemp(prefix="graphstk_data_", dir=_scratch_base()))
    try:
        yield DatasetCopies(source, path)
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def dataset_root(data_root):
    """``dataset_root(name) -> Path``: a writable data root holding a copy of ``name``."""
    return data_root.require


@pytest.fixture(scope="session")
def load_shared(data_root):
    """``load_shared(name, features=True) -> Data``, cached per session (do not modify the result).

    ``features=False`` is the fast graph + labels path of :func:`graphstk.load_dataset`
    (no dense feature matrix; CS/Physics load in well under a second instead of 10-20 s).
    """
    from graphstk.data import FeaturesUnavailableWarning, get_spec, load_dataset

    cache = {}

    def load(name: str, features: bool = True):
        key = (get_spec(name).name, bool(features))
        if key not in cache:
            root = data_root.require(key[0])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FeaturesUnavailableWarning)
                cache[key] = load_dataset(key[0], root=root, features=features)
        return cache[key]

    return load


@pytest.fixture(scope="session")
def cora(load_shared):
    return load_shared("Cora")


@pytest.fixture(scope="session")
def dblp(load_shared):
    return load_shared("DBLP")


@pytest.fixture
def lock_holder():
    """``lock_holder(folder)``: a context manager that runs another process holding
    ``run_lock(folder)`` (the lock of a run writing there) and yields that process; on exit the
    process releases the lock and ends."""
    import contextlib
    import subprocess
    import sys

    @contextlib.contextmanager
    def hold(folder: str):
        proc = subprocess.Popen([sys.executable, "-c", (
            "import sys; from graphstk.experiments.cache import run_lock\n"
            f"with run_lock({folder!r}):\n print('held', flush=True); sys.stdin.readline()")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            assert proc.stdout.readline().strip() == "held"
            yield proc
        finally:
            proc.communicate("\n", timeout=60)
    return hold
