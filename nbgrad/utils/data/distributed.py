"""``DistributedSampler``: each rank's share of a dataset, as PyTorch's."""
import math

import numpy as np

from .sampler import Sampler


class DistributedSampler(Sampler):
    r"""Restricts data loading to this rank's share of ``dataset``.

    Every rank draws the same permutation (seeded with ``seed + epoch``, so
    call :meth:`set_epoch` at the start of each epoch for a new order) and
    takes every ``num_replicas``-th index from its ``rank`` on. With
    ``drop_last=False`` the indices are padded with the first ones so that
    each rank gets ``ceil(len(dataset) / num_replicas)``; with ``True`` the
    tail is dropped so each gets ``floor(...)``. The order is NumPy's
    permutation, not PyTorch's (the same semantics, another stream).

    Args:
        dataset: a dataset with ``len``.
        num_replicas (int, optional): number of ranks (default: the world size).
        rank (int, optional): this rank (default: ``get_rank()``).
        shuffle (bool): permute the indices. Default: True.
        seed (int): the permutation's seed, the same on every rank. Default: 0.
        drop_last (bool): drop the tail instead of padding. Default: False.
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        if num_replicas is None or rank is None:
            from ...distributed import get_rank, get_world_size, is_initialized
            if not is_initialized():
                raise RuntimeError("Requires distributed package to be available")
            num_replicas = get_world_size() if num_replicas is None else num_replicas
            rank = get_rank() if rank is None else rank
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.epoch, self.drop_last, self.shuffle, self.seed = 0, drop_last, shuffle, seed
        n = len(dataset)
        if drop_last and n % num_replicas:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            indices = np.random.default_rng(self.seed + self.epoch).permutation(n).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """The epoch, which seeds this epoch's permutation (with ``seed``)."""
        self.epoch = epoch
