"""The straight-line path (``ops/straight_line.py`` and the recipes'
straight-line backward) against the general one (``elementwise.apply`` and
``_general_backward``), row by row: same values, same dtype, same graph, same
saved tensors, same gradients, bit for bit, for every set of inputs that need
a gradient. And it is taken where it should be, and left where it should not.
"""
import contextlib
import importlib
import re

import numpy as np
import pytest

import torch

import nbgrad
from nbgrad.backends.cpu import elementwise as cpu_elementwise
from nbgrad.ops import straight_line
from helpers import node_name

elementwise = importlib.import_module("nbgrad.ops.elementwise")  # the module, not the function
ROWS = [row for row in nbgrad.ROWS if row.method and straight_line.supported(row)]
N = 7  # elements; small: the straight-line path's domain


def _values(row, dtype, seed, shape):
    rng = np.random.default_rng(seed)
    low, high = row.domain
    if dtype is nbgrad.bool:
        return [rng.random(shape) < 0.5 for _ in row.inputs]
    if dtype is nbgrad.int64:
        return [rng.integers(1, 4, shape) for _ in row.inputs]
    return [rng.uniform(low, high, shape) for _ in row.inputs]


def _tensors(row, dtype, mask, seed=0, shape=(N,)):
    return [nbgrad.tensor(v, dtype=dtype, requires_grad=bool(mask >> k & 1))
            for k, v in enumerate(_values(row, dtype, seed, shape))]


def _call_method(row, args):
    return getattr(args[0], row.name)(*args[1:])


def _no_general_path(monkeypatch, method):
    """Make the general path raise inside ``method`` (the straight-line
    function's own ``apply``): a call that still works never took it."""
    def general(*_):
        raise AssertionError("took the general path")
    monkeypatch.setitem(method.__globals__, "apply", general)


def _grad_masks(row):
    masks = [0]
    for mask in range(1, 1 << len(row.inputs)):
        if all(k in row.differentiable for k in range(len(row.inputs)) if mask >> k & 1):
            masks.append(mask)
    return masks


# Shapes the straight-line path takes: 1 to MAX_NDIM dimensions (here 1 to 3).
SHAPES = [(N,), (3, 4), (2, 1, 3)]
CASES = [(row, dtype, mask, shape) for row in ROWS
         for dtype in (nbgrad.float32, nbgrad.float64)
         for mask in _grad_masks(row)
         for shape in (SHAPES if dtype is nbgrad.float32 else SHAPES[:1])]


@pytest.mark.parametrize("row,dtype,mask,shape", CASES,
                         ids=[f"{r.name}-{d}-{m}-{len(sh)}d" for r, d, m, sh in CASES])
def test_straight_line_path_matches_the_general_path(monkeypatch, row, dtype, mask, shape):
    fast_args = _tensors(row, dtype, mask, shape=shape)
    general_args = _tensors(row, dtype, mask, shape=shape)
    refused = _refusal(lambda: elementwise.apply(row, tuple(general_args)))
    if refused:  # a dtype the row refuses (bitwise ops on floats): the same error both ways
        assert _refusal(lambda: _call_method(row, fast_args)) == refused
        return
    general_args = _tensors(row, dtype, mask, shape=shape)
    _no_general_path(monkeypatch, getattr(nbgrad.Tensor, row.name))
    fast = _call_method(row, fast_args)
    monkeypatch.undo()
    general = elementwise.apply(row, tuple(general_args))
    assert fast.dtype is general.dtype
    np.testing.assert_array_equal(fast.detach().numpy(), general.detach().numpy())
    assert node_name(fast.grad_fn) == node_name(general.grad_fn)
    if not mask:
        assert fast.grad_fn is None and not fast.requires_grad
        return
    assert [node_name(n) for n, _ in fast.grad_fn.next_functions] == \
        [node_name(n) for n, _ in general.grad_fn.next_functions]
    assert [s.shape for s in fast.grad_fn.saved] == [s.shape for s in general.grad_fn.saved]
    upstream = nbgrad.tensor(np.random.default_rng(1).standard_normal(shape), dtype=dtype)
    fast.backward(upstream)
    general.backward(upstream)
    for a, b in zip(fast_args, general_args):
        assert (a.grad is None) == (b.grad is None)
        if a.grad is not None:
            np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())
    with pytest.raises(RuntimeError, match="backward through the graph a second time") \
            if fast.grad_fn.saved else contextlib.nullcontext():
        fast.backward(upstream)


