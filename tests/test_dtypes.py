"""Type promotion, checked against PyTorch for every pair of operands drawn
from {bool, int64, float32, float64} tensors, 0-d tensors and Python bool, int
and float, through the ops themselves (add, mul, div, comparisons, where,
maximum) and through ``nbgrad.dtypes`` directly."""
import itertools
import math
import operator
import pickle
import re

import numpy as np
import pytest
import torch

import nbgrad
from nbgrad import dtypes
from helpers import assert_same_tensor, cuda_only, dtype_name, to_torch_dtype

# the conversion methods (tests/ops/test_exports.py)
TESTED_OPS = {"int", "long", "half", "float", "double", "bool", "short", "char", "byte", "type_as"}

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
    assert dtypes.canonical(np.int32) is nbgrad.int32
    assert dtypes.canonical(np.uint8) is nbgrad.uint8
    assert dtypes.canonical(np.uint32) is nbgrad.int64  # (no uint32 in nbgrad)
    assert dtypes.canonical(np.float16) is nbgrad.float16
    assert dtypes.canonical(np.float64) is nbgrad.float64
    with pytest.raises(TypeError, match="nbgrad does not support arrays of dtype complex128"):
        dtypes.canonical(np.complex128)
    with pytest.raises(TypeError, match="nbgrad does not support arrays of dtype uint32"):
        dtypes.from_numpy_dtype(np.uint32)
    assert repr(nbgrad.float32) == "nbgrad.float32"
    assert nbgrad.float32.itemsize == 4 and nbgrad.float64.is_floating_point
    assert not nbgrad.int64.is_floating_point
    assert pickle.loads(pickle.dumps(nbgrad.float64)) is nbgrad.float64


# ------------------------------------------- every dtype (issue 15, item 8)
ALL_DTYPES = list(dtypes.ALL)
ALL_VALUES = {"bool": [True, False], "uint8": [3, 200], "int8": [3, -2], "int16": [300, -7],
              "int32": [70000, -5], "int64": [3, -2], "float16": [1.5, -0.25],
              "float32": [1.5, -0.25], "float64": [2.5, 0.75]}


def test_promote_types_every_pair_matches_torch():
    wrong = [(a, b) for a in ALL_DTYPES for b in ALL_DTYPES
             if dtype_name(dtypes.promote_types(a, b))
             != dtype_name(torch.promote_types(to_torch_dtype(a), to_torch_dtype(b)))]
    assert not wrong
    assert nbgrad.promote_types(nbgrad.uint8, nbgrad.int8) is nbgrad.int16
    with pytest.raises(TypeError, match="argument 'type2' must be nbgrad.dtype, not int"):
        nbgrad.promote_types(nbgrad.int8, 3)


def _every(lib, name, zero_d=False):
    values = ALL_VALUES[name]
    return lib.tensor(values[0] if zero_d else values, dtype=getattr(lib, name))


@pytest.mark.parametrize("op", ["add", "mul", "div", "lt", "maximum"])
def test_every_dtype_pair_through_the_ops_matches_torch(op):
    """Tensor with tensor (1-d and 0-d) and with Python numbers, for every pair
    of dtypes: the result's dtype and values (narrow integers wrap as PyTorch's)."""
    fn = {"add": operator.add, "mul": operator.mul, "div": operator.truediv, "lt": operator.lt,
          "maximum": lambda x, y: (torch if isinstance(x, torch.Tensor) else nbgrad).maximum(x, y)
          }[op]
    wrong = []
    for a in ALL_DTYPES:
        seconds = [(b.name, zero_d) for b in ALL_DTYPES for zero_d in (False, True)]
        if op != "maximum":
            seconds += [(number, None) for number in (True, 3, 2.5)]
        for b, zero_d in seconds:
            if op != "lt" and a is dtypes.bool_ and b in ("bool", True) and op in ("add", "mul"):
                pass  # bool + bool is bool in both
            x, tx = _every(nbgrad, a.name), _every(torch, a.name)
            y, ty = (b, b) if zero_d is None else (_every(nbgrad, b, zero_d),
                                                    _every(torch, b, zero_d))
            got, want = fn(x, y), fn(tx, ty)
            if dtype_name(got.dtype) != dtype_name(want.dtype):
                wrong.append(f"{a.name} {op} {b}{' 0-d' if zero_d else ''}: {got.dtype}, "
                             f"torch {want.dtype}")
                continue
            assert_same_tensor(got, want)
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("name", ["int8", "uint8", "int16", "int32"])
def test_narrow_integers_wrap_python_ints_as_torch(name):
    x, tx = _every(nbgrad, name), _every(torch, name)
    for expr in ("t + 1000", "t * 300", "t - 70000", "t // 7", "t % 5", "-t" if name != "uint8"
                 else "t + 255"):
        assert_same_tensor(eval(expr, {"t": x}), eval(expr, {"t": tx}))  # noqa: S307


