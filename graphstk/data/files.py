"""Damaged data files: named (:class:`~graphstk.exceptions.DataFileError`, :func:`reading`), and PyG's
processed cache written atomically and rebuilt once when unreadable (:func:`load_pyg`); see ``docs/data.md``.
"""
from __future__ import annotations

import contextlib
import os
import pickle
import shutil
import tempfile
import warnings
import zipfile
from pathlib import Path
from typing import Callable, Iterable

try:
    import fcntl
except ImportError:   # pragma: no cover - not POSIX (Windows): nothing is locked
    fcntl = None

from ..exceptions import DataFileError, DatasetNotFoundError

__all__ = ["reading", "damaged", "find_damaged", "load_pyg", "processing_lock", "read_index_file", "check_index_range",
           "SOURCES_HINT"]

SOURCES_HINT = "see SOURCES.md in the shared datasets folder for where each file comes from"

# errors that mean "not a problem of the file's bytes": passed through unchanged
_PASS = (DataFileError, DatasetNotFoundError, FileNotFoundError, PermissionError, IsADirectoryError, MemoryError)


def _size(path: Path) -> str:
    try:
        return f"{os.path.getsize(path):,} bytes"
    except OSError:
        return "size unknown"


def damaged(path, dataset: str, err: BaseException | str, fix: str | None = None) -> DataFileError:
    """The :class:`DataFileError` for an unreadable ``path`` of ``dataset``: what the reader reported (``err``) and
    ``fix`` (default: replace the file with an intact copy).
    """
    what = f"{type(err).__name__}: {err}" if isinstance(err, BaseException) else str(err)
    return DataFileError(f"{dataset}: cannot read {path} ({_size(Path(path))}): the file is truncated, corrupted "
                         f"or not the expected format ({what}). Fix: {_fix(fix)}.")


def _fix(fix: str | None) -> str:
    return fix or f"replace it with an intact copy ({SOURCES_HINT})"


@contextlib.contextmanager
def reading(path, dataset: str, fix: str | None = None):
    """Context manager: an error of the reader of ``path`` becomes a :class:`DataFileError` naming ``path``,
    ``dataset`` and ``fix`` (missing files, permissions and memory errors pass through).
    """
    try:
        yield
    except _PASS:
        raise
    except Exception as err:
        raise damaged(path, dataset, err, fix) from err


def _check_file(path: Path) -> None:
    name = path.name
    if zipfile.is_zipfile(path) or path.suffix in (".npz", ".zip"):
        with zipfile.ZipFile(path) as z:
            bad = z.testzip()
        if bad is not None:
            raise zipfile.BadZipFile(f"member {bad!r} fails its CRC check")
    elif name.startswith("ind.") and name.endswith(".test.index"):
        _index_values(path)
    elif name.startswith("ind."):
        with open(path, "rb") as f, warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)   # scipy.sparse.csr in the old pickles
            pickle.load(f, encoding="latin1")   # as PyG's read_planetoid_data reads them


def _index_values(path: Path) -> list[int]:
    with open(path) as f:
        lines = [(no, line.strip()) for no, line in enumerate(f, 1) if line.strip()]
    if not lines:
        raise ValueError("the file is empty (no node ids): the split it defines would hold no node")
    out = []
    for no, text in lines:
        try:
            out.append(int(text))
        except ValueError:
            raise ValueError(f"line {no} is {text[:40]!r}, not an integer node id") from None
    neg = [v for v in out if v < 0]
    if neg:
        raise ValueError(f"{len(neg)} negative node ids (e.g. {neg[0]})")
    if len(set(out)) != len(out):
        raise ValueError(f"{len(out) - len(set(out))} node ids occur more than once")
    return out


def read_index_file(path, dataset: str, fix: str | None = None) -> list[int]:
    """The node ids of a split / index file (one integer a line); :class:`DataFileError` naming ``path`` when it is
    empty or holds a non-integer, a negative id or an id twice.
    """
    path = Path(path)
    try:
        return _index_values(path)
    except (OSError, ValueError) as err:
        if isinstance(err, (FileNotFoundError, PermissionError)):
            raise
        raise DataFileError(f"{dataset}: the index file {path} ({_size(path)}) is unusable: {err}. Fix: "
                            f"{_fix(fix)}.") from err


def check_index_range(ids, n: int, path, dataset: str, fix: str | None = None) -> None:
    """Raise :class:`DataFileError` naming ``path`` when a node id of ``ids`` is outside ``[0, n)``."""
    bad = [int(v) for v in ids if not 0 <= int(v) < n]
    if bad:
        raise DataFileError(f"{dataset}: the index file {path} names {len(bad)} node ids outside [0, {n - 1}] "
                            f"(e.g. {bad[0]}) of the {n}-node graph. Fix: {_fix(fix)}.")


