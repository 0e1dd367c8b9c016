"""Methods by name: the one interface through which every protocol calls a method.

A protocol hands a method a :class:`MethodInput` and a list of grid points; the method returns one score
tensor per grid point and never sees a validation or test label. Registrations live in
:mod:`graphstk.experiments.registrations`; :data:`SHIPPED` names the module of every shipped method, which
:func:`get_method` loads the first time a config names one of its methods. Registering a method:
docs/experiments.md, "Methods by name".
"""
from __future__ import annotations

import importlib
import itertools
import math
import threading
from dataclasses import dataclass, field
from typing import Callable

import torch

from graphstk.exceptions import UnknownMethodError

from .params import Param, distinct, fail, hint, type_name, unknown_key

__all__ = ["MethodInput", "MethodEntry", "MethodSpec", "Sweep", "Param", "register_method", "get_method",
           "registered_methods", "grid_points", "options_suffix", "UnknownMethodError", "NEEDS", "TASKS", "SETTINGS",
           "SHIPPED"]

#: the inputs a method may need
NEEDS = frozenset({"features", "graph"})
#: what a method's scores mean
TASKS = ("classification", "one-class")
#: how a node-classification split is handed to a method (``None``: the protocol decides)
SETTINGS = ("transductive", "inductive")
#: the shipped methods by the module of :mod:`graphstk.experiments.registrations` that registers them
SHIPPED = {name: module for module, names in {
    "stkr": ("LP (t)", "SP-Lap (t)", "SP-poly (t)", "SP-topd (t)", "SP-Lap (i)", "SP-poly (i)", "SP-topd (i)",
             "KRR (i)"),
    "baselines": ("RLSC", "KRLSC", "LinearSVM"),
    "separating": ("Spectral", "Spectral-tikhonov", "Spectral-cutoff", "Spectral-landweber", "Spectral-kpca",
                   "Spectral-nu", "Parzen", "1CSVM"),
    "sskpca": ("LS-KPCA", "LR-KPCA", "MV-KPCA", "MV-KPCA-10", "KPCA-10", "G-LS", "M-LS", "LS-KPCA (t)"),
    "fredholm": ("FredLin1", "FredLin2", "FredLin2(N)", "FredGauss", "FredGauss(N)", "LapRLSC"),
    "stkr_kernels": ("STKR-Lap", "STKR-poly"),
    "planetoid": ("FeatureSTKR", "FeatureSTKR (i)", "FeatureSTKR (feature kNN)", "FeatureSTKR (i, feature kNN)",
                  "FeatureSTKR (S2GC filter)", "FeatureSTKR (GGCM filter)", "FeatureSTKR + C&S", "KRR (features)",
                  "SGC (ridge)", "Label-Prop", "GCN", "GAT", "APPNP", "MLP", "MLP+C&S", "SGC", "S2GC", "DGC", "GGCM"),
}.items() for name in names}


@dataclass(frozen=True)
class MethodInput:
    """What a protocol hands a method; nothing else reaches it.

    Attributes
    ----------
    X : features of EVERY point of the dataset (rows = point ids): a float64 tensor
        ``[n, d]``, a ``scipy.sparse.csr_matrix`` (text), or ``None`` (graph only).
    data : the graph (``torch_geometric.data.Data``, node ids = point ids), or ``None``.
    y : LongTensor ``[n]``: the labels of ``labeled``, ``-1`` everywhere else (never a
        validation or test label).
    labeled : LongTensor of the labeled fit points.
    unlabeled : LongTensor of the points whose features the method may use at fit time,
        without labels (transductive protocols put the test points here).
    eval : LongTensor of the points to score; the rows of the output, in this order.
    num_classes : ``C`` (one-class tasks: 1).
    seed : for any randomness inside the method.
    device : the torch device the method computes on (``None``: the CPU); ``X`` (a dense
        tensor) is already there.
    options : protocol-wide options for the methods that take them (node classification:
        ``solver``, ``max_iter``, ``tol``, ``step_size``, ``dtype`` of the config's ``solver:``).
    val, y_val : validation nodes and their labels (``planetoid``, ``per-class-splits``), for early
        stopping only; ``None`` elsewhere.
    kernels : the run's :class:`~graphstk.experiments.kernels.KernelCache`, from which graph methods take
        their kernel; ``None``: a method uses a cache of its own (single process).

    Points outside ``labeled`` and ``unlabeled`` are hidden from the fit. A method may read the ``X``
    rows of ``eval`` points ONLY to predict them (out-of-sample), unless they are also in ``unlabeled``.
    """
    X: object
    data: object
    y: torch.Tensor
    labeled: torch.Tensor
    unlabeled: torch.Tensor
    eval: torch.Tensor
    num_classes: int
    seed: int = 0
    device: object = None
    options: dict = field(default_factory=dict)
    kernels: object = None
    val: torch.Tensor | None = None
    y_val: torch.Tensor | None = None

    @property
    def num_points(self) -> int:
        """``n``, the number of points of the dataset (rows of ``X`` / nodes of ``data``)."""
        return int(self.y.numel())

    @property
    def fit_points(self) -> torch.Tensor:
        """``labeled`` followed by ``unlabeled``: every point a method may use at fit time."""
        return torch.cat([self.labeled, self.unlabeled])

    def labeled_targets(self) -> torch.Tensor:
        """The labels of ``labeled`` (LongTensor, in the order of ``labeled``)."""
        return self.y[self.labeled]


