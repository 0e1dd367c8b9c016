"""Time and memory of feature-aware STKR: the whole registered grid scored on the validation nodes
(``select_on_validation``), then a fit and predict of the chosen point on the test nodes, measured
with ``time.perf_counter`` after the dataset is loaded (docs/feature_stkr.md, "Timing" and "Memory").

    python bench/feature_stkr_timing.py                         # Cora, torch's default threads
    python bench/feature_stkr_timing.py --threads 1 --repeat 5
    python bench/feature_stkr_timing.py --threads 1 --out docs/results/speed/feature_stkr_cora.txt   # the record
    python bench/feature_stkr_timing.py --memory                # Coauthor CS and Physics, peak memory
    python bench/feature_stkr_timing.py --quick                 # a check that it runs (seconds)
    python bench/feature_stkr_timing.py --dataset CS --splits 2 --out docs/results/speed/feature_stkr_routes.md

Prints one line per repeat and the median, with the thread count and the load average at start.

``--memory`` runs each of Coauthor CS (18,333 nodes, 6,805 features) and Coauthor Physics (34,493
nodes, 8,415 features) in a process of its own: the dataset loaded, its features turned into a
sparse matrix (the dense copy freed), a split of 20 labeled nodes per class, 500 validation and
1000 test nodes (seed 0), then the whole registered grid. It prints the peak resident memory of the
process (``graphstk.memory.peak_rss_gb``), the resident memory after loading, and each target
with PASS/FAIL: CS under 2 GB, Physics under 4 GB.

``--splits K`` times the three routes of the cosine blocks side by side in one process
(``graphstk.methods.feature_propagation.cosine_blocks``; docs/feature_stkr.md, "Memory"): the whole
registered grid scored on the validation nodes of ``K`` splits of one graph (20 training and 30
validation nodes per class, drawn with seeds ``0..K-1``), first by the column route, then by the
labeled route with one norm cache for all splits, then by the rows route (which ``"auto"`` takes for
these rows), and prints a markdown table of the seconds per split, the largest difference of a score
from the column route's and whether every route chose the column route's grid point on every split.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402

import graphstk as gs  # noqa: E402
from graphstk.methods.feature_stkr import FeatureSTKR, select_on_validation  # noqa: E402
from graphstk.memory import peak_rss_gb  # noqa: E402


#: peak resident memory targets of the whole registered grid, in GiB
MEMORY_TARGETS = {"CS": 2.0, "Physics": 4.0}


def _rss_gib() -> float:
    """The current resident memory of this process (``/proc/self/statm``; 0 where absent)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 30
    except OSError:
        return 0.0


def memory_one(name: str) -> None:
    """The whole registered grid on ``name`` (this process only); prints one result line."""
    import gc

    import scipy.sparse as sp

    from graphstk.methods.feature_stkr import DEFAULT_GRID

    data = gs.load_dataset(name)
    X = sp.csr_matrix(data.x.numpy())
    data.x = None
    gc.collect()
    y, C = data.y, int(data.y.max()) + 1
    g = torch.Generator().manual_seed(0)
    perm = torch.randperm(y.numel(), generator=g)
    train = torch.cat([perm[y[perm] == c][:20] for c in range(C)])
    rest = perm[~torch.isin(perm, train)]
    val, test = rest[:500], rest[500:1500]
    after_load = _rss_gib()
    t = time.perf_counter()
    best, accs = select_on_validation(data.edge_index, X, y, train, val)
    from graphstk.methods.feature_stkr import feature_stkr_scores
    s = feature_stkr_scores(data.edge_index, X, y, train, test, [best])[0]
    acc = 100 * float((s.argmax(1) == y[test]).double().mean())
    peak, target = peak_rss_gb(), MEMORY_TARGETS[name]
    npts = len(accs)
    print(f"{name}: {y.numel()} nodes, {X.shape[1]} features ({X.nnz} non-zeros), {npts} grid points "
          f"({', '.join(f'{k}={len(v)}' for k, v in DEFAULT_GRID.items())}), {time.perf_counter() - t:.1f} s; "
          f"resident after loading {after_load:.2f} GiB, peak {peak:.2f} GiB; target < {target:g} GiB: "
          f"{'PASS' if peak < target else 'FAIL'} (validation {max(accs):.1f}, test {acc:.1f})", flush=True)


def memory(names) -> None:
    """Each dataset of ``names`` in a process of its own (:func:`memory_one`), so that peaks do not mix."""
    import subprocess

    for name in names:
        cmd = [sys.executable, os.path.abspath(__file__), "--memory-one", name, "--threads", str(torch.get_num_threads())]
        subprocess.run(cmd, check=True)


def _per_class(y: torch.Tensor, seed: int, train: int = 20, val: int = 30) -> tuple[torch.Tensor, torch.Tensor]:
    """``train`` and ``val`` nodes per class drawn with ``seed`` (classes with too few nodes give what they have)."""
    perm = torch.randperm(y.numel(), generator=torch.Generator().manual_seed(seed))
    C = int(y.max()) + 1
    picked = [perm[y[perm] == c] for c in range(C)]
    return torch.cat([p[:train] for p in picked]), torch.cat([p[train:train + val] for p in picked])


