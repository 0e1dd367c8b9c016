"""The semi-supervised classifiers and the random-feature maps in the tools scikit-learn users
combine them with: ``Pipeline``, ``GridSearchCV`` with default scoring and ``cross_val_score``, on
scikit-learn's digits with 90% of the labels hidden (``y = -1``), each scoring as the estimator
called by hand on the same data and folds (within 1 point of accuracy).

Covered: the Fredholm classifiers, LapRLSC, the random-feature maps and the semi-supervised KPCA
classifiers (on the first 300 digits and the top-60 kernel eigenpairs, so that they stay fast:
every fit eigendecomposes the kernel of its fit points).
"""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from graphstk.features import RandomBinningFeatures, RandomFourierFeatures
from graphstk.methods import LRKPCA, LSKPCA, MVKPCA, FredholmRLSC, FredholmSVM, KernelPCAClassifier, LapRLSC, \
    RandomFeatureFredholm

N = 450  # the first N digits keep the suite quick on two cores
CLASSIFIERS = [
    FredholmRLSC.instance("FredGauss(N)", 15.0 ** 0.5, lam=1e-4, lam_scale="trace"),
    FredholmSVM.instance("FredGauss(N)", 15.0 ** 0.5, lam=1e-4, lam_scale="trace", random_state=0),
    RandomFeatureFredholm.instance("FredGauss(N)", 15.0 ** 0.5, lam=1e-4, lam_scale="trace", n_components=150,
                                   random_state=0),
    LapRLSC(sigma=30.0 ** 0.5, gamma_A=1e-4, gamma_I=1.0, gamma_scale="trace", landmarks=100, random_state=0),
]
GRIDS = {"FredholmRLSC": ("lam", 1e-2), "FredholmSVM": ("lam", 1e-2), "RandomFeatureFredholm": ("lam", 1e-2),
         "LapRLSC": ("gamma_I", 100.0)}


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    X, y = X[:N], y[:N]
    hidden = np.random.RandomState(0).rand(N) < 0.9
    return X, np.where(hidden, -1, y), y, hidden


def by_hand(est, X, y, folds):
    """Scaler and estimator fitted by hand on each fold; accuracy on the fold's labeled points."""
    out = []
    for tr, te in folds:
        sc = StandardScaler().fit(X[tr])
        m = clone(est).fit(sc.transform(X[tr]), y[tr])
        keep = te[y[te] != -1]
        out.append(np.mean(m.predict(sc.transform(X[keep])) == y[keep]))
    return np.array(out)


@pytest.mark.parametrize("est", CLASSIFIERS, ids=lambda e: type(e).__name__)
def test_classifier_in_pipeline_cross_val_score_and_grid_search(est, digits):
    X, y, y_true, hidden = digits
    # Pipeline(StandardScaler(), est): unlabeled points go through the scaler like the labeled ones
    pipe = make_pipeline(StandardScaler(), est).fit(X, y)
    sc = StandardScaler().fit(X)
    direct = clone(est).fit(sc.transform(X), y)
    acc_pipe = pipe.score(X[hidden], y_true[hidden])
    acc_direct = direct.score(sc.transform(X[hidden]), y_true[hidden])
    assert abs(acc_pipe - acc_direct) <= 0.01 and acc_direct > 0.75
    # cross_val_score with default scoring: accuracy on each held-out fold's labeled points
    cv = KFold(3, shuffle=True, random_state=0)
    folds = list(cv.split(X))
    scores = cross_val_score(make_pipeline(StandardScaler(), est), X, y, cv=cv)
    np.testing.assert_allclose(scores, by_hand(est, X, y, folds), atol=0.01)
    # GridSearchCV with default scoring: the candidate equal to est scores as by hand
    name, other = GRIDS[type(est).__name__]
    step = type(est).__name__.lower()
    gs = GridSearchCV(make_pipeline(StandardScaler(), est),
                      {f"{step}__{name}": [est.get_params()[name], other]}, cv=cv).fit(X, y)
    assert abs(gs.cv_results_["mean_test_score"][0] - scores.mean()) <= 0.01
    assert gs.best_score_ == max(gs.cv_results_["mean_test_score"])
    assert set(np.unique(gs.predict(X[hidden]))) <= set(range(10))


