"""The resolved parts of a config: datasets, methods (with their full grids), sweeps and plots.

:func:`resolve_methods` turns a task's ``methods`` entries into :class:`MethodSpec` objects from
the method registrations: default grids, the task's shared ``grid``, the entry's own ``grid``,
``fixed`` options and ``sweep``, every value checked against the method's parameter
declarations (errors name the path, e.g. ``methods[2].grid.beta[1]``, and the value as written).
"""
from __future__ import annotations

import difflib
import itertools
import os
import re
from dataclasses import dataclass, field

__all__ = ["DatasetSpec", "MethodSpec", "Sweep", "PlotSpec", "resolve_methods", "grid_points", "options_suffix",
           "graph_dataset", "vector_dataset"]


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
class PlotSpec:
    file: str                 # PNG file name, written into the output directory
    x: str                    # the swept parameter on the x axis
    title: str | None = None


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
    defaults = {}
    if label is not None:
        from .registry import registered_methods

        entry = registered_methods().get(label)
        defaults = entry.fixed if entry is not None else {}
    extra = [f"{k}={v}" for k, v in (options or {}).items() if k not in defaults or v != defaults[k]]
    return f" [{','.join(extra)}]" if extra else ""


def grid_points(grid: dict) -> list[dict]:
    """The Cartesian product of ``grid`` in canonical order (keys in order, last key fastest)."""
    keys = list(grid)
    return [dict(zip(keys, vals)) for vals in itertools.product(*(grid[k] for k in keys))]


def _fail(message, *at):
    from .schema import fail

    return fail(message, *at)


def _value(entry, key, v, at):
    try:
        return entry.check(key, v)
    except ValueError as err:
        raise _fail(str(err), *at) from None


def _values(entry, key, raw, at) -> list:
    vals = raw if isinstance(raw, list) else [raw]
    if not vals:
        raise _fail("empty list (give at least one value)", *at)
    out = [_value(entry, key, v, (*at, j) if isinstance(raw, list) else at) for j, v in enumerate(vals)]
    if len({repr(x) for x in out}) != len(out):
        raise _fail(f"duplicate values in {out}", *at)
    return out


def _entry(label, at, protocol: str):
    from .registry import UnknownMethodError, get_method, registered_methods

    try:
        entry = get_method(label)
    except UnknownMethodError as err:
        raise _fail(str(err), *at) from None
    graph = protocol == "node-classification"
    want = "one-class" if protocol == "one-class" else "classification"
    usable = sorted(n for n, e in registered_methods().items() if e.task == want and (graph or "graph" not in e.needs))
    if "graph" in entry.needs and not graph:
        raise _fail(f"{label!r} is a node-classification method (it needs a graph); this task's protocol is "
                    f"{protocol} (methods for it: {', '.join(usable)})", *at)
    if entry.task != want:
        raise _fail(f"{label!r} is a {entry.task} method; the {protocol} protocol needs a {want} method "
                    f"({', '.join(usable) or 'none registered'})", *at)
    return entry


def resolve_methods(raw: list, top_grid: dict, protocol: str, setting: str) -> list[MethodSpec]:
    """The :class:`MethodSpec` of every entry of ``methods`` (see the module doc)."""
    from .registry import registered_methods

    out = []
    for i, m in enumerate(raw):
        m = {"label": m} if isinstance(m, str) else {k: v for k, v in m.model_dump(exclude_unset=True).items()}
        entry = _entry(m["label"], ("methods", i) if len(m) == 1 and isinstance(raw[i], str) else
                       ("methods", i, "label"), protocol)
        at = ("methods", i)
        fixed = dict(m.pop("fixed", None) or {})
        where = {k: (*at, "fixed", k) for k in fixed}
        for k in [k for k in m if k not in ("label", "grid", "sweep")]:
            if k in entry.options:
                fixed[k], where[k] = m.pop(k), (*at, k)
                continue
            takers = [n for n, e in registered_methods().items() if k in e.options]
            if takers:
                p = registered_methods()[takers[0]].param(k)
                raise _fail(f"{entry.name!r} has no option {k!r} (only {', '.join(takers)} take it: "
                            f"{p.doc if p else ''})", *at, k)
            from .schema import unknown_key

            err = unknown_key(k, {"label", "grid", "sweep", "fixed", *entry.options})
            raise _fail(err.context["message"], *at, k)
        for k, v in fixed.items():
            if k not in entry.fixed:
                from .schema import unknown_key

                raise _fail(unknown_key(k, set(entry.fixed)).context["message"], *where[k])
            if isinstance(v, list):
                raise _fail("expected one value (a fixed option is not a grid)", *where[k])
            fixed[k] = _value(entry, k, v, where[k])
        gridable = [*entry.grid, *(p.name for p in entry.params if p.optional and p.name not in entry.grid)]
        grid = {k: list(v) for k, v in entry.grid.items()}
        for k, v in top_grid.items():
            if k in grid:
                grid[k] = _values(entry, k, v, ("grid", k))
        for k, v in (m.get("grid") or {}).items():
            if k not in gridable:
                from .schema import unknown_key

                raise _fail(unknown_key(k, set(gridable)).context["message"], *at, "grid", k)
            if v is None:
                p = entry.param(k)
                if p is None or not p.optional:
                    opt = [q.name for q in entry.params if q.optional]
                    raise _fail(f"null is only allowed for optional parameters ({', '.join(opt) or 'none here'})",
                                *at, "grid", k)
                grid.pop(k, None)
            else:
                grid[k] = _values(entry, k, v, (*at, "grid", k))
        sweep = None
        if m.get("sweep") is not None:
            sw = m["sweep"]
            if sw["param"] not in gridable:
                raise _fail(f"{sw['param']!r} is not a parameter of {entry.name!r} (allowed: {', '.join(gridable)})",
                            *at, "sweep", "param")
            sweep = Sweep(sw["param"], tuple(_values(entry, sw["param"], sw["values"], (*at, "sweep", "values"))))
            grid.pop(sweep.param, None)
        for p in entry.params:
            if p.name in gridable and not p.optional and p.name not in grid and (sweep is None or sweep.param != p.name):
                raise _fail("missing: this method needs it", *at, "grid", p.name)
        order = [k for k in gridable if k in grid]
        options = {**{o: entry.fixed[o] for o in entry.options},
                   **{k: v for k, v in fixed.items() if k in entry.options or v != entry.fixed[k]}}
        out.append(MethodSpec(entry.name, entry.fixed.get("engine", "registry"), entry.setting or setting,
                              {k: grid[k] for k in order}, sweep, options))
    keys = [(m.label, m.sweep.param if m.sweep else None, tuple(sorted(m.options.items()))) for m in out]
    for i, k in enumerate(keys):
        if k in keys[:i]:
            opts = f" with the same options ({', '.join(f'{a}: {b}' for a, b in k[2])})" if k[2] else ""
            raise _fail(f"method {k[0]!r} is listed twice{opts}; rows must be unique (use one entry, a sweep or "
                        "other options)", "methods", i)
    return out


