"""Experiment configs: YAML loading, validation through the schema, command-line overrides.

A config is a YAML mapping (docs/experiments.md lists every key, generated from
:mod:`graphstk.experiments.schema`). It is checked completely before anything is computed;
every problem raises :class:`ConfigError` naming the key path (``tasks[0].methods[2].grid.beta``),
the value as written and what is allowed there.
"""
from __future__ import annotations

import os
import re
from dataclasses import replace
from typing import Any, Union

import yaml
from pydantic import BaseModel, TypeAdapter, ValidationError

from graphstk.exceptions import ConfigError

from . import schema
from .datasets import DatasetSpec
from .params import choice, type_name
from .registry import MethodSpec, Sweep, grid_points, options_suffix
from .schema import DEVICE, PROTOCOL_MODELS, MultiTask, Task, TaskBase

__all__ = ["ConfigError", "ExperimentConfig", "DatasetSpec", "MethodSpec", "Sweep", "load_config", "parse_config",
           "with_overrides", "thin_grid", "grid_points", "options_suffix", "PROTOCOLS", "LEAVE_ONE_OUT"]

#: the protocols a config may name (``protocol:``); node-classification is the default
PROTOCOLS = tuple(PROTOCOL_MODELS)
LEAVE_ONE_OUT = "leave-one-out"
#: a single-task config (one model per protocol) or a multi-task one
ExperimentConfig = Union[TaskBase, MultiTask]
_TASK = TypeAdapter(Task)


class _Loader(yaml.SafeLoader):
    """SafeLoader that also reads ``1e3`` / ``1e-8`` as floats (PyYAML's YAML 1.1 reads them as strings)."""


_Loader.add_implicit_resolver("tag:yaml.org,2002:float", re.compile(
    r"^(?:[-+]?[0-9][0-9_]*(?:\.[0-9_]*)?[eE][-+]?[0-9]+|\.[0-9_]+(?:[eE][-+]?[0-9]+)?)$"), list("-+0123456789."))


def load_config(path: str) -> ExperimentConfig:
    """Read and validate a YAML config file (its stem is the default ``name``)."""
    if not os.path.isfile(path):
        raise ConfigError("", "config file not found")
    try:
        with open(path, encoding="utf-8") as fh:
            raw = yaml.load(fh, Loader=_Loader)
    except yaml.YAMLError as err:
        raise ConfigError("", f"{path} is not valid YAML: {err}") from None
    default_name = os.path.splitext(os.path.basename(path))[0]
    return parse_config(raw, default_name=default_name, base_dir=os.path.dirname(os.path.abspath(path)))


def parse_config(raw: Any, default_name: str = "experiment", base_dir: str | None = None) -> ExperimentConfig:
    """Validate a config mapping (as read from YAML) and fill in defaults.

    A mapping with ``tasks:`` is a multi-task config: its other keys are defaults shared by every
    task, and each task is a config of its own protocol (docs/experiments.md, "Several tasks").
    """
    if raw is None:
        raise ConfigError("", "the config is empty")
    if not isinstance(raw, dict):
        raise ConfigError("<config>", f"expected a mapping, got {type_name(raw)}")
    raw = {"name": default_name, **raw} if "tasks" in raw else {"name": default_name, "protocol": PROTOCOLS[0], **raw}
    try:
        if "tasks" in raw:
            return MultiTask.model_validate(raw, context={"base_dir": base_dir})
        return _TASK.validate_python(raw, context={"base_dir": base_dir})
    except ValidationError as err:
        raise _config_error(err) from None


_WORDS = {"bool_type": "expected true or false", "int_type": "expected an integer", "float_type": "expected a number",
          "string_type": "expected a string", "dict_type": "expected a mapping", "model_type": "expected a mapping",
          "list_type": "expected a list", "int_from_float": "expected an integer"}
#: what pydantic adds to an error location inside a union: the branch's type, model or protocol name
_TAGS = {"str", "int", "float", "bool", *PROTOCOLS,
         *(n for n, v in vars(schema).items() if isinstance(v, type) and issubclass(v, BaseModel))}


