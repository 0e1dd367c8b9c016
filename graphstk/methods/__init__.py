"""Methods: Label-Prop and STKR estimators, the validated STKRCV, and the batched engine behind them."""
from .estimators import STKR, LabelPropagation, UnreachableNodesWarning
from .grid import NonFiniteScoresWarning, predict_labels, unreachable
from .validated import STKRCV
from .kernel_ridge import KernelRidge, RandomFeatureRidge, kernel_ridge_solve
from .coupled_embedding import CoupledKernelEmbedding, coupled_kernel_embedding

__all__ = ["STKR", "STKRCV", "LabelPropagation", "UnreachableNodesWarning", "NonFiniteScoresWarning",
           "predict_labels", "unreachable", "KernelRidge", "RandomFeatureRidge", "kernel_ridge_solve",
           "CoupledKernelEmbedding", "coupled_kernel_embedding"]
from ..exceptions import ClassesWithoutLabelsWarning  # noqa: E402

__all__ += ["ClassesWithoutLabelsWarning"]

from .separating import ParzenWindow, SpectralSupportEstimator, gaussian_one_class_svm

__all__ += ["SpectralSupportEstimator", "ParzenWindow", "gaussian_one_class_svm"]
from .sskpca import LRKPCA, LSKPCA, MVKPCA, KernelPCAClassifier  # noqa: E402  semi-supervised KPCA (Walder et al.)

__all__ += ["LRKPCA", "LSKPCA", "MVKPCA", "KernelPCAClassifier"]
from .fredholm import (FredholmKernel, FredholmRLSC, FredholmSVM, RandomFeatureFredholm, fredholm_gram,
                       fredholm_random_features)
from .laprls import LapRLSC
__all__ += ["FredholmKernel", "FredholmRLSC", "FredholmSVM", "RandomFeatureFredholm", "fredholm_gram",
            "fredholm_random_features", "LapRLSC"]
from .feature_stkr import FeatureSTKR  # noqa: E402  graph x feature kernels, closed form

__all__ += ["FeatureSTKR"]
