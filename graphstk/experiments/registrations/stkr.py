"""The STKR paper's methods by name (Zhai et al., Tables 1, 4, 5 and Figure 2; Appendix D).

``LP (t)`` (Label-Prop, Eq. 22), ``SP-Lap (t)``/``(i)`` (inverse Laplacian, Algorithm 2),
``SP-poly (t)``/``(i)`` (``s(l) = l^k``, Algorithm 1), ``SP-topd (t)``/``(i)`` (kernel PCA,
Eq. 8) and ``KRR (i)`` (``s(l) = l``). Each builds the transform objects of its grid
(:class:`~graphstk.spectral.transforms.LabelPropagationFilter`, ``InverseLaplacian``,
``Polynomial.monomial(k)``, ``TopD``) and scores every grid point with one
:meth:`graphstk.methods.STKRCV.grid_scores` call (one engine solve: one multi-column solve for every
``beta`` and ``eta``, snapshots of one run for every budget ``T``, one eigendecomposition for every
``d`` and ``beta``); the protocol selects on the validation nodes itself.

The kernel is the graph kernel over the points the problem lets the method see
(``labeled`` and ``unlabeled`` are visible, every other node is hidden; the inductive setting
predicts hidden nodes out of sample), taken from the run's
:class:`~graphstk.experiments.kernels.KernelCache` (``MethodInput.kernels``), whose kernel factory the
runner was given (a :class:`~graphstk.operators.GraphKernel`, or a partitioned kernel in a
distributed run). A kernel whose points are renumbered (a partitioned kernel: ``order`` /
``position``) gets node ids mapped through ``position``.

Every method takes the option ``normalization``: ``"lazy"`` (the positive semidefinite ``(I + S) / 2``,
the default of the STKR methods, whose transforms and convergence assume a PSD kernel) or
``"symmetric"`` (Eq. 23 as written, the default of ``LP (t)``; the paper's configurations pin it on
every method).

Default grids are Appendix D's (l.989-1005); ``k`` defaults to ``[8]``: Tables 1, 4 and 5 use
``s(l) = l^8`` (their captions), Appendix D's ``k`` grid ``[1, 2, 4, 6, 8]`` is what Figure 2
sweeps. ``T`` (a fixed iteration budget) is part of the transductive grids; without it every
system is solved to the solver's tolerance.
"""
from __future__ import annotations

import dataclasses
from typing import Callable

import torch

from graphstk.spectral.transforms import InverseLaplacian, LabelPropagationFilter, Polynomial, TopD

from ..params import Param
from ..registry import MethodEntry, MethodInput, register_method

__all__ = ["DEFAULT_GRID", "PARAMS", "FAMILIES", "Family", "STKR_METHODS", "stkr_fit_predict", "graph_kernel"]

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
    Param("normalization", str, choices=("lazy", "symmetric"),
          doc="graph kernel: the positive semidefinite lazy (I + S) / 2, or Eq. 23's D^-1/2 W D^-1/2"),
)}

@dataclasses.dataclass(frozen=True)
class Family:
    """How a registered STKR method turns its grid into transform objects.

    ``transforms(grid, options)`` gives the transforms, ``axis`` the grid key that indexes them
    (``None``: one transform), ``required`` / ``optional`` the grid keys the method takes."""
    name: str
    transforms: Callable[[dict, dict], list]
    axis: str | None
    required: tuple[str, ...]
    optional: tuple[str, ...]


FAMILIES = {f.name: f for f in (
    Family("LabelPropagationFilter", lambda g, o: [LabelPropagationFilter(e) for e in g["eta"]], "eta",
           ("eta",), ("T",)),
    Family("InverseLaplacian", lambda g, o: [InverseLaplacian(e) for e in g["eta"]], "eta", ("eta", "beta"), ("T",)),
    Family("Polynomial", lambda g, o: [Polynomial.monomial(int(k)) for k in g["k"]], "k", ("k", "beta"), ("T",)),
    Family("TopD", lambda g, o: [TopD(int(d), support=o.get("support", "labeled")) for d in g["d"]], "d",
           ("d", "beta"), ()),
    Family("KRR", lambda g, o: [Polynomial.monomial(1)], None, ("beta",), ("T",)),
)}

#: label -> (transform family, setting, grid keys of the default grid)
STKR_METHODS = {
    "LP (t)": (FAMILIES["LabelPropagationFilter"], "transductive", ("eta", "T")),
    "SP-Lap (t)": (FAMILIES["InverseLaplacian"], "transductive", ("eta", "beta", "T")),
    "SP-poly (t)": (FAMILIES["Polynomial"], "transductive", ("k", "beta", "T")),
    "SP-topd (t)": (FAMILIES["TopD"], "transductive", ("d", "beta")),
    "SP-Lap (i)": (FAMILIES["InverseLaplacian"], "inductive", ("eta", "beta")),
    "SP-poly (i)": (FAMILIES["Polynomial"], "inductive", ("k", "beta")),
    "SP-topd (i)": (FAMILIES["TopD"], "inductive", ("d", "beta")),
    "KRR (i)": (FAMILIES["KRR"], "inductive", ("beta",)),
}

_ENGINE_OPTIONS = ("solver", "max_iter", "tol", "step_size", "max_seconds")