def _config_error(err: ValidationError) -> ConfigError:
    """The deepest error of ``err`` as a :class:`ConfigError`: the key path as the user wrote it
    and the message in the project's words."""
    found = []
    for e in err.errors():
        kind, v, ctx = e["type"], e.get("input"), e.get("ctx") or {}
        tag = ctx["discriminator"].strip("'") if kind.startswith("union_tag") else None
        loc = [x for x in e["loc"] if isinstance(x, int) or x.isidentifier() and x not in _TAGS]
        loc += [*ctx.get("at", ()), *([tag] if tag else [])]
        path = "".join(f"[{x}]" if isinstance(x, int) else f".{x}" for x in loc).lstrip(".")
        if kind == "config":
            msg = ctx["message"]
        elif kind in ("missing", "union_tag_not_found"):
            msg = "missing (required)"
        elif kind in ("literal_error", "union_tag_invalid"):
            allowed = re.findall(r"'([^']*)'", ctx.get("expected") or ctx["expected_tags"])
            msg = choice(v[tag] if tag else v, allowed, tag or "value")
        elif kind == "too_short":
            msg = "empty list (give at least one value)"
        else:
            bound = [f"must be {op} {ctx[k]}" for k, op in (("gt", ">"), ("ge", ">="), ("lt", "<"), ("le", "<="))
                     if k in ctx]
            words = _WORDS.get(kind, e["msg"][0].lower() + e["msg"][1:])
            msg = f"{bound[0]}, got {v!r}" if bound else f"{words}, got {type_name(v)} {v!r}"
        found.append((len(loc), -len(found), path, msg))
    return ConfigError(*max(found)[2:])


def thin_grid(values: list, keep: int = 3) -> list:
    """At most ``keep`` values, evenly spaced, first and last kept (``--quick``)."""
    if len(values) <= keep:
        return list(values)
    return [values[i] for i in sorted({round(i * (len(values) - 1) / (keep - 1)) for i in range(keep)})]


QUICK_MAX_PER_CLASS = 100  #: --quick: a dataset subsampled per class (``n_per_class``) keeps at most this many


def _quick_levels(task) -> dict:
    """``--quick``: the first level only (``p_test`` or ``n_labeled``) where a task lists several."""
    out = {}
    for key in ("p_test", "n_labeled"):
        vals = getattr(task, key, None)
        if isinstance(vals, list) and len(vals) > 1:
            out[key] = vals[:1]
    return out


def _quick_dataset(spec):
    """``--quick``: a vector dataset drawn per class (``n_per_class``) is drawn with at most
    ``QUICK_MAX_PER_CLASS`` per class; every other dataset is kept whole."""
    vec = spec.vector or {}
    if vec.get("n_per_class", 0) > QUICK_MAX_PER_CLASS:
        return replace(spec, vector={**vec, "n_per_class": QUICK_MAX_PER_CLASS})
    return spec


def with_overrides(cfg, seeds: int | None = None, quick: bool = False, datasets: list[str] | None = None,
                   device: str | None = None):
    """``cfg`` with the command-line ``--seeds N``, ``--quick``, ``--datasets NAME ...`` and ``--device``
    applied (a copy). ``datasets`` keeps the config's datasets with these names, in the config's order,
    compared as the loaders compare names (:func:`graphstk.data.match_datasets`: case, spaces, ``-``
    and ``_`` ignored, aliases resolved); a name the config does not list is a :class:`ConfigError`."""
    tasks = cfg.all_tasks()
    if datasets is not None:
        from graphstk.data import match_datasets

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
                  "methods": [replace(m, grid={k: thin_grid(v) for k, v in m.grid.items()},
                                      sweep=m.sweep and replace(m.sweep, values=tuple(thin_grid(list(m.sweep.values)))))
                              for m in t.methods]}
        out.append(t.model_copy(update={**up, **({} if device is None else {"device": device})}))
    return cfg.model_copy(update={"tasks": out, "quick": quick or cfg.quick}) if isinstance(cfg, MultiTask) else out[0]