@dataclass(frozen=True)
class MethodEntry:
    """One method by name.

    Attributes
    ----------
    name : the row label exactly as the paper's table writes it (``"KRLSC"``, ``"FredGauss(N)"``).
    needs : subset of ``{"features", "graph"}``; a config pairing the method with data lacking
        one of them is an error before any computation.
    task : ``"classification"``: scores ``[len(eval), C]``, argmax = prediction;
        ``"one-class"``: scores ``[len(eval)]`` (1-D), higher = more inside the set.
    grid : the default hyperparameter grid ``{param: [values]}`` (a config may override
        any key it names; it may not add keys the method does not know).
    fit_predict : ``(problem, grid_points) -> [scores per grid point]``, called once per
        split (or CV fold) with the WHOLE list of grid points, so a method can share one
        decomposition across them; returns one tensor per grid point, same order.
    description : one line for ``--help``-style listings and docs.
    fixed : keyword arguments merged into every grid point (lets one function serve
        several names, e.g. ``{"kernel": "linear"}`` for RLSC and ``{"kernel": "gaussian"}``
        for KRLSC); a config may override a key in ``fixed:`` (or, for the keys listed in
        ``options``, directly in the method's mapping).
    params : one :class:`~.params.Param` per parameter (grid or fixed): its type and range,
        checked for every value of a config when it loads. A parameter without a declaration
        accepts any finite number, string or boolean.
    setting : ``"transductive"`` | ``"inductive"`` | ``None`` (node classification: how the
        split is handed to the method; ``None`` = transductive, the protocol's default).
    options : the ``fixed`` keys a config may write directly in the method's mapping
        (``{label: SP-topd (t), support: all}``); shown in the row label when not default.
    engine : what computes the method, reported in results rows: the transform family of the
        STKR engine (``"InverseLaplacian"``, ``"Polynomial"``, ...) or ``"registry"`` (default).
    """
    name: str
    needs: frozenset
    task: str
    grid: dict
    fit_predict: Callable
    description: str = ""
    fixed: dict = field(default_factory=dict)
    params: tuple = ()
    setting: str | None = None
    options: tuple = ()
    engine: str = "registry"

    def __post_init__(self):
        needs, params, options = frozenset(self.needs), tuple(self.params), tuple(self.options)
        clash = sorted(set(self.grid) & set(self.fixed)) if isinstance(self.grid, dict) else []
        for bad, msg in (
                (not isinstance(self.name, str) or not self.name.strip(), "name must be a non-empty string"),
                (not needs or not needs <= NEEDS,
                 f"needs must be a non-empty subset of {sorted(NEEDS)}, got {sorted(needs)}"),
                (self.task not in TASKS, f"task must be one of {TASKS}, got {self.task!r}"),
                (not isinstance(self.grid, dict) or any(not isinstance(v, (list, tuple)) or not v
                                                        for v in self.grid.values()),
                 "grid must map each parameter to a non-empty list"),
                (not callable(self.fit_predict), "fit_predict must be callable"),
                (clash, f"{clash} are both grid and fixed parameters"),
                (any(not isinstance(p, Param) for p in params) or len({p.name for p in params}) != len(params),
                 "params must be Param objects with distinct names"),
                (self.setting is not None and self.setting not in SETTINGS,
                 f"setting must be one of {SETTINGS} or None"),
                (not set(options) <= set(self.fixed),
                 f"options {sorted(set(options) - set(self.fixed))} need a default in fixed")):
            if bad:
                raise ValueError(f"MethodEntry {self.name!r}: {msg}")
        for key, value in (("needs", needs), ("params", params), ("options", options)):
            object.__setattr__(self, key, value)
        for key, vals in [*self.grid.items(), *((k, [v]) for k, v in self.fixed.items())]:
            for v in vals:
                try:
                    self.check(key, v)
                except ValueError as err:
                    raise ValueError(f"MethodEntry {self.name!r}: default {key}: {err}") from None

    def param(self, name: str) -> Param | None:
        """The declaration of parameter ``name`` (``None`` if undeclared)."""
        return next((p for p in self.params if p.name == name), None)

    def check(self, name: str, value):
        """``value`` checked against the declaration of ``name`` (normalised), else ``ValueError``
        naming what is allowed and the value as written."""
        p = self.param(name)
        if p is not None:
            return p.check(value)
        if isinstance(value, (bool, str)) or (isinstance(value, (int, float)) and math.isfinite(value)):
            return value
        raise ValueError(f"expected a finite number, a string or true/false, got {type_name(value)} {value!r}")

    def checked(self, point: dict) -> dict:
        """A grid point with every declared parameter checked (what a ``fit_predict`` reads)."""
        return {k: self.check(k, v) if self.param(k) is not None else v for k, v in point.items()}

    def points(self, grid: dict | None = None) -> list[dict]:
        """The grid points (:func:`grid_points`), each merged with ``fixed``: what ``fit_predict`` receives."""
        return [{**self.fixed, **p} for p in grid_points(self.grid if grid is None else grid)]

    @property
    def gridable(self) -> list[str]:
        """The keys a config's ``grid`` may set: the default grid's, then the optional parameters."""
        return [*self.grid, *(p.name for p in self.params if p.optional and p.name not in self.grid)]

    def runs_in(self, protocol: str, graph: bool, task: str) -> "MethodEntry":
        """``self`` if a protocol scoring ``task`` on graphs (``graph``) or vectors can run it, else
        ``ValueError`` naming the methods it can run."""
        if ("graph" in self.needs and not graph) or self.task != task:
            usable = ", ".join(sorted(n for n, e in registered_methods().items()
                                      if e.task == task and (graph or "graph" not in e.needs))) or "none registered"
            if "graph" in self.needs and not graph:
                raise ValueError(f"{self.name!r} is a node-classification method (it needs a graph); this task's "
                                 f"protocol is {protocol} (methods for it: {usable})")
            raise ValueError(f"{self.name!r} is a {self.task} method; the {protocol} protocol needs a {task} method "
                             f"({usable})")
        return self

    def values(self, key: str, raw, *at) -> list:
        """``raw`` (a value or a non-empty list of distinct values) checked against the declaration of
        ``key``; a bad value is a config error at ``at`` (plus its index in a list)."""
        out = []
        for j, v in enumerate(raw if isinstance(raw, list) else [raw]):
            try:
                out.append(self.check(key, v))
            except ValueError as err:
                raise fail(str(err), *at, *((j,) if isinstance(raw, list) else ())) from None
        return distinct(out, *at)

    def resolve(self, m: dict, top_grid: dict, setting: str, *at) -> "MethodSpec":
        """The :class:`MethodSpec` of a config's method entry ``m`` (at ``at``): the default grid updated by
        the task's shared ``top_grid`` and the entry's ``grid`` (``null`` removes an optional parameter),
        its ``sweep`` and options; ``setting`` is the protocol's, for a method that does not fix it."""
        options, optional = self._options(m, *at), [p.name for p in self.params if p.optional]
        grid = {k: list(v) for k, v in self.grid.items()}
        grid.update({k: self.values(k, v, "grid", k) for k, v in top_grid.items() if k in grid})
        for k, v in (m.get("grid") or {}).items():
            if k not in self.gridable:
                raise unknown_key(k, self.gridable, *at, "grid", k)
            if v is not None:
                grid[k] = self.values(k, v, *at, "grid", k)
            elif k in optional:
                grid.pop(k, None)
            else:
                raise fail(f"null is only allowed for optional parameters ({', '.join(optional) or 'none here'})",
                           *at, "grid", k)
        sweep, sw = None, m.get("sweep")
        if sw is not None:
            if sw["param"] not in self.gridable:
                raise fail(f"{sw['param']!r} is not a parameter of {self.name!r} (allowed: "
                           f"{', '.join(self.gridable)})", *at, "sweep", "param")
            sweep = Sweep(sw["param"], tuple(self.values(sw["param"], sw["values"], *at, "sweep", "values")))
            grid.pop(sweep.param, None)
        return MethodSpec(self.name, self.engine, self.setting or setting,
                          {k: grid[k] for k in self.gridable if k in grid}, sweep, options)

    def _options(self, m: dict, *at) -> dict:
        """The declared options and the ``fixed`` values of ``m`` that differ from the registration's."""
        given = {k: (v, (*at, "fixed", k)) for k, v in (m.get("fixed") or {}).items()}
        for k in [k for k in m if k not in ("label", "grid", "sweep", "fixed")]:
            if k not in self.options:
                takers = [e for e in registered_methods().values() if k in e.options]
                if not takers:
                    raise unknown_key(k, {"label", "grid", "sweep", "fixed", *self.options}, *at, k)
                p = takers[0].param(k)
                raise fail(f"{self.name!r} has no option {k!r} (only {', '.join(e.name for e in takers)} take it: "
                           f"{p.doc if p else ''})", *at, k)
            given[k] = (m[k], (*at, k))
        options = {o: self.fixed[o] for o in self.options}
        for k, (v, where) in given.items():
            if k not in self.fixed:
                raise unknown_key(k, self.fixed, *where)
            if isinstance(v, list):
                raise fail("expected one value (a fixed option is not a grid)", *where)
            v = self.values(k, v, *where)[0]
            if k in self.options or v != self.fixed[k]:
                options[k] = v
        return options


