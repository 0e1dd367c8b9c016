"""Damaged data files (graphstk.data.files): every reader names the file, the dataset and the fix,
through load_dataset, load_vector_dataset and the command line; a damaged processed/ folder is
rebuilt; a first load killed midway leaves nothing that breaks the next one.

Every test damages a copy in a temporary directory, never the shared originals.
"""
from __future__ import annotations

import gzip
import os
import shutil
import warnings
from pathlib import Path

import pytest
import torch

from conftest import shared_datasets_dir
from graphstk.data import get_spec, load_dataset, load_vector_dataset
from graphstk.data.files import find_damaged, load_pyg, reading
from graphstk.exceptions import DataFileError

SOURCE = shared_datasets_dir()


def _copy(tmp_path: Path, folder: str, files=None) -> Path:
    """Copy ``SOURCE/folder`` (or only ``files`` of it) into ``tmp_path``; skip when absent."""
    src = SOURCE / folder
    if not src.is_dir():
        pytest.skip(f"{src} is not available")
    dst = tmp_path / folder
    if files is None:
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns("processed", ".graphstk-*"))
    else:
        dst.mkdir(parents=True)
        for f in files:
            if not (src / f).is_file():
                pytest.skip(f"{src / f} is not available")
            shutil.copy(src / f, dst / f)
    for p in [dst, *dst.rglob("*")]:
        os.chmod(p, 0o755 if p.is_dir() else 0o644)
    return tmp_path


def _truncate(path: Path, fraction: float = 0.5) -> None:
    with open(path, "r+b") as f:
        f.truncate(int(os.path.getsize(path) * fraction))


def _assert_named(err: BaseException, path: Path, dataset: str) -> None:
    msg = str(err)
    assert str(path) in msg and msg.startswith(f"{dataset}:") and "Fix:" in msg, msg


# --------------------------------------------------------------------------- graphs
def test_truncated_cora_raw_file_is_named(tmp_path):
    root = _copy(tmp_path, "Cora")
    bad = root / "Cora" / "raw" / "ind.cora.graph"
    _truncate(bad)
    with pytest.raises(DataFileError) as e:
        load_dataset("Cora", root=root)
    _assert_named(e.value, bad, "Cora")
    assert "Ran out of input" in str(e.value) and "load again online" in str(e.value)
    assert not (root / "Cora" / "processed").exists()
    assert not list((root / "Cora").glob(".graphstk-build-*"))   # the temporary build folder is gone
    assert (root / "Cora" / "raw" / "ind.cora.x").is_file()  # the raw folder survives the cleanup


@pytest.mark.parametrize("features", [True, False])
def test_truncated_computers_npz_is_named(tmp_path, features):
    root = _copy(tmp_path, "Computers")
    bad = root / "Computers" / "raw" / "amazon_electronics_computers.npz"
    _truncate(bad, 0.9)
    with pytest.raises(DataFileError) as e:
        load_dataset("Computers", root=root, features=features)
    _assert_named(e.value, bad, "Computers")
    assert "BadZipFile" in str(e.value)


def test_unreadable_processed_folder_is_rebuilt_with_a_warning(tmp_path):
    root = _copy(tmp_path, "Cora")
    first = load_dataset("Cora", root=root)
    processed = root / "Cora" / "processed"
    for name, cut in (("data.pt", 0.5), ("data.pt", 0.0), ("pre_transform.pt", 0.5)):
        _truncate(processed / name, cut)
        with pytest.warns(UserWarning, match=f"Cora: PyG's cache {processed} is unreadable.*rebuilding"):
            again = load_dataset("Cora", root=root)
        assert torch.equal(again.x, first.x) and torch.equal(again.edge_index, first.edge_index)
        assert torch.equal(again.test_mask, first.test_mask)
    with warnings.catch_warnings():
        warnings.simplefilter("error")                      # rebuilt: the next load is silent
        load_dataset("Cora", root=root)


def test_unreadable_processed_folder_on_a_read_only_root_says_delete_it(tmp_path, monkeypatch):
    root = _copy(tmp_path, "Cora")
    load_dataset("Cora", root=root)
    processed = root / "Cora" / "processed"
    _truncate(processed / "data.pt")
    monkeypatch.setattr(os, "access", lambda *a, **k: False)   # as if read-only (tests may run as root)
    with pytest.raises(DataFileError, match=rf"Fix: delete the folder {processed}") as e:
        load_dataset("Cora", root=root)
    _assert_named(e.value, processed / "data.pt", "Cora")


