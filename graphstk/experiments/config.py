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
             "solver", "paper_table", "plot", "planetoid_split", "unreachable"}


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

    def identity(self) -> dict:
        return {"name": self.name, "source": self.source, "graph": self.graph}


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

    def to_dict(self) -> dict:
        """The fully resolved config (defaults filled in): what results.json records."""
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
        if quick:
            cfg.quick = True
            if seeds is None:
                cfg.seeds = cfg.seeds[:2]
            cfg.methods = [dataclasses.replace(m, grid={k: thin_grid(v) for k, v in m.grid.items()})
                           for m in cfg.methods]
        return cfg


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


def _parse_methods(raw, top_grid: dict) -> list[MethodSpec]:
    out: list[MethodSpec] = []
    for i, entry in enumerate(_list(raw, "methods", allow_scalar=True)):
        path = f"methods[{i}]"
        label_path = path if isinstance(entry, str) else f"{path}.label"
        if isinstance(entry, str):
            entry = {"label": entry}
        entry = _mapping(entry, path)
        _unknown(entry.keys(), {"label", "grid", "sweep"} | set(METHOD_OPTIONS), path)
        if "label" not in entry:
            raise ConfigError(f"{path}.label", "missing (one of: " + ", ".join(METHODS) + ")")
        label = _str(entry["label"], f"{path}.label")
        if label not in METHODS:
            close = difflib.get_close_matches(label, list(METHODS), n=1, cutoff=0.4)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ConfigError(label_path, f"unknown method {label!r}; {hint}(allowed: {', '.join(METHODS)})")
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
    """Validate a config mapping (as read from YAML) and fill in defaults."""
    if raw is None:
        raise ConfigError("", "the config is empty")
    raw = _mapping(raw, "<config>")
    _unknown(raw.keys(), _TOP_KEYS, "")
    for key in ("datasets", "methods"):
        if key not in raw:
            raise ConfigError(key, "missing (required)")
    name = _str(raw["name"], "name") if "name" in raw else default_name
    if not re.fullmatch(r"[A-Za-z0-9_.\-]+", name):
        raise ConfigError("name", f"use letters, digits, '_', '-' or '.' only (it names the output folder), "
                                  f"got {name!r}")
    description = _str(raw["description"], "description") if "description" in raw else ""
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


def grid_points(grid: dict) -> list[dict]:
    """The Cartesian product of ``grid`` in canonical order (keys in order, last key fastest)."""
    keys = list(grid)
    return [dict(zip(keys, vals)) for vals in itertools.product(*(grid[k] for k in keys))]
