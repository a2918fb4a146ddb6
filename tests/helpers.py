"""Shared test helpers: moving values between nbgrad, NumPy and PyTorch,
comparing results with a tolerance that fits the dtype (and the device), and
running the same work on a device and in PyTorch."""
import re

import numpy as np
import pytest
import torch

import nbgrad

TORCH_DTYPES = {
    nbgrad.bool: torch.bool,
    nbgrad.int64: torch.int64,
    nbgrad.float32: torch.float32,
    nbgrad.float64: torch.float64,
    nbgrad.uint8: torch.uint8,
    nbgrad.int8: torch.int8,
    nbgrad.int16: torch.int16,
    nbgrad.int32: torch.int32,
    nbgrad.float16: torch.float16,
}
NBGRAD_DTYPES = {v: k for k, v in TORCH_DTYPES.items()}

# (rtol, atol) for values computed in a dtype; float32 allows a few ulp of libm
# differences and of summation order when broadcasting is undone.
TOLERANCES = {
    nbgrad.float16: (2e-3, 1e-5),  # (both compute in float32 and round once: ties may differ)
    nbgrad.float32: (2e-5, 1e-6),
    nbgrad.float64: (1e-11, 1e-13),
}
# On CUDA the simulator evaluates float32 math in double precision and rounds
# (a GPU uses its own libm): a few ulp from the CPU's float32 scalar math.
CUDA_TOLERANCES = {**TOLERANCES, nbgrad.float32: (3e-5, 2e-6)}

# A test taking ``device`` runs on every device (tests/conftest.py); this one
# runs on CUDA only: transfers, mixed-device errors, CUDA memory figures.
cuda_only = pytest.mark.parametrize("device", [pytest.param("cuda", marks=pytest.mark.cuda)])

MIXED = "Expected all tensors to be on the same device, but found at least two devices, {} and {}!"


def to_torch_dtype(dtype):
    return TORCH_DTYPES[dtype]


def to_nbgrad_dtype(dtype):
    return NBGRAD_DTYPES[dtype]


def dtype_name(dtype):
    """"float32" for nbgrad.float32 and torch.float32 alike."""
    return str(dtype).rsplit(".", 1)[-1]


def as_numpy(value):
    """A NumPy copy of an nbgrad or torch tensor (or array, or number)."""
    if isinstance(value, nbgrad.Tensor):
        return np.array(value.detach().cpu().numpy(), copy=True)
    if isinstance(value, torch.Tensor):
        return value.detach().numpy().copy()
    return np.asarray(value)


def tolerance(dtype, device="cpu"):
    table = CUDA_TOLERANCES if nbgrad.device(device).type == "cuda" else TOLERANCES
    return table.get(dtype, (0, 0))


def assert_close(actual, expected, dtype=None, rtol=None, atol=None):
    """Values (NaN-aware, shape-exact) within the tolerance of ``dtype``
    (the dtype of ``actual`` when not given) on ``actual``'s device; exact
    for bool and int64."""
    device = "cpu"
    if isinstance(actual, nbgrad.Tensor):
        dtype = actual.dtype if dtype is None else dtype
        device = actual.device
    default_rtol, default_atol = tolerance(dtype, device)
    a, e = as_numpy(actual), as_numpy(expected)
    assert a.shape == e.shape, f"shape {a.shape} != expected {e.shape}"
    if a.dtype == np.bool_ or e.dtype == np.bool_ or np.issubdtype(a.dtype, np.integer):
        np.testing.assert_array_equal(a, e)
        return
    np.testing.assert_allclose(a.astype(np.float64), e.astype(np.float64),
                               rtol=default_rtol if rtol is None else rtol,
                               atol=default_atol if atol is None else atol, equal_nan=True)


