"""Speed and memory of the Fredholm-kernel estimators on MNIST.

Two cases, each one fit + one prediction, each against KRLSC (kernel RLS with the same
Gaussian, on the same labeled points, scoring the same points):

* ``exact``: FredGauss (Eq. 5, outer and inner Gaussian of width ``sigma``) on MNIST 10k (1000 per
  class from the training images, seed 0), 200 labeled (20 per class), the other 9,800
  unlabeled and scored. Target: within 5x the time of KRLSC.
* ``rf``: FredGauss with the random-feature inner kernel (Sec. 5.3, corrected map) with all
  60,000 training images as ``U`` (200 labeled), scoring the 10,000 test images. Target: peak
  memory within 4 GB.

Every measurement runs in a fresh process (``multiprocessing`` spawn): wall time of fit +
predict, and the peak resident set during fit + predict (sampled from ``/proc/self/statm``
every 5 ms) minus the resident set just before, i.e. the memory the computation itself
needed, with glibc's mmap threshold fixed at 64 KB (``MALLOC_MMAP_THRESHOLD_``; otherwise the
freed ``[block, n]`` kernel tiles stay resident in fragmented heap arenas and the exact fit at
``n = 10k`` shows ~730 MB instead of ~165 MB; ``--glibc-default`` keeps glibc's behaviour) (the data: 70,000 x 784 float64 = 440 MB, and the interpreter are reported separately).
Parameters: those validation chose on seed 0 of ``configs/fredholm_digits.yaml`` (MNIST10k):
FredGauss width ``sigma = 0.25 m`` (the paper's ``r = sigma^2``; ``m`` the median pairwise distance
of 2000 training images),
``lam = 1e-6`` relative to the mean Fredholm diagonal (``lam_scale="trace"``); KRLSC
``sigma = m``, ``lam = 1e-5`` (Eq. 3 convention, ``KernelRidge(lam = l * 1e-5)``).

    OMP_NUM_THREADS=1 python bench/fredholm.py            # both cases, one thread
    python bench/fredholm.py --case exact --threads 2 --components 1000
    python bench/fredholm.py --quick                      # a check that it runs (seconds), no measurement

The tests run only ``--quick`` (timings are machine dependent).
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


class _PeakRSS:
    """Peak resident set (MB) while the ``with`` block runs, sampled by a thread."""

    def __enter__(self):
        import threading

        self.base = self.peak = _rss_mb()
        self._stop = threading.Event()

        def watch():
            while not self._stop.wait(0.005):
                self.peak = max(self.peak, _rss_mb())

        self._t = threading.Thread(target=watch, daemon=True)
        self._t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join()
        self.peak = max(self.peak, _rss_mb())


def _semi_supervised(XL, yL, XU):
    """``(X, y)`` of the estimators' contract: labeled rows first, the unlabeled ones with ``y = -1``."""
    import torch

    XL, XU, yL = (torch.as_tensor(a) for a in (XL, XU, yL))
    return torch.cat([XL, XU.to(XL.dtype)]), torch.cat([yL, torch.full((XU.shape[0],), -1, dtype=yL.dtype)])


def _data(case: str, quick: bool = False):
    import torch

    from graphstk.data import load_vector_dataset
    from graphstk.operators import median_distance

    if quick:        # scikit-learn's 8 x 8 digits (shipped with it): 1000 training and 797 test images
        from types import SimpleNamespace

        from sklearn.datasets import load_digits
        X, y = load_digits(return_X_y=True)
        ds = SimpleNamespace(X=torch.as_tensor(X / 16.0), y=torch.as_tensor(y),
                             parts={"train": torch.arange(1000), "test": torch.arange(1000, len(y))})
    else:
        ds = load_vector_dataset("MNIST")
    train, test = ds.parts["train"], ds.parts["test"]
    g = torch.Generator().manual_seed(0)
    y = ds.y
    per_class = 30 if quick else 1000
    if case == "exact":
        pool = torch.cat([train[y[train] == c][torch.randperm(int((y[train] == c).sum()), generator=g)[:per_class]]
                          for c in range(10)])
    else:
        pool = train
    yp = y[pool]
    lab = torch.cat([torch.nonzero(yp == c).flatten()[torch.randperm(int((yp == c).sum()), generator=g)[:20]]
                     for c in range(10)])
    mask = torch.ones(pool.numel(), dtype=torch.bool)
    mask[lab] = False
    XL, yL = ds.X[pool[lab]], yp[lab]
    XU = ds.X[pool[mask]]
    if case == "exact":
        XE, yE = XU, yp[mask]
    else:
        XE, yE = ds.X[test], y[test]
    m = median_distance(ds.X[train], max_samples=2000, seed=0)
    return XL, yL, XU, XE, yE, m


