"""Experiment configs: YAML loading, validation through :mod:`graphstk.experiments.schema`, command-line
overrides, and the built-in default experiment (:func:`default_config`). Every problem raises
:class:`ConfigError` naming the key path (``tasks[0].methods[2].grid.beta``), the value as written and what is
allowed there, before anything is computed.
"""
from __future__ import annotations

import os
import re
from typing import Any, Union

import yaml
from pydantic import BaseModel, TypeAdapter, ValidationError

from graphstk.exceptions import ConfigError

from . import schema
from .datasets import DatasetEntry
from .params import choice, type_name
from .registry import MethodSpec, Sweep, grid_points, options_suffix
from .overrides import thin_grid
from .schema import DEVICE, PROTOCOL_MODELS, MultiTask, Task, TaskBase

__all__ = ["ConfigError", "ExperimentConfig", "DatasetEntry", "MethodSpec", "Sweep", "load_config", "parse_config",
           "with_overrides", "thin_grid", "grid_points", "options_suffix", "PROTOCOLS", "LEAVE_ONE_OUT", "DEFAULT",
           "default_config"]

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
    """The deepest error of ``err`` as a :class:`ConfigError`."""
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


def with_overrides(cfg, seeds: int | None = None, quick: bool = False, datasets: list[str] | None = None,
                   device: str | None = None):
    """``cfg`` with the command-line ``--seeds N``, ``--quick``, ``--datasets NAME ...`` and ``--device``
    applied (a copy). ``datasets`` keeps the config's datasets with these names, in the config's order,
    compared as the loaders compare names (:func:`graphstk.data.match_datasets`: case, spaces, ``-``
    and ``_`` ignored, aliases resolved); a name the config does not list is a :class:`ConfigError`."""
    return cfg.with_overrides(seeds=seeds, quick=quick, datasets=datasets, device=device)


#: the built-in default experiment (``python run.py`` with no config): Zachary's karate club and a seeded
#: stochastic block model (networkx, no files, no network), every method of the STKR paper with small grids
DEFAULT = {
    "name": "default",
    "description": "Built-in smoke experiment: karate club and a 3-block SBM, all eight methods of the STKR "
                   "paper with small grids (offline, seconds).",
    "seeds": 5,
    "p_test": 0.2,
    # karate has 34 nodes: too few for 20 x #classes train/val nodes, so it gets 3 + 3 per class,
    # redrawn per seed (planetoid_split: random) together with the test nodes.
    "planetoid_split": "random",
    "datasets": [
        {"name": "Karate", "graph": {"kind": "karate_club", "train_per_class": 3, "val_per_class": 3}},
        {"name": "SBM", "graph": {"kind": "sbm", "sizes": [80, 80, 80], "p_in": 0.08, "p_out": 0.015,
                                  "seed": 0}},
    ],
    "grid": {"T": [4, 16], "eta": [0.9, 0.99], "beta": [1.0, 1e-2, 1e-4], "k": [4], "d": [4, 8]},
    "methods": ["LP (t)", "SP-Lap (t)", "SP-poly (t)", "SP-topd (t)",
                "SP-Lap (i)", "SP-poly (i)", "SP-topd (i)", "KRR (i)"],
    "paper_table": None,
}


def default_config():
    """The built-in default experiment, validated like any config."""
    return parse_config(DEFAULT, default_name="default")
