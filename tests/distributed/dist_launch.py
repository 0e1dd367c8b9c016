"""Start ``P`` worker processes on localhost (gloo) and wait for them, bounded in time."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from graphstk.distributed import free_port

WORKER = Path(__file__).with_name("dist_worker.py")
REPO = Path(__file__).resolve().parents[2]


def launch(P: int, job_path: str, out: str, timeout_s: float) -> list[tuple[int | None, str]]:
    """Run the worker on ``P`` processes; returns ``(exit code, stderr)`` per process. Every process
    still running after ``timeout_s`` seconds is killed and reported with exit code ``None``."""
    env = {**os.environ, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port()), "WORLD_SIZE": str(P),
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]), "OMP_NUM_THREADS": "1"}
    procs, late = [], set()
    try:
        for rank in range(P):
            err = open(os.path.join(out, f"stderr-{rank}.txt"), "w")
            procs.append((subprocess.Popen([sys.executable, str(WORKER), job_path, out],
                                           env={**env, "RANK": str(rank), "LOCAL_RANK": str(rank)},
                                           stdout=subprocess.DEVNULL, stderr=err), err))
        deadline = time.monotonic() + timeout_s
        for p, _ in procs:
            try:
                p.wait(timeout=max(deadline - time.monotonic(), 0.1))
            except subprocess.TimeoutExpired:
                break
    finally:
        for rank, (p, err) in enumerate(procs):
            if p.poll() is None:
                late.add(rank)
                p.kill()
                p.wait()
            err.close()
    return [(None if rank in late else p.returncode, Path(out, f"stderr-{rank}.txt").read_text())
            for rank, (p, _) in enumerate(procs)]
