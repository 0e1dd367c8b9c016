"""The protocol of Appendix D: splits, settings, model selection on val, test accuracy.

The runner never knows a method's internals: it builds one :class:`GraphKernel` per
(split, setting, selection stage), calls ``predict_grid`` and reads argmax accuracies.

* One split per (dataset, p_test, seed) from :func:`graphstk.make_split`, shared by every method.
* Transductive: kernel over all nodes; one ``predict_grid`` call scores val and test
  together; the grid point with the best val accuracy is chosen (ties: the first point in
  grid order) and its test accuracy reported.
* Inductive: selection stage with test and val hidden, scored on val; final stage with
  only test hidden, the chosen point alone, scored on test.
* Labels given to the engine are those of the training nodes only (all other entries are
  ``-1``), so no hyperparameter can depend on val or test labels except through the val
  accuracies used for selection.
* A score row that is all zero (or not finite) means no label reaches the node; it is
  reported as ``unreachable``. How it is scored is the config's ``unreachable``:
  ``"wrong"`` (default) counts it as a wrong prediction; ``"class0"`` takes the plain
  argmax of the row, i.e. class 0 (the convention behind the STKR paper's numbers). The
  convention applies to val (model selection) and test alike; the record also carries the
  test accuracy of the chosen point under both conventions.
"""
from __future__ import annotations

import time
from typing import Callable

import torch

from .config import ExperimentConfig, MethodSpec, grid_points

__all__ = ["accuracy", "accuracies", "select_best", "SplitKernels", "run_selection", "num_classes_of"]


def accuracies(scores: torch.Tensor, y_true: torch.Tensor) -> dict:
    """Argmax accuracy in percent under both conventions for unreachable rows.

    ``{"wrong": acc, "class0": acc, "unreachable": n}``: ``wrong`` counts the ``n``
    unreachable rows (all zero or not finite) as wrong predictions; ``class0`` is the plain
    argmax of every row (non-finite entries zeroed first), so an all-zero row predicts class 0.
    """
    if scores.shape[0] != y_true.shape[0]:
        raise ValueError(f"engine returned {scores.shape[0]} score rows for {y_true.shape[0]} nodes")
    if y_true.numel() == 0:
        return {"wrong": float("nan"), "class0": float("nan"), "unreachable": 0}
    finite = torch.isfinite(scores).all(dim=1)
    reached = (finite & (torch.nan_to_num(scores).abs().sum(dim=1) > 0)).cpu()
    pred = torch.nan_to_num(scores).argmax(dim=1).cpu()
    hit = pred == y_true.cpu()
    n = y_true.numel()
    return {"wrong": 100.0 * float((hit & reached).sum()) / n, "class0": 100.0 * float(hit.sum()) / n,
            "unreachable": int((~reached).sum())}


def accuracy(scores: torch.Tensor, y_true: torch.Tensor, unreachable: str = "wrong") -> tuple[float, int]:
    """Argmax accuracy in percent (unreachable rows scored by ``unreachable``: ``"wrong"`` or
    ``"class0"``) and the number of unreachable rows."""
    if unreachable not in ("wrong", "class0"):
        raise ValueError(f"unreachable must be 'wrong' or 'class0', got {unreachable!r}")
    acc = accuracies(scores, y_true)
    return acc[unreachable], acc["unreachable"]


def select_best(val_accs: list[float]) -> int:
    """Index of the best val accuracy; ties go to the first in grid order (NaN never wins)."""
    best, best_i = None, 0
    for i, a in enumerate(val_accs):
        if a == a and (best is None or a > best):
            best, best_i = a, i
    return best_i


class SplitKernels:
    """The (at most three) kernels of one split, each built on first use."""

    def __init__(self, data, split, dtype: torch.dtype):
        self.data, self.split, self.dtype = data, split, dtype
        self._kernels: dict[str, object] = {}

    def get(self, stage: str):
        if stage not in self._kernels:
            from graphstk.operators import GraphKernel

            hidden = {"transductive": None,
                      "select": torch.cat([self.split.test, self.split.val]),
                      "final": self.split.test}[stage]
            self._kernels[stage] = GraphKernel(self.data.edge_index, int(self.data.num_nodes), hidden=hidden,
                                               edge_weight=getattr(self.data, "edge_weight", None),
                                               dtype=self.dtype)
        return self._kernels[stage]