def test_first_load_killed_while_writing_leaves_nothing_that_breaks_the_next(tmp_path, monkeypatch):
    import torch_geometric.io.fs as pyg_fs

    root = _copy(tmp_path, "Cora")
    real_save = pyg_fs.torch_save

    def killed(data, path):        # writes half a file, then the process "dies"
        real_save(data, path)
        _truncate(Path(path))
        raise KeyboardInterrupt

    monkeypatch.setattr(pyg_fs, "torch_save", killed)
    with pytest.raises(KeyboardInterrupt):
        load_dataset("Cora", root=root)
    assert not (root / "Cora" / "processed").exists()      # written elsewhere, never renamed into place
    monkeypatch.setattr(pyg_fs, "torch_save", real_save)
    stale = root / "Cora" / ".graphstk-build-killed" / "Cora" / "processed"   # as a SIGKILL would leave it
    stale.mkdir(parents=True)
    (stale / "data.pt").write_bytes(b"PK\x03\x04 half")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        data = load_dataset("Cora", root=root)
    assert data.num_nodes == 2708 and (root / "Cora" / "processed" / "data.pt").is_file()
    assert not list((root / "Cora").glob(".graphstk-build-*"))


def test_first_processing_is_safe_under_concurrency(tmp_path, monkeypatch):
    """PyG's download/processing runs under an exclusive lock file, so a second process loading
    the same dataset waits instead of reading a half-written processed/data.pt."""
    import dataclasses
    import subprocess
    import sys

    from torch_geometric.data import Data

    from graphstk.data import datasets as D
    from graphstk.data.files import processing_lock

    ds_dir = tmp_path / "Cora"
    probe = ("import fcntl, sys; fh = open(sys.argv[1], 'a')\n"
             "try:\n fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB); print('free')\n"
             "except BlockingIOError:\n print('held')")

    def probe_lock():
        out = subprocess.run([sys.executable, "-c", probe, str(ds_dir / ".graphstk-processing.lock")],
                             capture_output=True, text=True)
        return out.stdout.strip()

    with processing_lock(ds_dir):
        assert probe_lock() == "held"
    assert probe_lock() == "free"
    seen = []                                              # load_dataset calls PyG inside that lock

    def fake_pyg(root):
        seen.append(probe_lock())
        return [Data(edge_index=torch.empty(2, 0, dtype=torch.long), y=torch.zeros(3, dtype=torch.long),
                     num_nodes=3)]

    spec = D.get_spec("Cora")
    monkeypatch.setitem(D._SPECS, "Cora", dataclasses.replace(spec, pyg=fake_pyg, known=None))   # a 3-node stand-in
    (ds_dir / "raw").mkdir(parents=True)
    for f in spec.raw_files:
        (ds_dir / "raw" / f).write_text("0\n" if f.endswith(".test.index") else "")
    load_dataset("Cora", root=tmp_path)
    assert seen == ["held"]


def test_find_damaged_names_the_first_bad_raw_file(tmp_path):
    root = _copy(tmp_path, "Cora")
    raw = root / "Cora" / "raw"
    files = [raw / f for f in get_spec("Cora").raw_files]
    assert find_damaged(files) is None
    (raw / "ind.cora.test.index").write_text("12\nnot a number\n")
    path, err = find_damaged(files)
    assert path == raw / "ind.cora.test.index" and isinstance(err, ValueError)


@pytest.mark.parametrize("content, why", [
    ("", "the file is empty"),
    ("1708\n1708\n", "1 node ids occur more than once"),
    ("-3\n", "1 negative node ids"),
    ("12\nnot a number\n", "line 2 is 'not a number'"),
])
def test_unusable_test_index_is_named_before_loading(tmp_path, content, why):
    """An empty (or otherwise unusable) ``ind.cora.test.index`` is named, instead of loading with an
    empty test mask and a NaN accuracy; following the fix (an intact copy) loads again."""
    root = _copy(tmp_path, "Cora")
    bad = root / "Cora" / "raw" / "ind.cora.test.index"
    intact = bad.read_text()
    bad.write_text(content)
    with pytest.raises(DataFileError, match=why) as e:
        load_dataset("Cora", root=root)
    _assert_named(e.value, bad, "Cora")
    assert "intact copy" in str(e.value)
    bad.write_text(intact)                                  # the fix: an intact copy
    data = load_dataset("Cora", root=root)
    assert int(data.test_mask.sum()) == 1000


def test_test_index_outside_the_graph_is_named(tmp_path):
    root = _copy(tmp_path, "Cora")
    bad = root / "Cora" / "raw" / "ind.cora.test.index"
    load_dataset("Cora", root=root)                         # a processed cache from the intact file
    bad.write_text(bad.read_text() + "99999\n")
    with pytest.raises(DataFileError, match=r"names 1 node ids outside \[0, 2707\] \(e.g. 99999\)") as e:
        load_dataset("Cora", root=root)
    _assert_named(e.value, bad, "Cora")


def test_load_pyg_passes_other_errors_through(tmp_path):
    def broken(root):
        raise RuntimeError("no such dataset class")

    (tmp_path / "X" / "raw").mkdir(parents=True)
    with pytest.raises(RuntimeError, match="no such dataset class"):
        load_pyg(broken, tmp_path, "X", "X", ("a.npz",), "copy it")


