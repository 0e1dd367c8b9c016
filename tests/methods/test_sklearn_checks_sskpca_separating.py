"""scikit-learn's own conformance suite over the semi-supervised KPCA estimators, the coupled kernel
embedding and the one-class estimators of the separating-kernel paper.

Instances use small settings where the defaults only cost time (``n_components=3`` SVM features,
five IRLS steps); every check runs. The checks that cannot apply are marked with scikit-learn's
expected-failure mechanism, each with its reason.
"""
from __future__ import annotations

from sklearn.utils.estimator_checks import parametrize_with_checks

from graphstk.methods import (
    LRKPCA, LSKPCA, MVKPCA, CoupledKernelEmbedding, KernelPCAClassifier, ParzenWindow, SpectralSupportEstimator,
)

_MINUS_ONE = ("the semi-supervised contract reads the label -1 as 'unlabeled' (as LabelSpreading does); this check "
              "uses -1 as a class name, so one of its two classes has no labeled point")
_TAU_N = ("the default threshold accepts every training point (tau_n of Eq. 30, De Vito et al.), so predict on the "
          "training set is +1 everywhere; the check wants some -1 there (set tau= for another offset)")


def expected_failed_checks(estimator) -> dict:
    if isinstance(estimator, (KernelPCAClassifier, MVKPCA, LSKPCA, LRKPCA)):
        return {"check_classifiers_classes": _MINUS_ONE}
    if isinstance(estimator, (SpectralSupportEstimator, ParzenWindow)):
        return {"check_outliers_train": _TAU_N, "check_outliers_fit_predict": _TAU_N}
    return {}


ESTIMATORS = [
    KernelPCAClassifier(n_components=3), MVKPCA(), LSKPCA(), LRKPCA(max_iter=5), CoupledKernelEmbedding(),
    SpectralSupportEstimator(), ParzenWindow(),
]


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)
