"""Shared test helpers: moving values between nbgrad, NumPy and PyTorch, and
comparing results with a tolerance that fits the dtype."""
import re

import numpy as np
import torch

import nbgrad

TORCH_DTYPES = {
    nbgrad.bool: torch.bool,
    nbgrad.int64: torch.int64,
    nbgrad.float32: torch.float32,
    nbgrad.float64: torch.float64,
}
NBGRAD_DTYPES = {v: k for k, v in TORCH_DTYPES.items()}

# (rtol, atol) for values computed in a dtype; float32 allows a few ulp of libm
# differences and of summation order when broadcasting is undone.
TOLERANCES = {
    nbgrad.float32: (2e-5, 1e-6),
    nbgrad.float64: (1e-11, 1e-13),
}


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
        return np.array(value.detach().numpy(), copy=True)
    if isinstance(value, torch.Tensor):
        return value.detach().numpy().copy()
    return np.asarray(value)


def tolerance(dtype):
    return TOLERANCES.get(dtype, (0, 0))


def assert_close(actual, expected, dtype=None, rtol=None, atol=None):
    """Values (NaN-aware, shape-exact) within the tolerance of ``dtype``
    (the dtype of ``actual`` when not given); exact for bool and int64."""
    if dtype is None and isinstance(actual, nbgrad.Tensor):
        dtype = actual.dtype
    default_rtol, default_atol = tolerance(dtype)
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
    says torch.X, and nbgrad replaces PyTorch's trailing hint by its own."""
    message = message.replace("torch.", "nbgrad.")
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
    profile (25 per test) and proportionally more under a larger one."""
    from hypothesis import settings

    return settings(max_examples=max(1, n * settings().max_examples // 25))


def raised(fn, lib):
    try:
        fn(lib)
    except Exception as error:  # noqa: BLE001 - the error itself is under test
        return error
    raise AssertionError(f"{lib.__name__} raised nothing")


def assert_same_error(fn, exact=True):
    ours, theirs = raised(fn, nbgrad), raised(fn, torch)
    assert isinstance(ours, type(theirs)), (type(ours), type(theirs), ours)
    if exact:
        assert str(ours) == str(theirs).replace("torch.", "nbgrad."), (str(ours), str(theirs))
