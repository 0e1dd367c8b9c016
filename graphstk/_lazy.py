"""Lazy package exports (PEP 562): a package declares once which module defines each public name, and
a name's module is imported on first use, so that importing a package costs only what is used."""
from __future__ import annotations

import importlib
import sys

__all__ = ["lazy_exports"]


def lazy_exports(package: str, names: dict[str, str], submodules: tuple[str, ...] = ()):
    """``(__getattr__, __dir__, __all__)`` for the package named ``package``.

    ``names`` maps each defining module, relative to ``package`` (``".estimators"``), to the
    space-separated public names it defines; ``submodules`` are public names that are submodules
    themselves. ``__all__`` lists every name in the order given, so ``from package import *``,
    ``dir()`` and Sphinx see them all.
    """
    where = {name: module for module, listed in names.items() for name in listed.split()}
    where.update({name: f".{name}" for name in submodules})

    def __getattr__(name: str):
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(where[name], package)
        value = module if name in submodules else getattr(module, name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__():
        return sorted(set(vars(sys.modules[package])) | set(where))

    return __getattr__, __dir__, list(where)
