"""Experiment configs: the schema, its defaults and strict validation.

A config is a YAML mapping (see ``docs/experiments.md`` for every key). It is checked
completely before anything is computed; every problem raises :class:`ConfigError`
naming the key path (``methods[2].grid.beta``) and what is allowed there.

Nothing here knows how a method works: a method label only maps to the engine's
method name, a setting and the names of its grid parameters.
"""
from __future__ import annotations

import difflib
import itertools
import math
import os
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

__all__ = [
    "ConfigError", "ExperimentConfig", "DatasetSpec", "MethodSpec", "Sweep", "SolverOptions",
    "PlotSpec", "METHODS", "METHOD_OPTIONS", "DEFAULT_GRID", "UNREACHABLE", "STEP_SIZES", "load_config",
    "parse_config", "thin_grid", "options_suffix",
]


class ConfigError(ValueError):
    """A config problem; ``str(err)`` is ``"<key path>: <what is wrong and what is allowed>"``."""

    def __init__(self, path: str, message: str):
        self.path, self.message = path, message
        super().__init__(f"{path}: {message}" if path else message)


# --------------------------------------------------------------------------- methods
@dataclass(frozen=True)
class MethodInfo:
    engine: str                  # method name of graphstk.methods.predict_grid
    setting: str                 # "transductive" | "inductive"
    required: tuple[str, ...]    # grid parameters that must have values
    optional: tuple[str, ...]    # grid parameters that may be given (or removed with null)
    defaults: tuple[str, ...]    # the parameters whose default grid is used when not given
    options: tuple[str, ...] = ()  # per-method options (METHOD_OPTIONS) this method takes


METHODS: dict[str, MethodInfo] = {
    "LP (t)": MethodInfo("lp", "transductive", ("eta",), ("T",), ("eta", "T"), ("labels",)),
    "SP-Lap (t)": MethodInfo("stkr-lap", "transductive", ("eta", "beta"), ("T",), ("eta", "beta", "T"), ("labels",)),
    "SP-poly (t)": MethodInfo("stkr-poly", "transductive", ("k", "beta"), ("T",), ("k", "beta", "T"), ("labels",)),
    "SP-topd (t)": MethodInfo("stkr-topd", "transductive", ("d", "beta"), (), ("d", "beta"), ("support", "labels")),
    "SP-Lap (i)": MethodInfo("stkr-lap", "inductive", ("eta", "beta"), ("T",), ("eta", "beta"), ("labels",)),
    "SP-poly (i)": MethodInfo("stkr-poly", "inductive", ("k", "beta"), ("T",), ("k", "beta"), ("labels",)),
    "SP-topd (i)": MethodInfo("stkr-topd", "inductive", ("d", "beta"), (), ("d", "beta"), ("support", "labels")),
    "KRR (i)": MethodInfo("krr", "inductive", ("beta",), (), ("beta",), ("labels",)),
}


@dataclass(frozen=True)
class MethodOption:
    allowed: tuple[str, ...]     # the values a config may give
    default: str                 # the value when the method entry does not give one
    engine_kwarg: str            # the keyword argument of predict_grid it is passed as
    meaning: str                 # for error messages


# Per-method options: a key of a method mapping (next to label/grid/sweep), allowed only for
# the methods whose MethodInfo.options names it; the resolved value is part of the row and
# of the cache key. support: "all" is Eq. 8 of the paper (kernel PCA over every unlabeled
# visible node); "labeled" restricts it to the connected components that contain a label.
METHOD_OPTIONS: dict[str, MethodOption] = {
    "support": MethodOption(("all", "labeled"), "labeled", "topd_support",   # "all" = Eq. 8 as written
                            "the node set of the kernel PCA of SP-topd"),
    "labels": MethodOption(("onehot", "centered"), "onehot", "labels",
                           "the label matrix: one-hot, or one-hot minus the training class frequencies"),
}

# How a test/val node whose score row is all zero (or not finite) is scored.
# "wrong": it counts as a wrong prediction; "class0": plain argmax, i.e. class 0 (the paper's numbers).
UNREACHABLE = ("wrong", "class0")

# solver.step_size: the Richardson step of predict_grid (or a positive number).
STEP_SIZES = ("auto", "paper")

# Appendix D of the STKR paper (l.989-1005). k defaults to [8]: Tables 1, 4 and 5 use
# s(l) = l^8 (their captions); Appendix D's k grid [1, 2, 4, 6, 8] is what Figure 2 sweeps.
DEFAULT_GRID: dict[str, list] = {
    "T": [1, 2, 4, 8, 16, 32],
    "eta": [0.7, 0.8, 0.9, 0.99, 0.999, 0.9999, 0.99999, 0.999999],
    "beta": [1e3, 1e2, 1e1, 1e0, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8],
    "k": [8],
    "d": [32, 64, 128, 256, 512],
}

# name -> (python type, check, description of what is allowed)
_PARAMS: dict[str, tuple[type, Any, str]] = {
    "eta": (float, lambda v: 0.0 < v < 1.0, "a number in (0, 1)"),
    "beta": (float, lambda v: v > 0.0 and math.isfinite(v), "a positive number"),
    "T": (int, lambda v: v >= 1, "an integer >= 1 (number of iterations)"),
    "k": (int, lambda v: v >= 1, "an integer >= 1 (power of s(l) = l^k)"),
    "d": (int, lambda v: v >= 1, "an integer >= 1 (number of eigenvectors)"),
}

_PAPER_TABLES = ("auto", "table1", "table4", "table5")
_SPLIT_KEYS = {"train_per_class", "val_per_class"}
_GRAPH_KINDS = {"karate_club": {"kind"} | _SPLIT_KEYS,
                "sbm": {"kind", "sizes", "p_in", "p_out", "seed"} | _SPLIT_KEYS}
_SOLVER_KEYS = {"solver", "max_iter", "tol", "dtype", "step_size"}
_SOLVERS = ("auto", "richardson", "cg", "gmres", "direct")   # graphstk.methods.propagation.SOLVERS
_TOP_KEYS = {"name", "description", "seeds", "p_test", "datasets", "skip_missing", "methods", "grid",
             "solver", "paper_table", "plot", "planetoid_split", "unreachable", "protocol", "tasks"}

