"""Text benchmarks (graphstk.data.text): movie reviews and WebKB as tf-idf features."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from graphstk.data import load_vector_dataset

from .vector_helpers import SOURCE, need


@pytest.fixture(scope="session")
def movie_reviews():
    need("MovieReviews")
    return load_vector_dataset("MovieReviews", root=SOURCE)


@pytest.fixture(scope="session")
def webkb4():
    need("WebKB4")
    return load_vector_dataset("WebKB4", root=SOURCE)


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
