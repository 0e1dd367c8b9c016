"""LS-KPCA and the spectral support estimator on a graph kernel, through the classes users import:
``LSKPCA(kernel="precomputed").fit(K, y)`` with ``K`` a square KernelOperator over the nodes (``y = -1``
on unlabeled nodes; ``predict(K)`` scores every node), and ``SpectralSupportEstimator(kernel=K)`` fitted
on node ids."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.metrics import roc_auc_score

from graphstk.methods import LSKPCA, MVKPCA, SpectralSupportEstimator
from graphstk.operators import GraphKernel
from graphstk.spectral import diffusion_kernel


def _two_communities(n=80, p_in=0.2, p_out=0.01, seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], n // 2)
    P = np.where(y[:, None] == y[None, :], p_in, p_out)
    A = np.triu(rng.random((n, n)) < P, 1)
    A = A | A.T
    ei = torch.as_tensor(np.stack(np.nonzero(A)), dtype=torch.long)
    return ei, y


def test_ls_kpca_on_a_graph_kernel_operator():
    ei, y = _two_communities()
    n = y.size
    K = diffusion_kernel(ei, n, tau=3.0)
    y_semi = -np.ones(n, dtype=int)
    y_semi[[0, 1, 2, 40, 41, 42]] = y[[0, 1, 2, 40, 41, 42]]
    est = LSKPCA(kernel="precomputed", c=10.0, s=0.5).fit(K, y_semi)
    pred = est.predict(K)
    assert isinstance(pred, torch.Tensor) and (pred.numpy() == y).mean() > 0.9
    # the same model from the dense Gram matrix (NumPy in, NumPy out)
    dense = LSKPCA(kernel="precomputed", c=10.0, s=0.5).fit(K.to_dense().numpy(), y_semi)
    np.testing.assert_allclose(dense.decision_function(K.to_dense().numpy()), est.decision_function(K).numpy(),
                               rtol=1e-8, atol=1e-10)
    # scores of fit nodes without any kernel evaluation equal the out-of-sample ones
    np.testing.assert_allclose(est.decision_function_fit(), dense.decision_function(K.to_dense().numpy()),
                               rtol=1e-8, atol=1e-10)
    assert MVKPCA(kernel="precomputed").fit(K, y_semi).predict(K).shape == (n,)


def test_the_normalized_adjacency_is_refused_as_not_psd():
    ei, y = _two_communities(n=40)
    y_semi = np.r_[[0, 1] * 3, [-1] * 34]
    with pytest.raises(ValueError, match="not positive semi-definite.*diffusion"):
        LSKPCA(kernel="precomputed").fit(GraphKernel(ei, 40), y_semi)


def test_support_estimator_on_a_graph_kernel_operator():
    ei, y = _two_communities()
    K = diffusion_kernel(ei, y.size, tau=3.0)
    train = np.flatnonzero(y == 0)[:30]
    est = SpectralSupportEstimator(kernel=K).fit(torch.as_tensor(train))
    test = np.r_[np.flatnonzero(y == 0)[30:], np.flatnonzero(y == 1)]
    scores = est.score_samples(torch.as_tensor(test))
    assert isinstance(scores, torch.Tensor)
    assert roc_auc_score(y[test] == 0, scores.numpy()) > 0.9
    assert set(est.predict(torch.as_tensor(test)).tolist()) <= {-1, 1}
    assert (est.fit_predict(torch.as_tensor(train)) == 1).all()        # tau_n (Eq. 30) accepts every training node
