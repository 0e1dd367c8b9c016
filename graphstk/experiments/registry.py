"""Methods by name: the one interface through which every protocol calls a method.

A protocol hands a method a :class:`Problem` (features and/or graph, the labels of the
labeled fit points only, the ids it may use unlabeled, the ids to score) and a list of
grid points; the method returns one score tensor per grid point. The runner never knows
a method's internals; a method never sees a validation or test label.

Registrations live in :mod:`graphstk.experiments.registrations` (one module per topic:
``baselines.py`` here; ``fredholm.py``, ``sskpca.py``, ``separating.py`` from the other
branches), imported the first time a method is looked up.

Example::

    from graphstk.experiments.registry import MethodEntry, Problem, register_method

    def _nearest_mean(problem: Problem, grid: list[dict]) -> list[torch.Tensor]:
        ...                                  # one [len(problem.eval), C] tensor per grid point

    register_method(MethodEntry(name="NearestMean", needs=frozenset({"features"}),
                                task="classification", grid={}, fit_predict=_nearest_mean))
"""
from __future__ import annotations

import difflib
import threading
from dataclasses import dataclass, field
from typing import Callable

import torch

__all__ = ["Problem", "MethodEntry", "register_method", "get_method", "registered_methods",
           "UnknownMethodError", "NEEDS", "TASKS"]

#: the inputs a method may need
NEEDS = frozenset({"features", "graph"})
#: what a method's scores mean
TASKS = ("classification", "one-class")


@dataclass(frozen=True)
class Problem:
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

    Rule: a method may read the ``X`` rows of ``eval`` points ONLY to predict them
    (out-of-sample), unless they are also in ``unlabeled``.
    """
    X: object
    data: object
    y: torch.Tensor
    labeled: torch.Tensor
    unlabeled: torch.Tensor
    eval: torch.Tensor
    num_classes: int
    seed: int = 0

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
        for KRLSC).
    """
    name: str
    needs: frozenset
    task: str
    grid: dict
    fit_predict: Callable
    description: str = ""
    fixed: dict = field(default_factory=dict)

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"MethodEntry.name must be a non-empty string, got {self.name!r}")
        needs = frozenset(self.needs)
        if not needs or not needs <= NEEDS:
            raise ValueError(f"MethodEntry {self.name!r}: needs must be a non-empty subset of "
                             f"{sorted(NEEDS)}, got {sorted(needs)}")
        object.__setattr__(self, "needs", needs)
        if self.task not in TASKS:
            raise ValueError(f"MethodEntry {self.name!r}: task must be one of {TASKS}, got {self.task!r}")
        if not isinstance(self.grid, dict) or any(not isinstance(v, (list, tuple)) or not v
                                                  for v in self.grid.values()):
            raise ValueError(f"MethodEntry {self.name!r}: grid must map each parameter to a non-empty list")
        if not callable(self.fit_predict):
            raise ValueError(f"MethodEntry {self.name!r}: fit_predict must be callable")
        clash = set(self.grid) & set(self.fixed)
        if clash:
            raise ValueError(f"MethodEntry {self.name!r}: {sorted(clash)} are both grid and fixed parameters")

    def points(self, grid: dict | None = None) -> list[dict]:
        """The grid points (Cartesian product, keys in order, last key fastest), each merged
        with ``fixed``: what ``fit_predict`` receives."""
        import itertools

        grid = self.grid if grid is None else grid
        keys = list(grid)
        return [{**self.fixed, **dict(zip(keys, vals))} for vals in itertools.product(*(grid[k] for k in keys))]


class UnknownMethodError(KeyError, ValueError):
    """A method name that no registration provides; the message lists close matches."""

    def __str__(self) -> str:   # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


_REGISTRY: dict[str, MethodEntry] = {}
_LOCK = threading.RLock()
_LOADED = False


def _load_registrations() -> None:
    global _LOADED
    if _LOADED:
        return
    with _LOCK:
        if _LOADED:
            return
        _LOADED = True
        import graphstk.experiments.registrations  # noqa: F401 - registers on import


def register_method(entry: MethodEntry) -> MethodEntry:
    """Add ``entry`` to the registry and return it.

    Registering the same entry again is a no-op (module reloads); a different entry under
    a name already taken is a ``ValueError`` (names are the rows of the results table).
    """
    if not isinstance(entry, MethodEntry):
        raise TypeError(f"register_method expects a MethodEntry, got {type(entry).__name__}")
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
    """Every registered method by name (a copy; the registrations are loaded first)."""
    _load_registrations()
    with _LOCK:
        return dict(_REGISTRY)


def get_method(name: str) -> MethodEntry:
    """The entry registered under ``name``; an unknown name raises :class:`UnknownMethodError`
    listing close matches and every registered name."""
    methods = registered_methods()
    if name in methods:
        return methods[name]
    lower = {k.lower(): k for k in methods}
    if isinstance(name, str) and name.lower() in lower:
        hint = f"did you mean {lower[name.lower()]!r} (names are case-sensitive)? "
    else:
        close = difflib.get_close_matches(str(name), list(methods), n=3, cutoff=0.4)
        hint = f"did you mean {' or '.join(repr(c) for c in close)}? " if close else ""
    raise UnknownMethodError(f"unknown method {name!r}; {hint}(registered: {', '.join(sorted(methods))})")
