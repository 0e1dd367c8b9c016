"""``node-classification``: the STKR paper's Appendix D protocol (the default).

One split per (dataset, ``p_test``, seed) (:func:`graphstk.make_split`), shared by every method; each
method is called per split (and stage) with its whole grid and the training labels only; the best val
accuracy wins (ties: the first grid point). Inductive methods get a selection stage with val and test
hidden and a final stage with test hidden. All-zero score rows are scored by ``unreachable``. Details:
docs/experiments.md, "Protocol (Appendix D)".
"""
from __future__ import annotations

import time

import torch

from graphstk.data import make_split

from ..datasets import split_fingerprint
from ..metrics import accuracies, mean_std, select
from ..paper import paper_cell
from ..registry import MethodInput, grid_points
from .base import Protocol, ProtocolError, call_method, masked_labels, rest_ids

__all__ = ["NodeClassification", "num_classes_of", "UNREACHABLE_TEXT"]

UNREACHABLE_TEXT = {
    "wrong": "unreachable: wrong -- val/test nodes whose score row is all zero (or not finite) count as wrong; "
             "rows also carry test_acc_class0 (plain argmax) for comparison",
    "class0": "unreachable: class0 -- plain argmax of every score row (the STKR paper's convention): an all-zero "
              "row predicts class 0, for val (selection) and test; rows also carry test_acc_wrong",
}


def num_classes_of(data) -> int:
    """``data.num_classes`` when set, else ``max(y) + 1``."""
    n = getattr(data, "num_classes", None)
    return n if isinstance(n, int) and n > 0 else int(data.y.max()) + 1


class NodeClassification(Protocol):
    name = "node-classification"
    metric = "accuracy"
    n_labeled_unit = "per split"
    higher_is_better = True

    def check(self, spec, data) -> None:
        for m in self.cfg.methods:
            if "features" in self.entry(m).needs and getattr(data, "x", None) is None:
                raise ProtocolError(f"{m.label!r} needs node features, but dataset {spec.name!r} has none "
                                    "(a graph-only dataset); use a graph method")

    def levels(self) -> list:
        return list(self.cfg.p_test)

    def prepare(self, spec, data, level, rep):
        split = make_split(data, level, rep, planetoid_split=self.cfg.planetoid_split)
        return {"split": split, "sfp": split_fingerprint(split)}

    def payload(self, spec, fp: str, level, rep, unit, m, grid: dict, code: str) -> dict:
        return {"protocol": self.name, "dataset": spec.identity(), "data": fp, "p_test": level, "seed": rep,
                "split": unit["sfp"], "method": m.label, "setting": m.setting, "options": m.options, "grid": grid,
                "solver": self.cfg.solver.model_dump(), "unreachable": self.cfg.unreachable, "device": str(self.device),
                "code": code}

    def label(self, dataset: str, series: str, level, rep) -> str:
        return f"{dataset}_{series}_p{level:g}_s{rep}"

    def _problem(self, data, split, hidden: list, evals: list, rep: int) -> MethodInput:
        y = data.y.long()
        return MethodInput(X=self.features(data, self.device), data=data, y=masked_labels(y, split.train),
                           labeled=split.train, unlabeled=rest_ids(y.numel(), split.train, *hidden), eval=torch.cat(evals),
                           num_classes=num_classes_of(data), seed=rep, device=self.device,
                           options=self.cfg.solver.model_dump(), kernels=self.kernels)

    def evaluate(self, m, grid: dict, data, unit, level, rep) -> dict:
        t0 = time.perf_counter()
        entry, split, conv = self.entry(m), unit["split"], self.cfg.unreachable
        y, points, nv = data.y.long(), grid_points(grid), split.val.numel()
        per_point = []
        if m.setting == "transductive":
            prob = self._problem(data, split, [], [split.val, split.test], rep)
            tests = []
            for p, s in zip(points, call_method(entry, m.options, prob, points)):
                va, ta = accuracies(s[:nv], y[split.val]), accuracies(s[nv:], y[split.test])
                tests.append(ta)
                per_point.append({"params": p, "val_acc": va[conv], "val_unreachable": va["unreachable"],
                                  "test_acc": ta[conv], "test_unreachable": ta["unreachable"]})
            best = select([r["val_acc"] for r in per_point])
            test = tests[best]
        else:
            prob = self._problem(data, split, [split.test, split.val], [split.val], rep)
            for p, s in zip(points, call_method(entry, m.options, prob, points)):
                va = accuracies(s, y[split.val])
                per_point.append({"params": p, "val_acc": va[conv], "val_unreachable": va["unreachable"]})
            best = select([r["val_acc"] for r in per_point])
            prob = self._problem(data, split, [split.test], [split.test], rep)
            (scores,) = call_method(entry, m.options, prob, [points[best]])
            test = accuracies(scores, y[split.test])
        return {"grid": per_point, "chosen_index": best, "chosen": points[best], "val_acc": per_point[best]["val_acc"],
                "test_acc": test[conv], "test_acc_class0": test["class0"], "test_acc_wrong": test["wrong"],
                "unreachable_as": conv, "unreachable": test["unreachable"], "n_train": int(split.train.numel()),
                "n_val": int(nv), "n_test": int(split.test.numel()), "wall_time_s": time.perf_counter() - t0}

    def aggregate(self, dataset: str, m, sweep, level, reps: list, records: list[dict]) -> dict:
        """One results row: ``test_acc``/``mean``/``std`` follow the config's ``unreachable`` convention;
        ``test_acc_class0``/``test_acc_wrong`` (and their means) score the same chosen models under each."""
        acc0, accw = [r["test_acc_class0"] for r in records], [r["test_acc_wrong"] for r in records]
        n_train = sorted({r["n_train"] for r in records})
        return self._row(
            dataset, m, sweep, reps, records, [r["test_acc"] for r in records], p_test=level, engine=m.engine,
            test_acc_class0=acc0, mean_class0=mean_std(acc0)[0], test_acc_wrong=accw, mean_wrong=mean_std(accw)[0],
            val_acc=[r["val_acc"] for r in records], unreachable=[r["unreachable"] for r in records],
            paper=paper_cell(dataset, m.label, level, self.cfg.paper_table, sweep),
            n_labeled=n_train[0] if len(n_train) == 1 else [r["n_train"] for r in records])

    def describe(self) -> dict:
        return {
            "name": self.name, "metric": "accuracy: test accuracy in percent",
            "n_labeled": "training (labeled) nodes per split",
            "selection": "best val accuracy; ties -> first grid point in grid order (keys in config order, "
                         "last key varying fastest)",
            "std": "sample standard deviation over seeds (ddof=1); 0 for a single seed",
            "unreachable": UNREACHABLE_TEXT[self.cfg.unreachable],
        }
