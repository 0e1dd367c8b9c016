"""Past one machine: the STKR and Label-Prop engines on a graph whose rows are spread over
``torch.distributed`` processes (gloo on CPU, NCCL on GPU). See docs/distributed.md.

* :func:`partition_graph`, :class:`Partition`, :func:`halo_report`: row partitions (contiguous,
  reverse Cuthill-McKee, METIS) and their halo, computed without any process;
* :class:`PartitionedOperator`: the row-partitioned ``KernelOperator`` with its halo exchange;
* :class:`PartitionedGraphKernel`: the STKR base kernel (Eq. 23) on it; the engines of
  ``graphstk.methods.engine.solve`` run on it unchanged (its ``vector_space``, a
  :class:`ShardedSpace`, goes to every solver with the problem);
* :func:`write_partition` / ``python -m graphstk partition``: the partitioned on-disk form, written
  once; :func:`load_part`: one process's part;
* :class:`ShardedGraphKernel` / :class:`ShardedOperator`: the kernel of a loaded part, whose vectors
  are each process's own rows (:class:`RowShardSpace`); :class:`ShardedKernelFactory` loads it for
  the runner;
* :class:`PartitionedKernelFactory`: the kernel factory that ``run.py CONFIG --distributed`` passes
  to the runner (``run_experiment(..., kernel_factory=)``).
"""
from .. import _lazy_exports

__getattr__, __dir__, __all__ = _lazy_exports(__name__, {
    ".exchange": "HaloExchange PeerFailure ShardedSpace all_gather_rows free_port gather_rows init_from_env",
    ".factory": "PartitionedKernelFactory",
    ".kernel": "PartitionedGraphKernel",
    ".operator": "OwnedRows PartitionedOperator SummedRows",
    ".partition": "Partition default_partitioner halo_report halo_sizes partition_graph",
    ".sharded": "RowShardSpace ShardedGraphKernel ShardedKernelFactory ShardedOperator",
    ".store": "GraphPart load_part partitioned_data read_manifest write_partition",
})
