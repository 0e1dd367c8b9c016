"""Experiment configs: YAML loading, validation through the schema, overrides.

A config is a YAML mapping (docs/experiments.md lists every key, generated from
:mod:`graphstk.experiments.schema`). It is checked completely before anything is computed;
every problem raises :class:`ConfigError` naming the key path (``tasks[0].methods[2].grid.beta``),
the value as written and what is allowed there.
"""
from __future__ import annotations

import difflib
import os
import re
from typing import Any, Union

import yaml
from pydantic import ValidationError

from .params import type_name
from .schema import PROTOCOL_MODELS, MultiTask, Task, TaskBase
from .specs import DatasetSpec, MethodSpec, PlotSpec, Sweep, grid_points, options_suffix

__all__ = ["ConfigError", "ExperimentConfig", "DatasetSpec", "MethodSpec", "Sweep", "PlotSpec", "load_config",
           "parse_config", "thin_grid", "grid_points", "options_suffix", "PROTOCOLS", "LEAVE_ONE_OUT"]

#: the protocols a config may name (``protocol:``); node-classification is the default
PROTOCOLS = tuple(PROTOCOL_MODELS)
LEAVE_ONE_OUT = "leave-one-out"
#: a single-task config (one model per protocol) or a multi-task one
ExperimentConfig = Union[TaskBase, MultiTask]


class ConfigError(ValueError):
    """A config problem; ``str(err)`` is ``"<key path>: <what is wrong and what is allowed>"``."""

    def __init__(self, path: str, message: str):
        self.path, self.message = path, message
        super().__init__(f"{path}: {message}" if path else message)


