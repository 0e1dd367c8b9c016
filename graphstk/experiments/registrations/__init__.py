"""Method registrations, one module per topic (imported by :mod:`graphstk.experiments`, above the registry).

Each module registers :class:`~graphstk.experiments.registry.MethodEntry` objects for methods
that live in :mod:`graphstk.methods` (which knows nothing of the runner). Add ONE import line
per topic below.
"""
from . import stkr  # noqa: F401  LP (t), SP-Lap (t)/(i), SP-poly (t)/(i), SP-topd (t)/(i), KRR (i)
from . import baselines  # noqa: F401  RLSC, KRLSC, LinearSVM
from . import separating  # noqa: F401  Spectral, Spectral-<filter>, Parzen, 1CSVM
from . import sskpca  # noqa: F401  LR-KPCA, LS-KPCA, MV-KPCA, MV-KPCA-10, KPCA-10, G-LS, M-LS
from . import fredholm  # noqa: F401  FredLin1, FredLin2, FredLin2(N), FredGauss, FredGauss(N), LapRLSC
from . import stkr_kernels  # noqa: F401  STKR-Lap, STKR-poly (STKR on a Gaussian feature kernel)
from . import planetoid  # noqa: F401  FeatureSTKR, FeatureSTKR (i), KRR (features), SGC (ridge), Label-Prop, GCN, GAT, APPNP, SGC, MLP+C&S
