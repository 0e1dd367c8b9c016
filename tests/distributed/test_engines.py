"""Label-Prop and STKR (Algorithms 1 and 2) on 2 and 4 gloo processes give the single-process
scores: 1e-10 in float64, 1e-5 in float32, on a random graph, a graph with isolated nodes and
several components, and Cora; transductive and inductive."""
from __future__ import annotations

import os
import sys

import pytest
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from dist_cases import (ENGINES, FLOAT32, GRIDS, components_graph, labels_and_split,  # noqa: E402
                        random_graph, run_engine, run_grid)
from dist_cases import lpf  # noqa: E402
from dist_launch import launch  # noqa: E402

from graphstk.experiments.kernels import KernelCache  # noqa: E402
from graphstk.methods.engine import solve  # noqa: E402
from graphstk.methods.problem import make_problem  # noqa: E402
from graphstk.operators import GraphKernel  # noqa: E402

TIMEOUT_S = 300   # a bound on a hung run, far above its normal time


def _graphs(load_shared_or_none):
    graphs = {"random": random_graph(), "components": components_graph()}
    if load_shared_or_none is not None:
        data = load_shared_or_none
        graphs["Cora"] = (data.edge_index, int(data.num_nodes))
    return graphs


@pytest.fixture(scope="module")
def cora_graph(load_shared):
    try:
        return load_shared("Cora", features=False)
    except pytest.skip.Exception:
        return None


@pytest.fixture(scope="module", params=[(2, "contiguous"), (4, "rcm")], ids=["P2-contiguous", "P4-rcm"])
def distributed(request, cora_graph, tmp_path_factory):
    P, partition = request.param
    graphs = _graphs(cora_graph)
    splits = {name: labels_and_split(n) for name, (_, n) in graphs.items()}
    out = tmp_path_factory.mktemp(f"dist{P}")
    job = os.path.join(out, "job.pt")
    torch.save({"graphs": graphs, "splits": splits, "partition": partition}, job)
    codes = launch(P, job, str(out), TIMEOUT_S)
    for rank, (code, err) in enumerate(codes):
        assert code == 0, f"process {rank} of {P} ended with {code}:\n{err[-3000:]}"
    return graphs, splits, torch.load(os.path.join(out, "scores.pt"))


@pytest.fixture(scope="module")
def serial_scores(cora_graph):
    cache = {}

    def get(gname, setting, dtype, engine, graphs, splits):
        key = (gname, setting, str(dtype), engine)
        if key not in cache:
            ei, n = graphs[gname]
            y, train, hidden = splits[gname]
            kernel = GraphKernel(ei, n, hidden=hidden if setting == "inductive" else None, dtype=dtype)
            cache[key] = run_engine(kernel, engine, y, train)
        return cache[key]
    return get


CASES = [(g, s, torch.float64, e) for g in ("random", "components", "Cora") for s in ("transductive", "inductive")
         for e in ENGINES] + \
        [(g, s, torch.float32, e) for g in ("random", "components", "Cora") for s in ("transductive", "inductive")
         for e in FLOAT32]


@pytest.mark.parametrize("gname,setting,dtype,engine", CASES,
                         ids=[f"{g}-{s[:5]}-{str(d)[-7:]}-{e}" for g, s, d, e in CASES])
def test_scores_match_single_process(distributed, serial_scores, gname, setting, dtype, engine):
    graphs, splits, scores = distributed
    if gname not in graphs:
        pytest.skip("Cora is not available here")
    got = scores[(gname, setting, str(dtype), engine)]
    want = serial_scores(gname, setting, dtype, engine, graphs, splits)
    assert got.dtype == want.dtype and got.shape == want.shape
    scale = max(float(want.abs().max()), 1e-300)
    tol = 1e-10 if dtype == torch.float64 else 1e-5
    err = float((got - want).abs().max()) / scale
    assert err <= tol, f"{gname} {setting} {dtype} {engine}: relative difference {err:.2e} > {tol:g}"
    assert bool((want != 0).any())   # the comparison is not between two zero blocks


def test_partitions_have_halos(distributed):
    """The test graphs make processes exchange rows (otherwise the products would prove nothing)."""
    graphs, _, scores = distributed
    for gname in graphs:
        halo = scores[(gname, "transductive", "halo")]
        assert sum(halo["halo"]) > 0, gname


@pytest.mark.parametrize("name", list(GRIDS))
def test_runner_methods_on_partitioned_kernels_match_single_process(distributed, name):
    """The runner's STKR methods with the kernel factory of ``run.py --distributed`` give the
    single-process scores, on the graph with isolated nodes and several components."""
    graphs, splits, scores = distributed
    ei, n = graphs["components"]
    y, train, hidden = splits["components"]
    want = run_grid(KernelCache(), name, ei, y, train, hidden, n)
    for setting, w in want.items():
        got = scores[("grid", name)][setting]
        assert got.shape == w.shape
        err = float((got - w).abs().max()) / max(float(w.abs().max()), 1e-300)
        assert err <= 1e-10, f"{name} {setting}: relative difference {err:.2e}"


def test_sharded_results_gathered_on_process_0(distributed):
    """gather_results = False keeps Label-Prop's result sharded; gather(h, dst=0) makes it whole on
    process 0, equal to the single-process Yhat."""
    graphs, splits, scores = distributed
    ei, n = graphs["random"]
    y, train, _ = splits["random"]
    prob = make_problem(GraphKernel(ei, n), y, train, 3)
    want = solve(prob, lpf([0.9]), budgets=[20]).points[0].h
    whole, own_rows_match = scores["sharded"]
    assert own_rows_match
    assert float((whole - want).abs().max()) <= 1e-10 * float(want.abs().max())
