"""Row partitions of a graph over ``P`` processes, and the halo each one implies.

A :class:`Partition` gives each process a contiguous range of a new numbering; the partitioners are
``"contiguous"``, ``"rcm"`` (reverse Cuthill-McKee) and ``"metis"`` (optional ``pymetis``).
:func:`halo_report` measures a partition without starting any process (docs/distributed.md).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import torch
from scipy.sparse.csgraph import reverse_cuthill_mckee
from torch import Tensor

try:
    import pymetis   # optional dependency: METIS partitions
except ImportError:
    pymetis = None

METHODS = ("contiguous", "rcm", "metis")


@dataclass
class Partition:
    """A renumbering of ``N`` nodes into ``P`` contiguous row blocks.

    Attributes
    ----------
    order : LongTensor ``[N]``
        ``order[i]`` is the original id of the node numbered ``i``.
    bounds : list of int, ``P + 1`` entries
        Process ``p`` owns new ids ``bounds[p] .. bounds[p + 1] - 1``.
    method : str
        The partitioner that produced it.
    """

    order: Tensor
    bounds: list[int]
    method: str = "contiguous"

    @property
    def parts(self) -> int:
        """The number of parts (processes) the nodes are split into."""
        return len(self.bounds) - 1

    @property
    def num_nodes(self) -> int:
        """The number of nodes of the partitioned graph."""
        return int(self.order.numel())

    def rank(self, new_ids: Tensor) -> Tensor:
        """The owning process of every (new) id."""
        edges = torch.as_tensor(self.bounds[1:-1], dtype=torch.long, device=new_ids.device)
        return torch.bucketize(new_ids, edges, right=True)

    def inverse(self) -> Tensor:
        """``new[old]``: the new id of every original id."""
        inv = torch.empty_like(self.order)
        inv[self.order] = torch.arange(self.order.numel(), device=self.order.device)
        return inv


def default_partitioner() -> str:
    """``"metis"`` where ``pymetis`` is installed (the smallest halos on the benchmark graphs), else ``"rcm"``."""
    return "rcm" if pymetis is None else "metis"


def _balanced(n: int, parts: int) -> list[int]:
    return [(p * n) // parts for p in range(parts + 1)]


def _pattern(row: Tensor, col: Tensor, n: int) -> sp.csr_matrix:
    """The symmetric 0/1 pattern of ``(row, col)`` without the diagonal, as SciPy CSR."""
    r, c = row.cpu().numpy(), col.cpu().numpy()
    off = r != c
    a = sp.csr_matrix((np.ones(int(off.sum()), dtype=np.int8), (r[off], c[off])), shape=(n, n))
    a = (a + a.T).tocsr()
    a.data[:] = 1
    return a


def partition_graph(row: Tensor, col: Tensor, num_nodes: int, parts: int, method: str = "contiguous",
                    seed: int = 0) -> Partition:
    """Partition the rows of an ``N x N`` sparse pattern over ``parts`` processes.

    Parameters
    ----------
    row, col : LongTensor ``[nnz]``
        The nonzeros of the (symmetric) matrix, e.g. ``S.coo()[:2]``.
    num_nodes : int
        ``N``.
    parts : int
        ``P >= 1``.
    method : "contiguous" (default) | "rcm" | "metis"
        See the module docstring.
    seed : int, default 0
        METIS's random seed.

    Returns
    -------
    Partition
    """
    if isinstance(parts, bool) or int(parts) != parts or parts < 1:
        raise ValueError(f"parts must be an integer >= 1, got {parts!r}")
    if method not in METHODS:
        raise ValueError(f"unknown partitioner {method!r}; choose one of {METHODS}")
    n, parts = int(num_nodes), int(parts)
    if method == "contiguous" or parts == 1:
        return Partition(torch.arange(n), _balanced(n, parts), method)
    if method == "rcm":
        perm = reverse_cuthill_mckee(_pattern(row, col, n), symmetric_mode=True)
        return Partition(torch.as_tensor(perm.astype(np.int64)), _balanced(n, parts), method)
    if pymetis is None:
        raise ImportError("partition='metis' needs the METIS binding pymetis (pip install pymetis); "
                          "or use partition='rcm'")
    a = _pattern(row, col, n)
    opts = pymetis.Options(seed=seed)
    _, member = pymetis.part_graph(parts, pymetis.CSRAdjacency(a.indptr, a.indices), options=opts)
    member = torch.as_tensor(np.asarray(member, dtype=np.int64))
    order = torch.argsort(member, stable=True)
    counts = torch.bincount(member, minlength=parts).tolist()
    return Partition(order, [0] + np.cumsum(counts).tolist(), method)


def halo_sizes(row: Tensor, col: Tensor, partition: Partition) -> list[int]:
    """Halo rows of every process: distinct columns outside its range touched by its rows.

    ``row``, ``col`` are in the original numbering.
    """
    inv = partition.inverse().to(row.device)
    r, c = inv[row], inv[col]
    pr, pc = partition.rank(r), partition.rank(c)
    remote = pr != pc
    keys = torch.unique(pr[remote] * partition.num_nodes + c[remote])
    return torch.bincount(keys // max(partition.num_nodes, 1), minlength=partition.parts).tolist()


def halo_report(row: Tensor, col: Tensor, partition: Partition, columns: int = 1, itemsize: int = 8) -> dict:
    """What a partition costs per product, computed without any process.

    Parameters
    ----------
    row, col : LongTensor ``[nnz]`` (original numbering)
    partition : Partition
    columns : int, default 1
        Columns of the vector block (classes x grid points).
    itemsize : int, default 8
        Bytes per entry (8: float64).

    Returns
    -------
    dict
        ``owned`` (rows per process), ``halo`` (halo rows per process), ``halo_fraction``
        (largest halo / owned rows of the same process), ``rows_exchanged`` (sum of the halos: rows
        received per product over all processes) and ``bytes_per_product`` (that times
        ``columns * itemsize``).
    """
    halo = halo_sizes(row, col, partition)
    owned = [partition.bounds[p + 1] - partition.bounds[p] for p in range(partition.parts)]
    frac = max((h / o if o else 0.0) for h, o in zip(halo, owned))
    total = int(sum(halo))
    return {"method": partition.method, "parts": partition.parts, "owned": owned, "halo": halo,
            "halo_fraction": frac, "rows_exchanged": total, "bytes_per_product": total * columns * itemsize}
