"""One content hash for every cache key of the package: :func:`content_hash`.

The run's dataset and split fingerprints, the vector datasets', the eigenpair cache's operator fingerprint,
feature-aware STKR's cache of label-free work and semi-supervised kernel PCA's basis cache all key on the
content of tensors and arrays; they hash it here, one way.
"""
from __future__ import annotations

import hashlib

import numpy as np
import scipy.sparse as sp
import torch

__all__ = ["content_hash"]


def _update(h, part) -> None:
    if isinstance(part, torch.Tensor):
        part = part.detach().cpu().contiguous().numpy()
    if sp.issparse(part):
        csr = sp.csr_matrix(part)
        for a in (csr.data, csr.indices, csr.indptr, np.asarray(csr.shape)):
            _update(h, a)
        return
    if isinstance(part, np.ndarray):
        h.update(repr((part.shape, str(part.dtype))).encode())
        flat = np.ascontiguousarray(part).reshape(-1)
        h.update(flat.view(np.uint8) if flat.size else b"")   # no copy of a contiguous array (MNIST: 440 MB)
        return
    h.update(repr(part).encode())


def content_hash(*parts) -> str:
    """The SHA-256 hex digest of ``parts`` in order: a tensor or array by its shape, dtype and bytes, a SciPy sparse
    matrix by its CSR arrays and shape, anything else (strings, numbers, tuples, dtypes) by its ``repr``.

    >>> content_hash(torch.zeros(2)) == content_hash(np.zeros(2, dtype=np.float32))
    True
    >>> content_hash(torch.zeros(2)) == content_hash(torch.zeros(2, dtype=torch.float64))
    False
    """
    h = hashlib.sha256()
    for part in parts:
        _update(h, part)
    return h.hexdigest()
