r"""Correct-and-Smooth (Huang et al., ICLR 2021) with the signature and outputs of PyG's
:class:`torch_geometric.nn.models.CorrectAndSmooth`, on :class:`graphstk.nn.LabelPropagation`, differentiable
in the soft predictions, edge weights and ``alpha`` tensors (equations: ``docs/nn.md``).
"""
from __future__ import annotations

import torch
from torch import Tensor

from .label_prop import LabelPropagation

__all__ = ["CorrectAndSmooth"]


def _check(y_soft: Tensor, y_true: Tensor, mask: Tensor) -> tuple[int, Tensor]:
    numel = int(mask.sum()) if mask.dtype == torch.bool else mask.numel()
    if y_true.size(0) != numel:
        raise ValueError(f"y_true must hold the labels of the {numel} masked nodes (y[mask]), got {y_true.size(0)} "
                         "rows")
    if y_soft.dim() != 2:
        raise ValueError(f"y_soft must be a float matrix [N, C], got shape {tuple(y_soft.shape)}")
    if not y_true.dtype.is_floating_point and y_true.size(0) == y_true.numel():
        y_true = torch.nn.functional.one_hot(y_true.view(-1).long(), y_soft.size(-1)).to(y_soft.dtype)
    return numel, y_true


class CorrectAndSmooth(torch.nn.Module):
    r"""Correct-and-Smooth post-processing of soft predictions ``Z`` (PyG's signature and defaults).

    Parameters
    ----------
    num_correction_layers : int
        ``L_1``, steps of the error propagation.
    correction_alpha : float or Tensor
        ``alpha_1`` (``1.0`` is allowed, as in PyG's example).
    num_smoothing_layers : int
        ``L_2``, steps of the label propagation of the corrected predictions.
    smoothing_alpha : float or Tensor
        ``alpha_2``.
    autoscale : bool, default True
        Scale the propagated error per row (``sigma / ||E_i||_1``); else by ``scale``.
    scale : float, default 1.0
        ``gamma`` when ``autoscale=False``.

    ``prop1`` and ``prop2`` are the two :class:`~graphstk.nn.LabelPropagation` modules.
    """

    def __init__(self, num_correction_layers: int, correction_alpha: float, num_smoothing_layers: int,
                 smoothing_alpha: float, autoscale: bool = True, scale: float = 1.0):
        super().__init__()
        self.autoscale = autoscale
        self.scale = scale
        self.prop1 = LabelPropagation(num_correction_layers, correction_alpha)
        self.prop2 = LabelPropagation(num_smoothing_layers, smoothing_alpha)

    def forward(self, y_soft: Tensor, *args) -> Tensor:
        """:meth:`correct` then :meth:`smooth` (same arguments)."""
        return self.smooth(self.correct(y_soft, *args), *args)

    def correct(self, y_soft: Tensor, y_true: Tensor, mask: Tensor, edge_index, edge_weight: Tensor | None = None
                ) -> Tensor:
        """Corrected predictions ``Z + gamma E^{(L_1)}`` ``[N, C]``.

        Parameters
        ----------
        y_soft : Tensor ``[N, C]``, the base predictor's soft predictions ``Z``.
        y_true : LongTensor ``[n]`` or float ``[n, C]``, labels of the masked nodes (``y[mask]``).
        mask : BoolTensor ``[N]`` or LongTensor ``[n]`` of ids, the training nodes.
        edge_index : LongTensor ``[2, E]`` | EdgeIndex | torch.sparse adj_t | SparseTensor
        edge_weight : Tensor ``[E]``, optional
        """
        numel, y_true = _check(y_soft, y_true, mask)
        error = torch.zeros_like(y_soft).index_put((_ids(mask),), y_true - y_soft[mask])
        if self.autoscale:
            smoothed = self.prop1(error, edge_index, edge_weight=edge_weight, post_step=lambda x: x.clamp(-1.0, 1.0))
            sigma = error[mask].abs().sum() / numel
            mass = smoothed.abs().sum(dim=1, keepdim=True)
            # a row without error mass gets scale 1 (PyG: sigma / 0 = inf -> 1); dividing by a safe mass
            # keeps the inf out of the backward pass too, where torch.where alone would turn 0 * inf into NaN
            none = mass == 0
            scale = sigma / torch.where(none, torch.ones_like(mass), mass)
            scale = torch.where(none | scale.isinf() | (scale > 1000), torch.ones_like(scale), scale)
            return y_soft + scale * smoothed
        ids, err = _ids(mask), error[mask]

        def fix_input(x: Tensor) -> Tensor:
            return x.index_put((ids,), err)

        smoothed = self.prop1(error, edge_index, edge_weight=edge_weight, post_step=fix_input)
        return y_soft + self.scale * smoothed

    def smooth(self, y_soft: Tensor, y_true: Tensor, mask: Tensor, edge_index, edge_weight: Tensor | None = None
               ) -> Tensor:
        """Smoothed predictions ``[N, C]``: the training rows set to their labels, then
        ``num_smoothing_layers`` steps of label propagation. Arguments as in :meth:`correct`."""
        _, y_true = _check(y_soft, y_true, mask)
        y_soft = y_soft.index_put((_ids(mask),), y_true.to(y_soft.dtype))
        return self.prop2(y_soft, edge_index, edge_weight=edge_weight)

    def __repr__(self) -> str:
        L1, alpha1 = self.prop1.num_layers, self.prop1.alpha
        L2, alpha2 = self.prop2.num_layers, self.prop2.alpha
        return (f"{type(self).__name__}(\n"
                f"  correct: num_layers={L1}, alpha={alpha1}\n"
                f"  smooth:  num_layers={L2}, alpha={alpha2}\n"
                f"  autoscale={self.autoscale}, scale={self.scale}\n"
                ")")


def _ids(mask: Tensor) -> Tensor:
    return mask.nonzero().view(-1) if mask.dtype == torch.bool else mask.long()
