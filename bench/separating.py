"""Cost of the spectral support estimator (separating kernels, Eq. 19): fit + scoring, and the lambda path.

Run from the repository root::

    python bench/separating.py                       # n = 500, 5000 (exact), 60000 (Nystroem), 10000 test points
    python bench/separating.py --sizes 500 5000 --threads 1
    python bench/separating.py --quick               # a check that it runs (seconds): scikit-learn digits, n = 300, 1000

Data: MNIST (``graphstk.data.load_vector_dataset("MNIST")``, pixels in [0, 1]); training points are the
first ``n`` of the training part, test points the first ``--n-test`` of the test part. Abel kernel,
``sigma`` = median 10th-neighbour distance (on at most 5000 training points), Tikhonov filter.

Each case runs in a fresh process (so that the peak resident memory, ``graphstk.memory.peak_rss_gb``, is that case's
alone) and reports, with ``time.process_time`` (this process's CPU time, robust on a shared machine):

* ``fit``: ``SpectralSupportEstimator.fit`` (kernel matrix + one eigendecomposition + ``tau_n``);
* ``score 1``: ``score_samples`` of the test points at one ``lambda``;
* ``score 50``: the same for a path of 50 ``lambda`` values (``numpy.logspace(-6, 0, 50)``);
* ``peak MiB``: the process's peak resident memory; ``data MiB``: the same just before ``fit`` (MNIST loaded
  as float64, ~430 MiB, plus the interpreter), so ``peak - data`` is what fit and scoring add;
* ``path x``: ``(fit + score 50) / (fit + score 1)``, the whole path's cost as a multiple of one
  ``lambda``'s (target: at most 1.5x); ``score x``: ``score 50 / score 1``.

Exact for ``n <= --exact-max`` (default 5000), else the Nystroem path with ``--landmarks`` (default 1000)
landmarks drawn from the training points.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from graphstk.memory import peak_rss_gb  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402


def _case(args: dict, queue) -> None:
    torch.set_num_threads(args["threads"])
    from graphstk.data import load_vector_dataset
    from graphstk.methods import SpectralSupportEstimator
    from graphstk.operators import kth_neighbor_distance_median

    if args.get("quick"):     # scikit-learn's 8 x 8 digits (shipped with it), pixels scaled to [0, 1]
        from sklearn.datasets import load_digits
        X = torch.as_tensor(load_digits().data / 16.0)
        Xtr, Z = X[:args["n"]].contiguous(), X[1000:1000 + args["n_test"]].contiguous()
    else:
        d = load_vector_dataset("MNIST", root=args["root"])
        Xtr = d.X[d.parts["train"][:args["n"]]].contiguous()
        Z = d.X[d.parts["test"][:args["n_test"]]].contiguous()
        del d
    sigma = kth_neighbor_distance_median(Xtr[:5000], 10)
    base = 1024.0 * peak_rss_gb()                                        # data loaded: MiB
    lowrank = args["n"] > args["exact_max"]
    kw = dict(approx="nystroem", n_components=args["landmarks"]) if lowrank else {}
    lams = np.logspace(-6, 0, 50)
    clock = time.process_time
    t = clock()
    est = SpectralSupportEstimator(sigma=sigma, **kw).fit(Xtr)
    t_fit = clock() - t
    t = clock()
    F1 = est.score_samples(Z, lam=est.lam_)
    t_one = clock() - t
    t = clock()
    F50 = est.score_samples(Z, lam=lams)
    t_path = clock() - t
    peak = 1024.0 * peak_rss_gb()                                        # MiB
    queue.put({"n": args["n"], "mode": f"nystroem k={args['landmarks']}" if lowrank else "exact",
               "fit": t_fit, "score1": t_one, "score50": t_path,
               "path_x": (t_fit + t_path) / (t_fit + t_one), "score_x": t_path / t_one, "peak_mib": peak, "data_mib": base,
               "lam": float(est.lam_), "sigma": sigma, "F_range": [float(F1.min()), float(F1.max())],
               "shape50": list(F50.shape)})


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[500, 5000, 60000])
    ap.add_argument("--n-test", type=int, default=10000)
    ap.add_argument("--exact-max", type=int, default=5000)
    ap.add_argument("--landmarks", type=int, default=1000)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--data-root", default=None)
    ap.add_argument("--quick", action="store_true",
                    help="a check that the script runs (seconds): scikit-learn's digits, n = 300 exact and 1000 low "
                         "rank, 200 test points, in this process; exit status 0 whatever the target")
    ap.add_argument("--json", default=None, help="also write the rows to this JSON file")
    a = ap.parse_args(argv)
    if a.quick:
        a.sizes, a.n_test, a.exact_max, a.landmarks = [300, 1000], 200, 500, 100
    ctx = mp.get_context("spawn")
    rows = []
    print(f"{'n':>6}  {'mode':<18} {'fit s':>8} {'score 1 s':>9} {'score 50 s':>10} {'path x':>7} "
          f"{'score x':>7} {'peak MiB':>9} {'data MiB':>9}  lambda", flush=True)
    for n in a.sizes:
        case = {"n": n, "n_test": a.n_test, "exact_max": a.exact_max, "landmarks": a.landmarks,
                "threads": a.threads, "root": a.data_root, "quick": a.quick}
        if a.quick:            # in this process: a check that the code runs, not a measurement
            import queue
            q = queue.Queue()
            _case(case, q)
        else:
            q = ctx.Queue()
            p = ctx.Process(target=_case, args=(case, q))
            p.start()
        r = q.get()
        if not a.quick:
            p.join()
        rows.append(r)
        print(f"{r['n']:>6}  {r['mode']:<18} {r['fit']:>8.2f} {r['score1']:>9.2f} {r['score50']:>10.2f} "
              f"{r['path_x']:>7.3f} {r['score_x']:>7.2f} {r['peak_mib']:>9.0f} {r['data_mib']:>9.0f}  {r['lam']:.3g}", flush=True)
    ok = all(r["path_x"] <= 1.5 for r in rows)
    print(f"target: the 50-lambda path within 1.5x one lambda (fit + scores): {'PASS' if ok else 'FAIL'} "
          f"(worst {max(r['path_x'] for r in rows):.3f}x); CPU seconds ({a.threads} thread(s)), "
          f"{a.n_test} test points", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0 if ok or a.quick else 1


if __name__ == "__main__":
    sys.exit(main())