# --------------------------------------------------------------------------- protocols
#: the protocols a config may name (``protocol:``); node-classification is the default
PROTOCOLS = ("node-classification", "fixed-splits", "labeled-per-class", "one-class", "planetoid")
#: protocols on graphs (their methods may need the graph)
GRAPH_PROTOCOLS = ("node-classification", "planetoid")
DEFAULT_PROTOCOL = "node-classification"
# top-level keys that belong to one protocol only (a key of another protocol is an error)
_NODE_KEYS = {"p_test", "planetoid_split", "unreachable", "solver"}
_PROTOCOL_KEYS: dict[str, set[str]] = {
    "node-classification": _NODE_KEYS,
    "fixed-splits": {"n_labeled", "splits", "cv_folds", "paper"},
    "labeled-per-class": {"n_labeled", "val_per_class", "test", "test_size", "test_part", "n_unlabeled",
                          "paper"},
    "one-class": {"n_train", "n_test", "train_pool", "test_pool", "train_part", "test_part", "pool_seed",
                  "balanced", "paper"},
    "planetoid": {"fit_labels", "paper"},
}
_ALL_PROTOCOL_KEYS = set().union(*_PROTOCOL_KEYS.values())
_VECTOR_DATASET_KEYS = {"name", "source", "part", "n_per_class", "subsample_seed", "options", "positive",
                        "negative", "noise_std", "noise_seed"}


# --------------------------------------------------------------------------- dataclasses
@dataclass(frozen=True)
class DatasetSpec:
    """One dataset: a name (what rows show) and where it comes from.

    Exactly one source: ``source`` (a dataset name or an ``.npz`` path, given to
    :func:`graphstk.load_dataset`) or ``graph`` (a generated networkx graph).
    """
    name: str
    source: str | None = None
    graph: dict | None = None
    vector: dict | None = None    # vector protocols: {part, n_per_class, subsample_seed, options, positive, negative}

    def identity(self) -> dict:
        out = {"name": self.name, "source": self.source, "graph": self.graph}
        if self.vector is not None:       # graph datasets keep their identity (and cache keys) unchanged
            out["vector"] = self.vector
        return out


@dataclass(frozen=True)
class Sweep:
    """Run one series per value of ``param`` (the other parameters are selected on val)."""
    param: str
    values: tuple


@dataclass(frozen=True)
class MethodSpec:
    label: str                    # the paper's label, e.g. "SP-Lap (t)"
    engine: str                   # predict_grid's method name
    setting: str                  # "transductive" | "inductive"
    grid: dict                    # param -> list of values (sweep param excluded)
    sweep: Sweep | None = None
    options: dict = field(default_factory=dict)   # resolved METHOD_OPTIONS of this method, e.g. {"support": "all"}

    def engine_kwargs(self) -> dict:
        """The options as ``predict_grid`` keyword arguments (e.g. ``{"topd_support": "labeled"}``)."""
        return {METHOD_OPTIONS[k].engine_kwarg: v for k, v in self.options.items()}

    def display(self) -> str:
        """The label plus its non-default options, e.g. ``"SP-topd (t) [support=labeled]"``."""
        return self.label + options_suffix(self.options)

    def series(self) -> list[tuple[dict | None, dict]]:
        """``[(sweep value or None, full grid)]``: one entry per results row."""
        if self.sweep is None:
            return [(None, dict(self.grid))]
        return [({self.sweep.param: v}, {**self.grid, self.sweep.param: [v]}) for v in self.sweep.values]


@dataclass(frozen=True)
class SolverOptions:
    solver: str = "auto"
    max_iter: int | None = None
    tol: float | None = None
    dtype: str = "float64"
    step_size: str | float = "auto"

    def to_dict(self) -> dict:
        return {"solver": self.solver, "max_iter": self.max_iter, "tol": self.tol, "dtype": self.dtype,
                "step_size": self.step_size}

    @property
    def torch_dtype(self):
        """The dtype of the kernels (and therefore of every solve)."""
        import torch

        return getattr(torch, self.dtype)

    def engine_kwargs(self) -> dict:
        """Solver keyword arguments for ``predict_grid`` (``None`` entries left to the engine).

        ``dtype`` is not among them: the engine computes in the dtype of the kernel it is given.
        """
        out: dict = {"solver": self.solver, "step_size": self.step_size}
        if self.max_iter is not None:
            out["max_iter"] = self.max_iter
        if self.tol is not None:
            out["tol"] = self.tol
        return out


@dataclass(frozen=True)
class PlotSpec:
    file: str                 # PNG file name, written into the output directory
    x: str                    # the swept parameter on the x axis
    title: str | None = None


