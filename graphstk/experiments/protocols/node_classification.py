"""``node-classification``: the STKR paper's Appendix D protocol (the default).

One split per (dataset, ``p_test``, seed) from :func:`graphstk.make_split`, model selection on
the validation nodes, test accuracy; transductive and inductive settings. The protocol itself
lives in :mod:`graphstk.experiments.runner` (unchanged, so every STKR config gives the same
numbers and reuses the same cache entries); this module only plugs it into the pipeline.
``n_labeled`` is the number of training nodes of a split (per split).

Methods by name (:mod:`graphstk.experiments.registry`, e.g. ``KRLSC`` on the node features,
or a registered graph method) run here too, transductively: one call per split with the whole
grid, ``labeled`` = the training nodes (their labels are the only labels given), ``unlabeled`` =
every other node (features and graph), ``eval`` = the val then the test nodes; the grid point
with the best val accuracy is chosen (ties: first) and its test accuracy reported, scored as
the graph methods are (``unreachable``: an all-zero or non-finite score row).
"""
from __future__ import annotations

import time

import torch

from .base import Protocol, ProtocolError, call_method

__all__ = ["NodeClassification"]

class NodeClassification(Protocol):
    name = "node-classification"
    metric = "accuracy"
    n_labeled_unit = "per split"
    higher_is_better = True

    def __init__(self, cfg, predict_grid=None):
        super().__init__(cfg)
        self.predict_grid = predict_grid
        self._kernels = None

    def _registry(self) -> list:
        return [m for m in self.cfg.methods if m.engine == "registry"]

    def extra_code(self):
        if not self._registry():
            return None          # the pre-protocol code hash: STKR caches stay valid
        return (("graphstk.experiments.protocols", "graphstk.experiments.registrations"),
                ("graphstk.experiments.registry",))

    def check(self, spec, data) -> None:
        from ..registry import get_method

        for m in self._registry():
            if "features" in get_method(m.label).needs and getattr(data, "x", None) is None:
                raise ProtocolError(f"{m.label!r} needs node features, but dataset {spec.name!r} has none "
                                    "(a graph-only dataset); use a graph method")

    def _features(self, data):
        import scipy.sparse as sp

        key = id(data)
        if getattr(self, "_x_key", None) != key:
            x = data.x
            if x.is_sparse:
                x = x.coalesce()
                i = x.indices().numpy()
                x = sp.csr_matrix((x.values().double().numpy(), (i[0], i[1])), shape=tuple(x.shape))
            else:
                x = x.double()
            self._x_key, self._x = key, x
        return self._x

    def _evaluate_registry(self, m, grid: dict, data, unit, rep) -> dict:
        from ..config import grid_points
        from ..registry import Problem, get_method
        from ..runner import accuracies, num_classes_of, select_best

        t0 = time.perf_counter()
        entry = get_method(m.label)
        split = unit["split"]
        y = data.y.long()
        n = y.numel()
        y_in = torch.full_like(y, -1)
        y_in[split.train] = y[split.train]
        rest = torch.ones(n, dtype=torch.bool)
        rest[split.train] = False
        X = self._features(data) if "features" in entry.needs or getattr(data, "x", None) is not None else None
        prob = Problem(X=X, data=data, y=y_in, labeled=split.train, unlabeled=torch.nonzero(rest).flatten(),
                       eval=torch.cat([split.val, split.test]), num_classes=num_classes_of(data), seed=rep)
        points = grid_points(grid)
        nv = split.val.numel()
        conv = self.cfg.unreachable
        per_point, tests = [], []
        for p, s in zip(points, call_method(entry, m.options, prob, points)):
            va, ta = accuracies(s[:nv], y[split.val]), accuracies(s[nv:], y[split.test])
            tests.append(ta)
            per_point.append({"params": p, "val_acc": va[conv], "val_unreachable": va["unreachable"],
                              "test_acc": ta[conv], "test_unreachable": ta["unreachable"]})
        best = select_best([r["val_acc"] for r in per_point])
        test = tests[best]
        return {"grid": per_point, "chosen_index": best, "chosen": per_point[best]["params"],
                "val_acc": per_point[best]["val_acc"], "test_acc": test[conv], "test_acc_class0": test["class0"],
                "test_acc_wrong": test["wrong"], "unreachable_as": conv, "unreachable": test["unreachable"],
                "n_train": int(split.train.numel()), "n_val": int(nv), "n_test": int(split.test.numel()),
                "wall_time_s": time.perf_counter() - t0}

    def load(self, spec, root):
        from ..datasets import load_spec

        return load_spec(spec, root)

    def fingerprint(self, data) -> str:
        from ..datasets import fingerprint

        return fingerprint(data)

    def levels(self) -> list:
        return list(self.cfg.p_test)

    def reps(self, data, level) -> list[int]:
        return list(self.cfg.seeds)

    def prepare(self, spec, data, level, rep):
        from graphstk.data import make_split

        from ..datasets import split_fingerprint
        from ..runner import SplitKernels

        split = make_split(data, level, rep, planetoid_split=self.cfg.planetoid_split)
        return {"split": split, "kernels": SplitKernels(data, split, self.cfg.solver.torch_dtype),
                "sfp": split_fingerprint(split)}

    def payload(self, spec, fp: str, level, rep, unit, m, grid: dict, code: str) -> dict:
        # exactly the key of the pre-protocol pipeline: earlier caches stay valid
        return {"dataset": spec.identity(), "data": fp, "p_test": level, "seed": rep,
                "split": unit["sfp"], "method": m.label, "engine": m.engine, "setting": m.setting,
                "options": m.options, "grid": grid, "solver": self.cfg.solver.to_dict(),
                "unreachable": self.cfg.unreachable, "code": code}

    def label(self, dataset: str, series: str, level, rep) -> str:
        return f"{dataset}_{series}_p{level:g}_s{rep}"

    def evaluate(self, m, grid: dict, data, unit, level, rep) -> dict:
        from ..runner import num_classes_of, run_selection

        if m.engine == "registry":
            return self._evaluate_registry(m, grid, data, unit, rep)

        if self.predict_grid is None:
            from graphstk.methods import predict_grid

            self.predict_grid = predict_grid
        return run_selection(self.predict_grid, m, grid, data, unit["split"], unit["kernels"], num_classes_of(data),
                             self.cfg.solver.engine_kwargs(), unreachable=self.cfg.unreachable)

    def aggregate(self, dataset: str, m, sweep, level, reps: list, records: list[dict]) -> dict:
        from ..pipeline import aggregate

        row = aggregate(dataset, m, sweep, level, reps, records, self.cfg.paper_table)
        n_train = sorted({r["n_train"] for r in records})
        row.update({"n_labeled": n_train[0] if len(n_train) == 1 else [r["n_train"] for r in records],
                    "n_labeled_unit": self.n_labeled_unit, "metric": self.metric, "protocol": self.name})
        return row

    def describe(self) -> dict:
        from ..pipeline import UNREACHABLE_TEXT

        return {
            "name": self.name, "metric": "accuracy: test accuracy in percent",
            "n_labeled": "training (labeled) nodes per split",
            "selection": "best val accuracy; ties -> first grid point in grid order (keys in config order, "
                         "last key varying fastest)",
            "std": "sample standard deviation over seeds (ddof=1); 0 for a single seed",
            "unreachable": UNREACHABLE_TEXT[self.cfg.unreachable],
        }
