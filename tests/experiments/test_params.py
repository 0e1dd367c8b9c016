"""Parameter declarations (graphstk.experiments.params) and their use by MethodEntry."""
from __future__ import annotations

import pytest

from graphstk.experiments.params import Param
from graphstk.experiments.registry import MethodEntry


@pytest.mark.parametrize("param, good, bad", [
    (Param("beta", float, low=0, low_open=True), [1e-8, 3, 2.5], [0, -1, float("inf"), float("nan"), "1", True]),
    (Param("eta", float, low=0, high=1, low_open=True, high_open=True), [0.5, 0.999], [0, 1, 1.5]),
    (Param("T", int, low=1), [1, 32], [0, 2.5, "4", True]),
    (Param("w", float, low=0, high=1), [0, 1, 0.5], [-0.1, 1.1]),
    (Param("lam", float, low=0, low_open=True, special=("auto",)), ["auto", 0.1], ["Auto", 0, -1]),
    (Param("loss", str, choices=("square", "hinge")), ["square"], ["sqare", 1, None]),
    (Param("centered", bool), [True, False], [1, "yes"]),
])
def test_check_accepts_the_range_and_names_the_value_as_written(param, good, bad):
    for v in good:
        assert param.check(v) == v
    for v in bad:
        with pytest.raises(ValueError, match=r"^expected .*, got .*" + repr(v)[:3].replace("(", r"\(")):
            param.check(v)
    assert isinstance(param.check(good[-1]), type(good[-1]) if param.kind is not float else float)


def test_messages_say_what_is_allowed():
    assert Param("eta", float, low=0, high=1, low_open=True, high_open=True).allowed == "a number in (0, 1)"
    assert Param("T", int, low=1).allowed == "an integer >= 1"
    assert Param("lam", float, low=0, low_open=True, special=("auto",)).allowed == "'auto' or a number > 0"
    with pytest.raises(ValueError, match="did you mean 'hinge'"):
        Param("loss", str, choices=("square", "hinge")).check("hnge")


def test_method_entry_checks_its_own_defaults_and_undeclared_keys():
    fit = lambda problem, points: []   # noqa: E731
    with pytest.raises(ValueError, match="default lam: expected a number > 0, got -1"):
        MethodEntry("bad", frozenset({"features"}), "classification", {"lam": [1.0, -1]}, fit,
                    params=(Param("lam", float, low=0, low_open=True),))
    e = MethodEntry("ok", frozenset({"features"}), "classification", {"lam": [1.0], "k": [3]}, fit,
                    params=(Param("lam", float, low=0, low_open=True),))
    assert e.check("k", "anything") == "anything" and e.check("lam", 2) == 2.0
    with pytest.raises(ValueError, match="finite"):
        e.check("k", float("nan"))
    with pytest.raises(ValueError, match="distinct names"):
        MethodEntry("dup", frozenset({"features"}), "classification", {}, fit, params=(Param("a"), Param("a")))


_PROTOCOLS = {
    "labeled-per-class": dict(protocol="labeled-per-class", n_labeled=[10], val_per_class=5, datasets=["Digits"]),
    "fixed-splits": dict(protocol="fixed-splits", n_labeled=[10], datasets=["Digit1"]),
    "one-class": dict(protocol="one-class", n_train=50, n_test=20, datasets=["MNIST 3vs8"]),
}


@pytest.mark.parametrize("protocol, method, grid, message", [
    ("labeled-per-class", "KRLSC", {"sigma": [-1], "lam": [0]}, r"grid.sigma\[0\]: expected a number > 0, got -1"),
    ("labeled-per-class", "KRLSC", {"sigma": [0]}, r"grid.sigma\[0\]: expected a number > 0, got 0"),
    ("labeled-per-class", "KRLSC", {"lam": [1.0, -1]}, r"grid.lam\[1\]: expected a number > 0, got -1"),
    ("labeled-per-class", "FredGauss", {"lam": [-1]}, r"grid.lam\[0\]: expected a number > 0, got -1"),
    ("labeled-per-class", "FredGauss", {"width": [0]}, r"grid.width\[0\]: expected a number > 0, got 0"),
    ("fixed-splits", "LS-KPCA", {"c": [-1]}, r"grid.c\[0\]: expected a number >= 0, got -1"),
    ("one-class", "Spectral", {"lam": [-1]}, r"grid.lam\[0\]: expected 'auto' or a number > 0, got -1"),
])
def test_grid_values_of_registered_methods_are_checked_at_config_load(protocol, method, grid, message):
    """Checked from the declared ranges when the config is read, quoting the value as written,
    before any data is loaded or anything is computed."""
    from graphstk.experiments.config import ConfigError, parse_config

    raw = dict(_PROTOCOLS[protocol], methods=[{"label": method, "grid": grid}])
    with pytest.raises(ConfigError, match=message):
        parse_config(raw)


def test_a_declaration_read_from_an_estimators_constraints():
    """``Param.of`` reads scikit-learn's constraints (``_parameter_constraints``): the runner checks a config
    value as the estimator's ``fit`` does."""
    from graphstk.methods import STKR, STKRCV, LSKPCA

    assert Param.of("beta", STKR._parameter_constraints["beta"]) == Param("beta", float, low=0, low_open=True)
    assert Param.of("T", STKR._parameter_constraints["num_iter"]) == Param("T", int, low=1)
    assert Param.of("w", LSKPCA._parameter_constraints["w"]) == Param("w", float, low=0, high=1)
    assert Param.of("centered", LSKPCA._parameter_constraints["centered"]).kind is bool
    labels = Param.of("labels", STKRCV._parameter_constraints["labels"])
    assert labels.choices == ("centered", "onehot") and labels.check("onehot") == "onehot"
    with pytest.raises(ValueError, match="did you mean 'onehot'"):
        labels.check("onehto")