DIFFERENTIABLE = [row for row in ROWS if row.differentiable]


@pytest.mark.parametrize("row", DIFFERENTIABLE, ids=[r.name for r in DIFFERENTIABLE])
def test_straight_line_backward_matches_the_general_backward(row):
    mask = sum(1 << k for k in row.differentiable)
    args = _tensors(row, nbgrad.float64, mask, seed=2)
    node = _call_method(row, args).grad_fn
    grad = np.random.default_rng(3).standard_normal(N)
    straight = type(node).backward(node, grad)
    assert type(node).backward is not elementwise._general_backward  # made straight-line
    general = elementwise._general_backward(node, grad)
    assert len(straight) == len(general)
    for a, b in zip(straight, general):
        if b is None or a is None:
            assert a is b
        else:
            np.testing.assert_array_equal(a, b)


BINARY = [row for row in ROWS if len(row.inputs) == 2]
NUMBER_CASES = [(row, dtype, number, first) for row in BINARY if row.tensors is None
                for dtype in (nbgrad.float32, nbgrad.float64, nbgrad.int64)
                for number in (2, 0.5) for first in (False, True)]
TENSORS_ONLY = [row for row in BINARY if row.tensors is not None]  # maximum, minimum


@pytest.mark.parametrize("row", TENSORS_ONLY, ids=[r.name for r in TENSORS_ONLY])
@pytest.mark.parametrize("number", [2, 0.5, True])
def test_a_python_number_is_refused_where_torch_takes_tensors_only(row, number, device):
    """``t.maximum(2.0)``, ``maximum(t, 2.0)`` and ``maximum(2.0, t)``: PyTorch's
    TypeError (a method counts positions after self), on every path."""
    calls = {
        "method": lambda L, t: getattr(t, row.name)(number),
        "function": lambda L, t: getattr(L, row.name)(t, number),
        "function, number first": lambda L, t: getattr(L, row.name)(number, t),
    }
    for label, call in calls.items():
        messages = []
        for L in (nbgrad, torch):
            with pytest.raises(TypeError) as info:
                call(L, L.ones(3, device=device if L is nbgrad else "cpu"))
            messages.append(str(info.value))
        with pytest.raises(TypeError) as general:
            elementwise.apply(row, (number, nbgrad.ones(3)) if "first" in label
                              else (nbgrad.ones(3), number))
        assert messages[0] == messages[1], label
        if label != "method":
            assert str(general.value) == messages[0]


@pytest.mark.parametrize("row,dtype,number,first", NUMBER_CASES,
                         ids=[f"{r.name}-{d}-{n}-{'rev' if f else 'fwd'}"
                              for r, d, n, f in NUMBER_CASES])
def test_a_python_number_operand_matches_the_general_path(row, dtype, number, first):
    """``t <op> n`` and ``n <op> t`` (the reversed operator), and ``t.<row>(n)``;
    a call the row refuses (bitwise ops on floats, the gradient of ``n % t``)
    raises the same error both ways."""
    grad = dtype is not nbgrad.int64 and bool(row.differentiable)

    def run(general):
        t = _tensors(row, dtype, 0, seed=4)[0]
        t.requires_grad_(grad)
        args = (number, t) if first else (t, number)
        if general and row.name == "div" and first:  # number / t: t.reciprocal() * number
            rows = nbgrad.declarations.op_table.BY_NAME
            out = elementwise.apply(rows["mul"], (elementwise.apply(rows["reciprocal"], (t,)),
                                                  number))
        elif general:
            # t.pow(number) with a floating result takes the pow_number row
            number_row = row.name == "pow" and not first and (
                dtype.is_floating_point or isinstance(number, float))
            out = elementwise.apply(nbgrad.declarations.op_table.BY_NAME["pow_number"] if number_row
                                    else row, args)
        elif first:
            out = getattr(nbgrad.Tensor, f"__r{_DUNDERS[row.name]}__")(t, number) \
                if row.name in _DUNDERS else elementwise.apply(row, args)
        else:
            out = _call_method(row, list(args))
        if grad and out.requires_grad:
            out.backward(nbgrad.ones(N, dtype=out.dtype))
        return out, t.grad

    refused = _refusal(lambda: run(True))
    if refused:
        assert _refusal(lambda: run(False)) == refused
        return
    (general, general_grad), (fast, fast_grad) = run(True), run(False)
    assert fast.dtype is general.dtype
    np.testing.assert_array_equal(fast.detach().numpy(), general.detach().numpy())
    assert node_name(fast.grad_fn) == node_name(general.grad_fn)
    assert (fast_grad is None) == (general_grad is None)
    if fast_grad is not None:
        np.testing.assert_array_equal(fast_grad.numpy(), general_grad.numpy())


