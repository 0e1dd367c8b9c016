"""STKR-Prop as a GNN layer: ``graphstk.nn.STKRPropagation`` against PyG's ``APPNP`` in one training loop.

Run from the repository root::

    python bench/gnn_layer.py                       # Cora and CiteSeer, public split, 10 seeds, 200 epochs
    python bench/gnn_layer.py --datasets Cora --seeds 3 --out /tmp/gnn_layer.json
    python bench/gnn_layer.py --quick               # a few epochs on a generated graph: seconds

APPNP-style models (Gasteiger et al., 2019), side by side in one process with the same MLP
(``features -> 64 -> classes``, ReLU, dropout 0.5), the same seeds, Adam (lr 0.01, weight decay 5e-4)
and 200 epochs; the propagation step differs:

* ``APPNP``: PyG's ``APPNP(K=10, alpha=0.1)``;
* ``STKR``: ``graphstk.nn.STKRPropagation(InverseLaplacian(0.9), beta=1e-2)`` with its defaults (the
  lazy kernel, ``solver="auto"``, every node a target: the filter ``s(S) (s(S) + beta I)^{-1}``, one CG
  solve forward and one adjoint solve backward);
* ``STKR b=10``: the same layer with ``beta=10``, a ridge on the scale of ``s`` (not judged by the
  targets; it shows where the filter's cutoff ``s(lambda) = beta`` has to sit for a GNN).

Reported per dataset: seconds per epoch (forward, backward and step, median over epochs and seeds) and
the test accuracy at the epoch of best validation accuracy (mean over seeds). Targets: STKR's seconds
per epoch at most 2x APPNP's, and its accuracy at least APPNP's minus 0.5 points; PASS/FAIL printed.
"""
from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
import warnings
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from graphstk.nn import STKRPropagation  # noqa: E402
from graphstk.spectral.transforms import InverseLaplacian  # noqa: E402

TIME_RATIO, ACC_GAP = 2.0, 0.5


class Model(torch.nn.Module):
    """An MLP, then a propagation ``prop(scores, edge_index)``."""

    def __init__(self, features: int, classes: int, prop, hidden: int = 64, dropout: float = 0.5):
        super().__init__()
        self.lin1, self.lin2 = torch.nn.Linear(features, hidden), torch.nn.Linear(hidden, classes)
        self.prop, self.dropout = prop, dropout

    def forward(self, x, edge_index):
        x = torch.nn.functional.dropout(x, self.dropout, self.training)
        x = torch.relu(self.lin1(x))
        x = torch.nn.functional.dropout(x, self.dropout, self.training)
        return self.prop(self.lin2(x), edge_index)


LAYERS = ("APPNP", "STKR", "STKR b=10")


def propagation(name: str):
    if name == "APPNP":
        from torch_geometric.nn import APPNP

        return APPNP(K=10, alpha=0.1)
    return STKRPropagation(InverseLaplacian(0.9), beta=10.0 if name == "STKR b=10" else 1e-2, dtype=torch.float32)


def train(data, name: str, seed: int, epochs: int) -> tuple[float, float]:
    """``(median seconds per epoch, test accuracy at the best validation epoch)``."""
    torch.manual_seed(seed)
    model = Model(data.num_features, int(data.y.max()) + 1, propagation(name))
    opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    times, best_val, test_at_best = [], -1.0, 0.0
    for _ in range(epochs):
        t0 = time.perf_counter()
        model.train()
        opt.zero_grad()
        out = model(data.x, data.edge_index)
        loss = torch.nn.functional.cross_entropy(out[data.train_mask], data.y[data.train_mask])
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - t0)
        model.eval()
        with torch.no_grad():
            pred = model(data.x, data.edge_index).argmax(1)
        val = float((pred[data.val_mask] == data.y[data.val_mask]).float().mean())
        if val > best_val:
            best_val = val
            test_at_best = float((pred[data.test_mask] == data.y[data.test_mask]).float().mean())
    return statistics.median(times), 100.0 * test_at_best


def synthetic(seed: int = 0):
    """A small two-block graph with informative features (for ``--quick`` without datasets)."""
    from torch_geometric.data import Data
    from torch_geometric.utils import stochastic_blockmodel_graph

    g = torch.Generator().manual_seed(seed)
    sizes = [100, 100]
    ei = stochastic_blockmodel_graph(sizes, [[0.08, 0.01], [0.01, 0.08]])
    y = torch.cat([torch.zeros(100), torch.ones(100)]).long()
    x = torch.randn(200, 16, generator=g) + y[:, None].float()
    perm = torch.randperm(200, generator=g)
    masks = [torch.zeros(200, dtype=torch.bool) for _ in range(3)]
    for m, ids in zip(masks, (perm[:20], perm[20:60], perm[60:])):
        m[ids] = True
    return Data(x=x, edge_index=ei, y=y, train_mask=masks[0], val_mask=masks[1], test_mask=masks[2])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", nargs="+", default=["Cora", "CiteSeer"])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--data-root", default=None)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--out", default=None, help="write the report (a markdown table and the verdicts) here")
    ap.add_argument("--quick", action="store_true", help="2 seeds, 5 epochs, a generated graph")
    args = ap.parse_args(argv)
    if args.quick:
        args.threads = args.threads or 1
    if args.threads:
        torch.set_num_threads(args.threads)
    warnings.simplefilter("ignore")
    if args.quick:
        graphs = {"generated": synthetic()}
        args.seeds, args.epochs = 2, 5
    else:
        import graphstk as gs

        graphs = {name: gs.load_dataset(name, root=args.data_root) for name in args.datasets}
    rows, verdicts, ok = [], [], True
    print(f"{'dataset':<10} {'layer':<10} {'s/epoch':>9} {'test acc':>9}")
    for name, data in graphs.items():
        res = {}
        for layer in LAYERS:
            runs = [train(data, layer, seed, args.epochs) for seed in range(args.seeds)]
            sec = statistics.median(r[0] for r in runs)
            acc = statistics.mean(r[1] for r in runs)
            res[layer] = (sec, acc)
            rows.append({"dataset": name, "layer": layer, "seconds_per_epoch": sec, "test_acc": acc,
                         "seeds": args.seeds, "epochs": args.epochs})
            print(f"{name:<10} {layer:<10} {sec:9.4f} {acc:9.2f}")
        ratio = res["STKR"][0] / res["APPNP"][0]
        gap = res["APPNP"][1] - res["STKR"][1]
        t_ok, a_ok = ratio <= TIME_RATIO, gap <= ACC_GAP
        ok &= t_ok and a_ok
        verdicts.append(f"{name}: seconds per epoch STKR / APPNP = {ratio:.2f} (target <= {TIME_RATIO}): "
                        f"{'PASS' if t_ok else 'FAIL'}; accuracy APPNP - STKR = {gap:+.2f} points (target <= "
                        f"{ACC_GAP}): {'PASS' if a_ok else 'FAIL'}")
        print(verdicts[-1])
    if args.out:
        lines = ["| dataset | layer | seconds per epoch | test accuracy (%) | seeds | epochs |", "|---|---|---|---|---|---|"]
        lines += [f"| {r['dataset']} | {r['layer']} | {r['seconds_per_epoch']:.4f} | {r['test_acc']:.2f} | "
                  f"{r['seeds']} | {r['epochs']} |" for r in rows]
        lines += [""] + [f"- {v}" for v in verdicts]
        lines += ["", f"torch {torch.__version__}, {torch.get_num_threads()} threads, {platform.processor() or platform.machine()}"]
        Path(args.out).write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
