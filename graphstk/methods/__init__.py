"""Methods: Label-Prop and STKR estimators, the batched engines behind them, and the grid API."""
from ..exceptions import ClassesWithoutLabelsWarning
from .estimators import STKR, LabelPropagation, UnreachableNodesWarning
from .grid import NonFiniteScoresWarning, grid_keys, predict_grid, predict_labels, unreachable
from .kernel_ridge import KernelRidge, RandomFeatureRidge, kernel_ridge_solve
from .coupled_embedding import CoupledKernelEmbedding, coupled_kernel_embedding
from .separating import ParzenWindow, SpectralSupportEstimator, gaussian_one_class_svm
from .sskpca import LRKPCA, LSKPCA, MVKPCA, KernelPCAClassifier   # semi-supervised KPCA (Walder et al.)
from .fredholm import (FredholmKernel, FredholmRLSC, FredholmSVM, RandomFeatureFredholm, fredholm_gram,
                       fredholm_random_features)
from .laprls import LapRLSC
from .feature_stkr import FeatureSTKR   # graph x feature kernels, closed form

__all__ = ["STKR", "LabelPropagation", "UnreachableNodesWarning", "NonFiniteScoresWarning", "grid_keys", "predict_grid",
           "predict_labels", "unreachable", "KernelRidge", "RandomFeatureRidge", "kernel_ridge_solve",
           "CoupledKernelEmbedding", "coupled_kernel_embedding", "ClassesWithoutLabelsWarning",
           "SpectralSupportEstimator", "ParzenWindow", "gaussian_one_class_svm",
           "LRKPCA", "LSKPCA", "MVKPCA", "KernelPCAClassifier",
           "FredholmKernel", "FredholmRLSC", "FredholmSVM", "RandomFeatureFredholm", "fredholm_gram",
           "fredholm_random_features", "LapRLSC", "FeatureSTKR"]
