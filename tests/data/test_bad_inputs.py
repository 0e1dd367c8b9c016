"""Bad input to the data layer: each case gets a clear error naming the problem (and, where there
is one, what to write instead), raised before anything is computed."""
import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
import torch
from torch_geometric.data import Data

from graphstk.data import VectorDataset, build_data, from_networkx, load_dataset, load_vector_dataset, validate_data
from graphstk.exceptions import DataFileError

EI = np.array([[0, 1, 1, 2], [1, 0, 2, 1]])
Y = np.array([0, 1, 0])
X = np.ones((3, 2))


def _x(value):
    x = X.copy()
    x[1, 0] = value
    return x


GRAPH_CASES = {
    "NaN features": (dict(edge_index=EI, y=Y, x=_x(np.nan)), ValueError, "x contains NaN or infinite"),
    "inf features": (dict(edge_index=EI, y=Y, x=_x(np.inf)), ValueError, "x contains NaN or infinite"),
    "empty labels": (dict(edge_index=np.zeros((2, 0), np.int64), y=np.zeros(0, np.int64)), ValueError, "y is empty"),
    "float labels": (dict(edge_index=EI, y=Y.astype(float)), TypeError, "must be an integer array, got torch.float64"),
    "string labels": (dict(edge_index=EI, y=np.array(["a", "b", "a"])), TypeError, "y must be numeric"),
    "one-hot labels": (dict(edge_index=EI, y=np.eye(3, dtype=np.int64)), ValueError, "one-hot\\? pass the argmax"),
    "negative labels": (dict(edge_index=EI, y=np.array([0, -1, 1])), ValueError, "1 negative labels"),
    "edge_index shape": (dict(edge_index=EI.T, y=Y), ValueError, "edge_index"),
    "edge id out of range": (dict(edge_index=np.array([[0, 5], [5, 0]]), y=Y), ValueError, "5"),
    "float edge ids": (dict(edge_index=EI.astype(float), y=Y), (TypeError, ValueError), "edge_index"),
    "x rows": (dict(edge_index=EI, y=Y, x=np.ones((4, 2))), ValueError, "x has 4 rows but y has 3 labels"),
    "x 1-D": (dict(edge_index=EI, y=Y, x=np.ones(3)), ValueError, r"x must have shape \[N, F\]"),
    "partial split": (dict(edge_index=EI, y=Y, train_index=[0]), ValueError, "give all of train_index"),
    "overlapping split": (dict(edge_index=EI, y=Y, train_index=[0], val_index=[0], test_index=[2]), ValueError,
                          "must be disjoint"),
    "mask as split": (dict(edge_index=EI, y=Y, train_index=np.array([True, False, False]), val_index=[1],
                           test_index=[2]), TypeError, "integer node ids, got torch.bool"),
}


@pytest.mark.parametrize("case", list(GRAPH_CASES))
def test_build_data_refuses(case):
    kwargs, err, match = GRAPH_CASES[case]
    with pytest.raises(err, match=match):
        build_data(**kwargs)


def test_validate_data_refuses():
    with pytest.raises(TypeError, match="expected a torch_geometric.data.Data, got dict"):
        validate_data({"edge_index": EI})
    data = Data(edge_index=torch.as_tensor(EI), y=torch.as_tensor(Y), num_nodes=3)
    data.train_mask = torch.tensor([1, 0, 0])
    with pytest.raises(ValueError, match=r"data.train_mask must be a bool tensor of shape \[3\]"):
        validate_data(data)
    with pytest.raises(ValueError, match="labels missing: data.y is None"):
        validate_data(Data(edge_index=torch.as_tensor(EI), num_nodes=3))


def test_networkx_input_refused():
    with pytest.raises(ValueError, match="has no nodes"):
        from_networkx(nx.Graph())
    g = nx.path_graph(3)
    with pytest.raises(ValueError, match=r"node attribute 'label' is absent on 3 of 3 nodes.*Pass label="):
        from_networkx(g)


def test_npz_files_refused(tmp_path):
    (tmp_path / "cut.npz").write_bytes(b"PK\x03\x04 cut short")
    with pytest.raises(DataFileError, match=r"graph file cut.npz: cannot read .*cut.npz.*Fix:"):
        load_dataset(tmp_path / "cut.npz")
    np.save(tmp_path / "one.npy", np.zeros(3))
    (tmp_path / "one.npy").rename(tmp_path / "one.npz")
    with pytest.raises(DataFileError, match="single array, not an .npz archive"):
        load_dataset(tmp_path / "one.npz")
    with pytest.raises(TypeError, match="load_dataset expects a dataset name"):
        load_dataset(3.5)


VECTOR_CASES = {
    "NaN features": ((_x(np.nan), Y), ValueError, r"X has 1 NaN or infinite entries \(rows \[1\]\)"),
    "inf features": ((_x(-np.inf), Y), ValueError, "NaN or infinite"),
    "sparse NaN": ((sp.csr_matrix(_x(np.nan)), Y), ValueError, "NaN or infinite"),
    "NaN labels": ((X, np.array([0.0, np.nan, 1.0])), ValueError, "labels contain NaN"),
    "2-D labels": ((X, np.ones((3, 2))), ValueError, r"labels must be 1-D \(or an \[n, 1\] column\)"),
    "length mismatch": ((X, np.array([0, 1])), ValueError, r"y must be a LongTensor of shape \[3\]"),
    "1-D features": ((np.ones(3), Y), ValueError, "X must be 2-D"),
    "string features": ((np.array([["a", "b"]] * 3), Y), TypeError, r"X must hold numbers, got dtype <U1"),
    "complex features": ((X * 1j, Y), TypeError, r"X is complex .*pass X.real"),
}


@pytest.mark.parametrize("case", list(VECTOR_CASES))
def test_vector_dataset_refuses(case):
    args, err, match = VECTOR_CASES[case]
    with pytest.raises(err, match=match):
        VectorDataset.from_arrays(*args)


def test_vector_loader_options_refused():
    with pytest.raises(TypeError, match="TwoLines: unknown option\\(s\\) sigma; it accepts n, noise, dim, seed"):
        load_vector_dataset("TwoLines", n=10, sigma=1.0)
    with pytest.raises(TypeError, match="dtype must be a floating torch dtype"):
        load_vector_dataset("Digits", dtype=torch.int64)
    with pytest.raises(TypeError, match="dataset name must be a str"):
        load_vector_dataset(3)
