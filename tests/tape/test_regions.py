"""``nbgrad.tape.regions.overlaps`` against a brute-force list of the bytes
each array covers: views of one tensor (slices, steps, flips, transposes,
selections, diagonals, reinterpretations) in every pair."""
import itertools

import numpy as np
import pytest

from nbgrad.tape import regions


def _region(a):
    return a.__array_interface__["data"][0], a.shape, a.strides, a.itemsize


def _bytes(a):
    if a.size == 0:
        return set()
    index = np.indices(a.shape).reshape(a.ndim, -1)
    starts = _region(a)[0] + (np.array(a.strides)[:, None] * index).sum(0)
    return set((starts[:, None] + np.arange(a.itemsize)).ravel().tolist())


def _views(seed, count=60):
    rng = np.random.default_rng(seed)
    base = np.zeros((5, 6, 4), np.float32)
    views = [base, base[:0], np.diagonal(base[0]), base.reshape(-1)[::3],
             base.reshape(-1)[1::3], base.view(np.uint8).reshape(-1)[1::4], base.view(np.float64)]
    for _ in range(count):
        key = []
        for n in base.shape:
            start = int(rng.integers(0, n))
            stop = int(rng.integers(start, n + 1))
            step = int(rng.integers(1, 3))
            key.append(slice(start, stop, step) if rng.random() < 0.8 else slice(None, None, -step))
        v = base[tuple(key)]
        if rng.random() < 0.3:
            v = v.transpose(rng.permutation(3))
        if rng.random() < 0.2 and v.shape[0]:
            v = v[int(rng.integers(0, v.shape[0]))]
        views.append(v)
    return views


@pytest.mark.parametrize("seed", [0, 1])
def test_overlap_is_exact_for_views_of_one_tensor(seed):
    views = _views(seed)
    for a, b in itertools.combinations(views, 2):
        assert regions.overlaps(_region(a), _region(b)) == bool(_bytes(a) & _bytes(b)), (a.shape, b.shape)


def test_large_interleaved_views_are_decided_exactly():
    big = np.zeros((2048, 2048), np.float32)
    assert not regions.overlaps(_region(big[:, :1000]), _region(big[:, 1000:]))
    assert regions.overlaps(_region(big[:, :1001]), _region(big[:, 1000:]))
    assert not regions.overlaps(_region(big[::2]), _region(big[1::2]))
    assert regions.overlaps(_region(big.T[3]), _region(big[:, 3]))


def test_a_problem_past_the_work_bound_counts_as_overlapping(monkeypatch):
    a = np.zeros(1000, np.float32)
    assert not regions.overlaps(_region(a[::2]), _region(a[1::2]))
    monkeypatch.setattr(regions, "MAX_WORK", 0)  # disjoint, but not provably so without work
    assert regions.overlaps(_region(a[::2]), _region(a[1::2]))
