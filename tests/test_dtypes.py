"""Type promotion, checked against PyTorch for every pair of operands drawn
from {bool, int64, float32, float64} tensors, 0-d tensors and Python bool, int
and float, through the ops themselves (add, mul, div, comparisons, where,
maximum) and through ``nbgrad.dtypes`` directly."""
import itertools
import math
import operator
import pickle

import numpy as np
import pytest
import torch

import nbgrad
from nbgrad import dtypes
from helpers import assert_same_tensor, dtype_name, to_torch_dtype

DTYPES = ("bool", "int64", "float32", "float64")
VALUES = {"bool": [True, False], "int64": [3, -2], "float32": [1.5, -0.25], "float64": [2.5, 0.75]}
SCALARS = {"True": True, "3": 3, "2.5": 2.5}


def _operand(lib, kind):
    """``kind``: "float32" (a 1-d tensor), "0-d float32", or a Python number's label."""
    if kind in SCALARS:
        return SCALARS[kind]
    zero_d = kind.startswith("0-d ")
    name = kind[4:] if zero_d else kind
    values = VALUES[name][0] if zero_d else VALUES[name]
    return lib.tensor(values, dtype=getattr(lib, name))


KINDS = [*DTYPES, *(f"0-d {d}" for d in DTYPES), *SCALARS]
PAIRS = [(a, b) for a, b in itertools.product(KINDS, KINDS) if a not in SCALARS or b not in SCALARS]

OPS = {
    "add": operator.add,
    "mul": operator.mul,
    "div": operator.truediv,
    "eq": operator.eq,
    "lt": operator.lt,
    "ge": operator.ge,
}


@pytest.mark.parametrize("op", sorted(OPS))
def test_binary_result_types_match_torch(op):
    fn = OPS[op]
    mismatches = []
    for a, b in PAIRS:
        want = fn(_operand(torch, a), _operand(torch, b))
        got = fn(_operand(nbgrad, a), _operand(nbgrad, b))
        if dtype_name(got.dtype) != dtype_name(want.dtype):
            mismatches.append(f"{a} {op} {b}: {got.dtype} but torch gives {want.dtype}")
            continue
        assert_same_tensor(got, want)
    assert not mismatches, "\n".join(mismatches)


def test_where_and_maximum_result_types_match_torch():
    mismatches = []
    for a, b in PAIRS:
        for name in ("where", "maximum"):
            if name == "maximum" and (a in SCALARS or b in SCALARS):
                continue  # torch.maximum takes tensors only
            results = []
            for lib in (nbgrad, torch):
                x, y = _operand(lib, a), _operand(lib, b)
                if name == "where":
                    results.append(lib.where(lib.tensor([True, False]), x, y))
                else:
                    results.append(lib.maximum(x, y))
            got, want = results
            if dtype_name(got.dtype) != dtype_name(want.dtype):
                mismatches.append(f"{name}({a}, {b}): {got.dtype} but torch gives {want.dtype}")
                continue
            assert_same_tensor(got, want)
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.parametrize("name", ["neg", "abs", "relu", "exp", "log", "sqrt", "sin", "cos", "tanh",
                                  "sigmoid"])
@pytest.mark.parametrize("dtype", ["int64", "float32", "float64"])
def test_unary_result_types_match_torch(name, dtype):
    """Integer inputs: neg/abs/relu keep int64, the others give the default float."""
    got = getattr(nbgrad, name)(nbgrad.tensor([1, 4], dtype=getattr(nbgrad, dtype)))
    want = getattr(torch, name)(torch.tensor([1, 4], dtype=getattr(torch, dtype)))
    assert_same_tensor(got, want)


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid"])
def test_unary_float_rows_promote_bool_like_torch(name):
    got = getattr(nbgrad, name)(nbgrad.tensor([True, False]))
    want = getattr(torch, name)(torch.tensor([True, False]))
    assert_same_tensor(got, want)


@pytest.mark.parametrize("expr", ["-t", "t - t", "t - True", "t ** t", "abs(t)", "t.relu()"])
def test_bool_arithmetic_torch_refuses_is_refused(expr):
    with pytest.raises(Exception) as want:  # noqa: PT011 - torch's own type
        eval(expr, {"t": torch.tensor([True, False])})  # noqa: S307
    with pytest.raises(type(want.value)) as info:
        eval(expr, {"t": nbgrad.tensor([True, False])})  # noqa: S307
    assert str(info.value) == str(want.value)


