"""Label propagation on Cora (public split): PyG's LabelPropagation and graphstk's side by side.
=============================================================================================

    python examples/label_prop.py [--data-root PATH] [--seeds 10]

The same call, ``model(y, edge_index, mask=train_mask)``, with PyG's class and with
``graphstk.nn.LabelPropagation`` (same outputs by default), then graphstk's options: the training
labels kept at every step, no clamp, and the fixed point solved to a tolerance. Label propagation
has no randomness, so the seeds repeat the timing only.
"""
from __future__ import annotations

import torch
from _common import accuracy, cora, parser, summary, time_ms, write
from torch_geometric.nn.models import LabelPropagation as PyGLabelPropagation

from graphstk.nn import LabelPropagation


def main():
    args = parser(__doc__.split("\n")[0]).parse_args()
    data = cora(args.data_root)
    adj_t = torch.sparse_coo_tensor(data.edge_index.flip(0), torch.ones(data.num_edges),
                                    (data.num_nodes,) * 2, check_invariants=False).coalesce().to_sparse_csr()
    models = {
        "PyG LabelPropagation(3, 0.9)": PyGLabelPropagation(3, 0.9),
        "graphstk LabelPropagation(3, 0.9)": LabelPropagation(3, 0.9),
        "PyG LabelPropagation(50, 0.9)": PyGLabelPropagation(50, 0.9),
        "graphstk LabelPropagation(50, 0.9)": LabelPropagation(50, 0.9),
        "graphstk LabelPropagation(50, 0.9, keep_labels=True)": LabelPropagation(50, 0.9, keep_labels=True),
        "graphstk LabelPropagation(None, 0.9, clamp=False) (fixed point)": LabelPropagation(None, 0.9, clamp=False),
    }
    rows = []
    for name, model in models.items():
        accs, ms = [], []
        for seed in range(args.seeds):
            torch.manual_seed(seed)
            out = model(data.y, adj_t, mask=data.train_mask)
            accs.append(accuracy(out, data.y, data.test_mask))
            ms.append(time_ms(lambda: model(data.y, adj_t, mask=data.train_mask), repeats=5))
        rows.append({"method": name, "test_acc": summary(accs), "ms_per_forward": sum(ms) / len(ms)})
    same = torch.allclose(models["PyG LabelPropagation(3, 0.9)"](data.y, adj_t, data.train_mask),
                          models["graphstk LabelPropagation(3, 0.9)"](data.y, adj_t, data.train_mask))
    write("label_prop", rows, args, note=f"graphstk's default output equals PyG's: {same}; "
                                         "adjacency: a CSR adj_t, unchanged between calls")


if __name__ == "__main__":
    main()