def graph_kernel(problem: MethodInput, dtype: torch.dtype = torch.float64, whole: bool = False,
                 normalization: str = "symmetric"):
    """The graph kernel (Eq. 23's, or its lazy form: ``normalization``) over ``problem.labeled`` and
    ``problem.unlabeled`` (every other node hidden), on ``problem.device``, from the run's cache
    ``problem.kernels`` (a problem made outside a run: a cache of its own, single process).
    ``whole``: a kernel every process holds whole."""
    from ..kernels import KernelCache

    data = problem.data
    hidden = torch.ones(int(data.num_nodes), dtype=torch.bool)
    hidden[problem.fit_points.cpu()] = False
    kernels = problem.kernels if problem.kernels is not None else KernelCache()
    device = torch.device(problem.device) if problem.device is not None else torch.device("cpu")
    return kernels.kernel(data, hidden, dtype=dtype, device=device, whole=whole, normalization=normalization)


def _family(label: str) -> Family:
    return STKR_METHODS[label][0]


def stkr_fit_predict(problem: MethodInput, points: list[dict], family: Family) -> list[torch.Tensor]:
    """Scores ``[len(eval), C]`` for every grid point: one :meth:`~graphstk.methods.STKRCV.grid_scores`
    call on the grid the points span (fixed keys ``support``, ``labels``; solver options and
    ``dtype`` from ``problem.options``)."""
    from graphstk.methods import STKRCV

    if problem.data is None:
        raise ValueError("the STKR methods need a graph (problem.data is None)")
    fixed = ("support", "labels", "normalization")
    options = {k: points[0][k] for k in fixed if k in points[0]}
    keys = [k for k in points[0] if k not in fixed]
    grid = {k: list(dict.fromkeys(p[k] for p in points)) for k in keys}
    transforms = family.transforms(grid, options)
    opts = problem.options
    dtype = getattr(torch, opts.get("dtype", "float64"))
    kernel = graph_kernel(problem, dtype, whole=family.name == "TopD",   # kernel PCA does not distribute
                          normalization=options.get("normalization", default_normalization(family)))
    kwargs = {k: opts[k] for k in _ENGINE_OPTIONS if opts.get(k) is not None}
    # the kernel brings its hidden nodes (the inductive setting), so no hidden_idx is passed
    est = STKRCV(transforms, grid.get("beta"), num_iter=grid.get("T"), labels=options.get("labels", "onehot"),
                 num_classes=problem.num_classes, **kwargs)
    # a kernel whose points are renumbered (a partitioned kernel) takes node ids through ``position``
    position = getattr(kernel, "position", None)
    order = getattr(kernel, "order", None)
    y, train, ev = problem.y.to(kernel.device), problem.labeled.to(kernel.device), problem.eval.to(kernel.device)
    if position is not None and order is not None:
        y, train, ev = y[order], position[train], position[ev]
    eigen_cache = getattr(problem.kernels, "eigen", None)   # the run's eigenpairs (kernel PCA, once per operator)
    res = est.grid_scores(kernel, train, ev, y=y, eigen_cache=eigen_cache)
    axis = family.axis
    by_key = {}
    for p, s in res:
        t_i = transforms.index(p["transform"])
        key = ((grid[axis][t_i],) if axis else ()) + ((p["beta"],) if "beta" in grid else ()) + \
              ((p["num_iter"],) if "T" in grid else ())
        by_key[key] = s
    names = ([axis] if axis else []) + (["beta"] if "beta" in grid else []) + (["T"] if "T" in grid else [])
    return [by_key[tuple(p[k] for k in names)] for p in points]


def default_normalization(family: Family) -> str:
    """The graph kernel a method takes unless its config names one: Eq. 23's for Label-Prop (Zhou et al.'s
    ``S``; ``I - eta S`` is positive definite whatever the sign of ``S``), the positive semidefinite lazy
    kernel for every STKR transform."""
    return "symmetric" if family.name == "LabelPropagationFilter" else "lazy"


def _entry(label: str) -> MethodEntry:
    family, setting, defaults = STKR_METHODS[label]
    options = {"support": "labeled", "labels": "onehot"} if family.name == "TopD" else {"labels": "onehot"}
    options["normalization"] = default_normalization(family)
    params = (*(PARAMS[k] for k in family.required),
              *(dataclasses.replace(PARAMS[k], optional=True) for k in family.optional),
              *(PARAMS[o] for o in options))
    return MethodEntry(
        name=label, needs=frozenset({"graph"}), task="classification",
        grid={k: list(DEFAULT_GRID[k]) for k in defaults}, fit_predict=_FIT_PREDICT[family.name],
        fixed=options, params=params, setting=setting, options=tuple(options), engine=family.name,
        description=f"STKR paper: {family.name} transforms on a graph kernel ({setting}; "
                    f"default normalization: {options['normalization']})")


def _fit_predict_of(family: Family):
    def fit_predict(problem: MethodInput, points: list[dict]) -> list[torch.Tensor]:
        return stkr_fit_predict(problem, points, family)
    fit_predict.__qualname__ = f"stkr_fit_predict[{family.name}]"
    fit_predict.__doc__ = f"``stkr_fit_predict`` with {family.name} transforms."
    return fit_predict


_FIT_PREDICT = {name: _fit_predict_of(f) for name, f in FAMILIES.items()}

ENTRIES = {label: register_method(_entry(label)) for label in STKR_METHODS}
