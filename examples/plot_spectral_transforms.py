"""Spectral transforms s(lambda) side by side
==========================================

STKR (Zhai et al., ICLR 2024) predicts with the kernel ``s(K)``: the base kernel's eigenvectors
kept, its eigenvalues ``lambda`` mapped through a transform ``s``. This example evaluates the
transforms of :mod:`graphstk.spectral` on ``[0, 1]`` (the spectrum of a normalized adjacency lies
in ``[-1, 1]``, with ``lambda_1 = 1``) and at the eigenvalues of Zachary's karate club graph:

* :class:`~graphstk.spectral.Polynomial` ``s(l) = sum_p pi_p l^p`` (Algorithm 1);
* :class:`~graphstk.spectral.InverseLaplacian` ``s(l) = l / (1 - eta l)`` (Example 1);
* :class:`~graphstk.spectral.ReciprocalPolynomial` ``1/s(l) = sum_p xi_p l^(p-r)`` (Eq. 20);
* :class:`~graphstk.spectral.TopD` keeps the top ``d`` eigenvalues and zeroes the rest (Sec. 4).

Each curve is divided by ``s(1)`` so the shapes compare: the larger the degree or ``eta``, the
more the transform concentrates on the top of the spectrum (the smooth directions of the graph).
"""
import matplotlib.pyplot as plt
import networkx as nx
import torch

import graphstk as gs
from graphstk.operators import GraphKernel

karate = gs.load_dataset(nx.karate_club_graph(), label="club")
S = GraphKernel(karate.edge_index, karate.num_nodes).to_dense().double()
S = S / torch.linalg.eigvalsh(S).abs().max()             # the normalized adjacency, lambda_1 = 1
eig = torch.linalg.eigvalsh(S).flip(0)                     # descending
lam = torch.linspace(0, 1, 401, dtype=torch.float64)
print("karate: %d nodes, eigenvalues in [%.3f, %.3f]" % (karate.num_nodes, eig.min(), eig.max()))

panels = {
    "Polynomial.monomial(k)": {f"k = {k}": gs.Polynomial.monomial(k) for k in (1, 2, 4, 8)},
    "InverseLaplacian(eta)": {f"eta = {e}": gs.InverseLaplacian(eta=e) for e in (0.5, 0.9, 0.99)},
    "ReciprocalPolynomial(xi, r)": {"xi = (1, -0.5), r = 1": gs.ReciprocalPolynomial([1.0, -0.5], r=1),
                                    "xi = (1, -0.9), r = 2": gs.ReciprocalPolynomial([1.0, -0.9], r=2),
                                    "xi = (1, -0.5, -0.3), r = 2": gs.ReciprocalPolynomial([1.0, -0.5, -0.3], r=2)},
}
fig, axes = plt.subplots(1, 4, figsize=(15, 3.6), sharey=True)
for ax, (title, transforms) in zip(axes, panels.items()):
    for label, s in transforms.items():
        s.validate(1.0)                                   # no pole on [0, lambda_1]
        ax.plot(lam, s(lam) / s(torch.tensor(1.0)), label=label)
    ax.set_title(title, fontsize=10)
    ax.set_xlabel("lambda")
    ax.legend(fontsize=8)
axes[0].set_ylabel("s(lambda) / s(1)")

ax = axes[3]                                              # TopD: a function of the eigenvalue's rank
for d, style in ((6, dict(marker="s", ms=4)), (2, dict(marker="o", ms=9, mfc="none"))):
    kept = torch.where(torch.arange(len(eig)) < d, eig, torch.zeros_like(eig))
    ax.plot(eig, kept / eig[0], ls="none", label=f"TopD(d={d})", **style)
ax.set_title("TopD(d) on karate's spectrum", fontsize=10)
ax.set_xlabel("lambda_i")
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()
