"""The train / val / test / other split protocol of the STKR paper (Zhai et al., ICLR 2024, App. D.1):
:func:`make_split` and :class:`Split`. The Planetoid and random protocols, the two readings of the
Planetoid train/val, and the transductive / inductive views are described in ``docs/data.md``.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import torch
from torch import Tensor
from torch_geometric.data import Data
from torch_geometric.utils import subgraph

from .._index import as_index
from .validation import check_mask

__all__ = ["Split", "make_split", "SETTINGS"]

#: The two settings of a split: test nodes seen during fit (transductive) or hidden (inductive).
SETTINGS = ("transductive", "inductive")
_PARTS = ("train", "val", "test", "other")
TRAIN_PER_CLASS = 20   # App. D: train = val = 20 x #classes for the non-Planetoid datasets
VAL_PER_CLASS = 20


def _empty() -> Tensor:
    return torch.empty(0, dtype=torch.long)


@dataclass(frozen=True, eq=False)
class Split:
    """A partition of ``range(num_nodes)`` into sorted LongTensors ``train``, ``val``, ``test``, ``other``.

    Build one with :func:`make_split`, or from four node selections (ids or boolean masks; validated and
    sorted). ``seed``, ``p_test`` and ``protocol`` record how it was made.
    """

    train: Tensor
    val: Tensor
    test: Tensor
    other: Tensor
    num_nodes: int
    seed: int | None = None
    p_test: float | None = None
    protocol: str = "custom"

    def __post_init__(self):
        n = int(self.num_nodes)
        if n <= 0:
            raise ValueError(f"num_nodes must be positive, got {self.num_nodes}")
        object.__setattr__(self, "num_nodes", n)
        seen = torch.zeros(n, dtype=torch.long)
        for part in _PARTS:
            idx = getattr(self, part)
            if isinstance(idx, Tensor) and idx.dim() == 2 and 1 in idx.shape:
                idx = idx.flatten()
            try:   # node ids or a boolean mask of length num_nodes, like every node argument
                idx = as_index(idx, n, name=f"split.{part}", allow_none=False)
            except IndexError as err:
                raise ValueError(f"split.{part} has node ids outside [0, {n - 1}]") from err
            idx = torch.sort(idx.cpu()).values
            seen.index_add_(0, idx, torch.ones_like(idx))
            object.__setattr__(self, part, idx)
        if bool((seen > 1).any()):
            raise ValueError(f"{int((seen > 1).sum())} nodes appear more than once in the split; "
                             "train/val/test/other must be disjoint")
        if bool((seen == 0).any()):
            raise ValueError(f"split does not cover {int((seen == 0).sum())} of {n} nodes; "
                             "train/val/test/other must partition all nodes")

    # ------------------------------------------------------------------ views
    @property
    def sizes(self) -> dict[str, int]:
        """``{"train": .., "val": .., "test": .., "other": ..}``."""
        return {p: int(getattr(self, p).numel()) for p in _PARTS}

    def mask(self, part: str) -> Tensor:
        """Boolean mask ``[num_nodes]`` of one set (``"train"``, ``"val"``, ``"test"`` or ``"other"``)."""
        if part not in _PARTS:
            raise ValueError(f"unknown split part {part!r}; expected one of {_PARTS}")
        m = torch.zeros(self.num_nodes, dtype=torch.bool)
        m[getattr(self, part)] = True
        return m

    def transductive(self) -> tuple[Tensor, None]:
        """``(train_idx, None)`` for the transductive setting: the learner sees every node and edge."""
        return self.train, None

    def inductive(self, selection: bool = False) -> tuple[Tensor, Tensor]:
        """``(train_idx, hidden_idx)`` for the inductive setting (see :meth:`hidden`)."""
        return self.train, self.hidden("inductive", selection)

    def hidden(self, setting: str, selection: bool = False) -> Tensor:
        """Nodes the learner must not see at train time (sorted LongTensor).

        * ``"transductive"``: none (an empty tensor).
        * ``"inductive"``: the test nodes; with ``selection=True`` (a model-selection run
          scored on val) also every val node, since App. D.1 hides the val set entirely
          (nodes, edges, labels) so that val accuracy mimics test accuracy.

        Pass the result as ``hidden=`` to :class:`graphstk.operators.GraphKernel`, which
        drops every edge touching a hidden node.
        """
        if setting not in SETTINGS:
            raise ValueError(f"unknown setting {setting!r}; expected one of {SETTINGS}")
        if setting == "transductive":
            return _empty()
        if selection:
            return torch.sort(torch.cat([self.val, self.test])).values
        return self.test.clone()

    def inductive_subgraph(self, data: Data, selection: bool = False) -> Data:
        """The graph an inductive learner sees, relabelled ``0..n_vis-1``: a :class:`Data` with the edges between
        visible nodes, ``node_ids`` (global ids), ``x``/``y``/``edge_weight`` where present and local masks
        ``train_mask``, ``val_mask`` (all False with ``selection``), ``other_mask`` (a learner reads only
        ``y[train_mask]``).
        """
        n = int(data.num_nodes)
        if n != self.num_nodes:
            raise ValueError(f"split is for {self.num_nodes} nodes but data has {n}")
        keep = torch.ones(n, dtype=torch.bool)
        keep[self.hidden("inductive", selection)] = False
        visible = keep.nonzero().flatten()
        edge_weight = getattr(data, "edge_weight", None)
        ei, ew = subgraph(visible, data.edge_index.cpu(), edge_weight.cpu() if edge_weight is not None else None,
                          relabel_nodes=True, num_nodes=n)
        sub = Data(edge_index=ei, num_nodes=int(visible.numel()), node_ids=visible)
        if ew is not None:
            sub.edge_weight = ew
        if data.x is not None:
            sub.x = data.x[visible.to(data.x.device)]
        if getattr(data, "y", None) is not None:
            sub.y = data.y[visible.to(data.y.device)]
        for part in ("train", "val", "other"):
            sub[f"{part}_mask"] = self.mask(part)[visible]
        return sub

    # ------------------------------------------------------------------ (de)serialisation
    def to_dict(self) -> dict:
        """A JSON-serialisable dict (plain lists of ints) for caching; see :meth:`from_dict`."""
        out = {p: getattr(self, p).tolist() for p in _PARTS}
        out.update(num_nodes=self.num_nodes, seed=self.seed, p_test=self.p_test, protocol=self.protocol)
        return out

    @classmethod
    def from_dict(cls, d: dict) -> "Split":
        """Inverse of :meth:`to_dict` (validates the partition again)."""
        missing = [k for k in (*_PARTS, "num_nodes") if k not in d]
        if missing:
            raise ValueError(f"split dict lacks keys {missing}")
        return cls(*(torch.as_tensor(d[p], dtype=torch.long) for p in _PARTS), num_nodes=d["num_nodes"],
                   seed=d.get("seed"), p_test=d.get("p_test"), protocol=d.get("protocol", "custom"))

    def __eq__(self, other) -> bool:
        if not isinstance(other, Split):
            return NotImplemented
        return self.num_nodes == other.num_nodes and all(
            torch.equal(getattr(self, p), getattr(other, p)) for p in _PARTS)

    __hash__ = None

    def __repr__(self) -> str:
        s = ", ".join(f"{k}={v}" for k, v in self.sizes.items())
        return f"Split({s}, seed={self.seed}, p_test={self.p_test}, protocol={self.protocol!r})"


# ---------------------------------------------------------------------------- make_split
def _n_test(p_test: float, n: int) -> int:
    return int(math.floor(p_test * n + 0.5))   # round half up: 0.01 * 2708 = 27.08 -> 27


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _take(pool: Tensor, k: int, g: torch.Generator) -> tuple[Tensor, Tensor]:
    """``k`` random elements of ``pool`` and the rest (both in pool order of the permutation)."""
    perm = pool[torch.randperm(pool.numel(), generator=g)]
    return perm[:k], perm[k:]


def _complement(n: int, *parts: Tensor) -> Tensor:
    m = torch.ones(n, dtype=torch.bool)
    for p in parts:
        m[p] = False
    return m.nonzero().flatten()


def make_split(data: Data, p_test: float | None = None, seed: int = 0, *, n_test: int | None = None,
               train_per_class: int | None = None, val_per_class: int | None = None, protocol: str | None = None,
               planetoid_split: str = "public") -> Split:
    """Split the nodes of ``data`` into train / val / test / other (App. D.1 of the STKR paper).

    Parameters
    ----------
    data : torch_geometric.data.Data
        A labelled graph (``data.y`` of shape ``[N]``); for the Planetoid protocol also
        ``train_mask``/``val_mask``/``test_mask``.
    p_test : float in (0, 1), optional
        Fraction of all ``N`` nodes in the test set: ``round(p_test * N)`` nodes (half up).
        Default 0.01 (the paper's) unless ``n_test`` is given.
    seed : int, default 0
        Seeds a private :class:`torch.Generator`: the same seed gives the same split for
        every method; the global RNG is not used.
    n_test : int, optional
        The test-set size as a count instead of a fraction (give ``p_test`` or ``n_test``).
    train_per_class, val_per_class : int, optional
        Draw exactly this many train (val) nodes *of each class* (the YAML runner's options); the other
        defaults to the same value. Default: App. D's protocol (``20 C`` uniform draws, or the default masks).
    protocol : {"planetoid", "random"}, optional
        By default ``data.split_protocol`` (set by :func:`graphstk.data.load_dataset`), else
        ``"random"``. Ignored when ``train_per_class``/``val_per_class`` are given.
    planetoid_split : {"public", "random"}, default "public"
        How the Planetoid protocol picks train/val (App. D leaves it open; ``docs/data.md``): PyG's public
        masks, or per-class draws with the public counts.

    Returns
    -------
    Split
        Sorted, disjoint LongTensors covering all nodes (Cora, ``p_test=0.01``: 140/500/27 train/val/test).

    Raises
    ------
    ValueError
        Sizes that do not fit the graph; the message names the option to change and a value
        that fits.

    Example
    -------
    >>> import networkx as nx, graphstk as gs
    >>> karate = gs.load_dataset(nx.karate_club_graph(), label="club")
    >>> split = gs.make_split(karate, n_test=10, train_per_class=4, val_per_class=4, seed=0)
    >>> split
    Split(train=8, val=8, test=10, other=8, seed=0, p_test=None, protocol='per-class')
    >>> split.mask("train").shape, int(split.mask("train").sum())
    (torch.Size([34]), 8)
    """
    if not isinstance(data, Data):
        raise TypeError(f"make_split expects a torch_geometric Data, got {type(data).__name__}")
    y = getattr(data, "y", None)
    if y is None:
        raise ValueError("labels missing: data.y is None; a split needs class labels")
    if y.dim() != 1 or y.dtype.is_floating_point or y.dtype == torch.bool:
        raise ValueError(f"data.y must be 1-D integer class ids, got {y.dtype} of shape {tuple(y.shape)}")
    y, n = y.cpu().long(), int(data.num_nodes)
    if y.numel() != n or n == 0:
        raise ValueError(f"data.y has {y.numel()} labels but the graph has {n} nodes" if y.numel() != n
                         else "the graph has no nodes")
    if int(y.min()) < 0:
        raise ValueError(f"data.y has negative labels (min {int(y.min())}); every node needs a class id >= 0")
    if not _is_int(seed):
        raise TypeError(f"seed must be an int, got {type(seed).__name__}")
    if p_test is not None and n_test is not None:
        raise ValueError(f"give the test size as p_test (a fraction) or n_test (a count), not both "
                         f"(got p_test={p_test!r}, n_test={n_test!r})")
    p_rec = None
    if n_test is not None and not (_is_int(n_test) and 1 <= n_test < n):
        raise ValueError(f"n_test must be an integer in [1, {n - 1}] for {n} nodes, got {n_test!r}")
    if n_test is None:
        p_test = 0.01 if p_test is None else p_test
        if isinstance(p_test, bool) or not isinstance(p_test, (int, float)) or not 0.0 < float(p_test) < 1.0:
            raise ValueError(f"p_test must be a number in (0, 1), got {p_test!r}")
        p_test = p_rec = float(p_test)
        n_test = _n_test(p_test, n)
        if n_test < 1:
            raise ValueError(f"p_test={p_test} of {n} nodes rounds to an empty test set; pass n_test=<count> "
                             f"(e.g. n_test={max(1, n // 10)}) or p_test >= {0.5 / n:.3g}")
    per_class = train_per_class is not None or val_per_class is not None
    if per_class:
        train_per_class = val_per_class if train_per_class is None else train_per_class
        val_per_class = train_per_class if val_per_class is None else val_per_class
        for name, v, low in (("train_per_class", train_per_class, 1), ("val_per_class", val_per_class, 0)):
            if not (_is_int(v) and v >= low):
                raise ValueError(f"{name} must be an integer >= {low}, got {v!r}")
    elif protocol is None:
        protocol = getattr(data, "split_protocol", None) or "random"
    if not per_class and protocol not in ("planetoid", "random"):
        raise ValueError(f"unknown protocol {protocol!r}; expected 'planetoid' or 'random'")
    if planetoid_split not in ("public", "random"):
        raise ValueError(f"planetoid_split must be 'public' or 'random', got {planetoid_split!r}")

    g = torch.Generator().manual_seed(seed)
    if per_class:
        train, val, test = _per_class(y, n, train_per_class, val_per_class, n_test, g)
        name = "per-class"
    elif protocol == "planetoid":
        train, val, test = _planetoid(data, y, n, n_test, planetoid_split, g)
        name = f"planetoid-{planetoid_split}"
    else:
        train, val, test = _random(y, n, n_test, g)
        name = "random"
        _warn_missing_classes(y, train)
    other = _complement(n, train, val, test)
    return Split(train, val, test, other, num_nodes=n, seed=seed, p_test=p_rec, protocol=name)


def _per_class(y: Tensor, n: int, k_train: int, k_val: int, n_test: int, g: torch.Generator):
    """``k_train`` and ``k_val`` nodes of every class, then ``n_test`` test nodes from the rest."""
    counts = torch.bincount(y)
    present = (counts > 0).nonzero().flatten().tolist()
    small = [c for c in present if int(counts[c]) < k_train + k_val]
    if small:
        fit = min(int(counts[c]) for c in present)
        per = min(fit, (n - n_test) // len(present))   # per class, leaving room for the test nodes
        fix = (f"lower train_per_class/val_per_class (e.g. train_per_class={max(1, per // 2)}, "
               f"val_per_class={per - max(1, per // 2)})" if per >= 2 else
               "lower train_per_class/val_per_class and n_test/p_test")
        raise ValueError(f"class(es) {small[:10]} have fewer than train_per_class + val_per_class = {k_train + k_val} "
                         f"nodes (smallest class: {fit}); {fix}")
    train, val = [], []
    for c in present:
        pool, _ = _take((y == c).nonzero().flatten(), int(counts[c]), g)
        train.append(pool[:k_train])
        val.append(pool[k_train:k_train + k_val])
    train, val = torch.cat(train), torch.cat(val)
    rest = _complement(n, train, val)
    if n_test > rest.numel():
        raise ValueError(f"not enough nodes: {n} nodes hold {train.numel()} train + {val.numel()} val, leaving "
                         f"{rest.numel()} for the {n_test} test nodes requested; "
                         + (f"lower n_test/p_test (e.g. n_test={rest.numel()}) or " if rest.numel() else "lower ")
                         + "train_per_class/val_per_class")
    test, _ = _take(rest, n_test, g)
    return train, val, test


def _random(y: Tensor, n: int, n_test: int, g: torch.Generator):
    c = int(y.max()) + 1
    n_train, n_val = TRAIN_PER_CLASS * c, VAL_PER_CLASS * c
    if n_train + n_val + n_test > n:
        k = max(1, (n - n_test) // (2 * c + 1) // 2) if n > n_test else 1
        raise ValueError(f"not enough nodes: {n} nodes cannot hold {n_train} train + {n_val} val "
                         f"(App. D: 20 x {c} classes each) + {n_test} test nodes; draw fewer per class with "
                         f"train_per_class and val_per_class (e.g. make_split(data, n_test={n_test}, "
                         f"train_per_class={k}, val_per_class={k})) or lower p_test / n_test")
    perm = torch.randperm(n, generator=g)
    return perm[:n_train], perm[n_train:n_train + n_val], perm[n_train + n_val:n_train + n_val + n_test]


def _masks(data: Data, n: int):
    for k in ("train_mask", "val_mask", "test_mask"):
        if getattr(data, k, None) is None:
            raise ValueError(f"the Planetoid protocol needs data.{k} (the default split); "
                             "use protocol='random' for a graph without one")
    tr, va, te = (check_mask(data, k, n).cpu() for k in ("train_mask", "val_mask", "test_mask"))
    if bool((tr.long() + va.long() + te.long() > 1).any()):
        raise ValueError("data.train_mask, val_mask and test_mask overlap")
    return tr, va, te


def _planetoid(data, y, n, n_test, mode, g):
    tr, va, te = _masks(data, n)
    if mode == "public":
        train, val = tr.nonzero().flatten(), va.nonzero().flatten()
        pool = te.nonzero().flatten()
        if n_test <= pool.numel():
            test, _ = _take(pool, n_test, g)
            return train, val, test
        rest = _complement(n, train, val, pool)
        extra = n_test - pool.numel()
        if extra > rest.numel():
            raise ValueError(f"not enough nodes: {n_test} test nodes requested, but only {pool.numel()} in the "
                             f"default test set and {rest.numel()} outside the default split")
        warnings.warn(f"p_test * N = {n_test} exceeds the default test set ({pool.numel()} nodes): taking all of "
                      f"it plus {extra} random nodes from outside the default split", stacklevel=3)
        test = torch.cat([pool, _take(rest, extra, g)[0]])
        return train, val, test
    # "random": PyG's Planetoid(split="random") with the public per-class train counts.
    counts = torch.bincount(y[tr], minlength=int(y.max()) + 1)
    parts = []
    for c, k in enumerate(counts.tolist()):
        if k == 0:
            continue
        pool = (y == c).nonzero().flatten()
        if pool.numel() < k:
            raise ValueError(f"not enough nodes of class {c}: {pool.numel()} < {k}")
        parts.append(_take(pool, k, g)[0])
    train = torch.cat(parts) if parts else _empty()
    n_val = int(va.sum())
    rest = _complement(n, train)
    if n_val + n_test > rest.numel():
        raise ValueError(f"not enough nodes: {n} nodes cannot hold {train.numel()} train + {n_val} val + "
                         f"{n_test} test nodes")
    val, rest = _take(rest, n_val, g)
    test = rest[:n_test]   # rest is already a random permutation
    return train, val, test


def _warn_missing_classes(y: Tensor, train: Tensor) -> None:
    present = torch.bincount(y[train], minlength=int(y.max()) + 1) > 0
    classes = torch.bincount(y) > 0
    lacking = (classes & ~present).nonzero().flatten().tolist()
    if lacking:
        warnings.warn(f"classes {lacking} have no training node in this split; no method can predict them",
                      stacklevel=3)