@dataclass(frozen=True)
class Sweep:
    """Run one series per value of ``param`` (the other parameters are selected)."""
    param: str
    values: tuple


@dataclass(frozen=True)
class MethodSpec:
    """A method of a task: its registered ``label``, ``engine`` (the STKR engine's transform family, or
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


def grid_points(grid: dict) -> list[dict]:
    """The Cartesian product of ``grid`` in canonical order (keys in order, last key fastest)."""
    return [dict(zip(grid, vals)) for vals in itertools.product(*grid.values())]


def options_suffix(options: dict | None, label: str | None = None) -> str:
    """``" [support=all]"`` for the options that differ from the method's defaults; ``""`` otherwise."""
    defaults = get_method(label).fixed if label in SHIPPED or label in _REGISTRY else {}
    extra = [f"{k}={v}" for k, v in (options or {}).items() if k not in defaults or v != defaults[k]]
    return f" [{','.join(extra)}]" if extra else ""


_REGISTRY: dict[str, MethodEntry] = {}
_LOCK = threading.RLock()


def register_method(entry: MethodEntry) -> MethodEntry:
    """Add ``entry`` to the registry and return it.

    Registering the same entry again is a no-op (module reloads); a different entry under
    a name already taken is a ``ValueError`` (names are the rows of the results table).
    """
    if not isinstance(entry, MethodEntry):
        raise TypeError(f"register_method expects a MethodEntry, got {type(entry).__name__}")
    if entry.name in SHIPPED:
        _load(SHIPPED[entry.name])                      # a shipped name is taken even before its module loads
    with _LOCK:
        old = _REGISTRY.get(entry.name)
        if old is not None and old != entry:
            same_fn = (getattr(old.fit_predict, "__qualname__", None) == getattr(entry.fit_predict, "__qualname__", 0)
                       and getattr(old.fit_predict, "__module__", None) == getattr(entry.fit_predict, "__module__", 0))
            if not same_fn:
                raise ValueError(f"a method named {entry.name!r} is already registered "
                                 f"(by {getattr(old.fit_predict, '__module__', '?')}); choose another name")
        _REGISTRY[entry.name] = entry
    return entry


