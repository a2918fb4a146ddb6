"""``cat`` and ``stack`` (nbgrad/ops/joining.py) against PyTorch and NumPy:
values, dtype promotion, gradients, layouts (results' and gradients'
strides), backward node names and error texts; second derivatives against
PyTorch and by finite differences."""

import re

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import nbgrad
from helpers import (MIXED, assert_same_error, assert_same_tensor, cuda_only, dtype_name, lib_of,
                     node_name, on_device, raises_like_torch, run_like_torch,
                     second_derivatives_like_torch, values)
from strided import strided
from nbgrad.autograd import gradcheck, gradgradcheck

TESTED_OPS = {"cat", "stack"}  # tests/ops/test_exports.py


def make(lib, shape, dtype="float64", start=0.0, requires_grad=None):
    values = np.arange(start, start + np.prod(shape)).reshape(shape)
    if dtype == "bool":
        return lib.tensor(values.astype(int) % 2 == 0)
    if requires_grad is None:
        requires_grad = dtype.startswith("float")
    return lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=requires_grad)


# (id, op, [(shape, dtype)] for the inputs)
CASES = [
    ("cat-dim0", lambda L, ts: L.cat(ts), [((2, 3), "float64"), ((1, 3), "float64")]),
    ("cat-dim1", lambda L, ts: L.cat(ts, 1), [((2, 3), "float64"), ((2, 1), "float64")]),
    ("cat-negative-dim", lambda L, ts: L.cat(ts, dim=-1), [((2, 3), "float64"), ((2, 2), "float64")]),
    ("cat-three", lambda L, ts: L.cat(ts, -2), [((2, 2), "float64"), ((1, 2), "float64"),
                                                  ((3, 2), "float64")]),
    ("cat-one", lambda L, ts: L.cat(ts), [((2, 3), "float64")]),
    ("cat-3d-middle", lambda L, ts: L.cat(ts, 1), [((2, 1, 3), "float64"), ((2, 4, 3), "float64")]),
    ("cat-tuple", lambda L, ts: L.cat(tuple(ts)), [((2,), "float64"), ((3,), "float64")]),
    ("cat-empty-part", lambda L, ts: L.cat(ts), [((0, 3), "float64"), ((2, 3), "float64")]),
    ("cat-legacy-empty", lambda L, ts: L.cat(ts), [((2, 3), "float64"), ((0,), "float64"),
                                                   ((1, 3), "float64")]),
    ("cat-legacy-empty-dim1", lambda L, ts: L.cat(ts, 1), [((0,), "float64"), ((2, 3), "float64")]),
    ("cat-all-legacy-empty", lambda L, ts: L.cat(ts), [((0,), "float64"), ((0,), "float64")]),
    ("cat-float32-float64", lambda L, ts: L.cat(ts), [((2,), "float32"), ((2,), "float64")]),
    ("cat-int-float", lambda L, ts: L.cat(ts), [((2,), "int64"), ((2,), "float32")]),
    ("cat-bool-int", lambda L, ts: L.cat(ts), [((2,), "bool"), ((3,), "int64")]),
    ("cat-bool-float", lambda L, ts: L.cat(ts), [((2,), "float32"), ((3,), "bool")]),
    ("cat-ints", lambda L, ts: L.cat(ts), [((2,), "int64"), ((3,), "int64")]),
    ("cat-legacy-empty-promotes", lambda L, ts: L.cat(ts), [((2,), "float32"), ((0,), "float64")]),
    ("cat-no-grad-part", lambda L, ts: L.cat([ts[0], ts[1].detach()]), [((2,), "float64"),
                                                                       ((2,), "float64")]),
    ("stack", lambda L, ts: L.stack(ts), [((2, 3), "float64"), ((2, 3), "float64")]),
    ("stack-dim1", lambda L, ts: L.stack(ts, 1), [((2, 3), "float64")] * 3),
    ("stack-last", lambda L, ts: L.stack(ts, dim=2), [((2, 3), "float64")] * 2),
    ("stack-negative", lambda L, ts: L.stack(ts, -1), [((2, 3), "float64")] * 2),
    ("stack-most-negative", lambda L, ts: L.stack(ts, -3), [((2, 3), "float64")] * 2),
    ("stack-0d", lambda L, ts: L.stack(ts), [((), "float64")] * 3),
    ("stack-promote", lambda L, ts: L.stack(ts), [((2,), "int64"), ((2,), "float32")]),
    ("stack-one", lambda L, ts: L.stack(ts, 1), [((2,), "float64")]),
    ("stack-of-views", lambda L, ts: L.stack([ts[0].t(), ts[1][:, ::2]]),
     [((3, 2), "float64"), ((2, 6), "float64")]),
]


