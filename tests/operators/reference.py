"""Independent numpy/scipy references for the feature-kernel tests."""
import numpy as np
from scipy.spatial.distance import cdist

KERNELS = ["gaussian", "laplacian", "abel", "cauchy", "linear", "polynomial"]


def ref_kernel(name, X, Y, sigma=0.7, degree=2, c=1.0):
    """Each formula written out independently with scipy / numpy."""
    if name == "gaussian":
        return np.exp(-cdist(X, Y, "sqeuclidean") / (2 * sigma**2))
    if name == "laplacian":
        return np.exp(-cdist(X, Y, "cityblock") / sigma)
    if name == "abel":
        return np.exp(-cdist(X, Y, "euclidean") / sigma)
    if name == "cauchy":
        out = np.ones((len(X), len(Y)))
        for m in range(X.shape[1]):
            out *= 1.0 / (1.0 + (X[:, m][:, None] - Y[:, m][None, :]) ** 2 / sigma**2)
        return out
    if name == "linear":
        return X @ Y.T
    if name == "polynomial":
        return (X @ Y.T + c) ** degree
    raise KeyError(name)


def params(name, sigma=0.7):
    return {"sigma": sigma} if name in ("gaussian", "laplacian", "abel", "cauchy") else {}


def ref_normalized(name, X, Y, **kw):
    K = ref_kernel(name, X, Y, **kw)
    dx = np.array([ref_kernel(name, x[None], x[None], **kw)[0, 0] for x in X])
    dy = np.array([ref_kernel(name, y[None], y[None], **kw)[0, 0] for y in Y])
    return K / np.sqrt(np.outer(dx, dy))


def brute_knn(X, k, metric):
    D = cdist(X, X, {"euclidean": "euclidean", "manhattan": "cityblock", "cosine": "cosine"}[metric])
    np.fill_diagonal(D, np.inf)
    nbr = np.argsort(D, axis=1, kind="stable")[:, :k]
    return D, nbr
