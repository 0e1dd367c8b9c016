"""The semi-supervised KPCA classifiers in the scikit-learn tools users combine them with: a Pipeline
behind a StandardScaler, GridSearchCV with default scoring, cross_val_score, on load_digits with 90% of
the labels set to -1, each scoring within one point of the estimator called directly.

(The first 300 digits and the top-60 kernel eigenpairs, so that the whole module stays fast: every
fit eigendecomposes the kernel of its fit points.)
"""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_digits
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from graphstk.methods import LRKPCA, LSKPCA, MVKPCA, KernelPCAClassifier

CLASSIFIERS = [LSKPCA(c=10.0, s=1.0, rank=60), LRKPCA(c=10.0, s=1.0, max_iter=5, rank=60), MVKPCA(c=1.0, rank=60),
               KernelPCAClassifier(rank=60)]
GRIDS = {LSKPCA: {"c": [1.0, 10.0]}, LRKPCA: {"s": [0.3, 1.0]}, MVKPCA: {"c": [0.1, 1.0]},
         KernelPCAClassifier: {"n_components": [5, 10]}}


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    X, y = X[:300], y[:300]
    rng = np.random.default_rng(0)
    y_semi = y.copy()
    y_semi[rng.random(y.size) < 0.9] = -1
    return X, y, y_semi


def _direct_score(est, X, y_fit, X_eval, y_eval) -> float:
    scaler = StandardScaler().fit(X)
    return clone(est).fit(scaler.transform(X), y_fit).score(scaler.transform(X_eval), y_eval)


pytestmark = pytest.mark.filterwarnings("ignore::graphstk.exceptions.ConvergenceWarning")


@pytest.mark.parametrize("est", CLASSIFIERS, ids=lambda e: type(e).__name__)
def test_pipeline_scores_like_the_estimator_called_directly(est, digits):
    X, y, y_semi = digits
    unl = y_semi == -1
    pipe = make_pipeline(StandardScaler(), clone(est)).fit(X, y_semi)
    acc = float((pipe.predict(X[unl]) == y[unl]).mean())
    direct = _direct_score(est, X, y_semi, X[unl], y[unl])
    assert abs(acc - direct) <= 0.01
    assert acc > 0.6          # 90% unlabeled digits: far above chance (0.1)


@pytest.mark.parametrize("est", CLASSIFIERS, ids=lambda e: type(e).__name__)
def test_cross_val_score_and_grid_search_with_default_scoring(est, digits):
    X, y, y_semi = digits
    cv = KFold(3, shuffle=True, random_state=0)
    pipe = make_pipeline(StandardScaler(), clone(est))
    scores = cross_val_score(pipe, X, y_semi, cv=cv)          # default scoring: the classifier's accuracy
    direct = [_direct_score(est, X[tr], y_semi[tr], X[te], y_semi[te]) for tr, te in cv.split(X)]
    np.testing.assert_allclose(scores, direct, atol=0.01)
    name = type(est).__name__.lower()
    grid = {f"{name}__{k}": v for k, v in GRIDS[type(est)].items()}
    search = GridSearchCV(pipe, grid, cv=cv).fit(X, y_semi)
    best = search.best_params_
    ref = clone(est).set_params(**{k.split("__")[1]: v for k, v in best.items()})
    direct = np.mean([_direct_score(ref, X[tr], y_semi[tr], X[te], y_semi[te]) for tr, te in cv.split(X)])
    assert abs(search.best_score_ - direct) <= 0.01
    assert search.best_estimator_.predict(X[:5]).shape == (5,)
