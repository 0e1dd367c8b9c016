"""Method registrations, one module per topic, above the registry (:mod:`graphstk.experiments.registry`).

Nothing is imported here: the registry loads a topic's module the first time a config names one of its
methods (:data:`graphstk.experiments.registry.SHIPPED` maps each method name to its module).
"""
