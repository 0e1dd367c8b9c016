"""A graph written once in its partitioned form (``python -m graphstk partition``), loaded part by
part on 2 and 4 gloo processes, each holding only its rows of the graph and of every vector
(:class:`~graphstk.distributed.ShardedGraphKernel`): Label-Prop and STKR (Algorithms 1 and 2)
give the single-process scores, 1e-10 in float64 and 1e-5 in float32; the runner's methods too."""
from __future__ import annotations

import json
import os
import sys

import pytest
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from dist_cases import run_engine, run_grid  # noqa: E402
from dist_launch import launch  # noqa: E402

from graphstk.data import make_dcsbm  # noqa: E402
from graphstk.distributed import load_part, read_manifest, write_partition  # noqa: E402
from graphstk.experiments.kernels import KernelCache  # noqa: E402
from graphstk.operators import GraphKernel  # noqa: E402

TIMEOUT_S = 300   # a bound on a hung run, far above its normal time
ENGINES = ("lp-T", "lp-cg", "lp-multishift", "lp-direct", "poly-T", "poly-cg", "poly-direct", "lap-T", "lap-cg",
           "lap-gmres", "lap-auto")
ENGINES32 = ("lp-T", "lap-T", "lp-cg")
GRIDS = ("lp", "lp-tol", "stkr-lap", "stkr-poly")


def _graph():
    data = make_dcsbm(600, 2400, num_classes=3, homophily=0.8, seed=0)
    order = torch.randperm(600, generator=torch.Generator().manual_seed(0))
    return data, order[:24]


@pytest.fixture(scope="module", params=[(2, "contiguous"), (4, "rcm")], ids=["P2-contiguous", "P4-rcm"])
def sharded(request, tmp_path_factory):
    P, method = request.param
    data, train = _graph()
    out = tmp_path_factory.mktemp(f"sharded{P}")
    store = out / "graph"
    write_partition(data, P, store, method, source="test")
    job = os.path.join(out, "job.pt")
    torch.save({"sharded": str(store), "train": train, "engines": ENGINES, "engines32": ENGINES32,
                "grids": GRIDS}, job)
    codes = launch(P, job, str(out), TIMEOUT_S)
    for rank, (code, err) in enumerate(codes):
        assert code == 0, f"process {rank} of {P} ended with {code}:\n{err[-3000:]}"
    return P, data, train, store, [torch.load(os.path.join(out, f"scores-{r}.pt")) for r in range(P)]


@pytest.fixture(scope="module")
def serial():
    data, train = _graph()
    out = {}
    for dtype, names in ((torch.float64, ENGINES), (torch.float32, ENGINES32)):
        kernel = GraphKernel(data.edge_index, data.num_nodes, dtype=dtype)
        for name in names:
            out[(str(dtype), name)] = run_engine(kernel, name, data.y, train, 3)
    cache = KernelCache()
    for name in GRIDS:
        out[("grid", name)] = run_grid(cache, name, data.edge_index, data.y, train, None, data.num_nodes,
                                       settings=("transductive",))
    return out


@pytest.mark.parametrize("dtype, name", [("torch.float64", e) for e in ENGINES] +
                         [("torch.float32", e) for e in ENGINES32])
def test_sharded_engines_equal_one_process(sharded, serial, dtype, name):
    P, _, _, _, scores = sharded
    ref = serial[(dtype, name)]
    tol = 1e-5 if dtype == "torch.float32" else (1e-9 if name == "lp-direct" else 1e-10)
    for rank in range(P):   # every process gets the same scores
        got = scores[rank][(dtype, name)]
        assert got.shape == ref.shape
        assert float((got - ref).abs().max()) <= tol * max(1.0, float(ref.abs().max())), (rank, name)


@pytest.mark.parametrize("name", GRIDS)
def test_sharded_runner_methods_equal_one_process(sharded, serial, name):
    P, _, _, _, scores = sharded
    ref = serial[("grid", name)]["transductive"]
    for rank in range(P):
        got = scores[rank][("grid", name)]["transductive"]
        assert float((got - ref).abs().max()) <= 1e-10 * max(1.0, float(ref.abs().max()))


def test_each_process_holds_its_rows_only(sharded):
    P, data, _, store, scores = sharded
    man = read_manifest(store)
    held = [s["local_rows"] for s in scores]
    assert [(lo, hi) for lo, hi, _ in held] == [(man["bounds"][p], man["bounds"][p + 1]) for p in range(P)]
    assert sum(nnz for *_, nnz in held) == man["nnz"] == data.edge_index.shape[1]
    assert max(nnz for *_, nnz in held) < man["nnz"]


