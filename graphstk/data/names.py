"""Dataset names: one normal form (:func:`dataset_key`: letters and digits, lower-cased, aliases resolved)
for the graph registry, the vector registry and the runner's ``--datasets`` filter (:func:`match_datasets`).

Both loaders stand on this module, never on each other: it holds the names of both registries and the
message for a name given to the wrong loader.
"""
from __future__ import annotations

from typing import Mapping

__all__ = ["GRAPH_DATASET_NAMES", "GRAPH_KEYS", "VECTOR_DATASET_NAMES", "VECTOR_KEYS", "dataset_key",
           "graph_dataset_hint", "graph_dataset_name", "match_datasets", "vector_dataset_name",
           "vector_protocol_hint"]


def dataset_key(name: str) -> str:
    """The normal form of a dataset name: its letters and digits, lower-cased.

    Parameters
    ----------
    name : str
        A dataset name or alias as a user writes it.
    """
    return "".join(ch for ch in str(name).lower() if ch.isalnum())


#: Canonical name -> aliases of every graph dataset :func:`graphstk.data.load_dataset` loads by name,
#: in the loader's order.
GRAPH_DATASET_NAMES: Mapping[str, tuple[str, ...]] = {
    "Cora": (),
    "CiteSeer": (),
    "PubMed": (),
    "Computers": ("amazon-computers", "amazon computers", "amazoncomputers"),
    "Photo": ("photos", "amazon-photo", "amazon-photos"),
    "CS": ("coauthor-cs",),
    "Physics": ("coauthor-physics", "coauthor-phy", "phy"),
    "DBLP": ("citationfull-dblp", "dblpfull"),
    "CoraFull": ("cora-full", "citationfull-cora"),
}

#: Canonical name -> aliases of every vector dataset :func:`graphstk.data.load_vector_dataset` loads,
#: in the loader's order (the SSL book's sets in the book's order, SecStr last).
VECTOR_DATASET_NAMES: Mapping[str, tuple[str, ...]] = {
    "Digit1": (),
    "USPS": ("usps-ssl", "ssl-usps"),
    "COIL2": ("coil-2",),
    "BCI": (),
    "g241c": (),
    "COIL": ("coil6", "coil-6"),
    "g241d": ("g241n",),
    "Text": ("ssl-text",),
    "SecStr": ("secstr",),
    "MNIST": ("mnist70k",),
    "USPS-ESL": ("esl-usps", "usps-zip", "zip-usps"),
    "USPST": ("usps-t", "uspst-chapelle"),
    "Digits": ("sklearn-digits", "digits8x8"),
    "MovieReviews": ("movie-review-polarity", "polarity", "review-polarity", "imdb-polarity"),
    "WebKB4": ("webkb-4", "webkb4class"),
    "TwoLines": ("two-lines", "twoline", "twoline-nocluster"),
    "Circle": ("circle-quad",),
}

# vector datasets that ship their own semi-supervised splits, and those with classes to pick a
# one-class task from ('MNIST 3vs8')
_SUPPLIED_SPLITS = frozenset({"Digit1", "USPS", "COIL2", "BCI", "g241c", "COIL", "g241d", "Text", "SecStr", "USPST"})
_CLASS_TASKS = ("MNIST", "USPS-ESL", "USPST", "Digits")


def _keys(table: Mapping[str, tuple[str, ...]]) -> dict[str, str]:
    keys: dict[str, str] = {}
    for name, aliases in table.items():
        for a in (name, *aliases):
            key = dataset_key(a)
            if keys.get(key, name) != name:
                raise RuntimeError(f"alias {a!r} of {name} already names {keys[key]}")
            keys[key] = name
    return keys


#: ``dataset_key(name or alias) -> canonical name`` of every graph dataset.
GRAPH_KEYS: Mapping[str, str] = _keys(GRAPH_DATASET_NAMES)
#: ``dataset_key(name or alias) -> canonical name`` of every vector dataset.
VECTOR_KEYS: Mapping[str, str] = _keys(VECTOR_DATASET_NAMES)


def graph_dataset_name(name) -> str | None:
    """The canonical name of the graph dataset ``name`` (any alias or spelling), else ``None``."""
    return GRAPH_KEYS.get(dataset_key(name)) if isinstance(name, str) else None


def vector_dataset_name(name) -> str | None:
    """The canonical name of the vector dataset ``name`` (any alias or spelling), else ``None``."""
    return VECTOR_KEYS.get(dataset_key(name)) if isinstance(name, str) else None


def vector_protocol_hint(name: str) -> str | None:
    """For a vector dataset's name given where a graph is expected: a message saying so, how to load
    it, and which config ``protocol:`` takes it; ``None`` when ``name`` is not a vector dataset."""
    canonical = vector_dataset_name(name)
    if canonical is None:
        return None
    protocols = ("`protocol: fixed-splits` (its supplied splits) or `protocol: labeled-per-class`"
                 if canonical in _SUPPLIED_SPLITS else "`protocol: labeled-per-class`")
    classes = "" if canonical not in _CLASS_TASKS else \
        f", or `protocol: one-class` with a task such as '{canonical} 3vs8'"
    return (f"{name!r} is a vector dataset (features and labels, no graph), not a graph for node "
            f"classification: in a config set {protocols}{classes}; in Python load it with "
            f"graphstk.load_vector_dataset({canonical!r}). Graph datasets: {', '.join(GRAPH_DATASET_NAMES)}")


def graph_dataset_hint(name: str) -> str | None:
    """For a graph dataset's name given where a vector dataset is expected: a message saying so and how
    to load it; ``None`` when ``name`` is not a graph dataset."""
    canonical = graph_dataset_name(name)
    if canonical is None:
        return None
    return (f"{name!r} is a graph dataset, not a vector one: load it with "
            f"graphstk.load_dataset({canonical!r}). Vector datasets: {', '.join(VECTOR_DATASET_NAMES)}")


def _canonical(name: str) -> str:
    """``dataset_key`` of the canonical name when ``name`` is a known graph or vector dataset (alias
    resolved), else of ``name`` itself; a one-class task ``"SOURCE AvsB"`` keeps its ``AvsB``."""
    head, _, tail = str(name).strip().rpartition(" ")
    for source, rest in ((name, ""), (head, tail)):
        if not source:
            continue
        key = dataset_key(source)
        canonical = GRAPH_KEYS.get(key) or VECTOR_KEYS.get(key)
        if canonical is not None:
            return dataset_key(canonical) + dataset_key(rest)
    return dataset_key(name)


def match_datasets(requested, available) -> tuple[list[str], list[str]]:
    """Select datasets of a config by the names a user typed (``--datasets``).

    A requested name matches an available one when both have the same normal form
    (:func:`dataset_key`, aliases resolved): ``MNIST_3vs8`` selects ``"MNIST 3vs8"``,
    ``amazon-computers`` selects ``Computers``.

    Parameters
    ----------
    requested : iterable of str
        The names typed by the user.
    available : iterable of str
        The dataset names of the config, in its order.

    Returns
    -------
    (selected, unknown)
        ``selected``: the available names that some requested name matches, in the config's
        order; ``unknown``: the requested names that match none.
    """
    available = list(available)
    keys = {_canonical(a): a for a in available}
    wanted, unknown = set(), []
    for name in requested:
        hit = keys.get(_canonical(name))
        if hit is None:
            unknown.append(name)
        else:
            wanted.add(hit)
    return [a for a in available if a in wanted], unknown
