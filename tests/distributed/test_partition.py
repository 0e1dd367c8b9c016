"""Partitioners and halo counts (no processes needed)."""
from __future__ import annotations

import pytest
import torch

from graphstk.distributed import halo_report, halo_sizes, partition_graph
from graphstk.distributed.partition import METHODS


def shuffled_grid(n: int = 30, seed: int = 0):
    idx = torch.arange(n * n).view(n, n)
    ei = torch.cat([torch.stack([idx[:, :-1].flatten(), idx[:, 1:].flatten()]),
                    torch.stack([idx[:-1].flatten(), idx[1:].flatten()])], 1)
    perm = torch.randperm(n * n, generator=torch.Generator().manual_seed(seed))
    ei = perm[ei]
    return torch.cat([ei, ei.flip(0)], 1), n * n


def brute_halo(ei, part):
    inv = part.inverse()
    owner = [int(part.rank(inv[i:i + 1])) for i in range(part.num_nodes)]
    halo = [set() for _ in range(part.parts)]
    for r, c in ei.T.tolist():
        if owner[r] != owner[c]:
            halo[owner[r]].add(c)
    return [len(h) for h in halo]


@pytest.mark.parametrize("method", [m for m in METHODS if m != "metis"] + ["metis"])
@pytest.mark.parametrize("parts", [1, 3, 4])
def test_partition_is_a_permutation_and_halo_matches_brute_force(method, parts):
    if method == "metis":
        pytest.importorskip("pymetis")
    ei, n = shuffled_grid(12)
    part = partition_graph(ei[0], ei[1], n, parts, method)
    assert torch.equal(torch.sort(part.order).values, torch.arange(n))
    assert part.bounds[0] == 0 and part.bounds[-1] == n and len(part.bounds) == parts + 1
    assert all(b >= a for a, b in zip(part.bounds, part.bounds[1:]))
    assert halo_sizes(ei[0], ei[1], part) == brute_halo(ei, part)
    rep = halo_report(ei[0], ei[1], part, columns=3, itemsize=4)
    assert rep["rows_exchanged"] == sum(rep["halo"]) and rep["bytes_per_product"] == 12 * rep["rows_exchanged"]


def test_reordering_shrinks_the_halo_of_a_shuffled_grid():
    """Contiguous blocks of a randomly numbered grid need most remote rows; RCM needs about one
    grid line per cut."""
    ei, n = shuffled_grid(30)
    contiguous = halo_report(ei[0], ei[1], partition_graph(ei[0], ei[1], n, 4, "contiguous"))
    rcm = halo_report(ei[0], ei[1], partition_graph(ei[0], ei[1], n, 4, "rcm"))
    assert contiguous["halo_fraction"] > 0.5
    assert rcm["halo_fraction"] < 0.25
    assert rcm["rows_exchanged"] <= 6 * 30


def test_bad_arguments():
    ei, n = shuffled_grid(4)
    with pytest.raises(ValueError, match="parts must be an integer >= 1"):
        partition_graph(ei[0], ei[1], n, 0)
    with pytest.raises(ValueError, match="unknown partitioner 'spectral'"):
        partition_graph(ei[0], ei[1], n, 2, "spectral")
