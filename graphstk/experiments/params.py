"""Parameter declarations of the registered methods (one :class:`Param` per parameter, in the style of
scikit-learn's ``_parameter_constraints``), and the helpers that word config errors (:func:`fail`: an error
at a key path, reported by :mod:`graphstk.experiments.config` as a ``ConfigError``).
"""
from __future__ import annotations

import difflib
import math
from dataclasses import dataclass
from numbers import Integral

from pydantic_core import PydanticCustomError

__all__ = ["Param", "type_name", "hint", "choice", "fail", "unknown_key", "first_repeat", "distinct"]

_KINDS = (float, int, str, bool)


def type_name(v) -> str:
    """``"null"`` for ``None``, else the Python type name (for error messages)."""
    return "null" if v is None else type(v).__name__


def hint(word, words, n: int = 1, cutoff: float = 0.6) -> str:
    """``"; did you mean 'x'?"`` naming the closest of ``words`` (up to ``n``), or ``""``."""
    close = difflib.get_close_matches(word, [str(w) for w in words], n, cutoff) if isinstance(word, str) else []
    return f"; did you mean {' or '.join(map(repr, close))}?" if close else ""


def choice(value, allowed, what: str = "value", shown: str | None = None) -> str:
    """The message for ``value`` outside ``allowed``: ``"unknown value 'sbn'; did you mean 'sbm'?
    (allowed: karate_club, sbm)"``, or ``"expected one of: ...; got int 3"`` for a non-string."""
    shown = shown or ", ".join(map(str, allowed))
    if not isinstance(value, str):
        return f"expected one of: {shown}; got {type_name(value)} {value!r}"
    return f"unknown {what} {value!r}{hint(value, allowed)} (allowed: {shown})"


def fail(message: str, *at) -> PydanticCustomError:
    """A config error at the current model's path plus ``at`` (keys and list indices)."""
    return PydanticCustomError("config", "{message}", {"message": message, "at": at})


def unknown_key(key, allowed, *at) -> PydanticCustomError:
    """An unknown key (at ``at``, default: the key itself), naming the closest allowed one."""
    allowed = sorted(allowed)
    return fail(f"unknown key{hint(str(key), allowed)} (allowed: {', '.join(allowed)})", *(at or (key,)))


def first_repeat(items: list) -> int | None:
    """The index of the first item equal to an earlier one (``None``: all distinct)."""
    return next((i for i, x in enumerate(items) if x in items[:i]), None)


def distinct(values: list, *at) -> list:
    """``values``, refused at ``at`` when empty or when a value repeats."""
    if not values:
        raise fail("empty list (give at least one value)", *at)
    if first_repeat([repr(x) for x in values]) is not None:
        raise fail(f"duplicate values in {values}", *at)
    return values


@dataclass(frozen=True)
class Param:
    """One parameter of a registered method.

    Parameters
    ----------
    name : str
        The key in ``grid:`` / ``fixed:`` of a config.
    kind : type
        ``float`` (an int is accepted and converted), ``int``, ``str`` or ``bool``.
    low, high : float or None, default None
        Bounds of a numeric parameter (``None``: unbounded).
    low_open, high_open : bool, default False
        Whether the bound itself is excluded.
    choices : tuple or None
        The allowed values (strings, or numbers of ``kind``).
    special : tuple of str, default ()
        Strings accepted besides the numeric range (e.g. ``("auto",)``).
    optional : bool, default False
        A grid key the method may run without (a config removes it with ``null``).
    doc : str
        One line for the generated docs.
    """
    name: str
    kind: type = float
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple | None = None
    special: tuple = ()
    optional: bool = False
    doc: str = ""

    @classmethod
    def of(cls, name: str, constraints: list, doc: str = "", optional: bool = False) -> "Param":
        """The declaration of a parameter read from scikit-learn constraints, the ``_parameter_constraints[name]``
        of the estimator the method calls (``Interval``, ``StrOptions`` / ``Options``, ``"boolean"``; ``None``
        is skipped): a config value is checked as the estimator's ``fit`` checks it. Options are sorted."""
        kw: dict = {}
        intervals = [c for c in constraints if hasattr(c, "closed")]
        for c in constraints:
            if hasattr(c, "closed"):                                  # an Interval
                kw.update(kind=int if c.type is Integral else float, low=c.left, high=c.right,
                          low_open=c.left is not None and c.closed in ("right", "neither"),
                          high_open=c.right is not None and c.closed in ("left", "neither"))
            elif hasattr(c, "options"):                               # StrOptions / Options
                kw["special" if intervals else "choices"] = tuple(sorted(c.options))
                kw.setdefault("kind", c.type)
            elif c == "boolean":
                kw["kind"] = bool
        return cls(name, doc=doc, optional=optional, **kw)

    def __post_init__(self):
        if self.kind not in _KINDS:
            raise ValueError(f"Param {self.name!r}: kind must be one of float, int, str, bool; got {self.kind!r}")

    @property
    def allowed(self) -> str:
        """What the parameter accepts, in words (``"a number > 0"``, ``"an integer >= 1"``)."""
        if self.choices is not None:
            return "one of: " + ", ".join(str(c) for c in self.choices)
        if self.kind in (str, bool):
            return {str: "a string", bool: "true or false"}[self.kind]
        what = "an integer" if self.kind is int else "a number"
        if self.low is not None and self.high is not None:
            lo, hi = "(" if self.low_open else "[", ")" if self.high_open else "]"
            what += f" in {lo}{self.low:g}, {self.high:g}{hi}"
        elif self.low is not None:
            what += f" {'>' if self.low_open else '>='} {self.low:g}"
        elif self.high is not None:
            what += f" {'<' if self.high_open else '<='} {self.high:g}"
        return " or ".join([repr(s) for s in self.special] + [what])

    def check(self, value):
        """``value`` normalised (an int becomes a float for a ``float`` parameter), or ``ValueError``
        ``"expected <allowed>, got <type> <value as written>"``."""
        if isinstance(value, str) and value in self.special:
            return value
        if self.choices is not None:
            ok = isinstance(value, bool) == (self.kind is bool) and value in self.choices
        elif self.kind in (bool, str):
            ok = isinstance(value, self.kind)
        else:
            ok = (isinstance(value, int if self.kind is int else (int, float)) and not isinstance(value, bool)
                  and math.isfinite(value) and self._in_range(value))
        if not ok:
            raise self._error(value)
        return float(value) if self.kind is float and self.choices is None else value

    def _in_range(self, v) -> bool:
        return not (self.low is not None and (v <= self.low if self.low_open else v < self.low)
                    or self.high is not None and (v >= self.high if self.high_open else v > self.high))

    def _error(self, value) -> ValueError:
        shown = f"{type_name(value)} {value!r}" if not isinstance(value, (int, float)) or isinstance(value, bool) \
            else repr(value)
        words = [str(c) for c in self.choices or ()] + list(self.special)
        return ValueError(f"expected {self.allowed}, got {shown}{hint(value, words)}")