@pytest.mark.parametrize("features", [RandomFourierFeatures(sigma=6.0, n_features=300, random_state=0),
                                      RandomBinningFeatures(sigma=20.0, n_grids=60, random_state=0),
                                      RandomBinningFeatures(sigma=20.0, n_grids=60, random_state=0,
                                                            sparse_output=True)],
                         ids=["fourier", "binning", "binning-sparse"])
def test_random_features_feed_logistic_regression(features, digits):
    X, _, y, _ = digits
    tr, te = np.arange(N) < 300, np.arange(N) >= 300
    pipe = make_pipeline(StandardScaler(), features, LogisticRegression(max_iter=300)).fit(X[tr], y[tr])
    assert pipe.score(X[te], y[te]) > 0.75  # ten classes: chance is 0.1
    names = pipe[:-1].get_feature_names_out()
    assert len(names) == pipe[1].n_output_features_ and names[0] == f"{type(features).__name__.lower()}0"


# ----------------------------------------------------------------------------- semi-supervised KPCA
KPCA_CLASSIFIERS = [LSKPCA(c=10.0, s=1.0, rank=60), LRKPCA(c=10.0, s=1.0, max_iter=5, rank=60),
                    MVKPCA(c=1.0, rank=60), KernelPCAClassifier(rank=60)]
KPCA_GRIDS = {LSKPCA: {"c": [1.0, 10.0]}, LRKPCA: {"s": [0.3, 1.0]}, MVKPCA: {"c": [0.1, 1.0]},
              KernelPCAClassifier: {"n_components": [5, 10]}}


@pytest.fixture(scope="module")
def digits_300():
    X, y = load_digits(return_X_y=True)
    X, y = X[:300], y[:300]
    rng = np.random.default_rng(0)
    y_semi = y.copy()
    y_semi[rng.random(y.size) < 0.9] = -1
    return X, y, y_semi


def _direct_score(est, X, y_fit, X_eval, y_eval) -> float:
    scaler = StandardScaler().fit(X)
    return clone(est).fit(scaler.transform(X), y_fit).score(scaler.transform(X_eval), y_eval)


@pytest.mark.filterwarnings("ignore::graphstk.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("est", KPCA_CLASSIFIERS, ids=lambda e: type(e).__name__)
def test_pipeline_scores_like_the_estimator_called_directly(est, digits_300):
    X, y, y_semi = digits_300
    unl = y_semi == -1
    pipe = make_pipeline(StandardScaler(), clone(est)).fit(X, y_semi)
    acc = float((pipe.predict(X[unl]) == y[unl]).mean())
    direct = _direct_score(est, X, y_semi, X[unl], y[unl])
    assert abs(acc - direct) <= 0.01
    assert acc > 0.6          # 90% unlabeled digits: far above chance (0.1)


@pytest.mark.filterwarnings("ignore::graphstk.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("est", KPCA_CLASSIFIERS, ids=lambda e: type(e).__name__)
def test_cross_val_score_and_grid_search_with_default_scoring(est, digits_300):
    X, y, y_semi = digits_300
    cv = KFold(3, shuffle=True, random_state=0)
    pipe = make_pipeline(StandardScaler(), clone(est))
    scores = cross_val_score(pipe, X, y_semi, cv=cv)          # default scoring: the classifier's accuracy
    direct = [_direct_score(est, X[tr], y_semi[tr], X[te], y_semi[te]) for tr, te in cv.split(X)]
    np.testing.assert_allclose(scores, direct, atol=0.01)
    name = type(est).__name__.lower()
    grid = {f"{name}__{k}": v for k, v in KPCA_GRIDS[type(est)].items()}
    search = GridSearchCV(pipe, grid, cv=cv).fit(X, y_semi)
    best = search.best_params_
    ref = clone(est).set_params(**{k.split("__")[1]: v for k, v in best.items()})
    direct = np.mean([_direct_score(ref, X[tr], y_semi[tr], X[te], y_semi[te]) for tr, te in cv.split(X)])
    assert abs(search.best_score_ - direct) <= 0.01
    assert search.best_estimator_.predict(X[:5]).shape == (5,)
