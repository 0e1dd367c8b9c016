"""The package's errors and warnings, in one place.

Every class is re-exported where it is raised (``graphstk.methods``, ``graphstk.spectral``,
``graphstk.data``, ``graphstk.distributed``, ``graphstk.experiments``), so
``except graphstk.exceptions.ConvergenceError`` and ``except graphstk.spectral.solvers.ConvergenceError``
catch the same thing.
"""
from __future__ import annotations

__all__ = [
    "BudgetWarning", "ConvergenceWarning", "ConvergenceError", "DivergenceWarning", "EdgeListWarning", "ClassesWithoutLabelsWarning",
    "UnreachableNodesWarning", "NonFiniteScoresWarning", "DatasetNotFoundError", "DataFileError",
    "FeaturesUnavailableWarning", "MemoryLimitError", "LabelError", "PeerFailure", "ProtocolError",
    "DatasetMissingError", "RunError", "ConfigError", "UnknownMethodError",
]


# ----------------------------------------------------------------------------- solvers
class ConvergenceWarning(UserWarning):
    """An iterative solve stopped before reaching its tolerance (the message says whether it
    stalled or was still improving, and what to change)."""


class BudgetWarning(UserWarning):
    """A time budget (``max_seconds=``) that the route taken does not bound (a direct factorisation
    runs to its end)."""


class ConvergenceError(FloatingPointError):
    """An iterative solve diverged, or ended no closer to the solution than ``x = 0``
    (relative residual >= 1): its result is not returned as scores.

    ``result``: the :class:`~graphstk.spectral.solvers.SolveResult` of the failed solve (its
    ``n_iter`` and ``residuals``), for diagnostics; ``None`` when raised without one.
    """

    def __init__(self, message: str, result=None):
        super().__init__(message)
        self.result = result


class DivergenceWarning(UserWarning):
    """A fixed-budget iteration of a :mod:`graphstk.nn` module was diverging; the module switched
    to a convergent route for that call (the message names both and says why)."""


# ----------------------------------------------------------------------------- graphs and labels
class EdgeListWarning(UserWarning):
    """``edge_index`` has duplicate edges (their weights are summed) or self-loops (kept)."""


class ClassesWithoutLabelsWarning(UserWarning):
    """Some classes have no labeled (training) node: no method can learn them, so they are
    never predicted (their score column is masked)."""


class UnreachableNodesWarning(UserWarning):
    """Some nodes are not connected to any labeled node (or every score of theirs is zero); they
    are flagged instead of being given a class.

    Python shows a warning with the same text only once per line of code, so in a loop of fits
    read the count from the fitted object (``n_unreachable_``, ``unreachable_``) instead.
    """


class NonFiniteScoresWarning(RuntimeWarning):
    """An engine returned NaN or infinite scores; those rows are scored as unreachable."""


class LabelError(ValueError):
    """Labels that cannot be read as class ids with ``-1`` marking unlabeled points (another
    negative value, NaN, mixed types); the message names the offending entries."""


# ----------------------------------------------------------------------------- data and memory
class DatasetNotFoundError(FileNotFoundError):
    """A named dataset is not on disk and cannot be downloaded (offline or unreachable)."""


class DataFileError(OSError):
    """A dataset file is truncated, corrupted or unreadable; the message names the file, the
    dataset and the fix (usually: delete the file or its ``processed/`` folder and load again)."""


class FeaturesUnavailableWarning(UserWarning):
    """A dataset was loaded without node features (``data.x is None``)."""


class MemoryLimitError(MemoryError):
    """An allocation was refused before it was made: it needs more than the process's memory ceiling
    (:func:`graphstk.memory.memory_limit`: physical memory, ``ulimit -v``, a cgroup limit or
    ``GRAPHSTK_MAX_MEMORY``, whichever is smallest; never the memory free at that instant). The
    message gives the size, the bound that decided and the option that fits."""


# ----------------------------------------------------------------------------- distributed runs
class PeerFailure(RuntimeError):
    """A collective of the partitioned operator failed: a peer process stopped, or stayed silent
    past the process group's timeout. Every process raises it; none waits forever."""


# ----------------------------------------------------------------------------- experiments
class ProtocolError(ValueError):
    """Bad input found by a protocol's checks (before any computation)."""


class DatasetMissingError(RuntimeError):
    """A dataset of the config is absent and ``skip_missing`` is false."""


class RunError(RuntimeError):
    """A unit (dataset, method, p_test, seed) failed, or a run cannot start because another run
    holds its output folder; the message says which and why."""


class ConfigError(ValueError):
    """A config problem; ``str(err)`` is ``"<key path>: <what is wrong and what is allowed>"``."""

    def __init__(self, path: str, message: str):
        self.path, self.message = path, message
        super().__init__(f"{path}: {message}" if path else message)


class UnknownMethodError(KeyError, ValueError):
    """A method name that no registration provides; the message lists close matches."""

    def __str__(self) -> str:   # KeyError would quote the message
        return str(self.args[0]) if self.args else ""
