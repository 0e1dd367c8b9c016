"""Per-iteration cost of the propagation engines against one raw sparse product and PyG.

Run from the repository root::

    python bench/propagation.py                     # sizes 1e4 1e5 1e6, float32 and float64
    python bench/propagation.py --quick             # a check that it runs: 2000 nodes, seconds
    python bench/propagation.py --sizes 1e5 --dtype float64 --threads 1

On random undirected graphs (``--edges-per-node`` random pairs per node, symmetrized
and coalesced: about ``2 * edges-per-node`` neighbours a node, so ``20 N`` entries of
``edge_index``, 2M at ``N = 1e5``), ``C`` classes and 1% labeled nodes, it measures
side by side in one process, per iteration:

* ``raw``: one ``torch.sparse.mm(S.csr, X)`` with ``X`` ``[N, C]`` of the same dtype;
* ``LP fused``: the hand-written lower bound ``X <- addmm([Y; 0], S, X, alpha=eta)``;
* ``LP rich`` / ``LP cg``: :func:`graphstk.methods.labelprop.label_propagation` with a
  fixed budget ``budgets=(T,), tol=0`` (Richardson = Zhou's iteration; CG);
* ``Lap rich`` / ``Lap gmres``: :func:`stkr_reciprocal` with ``InverseLaplacian(eta)``
  (Algorithm 2; GMRES runs ``T`` products with ``tol=0``);
* ``poly8 rich``: :func:`stkr_polynomial` with ``s(l) = l^8`` (Algorithm 1: 8 products
  per iteration);
* ``PyG LP``: ``torch_geometric.nn.models.LabelPropagation(num_layers=T)`` on
  ``edge_index`` with the normalized ``edge_weight`` precomputed (so ``gcn_norm`` is not
  counted) and its default clamping.

Per-iteration time is the marginal cost of an iteration: ``(time of a call running T
iterations - time of a call running 1) / (T - 1)``, so engine set-up and final
prediction products (7 for ``l^8``) are not counted, and everything an iteration does
(operator, solver update, residual norms if the solver computes them) is. Every repeat
times all methods in turn and divides by the raw product timed in the same repeat, so a
machine shared with other jobs biases the ratios as little as possible; the table shows
the median over repeats (``best``: fastest repeat over fastest raw repeat, in the
markdown report). Then it counts iterations to ``tol`` (default 1e-6) of Richardson
against the Krylov solvers (CG for Label-Prop and ``l^8``, GMRES for the inverse
Laplacian) on the graphs of ``--tol-sizes`` (default 1e4), as generated and with
self-loops of weight ``degree + 1`` (``psd``: ``W`` positive definite, the regime where
Richardson for Algorithm 2 converges).

Targets: Label-Prop and inverse-Laplacian STKR-Prop
at most 1.5x the raw product per iteration, and Label-Prop at least 3x faster per
iteration than PyG's ``LabelPropagation`` at 2M edges.
"""
from __future__ import annotations

import argparse
import gc
import os
import platform
import statistics
import sys
import time
import warnings
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from graphstk.memory import reuse_freed_memory  # noqa: E402
from graphstk.methods.engine import solve  # noqa: E402
from graphstk.methods.problem import make_problem  # noqa: E402
from graphstk.memory import peak_rss_gb  # noqa: E402
from graphstk.operators.graph import GraphKernel  # noqa: E402
from graphstk.spectral.solvers import ConvergenceError, ConvergenceWarning  # noqa: E402
from graphstk.spectral.transforms import InverseLaplacian, LabelPropagationFilter, Polynomial  # noqa: E402

TARGET_RAW = 1.5      # per-iteration cost / raw product, Label-Prop and inverse Laplacian
TARGET_PYG = 3.0      # PyG per layer / Label-Prop per iteration, at 2M edges
TARGET_EDGES = 2_000_000

METHODS = ["raw", "LP fused", "LP rich", "LP cg", "Lap rich", "Lap gmres", "poly8 rich", "PyG LP"]


def parse_size(s: str) -> int:
    return int(float(s))


