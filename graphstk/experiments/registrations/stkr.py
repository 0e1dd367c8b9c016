"""The STKR paper's methods by name (Zhai et al., Tables 1, 4, 5 and Figure 2; Appendix D): ``LP (t)``
(Eq. 22), ``SP-Lap`` (Algorithm 2), ``SP-poly`` (Algorithm 1), ``SP-topd`` (Eq. 8), each ``(t)``/``(i)``, and
``KRR (i)``. Each builds the transforms of its grid and scores every grid point with one
:meth:`graphstk.methods.STKRCV.grid_scores` call on the graph kernel of the run's
:class:`~graphstk.experiments.kernels.KernelCache`. Grids and normalization: docs/experiments.md, "STKR on a graph".
"""
from __future__ import annotations

import dataclasses
from typing import Callable

import torch

from graphstk.methods.estimators import STKR
from graphstk.methods.validated import DEFAULT_BETAS, DEFAULT_ETAS, STKRCV
from graphstk.spectral.transforms import InverseLaplacian, LabelPropagationFilter, Polynomial, TopD

from ..kernels import KernelCache
from ..params import Param
from ..registry import MethodEntry, MethodInput, register_method

__all__ = ["DEFAULT_GRID", "PARAMS", "FAMILIES", "Family", "STKR_METHODS", "stkr_fit_predict", "graph_kernel"]

#: Appendix D's grids for every STKR method (``eta`` and ``beta``: :class:`~graphstk.methods.STKRCV`'s defaults)
DEFAULT_GRID: dict[str, list] = {"T": [1, 2, 4, 8, 16, 32], "eta": list(DEFAULT_ETAS), "beta": list(DEFAULT_BETAS),
                                 "k": [8], "d": [32, 64, 128, 256, 512]}

#: one declaration per parameter (grid keys, then the per-method options; the estimators' where they take it)
PARAMS: dict[str, Param] = {p.name: p for p in (
    Param("eta", float, low=0, high=1, low_open=True, high_open=True,
          doc="Label-Prop / inverse-Laplacian parameter, s(l) = 1/(1 - eta l)"),
    Param.of("beta", STKR._parameter_constraints["beta"], doc="regularisation of Eq. 6"),
    Param.of("T", STKR._parameter_constraints["num_iter"],
             doc="fixed iteration budget (optional: without it, solved to tol)"),
    Param("k", int, low=1, doc="power of s(l) = l^k"),
    Param("d", int, low=1, doc="number of eigenvectors of SP-topd"),
    Param("support", str, choices=("all", "labeled"),
          doc="node set of SP-topd's kernel PCA: components holding a label, or every node (Eq. 8)"),
    Param.of("labels", STKRCV._parameter_constraints["labels"],
             doc="label matrix: one-hot (App. D), or one-hot minus the training class frequencies"),
    Param.of("normalization", STKR._parameter_constraints["normalization"],
             doc="graph kernel: the positive semidefinite lazy (I + S) / 2, or Eq. 23's D^-1/2 W D^-1/2"),
)}


@dataclasses.dataclass(frozen=True)
class Family:
    """How a registered STKR method turns its grid into transform objects of class ``transform``.

    ``make(value, options)`` gives the transform of one value of the grid key ``axis`` (``None``: one
    transform, ``make(None, options)``); ``required`` / ``optional`` are the grid keys the method takes.
    ``name`` (the engine reported in results rows) is the class name, or ``"KRR"`` for ``s(l) = l``."""
    transform: type
    make: Callable
    axis: str | None
    required: tuple[str, ...]
    optional: tuple[str, ...] = ("T",)

    @property
    def name(self) -> str:
        return self.transform.__name__ if self.axis else "KRR"

    def transforms(self, grid: dict, options: dict) -> list:
        """The transforms of ``grid`` (with the method's ``options``), in the order of ``grid[axis]``."""
        return [self.make(v, options) for v in (grid[self.axis] if self.axis else [None])]

    def fit_predict(self, problem: MethodInput, points: list[dict]) -> list[torch.Tensor]:
        """``stkr_fit_predict`` with this family's transforms."""
        return stkr_fit_predict(problem, points, self)


LP = Family(LabelPropagationFilter, lambda e, o: LabelPropagationFilter(e), "eta", ("eta",))
LAP = Family(InverseLaplacian, lambda e, o: InverseLaplacian(e), "eta", ("eta", "beta"))
POLY = Family(Polynomial, lambda k, o: Polynomial.monomial(int(k)), "k", ("k", "beta"))
TOPD = Family(TopD, lambda d, o: TopD(int(d), support=o.get("support", "labeled")), "d", ("d", "beta"), ())
KRR = Family(Polynomial, lambda _, o: Polynomial.monomial(1), None, ("beta",))
#: the families by engine name
FAMILIES = {f.name: f for f in (LP, LAP, POLY, TOPD, KRR)}

