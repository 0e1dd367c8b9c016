"""Method registrations, one module per topic, above the registry (:mod:`graphstk.experiments.registry`).

Each module registers :class:`~graphstk.experiments.registry.MethodEntry` objects for methods that
live in :mod:`graphstk.methods` (which knows nothing of the runner). Nothing is imported here: the
registry loads a topic's module the first time a config names one of its methods
(:data:`graphstk.experiments.registry.SHIPPED` maps each method name to its module; a new topic adds
its names there).
"""
