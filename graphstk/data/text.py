"""Text benchmarks as tf-idf features (CSR float64, l2 rows): movie-review polarity v2.0 and the 4-class
WebKB set, loaded through :func:`graphstk.data.load_vector_dataset`; settings :data:`TFIDF_DEFAULTS`
(``docs/data.md``, Text).
"""
from __future__ import annotations

import tarfile
from pathlib import Path

import numpy as np
import torch
from sklearn.feature_extraction.text import TfidfVectorizer

from .files import reading
from .vector_dataset import VectorDataset, _csr64, class_counts, encode_labels
from .vector_readers import _require

__all__ = ["TFIDF_DEFAULTS", "tfidf_features"]

#: Settings of the TfidfVectorizer used for the text sets (scikit-learn's defaults, pinned).
TFIDF_DEFAULTS: dict = {
    "lowercase": True,
    "token_pattern": r"(?u)\b\w\w+\b",
    "stop_words": None,
    "ngram_range": (1, 1),
    "min_df": 1,
    "max_df": 1.0,
    "sublinear_tf": False,
    "use_idf": True,
    "smooth_idf": True,
    "norm": "l2",
}


def tfidf_features(docs: list[str], tfidf: dict | None = None):
    """``(X, vocabulary)``: the CSR float64 tf-idf matrix of ``docs`` and its column terms.

    Parameters
    ----------
    docs : list of str
        One string per document, in row order.
    tfidf : dict, optional
        Keyword arguments of ``TfidfVectorizer`` that replace :data:`TFIDF_DEFAULTS`.
    """
    settings = _check_tfidf(tfidf)
    settings["dtype"] = np.float64
    vec = TfidfVectorizer(**settings)
    X = vec.fit_transform(docs)
    return _csr64(X), vec.get_feature_names_out().tolist()


def _check_tfidf(tfidf: dict | None) -> dict:
    """The vectorizer settings: :data:`TFIDF_DEFAULTS` updated by ``tfidf`` (checked before any reading)."""
    if tfidf is not None and not isinstance(tfidf, dict):
        raise TypeError(f"tfidf must be a dict of TfidfVectorizer keyword arguments, got {type(tfidf).__name__}")
    bad = sorted(set(tfidf or {}) - set(TfidfVectorizer().get_params()))
    if bad:
        raise TypeError(f"tfidf: unknown TfidfVectorizer argument(s) {', '.join(bad)}; see "
                        "sklearn.feature_extraction.text.TfidfVectorizer")
    return {**TFIDF_DEFAULTS, **(tfidf or {})}


def _settings_text(tfidf: dict | None) -> str:
    changed = {k: v for k, v in (tfidf or {}).items() if TFIDF_DEFAULTS.get(k, object()) != v}
    return ("scikit-learn TfidfVectorizer with graphstk.data.text.TFIDF_DEFAULTS"
            + (f" except {changed}" if changed else " (lowercase, tokens of >= 2 word characters, min_df=1, raw "
               "counts, smoothed idf, l2 rows)") + ", fitted on all documents")


# --------------------------------------------------------------------------- movie reviews
_POLARITY = "review_polarity.tar.gz"


