"""``per-class-splits``: random splits with a fixed number of labeled nodes per class, on any graph.

Shchur et al. (2018, Sec. 4): per seed, ``train_per_class`` train and ``val_per_class`` validation nodes
drawn per class (optionally on the largest connected component), the rest (or ``n_test`` of it) test
nodes; evaluated as :mod:`.planetoid`, but every method runs on every split. Details:
docs/experiments.md, "per-class-splits".
"""
from __future__ import annotations

import torch
from torch_geometric.transforms import LargestConnectedComponents

from graphstk.data import make_split

from ..datasets import load_spec
from .base import ProtocolError
from .planetoid import Planetoid

__all__ = ["PerClassSplits", "per_class_split", "largest_component"]


def largest_component(data):
    """``data`` restricted to its largest connected component (PyG's ``LargestConnectedComponents``,
    connection taken as undirected); node order kept, attributes of the kept nodes kept."""
    out = LargestConnectedComponents(connection="weak")(data.clone())
    for k in ("name", "split_protocol"):
        if hasattr(data, k):
            setattr(out, k, getattr(data, k))
    return out


def per_class_split(data, seed: int, train_per_class: int = 20, val_per_class: int = 30,
                    n_test: int | None = None, what: str = "dataset") -> dict:
    """``{"train", "val", "test"}`` node ids of one split (see the module doc); raises
    :class:`ProtocolError` naming the class that is too small or the test size that does not fit."""
    y = data.y.long()
    C = int((torch.bincount(y) > 0).sum())
    rest = int(data.num_nodes) - (train_per_class + val_per_class) * C
    size = rest if n_test is None else int(n_test)
    if rest < 1 or size > rest:
        raise ProtocolError(f"{what}: {int(data.num_nodes)} nodes, {C} classes x ({train_per_class} train + "
                            f"{val_per_class} val) leave {max(rest, 0)} nodes for the test set"
                            + (f", fewer than n_test = {n_test}" if n_test is not None else "")
                            + "; lower train_per_class / val_per_class" + (" or n_test" if n_test else ""))
    try:
        s = make_split(data, seed=int(seed), n_test=size, train_per_class=int(train_per_class),
                       val_per_class=int(val_per_class))
    except ValueError as err:
        raise ProtocolError(f"{what}: {err}") from None
    return {"train": s.train, "val": s.val, "test": s.test}


class PerClassSplits(Planetoid):
    name = "per-class-splits"
    n_labeled_unit = "labeled nodes"
    same_sets = False

    def load(self, spec, root):
        data = load_spec(spec, root)
        return largest_component(data) if self.opts["largest_component"] else data

    def _draw(self, spec, data, rep):
        o = self.opts
        return per_class_split(data, rep, o["train_per_class"], o["val_per_class"], o["n_test"],
                               what=f"dataset {spec.name!r} (seed {rep})")

    def check(self, spec, data) -> None:
        if getattr(data, "y", None) is None:
            raise ProtocolError(f"dataset {spec.name!r} has no labels")
        for rep in self.cfg.seeds:
            self._draw(spec, data, rep)

    def prepare(self, spec, data, level, rep):
        return self._draw(spec, data, rep)

    def describe(self) -> dict:
        o = self.opts
        test = "every node outside train and validation" if o["n_test"] is None else \
            f"{o['n_test']} nodes drawn from those outside train and validation"
        return {"name": self.name, "metric": "accuracy: test accuracy in percent",
                "graph": "the largest connected component" if o["largest_component"] else "the whole graph",
                "n_labeled": f"labeled nodes that fit the reported model ({o['train_per_class']} per class; "
                             f"fit_labels=train+val adds the {o['val_per_class']} validation nodes per class)",
                "selection": f"best accuracy on the {o['val_per_class']} validation nodes per class (ties: first grid "
                             "point); the GNNs also stop early on their validation loss",
                "test": test, "sets": "drawn per class, per seed: each seed another split, the same for every method",
                "std": "sample standard deviation over splits (ddof=1)",
                "time": "fit_time_s: mean seconds per split of the whole grid (fit, predict, selection)",
                "ceiling": "grid_test_max (results.json): per split, the best test accuracy of any grid point; for "
                           "analysis only, never used to choose" + self._chosen_note()}

