"""graphstk.spectral.filters: SGC, S2GC, DGC and GGCM against a dense eigendecomposition and the
papers' formulas written with dense matrices; the regularisation filters of Table 1 (De Vito et al.)
against their closed forms, and their config-facing names."""
from __future__ import annotations

import pytest
import torch

from graphstk.operators.base import SparseOperator
from graphstk.operators.composed import GraphFilter
from graphstk.spectral.filters import (FILTER_NAMES, REGULARIZATION_FILTERS, GGCMFilter, HeatKernelFilter, KernelPCAFilter,
                                       Landweber, NuMethod, RegularizationFilter, S2GCFilter, SGCFilter, SpectralCutoff,
                                       Tikhonov, degree_projection, negative_degree, negative_permutations,
                                       permutation_graph, permutation_graph_columns,
                                       permutation_graph_product, random_negative_graph,
                                       regularization_filter, regularization_filter_name)

g = torch.Generator().manual_seed(0)
N = 12
W = (torch.rand(N, N, generator=g, dtype=torch.float64) < 0.35).double()
W = torch.triu(W, 1)
W = W + W.T
W[torch.arange(N - 1), torch.arange(1, N)] = 1.0            # a path through every node: connected
W[torch.arange(1, N), torch.arange(N - 1)] = 1.0
deg = W.sum(1)
S = W / deg.sqrt()[:, None] / deg.sqrt()[None, :]
LAM, PSI = torch.linalg.eigh(S)
X = torch.rand(N, 3, generator=g, dtype=torch.float64)
I = torch.eye(N, dtype=torch.float64)


def spectral(values) -> torch.Tensor:
    return PSI @ torch.diag(values) @ PSI.T


def mm(Z):
    return S @ Z


FILTERS = [SGCFilter(3), S2GCFilter(5, 0.1), HeatKernelFilter(2.5, 40)]


def paper_dense(f) -> torch.Tensor:
    """Each paper's filter with dense matrix powers (no eigendecomposition, no code under test)."""
    P = torch.linalg.matrix_power
    if isinstance(f, SGCFilter):
        return P(S, f.K)
    if isinstance(f, S2GCFilter):
        return sum((1 - f.alpha) * P(S, k) + f.alpha * I for k in range(1, f.K + 1)) / f.K
    if isinstance(f, HeatKernelFilter):
        return P(I - (f.t / f.K) * (I - S), f.K)
    raise TypeError(f)


@pytest.mark.parametrize("f", FILTERS, ids=lambda f: type(f).__name__)
def test_filter_equals_its_spectral_function_and_the_papers_formula(f):
    dense = spectral(f(LAM))
    torch.testing.assert_close(f.apply(mm, X), dense @ X)
    torch.testing.assert_close(paper_dense(f), dense)
    coeffs = f.coefficients()
    torch.testing.assert_close(sum(c * torch.linalg.matrix_power(S, p) for p, c in enumerate(coeffs)), dense)


@pytest.mark.parametrize("f", FILTERS, ids=lambda f: type(f).__name__)
def test_one_propagation_gives_every_depth(f):
    depths = [1, 2, f.K]
    out = dict(f.iter_depths(mm, X, depths))
    assert sorted(out) == sorted(set(depths))
    for k, Z in out.items():
        torch.testing.assert_close(Z, spectral(f.with_depth(k)(LAM)) @ X)


@pytest.mark.parametrize("f", FILTERS, ids=lambda f: type(f).__name__)
def test_filter_as_a_graph_kernel(f):
    op = GraphFilter(SparseOperator.from_dense(S), f.coefficients())
    torch.testing.assert_close(op.to_dense(), spectral(f(LAM)))


def test_heat_kernel_tends_to_the_exponential():
    exact = spectral(torch.exp(-2.0 * (1 - LAM)))
    err = [float((spectral(HeatKernelFilter(2.0, K)(LAM)) - exact).abs().max()) for K in (4, 40, 400)]
    assert err[0] > err[1] > err[2] and err[2] < 1e-3


