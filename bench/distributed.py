"""Benchmark of the row-partitioned operator (``graphstk.distributed``) on CPU with gloo.

Two parts:

1. **Partitioner** (no processes): for ``P`` = 2 .. 64 and each partitioner (contiguous,
   reverse Cuthill-McKee, METIS when ``pymetis`` is installed), the largest halo as a fraction
   of a process's owned rows and the rows / bytes exchanged per product with a ``[N, K]`` block,
   on a random graph and on the benchmark graphs found in ``$GRAPHSTK_DATA``. Target: with
   reordering, halo <= 10% of owned rows at ``P = 4`` on every benchmark graph.
2. **Processes** (``P`` in ``--procs``, gloo on localhost): per-iteration time of a product and
   of a Label-Prop iteration (Eq. 22, fixed budget), and the bytes each iteration sends, measured
   on the random graph and on the largest benchmark graph; the single-process
   ``torch.sparse.mm`` of the same matrix is the baseline.

``--write docs/distributed.md`` replaces the block between the ``bench:begin`` / ``bench:end``
markers of that file with this run's output.

Usage: ``python bench/distributed.py [--nodes 1000000] [--degree 10] [--procs 1 2 4] [--write FILE]``;
``python bench/distributed.py --quick`` checks in seconds that it runs.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import torch
import torch.multiprocessing as mp

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from graphstk.distributed import PartitionedGraphKernel, free_port, halo_report, partition_graph  # noqa: E402
from graphstk.distributed.partition import METHODS, Partition, _balanced  # noqa: E402

BENCHMARK_GRAPHS = ("Cora", "CiteSeer", "PubMed", "DBLP", "Photo", "Computers", "CS", "Physics")
HALO_TARGET = 0.10


def random_graph(n: int, degree: int, seed: int = 0):
    """Uniform random edges, ``n * degree / 2`` pairs in both directions (an expander: no order helps)."""
    g = torch.Generator().manual_seed(seed)
    ei = torch.randint(0, n, (2, n * degree // 2), generator=g)
    ei = ei[:, ei[0] != ei[1]]
    return torch.cat([ei, ei.flip(0)], 1), n


def load_graph(name: str):
    from graphstk.data import load_dataset

    data = load_dataset(name, features=False)
    return data.edge_index, int(data.num_nodes)


def available_graphs() -> list[str]:
    out = []
    for name in BENCHMARK_GRAPHS:
        try:
            load_graph(name)
            out.append(name)
        except Exception:  # noqa: BLE001 - absent here: left out of the table
            pass
    return out


def metis_available() -> bool:
    try:
        import pymetis  # noqa: F401
        return True
    except ImportError:
        return False


def partitioner_rows(name: str, ei, n: int, parts: list[int], columns: int) -> list[dict]:
    from graphstk.operators import GraphKernel

    row, col, _ = GraphKernel(ei, n, clean_edges=True).S.coo()
    methods = [m for m in METHODS if m != "metis" or metis_available()]
    out, orders = [], {}
    for P in parts:
        for m in methods:
            t0 = time.perf_counter()
            if m == "rcm" and "rcm" in orders:   # the order does not depend on P: cut the same one
                part = Partition(orders["rcm"], _balanced(n, P), "rcm")
            else:
                part = partition_graph(row, col, n, P, m)
                orders[m] = part.order
            t_part = time.perf_counter() - t0
            rep = halo_report(row, col, part, columns=columns)
            out.append({"graph": name, "P": P, "method": m, "halo_fraction": rep["halo_fraction"],
                        "rows": rep["rows_exchanged"], "bytes": rep["bytes_per_product"], "seconds": t_part})
    return out


def _worker(rank: int, P: int, port: int, graph: tuple, method: str, columns: int, iters: int, threads: int, q):
    import torch.distributed as dist

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(threads)
    dist.init_process_group("gloo", rank=rank, world_size=P)
    ei, n = random_graph(*graph[1:]) if graph[0] == "random" else load_graph(graph[0])
    t0 = time.perf_counter()
    kernel = PartitionedGraphKernel(ei, n, partition=method, clean_edges=True)
    build = time.perf_counter() - t0
    del ei
    N = kernel.num_visible
    X = torch.randn(N, columns, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    for _ in range(2):
        kernel.S @ X
    dist.barrier()
    sent0 = kernel.S.exchange.bytes_sent
    t0 = time.perf_counter()
    for _ in range(iters):
        kernel.S @ X
    dist.barrier()
    product = (time.perf_counter() - t0) / iters
    sent = (kernel.S.exchange.bytes_sent - sent0) / iters
    from graphstk.methods.engine import solve
    from graphstk.methods.problem import make_problem
    from graphstk.spectral.transforms import LabelPropagationFilter

    y = torch.arange(n) % columns
    prob = make_problem(kernel, y, torch.arange(0, n, 20), columns)
    dist.barrier()                                  # prob.space: the reductions over the partition
    t0 = time.perf_counter()
    solve(prob, [LabelPropagationFilter(0.9)], budgets=[iters])
    dist.barrier()
    lp = (time.perf_counter() - t0) / iters
    stats = torch.tensor([product, lp, build, sent], dtype=torch.float64)
    worst = stats.clone()
    dist.all_reduce(worst, op=dist.ReduceOp.MAX)
    dist.all_reduce(stats)
    if rank == 0:
        q.put({"product_s": float(worst[0]), "lp_iter_s": float(worst[1]), "build_s": float(worst[2]),
               "bytes_per_product": float(stats[3]), "halo_fraction": kernel.halo["halo_fraction"],
               "halo_rows": sum(kernel.halo["halo"])})
    dist.destroy_process_group()


def process_rows(graph: tuple, procs: list[int], method: str, columns: int, iters: int, threads: int) -> list[dict]:
    ctx = mp.get_context("spawn")
    out = []
    for P in procs:
        q = ctx.Queue()
        mp.spawn(_worker, args=(P, free_port(), graph, method, columns, iters, threads, q), nprocs=P, join=True)
        out.append({"graph": graph[0] if graph[0] != "random" else f"random n={graph[1]} deg={graph[2]}",
                    "P": P, "method": method, **q.get(timeout=60)})
    return out


def serial_product(graph: tuple, columns: int, iters: int, threads: int) -> float:
    """Seconds per ``torch.sparse.mm`` of ``S`` with an ``[N, K]`` block in one process."""
    from graphstk.operators import GraphKernel

    torch.set_num_threads(threads)
    ei, n = random_graph(*graph[1:]) if graph[0] == "random" else load_graph(graph[0])
    S = GraphKernel(ei, n, clean_edges=True).S.csr
    X = torch.randn(S.shape[0], columns, dtype=torch.float64)
    torch.sparse.mm(S, X)
    t0 = time.perf_counter()
    for _ in range(iters):
        torch.sparse.mm(S, X)
    return (time.perf_counter() - t0) / iters


def render(args, part_rows: list[dict], proc_rows: list[dict], serial: dict, targets: list[str]) -> str:
    lines = [f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch "
             f"{torch.__version__}, gloo on localhost, {args.threads} torch thread(s) per process; K = {args.columns} "
             "columns, float64, "
             f"{args.iters} timed iterations. Command: `python bench/distributed.py {' '.join(sys.argv[1:])}`", "",
             "Partitioner (no processes): largest halo / owned rows, rows and bytes exchanged per product", "",
             "| graph | P | partitioner | halo / owned | rows per product | bytes per product | partition s |",
             "|---|---:|---|---:|---:|---:|---:|"]
    for r in part_rows:
        lines.append(f"| {r['graph']} | {r['P']} | {r['method']} | {r['halo_fraction']:.3f} | {r['rows']} | "
                     f"{r['bytes']:.3g} | {r['seconds']:.2f} |")
    lines += ["", "Processes (gloo): seconds per iteration (slowest process), bytes sent per product (all processes)",
              "", "| graph | P | partitioner | halo / owned | product ms | Label-Prop iteration ms | single-process "
              "sparse.mm ms | bytes per product | kernel build s |", "|---|---:|---|---:|---:|---:|---:|---:|---:|"]
    for r in proc_rows:
        lines.append(f"| {r['graph']} | {r['P']} | {r['method']} | {r['halo_fraction']:.3f} | "
                     f"{1e3 * r['product_s']:.2f} | {1e3 * r['lp_iter_s']:.2f} | {1e3 * serial[r['graph']]:.2f} | "
                     f"{r['bytes_per_product']:.3g} | {r['build_s']:.2f} |")
    return "\n".join(lines + ["", "Targets:", ""] + [f"- {t}" for t in targets])


def write_block(path: str, text: str) -> None:
    begin, end = "<!-- bench:begin -->", "<!-- bench:end -->"
    doc = open(path).read() if os.path.exists(path) else f"{begin}\n{end}\n"
    if begin not in doc or end not in doc:
        raise SystemExit(f"{path} has no {begin} ... {end} block to replace")
    head, rest = doc.split(begin, 1)
    _, tail = rest.split(end, 1)
    with open(path, "w") as f:
        f.write(f"{head}{begin}\n{text}\n{end}{tail}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--nodes", type=int, default=1_000_000, help="nodes of the random graph (default 10^6)")
    p.add_argument("--degree", type=int, default=10, help="average degree of the random graph")
    p.add_argument("--proc-nodes", type=int, default=None,
                   help="nodes of the random graph in the process runs (default: --nodes; every process builds the "
                        "whole kernel once, so memory grows with P times the graph)")
    p.add_argument("--procs", type=int, nargs="+", default=[1, 2, 4], help="process counts to run")
    p.add_argument("--parts", type=int, nargs="+", default=[2, 4, 8, 16, 32, 64], help="P for the partitioner table")
    p.add_argument("--columns", type=int, default=8, help="columns K of the vector block")
    p.add_argument("--iters", type=int, default=20, help="timed iterations")
    p.add_argument("--partition", default=None, choices=METHODS,
                   help="partitioner of the process runs (default: metis where pymetis is installed, else rcm)")
    p.add_argument("--threads", type=int, default=1,
                   help="torch threads per process and for the single-process baseline (default 1: on a loaded "
                        "machine OpenMP teams of several threads wait on descheduled members)")
    p.add_argument("--write", metavar="FILE", help="replace the bench block of FILE (docs/distributed.md)")
    p.add_argument("--quick", action="store_true",
                   help="a check that the script runs (seconds): a random graph of 2000 nodes, P = 2, "
                        "partitions into 2 and 4, no benchmark graphs")
    args = p.parse_args(argv)
    if args.quick:
        args.nodes, args.procs, args.parts, args.iters, args.write = 2000, [2], [2, 4], 2, None
    args.partition = args.partition or ("metis" if metis_available() else "rcm")
    rand = ("random", args.proc_nodes or args.nodes, args.degree)
    graphs = [] if args.quick else available_graphs()
    part_rows = partitioner_rows(f"random n={args.nodes} deg={args.degree}", *random_graph(args.nodes, args.degree),
                                 args.parts, args.columns)
    for name in graphs:
        part_rows += partitioner_rows(name, *load_graph(name), [4] if name != graphs[-1] else args.parts, args.columns)
    largest = max(graphs, key=lambda g: load_graph(g)[1]) if graphs else None
    runs = [rand] + ([(largest,)] if largest else [])
    proc_rows, serial = [], {}
    for graph in runs:
        label = graph[0] if graph[0] != "random" else f"random n={graph[1]} deg={graph[2]}"
        serial[label] = serial_product(graph, args.columns, args.iters, args.threads)
        proc_rows += process_rows(graph, args.procs, args.partition, args.columns, args.iters, args.threads)
    targets = []
    for name in graphs:
        for m in ("rcm", "metis"):
            hits = [r for r in part_rows if r["graph"] == name and r["P"] == 4 and r["method"] == m]
            if hits:
                f = hits[0]["halo_fraction"]
                targets.append(f"{'PASS' if f <= HALO_TARGET else 'FAIL'}: {name}, P = 4, {m}: halo {f:.3f} of owned "
                               f"rows (target <= {HALO_TARGET:g})")
    if not metis_available():
        targets.append("METIS: not measured (pymetis is not installed here; pip install pymetis)")
    text = render(args, part_rows, proc_rows, serial, targets)
    print(text)
    if args.write:
        write_block(args.write, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
