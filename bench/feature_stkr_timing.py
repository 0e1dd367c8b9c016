"""Time of feature-aware STKR on a Planetoid graph: the whole registered grid scored on the
validation nodes (``select_on_validation``), then a fit and predict of the chosen point on the test
nodes, measured with ``time.perf_counter`` after the dataset is loaded (docs/feature_stkr.md, "Timing").

    python bench/feature_stkr_timing.py                         # Cora, torch's default threads
    python bench/feature_stkr_timing.py --threads 1 --repeat 5

Prints one line per repeat and the median, with the thread count and the load average at start.
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="Cora")
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    data = gs.load_dataset(args.dataset)
    load = os.getloadavg()[0]
    times = []
    for i in range(args.repeat):
        t = time.perf_counter()
        best, _ = select_on_validation(data.edge_index, data.x, data.y, data.train_mask, data.val_mask)
        pred = FeatureSTKR(**best).fit(data, data.train_mask).predict(data.test_mask)
        times.append(time.perf_counter() - t)
        acc = float((pred == data.y[data.test_mask]).float().mean())
        print(f"repeat {i}: {times[-1]:.2f} s (grid, fit, predict), test accuracy {100 * acc:.1f}")
    print(f"{args.dataset}: median {statistics.median(times):.2f} s over {args.repeat} repeats, "
          f"{torch.get_num_threads()} torch threads, {os.cpu_count()} cores, load average {load:.2f} at start")


if __name__ == "__main__":
    main()
