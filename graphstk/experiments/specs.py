"""The resolved parts of a config: datasets, and methods with their full grids and sweeps.

:func:`resolve_methods` turns a task's ``methods`` entries into :class:`MethodSpec` objects from
the method registrations: the default grid, the task's shared ``grid``, the entry's own ``grid``,
``fixed`` options and ``sweep``, every value checked against the method's parameter
declarations (an error names the path, e.g. ``methods[2].grid.beta[1]``, and the value as written).
"""
from __future__ import annotations

import itertools
import os
import re
from dataclasses import dataclass, field

from pydantic_core import PydanticCustomError

from .params import hint

__all__ = ["DatasetSpec", "MethodSpec", "Sweep", "resolve_methods", "dataset_spec", "grid_points", "options_suffix",
           "fail", "unknown_key", "first_repeat"]

#: the protocols whose datasets are graphs
GRAPH_PROTOCOLS = ("node-classification", "planetoid")


@dataclass(frozen=True)
class DatasetSpec:
    """One dataset: a name (what rows show) and where it comes from: ``source`` (a dataset name or
    an ``.npz`` path), ``graph`` (a generated networkx graph) or, for the vector protocols,
    ``vector`` ({part, n_per_class, subsample_seed, options, positive, negative, noise_std, ...})."""
    name: str
    source: str | None = None
    graph: dict | None = None
    vector: dict | None = None

    def identity(self) -> dict:
        out = {"name": self.name, "source": self.source, "graph": self.graph}
        return out if self.vector is None else {**out, "vector": self.vector}


@dataclass(frozen=True)
class Sweep:
    """Run one series per value of ``param`` (the other parameters are selected)."""
    param: str
    values: tuple


@dataclass(frozen=True)
class MethodSpec:
    """A method of a task: its registered ``label``, ``engine`` (the STKR engine's method name, or
    ``"registry"``), ``setting``, full ``grid`` (sweep parameter excluded), ``sweep`` and ``options``
    (its declared options and the ``fixed`` values that differ from the registration's)."""
    label: str
    engine: str
    setting: str
    grid: dict
    sweep: Sweep | None = None
    options: dict = field(default_factory=dict)

    def display(self) -> str:
        """The label plus its non-default options, e.g. ``"SP-topd (t) [support=all]"``."""
        return self.label + options_suffix(self.options, self.label)

    def series(self) -> list[tuple[dict | None, dict]]:
        """``[(sweep value or None, full grid)]``: one entry per results row."""
        if self.sweep is None:
            return [(None, dict(self.grid))]
        return [({self.sweep.param: v}, {**self.grid, self.sweep.param: [v]}) for v in self.sweep.values]


def options_suffix(options: dict | None, label: str | None = None) -> str:
    """``" [support=all]"`` for the options that differ from the method's defaults; ``""`` otherwise."""
    from .registry import registered_methods

    entry = registered_methods().get(label) if label is not None else None
    defaults = entry.fixed if entry is not None else {}
    extra = [f"{k}={v}" for k, v in (options or {}).items() if k not in defaults or v != defaults[k]]
    return f" [{','.join(extra)}]" if extra else ""


def grid_points(grid: dict) -> list[dict]:
    """The Cartesian product of ``grid`` in canonical order (keys in order, last key fastest)."""
    return [dict(zip(grid, vals)) for vals in itertools.product(*grid.values())]


def fail(message: str, *at) -> PydanticCustomError:
    """A config error at the current model's path plus ``at`` (keys and list indices)."""
    return PydanticCustomError("config", "{message}", {"message": message, "at": at})


def unknown_key(key, allowed, *at) -> PydanticCustomError:
    """An unknown key (at ``at``, default: the key itself), naming the closest allowed one."""
    allowed = sorted(allowed)
    return fail(f"unknown key{hint(str(key), allowed)} (allowed: {', '.join(allowed)})", *(at or (key,)))


def first_repeat(items: list) -> int | None:
    """The index of the first item equal to an earlier one (``None``: all distinct)."""
    return next((i for i, x in enumerate(items) if x in items[:i]), None)


