"""One process against P processes on the labelled large graph (``python bench/scale.py --procs 1 2``;
``python bench/scale_procs.py --quick`` checks in seconds that it runs, on 10^4 nodes).

The graph is :func:`graphstk.data.make_dcsbm` (``--nodes``, ``--edges`` entries of its edge_index,
``--classes``, ``--homophily``, ``--seed``), written once per ``P`` in its partitioned form
(``python -m graphstk partition``; ``--method``, default RCM; ``--store DIR`` keeps and reuses it).
For every ``P`` of ``--procs`` it starts ``P`` gloo processes on this machine (``--threads``
torch threads in all, split evenly: one process with 2 threads against 2 processes with one),
each of which loads only its part (:class:`graphstk.distributed.ShardedGraphKernel`, float32)
and measures:

* ``raw CSR ms``: one ``torch.sparse.mm`` of its rows (a CSR of its own rows, columns compacted to
  its rows and its halo) with a ``[rows + halo, C]`` block: the product without any exchange;
* ``product ms``: one product of the sharded operator (halo exchange included); ``bytes per
  product``: what the process sends;
* ``LP ms/it`` and ``Lap ms/it``: Label-Prop (Eq. 22) and Algorithm 2 (inverse Laplacian,
  Richardson), ``--iters`` iterations through :func:`graphstk.methods.engine.solve`, time per
  iteration, and its ratio to the raw CSR product;
* ``fit s``: load the part, build the kernel and the problem, both solves, the scores;
* ``peak GB``: the process's peak resident memory (``VmHWM``) up to its scores (the raw product is
  measured after that), and after each phase.

The scores of ``--score-nodes`` fixed nodes are compared with those of the first ``P``.
Targets (printed PASS / FAIL): for the largest ``P``, each process's peak memory is at most 0.6 x
the single process's; its slowest time per iteration at most 1.2 x the single process's; its
scores equal the single process's within 1e-5 (float32).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from graphstk.memory import peak_rss_gb  # noqa: E402


def _timed(fn, reps: int) -> float:
    fn()
    t = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t) / reps


def worker(args) -> None:
    """One process: load its part, time its products and solves, write ``OUT/rank-R.json``."""
    from graphstk.distributed import ShardedGraphKernel, init_from_env, load_part
    from graphstk.methods.engine import solve
    from graphstk.methods.problem import make_problem
    from graphstk.spectral.transforms import InverseLaplacian, LabelPropagationFilter

    torch.set_num_threads(args.threads)
    t0 = time.perf_counter()
    init_from_env("gloo", timeout_s=600)
    rank, world = torch.distributed.get_rank(), torch.distributed.get_world_size()
    phases = {"start": peak_rss_gb()}
    part = load_part(args.store)
    phases["load"] = peak_rss_gb()
    y = part.labels()
    C = int(y.max()) + 1
    perm = torch.randperm(part.num_nodes, generator=torch.Generator().manual_seed(args.seed))   # the same labels for every P
    g = torch.Generator().manual_seed(args.seed + 1)
    kernel = ShardedGraphKernel(part, dtype=torch.float32)
    nnz_here = int(part.indices.numel())
    del part                                  # the kernel keeps its rows; the part's arrays go
    phases["kernel"] = peak_rss_gb()
    N = kernel.num_nodes
    train, probe = perm[: int(args.labeled * N)], perm[-args.score_nodes:]
    prob = make_problem(kernel, y[kernel.order], kernel.position[train])
    S = kernel.S
    x = torch.randn(S.hi - S.lo, C, generator=g)
    sent0 = S.exchange.bytes_sent
    t_prod = _timed(lambda: S @ x, args.reps)
    bytes_per = (S.exchange.bytes_sent - sent0) / (args.reps + 1)
    T = args.iters
    t = time.perf_counter()
    lp = solve(prob, [LabelPropagationFilter(args.eta)], budgets=[T], solver="richardson")
    t_lp = (time.perf_counter() - t) / T
    phases["lp"] = peak_rss_gb()
    t = time.perf_counter()
    lap = solve(prob, [InverseLaplacian(args.eta)], [args.beta], budgets=[T], solver="richardson", unstable="run")
    t_lap = (time.perf_counter() - t) / T
    phases["lap"] = peak_rss_gb()
    pp = kernel.position[probe]
    scores = {"lp": prob.pick(lp.points[0].h, pp).tolist(), "lap": (prob.rows(pp) @ lap.points[0].h).tolist()}
    fit = time.perf_counter() - t0
    phases["scores"] = peak = peak_rss_gb()
    # last, so that its memory is not counted in the peak: the raw product of the same rows, its CSR
    # (int32 indices, as the operator's) over [own | halo] columns (values do not change the time),
    # one torch.sparse.mm, no exchange
    part = load_part(args.store)
    lo, hi, c = part.lo, part.hi, part.indices
    inner = (c >= lo) & (c < hi)
    cc = torch.where(inner, c - lo, (hi - lo) + torch.searchsorted(part.halo, c)).to(torch.int32)
    del inner, c
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta state")
        raw = torch.sparse_csr_tensor(part.indptr.to(torch.int32), cc, torch.ones(cc.numel()),
                                      (hi - lo, hi - lo + part.halo.numel()), check_invariants=False)
    xh = torch.randn(hi - lo + part.halo.numel(), C, generator=g)
    t_raw = _timed(lambda: torch.sparse.mm(raw, xh), args.reps)
    del raw, xh, cc, part
    out = {"rank": rank, "world": world, "threads": args.threads, "rows": S.hi - S.lo, "halo": S.exchange.halo_rows,
           "nnz_here": nnz_here, "raw_ms": 1e3 * t_raw, "product_ms": 1e3 * t_prod,
           "bytes_per_product": bytes_per, "lp_ms": 1e3 * t_lp, "lap_ms": 1e3 * t_lap, "fit_s": fit,
           "peak_gb": peak, "phases": phases, "scores": scores if rank == 0 else None}
    with open(os.path.join(args.out, f"rank-{rank}.json"), "w") as fh:
        json.dump(out, fh)
    torch.distributed.destroy_process_group()


def _launch(P: int, threads: int, store: str, out: str, args, timeout_s: float) -> list[dict]:
    from graphstk.distributed import free_port

    env = {**os.environ, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port()), "WORLD_SIZE": str(P),
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
           "OMP_NUM_THREADS": str(threads)}
    cmd = [sys.executable, __file__, "--worker", "--store", store, "--out", out, "--threads", str(threads),
           "--iters", str(args.iters), "--reps", str(args.reps), "--labeled", str(args.labeled),
           "--score-nodes", str(args.score_nodes), "--eta", str(args.eta), "--beta", str(args.beta),
           "--seed", str(args.seed)]
    procs = [subprocess.Popen(cmd, env={**env, "RANK": str(r), "LOCAL_RANK": str(r), "LOCAL_WORLD_SIZE": str(P)})
             for r in range(P)]
    deadline = time.monotonic() + timeout_s
    try:
        for p in procs:
            p.wait(timeout=max(deadline - time.monotonic(), 0.1))
    except subprocess.TimeoutExpired:
        pass
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    bad = [r for r, p in enumerate(procs) if p.returncode != 0]
    if bad:
        raise RuntimeError(f"processes {bad} of {P} failed or ran past {timeout_s:.0f} s")
    return [json.load(open(os.path.join(out, f"rank-{r}.json"))) for r in range(P)]


def run(args) -> int:
    from graphstk.data import make_dcsbm
    from graphstk.distributed import read_manifest, write_partition
    from graphstk.experiments.distributed_run import dcsbm_source

    store_root = args.store or tempfile.mkdtemp(prefix="graphstk-scale-")
    N, E = int(args.nodes), int(args.edges)
    source = dcsbm_source(N, E // 2, seed=args.seed, num_classes=args.classes, homophily=args.homophily)
    data = None
    rows = {}
    t_gen = t_part = 0.0
    for P in args.procs:
        store = os.path.join(store_root, f"P{P}")
        try:
            man = read_manifest(store)
            fresh = man["num_nodes"] == N and man["source"] == source
        except (FileNotFoundError, ValueError):
            fresh = False
        if not fresh:
            if data is None:
                t = time.perf_counter()
                data = make_dcsbm(N, E // 2, args.classes, args.homophily, seed=args.seed)   # E entries of edge_index
                t_gen = time.perf_counter() - t
            t = time.perf_counter()
            write_partition(data, P, store, args.method, source=source)   # a config's dcsbm graph can load it
            t_part += time.perf_counter() - t
    del data
    parent_peak = peak_rss_gb()
    with tempfile.TemporaryDirectory(prefix="graphstk-scale-run-") as tmp:
        for P in args.procs:
            out = os.path.join(tmp, f"P{P}")
            os.makedirs(out)
            rows[P] = _launch(P, max(1, args.threads // P), os.path.join(store_root, f"P{P}"), out, args,
                              args.timeout)
    man = read_manifest(os.path.join(store_root, f"P{args.procs[-1]}"))
    # glibc's allocator settings change peak memory: the command names them where they are set
    malloc_env = "".join(f"{k}={v} " for k, v in sorted(os.environ.items()) if k.startswith("MALLOC_"))
    lines = [f"Machine: {os.uname().machine}, {os.cpu_count()} cores, torch {torch.__version__}, gloo on localhost, "
             f"float32, {args.threads} torch thread(s) in all. Graph: make_dcsbm({N}, {E // 2}, num_classes={args.classes}, "
             f"homophily={args.homophily}, seed={args.seed}): {man['nnz']} stored entries; partitioner "
             f"{man['partitioner']}; {args.iters} iterations, {int(args.labeled * N)} labels. Command: `{malloc_env}python "
             f"bench/scale.py {' '.join(sys.argv[1:])}`", "",
             "| P | threads / process | rank | rows | halo rows | raw CSR ms | product ms | bytes per product | "
             "LP ms/it | LP / raw | Lap ms/it | Lap / raw | fit s | peak GB |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for P, rs in rows.items():
        for r in rs:
            lines.append(f"| {P} | {r['threads']} | {r['rank']} | {r['rows']} | {r['halo']} | {r['raw_ms']:.2f} | "
                         f"{r['product_ms']:.2f} | {r['bytes_per_product']:.3g} | {r['lp_ms']:.2f} | "
                         f"{r['lp_ms'] / r['raw_ms']:.2f} | {r['lap_ms']:.2f} | {r['lap_ms'] / r['raw_ms']:.2f} | "
                         f"{r['fit_s']:.1f} | {r['peak_gb']:.3f} |")
    lines += ["", "Peak resident memory (GB) after each phase, per process: "
              + "; ".join(f"P = {P} rank {r['rank']}: " + ", ".join(f"{k} {v:.3f}" for k, v in r["phases"].items())
                          for P, rs in rows.items() for r in rs)]
    one, many = rows[args.procs[0]], rows[args.procs[-1]]
    Pm = args.procs[-1]
    peak1, peakm = max(r["peak_gb"] for r in one), max(r["peak_gb"] for r in many)
    it1 = max(r["lp_ms"] for r in one), max(r["lap_ms"] for r in one)
    itm = max(r["lp_ms"] for r in many), max(r["lap_ms"] for r in many)
    s1, sm = one[0]["scores"], many[0]["scores"]
    diff = max(float((torch.tensor(sm[k]) - torch.tensor(s1[k])).abs().max()) for k in s1)
    scale = max(float(torch.tensor(s1[k]).abs().max()) for k in s1)
    base = max(r["phases"]["start"] for rs in rows.values() for r in rs)
    ok = lambda b: "PASS" if b else "FAIL"  # noqa: E731
    lines += ["", "Targets:", "",
              f"- {ok(peakm <= 0.6 * peak1)}: peak memory per process at P = {Pm}: {peakm:.3f} GB <= 0.6 x "
              f"{peak1:.3f} GB (P = {args.procs[0]}) = {0.6 * peak1:.3f} GB (above the {base:.3f} GB every process "
              f"holds after its imports: {peakm - base:.3f} GB against {peak1 - base:.3f} GB, "
              f"{(peakm - base) / max(peak1 - base, 1e-9):.2f} x)",
              f"- {ok(itm[0] <= 1.2 * it1[0])}: Label-Prop per iteration at P = {Pm} ({max(1, args.threads // Pm)} "
              f"thread each): {itm[0]:.2f} ms <= 1.2 x {it1[0]:.2f} ms (P = {args.procs[0]}, "
              f"{max(1, args.threads // args.procs[0])} threads)",
              f"- {ok(itm[1] <= 1.2 * it1[1])}: Algorithm 2 per iteration at P = {Pm}: {itm[1]:.2f} ms <= 1.2 x "
              f"{it1[1]:.2f} ms",
              f"- {ok(diff <= 1e-5 * max(1.0, scale))}: scores of {args.score_nodes} nodes at P = {Pm} equal P = "
              f"{args.procs[0]}: largest difference {diff:.2e} (target 1e-5, float32)",
              "", f"Generation {t_gen:.1f} s, partitioned forms written in {t_part:.1f} s (0 where a stored form was "
                  f"reused); peak memory of the process that generated and wrote them: {parent_peak:.3f} GB."]
    text = "\n".join(lines)
    print(text)
    if args.write:
        _write(args.write, text)
    return 0


def _write(path: str, text: str) -> None:
    begin, end = "<!-- scale:begin -->", "<!-- scale:end -->"
    doc = Path(path).read_text()
    if begin in doc and end in doc:
        doc = doc[:doc.index(begin) + len(begin)] + "\n" + text + "\n" + doc[doc.index(end):]
    else:
        doc += f"\n{begin}\n{text}\n{end}\n"
    Path(path).write_text(doc)


def add_arguments(ap) -> None:
    ap.add_argument("--procs", type=int, nargs="+", default=None,
                    help="process counts to compare, e.g. --procs 1 2 (the labelled generator, partitioned)")
    ap.add_argument("--homophily", type=float, default=0.8)
    ap.add_argument("--method", choices=("contiguous", "rcm", "metis"), default="rcm")
    ap.add_argument("--store", default=None, help="keep the partitioned forms here (reused when they match)")
    ap.add_argument("--reps", type=int, default=5, help="timed repetitions of one product")
    ap.add_argument("--score-nodes", type=int, default=2000)
    ap.add_argument("--timeout", type=float, default=3600.0, help="seconds before the processes are stopped")
    ap.add_argument("--write", default=None, help="put the output between <!-- scale:begin/end --> in this file")


if __name__ == "__main__":
    import argparse
    import sys

    if sys.argv[1:] == ["--quick"]:   # a check that it runs (seconds): scale.py --quick with 1 and 2 processes
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from scale import main

        sys.exit(main(["--quick", "--procs", "1", "2"]))
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--store")
    ap.add_argument("--out")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--labeled", type=float, default=0.01)
    ap.add_argument("--score-nodes", type=int, default=2000)
    ap.add_argument("--eta", type=float, default=0.99)
    ap.add_argument("--beta", type=float, default=1e-2)
    ap.add_argument("--seed", type=int, default=0)
    worker(ap.parse_args())