_DUNDERS = {"add": "add", "sub": "sub", "mul": "mul", "div": "truediv", "pow": "pow"}


def _refusal(call):
    """(exception type, message) if ``call()`` raises an op's refusal, else None."""
    try:
        call()
    except (RuntimeError, NotImplementedError, TypeError) as error:
        return type(error), str(error)
    return None


CUBE = nbgrad.elementwise("cube", lambda a: a * a * a, grads={"a": lambda g, a: 3 * g * a * a})


@pytest.mark.parametrize("row", ROWS + [CUBE], ids=[r.name for r in ROWS + [CUBE]])
def test_calling_a_row_takes_the_straight_line_path(monkeypatch, row):
    # nbgrad.<row>(...) and a user's own row, as the method: same values and gradients
    # (in int64 for the rows that refuse floats: the bitwise ops).
    dtype = nbgrad.float32
    if _refusal(lambda: elementwise.apply(row, tuple(_tensors(row, dtype, 0)))):
        dtype = nbgrad.int64
    mask = sum(1 << k for k in row.differentiable) if dtype.is_floating_point else 0
    row(*_tensors(row, dtype, mask))  # makes the row's function
    fast_args = _tensors(row, dtype, mask)
    _no_general_path(monkeypatch, row._function)
    fast = row(*fast_args)
    monkeypatch.undo()
    general_args = _tensors(row, dtype, mask)
    general = elementwise.apply(row, tuple(general_args))
    np.testing.assert_array_equal(fast.detach().numpy(), general.detach().numpy())
    assert node_name(fast.grad_fn) == node_name(general.grad_fn)
    if mask:
        fast.sum().backward()
        general.sum().backward()
        for a, b in zip(fast_args, general_args):
            if a.requires_grad:
                np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())


@pytest.mark.parametrize("args", [([1.0, 2.0],), (2.0,), ()], ids=["list", "number", "none"])
def test_calling_a_row_with_other_arguments_is_checked_as_on_the_general_path(args):
    row = nbgrad.ROWS[[r.name for r in nbgrad.ROWS].index("sigmoid")]
    with pytest.raises(TypeError) as general:
        elementwise.apply(row, args)
    with pytest.raises(TypeError, match="^" + re.escape(str(general.value)) + "$"):
        nbgrad.sigmoid(*args)


def test_number_operands_take_the_straight_line_path(monkeypatch):
    x = nbgrad.randn(5, requires_grad=True)
    for name in ("__mul__", "__rmul__", "__sub__", "__rsub__", "__pow__", "__rpow__"):
        _no_general_path(monkeypatch, getattr(nbgrad.Tensor, name))
    y = ((x * 2 - 1) ** 2).__rsub__(3.0) * 0.5
    z = 2.0 ** (2 * x)
    (y.sum() + z.sum()).backward()
    v = x.detach().numpy().astype(np.float64)
    expected = -2 * (2 * v - 1) + 2 * np.log(2.0) * 2.0 ** (2 * v)
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-5)


def test_a_bool_operand_takes_the_general_path(monkeypatch):
    calls = _spy_on_general_path(monkeypatch, nbgrad.Tensor.__mul__)
    assert (nbgrad.tensor([1.0, 2.0]) * True).tolist() == [1.0, 2.0]
    assert calls == [1]


def test_an_int_beyond_int64_is_refused_as_on_the_general_path():
    mul = nbgrad.ROWS[[r.name for r in nbgrad.ROWS].index("mul")]
    with pytest.raises(Exception) as fast:
        nbgrad.tensor([1, 2]) * 2 ** 70
    with pytest.raises(Exception) as general:
        elementwise.apply(mul, (nbgrad.tensor([1, 2]), 2 ** 70))
    assert type(fast.value) is type(general.value) and str(fast.value) == str(general.value)


def test_it_records_nothing_under_no_grad():
    x = nbgrad.randn(5, requires_grad=True)
    with nbgrad.no_grad():
        y = x * x
    assert y.grad_fn is None and not y.requires_grad


def _spy_on_general_path(monkeypatch, method):
    calls = []
    real = method.__globals__["apply"]
    monkeypatch.setitem(method.__globals__, "apply", lambda *a: calls.append(1) or real(*a))
    return calls