@pytest.mark.parametrize("op, inputs", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_matches_torch(op, inputs):
    results = []
    for lib in (nbgrad, torch):
        ts = [make(lib, shape, dtype, start=10.0 * k) for k, (shape, dtype) in enumerate(inputs)]
        y = op(lib, ts)
        if y.requires_grad:
            w = lib.tensor(np.linspace(-1, 2, y.numel()).reshape(tuple(y.shape)), dtype=y.dtype)
            (y * w).sum().backward()
        results.append((y, ts))
    (y, ts), (ty, tts) = results
    assert tuple(y.shape) == tuple(ty.shape)
    assert dtype_name(y.dtype) == dtype_name(ty.dtype)
    np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())
    assert node_name(y.grad_fn) == node_name(ty.grad_fn)
    assert y.is_leaf == ty.is_leaf and y.requires_grad == ty.requires_grad
    for t, tt in zip(ts, tts):
        assert not np.shares_memory(y.detach().numpy(), t.detach().numpy())  # always a copy
        assert (t.grad is None) == (tt.grad is None)
        if t.grad is not None:
            assert dtype_name(t.grad.dtype) == dtype_name(tt.grad.dtype)
            np.testing.assert_allclose(t.grad.numpy(), tt.grad.numpy(), rtol=1e-6)


# (id, the inputs as torch tensors of the layouts to try): each is joined along
# every dim, negative ones included.
LAYOUT_CASES = [
    ("transposed", lambda: [torch.ones(3, 2).t()] * 2),
    ("transposed-and-contiguous", lambda: [torch.ones(3, 2).t(), torch.ones(2, 3)]),
    ("stepped", lambda: [torch.ones(2, 6)[:, ::2], torch.ones(6, 3)[::3]]),
    ("permuted-3d", lambda: [torch.ones(2, 3, 4).permute(2, 0, 1)] * 2),
    ("permuted-3d-and-transposed", lambda: [torch.ones(2, 3, 4).permute(2, 0, 1),
                                            torch.ones(4, 3, 2).transpose(1, 2)]),
    ("permuted-4d", lambda: [torch.ones(2, 3, 4, 5).permute(0, 2, 3, 1)] * 2),
    ("channels-last", lambda: [torch.ones(2, 3, 4, 5).to(memory_format=torch.channels_last)] * 2),
    ("channels-last-one-channel", lambda: [torch.ones(2, 1, 3, 2).to(
        memory_format=torch.channels_last)] * 3),
    ("channels-last-and-contiguous", lambda: [
        torch.ones(2, 3, 4, 5).to(memory_format=torch.channels_last), torch.ones(2, 3, 4, 5)]),
    ("channels-last-3d", lambda: [torch.ones(2, 3, 2, 3, 2).to(
        memory_format=torch.channels_last_3d)] * 2),
]


