"""The partitioned on-disk form of a graph: written once (:func:`write_partition`,
``python -m graphstk partition GRAPH --parts P --out DIR``), then each process loads only its part
(:func:`load_part`). The files (``manifest.json``, ``part-PPPPP.pt``, ``labels.pt``) are described in
docs/distributed.md.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import torch
import torch.distributed as dist
from torch import Tensor
from torch_geometric.data import Data

from .._checks import check_out_dir
from ..data.datasets import load_dataset
from ..data.files import reading
from ..data.generators import make_dcsbm
from ..exceptions import DataFileError
from .partition import Partition, default_partitioner, halo_report, partition_graph

__all__ = ["FORMAT", "FORMAT_VERSION", "GraphPart", "write_partition", "load_part", "read_manifest",
           "partitioned_data", "graph_from_spec", "partition_main"]

FORMAT = "graphstk-sharded"
#: the version :func:`write_partition` writes and :func:`load_part` reads
FORMAT_VERSION = 1


def _part_name(p: int) -> str:
    return f"part-{p:05d}.pt"


def _symmetric_csr(edge_index: Tensor, num_nodes: int, edge_weight: Tensor | None):
    """``W`` as a SciPy CSR matrix: repeated entries summed, ``(W + W^T) / 2`` when it is not
    symmetric (as :class:`~graphstk.operators.GraphKernel` reads an edge list)."""
    row = edge_index[0].numpy()
    col = edge_index[1].numpy()
    w = np.ones(row.size) if edge_weight is None else edge_weight.double().numpy()
    W = sp.csr_matrix((w, (row, col)), shape=(num_nodes, num_nodes))
    W.sum_duplicates()
    diff = W - W.T
    if diff.nnz and np.abs(diff.data).max() > 1e-12 * max(1.0, np.abs(W.data).max() if W.nnz else 1.0):
        W = ((W + W.T) * 0.5).tocsr()
        W.sum_duplicates()
    W.sort_indices()
    return W


def _even_bounds(row_entries: np.ndarray, parts: int) -> list[int]:
    """Cuts of an order into ``parts`` ranges of about equal memory: a row costs its entries (its
    share of ``S``) plus the mean entries per row (its rows of the vector blocks, which weigh about
    as much as an average row of ``S`` for a few dozen columns), so rows and entries are both
    split about evenly when the degrees are skewed along the order."""
    mean = max(1, int(round(float(row_entries.sum()) / max(1, row_entries.size))))
    cum = np.cumsum(row_entries.astype(np.int64) + mean)
    total = int(cum[-1]) if cum.size else 0
    cuts = [int(np.searchsorted(cum, total * p / parts, side="right")) for p in range(1, parts)]
    bounds = [0] + cuts + [int(row_entries.size)]
    for p in range(1, parts + 1):                     # non-decreasing, whatever the rounding
        bounds[p] = max(bounds[p], bounds[p - 1])
    return bounds


def write_partition(data, parts: int, out: str | os.PathLike, method: str | Partition | None = None,
                    seed: int = 0, source: str = "") -> dict:
    """Write the partitioned form of a labelled graph into ``out`` (see the module docstring).

    Parameters
    ----------
    data : torch_geometric.data.Data
        ``edge_index`` (and optional ``edge_weight``), ``y``, optional ``x``, ``num_nodes``.
    parts : int
        ``P``: the number of processes that will load it.
    out : path
        A directory (created; part files of an earlier run there are replaced).
    method : "contiguous" | "rcm" | "metis" | Partition | None
        ``None``: METIS where ``pymetis`` is installed, else RCM. The order of ``contiguous`` and
        ``rcm`` is cut where every part holds about the same share of entries and rows (METIS
        balances the nodes); a :class:`Partition` is taken as it is.
    seed : int, default 0
        METIS's seed.
    source : str
        A description kept in the manifest (e.g. the ``GRAPH`` argument of the command line).

    Returns
    -------
    dict
        The manifest, plus ``halo`` (``graphstk.distributed.partition.halo_report`` of the partition).
    """
    if isinstance(parts, bool) or int(parts) != parts or parts < 1:
        raise ValueError(f"parts must be an integer >= 1, got {parts!r}")
    N = int(data.num_nodes)
    if parts > N:
        raise ValueError(f"parts={parts} is more than the graph's {N} nodes: at least {parts - N} parts would hold "
                         f"no node; use parts <= {N} (one process per part)")
    y = getattr(data, "y", None)
    if y is None or y.dim() != 1 or y.numel() != N:
        raise ValueError("write_partition needs a labelled graph: data.y with one class id per node")
    W = _symmetric_csr(data.edge_index.cpu(), N, getattr(data, "edge_weight", None))
    unweighted = bool(W.nnz == 0 or (W.data == 1.0).all())
    coo = W.tocoo()
    row, col = torch.from_numpy(coo.row.astype(np.int64)), torch.from_numpy(coo.col.astype(np.int64))
    del coo
    if isinstance(method, Partition):
        partition = method
    else:
        partition = partition_graph(row, col, N, int(parts), method or default_partitioner(), seed=seed)
        if partition.method in ("contiguous", "rcm") and parts > 1:   # an order: cut it where the work is even
            partition = Partition(partition.order, _even_bounds(np.diff(W.indptr)[partition.order.numpy()], parts),
                                  partition.method)
    if partition.parts != parts or partition.num_nodes != N:
        raise ValueError(f"the partition has {partition.parts} parts over {partition.num_nodes} nodes; the graph "
                         f"needs {parts} parts over its {N} nodes")
    empty = int((np.diff(np.asarray(partition.bounds)) == 0).sum())
    if empty:
        warnings.warn(f"{empty} of the {parts} parts hold no node (the {partition.method} partition of {N} nodes); "
                      "their processes would only wait on the others: lower parts", UserWarning, stacklevel=2)
    report = halo_report(row, col, partition)
    del row, col
    order = partition.order.numpy()
    inv = np.empty(N, dtype=np.int64)
    inv[order] = np.arange(N)
    out = Path(out)
    out.resolve().mkdir(parents=True, exist_ok=True)    # resolved: a link to a folder not made yet is followed
    for old in out.glob("part-*.pt"):
        old.unlink()
    x = getattr(data, "x", None)
    files = []
    for p in range(parts):
        lo, hi = partition.bounds[p], partition.bounds[p + 1]
        sub = W[order[lo:hi]]                           # its rows, original column ids
        indices = inv[sub.indices]                      # -> points
        indptr = sub.indptr.astype(np.int64)
        # sort every row's columns in point order (a stable order for the products)
        rows_of = np.repeat(np.arange(hi - lo), np.diff(indptr))
        perm = np.lexsort((indices, rows_of))
        indices, weight = indices[perm], sub.data[perm]
        del rows_of, perm, sub
        cols = torch.from_numpy(indices)
        outside = (cols < lo) | (cols >= hi)
        halo = torch.unique(cols[outside])
        nodes = torch.from_numpy(order[lo:hi].copy())
        part = {"format": FORMAT, "version": FORMAT_VERSION, "part": p, "parts": parts, "num_nodes": N,
                "rows": (lo, hi), "indptr": torch.from_numpy(indptr), "indices": cols,
                "weight": None if unweighted else torch.from_numpy(weight.astype(np.float64)),
                "halo": halo, "nodes": nodes, "y": y[nodes].clone(),
                "x": None if x is None else x[nodes].clone()}
        torch.save(part, out / _part_name(p))
        files.append(_part_name(p))
        del part, indices, weight, cols, outside, halo, nodes
    C = int(y.max()) + 1 if y.numel() else 0
    labels = y.to(torch.int16) if C < 2 ** 15 and int(y.min()) >= -1 else y
    torch.save(labels, out / "labels.pt")
    manifest = {"format": FORMAT, "version": FORMAT_VERSION, "num_nodes": N, "parts": int(parts),
                "bounds": [int(b) for b in partition.bounds], "nnz": int(W.nnz), "num_classes": C,
                "num_features": 0 if x is None else int(x.shape[1]), "weighted": not unweighted,
                "partitioner": partition.method, "source": source, "files": files,
                "halo_rows": [int(h) for h in report["halo"]]}
    with open(out / "manifest.json", "w") as fh:
        json.dump(manifest, fh, indent=1)
    return {**manifest, "halo": report}


def read_manifest(directory: str | os.PathLike) -> dict:
    """The manifest of a partitioned graph, checked: a clear error for a missing directory or
    manifest, another format or another version."""
    d = Path(directory)
    path = d / "manifest.json"
    if not path.is_file():
        raise FileNotFoundError(f"{d}: no manifest.json, so not a partitioned graph; write one with "
                                f"python -m graphstk partition GRAPH --parts P --out {d}")
    with open(path) as fh:
        man = json.load(fh)
    if man.get("format") != FORMAT:
        raise ValueError(f"{path}: format {man.get('format')!r}, expected {FORMAT!r}; rewrite it with "
                         "python -m graphstk partition")
    if man.get("version") != FORMAT_VERSION:
        raise ValueError(f"{path}: a partitioned graph of format version {man.get('version')}, but this graphstk "
                         f"reads version {FORMAT_VERSION}; rewrite it with this version: python -m graphstk partition "
                         f"GRAPH --parts {man.get('parts')} --out {d}")
    return man


@dataclass
class GraphPart:
    """One process's part of a partitioned graph (:func:`load_part`): its rows of ``W`` and their data.

    Attributes
    ----------
    part, parts, num_nodes : int
    bounds : list of int (``P + 1``)
    lo, hi : int
        Its points ``lo .. hi - 1``.
    indptr, indices : LongTensor
        CSR of its rows (``hi - lo`` rows), global column ids (points).
    weight : Tensor or None
        The entries' weights (``None``: every weight 1).
    halo : LongTensor
        The sorted points outside ``lo .. hi - 1`` its rows touch.
    nodes : LongTensor ``[hi - lo]``
        The original node ids of its rows.
    y : LongTensor ``[hi - lo]``
    x : Tensor or None
    manifest : dict
    directory : Path
    """

    part: int
    parts: int
    num_nodes: int
    bounds: list
    indptr: Tensor
    indices: Tensor
    weight: Tensor | None
    halo: Tensor
    nodes: Tensor
    y: Tensor
    x: Tensor | None
    manifest: dict
    directory: Path

    lo = property(lambda self: self.bounds[self.part], doc="The first point of this part.")
    hi = property(lambda self: self.bounds[self.part + 1], doc="One past the last point of this part.")

    def coo(self, dtype: torch.dtype = torch.float64) -> tuple[Tensor, Tensor, Tensor]:
        """Its entries ``(row, col, weight)``: global points, ``weight`` in ``dtype``."""
        counts = self.indptr[1:] - self.indptr[:-1]
        row = torch.repeat_interleave(torch.arange(self.lo, self.hi, dtype=torch.long), counts)
        w = (torch.ones(self.indices.numel(), dtype=dtype) if self.weight is None else self.weight.to(dtype))
        return row, self.indices, w

    def labels(self) -> Tensor:
        """Every node's label (original numbering; ``labels.pt``), int64."""
        return _load_labels(self.directory, self.parts)


