"""The paper's numbers (``paper_results.json``, transcribed from Tables 1, 4 and 5 of the STKR paper)."""
from __future__ import annotations

import functools
import json
import os

_FILE = os.path.join(os.path.dirname(__file__), "paper_results.json")
_TABLES = {"table1": "Table 1", "table4": "Table 4", "table5": "Table 5"}


@functools.lru_cache(maxsize=1)
def paper_entries() -> tuple[dict, ...]:
    with open(_FILE, encoding="utf-8") as fh:
        return tuple(json.load(fh)["entries"])


def paper_cell(dataset: str, method: str, p_test: float, table: str | None = "auto",
               sweep: dict | None = None) -> dict | None:
    """``{"mean", "std", "source"}`` of the paper's cell for a results row, or ``None``.

    ``table="auto"`` reads Table 4 at ``p_test = 0.01`` and Table 5 otherwise; ``"table1"``,
    ``"table4"``, ``"table5"`` read only that table; ``None`` never matches. Rows of a sweep
    (Figure 2, the eta ablation) have no tabulated cell.
    """
    if table is None or sweep:
        return None
    if table == "auto":
        wanted = "Table 4" if abs(p_test - 0.01) < 1e-12 else "Table 5"
    else:
        wanted = _TABLES[table]
    for e in paper_entries():
        if (e["source"] == wanted and e["dataset"].lower() == dataset.lower() and e["method"] == method
                and abs(e["p_test"] - p_test) < 1e-12):
            return {"mean": e["mean"], "std": e["std"], "source": e["source"]}
    return None


# --------------------------------------------------------------------------- paper_numbers/<paper>.json
_DIR = os.path.join(os.path.dirname(__file__), "paper_numbers")


def paper_files() -> tuple[str, ...]:
    """The papers with a numbers file: the stems of ``graphstk/experiments/paper_numbers/*.json``."""
    if not os.path.isdir(_DIR):
        return ()
    return tuple(sorted(f[:-5] for f in os.listdir(_DIR) if f.endswith(".json")))


@functools.lru_cache(maxsize=None)
def paper_numbers(paper: str) -> dict:
    """The parsed ``paper_numbers/<paper>.json`` (layout: docs/experiments.md, "Paper numbers")."""
    path = os.path.join(_DIR, f"{paper}.json")
    if not os.path.isfile(path):
        raise ValueError(f"no paper numbers file {path!r} (available: {', '.join(paper_files()) or 'none'})")
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    for i, e in enumerate(data.get("entries", [])):
        missing = {"source", "dataset", "method", "metric", "mean"} - set(e)
        if missing:
            raise ValueError(f"{path}: entries[{i}] lacks {sorted(missing)}")
    return data


def vector_paper_cell(paper: str | None, table: str | None, dataset: str, method: str, n_labeled,
                      metric: str, protocol: str, sweep: dict | None = None) -> dict | None:
    """``{"mean", "std", "source"}`` of a paper's cell for a row of a vector protocol, or ``None``.

    An entry matches when its ``dataset`` (case-insensitive), ``method``, ``metric`` and
    ``n_labeled`` equal the row's, its ``protocol`` (if given) is the row's, its ``sweep``
    (if given) equals the row's sweep (and an entry without ``sweep`` matches only rows
    without one), and ``table`` is ``"auto"`` or the entry's ``source``.
    """
    if paper is None or table is None:
        return None
    for e in paper_numbers(paper)["entries"]:
        if (e["dataset"].lower() == dataset.lower() and e["method"] == method and e["metric"] == metric
                and e.get("n_labeled") == n_labeled and e.get("protocol", protocol) == protocol
                and (e.get("sweep") or None) == (sweep or None) and table in ("auto", e["source"])):
            return {"mean": e["mean"], "std": e.get("std"), "source": e["source"]}
    return None