@pytest.mark.parametrize("op", ["cat", "stack"])
@pytest.mark.parametrize("inputs", [c[1] for c in LAYOUT_CASES], ids=[c[0] for c in LAYOUT_CASES])
def test_layouts_match_torch(op, inputs):
    """The result's strides (PyTorch: C order unless every input suggests one
    channels-last format), values, and the strides of the inputs' gradients:
    leaves' (the layout contract) and retained ones of non-leaves (C order)."""
    originals = inputs()
    ndim = originals[0].ndim + (op == "stack")
    for dim in range(-ndim, ndim):
        results = []
        for lib in (nbgrad, torch):
            leaves = [strided(lib, t, requires_grad=True) for t in originals]
            inner = [x.clone() for x in leaves]  # non-leaves of the same layouts
            for x in inner:
                x.retain_grad()
            y = getattr(lib, op)(inner, dim)
            w = lib.tensor(np.linspace(-1.0, 2.0, y.numel()).reshape(tuple(y.shape)))
            (y * w).sum().backward()
            results.append((y, leaves, inner))
        (y, leaves, inner), (ty, tleaves, tinner) = results
        assert y.stride() == ty.stride(), dim
        np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())
        for x, tx in zip(leaves + inner, tleaves + tinner):
            assert x.grad.stride() == tx.grad.stride(), dim
            np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


def test_cat_with_a_legacy_empty_input_is_c_order_like_torch():
    """A skipped 1-D empty input still votes contiguous."""
    for lib in (nbgrad, torch):
        x = strided(lib, torch.ones(2, 3, 4, 5).to(memory_format=torch.channels_last))
        assert lib.cat([x, x], 1).stride() == (120, 1, 30, 6)
        assert lib.cat([x, lib.zeros(0, dtype=lib.float64), x], 1).stride() == (120, 20, 5, 1)


def test_result_is_independent_of_its_inputs():
    a, b = nbgrad.ones(2), nbgrad.zeros(2)
    for y in (nbgrad.cat([a, b]), nbgrad.stack([a, b])):
        a.add_(1.0)
        assert y._version == 0 and y.numpy().max() == 1.0
        a.sub_(1.0)


def test_same_tensor_twice_gets_both_gradients():
    for lib in (nbgrad, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        (lib.cat([x, x * 3, x]) * lib.arange(6.0)).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), [0 + 6 + 4, 1 + 9 + 5])
        x.grad = None
        lib.stack([x, x], 1).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])


@pytest.mark.parametrize("fn", [
    lambda a, b: nbgrad.cat([a, b * b], 1),
    lambda a, b: nbgrad.cat([a.t(), b.t()], -2) * nbgrad.cat([b.t(), a.t()]),
    lambda a, b: nbgrad.stack([a, b, a * b], 1),
    lambda a, b: nbgrad.stack([a[0], b[:, 1]], -1),
], ids=["cat", "cat-transposed", "stack", "stack-views"])
def test_gradcheck(fn):
    rng = np.random.default_rng(4)
    a = nbgrad.tensor(rng.standard_normal((2, 2)), dtype=nbgrad.float64, requires_grad=True)
    b = nbgrad.tensor(rng.standard_normal((2, 2)), dtype=nbgrad.float64, requires_grad=True)
    assert gradcheck(fn, (a, b))


ERRORS = [
    ("cat-size-mismatch", lambda L: L.cat([L.zeros(2, 3), L.zeros(2, 1)])),
    ("cat-size-mismatch-third", lambda L: L.cat([L.zeros(2, 3), L.zeros(1, 3), L.zeros(1, 2)])),
    ("cat-ndim-mismatch", lambda L: L.cat([L.zeros(2, 3), L.zeros(3)])),
    ("cat-0d", lambda L: L.cat([L.zeros(2), L.tensor(1.0)])),
    ("cat-0d-first", lambda L: L.cat([L.tensor(1.0), L.tensor(2.0)])),
    ("cat-dim-out-of-range", lambda L: L.cat([L.zeros(2, 3)], 2)),
    ("cat-negative-dim-out-of-range", lambda L: L.cat([L.zeros(2, 3)], -3)),
    ("cat-empty-list", lambda L: L.cat([])),
    ("cat-legacy-empty-size", lambda L: L.cat([L.zeros(2, 3), L.zeros(0, 2)])),
    ("stack-size-mismatch", lambda L: L.stack([L.zeros(2, 3), L.zeros(3, 2)])),
    ("stack-size-mismatch-later", lambda L: L.stack([L.zeros(2), L.zeros(2), L.zeros(3)])),
    ("stack-empty-list", lambda L: L.stack([])),
    ("stack-dim-out-of-range", lambda L: L.stack([L.zeros(2, 3)], 3)),
    ("stack-negative-dim-out-of-range", lambda L: L.stack([L.zeros(2, 3)], -4)),
]


