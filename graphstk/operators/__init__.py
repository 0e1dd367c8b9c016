"""Kernel operators: one interface for sparse graph kernels and feature kernels."""
from .base import DenseOperator, KernelOperator, SparseOperator, as_index
from .graph import (
    EdgeListWarning, GraphKernel, check_edge_index, clean_edge_list, normalized_adjacency, random_walk_kernel,
)
from .kernels import Kernel, kernel_function, pairwise_distances
from .feature import FeatureKernelOperator, gram
from .knn import knn_graph
from .bandwidth import kth_neighbor_distance_median, median_distance, median_width
from .diffusion import (
    MixtureKernelOperator, SpectralKernelOperator, diffusion_kernel, gaussian_knn_graph, laplacian_eigenpairs,
)

__all__ = [
    "KernelOperator", "DenseOperator", "SparseOperator", "as_index",
    "GraphKernel", "EdgeListWarning", "check_edge_index", "clean_edge_list", "normalized_adjacency",
    "random_walk_kernel",
    "FeatureKernelOperator", "Kernel", "gram", "kernel_function", "knn_graph", "pairwise_distances",
    "median_width", "kth_neighbor_distance_median", "median_distance",
    "MixtureKernelOperator", "SpectralKernelOperator", "diffusion_kernel", "gaussian_knn_graph",
    "laplacian_eigenpairs",
]
