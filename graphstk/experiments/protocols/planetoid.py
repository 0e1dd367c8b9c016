"""``planetoid``: the Planetoid public split (Yang et al. 2016; PyG's ``Planetoid(split="public")``).

Every seed uses the public train/val/test masks (the seed only seeds the method; a deterministic method
runs once). One fit per seed with the whole grid on the train labels, best validation accuracy wins
(ties: the first); ``fit_labels: train+val`` refits the chosen point on train and validation labels.
``grid_test: chosen`` scores a closed form's test nodes at the chosen point only. Details:
docs/experiments.md, "planetoid".
"""
from __future__ import annotations

import statistics
import time

import torch
from torch_geometric.data import Data

from ..registry import MethodInput, get_method, grid_points
from .base import Protocol, ProtocolError, call_method, rest_ids
from .node_classification import num_classes_of

__all__ = ["Planetoid", "FIT_LABELS", "public_split"]

#: which labels fit the reported model
FIT_LABELS = ("train", "train+val")
#: the note of a feature method's row on a dataset loaded without node features
NO_FEATURES = "not run: this copy of the dataset has no node features (graph and labels only)"


def public_split(data) -> dict:
    """``{"train", "val", "test"}`` node ids of the dataset's public masks (raises if absent)."""
    out = {}
    for key in ("train", "val", "test"):
        mask = getattr(data, f"{key}_mask", None)
        if mask is None:
            raise ProtocolError(f"dataset {getattr(data, 'name', '?')!r} has no {key}_mask: the planetoid protocol "
                                "needs the public split (Cora, CiteSeer, PubMed, or an .npz with train/val/test_index)")
        out[key] = mask.nonzero().flatten()
    return out


def _graph_only(data, y_masked: torch.Tensor):
    """The graph a method may see: edges and node count, the masked labels, no masks."""
    return Data(edge_index=data.edge_index, num_nodes=int(data.num_nodes), y=y_masked)


def _acc(scores: torch.Tensor, y: torch.Tensor) -> float:
    finite = torch.isfinite(scores).all(dim=1)
    pred = torch.nan_to_num(scores).argmax(dim=1)
    return 100.0 * float(((pred == y) & finite).double().mean())


