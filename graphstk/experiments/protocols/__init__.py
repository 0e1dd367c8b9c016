"""Protocols: plug-ins of the one pipeline (how splits are drawn, where model selection happens, which
metric is reported); :mod:`.base` holds the interface, docs/experiments.md ("Protocols") each protocol.

A protocol's module is loaded when a config names the protocol (:func:`get_protocol`) or when one of its
names is imported from this package.
"""
from __future__ import annotations

import importlib

from .base import Protocol, ProtocolError, call_method

__all__ = ["PROTOCOL_CLASSES", "get_protocol", "protocol_class", "Protocol", "ProtocolError", "VectorProtocol",
           "FixedSplits", "LabeledPerClass", "NodeClassification", "OneClass", "PerClassSplits", "Planetoid", "cv_folds",
           "draw_labeled_per_class", "call_method", "PROTOCOL_MODULES"]

#: the module of each protocol (``protocol:`` of a config)
PROTOCOL_MODULES = {"node-classification": "node_classification", "fixed-splits": "fixed_splits",
                    "labeled-per-class": "labeled_per_class", "one-class": "one_class", "planetoid": "planetoid",
                    "per-class-splits": "per_class_splits"}
#: the names this package exports from its protocol modules
_EXPORTS = {"NodeClassification": "node_classification", "FixedSplits": "fixed_splits", "cv_folds": "fixed_splits",
            "LabeledPerClass": "labeled_per_class", "draw_labeled_per_class": "labeled_per_class",
            "OneClass": "one_class", "Planetoid": "planetoid", "PerClassSplits": "per_class_splits",
            "VectorProtocol": "vector"}


def _module(name: str):
    return importlib.import_module(f"{__name__}.{name}")


def __getattr__(name: str):
    if name == "PROTOCOL_CLASSES":      # every protocol class by name (loads every protocol module)
        return {p: protocol_class(p) for p in PROTOCOL_MODULES}
    if name in _EXPORTS:
        return getattr(_module(_EXPORTS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def protocol_class(protocol: str) -> type:
    """The :class:`Protocol` subclass of ``protocol`` (its module loaded on first use)."""
    if protocol not in PROTOCOL_MODULES:
        raise ProtocolError(f"unknown protocol {protocol!r} (allowed: {', '.join(PROTOCOL_MODULES)})")
    module = _module(PROTOCOL_MODULES[protocol])
    return next(c for c in vars(module).values() if isinstance(c, type) and getattr(c, "name", None) == protocol)


def get_protocol(cfg, kernels=None) -> Protocol:
    """The protocol object of a (single-task) config; ``kernels``: the run's
    :class:`~graphstk.experiments.kernels.KernelCache`, handed to the methods in ``MethodInput.kernels``."""
    return protocol_class(cfg.protocol)(cfg, kernels=kernels)