def test_conversion_methods_match_torch():
    values = [1.5, -2.75, 0.0, 3.25, 100.0]
    x, tx = nbgrad.tensor(values), torch.tensor(values)
    for name in ("int", "long", "half", "float", "double", "bool", "short", "char"):
        assert_same_tensor(getattr(x, name)(), getattr(tx, name)())
    assert_same_tensor(x.abs().byte(), tx.abs().byte())
    for d in ALL_DTYPES:
        assert_same_tensor(x.abs().to(d), tx.abs().to(to_torch_dtype(d)))
        assert_same_tensor(x.abs().type_as(nbgrad.zeros(1, dtype=d)),
                           tx.abs().type_as(torch.zeros(1, dtype=to_torch_dtype(d))))
    assert x.float() is x and x.type_as(x) is x  # no copy where nothing changes, as PyTorch
    with pytest.raises(TypeError, match=r"type_as\(\): argument 'other' \(position 1\) must be "
                                        "Tensor, not int"):
        x.type_as(3)
    assert nbgrad.half is nbgrad.float16 and nbgrad.short is nbgrad.int16
    assert nbgrad.int is nbgrad.int32 and nbgrad.long is nbgrad.int64
    assert x.half().type() == "nbgrad.HalfTensor" and x.byte().type() == "nbgrad.ByteTensor"
    assert x.type("nbgrad.CharTensor").dtype is nbgrad.int8
    assert [nbgrad.tensor(np.zeros(1, d.numpy)).dtype for d in ALL_DTYPES] == ALL_DTYPES
    for d in ALL_DTYPES:
        assert x.to(d).element_size() == d.itemsize == to_torch_dtype(d).itemsize


def test_float16_computes_in_float32_and_rounds_once():
    x = nbgrad.tensor([0.1, 1.7, -3.3, 11.0, 1e-3], dtype=nbgrad.float16)
    tx = torch.tensor([0.1, 1.7, -3.3, 11.0, 1e-3], dtype=torch.float16)
    for name in ("exp", "sigmoid", "tanh", "sin"):
        got = getattr(x, name)().numpy()
        rounded_once = getattr(np, name, None)
        if rounded_once is not None:  # float32 math, one rounding
            np.testing.assert_array_equal(got, rounded_once(x.numpy().astype(np.float32))
                                          .astype(np.float16))
        assert_same_tensor(getattr(x, name)(), getattr(tx, name)())
    assert_same_tensor(x * 3.1 + 1, tx * 3.1 + 1)
    assert_same_tensor(x.sum(), tx.sum())
    assert_same_tensor(x.reshape(5, 1) @ x.reshape(1, 5), tx.reshape(5, 1) @ tx.reshape(1, 5))


def test_float16_gradients_match_torch():
    a = nbgrad.tensor([[0.5, -1.25, 2.0], [1.0, 0.25, -0.75]], dtype=nbgrad.float16,
                      requires_grad=True)
    b = nbgrad.tensor([1.5, -0.5, 0.75], requires_grad=True)  # float32: promoted
    ta = torch.tensor(a.detach().numpy(), requires_grad=True)
    tb = torch.tensor(b.detach().numpy(), requires_grad=True)
    for lib, x, y in ((nbgrad, a, b), (torch, ta, tb)):
        ((x.sigmoid() * x).exp().sum() + (x * y).tanh().sum()).backward()
    assert_same_tensor(a.grad, ta.grad)
    assert_same_tensor(b.grad, tb.grad)
    x = nbgrad.tensor([0.5, 2.0], dtype=nbgrad.float16, requires_grad=True)
    y = x * 2
    y.mul_(x)  # in place, taped
    y.sum().backward()
    assert x.grad.dtype is nbgrad.float16 and x.grad.tolist() == [2.0, 8.0]


def test_set_default_dtype_like_torch():
    t = nbgrad.tensor([1, 2])
    assert (t * 1.5).dtype is nbgrad.float32  # (a plan typed with float32 exists now)
    try:
        for d in (nbgrad.float64, nbgrad.float16, nbgrad.float32):
            nbgrad.set_default_dtype(d)
            torch.set_default_dtype(to_torch_dtype(d))
            assert nbgrad.get_default_dtype() is d
            assert_same_tensor(t * 1.5, torch.tensor([1, 2]) * 1.5)
            assert_same_tensor(nbgrad.tensor([1.5, 2.0]), torch.tensor([1.5, 2.0]))
            assert nbgrad.zeros(2).dtype is nbgrad.arange(2.0).dtype is nbgrad.rand(1).dtype is d
            assert repr(nbgrad.tensor([1.5])) == repr(torch.tensor([1.5]))
    finally:
        nbgrad.set_default_dtype(nbgrad.float32)
        torch.set_default_dtype(torch.float32)
    for bad in (nbgrad.int32, "x"):
        with pytest.raises(TypeError) as want:
            torch.set_default_dtype(torch.int32 if bad is nbgrad.int32 else bad)
        with pytest.raises(TypeError, match=re.escape(str(want.value))):
            nbgrad.set_default_dtype(bad)
    assert nbgrad.get_default_dtype() is nbgrad.float32


