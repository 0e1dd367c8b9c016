"""graphstk.experiments.datasets: dataset entries of a config, resolved when the config is read."""
from __future__ import annotations

import pytest

from graphstk.experiments.config import ConfigError, parse_config


@pytest.mark.parametrize("text, path", [
    ({"name": "t", "seeds": 1, "p_test": 0.01, "datasets": ["Coraa"], "methods": ["LP (t)"]}, "datasets[0]"),
    ({"name": "t", "seeds": 1, "tasks": [{"name": "a", "p_test": 0.01, "datasets": ["Cora", "Coraa"],
                                          "methods": ["LP (t)"]}]}, "tasks[0].datasets[1]"),
])
def test_a_misspelled_graph_dataset_names_its_key_path_and_the_closest_name(text, path):
    with pytest.raises(ConfigError) as err:
        parse_config(text)
    msg = str(err.value)
    assert msg.startswith(f"{path}: unknown graph dataset 'Coraa'; did you mean 'Cora'"), msg
    fixed = {**text}                                   # the fix: the name it suggests
    if "datasets" in fixed:
        fixed["datasets"] = ["Cora"]
    else:
        fixed["tasks"] = [{**fixed["tasks"][0], "datasets": ["Cora"]}]
    assert [d.name for d in parse_config(fixed).datasets] == ["Cora"]
