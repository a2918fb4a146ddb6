"""nbgrad.utils.data against torch.utils.data: datasets, random_split,
samplers, default collation, DataLoader arguments, errors and worker
processes. Random orders are compared by their semantics (permutations,
reproducible with a seeded generator), not by PyTorch's numbers."""
import collections
import math

import numpy as np
import pytest
import torch
import torch.utils.data as tdata

import nbgrad
import nbgrad.utils.data as data


def _plain(value):
    """A collated batch as plain Python / NumPy values, to compare across libraries."""
    if isinstance(value, (nbgrad.Tensor, torch.Tensor)):
        array = value.detach().numpy() if isinstance(value, torch.Tensor) else value.numpy()
        return ("tensor", array.dtype.str, array.tolist())
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return (type(value).__name__,) + tuple(_plain(v) for v in value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    return value


def _both_raise(ours, theirs):
    with pytest.raises(Exception) as expected:
        theirs()
    with pytest.raises(expected.type) as actual:
        ours()
    assert str(actual.value) == str(expected.value).replace("torch.", "nbgrad.")


# -- datasets ------------------------------------------------------------------------

def test_tensor_concat_subset_and_stack_datasets():
    x, y = nbgrad.arange(12.0).reshape(6, 2), nbgrad.arange(6)
    ds = data.TensorDataset(x, y)
    assert len(ds) == 6 and ds[2][1].item() == 2 and ds[2][0].tolist() == [4.0, 5.0]
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        data.TensorDataset(x, nbgrad.arange(5))
    both = ds + data.TensorDataset(x[:2], y[:2])
    assert isinstance(both, data.ConcatDataset) and len(both) == 8 and both[-1][1].item() == 1
    assert both.cumulative_sizes == [6, 8]
    sub = data.Subset(ds, [5, 0, 3])
    assert len(sub) == 3 and [int(s[1]) for s in sub] == [5, 0, 3]
    stacked = data.StackDataset(a=range(3), b="xyz")
    assert stacked[1] == {"a": 1, "b": "y"}
    _both_raise(lambda: data.ConcatDataset([]), lambda: tdata.ConcatDataset([]))


def test_random_split_lengths_fractions_and_generator():
    parts = data.random_split(range(10), [3, 7], generator=nbgrad.Generator().manual_seed(1))
    assert [len(p) for p in parts] == [3, 7]
    assert sorted(parts[0].indices + parts[1].indices) == list(range(10))
    again = data.random_split(range(10), [3, 7], generator=nbgrad.Generator().manual_seed(1))
    assert again[0].indices == parts[0].indices
    fractions = data.random_split(range(11), [0.3, 0.3, 0.4])
    assert [len(p) for p in fractions] == [len(p) for p in tdata.random_split(range(11),
                                                                              [0.3, 0.3, 0.4])]
    _both_raise(lambda: data.random_split(range(5), [2, 2]),
                lambda: tdata.random_split(range(5), [2, 2]))
    _both_raise(lambda: data.random_split(range(5), [1.5, -0.5]),
                lambda: tdata.random_split(range(5), [1.5, -0.5]))


class _Squares(data.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = data.get_worker_info()
        if info is None:
            return iter(i * i for i in range(self.n))
        return iter(i * i for i in range(info.id, self.n, info.num_workers))


# -- samplers ------------------------------------------------------------------------

def test_sequential_and_batch_samplers_match_torch():
    for n, batch_size, drop_last in [(10, 3, False), (10, 3, True), (9, 3, True), (2, 5, False)]:
        ours = list(data.BatchSampler(data.SequentialSampler(range(n)), batch_size, drop_last))
        theirs = list(tdata.BatchSampler(tdata.SequentialSampler(range(n)), batch_size, drop_last))
        assert ours == theirs
        assert len(data.BatchSampler(range(n), batch_size, drop_last)) == len(theirs)
    _both_raise(lambda: data.BatchSampler(range(3), 0, False),
                lambda: tdata.BatchSampler(range(3), 0, False))
    _both_raise(lambda: data.BatchSampler(range(3), 2, 1), lambda: tdata.BatchSampler(range(3), 2, 1))


def test_random_samplers_semantics():
    g = nbgrad.Generator().manual_seed(7)
    order = list(data.RandomSampler(range(20), generator=g))
    assert sorted(order) == list(range(20)) and order != list(range(20))
    assert list(data.RandomSampler(range(20), generator=nbgrad.Generator().manual_seed(7))) == order
    more = list(data.RandomSampler(range(5), num_samples=12))
    assert len(more) == 12 and sorted(more[:10]) == sorted(list(range(5)) * 2)
    drawn = list(data.RandomSampler(range(4), replacement=True, num_samples=70))
    assert len(drawn) == 70 and set(drawn) <= set(range(4))
    subset = list(data.SubsetRandomSampler([10, 11, 12, 13]))
    assert sorted(subset) == [10, 11, 12, 13]
    weighted = list(data.WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 50))
    assert len(weighted) == 50 and set(weighted) <= {1, 3}
    unique = list(data.WeightedRandomSampler([1.0, 1.0, 1.0], 3, replacement=False))
    assert sorted(unique) == [0, 1, 2]
    _both_raise(lambda: data.RandomSampler(range(3), num_samples=0),
                lambda: tdata.RandomSampler(range(3), num_samples=0))
    _both_raise(lambda: data.RandomSampler(range(3), replacement=1),
                lambda: tdata.RandomSampler(range(3), replacement=1))
    _both_raise(lambda: data.WeightedRandomSampler([[1.0]], 2),
                lambda: tdata.WeightedRandomSampler([[1.0]], 2))
    _both_raise(lambda: data.WeightedRandomSampler([1.0], 2, replacement=None),
                lambda: tdata.WeightedRandomSampler([1.0], 2, replacement=None))


# -- collation -----------------------------------------------------------------------

Point = collections.namedtuple("Point", "x y")


@pytest.mark.parametrize("make", [
    lambda lib: [(lib.ones(2) * i, i, float(i)) for i in range(3)],
    lambda lib: [{"a": np.full((2, 2), i, np.float32), "b": np.int64(i), "s": f"s{i}"}
                 for i in range(3)],
    lambda lib: [Point(np.float64(i), [i, i + 1]) for i in range(2)],
    lambda lib: [[True, 2.5], [False, 3.5]],
    lambda lib: [np.arange(3, dtype=np.int16) + i for i in range(2)],
], ids=["tuples", "dicts", "namedtuples", "lists", "arrays"])
def test_default_collate_matches_torch(make):
    ours = data.default_collate(make(nbgrad))
    theirs = tdata.default_collate(make(torch))
    assert _plain(ours) == _plain(theirs)
    assert _plain(data.default_convert(make(nbgrad)[0])) == \
        _plain(tdata.default_convert(make(torch)[0]))


def test_default_collate_errors_match_torch():
    _both_raise(lambda: data.default_collate([object(), object()]),
                lambda: tdata.default_collate([object(), object()]))
    _both_raise(lambda: data.default_collate([[1, 2], [1]]),
                lambda: tdata.default_collate([[1, 2], [1]]))
    _both_raise(lambda: data.default_collate([np.array(["a"]), np.array(["b"])]),
                lambda: tdata.default_collate([np.array(["a"]), np.array(["b"])]))


# -- DataLoader ----------------------------------------------------------------------

def _dataset(lib):
    return lib.utils.data.TensorDataset(lib.arange(20.0).reshape(10, 2), lib.arange(10))


@pytest.mark.parametrize("kwargs", [dict(), dict(batch_size=3), dict(batch_size=3, drop_last=True),
                                    dict(batch_size=None), dict(batch_size=4, sampler=[9, 0, 4]),
                                    dict(batch_sampler=[[1, 2], [5], [0, 9, 8]])])
def test_deterministic_loading_matches_torch(kwargs):
    ours = data.DataLoader(_dataset(nbgrad), **kwargs)
    theirs = tdata.DataLoader(_dataset(torch), **kwargs)
    assert len(ours) == len(theirs)
    assert [_plain(b) for b in ours] == [_plain(b) for b in theirs]


def test_shuffle_with_a_generator_is_a_reproducible_permutation_per_epoch():
    def epochs(seed):
        loader = data.DataLoader(_dataset(nbgrad), batch_size=4, shuffle=True,
                                 generator=nbgrad.Generator().manual_seed(seed))
        return [[int(i) for _, y in loader for i in y.tolist()] for _ in range(2)]
    first, second = epochs(3)
    assert sorted(first) == sorted(second) == list(range(10)) and first != second
    assert epochs(3) == [first, second]
    assert [len(y) for _, y in data.DataLoader(_dataset(nbgrad), batch_size=4, shuffle=True)] == \
        [4, 4, 2]


def test_iterable_dataset_batches_like_torch():
    class Stream(data.IterableDataset):
        def __iter__(self):
            return iter(range(7))

    class TStream(tdata.IterableDataset):
        def __iter__(self):
            return iter(range(7))

    for kwargs in [dict(batch_size=3), dict(batch_size=3, drop_last=True), dict(batch_size=None)]:
        assert [_plain(b) for b in data.DataLoader(Stream(), **kwargs)] == \
            [_plain(b) for b in tdata.DataLoader(TStream(), **kwargs)]


def test_argument_errors_match_torch():
    ds_ours, ds_theirs = _dataset(nbgrad), _dataset(torch)
    cases = [dict(num_workers=-1), dict(timeout=-1), dict(prefetch_factor=2),
             dict(persistent_workers=True), dict(sampler=[0], shuffle=True),
             dict(batch_sampler=[[0]], batch_size=2), dict(batch_size=None, drop_last=True),
             dict(multiprocessing_context="fork"),
             dict(num_workers=1, multiprocessing_context="nope")]
    for kwargs in cases:
        _both_raise(lambda: data.DataLoader(ds_ours, **kwargs),
                    lambda: tdata.DataLoader(ds_theirs, **kwargs))
    class TStream(tdata.IterableDataset):
        def __iter__(self):
            return iter(range(3))
    _both_raise(lambda: data.DataLoader(_Squares(3), shuffle=True),
                lambda: tdata.DataLoader(TStream(), shuffle=True))
    loader, tloader = data.DataLoader(ds_ours), tdata.DataLoader(ds_theirs)

    def set_batch_size(obj):
        obj.batch_size = 3
    _both_raise(lambda: set_batch_size(loader), lambda: set_batch_size(tloader))


def test_pin_memory_is_accepted_with_torchs_warning():
    with pytest.warns(UserWarning) as ours:
        lengths = [len(y) for _, y in data.DataLoader(_dataset(nbgrad), batch_size=5,
                                                      pin_memory=True)]
    with pytest.warns(UserWarning) as theirs:
        list(tdata.DataLoader(_dataset(torch), batch_size=5, pin_memory=True))
    assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]
    assert lengths == [5, 5]


