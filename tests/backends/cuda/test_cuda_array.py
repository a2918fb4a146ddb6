"""DeviceArray against NumPy: views (reshape, transpose, basic indexing,
broadcast) share memory and report NumPy's shapes and strides; writes
through a view are visible in its base; integer-array and boolean keys
gather and scatter; casts, copies and ``__cuda_array_interface__``."""
import ctypes

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuda_support import B, assert_close, dev, host

SIM = B.simulator()


def _pair(shape=(3, 4, 5), dtype=np.float64):
    a = np.arange(np.prod(shape), dtype=dtype).reshape(shape)
    return a, dev(a)


def _same_view(d, a):
    """Same values, shape, byte strides and contiguity as the NumPy view."""
    assert d.shape == a.shape
    assert d.dtype == a.dtype
    np.testing.assert_array_equal(host(d), a)
    if a.size:
        assert d.strides == a.strides
    assert d.flags.c_contiguous == a.flags.c_contiguous


VIEWS = {
    "T": lambda x: x.T,
    "transpose": lambda x: x.transpose(1, 0, 2),
    "swapaxes": lambda x: x.swapaxes(0, 2),
    "slice": lambda x: x[1:, ::2, 1:4],
    "reverse": lambda x: x[::-1, :, ::-2],
    "int": lambda x: x[1],
    "ints": lambda x: x[-1, 2],
    "newaxis": lambda x: x[:, None, 1],
    "ellipsis": lambda x: x[..., 2],
    "ellipsis-mid": lambda x: x[0, ..., None],
    "empty-slice": lambda x: x[2:1],
    "reshape": lambda x: x.reshape(12, 5),
    "reshape-infer": lambda x: x.reshape(-1, 10),
    "reshape-split": lambda x: x[:, 1:3].reshape(3, 2, 5),
    "squeeze": lambda x: x[:, :1].squeeze(1),
    "ravel-of-slice": lambda x: x[1].ravel(),
}


@pytest.mark.parametrize("name", VIEWS)
def test_views_match_numpy_and_share_memory(name):
    a, d = _pair()
    va, vd = VIEWS[name](a), VIEWS[name](d)
    _same_view(vd, va)
    assert B.may_share_memory(vd, d) == (np.may_share_memory(va, a) and va.size > 0)


@pytest.mark.parametrize("name", ["reshape", "slice", "T", "newaxis", "int", "reshape-split"])
def test_writes_through_a_view_are_visible_in_the_base(name):
    a, d = _pair()
    va, vd = VIEWS[name](a), VIEWS[name](d)
    vd[...] = -1
    va[...] = -1
    np.testing.assert_array_equal(host(d), a)
    d[0] = 7  # and writes to the base show through the view
    a[0] = 7
    np.testing.assert_array_equal(host(vd), va)


def test_reshape_that_needs_a_copy_does_not_share():
    a, d = _pair()
    va, vd = a.T.reshape(-1), d.T.reshape(-1)
    _same_view(vd, va)
    assert not B.may_share_memory(vd, d) and not np.may_share_memory(va, a)


def test_reshape_copy_argument_as_numpy():
    a, d = _pair()
    assert B.may_share_memory(np.reshape(d, (12, 5), copy=False), d)  # NumPy calls our method
    with pytest.raises(ValueError):
        np.reshape(a.T, -1, copy=False)
    with pytest.raises(ValueError, match="copy"):
        d.T.reshape(-1, copy=False)
    forced = d.reshape(12, 5, copy=True)
    assert not B.may_share_memory(forced, d)
    _same_view(forced, a.reshape(12, 5))


def test_numpy_functions_that_call_array_methods_work():
    """np.squeeze/np.transpose/np.swapaxes/np.reshape dispatch to our methods (views)."""
    a, d = _pair((3, 1, 4))
    for fn in (lambda x: np.squeeze(x, axis=1), lambda x: np.transpose(x, (2, 0, 1)),
               lambda x: np.swapaxes(x, 0, 2), lambda x: np.reshape(x, (4, 3))):
        _same_view(fn(d), fn(a))
        assert B.may_share_memory(fn(d), d)