def ggcm_dense(f: GGCMFilter, negs, x=None) -> torch.Tensor:
    """GGCM's loop (the class docstring's formula) with dense matrices, on ``x`` (default ``X``)."""
    x = X if x is None else x
    U, total = x.clone(), torch.zeros_like(x)
    for k in range(1, f.K + 1):
        b, c = f.beta * f.decline ** (k - 1), f.beta_neg * f.decline_neg ** (k - 1)
        inv = (2 * I - f.k_neg * negs[k - 1]) / (f.k_neg + 2)
        V = ((1 - c) * I + c * inv) @ U
        U = ((1 - b) * I + b * S) @ U
        total += (U + V) / 2
    return f.alpha * x + (1 - f.alpha) * total / f.K


@pytest.mark.parametrize("f", [GGCMFilter(4, 0.15, 4), GGCMFilter(5, 0.3, 6, 0.9, 0.8, 0.7, 0.5)],
                         ids=["published", "lazy"])
def test_ggcm_with_random_negative_graphs(f):
    gen = torch.Generator().manual_seed(1)
    negs = [random_negative_graph(N, f.k_neg, gen).to_dense() for _ in range(f.K)]
    got = f.apply(mm, X, negative=lambda k, Z: negs[k - 1] @ Z)
    torch.testing.assert_close(got, ggcm_dense(f, negs))


@pytest.mark.parametrize("f", [GGCMFilter(4, 0.15, 4), GGCMFilter(5, 0.3, 6, 0.9, 0.8, 0.7, 0.5)],
                         ids=["published", "lazy"])
def test_ggcm_mean_negative_graph_is_its_spectral_function(f):
    u = deg.sqrt() / deg.sqrt().norm()
    P = torch.outer(u, u)
    torch.testing.assert_close(S @ u, u)                      # the top eigenvector of S
    dense = spectral(f(LAM))
    torch.testing.assert_close(ggcm_dense(f, [P] * f.K), dense @ X)
    torch.testing.assert_close(f.apply(mm, X, projection=degree_projection(deg)), dense @ X)
    out = dict(f.iter_depths(mm, X, [2, f.K], projection=degree_projection(deg)))
    torch.testing.assert_close(out[2], spectral(f.with_depth(2)(LAM)) @ X)


@pytest.mark.parametrize("f", [GGCMFilter(4, 0.15, 4), GGCMFilter(5, 0.3, 6, 0.9, 0.8, 0.7, 0.5)],
                         ids=["published", "lazy"])
def test_ggcm_transposed_is_the_transpose_of_the_dense_filter(f):
    """``apply_transposed`` against the transpose of GGCM's dense map ``G`` (``G = ggcm_dense`` on the identity)."""
    gen = torch.Generator().manual_seed(2)
    negs = [random_negative_graph(N, f.k_neg, gen).to_dense() for _ in range(f.K)]
    G = ggcm_dense(f, negs, torch.eye(N, dtype=torch.float64))
    torch.testing.assert_close(f.apply_transposed(mm, X, lambda k, Z: negs[k - 1] @ Z), G.T @ X)
    assert not torch.allclose(G, G.T), "the test needs a G that is not symmetric"


def test_permutation_product_is_the_negative_graphs_product():
    """The permutations drawn are random_negative_graph's (the same generator state gives the same graph), and
    their product without the matrix equals the matrix's."""
    perms = negative_permutations(N, 6, torch.Generator().manual_seed(4))
    A = random_negative_graph(N, 6, torch.Generator().manual_seed(4)).to_dense()
    graph = permutation_graph(perms)
    assert graph.col_indices().dtype == torch.int32
    torch.testing.assert_close(graph.to_dense(), 6 * A)
    torch.testing.assert_close(permutation_graph_product(graph, X), A @ X)
    with pytest.raises(ValueError, match="even"):
        negative_permutations(N, 5)


