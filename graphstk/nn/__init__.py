"""torch.nn modules for GNN code: PyG's :class:`LabelPropagation` and :class:`CorrectAndSmooth` (same
signatures, defaults and outputs) and :class:`STKRPropagation`, all differentiable; see ``docs/nn.md``.
"""
from .. import _lazy_exports

__getattr__, __dir__, __all__ = _lazy_exports(__name__, {
    ".label_prop": "LabelPropagation", ".correct_and_smooth": "CorrectAndSmooth", ".stkr_prop": "STKRPropagation",
    "._common": "DivergenceWarning",
})