def _checked(entry, key: str, raw, at: tuple) -> list:
    """``raw`` (a value or a non-empty list of distinct values) checked against ``entry``'s declaration."""
    values = raw if isinstance(raw, list) else [raw]
    if not values:
        raise fail("empty list (give at least one value)", *at)
    out = []
    for j, v in enumerate(values):
        try:
            out.append(entry.check(key, v))
        except ValueError as err:
            raise fail(str(err), *at, *((j,) if isinstance(raw, list) else ())) from None
    if first_repeat([repr(x) for x in out]) is not None:
        raise fail(f"duplicate values in {out}", *at)
    return out


def _entry(label, at: tuple, protocol: str):
    """The registration of ``label``, refused when the protocol cannot run it."""
    from .registry import UnknownMethodError, get_method, registered_methods

    try:
        entry = get_method(label)
    except UnknownMethodError as err:
        raise fail(str(err), *at) from None
    graph, want = protocol in GRAPH_PROTOCOLS, "one-class" if protocol == "one-class" else "classification"
    usable = ", ".join(sorted(n for n, e in registered_methods().items()
                              if e.task == want and (graph or "graph" not in e.needs))) or "none registered"
    if "graph" in entry.needs and not graph:
        raise fail(f"{label!r} is a node-classification method (it needs a graph); this task's protocol is "
                   f"{protocol} (methods for it: {usable})", *at)
    if entry.task != want:
        raise fail(f"{label!r} is a {entry.task} method; the {protocol} protocol needs a {want} method ({usable})", *at)
    return entry


def _options(entry, m: dict, at: tuple) -> dict:
    """The method's declared options and the ``fixed`` values (``fixed:`` or written directly) that
    differ from the registration's."""
    from .registry import registered_methods

    fixed = {k: (v, (*at, "fixed", k)) for k, v in (m.get("fixed") or {}).items()}
    for k in [k for k in m if k not in ("label", "grid", "sweep", "fixed")]:
        if k not in entry.options:
            takers = [n for n, e in registered_methods().items() if k in e.options]
            if not takers:
                raise unknown_key(k, {"label", "grid", "sweep", "fixed", *entry.options}, *at, k)
            p = registered_methods()[takers[0]].param(k)
            raise fail(f"{entry.name!r} has no option {k!r} (only {', '.join(takers)} take it: "
                       f"{p.doc if p else ''})", *at, k)
        fixed[k] = (m[k], (*at, k))
    options = {o: entry.fixed[o] for o in entry.options}
    for k, (v, where) in fixed.items():
        if k not in entry.fixed:
            raise unknown_key(k, entry.fixed, *where)
        if isinstance(v, list):
            raise fail("expected one value (a fixed option is not a grid)", *where)
        v = _checked(entry, k, v, where)[0]
        if k in entry.options or v != entry.fixed[k]:
            options[k] = v
    return options


def resolve_methods(raw: list, top_grid: dict, protocol: str, setting: str) -> list[MethodSpec]:
    """The :class:`MethodSpec` of every entry of ``methods`` (see the module doc)."""
    out = []
    for i, m in enumerate(raw):
        at = ("methods", i)
        m = {"label": m} if isinstance(m, str) else m.model_dump(exclude_unset=True)
        entry = _entry(m["label"], at if isinstance(raw[i], str) else (*at, "label"), protocol)
        options = _options(entry, m, at)
        gridable = [*entry.grid, *(p.name for p in entry.params if p.optional and p.name not in entry.grid)]
        grid = {k: list(v) for k, v in entry.grid.items()}
        grid.update({k: _checked(entry, k, v, ("grid", k)) for k, v in top_grid.items() if k in grid})
        optional = [p.name for p in entry.params if p.optional]
        for k, v in (m.get("grid") or {}).items():
            if k not in gridable:
                raise unknown_key(k, gridable, *at, "grid", k)
            if v is not None:
                grid[k] = _checked(entry, k, v, (*at, "grid", k))
            elif k in optional:
                grid.pop(k, None)
            else:
                raise fail(f"null is only allowed for optional parameters ({', '.join(optional) or 'none here'})",
                           *at, "grid", k)
        sweep, sw = None, m.get("sweep")
        if sw is not None:
            if sw["param"] not in gridable:
                raise fail(f"{sw['param']!r} is not a parameter of {entry.name!r} (allowed: {', '.join(gridable)})",
                           *at, "sweep", "param")
            sweep = Sweep(sw["param"], tuple(_checked(entry, sw["param"], sw["values"], (*at, "sweep", "values"))))
            grid.pop(sweep.param, None)
        out.append(MethodSpec(entry.name, entry.fixed.get("engine", "registry"), entry.setting or setting,
                              {k: grid[k] for k in gridable if k in grid}, sweep, options))
    keys = [(m.label, m.sweep and m.sweep.param, tuple(sorted(m.options.items()))) for m in out]
    i = first_repeat(keys)
    if i is not None:
        opts = f" with the same options ({', '.join(f'{a}: {b}' for a, b in keys[i][2])})" if keys[i][2] else ""
        raise fail(f"method {keys[i][0]!r} is listed twice{opts}; rows must be unique (use one entry, a sweep or "
                   "other options)", "methods", i)
    return out