def random_graph(N: int, edges_per_node: int, seed: int) -> torch.Tensor:
    """``edges_per_node * N`` random pairs, self-loops dropped, symmetrized and coalesced."""
    from torch_geometric.utils import to_undirected
    g = torch.Generator().manual_seed(seed)
    e = torch.randint(0, N, (2, edges_per_node * N), generator=g)
    e = e[:, e[0] != e[1]]
    return to_undirected(e, num_nodes=N)


def psd_weights(edge_index: torch.Tensor, N: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Add self-loops of weight ``degree + 1``: ``W`` becomes diagonally dominant, hence
    positive definite, and ``S`` has no negative eigenvalue (Richardson's regime)."""
    deg = torch.zeros(N, dtype=torch.float64).index_add_(0, edge_index[0], torch.ones(edge_index.shape[1],
                                                                                       dtype=torch.float64))
    loops = torch.arange(N)
    ei = torch.cat([edge_index, torch.stack([loops, loops])], 1)
    w = torch.cat([torch.ones(edge_index.shape[1], dtype=torch.float64), deg + 1.0])
    return ei, w


CLOCK = time.perf_counter


def timed(fn) -> float:
    t0 = CLOCK()
    fn()
    return CLOCK() - t0


class Case:
    """One graph in one dtype: the problem, the operands and the timed callables."""

    def __init__(self, edge_index, N, C, labeled, dtype, seed, edge_weight=None):
        self.N, self.dtype, self.edge_index = N, dtype, edge_index
        t0 = time.perf_counter()
        self.kernel = GraphKernel(edge_index, N, edge_weight=edge_weight, dtype=dtype)
        self.build_s = time.perf_counter() - t0
        g = torch.Generator().manual_seed(seed + 1)
        n = max(1, int(round(labeled * N)))
        train = torch.randperm(N, generator=g)[:n]
        y = torch.randint(0, C, (N,), generator=g)
        self.prob = make_problem(self.kernel, y, train, C)
        self.X = torch.randn(N, C, generator=g, dtype=torch.float64).to(dtype)
        self.y, self.train = y, train

    def raw_time(self) -> float:
        csr, X = self.kernel.S.csr, self.X
        torch.sparse.mm(csr, X)
        return statistics.median(timed(lambda: torch.sparse.mm(csr, X)) for _ in range(3))

    def setup(self, eta, beta, T, T_poly, methods):
        """Each timed callable runs ``t`` iterations of its method; see :meth:`per_iteration`."""
        self.T, self.T_poly = T, T_poly
        prob, csr, X, N, dtype = self.prob, self.kernel.S.csr, self.X, self.N, self.dtype
        C = prob.C
        b = prob.scatter(prob.Y)
        lap, poly = InverseLaplacian(eta), Polynomial.monomial(8)

        def raw(t):
            for _ in range(t):
                torch.sparse.mm(csr, X)

        def lp_fused(t):
            x = b
            for _ in range(t - 1):
                x = torch.addmm(b, csr, x, alpha=eta)

        fns = {
            "raw": (raw, T),
            "LP fused": (lp_fused, T),
            "LP rich": (lambda t: solve(prob, [LabelPropagationFilter(eta)], solver="richardson", budgets=(t,), tol=0.0), T),
            "LP cg": (lambda t: solve(prob, [LabelPropagationFilter(eta)], solver="cg", budgets=(t,), tol=0.0), T),
            # the cost of an iteration, measured whether or not a stable step exists for these labels
            "Lap rich": (lambda t: solve(prob, [lap], [beta], solver="richardson", budgets=(t,),
                                                     tol=0.0, unstable="run"), T),
            "Lap gmres": (lambda t: solve(prob, [lap], [beta], solver="gmres", max_iter=t, tol=0.0), T),
            "poly8 rich": (lambda t: solve(prob, [poly], [beta], solver="richardson", budgets=(t,),
                                                       tol=0.0), T_poly),
        }
        if "PyG LP" in methods:
            from torch_geometric.nn.conv.gcn_conv import gcn_norm
            from torch_geometric.nn.models import LabelPropagation as PyGLP
            ei, ew = gcn_norm(self.edge_index, num_nodes=N, add_self_loops=False)
            ew = ew.to(dtype)
            mask = torch.zeros(N, dtype=torch.bool)
            mask[self.train] = True
            y_oh = torch.nn.functional.one_hot(self.y, C).to(dtype)
            pyg = PyGLP(num_layers=T, alpha=eta)

            def pyg_lp(t):  # default post-step: clamp to [0, 1]
                pyg.num_layers = t
                pyg(y_oh, ei, mask, ew)

            fns["PyG LP"] = (pyg_lp, T)
        self.fns = {k: v for k, v in fns.items() if k in methods}

    @staticmethod
    def per_iteration(fn, T: int) -> float:
        """``(time(T iterations) - time(1 iteration)) / (T - 1)``: the marginal cost of an
        iteration, without the set-up of the call or its final prediction products."""
        hi = timed(lambda: fn(T))
        lo = timed(lambda: fn(1))
        # a preempted short call can make hi - lo meaningless: then fall back to hi / T
        return (hi - lo) / (T - 1) if hi > lo else hi / T

    def run(self, repeats: int) -> dict[str, dict[str, float]]:
        for fn, T in self.fns.values():  # warm-up
            fn(2)
        times = {k: [] for k in self.fns}
        ratios = {k: [] for k in self.fns}
        names = list(self.fns)
        for r in range(repeats):
            # rotate the order so that no method always runs right after the same neighbour
            order = names[r % len(names):] + names[: r % len(names)]
            got = {k: self.per_iteration(*self.fns[k]) for k in order}
            for k in names:
                times[k].append(got[k])
                ratios[k].append(got[k] / got["raw"])
        return {k: {"time": statistics.median(times[k]), "ratio": statistics.median(ratios[k]),
                    "best": min(times[k]) / min(times["raw"]),
                    "ratio_min": min(ratios[k]), "ratio_max": max(ratios[k])} for k in names}


CAPS = dict(richardson=5000, richardson_alg2=2000, richardson_poly=300, krylov=1000)  # iteration caps


def iterations_to_tol(case: Case, eta: float, beta: float, tol: float, caps: dict[str, int]) -> list[dict]:
    prob = case.prob
    lap, poly = InverseLaplacian(eta), Polynomial.monomial(8)
    runs = [
        ("Label-Prop", "richardson", lambda: solve(prob, [LabelPropagationFilter(eta)], solver="richardson",
                                                                  max_iter=caps["richardson"], tol=tol)),
        ("Label-Prop", "cg", lambda: solve(prob, [LabelPropagationFilter(eta)], solver="cg", max_iter=caps["krylov"], tol=tol)),
        ("STKR inv. Laplacian", "richardson", lambda: solve(prob, [lap], [beta], solver="richardson",
                                                                         max_iter=caps["richardson_alg2"], tol=tol)),
        ("STKR inv. Laplacian", "gmres", lambda: solve(prob, [lap], [beta], solver="gmres",
                                                                    max_iter=caps["krylov"], tol=tol)),
        ("STKR l^8", "richardson", lambda: solve(prob, [poly], [beta], solver="richardson",
                                                              max_iter=caps["richardson_poly"], tol=tol)),
        ("STKR l^8", "cg", lambda: solve(prob, [poly], [beta], solver="cg", max_iter=caps["krylov"],
                                                      tol=tol)),
    ]
    out = []
    for method, solver, fn in runs:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            t0 = time.perf_counter()
            try:
                res = fn()
            except ConvergenceError as err:  # a diverging solve raises (its result is not usable)
                h = err.result                # None: refused before iterating (no stable step exists)
                out.append(dict(method=method, solver=solver, iters=h.n_iter if h is not None else 0,
                                converged="diverges" if h is not None else "no stable step",
                                residual=h.residuals[-1] if h is not None and h.residuals else float("nan"),
                                wall=time.perf_counter() - t0))
                continue
            wall = time.perf_counter() - t0
        h = res.history[-1]
        out.append(dict(method=method, solver=solver, iters=h.n_iter, converged=h.converged,
                        residual=h.residuals[-1] if h.residuals else float("nan"), wall=wall))
    return out


def fmt_ms(s: float) -> str:
    return f"{s * 1e3:.2f}" if s < 1 else f"{s * 1e3:.0f}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", nargs="+", type=parse_size, default=None,
                    help="numbers of nodes (default 1e4 1e5 1e6; --quick: 1e4 1e5)")
    ap.add_argument("--dtype", nargs="+", choices=["float32", "float64"], default=["float32", "float64"])
    ap.add_argument("--repeats", type=int, default=None, help="timed repeats per method (default 7; --quick: 3)")
    ap.add_argument("--iters", type=int, default=None,
                    help="iterations T per timed call (default: about 0.3 s of raw products, in [3, 50])")
    ap.add_argument("--threads", type=int, default=os.cpu_count(), help="torch.set_num_threads (default: all cores)")
    ap.add_argument("--edges-per-node", type=int, default=10, help="random pairs drawn per node before symmetrizing")
    ap.add_argument("--classes", type=int, default=8)
    ap.add_argument("--labeled", type=float, default=0.01, help="fraction of labeled nodes")
    ap.add_argument("--eta", type=float, default=0.99)
    ap.add_argument("--beta", type=float, default=1e-2)
    ap.add_argument("--tol", type=float, default=1e-6, help="tolerance of the iterations-to-tol table")
    ap.add_argument("--tol-sizes", nargs="*", type=parse_size, default=None,
                    help="sizes for the iterations-to-tol table (default 1e4; 1e5 takes about 10 minutes)")
    ap.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                    help="wall: time.perf_counter (default); cpu: time.process_time, CPU time of this process, "
                         "less sensitive to other jobs on a shared machine (use with --threads 1: idle OpenMP "
                         "threads spin and count as CPU time)")
    ap.add_argument("--malloc", choices=["reuse", "default"], default="reuse",
                    help="reuse: keep freed large blocks for reuse, as run.py does (graphstk/memory.py; default); "
                         "default: glibc's defaults (every large temporary is fresh, zero-filled memory)")
    ap.add_argument("--no-pyg", action="store_true", help="skip PyG's LabelPropagation")
    ap.add_argument("--quick", action="store_true",
                    help="a check that the script runs (seconds): 2000 nodes, float64, 1 repeat, no report file")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None,
                    help="markdown report (default bench/results.md; --quick: none)")
    args = ap.parse_args(argv)

    if args.out is None and not args.quick:
        args.out = Path(__file__).resolve().parent / "results.md"
    if args.quick:
        args.dtype = ["float64"] if args.dtype == ["float32", "float64"] else args.dtype
        args.threads = min(args.threads, 2)
    sizes = args.sizes or ([2000] if args.quick else [10 ** 4, 10 ** 5, 10 ** 6])
    repeats = args.repeats or (1 if args.quick else 7)
    tol_sizes = args.tol_sizes if args.tol_sizes is not None else ([500] if args.quick else [10 ** 4])
    caps = {k: min(v, 50) for k, v in CAPS.items()} if args.quick else CAPS
    torch.set_num_threads(args.threads)
    args.malloc_applied = args.malloc == "reuse" and reuse_freed_memory()   # the report names what is in effect
    global CLOCK
    CLOCK = time.perf_counter if args.clock == "wall" else time.process_time
    methods = [m for m in METHODS if not (args.no_pyg and m == "PyG LP")]
    warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")

    load0 = os.getloadavg()
    machine = (f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores "
               f"({_cpu_name()}), torch {torch.__version__} with {torch.get_num_threads()} threads, "
               f"python {platform.python_version()}")
    print(f"# machine: {machine}")
    print(f"# load average at start: {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}")
    if load0[0] > (os.cpu_count() or 1) - 0.5 and (args.threads > 1 or args.clock == "wall"):
        print(f"# warning: other jobs keep the {os.cpu_count()} cores busy (load {load0[0]:.1f}); wall-clock timings "
              "with several OpenMP threads are unreliable then: prefer --threads 1 --clock cpu")
    print(f"# eta={args.eta} beta={args.beta} classes={args.classes} labeled={args.labeled} repeats={repeats} "
          f"clock={args.clock} allocator={'freed blocks reused' if args.malloc_applied else 'defaults'}")

    rows, tol_rows = [], []
    head = (f"{'N':>8} {'edges':>10} {'dtype':>7} {'T':>3} {'raw ms':>8} | "
            + " ".join(f"{m:>10}" for m in methods[1:]) + f" | {'PyG/LP':>6} {'PyG/Lap':>7}")
    print("\nper-iteration cost as a multiple of one raw torch.sparse.mm(S, X[N, C]) (median of repeats)")
    print(head)
    print("-" * len(head))
    for N in sizes:
        t0 = time.perf_counter()
        edge_index = random_graph(N, args.edges_per_node, args.seed)
        gen_s = time.perf_counter() - t0
        E = edge_index.shape[1]
        for dt_name in args.dtype:
            dtype = getattr(torch, dt_name)
            case = Case(edge_index, N, args.classes, args.labeled, dtype, args.seed)
            T = args.iters or max(3, min(50, int(round(0.3 / max(case.raw_time(), 1e-9)))))
            T_poly = max(3, T // 4)
            case.setup(args.eta, args.beta, T, T_poly, methods)
            res = case.run(repeats)
            row = dict(N=N, E=E, dtype=dt_name, T=T, T_poly=T_poly, build_s=case.build_s, gen_s=gen_s, res=res)
            if "PyG LP" in res:
                row["pyg_lp"] = res["PyG LP"]["time"] / res["LP rich"]["time"]
                row["pyg_lap"] = res["PyG LP"]["time"] / res["Lap rich"]["time"]
            rows.append(row)
            print(f"{N:>8} {E:>10} {dt_name:>7} {T:>3} {fmt_ms(res['raw']['time']):>8} | "
                  + " ".join(f"{res[m]['ratio']:>9.2f}x" for m in methods[1:])
                  + (f" | {row['pyg_lp']:>5.1f}x {row['pyg_lap']:>6.1f}x" if "pyg_lp" in row else ""), flush=True)
            del case
            gc.collect()
        del edge_index
        gc.collect()
        print(f"{'':>8} (graph {gen_s:.1f} s, GraphKernel {rows[-1]['build_s']:.1f} s, peak RSS {peak_rss_gb():.1f} GiB)")

    if tol_sizes:
        print(f"\niterations to relative residual {args.tol:g} (float64, eta={args.eta}, beta={args.beta}; "
              f"caps: {caps})")
        print(f"{'N':>8} {'graph':>6} {'method':>20} {'solver':>11} {'iters':>7} {'converged':>9} {'residual':>9} "
              f"{'wall s':>8}")
    for N in tol_sizes:
        edge_index = random_graph(N, args.edges_per_node, args.seed)
        for graph in ("plain", "psd"):
            ei, w = (edge_index, None) if graph == "plain" else psd_weights(edge_index, N)
            case = Case(ei, N, args.classes, args.labeled, torch.float64, args.seed, edge_weight=w)
            for r in iterations_to_tol(case, args.eta, args.beta, args.tol, caps):
                r = dict(N=N, graph=graph, **r)
                tol_rows.append(r)
                print(f"{r['N']:>8} {graph:>6} {r['method']:>20} {r['solver']:>11} {r['iters']:>7} "
                      f"{str(r['converged']):>9} {r['residual']:>9.1e} {r['wall']:>8.2f}", flush=True)
            del case
            gc.collect()

    verdicts = targets(rows)
    print("\ntargets")
    for line in verdicts:
        print("  " + line)
    load1 = os.getloadavg()
    print(f"# load average at end: {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(markdown(rows, tol_rows, verdicts, methods, machine, load0, load1, args, repeats))
        print(f"# wrote {args.out}")
    return 0


def targets(rows) -> list[str]:
    out = []
    for r in rows:
        res = r["res"]
        tag = f"N={r['N']:.0e} E={r['E'] / 1e6:.1f}M {r['dtype']}"
        for m, name in (("LP rich", "Label-Prop"), ("Lap rich", "inv-Laplacian STKR-Prop")):
            v = res[m]["ratio"]
            out.append(f"{'PASS' if v <= TARGET_RAW else 'FAIL'}  {name} per iteration <= {TARGET_RAW}x raw "
                       f"product [{tag}]: {v:.2f}x")
        if "pyg_lp" in r and abs(r["E"] - TARGET_EDGES) <= 0.25 * TARGET_EDGES:
            v = r["pyg_lp"]
            out.append(f"{'PASS' if v >= TARGET_PYG else 'FAIL'}  Label-Prop >= {TARGET_PYG}x faster per iteration "
                       f"than PyG LabelPropagation [{tag}]: {v:.1f}x (PyG layer = "
                       f"{res['PyG LP']['ratio']:.1f}x raw)")
    return out


def markdown(rows, tol_rows, verdicts, methods, machine, load0, load1, args, repeats) -> str:
    L = ["# Propagation engine benchmark", "",
         f"Machine: {machine}. Load average {load0[0]:.1f} at start, {load1[0]:.1f} at end "
         "(other jobs may share the cores; ratios are taken within each repeat).", "",
         f"Random undirected graphs, {args.edges_per_node} random pairs per node (symmetrized), "
         f"{args.classes} classes, {args.labeled:.0%} labeled, eta={args.eta}, beta={args.beta}; "
         f"median of {repeats} repeats ({args.clock} clock); T iterations per timed call (T/4, at least 3, "
         "for l^8), marginal cost of an iteration; allocator: "
         + ("freed large blocks reused (`--malloc reuse`, as run.py)." if args.malloc_applied
            else "the platform's defaults (`--malloc default`, `GRAPHSTK_MALLOC=default`, or no glibc)."), "",
         "Per-iteration time as a multiple of one raw `torch.sparse.mm(S, X[N, C])` (same dtype):", "",
         "| N | edges | dtype | T | raw ms | " + " | ".join(methods[1:]) + " | PyG / LP | PyG / Lap |",
         "|" + "---:|" * (5 + len(methods[1:]) + 2)]
    for r in rows:
        res = r["res"]
        L.append(f"| {r['N']:.0e} | {r['E'] / 1e6:.1f}M | {r['dtype']} | {r['T']} | {fmt_ms(res['raw']['time'])} | "
                 + " | ".join(f"{res[m]['ratio']:.2f}x" for m in methods[1:])
                 + (f" | {r['pyg_lp']:.1f}x | {r['pyg_lap']:.1f}x |" if "pyg_lp" in r else " | | |"))
    L += ["", "Fastest repeat over fastest raw repeat (`best`, less sensitive to other jobs):", "",
          "| N | dtype | " + " | ".join(methods[1:]) + " |", "|" + "---:|" * (2 + len(methods[1:]))]
    for r in rows:
        L.append(f"| {r['N']:.0e} | {r['dtype']} | " + " | ".join(f"{r['res'][m]['best']:.2f}x" for m in methods[1:])
                 + " |")
    L += ["", "`LP fused` is the hand-written lower bound `X <- addmm([Y; 0], S, X, alpha=eta)`; `poly8 rich` "
          "is one Algorithm 1 iteration (6 full products and the labeled rows of 2 more); "
          "`PyG / LP` is PyG's per-layer time over Label-Prop's "
          "per-iteration time (higher = we are faster).", ""]
    if tol_rows:
        L += [f"Iterations to relative residual {args.tol:g}:", "",
              "| N | graph | method | solver | iterations | converged | final residual | wall s |",
              "|---:|---|---|---|---:|---|---:|---:|"]
        for r in tol_rows:
            L.append(f"| {r['N']:.0e} | {r['graph']} | {r['method']} | {r['solver']} | {r['iters']} | {r['converged']} | "
                     f"{r['residual']:.1e} | {r['wall']:.2f} |")
        L += ["", "`plain`: the benchmark graph (S has eigenvalues down to about -0.4, so Algorithm 2's M and "
              "the inverse-Laplacian Gram matrix are indefinite); `psd`: the same graph with self-loops of "
              "weight degree + 1 (W positive definite). Caps: " + str(CAPS) + "."]
        L.append("")
    L += ["Targets:", ""] + [f"- {v}" for v in verdicts] + [""]
    return "\n".join(L)


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


if __name__ == "__main__":
    raise SystemExit(main())
