"""Experiments: configs -> runs over seeds and grids -> results files, tables and figures.

* :mod:`.config`   the YAML schema and its strict validation (:func:`load_config`)
* :mod:`.runner`   the protocol of App. D (settings, model selection on val)
* :mod:`.pipeline` the loop over datasets, p_test, seeds and methods, with the cache
* :mod:`.cache`    the resumable, atomic per-seed result cache
* :mod:`.report`   results.json / results.csv / results.md and the console table
* :mod:`.plots`    sweep figures (Figure 2, the eta ablation)
* :mod:`.paper`    the paper's numbers (paper_results.json)
* :mod:`.default`  the built-in default experiment (``python run.py`` without a config)
"""
from .config import ConfigError, ExperimentConfig, load_config, parse_config

__all__ = ["ConfigError", "ExperimentConfig", "load_config", "parse_config", "run_experiment"]


def run_experiment(*args, **kwargs):
    """See :func:`graphstk.experiments.pipeline.run_experiment`."""
    from .pipeline import run_experiment as _run

    return _run(*args, **kwargs)
