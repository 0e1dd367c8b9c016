"""torch.nn modules for GNN code: PyG's :class:`LabelPropagation` and :class:`CorrectAndSmooth`
(same signatures, defaults and outputs) and graphstk's :class:`STKRPropagation`, all differentiable.

Every module takes ``forward(y, edge_index_or_adj, mask, edge_weight=None)`` with the adjacency
in any of PyG's forms (:func:`graphstk.operators.graph.read_adjacency`); see ``docs/nn.md``.
"""
from ._common import DivergenceWarning
from .correct_and_smooth import CorrectAndSmooth
from .label_prop import LabelPropagation
from .stkr_prop import STKRPropagation

__all__ = ["LabelPropagation", "CorrectAndSmooth", "STKRPropagation", "DivergenceWarning"]
