"""``run.py CONFIG --distributed`` under ``torchrun``: one experiment, every graph kernel split over
the processes (:class:`PartitionedKernelFactory`); process 0 holds the run lock and writes the
results, with every process's peak memory. Design notes: docs/distributed.md.
"""
from __future__ import annotations

import contextlib
import os
import tempfile

import torch
import torch.distributed as dist

from ..data import resolve_data_root
from ..distributed.exchange import init_from_env
from ..distributed.factory import PartitionedKernelFactory
from ..distributed.partition import default_partitioner
from ..distributed.store import partitioned_data, read_manifest
from ..exceptions import RunError
from ..memory import peak_rss_gb
from .cache import run_lock
from .pipeline import run_experiment
from .protocols import get_protocol
from .report import write_all


def _preload(cfg, data_root) -> None:
    """Load (and let PyG process) every dataset once, on process 0, before the others read them."""
    root = str(resolve_data_root(data_root))
    for task in cfg.all_tasks():
        protocol = get_protocol(task)
        for spec in task.datasets:
            try:
                protocol.load(spec, root)
            except Exception:  # noqa: BLE001 - run_experiment reports a missing or bad dataset itself
                pass


def run_distributed(cfg, out_dir: str, data_root: str | None = None, progress: bool = True,
                    partition: str | None = None, threads: int | None = None, kernel_factory=None) -> dict | None:
    """Run ``cfg`` on the process group of ``torchrun`` (:func:`init_from_env`).

    Parameters
    ----------
    cfg : ExperimentConfig
    out_dir : str
        Where process 0 writes ``results.{json,csv,md}``.
    data_root : str, optional
    progress : bool, default True
        Progress bar on process 0.
    partition : "contiguous" | "rcm" | "metis" | None, default None (METIS where installed, else RCM)
    threads : int, optional
        Torch CPU threads per process (default: the CPUs divided by the processes on this machine).
    kernel_factory : callable, optional
        The runner's kernel factory (:mod:`graphstk.operators.factory`); default
        ``PartitionedKernelFactory(partition)``.

    Returns
    -------
    The results dict on process 0, ``None`` on the others.

    Raises
    ------
    RunError
        On every process, before anything runs, when another run holds ``out_dir``'s run lock.
    """
    init_from_env("gloo")   # the runner builds its kernels on the CPU
    rank = dist.get_rank()
    with contextlib.ExitStack() as held:
        _lock_out_dir(held, out_dir, rank)
        local = int(os.environ.get("LOCAL_WORLD_SIZE", dist.get_world_size()))
        torch.set_num_threads(threads or max(1, (os.cpu_count() or 1) // local))
        if rank == 0:
            _preload(cfg, data_root)
        dist.barrier()
        with tempfile.TemporaryDirectory(prefix=f"graphstk-rank{rank}-") as tmp:
            results = run_experiment(cfg, tmp, data_root, progress=progress and rank == 0,
                                     log=None if rank == 0 else (lambda msg: None), write=False,
                                     kernel_factory=kernel_factory or PartitionedKernelFactory(partition))
        peaks = [None] * dist.get_world_size()
        dist.all_gather_object(peaks, peak_rss_gb())     # every process's peak, up to its last row
        results["distributed"] = {"processes": dist.get_world_size(), "backend": dist.get_backend(),
                                  "partition": partition or default_partitioner(), "peak_rss_gb": peaks}
        results["peak_rss_gb"] = max(peaks)
        if rank == 0:
            write_all(out_dir, results)
        dist.barrier()
    dist.destroy_process_group()
    return results if rank == 0 else None


def _lock_out_dir(held: contextlib.ExitStack, out_dir: str, rank: int) -> None:
    """Process 0 takes ``out_dir``'s run lock (held until ``held`` closes: the end of the run, or an
    error); every process learns its outcome from process 0, so all of them start or all of them
    raise the same :class:`~graphstk.exceptions.RunError`, naming the folder and the holder."""
    refusal = [None]
    if rank == 0:
        try:
            held.enter_context(run_lock(out_dir))
        except RunError as err:
            refusal = [str(err)]
    dist.broadcast_object_list(refusal, src=0)
    if refusal[0] is not None:
        dist.destroy_process_group()
        raise RunError(refusal[0])


def partitioned_dcsbm(directory: str, generator: dict):
    """The partitioned form in ``directory`` (:func:`graphstk.distributed.partitioned_data`: labels and the
    directory; every process loads its own part through the run's kernel factory, none holds the edges) of
    the graph :func:`graphstk.data.make_dcsbm` ``(**generator)`` builds; refused when the directory holds
    another graph."""
    man = read_manifest(directory)
    want = dcsbm_source(**generator)
    if man["source"] != want or man["num_nodes"] != generator["num_nodes"]:
        raise ValueError(f"{directory} holds the partitioned form of {man['source']!r}, not of this config's "
                         f"graph {want!r}: write it with python -m graphstk partition '{want}' --parts "
                         f"{dist.get_world_size()} --out {directory}")
    return partitioned_data(directory)


def dcsbm_source(num_nodes: int, num_edges: int, seed: int = 0, num_classes: int | None = None,
                 homophily: float | None = None, exponent: float | None = None) -> str:
    """The ``GRAPH`` argument of ``python -m graphstk partition`` for these generator keywords."""
    parts = [f"nodes={num_nodes}", f"edges={num_edges}"]
    parts += [f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
              for k, v in (("classes", num_classes), ("homophily", homophily), ("exponent", exponent)) if v is not None]
    return "dcsbm:" + ",".join(parts + [f"seed={seed}"])
