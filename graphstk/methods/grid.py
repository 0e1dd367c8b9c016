"""One entry point for model selection: all grid points of a method in one call.

:func:`predict_grid` is what the experiment runner calls; it hides how a method
shares work across its grid (one multi-column solve for all ``beta`` and ``eta``,
snapshots of one run for every iteration budget ``T``, one eigendecomposition
for every ``d`` and ``beta``).
"""
from __future__ import annotations

import itertools
import warnings
from typing import Callable

import torch
from torch import Tensor

from .._checks import check_int, check_real
from .._index import as_index
from ..operators.base import KernelOperator
from ..spectral.transforms import InverseLaplacian, LabelPropagationFilter, Polynomial, TopD
from . import propagation as P
from .engine import solve

# The engine's signature per method: (grid keys it needs, grid keys it may take). The ranges and
# default grids of these keys are declared once, in graphstk.experiments.registrations.stkr.
_KEYS = {
    "lp": (("eta",), ("T",)),
    "stkr-lap": (("eta", "beta"), ("T",)),
    "stkr-poly": (("k", "beta"), ("T",)),
    "stkr-topd": (("d", "beta"), ()),
    "krr": (("beta",), ("T",)),
}


def grid_keys(method: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(required, optional)`` grid keys of ``method`` (``"lp"``, ``"stkr-lap"``, ``"stkr-poly"``,
    ``"stkr-topd"``, ``"krr"``) in :func:`predict_grid`; ``T`` is a fixed iteration budget."""
    if method not in _KEYS:
        raise ValueError(f"unknown method {method!r}; choose one of {sorted(_KEYS)}")
    return _KEYS[method]


from ..exceptions import NonFiniteScoresWarning  # noqa: E402,F401  (re-exported)


def _warn_non_finite(method: str, results: list[tuple[dict, Tensor]]) -> list[tuple[dict, Tensor]]:
    bad = [(p, int((~torch.isfinite(s)).any(dim=1).sum())) for p, s in results if not bool(torch.isfinite(s).all())]
    if bad:
        shown = ", ".join(f"{p} ({k} rows)" for p, k in bad[:3]) + (" ..." if len(bad) > 3 else "")
        warnings.warn(f"{method}: non-finite scores at {len(bad)} of {len(results)} grid point(s): {shown}; "
                      "those rows count as unreachable (try dtype float64 or another solver)",
                      NonFiniteScoresWarning, stacklevel=3)
    return results


def scores_from(prob: P.Problem, h: Tensor, idx: Tensor) -> Tensor:
    """Scores ``rows(idx) @ h`` (the out-of-sample formulas of Algorithms 1-2 and Eq. 8)."""
    return prob.rows(idx) @ h


def lp_scores(prob: P.Problem, yhat: Tensor, eta: float, idx: Tensor) -> Tensor:
    """Label-Prop scores: ``Yhat`` on visible points; ``eta S(x, visible) Yhat`` for hidden ones
    (one step of the fixed-point equation of Eq. 22, an inductive extension not in the paper)."""
    idx = as_index(idx, prob.num_points, prob.train.device, name="idx")
    loc = prob.local(idx)
    hidden = loc < 0
    out = torch.empty(idx.numel(), yhat.shape[1], dtype=yhat.dtype, device=yhat.device)
    if bool((~hidden).any()):
        out[~hidden] = yhat[loc[~hidden]]
    if bool(hidden.any()):
        out[hidden] = eta * (prob.rows(idx[hidden]) @ yhat)
    return out


def _check_grid(method: str, grid: dict) -> dict:
    required, optional = grid_keys(method)
    allowed = set(required) | set(optional)
    unknown = set(grid) - allowed
    if unknown:
        raise ValueError(f"{method}: unknown grid keys {sorted(unknown)}; allowed {sorted(allowed)}")
    missing = set(required) - set(grid)
    if missing:
        raise ValueError(f"{method}: grid is missing {sorted(missing)}")
    out = {}
    for key, vals in grid.items():
        vals = list(vals) if isinstance(vals, (list, tuple)) else [vals]
        if not vals:
            raise ValueError(f"{method}: grid.{key} is empty")
        out[key] = vals
    if "beta" in out:
        out["beta"] = [check_real("beta", v) for v in out["beta"]]
    for v in out.get("T", []):
        check_int("T", v)
    return out


def _grid_transforms(method: str, grid: dict, topd_support: str):
    """The transform objects of ``method``'s grid and, for a grid point, the position of its transform."""
    if method == "lp":
        return [LabelPropagationFilter(e) for e in grid["eta"]], lambda p: grid["eta"].index(p["eta"])
    if method == "stkr-lap":
        return [InverseLaplacian(e) for e in grid["eta"]], lambda p: grid["eta"].index(p["eta"])
    if method == "stkr-topd":
        return [TopD(int(d), support=topd_support) for d in grid["d"]], lambda p: grid["d"].index(p["d"])
    ks = [int(k) for k in grid.get("k", [1])]
    return [Polynomial.monomial(k) for k in ks], lambda p: ks.index(int(p.get("k", 1)))


def predict_grid(method: str, kernel: KernelOperator, y: Tensor, train_idx: Tensor, eval_idx: Tensor,
                 grid: dict, num_classes: int, solver: str = "auto", max_iter: int = 1000, tol: float = 1e-6,
                 step_size: str | float = "auto", callback: Callable[[int, float], None] | None = None,
                 topd_support: str = "labeled", labels: str = "onehot", hidden=None,
                 max_seconds: float | None = None) -> list[tuple[dict, Tensor]]:
    """Scores on ``eval_idx`` for every point of ``grid`` (its full Cartesian product).

    Parameters
    ----------
    method : "lp" | "stkr-lap" | "stkr-poly" | "stkr-topd" | "krr"
    kernel : KernelOperator ``[N, N]``
        Any square kernel operator over the points: a :class:`~graphstk.operators.GraphKernel`
        built once per split and setting (its hidden nodes are predicted out of sample from
        their edges to visible nodes), a dense Gram matrix, a feature kernel.
    y : LongTensor ``[num_nodes]``
        Labels; only ``y[train_idx]`` is read.
    train_idx, eval_idx : LongTensor of node ids or BoolTensor mask ``[num_nodes]``
        Labeled nodes, and nodes to score (rows of the output, in this order).
    num_classes : int or None
        ``C``; ``None`` takes ``max(y[train_idx]) + 1``.
    grid : dict
        ``lp``: eta, T; ``stkr-lap``: eta, beta, T; ``stkr-poly``: k, beta, T; ``stkr-topd``:
        d, beta; ``krr``: beta, T. ``T`` (optional) is a fixed iteration budget
        (the paper's transductive grid); without it systems are solved to ``tol``.
    solver, max_iter, tol, step_size : passed to the engines (see ``graphstk.methods.propagation``).
    callback : callable ``(iteration, relative residual)``, optional
        Called by the iterative solvers after each iteration (progress display).
    topd_support : "labeled" (default: kernel PCA over the components that contain a label) |
        "all" (Eq. 8 as written, every unlabeled visible node; degenerate on graphs with more
        label-free components than ``d``, e.g. DBLP).
    labels : "onehot" (Appendix D) | "centered" (one-hot minus the training class frequencies).
    hidden : LongTensor or boolean mask, optional
        Points hidden from fitting (inductive), for an operator that does not carry its own.
    max_seconds : float, optional
        A time budget for each iterative solve (default: none).

    Returns
    -------
    list of ``(params, scores [len(eval_idx), num_classes])`` in grid order (keys in the
    order of ``grid``, last key fastest).
    """
    grid = _check_grid(method, grid)
    prob = P.make_problem(kernel, y, train_idx, num_classes, labels=labels, hidden=hidden)
    eval_idx = as_index(eval_idx, prob.num_points, kernel.device, name="eval_idx", allow_none=False)
    budgets = sorted(int(t) for t in grid.get("T", []))
    opts = dict(solver=solver, max_iter=max_iter, tol=tol, budgets=budgets, callback=callback)
    tkey = lambda params: params.get("T") if budgets else None  # noqa: E731
    keys = list(grid)
    points = [dict(zip(keys, combo)) for combo in itertools.product(*(grid[k] for k in keys))]
    transforms, tkey_of = _grid_transforms(method, grid, topd_support)
    betas = grid.get("beta", [])
    # fixed budgets T are the paper's truncated iteration: they run even where no stable Richardson step
    # exists (the proof is kept in the history's reason); a solve to tol refuses first
    res = solve(prob, transforms, betas, step_size=step_size, max_seconds=max_seconds,
                unstable="run" if budgets else "raise", **opts)
    nb = max(len(betas), 1)
    if method == "lp":
        etas = grid["eta"]
        return _warn_non_finite(method, [
            (p, lp_scores(prob, res.h[(etas.index(p["eta"]), tkey(p))], p["eta"], eval_idx)) for p in points])
    results = [(p, res.h[(tkey_of(p) * nb + betas.index(p["beta"]), tkey(p))]) for p in points]
    # one sparse product for all grid points
    H = torch.cat([h for _, h in results], dim=1)
    S_eval = scores_from(prob, H, eval_idx)
    C = int(num_classes)
    return _warn_non_finite(method, [(p, S_eval[:, i * C:(i + 1) * C]) for i, (p, _) in enumerate(results)])


def unreachable(scores: Tensor) -> Tensor:
    """Rows with no information (all zero or non-finite): no label reaches these nodes.

    Parameters
    ----------
    scores : Tensor ``[n, C]``

    Returns
    -------
    BoolTensor ``[n]``
    """
    return ~torch.isfinite(scores).all(dim=1) | (scores == 0).all(dim=1)


def predict_labels(scores: Tensor) -> Tensor:
    """Argmax class, ``-1`` for unreachable rows (never silently class 0).

    Parameters
    ----------
    scores : Tensor ``[n, C]``

    Returns
    -------
    LongTensor ``[n]``: the class, or ``-1`` where :func:`unreachable`.
    """
    pred = scores.argmax(dim=1)
    pred[unreachable(scores)] = -1
    return pred
