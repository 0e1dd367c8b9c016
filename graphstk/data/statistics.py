"""Summary counts of a graph (:func:`dataset_statistics`)."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import torch
from scipy.sparse.csgraph import connected_components
from torch_geometric.data import Data

from .validation import validate_data

__all__ = ["dataset_statistics"]


def dataset_statistics(data: Data) -> dict:
    """Summary counts of a graph.

    Returns a dict with ``nodes``, ``edges`` (``edge_index.shape[1]``: directed count, as
    PyG reports it, e.g. 10,556 for Cora), ``features`` (0 when ``x`` is None),
    ``classes`` (``max(y) + 1``, PyG's convention), ``isolated_nodes`` (no edge to another
    node), ``self_loops``, ``components`` (connected components of the undirected graph,
    isolated nodes included; via :func:`scipy.sparse.csgraph.connected_components`),
    ``undirected`` (bool), ``label_counts`` (list) and, when the data carries a default
    split, ``train``/``val``/``test`` mask sizes.
    """
    validate_data(data)
    n = int(data.num_nodes)
    ei = data.edge_index.cpu().long()
    row, col = ei[0].numpy(), ei[1].numpy()
    off = row != col
    deg = np.bincount(row[off], minlength=n) + np.bincount(col[off], minlength=n)
    adj = sp.csr_matrix((np.ones(int(off.sum()), dtype=np.int8), (row[off], col[off])), shape=(n, n))
    n_comp, _ = connected_components(adj, directed=False)
    sym = adj.astype(bool)
    y = data.y.cpu().long()
    stats = {
        "nodes": n,
        "edges": int(ei.shape[1]),
        "features": int(data.x.shape[1]) if data.x is not None else 0,
        "classes": int(y.max()) + 1,
        "isolated_nodes": int((deg == 0).sum()),
        "self_loops": int((~off).sum()),
        "components": int(n_comp),
        "undirected": bool((sym != sym.T).nnz == 0),
        "label_counts": torch.bincount(y).tolist(),
    }
    for k in ("train", "val", "test"):
        m = getattr(data, f"{k}_mask", None)
        if m is not None:
            stats[k] = int(m.sum())
    return stats
