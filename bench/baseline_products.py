"""The sparse products and dropout draws inside the baselines, each against the form it replaces, side by side.

Run from the repository root::

    python bench/baseline_products.py                                            # Coauthor CS's graph, 2 threads
    python bench/baseline_products.py --out docs/results/speed/baseline_products.md   # the recorded run
    python bench/baseline_products.py --quick                                    # a generated graph: seconds, no report

On one graph (Coauthor CS's largest connected component, or a generated graph with ``--quick``), median of
``--repeats`` runs each, in one process:

* **APPNP's propagation with its gradient** (``graphstk.methods.gnn``): ten steps ``Z <- 0.9 S~ Z + 0.1 H`` on
  ``[N, 15]`` float32, forward and backward, with autograd's own backward of the CSR product against
  :func:`~graphstk.methods.gnn.symmetric_product` (the gradient ``S~ G``); the gradients must be equal.
* **GGCM's negative graph** (``graphstk.spectral.filters``): one product of ``A / k`` (a random ``k``-regular graph,
  ``k`` = 20 times the mean degree, as the paper) with ``[N, 300]`` float64, as a loop of ``k`` gathers and scatters
  over the permutations against :func:`~graphstk.spectral.filters.permutation_graph_product` on
  :func:`~graphstk.spectral.filters.permutation_graph` (a cache-sized block of columns at a time); the two results
  must be equal bit for bit.
* **GGCM's negative graphs in the read-out by rows** (``graphstk.methods.linear_filters``, ``FilteredRows``):
  ``A / k`` on 300 random columns of the identity (as many as the training rows of Shchur et al.'s split of
  Coauthor CS), the product
  :func:`~graphstk.spectral.filters.permutation_graph_product` against
  :func:`~graphstk.spectral.filters.permutation_graph_columns` (the graph's rows, counted); equal bit for bit.
* **GAT's input projection with its gradient** (``graphstk.methods.gnn``): ``x W^T`` for Coauthor CS's raw sparse
  features (COO, float32, ``W [64, d]``), forward and backward, PyG's ``F.linear`` against the COO product with
  ``W^T`` made contiguous (``_InputProjection``); outputs and gradients equal bit for bit.
* **The GNNs' dropout with its gradient** (``graphstk.methods.gnn``): dropout 0.8 on a hidden layer ``[N, 64]``
  float32, forward and backward, ``F.dropout`` against :func:`~graphstk.methods.gnn.dropout` (the mask drawn as
  ``torch.rand(float64) < 1 - p``), each from the same seed; outputs, gradients and the generator's state after
  equal bit for bit (where torch's CPU bernoulli takes its portable path).
* **The feature filters' product** (``graphstk.methods.feature_propagation``): ``S Z`` with ``[N, 500]`` float64, by
  scipy's CSR product against torch's at the configured thread count, both in one call; then torch's in one call
  against :func:`~graphstk.operators.base.blockwise_columns` (cache-sized blocks of columns, the form both take in
  the library). The results must be equal bit for bit.
* **A feature filter of 16 steps** (SGC's ``S^K Z`` read at ``K = 1, 2, 4, 8, 16``, ``[N, 457]`` float64: one of
  FeatureSTKR's 64 MB blocks on Coauthor CS), with every product split into cache-sized blocks of columns against
  each cache-sized block carried through all 16 steps (:func:`~graphstk.operators.base.blockwise_columns` around
  the filter, the form the feature filters take), with the configured thread count's product. The results must be
  equal bit for bit.
* **The closed-form peers' read-out** (``graphstk.methods.linear_filters``): nine weight decays of logistic
  regression (100 epochs of full-batch Adam) on SGC's filtered features of 20 seeded nodes per class of Coauthor
  CS (``[300, 6805]`` float64, 15 classes: the training rows of Shchur et al.'s split), one
  :func:`~graphstk.methods.linear_filters.logistic_regression` per decay against one
  :func:`~graphstk.methods.linear_filters.logistic_regressions` call training them side by side. The wider product
  rounds differently, and Adam's step (divided by the root of its second moment) carries rounding on from epoch to
  epoch, so the two agree when the predicted classes are equal and the log-probabilities agree to ``1e-5`` of
  their largest magnitude, not bit for bit.

It prints each pair's seconds and their ratio (``old / new``), and whether the results agree.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import timeit
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from graphstk.methods.gnn import Features, _InputProjection, dropout, gcn_adjacency, symmetric_product  # noqa: E402
from graphstk.methods.feature_propagation import _product, identity_columns  # noqa: E402
from graphstk.methods.linear_filters import (WEIGHT_DECAYS, FilteredRows, logistic_regression,  # noqa: E402
                                             logistic_regressions)
from graphstk.operators.base import blockwise_columns  # noqa: E402
from graphstk.spectral.filters import (SGCFilter, negative_degree, negative_permutations,  # noqa: E402
                                       permutation_graph, permutation_graph_columns, permutation_graph_product)


def _median_seconds(fn, repeats: int) -> float:
    return statistics.median(timeit.repeat(fn, number=1, repeat=repeats))


def _graph(quick: bool):
    if quick:
        from graphstk.data import make_dcsbm
        data = make_dcsbm(1000, 5000, num_classes=4, seed=0)
        return "dcsbm (1000 nodes)", data, int(data.num_nodes)
    import graphstk as gs
    from torch_geometric.transforms import LargestConnectedComponents
    data = LargestConnectedComponents()(gs.load_dataset("CS"))
    return "Coauthor CS (largest connected component)", data, int(data.num_nodes)


def appnp(edge_index, N: int, repeats: int) -> tuple[float, float, bool]:
    S = gcn_adjacency(edge_index, N)
    H = torch.randn(N, 15, generator=torch.Generator().manual_seed(0))

    def run(product):
        Z0 = H.clone().requires_grad_(True)
        Z = Z0
        for _ in range(10):
            Z = 0.9 * product(S, Z) + 0.1 * Z0
        Z.square().sum().backward()
        return Z0.grad

    def autograd(S, Z):
        return S @ Z
    same = torch.allclose(run(autograd), run(symmetric_product), rtol=1e-5, atol=1e-6)
    return _median_seconds(lambda: run(autograd), repeats), _median_seconds(lambda: run(symmetric_product), repeats), \
        same


def negative_graph(edge_index, N: int, repeats: int, columns: int) -> tuple[float, float, bool]:
    k = min(negative_degree(edge_index, N, 20.0), (N - 1) // 2 * 2)
    perms = negative_permutations(N, k, torch.Generator().manual_seed(0))
    Z = torch.rand(N, columns, dtype=torch.float64, generator=torch.Generator().manual_seed(1))

    def loop():
        out, gathered = torch.zeros_like(Z), torch.empty_like(Z)
        for p in perms:
            out.add_(torch.index_select(Z, 0, p, out=gathered)).index_add_(0, p, Z)
        return out / (2 * perms.shape[0])
    A = permutation_graph(perms)

    def csr():
        return permutation_graph_product(A, Z)
    same = torch.equal(loop(), csr())
    return _median_seconds(loop, repeats), _median_seconds(csr, repeats), same


def negative_columns(edge_index, N: int, repeats: int, columns: int) -> tuple[float, float, bool]:
    k = min(negative_degree(edge_index, N, 20.0), (N - 1) // 2 * 2)
    A = permutation_graph(negative_permutations(N, k, torch.Generator().manual_seed(0)))
    idx = torch.randperm(N, generator=torch.Generator().manual_seed(1))[:columns]
    E = identity_columns(N, idx, torch.float64, "cpu")
    same = torch.equal(permutation_graph_product(A, E), permutation_graph_columns(A, idx))
    return _median_seconds(lambda: permutation_graph_product(A, E), repeats), \
        _median_seconds(lambda: permutation_graph_columns(A, idx), repeats), same


def gat_projection(data, repeats: int, quick: bool) -> tuple[float, float, bool]:
    x = (torch.rand(data.num_nodes, 500, generator=torch.Generator().manual_seed(4)) < 0.01).float() if quick \
        else data.x.float()
    f = Features(x, "none")
    X = f.as_tensor(f.dropped(0.0, False))
    W = torch.nn.Parameter(torch.randn(64, x.shape[1], generator=torch.Generator().manual_seed(5)) * 0.05)
    G = torch.randn(x.shape[0], 64, generator=torch.Generator().manual_seed(6))

    def run(projection):
        out = projection(X)
        return out, torch.autograd.grad(out, W, G)[0]
    pyg, ours = (lambda x: torch.nn.functional.linear(x, W)), _InputProjection(W)
    same = all(torch.equal(a, b) for a, b in zip(run(pyg), run(ours)))
    return _median_seconds(lambda: run(pyg), repeats), _median_seconds(lambda: run(ours), repeats), same


def hidden_dropout(N: int, repeats: int) -> tuple[float, float, bool]:
    H = torch.randn(N, 64, generator=torch.Generator().manual_seed(7))
    G = torch.randn(N, 64, generator=torch.Generator().manual_seed(8))

    def run(drop):
        torch.manual_seed(9)
        x = H.clone().requires_grad_()
        out = drop(x, 0.8, True)
        return out, torch.autograd.grad(out, x, G)[0], torch.rand(4)
    same = all(torch.equal(a, b) for a, b in zip(run(torch.nn.functional.dropout), run(dropout)))
    return _median_seconds(lambda: run(torch.nn.functional.dropout), repeats), \
        _median_seconds(lambda: run(dropout), repeats), same


def filter_product(edge_index, N: int, repeats: int, columns: int) -> tuple[float, float, bool]:
    M = gcn_adjacency(edge_index, N).to(torch.float64)
    A = sp.csr_matrix((M.values().numpy(), M.col_indices().numpy(), M.crow_indices().numpy()), shape=(N, N))
    Z = torch.rand(N, columns, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    same = np.array_equal(A @ Z.numpy(), torch.sparse.mm(M, Z).numpy())
    return _median_seconds(lambda: A @ Z.numpy(), repeats), _median_seconds(lambda: torch.sparse.mm(M, Z), repeats), \
        same


def blocked_product(edge_index, N: int, repeats: int, columns: int) -> tuple[float, float, bool]:
    M = gcn_adjacency(edge_index, N).to(torch.float64)
    Z = torch.rand(N, columns, dtype=torch.float64, generator=torch.Generator().manual_seed(2))

    def blocks():
        return blockwise_columns(lambda B: torch.sparse.mm(M, B), Z)
    same = torch.equal(torch.sparse.mm(M, Z), blocks())
    return _median_seconds(lambda: torch.sparse.mm(M, Z), repeats), _median_seconds(blocks, repeats), same


def blocked_filter(edge_index, N: int, repeats: int, columns: int, depth: int) -> tuple[float, float, bool]:
    M = gcn_adjacency(edge_index, N).to(torch.float64)
    Z = torch.rand(N, columns, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    mm, depths = _product(M), [k for k in (1, 2, 4, 8, 16) if k < depth] + [depth]

    def per_product():
        return list(SGCFilter(depth).iter_depths(mm, Z, depths))

    def per_block():
        return blockwise_columns(lambda B: list(SGCFilter(depth).iter_depths(mm, B, depths)), Z)
    same = all(torch.equal(a, b) for (_, a), (_, b) in zip(per_product(), per_block()))
    return _median_seconds(per_product, repeats), _median_seconds(per_block, repeats), same


def readout(data, repeats: int, quick: bool) -> tuple[float, float, bool]:
    """The rows the peers' read-out trains on: SGC's filtered features of 20 seeded nodes per class (Coauthor CS's
    features and classes; ``--quick``: random features on the generated graph, 3 per class, 20 epochs)."""
    gen = torch.Generator().manual_seed(3)
    y = data.y
    per_class, epochs = (3, 20) if quick else (20, 100)
    train = torch.cat([(y == c).nonzero().flatten()[torch.randperm(int((y == c).sum()), generator=gen)[:per_class]]
                       for c in range(int(y.max()) + 1)])
    x = torch.rand(data.num_nodes, 200, generator=gen, dtype=torch.float64) if quick else data.x
    Z = FilteredRows(data.edge_index, x, SGCFilter(2)).rows(train)
    yt, rows = y[train], torch.arange(train.numel())

    def alone():
        return [logistic_regression(Z, yt, rows, rows, wd, epochs=epochs) for wd in WEIGHT_DECAYS]

    def side_by_side():
        return logistic_regressions(Z, yt, rows, rows, WEIGHT_DECAYS, epochs=epochs)
    same = all(torch.equal(a.argmax(1), b.argmax(1)) and float((a - b).abs().max()) <= 1e-5 * float(a.abs().max())
               for a, b in zip(alone(), side_by_side()))
    return _median_seconds(alone, repeats), _median_seconds(side_by_side, repeats), same


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default=None, help="also write the table to this markdown file")
    ap.add_argument("--quick", action="store_true", help="a generated 1000-node graph, 32 columns, 2 repeats, no report")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    warnings.simplefilter("ignore", UserWarning)            # torch: "sparse CSR support is in beta"
    repeats, wide = (2, 32) if args.quick else (args.repeats, None)
    name, data, N = _graph(args.quick)
    edge_index = data.edge_index
    readout_rows = "[12, 200], 20 epochs" if args.quick else "[300, 6805] float64, 100 epochs"
    load = os.getloadavg()[0]
    rows = [("APPNP, 10 steps, forward and backward, [N, 15] float32", "autograd's CSR backward",
             "`symmetric_product`", *appnp(edge_index, N, repeats)),
            (f"GGCM negative graph, [N, {wide or 300}] float64", "loop over the permutations",
             "`permutation_graph_product`", *negative_graph(edge_index, N, repeats, wide or 300)),
            (f"GGCM negative graph on {wide or 300} identity columns, float64", "`permutation_graph_product`",
             "`permutation_graph_columns`", *negative_columns(edge_index, N, repeats, wide or 300)),
            ("GAT input projection, forward and backward, " + ("[N, 500] float32" if args.quick else
                                                               "CS's features float32"), "`F.linear` (PyG)",
             "`_InputProjection`", *gat_projection(data, repeats, args.quick)),
            ("hidden-layer dropout 0.8, forward and backward, [N, 64] float32", "`F.dropout`", "`dropout`",
             *hidden_dropout(N, repeats)),
            (f"feature filter step, [N, {wide or 500}] float64", "scipy CSR", f"torch CSR, {args.threads} threads",
             *filter_product(edge_index, N, repeats, wide or 500)),
            (f"feature filter step, [N, {wide or 500}] float64", "torch CSR, one call", "`blockwise_columns`",
             *blocked_product(edge_index, N, repeats, wide or 500)),
            (f"feature filter, {4 if args.quick else 16} steps, [N, {wide or 457}] float64", "blocks per product",
             "blocks through the filter",
             *blocked_filter(edge_index, N, repeats, wide or 457, 4 if args.quick else 16)),
            (f"read-out, {len(WEIGHT_DECAYS)} weight decays, SGC's rows {readout_rows}", "one read-out per decay",
             "`logistic_regressions`", *readout(data, repeats, args.quick))]
    lines = [f"{name}: {N} nodes, {edge_index.shape[1]} directed edges; {args.threads} torch threads, load average "
             f"{load:.2f} on {os.cpu_count()} cores at start; median of {repeats} runs", "",
             "| product | old form | new form | old (s) | new (s) | old / new | same result |", "|---|---|---|---|---|---|---|"]
    for what, old, new, t_old, t_new, same in rows:
        lines.append(f"| {what} | {old} | {new} | {t_old:.4f} | {t_new:.4f} | {t_old / t_new:.2f}x | "
                     f"{'yes' if same else 'NO'} |")
    text = "\n".join(lines)
    print(text)
    if args.out and not args.quick:
        Path(args.out).write_text(text + "\n")
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
