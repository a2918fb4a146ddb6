"""Comparison helpers and interop (issue 15, item 7): allclose, equal,
``format`` of 0-d tensors, memory facts (data_ptr, element_size, nbytes,
itemsize, storage_offset) and DLPack both ways, zero-copy with NumPy and
PyTorch (writes visible both ways), and on CUDA in the simulator."""
import numpy as np
import pytest
import torch

import nbgrad
from helpers import assert_same_error, cuda_only

TESTED_OPS = {"allclose", "equal", "from_dlpack", "data_ptr", "nbytes", "itemsize",
              "__dlpack__", "__dlpack_device__", "__format__"}

INF, NAN = float("inf"), float("nan")
CLOSE_CASES = [
    ([1.0, 2.0], [1.0, 2.0 + 1e-6], {}),
    ([1.0, 2.0], [1.0, 2.1], {}),
    ([1.0, 2.0], [1.0, 2.1], {"rtol": 0.1}),
    ([1.0, 2.0], [1.05, 2.0], {"atol": 0.1}),
    ([INF, -INF], [INF, -INF], {}),
    ([INF], [-INF], {}),
    ([NAN, 1.0], [NAN, 1.0], {}),
    ([NAN, 1.0], [NAN, 1.0], {"equal_nan": True}),
    ([[1.0], [2.0]], [1.0, 2.0], {}),  # broadcast
    ([0.0], [1e-9], {}),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("a, b, kwargs", CLOSE_CASES)
def test_allclose_and_equal_match_torch(a, b, kwargs, dtype):
    def run(lib, fn):
        x, y = lib.tensor(a, dtype=getattr(lib, dtype)), lib.tensor(b, dtype=getattr(lib, dtype))
        return fn(lib)(x, y, **kwargs) if fn(lib) is lib.allclose else fn(lib)(x, y)
    assert run(nbgrad, lambda L: L.allclose) is run(torch, lambda L: L.allclose)
    assert run(nbgrad, lambda L: L.equal) is run(torch, lambda L: L.equal)


def test_allclose_and_equal_other_dtypes():
    for lib_a, lib_b in ((nbgrad, torch),):
        for make in (lambda L: (L.tensor([1, 2]), L.tensor([1, 2])),
                     lambda L: (L.tensor([1, 2]), L.tensor([1, 3])),
                     lambda L: (L.tensor([True]), L.tensor([True])),
                     lambda L: (L.ones(3), L.ones(3, dtype=L.int64)),
                     lambda L: (L.ones(3), L.ones(2)),
                     lambda L: (L.ones(2, 3).t(), L.ones(3, 2))):
            ours, theirs = make(lib_a), make(lib_b)
            assert lib_a.equal(*ours) is lib_b.equal(*theirs)
            if ours[0].dtype is ours[1].dtype and ours[0].shape == ours[1].shape:
                assert lib_a.allclose(*ours) is lib_b.allclose(*theirs)
    x = nbgrad.ones(3, requires_grad=True)
    assert x.allclose(x * 1) and x.equal(x.detach())


@pytest.mark.parametrize("fn", [
    lambda L: L.allclose(L.ones(3), L.ones(3, dtype=L.float64)),
    lambda L: L.allclose(L.ones(3), L.ones(3), rtol=-1),
    lambda L: L.allclose(L.ones(3), L.ones(3), atol=-1),
    lambda L: L.allclose(L.ones(3), 1),
    lambda L: L.allclose(L.ones(3), L.ones(2)),
    lambda L: L.equal(L.ones(3), [1]),
], ids=range(6))
def test_errors_like_torch(fn):
    assert_same_error(fn)


VIEWS = [
    lambda L: L.arange(12.0).reshape(3, 4),
    lambda L: L.arange(12.0).reshape(3, 4)[1:, 2:],
    lambda L: L.arange(12.0).reshape(3, 4).t(),
    lambda L: L.arange(12.0, dtype=L.float64)[::3],
    lambda L: L.ones(2, 3).expand(4, 2, 3),
    lambda L: L.tensor(3),
    lambda L: L.zeros(0, 2, dtype=L.int32),
    lambda L: L.ones(5, dtype=L.float16),
    lambda L: L.ones(5, dtype=L.uint8)[2:],
]


@pytest.mark.parametrize("make", VIEWS, ids=range(len(VIEWS)))
def test_memory_facts_match_torch(make):
    ours, theirs = make(nbgrad), make(torch)
    assert ours.element_size() == theirs.element_size()
    assert ours.itemsize == theirs.itemsize and ours.nbytes == theirs.nbytes
    assert ours.storage_offset() == theirs.storage_offset()
    base = ours._base if ours._base is not None else ours
    torch_base = theirs._base if theirs._base is not None else theirs
    assert (ours.data_ptr() - base.data_ptr()) == (theirs.data_ptr() - torch_base.data_ptr())
    if ours.numel():
        assert ours.data_ptr() == ours.numpy().__array_interface__["data"][0]


def test_a_zero_dim_tensor_formats_as_its_number():
    loss = (nbgrad.tensor([0.5, 0.25], requires_grad=True) ** 2).sum()
    assert f"{loss:.4f}" == f"{torch.tensor(0.3125):.4f}" == "0.3125"
    assert format(nbgrad.tensor(5), "03d") == "005"
    assert format(nbgrad.tensor(True), "") == "True"
    assert f"{nbgrad.tensor([1.5])}" == "tensor([1.5000])"
    with pytest.raises(TypeError, match="unsupported format string passed to Tensor.__format__"):
        f"{nbgrad.tensor([1.5]):.2f}"


# ------------------------------------------------------------------ DLPack
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", "int16",
                                   "int8", "uint8", "bool"])