def test_the_documented_corner_cases():
    t = nbgrad.tensor([1, 2])
    assert (t / 2).dtype is nbgrad.float32                        # int64 tensor / int
    assert (t / nbgrad.tensor(2)).dtype is nbgrad.float32         # int64 tensor / 0-d int64
    assert (t * 2.5).dtype is nbgrad.float32                      # int64 tensor * float
    f = nbgrad.tensor([1.0, 2.0])
    assert (f * 2.5).dtype is nbgrad.float32                      # float32 tensor * Python float
    assert (f + nbgrad.tensor(1.0, dtype=nbgrad.float64)).dtype is nbgrad.float32  # 0-d float64
    assert (f + nbgrad.tensor([1.0], dtype=nbgrad.float64)).dtype is nbgrad.float64
    assert (nbgrad.tensor(1.0) + nbgrad.tensor(1.0, dtype=nbgrad.float64)).dtype is nbgrad.float64
    assert (nbgrad.tensor([True]) + True).dtype is nbgrad.bool
    assert (nbgrad.tensor([True]) + 1).dtype is nbgrad.int64
    assert (nbgrad.tensor(1) + 1.5).dtype is nbgrad.float32       # 0-d int64 + Python float
    assert (nbgrad.tensor([1]) + nbgrad.tensor(1.5, dtype=nbgrad.float64)).dtype is nbgrad.float64


def test_gradient_takes_the_dtype_of_its_input():
    """Promotion is undone on the way back: each input's grad has its own dtype."""
    a = nbgrad.tensor([1.0, 2.0], requires_grad=True)
    b = nbgrad.tensor(3.0, dtype=nbgrad.float64, requires_grad=True)
    c = nbgrad.tensor([0.5, 0.25], dtype=nbgrad.float64, requires_grad=True)
    (a * b * c).sum().backward()
    ta = torch.tensor([1.0, 2.0], requires_grad=True)
    tb = torch.tensor(3.0, dtype=torch.float64, requires_grad=True)
    tc = torch.tensor([0.5, 0.25], dtype=torch.float64, requires_grad=True)
    (ta * tb * tc).sum().backward()
    for got, want in ((a.grad, ta.grad), (b.grad, tb.grad), (c.grad, tc.grad)):
        assert_same_tensor(got, want)


TENSOR_DTYPES = [dtypes.bool_, dtypes.int64, dtypes.float32, dtypes.float64]


@pytest.mark.parametrize("a", TENSOR_DTYPES, ids=dtype_name)
@pytest.mark.parametrize("b", TENSOR_DTYPES, ids=dtype_name)
def test_promote_types_matches_torch(a, b):
    want = torch.promote_types(to_torch_dtype(a), to_torch_dtype(b))
    assert dtype_name(dtypes.promote_types(a, b)) == dtype_name(want)


def test_result_type_matches_torch_for_every_pair():
    for a, b in PAIRS:
        first, second = (b, a) if a in SCALARS else (a, b)  # torch wants the tensor first
        want = torch.result_type(_operand(torch, first), _operand(torch, second))
        got = dtypes.result_type([_operand(nbgrad, a), _operand(nbgrad, b)])
        assert dtype_name(got) == dtype_name(want), (a, b)


def test_scalar_dtypes():
    assert dtypes.scalar_dtype(True) is dtypes.bool_
    assert dtypes.scalar_dtype(np.bool_(True)) is dtypes.bool_
    assert dtypes.scalar_dtype(3) is dtypes.int64
    assert dtypes.scalar_dtype(np.int32(3)) is dtypes.int64
    assert dtypes.scalar_dtype(2.5) is dtypes.float32
    assert dtypes.scalar_dtype(math.inf) is dtypes.float32


def test_dtype_conversions():
    assert torch.zeros(1, dtype=float).dtype is torch.float64  # Python's float is a double
    assert dtypes.to_dtype(float) is nbgrad.float64
    assert nbgrad.zeros(1, dtype=float).dtype is nbgrad.float64
    assert dtypes.to_dtype(int) is nbgrad.int64
    assert dtypes.to_dtype(bool) is nbgrad.bool
    assert dtypes.to_dtype(np.float64) is nbgrad.float64
    assert dtypes.to_dtype(None) is None
    assert dtypes.canonical(np.int32) is nbgrad.int64
    assert dtypes.canonical(np.uint8) is nbgrad.int64
    assert dtypes.canonical(np.float16) is nbgrad.float32
    assert dtypes.canonical(np.float64) is nbgrad.float64
    with pytest.raises(TypeError, match="nbgrad does not support arrays of dtype complex128"):
        dtypes.canonical(np.complex128)
    with pytest.raises(TypeError, match="nbgrad does not support arrays of dtype int32"):
        dtypes.from_numpy_dtype(np.int32)
    assert repr(nbgrad.float32) == "nbgrad.float32"
    assert nbgrad.float32.itemsize == 4 and nbgrad.float64.is_floating_point
    assert not nbgrad.int64.is_floating_point
    assert pickle.loads(pickle.dumps(nbgrad.float64)) is nbgrad.float64