def test_reshape_errors():
    _, d = _pair()
    with pytest.raises(ValueError, match="cannot reshape array of size 60 into shape"):
        d.reshape(7, -1)
    with pytest.raises(ValueError, match="can only specify one unknown dimension"):
        d.reshape(-1, -1)


_keys = st.one_of(
    st.integers(-3, 2),
    st.builds(slice, st.one_of(st.none(), st.integers(-4, 4)), st.one_of(st.none(), st.integers(-4, 4)),
              st.one_of(st.none(), st.integers(1, 3), st.integers(-3, -1))),
    st.none(),
)


@given(st.lists(st.lists(_keys, max_size=3), min_size=1, max_size=3))
def test_chains_of_basic_keys_match_numpy(chain):
    a, d = _pair()
    for key in chain:
        try:
            expected = a[tuple(key)]
        except IndexError:
            with pytest.raises(IndexError):
                d[tuple(key)]
            return
        if not isinstance(expected, np.ndarray):  # NumPy gives a scalar; we give a 0-d view
            assert d[tuple(key)].shape == () and d[tuple(key)].item() == expected
            return
        a, d = expected, d[tuple(key)]
        _same_view(d, a)


def test_broadcast_views_have_stride_zero_and_are_read_only_like_numpy():
    a = np.arange(3.0)
    d = dev(a)
    vb, va = B.broadcast_to(d, (4, 3)), np.broadcast_to(a, (4, 3))
    _same_view(vb, va)
    assert not vb.flags.writeable and d.flags.writeable
    with pytest.raises(ValueError, match="broadcast"):
        B.broadcast_to(d, (4, 2))
    assert d.expand_dims(0).shape == (1, 3)


def test_as_strided_takes_byte_strides():
    a, d = _pair((6,))
    va = np.lib.stride_tricks.as_strided(a, (3, 2), (16, 8))
    _same_view(B.as_strided(d, (3, 2), (16, 8)), va)


class TestAdvancedIndexing:
    KEYS = {
        "int-array": lambda: (np.array([2, 0, 2]),),
        "unique": lambda: (np.array([2, 0]), np.array([1, 3])),
        "negative": lambda: (np.array([-1, 0]), slice(None), np.array([4, -5])),
        "list": lambda: ([0, 2],),
        "mask": lambda: (np.arange(60).reshape(3, 4, 5) % 3 == 0,),
        "row-mask": lambda: (np.array([True, False, True]),),
        "mask-then-slice": lambda: (slice(None), np.array([True, False, True, True]), slice(1, 3)),
        "separated": lambda: (np.array([0, 1]), slice(None), np.array([1, 3])),
        "broadcast-index": lambda: (np.array([[0], [2]]), np.array([1, 2, 3])),
        "bool-scalar": lambda: (True,),
    }

    @pytest.mark.parametrize("name", KEYS)
    def test_gather_matches_numpy_and_copies(self, name):
        a, d = _pair()
        key = self.KEYS[name]()
        got, expected = d[key], a[key]
        _same_view(got, np.ascontiguousarray(expected))
        if got.size:
            assert not B.may_share_memory(got, d)

    def test_device_index_arrays(self):
        a, d = _pair()
        idx = np.array([2, 1, 1])
        assert_close(d[dev(idx), 1:3], a[idx, 1:3])
        mask = a[:, 0, 0] > 10
        assert_close(d[dev(mask)], a[mask])

    def test_gather_through_a_strided_view(self):
        a, d = _pair()
        va, vd = a[:, ::2, 1:].transpose(2, 0, 1), d[:, ::2, 1:].transpose(2, 0, 1)
        key = (np.array([3, 0]), slice(None), np.array([[1], [0]]))
        assert_close(vd[key], va[key])

    def test_out_of_range_index_raises_index_error(self):
        _, d = _pair()
        with pytest.raises(IndexError):
            d[np.array([3])]
        with pytest.raises(IndexError):
            d[5]

    @pytest.mark.parametrize("name", ["unique", "mask", "separated", "broadcast-index"])
    def test_scatter_matches_numpy(self, name):
        a, d = _pair()
        key = self.KEYS[name]()
        shape = a[key].shape
        values = np.arange(np.prod(shape), dtype=np.float64).reshape(shape) + 100
        d[key] = dev(values)
        a[key] = values
        assert_close(d, a)
        d[key] = -5.0  # a scalar
        a[key] = -5.0
        assert_close(d, a)
        d[key] = values[..., :1] * 0 + 3 if shape and shape[-1] else 3  # broadcast value
        a[key] = values[..., :1] * 0 + 3 if shape and shape[-1] else 3
        assert_close(d, a)

    def test_scatter_with_repeated_indices_writes_one_of_the_values(self):
        a, d = _pair((4,))
        d[np.array([1, 1, 1, 3])] = dev(np.array([10.0, 20.0, 30.0, 40.0]))
        got = host(d)
        assert got[1] in (10.0, 20.0, 30.0) and got[3] == 40.0
        np.testing.assert_array_equal(got[[0, 2]], a[[0, 2]])

    def test_scatter_value_shape_mismatch(self):
        _, d = _pair()
        with pytest.raises(ValueError, match="shape mismatch"):
            d[np.array([0, 1])] = dev(np.ones((3, 4, 5)))