def registered_methods() -> dict[str, MethodEntry]:
    """Every registered method by name (a copy): the shipped registrations
    (:mod:`graphstk.experiments.registrations`, all loaded) and any :func:`register_method` added."""
    for module in dict.fromkeys(SHIPPED.values()):
        _load(module)
    with _LOCK:
        return {**{n: _REGISTRY[n] for n in SHIPPED}, **_REGISTRY}


def _load(module: str) -> None:
    importlib.import_module(f"{__package__}.registrations.{module}")


def get_method(name: str) -> MethodEntry:
    """The entry registered under ``name`` (a shipped method's registration module is loaded the first time);
    an unknown name raises :class:`UnknownMethodError` listing close matches and every method name."""
    if name not in _REGISTRY and isinstance(name, str) and name in SHIPPED:
        _load(SHIPPED[name])
    with _LOCK:
        if name in _REGISTRY:
            return _REGISTRY[name]
        names = sorted({*SHIPPED, *_REGISTRY})
    lower = {k.lower(): k for k in names}
    if isinstance(name, str) and name.lower() in lower:
        close = f"; did you mean {lower[name.lower()]!r} (names are case-sensitive)?"
    else:
        close = hint(str(name), names, n=3, cutoff=0.4)
    raise UnknownMethodError(f"unknown method {name!r}{close} (registered: {', '.join(names)})")
