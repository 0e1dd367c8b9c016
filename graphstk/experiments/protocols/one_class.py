"""``one-class``: train on samples of one class, test on a mix of it and another, ROC AUC.

The separating-kernel paper's protocol (De Vito, Rosasco, Toigo, Sec. 7). A task ``"SOURCE AvsB"`` trains
on ``n_train`` points of class A drawn from a reduced training set and scores ``n_test`` points of A and B
drawn from a reduced test set (``sklearn.metrics.roc_auc_score``). No labels exist for selection: every
method series has one grid point. Pools and options: docs/experiments.md, "one-class".
"""
from __future__ import annotations

import time

import torch

from ..metrics import auc
from ..registry import grid_points
from .base import ProtocolError, call_method, rest_ids
from .vector import VectorProtocol

__all__ = ["OneClass"]


def _class_id(data, value, what: str) -> int:
    for i, c in enumerate(data.classes):
        if c == value or str(c) == str(value):
            return i
    raise ProtocolError(f"{what}: {data.name} has no class {value!r} (its classes: {list(data.classes)})")


class OneClass(VectorProtocol):
    name = "one-class"
    metric = "auc"
    n_labeled_unit = "training points of the one class"
    higher_is_better = True
    selection = "none (a single grid point per row)"

    def levels(self) -> list:
        return [self.opts["n_train"]]

    def _pools(self, spec, data, rep) -> tuple[torch.Tensor, torch.Tensor]:
        o = self.opts
        what = f"dataset {spec.name!r}"
        g = torch.Generator().manual_seed(int(o["pool_seed"] if o["pool_seed"] is not None else rep))
        n = data.num_points

        def part(name):
            if name is None:
                return None
            if name not in data.parts:
                raise ProtocolError(f"{what}: {data.name} has no part {name!r} (its parts: "
                                    f"{', '.join(data.parts) or 'none'}); set train_part/test_part to null to "
                                    "draw both reduced sets from all points")
            return data.parts[name]

        tr, te = part(o["train_part"]), part(o["test_part"])
        drawn = tr is None and te is None   # the pools are themselves a random split of all points
        if drawn:
            perm = torch.randperm(n, generator=g)
            a = o["train_pool"] if o["train_pool"] is not None else n // 2
            tr, te = perm[:a], perm[a:]
        elif tr is None or te is None:
            known = tr if tr is not None else te
            other = rest_ids(n, known)
            tr, te = (known, other) if te is None else (other, known)

        def reduce(ids, size, key):
            if size is None:
                return torch.sort(ids).values
            if size > ids.numel():
                raise ProtocolError(f"{what}: {key} = {size} is more than the {ids.numel()} points available")
            if not o["balanced"]:
                return torch.sort(ids[torch.randperm(ids.numel(), generator=g)[:size]]).values
            per = size // data.num_classes
            out = []
            for c in range(data.num_classes):
                pool = ids[data.y[ids] == c]
                if pool.numel() < per:
                    fix = (f"set balanced: false; without train_part/test_part the {size} points are a uniform "
                           "draw from all points, balanced only by chance" if drawn else
                           f"lower {key}, or set balanced: false")
                    raise ProtocolError(f"{what}: a balanced {key} of {size} needs {per} points of class "
                                        f"{data.classes[c]!r}; only {pool.numel()} are available ({fix})")
                out.append(pool[torch.randperm(pool.numel(), generator=g)[:per]])
            return torch.sort(torch.cat(out)).values

        return reduce(tr, o["train_pool"], "train_pool"), reduce(te, o["test_pool"], "test_pool")

    def _draw(self, spec, data, rep) -> dict:
        o = self.opts
        what = f"dataset {spec.name!r}"
        pos = _class_id(data, spec.vector["positive"], what)
        neg = _class_id(data, spec.vector["negative"], what)
        train_pool, test_pool = self._pools(spec, data, rep)
        cand_tr = train_pool[data.y[train_pool] == pos]
        cand_te = test_pool[(data.y[test_pool] == pos) | (data.y[test_pool] == neg)]
        if cand_tr.numel() < o["n_train"]:
            raise ProtocolError(f"{what}: the reduced training set holds {cand_tr.numel()} points of class "
                                f"{spec.vector['positive']!r}, fewer than n_train = {o['n_train']}; lower n_train or "
                                "raise train_pool")
        if cand_te.numel() < o["n_test"]:
            raise ProtocolError(f"{what}: the reduced test set holds {cand_te.numel()} points of classes "
                                f"{spec.vector['positive']!r} and {spec.vector['negative']!r}, fewer than n_test = "
                                f"{o['n_test']}; lower n_test or raise test_pool")
        g = torch.Generator().manual_seed(int(rep))
        train = torch.sort(cand_tr[torch.randperm(cand_tr.numel(), generator=g)[:o["n_train"]]]).values
        test = torch.sort(cand_te[torch.randperm(cand_te.numel(), generator=g)[:o["n_test"]]]).values
        inside = data.y[test] == pos
        if bool(inside.all()) or not bool(inside.any()):
            raise ProtocolError(f"{what} (seed {rep}): the test draw holds only one of the two classes; the AUC "
                                "is undefined (raise n_test)")
        return {"train": train, "test": test, "pos": pos}

    def check(self, spec, data) -> None:
        for m in self.cfg.methods:
            for _sw, grid in m.series():
                if len(grid_points(grid)) != 1:
                    raise ProtocolError(f"{m.label}: the one-class protocol has no labels to select a grid point; "
                                        f"give one value per parameter (grid {grid}) or sweep it (one row per value)")
        for rep in self.reps(data, self.opts["n_train"]):
            self._draw(spec, data, rep)

    def prepare(self, spec, data, level, rep):
        return self._draw(spec, data, rep)

    def evaluate(self, m, grid: dict, data, unit, level, rep) -> dict:
        t0 = time.perf_counter()
        entry = self.entry(m)
        points = grid_points(grid)
        tr, te = unit["train"], unit["test"]
        prob = self.problem(data, torch.zeros_like(data.y), tr, torch.empty(0, dtype=torch.long), te, rep,
                            num_classes=1)
        (scores,) = call_method(entry, m.options, prob, points)
        value = auc(scores, data.y[te] == unit["pos"])
        return self._record(points, [None], None, 0, value, t0, n_labeled=int(tr.numel()),
                            n_test=int(te.numel()))

    def describe(self) -> dict:
        o = self.opts
        return {"name": self.name, "metric": "auc: area under the ROC curve over the threshold (scikit-learn), in [0, 1]",
                "n_labeled": "training points of the one (positive) class",
                "selection": "none: one grid point per row (no labels exist for selection)",
                "sets": f"{'class-balanced ' if o['balanced'] else ''}reduced training set of {o['train_pool']} points "
                        f"({o['train_part']} part) and test set of {o['test_pool']} points ({o['test_part']} part), "
                        + ("drawn per repetition" if o["pool_seed"] is None else f"drawn once (pool_seed {o['pool_seed']})")
                        + f"; per repetition {o['n_train']} training points of the positive class and {o['n_test']} "
                        "test points of the two classes",
                "seeds": "repetition seeds", "std": "sample standard deviation over repetitions (ddof=1)"}
