"""The STKR paper's methods by name (Zhai et al., Tables 1, 4, 5 and Figure 2; Appendix D).

``LP (t)`` (Label-Prop, Eq. 22), ``SP-Lap (t)``/``(i)`` (inverse Laplacian, Algorithm 2),
``SP-poly (t)``/``(i)`` (``s(l) = l^k``, Algorithm 1), ``SP-topd (t)``/``(i)`` (kernel PCA,
Eq. 8) and ``KRR (i)`` (``s(l) = l``), all through :func:`graphstk.methods.predict_grid` on the
graph kernel of Eq. 23, built over the points the problem lets the method see: ``labeled`` and
``unlabeled`` are visible, every other node is hidden (the inductive setting predicts hidden
nodes out of sample). One call serves the whole grid (one multi-column solve for every
``beta`` and ``eta``, snapshots of one run for every budget ``T``, one eigendecomposition for
every ``d`` and ``beta``).

Default grids are Appendix D's (l.989-1005); ``k`` defaults to ``[8]``: Tables 1, 4 and 5 use
``s(l) = l^8`` (their captions), Appendix D's ``k`` grid ``[1, 2, 4, 6, 8]`` is what Figure 2
sweeps. ``T`` (a fixed iteration budget) is part of the transductive grids; without it every
system is solved to the solver's tolerance.
"""
from __future__ import annotations

import dataclasses
import hashlib
from collections import OrderedDict

import torch

from graphstk.methods.grid import grid_keys

from ..params import Param
from ..registry import MethodEntry, Problem, register_method

__all__ = ["DEFAULT_GRID", "PARAMS", "STKR_METHODS", "stkr_fit_predict", "graph_kernel"]

#: Appendix D's grids, declared once for every STKR method
DEFAULT_GRID: dict[str, list] = {
    "T": [1, 2, 4, 8, 16, 32],
    "eta": [0.7, 0.8, 0.9, 0.99, 0.999, 0.9999, 0.99999, 0.999999],
    "beta": [1e3, 1e2, 1e1, 1e0, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8],
    "k": [8],
    "d": [32, 64, 128, 256, 512],
}

#: one declaration per parameter (grid keys, then the per-method options)
PARAMS: dict[str, Param] = {p.name: p for p in (
    Param("eta", float, low=0, high=1, low_open=True, high_open=True,
          doc="Label-Prop / inverse-Laplacian parameter, s(l) = 1/(1 - eta l)"),
    Param("beta", float, low=0, low_open=True, doc="regularisation of Eq. 6"),
    Param("T", int, low=1, doc="fixed iteration budget (optional: without it, solved to tol)"),
    Param("k", int, low=1, doc="power of s(l) = l^k"),
    Param("d", int, low=1, doc="number of eigenvectors of SP-topd"),
    Param("support", str, choices=("all", "labeled"),
          doc="node set of SP-topd's kernel PCA: components holding a label, or every node (Eq. 8)"),
    Param("labels", str, choices=("onehot", "centered"),
          doc="label matrix: one-hot (App. D), or one-hot minus the training class frequencies"),
)}

#: label -> (engine method, setting, grid keys of the default grid)
STKR_METHODS = {
    "LP (t)": ("lp", "transductive", ("eta", "T")),
    "SP-Lap (t)": ("stkr-lap", "transductive", ("eta", "beta", "T")),
    "SP-poly (t)": ("stkr-poly", "transductive", ("k", "beta", "T")),
    "SP-topd (t)": ("stkr-topd", "transductive", ("d", "beta")),
    "SP-Lap (i)": ("stkr-lap", "inductive", ("eta", "beta")),
    "SP-poly (i)": ("stkr-poly", "inductive", ("k", "beta")),
    "SP-topd (i)": ("stkr-topd", "inductive", ("d", "beta")),
    "KRR (i)": ("krr", "inductive", ("beta",)),
}

_KERNELS: OrderedDict = OrderedDict()     # the last few graph kernels (transductive, select, final of a split)
_ENGINE_OPTIONS = ("solver", "max_iter", "tol", "step_size", "max_seconds")


def graph_kernel(problem: Problem, dtype: torch.dtype = torch.float64):
    """The graph kernel of Eq. 23 over ``problem.labeled`` and ``problem.unlabeled`` (every other
    node hidden), on ``problem.device``; the last three are kept (the stages of one split)."""
    from graphstk.operators import GraphKernel

    data = problem.data
    n = int(data.num_nodes)
    hidden = torch.ones(n, dtype=torch.bool)
    hidden[problem.fit_points.cpu()] = False
    device = torch.device(problem.device) if problem.device is not None else torch.device("cpu")
    key = (id(data), hashlib.sha256(hidden.numpy().tobytes()).hexdigest(), dtype, str(device))
    if key not in _KERNELS:
        weight = getattr(data, "edge_weight", None)
        _KERNELS[key] = GraphKernel(data.edge_index.to(device), n, hidden=hidden.to(device) if hidden.any() else None,
                                    edge_weight=None if weight is None else weight.to(device), dtype=dtype,
                                    device=device)
        while len(_KERNELS) > 3:
            _KERNELS.popitem(last=False)
    _KERNELS.move_to_end(key)
    return _KERNELS[key]


def stkr_fit_predict(problem: Problem, points: list[dict]) -> list[torch.Tensor]:
    """Scores ``[len(eval), C]`` for every grid point: one :func:`~graphstk.methods.predict_grid`
    call on the grid the points span (fixed keys ``engine``, ``support``, ``labels``; solver
    options and ``dtype`` from ``problem.options``)."""
    from graphstk.methods import predict_grid

    if problem.data is None:
        raise ValueError("the STKR methods need a graph (problem.data is None)")
    fixed = ("engine", "support", "labels")
    engine, support, labels = points[0]["engine"], points[0].get("support", "labeled"), points[0]["labels"]
    keys = [k for k in points[0] if k not in fixed]
    grid = {k: list(dict.fromkeys(p[k] for p in points)) for k in keys}
    opts = problem.options
    dtype = getattr(torch, opts.get("dtype", "float64"))
    kernel = graph_kernel(problem, dtype)
    kwargs = {k: opts[k] for k in _ENGINE_OPTIONS if opts.get(k) is not None}
    y = problem.y.to(kernel.device)
    res = predict_grid(engine, kernel, y, problem.labeled.to(kernel.device), problem.eval.to(kernel.device), grid,
                       problem.num_classes, topd_support=support, labels=labels, **kwargs)
    by_key = {tuple(p[k] for k in keys): s for p, s in res}
    return [by_key[tuple(p[k] for k in keys)] for p in points]


def _entry(label: str) -> MethodEntry:
    engine, setting, defaults = STKR_METHODS[label]
    required, optional = grid_keys(engine)
    options = {"support": "labeled", "labels": "onehot"} if engine == "stkr-topd" else {"labels": "onehot"}
    params = (*(PARAMS[k] for k in required), *(dataclasses.replace(PARAMS[k], optional=True) for k in optional),
              *(PARAMS[o] for o in options))
    return MethodEntry(
        name=label, needs=frozenset({"graph"}), task="classification",
        grid={k: list(DEFAULT_GRID[k]) for k in defaults}, fit_predict=stkr_fit_predict,
        fixed={"engine": engine, **options}, params=params, setting=setting, options=tuple(options),
        description=f"STKR paper: {engine} on the graph kernel of Eq. 23 ({setting})")


ENTRIES = {label: register_method(_entry(label)) for label in STKR_METHODS}