def graph_dataset(d, base_dir: str | None, i: int) -> DatasetSpec:
    """A node-classification dataset entry (a name, an ``.npz`` path, or a mapping)."""
    if isinstance(d, str):
        return DatasetSpec(name=_display_name(d), source=_resolve_path(d, base_dir))
    if d.path is not None and d.graph is not None:
        raise _fail("give either 'path' or 'graph', not both", "datasets", i)
    if d.path is not None:
        src = _resolve_path(d.path, base_dir)
        return DatasetSpec(name=d.name or _display_name(src), source=src)
    if d.graph is not None:
        from .schema import GraphSpec

        g = (GraphSpec(kind=d.graph) if isinstance(d.graph, str) else d.graph).resolved()
        return DatasetSpec(name=d.name or g["kind"], graph=g)
    if d.name is None:
        raise _fail("a dataset mapping needs 'name', 'path' or 'graph'", "datasets", i)
    return DatasetSpec(name=d.name, source=d.name)


def _display_name(source: str) -> str:
    return os.path.splitext(os.path.basename(source))[0] if source.endswith(".npz") else source


def _resolve_path(source: str, base_dir: str | None) -> str:
    """``.npz`` paths relative to the config file's directory when they exist there."""
    if source.endswith(".npz") and not os.path.isabs(source) and base_dir:
        cand = os.path.join(base_dir, source)
        if os.path.exists(cand) and not os.path.exists(source):
            return cand
    return source


_TASK_NAME = re.compile(r"^(?P<source>.*\S)\s+(?P<pos>[^\s]+?)\s*vs\s*(?P<neg>[^\s]+)$")


def vector_dataset(d, protocol: str, i: int) -> DatasetSpec:
    """A vector-protocol dataset entry (a name or a mapping); one-class names read ``SOURCE AvsB``."""
    from graphstk.data.vector import VECTOR_DATASETS, _lookup

    d = {"name": d} if isinstance(d, str) else d.model_dump(exclude_none=True)
    at = ("datasets", i)
    vec = {k: d[k] for k in ("part", "n_per_class", "options", "noise_std") if k in d}
    if "n_per_class" in d:
        vec["subsample_seed"] = d.get("subsample_seed", 0)
    if "noise_std" in d:
        vec["noise_seed"] = d.get("noise_seed", 0)
    for k, need in (("subsample_seed", "n_per_class"), ("noise_seed", "noise_std")):
        if k in d and need not in d:
            raise _fail(f"only with {need}", *at, k)
    source = d.get("source")
    if protocol == "one-class":
        m = _TASK_NAME.match(d["name"])
        pos, neg = d.get("positive", m and m.group("pos")), d.get("negative", m and m.group("neg"))
        if pos is None or neg is None:
            raise _fail("a one-class task names its classes: write 'SOURCE AvsB' (e.g. 'MNIST 3vs8': train on 3, "
                        f"test on 3 and 8) or give 'positive' and 'negative'; got {d['name']!r}", *at)
        vec["positive"], vec["negative"] = (int(v) if isinstance(v, str) and re.fullmatch(r"-?\d+", v) else v
                                            for v in (pos, neg))
        if vec["positive"] == vec["negative"]:
            raise _fail(f"positive and negative class are the same ({vec['positive']!r})", *at)
        source = source or (m.group("source") if m else None)
    elif "positive" in d or "negative" in d:
        raise _fail("only one-class tasks have positive/negative classes", *at,
                    "positive" if "positive" in d else "negative")
    source = source or d["name"]
    try:
        _lookup(source)
    except (ValueError, TypeError):
        close = difflib.get_close_matches(source, list(VECTOR_DATASETS), n=1, cutoff=0.5)
        raise _fail(f"unknown dataset {source!r} for the {protocol} protocol; "
                    f"{'did you mean ' + repr(close[0]) + '? ' if close else ''}"
                    f"(allowed: {', '.join(VECTOR_DATASETS)}; case-insensitive)",
                    *at, *(("source",) if "source" in d else ())) from None
    return DatasetSpec(name=d["name"], source=source, vector=vec)
