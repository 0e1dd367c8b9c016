"""Protocols: plug-ins of the one pipeline (how splits are drawn, where model selection
happens, which metric is reported). See :mod:`.base` for the interface and
docs/experiments.md for each protocol's config keys.

========================  ===========================================================  ========
protocol                  splits / selection                                           metric
========================  ===========================================================  ========
``node-classification``   STKR App. D: split per seed, select on val nodes             accuracy
``fixed-splits``          the dataset's own splits, k-fold CV over the labeled points  error
``labeled-per-class``     k labeled per class, validation set, test held out           error
``one-class``             train on one class, test on it and another                   auc
``planetoid``             the public split (train/val/test masks), select on val       accuracy
========================  ===========================================================  ========
"""
from __future__ import annotations

from .base import Protocol, ProtocolError, VectorProtocol, call_method
from .fixed_splits import FixedSplits, cv_folds
from .labeled_per_class import LabeledPerClass, draw_labeled_per_class
from .node_classification import NodeClassification
from .one_class import OneClass
from .per_class_splits import PerClassSplits
from .planetoid import Planetoid

__all__ = ["PROTOCOL_CLASSES", "get_protocol", "Protocol", "ProtocolError", "VectorProtocol", "FixedSplits",
           "LabeledPerClass", "NodeClassification", "OneClass", "PerClassSplits", "Planetoid", "cv_folds", "draw_labeled_per_class",
           "call_method"]

PROTOCOL_CLASSES = {c.name: c for c in (NodeClassification, FixedSplits, LabeledPerClass, OneClass, Planetoid,
                                             PerClassSplits)}


def get_protocol(cfg, kernels=None) -> Protocol:
    """The protocol object of a (single-task) config; ``kernels``: the run's
    :class:`~graphstk.experiments.kernels.KernelCache`, handed to the methods in ``MethodInput.kernels``."""
    try:
        cls = PROTOCOL_CLASSES[cfg.protocol]
    except KeyError:
        raise ProtocolError(f"unknown protocol {cfg.protocol!r} (allowed: {', '.join(PROTOCOL_CLASSES)})") from None
    return cls(cfg, kernels=kernels)
