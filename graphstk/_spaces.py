"""Where the solvers reduce over rows: :class:`VectorSpace` (one process's whole tensors) and its
subclasses (:class:`graphstk.distributed.ShardedSpace`). A space is an argument, never ambient state:
every solver takes ``space=`` (default ``LOCAL``), an operator names its own in
:attr:`graphstk.operators.KernelOperator.vector_space`.
"""
from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["VectorSpace", "LOCAL"]


class VectorSpace:
    """Where the solvers' column reductions run: on this process's whole tensor (this class).

    The solvers reduce over rows only through ``col_dot`` and ``col_norm`` of the space
    they are given (their ``space=`` argument; ``None`` is ``LOCAL``) and hand their results
    out through ``settle``; a subclass makes the reductions global when the rows of an
    ``[N, K]`` block are spread over processes (:class:`graphstk.distributed.ShardedSpace`). An
    operator names its space in :attr:`~graphstk.operators.KernelOperator.vector_space`, and the
    engines pass the problem's space to every solver they call.
    """

    def col_dot(self, x: Tensor, y: Tensor) -> Tensor:
        """``sum_i x[i, j] y[i, j]`` per column ``j`` (``[K]``)."""
        return (x * y).sum(0)

    def col_norm(self, x: Tensor) -> Tensor:
        """The Euclidean norm of every column (``[K]``)."""
        return torch.linalg.vector_norm(x, dim=0)

    def settle(self, x: Tensor) -> Tensor:
        """A solver's result as its caller receives it (here: ``x`` itself)."""
        return x

    #: whether the blocks of this space are this process's rows only (a sharded vector), so that
    #: row indexing goes through the problem's local rows (``Problem.train_rows``)
    sharded = False

    def reduce_sum(self, t: Tensor) -> Tensor:
        """``t`` summed over the processes that share the vectors (here: ``t`` itself)."""
        return t


#: the space of one process holding whole tensors (the solvers' default)
LOCAL = VectorSpace()


def _space(space: VectorSpace | None) -> VectorSpace:
    if space is None:
        return LOCAL
    if not isinstance(space, VectorSpace):
        raise TypeError(f"space must be a graphstk.spectral.solvers.VectorSpace, got {type(space).__name__}")
    return space