def _repartition(parts: int, directory) -> str:
    return (f"copy it again from where the graph was partitioned, or partition again with python -m graphstk "
            f"partition GRAPH --parts {parts} --out {directory}")


def _load_labels(directory, parts: int) -> Tensor:
    """``labels.pt`` of a partitioned form, a damaged file named (:func:`graphstk.data.files.reading`)."""
    path = Path(directory) / "labels.pt"
    with reading(path, f"the partitioned graph {directory}", _repartition(parts, directory)):
        return torch.load(path).long()


def load_part(directory: str | os.PathLike, part: int | None = None, parts: int | None = None) -> GraphPart:
    """Load one part of a partitioned graph.

    Parameters
    ----------
    directory : path
        Written by :func:`write_partition` / ``python -m graphstk partition``.
    part, parts : int, optional
        Which part, and how many processes read it; default: this process's rank and the world
        size of the ``torch.distributed`` group (which must be started). ``parts`` must equal the
        manifest's ``P``.
    """
    man = read_manifest(directory)
    if part is None or parts is None:
        if not dist.is_initialized():
            raise RuntimeError("load_part: give part= and parts=, or start the process group first "
                               "(graphstk.distributed.init_from_env under torchrun)")
        part = dist.get_rank() if part is None else part
        parts = dist.get_world_size() if parts is None else parts
    if int(parts) != man["parts"]:
        raise ValueError(f"{directory} is partitioned into {man['parts']} parts but {parts} processes read it: "
                         f"launch {man['parts']} processes (torchrun --nproc-per-node {man['parts']} ...), or "
                         f"partition again: python -m graphstk partition GRAPH --parts {parts} --out DIR")
    if not 0 <= int(part) < man["parts"]:
        raise ValueError(f"part {part} does not exist: {directory} has parts 0 .. {man['parts'] - 1}")
    path = Path(directory) / man["files"][int(part)]
    if not path.is_file():
        raise FileNotFoundError(f"{path}: part {part} of {man['parts']} is missing (the partitioned form is "
                                f"incomplete); copy it from where the graph was partitioned, or partition again "
                                f"with python -m graphstk partition GRAPH --parts {man['parts']} --out {directory}")
    with reading(path, f"part {part} of {directory}", _repartition(man["parts"], directory)):
        blob = torch.load(path, weights_only=False)
    if blob.get("version") != FORMAT_VERSION or blob.get("part") != int(part) or blob.get("parts") != man["parts"]:
        raise ValueError(f"{path}: this part file belongs to another partitioned form (version "
                         f"{blob.get('version')}, part {blob.get('part')} of {blob.get('parts')}); partition again")
    return GraphPart(int(part), man["parts"], man["num_nodes"], list(man["bounds"]), blob["indptr"],
                     blob["indices"], blob["weight"], blob["halo"], blob["nodes"], blob["y"], blob["x"], man,
                     Path(directory))


