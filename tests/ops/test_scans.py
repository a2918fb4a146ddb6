"""Cumulative scans (nbgrad/ops/scans.py) against PyTorch: values, dtypes,
result types, node names, gradients (zeros in cumprod included), finite
differences and second derivatives, errors; a few cases on every device."""
import numpy as np
import pytest
import torch

import nbgrad
from helpers import assert_close, assert_same_error, dtype_name, node_name
from nbgrad.autograd import gradcheck, gradgradcheck

TESTED_OPS = {"cumsum", "cumprod", "cummax", "cummin", "cumsum_", "cumprod_"}

RNG = np.random.default_rng(16)
DATA = {
    "rand": RNG.standard_normal((3, 5)),
    "rand3": RNG.standard_normal((2, 3, 4)),
    "zeros": np.array([[1.5, 0.0, 2.0, -1.0, 0.5], [0.0, 3.0, 0.0, 2.0, 1.0],
                       [0.5, -2.0, 1.5, 3.0, 0.0]]),
    "ties": np.array([[1.0, 5.0, 5.0, -2.0, 5.0], [np.nan, 0.0, 5.0, 5.0, 1.0],
                      [-3.0, -3.0, np.nan, -3.0, 7.0]]),
    "int": np.array([[3, 0, 2, 5], [1, 1, 0, 7]]),
    "bool": np.array([True, False, True, True]),
    "scalar": np.array(1.5),
    "long": RNG.uniform(0.9, 1.1, 300),
}
DTYPES = {"int": "int64", "bool": "bool"}


def outputs(result):
    return list(result) if isinstance(result, tuple) else [result]


def make(lib, key, dtype=None, device="cpu"):
    dtype = getattr(lib, dtype or DTYPES.get(key, "float64"))
    extra = {"device": device} if lib is nbgrad else {}
    return lib.tensor(DATA[key], dtype=dtype,
                      requires_grad=dtype_name(dtype).startswith("float"), **extra)


def compare(fn, key, dtype=None, device="cpu"):
    results = []
    for lib in (nbgrad, torch):
        x = make(lib, key, dtype, device if lib is nbgrad else "cpu")
        result = fn(lib, x)
        first = outputs(result)[0]
        if first.requires_grad:
            w = np.linspace(-1.0, 2.0, first.numel()).reshape(tuple(first.shape))
            extra = {"device": device} if lib is nbgrad else {}
            (first * lib.tensor(w, dtype=first.dtype, **extra)).sum().backward()
        results.append((result, x))
    (ours, x), (theirs, tx) = results
    assert type(ours).__name__ == type(theirs).__name__
    for a, b in zip(outputs(ours), outputs(theirs), strict=True):
        assert dtype_name(a.dtype) == dtype_name(b.dtype)
        assert a.device.type == nbgrad.device(device).type
        assert_close(a, b)
        assert node_name(a.grad_fn) == node_name(b.grad_fn)
    assert (x.grad is None) == (tx.grad is None)
    if x.grad is not None:
        assert_close(x.grad, tx.grad)


CASES = [
    ("cumsum", lambda L, x: x.cumsum(1), "rand", True),
    ("cumsum-dim0", lambda L, x: L.cumsum(x, 0), "rand3", True),
    ("cumsum-neg", lambda L, x: x.cumsum(-2), "rand3", True),
    ("cumsum-dtype", lambda L, x: x.cumsum(1, dtype=L.float32), "rand", False),
    ("cumsum-int", lambda L, x: x.cumsum(1), "int", False),
    ("cumsum-int-dtype", lambda L, x: x.cumsum(0, dtype=L.float64), "int", False),
    ("cumsum-bool", lambda L, x: x.cumsum(0), "bool", False),
    ("cumsum-scalar", lambda L, x: x.cumsum(0), "scalar", True),
    ("cumsum-transposed", lambda L, x: x.t().cumsum(1), "rand", True),
    ("cumprod", lambda L, x: x.cumprod(1), "rand", True),
    ("cumprod-dim0", lambda L, x: L.cumprod(x, 0), "rand3", True),
    ("cumprod-zeros", lambda L, x: x.cumprod(1), "zeros", False),
    ("cumprod-zeros-dim0", lambda L, x: x.cumprod(0), "zeros", False),
    ("cumprod-int", lambda L, x: x.cumprod(1), "int", False),
    ("cumprod-long", lambda L, x: x.cumprod(0), "long", False),
    ("cumprod-scalar", lambda L, x: x.cumprod(0), "scalar", True),
    ("cummax", lambda L, x: x.cummax(1), "rand", True),
    ("cummax-ties-nan", lambda L, x: L.cummax(x, 1), "ties", False),
    ("cummax-dim0", lambda L, x: x.cummax(0), "ties", False),
    ("cummax-int", lambda L, x: x.cummax(1), "int", False),
    ("cummax-bool", lambda L, x: x.cummax(0), "bool", False),
    ("cummin", lambda L, x: x.cummin(-1), "rand3", True),
    ("cummin-ties-nan", lambda L, x: x.cummin(1), "ties", False),
    ("cummin-scalar", lambda L, x: x.cummin(0), "scalar", True),
]


