"""The built-in default experiment (``python run.py`` with no config): Zachary's karate club and a seeded
stochastic block model (networkx, no files, no network), every method of the STKR paper with small grids.
"""
from __future__ import annotations

from .config import parse_config

DEFAULT = {
    "name": "default",
    "description": "Built-in smoke experiment: karate club and a 3-block SBM, all eight methods of the STKR "
                   "paper with small grids (offline, seconds).",
    "seeds": 5,
    "p_test": 0.2,
    # karate has 34 nodes: too few for 20 x #classes train/val nodes, so it gets 3 + 3 per class,
    # redrawn per seed (planetoid_split: random) together with the test nodes.
    "planetoid_split": "random",
    "datasets": [
        {"name": "Karate", "graph": {"kind": "karate_club", "train_per_class": 3, "val_per_class": 3}},
        {"name": "SBM", "graph": {"kind": "sbm", "sizes": [80, 80, 80], "p_in": 0.08, "p_out": 0.015,
                                  "seed": 0}},
    ],
    "grid": {"T": [4, 16], "eta": [0.9, 0.99], "beta": [1.0, 1e-2, 1e-4], "k": [4], "d": [4, 8]},
    "methods": ["LP (t)", "SP-Lap (t)", "SP-poly (t)", "SP-topd (t)",
                "SP-Lap (i)", "SP-poly (i)", "SP-topd (i)", "KRR (i)"],
    "paper_table": None,
}


def default_config():
    """The built-in default experiment, validated like any config."""
    return parse_config(DEFAULT, default_name="default")