def partitioned_data(directory: str | os.PathLike):
    """The graph object a run passes around for a partitioned graph: a PyG ``Data`` with every
    node's label ``y`` and ``num_nodes``, no edges (``edge_index`` ``[2, 0]``), and ``partitioned``,
    the directory, from which :class:`~graphstk.distributed.ShardedKernelFactory` (and
    :class:`~graphstk.distributed.PartitionedKernelFactory`) load each process's part."""
    man = read_manifest(directory)
    y = _load_labels(directory, man["parts"])
    data = Data(edge_index=torch.zeros(2, 0, dtype=torch.long), y=y, num_nodes=man["num_nodes"])
    data.partitioned = str(directory)
    return data


_SPEC = re.compile(r"^dcsbm(?::(.*))?$")
_KEYS = {"nodes": "num_nodes", "edges": "num_edges", "classes": "num_classes", "homophily": "homophily",
         "exponent": "exponent", "features": "num_features", "signal": "feature_signal", "seed": "seed"}


def graph_from_spec(spec: str, data_root: str | None = None):
    """The graph a ``GRAPH`` argument names: ``dcsbm:nodes=1e7,edges=5e7,classes=10,homophily=0.8,seed=0``
    (:func:`graphstk.data.make_dcsbm`; also ``exponent=``, ``features=``, ``signal=``), a file saved
    with :func:`torch.save` holding a PyG ``Data``, or a dataset name (:func:`graphstk.data.load_dataset`)."""
    m = _SPEC.match(spec)
    if m:
        kw = {}
        for item in filter(None, (m.group(1) or "").split(",")):
            key, _, value = item.partition("=")
            if key.strip() not in _KEYS or not value:
                raise ValueError(f"{spec!r}: unknown or empty setting {item!r}; dcsbm takes "
                                 f"{', '.join(k + '=' for k in _KEYS)}")
            name = _KEYS[key.strip()]
            real = name in ("homophily", "exponent", "feature_signal")
            try:
                v = float(value)
                kw[name] = v if real else int(v)
            except (ValueError, OverflowError):
                raise ValueError(f"{spec!r}: {key.strip()}={value!r} is not a number; write "
                                 f"{key.strip()}={'0.8' if real else '1000'} (integers may be written 1e6)") from None
        if "num_nodes" not in kw or "num_edges" not in kw:
            raise ValueError(f"{spec!r}: give at least nodes= and edges=, e.g. dcsbm:nodes=1e6,edges=1e7")
        return make_dcsbm(**kw)
    if os.path.isfile(spec):
        with reading(spec, spec, "save the graph again with torch.save(data, path)"):
            return torch.load(spec, weights_only=False)
    return load_dataset(spec, root=data_root)