def _load_movie_reviews(root: Path, where: str, tfidf: dict | None = None) -> VectorDataset:
    """Pang & Lee's movie-review polarity v2.0 (2000 reviews) read from the tarball, classes ``neg``, ``pos``."""
    _check_tfidf(tfidf)
    d = _require(root, where, "MovieReviews", "movie_review_polarity", (_POLARITY,))
    docs, labels = [], []
    with reading(d / _POLARITY, "MovieReviews"), tarfile.open(d / _POLARITY, "r:gz") as tar:
        members = sorted((m for m in tar.getmembers() if m.isfile()), key=lambda m: m.name)
        for m in members:
            parts = m.name.split("/")
            if len(parts) >= 3 and parts[-3] == "txt_sentoken" and parts[-2] in ("neg", "pos") \
                    and parts[-1].endswith(".txt"):
                docs.append(tar.extractfile(m).read().decode("utf-8"))
                labels.append(parts[-2])
    if not docs:
        raise ValueError(f"MovieReviews: {d / _POLARITY} holds no txt_sentoken/neg/*.txt or pos/*.txt files; "
                         "expected the polarity dataset v2.0 tarball (review_polarity.tar.gz)")
    X, _ = tfidf_features(docs, tfidf)
    y, classes = encode_labels(labels)
    desc = (f"MovieReviews: Pang & Lee's movie-review polarity dataset v2.0 (June 2004), read from "
            f"{d / _POLARITY}: {len(docs)} full reviews ({class_counts(y, classes)}), in sorted file order "
            f"(txt_sentoken/neg/ then pos/), as {X.shape[1]} tf-idf features ({_settings_text(tfidf)}), CSR "
            "float64. Matches the Fredholm-kernel paper's 'IMDB movie review' set (Table 3: 1000 positive, "
            "1000 negative); the paper names no file and gives no tf-idf settings.")
    return VectorDataset("MovieReviews", X, y, classes, {}, {}, desc)


# --------------------------------------------------------------------------- WebKB (4 classes)
_WEBKB_TEST = "webkb-test-stemmed.txt"
_WEBKB_TRAIN = ("webkb-train-stemmed.txt", "webkb-train-stemmed.PARTIAL.txt")   # complete first


def _read_labeled_lines(path: Path) -> tuple[list[str], list[str]]:
    docs, labels = [], []
    with reading(path, "WebKB4"), open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\r\n")
            if not line:
                continue
            label, sep, text = line.partition("\t")
            if not sep or not label:
                raise ValueError(f"WebKB4: {path}, line {lineno} is not 'label<TAB>text': {line[:60]!r}")
            labels.append(label)
            docs.append(text)
    return docs, labels


def _load_webkb4(root: Path, where: str, tfidf: dict | None = None) -> VectorDataset:
    """Cardoso-Cachopo's stemmed 4-class WebKB, parts ``train`` (the complete or else the PARTIAL file) and ``test``."""
    _check_tfidf(tfidf)
    d = root / "webkb"
    train_name = next((f for f in _WEBKB_TRAIN if (d / f).is_file()), _WEBKB_TRAIN[1])
    _require(root, where, "WebKB4", "webkb", (_WEBKB_TEST, train_name),
             extra=f" (the train file may be either {' or '.join(_WEBKB_TRAIN)})")
    complete = train_name == _WEBKB_TRAIN[0]
    train_docs, train_labels = _read_labeled_lines(d / train_name)
    test_docs, test_labels = _read_labeled_lines(d / _WEBKB_TEST)
    X, _ = tfidf_features(train_docs + test_docs, tfidf)
    y, classes = encode_labels(train_labels + test_labels)
    n_train, n = len(train_docs), len(train_docs) + len(test_docs)
    parts = {"train": torch.arange(n_train), "test": torch.arange(n_train, n)}
    desc = (f"WebKB4: Cardoso-Cachopo's 4-class WebKB (course, faculty, project, student; stemmed text), read "
            f"from {d}: train = {n_train} pages from {train_name}"
            f"{'' if complete else ' (PARTIAL: the published train set has 2803 pages)'}, test = {n - n_train} "
            f"pages from {_WEBKB_TEST} (complete); {class_counts(y, classes)} in all, as {X.shape[1]} tf-idf "
            f"features ({_settings_text(tfidf)}), CSR float64. Differs from the Fredholm-kernel paper's 2-class "
            "WebKB (the two largest classes, 1511 and 1079 pages, of a 7-class 7746-page version of the raw "
            "pages, unnamed there; nor is it Blum-Mitchell's 1051-page course vs. non-course set): different "
            "classes, counts and preprocessing.")
    return VectorDataset("WebKB4", X, y, classes, parts, {}, desc)
