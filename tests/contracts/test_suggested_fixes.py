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
            lambda env, msg: STKRPropagation(InverseLaplacian(0.9), beta=quoted(msg, "write beta="))))


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