# -- worker processes ----------------------------------------------------------------

def _record_worker(worker_id):
    info = data.get_worker_info()
    assert info.id == worker_id and info.num_workers == 2
    np.random.seed(info.seed % 2 ** 32)


def test_workers_give_the_single_process_batches_in_order():
    dataset = _dataset(nbgrad)
    single = [_plain(b) for b in data.DataLoader(dataset, batch_size=3)]
    loader = data.DataLoader(dataset, batch_size=3, num_workers=2, worker_init_fn=_record_worker,
                             prefetch_factor=1)
    assert [_plain(b) for b in loader] == single
    assert data.get_worker_info() is None


def test_iterable_dataset_split_between_workers_with_get_worker_info():
    loader = data.DataLoader(_Squares(9), batch_size=2, num_workers=2)
    values = sorted(v for batch in loader for v in batch.tolist())
    assert values == [i * i for i in range(9)]


def test_persistent_workers_serve_several_epochs():
    loader = data.DataLoader(_dataset(nbgrad), batch_size=4, shuffle=True, num_workers=2,
                             persistent_workers=True,
                             generator=nbgrad.Generator().manual_seed(0))
    epochs = [[int(i) for _, y in loader for i in y.tolist()] for _ in range(2)]
    assert all(sorted(e) == list(range(10)) for e in epochs)
    assert loader._iterator is not None and all(w.is_alive() for w in loader._iterator._workers)
    loader._iterator._shutdown_workers()


class _Broken(data.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, index):
        if index == 2:
            raise ValueError("bad sample")
        return index


def test_a_worker_error_is_raised_in_the_main_process_like_torch():
    with pytest.raises(ValueError) as caught:
        list(data.DataLoader(_Broken(), batch_size=1, num_workers=1))
    text = str(caught.value)
    assert text.startswith("Caught ValueError in DataLoader worker process 0.\nOriginal Traceback")
    assert "bad sample" in text
    assert math.isfinite(len(data.DataLoader(_Broken(), batch_size=3)))