def partition_main(argv: list[str], prog: str = "python -m graphstk partition") -> int:
    """``partition GRAPH --parts P --out DIR [--method M] [--seed S] [--data-root PATH]``."""
    p = argparse.ArgumentParser(prog=prog, description="Write the partitioned form of a labelled graph, once: "
                                "each of P processes then loads only its part (docs/distributed.md).")
    p.add_argument("graph", help="dcsbm:nodes=N,edges=E[,classes=C,homophily=H,seed=S,...], a torch.save'd PyG "
                                 "Data file, or a dataset name (Cora, ...)")
    p.add_argument("--parts", type=int, required=True, help="number of processes that will load it")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--method", choices=("contiguous", "rcm", "metis"), default=None,
                   help="partitioner (default: metis where pymetis is installed, else rcm)")
    p.add_argument("--seed", type=int, default=0, help="METIS seed")
    p.add_argument("--data-root", default=None)
    args = p.parse_args(argv)
    if args.parts < 1:
        p.error(f"--parts must be >= 1, got {args.parts}")
    try:
        check_out_dir(args.out, "partitioned")
    except ValueError as err:
        p.error(str(err))
    t0 = time.perf_counter()
    try:
        data = graph_from_spec(args.graph, args.data_root)
        man = write_partition(data, args.parts, args.out, args.method, args.seed, source=args.graph)
    except (ValueError, FileNotFoundError, ImportError, DataFileError) as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
        return 1
    h = man["halo"]
    print(f"{args.out}: {man['num_nodes']} nodes, {man['nnz']} entries, {man['parts']} parts ({man['partitioner']}); "
          f"rows per part {h['owned']}, halo rows {h['halo']} (largest halo / owned {h['halo_fraction']:.3f}); "
          f"{time.perf_counter() - t0:.1f} s")
    return 0

