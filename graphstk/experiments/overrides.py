"""Command-line overrides of a parsed config: ``--seeds N``, ``--quick``, ``--datasets NAME ...``, ``--device``
(:func:`override_tasks`; :meth:`graphstk.experiments.schema.Runnable.with_overrides` puts the tasks back).
"""
from __future__ import annotations

import re
from dataclasses import replace

from graphstk.exceptions import ConfigError
from graphstk.data import match_datasets

from .registry import get_method

__all__ = ["DEVICE", "QUICK_MAX_EPOCHS", "QUICK_MAX_PER_CLASS", "override_tasks", "thin_grid"]

#: A torch device as a config or ``--device`` writes it: ``cpu``, ``cuda``, ``cuda:1``, ``mps``, ``xpu``.
DEVICE = re.compile(r"(cpu|cuda|mps|xpu)(:\d+)?")


def thin_grid(values: list, keep: int = 3) -> list:
    """At most ``keep`` values, evenly spaced, first and last kept (``--quick``)."""
    if len(values) <= keep:
        return list(values)
    return [values[i] for i in sorted({round(i * (len(values) - 1) / (keep - 1)) for i in range(keep)})]


#: ``--quick``: a vector dataset drawn per class (``n_per_class``) keeps at most this many per class
QUICK_MAX_PER_CLASS = 100
#: ``--quick``: the node count of a generated ``dcsbm`` graph (the same model, generated whole)
QUICK_DCSBM_NODES = 3000


def _quick_levels(task) -> dict:
    """``--quick``: the first level only (``p_test``, ``n_labeled`` or ``fit_labels``) where a task lists several."""
    levels = {key: getattr(task, key, None) for key in ("p_test", "n_labeled", "fit_labels")}
    return {key: vals[:1] for key, vals in levels.items() if isinstance(vals, list) and len(vals) > 1}


#: ``--quick``: training epochs of the neural baselines are capped at this many
QUICK_MAX_EPOCHS = 20


def _quick_values(key: str, values: list) -> list:
    """``--quick``: a grid's ``epochs`` values capped at ``QUICK_MAX_EPOCHS`` (a smoke run, not a result)."""
    if key != "epochs":
        return values
    return list(dict.fromkeys(min(int(v), QUICK_MAX_EPOCHS) if v is not None else v for v in values))


def _quick_grid(m) -> dict:
    """``--quick``: ``m``'s grid thinned and its ``epochs`` capped (or set) at ``QUICK_MAX_EPOCHS``."""
    grid = {k: _quick_values(k, thin_grid(v)) for k, v in m.grid.items()}
    if "epochs" not in grid and (m.sweep is None or m.sweep.param != "epochs") and \
            "epochs" in get_method(m.label).gridable:
        grid["epochs"] = [QUICK_MAX_EPOCHS]
    return grid


def _quick_dataset(spec):
    """``--quick``: ``n_per_class`` capped at ``QUICK_MAX_PER_CLASS``, a dcsbm graph at ``QUICK_DCSBM_NODES``."""
    vec = spec.vector or {}
    if vec.get("n_per_class", 0) > QUICK_MAX_PER_CLASS:
        return replace(spec, vector={**vec, "n_per_class": QUICK_MAX_PER_CLASS})
    g = spec.graph or {}
    if g.get("kind") == "dcsbm" and g["nodes"] > QUICK_DCSBM_NODES:   # the same graph model, smaller, generated whole
        small = {k: v for k, v in g.items() if k != "partitioned"}
        small.update(nodes=QUICK_DCSBM_NODES, edges=max(1, g["edges"] * QUICK_DCSBM_NODES // g["nodes"]))
        return replace(spec, graph=small)
    return spec


def override_tasks(tasks: list, seeds: int | None = None, quick: bool = False, datasets: list[str] | None = None,
                   device: str | None = None) -> list:
    """Copies of ``tasks`` (the config's task models) with the command-line overrides applied; see
    :func:`graphstk.experiments.config.with_overrides`. A ``--datasets`` name no task lists, a
    ``--seeds`` below 1 or a malformed ``--device`` is a :class:`ConfigError`."""
    if datasets is not None:
        names = list(dict.fromkeys(d.name for t in tasks for d in t.datasets))
        wanted, unknown = match_datasets(datasets, names)
        if unknown or not datasets:
            raise ConfigError("--datasets", f"unknown dataset(s) {unknown} for this config; allowed: {sorted(names)} "
                                            "(case, spaces, '-' and '_' are ignored; aliases accepted)")
        tasks = [t.model_copy(update={"datasets": [d for d in t.datasets if d.name in wanted]})
                 for t in tasks if any(d.name in wanted for d in t.datasets)]
    if seeds is not None and (isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1):
        raise ConfigError("--seeds", f"must be an integer >= 1, got {seeds!r}")
    if device is not None and not DEVICE.fullmatch(str(device)):
        raise ConfigError("--device", f"expected a torch device such as cpu, cuda or cuda:1, got {device!r}")
    out = []
    for t in tasks:
        runs = "splits" if t.protocol == "fixed-splits" else "seeds"
        up = {} if seeds is None else {runs: list(range(seeds))}
        if quick:
            up = {"quick": True, runs: [0, 1] if getattr(t, runs) == "all" else getattr(t, runs)[:2], **up,
                  **_quick_levels(t), "datasets": [_quick_dataset(d) for d in t.datasets],
                  "methods": [replace(m, grid=_quick_grid(m),
                                      sweep=m.sweep and replace(m.sweep, values=tuple(thin_grid(list(m.sweep.values)))))
                              for m in t.methods]}
        out.append(t.model_copy(update={**up, **({} if device is None else {"device": device})}))
    return out
