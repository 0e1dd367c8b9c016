"""Experiments: configs -> runs over seeds and grids -> results files, tables and figures.

* :mod:`.config`   loading a YAML config, its errors (:class:`ConfigError`) and overrides (:func:`load_config`),
  the built-in default experiment (:func:`default_config`, ``python run.py`` without a config)
* :mod:`.schema`   the config schema: one pydantic model per protocol, discriminated on ``protocol``
* :mod:`.schema_doc` writes docs/experiments.md's reference part from the schema and the registrations
* :mod:`.protocols` protocols as plug-ins of the pipeline: node-classification (App. D),
  fixed-splits, labeled-per-class, one-class
* :mod:`.registry` methods by name (:class:`~.registry.MethodInput`, :class:`~.registry.MethodEntry`),
  their parameters (:class:`~.params.Param`), a config's method entries resolved against them
  (:class:`~.registry.MethodSpec`); :mod:`.registrations` registers them (``stkr``,
  ``baselines``, ``fredholm``, ``sskpca``, ``separating``)
* :mod:`.metrics`  accuracy, error, AUC, the selection rule, mean and std
* :mod:`.datasets` dataset entries (:class:`~.datasets.DatasetEntry`), graph and vector; graph loading
* :mod:`.vector_data` vector datasets loaded for the vector protocols (part, balanced subsample, noise)
* :mod:`.pipeline` the loop over tasks, datasets, levels, repetitions and methods, with the cache
* :mod:`.cache`    the resumable, atomic per-seed result cache
* :mod:`.report`   results.json / results.csv / results.md and the console table
* :mod:`.plots`    sweep figures (Figure 2, the eta ablation)
* :mod:`.paper`    the papers' numbers (paper_results.json; paper_numbers/<paper>.json)
"""
from .. import _lazy_exports
from . import registrations  # noqa: F401  registers the shipped methods into registry's table

__getattr__, __dir__, __all__ = _lazy_exports(__name__, {
    ".config": "ConfigError ExperimentConfig load_config parse_config default_config", ".pipeline": "run_experiment"})
