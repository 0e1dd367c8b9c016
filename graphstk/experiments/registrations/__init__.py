"""Method registrations, one module per topic (imported by :func:`graphstk.experiments.registry.registered_methods`).

Each module registers :class:`~graphstk.experiments.registry.MethodEntry` objects for methods
that live in :mod:`graphstk.methods` (which knows nothing of the runner). Add ONE import line
per topic below.
"""
from . import baselines  # noqa: F401  RLSC, KRLSC, LinearSVM
from . import fredholm  # noqa: F401  FredLin1, FredLin2, FredLin2(N), FredGauss, FredGauss(N), LapRLSC