def test_reading_keeps_missing_files_and_memory_errors():
    with pytest.raises(FileNotFoundError):
        with reading("/nowhere", "X"):
            raise FileNotFoundError("/nowhere")
    with pytest.raises(MemoryError):
        with reading("/nowhere", "X"):
            raise MemoryError
    with pytest.raises(DataFileError, match=r"X: cannot read /nowhere \(size unknown\).*EOFError: cut.*Fix: do it"):
        with reading("/nowhere", "X", "do it"):
            raise EOFError("cut")


# --------------------------------------------------------------------------- vector data
_MNIST = ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz",
          "t10k-labels-idx1-ubyte.gz")


def test_truncated_mnist_gz_is_named(tmp_path):
    root = _copy(tmp_path, "mnist", _MNIST)
    bad = root / "mnist" / "train-labels-idx1-ubyte.gz"
    _truncate(bad)
    with pytest.raises(DataFileError) as e:
        load_vector_dataset("MNIST", root=root)
    _assert_named(e.value, bad, "MNIST")
    assert "EOFError" in str(e.value)


def test_mnist_file_that_is_not_gzip_is_named(tmp_path):
    root = _copy(tmp_path, "mnist", _MNIST)
    bad = root / "mnist" / "train-images-idx3-ubyte.gz"
    bad.write_bytes(b"<html>not found</html>")
    with pytest.raises(DataFileError) as e:
        load_vector_dataset("MNIST", root=root)
    _assert_named(e.value, bad, "MNIST")


@pytest.mark.parametrize("which", ["data", "splits"])
def test_garbage_bci_mat_is_named(tmp_path, which):
    files = ("SSL,set=4,data.mat", "SSL,set=4,splits,labeled=10.mat", "SSL,set=4,splits,labeled=100.mat")
    root = _copy(tmp_path, "ssl_benchmark", files)
    bad = root / "ssl_benchmark" / (files[0] if which == "data" else files[2])
    bad.write_bytes(os.urandom(4096))
    with pytest.raises(DataFileError) as e:
        load_vector_dataset("BCI", root=root, source="root")
    _assert_named(e.value, bad, "BCI")


def test_mat_file_without_the_expected_variables_is_named(tmp_path):
    import scipy.io as sio

    (tmp_path / "usps").mkdir()
    sio.savemat(tmp_path / "usps" / "uspst.mat", {"X": [[1.0, 2.0]], "labels": [1]})
    with pytest.raises(DataFileError, match=r"lacks the variable\(s\) \['y', 'idxLabs', 'idxUnls'\]; found \['X', 'labels'\]"):
        load_vector_dataset("USPST", root=tmp_path)


def test_garbage_uspst_mat_and_truncated_usps_esl_are_named(tmp_path):
    root = _copy(tmp_path, "usps", ("uspst.mat", "zip.train.gz", "zip.test.gz"))
    _truncate(root / "usps" / "uspst.mat", 0.3)
    with pytest.raises(DataFileError) as e:
        load_vector_dataset("USPST", root=root)
    _assert_named(e.value, root / "usps" / "uspst.mat", "USPST")
    _truncate(root / "usps" / "zip.test.gz", 0.5)
    with pytest.raises(DataFileError) as e:
        load_vector_dataset("USPS-ESL", root=root)
    _assert_named(e.value, root / "usps" / "zip.test.gz", "USPS-ESL")


def test_truncated_movie_reviews_tarball_is_named(tmp_path):
    root = _copy(tmp_path, "movie_review_polarity", ("review_polarity.tar.gz",))
    bad = root / "movie_review_polarity" / "review_polarity.tar.gz"
    _truncate(bad, 0.5)
    with pytest.raises(DataFileError) as e:
        load_vector_dataset("MovieReviews", root=root)
    _assert_named(e.value, bad, "MovieReviews")


def test_webkb_file_that_is_not_text_is_named(tmp_path):
    (tmp_path / "webkb").mkdir()
    (tmp_path / "webkb" / "webkb-test-stemmed.txt").write_bytes(b"course\t\xff\xfe bad bytes\n")
    (tmp_path / "webkb" / "webkb-train-stemmed.txt").write_text("course\tsome text\n")
    with pytest.raises(DataFileError) as e:
        load_vector_dataset("WebKB4", root=tmp_path)
    _assert_named(e.value, tmp_path / "webkb" / "webkb-test-stemmed.txt", "WebKB4")


# --------------------------------------------------------------------------- the command line
def test_command_line_names_the_damaged_file(tmp_path, capsys):
    from graphstk.__main__ import main

    root = _copy(tmp_path, "mnist", _MNIST)
    bad = root / "mnist" / "train-images-idx3-ubyte.gz"
    with gzip.open(bad, "wb") as f:
        f.write(b"\x00\x00\x08\x03")                      # an IDX header cut after the magic number
    cfg = tmp_path / "c.yaml"
    cfg.write_text("protocol: labeled-per-class\nn_labeled: [20]\nval_per_class: 5\ntest: unlabeled\nseeds: 1\n"
                   "datasets: [MNIST]\nmethods: [KRLSC]\n")
    assert main([str(cfg), "--data-root", str(root), "--out", str(tmp_path / "o"), "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert f"MNIST: cannot read {bad}" in err and "Fix:" in err
