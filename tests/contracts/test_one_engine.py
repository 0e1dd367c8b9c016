"""One engine, one door: the estimator, the validated grid the runner uses, the ``graphstk.nn``
module and the partitioned kernel over two processes give the same scores on Cora for the same
transform and route, because each of them is one call of ``graphstk.methods.engine.solve``."""
from __future__ import annotations

import os
import sys
import warnings

import pytest
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "distributed"))

from dist_launch import launch  # noqa: E402  (a test helper beside the distributed tests)

from graphstk.methods import STKR, STKRCV  # noqa: E402
from graphstk.nn import STKRPropagation  # noqa: E402
from graphstk.spectral import InverseLaplacian, Polynomial  # noqa: E402

TIMEOUT_S = 300   # a bound on a hung process group, far above its normal time
CASES = {"lap-cg": (InverseLaplacian(0.9), 1.0), "poly-cg": (Polynomial.monomial(2), 1e-2)}


@pytest.fixture(scope="module")
def cora(load_shared):
    data = load_shared("Cora", features=False)
    return data, data.train_mask.nonzero().flatten()


@pytest.fixture(scope="module")
def distributed_scores(cora, tmp_path_factory):
    """The engines of ``CASES`` on Cora's graph kernel partitioned over 2 gloo processes."""
    data, train = cora
    out = tmp_path_factory.mktemp("one_engine")
    job = os.path.join(out, "job.pt")
    torch.save({"one_graph": (data.edge_index, int(data.num_nodes), data.y, train), "engines": list(CASES),
                "partition": "contiguous"}, job)
    codes = launch(2, job, str(out), TIMEOUT_S)
    for rank, (code, err) in enumerate(codes):
        assert code == 0, f"process {rank} ended with {code}:\n{err[-3000:]}"
    return torch.load(os.path.join(out, "scores.pt"))


@pytest.mark.parametrize("case", list(CASES))
def test_every_door_gives_the_same_scores_on_cora(case, cora, distributed_scores):
    data, train = cora
    transform, beta = CASES[case]
    every = torch.arange(int(data.num_nodes))
    opts = dict(solver="cg", tol=1e-12, max_iter=5000, normalization="symmetric")   # the workers' Eq. 23 kernel
    est = STKR(transform, beta, **opts).fit(data, train)
    ref = est.decision_function(every)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ((_, grid),) = STKRCV([transform], [beta], **opts).grid_scores(data, train, every)
    module = STKRPropagation(transform, beta, dtype=torch.float64, **opts)
    nn_scores = module(data.y, data.edge_index, data.train_mask)
    scale = ref.abs().max()
    for name, got in (("STKRCV (the runner's path)", grid), ("nn.STKRPropagation", nn_scores),
                      ("2 processes", distributed_scores[case])):
        torch.testing.assert_close(got, ref, atol=1e-7 * scale, rtol=0, msg=lambda m: f"{name}: {m}")
    assert "cg" in est.solver_ and "(engine)" in module.route_
