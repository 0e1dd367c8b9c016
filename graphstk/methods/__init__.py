"""Methods: Label-Prop and STKR estimators, the batched engines behind them, and the grid API."""
from .estimators import STKR, LabelPropagation, UnreachableNodesWarning
from .grid import METHODS, predict_grid, predict_labels, unreachable

__all__ = ["STKR", "LabelPropagation", "UnreachableNodesWarning", "METHODS", "predict_grid",
           "predict_labels", "unreachable"]