def dataset_spec(d, protocol: str, base_dir: str | None, i: int) -> DatasetSpec:
    """The :class:`DatasetSpec` of entry ``i`` of a task's ``datasets``: a name or a mapping; for the
    graph protocols also an ``.npz`` path (relative to the config's folder when the file is there)."""
    if protocol not in GRAPH_PROTOCOLS:
        return _vector_dataset(d, protocol, i)
    src = d if isinstance(d, str) else d.path
    if src is None and d.graph is not None:
        return DatasetSpec(name=d.name or d.graph.kind, graph=d.graph.resolved())
    if src is None and d.name is None:
        raise fail("a dataset mapping needs 'name', 'path' or 'graph'", "datasets", i)
    if src is None:
        return DatasetSpec(name=d.name, source=d.name)
    if not isinstance(d, str) and d.graph is not None:
        raise fail("give either 'path' or 'graph', not both", "datasets", i)
    local = os.path.join(base_dir or "", src)
    if src.endswith(".npz") and base_dir and not os.path.isabs(src) and not os.path.exists(src) \
            and os.path.exists(local):
        src = local
    name = os.path.splitext(os.path.basename(src))[0] if src.endswith(".npz") else src
    return DatasetSpec(name=name if isinstance(d, str) else d.name or name, source=src)


_TASK_NAME = re.compile(r"^(?P<source>.*\S)\s+(?P<pos>[^\s]+?)\s*vs\s*(?P<neg>[^\s]+)$")


def _vector_dataset(d, protocol: str, i: int) -> DatasetSpec:
    """A vector dataset (a name or a mapping); one-class names read ``SOURCE AvsB``."""
    from graphstk.data.vector import VECTOR_DATASETS, _lookup

    d, at = {"name": d} if isinstance(d, str) else d.model_dump(exclude_none=True), ("datasets", i)
    vec = {k: d[k] for k in ("part", "n_per_class", "options", "noise_std") if k in d}
    for seed, need in (("subsample_seed", "n_per_class"), ("noise_seed", "noise_std")):
        if seed in d and need not in d:
            raise fail(f"only with {need}", *at, seed)
        if need in d:
            vec[seed] = d.get(seed, 0)
    source = d.get("source")
    if protocol == "one-class":
        m = _TASK_NAME.match(d["name"])
        pos, neg = d.get("positive", m and m.group("pos")), d.get("negative", m and m.group("neg"))
        if pos is None or neg is None:
            raise fail("a one-class task names its classes: write 'SOURCE AvsB' (e.g. 'MNIST 3vs8': train on 3, "
                       f"test on 3 and 8) or give 'positive' and 'negative'; got {d['name']!r}", *at)
        vec["positive"], vec["negative"] = (int(v) if isinstance(v, str) and re.fullmatch(r"-?\d+", v) else v
                                            for v in (pos, neg))
        if vec["positive"] == vec["negative"]:
            raise fail(f"positive and negative class are the same ({vec['positive']!r})", *at)
        source = source or (m.group("source") if m else None)
    elif "positive" in d or "negative" in d:
        raise fail("only one-class tasks have positive/negative classes", *at,
                   "positive" if "positive" in d else "negative")
    source = source or d["name"]
    try:
        _lookup(source)
    except (ValueError, TypeError):
        raise fail(f"unknown dataset {source!r} for the {protocol} protocol{hint(source, VECTOR_DATASETS, 1, 0.5)} "
                   f"(allowed: {', '.join(VECTOR_DATASETS)}; case-insensitive)",
                   *at, *(("source",) if "source" in d else ())) from None
    return DatasetSpec(name=d["name"], source=source, vector=vec)
