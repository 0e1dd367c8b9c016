"""Dataset names: one normal form for every loader and for the command line.

A name is compared by its letters and digits only, lower-cased (``"MNIST 3vs8"``,
``"mnist_3vs8"`` and ``"MNIST-3VS8"`` are one name), and an alias of a graph or vector
dataset stands for its canonical name (``"amazon-computers"`` is ``"Computers"``). The graph
registry (:func:`graphstk.data.get_spec`), the vector registry
(:func:`graphstk.data.load_vector_dataset`) and the runner's ``--datasets`` filter
(:func:`match_datasets`) all use :func:`dataset_key`.
"""
from __future__ import annotations

__all__ = ["dataset_key", "match_datasets"]


def dataset_key(name: str) -> str:
    """The normal form of a dataset name: its letters and digits, lower-cased.

    Parameters
    ----------
    name : str
        A dataset name or alias as a user writes it.
    """
    return "".join(ch for ch in str(name).lower() if ch.isalnum())


def _canonical(name: str) -> str:
    """``dataset_key`` of the canonical name when ``name`` is a known graph or vector dataset (alias
    resolved), else of ``name`` itself; a one-class task ``"SOURCE AvsB"`` keeps its ``AvsB``."""
    from .datasets import _alias_table
    from .vector import _ALIASES as vector_aliases

    head, _, tail = str(name).strip().rpartition(" ")
    for source, rest in ((name, ""), (head, tail)):
        if not source:
            continue
        key = dataset_key(source)
        canonical = _alias_table().get(key) or vector_aliases.get(key)
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