class TestBasicAssignment:
    def test_scalar_array_and_host_values(self):
        a, d = _pair()
        d[1, :, 2:] = 0
        a[1, :, 2:] = 0
        d[0] = dev(np.arange(5.0))  # broadcast over the rows
        a[0] = np.arange(5.0)
        d[2, 1] = np.full(5, 9.0)  # a host array is copied over
        a[2, 1] = 9.0
        d[..., 0] = dev(np.arange(12, dtype=np.int64).reshape(3, 4))  # cast on store
        a[..., 0] = np.arange(12).reshape(3, 4)
        assert_close(d, a)

    def test_assigning_an_overlapping_view_reads_before_writing(self):
        a, d = _pair((10,))
        d[1:] = d[:-1]
        a[1:] = a[:-1].copy()
        assert_close(d, a)

    def test_bad_broadcast_raises(self):
        _, d = _pair()
        with pytest.raises(ValueError, match="could not broadcast"):
            d[0] = dev(np.ones(3))

    def test_fill(self):
        a, d = _pair()
        d[:, 1].fill(2.5)
        a[:, 1].fill(2.5)
        assert_close(d, a)


@pytest.mark.parametrize("src,dst", [(np.float64, np.float32), (np.float32, np.int64),
                                     (np.float64, np.bool_), (np.bool_, np.float32),
                                     (np.int64, np.float64), (np.int64, np.bool_)])
def test_astype_matches_numpy(src, dst):
    a = np.array([[-2.7, 0.0, 0.5, 7.0], [3.0, -0.0, 1e3, -1.0]]).astype(src)
    d = dev(a)
    views = [lambda x: x, lambda x: x.T, lambda x: x[:, ::-2], lambda x: x[:, None, :1],
             lambda x: x[:1].T]
    for view in views:  # the result keeps the view's memory order, as NumPy's order="K"
        got = view(d).astype(dst)
        _same_view(got, view(a).astype(dst))
        assert not B.may_share_memory(got, d)
    assert B.cast(d.T, dst).strides == a.T.astype(dst).strides
    broadcast = np.broadcast_to(a[0], (3, 4))
    assert B.broadcast_to(d[0], (3, 4)).astype(dst).strides == broadcast.astype(dst).strides


def test_copy_is_independent_and_contiguous():
    a, d = _pair()
    c = d[:, ::2].copy()
    assert c.flags.c_contiguous and not B.may_share_memory(c, d)
    c[...] = 0
    assert_close(d, a)
    assert d.astype(np.float64, copy=False) is d