def test_permutation_graph_columns_are_the_product_with_the_identity_columns():
    """The columns ``idx`` read off the rows equal the dense ``A[:, idx]`` and the product with ``E_idx`` bit for
    bit: repeated entries of a row counted (this draw has them), ``idx`` unsorted and repeated, and none."""
    perms = negative_permutations(N, 8, torch.Generator().manual_seed(5))
    graph = permutation_graph(perms)
    A = graph.to_dense() / 8
    assert (A * 8 > 1).any(), "the test needs a row with a repeated entry"
    for idx in (torch.tensor([7, 0, 11, 7, 3]), torch.arange(N), torch.tensor([], dtype=torch.long)):
        E = torch.zeros(N, idx.numel(), dtype=torch.float64)
        E[idx, torch.arange(idx.numel())] = 1.0
        got = permutation_graph_columns(graph, idx)
        assert torch.equal(got, permutation_graph_product(graph, E))
        torch.testing.assert_close(got, A[:, idx], rtol=0, atol=0)


def test_random_negative_graph_is_regular_and_symmetric():
    A = random_negative_graph(50, 6, torch.Generator().manual_seed(3)).to_dense()
    torch.testing.assert_close(A, A.T)
    torch.testing.assert_close(A.sum(1), torch.ones(50, dtype=torch.float64))
    assert negative_degree(torch.tensor([[0, 1, 1, 2, 0], [1, 0, 2, 1, 0]]), 3, rate=3.0) == 2
    ei = torch.randint(0, 100, (2, 400), generator=g)
    k = negative_degree(ei, 100, rate=20.0)
    assert k % 2 == 0 and k <= 98


def test_bad_parameters_are_refused():
    for bad in (lambda: SGCFilter(0), lambda: S2GCFilter(4, 1.5), lambda: HeatKernelFilter(-1.0, 2),
                lambda: GGCMFilter(4, 0.1, 3), lambda: GGCMFilter(4, 0.1, 4, decline=1.5)):
        with pytest.raises(ValueError):
            bad()
    with pytest.raises(ValueError, match="negative"):
        GGCMFilter(2, 0.1, 4).apply(mm, X)
    with pytest.raises(TypeError):
        GGCMFilter(2, 0.1, 4).coefficients()


def test_regularization_filters_closed_forms():
    s = torch.linspace(0.0, 1.0, 11, dtype=torch.float64)
    torch.testing.assert_close(Tikhonov(0.1)(s), 1 / (s + 0.1))
    torch.testing.assert_close(SpectralCutoff(0.5)(s), torch.where(s > 0.5, 1 / s.clamp_min(0.5), torch.tensor(2.0).double()))
    torch.testing.assert_close(KernelPCAFilter(0.5).r(s), (s >= 0.5).double())
    L = Landweber(0.1)
    assert L.steps == 10
    torch.testing.assert_close(L.r(s), 1 - (1 - s) ** 10)
    # the nu-method: t = 10 steps, r(0) = 0 and r(s) within a few percent of 1 above lambda
    r = NuMethod(0.01).r(s)
    assert NuMethod(0.01).steps == 10 and float(r[0]) == 0.0 and float((r[1:] - 1).abs().max()) < 0.05


def test_regularization_filter_names_map_to_one_class_each():
    assert set(FILTER_NAMES.values()) == set(REGULARIZATION_FILTERS)
    for spelling, name in FILTER_NAMES.items():
        f = regularization_filter(spelling, 0.2)
        assert isinstance(f, RegularizationFilter) and type(f) is REGULARIZATION_FILTERS[name]
        assert regularization_filter_name(spelling.upper()) == name
    assert regularization_filter("nu", 0.2, nu=2.0).nu == 2.0
    with pytest.raises(ValueError, match="filter must be one of"):
        regularization_filter("gauss", 0.1)
    with pytest.raises(ValueError, match="lam must be finite and > 0"):
        Tikhonov(-1.0)
