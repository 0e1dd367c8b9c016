"""Accuracy against labels per class: STKR and Label-Prop on Cora
===============================================================

Transductive node classification on Cora (2708 papers, 7 classes) with ``k`` labeled nodes per
class, for STKR with the inverse Laplacian (``s(l) = l / (1 - eta l)``, Example 1), STKR with the
polynomial ``s(l) = l^8`` (Algorithm 1), and Label Propagation (Zhou et al., 2003). Every
setting uses fixed hyperparameters (no model selection) and the same 1000 test nodes per seed;
the bands are one standard deviation over the seeds.

Cora is read from ``$GRAPHSTK_DATA`` (offline). Where it is absent the example runs on a
stochastic block model of the same size instead, and says so.
"""
import os
import time
import warnings

import matplotlib.pyplot as plt
import networkx as nx
import numpy as np
import torch

import graphstk as gs
from graphstk.methods import UnreachableNodesWarning

# Nodes in components without a label are predicted -1 (counted as errors here); the estimators
# warn about them at every fit, which this example reports once instead.
warnings.filterwarnings("ignore", category=UnreachableNodesWarning)

try:
    data, name = gs.load_dataset("Cora", root=os.environ.get("GRAPHSTK_DATA")), "Cora"
except Exception as err:                                  # offline without the dataset
    print(f"Cora not available ({type(err).__name__}); using a stochastic block model")
    sizes = [387] * 7
    probs = np.full((7, 7), 0.0005) + np.eye(7) * 0.006
    data, name = gs.load_dataset(nx.stochastic_block_model(sizes, probs, seed=0), label="block"), "SBM"

methods = {
    "STKR, inverse Laplacian (eta = 0.99)": lambda: gs.STKR(gs.InverseLaplacian(eta=0.99), beta=1e-3),
    "STKR, l^8": lambda: gs.STKR(gs.Polynomial.monomial(8), beta=1e-3),
    "Label-Prop (alpha = 0.99)": lambda: gs.LabelPropagation(alpha=0.99),
}
per_class, seeds = [1, 2, 5, 10, 20], [0, 1, 2]
acc = {m: np.zeros((len(per_class), len(seeds))) for m in methods}
t0 = time.perf_counter()
for i, k in enumerate(per_class):
    for j, seed in enumerate(seeds):
        split = gs.make_split(data, n_test=1000, train_per_class=k, val_per_class=0, seed=seed)
        for m, make in methods.items():
            est = make().fit(data, split.train)
            pred = est.predict(split.test)
            acc[m][i, j] = 100 * float((pred == data.y[split.test]).float().mean())
print(f"test nodes no label reaches (predicted -1) at k = {per_class[-1]}, seed {seeds[-1]}: "
      f"{int((pred == -1).sum())} of {len(pred)}")
print(f"{name}: {data.num_nodes} nodes, {len(per_class) * len(seeds) * len(methods)} fits "
      f"in {time.perf_counter() - t0:.1f} s")
for m in methods:
    print(f"{m:<40}", "  ".join(f"k={k}: {a:.1f}" for k, a in zip(per_class, acc[m].mean(1))))

fig, ax = plt.subplots(figsize=(6.5, 4))
for m in methods:
    mean, std = acc[m].mean(1), acc[m].std(1)
    ax.plot(per_class, mean, "o-", label=m)
    ax.fill_between(per_class, mean - std, mean + std, alpha=0.2)
ax.set_xscale("log")
ax.set_xticks(per_class)
ax.set_xticklabels([str(k) for k in per_class])
ax.set_xlabel("labeled nodes per class")
ax.set_ylabel("test accuracy (%)")
ax.set_title(f"{name}, transductive, {len(seeds)} seeds")
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()
