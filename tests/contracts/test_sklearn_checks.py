"""scikit-learn's own conformance suite over the Fredholm, LapRLSC, kernel-ridge and
random-feature estimators (``sklearn.utils.estimator_checks.parametrize_with_checks``).

Instances use small hyperparameters so the suite stays quick on two cores. A check that
cannot apply is listed in :func:`expected_failures` with its reason (at most 3 per estimator)
and run as a strict expected failure: it fails the suite if it starts passing.
"""
from __future__ import annotations

from sklearn.utils.estimator_checks import parametrize_with_checks

from graphstk.features import RandomBinningFeatures, RandomFourierFeatures
from graphstk.methods import (FredholmRLSC, FredholmSVM, KernelRidge, LapRLSC, RandomFeatureFredholm,
                              RandomFeatureRidge)
from graphstk.methods._semi_supervised import SemiSupervisedClassifier

ESTIMATORS = [
    FredholmRLSC.instance("FredGauss(N)", 2.0, lam=1e-2, lam_scale="trace"),
    FredholmSVM.instance("FredGauss(N)", 2.0, lam=1e-2, lam_scale="trace", tol=1e-4, max_iter=1000),
    RandomFeatureFredholm.instance("FredGauss(N)", 2.0, lam=1e-2, lam_scale="trace", n_components=50),
    LapRLSC(width=2.0, n_neighbors=5),
    KernelRidge(sigma=2.0, lam=0.1),
    RandomFeatureRidge(sigma=2.0, lam=0.1, n_features=100),
    RandomFeatureRidge(features=RandomBinningFeatures(sigma=2.0, n_grids=20, random_state=0), lam=0.1),
    RandomFourierFeatures(n_features=20),
    RandomBinningFeatures(n_grids=10),
    RandomBinningFeatures(n_grids=10, sparse_output=True),
]

#: -1 is the unlabeled marker of the semi-supervised contract (scikit-learn exempts its own
#: LabelSpreading / LabelPropagation / SelfTrainingClassifier from this check by name).
_MINUS_ONE = ("check_classifiers_classes",
              "labels [-1, 1]: -1 marks an unlabeled point in fit(X, y) (LabelSpreading's convention), "
              "so that problem has one labeled class")


def expected_failures(estimator) -> dict:
    """``{check name: reason}`` for the checks that cannot apply to ``estimator``."""
    if isinstance(estimator, SemiSupervisedClassifier):
        return dict([_MINUS_ONE])
    return {}


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failures, xfail_strict=True)
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)
