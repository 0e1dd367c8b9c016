"""``run.py CONFIG --distributed``: the runner on 2 gloo processes, its kernels built by the
partitioned kernel factory, writes the single-process table."""
from __future__ import annotations

import json
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "distributed"))

from dist_launch import launch  # noqa: E402

from graphstk.experiments.config import parse_config  # noqa: E402
from graphstk.experiments.pipeline import run_experiment  # noqa: E402

TIMEOUT_S = 300   # a bound on a hung run, far above its normal time

CONFIG = {
    "name": "dist-small", "seeds": 2, "p_test": 0.2, "planetoid_split": "random", "paper_table": None,
    "datasets": [{"name": "SBM", "graph": {"kind": "sbm", "sizes": [60, 60, 60], "p_in": 0.08, "p_out": 0.015,
                                           "seed": 1}}],
    "grid": {"T": [2, 8], "eta": [0.5, 0.9], "beta": [1.0, 1e-3], "k": [2], "d": [4]},
    "methods": ["LP (t)", "SP-Lap (t)", "SP-poly (t)", "SP-topd (t)", "SP-Lap (i)", "SP-poly (i)", "SP-topd (i)",
                "KRR (i)"],
}
KEYS = ("dataset", "method", "setting", "p_test", "seeds", "test_acc", "mean", "std", "best_params", "val_acc",
        "unreachable")


def test_distributed_run_writes_the_single_process_table(tmp_path):
    job = os.path.join(tmp_path, "job.pt")
    torch.save({"config": CONFIG, "partition": "contiguous"}, job)
    codes = launch(2, job, str(tmp_path), TIMEOUT_S)
    for rank, (code, err) in enumerate(codes):
        assert code == 0, f"process {rank} ended with {code}:\n{err[-3000:]}"
    got = json.loads((tmp_path / "run" / "results.json").read_text())
    assert got["distributed"]["processes"] == 2 and got["distributed"]["partition"] == "contiguous"
    peaks = got["distributed"]["peak_rss_gb"]      # each process's own peak resident memory
    assert len(peaks) == 2 and all(0.05 < g < 64 for g in peaks) and got["peak_rss_gb"] == max(peaks)
    assert "- peak resident memory per process: " in (tmp_path / "run" / "results.md").read_text()
    want = run_experiment(parse_config(CONFIG), str(tmp_path / "single"), progress=False, log=lambda m: None,
                          write=False)
    assert [{k: r[k] for k in KEYS} for r in got["rows"]] == [{k: r[k] for k in KEYS} for r in want["rows"]]


SMALL = {**CONFIG, "seeds": 1, "methods": ["LP (t)"], "grid": {"eta": [0.9]}}


def test_distributed_run_takes_the_run_lock_of_its_output_folder(tmp_path, lock_holder):
    """Process 0 takes the single-process run's lock on ``--out``: while another run holds the
    folder, every process is refused with the folder and the holder's pid and host, and nothing is
    written; once the holder ends the same command runs, and the lock is released at its end."""
    import socket

    from graphstk.experiments.cache import run_lock

    out = str(tmp_path / "run")
    job = os.path.join(tmp_path, "job.pt")
    torch.save({"config": SMALL, "partition": "contiguous"}, job)
    with lock_holder(out) as holder:
        codes = launch(2, job, str(tmp_path), TIMEOUT_S)
    for rank, (code, err) in enumerate(codes):
        assert code not in (0, None), f"process {rank} ended with {code}:\n{err[-3000:]}"
        assert f"RunError: another run is using the output folder {out} " in err, err[-3000:]
        assert f"held by pid {holder.pid} on {socket.gethostname()}" in err, err[-3000:]
    assert not os.path.exists(os.path.join(out, "results.json"))

    codes = launch(2, job, str(tmp_path), TIMEOUT_S)   # the holder ended: the same command runs
    for rank, (code, err) in enumerate(codes):
        assert code == 0, f"process {rank} ended with {code}:\n{err[-3000:]}"
    assert json.loads((tmp_path / "run" / "results.json").read_text())["rows"]
    with run_lock(out):                                 # and it released the folder at its end
        pass


def test_a_failed_distributed_run_releases_the_output_folder(tmp_path, monkeypatch):
    """A run that raises part-way (here its kernel factory) leaves ``--out`` free for the next run."""
    import pytest
    import torch.distributed as dist

    from graphstk.distributed import free_port
    from graphstk.experiments.distributed_run import run_distributed
    from graphstk.experiments.cache import run_lock

    def broken_factory(*args, **kwargs):
        raise RuntimeError("the kernel factory failed")

    for key, value in {"RANK": "0", "WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1",
                       "MASTER_PORT": str(free_port())}.items():
        monkeypatch.setenv(key, value)
    out = str(tmp_path / "run")
    try:
        with pytest.raises(Exception, match="the kernel factory failed"):
            run_distributed(parse_config(SMALL), out, progress=False, threads=1, kernel_factory=broken_factory)
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()
    with run_lock(out):          # refused (RunError) if the failed run still held the folder
        pass


def test_distributed_run_from_the_partitioned_form(tmp_path):
    """A ``dcsbm`` graph with ``partitioned: DIR``: each process loads its part (sharded vectors);
    the table equals the single-process run on the graph generated whole."""
    from graphstk.distributed import write_partition
    from graphstk.experiments.distributed_run import dcsbm_source
    from graphstk.data import make_dcsbm

    gen = dict(num_nodes=600, num_edges=2400, num_classes=3, homophily=0.8, seed=2)
    store = tmp_path / "parts"
    write_partition(make_dcsbm(**gen), 2, store, "rcm", source=dcsbm_source(**gen))
    graph = {"kind": "dcsbm", "nodes": 600, "edges": 2400, "classes": 3, "homophily": 0.8, "seed": 2}
    config = {"name": "dist-sharded", "seeds": 2, "p_test": 0.2, "paper_table": None,
              "datasets": [{"name": "DCSBM", "graph": {**graph, "partitioned": str(store)}}],
              "grid": {"T": [2, 8], "eta": [0.5, 0.9], "beta": [1.0, 1e-3], "k": [2]},
              "methods": ["LP (t)", *({"label": m, "normalization": "symmetric"}     # the parts store Eq. 23's S
                                      for m in ("SP-Lap (t)", "SP-poly (t)"))]}
    job = os.path.join(tmp_path, "job.pt")
    torch.save({"config": config}, job)
    codes = launch(2, job, str(tmp_path), TIMEOUT_S)
    for rank, (code, err) in enumerate(codes):
        assert code == 0, f"process {rank} ended with {code}:\n{err[-3000:]}"
    got = json.loads((tmp_path / "run" / "results.json").read_text())
    want = run_experiment(parse_config(config), str(tmp_path / "single"), progress=False, log=lambda m: None,
                          write=False)
    assert [{k: r[k] for k in KEYS} for r in got["rows"]] == [{k: r[k] for k in KEYS} for r in want["rows"]]