@pytest.mark.parametrize("fn", [c[1] for c in ERRORS], ids=[c[0] for c in ERRORS])
def test_errors_match_torch(fn):
    assert_same_error(fn)


@pytest.mark.parametrize("fn", [
    lambda L: L.cat([L.zeros(2), [1.0, 2.0]]),
    lambda L: L.cat(L.zeros(2, 3)),
    lambda L: L.cat([L.zeros(2)], 0.0),
    lambda L: L.stack([L.zeros(2), [1.0, 2.0]]),
    lambda L: L.stack(L.zeros(2, 3)),
], ids=["cat-list-element", "cat-tensor", "cat-float-dim", "stack-list-element", "stack-tensor"])
def test_bad_arguments_raise_type_error(fn):
    assert_same_error(fn, exact=False)


def test_cat_error_texts():
    with pytest.raises(RuntimeError, match=r"^Sizes of tensors must match except in dimension 0\. "
                                           r"Expected size 3 but got size 1 for tensor number 1 in "
                                           r"the list\.$"):
        nbgrad.cat([nbgrad.zeros(2, 3), nbgrad.zeros(2, 1)])
    with pytest.raises(RuntimeError, match=r"^zero-dimensional tensor \(at position 1\) cannot be "
                                           r"concatenated$"):
        nbgrad.cat([nbgrad.zeros(2), nbgrad.tensor(1.0)])


@st.composite
def cat_inputs(draw):
    ndim = draw(st.integers(1, 3))
    shape = draw(st.lists(st.integers(1, 3), min_size=ndim, max_size=ndim))
    dim = draw(st.integers(-ndim, ndim - 1))
    sizes = draw(st.lists(st.integers(0, 3), min_size=1, max_size=4))
    shapes = []
    for n in sizes:
        s = list(shape)
        s[dim] = n
        shapes.append(tuple(s))
    return shapes, dim


@given(cat_inputs())
def test_cat_and_stack_match_numpy(case):
    shapes, dim = case
    rng = np.random.default_rng(len(shapes))
    arrays = [rng.standard_normal(s) for s in shapes]
    ts = [nbgrad.tensor(a, dtype=nbgrad.float64, requires_grad=True) for a in arrays]
    y = nbgrad.cat(ts, dim)
    np.testing.assert_array_equal(y.detach().numpy(), np.concatenate(arrays, axis=dim))
    w = rng.standard_normal(y.shape)
    (y * nbgrad.tensor(w)).sum().backward()
    for t, part in zip(ts, np.split(w, np.cumsum([s[dim] for s in shapes])[:-1], axis=dim)):
        np.testing.assert_array_equal(t.grad.numpy(), part)
    same = [a[..., :1] if a.ndim else a for a in arrays if a.size] or [np.zeros(1)]
    same = [np.broadcast_to(same[0], same[0].shape).copy() + k for k in range(len(same))]
    stacked = nbgrad.stack([nbgrad.tensor(a) for a in same], dim % (same[0].ndim + 1))
    np.testing.assert_array_equal(stacked.numpy(), np.stack(same, axis=dim % (same[0].ndim + 1)))


