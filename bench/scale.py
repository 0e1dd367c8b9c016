"""One 10^8-edge graph on one machine: Label-Prop, SP-Lap (t) and SP-poly (i) in float32.

Run from the repository root::

    python bench/scale.py                        # 10^7 nodes, 10^8 directed edges (checks free memory first)
    python bench/scale.py --quick                # a check that it runs (seconds): 10^4 nodes, 10^5 edges
    python bench/scale.py --procs 1 2 --nodes 1e6 --edges 2e7   # 1 process vs 2 on the labelled graph

With ``--procs``, the graph is the labelled :func:`graphstk.data.make_dcsbm` (``--edges`` entries of
its ``edge_index``, i.e. half as many undirected edges), partitioned once per process count, and
one process (all ``--threads``) is compared with ``P`` processes sharing them (``bench/scale_procs.py``).

It builds a random undirected graph with ``--nodes`` nodes and ``--edges`` entries of its
``edge_index`` (``edges / 2`` random pairs, each stored in both directions), generated in
chunks of ``--chunk`` pairs from a seeded generator: never as a Python list and never as one
``[2, E]`` int64 COO tensor. The CSR matrix ``S = D^{-1/2} W D^{-1/2}`` is assembled in place
(int32 column indices, float32 values: 800 MB at 10^8 entries) by two passes over the same
chunks (degree counts, then a scatter of each chunk into its rows' slots).

On it, with ``--classes`` classes and ``--labeled`` of the nodes labeled, it runs the engines
of :func:`graphstk.methods.engine.solve` unchanged (they only need ``S @ X``):

* ``LP``: Label-Prop (Eq. 22), ``--iters`` Richardson steps (Zhou's iteration);
* ``SP-Lap (t)``: STKR inverse Laplacian (Algorithm 2), ``--iters`` Richardson steps;
* ``SP-poly (i)``: STKR ``s(l) = l^8`` (Algorithm 1, ``--iters`` Richardson steps, 6 full
  products of ``S`` an iteration plus two with its labeled rows / columns), on the visible graph with ``--hidden`` of the nodes hidden (their
  edges dropped and degrees counted over visible nodes: the inductive setting); its time per
  iteration is marginal, ``(time(T) - time(1)) / (T - 1)``, set-up and prediction excluded.

It prints, per method, the time per iteration, its ratio to one raw ``torch.sparse.mm(S, X)``
with ``X`` ``[N, C]`` timed in the same process, and the peak resident memory of the process
(``graphstk.memory.peak_rss_gb``). Target: it completes and the peak stays under 16 GB.

The machine may be shared: the script refuses to start (exit status 3, with a message) when
``MemAvailable`` in ``/proc/meminfo`` is below ``--min-free-gb`` (default 18).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import scipy.sparse as sp
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from graphstk.methods.engine import solve  # noqa: E402
from graphstk.methods.problem import Problem  # noqa: E402
from graphstk.memory import memory_available, peak_rss_gb  # noqa: E402
from graphstk.operators.base import KernelOperator, SparseOperator  # noqa: E402
from graphstk.spectral.transforms import InverseLaplacian, LabelPropagationFilter, Polynomial  # noqa: E402


class CSROperator(KernelOperator):
    """``S @ X`` with a prebuilt ``torch.sparse_csr`` tensor (int32 indices), nothing else stored."""

    def __init__(self, csr: torch.Tensor):
        self.csr = csr

    shape = property(lambda self: tuple(self.csr.shape))
    dtype = property(lambda self: self.csr.dtype)
    device = property(lambda self: self.csr.device)

    def _matmul(self, x):
        return torch.sparse.mm(self.csr, x)

    def block(self, rows=None, cols=None):
        """``S[rows, :]`` or ``S[:, cols]`` (what Algorithm 1 asks for: the labeled rows / columns;
        ``S`` is symmetric, so the columns are the transposed rows), or ``S[rows, cols]`` as a
        :class:`~graphstk.operators.base.SparseOperator` (the labeled block Algorithm 2's step
        certificate reads)."""
        if rows is None and cols is None:
            raise NotImplementedError("a row block, a column block or both")
        idx = (rows if rows is not None else cols).cpu().numpy()
        c = self.csr
        a = sp.csr_matrix((c.values().numpy(), c.col_indices().numpy(), c.crow_indices().numpy()),
                          shape=tuple(c.shape))[idx]
        if rows is not None and cols is not None:
            a = a[:, cols.cpu().numpy()].tocoo()
            return SparseOperator(torch.from_numpy(a.row.astype(np.int64)), torch.from_numpy(a.col.astype(np.int64)),
                                  torch.from_numpy(a.data), a.shape)
        if cols is not None:
            a = a.T.tocsr()
        return CSROperator(torch.sparse_csr_tensor(torch.from_numpy(a.indptr.astype(np.int64)),
                                                   torch.from_numpy(a.indices.astype(np.int64)),
                                                   torch.from_numpy(a.data), a.shape))

    def to_dense(self):  # pragma: no cover
        raise NotImplementedError

    def to(self, device=None, dtype=None):  # pragma: no cover
        raise NotImplementedError

    T = property(lambda self: self)  # symmetric

    def diagonal(self):  # pragma: no cover
        raise NotImplementedError


def _pairs(seed: int, chunk_id: int, size: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng([seed, chunk_id])
    return rng.integers(0, n, size, dtype=np.int32), rng.integers(0, n, size, dtype=np.int32)


def build_graph(n: int, n_edges: int, chunk: int, seed: int, hidden: np.ndarray | None, dtype, log):
    """CSR of ``S = D^{-1/2} W D^{-1/2}`` over the visible nodes (all nodes if ``hidden`` is None).

    Returns ``(csr, visible_ids)``; hidden nodes are removed and the rest renumbered.
    """
    pairs = n_edges // 2
    chunks = [(i, min(chunk, pairs - i * chunk)) for i in range((pairs + chunk - 1) // chunk)]
    keep_node = np.ones(n, dtype=bool)
    if hidden is not None:
        keep_node[hidden] = False
    new_id = np.cumsum(keep_node, dtype=np.int64) - 1
    nv = int(keep_node.sum())

    def chunk_edges(ci, size):
        u, v = _pairs(seed, ci, size, n)
        if hidden is not None:
            ok = keep_node[u] & keep_node[v]
            u, v = new_id[u[ok]].astype(np.int32), new_id[v[ok]].astype(np.int32)
        return u, v

    deg = np.zeros(nv, dtype=np.int64)
    for ci, size in chunks:  # pass 1: degrees (both directions of every pair)
        u, v = chunk_edges(ci, size)
        deg += np.bincount(u, minlength=nv) + np.bincount(v, minlength=nv)
    nnz = int(deg.sum())
    if nnz >= 2 ** 31:
        raise ValueError(f"{nnz} entries do not fit int32 CSR indices")
    crow = np.zeros(nv + 1, dtype=np.int64)
    np.cumsum(deg, out=crow[1:])
    col = np.empty(nnz, dtype=np.int32)
    fill = crow[:-1].copy()
    t0 = time.perf_counter()
    for ci, size in chunks:  # pass 2: scatter every chunk into its rows' slots
        u, v = chunk_edges(ci, size)
        r = np.concatenate([u, v])
        c = np.concatenate([v, u])
        del u, v
        order = np.argsort(r, kind="stable")
        r, c = r[order], c[order]
        del order
        cnt = np.bincount(r, minlength=nv)
        first = np.zeros(nv + 1, dtype=np.int64)
        np.cumsum(cnt, out=first[1:])
        pos = fill[r] + (np.arange(r.size, dtype=np.int64) - first[r])
        col[pos] = c
        fill += cnt
        del r, c, pos, cnt, first
        log(f"  chunk {ci + 1}/{len(chunks)} scattered ({time.perf_counter() - t0:.0f} s)")
    del fill
    dis = np.zeros(nv, dtype=np.float64)
    dis[deg > 0] = deg[deg > 0] ** -0.5
    val = np.empty(nnz, dtype=np.float32 if dtype == torch.float32 else np.float64)
    step = max(1, nv // 20)
    for lo in range(0, nv, step):  # values row block by row block: dis[row] * dis[col]
        hi = min(nv, lo + step)
        a, b = crow[lo], crow[hi]
        rows = np.repeat(np.arange(lo, hi, dtype=np.int64), deg[lo:hi])
        val[a:b] = dis[rows] * dis[col[a:b]]
        del rows
    csr = torch.sparse_csr_tensor(torch.from_numpy(crow.astype(np.int32)), torch.from_numpy(col),
                                  torch.from_numpy(val), (nv, nv), check_invariants=False)
    return csr, np.nonzero(keep_node)[0], dis


def timed(fn, *args, **kw):
    t0 = time.perf_counter()
    out = fn(*args, **kw)
    return out, time.perf_counter() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=float, default=1e7)
    ap.add_argument("--edges", type=float, default=1e8, help="entries of edge_index (directed edges)")
    ap.add_argument("--chunk", type=float, default=1e7, help="pairs generated per chunk")
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--labeled", type=float, default=0.01)
    ap.add_argument("--hidden", type=float, default=0.01, help="fraction hidden for SP-poly (i)")
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--eta", type=float, default=0.99)
    ap.add_argument("--beta", type=float, default=1e-2)
    ap.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    ap.add_argument("--threads", type=int, default=None,
                    help="torch threads (default 1; with --procs: in all, split over the processes, default max(procs))")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--min-free-gb", type=float, default=18.0)
    ap.add_argument("--skip", nargs="*", default=[], choices=["lp", "lap", "poly"])
    ap.add_argument("--out", default=None, help="also write the table here")
    from scale_procs import add_arguments, run as run_procs

    ap.add_argument("--quick", action="store_true",
                    help="a check that the script runs (seconds): 10^4 nodes, 10^5 edges, 3 iterations")
    add_arguments(ap)
    args = ap.parse_args(argv)
    if args.quick:
        args.nodes, args.edges, args.chunk, args.iters, args.min_free_gb = 1e4, 1e5, 1e5, 3, 0.0
        args.reps, args.score_nodes, args.timeout = 1, 200, 600.0
    if args.procs:   # one process against P on the labelled generator, partitioned (bench/scale_procs.py)
        args.threads = args.threads or max(args.procs)
        return run_procs(args)
    args.threads = args.threads or 1
    n, n_edges, chunk = int(args.nodes), int(args.edges), int(args.chunk)
    free = memory_available()[0] / 2 ** 30
    if free < args.min_free_gb:
        print(f"scale.py: only {free:.1f} GB available (graphstk.memory.memory_available), below --min-free-gb={args.min_free_gb:g}; "
              "not started (the machine is shared: run it when more memory is free)", file=sys.stderr)
        return 3
    torch.set_num_threads(args.threads)
    dtype = getattr(torch, args.dtype)

    def log(msg):
        print(f"[{time.strftime('%H:%M:%S')} rss {peak_rss_gb():.2f} GB] {msg}", flush=True)

    log(f"{n:,} nodes, {n_edges:,} directed edges, {args.classes} classes, {args.dtype}, "
        f"{args.threads} thread(s), {free:.1f} GB available at start")
    rng = np.random.default_rng(args.seed + 1)
    y = torch.from_numpy(rng.integers(0, args.classes, n))
    train = torch.from_numpy(np.sort(rng.choice(n, int(args.labeled * n), replace=False)))
    rows = []

    def raw_time(S, C):
        X = torch.randn(S.shape[0], C, dtype=dtype)
        torch.sparse.mm(S.csr, X)
        ts = []
        for _ in range(3):
            _, t = timed(torch.sparse.mm, S.csr, X)
            ts.append(t)
        return sorted(ts)[1]

    def report(name, t_total, iters, products_per_iter, raw):
        per = t_total / iters
        rows.append((name, iters, per, per / raw, per / (raw * products_per_iter), peak_rss_gb()))
        log(f"{name}: {iters} iterations in {t_total:.1f} s, {per:.2f} s/iteration = {per / raw:.2f} x raw "
            f"({products_per_iter} product(s) an iteration: {per / (raw * products_per_iter):.2f} x raw each)")

    if "lp" not in args.skip or "lap" not in args.skip:
        (csr, _, _), t = timed(build_graph, n, n_edges, chunk, args.seed, None, dtype, log)
        log(f"built S: {csr._nnz():,} entries in {t:.0f} s")
        S = CSROperator(csr)
        kernel = SimpleNamespace(S=S, num_visible=n, lambda_max=1.0, device=torch.device("cpu"), dtype=dtype)
        Y = torch.nn.functional.one_hot(y[train], args.classes).to(dtype)
        prob = Problem(S, 1.0, train, Y)               # S = D^-1/2 W D^-1/2: lambda_1 = 1 (Eq. 23)
        raw = raw_time(S, args.classes)
        log(f"raw product S @ X[{n}, {args.classes}]: {raw:.3f} s")
        rows.append(("raw product", 1, raw, 1.0, 1.0, peak_rss_gb()))
        if "lp" not in args.skip:
            _, t = timed(solve, prob, [LabelPropagationFilter(args.eta)], solver="richardson", budgets=(args.iters,))
            report("LP (Richardson)", t, args.iters, 1, raw)
        if "lap" not in args.skip:
            _, t = timed(solve, prob, [InverseLaplacian(args.eta)], [args.beta], solver="richardson",
                         budgets=(args.iters,))
            report("SP-Lap (t) (Algorithm 2)", t, args.iters, 1, raw)
        del prob, kernel, S, csr, Y
    if "poly" not in args.skip:
        hidden = np.sort(rng.choice(n, int(args.hidden * n), replace=False))
        (csr, visible, _), t = timed(build_graph, n, n_edges, chunk, args.seed, hidden, dtype, log)
        log(f"built the visible graph ({visible.size:,} nodes, {csr._nnz():,} entries) in {t:.0f} s")
        S = CSROperator(csr)
        nv = visible.size
        kernel = SimpleNamespace(S=S, num_visible=nv, lambda_max=1.0, device=torch.device("cpu"), dtype=dtype)
        g2l = np.full(n, -1, dtype=np.int64)
        g2l[visible] = np.arange(nv)
        tr = torch.from_numpy(g2l[train.numpy()])
        tr = tr[tr >= 0]
        Y = torch.nn.functional.one_hot(y[torch.from_numpy(visible)][tr], args.classes).to(dtype)
        prob = Problem(S, 1.0, tr, Y)
        raw = raw_time(S, args.classes)
        tr8 = Polynomial.monomial(8)
        res, t1 = timed(solve, prob, [tr8], [args.beta], solver="richardson", budgets=(1,))
        res, t = timed(solve, prob, [tr8], [args.beta], solver="richardson", budgets=(args.iters,))
        per_iter = (t - t1) / (args.iters - 1) if args.iters > 1 else t
        report("SP-poly (i) l^8 (Algorithm 1)", per_iter * args.iters, args.iters, 6, raw)
        log(f"  (whole call with {args.iters} iterations and the final prediction: {t:.1f} s)")
        del res
    print()
    print("| method | iterations | s / iteration | x raw product | x raw per product | peak RSS (GB) |")
    print("|---|---|---|---|---|---|")
    for name, it, per, ratio, each, rss in rows:
        print(f"| {name} | {it} | {per:.3f} | {ratio:.2f} | {each:.2f} | {rss:.2f} |")
    peak = peak_rss_gb()
    verdict = f"peak resident memory {peak:.2f} GB: {'PASS' if peak < 16 else 'FAIL'} (target < 16 GB)"
    print("\n" + verdict)
    if args.out:
        table = ["| method | iterations | s / iteration | x raw product | x raw per product | peak RSS (GB) |",
                 "|---|---|---|---|---|---|"]
        table += [f"| {r[0]} | {r[1]} | {r[2]:.3f} | {r[3]:.2f} | {r[4]:.2f} | {r[5]:.2f} |" for r in rows]
        Path(args.out).write_text(f"bench/scale.py: {n:,} nodes, {n_edges:,} directed edges, {args.dtype}, "
                                  f"{args.threads} thread(s), load average {os.getloadavg()[0]:.1f}\n\n"
                                  + "\n".join(table) + "\n\n" + verdict + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
