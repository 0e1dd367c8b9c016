"""Semi-supervised kernel PCA (Walder, Henao, Mørup, Hansen): KPCA, MV-, LS- and LR-KPCA.

:mod:`.basis` (one eigendecomposition of the fit kernel, cached), :mod:`.secular` (KPCA Eq. 5,
MV-KPCA Eq. 6, LS-KPCA's secular equation Sec. 4), :mod:`.irls` (LR-KPCA, Eqs. 16-21), :mod:`.heads`
(the linear SVM head, Sec. 7.1), :mod:`.estimators` (the scikit-learn estimators). Derivations:
``docs/methods.md``.
"""
from .basis import (  # noqa: F401
    BASIS_CACHE, DECOMPOSITIONS, BasisCache, KernelBasis, array_key, basis_from_eigenpairs, kernel_basis,
    median_pairwise_distance,
)
from .base import SSKPCABase  # noqa: F401
from .estimators import LRKPCA, LSKPCA, MVKPCA, KernelPCAClassifier  # noqa: F401
from .heads import LinearHead, fit_linear_head, head_scores  # noqa: F401
from .irls import ConvergenceWarning, LRResult, lr_kpca, lr_objective  # noqa: F401
from .secular import (  # noqa: F401
    SecularSolution, check_c, check_s, kpca_components, ls_kpca_path, mv_kpca_path, pencil, secular_solve, targets,
    within_class_scatter,
)

__all__ = [
    "DECOMPOSITIONS", "BASIS_CACHE", "BasisCache", "KernelBasis", "kernel_basis", "basis_from_eigenpairs", "array_key",
    "median_pairwise_distance",
    "SecularSolution", "secular_solve", "ls_kpca_path", "mv_kpca_path", "kpca_components", "pencil", "targets",
    "within_class_scatter", "check_c", "check_s", "lr_kpca", "lr_objective", "LRResult", "LinearHead",
    "fit_linear_head", "head_scores", "KernelPCAClassifier", "MVKPCA", "LSKPCA", "LRKPCA", "ConvergenceWarning",
]
