"""Feature-neighbour search of ``FeatureSTKR (feature kNN)``, side by side in one process.

    python bench/feature_knn.py                      # Amazon Photo (35 % dense rows), k in 10 20 40 80
    python bench/feature_knn.py --dataset Cora --threads 1
    python bench/feature_knn.py --quick              # 400 generated rows, 20 % dense: seconds

Times, on the TF-IDF rows of the dataset (``graphstk.methods.feature_propagation.preprocess_sparse``):

* ``per k, sparse tiles``: one ``cosine_neighbors`` search per ``knn`` of the grid with the sparse
  tile product (what a grid of ``knn`` values cost when each graph searched on its own);
* ``one search, auto tiles``: ``feature_neighbors`` once for the largest ``knn`` (dense tiles where
  the rows are at least ``DENSE_TILE_DENSITY`` nonzero), the smaller ``knn`` sliced from it;

prints both, their ratio, and whether the sliced lists equal the per-k searches.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402

from graphstk.data import load_dataset  # noqa: E402
from graphstk.methods.feature_propagation import feature_neighbors, preprocess_sparse, sparse_features  # noqa: E402
from graphstk.operators.knn import DENSE_TILE_DENSITY, cosine_neighbors  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="Photo")
    ap.add_argument("--data-root", default=None)
    ap.add_argument("--k", type=int, nargs="+", default=[10, 20, 40, 80])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="400 generated binary rows, 20 %% dense, k in 4 8")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    if args.quick:
        g = torch.Generator().manual_seed(0)
        x = (torch.rand(400, 60, generator=g) < 0.2).float()
        args.dataset, args.k = "generated", [4, 8]
    else:
        x = load_dataset(args.dataset, root=args.data_root).x
    X = preprocess_sparse(sparse_features(x), "tfidf", None)
    density = X.nnz / (X.shape[0] * X.shape[1])
    print(f"{args.dataset}: {X.shape[0]} rows x {X.shape[1]} features, {100 * density:.1f} % nonzero "
          f"(dense tiles from {100 * DENSE_TILE_DENSITY:.0f} %); {args.threads} thread(s); load {os.getloadavg()[0]:.1f}")
    t0 = time.perf_counter()
    each = {k: cosine_neighbors(X, k, tiles="sparse")[0] for k in args.k}
    t_each = time.perf_counter() - t0
    t0 = time.perf_counter()
    once = feature_neighbors(X, max(args.k))
    t_once = time.perf_counter() - t0
    same = all(torch.equal(once[:, :k], each[k]) for k in args.k)
    print(f"per k, sparse tiles:     {t_each:8.2f} s  ({len(args.k)} searches)")
    print(f"one search, auto tiles:  {t_once:8.2f} s")
    print(f"ratio: {t_each / t_once:.1f}x; sliced lists equal the per-k searches: {same}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
