"""torch.nn modules in PyG style: :class:`LabelPropagation` and :class:`STKRPropagation`.

Both take ``forward(y, edge_index, mask, edge_weight=None)`` like
:class:`torch_geometric.nn.models.LabelPropagation` and return ``[N, C]`` scores.
"""
from .propagation import LabelPropagation, STKRPropagation

__all__ = ["LabelPropagation", "STKRPropagation"]