def find_damaged(files: Iterable[Path]) -> tuple[Path, BaseException] | None:
    """The first existing file of ``files`` that fails its check (zip CRCs, Planetoid pickles, index files),
    with the error; ``None`` if all pass.
    """
    for path in files:
        path = Path(path)
        if not path.is_file():
            continue
        try:
            _check_file(path)
        except MemoryError:
            raise
        except Exception as err:
            return path, err
    return None


@contextlib.contextmanager
def processing_lock(ds_dir: Path):
    """Hold an exclusive lock on ``<ds_dir>/.graphstk-processing.lock`` while PyG downloads or writes ``processed/``
    (nothing is locked without ``fcntl`` or on a read-only root).
    """
    if fcntl is None:   # pragma: no cover - not POSIX
        yield
        return
    try:
        ds_dir.mkdir(parents=True, exist_ok=True)
        fh = open(ds_dir / ".graphstk-processing.lock", "a")
    except OSError:        # read-only root: processed/ must already exist, nothing is written
        yield
        return
    with fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def load_pyg(make: Callable[[str], object], root: Path, dirname: str, dataset: str, raw_files: Iterable[str],
             redownload: str, check: Callable[[object], None] | None = None):
    """Build or load the PyG dataset ``make(root)`` whose files live in ``root / dirname`` (call it under
    :func:`processing_lock`): an unreadable ``processed/`` is rebuilt once, ``processed/`` is written atomically,
    and a raw file that PyG cannot process is named (:func:`find_damaged`).

    Parameters
    ----------
    make : callable ``root -> dataset`` (e.g. ``lambda r: Planetoid(r, "Cora")``)
    root : Path, the data root
    dirname : str, the dataset's folder under the root
    dataset : str, the dataset's name, for messages
    raw_files : iterable of str, the raw files PyG reads
    redownload : str, how to get an intact raw file again, for the message
    check : callable ``dataset -> None``, optional
        Run once when ``processed/`` is built; an error it raises leaves no ``processed/`` behind.
    """
    ds_dir = root / dirname
    processed = ds_dir / "processed"
    if (processed / "data.pt").is_file():
        try:
            return make(str(root))
        except _PASS:
            raise
        except Exception as err:
            if not os.access(ds_dir, os.W_OK):
                raise damaged(processed / "data.pt", dataset, err,
                              f"delete the folder {processed} (PyG's cache; it is rebuilt from raw/ on the next "
                              "load, which needs a writable data root)") from err
            warnings.warn(f"{dataset}: PyG's cache {processed} is unreadable ({type(err).__name__}: "
                          f"{str(err)[:200]}), e.g. from a load that was killed while writing it; deleting it and "
                          "rebuilding it from raw/", UserWarning, stacklevel=4)
            shutil.rmtree(processed)
    raw_paths = [ds_dir / "raw" / f for f in raw_files]
    try:
        return _build(make, root, dirname, check)
    except _PASS:
        raise
    except Exception as err:
        hit = find_damaged(raw_paths)
        if hit is None:
            raise
        path, why = hit
        raise damaged(path, dataset, why, f"delete {path} and load again online (PyG downloads it again), or "
                                          f"{redownload}") from err


def _build(make, root: Path, dirname: str, check=None):
    """PyG processes into a temporary folder beside ``raw/``; ``processed/`` is renamed into place whole."""
    ds_dir = root / dirname
    for stale in ds_dir.glob(".graphstk-build-*"):     # left by a killed build
        shutil.rmtree(stale, ignore_errors=True)
    (ds_dir / "raw").mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".graphstk-build-", dir=ds_dir))
    try:
        (tmp / dirname).mkdir()
        try:
            os.symlink((ds_dir / "raw").resolve(), tmp / dirname / "raw", target_is_directory=True)
        except (OSError, NotImplementedError):    # no symlinks here: PyG writes processed/ in place
            dataset = make(str(root))
            if check is not None:
                try:
                    check(dataset)
                except BaseException:
                    shutil.rmtree(ds_dir / "processed", ignore_errors=True)
                    raise
            return dataset
        dataset = make(str(tmp))
        if check is not None:
            check(dataset)
        built, processed = tmp / dirname / "processed", ds_dir / "processed"
        if built.is_dir():
            if processed.exists():                # a leftover without data.pt
                shutil.rmtree(processed)
            os.rename(built, processed)
        return dataset
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