def _train_labels_only(y: torch.Tensor, train: torch.Tensor) -> torch.Tensor:
    out = torch.full_like(y, -1)
    out[train] = y[train]
    return out


def _ordered(results, points: list[dict]) -> list[torch.Tensor]:
    """Engine results in canonical grid order (matched by parameter values)."""
    keys = list(points[0]) if points else []
    by_key = {}
    for params, scores in results:
        by_key[tuple(params.get(k) for k in keys)] = scores
    out = []
    for p in points:
        k = tuple(p[key] for key in keys)
        if k not in by_key:
            raise RuntimeError(f"predict_grid returned no scores for grid point {p} "
                               f"({len(results)} results for {len(points)} points)")
        out.append(by_key[k])
    return out


def run_selection(predict_grid: Callable, spec: MethodSpec, grid: dict, data, split, kernels: SplitKernels,
                  num_classes: int, solver_kwargs: dict, unreachable: str = "wrong") -> dict:
    """Model selection and test accuracy for one (method series, split): the cached record.

    ``unreachable`` (``"wrong"`` | ``"class0"``) scores unreachable rows for val (selection)
    and ``test_acc``; ``test_acc_wrong`` and ``test_acc_class0`` are the chosen point's test
    accuracy under each convention. The method's options (``spec.engine_kwargs()``, e.g.
    ``topd_support``) are passed to ``predict_grid`` with ``solver_kwargs``.
    """
    if unreachable not in ("wrong", "class0"):
        raise ValueError(f"unreachable must be 'wrong' or 'class0', got {unreachable!r}")
    t0 = time.perf_counter()
    kwargs = {**solver_kwargs, **spec.engine_kwargs()}
    y = data.y.long()
    y_in = _train_labels_only(y, split.train)
    points = grid_points(grid)
    per_point = []
    if spec.setting == "transductive":
        eval_idx = torch.cat([split.val, split.test])
        res = predict_grid(spec.engine, kernels.get("transductive"), y_in, split.train, eval_idx, grid,
                           num_classes, **kwargs)
        nv = split.val.numel()
        tests = []
        for p, s in zip(points, _ordered(res, points)):
            va = accuracies(s[:nv], y[split.val])
            ta = accuracies(s[nv:], y[split.test])
            tests.append(ta)
            per_point.append({"params": p, "val_acc": va[unreachable], "val_unreachable": va["unreachable"],
                              "test_acc": ta[unreachable], "test_unreachable": ta["unreachable"]})
        best = select_best([r["val_acc"] for r in per_point])
        test = tests[best]
    elif spec.setting == "inductive":
        res = predict_grid(spec.engine, kernels.get("select"), y_in, split.train, split.val, grid,
                           num_classes, **kwargs)
        for p, s in zip(points, _ordered(res, points)):
            va = accuracies(s, y[split.val])
            per_point.append({"params": p, "val_acc": va[unreachable], "val_unreachable": va["unreachable"]})
        best = select_best([r["val_acc"] for r in per_point])
        chosen = per_point[best]["params"]
        res = predict_grid(spec.engine, kernels.get("final"), y_in, split.train, split.test,
                           {k: [v] for k, v in chosen.items()}, num_classes, **kwargs)
        (scores,) = _ordered(res, [chosen])
        test = accuracies(scores, y[split.test])
    else:  # pragma: no cover - the config validation only produces the two settings
        raise ValueError(f"unknown setting {spec.setting!r}")
    return {
        "grid": per_point,
        "chosen_index": best,
        "chosen": per_point[best]["params"],
        "val_acc": per_point[best]["val_acc"],
        "test_acc": test[unreachable],
        "test_acc_class0": test["class0"],
        "test_acc_wrong": test["wrong"],
        "unreachable_as": unreachable,
        "unreachable": test["unreachable"],
        "n_train": int(split.train.numel()), "n_val": int(split.val.numel()), "n_test": int(split.test.numel()),
        "wall_time_s": time.perf_counter() - t0,
    }


def num_classes_of(data) -> int:
    n = getattr(data, "num_classes", None)
    if isinstance(n, int) and n > 0:
        return n
    return int(data.y.max()) + 1


def describe(cfg: ExperimentConfig) -> str:
    n_series = sum(len(m.series()) for m in cfg.methods)
    return (f"{cfg.name}: {len(cfg.datasets)} dataset(s) x {len(cfg.p_test)} p_test x {len(cfg.seeds)} seed(s) "
            f"x {n_series} method series")
