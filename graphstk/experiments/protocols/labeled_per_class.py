"""``labeled-per-class``: k labeled points per class, a validation set, the rest unlabeled.

The Fredholm-kernel paper's protocol (Que, Belkin, Wang, Sec. 5): per seed, ``n_labeled`` labeled and
``val_per_class`` validation points per class; one fit per seed with the whole grid, lowest validation
error wins (ties: the first), its error on the test points (the unlabeled ones, or held out) is reported.
Draws and options: docs/experiments.md, "labeled-per-class". ``n_labeled`` is per class.
"""
from __future__ import annotations

import time

import torch
from sklearn.model_selection import train_test_split

from ..metrics import error_rate
from ..registry import grid_points
from .base import ProtocolError, call_method
from .vector import VectorProtocol

__all__ = ["LabeledPerClass", "draw_labeled_per_class"]


def draw_labeled_per_class(y: torch.Tensor, num_classes: int, k: int, val_per_class: int, seed: int, *,
                           test: str = "unlabeled", test_size=None, test_ids: torch.Tensor | None = None,
                           n_unlabeled: int | None = None, what: str = "dataset") -> dict:
    """The id sets of one repetition: ``{"labeled", "val", "unlabeled", "test"}`` (LongTensors).

    Per class, in a random order (``seed``), the first ``k`` points are labeled, the next ``val_per_class``
    validation points, the rest unlabeled (or ``n_unlabeled`` of them). ``test="unlabeled"``: the test
    points are the unlabeled ones; ``"held-out"``: drawn first, ``test_ids`` or a stratified draw of
    ``test_size`` points (or a fraction). Raises :class:`ProtocolError` (prefixed by ``what``) when a class
    has too few points.
    """
    n = y.numel()
    g = torch.Generator().manual_seed(int(seed))
    pool = torch.arange(n)
    if test == "held-out":
        if test_ids is not None:
            test_set = torch.sort(test_ids).values
        else:
            size = test_size if isinstance(test_size, float) else int(test_size)
            if isinstance(size, int) and size >= n:
                raise ProtocolError(f"{what}: test_size = {size} leaves no point to train on ({n} points)")
            try:
                _, tst = train_test_split(pool.numpy(), test_size=size, random_state=int(seed),
                                          stratify=y.numpy())
            except ValueError as err:
                raise ProtocolError(f"{what}: cannot draw a stratified test set of size {test_size}: {err}") from None
            test_set = torch.sort(torch.as_tensor(tst)).values
        keep = torch.ones(n, dtype=torch.bool)
        keep[test_set] = False
        pool = pool[keep]
    labeled, val, rest = [], [], []
    need = k + val_per_class
    for c in range(num_classes):
        ids = pool[y[pool] == c]
        if ids.numel() < need:
            raise ProtocolError(f"{what}: class {c} has {ids.numel()} points available"
                                + (" (after the test set)" if test == "held-out" else "")
                                + f", fewer than n_labeled + val_per_class = {k} + {val_per_class}; lower "
                                  f"n_labeled or val_per_class (at most {ids.numel()} together for this class)")
        ids = ids[torch.randperm(ids.numel(), generator=g)]
        labeled.append(ids[:k])
        val.append(ids[k:need])
        rest.append(ids[need:])
    rest = torch.cat(rest)
    rest = rest[torch.randperm(rest.numel(), generator=g)]
    if n_unlabeled is not None:
        if rest.numel() < n_unlabeled:
            raise ProtocolError(f"{what}: only {rest.numel()} points remain for n_unlabeled = {n_unlabeled}")
        rest = rest[:n_unlabeled]
    out = {"labeled": torch.cat(labeled), "val": torch.cat(val), "unlabeled": torch.sort(rest).values}
    out["test"] = out["unlabeled"] if test == "unlabeled" else test_set
    if out["test"].numel() == 0:
        raise ProtocolError(f"{what}: no test points are left (n_labeled = {k}, val_per_class = {val_per_class})")
    return out


class LabeledPerClass(VectorProtocol):
    name = "labeled-per-class"
    n_labeled_unit = "per class"
    selection = "validation set (val_per_class points per class)"

    def _val(self, level) -> int:
        return self.opts["val_per_class"] if self.opts["val_per_class"] is not None else int(level)

    def _draw(self, data, level, rep, what: str) -> dict:
        test_ids = None
        if self.opts["test"] == "held-out" and self.opts["test_part"] is not None:
            part = self.opts["test_part"]
            if part not in data.parts:
                raise ProtocolError(f"{what}: test_part {part!r} is not a part of {data.name} "
                                    f"(its parts: {', '.join(data.parts) or 'none'})")
            test_ids = data.parts[part]
        return draw_labeled_per_class(data.y, data.num_classes, int(level), self._val(level), rep,
                                      test=self.opts["test"], test_size=self.opts["test_size"], test_ids=test_ids,
                                      n_unlabeled=self.opts["n_unlabeled"], what=what)

    def check(self, spec, data) -> None:
        for level in self.levels():          # every draw is cheap: check them all before computing
            for rep in self.reps(data, level):
                self._draw(data, level, rep, f"dataset {spec.name!r} (n_labeled={level}, seed={rep})")

    def prepare(self, spec, data, level, rep):
        return self._draw(data, level, rep, f"dataset {spec.name!r}")

    def evaluate(self, m, grid: dict, data, unit, level, rep) -> dict:
        t0 = time.perf_counter()
        points = grid_points(grid)
        y = data.y
        L, V, U, T = unit["labeled"], unit["val"], unit["unlabeled"], unit["test"]
        prob = self.problem(data, y, L, torch.cat([U, V]), torch.cat([V, T]), rep)
        scores = call_method(self.entry(m), m.options, prob, points)
        val, test_all, best = self._select(scores, V.numel(), y[V], y[T], error_rate)
        return self._record(points, val, test_all, best, test_all[best], t0, n_labeled=int(L.numel()),
                            n_val=int(V.numel()), n_unlabeled=int(U.numel()), n_test=int(T.numel()))

    def describe(self) -> dict:
        o = self.opts
        test = ("the unlabeled points (transductive)" if o["test"] == "unlabeled" else
                f"held out: the dataset part {o['test_part']!r}" if o["test_part"] else
                f"held out: {o['test_size']} points drawn (stratified) per repetition")
        return {"name": self.name, "metric": "error: misclassified test points, in percent",
                "n_labeled": "labeled points per class",
                "selection": f"lowest error on a validation set of {o['val_per_class'] or 'n_labeled'} points per "
                             "class (features in the unlabeled set, labels used only to choose); ties -> first grid "
                             "point; no refit",
                "test": test, "unlabeled": "all remaining points" if o["n_unlabeled"] is None else
                f"{o['n_unlabeled']} remaining points drawn at random",
                "seeds": "repetition seeds (each seed draws every set)",
                "std": "sample standard deviation over repetitions (ddof=1)"}