def _run(case: str, method: str, threads: int, components: int, q, quick: bool = False):
    import torch

    torch.set_num_threads(threads)
    XL, yL, XU, XE, yE, m = _data(case, quick)
    sigma = 0.25 * m
    import gc

    gc.collect()
    mon = _PeakRSS().__enter__()
    t0 = time.perf_counter()
    if method == "KRLSC":
        from graphstk.methods import KernelRidge
        from graphstk.methods.fredholm import onevsrest_targets

        cls, Y = onevsrest_targets(yL)
        krr = KernelRidge(kernel="gaussian", sigma=m, lam=XL.shape[0] * 1e-5).fit(XL, Y)
        pred = cls[krr.predict(XE).argmax(1).numpy()]
    elif method == "FredGauss":
        from graphstk.methods import FredholmRLSC

        est = FredholmRLSC.instance("FredGauss", sigma, lam=1e-6, lam_scale="trace").fit(*_semi_supervised(XL, yL, XU))
        pred = est.predict(XE)
    else:
        from graphstk.methods import RandomFeatureFredholm

        est = RandomFeatureFredholm.instance("FredGauss", sigma, lam=1e-6, lam_scale="trace",
                                             n_components=components, random_state=0).fit(
            *_semi_supervised(XL, yL, XU))
        pred = est.predict(XE)
    dt = time.perf_counter() - t0
    mon.__exit__(None, None, None)
    err = float((torch.as_tensor(pred) != yE).float().mean()) * 100
    q.put({"method": method, "time_s": dt, "extra_peak_mb": mon.peak - mon.base, "peak_mb": mon.peak,
           "error": err, "n": XL.shape[0] + XU.shape[0], "n_eval": XE.shape[0]})


def measure(case: str, method: str, threads: int, components: int, quick: bool = False) -> dict:
    if quick:        # in this process: a check that the code runs, not a measurement
        import queue
        q = queue.Queue()
        _run(case, method, threads, components, q, quick=True)
        return q.get()
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_run, args=(case, method, threads, components, q))
    p.start()
    out = q.get()
    p.join()
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--case", choices=["exact", "rf", "both"], default="both")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--components", type=int, default=1000, help="random Fourier frequencies D (2D features)")
    ap.add_argument("--glibc-default", action="store_true",
                    help="keep glibc's dynamic mmap threshold (the resident set then also counts freed [block, n] "
                         "tiles that the allocator keeps: ~730 MB instead of ~165 MB for the exact fit at n = 10k)")
    ap.add_argument("--quick", action="store_true",
                    help="a check that the script runs (seconds): scikit-learn's 8 x 8 digits, D = 100, in this "
                         "process (no measurement)")
    args = ap.parse_args(argv)
    if args.quick:
        args.components = min(args.components, 100)
    if not args.glibc_default:
        # the measuring processes are spawned after this, so glibc reads it at their start: freed kernel
        # tiles go back to the OS instead of staying resident in fragmented heap arenas
        os.environ.setdefault("MALLOC_MMAP_THRESHOLD_", "65536")
    cases = ["exact", "rf"] if args.case == "both" else [args.case]
    for case in cases:
        fred = "FredGauss" if case == "exact" else "FredGauss-RF"
        rows = [measure(case, meth, args.threads, args.components, args.quick) for meth in ("KRLSC", fred)]
        k, f = rows
        print(f"\n== {case}: n = {f['n']} points in the integral, {f['n_eval']} scored, "
              f"{args.threads} thread(s){'' if case == 'exact' else f', D = {args.components}'}")
        for row in rows:
            print(f"{row['method']:>13}: {row['time_s']:8.2f} s   memory of fit+predict {row['extra_peak_mb']:8.1f} MB"
                  f"   (process peak {row['peak_mb']:7.1f} MB)   error {row['error']:5.2f} %")
        print(f"  ratio to KRLSC: time x{f['time_s'] / k['time_s']:.1f}   "
              f"target: {'time within 5x KRLSC' if case == 'exact' else 'peak memory within 4 GB'}: "
              f"{'met' if (f['time_s'] <= 5 * k['time_s'] if case == 'exact' else f['peak_mb'] <= 4096) else 'NOT met'}"
              " (memory: peak resident set of the whole process, data included)")


if __name__ == "__main__":
    main()