@dataclass
class ExperimentConfig:
    name: str
    seeds: list[int]
    p_test: list[float]
    datasets: list[DatasetSpec]
    methods: list[MethodSpec]
    skip_missing: bool = False
    solver: SolverOptions = field(default_factory=SolverOptions)
    paper_table: str | None = "auto"
    planetoid_split: str = "public"
    unreachable: str = "wrong"
    plot: PlotSpec | None = None
    description: str = ""
    quick: bool = False
    protocol: str = DEFAULT_PROTOCOL
    protocol_options: dict = field(default_factory=dict)   # the protocol's resolved keys (n_labeled, cv_folds, ...)
    paper: str | None = None       # vector protocols: the paper_numbers/<paper>.json file compared with
    tasks: list = field(default_factory=list)   # a multi-task config: its tasks (each an ExperimentConfig)
    task: str | None = None        # the name of this task inside a multi-task config

    def all_tasks(self) -> list["ExperimentConfig"]:
        """The tasks to run: ``self.tasks`` for a multi-task config, else ``[self]``."""
        return list(self.tasks) if self.tasks else [self]

    def to_dict(self) -> dict:
        """The fully resolved config (defaults filled in): what results.json records."""
        if self.tasks:
            return {"name": self.name, "description": self.description, "quick": self.quick,
                    "tasks": [t.to_dict() for t in self.tasks]}
        out = self._node_dict()
        if self.protocol != DEFAULT_PROTOCOL or self.task is not None:
            out.update({"protocol": self.protocol, "protocol_options": dict(self.protocol_options),
                        "paper": self.paper, "task": self.task})
            if self.protocol != DEFAULT_PROTOCOL:
                for key in ("p_test", "solver", "planetoid_split", "unreachable"):
                    out.pop(key, None)
        return out

    def _node_dict(self) -> dict:
        return {
            "name": self.name, "description": self.description, "seeds": list(self.seeds),
            "p_test": list(self.p_test),
            "datasets": [d.identity() for d in self.datasets],
            "methods": [{"label": m.label, "engine": m.engine, "setting": m.setting, "grid": m.grid,
                         "sweep": None if m.sweep is None else
                         {"param": m.sweep.param, "values": list(m.sweep.values)},
                         "options": dict(m.options)} for m in self.methods],
            "skip_missing": self.skip_missing, "solver": self.solver.to_dict(),
            "paper_table": self.paper_table, "planetoid_split": self.planetoid_split,
            "unreachable": self.unreachable,
            "plot": None if self.plot is None else {"file": self.plot.file, "x": self.plot.x,
                                                     "title": self.plot.title},
            "quick": self.quick,
        }

    def with_overrides(self, seeds: int | None = None, quick: bool = False,
                       datasets: list[str] | None = None) -> "ExperimentConfig":
        """Apply the command-line ``--seeds N``, ``--quick`` and ``--datasets NAME ...`` overrides.

        ``datasets`` keeps only the config's datasets with these names (case-insensitive), in
        the config's order; a name the config does not list is a :class:`ConfigError`.
        """
        import dataclasses

        if self.tasks:
            return self._tasks_with_overrides(seeds, quick, datasets)
        cfg = dataclasses.replace(self)
        if datasets is not None:
            known = {d.name.lower(): d.name for d in self.datasets}
            unknown = [name for name in datasets if name.lower() not in known]
            if unknown or not datasets:
                raise ConfigError("--datasets", f"unknown dataset(s) {unknown} for this config; "
                                  f"allowed: {sorted(known.values())}")
            wanted = {name.lower() for name in datasets}
            cfg.datasets = [d for d in self.datasets if d.name.lower() in wanted]
        if seeds is not None:
            if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1:
                raise ConfigError("--seeds", f"must be an integer >= 1, got {seeds!r}")
            cfg.seeds = list(range(seeds))
            if cfg.protocol == "fixed-splits":      # the dataset's own splits 0..N-1
                cfg.protocol_options = {**cfg.protocol_options, "splits": list(range(seeds))}
        if quick:
            cfg.quick = True
            if seeds is None:
                cfg.seeds = cfg.seeds[:2]
                if cfg.protocol == "fixed-splits":
                    sp = cfg.protocol_options.get("splits", "all")
                    cfg.protocol_options = {**cfg.protocol_options,
                                            "splits": [0, 1] if sp == "all" else list(sp)[:2]}
            cfg.methods = [dataclasses.replace(m, grid={k: thin_grid(v) for k, v in m.grid.items()})
                           for m in cfg.methods]
        return cfg

    def _tasks_with_overrides(self, seeds, quick, datasets) -> "ExperimentConfig":
        import dataclasses

        tasks = list(self.tasks)
        if datasets is not None:
            known = {d.name.lower(): d.name for t in tasks for d in t.datasets}
            unknown = [name for name in datasets if name.lower() not in known]
            if unknown or not datasets:
                raise ConfigError("--datasets", f"unknown dataset(s) {unknown} for this config; "
                                  f"allowed: {sorted(known.values())}")
            wanted = {name.lower() for name in datasets}
            tasks = [t for t in tasks if any(d.name.lower() in wanted for d in t.datasets)]
            tasks = [t.with_overrides(datasets=[d.name for d in t.datasets if d.name.lower() in wanted])
                     for t in tasks]
        tasks = [t.with_overrides(seeds=seeds, quick=quick) for t in tasks]
        return dataclasses.replace(self, tasks=tasks, quick=quick or self.quick,
                                   datasets=[d for t in tasks for d in t.datasets],
                                   methods=[m for t in tasks for m in t.methods])


def options_suffix(options: dict | None) -> str:
    """``" [support=labeled]"`` for the options that differ from their default; ``""`` otherwise."""
    extra = [f"{k}={v}" for k, v in (options or {}).items()
             if k not in METHOD_OPTIONS or v != METHOD_OPTIONS[k].default]
    return f" [{','.join(extra)}]" if extra else ""


def thin_grid(values: list, keep: int = 3) -> list:
    """At most ``keep`` values, evenly spaced, first and last kept (``--quick``)."""
    if len(values) <= keep:
        return list(values)
    idx = sorted({round(i * (len(values) - 1) / (keep - 1)) for i in range(keep)})
    return [values[i] for i in idx]


# --------------------------------------------------------------------------- YAML
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


# --------------------------------------------------------------------------- validation helpers
def _tname(v) -> str:
    return "null" if v is None else type(v).__name__


