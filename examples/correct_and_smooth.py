"""An MLP followed by Correct-and-Smooth on Cora (public split), with PyG's class and graphstk's.
==============================================================================================

    python examples/correct_and_smooth.py [--data-root PATH] [--seeds 10] [--epochs 200]

The base predictor is a 2-layer MLP on the node features (no graph), trained on the 140 training
nodes and selected on the validation nodes; its softmax output is corrected and smoothed with
``CorrectAndSmooth(num_correction_layers=50, correction_alpha=1.0, num_smoothing_layers=50,
smoothing_alpha=0.8, autoscale=False, scale=20.0)`` (the settings of PyG's example), once with
``torch_geometric.nn.models.CorrectAndSmooth`` and once with ``graphstk.nn.CorrectAndSmooth``.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from _common import accuracy, cora, parser, summary, write
from torch_geometric.nn import MLP
from torch_geometric.nn.models import CorrectAndSmooth as PyGCorrectAndSmooth

from graphstk.nn import CorrectAndSmooth

CS_ARGS = dict(num_correction_layers=50, correction_alpha=1.0, num_smoothing_layers=50, smoothing_alpha=0.8,
               autoscale=False, scale=20.0)


def train_mlp(data, seed: int, epochs: int) -> torch.Tensor:
    """Softmax output of the MLP at its best validation epoch."""
    torch.manual_seed(seed)
    model = MLP([data.num_features, 64, int(data.y.max()) + 1], dropout=0.5, norm=None)
    opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    best, best_out = -1.0, None
    for _ in range(epochs):
        model.train()
        opt.zero_grad()
        F.cross_entropy(model(data.x)[data.train_mask], data.y[data.train_mask]).backward()
        opt.step()
        model.eval()
        with torch.no_grad():
            out = model(data.x).softmax(-1)
        val = accuracy(out, data.y, data.val_mask)
        if val > best:
            best, best_out = val, out
    return best_out


def main():
    ap = parser(__doc__.split("\n")[0])
    ap.add_argument("--epochs", type=int, default=200)
    args = ap.parse_args()
    data = cora(args.data_root)
    m = data.train_mask
    accs = {"MLP": [], "MLP + PyG CorrectAndSmooth": [], "MLP + graphstk CorrectAndSmooth": []}
    for seed in range(args.seeds):
        y_soft = train_mlp(data, seed, args.epochs)
        accs["MLP"].append(accuracy(y_soft, data.y, data.test_mask))
        for name, cs in (("MLP + PyG CorrectAndSmooth", PyGCorrectAndSmooth(**CS_ARGS)),
                         ("MLP + graphstk CorrectAndSmooth", CorrectAndSmooth(**CS_ARGS))):
            out = cs.correct(y_soft, data.y[m], m, data.edge_index)
            out = cs.smooth(out, data.y[m], m, data.edge_index)
            accs[name].append(accuracy(out, data.y, data.test_mask))
    write("correct_and_smooth", [{"method": k, "test_acc": summary(v)} for k, v in accs.items()], args,
          note=f"CorrectAndSmooth({', '.join(f'{k}={v}' for k, v in CS_ARGS.items())}); MLP 64 hidden, "
               f"{args.epochs} epochs, best validation epoch")


if __name__ == "__main__":
    main()