def test_round_trips_for_every_dtype():
    for a in (np.array([True, False]), np.array([-3, 4], dtype=np.int64),
              np.array([1.5, -2.0], dtype=np.float32), np.array(2.5), np.zeros((0, 3))):
        d = B.asarray(a)
        assert d.dtype == a.dtype and d.shape == a.shape
        np.testing.assert_array_equal(B.to_numpy(d), a)
    assert B.asarray([1, 2], np.float32).dtype == np.float32
    d = dev(np.arange(3.0))
    assert B.asarray(d) is d and B.asarray(d, np.float32).dtype == np.float32


def test_scalars_and_lists():
    d = dev(np.array([[1.0, 2.0], [3.0, 4.0]]))
    assert d[1, 0].shape == () and d[1, 0].item() == 3.0
    assert d.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert len(d) == 2 and d.ndim == 2 and d.size == 4 and d.nbytes == 32 and d.itemsize == 8
    with pytest.raises(ValueError):
        d.item()
    assert "DeviceArray" in repr(d) and "3." in repr(d)


def test_no_implicit_conversion_to_numpy():
    d = dev(np.arange(3.0))
    with pytest.raises(TypeError, match="copy_to_host"):
        np.asarray(d)
    with pytest.raises(TypeError):
        np.arange(3.0) + d  # a host array never mixes in silently
    assert_close(np.float32(2) * d, 2 * np.arange(3.0))  # NumPy scalars defer to us
    with pytest.raises(ValueError, match="ambiguous"):
        bool(d)
    assert bool(d[1:2]) and float(d[2]) == 2.0 and int(d[2]) == 2


def test_may_share_memory():
    a, d = _pair()
    assert B.may_share_memory(d[0], d[0, 1:3])
    assert not B.may_share_memory(d[0], d[1])
    assert B.may_share_memory(d[:, 0], d[:, 3]) == np.may_share_memory(a[:, 0], a[:, 3])
    assert not B.may_share_memory(d, dev(a))
    assert not B.may_share_memory(d[2:2], d)


class TestCudaArrayInterface:
    @pytest.mark.parametrize("name", ["slice", "T", "reverse", "int", "reshape"])
    def test_describes_the_view(self, name):
        a, d = _pair(dtype=np.float32)
        va, vd = VIEWS[name](a), VIEWS[name](d)
        face = vd.__cuda_array_interface__
        assert face["version"] == 3 and face["typestr"] == "<f4"
        assert face["shape"] == va.shape
        assert face["strides"] == (None if va.flags.c_contiguous else va.strides)
        base = d.__cuda_array_interface__["data"][0]
        assert face["data"][0] - base == vd.offset * 4
        assert face["data"][1] is False
        if SIM:  # the simulator's "device" memory is host memory: read it back through the pointer
            strides = face["strides"] or np.empty(va.shape, np.float32).strides
            lo = min([0] + [(n - 1) * s for n, s in zip(va.shape, strides) if s < 0])
            hi = max([0] + [(n - 1) * s for n, s in zip(va.shape, strides) if s > 0]) + 4
            raw = (ctypes.c_char * (hi - lo)).from_address(face["data"][0] + lo)
            flat = np.frombuffer(raw, dtype=np.float32)
            seen = np.lib.stride_tricks.as_strided(flat[-lo // 4:], va.shape, strides)
            np.testing.assert_array_equal(seen, va)

    @pytest.mark.skipif(SIM, reason="needs a real device array")
    def test_numba_reads_it_without_a_copy(self):
        from numba import cuda
        a, d = _pair(dtype=np.float32)
        view = cuda.as_cuda_array(d[1:, ::2])
        np.testing.assert_array_equal(view.copy_to_host(), a[1:, ::2])
        wrapped = B.asarray(view)
        assert B.may_share_memory(wrapped, d)
        np.testing.assert_array_equal(host(wrapped), a[1:, ::2])