def test_dlpack_with_numpy_and_torch_shares_memory_both_ways(dtype):
    x = nbgrad.arange(12).reshape(3, 4).to(getattr(nbgrad, dtype))
    for other in (np.from_dlpack(x), torch.from_dlpack(x)):
        assert str(other.dtype).rsplit(".", 1)[-1] == dtype
        np.testing.assert_array_equal(np.asarray(other), x.numpy())
        other[1, 2] = 0
        assert x[1, 2].item() == 0  # their write, our memory
        x[0, 1] = 1
        assert other[0, 1].item() == 1  # our write, their memory
    array = np.arange(12).reshape(3, 4).astype(np.dtype(dtype))
    source = torch.arange(12).reshape(3, 4).to(getattr(torch, dtype))
    for other in (array, source):
        y = nbgrad.from_dlpack(other)
        assert y.dtype is getattr(nbgrad, dtype) and y.shape == (3, 4)
        y[2, 3] = 1
        assert other[2, 3].item() == 1
        other[0, 0] = 1
        assert y[0, 0].item() == 1


def test_dlpack_strided_views_and_capsules():
    t = torch.arange(24.0).reshape(4, 6)[1:, ::2]
    y = nbgrad.from_dlpack(t)
    assert y.shape == (3, 3) and y.stride() == t.stride() and y.tolist() == t.tolist()
    x = nbgrad.arange(24.0).reshape(4, 6).t()[2:]
    back = torch.from_dlpack(x)
    assert back.stride() == x.stride() and back.tolist() == x.tolist()
    # the utils capsules, both directions, and a capsule consumed once only
    capsule = nbgrad.utils.dlpack.to_dlpack(x)
    z = torch.utils.dlpack.from_dlpack(capsule)
    z[0, 0] = -1
    assert x[0, 0].item() == -1
    with pytest.raises(RuntimeError, match="from_dlpack received an invalid capsule"):
        nbgrad.from_dlpack(capsule)
    w = nbgrad.utils.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(t))
    w[0, 0] = 99
    assert t[0, 0].item() == 99
    versioned = x.__dlpack__(max_version=(1, 0))
    assert "dltensor_versioned" in repr(versioned)
    assert nbgrad.from_dlpack(versioned).data_ptr() == x.data_ptr()
    assert nbgrad.from_dlpack(nbgrad.zeros(0, 3)).shape == (0, 3)
    assert nbgrad.from_dlpack(np.array(2.5)).item() == 2.5  # 0-d
    assert x.__dlpack_device__() == (1, 0)
    copied = nbgrad.from_dlpack(torch.ones(2), copy=True)
    assert copied.tolist() == [1.0, 1.0]


def test_dlpack_keeps_the_producer_alive():
    y = nbgrad.from_dlpack(torch.arange(5.0) * 2)  # nothing else holds the torch tensor
    import gc
    gc.collect()
    assert y.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0]
    n = np.from_dlpack(nbgrad.arange(4.0) + 1)
    gc.collect()
    assert n.tolist() == [1.0, 2.0, 3.0, 4.0]


def test_dlpack_aliases_bypass_version_counters():
    """As with ``.data``: autograd cannot see a write through a DLPack alias."""
    x = nbgrad.ones(3, requires_grad=True)
    y = x * 1
    z = y.sigmoid()  # saves its output
    before = z._version
    torch.from_dlpack(z.detach())[0] = 5.0
    assert z._version == before  # not seen: backward uses the changed value silently
    z.sum().backward()


@pytest.mark.parametrize("fn", [
    lambda L: L.ones(3, requires_grad=True).__dlpack__(),
    lambda L: L.ones(3).__dlpack__(stream=2),
    lambda L: L.ones(3).__dlpack__(stream="x"),
    lambda L: L.from_dlpack(3),
], ids=range(4))
def test_dlpack_errors_like_torch(fn):
    assert_same_error(fn)


@cuda_only
def test_dlpack_on_cuda_in_the_simulator(device):
    x = nbgrad.arange(6.0, device="cuda").reshape(2, 3)
    assert x.__dlpack_device__() == (2, 0)
    y = nbgrad.from_dlpack(x.__dlpack__(max_version=(1, 0)))  # a CUDA capsule, read back
    assert y.device.type == "cuda" and y.tolist() == x.tolist()
    y[0, 0] = 7
    assert x[0, 0].item() == 7  # the same device memory
    z = nbgrad.from_dlpack(x[:, 1:])  # through __dlpack__, strided
    assert z.tolist() == x[:, 1:].tolist() and z.stride() == (3, 1)
    host = nbgrad.from_dlpack(x.__dlpack__(dl_device=(1, 0)))  # a copy for a CPU consumer
    assert host.device.type == "cpu" and host.tolist() == x.tolist()
    assert x.data_ptr() == x.__cuda_array_interface__["data"][0]
    assert x.nbytes == 24 and x.element_size() == 4
