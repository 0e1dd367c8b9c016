"""``node-classification``: the STKR paper's Appendix D protocol (the default).

* One split per (dataset, ``p_test``, seed) from :func:`graphstk.make_split`, shared by every method.
* Every method is a registered method (:mod:`graphstk.experiments.registrations`), called once
  per split and stage with its whole grid. The labels it gets are those of the training nodes
  only (all other entries ``-1``), so no hyperparameter depends on val or test labels except
  through the val accuracies used for selection.
* Transductive (the default setting): ``labeled`` = the training nodes, ``unlabeled`` = every
  other node, ``eval`` = the val then the test nodes; the grid point with the best val accuracy
  is chosen (ties: the first point in grid order) and its test accuracy reported.
* Inductive (methods registered with ``setting="inductive"``, the ``(i)`` rows): a selection
  stage with test and val hidden (``unlabeled`` = the other nodes), scored on val; a final
  stage with only test hidden, the chosen point alone, scored on test.
* A score row that is all zero (or not finite) means no label reaches the node; it is reported
  as ``unreachable`` and scored by the config's ``unreachable``: ``"wrong"`` (default) counts it
  as a wrong prediction; ``"class0"`` takes the plain argmax, i.e. class 0 (the convention behind
  the STKR paper's numbers), for val (selection) and test alike; every record also carries the
  chosen point's test accuracy under both conventions.

``n_labeled`` is the number of training nodes of a split.
"""
from __future__ import annotations

import time

import scipy.sparse as sp
import torch

from graphstk.data import make_split

from ..datasets import fingerprint, load_spec, split_fingerprint
from ..metrics import accuracies, mean_std, select
from ..paper import paper_cell
from ..registry import MethodInput, grid_points
from .base import Protocol, ProtocolError, call_method, masked_labels

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

    def _features(self, data):
        """The node features (float64 on the config's device, or a CSR matrix when sparse); once per dataset."""
        if getattr(self, "_x_key", None) != id(data):
            x = getattr(data, "x", None)
            if x is not None and x.is_sparse:
                x = x.coalesce()
                i = x.indices().numpy()
                x = sp.csr_matrix((x.values().double().numpy(), (i[0], i[1])), shape=tuple(x.shape))
            elif x is not None:
                x = x.double().to(self.device)
            self._x_key, self._x = id(data), x
        return self._x

    def load(self, spec, root):
        return load_spec(spec, root)

    def fingerprint(self, data) -> str:
        return fingerprint(data)

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
        rest = torch.ones(y.numel(), dtype=torch.bool)
        for ids in (split.train, *hidden):
            rest[ids] = False
        return MethodInput(X=self._features(data), data=data, y=masked_labels(y, split.train), labeled=split.train,
                       unlabeled=torch.nonzero(rest).flatten(), eval=torch.cat(evals), num_classes=num_classes_of(data),
                       seed=rep, device=self.device, options=self.cfg.solver.model_dump(), kernels=self.kernels)

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
        """One results row from the per-seed records (the contract's keys plus extras).

        ``test_acc``/``mean``/``std`` follow the config's ``unreachable`` convention;
        ``test_acc_class0``/``test_acc_wrong`` (and their means) score the same chosen models under
        each convention, so the gap between them is visible in every row.
        """
        accs = [r["test_acc"] for r in records]
        acc0, accw = [r["test_acc_class0"] for r in records], [r["test_acc_wrong"] for r in records]
        n_train = sorted({r["n_train"] for r in records})
        mean, std = mean_std(accs)
        return {
            "dataset": dataset, "method": m.label, "setting": m.setting, "p_test": level, "sweep": sweep,
            "options": dict(m.options), "seeds": list(reps), "test_acc": accs, "mean": mean, "std": std,
            "test_acc_class0": acc0, "mean_class0": mean_std(acc0)[0],
            "test_acc_wrong": accw, "mean_wrong": mean_std(accw)[0],
            "best_params": [r["chosen"] for r in records], "val_acc": [r["val_acc"] for r in records],
            "unreachable": [r["unreachable"] for r in records], "n_test": [r["n_test"] for r in records],
            "paper": paper_cell(dataset, m.label, level, self.cfg.paper_table, sweep),
            "wall_time_s": sum(r["wall_time_s"] for r in records),
            "warnings": list(dict.fromkeys(w for r in records for w in r.get("warnings", []))),
            "engine": m.engine, "grid_size": len(records[0]["grid"]) if records else 0,
            "n_labeled": n_train[0] if len(n_train) == 1 else [r["n_train"] for r in records],
            "n_labeled_unit": self.n_labeled_unit, "metric": self.metric, "protocol": self.name,
        }

    def describe(self) -> dict:
        return {
            "name": self.name, "metric": "accuracy: test accuracy in percent",
            "n_labeled": "training (labeled) nodes per split",
            "selection": "best val accuracy; ties -> first grid point in grid order (keys in config order, "
                         "last key varying fastest)",
            "std": "sample standard deviation over seeds (ddof=1); 0 for a single seed",
            "unreachable": UNREACHABLE_TEXT[self.cfg.unreachable],
        }
