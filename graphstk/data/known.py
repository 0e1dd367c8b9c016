"""What the named datasets' raw files are known to hold: sha256 digests and published statistics,
compared by :func:`check_known` when PyG's ``processed/`` cache is built (``docs/data.md``, Damaged files).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from ..exceptions import DataFileError
from .files import SOURCES_HINT

__all__ = ["KNOWN", "Known", "check_known", "sha256"]


@dataclass(frozen=True)
class Known:
    """Published facts of one dataset as PyG builds it."""
    nodes: int
    edges: int                                   # PyG's ``edge_index.shape[1]`` (both directions)
    split: tuple[int, int, int] | None = None    # public split: train, val, test node counts
    sha256: dict = field(default_factory=dict)   # raw file name -> digest


def _planetoid_files(low: str, **digests) -> dict:
    return {f"ind.{low}.{k.replace('_', '.')}": v for k, v in digests.items()}


KNOWN: dict[str, Known] = {
    "Cora": Known(2708, 10556, (140, 500, 1000)),
    "CiteSeer": Known(3327, 9104, (120, 500, 1000)),
    "PubMed": Known(19717, 88648, (60, 500, 1000), _planetoid_files(
        "pubmed",
        x="fbe9cb5c47200d1b7769a26e579be3b7130b556831f9d850e77c4c74f2599b33",
        y="e6c807633307a07ed659249006536a147c7999c797f11a2560752990181b41b3",
        tx="4eb5f5d0f30f26497eb0ac6ac9719d09c67e284f1ed0385c93f3ef27a671da3d",
        ty="ee2e0d4819d9fbcc403689c3bf2e49face401b605932f093bc58ab6461130fdd",
        allx="508e538e2abdccdd54c4d3e9f49d638b4af7107d85845f66ddea5a5152658b7e",
        ally="0c37bbe3b5014ec365e9d393cf4791925e5ed94fb194305d74f064a8d7b50f0e",
        graph="5b89f0036ca22909471f1e6558eb42fa06e0c730a577bde5b058b40638f81dc9",
        test_index="b101d421688bbaecbd82e8a18f1e282378d6830f3a37666f28ebc47f844341b5")),
    "Computers": Known(13752, 491722, sha256={
        "amazon_electronics_computers.npz": "736ba1d9fd85eac2da83a5ad25c463f04b0031a6ca01563f90a7099d9e8ffb2c"}),
    "Photo": Known(7650, 238162, sha256={
        "amazon_electronics_photo.npz": "bdb1feb8e6ff42ee44024b04479145029c563fd42fc31bff80af20887ba0439a"}),
    "CS": Known(18333, 163788, sha256={
        "ms_academic_cs.npz": "933c745734e78908c7eb77172a673fee0503f30e26e5a99b36814d88534c42e3"}),
    "Physics": Known(34493, 495924, sha256={
        "ms_academic_phy.npz": "e4d68468eba5fb8f6b280ffd406bd53e6e4295ba1dd2967d6fe99b978e4b3375"}),
    "DBLP": Known(17716, 105734),
    "CoraFull": Known(19793, 126842),
}

# which raw files a wrong count points at (Planetoid: the files PyG builds that count from)
_PLANETOID_SOURCES = {"nodes": ("allx", "tx", "test.index"), "edges": ("graph",), "train": ("y",),
                      "val": ("ally",), "test": ("test.index",)}


def sha256(path: Path) -> str:
    """The sha256 hex digest of the file at ``path`` (read in 1 MiB blocks)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def check_known(data, name: str, known: Known | None, raw_dir: Path, fix: str, digests: bool = True) -> None:
    """Compare ``data`` (a freshly built PyG ``Data`` of the named dataset ``name``) and its raw files in
    ``raw_dir`` with what is ``known`` of them (its :data:`KNOWN` entry); raise
    :class:`~graphstk.exceptions.DataFileError` naming the file that differs, what was expected and
    ``fix``. Nothing known (``None``), or a file with no known digest, passes. ``digests=False`` checks
    the statistics only (free: no file is read again)."""
    if known is None:
        return
    for file, digest in (known.sha256 if digests else {}).items():
        path = raw_dir / file
        if path.is_file():
            got = sha256(path)
            if got != digest:
                raise DataFileError(f"{name}: {path} differs from the published file: expected sha256 {digest}, "
                                    f"got {got} ({path.stat().st_size:,} bytes). Fix: {fix} ({SOURCES_HINT}).")
    counts = {"nodes": (int(data.num_nodes), known.nodes), "edges": (int(data.edge_index.shape[1]), known.edges)}
    if known.split is not None:
        for key, want in zip(("train", "val", "test"), known.split):
            mask = getattr(data, f"{key}_mask", None)
            if mask is not None:
                counts[key] = (int(mask.sum()), want)
    for key, (got, want) in counts.items():
        if got != want:
            low = name.lower()
            files = ([raw_dir / f"ind.{low}.{s}" for s in _PLANETOID_SOURCES[key]] if known.split is not None
                     else sorted(raw_dir.iterdir()) if raw_dir.is_dir() else [raw_dir])
            what = {"nodes": "nodes", "edges": "directed edges (PyG's edge_index)", "train": "training nodes",
                    "val": "validation nodes", "test": "test nodes"}[key]
            split = " in its public split" if key in ("train", "val", "test") else ""
            raise DataFileError(f"{name}: expected {want:,} {what}{split}, the raw files hold {got:,}: "
                                f"{', '.join(str(f) for f in files)} "
                                f"{'differs from the published file' if len(files) == 1 else 'differ from the published files'} "
                                f"(truncated?). Fix: {fix} ({SOURCES_HINT}).")
