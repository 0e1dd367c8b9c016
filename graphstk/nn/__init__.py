"""torch.nn modules for GNN code: PyG's :class:`LabelPropagation` and :class:`CorrectAndSmooth` (same
signatures, defaults and outputs) and :class:`STKRPropagation`, all differentiable; see ``docs/nn.md``.
"""
from ._common import DivergenceWarning
from .correct_and_smooth import CorrectAndSmooth
from .label_prop import LabelPropagation
from .stkr_prop import STKRPropagation

__all__ = ["LabelPropagation", "CorrectAndSmooth", "STKRPropagation", "DivergenceWarning"]