#: label -> (transform family, setting, grid keys of the default grid)
STKR_METHODS = {
    "LP (t)": (LP, "transductive", ("eta", "T")),
    "SP-Lap (t)": (LAP, "transductive", ("eta", "beta", "T")),
    "SP-poly (t)": (POLY, "transductive", ("k", "beta", "T")),
    "SP-topd (t)": (TOPD, "transductive", ("d", "beta")),
    "SP-Lap (i)": (LAP, "inductive", ("eta", "beta")),
    "SP-poly (i)": (POLY, "inductive", ("k", "beta")),
    "SP-topd (i)": (TOPD, "inductive", ("d", "beta")),
    "KRR (i)": (KRR, "inductive", ("beta",)),
}

_ENGINE_OPTIONS = ("solver", "max_iter", "tol", "step_size", "max_seconds")


def graph_kernel(problem: MethodInput, dtype: torch.dtype = torch.float64, whole: bool = False,
                 normalization: str = "symmetric"):
    """The graph kernel (Eq. 23's, or its lazy form: ``normalization``) over ``problem.labeled`` and
    ``problem.unlabeled`` (every other node hidden), on ``problem.device``, from the run's cache
    ``problem.kernels`` (a problem made outside a run: a cache of its own, single process).
    ``whole``: a kernel every process holds whole."""
    data = problem.data
    hidden = torch.ones(int(data.num_nodes), dtype=torch.bool)
    hidden[problem.fit_points.cpu()] = False
    kernels = problem.kernels if problem.kernels is not None else KernelCache()
    device = torch.device(problem.device) if problem.device is not None else torch.device("cpu")
    return kernels.kernel(data, hidden, dtype=dtype, device=device, whole=whole, normalization=normalization)


def stkr_fit_predict(problem: MethodInput, points: list[dict], family: Family) -> list[torch.Tensor]:
    """Scores ``[len(eval), C]`` for every grid point: one :meth:`~graphstk.methods.STKRCV.grid_scores`
    call on the grid the points span (fixed keys ``support``, ``labels``, ``normalization``; solver options
    and ``dtype`` from ``problem.options``)."""
    if problem.data is None:
        raise ValueError("the STKR methods need a graph (problem.data is None)")
    fixed = ("support", "labels", "normalization")
    options = {k: points[0][k] for k in fixed if k in points[0]}
    grid = {k: list(dict.fromkeys(p[k] for p in points)) for k in points[0] if k not in fixed}
    transforms = family.transforms(grid, options)
    opts = problem.options
    kernel = graph_kernel(problem, getattr(torch, opts.get("dtype", "float64")),
                          whole=family.transform is TopD,   # kernel PCA does not distribute
                          normalization=options.get("normalization", default_normalization(family)))
    # the kernel brings its hidden nodes (the inductive setting), so no hidden_idx is passed
    est = STKRCV(transforms, grid.get("beta"), num_iter=grid.get("T"), labels=options.get("labels", "onehot"),
                 num_classes=problem.num_classes, **{k: opts[k] for k in _ENGINE_OPTIONS if opts.get(k) is not None})
    # a kernel whose points are renumbered (a partitioned kernel) takes node ids through ``position``
    position, order = getattr(kernel, "position", None), getattr(kernel, "order", None)
    y, train, ev = problem.y.to(kernel.device), problem.labeled.to(kernel.device), problem.eval.to(kernel.device)
    if position is not None and order is not None:
        y, train, ev = y[order], position[train], position[ev]
    eigen_cache = getattr(problem.kernels, "eigen", None)   # the run's eigenpairs (kernel PCA, once per operator)
    names = [k for k in (family.axis, "beta", "T") if k in grid]
    by_key = {}
    for p, s in est.grid_scores(kernel, train, ev, y=y, eigen_cache=eigen_cache):
        value = {family.axis: grid.get(family.axis, [None])[transforms.index(p["transform"])], "beta": p["beta"],
                 "T": p["num_iter"]}
        by_key[tuple(value[k] for k in names)] = s
    return [by_key[tuple(p[k] for k in names)] for p in points]


def default_normalization(family: Family) -> str:
    """The graph kernel a method takes unless its config names one: Eq. 23's for Label-Prop (Zhou et al.'s
    ``S``; ``I - eta S`` is positive definite whatever the sign of ``S``), the positive semidefinite lazy
    kernel for every STKR transform."""
    return "symmetric" if family.transform is LabelPropagationFilter else "lazy"


def _entry(label: str) -> MethodEntry:
    family, setting, defaults = STKR_METHODS[label]
    options = {"support": "labeled", "labels": "onehot"} if family.transform is TopD else {"labels": "onehot"}
    options["normalization"] = default_normalization(family)
    params = (*(PARAMS[k] for k in family.required),
              *(dataclasses.replace(PARAMS[k], optional=True) for k in family.optional),
              *(PARAMS[o] for o in options))
    return MethodEntry(
        name=label, needs=frozenset({"graph"}), task="classification",
        grid={k: list(DEFAULT_GRID[k]) for k in defaults}, fit_predict=family.fit_predict,
        fixed=options, params=params, setting=setting, options=tuple(options), engine=family.name,
        description=f"STKR paper: {family.name} transforms on a graph kernel ({setting}; "
                    f"default normalization: {options['normalization']})")


ENTRIES = {label: register_method(_entry(label)) for label in STKR_METHODS}