# ------------------------------------------------------------ on every device
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat_on_the_device_matches_torch(dim, device):
    def fn(a, b):
        return lib_of(a).cat([a, b.t()[:, :2] if dim else b.t()[:1, :3], a * 2], dim=dim)
    run_like_torch(fn, values((2, 3), 1), values((3, 2), 2), device=device)


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_stack_on_the_device_matches_torch(dim, device):
    run_like_torch(lambda a, b: lib_of(a).stack([a, b.t(), a], dim=dim), values((2, 3), 1),
                   values((3, 2), 2), device=device)


def test_cat_promotes_and_skips_legacy_empty_tensors_like_torch(device):
    def parts(lib):
        on = on_device(lib, device)
        return [lib.tensor([[1, 2]], **on), lib.zeros(0, **on),
                lib.tensor([[0.5, 1.5]], dtype=lib.float64, **on)]
    assert_same_tensor(nbgrad.cat(parts(nbgrad)), torch.cat(parts(torch)))
    run_like_torch(lambda a, empty: lib_of(a).cat([a, empty], dim=0), values((2, 2), 3),
                   np.zeros(0), device=device)


@pytest.mark.parametrize("call", [
    lambda a, b: lib_of(a).cat([a, b], dim=2), lambda a, b: lib_of(a).cat([a, b[0]]),
    lambda a, b: lib_of(a).cat([a, b.t()]), lambda a, b: lib_of(a).stack([a, b.t()]),
    lambda a, b: lib_of(a).cat([a.sum(), b]), lambda a, b: lib_of(a).stack([a, b], dim=4),
], ids=["dim", "ndim", "sizes", "stack-sizes", "zero-dim", "stack-dim"])
def test_joining_errors_on_the_device_match_torch(call, device):
    raises_like_torch(call, values((2, 3), 4), values((2, 3), 5), device=device)


@cuda_only
def test_joining_tensors_on_two_devices_is_refused(device):
    a, b = nbgrad.ones(2, device=device), nbgrad.ones(2)
    for join in (nbgrad.cat, nbgrad.stack):
        for parts, devices in (([a, b], ("cuda:0", "cpu")), ([b, a], ("cpu", "cuda:0"))):
            with pytest.raises(RuntimeError, match=f"^{re.escape(MIXED.format(*devices))}$"):
                join(parts)


# -- higher-order gradients (create_graph=True): the gradients are slices
# (cat) or selections (stack) of the incoming gradient, views whose own
# gradients scatter back.
def _joined(join, *shapes):
    def fn(*tensors):
        return join(lib_of(tensors[0]), [t.sin() for t in tensors]).sin()
    fn.shapes = shapes
    return fn


JOINS = {
    "cat-0": _joined(lambda lib, ts: lib.cat(ts, 0), (2, 3), (1, 3)),
    "cat-1": _joined(lambda lib, ts: lib.cat(ts, 1), (2, 3), (2, 1), (2, 2)),
    "cat-last-3d": _joined(lambda lib, ts: lib.cat(ts, -1), (2, 1, 3), (2, 1, 2)),
    "cat-legacy-empty": _joined(lambda lib, ts: lib.cat(ts, 1), (2, 3), (0,), (2, 2)),
    "stack-0": _joined(lambda lib, ts: lib.stack(ts, 0), (2, 3), (2, 3)),
    "stack-1": _joined(lambda lib, ts: lib.stack(ts, 1), (2, 3), (2, 3), (2, 3)),
    "stack-last": _joined(lambda lib, ts: lib.stack(ts, -1), (3,), (3,)),
}


@pytest.mark.parametrize("name", sorted(JOINS))
def test_second_derivatives_on_the_device_match_torch(name, device):
    fn = JOINS[name]
    second_derivatives_like_torch(fn, *(values(s, 31 + k) for k, s in enumerate(fn.shapes)),
                                  device=device)


@pytest.mark.parametrize("name", sorted(JOINS))
def test_gradgradcheck(name):
    fn = JOINS[name]
    inputs = [nbgrad.tensor(values(s, 35 + k), dtype=nbgrad.float64, requires_grad=True)
              for k, s in enumerate(fn.shapes)]
    assert gradgradcheck(fn, inputs)
