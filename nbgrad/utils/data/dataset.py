"""Map-style and iterable datasets, their combinations and ``random_split``,
with ``torch.utils.data``'s names, arguments and error messages. Random
orders come from nbgrad's generators (PyTorch's semantics, not its stream)."""
import bisect
import itertools
import math
import warnings
from collections.abc import Iterable
from typing import Generic, TypeVar

from ...random import default_generator

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
           "ChainDataset", "Subset", "random_split"]

T_co = TypeVar("T_co", covariant=True)


class Dataset(Generic[T_co]):
    r"""Base class of map-style datasets: a mapping from keys (usually the
    integers ``0 .. len - 1``) to samples.

    A subclass defines :meth:`__getitem__` and usually :meth:`__len__` (which
    the default samplers of :class:`~nbgrad.utils.data.DataLoader` need). It
    may also define ``__getitems__(indices)``, returning the list of samples
    of a whole batch at once, which the DataLoader then prefers.

    ``a + b`` is ``ConcatDataset([a, b])``.
    """

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    # No __len__ here on purpose: list() and friends probe len() and fall back
    # to iteration only when the method is missing.

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co], Iterable[T_co]):
    r"""Base class of datasets that are a stream of samples.

    A subclass defines :meth:`__iter__`. With ``num_workers > 0`` every
    DataLoader worker iterates its own copy of the dataset, so a subclass that
    should not repeat samples splits the stream using
    :func:`~nbgrad.utils.data.get_worker_info` (in ``__iter__`` or in the
    loader's ``worker_init_fn``).

    ``a + b`` is ``ChainDataset([a, b])``.
    """

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    r"""TensorDataset(*tensors)

    Sample ``i`` is ``tuple(t[i] for t in tensors)``.

    Args:
        *tensors (Tensor): tensors sharing the size of their first dimension.
    """

    def __init__(self, *tensors):
        n = tensors[0].size(0)
        if any(t.size(0) != n for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


def _same_length(datasets):
    n = len(datasets[0])
    if any(len(ds) != n for ds in datasets):
        raise ValueError("Size mismatch between datasets")
    return n


class StackDataset(Dataset):
    r"""StackDataset(*args, **kwargs)

    Zips datasets of one length: sample ``i`` is ``(a[i], b[i], ...)`` for
    ``StackDataset(a, b, ...)`` or ``{"a": a[i], ...}`` for
    ``StackDataset(a=a, ...)``.

    Args:
        *args (Dataset): datasets whose samples form a tuple.
        **kwargs (Dataset): datasets whose samples form a dict.
    """

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via "
                             "``kwargs``) like input/output, but both types are given.")
        if not (args or kwargs):
            raise ValueError("At least one dataset should be passed")
        self.datasets = args or kwargs
        self._length = _same_length(list(args or kwargs.values()))

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {key: ds[index] for key, ds in self.datasets.items()}
        return tuple(ds[index] for ds in self.datasets)

    def __getitems__(self, indices):
        columns = []
        parts = self.datasets
        for ds in (parts.values() if isinstance(parts, dict) else parts):
            batched = getattr(ds, "__getitems__", None)
            if callable(batched):
                column = batched(indices)
                if len(column) != len(indices):
                    raise ValueError("Nested dataset's output size mismatch. "
                                     f"Expected {len(indices)}, got {len(column)}")
            else:
                column = [ds[i] for i in indices]
            columns.append(column)
        if isinstance(self.datasets, dict):
            keys = list(self.datasets)
            return [dict(zip(keys, row, strict=True)) for row in zip(*columns, strict=True)]
        return [tuple(row) for row in zip(*columns, strict=True)]

    def __len__(self):
        return self._length


class ConcatDataset(Dataset[T_co]):
    r"""ConcatDataset(datasets)

    The samples of several map-style datasets, one after another.

    Args:
        datasets (iterable of Dataset): the parts, in order (not empty, no
            :class:`IterableDataset`).

    Attributes:
        cumulative_sizes (list of int): the running totals of the parts' lengths.
    """

    @staticmethod
    def cumsum(sequence):
        return list(itertools.accumulate(len(part) for part in sequence))

    def __init__(self, datasets):
        super().__init__()
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        if any(isinstance(ds, IterableDataset) for ds in self.datasets):
            raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx += len(self)
        part = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[part - 1] if part else 0
        return self.datasets[part][idx - start]

    @property
    def cummulative_sizes(self):
        warnings.warn("`cummulative_sizes` attribute is renamed to `cumulative_sizes`",
                      FutureWarning, stacklevel=2)
        return self.cumulative_sizes