@pytest.mark.parametrize("fn,key,check", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_like_torch(fn, key, check):
    compare(fn, key)


@pytest.mark.parametrize("fn,key", [c[1:3] for c in CASES if c[3]],
                         ids=[c[0] for c in CASES if c[3]])
def test_gradients_by_finite_differences(fn, key):
    x = make(nbgrad, key)

    def first(t):
        return outputs(fn(nbgrad, t))[0]
    assert gradcheck(first, (x,))
    assert gradgradcheck(first, (x,))


def test_cumprod_zeros_second_derivatives_like_torch():
    from helpers import second_derivatives_like_torch
    second_derivatives_like_torch(lambda t: t.cumprod(1), DATA["zeros"])
    second_derivatives_like_torch(lambda t: t.cumsum(0), DATA["rand"])


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cummax"])
def test_float32(name):
    fn, key = next(c[1:3] for c in CASES if c[0] == name)
    compare(fn, key, "float32")


def test_float32_accumulates_in_double():
    # PyTorch's CPU scans accumulate float32 in double: 1e8 + 1 - 1e8 is 1.
    x = [1e8, 1.0, -1e8]
    assert_close(nbgrad.tensor(x).cumsum(0), torch.tensor(x).cumsum(0))


def test_out():
    out = nbgrad.empty(0)
    assert nbgrad.cumsum(nbgrad.tensor([1.0, 2.0]), 0, out=out) is out
    assert out.tolist() == [1.0, 3.0]


ERRORS = [
    ("no-dim", lambda L: L.ones(3).cumsum()),
    ("dim-range", lambda L: L.ones(2, 3).cumprod(5)),
    ("cummax-no-dim", lambda L: L.ones(3).cummax()),
    ("cummin-dim-range", lambda L: L.ones(3).cummin(1)),
]


@pytest.mark.parametrize("fn", [e[1] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_errors_like_torch(fn):
    assert_same_error(fn)


@pytest.mark.parametrize("name", ["cumsum-dim0", "cumsum-transposed", "cumprod-zeros",
                                  "cummax-ties-nan", "cummin", "cumsum-int"])
def test_devices(name, device):
    fn, key = next(c[1:3] for c in CASES if c[0] == name)
    compare(fn, key, device=device)


def test_long_line_devices(device):
    # a line long enough for the CUDA backend's block-per-line scan
    x = np.random.default_rng(0).standard_normal((2, 700))
    t = nbgrad.tensor(x, device=device, requires_grad=True)
    y = t.cumsum(1)
    y.backward(nbgrad.ones_like(y))
    assert_close(y, np.cumsum(x, 1))
    assert_close(t.grad, np.cumsum(np.ones_like(x)[:, ::-1], 1)[:, ::-1].copy())


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cummax"])
def test_forward_mode_like_torch(name):
    from ops.test_statistics import forward_mode_like_torch
    fn = next(c[1] for c in CASES if c[0] == name)
    forward_mode_like_torch(lambda L, t: fn(L, t)[0] if name == "cummax" else fn(L, t),
                            DATA["rand"], RNG.standard_normal((3, 5)))


INPLACE = [
    ("cumsum_", lambda L, a: (a * 2).cumsum_(1)),
    ("cumprod_", lambda L, a: (a * 2).cumprod_(1)),
    ("cumprod_-zeros", lambda L, a: (a * 1).cumprod_(0)),
    ("cumsum_-view", lambda L, a: (a * 1)[:, 1:].cumsum_(0)),
]


@pytest.mark.parametrize("fn", [c[1] for c in INPLACE], ids=[c[0] for c in INPLACE])
def test_in_place_like_torch(fn):
    results = []
    for lib in (nbgrad, torch):
        a = make(lib, "zeros")
        out = fn(lib, a)
        out.sum().backward()
        results.append((out, a))
    (out, a), (want, wa) = results
    assert out._version == want._version
    assert node_name(out.grad_fn) == node_name(want.grad_fn)
    assert_close(out, want)
    assert_close(a.grad, wa.grad)


def test_in_place_devices(device):
    t = nbgrad.tensor(DATA["rand"], device=device, requires_grad=True)
    y = t * 1
    y.cumsum_(0)
    y.sum().backward()
    assert_close(y, np.cumsum(DATA["rand"], 0))
    assert_close(t.grad, np.repeat([[3.0], [2.0], [1.0]], 5, axis=1))  # summed from the end


IN_PLACE_ERRORS = [
    ("leaf", lambda L: L.ones(3, requires_grad=True).cumsum_(0)),
    ("dtype", lambda L: L.ones(3).cumsum_(0, dtype=L.float64)),
    ("int-dtype", lambda L: L.ones(3, dtype=L.int64).cumprod_(0, dtype=L.float32)),
    ("bool", lambda L: L.ones(3, dtype=L.bool).cumsum_(0)),
]


@pytest.mark.parametrize("fn", [e[1] for e in IN_PLACE_ERRORS], ids=[e[0] for e in IN_PLACE_ERRORS])
def test_in_place_errors_like_torch(fn):
    assert_same_error(fn)