# ------------------------------------------------------------------------------------------- YAML
class _Loader(yaml.SafeLoader):
    """SafeLoader that also reads ``1e3`` / ``1e-8`` as floats (PyYAML's YAML 1.1 reads them as strings)."""


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
                |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
                |\.[0-9_]+(?:[eE][-+]?[0-9]+)?
                |[-+]?\.(?:inf|Inf|INF)
                |\.(?:nan|NaN|NAN))$""", re.X),
    list("-+0123456789."),
)


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
    raw = {"name": default_name, **raw}
    for t in [raw, *(t for t in raw.get("tasks", []) or [] if isinstance(t, dict))]:
        if "protocol" in t and t["protocol"] not in PROTOCOLS:
            path = "protocol" if t is raw else f"tasks[{raw['tasks'].index(t)}].protocol"
            raise ConfigError(path, _choice_message(t["protocol"], PROTOCOLS, "protocol"))
    if "tasks" not in raw:
        raw.setdefault("protocol", "node-classification")
    try:
        if "tasks" in raw:
            return MultiTask.model_validate(raw, context={"base_dir": base_dir})
        from pydantic import TypeAdapter

        return TypeAdapter(Task).validate_python(raw, context={"base_dir": base_dir})
    except ValidationError as err:
        raise _config_error(err, raw) from None


# ------------------------------------------------------------------------------------------- errors
def _choice_message(v, allowed, what: str = "value") -> str:
    if not isinstance(v, str):
        return f"expected one of: {', '.join(allowed)}; got {type_name(v)} {v!r}"
    close = difflib.get_close_matches(v, list(allowed), n=1)
    return f"unknown {what} {v!r}; {'did you mean ' + repr(close[0]) + '? ' if close else ''}" \
           f"(allowed: {', '.join(allowed)})"


_TAGS = {"str", "int", "float", "bool", "none", "list", "dict"}     # union branch tags of pydantic error locations


def _path(loc, raw) -> str:
    """The key path of a pydantic error location (union branch tags dropped)."""
    parts, node = [], raw
    for x in loc:
        if isinstance(node, dict) and x in node:
            node = node[x]
        elif isinstance(node, list) and isinstance(x, int) and x < len(node):
            node = node[x]
        elif isinstance(x, str) and (x in _TAGS or not x.isidentifier() or x[0].isupper()):
            continue            # a union branch tag
        elif isinstance(node, dict) or node is None:
            node = None         # a key that is absent (missing), or below one
        else:
            continue
        parts.append(x)
    return "".join(f"[{x}]" if isinstance(x, int) else f".{x}" for x in parts).lstrip(".")


def _message(e: dict) -> str:
    kind, v = e["type"], e.get("input")
    if kind == "config":
        return e["ctx"]["message"]
    if kind == "missing":
        return "missing (required)"
    if kind == "literal_error":
        return _choice_message(v, re.findall(r"'([^']*)'", e["ctx"]["expected"]))
    if kind in ("too_short",) and isinstance(v, list):
        return "empty list (give at least one value)"
    ctx = e.get("ctx") or {}
    for key, op in (("gt", ">"), ("ge", ">="), ("lt", "<"), ("le", "<=")):
        if key in ctx:
            return f"must be {op} {ctx[key]}, got {v!r}"
    words = {"bool_type": "expected true or false", "int_type": "expected an integer",
             "float_type": "expected a number", "string_type": "expected a string",
             "dict_type": "expected a mapping", "list_type": "expected a list",
             "model_type": "expected a mapping", "int_from_float": "expected an integer"}
    msg = words.get(kind, e["msg"][0].lower() + e["msg"][1:])
    return f"{msg}, got {type_name(v)} {v!r}"


def _config_error(err: ValidationError, raw: dict) -> ConfigError:
    best = None
    for e in err.errors():
        loc = tuple(e["loc"]) + tuple((e.get("ctx") or {}).get("at", ()))
        path = _path(loc, raw)
        depth = path.count(".") + path.count("[")
        if best is None or depth > best[0]:
            best = (depth, path, e)
    return ConfigError(best[1], _message(best[2]))


# ------------------------------------------------------------------------------------------- overrides
def thin_grid(values: list, keep: int = 3) -> list:
    """At most ``keep`` values, evenly spaced, first and last kept (``--quick``)."""
    if len(values) <= keep:
        return list(values)
    idx = sorted({round(i * (len(values) - 1) / (keep - 1)) for i in range(keep)})
    return [values[i] for i in idx]


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
            raise ConfigError("--datasets", f"unknown dataset(s) {unknown} for this config; allowed: "
                                            f"{sorted(names)} (case, spaces, '-' and '_' are ignored; aliases accepted)")
        tasks = [t.model_copy(update={"datasets": [d for d in t.datasets if d.name in wanted]})
                 for t in tasks if any(d.name in wanted for d in t.datasets)]
    if seeds is not None and (isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1):
        raise ConfigError("--seeds", f"must be an integer >= 1, got {seeds!r}")
    if device is not None:
        from .schema import TaskBase as _T

        try:
            _T._device(device)
        except Exception:  # noqa: BLE001 - the schema's message
            raise ConfigError("--device", f"expected a torch device such as cpu, cuda or cuda:1, got {device!r}") \
                from None
    tasks = [_task_overrides(t, seeds, quick, device) for t in tasks]
    if isinstance(cfg, MultiTask):
        return cfg.model_copy(update={"tasks": tasks, "quick": quick or cfg.quick})
    return tasks[0]


def _task_overrides(t, seeds, quick, device):
    up: dict = {}
    fixed = t.protocol == "fixed-splits"
    if seeds is not None:
        up["splits" if fixed else "seeds"] = list(range(seeds))
    if quick:
        up["quick"] = True
        if seeds is None:
            up["splits" if fixed else "seeds"] = [0, 1] if fixed and t.splits == "all" else \
                list(t.splits if fixed else t.seeds)[:2]
        up["methods"] = [MethodSpec(**{**m.__dict__, "grid": {k: thin_grid(v) for k, v in m.grid.items()}})
                         for m in t.methods]
    if device is not None:
        up["device"] = device
    return t.model_copy(update=up)
