"""Top-d eigenpairs of kernel PCA (STKR Eq. 8): ARPACK against the torch block method, cold and warm.

Run from the repository root::

    python bench/topd_eigen.py --data-root DATA                 # DBLP, seed 0, k = 512, 2 threads
    python bench/topd_eigen.py --dataset Computers --k 256 --out docs/results/speed/topd_eigen.md
    python bench/topd_eigen.py --quick                          # a random 5000-node graph, k = 64: seconds

The matrix is the one kernel PCA solves in ``SP-topd (t)``: ``S_UU`` over the largest connected
component of the unlabeled nodes (``support="labeled"``) of the split ``make_split(data, 0.01, seed)``.
Side by side in one process it times

* ``arpack``: :func:`graphstk.spectral.top_eigenpairs`'s CPU route (ARPACK on a Chebyshev filter for
  ``k >= 64``, ``filtered_top_eigenpairs``);
* ``block cold``: :func:`graphstk.spectral.subspace_top_eigenpairs` from Gaussian columns;
* ``block warm``: the same from the top eigenvectors of ``S`` over the whole component before the
  labeled nodes are removed (what every seed of a transductive row shares);

each block run capped at ``--max-iter`` Rayleigh-Ritz steps (its residual says how far it got), and
prints seconds, block products, the residual ``max ||S u - mu u||`` and whether it met the bound
``1e-10 * radius``; then the QR of one ``n x p`` block (a step of the block method) by
``torch.linalg.qr``, which the block method uses, and by SciPy's LAPACK. This is the measurement behind :func:`graphstk.spectral.eigen_route`'s CPU choice.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from graphstk.operators import GraphKernel, SparseOperator  # noqa: E402
from graphstk.spectral import eigen  # noqa: E402
from graphstk.spectral.eigen import guard_size, subspace_top_eigenpairs  # noqa: E402


def _giant(op: SparseOperator) -> torch.Tensor:
    from scipy.sparse.csgraph import connected_components

    _, lab = connected_components(eigen._to_scipy(op), directed=False)
    return torch.as_tensor(np.nonzero(lab == np.bincount(lab).argmax())[0])


def matrices(args):
    """``(S over the component, rows of S_UU's component inside it)``."""
    if args.quick:
        from torch_geometric.utils import to_undirected

        n = 5000
        g = torch.Generator().manual_seed(0)
        e = torch.randint(0, n, (2, 5 * n), generator=g)
        ei = to_undirected(e[:, e[0] != e[1]], num_nodes=n)
        K = GraphKernel(ei, n, dtype=torch.float64)
        train = torch.randperm(n, generator=g)[:50]
    else:
        from graphstk.data import make_split
        from graphstk.experiments.config import load_config
        from graphstk.experiments.datasets import load_spec

        cfg = load_config(str(ROOT / "configs/table1.yaml"))
        spec = [s for s in cfg.datasets if s.name == args.dataset][0]
        data = load_spec(spec, args.data_root)
        K = GraphKernel(data.edge_index, int(data.num_nodes), dtype=torch.float64)
        train = make_split(data, 0.01, args.seed).train
    S, _ = K.normalized_gram(torch.arange(K.shape[0]))
    whole = _giant(S)
    keep = torch.zeros(K.shape[0], dtype=torch.bool)
    keep[whole] = True
    keep[train] = False
    U = keep.nonzero().flatten()
    part = U[_giant(S.block(U, U))]
    pos = torch.full((K.shape[0],), -1, dtype=torch.long)
    pos[whole] = torch.arange(whole.numel())
    return S.block(whole, whole), pos[part]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", default="DBLP")
    ap.add_argument("--data-root", default=os.environ.get("GRAPHSTK_DATA", "datasets"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--k", type=int, default=512)
    ap.add_argument("--max-iter", type=int, default=30)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=None, help="also write the table (markdown) here")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    k = 64 if args.quick else args.k
    A_whole, rows = matrices(args)
    A = A_whole.block(rows, rows)
    n = A.shape[0]
    radius = eigen.spectral_radius(A)
    lines = [f"`{'--quick' if args.quick else args.dataset}`: S_UU's largest component, {n} nodes, "
             f"{A.nnz} nonzeros, k = {k}, block p = {guard_size(k, n)}, {args.threads} threads, load average "
             f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores", "",
             "| route | seconds | block products | residual | within 1e-10 radius |", "|---|---|---|---|---|"]
    t = time.perf_counter()
    w, v = eigen.top_eigenpairs(A, k)
    ta = time.perf_counter() - t
    res_a = float((A @ v - v * w).norm(dim=0).max())
    lines.append(f"| arpack ({eigen.eigen_route(n, k, 'cpu')}) | {ta:.1f} | - | {res_a:.1e} | "
                 f"{'yes' if res_a <= 1e-10 * radius else 'no'} |")
    _, V = eigen.top_eigenpairs(A_whole, guard_size(k, A_whole.shape[0]))
    for name, start in (("block cold", None), ("block warm", V[rows])):
        t = time.perf_counter()
        r = subspace_top_eigenpairs(A.matmul, n, k, lo=-radius, radius=radius, start=start, max_iter=args.max_iter)
        tb = time.perf_counter() - t
        gap = float((r.values - w).abs().max())
        lines.append(f"| {name} | {tb:.1f} | {r.products} | {r.residual:.1e} | {'yes' if r.converged else 'no'} "
                     f"(eigenvalues within {gap:.0e} of ARPACK's) |")
    import scipy.linalg

    x = torch.randn(n, guard_size(k, n), dtype=torch.float64)
    t = time.perf_counter()
    torch.linalg.qr(x, mode="reduced")
    tq = time.perf_counter() - t
    t = time.perf_counter()
    scipy.linalg.qr(x.numpy(), mode="economic")
    ts = time.perf_counter() - t
    lines += ["", f"| QR of a {n} x {x.shape[1]} float64 block | seconds |", "|---|---|",
              f"| torch.linalg.qr | {tq:.2f} |", f"| scipy.linalg.qr (LAPACK) | {ts:.2f} |"]
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