def _unknown(keys, allowed, path: str) -> None:
    for k in keys:
        if k not in allowed:
            close = difflib.get_close_matches(str(k), sorted(allowed), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ConfigError(f"{path}.{k}" if path else str(k),
                              f"unknown key{hint} (allowed: {', '.join(sorted(allowed))})")


def _mapping(v, path: str) -> dict:
    if not isinstance(v, dict):
        raise ConfigError(path, f"expected a mapping, got {_tname(v)}")
    return v


def _list(v, path: str, allow_scalar: bool = False) -> list:
    if allow_scalar and not isinstance(v, (list, dict)) and v is not None:
        return [v]
    if not isinstance(v, list):
        raise ConfigError(path, f"expected a list, got {_tname(v)}")
    if not v:
        raise ConfigError(path, "empty list (give at least one value)")
    return v


def _str(v, path: str) -> str:
    if not isinstance(v, str) or not v.strip():
        raise ConfigError(path, f"expected a non-empty string, got {_tname(v)} {v!r}")
    return v


def _bool(v, path: str) -> bool:
    if not isinstance(v, bool):
        raise ConfigError(path, f"expected true or false, got {_tname(v)} {v!r}")
    return v


def _int(v, path: str, lo: int | None = None) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise ConfigError(path, f"expected an integer, got {_tname(v)} {v!r}")
    if lo is not None and v < lo:
        raise ConfigError(path, f"must be >= {lo}, got {v}")
    return v


def _float(v, path: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ConfigError(path, f"expected a number, got {_tname(v)} {v!r}")
    return float(v)


def _choice(v, path: str, allowed: tuple[str, ...], what: str = "value") -> str:
    """``v`` must be one of ``allowed`` (strings); the error suggests the closest one."""
    if not isinstance(v, str):
        raise ConfigError(path, f"expected one of: {', '.join(allowed)}; got {_tname(v)} {v!r}")
    if v not in allowed:
        close = difflib.get_close_matches(v, allowed, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise ConfigError(path, f"unknown {what} {v!r}; {hint}(allowed: {', '.join(allowed)})")
    return v


def _param_value(name: str, v, path: str):
    typ, ok, allowed = _PARAMS[name]
    if typ is int:
        if isinstance(v, bool) or not isinstance(v, int):
            raise ConfigError(path, f"expected {allowed}, got {_tname(v)} {v!r}")
    else:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ConfigError(path, f"expected {allowed}, got {_tname(v)} {v!r}")
        v = float(v)
    if not ok(v):
        raise ConfigError(path, f"expected {allowed}, got {v!r}")
    return v


def _param_list(name: str, v, path: str) -> list:
    vals = [_param_value(name, x, f"{path}[{i}]") for i, x in enumerate(_list(v, path, allow_scalar=True))]
    if len(set(vals)) != len(vals):
        raise ConfigError(path, f"duplicate values in {vals}")
    return vals


def _grid_section(raw, path: str, allowed: set[str], removable: set[str]) -> dict:
    """Validate a ``grid`` mapping; a ``null`` value (only for optional keys) removes the key."""
    raw = _mapping(raw, path)
    _unknown(raw.keys(), allowed, path)
    out = {}
    for k, v in raw.items():
        if v is None:
            if k not in removable:
                raise ConfigError(f"{path}.{k}", f"null is only allowed for optional parameters "
                                                 f"({', '.join(sorted(removable)) or 'none here'})")
            out[k] = None
        else:
            out[k] = _param_list(k, v, f"{path}.{k}")
    return out


# --------------------------------------------------------------------------- sections
def _parse_datasets(raw, base_dir: str | None) -> list[DatasetSpec]:
    out: list[DatasetSpec] = []
    for i, entry in enumerate(_list(raw, "datasets", allow_scalar=True)):
        path = f"datasets[{i}]"
        if isinstance(entry, str):
            _str(entry, path)
            out.append(DatasetSpec(name=_display_name(entry), source=_resolve_path(entry, base_dir)))
            continue
        entry = _mapping(entry, path)
        _unknown(entry.keys(), {"name", "path", "graph"}, path)
        if "path" in entry and "graph" in entry:
            raise ConfigError(path, "give either 'path' or 'graph', not both")
        if "path" in entry:
            src = _resolve_path(_str(entry["path"], f"{path}.path"), base_dir)
            name = _str(entry["name"], f"{path}.name") if "name" in entry else _display_name(src)
            out.append(DatasetSpec(name=name, source=src))
        elif "graph" in entry:
            g = _parse_graph(entry["graph"], f"{path}.graph")
            name = _str(entry["name"], f"{path}.name") if "name" in entry else g["kind"]
            out.append(DatasetSpec(name=name, graph=g))
        elif "name" in entry:
            name = _str(entry["name"], f"{path}.name")
            out.append(DatasetSpec(name=name, source=name))
        else:
            raise ConfigError(path, "a dataset mapping needs 'name', 'path' or 'graph'")
    names = [d.name for d in out]
    for i, n in enumerate(names):
        if n in names[:i]:
            raise ConfigError(f"datasets[{i}]", f"duplicate dataset name {n!r} (give each a distinct 'name')")
    return out


def _display_name(source: str) -> str:
    if source.endswith(".npz"):
        return os.path.splitext(os.path.basename(source))[0]
    return source


def _resolve_path(source: str, base_dir: str | None) -> str:
    """``.npz`` paths relative to the config file's directory when they exist there."""
    if source.endswith(".npz") and not os.path.isabs(source) and base_dir:
        cand = os.path.join(base_dir, source)
        if os.path.exists(cand) and not os.path.exists(source):
            return cand
    return source


def _parse_graph(raw, path: str) -> dict:
    if isinstance(raw, str):
        raw = {"kind": raw}
    raw = _mapping(raw, path)
    kind = raw.get("kind")
    if kind not in _GRAPH_KINDS:
        close = difflib.get_close_matches(str(kind), list(_GRAPH_KINDS), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ConfigError(f"{path}.kind", f"unknown graph kind {kind!r}{hint} "
                                          f"(allowed: {', '.join(_GRAPH_KINDS)})")
    _unknown(raw.keys(), _GRAPH_KINDS[kind], path)
    split = {}
    if "train_per_class" in raw or "val_per_class" in raw:
        for key in sorted(_SPLIT_KEYS):
            if key not in raw:
                raise ConfigError(f"{path}.{key}", "missing: give both train_per_class and val_per_class")
            split[key] = _int(raw[key], f"{path}.{key}", lo=1)
    if kind == "karate_club":
        return {"kind": kind, **split}
    sizes = [_int(s, f"{path}.sizes[{j}]", lo=2) for j, s in enumerate(_list(raw.get("sizes", [100, 100, 100]),
                                                                                f"{path}.sizes"))]
    g = {"kind": kind, "sizes": sizes}
    for key, default in (("p_in", 0.1), ("p_out", 0.01)):
        v = _float(raw.get(key, default), f"{path}.{key}")
        if not 0.0 <= v <= 1.0:
            raise ConfigError(f"{path}.{key}", f"must be a probability in [0, 1], got {v}")
        g[key] = v
    g["seed"] = _int(raw.get("seed", 0), f"{path}.seed", lo=0)
    return {**g, **split}


def _parse_sweep(raw, path: str, info: MethodInfo) -> Sweep:
    raw = _mapping(raw, path)
    _unknown(raw.keys(), {"param", "values"}, path)
    if "param" not in raw:
        raise ConfigError(f"{path}.param", "missing (the grid parameter to sweep)")
    param = _str(raw["param"], f"{path}.param")
    allowed = info.required + info.optional
    if param not in allowed:
        raise ConfigError(f"{path}.param", f"{param!r} is not a parameter of this method "
                                           f"(allowed: {', '.join(allowed)})")
    if "values" not in raw:
        raise ConfigError(f"{path}.values", "missing (the values to sweep)")
    return Sweep(param, tuple(_param_list(param, raw["values"], f"{path}.values")))


def _method_entries(raw):
    """``(i, path, label_path, mapping)`` for each entry of ``methods`` (a bare label becomes ``{label: ...}``)."""
    for i, entry in enumerate(_list(raw, "methods", allow_scalar=True)):
        path = f"methods[{i}]"
        label_path = path if isinstance(entry, str) else f"{path}.label"
        yield i, path, label_path, _mapping({"label": entry} if isinstance(entry, str) else entry, path)


def _parse_methods(raw, top_grid: dict) -> list[MethodSpec]:
    out: list[MethodSpec] = []
    for i, path, label_path, entry in _method_entries(raw):
        if "label" not in entry:
            raise ConfigError(f"{path}.label", "missing (one of: " + ", ".join(METHODS) + ")")
        label = _str(entry["label"], f"{path}.label")
        if label in METHODS:
            _unknown(entry.keys(), {"label", "grid", "sweep"} | set(METHOD_OPTIONS), path)
        else:
            from .registry import registered_methods

            regs = registered_methods()
            if label in regs:             # a method by name, on the graph's features and/or the graph
                _unknown(entry.keys(), {"label", "grid", "sweep", "fixed"}, path)
                out.append(_registry_method_spec(entry, regs[label], {}, path, label_path, DEFAULT_PROTOCOL,
                                                 "transductive", "classification"))
                continue
            close = difflib.get_close_matches(label, list(METHODS) + list(regs), n=1, cutoff=0.4)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ConfigError(label_path, f"unknown method {label!r}; {hint}(allowed: {', '.join(METHODS)}, or a "
                                          f"registered method: {', '.join(sorted(regs))})")
        info = METHODS[label]
        options = {}
        for opt, spec_opt in METHOD_OPTIONS.items():
            if opt in entry and opt not in info.options:
                takers = [lb for lb, mi in METHODS.items() if opt in mi.options]
                raise ConfigError(f"{path}.{opt}", f"{label!r} has no option {opt!r} (only "
                                                   f"{', '.join(takers)} take it: {spec_opt.meaning})")
            if opt in info.options:
                options[opt] = (_choice(entry[opt], f"{path}.{opt}", spec_opt.allowed) if opt in entry
                                else spec_opt.default)
        allowed = set(info.required + info.optional)
        grid = {k: list(DEFAULT_GRID[k]) for k in info.defaults}
        for k, v in top_grid.items():      # the top-level grid overrides defaults of keys a method uses
            if k in grid:
                grid[k] = list(v)
        if "grid" in entry:
            own = _grid_section(entry["grid"], f"{path}.grid", allowed, set(info.optional))
            for k, v in own.items():
                if v is None:
                    grid.pop(k, None)
                else:
                    grid[k] = v
        sweep = None
        if "sweep" in entry:
            sweep = _parse_sweep(entry["sweep"], f"{path}.sweep", info)
            grid.pop(sweep.param, None)
        for k in info.required:
            if k not in grid and (sweep is None or sweep.param != k):
                raise ConfigError(f"{path}.grid.{k}", "missing: this method needs it")
        order = [k for k in info.required + info.optional if k in grid]
        spec = MethodSpec(label, info.engine, info.setting, {k: grid[k] for k in order}, sweep, options)
        out.append(spec)
    keys = [(m.label, m.sweep.param if m.sweep else None, tuple(sorted(m.options.items()))) for m in out]
    for i, k in enumerate(keys):
        if k in keys[:i]:
            opts = f" with the same options ({', '.join(f'{a}: {b}' for a, b in k[2])})" if k[2] else ""
            raise ConfigError(f"methods[{i}]", f"method {k[0]!r} is listed twice{opts}; rows must be unique "
                                               f"(use one entry, or a sweep{', or other options' if k[2] else ''})")
    return out


def _parse_solver(raw) -> SolverOptions:
    raw = _mapping(raw, "solver")
    _unknown(raw.keys(), _SOLVER_KEYS, "solver")
    kw = {}
    if "solver" in raw:
        name = _str(raw["solver"], "solver.solver")
        if name not in _SOLVERS:
            close = difflib.get_close_matches(name, _SOLVERS, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ConfigError("solver.solver", f"unknown solver {name!r}; {hint}(allowed: {', '.join(_SOLVERS)})")
        kw["solver"] = name
    if raw.get("max_iter") is not None:
        kw["max_iter"] = _int(raw["max_iter"], "solver.max_iter", lo=1)
    if raw.get("tol") is not None:
        tol = _float(raw["tol"], "solver.tol")
        if not (tol > 0 and math.isfinite(tol)):
            raise ConfigError("solver.tol", f"must be a positive number, got {tol}")
        kw["tol"] = tol
    if "dtype" in raw:
        if raw["dtype"] not in ("float32", "float64"):
            raise ConfigError("solver.dtype", f"expected 'float32' or 'float64', got {raw['dtype']!r}")
        kw["dtype"] = raw["dtype"]
    if "step_size" in raw:
        kw["step_size"] = _step_size(raw["step_size"], "solver.step_size")
    return SolverOptions(**kw)


def _step_size(v, path: str) -> str | float:
    allowed = f"{', '.join(STEP_SIZES)} or a positive number"
    if isinstance(v, str):
        if v in STEP_SIZES:
            return v
        close = difflib.get_close_matches(v, STEP_SIZES, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise ConfigError(path, f"unknown step size {v!r}; {hint}(allowed: {allowed})")
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ConfigError(path, f"expected {allowed}, got {_tname(v)} {v!r}")
    if not (v > 0 and math.isfinite(v)):
        raise ConfigError(path, f"a numeric step size must be a positive number, got {v!r} (allowed: {allowed})")
    return float(v)


def _parse_seeds(raw) -> list[int]:
    if isinstance(raw, list):
        seeds = [_int(s, f"seeds[{i}]", lo=0) for i, s in enumerate(_list(raw, "seeds"))]
        if len(set(seeds)) != len(seeds):
            raise ConfigError("seeds", f"duplicate seeds in {seeds}")
        return seeds
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise ConfigError("seeds", f"expected an integer >= 1 (seeds 0..N-1) or a list of seeds, "
                                   f"got {_tname(raw)} {raw!r}")
    if raw < 1:
        raise ConfigError("seeds", f"must be >= 1, got {raw}")
    return list(range(raw))


def _parse_p_test(raw) -> list[float]:
    vals = []
    for i, v in enumerate(_list(raw, "p_test", allow_scalar=True)):
        p = f"p_test[{i}]" if isinstance(raw, list) else "p_test"
        x = _float(v, p)
        if not 0.0 < x < 1.0:
            raise ConfigError(p, f"must be in (0, 1) (a fraction of all nodes), got {x}")
        vals.append(x)
    if len(set(vals)) != len(vals):
        raise ConfigError("p_test", f"duplicate values in {vals}")
    return vals


def _parse_plot(raw, methods: list[MethodSpec]) -> PlotSpec:
    raw = _mapping(raw, "plot")
    _unknown(raw.keys(), {"file", "x", "title"}, "plot")
    file = _str(raw.get("file", "plot.png"), "plot.file")
    if not file.endswith(".png") or os.path.basename(file) != file:
        raise ConfigError("plot.file", f"expected a plain file name ending in .png, got {file!r}")
    swept = [m.sweep.param for m in methods if m.sweep is not None]
    if "x" in raw:
        x = _str(raw["x"], "plot.x")
        if x not in swept:
            raise ConfigError("plot.x", f"{x!r} is not swept by any method (swept: {swept or 'none'})")
    elif swept:
        x = swept[0]
    else:
        raise ConfigError("plot", "a plot needs a method with a 'sweep' (its values are the x axis)")
    title = _str(raw["title"], "plot.title") if "title" in raw else None
    return PlotSpec(file=file, x=x, title=title)


def parse_config(raw: Any, default_name: str = "experiment", base_dir: str | None = None) -> ExperimentConfig:
    """Validate a config mapping (as read from YAML) and fill in defaults.

    A mapping with ``tasks:`` is a multi-task config: its other keys are defaults shared by
    every task, and each task (a mapping with any key except ``tasks``) is a config of its own
    (see docs/experiments.md, "Several tasks in one config").
    """
    if raw is None:
        raise ConfigError("", "the config is empty")
    raw = _mapping(raw, "<config>")
    if "tasks" in raw:
        return _parse_tasks(raw, default_name, base_dir)
    return _parse_single(raw, default_name, base_dir)


def _check_name(name: str, path: str = "name") -> str:
    if not re.fullmatch(r"[A-Za-z0-9_.\-]+", name):
        raise ConfigError(path, f"use letters, digits, '_', '-' or '.' only (it names the output folder), "
                                f"got {name!r}")
    return name


def _parse_tasks(raw: dict, default_name: str, base_dir: str | None) -> ExperimentConfig:
    _unknown(raw.keys(), _TOP_KEYS | _ALL_PROTOCOL_KEYS, "")
    name = _check_name(_str(raw["name"], "name") if "name" in raw else default_name)
    description = _str(raw["description"], "description") if "description" in raw else ""
    shared = {k: v for k, v in raw.items() if k not in ("tasks", "name", "description")}
    tasks = []
    for i, entry in enumerate(_list(raw["tasks"], "tasks")):
        entry = _mapping(entry, f"tasks[{i}]")
        if "tasks" in entry:
            raise ConfigError(f"tasks[{i}].tasks", "tasks cannot be nested")
        tname = _check_name(_str(entry["name"], f"tasks[{i}].name"), f"tasks[{i}].name") if "name" in entry \
            else f"task{i}"
        try:
            task = _parse_single({**shared, **entry}, tname, base_dir)
        except ConfigError as err:
            raise ConfigError(f"tasks[{i}].{err.path}" if err.path else f"tasks[{i}]", err.message) from None
        task.task = tname
        tasks.append(task)
    names = [t.task for t in tasks]
    for i, n in enumerate(names):
        if n in names[:i]:
            raise ConfigError(f"tasks[{i}].name", f"duplicate task name {n!r}")
    return ExperimentConfig(name=name, description=description, seeds=[], p_test=[],
                            datasets=[d for t in tasks for d in t.datasets],
                            methods=[m for t in tasks for m in t.methods], paper_table=None, tasks=tasks)


def _parse_single(raw: dict, default_name: str, base_dir: str | None) -> ExperimentConfig:
    _unknown(raw.keys(), (_TOP_KEYS | _ALL_PROTOCOL_KEYS) - {"tasks"}, "")
    protocol = _choice(raw.get("protocol", DEFAULT_PROTOCOL), "protocol", PROTOCOLS, "protocol")
    for key in raw:
        if key in _ALL_PROTOCOL_KEYS and key not in _PROTOCOL_KEYS[protocol]:
            owners = [p for p, keys in _PROTOCOL_KEYS.items() if key in keys]
            raise ConfigError(key, f"a key of the {' / '.join(owners)} protocol, not of {protocol!r} "
                                   f"(this protocol's keys: {', '.join(sorted(_PROTOCOL_KEYS[protocol]))})")
    for key in ("datasets", "methods"):
        if key not in raw:
            raise ConfigError(key, "missing (required)")
    name = _check_name(_str(raw["name"], "name") if "name" in raw else default_name)
    description = _str(raw["description"], "description") if "description" in raw else ""
    if protocol != DEFAULT_PROTOCOL:
        return _parse_vector(raw, protocol, name, description)
    seeds = _parse_seeds(raw.get("seeds", 10))
    p_test = _parse_p_test(raw.get("p_test", 0.01))
    datasets = _parse_datasets(raw["datasets"], base_dir)
    skip_missing = _bool(raw.get("skip_missing", False), "skip_missing")
    all_params = set(_PARAMS)
    top_grid = _grid_section(raw.get("grid", {}), "grid", all_params, set()) if "grid" in raw else {}
    methods = _parse_methods(raw["methods"], top_grid)
    solver = _parse_solver(raw["solver"]) if "solver" in raw else SolverOptions()
    paper_table = raw.get("paper_table", "auto")
    if paper_table is not None and paper_table not in _PAPER_TABLES:
        close = difflib.get_close_matches(str(paper_table), _PAPER_TABLES, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise ConfigError("paper_table", f"unknown value {paper_table!r}; {hint}"
                                         f"(allowed: {', '.join(_PAPER_TABLES)}, or null)")
    planetoid_split = raw.get("planetoid_split", "public")
    if planetoid_split not in ("public", "random"):
        raise ConfigError("planetoid_split", f"expected 'public' or 'random', got {planetoid_split!r}")
    unreachable = _choice(raw.get("unreachable", "wrong"), "unreachable", UNREACHABLE)
    plot = _parse_plot(raw["plot"], methods) if "plot" in raw else None
    return ExperimentConfig(name=name, description=description, seeds=seeds, p_test=p_test,
                            datasets=datasets, methods=methods, skip_missing=skip_missing, solver=solver,
                            paper_table=paper_table, planetoid_split=planetoid_split, unreachable=unreachable,
                            plot=plot)


# --------------------------------------------------------------------------- vector protocols
def _scalar(v, path: str):
    """A grid / option value of a registered method: a finite number, a string or a boolean."""
    if isinstance(v, bool) or isinstance(v, str):
        return v
    if isinstance(v, (int, float)):
        if not math.isfinite(v):
            raise ConfigError(path, f"expected a finite number, got {v!r}")
        return v
    raise ConfigError(path, f"expected a number, a string or true/false, got {_tname(v)} {v!r}")


def _scalar_list(v, path: str) -> list:
    vals = [_scalar(x, f"{path}[{i}]") for i, x in enumerate(_list(v, path, allow_scalar=True))]
    if len({repr(x) for x in vals}) != len(vals):
        raise ConfigError(path, f"duplicate values in {vals}")
    return vals


def _vector_names() -> tuple[str, ...] | None:
    try:
        from graphstk.data.vector import VECTOR_DATASETS
    except ImportError:       # pragma: no cover - the loaders are merged from another branch
        return None
    return tuple(VECTOR_DATASETS)


def _known_vector_name(name: str) -> bool:
    """Whether the vector loaders accept ``name`` (canonical names and aliases, case-insensitive)."""
    try:
        from graphstk.data.vector import _lookup
    except ImportError:       # pragma: no cover
        return True
    try:
        _lookup(name)
    except (ValueError, TypeError):
        return False
    return True


_TASK_NAME = re.compile(r"^(?P<source>.*\S)\s+(?P<pos>[^\s]+?)\s*vs\s*(?P<neg>[^\s]+)$")


def _class_value(v, path: str):
    if isinstance(v, bool) or not isinstance(v, (int, str)):
        raise ConfigError(path, f"expected a class label (an integer or a string), got {_tname(v)} {v!r}")
    return int(v) if isinstance(v, str) and re.fullmatch(r"-?\d+", v) else v


def _parse_vector_datasets(raw, protocol: str) -> list[DatasetSpec]:
    known = _vector_names()
    out: list[DatasetSpec] = []
    for i, entry in enumerate(_list(raw, "datasets", allow_scalar=True)):
        path = f"datasets[{i}]"
        if isinstance(entry, str):
            entry = {"name": _str(entry, path)}
        entry = _mapping(entry, path)
        _unknown(entry.keys(), _VECTOR_DATASET_KEYS, path)
        if "name" not in entry:
            raise ConfigError(f"{path}.name", "missing (the dataset's name, e.g. Digit1 or 'MNIST 3vs8')")
        name = _str(entry["name"], f"{path}.name")
        vec: dict = {}
        source = entry.get("source")
        if protocol == "one-class":
            m = _TASK_NAME.match(name)
            pos = entry.get("positive", m.group("pos") if m else None)
            neg = entry.get("negative", m.group("neg") if m else None)
            if pos is None or neg is None:
                raise ConfigError(path, f"a one-class task names its classes: write 'SOURCE AvsB' (e.g. 'MNIST 3vs8': "
                                        f"train on 3, test on 3 and 8) or give 'positive' and 'negative'; got {name!r}")
            vec["positive"] = _class_value(pos, f"{path}.positive")
            vec["negative"] = _class_value(neg, f"{path}.negative")
            if vec["positive"] == vec["negative"]:
                raise ConfigError(path, f"positive and negative class are the same ({vec['positive']!r})")
            if source is None and m:
                source = m.group("source")
        elif "positive" in entry or "negative" in entry:
            raise ConfigError(f"{path}.{'positive' if 'positive' in entry else 'negative'}",
                              "only one-class tasks have positive/negative classes")
        source = _str(source if source is not None else name, f"{path}.source")
        if known is not None and not _known_vector_name(source):
            close = difflib.get_close_matches(source, list(known), n=1, cutoff=0.5)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ConfigError(f"{path}.source" if "source" in entry else f"{path}",
                              f"unknown dataset {source!r} for the {protocol} protocol; {hint}"
                              f"(allowed: {', '.join(known)}; case-insensitive)")
        if "part" in entry:
            vec["part"] = _str(entry["part"], f"{path}.part")
        if "n_per_class" in entry:
            vec["n_per_class"] = _int(entry["n_per_class"], f"{path}.n_per_class", lo=1)
            vec["subsample_seed"] = _int(entry.get("subsample_seed", 0), f"{path}.subsample_seed", lo=0)
        elif "subsample_seed" in entry:
            raise ConfigError(f"{path}.subsample_seed", "only with n_per_class")
        if "noise_std" in entry:
            std = _float(entry["noise_std"], f"{path}.noise_std")
            if not (std > 0 and math.isfinite(std)):
                raise ConfigError(f"{path}.noise_std", f"must be a positive number, got {std}")
            vec["noise_std"] = std
            vec["noise_seed"] = _int(entry.get("noise_seed", 0), f"{path}.noise_seed", lo=0)
        elif "noise_seed" in entry:
            raise ConfigError(f"{path}.noise_seed", "only with noise_std")
        if "options" in entry:
            opts = _mapping(entry["options"], f"{path}.options")
            vec["options"] = {str(k): _scalar(v, f"{path}.options.{k}") for k, v in opts.items()}
        out.append(DatasetSpec(name=name, source=source, vector=vec))
    names = [d.name for d in out]
    for i, n in enumerate(names):
        if n in names[:i]:
            raise ConfigError(f"datasets[{i}]", f"duplicate dataset name {n!r} (give each a distinct 'name')")
    return out


def _setting_of(protocol: str, options: dict) -> str:
    if protocol in ("fixed-splits", "planetoid"):
        return "transductive"
    if protocol == "labeled-per-class":
        return "transductive" if options["test"] == "unlabeled" else "inductive"
    return "inductive"


def _parse_registry_methods(raw, top_grid: dict, protocol: str, setting: str) -> list[MethodSpec]:
    from .registry import UnknownMethodError, get_method, registered_methods

    want_task = "one-class" if protocol == "one-class" else "classification"
    out: list[MethodSpec] = []
    for i, path, label_path, entry in _method_entries(raw):
        _unknown(entry.keys(), {"label", "grid", "sweep", "fixed"}, path)
        if "label" not in entry:
            raise ConfigError(f"{path}.label", "missing (a registered method name: "
                                               + ", ".join(sorted(registered_methods())) + ")")
        label = _str(entry["label"], f"{path}.label")
        try:
            info = get_method(label)
        except UnknownMethodError as err:
            raise ConfigError(label_path, str(err)) from None
        out.append(_registry_method_spec(entry, info, top_grid, path, label_path, protocol, setting, want_task))
    keys = [(m.label, m.sweep.param if m.sweep else None, tuple(sorted(m.options.items()))) for m in out]
    for i, k in enumerate(keys):
        if k in keys[:i]:
            raise ConfigError(f"methods[{i}]", f"method {k[0]!r} is listed twice with the same fixed options; "
                                               "rows must be unique")
    return out


def _registry_method_spec(entry: dict, info, top_grid: dict, path: str, label_path: str, protocol: str,
                          setting: str, want_task: str) -> MethodSpec:
    """One method-by-name entry of a config (``label``, ``grid``, ``fixed``, ``sweep``)."""
    from .registry import registered_methods

    label = info.name
    if protocol not in GRAPH_PROTOCOLS:
        if "graph" in info.needs:
            usable = sorted(n for n, e in registered_methods().items() if "graph" not in e.needs and e.task == want_task)
            raise ConfigError(label_path, f"{label!r} needs a graph, but the {protocol} protocol's datasets have "
                                          f"features only (methods for them: {', '.join(usable)})")
    if info.task != want_task:
        usable = sorted(n for n, e in registered_methods().items() if e.task == want_task)
        raise ConfigError(label_path, f"{label!r} is a {info.task} method; the {protocol} protocol needs a "
                                      f"{want_task} method ({', '.join(usable) or 'none registered'})")
    grid = {k: list(v) for k, v in info.grid.items()}
    for k, v in top_grid.items():
        if k in grid:
            grid[k] = list(v)
    if "grid" in entry:
        own = _mapping(entry["grid"], f"{path}.grid")
        _unknown(own.keys(), set(info.grid), f"{path}.grid")
        for k, v in own.items():
            grid[k] = _scalar_list(v, f"{path}.grid.{k}")
    options = {}
    if "fixed" in entry:
        fixed = _mapping(entry["fixed"], f"{path}.fixed")
        _unknown(fixed.keys(), set(info.fixed), f"{path}.fixed")
        options = {k: _scalar(v, f"{path}.fixed.{k}") for k, v in fixed.items() if v != info.fixed[k]}
    sweep = None
    if "sweep" in entry:
        sw = _mapping(entry["sweep"], f"{path}.sweep")
        _unknown(sw.keys(), {"param", "values"}, f"{path}.sweep")
        param = _str(sw.get("param"), f"{path}.sweep.param")
        if param not in info.grid:
            raise ConfigError(f"{path}.sweep.param", f"{param!r} is not a parameter of {label!r} "
                                                     f"(allowed: {', '.join(info.grid) or 'none'})")
        if "values" not in sw:
            raise ConfigError(f"{path}.sweep.values", "missing (the values to sweep)")
        sweep = Sweep(param, tuple(_scalar_list(sw["values"], f"{path}.sweep.values")))
        grid.pop(param, None)
    return MethodSpec(label, "registry", setting, grid, sweep, options)


def _n_labeled(raw, protocol: str) -> list[int]:
    if "n_labeled" not in raw:
        what = "per split (keys of the dataset's splits, e.g. [10, 100])" if protocol == "fixed-splits" \
            else "per class (e.g. [20])"
        raise ConfigError("n_labeled", f"missing: the number of labeled points {what}")
    vals = [_int(v, f"n_labeled[{i}]" if isinstance(raw["n_labeled"], list) else "n_labeled", lo=1)
            for i, v in enumerate(_list(raw["n_labeled"], "n_labeled", allow_scalar=True))]
    if len(set(vals)) != len(vals):
        raise ConfigError("n_labeled", f"duplicate values in {vals}")
    return vals


LEAVE_ONE_OUT = "leave-one-out"


def _cv_folds(v) -> int | str:
    """``cv_folds``: an integer >= 2, or ``"leave-one-out"`` (one fold per labeled point)."""
    if isinstance(v, str):
        if v.strip().lower() in ("leave-one-out", "loo"):
            return LEAVE_ONE_OUT
        raise ConfigError("cv_folds", f"expected an integer >= 2 or 'leave-one-out', got {v!r}")
    return _int(v, "cv_folds", lo=2)


def _parse_protocol_options(raw: dict, protocol: str) -> dict:
    if protocol == "fixed-splits":
        splits = raw.get("splits", "all")
        if splits != "all":
            splits = [_int(v, f"splits[{i}]", lo=0) for i, v in enumerate(_list(splits, "splits", allow_scalar=True))]
            if len(set(splits)) != len(splits):
                raise ConfigError("splits", f"duplicate split indices in {splits}")
        return {"n_labeled": _n_labeled(raw, protocol), "splits": splits,
                "cv_folds": _cv_folds(raw.get("cv_folds", 10))}
    if protocol == "labeled-per-class":
        n_lab = _n_labeled(raw, protocol)
        val = raw.get("val_per_class")
        val = None if val is None else _int(val, "val_per_class", lo=1)
        test = _choice(raw.get("test", "unlabeled"), "test", ("unlabeled", "held-out"))
        test_size = test_part = None
        if "test_size" in raw and raw["test_size"] is not None:
            ts = raw["test_size"]
            if isinstance(ts, float) and not isinstance(ts, bool):
                if not 0.0 < ts < 1.0:
                    raise ConfigError("test_size", f"a fraction must be in (0, 1), got {ts}")
                test_size = ts
            else:
                test_size = _int(ts, "test_size", lo=1)
        if raw.get("test_part") is not None:
            test_part = _str(raw["test_part"], "test_part")
        if test == "held-out" and (test_size is None) == (test_part is None):
            raise ConfigError("test", "test: held-out needs exactly one of test_size (a number of points, or a "
                                      "fraction, drawn per repetition) and test_part (a part of the dataset, "
                                      "e.g. test)")
        if test == "unlabeled" and (test_size is not None or test_part is not None):
            raise ConfigError("test_size" if test_size is not None else "test_part",
                              "only with test: held-out (test: unlabeled scores the unlabeled points)")
        n_unl = raw.get("n_unlabeled")
        n_unl = None if n_unl is None else _int(n_unl, "n_unlabeled", lo=1)
        return {"n_labeled": n_lab, "val_per_class": val, "test": test, "test_size": test_size,
                "test_part": test_part, "n_unlabeled": n_unl}
    if protocol == "one-class":
        def opt_int(key, default):
            v = raw.get(key, default)
            return None if v is None else _int(v, key, lo=1)

        def opt_str(key, default):
            v = raw.get(key, default)
            return None if v is None else _str(v, key)
        return {"n_train": opt_int("n_train", 500), "n_test": opt_int("n_test", 200),
                "train_pool": opt_int("train_pool", 5000), "test_pool": opt_int("test_pool", 1000),
                "train_part": opt_str("train_part", "train"), "test_part": opt_str("test_part", "test"),
                "balanced": _bool(raw.get("balanced", True), "balanced"),
                "pool_seed": None if raw.get("pool_seed") is None else _int(raw["pool_seed"], "pool_seed", lo=0)}
    if protocol == "planetoid":
        from .protocols.planetoid import FIT_LABELS

        fit = [_choice(v, f"fit_labels[{i}]", FIT_LABELS, "fit_labels")
               for i, v in enumerate(_list(raw.get("fit_labels", ["train"]), "fit_labels", allow_scalar=True))]
        if len(set(fit)) != len(fit):
            raise ConfigError("fit_labels", f"duplicate values in {fit}")
        return {"fit_labels": fit}
    raise AssertionError(protocol)  # pragma: no cover


def _parse_vector(raw: dict, protocol: str, name: str, description: str) -> ExperimentConfig:
    options = _parse_protocol_options(raw, protocol)
    if protocol == "fixed-splits":
        if "seeds" in raw:
            raise ConfigError("seeds", "fixed-splits runs the dataset's own splits: give 'splits' (all, or a list "
                                       "of split indices) instead of 'seeds'")
        seeds: list[int] = []
    else:
        seeds = _parse_seeds(raw.get("seeds", 10))
    datasets = (_parse_datasets(raw["datasets"], None) if protocol in GRAPH_PROTOCOLS
                else _parse_vector_datasets(raw["datasets"], protocol))
    skip_missing = _bool(raw.get("skip_missing", False), "skip_missing")
    top_grid = {}
    if "grid" in raw:
        g = _mapping(raw["grid"], "grid")
        top_grid = {str(k): _scalar_list(v, f"grid.{k}") for k, v in g.items()}
    methods = _parse_registry_methods(raw["methods"], top_grid, protocol, _setting_of(protocol, options))
    paper = raw.get("paper")
    if paper is not None:
        from .paper import paper_files

        paper = _choice(paper, "paper", paper_files(), "paper")
    paper_table = raw.get("paper_table", "auto")
    if paper_table is not None:
        paper_table = _str(paper_table, "paper_table")
    plot = _parse_plot(raw["plot"], methods) if "plot" in raw else None
    return ExperimentConfig(name=name, description=description, seeds=seeds, p_test=[], datasets=datasets,
                            methods=methods, skip_missing=skip_missing, paper_table=paper_table, plot=plot,
                            protocol=protocol, protocol_options=options, paper=paper)


def grid_points(grid: dict) -> list[dict]:
    """The Cartesian product of ``grid`` in canonical order (keys in order, last key fastest)."""
    keys = list(grid)
    return [dict(zip(keys, vals)) for vals in itertools.product(*(grid[k] for k in keys))]
