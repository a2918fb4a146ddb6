"""Index samplers with ``torch.utils.data``'s names, arguments and error
messages. Random orders come from nbgrad's generators (PyTorch's semantics,
not its stream)."""
import itertools
from typing import Generic, TypeVar

from ... import creation, dtypes
from ... import random as _random

__all__ = ["BatchSampler", "RandomSampler", "Sampler", "SequentialSampler",
           "SubsetRandomSampler", "WeightedRandomSampler"]

T_co = TypeVar("T_co", covariant=True)

# Indices drawn with replacement are made this many at a time, so that a
# sampler stopped early consumes little of its generator.
_CHUNK = 32


def _nbgrad():
    import nbgrad  # the random functions need the whole package
    return nbgrad


class Sampler(Generic[T_co]):
    r"""Base class of samplers: iterables of dataset keys (or of batches of keys).

    A subclass defines :meth:`__iter__` and, where it knows it, :meth:`__len__`
    (the :class:`~nbgrad.utils.data.DataLoader` works without it, but then
    has no length either).
    """

    def __iter__(self):
        raise NotImplementedError

    # No __len__ here on purpose: a missing method is what len()-probing code
    # (list(), the DataLoader) expects from an unsized sampler.


class SequentialSampler(Sampler[int]):
    r"""SequentialSampler(data_source)

    Yields ``0, 1, ..., len(data_source) - 1``.

    Args:
        data_source (Sized): what is sampled; only its length is used.
    """

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler[int]):
    r"""RandomSampler(data_source, replacement=False, num_samples=None, generator=None)

    Yields the indices of ``data_source`` in random order.

    Without replacement each pass is a random permutation; ``num_samples``
    larger than the dataset chains several permutations. With replacement
    the indices are independent uniform draws.

    Args:
        data_source (Sized): what is sampled; only its length is used.
        replacement (bool): draw with replacement. Default: ``False``.
        num_samples (int, optional): how many indices to yield. Default:
            ``len(data_source)`` (read at each use, so it follows the dataset).
        generator (Generator, optional): the source of randomness. Default:
            a new generator per iteration, seeded from the global one.
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError("replacement should be a boolean value, but got "
                            f"replacement={replacement}")
        count = self.num_samples
        if not isinstance(count, int) or count <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={count}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def _generator(self):
        if self.generator is not None:
            return self.generator
        seed = int(creation.empty((), dtype=dtypes.int64).random_().item())
        return _random.Generator().manual_seed(seed)

    def __iter__(self):
        n, left, gen = len(self.data_source), self.num_samples, self._generator()
        nb = _nbgrad()
        while left > 0:
            if self.replacement:
                block = nb.randint(0, n, (min(left, _CHUNK),), dtype=dtypes.int64,
                                   generator=gen).tolist()
            else:
                block = nb.randperm(n, generator=gen).tolist()[:left]
            left -= len(block)
            yield from block

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    r"""SubsetRandomSampler(indices, generator=None)

    Yields the elements of ``indices`` in random order (each once).

    Args:
        indices (sequence): the indices to sample from.
        generator (Generator, optional): the source of randomness.
    """

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        order = _nbgrad().randperm(len(self.indices), generator=self.generator).tolist()
        return (self.indices[i] for i in order)

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    r"""WeightedRandomSampler(weights, num_samples, replacement=True, generator=None)

    Yields ``num_samples`` indices of ``weights``, index ``i`` drawn with
    probability proportional to ``weights[i]``.

    Args:
        weights (sequence): non-negative weights, one per index (they need
            not sum to one); kept as a float64 tensor in ``self.weights``.
        num_samples (int): how many indices to yield.
        replacement (bool): draw with replacement; without it no index
            repeats (so ``num_samples`` may not exceed the number of
            non-zero weights). Default: ``True``.
        generator (Generator, optional): the source of randomness.

    Example::

        >>> list(WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 4))  # random
        [3, 3, 1, 3]
    """

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if isinstance(num_samples, bool) or not isinstance(num_samples, int) or num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError("replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        w = _nbgrad().as_tensor(weights, dtype=dtypes.float64)
        if w.dim() != 1:
            raise ValueError("weights should be a 1d sequence but given weights have shape "
                             f"{tuple(w.shape)}")
        self.weights = w
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        drawn = _nbgrad().multinomial(self.weights, self.num_samples, self.replacement,
                                      generator=self.generator)
        return iter(drawn.tolist())

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler[list[int]]):
    r"""BatchSampler(sampler, batch_size, drop_last)

    Groups the indices of ``sampler`` into lists of ``batch_size``.

    Args:
        sampler (Sampler or iterable): the source of indices.
        batch_size (int): indices per batch.
        drop_last (bool): drop a final batch shorter than ``batch_size``
            instead of yielding it.

    Example::

        >>> list(BatchSampler(range(7), 3, drop_last=False))
        [[0, 1, 2], [3, 4, 5], [6]]
        >>> list(BatchSampler(range(7), 3, drop_last=True))
        [[0, 1, 2], [3, 4, 5]]
    """

    def __init__(self, sampler, batch_size, drop_last):
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError("batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        source = iter(self.sampler)
        while batch := list(itertools.islice(source, self.batch_size)):
            if self.drop_last and len(batch) < self.batch_size:
                return
            yield batch

    def __len__(self):
        full, rest = divmod(len(self.sampler), self.batch_size)
        return full + (1 if rest and not self.drop_last else 0)
