"""Tensor creation (nbgrad/creation.py) against PyTorch and NumPy: dtype
inference, copying versus sharing memory, values, random generators and
their seeding, and PyTorch's errors."""

import numpy as np
import pytest
import torch

import nbgrad
from helpers import deeply_nested as _deep
from helpers import assert_same_error, cuda_only, dtype_name, on_device


def assert_same_tensor(ours, theirs, rtol=0.0, atol=0.0):
    assert isinstance(ours, nbgrad.Tensor)
    assert dtype_name(ours.dtype) == dtype_name(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.requires_grad == theirs.requires_grad
    assert ours.is_leaf and ours.grad_fn is None
    np.testing.assert_allclose(ours.detach().cpu().numpy(), theirs.detach().numpy(), rtol=rtol,
                               atol=atol)


# ----------------------------------------------------------------- tensor
TENSOR_DATA = [
    ("floats", lambda L: L.tensor([1.5, 2.0])),
    ("ints", lambda L: L.tensor([1, -2, 3])),
    ("bools", lambda L: L.tensor([True, False])),
    ("bool-and-int", lambda L: L.tensor([True, 2])),
    ("int-and-float", lambda L: L.tensor([[1, 2.5], [True, 0]])),
    ("nested", lambda L: L.tensor([[[1.0], [2.0]], [[3.0], [4.0]]])),
    ("python-float", lambda L: L.tensor(2.5)),
    ("python-int", lambda L: L.tensor(3)),
    ("python-bool", lambda L: L.tensor(False)),
    ("empty", lambda L: L.tensor([])),
    ("empty-nested", lambda L: L.tensor([[]])),
    ("float64-array", lambda L: L.tensor(np.array([1.5, 2.25]))),
    ("float32-array", lambda L: L.tensor(np.array([1.5, 2.25], dtype=np.float32))),
    ("int64-array", lambda L: L.tensor(np.array([[1, 2]], dtype=np.int64))),
    ("bool-array", lambda L: L.tensor(np.array([True, False]))),
    ("numpy-float64-scalar", lambda L: L.tensor(np.float64(2.5))),
    ("numpy-int64-scalar", lambda L: L.tensor(np.int64(7))),
    ("0d-tensors", lambda L: L.tensor([L.tensor(1.0), L.tensor(2.0)])),
    ("dtype-float64", lambda L: L.tensor([1, 2], dtype=L.float64)),
    ("dtype-int64-truncates", lambda L: L.tensor([1.7, -2.7], dtype=L.int64)),
    ("dtype-bool", lambda L: L.tensor([0.0, 2.0], dtype=L.bool)),
    ("dtype-float32-from-float64-array", lambda L: L.tensor(np.array([1.5]), dtype=L.float32)),
    ("requires-grad", lambda L: L.tensor([1.0, 2.0], requires_grad=True)),
    ("requires-grad-float64", lambda L: L.tensor([1, 2], dtype=L.float64, requires_grad=True)),
    # the int64 limits: exact, never wrapped; beyond them only a float result takes the value
    ("int64-max-and-min", lambda L: L.tensor([2 ** 63 - 1, -2 ** 63])),
    ("int-2**63-as-float32", lambda L: L.tensor([2 ** 63], dtype=L.float32)),
    ("int-2**64-as-float64", lambda L: L.tensor([2 ** 64], dtype=L.float64)),
    ("int-2**70-among-floats", lambda L: L.tensor([1.5, 2 ** 70])),
    ("int-2**63-as-bool", lambda L: L.tensor([2 ** 63, 0], dtype=L.bool)),
    ("float-9.2e18-as-int64", lambda L: L.tensor([9.2e18, -9.2e18], dtype=L.int64)),
    ("nan-as-bool", lambda L: L.tensor([float("nan"), 0.0], dtype=L.bool)),
    ("nan-array-as-int64", lambda L: L.tensor(np.array([np.nan]), dtype=L.int64)),  # INT64_MIN
    ("bool-and-float", lambda L: L.tensor([True, 1.5])),
    ("nested-bool-and-int", lambda L: L.tensor([[True], [2]])),
    ("range", lambda L: L.tensor(range(3))),
    ("64-deep", lambda L: L.tensor(_deep(64))),
]


@pytest.mark.parametrize("make", [c[1] for c in TENSOR_DATA], ids=[c[0] for c in TENSOR_DATA])
def test_tensor_matches_torch(make):
    """Python floats give float32 (the default dtype), ints int64, bools bool;
    a float64 NumPy array keeps float64."""
    assert_same_tensor(make(nbgrad), make(torch))


def test_tensor_of_uint64_arrays():
    """nbgrad has no uint64 (PyTorch 2.13 has): a uint64 array is copied to
    int64 when its values fit, and refused (never wrapped) when they do not."""
    small = np.array([0, 2 ** 63 - 1], dtype=np.uint64)
    assert nbgrad.tensor(small).tolist() == [0, 2 ** 63 - 1]
    big = np.array([2 ** 64 - 1], dtype=np.uint64)
    with pytest.raises(RuntimeError, match="value cannot be converted to type int64 without"):
        nbgrad.tensor(big)
    assert nbgrad.tensor(big, dtype=nbgrad.float64).tolist() == [2.0 ** 64]
    with pytest.raises(TypeError, match="numpy.uint64"):
        nbgrad.from_numpy(big)


def test_from_numpy_of_a_read_only_array_warns_and_copies():
    """PyTorch warns (once per process: not checked here) and shares the
    memory anyway, then writes it; nbgrad warns with PyTorch's first sentence
    and copies, so the array its owner made read-only stays unwritten."""
    array = np.arange(3.0)
    array.flags.writeable = False
    with pytest.warns(UserWarning, match="^The given NumPy array is not writable"):
        t = nbgrad.from_numpy(array)
    t.add_(1.0)
    assert t.tolist() == [1.0, 2.0, 3.0] and array.tolist() == [0.0, 1.0, 2.0]


def test_manual_seed_takes_pytorchs_range_of_seeds():
    """[-2**63, 2**64), negative seeds modulo 2**64 (torch: manual_seed(-1)
    is seed 2**64 - 1)."""
    assert torch.manual_seed(-1).initial_seed() == 2 ** 64 - 1
    assert nbgrad.manual_seed(-1).initial_seed() == 2 ** 64 - 1
    first = nbgrad.rand(3).tolist()
    assert nbgrad.manual_seed(2 ** 64 - 1).initial_seed() == 2 ** 64 - 1
    assert nbgrad.rand(3).tolist() == first
    nbgrad.manual_seed(-2 ** 63)


def test_an_allocation_beyond_memory_is_a_runtime_error():
    """PyTorch raises RuntimeError; nbgrad's error is also a MemoryError."""
    with pytest.raises(RuntimeError, match="can't allocate memory: you tried to allocate "
                                           "40000000000000 bytes"):
        torch.empty(10 ** 13)
    with pytest.raises(MemoryError, match="can't allocate memory: you tried to allocate "
                                          "40000000000000 bytes") as caught:
        nbgrad.empty(10 ** 13)
    assert isinstance(caught.value, RuntimeError)


def test_tensor_copies_its_data():
    array = np.arange(3.0)
    t = nbgrad.tensor(array)
    array[0] = 100.0
    assert t[0].item() == 0.0
    t.add_(1.0)
    assert array[1] == 1.0
    source = nbgrad.ones(2, requires_grad=True)
    copy = nbgrad.tensor(source.detach())
    assert not np.shares_memory(copy.numpy(), source.detach().numpy())
    assert copy.is_leaf and not copy.requires_grad


def test_requires_grad_on_an_integer_tensor_is_refused():
    for make in (lambda L: L.tensor([1, 2], requires_grad=True),
                 lambda L: L.zeros(2, dtype=L.int64, requires_grad=True),
                 lambda L: L.ones(2, dtype=L.bool, requires_grad=True),
                 lambda L: L.arange(3, requires_grad=True),
                 lambda L: L.full((2,), 3, requires_grad=True),
                 lambda L: L.randint(5, (3,), requires_grad=True)):
        assert_same_error(make)
        with pytest.raises(RuntimeError, match=r"^Only Tensors of floating point and complex dtype "
                                               r"can require gradients$"):
            make(nbgrad)


@pytest.mark.parametrize("make", [
    lambda L: L.tensor([[1, 2], [3]]),
    lambda L: L.tensor("a"),
    lambda L: L.tensor([1, "a"]),
], ids=["ragged", "string", "list-with-string"])
def test_tensor_refuses_bad_data(make):
    assert_same_error(make, exact=False)


# --------------------------------------------- as_tensor and from_numpy
def test_as_tensor_shares_memory_with_an_array_of_the_same_dtype():
    for array in (np.arange(3.0), np.arange(3.0, dtype=np.float32), np.arange(3), np.ones(3, bool)):
        t = nbgrad.as_tensor(array)
        assert np.shares_memory(t.numpy(), array)
        assert dtype_name(t.dtype) == dtype_name(torch.as_tensor(array).dtype)
        array[0] = 0
        assert t[0].item() == 0


def test_as_tensor_copies_when_it_must_convert():
    array = np.arange(3.0)
    t = nbgrad.as_tensor(array, dtype=nbgrad.float32)
    assert t.dtype is nbgrad.float32 and not np.shares_memory(t.numpy(), array)
    assert nbgrad.as_tensor([1, 2]).dtype is nbgrad.int64
    assert nbgrad.as_tensor(3.5).dtype is nbgrad.float32


def test_as_tensor_of_a_tensor():
    for lib in (nbgrad, torch):
        x = lib.ones(2)
        assert lib.as_tensor(x) is x
        y = lib.as_tensor(x, dtype=lib.float64)
        assert y is not x and dtype_name(y.dtype) == "float64"


def test_from_numpy_is_zero_copy_both_ways():
    array = np.zeros((2, 3))
    t = nbgrad.from_numpy(array)
    assert t.dtype is nbgrad.float64 and t.shape == (2, 3)
    array[1, 2] = 5.0  # a write in NumPy is visible in the tensor
    assert t[1, 2].item() == 5.0
    t[0, 0] = -1.0  # and the other way round
    assert array[0, 0] == -1.0
    assert t.numpy() is array or np.shares_memory(t.numpy(), array)


def test_from_numpy_keeps_strides_like_torch():
    array = np.arange(12.0).reshape(3, 4)[:, ::2]
    ours, theirs = nbgrad.from_numpy(array), torch.from_numpy(array)
    assert ours.stride() == theirs.stride() and ours.is_contiguous() == theirs.is_contiguous()
    np.testing.assert_array_equal(ours.numpy(), array)
    assert np.shares_memory(ours.numpy(), array)


def test_from_numpy_refuses_what_is_not_an_array():
    assert_same_error(lambda L: L.from_numpy([1.0, 2.0]))


def test_from_numpy_refuses_dtypes_nbgrad_lacks():
    """nbgrad has no uint16/32/64 nor complex types; no silent copy for them."""
    with pytest.raises(TypeError, match="numpy.uint32. The only supported types are: float64, "
                                        "float32, float16, int64, int32, int16, int8, uint8, "
                                        "and bool."):
        nbgrad.from_numpy(np.zeros(2, dtype=np.uint32))
    for dtype in (np.int32, np.int16, np.int8, np.uint8, np.float16):
        array = np.zeros(2, dtype=dtype)
        assert nbgrad.from_numpy(array).data_ptr() == array.ctypes.data


# ------------------------------------------------------ filled and ranges
FACTORIES = [
    ("zeros", lambda L: L.zeros(2, 3)),
    ("zeros-tuple", lambda L: L.zeros((2, 3))),
    ("zeros-list-int64", lambda L: L.zeros([2, 3], dtype=L.int64)),
    ("zeros-0d", lambda L: L.zeros(())),
    ("zeros-empty-dim", lambda L: L.zeros(2, 0)),
    ("zeros-requires-grad", lambda L: L.zeros(2, requires_grad=True)),
    ("ones", lambda L: L.ones(3)),
    ("ones-bool", lambda L: L.ones(2, 2, dtype=L.bool)),
    ("ones-float64", lambda L: L.ones((1, 2), dtype=L.float64, requires_grad=True)),
    ("full-int", lambda L: L.full((2,), 3)),
    ("full-float", lambda L: L.full((2, 1), 3.5)),
    ("full-bool", lambda L: L.full((2,), True)),
    ("full-0d", lambda L: L.full((), -1.0)),
    ("full-dtype", lambda L: L.full([2, 2], 3, dtype=L.float64)),
    ("full-requires-grad", lambda L: L.full((2,), 3.0, requires_grad=True)),
    ("eye", lambda L: L.eye(3)),
    ("eye-rectangular", lambda L: L.eye(2, 4)),
    ("eye-int64", lambda L: L.eye(3, 2, dtype=L.int64)),
    ("eye-zero", lambda L: L.eye(0)),
    ("arange-int", lambda L: L.arange(5)),
    ("arange-float", lambda L: L.arange(5.0)),
    ("arange-start-end", lambda L: L.arange(2, 7)),
    ("arange-float-step", lambda L: L.arange(1, 4, 0.5)),
    ("arange-fraction", lambda L: L.arange(0, 1, 0.1)),
    ("arange-negative-step", lambda L: L.arange(5, 0, -1)),
    ("arange-negative-float-step", lambda L: L.arange(1.0, -1.0, -0.5)),
    ("arange-empty", lambda L: L.arange(3, 3)),
    ("arange-dtype", lambda L: L.arange(5, dtype=L.float64)),
    ("arange-numpy-int", lambda L: L.arange(np.int64(4))),
    ("arange-requires-grad", lambda L: L.arange(3.0, requires_grad=True)),
    ("linspace", lambda L: L.linspace(0, 1, 5)),
    ("linspace-one", lambda L: L.linspace(2, 3, 1)),
    ("linspace-zero", lambda L: L.linspace(0, 1, 0)),
    ("linspace-decreasing", lambda L: L.linspace(3, -3, 7)),
    ("linspace-float64", lambda L: L.linspace(-1, 1, 9, dtype=L.float64)),
    ("linspace-int64", lambda L: L.linspace(0, 10, 5, dtype=L.int64)),
    ("full-int64-max", lambda L: L.full((2,), 2 ** 63 - 1)),
    ("full-float-truncated-into-int64", lambda L: L.full((2,), 1.5, dtype=L.int64)),
    ("full-nan-into-bool", lambda L: L.full((2,), float("nan"), dtype=L.bool)),
    ("full-numpy-int", lambda L: L.full((2,), np.int64(3))),
    ("full-0d-tensor", lambda L: L.full((2,), L.tensor(3.0))),
    ("full-inf-float32", lambda L: L.full((2,), float("inf"))),
    ("zeros-0d-tensor-size", lambda L: L.zeros(L.tensor(2))),
    ("zeros-numpy-int-sizes", lambda L: L.zeros(np.int64(2), 3)),
    ("arange-0d-tensor", lambda L: L.arange(L.tensor(3))),
    ("dtype-python-float", lambda L: L.zeros(2, dtype=float)),
]


@pytest.mark.parametrize("make", [c[1] for c in FACTORIES], ids=[c[0] for c in FACTORIES])
def test_factories_match_torch(make):
    assert_same_tensor(make(nbgrad), make(torch), rtol=1e-6, atol=1e-15)


def test_empty_has_the_shape_and_dtype():
    for lib in (nbgrad, torch):
        t = lib.empty(2, 3, dtype=lib.int64)
        assert tuple(t.shape) == (2, 3) and dtype_name(t.dtype) == "int64"
        assert dtype_name(lib.empty((4,)).dtype) == "float32"


LIKE = [
    ("zeros_like", lambda L, x: L.zeros_like(x)),
    ("zeros_like-dtype", lambda L, x: L.zeros_like(x, dtype=L.float32)),
    ("ones_like", lambda L, x: L.ones_like(x)),
    ("ones_like-requires-grad", lambda L, x: L.ones_like(x, dtype=L.float64, requires_grad=True)),
    ("full_like", lambda L, x: L.full_like(x, 2.7)),
    ("full_like-dtype", lambda L, x: L.full_like(x, 2.7, dtype=L.float64)),
]


@pytest.mark.parametrize("source", ["int64", "float64"])
@pytest.mark.parametrize("make", [c[1] for c in LIKE], ids=[c[0] for c in LIKE])
def test_like_factories_match_torch(make, source):
    """``*_like`` takes the shape and, unless told otherwise, the dtype of its
    input; never its requires_grad."""
    results = [make(lib, lib.ones(2, 3, dtype=getattr(lib, source))) for lib in (nbgrad, torch)]
    assert_same_tensor(*results)


LIKE_LAYOUTS = [
    ("transposed", lambda L: L.ones(4, 3).t()),
    ("permuted", lambda L: L.ones(2, 3, 4).permute(2, 0, 1)),
    ("stepped-transposed", lambda L: L.ones(8, 3)[::2].t()),
    ("expanded", lambda L: L.ones(3, 1).expand(3, 4)),
    ("size-1-dims", lambda L: L.ones(4, 3).t()[:, :1]),
]


@pytest.mark.parametrize("layout", [c[1] for c in LIKE_LAYOUTS], ids=[c[0] for c in LIKE_LAYOUTS])
@pytest.mark.parametrize("make", [c[1] for c in LIKE] + [
    lambda L, x: L.empty_like(x), lambda L, x: L.rand_like(x), lambda L, x: L.randn_like(x)],
    ids=[c[0] for c in LIKE] + ["empty_like", "rand_like", "randn_like"])
def test_like_factories_preserve_the_layout_like_torch(make, layout, request):
    """memory_format=torch.preserve_format: a dense input's strides, else its
    order of dimensions, packed."""
    ours, theirs = (make(lib, layout(lib)) for lib in (nbgrad, torch))
    assert ours.stride() == theirs.stride() and tuple(ours.shape) == tuple(theirs.shape)
    if not request.node.callspec.id.startswith(("empty", "rand")):
        assert_same_tensor(ours, theirs)


def test_like_factories_of_a_tensor_that_requires_grad():
    x = nbgrad.ones(2, requires_grad=True)
    for t in (nbgrad.zeros_like(x), nbgrad.ones_like(x), nbgrad.rand_like(x), nbgrad.randn_like(x),
              nbgrad.empty_like(x), nbgrad.full_like(x, 1.0)):
        assert t.shape == (2,) and t.dtype is nbgrad.float32 and not t.requires_grad


# ---------------------------------------------------------------- random
def test_manual_seed_makes_random_tensors_reproducible():
    draws = []
    for _ in range(2):
        nbgrad.manual_seed(1234)
        draws.append([nbgrad.rand(5).numpy(), nbgrad.randn(2, 3).numpy(),
                      nbgrad.randint(0, 10, (4,)).numpy(), nbgrad.rand_like(nbgrad.ones(3)).numpy()])
    for first, second in zip(*draws):
        np.testing.assert_array_equal(first, second)
    nbgrad.manual_seed(1235)
    assert not np.array_equal(nbgrad.rand(5).numpy(), draws[0][0])


def test_random_tensors_have_the_right_dtype_shape_and_range():
    nbgrad.manual_seed(0)
    u = nbgrad.rand(100, 100)
    assert u.dtype is nbgrad.float32 and u.shape == (100, 100)
    assert 0.0 <= u.numpy().min() and u.numpy().max() < 1.0 and abs(u.numpy().mean() - 0.5) < 0.02
    n = nbgrad.randn(100, 100, dtype=nbgrad.float64)
    assert n.dtype is nbgrad.float64
    assert abs(n.numpy().mean()) < 0.05 and abs(n.numpy().std() - 1.0) < 0.05
    r = nbgrad.randint(3, 7, (1000,))
    assert r.dtype is nbgrad.int64 and set(np.unique(r.numpy())) == {3, 4, 5, 6}
    r = nbgrad.randint(4, (2, 2))
    assert r.shape == (2, 2) and 0 <= r.numpy().min() and r.numpy().max() < 4
    assert nbgrad.randint(4, (3,), dtype=nbgrad.float32).dtype is nbgrad.float32
    assert nbgrad.randn(3, requires_grad=True).requires_grad
    assert nbgrad.randn_like(nbgrad.ones(2, dtype=nbgrad.float64)).dtype is nbgrad.float64


# ----------------------------------------------------------------- errors
ERRORS = [
    ("zeros-negative", lambda L: L.zeros(-1, 3)),
    ("zeros-negative-tuple", lambda L: L.zeros((2, -2))),
    ("ones-negative", lambda L: L.ones(2, -1)),
    ("empty-negative", lambda L: L.empty(-3)),
    ("full-negative", lambda L: L.full((-1, 3), 2.0)),
    ("rand-negative", lambda L: L.rand(-1)),
    ("randn-negative", lambda L: L.randn(2, -2)),
    ("randint-negative", lambda L: L.randint(5, (-1,))),
    ("eye-negative", lambda L: L.eye(-1)),
    ("eye-negative-m", lambda L: L.eye(2, -1)),
    ("arange-zero-step", lambda L: L.arange(0, 5, 0)),
    ("arange-wrong-sign", lambda L: L.arange(0, 5, -1)),
    ("arange-wrong-sign-float", lambda L: L.arange(1.0, 0.0, 0.1)),
    ("linspace-negative", lambda L: L.linspace(0, 1, -1)),
    ("randint-empty-range", lambda L: L.randint(5, 3, (3,))),
    ("rand-int", lambda L: L.rand(2, dtype=L.int64)),
    ("randn-int", lambda L: L.randn(2, dtype=L.int64)),
    ("from-numpy-list", lambda L: L.from_numpy([1.0])),
    ("zeros-no-size", lambda L: L.zeros()),
    ("ones-no-size", lambda L: L.ones()),
    ("full-int-size", lambda L: L.full(2, 3.0)),
    ("randint-int-size", lambda L: L.randint(5, 3)),
]


@pytest.mark.parametrize("make", [c[1] for c in ERRORS], ids=[c[0] for c in ERRORS])
def test_errors_match_torch(make):
    assert_same_error(make)


@pytest.mark.parametrize("make", [
    lambda L: L.zeros(2.5), lambda L: L.ones((2, 1.5)), lambda L: L.full([2.5], 1.0),
    lambda L: L.rand(), lambda L: L.randint(5),
], ids=["zeros-float", "ones-float", "full-float", "rand-no-size", "randint-no-size"])
def test_bad_sizes_raise_type_error(make):
    assert_same_error(make, exact=False)


def test_negative_size_error_text():
    with pytest.raises(RuntimeError, match=r"^Trying to create tensor with negative dimension -1: "
                                           r"\[2, -1\]$"):
        nbgrad.ones(2, -1)


# ------------------------------------------------------------ on every device
ON_DEVICE = {  # name: make(lib, device)
    "zeros": lambda L, d: L.zeros(2, 3, device=d),
    "ones": lambda L, d: L.ones((2, 3), dtype=L.float64, device=d),
    "full": lambda L, d: L.full((2,), 7, device=d),
    "full-float": lambda L, d: L.full((3, 1), 1.5, device=d),
    "eye": lambda L, d: L.eye(3, 2, device=d),
    "arange": lambda L, d: L.arange(1, 7, 2, device=d),
    "arange-float": lambda L, d: L.arange(0, 1, 0.25, device=d),
    "linspace": lambda L, d: L.linspace(-1, 1, 5, device=d),
    "tensor": lambda L, d: L.tensor([[1, 2], [3, 4]], device=d),
    "tensor-bool": lambda L, d: L.tensor([True, False], device=d),
    "tensor-scalar": lambda L, d: L.tensor(2.5, device=d),
    "tensor-empty": lambda L, d: L.tensor([], device=d),
    "as_tensor": lambda L, d: L.as_tensor(np.arange(4.0), device=d),
    "zeros-empty": lambda L, d: L.zeros(0, 3, device=d),
    "zeros_like": lambda L, d: L.zeros_like(L.ones(2, dtype=L.int64, device=d)),
    "ones_like": lambda L, d: L.ones_like(L.ones(2, device=d)),
    "full_like": lambda L, d: L.full_like(L.ones(2, device=d), 4.0),
}


@pytest.mark.parametrize("name", sorted(ON_DEVICE))
def test_creation_on_the_device_matches_torch(name, device):
    t = ON_DEVICE[name](nbgrad, device)
    assert t.device.type == device
    assert_same_tensor(t, ON_DEVICE[name](torch, "cpu"))  # a leaf that does not require grad


def test_empty_on_the_device(device):
    t = nbgrad.empty(2, 3, device=device, dtype=nbgrad.float64)
    assert t.device.type == device and t.shape == (2, 3) and t.dtype is nbgrad.float64
    assert nbgrad.empty_like(t).device == t.device


def test_leaves_that_require_grad_on_the_device(device):
    t = nbgrad.zeros(2, device=device, requires_grad=True)
    assert t.requires_grad and t.is_leaf and t.grad is None
    assert_same_error(lambda lib: lib.zeros(2, dtype=lib.int64, requires_grad=True,
                                            **on_device(lib, device)))


# ------------------------------------------------------------------ on CUDA
@cuda_only
@pytest.mark.parametrize("spelling", ["cuda", "cuda:0", nbgrad.device("cuda"),
                                      nbgrad.device("cuda", 0)], ids=str)
def test_cuda_device_spellings(spelling, device):
    t = nbgrad.ones(2, device=spelling)
    assert t.device == nbgrad.device("cuda:0") and t.is_cuda


@cuda_only
def test_random_creation_on_cuda_is_drawn_there_and_seeded_by_manual_seed(device):
    """As in PyTorch, CUDA has its own generator (drawn on the device, see
    tests/test_random.py): other values than the CPU's, as reproducible."""
    for make in (lambda d: nbgrad.rand(2, 3, device=d), lambda d: nbgrad.randn(3, device=d),
                 lambda d: nbgrad.randint(0, 5, (2, 2), device=d)):
        nbgrad.manual_seed(3)
        cpu = make("cpu")
        on_device = make(device)
        nbgrad.manual_seed(3)
        again = make(device)
        assert on_device.device.type == device and on_device.dtype is cpu.dtype
        np.testing.assert_array_equal(on_device.cpu().numpy(), again.cpu().numpy())
    nbgrad.manual_seed(0)
    like = nbgrad.rand_like(nbgrad.ones(2, 2, device=device))
    assert like.is_cuda and like.shape == (2, 2)


@cuda_only
def test_tensor_of_a_cuda_tensor_keeps_or_changes_the_device(device):
    cuda = nbgrad.tensor([1.0, 2.0], device=device)
    copy = nbgrad.tensor(cuda)
    assert copy.is_cuda and copy.tolist() == [1.0, 2.0]
    copy[0] = 5.0  # a copy, not an alias
    assert cuda[0].item() == 1.0
    assert not nbgrad.tensor(cuda, device="cpu").is_cuda
    assert nbgrad.tensor(nbgrad.ones(2), device=device).is_cuda
    assert nbgrad.as_tensor(cuda) is cuda
    moved = nbgrad.as_tensor(cuda, device="cpu")
    assert not moved.is_cuda and moved.tolist() == [1.0, 2.0]


@cuda_only
def test_only_cuda_device_zero(device):
    with pytest.raises(RuntimeError, match="cuda:0"):
        nbgrad.zeros(2, device="cuda:1")