def test_finfo_and_iinfo_match_torch():
    for d in ALL_DTYPES:
        td = to_torch_dtype(d)
        if d.is_floating_point:
            got, want = nbgrad.finfo(d), torch.finfo(td)
            for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution",
                          "dtype"):
                assert getattr(got, field) == getattr(want, field), (d, field)
            assert repr(got) == repr(want)
        elif d is not dtypes.bool_:
            got, want = nbgrad.iinfo(d), torch.iinfo(td)
            assert (got.bits, got.min, got.max, got.dtype) == (want.bits, want.min, want.max,
                                                               want.dtype)
            assert repr(got) == repr(want)
    assert repr(nbgrad.finfo()) == repr(torch.finfo())
    for fn, arg in (("finfo", "int32"), ("iinfo", "float32"), ("iinfo", "bool")):
        with pytest.raises(TypeError) as want:
            getattr(torch, fn)(getattr(torch, arg))
        with pytest.raises(TypeError) as got:
            getattr(nbgrad, fn)(getattr(nbgrad, arg))
        assert str(got.value) == str(want.value).replace("torch", "nbgrad")


@cuda_only
def test_narrow_dtypes_on_cuda(device):
    """float16 (computed in float32, rounded once) and a narrow integer on the
    device give the CPU's values; gradients too."""
    def run(where):
        h = nbgrad.tensor([0.5, -1.25, 2.0], dtype=nbgrad.float16, device=where,
                          requires_grad=True)
        y = (h * 3.1 + 1).sigmoid() * h
        y.sum().backward()
        i = nbgrad.tensor([100, -2, 3], dtype=nbgrad.int8, device=where)
        return y.detach().cpu(), h.grad.cpu(), (i + 1000).cpu(), (h.detach() > 0).cpu()
    for got, want in zip(run("cuda"), run("cpu")):
        assert got.dtype is want.dtype
        np.testing.assert_array_equal(got.numpy(), want.numpy())


NARROW_EDGES = [
    lambda L: L.tensor([300], dtype=L.int8),
    lambda L: L.tensor([-1], dtype=L.uint8),
    lambda L: L.tensor(1e10, dtype=L.int32),
    lambda L: L.tensor([1e5], dtype=L.float16),
    lambda L: L.full((2,), 300, dtype=L.int8),
    lambda L: L.zeros(2, dtype=L.int8).fill_(300),
    lambda L: L.zeros(2, dtype=L.uint8).fill_(-1),
    lambda L: L.zeros(2, dtype=L.int16).clamp(0, 70000),
    lambda L: L.arange(0, 300, 100, dtype=L.uint8),
    lambda L: L.ones(2, 3, dtype=L.float16).mean(1),
    lambda L: L.ones(2, dtype=L.int8).sum(),
    lambda L: L.ones(3, dtype=L.int8)[L.tensor([True, False, True])],
    lambda L: L.cat([L.ones(2, dtype=L.int8), L.ones(2, dtype=L.int32)]),
    lambda L: L.where(L.tensor([True, False]), L.ones(2, dtype=L.int8), L.zeros(2, dtype=L.uint8)),
    lambda L: L.ones(2, 2, dtype=L.float16) @ L.ones(2, 2, dtype=L.float16),
    lambda L: L.ones(2, 2, dtype=L.int32) @ L.ones(2, 2, dtype=L.int32),
    lambda L: L.softmax(L.tensor([1.0, 2.0], dtype=L.float16), 0),
    lambda L: L.log_softmax(L.tensor([1.0, 2.0, 0.5], dtype=L.float16), 0),
    lambda L: L.tensor([7, -7], dtype=L.int8) // 2,
    lambda L: L.tensor([3], dtype=L.uint8) - 5,
]


@pytest.mark.parametrize("make", NARROW_EDGES, ids=range(len(NARROW_EDGES)))
def test_narrow_dtype_edges_like_torch(make):
    try:
        want = make(torch)
    except RuntimeError as error:
        with pytest.raises(RuntimeError, match=re.escape(str(error))):
            make(nbgrad)
        return
    assert_same_tensor(make(nbgrad), want)


def test_can_cast_matches_torch():
    for a in ALL_DTYPES:
        for b in ALL_DTYPES:
            assert nbgrad.can_cast(a, b) == torch.can_cast(to_torch_dtype(a), to_torch_dtype(b))
