"""Data-parallel training on MPI (``torch.distributed``'s names).

Start several processes with MPI's launcher (``mpiexec -n 4 python
train.py``, or ``python -m nbgrad.distributed.run -n 4 train.py``), call
``init_process_group("mpi")`` in each, then use the collectives below on
tensors, ``nbgrad.distributed.nn`` for collectives that are differentiable,
``nbgrad.nn.parallel.DistributedDataParallel`` for a model and
``nbgrad.utils.data.distributed.DistributedSampler`` for the data. Needs
the ``distributed`` extra (``mpi4py`` and the ``mpich`` runtime wheel).
"""
from .collectives import (ReduceOp, Work, all_gather, all_gather_into_tensor,  # noqa: F401
                          all_reduce, barrier, broadcast, gather, irecv, isend, recv, reduce,
                          reduce_scatter_tensor, scatter, send, transport)
from .process_group import (ProcessGroup, destroy_process_group, get_rank,  # noqa: F401
                            get_world_size, init_process_group, is_available, is_initialized,
                            new_group)
from . import nn  # noqa: E402,F401  (torch.distributed.nn's counterpart)
