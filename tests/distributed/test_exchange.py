"""The collectives of graphstk.distributed.exchange: a process that dies mid-run makes the others
raise PeerFailure, a clear error, instead of hanging."""
from __future__ import annotations

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from dist_cases import labels_and_split, random_graph  # noqa: E402
from dist_launch import launch  # noqa: E402

PG_TIMEOUT_S = 30   # the process group's own timeout, the bound on a silent peer
LAUNCH_TIMEOUT_S = 120


def test_killed_worker_fails_the_others(tmp_path):
    ei, n = random_graph()
    job = os.path.join(tmp_path, "job.pt")
    torch.save({"graphs": {"random": (ei, n)}, "splits": {"random": labels_and_split(n)}, "kill": True,
                "timeout_s": PG_TIMEOUT_S}, job)
    codes = launch(3, job, str(tmp_path), LAUNCH_TIMEOUT_S)
    assert codes[1][0] == 3, codes[1]
    for rank in (0, 2):
        code, err = codes[rank]
        assert code is not None, f"process {rank} hung after its peer died:\n{err[-2000:]}"
        assert code == 4, f"process {rank} ended with {code}:\n{err[-2000:]}"
        text = open(os.path.join(tmp_path, f"error-{rank}.txt")).read()
        assert text.startswith("PeerFailure:") and "another process stopped" in text, text