# ------------------------------------------------------------------ the stored form, one process
def test_partitioned_form_round_trip(tmp_path):
    data, _ = _graph()
    man = write_partition(data, 3, tmp_path, "rcm")
    assert man["parts"] == 3 and man["num_nodes"] == 600 and man["bounds"][-1] == 600
    rows, cols, nodes = [], [], []
    for p in range(3):
        part = load_part(tmp_path, p, 3)
        r, c, w = part.coo()
        assert bool(((r >= part.lo) & (r < part.hi)).all())
        outside = c[(c < part.lo) | (c >= part.hi)]
        assert torch.equal(torch.unique(outside), part.halo)
        assert torch.equal(part.y, data.y[part.nodes])
        rows.append(r), cols.append(c), nodes.append(part.nodes)
    order = torch.cat(nodes)
    assert torch.equal(torch.sort(order).values, torch.arange(600))
    # the stored entries are the graph's edges, in point numbering
    got = torch.sort(order[torch.cat(rows)] * 600 + order[torch.cat(cols)]).values
    want = torch.sort(data.edge_index[0] * 600 + data.edge_index[1]).values
    assert torch.equal(got, want)


def test_partition_written_through_a_link_to_a_folder_not_made_yet(tmp_path):
    """``--out runs/parts`` where ``runs/parts`` links to a larger disk whose folder does not exist yet."""
    data, _ = _graph()
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "parts").symlink_to(tmp_path / "big" / "parts")
    write_partition(data, 2, tmp_path / "runs" / "parts", "contiguous")
    assert (tmp_path / "big" / "parts" / "manifest.json").is_file()
    assert load_part(tmp_path / "runs" / "parts", 1, 2).hi == 600


def test_loading_names_what_is_wrong(tmp_path):
    data, _ = _graph()
    write_partition(data, 2, tmp_path, "contiguous")
    with pytest.raises(ValueError, match=r"partitioned into 2 parts but 3 processes.*--nproc-per-node 2"):
        load_part(tmp_path, 0, 3)
    man = json.loads((tmp_path / "manifest.json").read_text())
    (tmp_path / "part-00001.pt").unlink()
    with pytest.raises(FileNotFoundError, match="part 1 of 2 is missing"):
        load_part(tmp_path, 1, 2)
    man["version"] = 99
    (tmp_path / "manifest.json").write_text(json.dumps(man))
    with pytest.raises(ValueError, match="format version 99.*rewrite it"):
        load_part(tmp_path, 0, 2)
    with pytest.raises(FileNotFoundError, match="no manifest.json"):
        load_part(tmp_path / "elsewhere", 0, 2)


def test_partition_command_line(tmp_path, capsys):
    from graphstk.__main__ import main

    code = main(["partition", "dcsbm:nodes=500,edges=2000,classes=3,seed=1", "--parts", "2", "--out",
                 str(tmp_path), "--method", "contiguous"])
    assert code == 0, capsys.readouterr().err
    man = read_manifest(tmp_path)
    assert man["parts"] == 2 and man["num_nodes"] == 500 and man["num_classes"] == 3
    assert "halo rows" in capsys.readouterr().out
    assert main(["partition", "dcsbm:nodes=500", "--parts", "2", "--out", str(tmp_path / "x")]) == 1


# ------------------------------------------------------------------ NCCL: one GPU per process
NCCL_ENGINES = ("lp-T", "lp-cg", "lap-T", "lap-gmres", "lap-auto", "poly-T")


def _gpus() -> int:
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def _nccl(P: int):
    import torch.distributed as dist

    reason = (f"NCCL runs one process per GPU: {P} process(es) need {P} GPU(s), this machine has {_gpus()}"
              if _gpus() < P else "this torch was built without NCCL")
    return pytest.param(P, marks=pytest.mark.skipif(_gpus() < P or not dist.is_nccl_available(), reason=reason))


@pytest.mark.parametrize("P", [_nccl(1), _nccl(2)])
def test_sharded_engines_on_nccl_equal_one_process(P, serial, tmp_path):
    data, train = _graph()
    store = tmp_path / "graph"
    write_partition(data, P, store, "rcm")
    job = os.path.join(tmp_path, "job.pt")
    torch.save({"sharded": str(store), "train": train, "engines": NCCL_ENGINES, "backend": "nccl"}, job)
    codes = launch(P, job, str(tmp_path), TIMEOUT_S)
    for rank, (code, err) in enumerate(codes):
        assert code == 0, f"process {rank} of {P} ended with {code}:\n{err[-3000:]}"
    for rank in range(P):
        scores = torch.load(os.path.join(tmp_path, f"scores-{rank}.pt"))
        for name in NCCL_ENGINES:
            ref = serial[("torch.float64", name)]
            got = scores[("torch.float64", name)]
            assert float((got - ref).abs().max()) <= 1e-9 * max(1.0, float(ref.abs().max())), (rank, name)


def test_an_order_is_cut_where_rows_and_entries_are_even():
    from graphstk.distributed.store import _even_bounds
    import numpy as np

    entries = np.array([1] * 90 + [100] * 10)          # light rows first, heavy rows last (as RCM may order them)
    b = _even_bounds(entries, 2)
    assert b[0] == 0 and b[-1] == 100 and b[0] <= b[1] <= b[2]
    cost = entries + 10                                 # entries plus the mean entries per row
    halves = [int(cost[b[0]:b[1]].sum()), int(cost[b[1]:b[2]].sum())]
    assert abs(halves[0] - halves[1]) <= int(cost.max())
    assert _even_bounds(np.zeros(0, dtype=np.int64), 3) == [0, 0, 0, 0]
