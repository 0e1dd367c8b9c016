"""``node-classification``: the STKR paper's Appendix D protocol (the default).

One split per (dataset, ``p_test``, seed) from :func:`graphstk.make_split`, model selection on
the validation nodes, test accuracy; transductive and inductive settings. The protocol itself
lives in :mod:`graphstk.experiments.runner` (unchanged, so every STKR config gives the same
numbers and reuses the same cache entries); this module only plugs it into the pipeline.
``n_labeled`` is the number of training nodes of a split (per split).
"""
from __future__ import annotations

from .base import Protocol

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
