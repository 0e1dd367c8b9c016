"""Communication for the row-partitioned operator: process groups, the halo exchange, and the
global reductions the solvers use.

Every function here is collective: all processes of the group call it, in the same order.
"""
from __future__ import annotations

import datetime
import os
import socket

import torch
import torch.distributed as dist
from torch import Tensor

from ..exceptions import PeerFailure
from ..spectral.solvers import VectorSpace

EXCHANGES = ("auto", "all_to_all", "p2p")


def free_port() -> int:
    """A TCP port on localhost that is free now (for ``MASTER_PORT`` in tests and benchmarks)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def init_from_env(backend: str | None = None, timeout_s: float = 300.0) -> torch.device:
    """Join the process group described by ``torchrun``'s environment (``RANK``, ``WORLD_SIZE``,
    ``MASTER_ADDR``, ``MASTER_PORT``, ``LOCAL_RANK``) unless already joined; returns this
    process's device (``cuda:LOCAL_RANK`` with NCCL, else the CPU).

    Parameters
    ----------
    backend : "gloo" | "nccl" | None
        ``None``: NCCL when CUDA is available, else gloo.
    timeout_s : float, default 300
        How long a collective waits for a silent peer before it raises.
    """
    if backend is None:
        backend = "nccl" if torch.cuda.is_available() else "gloo"
    missing = [k for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT") if k not in os.environ]
    if not dist.is_initialized():
        if missing:
            raise RuntimeError(f"--distributed needs a process group, but {', '.join(missing)} is not set: start the "
                               "program with torchrun, e.g. torchrun --nproc-per-node 2 run.py CONFIG --distributed")
        if backend == "nccl":   # one GPU per process, chosen before the group starts
            torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)))
        dist.init_process_group(backend, timeout=datetime.timedelta(seconds=timeout_s))
    if dist.get_backend() == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def _failed(err: Exception, what: str) -> PeerFailure:
    return PeerFailure(f"{what} failed on process {dist.get_rank()} of {dist.get_world_size()}: another process "
                       f"stopped or did not answer within the process group's timeout ({type(err).__name__}: "
                       f"{str(err).splitlines()[0] if str(err) else ''}). Look for the first error among the "
                       "processes' logs; the computation cannot continue without it")


def all_reduce(t: Tensor, group=None, what: str = "a global reduction") -> Tensor:
    """``dist.all_reduce`` (sum, in place, returned), raising :class:`PeerFailure` when a peer is gone."""
    try:
        dist.all_reduce(t, group=group)
    except RuntimeError as err:
        raise _failed(err, what) from err
    return t


def _peer(group, q: int) -> int:
    return q if group is None else dist.get_global_rank(group, q)


class _Pending:
    """An exchange in flight: ``wait()`` returns the received halo block."""

    def __init__(self, works: list, recv: Tensor):
        self.works, self.recv = works, recv

    def wait(self) -> Tensor:
        try:
            for w in self.works:
                w.wait()
        except RuntimeError as err:
            raise _failed(err, "the halo exchange of a partitioned product") from err
        return self.recv


class HaloExchange:
    """The rows of the vector block each process sends and receives before a product.

    Built collectively from this process's halo: the sorted ids (new numbering) of the rows it
    needs from other processes. Per product, :meth:`start` sends the requested owned rows and
    receives the halo rows, asynchronously, by one ``all_to_all_single`` (``mode="all_to_all"``,
    the default where the backend has it: gloo since torch 1.8, NCCL, MPI) or by ``isend``/``irecv``
    pairs with the processes that share rows (``mode="p2p"``).

    Parameters
    ----------
    halo_ids : LongTensor ``[H]``, sorted, none inside this process's range
    bounds : list of int, ``P + 1`` entries (see :class:`Partition`)
    group : process group, optional (default: the world)
    mode : "auto" | "all_to_all" | "p2p"
    """

    def __init__(self, halo_ids: Tensor, bounds: list[int], group=None, mode: str = "auto"):
        if mode not in EXCHANGES:
            raise ValueError(f"exchange must be one of {EXCHANGES}, got {mode!r}")
        self.group = group
        self.rank, P = dist.get_rank(group), dist.get_world_size(group)
        if len(bounds) != P + 1:
            raise ValueError(f"the partition has {len(bounds) - 1} parts but the process group has {P} processes")
        lo = bounds[self.rank]
        edges = torch.as_tensor(bounds[1:-1], dtype=torch.long, device=halo_ids.device)
        owner = torch.bucketize(halo_ids, edges, right=True)
        recv_counts = torch.bincount(owner, minlength=P)
        table = [torch.zeros_like(recv_counts) for _ in range(P)]
        dist.all_gather(table, recv_counts, group=group)          # table[q][p]: rows q needs from p
        self.recv_counts = recv_counts.tolist()
        self.send_counts = [int(t[self.rank]) for t in table]
        requested = torch.empty(sum(self.send_counts), dtype=torch.long, device=halo_ids.device)
        self.mode, self.fallback = ("all_to_all" if mode == "auto" else mode), None
        if self.mode == "all_to_all":
            try:
                dist.all_to_all_single(requested, halo_ids.contiguous(), self.send_counts, self.recv_counts,
                                       group=group)
            except RuntimeError as err:   # a backend without all_to_all fails on every process alike
                if mode != "auto":
                    raise
                self.mode, self.fallback = "p2p", str(err).splitlines()[0]
        if self.mode == "p2p":   # the requests travel the other way: my halo to its owners
            self._p2p(halo_ids, requested, self.recv_counts, self.send_counts).wait()
        self.send_idx = requested - lo                             # owned rows to send, local offsets
        self.halo_rows = int(halo_ids.numel())
        self.bytes_sent = 0                                        # counted by start()

    def _offsets(self, counts: list[int]) -> list[int]:
        out = [0]
        for c in counts:
            out.append(out[-1] + c)
        return out

    def _p2p(self, send: Tensor, recv: Tensor, send_counts: list[int], recv_counts: list[int]) -> _Pending:
        so, ro = self._offsets(send_counts), self._offsets(recv_counts)
        works = []
        for q in range(len(send_counts)):
            if q == self.rank:
                continue
            if recv_counts[q]:
                works.append(dist.irecv(recv[ro[q]:ro[q + 1]], _peer(self.group, q), group=self.group))
            if send_counts[q]:
                works.append(dist.isend(send[so[q]:so[q + 1]].contiguous(), _peer(self.group, q), group=self.group))
        return _Pending(works, recv)

    def start(self, x_own: Tensor) -> _Pending:
        """Send the requested rows of ``x_own`` (this process's rows of the block); the result's
        ``wait()`` gives the ``[H, K]`` halo block, in the order of ``halo_ids``."""
        send = x_own.index_select(0, self.send_idx)
        recv = torch.empty(self.halo_rows, *x_own.shape[1:], dtype=x_own.dtype, device=x_own.device)
        self.bytes_sent += send.numel() * send.element_size()
        try:
            if self.mode == "all_to_all":
                work = dist.all_to_all_single(recv, send, self.recv_counts, self.send_counts, group=self.group,
                                              async_op=True)
                return _Pending([work], recv)
            return self._p2p(send, recv, self.send_counts, self.recv_counts)
        except RuntimeError as err:
            raise _failed(err, "the halo exchange of a partitioned product") from err


class ShardedSpace(VectorSpace):
    """Reductions over ``[N, K]`` blocks whose rows ``lo .. hi - 1`` are this process's.

    A block with ``N`` rows is *sharded*: only its owned rows are read, and the partial sums are
    added over the group (``all_reduce``); any other block (``n x K`` coefficients of Algorithm 1,
    Krylov's small matrices) is the same on every process and reduces locally. Reading a
    replicated ``N``-row block as sharded gives the same sums, so the rule is never wrong.

    Parameters
    ----------
    lo, hi, N : int
    group : process group, optional
    gather : bool, default True
        Whether solver results are handed out whole on every process (one ``all_reduce`` per
        result) or kept sharded (their rows outside ``lo .. hi - 1`` are then meaningless).
    """

    def __init__(self, lo: int, hi: int, N: int, group=None, gather: bool = True):
        self.lo, self.hi, self.N, self.group, self.gather = lo, hi, N, group, gather

    def _sharded(self, x: Tensor) -> bool:
        return x.dim() >= 1 and x.shape[0] == self.N

    def col_dot(self, x: Tensor, y: Tensor) -> Tensor:
        if not self._sharded(x):
            return super().col_dot(x, y)
        return all_reduce((x[self.lo:self.hi] * y[self.lo:self.hi]).sum(0), self.group, "a solver's inner product")

    def col_norm(self, x: Tensor) -> Tensor:
        return torch.sqrt(self.col_dot(x, x)) if self._sharded(x) else super().col_norm(x)

    def settle(self, x: Tensor) -> Tensor:
        return gather_rows(x, self.lo, self.hi, self.group) if self.gather and self._sharded(x) else x


def gather_rows(x: Tensor, lo: int, hi: int, group=None, dst: int | None = None) -> Tensor:
    """The whole ``[N, K]`` block from every process's rows ``lo .. hi - 1`` of ``x``: on every
    process (``dst=None``, an ``all_reduce``) or on process ``dst`` only (a ``reduce``; the others
    get their input back)."""
    out = torch.zeros_like(x)
    out[lo:hi] = x[lo:hi]
    if dst is None:
        return all_reduce(out, group, "gathering a sharded block")
    try:
        dist.reduce(out, _peer(group, dst), group=group)
    except RuntimeError as err:
        raise _failed(err, "gathering a sharded block") from err
    return out if dist.get_rank(group) == dst else x


def all_gather_rows(t: Tensor, group=None) -> Tensor:
    """The rows of ``t`` from every process, concatenated in process order, on every process
    (``t`` may have a different number of rows on each)."""
    count = torch.tensor([t.shape[0]], dtype=torch.long, device=t.device)
    counts = [torch.zeros_like(count) for _ in range(dist.get_world_size(group))]
    try:
        dist.all_gather(counts, count, group=group)
        longest = int(max(counts))
        padded = torch.zeros(longest, *t.shape[1:], dtype=t.dtype, device=t.device)
        padded[:t.shape[0]] = t
        out = [torch.empty_like(padded) for _ in counts]
        dist.all_gather(out, padded, group=group)
    except RuntimeError as err:
        raise _failed(err, "gathering the rows of every process") from err
    return torch.cat([o[:int(c)] for o, c in zip(out, counts)])
