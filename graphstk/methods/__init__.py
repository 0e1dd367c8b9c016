"""Methods: Label-Prop and STKR estimators, the validated STKRCV, the batched engine behind them, and the
kernel methods of the other source papers.

The graph estimators take a PyG ``Data`` (or any square kernel operator) and node ids or a
boolean mask: ``fit(data, train_idx, hidden_idx=None, *, y=None)``; ``predict`` returns classes
(``-1`` for a node no label reaches), ``decision_function`` the scores in scikit-learn's shape
(``[len(idx)]`` for two classes, else ``[len(idx), C]``) and ``class_scores`` the ``[len(idx), C]``
scores; NumPy ids in give NumPy out, a tensor gives tensors on its device. The feature-matrix
estimators follow scikit-learn's contract (``fit(X, y)`` with ``y = -1`` for unlabeled points).
Both are tabled in docs/estimators.md.

Example
-------
>>> import networkx as nx, numpy as np, torch, graphstk as gs
>>> karate = gs.load_dataset(nx.karate_club_graph(), label="club")     # 34 nodes, 2 classes
>>> train = torch.tensor([0, 33])                                      # one label per class
>>> stkr = gs.STKR(gs.InverseLaplacian(eta=0.9), beta=1e-2).fit(karate, train)
>>> stkr.decision_function(torch.tensor([1, 2, 3])).shape              # two classes: [len(idx)]
torch.Size([3])
>>> stkr.class_scores(torch.tensor([1, 2, 3])).shape                   # [len(idx), C]
torch.Size([3, 2])
>>> stkr.predict(torch.tensor([1, 2, 3]))
tensor([0, 0, 0])
>>> stkr.predict(np.array([1, 2, 3]))                                   # NumPy in, NumPy out
array([0, 0, 0])
>>> lp = gs.LabelPropagation(alpha=0.9).fit(karate, train)
>>> lp.class_scores().shape                                            # every node
torch.Size([34, 2])
"""
from .. import _lazy_exports

__getattr__, __dir__, __all__ = _lazy_exports(__name__, {
    ".estimators": "STKR LabelPropagation",
    ".validated": "STKRCV",
    ".grid": "predict_labels unreachable",
    ".kernel_ridge": "KernelRidge RandomFeatureRidge kernel_ridge_solve",
    ".coupled_embedding": "CoupledKernelEmbedding coupled_kernel_embedding",
    "..exceptions": "ClassesWithoutLabelsWarning NonFiniteScoresWarning UnreachableNodesWarning",
    ".separating": "SpectralSupportEstimator ParzenWindow gaussian_one_class_svm",
    ".sskpca": "LRKPCA LSKPCA MVKPCA KernelPCAClassifier",   # semi-supervised KPCA (Walder et al.)
    ".fredholm": "FredholmKernel FredholmRLSC FredholmSVM RandomFeatureFredholm fredholm_gram fredholm_random_features",
    ".laprls": "LapRLSC",
    ".feature_stkr": "FeatureSTKR",   # graph x feature kernels, closed form
})
