"""Dataset names (graphstk.data.names): one normal form for the loaders and ``--datasets``; a
vector dataset named where a graph is expected says which protocol takes it."""
from pathlib import Path

import pytest

from graphstk.data import dataset_key, get_spec, load_dataset, load_vector_dataset, match_datasets

REPO = Path(__file__).resolve().parents[2]


def test_dataset_key_ignores_case_spaces_dashes_and_underscores():
    assert dataset_key("MNIST 3vs8") == dataset_key("mnist_3VS8") == dataset_key("MNIST-3vs8") == "mnist3vs8"


def test_every_name_the_loaders_accept_selects_its_dataset():
    config = ["Cora", "Computers", "MNIST 3vs8", "Digit1", "USPST (ESL test)"]
    selected, unknown = match_datasets(["MNIST_3vs8", "amazon-computers", "digit_1", "uspst-esl-test"], config)
    assert selected == ["Computers", "MNIST 3vs8", "Digit1", "USPST (ESL test)"] and unknown == []
    assert match_datasets(["mnist-70k 3vs8"], ["MNIST 3vs8"]) == (["MNIST 3vs8"], [])   # an alias of the source
    assert match_datasets(["Photo", "MNIST 8vs3"], config) == ([], ["Photo", "MNIST 8vs3"])
    for name in ("cora", "CORA", "amazon computers"):          # each loader accepts them too
        get_spec(name)


def test_command_line_datasets_accepts_the_loaders_spelling():
    from graphstk.experiments.config import ConfigError, load_config

    cfg = load_config(str(REPO / "configs" / "separating_table2.yaml"))
    picked = cfg.with_overrides(datasets=["MNIST_3vs8"])
    assert {d.name for d in picked.datasets} == {"MNIST 3vs8"}
    with pytest.raises(ConfigError, match=r"unknown dataset\(s\) \['MNIST_3vs9'\].*'-' and '_' are ignored"):
        cfg.with_overrides(datasets=["MNIST_3vs9"])


@pytest.mark.parametrize("name, protocol", [
    ("Digit1", "`protocol: fixed-splits` (its supplied splits) or `protocol: labeled-per-class`"),
    ("digit_1", "`protocol: fixed-splits`"),
    ("MNIST", "`protocol: labeled-per-class`, or `protocol: one-class` with a task such as 'MNIST 3vs8'"),
    ("TwoLines", "`protocol: labeled-per-class`"),
])
def test_vector_dataset_where_a_graph_is_expected_names_the_protocol(name, protocol):
    with pytest.raises(ValueError, match="is a vector dataset") as e:
        load_dataset(name)
    msg = str(e.value)
    assert protocol in msg and "graphstk.load_vector_dataset(" in msg and "Cora" in msg
    assert "unknown dataset" not in msg


def test_unknown_graph_name_lists_the_graphs():
    with pytest.raises(ValueError, match=r"unknown dataset 'Corra'; known graph datasets: Cora, CiteSeer"):
        get_spec("Corra")


def test_graph_name_given_to_the_vector_loader_says_so():
    with pytest.raises(ValueError, match=r"'cora' is a graph dataset.*graphstk.load_dataset\('Cora'\)"):
        load_vector_dataset("cora")