class Planetoid(Protocol):
    name = "planetoid"
    metric = "accuracy"
    n_labeled_unit = "labeled nodes"
    higher_is_better = True
    same_sets = True            # every seed the same sets: a deterministic method runs once

    def check(self, spec, data) -> None:
        sets = public_split(data)
        seen = torch.zeros(int(data.num_nodes), dtype=torch.long)
        for ids in sets.values():
            seen[ids] += 1
        if bool((seen > 1).any()):
            raise ProtocolError(f"dataset {spec.name!r}: the public train/val/test masks overlap")

    def levels(self) -> list:
        return list(self.opts["fit_labels"])

    def prepare(self, spec, data, level, rep):
        return public_split(data)

    def label(self, dataset: str, series: str, level, rep) -> str:
        return f"{dataset}_{series}_{level.replace('+', '-')}_s{rep}"

    def _problem(self, data, X, labeled, evaluate, hide, num_classes, rep, val=None) -> MethodInput:
        y_in = torch.full((int(data.num_nodes),), -1, dtype=torch.long)
        y_in[labeled] = data.y[labeled].long()
        rest = rest_ids(int(data.num_nodes), labeled, *(() if hide is None else (hide,)))
        return MethodInput(X=X, data=_graph_only(data, y_in), y=y_in, labeled=labeled, unlabeled=rest, eval=evaluate,
                           num_classes=num_classes, seed=rep, kernels=self.kernels, val=val,
                           y_val=None if val is None else data.y[val].long())

    def evaluate(self, m, grid: dict, data, unit, level, rep) -> dict:
        t0 = time.perf_counter()
        entry = get_method(m.label)
        if self.same_sets and getattr(entry.fit_predict, "deterministic", False) and rep != self.cfg.seeds[0]:
            return {"same_as_seed": self.cfg.seeds[0], "wall_time_s": 0.0}
        n_labeled = int(unit["train"].numel() + (unit["val"].numel() if level == "train+val" else 0))
        if "features" in entry.needs and getattr(data, "x", None) is None:
            nan = float("nan")
            return {"grid": [], "chosen_index": None, "chosen": None, "val": nan, "test": nan, "n_labeled": n_labeled,
                    "n_val": int(unit["val"].numel()), "n_test": int(unit["test"].numel()), "setting": m.setting,
                    "note": NO_FEATURES, "wall_time_s": 0.0}
        inductive = {**entry.fixed, **m.options}.get("setting", "transductive") == "inductive"
        tr, va, te = unit["train"], unit["val"], unit["test"]
        X = self.features(data)
        C = num_classes_of(data)
        y = data.y.long()
        hide = te if inductive else None
        points = grid_points(grid)
        # grid_test: chosen, for a closed form with several points: the validation nodes scored at every point, then
        # the test nodes at the chosen one, by the same fit (a large test set is most of the read-out's rows)
        chosen = (self.opts["grid_test"] == "chosen" and getattr(entry.fit_predict, "deterministic", False)
                  and len(points) > 1)
        ev, y_test = (va, None) if chosen else (torch.cat([va, te]), y[te])
        scores = call_method(entry, m.options, self._problem(data, X, tr, ev, hide, C, rep, val=va), points)
        val, test_all, best = self._select(scores, va.numel(), y[va], y_test, _acc)
        if chosen:
            s = call_method(entry, m.options, self._problem(data, X, tr, te, hide, C, rep, val=va), [points[best]])[0]
            test = _acc(s, y[te])
        else:
            test = test_all[best]
        if level == "train+val":
            fit = torch.cat([tr, va])
            s = call_method(entry, m.options, self._problem(data, X, fit, te, hide, C, rep), [points[best]])[0]
            test = _acc(s, y[te])
        grid_rec = [{"params": p, "val": v, "test": t} for p, v, t in zip(points, val, test_all)]
        return {"grid": grid_rec, "chosen_index": best, "chosen": points[best], "val": val[best], "test": test,
                "n_labeled": n_labeled, "n_val": int(va.numel()), "n_test": int(te.numel()),
                "setting": "inductive" if inductive else "transductive", "wall_time_s": time.perf_counter() - t0}

    def aggregate(self, dataset: str, m, sweep, level, reps: list, records: list[dict]) -> dict:
        kept = [(s, r) for s, r in zip(reps, records) if "same_as_seed" not in r]   # a deterministic method: one run
        reps, records = [s for s, _ in kept], [r for _, r in kept]
        n_lab = records[0]["n_labeled"] if records else None
        times = [r["wall_time_s"] for r in records]
        return self._row(
            dataset, m, sweep, reps, records, [r["test"] for r in records], n_labeled=n_lab,
            setting=records[0]["setting"] if records else m.setting, options={**m.options, "fit_labels": level},
            val=[r["val"] for r in records], paper=self._paper(dataset, m, n_lab, sweep) if level == "train" else None,
            fit_time_s=statistics.fmean(times) if times else None,
            # analysis only, never used to choose: the best test accuracy of any grid point (train fit)
            grid_test_max=[max((g["test"] for g in r["grid"] if g["test"] is not None), default=None)
                           for r in records],
            **({"note": records[0]["note"]} if records and records[0].get("note") else {}))

    def describe(self) -> dict:
        return {"name": self.name, "metric": "accuracy: test accuracy on the 1000 public test nodes, in percent",
                "n_labeled": "labeled nodes that fit the reported model (fit_labels=train: the public train "
                             "nodes, 20 per class; fit_labels=train+val: those and the 500 validation nodes)",
                "selection": "best accuracy on the 500 public validation nodes of a fit on the train labels "
                             "(ties: first grid point); fit_labels=train+val then refits that point on "
                             "train+val labels",
                "test": "the 1000 public test nodes (inductive methods: hidden with their edges at fit time)",
                "sets": "PyG's Planetoid public split, the same for every seed; seeds seed the method only",
                "std": "sample standard deviation over seeds (ddof=1); a deterministic method runs once (std 0)",
                "time": "fit_time_s: mean seconds per seed of the whole grid (fit, predict, selection)",
                "ceiling": "grid_test_max (results.json): per seed, the best test accuracy of any grid point fitted "
                           "on the train labels; for analysis only, never used to choose" + self._chosen_note()}

    def _chosen_note(self) -> str:
        """What ``grid_test: chosen`` leaves out of the ceiling, or nothing."""
        return ("; null for the closed forms, whose test nodes are scored at the chosen point only (grid_test: "
                "chosen)" if self.opts["grid_test"] == "chosen" else "")
