"""One process of a multi-process test: ``python dist_worker.py JOB.pt OUT_DIR`` with torchrun's
environment (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT). Process 0 saves every engine's scores
on every node (``OUT_DIR/scores.pt``); ``job["kill"]`` makes process 1 exit after building its
kernel, and the others record the error they raise (``OUT_DIR/error-RANK.txt``)."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from dist_cases import ENGINES, FLOAT32, GRIDS, lpf, run_engine, run_grid  # noqa: E402

from graphstk.distributed import PartitionedGraphKernel, PartitionedKernelFactory, init_from_env  # noqa: E402
from graphstk.experiments.kernels import KernelCache  # noqa: E402
from graphstk.methods.engine import solve  # noqa: E402
from graphstk.methods.problem import make_problem  # noqa: E402


def main(job_path: str, out: str) -> None:
    torch.set_num_threads(1)
    job = torch.load(job_path)
    if job.get("config") is not None:          # the command line's path: run.py CONFIG --distributed
        from graphstk.experiments.distributed_run import run_distributed
        from graphstk.experiments.config import parse_config

        run_distributed(parse_config(job["config"]), os.path.join(out, "run"), progress=False, threads=1,
                        partition=job.get("partition"))
        return
    init_from_env(job.get("backend", "gloo"), timeout_s=job.get("timeout_s", 60))
    rank = int(os.environ["RANK"])
    if job.get("sharded") is not None:         # each process loads its part of a partitioned graph
        from graphstk.distributed import ShardedGraphKernel, load_part

        part = load_part(job["sharded"])
        y, train = part.labels(), job["train"]
        scores = {}
        for dtype, names in ((torch.float64, job["engines"]), (torch.float32, job.get("engines32", ()))):
            kernel = ShardedGraphKernel(part, dtype=dtype)    # this process's GPU under NCCL
            yd, td = y.to(kernel.device), train.to(kernel.device)
            for name in names:
                scores[(str(dtype), name)] = run_engine(kernel, name, yd, td, int(y.max()) + 1).cpu()
        if job.get("grids"):
            from graphstk.distributed import partitioned_data

            kernels = KernelCache(PartitionedKernelFactory())
            data = partitioned_data(job["sharded"])
            for name in job["grids"]:
                scores[("grid", name)] = run_grid(kernels, name, data.edge_index, y, train, None, data.num_nodes,
                                                  data=data, settings=("transductive",))
        scores["local_rows"] = (part.lo, part.hi, int(part.indices.numel()))
        torch.save(scores, os.path.join(out, f"scores-{rank}.pt"))
        torch.distributed.destroy_process_group()
        return
    if job.get("one_graph") is not None:       # one graph, the engines named in job["engines"]
        ei, n, y, train = job["one_graph"]
        kernel = PartitionedGraphKernel(ei, n, partition=job["partition"])
        scores = {name: run_engine(kernel, name, y, train, int(y.max()) + 1) for name in job["engines"]}
        if rank == 0:
            torch.save(scores, os.path.join(out, "scores.pt"))
        torch.distributed.destroy_process_group()
        return
    if job.get("kill"):
        ei, n = job["graphs"]["random"]
        kernel = PartitionedGraphKernel(ei, n, partition="contiguous")
        if rank == 1:
            os._exit(3)
        y, train, _ = job["splits"]["random"]
        try:
            run_engine(kernel, "lp-cg", y, train)
        except Exception as err:  # noqa: BLE001 - recorded for the test to read
            with open(os.path.join(out, f"error-{rank}.txt"), "w") as f:
                f.write(f"{type(err).__name__}: {err}")
            os._exit(4)
        os._exit(0)
    scores = {}
    for gname, (ei, n) in job["graphs"].items():
        y, train, hidden = job["splits"][gname]
        for setting, hid in (("transductive", None), ("inductive", hidden)):
            for dtype in (torch.float64, torch.float32):
                kernel = PartitionedGraphKernel(ei, n, hidden=hid, dtype=dtype, partition=job["partition"])
                for engine in ENGINES if dtype == torch.float64 else FLOAT32:
                    scores[(gname, setting, str(dtype), engine)] = run_engine(kernel, engine, y, train)
                scores[(gname, setting, "halo")] = kernel.halo
    ei, n = job["graphs"]["random"]             # results kept sharded, then gathered on process 0 only
    y, train, _ = job["splits"]["random"]
    kernel = PartitionedGraphKernel(ei, n, partition=job["partition"])
    kernel.gather_results = False               # the solvers hand out this process's rows only
    prob = make_problem(kernel, y[kernel.order], kernel.position[train], 3)
    h = solve(prob, lpf([0.9]), budgets=[20]).points[0].h
    whole = kernel.gather(h, dst=0)
    scores["sharded"] = (whole[kernel.position], torch.equal(kernel.S.shard(h), whole[kernel.S.lo:kernel.S.hi]))
    ei, n = job["graphs"]["components"]
    y, train, hidden = job["splits"]["components"]
    kernels = KernelCache(PartitionedKernelFactory(job["partition"]))   # what run.py --distributed hands the runner
    for name in GRIDS:
        scores[("grid", name)] = run_grid(kernels, name, ei, y, train, hidden, n)
    if rank == 0:
        torch.save(scores, os.path.join(out, "scores.pt"))
    torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