def _only_iterable(datasets):
    for ds in datasets:
        if not isinstance(ds, IterableDataset):
            raise AssertionError("ChainDataset only supports IterableDataset")
        yield ds


class ChainDataset(IterableDataset):
    r"""ChainDataset(datasets)

    The streams of several :class:`IterableDataset` s, one after another,
    read lazily.

    Args:
        datasets (iterable of IterableDataset): the streams, in order.
    """

    def __init__(self, datasets):
        super().__init__()
        self.datasets = datasets

    def __iter__(self):
        for ds in _only_iterable(self.datasets):
            yield from ds

    def __len__(self):
        return sum(len(ds) for ds in _only_iterable(self.datasets))


class Subset(Dataset[T_co]):
    r"""Subset(dataset, indices)

    The samples of ``dataset`` at ``indices``: ``subset[i]`` is
    ``dataset[indices[i]]``.

    A subclass that overrides ``__getitem__`` must override ``__getitems__``
    too (the DataLoader fetches batches through it), e.g. as
    ``[self[i] for i in indices]``; otherwise construction raises
    ``NotImplementedError``.

    Args:
        dataset (Dataset): the whole dataset.
        indices (sequence): the positions in ``dataset`` that are kept.
    """

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices
        cls = type(self)
        if cls.__getitem__ is not Subset.__getitem__ and cls.__getitems__ is Subset.__getitems__:
            raise NotImplementedError(
                f"{cls.__name__} overrides __getitem__ but not __getitems__. When subclassing "
                "Subset and overriding __getitem__, you must also override __getitems__ to "
                "ensure DataLoader works correctly with your custom logic. A simple "
                "implementation:\n\ndef __getitems__(self, indices):\n"
                "    return [self.__getitem__(idx) for idx in indices]")

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        wanted = [self.indices[i] for i in indices]
        batched = getattr(self.dataset, "__getitems__", None)
        if callable(batched):
            return batched(wanted)
        return [self.dataset[i] for i in wanted]

    def __len__(self):
        return len(self.indices)


def _lengths_from_fractions(fractions, n):
    lengths = []
    for i, frac in enumerate(fractions):
        if not 0 <= frac <= 1:
            raise ValueError(f"Fraction at index {i} is not between 0 and 1")
        lengths.append(math.floor(n * frac))
    # What flooring left over goes one by one to the splits, first ones first.
    for i in range(n - sum(lengths)):
        lengths[i % len(lengths)] += 1
    for i, length in enumerate(lengths):
        if length == 0:
            warnings.warn(f"Length of split at index {i} is 0. This might result in an empty "
                          "dataset.", stacklevel=3)
    return lengths


def random_split(dataset, lengths, generator=default_generator):
    r"""random_split(dataset, lengths, generator=default_generator) -> list of Subset

    Splits ``dataset`` into disjoint :class:`Subset` s of random samples.

    ``lengths`` are either the sizes of the splits (summing to
    ``len(dataset)``) or fractions summing to 1; the sizes are then
    ``floor(frac * len(dataset))``, with what remains handed out one sample
    at a time to the splits in order.

    Args:
        dataset (Dataset): the dataset to split.
        lengths (sequence of int or float): sizes or fractions of the splits.
        generator (Generator): the source of the random permutation, e.g.
            ``nbgrad.Generator().manual_seed(42)`` for a reproducible split.

    Example::

        >>> train, val = random_split(range(10), [0.8, 0.2])
        >>> len(train), len(val)
        (8, 2)
    """
    total = sum(lengths)
    if math.isclose(total, 1) and total <= 1:
        lengths = _lengths_from_fractions(lengths, len(dataset))
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    import nbgrad  # the random functions need the whole package
    order = nbgrad.randperm(sum(lengths), generator=generator).tolist()
    ends = itertools.accumulate(lengths)
    return [Subset(dataset, order[end - length:end])
            for end, length in zip(ends, lengths, strict=True)]