_FIVE_D = (1, 1, 1, 2, 3)  # more dimensions than straight_line.MAX_NDIM


def _five_d(t):
    assert len(_FIVE_D) > straight_line.MAX_NDIM
    return nbgrad.tensor(t.numpy().reshape(_FIVE_D))  # not a view


@pytest.mark.parametrize("make,expected", [
    (lambda x, w: x * w[:1], lambda x, w: x * w[:1]),            # broadcasting
    (lambda x, w: x[1:] * w[1:], lambda x, w: x[1:] * w[1:]),    # views
    (lambda x, w: x * w.double(), lambda x, w: x * w.astype(np.float64)),  # promotion
    (lambda x, w: _five_d(x) * _five_d(w), lambda x, w: (x * w).reshape(_FIVE_D)),
    (lambda x, w: x.sum() * w.sum(), lambda x, w: np.float32(x.sum() * w.sum())),  # 0-d
    (lambda x, w: x.long() * w, lambda x, w: x.astype(np.int64).astype(np.float32) * w),
], ids=["broadcast", "views", "promotion", "5d", "0d", "int64"])
def test_other_calls_take_the_general_path(monkeypatch, make, expected):
    x = nbgrad.tensor(np.arange(1.0, 7.0, dtype=np.float32) / 3)
    w = nbgrad.tensor(np.arange(6.0, 0.0, -1, dtype=np.float32) / 5)
    calls = _spy_on_general_path(monkeypatch, nbgrad.Tensor.__mul__)
    out = make(x, w)
    assert calls == [1]
    want = expected(x.numpy(), w.numpy())
    assert out.numpy().dtype == want.dtype
    np.testing.assert_array_equal(out.numpy(), want)


def test_large_arrays_take_the_general_path(monkeypatch):
    x = nbgrad.ones(cpu_elementwise.PARALLEL_THRESHOLD + 1, requires_grad=True)
    calls = _spy_on_general_path(monkeypatch, nbgrad.Tensor.sigmoid)
    y = x.sigmoid()
    assert calls == [1]
    np.testing.assert_allclose(y.detach().numpy()[:3], 1 / (1 + np.exp(-1.0)), rtol=1e-6)


@pytest.mark.parametrize("dtype,method,out_itemsize", [
    (nbgrad.float32, "sigmoid", 4), (nbgrad.float64, "sigmoid", 8), (nbgrad.float32, "lt", 1)])
def test_the_size_limit_is_the_pools_in_bytes_of_the_output(monkeypatch, dtype, method,
                                                             out_itemsize):
    from nbgrad.backends.cpu.allocator import POOL_MIN_BYTES
    limit = min(POOL_MIN_BYTES // out_itemsize, cpu_elementwise.PARALLEL_THRESHOLD)
    calls = _spy_on_general_path(monkeypatch, getattr(nbgrad.Tensor, method))
    for n, general in ((limit - 1, 0), (limit, 1)):
        x = nbgrad.zeros(n, dtype=dtype, requires_grad=method == "sigmoid")
        y = getattr(x, method)(*([x] if method == "lt" else []))
        assert calls == [1] * general and y.shape == (n,)
        if method == "sigmoid":  # the backward's limit is the gradient's, in its dtype
            y.backward(nbgrad.ones(n, dtype=dtype))
            np.testing.assert_allclose(x.grad.numpy()[[0, -1]], 0.25)


def test_a_stale_saved_tensor_is_reported_as_on_the_general_path():
    mul = nbgrad.ROWS[[r.name for r in nbgrad.ROWS].index("mul")]
    messages = []
    for fast in (True, False):
        a = nbgrad.randn(4, requires_grad=True)
        b = a * 1.0  # not a leaf, so it may be written in place
        c = nbgrad.randn(4, requires_grad=True)
        y = b * c if fast else elementwise.apply(mul, (b, c))
        b.add_(1)
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
        messages.append(str(info.value).split(" at /")[0])
    assert messages[0] == messages[1]
    assert "output 0 of Add, is at version 1; expected version 0 instead" in messages[0]


def test_a_saved_output_written_in_place_is_caught():
    x = nbgrad.randn(4, requires_grad=True)
    y = x.sigmoid()
    y.mul_(2)
    with pytest.raises(RuntimeError, match="output 0 of SigmoidBackward|output 0 of Sigmoid"):
        y.sum().backward()
