"""graphstk._hashing.content_hash: the one content hash behind every cache key."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import torch

from graphstk._hashing import content_hash


def test_equal_content_equal_hash_and_every_difference_counts():
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    assert content_hash(a) == content_hash(torch.from_numpy(a.copy())) == content_hash(np.asfortranarray(a))
    assert content_hash(a) != content_hash(a.reshape(3, 2))                 # shape
    assert content_hash(a) != content_hash(a.astype(np.float32))            # dtype
    b = a.copy()
    b[1, 2] += 1e-12
    assert content_hash(a) != content_hash(b)                               # one entry
    assert content_hash(a, "x") != content_hash("x", a)                     # order of the parts
    assert content_hash(1) != content_hash("1") and content_hash((1, 2)) == content_hash((1, 2))


def test_empty_boolean_and_zero_dimensional_arrays():
    assert content_hash(torch.zeros(0, 3)) != content_hash(torch.zeros(3, 0))
    assert content_hash(torch.empty(0, dtype=torch.long)) == content_hash(np.empty(0, dtype=np.int64))
    mask = torch.tensor([True, False, True])
    assert content_hash(mask) != content_hash(~mask)
    assert content_hash(np.float64(2.0)) != content_hash(np.array([2.0]))


def test_sparse_matrices_hash_their_csr_arrays():
    dense = np.array([[0.0, 1.0], [2.0, 0.0]])
    assert content_hash(sp.csr_matrix(dense)) == content_hash(sp.csc_matrix(dense))
    assert content_hash(sp.csr_matrix(dense)) != content_hash(dense)
    assert content_hash(sp.csr_matrix(dense)) != content_hash(sp.csr_matrix(dense.T))
