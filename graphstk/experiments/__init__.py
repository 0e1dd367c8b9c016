"""Experiments: configs -> runs over seeds and grids -> results files, tables and figures.

* :mod:`.config`   loading a YAML config, its errors (:class:`ConfigError`) and overrides (:func:`load_config`)
* :mod:`.schema`   the config schema: one pydantic model per protocol, discriminated on ``protocol``
* :mod:`.schema_doc` writes docs/experiments.md's reference part from the schema and the registrations
* :mod:`.protocols` protocols as plug-ins of the pipeline: node-classification (App. D),
  fixed-splits, labeled-per-class, one-class
* :mod:`.registry` methods by name (:class:`~.registry.Problem`, :class:`~.registry.MethodEntry`),
  their parameters (:class:`~.params.Param`), a config's method entries resolved against them
  (:class:`~.registry.MethodSpec`); :mod:`.registrations` registers them (``stkr``,
  ``baselines``, ``fredholm``, ``sskpca``, ``separating``)
* :mod:`.metrics`  accuracy, error, AUC, the selection rule, mean and std
* :mod:`.datasets` graph dataset entries (:class:`~.datasets.DatasetSpec`) and their loading
* :mod:`.vector_data` vector dataset entries (part, balanced subsample) for the vector protocols
* :mod:`.pipeline` the loop over tasks, datasets, levels, repetitions and methods, with the cache
* :mod:`.cache`    the resumable, atomic per-seed result cache
* :mod:`.report`   results.json / results.csv / results.md and the console table
* :mod:`.plots`    sweep figures (Figure 2, the eta ablation)
* :mod:`.paper`    the papers' numbers (paper_results.json; paper_numbers/<paper>.json)
* :mod:`.default`  the built-in default experiment (``python run.py`` without a config)
"""
from .config import ConfigError, ExperimentConfig, load_config, parse_config

__all__ = ["ConfigError", "ExperimentConfig", "load_config", "parse_config", "run_experiment"]


def run_experiment(*args, **kwargs):
    """Run a config: every task, dataset, seed and method; write the results files.

    ``run_experiment(cfg, out_dir, data_root=None, *, progress=True, log=None, write=True)``
    (the implementation is ``graphstk.experiments.pipeline.run_experiment``, imported on first
    call so that importing :mod:`graphstk.experiments` stays cheap).

    Parameters
    ----------
    cfg : ExperimentConfig
        A validated config (:func:`load_config` or :func:`parse_config`).
    out_dir : str
        Where ``results.json``, ``results.csv``, ``results.md`` (and the figure of a sweep, if
        any) are written; per-seed results are cached under ``out_dir/cache``, so an interrupted
        run resumes where it stopped.
    data_root : str, optional
        Dataset folder; default ``$GRAPHSTK_DATA``, else ``./datasets``.
    progress : bool, default True
        Show a progress bar.
    log : callable, optional
        Receives one message string per event (default: written to stderr).
    write : bool, default True
        Write the results files.

    Returns
    -------
    dict
        ``{"config": ..., "rows": [...], "wall_time_s": ...}``, the content of ``results.json``:
        one row per (dataset, method, setting, p_test).

    Raises
    ------
    ConfigError
        Bad input (an unknown dataset, too few points of a class, overlapping split sets, NaN
        features, ...), raised after every dataset is loaded and checked and before anything is
        computed.
    """
    from .pipeline import run_experiment as _run

    return _run(*args, **kwargs)
