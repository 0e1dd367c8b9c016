r"""Kernel operators: one interface for sparse graph kernels and feature kernels.

Every method talks to its kernel through :class:`KernelOperator`: ``shape``, ``dtype``,
``device`` and the product with a block ``[n_cols, C]``; :class:`GraphKernel` is the STKR base
kernel of Eq. 23 built from a PyG ``edge_index`` (visible-only degrees, so that
:math:`\tfrac{1}{n+m} G_K = D^{-1/2} W D^{-1/2}` on the visible nodes),
:class:`FeatureKernelOperator` a feature kernel evaluated in row blocks, :class:`DenseOperator`
and :class:`SparseOperator` wrap a matrix.

Example
-------
>>> import torch
>>> from graphstk.operators import DenseOperator, FeatureKernelOperator, GraphKernel
>>> edge_index = torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])          # the path 0 - 1 - 2
>>> K = GraphKernel(edge_index, num_nodes=3)
>>> K.shape, K.dtype
((3, 3), torch.float64)
>>> (K @ torch.ones(3, 2, dtype=torch.float64)).shape               # a block of 2 columns
torch.Size([3, 2])
>>> X = torch.randn(100, 4, dtype=torch.float64)
>>> G = FeatureKernelOperator(X, kernel="gaussian", sigma=1.0)      # 100 x 100, never formed
>>> torch.allclose(G.diagonal(), torch.ones(100, dtype=torch.float64))
True
>>> DenseOperator(torch.eye(3)).block(torch.tensor([0, 2]), torch.tensor([2])).to_dense()
tensor([[0.],
        [1.]])
"""
from .. import _lazy_exports

__getattr__, __dir__, __all__ = _lazy_exports(__name__, {
    ".base": "KernelOperator DenseOperator SparseOperator SpectralKernelOperator as_index",
    ".graph": "GraphKernel NormalizedGraphKernel EdgeListWarning check_edge_index clean_edge_list normalized_adjacency "
              "random_walk_kernel",
    ".feature": "FeatureKernelOperator gram",
    ".kernels": "Kernel kernel_function pairwise_distances",
    ".knn": "knn_graph cosine_neighbors",
    ".bandwidth": "median_width median_sigma kth_neighbor_distance_median median_distance",
    ".diffusion": "MixtureKernelOperator gaussian_knn_graph",
    ".factory": "GraphKernelFactory",
})