def assert_same_tensor(actual, expected):
    """An nbgrad result matches a torch result: dtype, shape and values."""
    assert dtype_name(actual.dtype) == dtype_name(expected.dtype), \
        f"dtype {actual.dtype} != torch's {expected.dtype}"
    assert tuple(actual.shape) == tuple(expected.shape)
    assert_close(actual, expected)


def node_name(grad_fn):
    """A backward node's name without PyTorch's overload suffix and namespace
    (``torch::autograd::CopyBackwards`` -> ``CopyBackward``)."""
    if grad_fn is None:
        return None
    name = grad_fn.name().rsplit("::", 1)[-1]
    return re.sub(r"(Backward)s?\d*$", r"\1", name)


def normalize_error(message):
    """Compare error texts with PyTorch's: nbgrad says nbgrad.X where PyTorch
    says torch.X, names nodes without torch's namespace, and replaces
    PyTorch's trailing hint by its own."""
    message = message.replace("torch::autograd::", "").replace("torch.", "nbgrad.")
    cut = message.find(" instead.")
    return message[:cut + len(" instead.")] if cut >= 0 else message


def torch_error(fn):
    """The exception PyTorch raises for ``fn()``; None when it raises nothing."""
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - we compare whatever torch raises
        return exc
    return None


def examples(n):
    """``@settings`` for a test that runs ``n`` examples under the default
    profile (15 per test) and proportionally more under a larger one."""
    from hypothesis import settings

    return settings(max_examples=max(1, n * settings().max_examples // 15))


def raised(fn, lib):
    try:
        fn(lib)
    except Exception as error:  # noqa: BLE001 - the error itself is under test
        return error
    raise AssertionError(f"{lib.__name__} raised nothing")


_SET_OF_STRINGS = re.compile(r"\{'[^'{}]*'(?:, '[^'{}]*')*\}")


def _sets_sorted(message):
    """``message`` with each printed set of strings in sorted order: a set's order
    depends on the hash seed of the process that compiled the code (torch's set
    literals are frozen into its .pyc files), so it is not part of the text."""
    return _SET_OF_STRINGS.sub(lambda m: "{" + ", ".join(sorted(m[0][1:-1].split(", "))) + "}",
                               message)


def assert_same_error(fn, exact=True):
    ours, theirs = raised(fn, nbgrad), raised(fn, torch)
    assert isinstance(ours, type(theirs)), (type(ours), type(theirs), ours)
    if exact:
        want = _sets_sorted(str(theirs).replace("torch.", "nbgrad."))
        assert _sets_sorted(str(ours)) == want, (str(ours), str(theirs))


# -- one test body on every device ---------------------------------------------
def lib_of(t):
    """The library a tensor belongs to, for test code shared by nbgrad and torch."""
    return torch if isinstance(t, torch.Tensor) else nbgrad


def on_device(lib, device):
    """Keyword arguments that put a new tensor on ``device`` in nbgrad; torch's
    (the reference) stay on the CPU."""
    return {"device": device} if lib is nbgrad else {}


def values(shape, seed=0, low=-2.0, high=2.0):
    """Fixed (derandomized) float64 values in ``[low, high)``."""
    return np.random.default_rng(seed).uniform(low, high, size=shape)


def leaf(lib, array, dtype, device="cpu", requires_grad=False):
    """A leaf tensor of ``array``'s values in nbgrad (on ``device``) or torch."""
    if lib is torch:
        return torch.tensor(array, dtype=to_torch_dtype(dtype), requires_grad=requires_grad)
    return nbgrad.tensor(array, dtype=dtype, device=device, requires_grad=requires_grad)


def run_like_torch(fn, *arrays, device, dtype=nbgrad.float32):
    """Run ``fn`` on leaves (requiring grad) made from ``arrays``, in nbgrad
    on ``device`` and in torch; backward a fixed upstream gradient when the
    result requires grad; compare the results and the leaves' gradients
    (which must stay on the device). ``fn`` takes the leaves and spells any
    library function as ``lib_of(leaf).name``. Returns the (nbgrad, torch)
    results."""
    results = {}
    for lib in (nbgrad, torch):
        leaves = [leaf(lib, a, dtype, device, requires_grad=True) for a in arrays]
        out = fn(*leaves)
        if out.requires_grad:
            out_dtype = out.dtype if lib is nbgrad else to_nbgrad_dtype(out.dtype)
            out.backward(leaf(lib, values(tuple(out.shape), seed=1), out_dtype, device))
        results[lib] = out, leaves
    (out, leaves), (want, want_leaves) = results[nbgrad], results[torch]
    assert out.device.type == nbgrad.device(device).type
    assert_same_tensor(out, want)
    for k, (ours, theirs) in enumerate(zip(leaves, want_leaves)):
        assert (ours.grad is None) == (theirs.grad is None), f"input {k}: {ours.grad}, {theirs.grad}"
        if ours.grad is not None:
            assert ours.grad.device == ours.device  # gradients stay on the device
            assert_same_tensor(ours.grad, theirs.grad)
    return out, want


def raises_like_torch(fn, *arrays, device, requires_grad=False, exact=True):
    """``fn`` on float32 leaves of ``arrays`` (nbgrad on ``device``, and
    torch) raises torch's exception type with torch's message (``exact``);
    returns nbgrad's."""
    def call(lib):
        return fn(*[leaf(lib, a, nbgrad.float32, device, requires_grad) for a in arrays])
    ours, theirs = raised(call, nbgrad), raised(call, torch)
    assert isinstance(ours, type(theirs)), (type(ours), type(theirs), ours)
    if exact:
        assert normalize_error(str(ours)) == normalize_error(str(theirs)), (str(ours), str(theirs))
    return ours


def deeply_nested(n):
    """``1.0`` inside ``n`` nested lists (for recursion-depth cases)."""
    data = 1.0
    for _ in range(n):
        data = [data]
    return data


def second_derivatives_like_torch(fn, *arrays, device="cpu", seed=7):
    """Differentiate ``fn`` twice, in nbgrad on ``device`` and in torch, and
    compare: ``fn`` runs on float64 leaves made from ``arrays`` (requiring
    grad; spell library functions with ``lib_of``); its first derivatives
    against a random upstream gradient (itself a leaf requiring grad) are
    taken with ``create_graph=True``, then the gradients of a random weighted
    sum of them with respect to the leaves and the upstream gradient. A
    gradient that torch's graph does not reach may be None or zeros here.
    Returns nbgrad's (firsts, seconds)."""
    results = {}
    for lib in (nbgrad, torch):
        rng = np.random.default_rng(seed)
        leaves = [leaf(lib, a, nbgrad.float64, device, requires_grad=True) for a in arrays]
        out = fn(*leaves)
        upstream = leaf(lib, rng.standard_normal(tuple(out.shape)), nbgrad.float64, device, True)
        firsts = lib.autograd.grad(out, leaves, upstream, create_graph=True, allow_unused=True)
        weighted = sum((g * leaf(lib, rng.standard_normal(tuple(g.shape)), nbgrad.float64,
                                 device)).sum() for g in firsts if g is not None)
        seconds = lib.autograd.grad(weighted, leaves + [upstream], allow_unused=True)
        results[lib] = firsts, seconds
    for k, (mine, want) in enumerate(zip(*(sum(results[lib], ()) for lib in (nbgrad, torch)))):
        if want is not None and want._is_zerotensor():  # PyTorch's symbolic zeros
            want = torch.zeros(want.shape, dtype=want.dtype)
        if want is None:  # torch's graph does not reach it: ours may give zeros or nothing
            assert mine is None or not as_numpy(mine).any(), k
        else:
            assert mine is not None, f"gradient {k} missing; torch has one"
            assert mine.device.type == nbgrad.device(device).type, k
            assert_close(mine, want)
    return results[nbgrad]