def routes(data, name: str, splits: int, out: str | None) -> None:
    """The registered grid on ``splits`` splits of ``data`` by each route of the cosine blocks (module docstring)."""
    import itertools

    import scipy.sparse as sp

    from graphstk.methods.feature_stkr import DEFAULT_GRID, feature_stkr_scores

    keys = list(DEFAULT_GRID)
    points = [dict(zip(keys, v)) for v in itertools.product(*(DEFAULT_GRID[k] for k in keys))]
    X = sp.csr_matrix(data.x.numpy())
    load = os.getloadavg()[0]
    seconds, scores = {}, {}
    names = ("columns", "labeled", "rows")
    for route in names:
        cache: dict = {}
        for seed in range(splits):
            train, val = _per_class(data.y, seed)
            t = time.perf_counter()
            scores[route, seed] = feature_stkr_scores(data.edge_index, X, data.y, train, val, points, route=route,
                                                      cache=cache)
            seconds[route, seed] = time.perf_counter() - t
    lines = [f"`{name}`: {data.num_nodes} nodes, {X.shape[1]} feature columns, {len(points)} grid points "
             f"(`DEFAULT_GRID`), 20 training and 30 validation nodes per class; {torch.get_num_threads()} torch "
             f"threads, load average {load:.2f} on {os.cpu_count()} cores at start", "",
             "| split | column route (s) | labeled route, one norm cache (s) | rows route (s) "
             "| largest score difference | same chosen point |", "|---|---|---|---|---|---|"]
    for seed in range(splits):
        train, val = _per_class(data.y, seed)
        got = [scores[route, seed] for route in names]
        diff = max(float((x - z).abs().max()) for other in got[1:] for x, z in zip(got[0], other))
        accs = [[float((s.argmax(1) == data.y[val]).double().mean()) for s in g] for g in got]
        chosen = {max(range(len(points)), key=lambda i: (a[i], -i)) for a in accs}
        lines.append(f"| {seed} | " + " | ".join(f"{seconds[route, seed]:.1f}" for route in names)
                     + f" | {diff:.1e} | {'yes' if len(chosen) == 1 else 'no'} |")
    text = "\n".join(lines)
    print(text)
    if out:
        with open(out, "w") as fh:
            fh.write(text + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="Cora")
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--memory", nargs="*", default=None, metavar="NAME",
                    help="peak memory of the whole grid on Coauthor CS and Physics (or the datasets named)")
    ap.add_argument("--memory-one", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--splits", type=int, default=None, metavar="K",
                    help="time the three routes of the cosine blocks on K splits of --dataset (module docstring)")
    ap.add_argument("--out", default=None, help="also write the routes' table (--splits) or the timing lines to "
                                                 "this file (not with --memory)")
    ap.add_argument("--quick", action="store_true",
                    help="a check that the script runs (seconds): a generated 300-node graph with features, 1 repeat")
    args = ap.parse_args()
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    if args.memory_one is not None:
        return memory_one(args.memory_one)
    if args.memory is not None:
        return memory(args.memory or list(MEMORY_TARGETS))
    if args.quick:
        from graphstk.data import make_dcsbm, make_split
        data = make_dcsbm(300, 1500, num_classes=3, num_features=16, seed=0)
        data.x = (data.x > 0).to(data.x.dtype)          # binary word-presence features, as Cora's
        split = make_split(data, n_test=100, train_per_class=5, val_per_class=10)
        train, val, test, args.dataset, args.repeat = split.train, split.val, split.test, "dcsbm (300 nodes)", 1
        if args.splits is not None:
            return routes(data, args.dataset, min(args.splits, 2), args.out)
    elif args.splits is not None:
        return routes(gs.load_dataset(args.dataset), args.dataset, args.splits, args.out)
    else:
        data = gs.load_dataset(args.dataset)
        train, val, test = data.train_mask, data.val_mask, data.test_mask
    load = os.getloadavg()[0]
    times, lines = [], []
    for i in range(args.repeat):
        t = time.perf_counter()
        best, _ = select_on_validation(data.edge_index, data.x, data.y, train, val)
        pred = FeatureSTKR(**best).fit(data, train).predict(test)
        times.append(time.perf_counter() - t)
        acc = float((pred == data.y[test]).float().mean())
        lines.append(f"repeat {i}: {times[-1]:.2f} s (grid, fit, predict), test accuracy {100 * acc:.1f}")
        print(lines[-1])
    lines.append(f"{args.dataset}: median {statistics.median(times):.2f} s over {args.repeat} repeats, "
                 f"{torch.get_num_threads()} torch threads, {os.cpu_count()} cores, load average {load:.2f} at start")
    print(lines[-1])
    if args.out:
        with open(args.out, "w") as fh:
            fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
