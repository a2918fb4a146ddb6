"""``tensor[key]`` and ``tensor[key] = value`` (nbgrad/ops/indexing.py) against
PyTorch: values, gradients, backward node names, which results share memory
and the version counter, the version bumps of writes, and error texts; second
derivatives against PyTorch and by finite differences."""

import re
import sys

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import nbgrad
from helpers import (MIXED, assert_same_error, assert_same_tensor, cuda_only, leaf, lib_of,
                     node_name, on_device, raises_like_torch, run_like_torch,
                     second_derivatives_like_torch, values)
from nbgrad.autograd import gradcheck, gradgradcheck


# ----------------------------------------------------------------- helpers
def shares_memory(a, b):
    return np.shares_memory(a.detach().numpy(), b.detach().numpy())


def weights(lib, shape):
    n = int(np.prod(shape, dtype=np.int64))
    return lib.tensor(np.linspace(-1.5, 2.0, n).reshape(tuple(shape)), dtype=lib.float64)


def grad_or_none(t):
    return None if t.grad is None else t.grad.numpy().copy()


def assert_same_arrays(a, b):
    if a is None or b is None:
        assert a is None and b is None, (a, b)
    else:
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


SHAPE = (3, 4, 5)
BASE = np.arange(1.0, 61.0).reshape(SHAPE)


def T(values, dtype="int64"):
    """A key made of an index tensor, built for whichever library indexes."""
    return lambda L: L.tensor(values, dtype=getattr(L, dtype) if dtype != "bool" else L.bool)


def build_key(key, lib):
    items = key if isinstance(key, tuple) else (key,)
    built = tuple(k(lib) if callable(k) else k for k in items)
    return built if isinstance(key, tuple) else built[0]


# ------------------------------------------------------------ __getitem__
GET_CASES = [
    ("int", 1), ("negative-int", -1), ("ints", (1, 2, 3)), ("negative-ints", (-1, -2, -3)),
    ("int-then-slice", (1, slice(None))), ("slice-then-int", (slice(None), 1)),
    ("slice", slice(1, 3)), ("slice-step", slice(None, None, 2)),
    ("slices-steps", (slice(None), slice(1, None, 2), slice(None, None, 3))),
    ("slice-negative-bounds", slice(-2, None)), ("slice-past-end", slice(1, 10)),
    ("slice-empty", slice(5, None)), ("slice-clamped-start", slice(-10, 2)),
    ("full-slice", slice(None)), ("full-slice-tuple", (slice(None),)),
    ("full-slices", (slice(None), slice(0, 4))),
    ("none", None), ("none-tuple", (None,)), ("none-middle", (slice(None), None, 1)),
    ("ellipsis", Ellipsis), ("ellipsis-int", (Ellipsis, 1)), ("int-ellipsis", (1, Ellipsis)),
    ("ellipsis-none", (0, Ellipsis, None)),
    ("int-ellipsis-none-int", (1, Ellipsis, None, 2)), ("empty-tuple", ()),
    ("list", [0, 2]), ("list-duplicates", [2, 0, 2, 2]), ("list-negative", [-1, 0]),
    ("list-second-dim", (slice(None), [1, 1, 3])),
    ("list-empty", []), ("list-empty-second-dim", (slice(None), [])),
    ("tensor", T([0, 2, 2])), ("tensor-2d", T([[0, 1], [2, 2]])),
    ("tensors-paired", (T([0, 1, 1]), T([2, 3, 3]))),
    ("lists-paired-split", ([0, 1], slice(None), [2, 3])),
    ("slice-and-list", (slice(1, None), [0, 0])), ("int-and-list", (1, [3, 0, 3])),
    ("ellipsis-and-list", (Ellipsis, [4, 0])),
    ("broadcast-index", (T([[0], [2]]), T([1, 3]))),
    ("mask-1d", T([True, False, True], "bool")), ("mask-list", [True, False, True]),
    ("mask-2d", T([[True, False, True, False]] * 3, "bool")),
    ("mask-after-slice", (slice(None), T([True, False, True, False], "bool"))),
    ("mask-all-false", T([False, False, False], "bool")),
    ("mask-from-values", lambda L: L.tensor(BASE) > 30),
    ("0d-int-tensor", T(1)), ("0d-int-tensors", (0, T(1))), ("0d-negative-int-tensor", T(-2)),
    ("0d-bool-true", T(True, "bool")), ("0d-bool-false", T(False, "bool")),
    ("bool-python", True),
    # PyTorch reads a list of numbers as int64 indices, truncating floats toward zero.
    ("float-list", [1.7, 0.2]), ("float-list-negative", [-1.5, 2.0]),
    ("float-and-int-list", (slice(None), [3, 0.9])), ("float-and-bool-list", [True, 0.5]),
]


@pytest.mark.parametrize("key", [c[1] for c in GET_CASES], ids=[c[0] for c in GET_CASES])
def test_getitem_matches_torch(key):
    results = []
    for lib in (nbgrad, torch):
        x = lib.tensor(BASE, dtype=lib.float64, requires_grad=True)
        y = x[build_key(key, lib)]
        (y * weights(lib, y.shape)).sum().backward()
        results.append((y, x))
    (y, x), (ty, tx) = results
    assert tuple(y.shape) == tuple(ty.shape)
    np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())
    assert node_name(y.grad_fn) == node_name(ty.grad_fn)
    # Basic indexing gives a view (same memory, same base); advanced indexing copies.
    assert shares_memory(y, x) == shares_memory(ty, tx)
    assert (y._base is x) == (ty._base is tx)
    assert y.stride() == ty.stride()
    assert_same_arrays(x.grad.numpy(), tx.grad.numpy())


@pytest.mark.parametrize("key", [c[1] for c in GET_CASES], ids=[c[0] for c in GET_CASES])
def test_getitem_gradient_keeps_the_sign_of_zeros_like_torch(key):
    """A -0. gradient reaches the base as -0. (a dim from None must not make the view's
    scatter sum), as in PyTorch."""
    grads = []
    for lib in (nbgrad, torch):
        x = lib.tensor(BASE, dtype=lib.float64, requires_grad=True)
        y = x[build_key(key, lib)]
        y.backward(lib.full(tuple(y.shape), -0.0, dtype=lib.float64))
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(np.signbit(grads[0]), np.signbit(grads[1]))


# Advanced indexing of laid-out inputs: (id, make the input, index it). PyTorch's
# result keeps the order of the input's remaining dims (its index kernel is a
# TensorIterator over the restrided input and the index tensors).
LAYOUT_CASES = [
    ("list-transposed", lambda L: L.zeros(2, 3, 2).transpose(-1, -2), lambda x, L: x[[0, 1]]),
    ("list-second-dim", lambda L: L.zeros(2, 3, 4).transpose(0, 2), lambda x, L: x[:, [0, 1]]),
    ("list-last-dim", lambda L: L.zeros(2, 3, 4).transpose(0, 2), lambda x, L: x[..., [0, 1]]),
    ("list-2d", lambda L: L.zeros(3, 4).t(), lambda x, L: x[[0, 2]]),
    ("list-2d-columns", lambda L: L.zeros(3, 4).t(), lambda x, L: x[:, [0, 2]]),
    ("list-one", lambda L: L.zeros(3, 4).t(), lambda x, L: x[[1]]),
    ("list-empty", lambda L: L.zeros(3, 4).t(), lambda x, L: x[[]]),
    ("list-1d-strided", lambda L: L.zeros(6)[::2], lambda x, L: x[[0, 1]]),
    ("list-stepped", lambda L: L.zeros(4, 6)[:, ::2], lambda x, L: x[:, [0, 2]]),
    ("list-contiguous", lambda L: L.zeros(3, 4, 5), lambda x, L: x[:, [1, 2]]),
    ("list-expanded", lambda L: L.zeros(4, 1).expand(4, 3), lambda x, L: x[[0, 1]]),
    ("list-expanded-columns", lambda L: L.zeros(4, 1).expand(4, 3), lambda x, L: x[:, [0, 1]]),
    ("list-size-1-dim", lambda L: L.zeros(1, 4).t(), lambda x, L: x[[1, 2]]),
    ("list-size-1-middle", lambda L: L.zeros(4, 1, 3).permute(2, 1, 0),
     lambda x, L: x[:, :, [1, 2]]),
    ("list-channels-last", lambda L: L.zeros(2, 4, 5, 3).permute(0, 3, 1, 2),
     lambda x, L: x[[0, 1]]),
    ("list-channels-last-dim-1", lambda L: L.zeros(2, 4, 5, 3).permute(0, 3, 1, 2),
     lambda x, L: x[:, [0, 1]]),
    ("slice-then-list", lambda L: L.zeros(4, 5, 6).transpose(0, 2), lambda x, L: x[1:3, [0, 1]]),
    ("int-then-list", lambda L: L.zeros(4, 5, 6).transpose(0, 2), lambda x, L: x[1, [0, 1]]),
    ("none-then-list", lambda L: L.zeros(4, 5).t(), lambda x, L: x[None, [0, 1]]),
    ("mask", lambda L: L.zeros(3, 4).t(), lambda x, L: x[L.tensor([True, False, True, True])]),
    ("mask-2d-after-slice", lambda L: L.zeros(3, 4, 5).permute(2, 0, 1),
     lambda x, L: x[:, L.ones(3, 4, dtype=L.bool)]),
    ("mask-2d-front", lambda L: L.zeros(3, 4, 5).permute(2, 0, 1),
     lambda x, L: x[L.ones(5, 3, dtype=L.bool)]),
    ("mask-full", lambda L: L.zeros(4, 5).t(), lambda x, L: x[L.ones(5, 4, dtype=L.bool)]),
    ("mask-0d", lambda L: L.zeros(4, 5).t(), lambda x, L: x[True]),
    ("tensor-2d", lambda L: L.zeros(3, 4).t(), lambda x, L: x[L.tensor([[0, 1], [2, 0]])]),
    ("tensor-2d-transposed", lambda L: L.zeros(3, 4).t(),
     lambda x, L: x[L.tensor([[0, 1], [2, 0]]).t()]),
    ("tensor-2d-transposed-contiguous-input", lambda L: L.zeros(3, 4),
     lambda x, L: x[L.tensor([[0, 1], [2, 0]]).t()]),
    ("tensors-broadcast", lambda L: L.zeros(3, 4, 5).transpose(0, 1),
     lambda x, L: x[L.tensor([[0], [1]]), L.tensor([0, 1, 2])]),
    ("tensors-broadcast-after-slice", lambda L: L.zeros(3, 4, 5).transpose(0, 2),
     lambda x, L: x[:, L.tensor([[0], [1]]), L.tensor([0, 1, 2])]),
    ("lists-split", lambda L: L.zeros(3, 4, 5).permute(2, 0, 1), lambda x, L: x[[0, 1], :, [1, 2]]),
    ("lists-split-contiguous", lambda L: L.zeros(3, 4, 5), lambda x, L: x[[0, 1], :, [1, 2]]),
    ("lists-split-transposed", lambda L: L.zeros(3, 4, 5).transpose(0, 1),
     lambda x, L: x[[0, 1], :, [1, 2]]),
]


@pytest.mark.parametrize("make, index", [c[1:] for c in LAYOUT_CASES],
                         ids=[c[0] for c in LAYOUT_CASES])
def test_advanced_indexing_result_and_gradient_strides_match_torch(make, index):
    results = []
    for lib in (nbgrad, torch):
        x = make(lib).requires_grad_()
        y = index(x, lib)
        y.backward(lib.ones_like(y))
        results.append((tuple(y.shape), y.stride(), x.grad.stride()))
    assert results[0] == results[1]


def test_write_into_an_expanded_tensor_warns_at_the_callers_line():
    x = nbgrad.zeros(3).expand(2, 3)
    with pytest.warns(UserWarning, match="^Use of index_put_ on expanded tensors") as caught:
        x[[0]] = 1.0
        line = sys._getframe().f_lineno - 1
    assert [(w.filename, w.lineno) for w in caught] == [(__file__, line)]


def test_setitem_value_gradient_strides_match_torch():
    results = []
    for lib in (nbgrad, torch):
        base = lib.zeros(4, 3, 2, requires_grad=True)
        y = base.transpose(0, 2) * 1
        value = lib.ones(2, 2, 4, requires_grad=True) * 1
        value.retain_grad()
        y[:, [0, 1]] = value
        y.backward(lib.ones_like(y))
        results.append((value.grad.stride(), base.grad.stride()))
    assert results[0] == results[1]


@pytest.mark.parametrize("key", [c[1] for c in GET_CASES], ids=[c[0] for c in GET_CASES])
def test_getitem_result_follows_base_writes_only_when_a_view(key):
    results = []
    for lib in (nbgrad, torch):
        x = lib.tensor(BASE, dtype=lib.float64)
        y = x[build_key(key, lib)]
        x.mul_(-1.0)
        results.append((y.numpy().copy(), y._version))
    (values, version), (t_values, t_version) = results
    np.testing.assert_array_equal(values, t_values)
    assert version == t_version


def test_integer_index_gradients_accumulate_for_duplicates():
    x = nbgrad.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    x[[0, 2, 2, 2, 3, 0]].sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 0.0, 3.0, 1.0])
    x.grad = None
    x[nbgrad.tensor([[1, 1], [1, 3]])].sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 3.0, 0.0, 1.0])


def test_indexing_a_non_leaf_and_chains():
    results = []
    for lib in (nbgrad, torch):
        x = lib.tensor(BASE, dtype=lib.float64, requires_grad=True)
        y = (x * 2)[1:, [0, 3]][..., ::2][:, None, 0]
        (y * weights(lib, y.shape)).sum().backward()
        results.append((y.detach().numpy(), x.grad.numpy(), node_name(y.grad_fn)))
    (values, grad, name), (t_values, t_grad, t_name) = results
    np.testing.assert_array_equal(values, t_values)
    np.testing.assert_allclose(grad, t_grad, rtol=1e-12)
    assert name == t_name


@pytest.mark.parametrize("fn", [
    lambda x: x[1:, ::2, 3],
    lambda x: x[[0, 2, 0], 1:3],
    lambda x: x[x.detach() > 0],
    lambda x: x[..., None, [1, 1]] * x[0, 0, 0],
], ids=["basic", "advanced-duplicates", "mask", "mixed"])
def test_gradcheck(fn):
    x = nbgrad.tensor(np.random.default_rng(1).standard_normal(SHAPE), dtype=nbgrad.float64,
                      requires_grad=True)
    assert gradcheck(fn, (x,))


GET_ERRORS = [
    ("int-out-of-range", lambda L: L.zeros(3, 4)[3]),
    ("negative-out-of-range", lambda L: L.zeros(3, 4)[-4]),
    ("second-dim-out-of-range", lambda L: L.zeros(3, 4)[0, 4]),
    ("list-out-of-range", lambda L: L.zeros(3, 4)[[0, 3]]),
    ("tensor-out-of-range", lambda L: L.zeros(3, 4)[L.tensor([0, -4])]),
    ("0d-tensor-out-of-range", lambda L: L.zeros(3, 4)[L.tensor(3)]),
    ("too-many-indices", lambda L: L.zeros(3, 4)[0, 0, 0]),
    ("too-many-with-none", lambda L: L.zeros(3, 4)[None, 0, 0, slice(None)]),
    ("too-many-mask", lambda L: L.zeros(3, 4)[L.ones(3, 4, 2, dtype=L.bool)]),
    ("0d-index", lambda L: L.tensor(1.0)[0]),
    ("mask-shape", lambda L: L.zeros(3, 4, 5)[L.tensor([True, False])]),
    ("mask-shape-second", lambda L: L.zeros(3, 4, 5)[:, L.ones(4, 4, dtype=L.bool)]),
    ("mask-shape-2d", lambda L: L.zeros(3, 4, 5)[L.ones(3, 3, dtype=L.bool)]),
    ("mask-shape-after-ellipsis", lambda L: L.zeros(3, 4, 5)[..., L.ones(3, dtype=L.bool)]),
    ("mask-shape-after-none", lambda L: L.zeros(3, 4, 5)[None, L.ones(2, dtype=L.bool)]),
    ("index-shapes-mismatch", lambda L: L.zeros(3, 4)[[0, 1], [0, 1, 2]]),
    ("float-index", lambda L: L.zeros(3, 4)[1.5]),
    ("float-list-nan", lambda L: L.zeros(3, 4)[[float("nan")]]),
    ("float-list-huge", lambda L: L.zeros(3, 4)[[0.5, 1e30]]),
    ("float-list-out-of-range", lambda L: L.zeros(3, 4)[[3.5]]),
    ("float-tensor-index", lambda L: L.zeros(3, 4)[L.tensor([1.0, 2.0])]),
    ("float-0d-tensor-index", lambda L: L.zeros(3, 4)[L.tensor(0.5)]),
    ("float-empty-tensor-index", lambda L: L.zeros(3, 4)[L.tensor([])]),
    # Python-level indexing (the ints, too many indices) checks before the index kernel.
    ("float-tensor-then-int-out-of-range", lambda L: L.zeros(3, 4)[L.tensor([0.5]), 5]),
    ("float-tensor-too-many", lambda L: L.zeros(3, 4)[L.tensor([0.5]), 0, 0]),
    ("mask-shape-then-int-out-of-range",
     lambda L: L.zeros(2, 3)[L.tensor([True, False, True]), 5]),
    ("float-tensor-and-mask-shape", lambda L: L.zeros(3, 4)[L.tensor([0.5]), L.ones(2) > 0]),
    ("float-tensor-and-index-shapes", lambda L: L.zeros(3, 4)[L.tensor([0.5]), [0, 1, 2]]),
    ("object-index", lambda L: L.zeros(3, 4)[object()]),
    ("0d-int", lambda L: L.tensor(1.0)[0]),
    ("0d-slice", lambda L: L.tensor(1.0)[:]),
    ("0d-tuple", lambda L: L.tensor(1.0)[None, 0]),
    ("negative-step", lambda L: L.zeros(3, 4)[::-1]),
    ("zero-step", lambda L: L.zeros(3, 4)[::0]),
]


@pytest.mark.parametrize("fn", [c[1] for c in GET_ERRORS], ids=[c[0] for c in GET_ERRORS])
def test_getitem_errors_match_torch(fn):
    assert_same_error(fn)


def test_getitem_error_texts():
    x = nbgrad.zeros(3, 4)
    with pytest.raises(IndexError, match=r"^index 3 is out of bounds for dimension 0 with size 3$"):
        x[3]
    with pytest.raises(IndexError, match=r"^index 4 is out of bounds for dimension 1 with size 4$"):
        x[:, [1, 4]]
    with pytest.raises(IndexError, match=r"^too many indices for tensor of dimension 2$"):
        x[0, 0, 0]


# ------------------------------------------------------------ __setitem__
def V(*shape):
    """A value tensor that requires grad, built for either library."""
    return lambda L: L.tensor(np.linspace(-3.0, 3.0, int(np.prod(shape))).reshape(shape),
                              dtype=L.float64, requires_grad=True)


SET_CASES = [
    ("int-scalar", 1, 5.0), ("ints-scalar", (1, 2), 5.0),
    ("slice-step-scalar", slice(None, None, 2), 5.0),
    ("int-tensor", 1, V(4)), ("int-broadcast", 1, V(1)), ("int-0d", (0, 1), V()),
    ("column-tensor", (slice(None), 1), V(3)), ("column-broadcast", (slice(None), 1), V(1)),
    ("rows-broadcast", slice(1, 3), V(4)), ("rows-tensor", slice(1, 3), V(2, 4)),
    ("leading-ones-stripped", 0, V(1, 1, 4)), ("leading-one", slice(0, 1), V(1, 1, 4)),
    ("none-key", None, V(4)), ("ellipsis-tensor", Ellipsis, V(3, 4)), ("ellipsis-scalar", Ellipsis, 2.0),
    ("full-slices", (slice(None), slice(None)), V(4)), ("lone-full-slice", slice(None), 2.5),
    ("step-tensor", (slice(None), slice(None, None, 2)), V(3, 2)),
    ("list-tensor", [0, 2], V(2, 4)), ("list-broadcast", [0, 2], V(4)),
    ("list-duplicates", [0, 0], V(4)), ("list-scalar", [2, 0], -1.0),
    ("list-empty-scalar", [], 5.0), ("list-empty-tensor", [], V(4)),
    ("float-list-scalar", [1.7, -0.5], 5.0), ("float-list-tensor", [2.9], V(4)),
    ("slice-empty-scalar", (slice(None), slice(2, 2)), 5.0),
    ("mask", T([True, False, True], "bool"), V(4)),
    ("mask-2d", T([[True, False, True, False]] * 3, "bool"), V(6)),
    ("mask-2d-scalar", T([[True, False, True, False]] * 3, "bool"), 7.0),
    ("paired-lists-0d", ([0, 1], [1, 2]), V()), ("paired-lists-scalar", ([0, 1], [1, 2]), 3.0),
    ("list-then-slice", ([1, 2], slice(1, 3)), V(2)),
    ("0d-int-tensor-key", T(1), V(4)),
    ("0d-value-whole", Ellipsis, V()), ("0d-value-row", 0, V()), ("same-shape-value", 1, V(4)),
    ("bool-true", True, V(4)), ("bool-true-tuple", (True,), 2.0), ("bool-false-tuple", (False,), V(4)),
    ("bool-with-int", (0, True), V(4)), ("bool-with-list", (True, [0, 1]), V(4)),
    ("0d-bool-tensor-key", T(True, "bool"), V(4)),
]


@pytest.mark.parametrize("base_kind", ["non-leaf", "plain"])
@pytest.mark.parametrize("key, value", [c[1:] for c in SET_CASES], ids=[c[0] for c in SET_CASES])
def test_setitem_matches_torch(key, value, base_kind):
    """Values, the base's new history (CopySlices for a write through a view,
    IndexPutBackward for an advanced key), gradients to the base's source and
    to the value, and one version bump per write."""
    results = []
    for lib in (nbgrad, torch):
        x = lib.tensor(np.arange(1.0, 13.0).reshape(3, 4), dtype=lib.float64, requires_grad=True)
        y = x * 2 if base_kind == "non-leaf" else x.detach().clone()
        v = value(lib) if callable(value) else value
        before = y._version
        y[build_key(key, lib)] = v
        version_bump = y._version - before
        if y.requires_grad:
            (y * weights(lib, y.shape)).sum().backward()
        results.append((node_name(y.grad_fn), y.detach().numpy().copy(), version_bump, grad_or_none(x),
                        grad_or_none(v) if hasattr(v, "grad") else None))
    (name, values, bump, x_grad, v_grad), (t_name, t_values, t_bump, t_x_grad, t_v_grad) = results
    np.testing.assert_array_equal(values, t_values)
    assert name == t_name
    assert bump == t_bump == 1
    assert_same_arrays(x_grad, t_x_grad)
    assert_same_arrays(v_grad, t_v_grad)


def test_setitem_with_key_false_writes_nothing():
    for lib in (nbgrad, torch):
        x = lib.ones(3, requires_grad=True)
        y = x * 2
        y[False] = 5.0
        assert y._version == 0 and node_name(y.grad_fn) == "MulBackward"
        np.testing.assert_array_equal(y.detach().numpy(), [2.0, 2.0, 2.0])


def test_setitem_through_a_view_rebases_the_base():
    x = nbgrad.ones(2, 3, requires_grad=True)
    y = x * 3
    row = y[1]
    v = nbgrad.tensor([10.0, 20.0, 30.0], requires_grad=True)
    row[1:] = v[1:]
    assert node_name(y.grad_fn) == "CopySlices" and y._version == row._version == 1
    np.testing.assert_array_equal(y.detach().numpy(), [[3, 3, 3], [3, 20, 30]])
    (y * nbgrad.tensor([[1.0, 2, 3], [4, 5, 6]])).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[3, 6, 9], [12, 0, 0]])
    np.testing.assert_array_equal(v.grad.numpy(), [0, 5, 6])


def test_setitem_value_overlapping_the_target():
    """A value that is a copy (advanced indexing) or the very same elements is
    fine; one that partly overlaps the written region is refused, as in PyTorch."""
    for lib in (nbgrad, torch):
        y = lib.arange(6.0)
        y[[1, 2, 3]] = y[[0, 1, 2]]
        np.testing.assert_array_equal(y.numpy(), [0, 0, 1, 2, 4, 5])
        z = lib.arange(6.0)
        z[2:4] = z[2:4]  # the very same elements
        z[...] = z
        z[1:3] = z[[2, 1]]
        np.testing.assert_array_equal(z.numpy(), [0, 2, 1, 3, 4, 5])
        assert z._version == 3
    assert_same_error(lambda L: (lambda x: x.__setitem__(slice(1, None), x[:-1]))(L.arange(6.0)))
    assert_same_error(lambda L: (lambda x: x.__setitem__([1, 2, 3], x[0:3]))(L.arange(6.0)))
    assert_same_error(lambda L: (lambda x: x.__setitem__(slice(0, 3), x[1:4]))(L.arange(6.0)))


@pytest.mark.parametrize("dtype", ["int64", "bool", "float32"])
@pytest.mark.parametrize("key", [0, [0, 2], slice(None, None, 2)], ids=["int", "list", "slice"])
@pytest.mark.parametrize("value", [2.7, 3, True, 0], ids=["float", "int", "bool", "zero"])
def test_setitem_scalar_converts_to_the_tensor_dtype(dtype, key, value):
    results = []
    for lib in (nbgrad, torch):
        x = lib.zeros(3, 2, dtype=getattr(lib, dtype))
        x[key] = value
        results.append(x)
    assert results[0].dtype.__repr__().split(".")[-1] == dtype
    np.testing.assert_array_equal(results[0].numpy(), results[1].numpy())


def test_setitem_tensor_value_is_cast_for_basic_keys():
    for lib in (nbgrad, torch):
        x = lib.zeros(2, 3, dtype=lib.int64)
        x[0] = lib.tensor([1.7, -2.2, 3.9])
        x[1] = lib.tensor([True, False, True])
        np.testing.assert_array_equal(x.numpy(), [[1, -2, 3], [1, 0, 1]])


def test_setitem_gradcheck():
    def fn(x, v):
        y = x * 1
        y[1:, ::2] = v
        y[[0, 2]] = v[0, :1] * 2  # (duplicate indices: PyTorch's value gradient counts each)
        return y

    x = nbgrad.tensor(np.random.default_rng(2).standard_normal((3, 4)), dtype=nbgrad.float64,
                      requires_grad=True)
    v = nbgrad.tensor(np.random.default_rng(3).standard_normal((2, 2)), dtype=nbgrad.float64,
                      requires_grad=True)
    assert gradcheck(fn, (x, v))


SET_ERRORS = [
    ("leaf-basic", lambda L: L.zeros(3, 4, requires_grad=True).__setitem__(0, 1.0)),
    ("leaf-advanced", lambda L: L.zeros(3, 4, requires_grad=True).__setitem__([0], 1.0)),
    ("basic-shape", lambda L: L.zeros(3, 4).__setitem__(0, L.ones(5))),
    ("basic-too-many-dims", lambda L: L.zeros(3, 4).__setitem__(0, L.ones(2, 4))),
    ("advanced-shape", lambda L: L.zeros(3, 4).__setitem__([0, 1], L.ones(5))),
    ("advanced-shape-2d", lambda L: L.zeros(3, 4).__setitem__([0, 1], L.ones(2, 5))),
    ("mask-value-count", lambda L: L.zeros(3).__setitem__(L.tensor([True, False, True]), L.ones(3))),
    ("advanced-dtype", lambda L: L.zeros(3, dtype=L.int64).__setitem__([0], L.tensor([2.7]))),
    ("advanced-dtype-0d", lambda L: L.zeros(3).__setitem__([0, 1], L.tensor(5))),
    ("advanced-dtype-double", lambda L: L.zeros(3).__setitem__([0], L.tensor([1.0], dtype=L.float64))),
    ("out-of-range", lambda L: L.zeros(3, 4).__setitem__(3, 1.0)),
    ("list-out-of-range", lambda L: L.zeros(3, 4).__setitem__([0, 5], 1.0)),
    ("too-many-indices", lambda L: L.zeros(3, 4).__setitem__((0, 1, 2), 1.0)),
    ("string-value", lambda L: L.zeros(3, 4).__setitem__(0, "a")),
    ("list-value", lambda L: L.zeros(3, 4).__setitem__(0, [1.0, 2.0, 3.0, 4.0])),
    ("list-value-advanced", lambda L: L.zeros(3, 4).__setitem__([0], [1.0, 2.0, 3.0, 4.0])),
    # index_put_ refuses the very tensor it writes into, even where its layout
    # (expanded) is too hard to tell; a basic key's copy_ is fine with it.
    ("advanced-itself-expanded", lambda L: (lambda e: e.__setitem__([0, 1], e))(
        L.tensor([1.0, 2.0, 3.0]).expand(2, 3))),
    ("mask-itself-expanded", lambda L: (lambda e: e.__setitem__(L.tensor([True, False]), e))(
        L.tensor([1.0, 2.0, 3.0]).expand(2, 3))),
    # index_put_'s order: overlap, then shapes, then dtypes
    ("overlap-before-shape", lambda L: (lambda x: x.__setitem__([0, 1], x))(L.arange(6.0))),
    ("shape-before-dtype", lambda L: L.arange(6.0).__setitem__([0, 1], L.arange(6))),
]


@pytest.mark.parametrize("fn", [c[1] for c in SET_ERRORS], ids=[c[0] for c in SET_ERRORS])
def test_setitem_errors_match_torch(fn):
    assert_same_error(fn)


# Indexing that selects no element: PyTorch's index kernels never run, so
# their indices are not range-checked; an index into an empty dimension that
# would select some is refused up front.
EMPTY_CASES = [
    ("rows-of-no-columns", (2, 0), [1]), ("out-of-range-rows-of-no-columns", (2, 0), [5, -9]),
    ("no-rows", (0, 3), []), ("out-of-range-columns-of-no-rows", (0, 3), (slice(None), [7])),
    ("paired-with-empty", (3, 2), ([5], [])), ("empty-mask", (0, 3), T([], "bool")),
    ("then-empty-slice", (2, 3), ([5], slice(0, 0))), ("float-list", (2, 0), [1.5]),
]


@pytest.mark.parametrize("write", [None, "scalar", "tensor"])
@pytest.mark.parametrize("shape, key", [c[1:] for c in EMPTY_CASES],
                         ids=[c[0] for c in EMPTY_CASES])
def test_indexing_that_selects_nothing_matches_torch(shape, key, write):
    results = []
    for lib in (nbgrad, torch):
        x = lib.zeros(shape, dtype=lib.float64, requires_grad=True)
        y = x * 2
        v = lib.ones(1, dtype=lib.float64, requires_grad=True)
        if write is None:
            out = y[build_key(key, lib)]
        else:
            y[build_key(key, lib)] = 3.0 if write == "scalar" else v
            out = y
        out.sum().backward()
        results.append((tuple(out.shape), y._version, grad_or_none(x), grad_or_none(v)))
    (shape_, version, x_grad, v_grad), (t_shape, t_version, t_x_grad, t_v_grad) = results
    assert shape_ == t_shape and version == t_version
    assert_same_arrays(x_grad, t_x_grad)
    assert_same_arrays(v_grad, t_v_grad)


@pytest.mark.parametrize("write", [False, True])
@pytest.mark.parametrize("shape, key", [((0, 3), [0]), ((2, 0), (slice(None), [0, 1])),
                                        ((2, 0), (0, [-1])), ((0,), T([0])), ((2, 3), [5])],
                         ids=["rows", "columns", "int-then-list", "tensor", "in-range-dims"])
def test_indices_into_an_empty_dimension_are_refused_like_torch(shape, key, write):
    def index(lib):
        x = lib.zeros(shape)
        if write:
            x[build_key(key, lib)] = 1.0
        return x[build_key(key, lib)]
    assert_same_error(index)


MASKED_FILLS = [
    ("bool-target-float-value", lambda L: L.tensor([1.0, 3.0]) < 2, lambda L, x: L.tensor([1.0])),
    ("itself", lambda L: L.tensor([1.0]) > 0, lambda L, x: x),
    ("int-value-0d", lambda L: L.arange(3.0), lambda L, x: L.tensor(7)),
    ("double-value", lambda L: L.arange(3.0), lambda L, x: L.tensor([2.5], dtype=L.float64)),
]


@pytest.mark.parametrize("make, value", [c[1:] for c in MASKED_FILLS],
                         ids=[c[0] for c in MASKED_FILLS])
def test_a_lone_mask_and_a_one_element_value_fill_like_torch(make, value):
    """PyTorch's index_put_ hands them to masked_fill_, which checks neither
    dtypes nor overlaps (it takes the value's item)."""
    results = []
    for lib in (nbgrad, torch):
        x = make(lib)
        x[x.bool() if x.dtype == lib.bool else x > 0] = value(lib, x)
        results.append((x.tolist(), x._version))
    assert results[0] == results[1]


def test_refused_setitem_changes_nothing():
    y = nbgrad.ones(3, 4) * 1
    for key, value in ((0, nbgrad.ones(5)), ([0, 1], nbgrad.ones(5)), ([0, 9], 2.0)):
        with pytest.raises((RuntimeError, IndexError)):
            y[key] = value
    assert y._version == 0 and (y.numpy() == 1).all()


# ------------------------------------------------------------- properties
@st.composite
def basic_keys(draw, shape):
    """Ints (possibly negative), slices with positive steps, None and at most
    one Ellipsis, as PyTorch accepts them."""
    items, dim = [], 0
    ellipsis_at = draw(st.one_of(st.none(), st.integers(0, len(shape))))
    while dim < len(shape):
        if ellipsis_at == dim:
            items.append(Ellipsis)
            ellipsis_at = None
            dim = draw(st.integers(dim, len(shape)))
            continue
        if draw(st.booleans()) and draw(st.booleans()):
            items.append(None)
        n = shape[dim]
        kind = draw(st.sampled_from(["int", "slice", "stop"]))
        if kind == "stop":
            break
        if kind == "int":
            items.append(draw(st.integers(-n, n - 1)))
        else:
            start = draw(st.one_of(st.none(), st.integers(-n - 1, n + 1)))
            stop = draw(st.one_of(st.none(), st.integers(-n - 1, n + 1)))
            step = draw(st.one_of(st.none(), st.integers(1, 3)))
            items.append(slice(start, stop, step))
        dim += 1
    return tuple(items)


@given(st.lists(st.integers(1, 4), min_size=1, max_size=3).flatmap(
    lambda shape: st.tuples(st.just(tuple(shape)), basic_keys(tuple(shape)))))
def test_basic_indexing_matches_numpy(case):
    shape, key = case
    array = np.arange(float(np.prod(shape))).reshape(shape)
    x = nbgrad.tensor(array, dtype=nbgrad.float64, requires_grad=True)
    y = x[key]
    expected = array[key]
    assert y.shape == expected.shape
    np.testing.assert_array_equal(y.detach().numpy(), expected)
    assert y._base is x and (shares_memory(y, x) or expected.size == 0)
    y.sum().backward()
    counts = np.zeros(shape)
    counts[key] += 1  # basic keys select each element at most once
    np.testing.assert_array_equal(x.grad.numpy(), counts)


@given(st.integers(1, 5).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.integers(-n, n - 1), min_size=0, max_size=8))))
def test_integer_array_indexing_matches_numpy(case):
    n, index = case
    array = np.arange(float(n * 2)).reshape(n, 2)
    x = nbgrad.tensor(array, dtype=nbgrad.float64, requires_grad=True)
    y = x[nbgrad.tensor(index, dtype=nbgrad.int64)]
    np.testing.assert_array_equal(y.detach().numpy(), array[np.array(index, dtype=np.int64)])
    assert not shares_memory(y, x)
    y.sum().backward()
    counts = np.zeros_like(array)
    np.add.at(counts, np.array(index, dtype=np.int64), 1.0)
    np.testing.assert_array_equal(x.grad.numpy(), counts)


# ------------------------------------------------------------ on every device
MASK = np.array([[True, False, True], [False, False, True], [True, True, False]])


def _keys(lib, device="cpu"):
    """Keys for a (3, 3) tensor; nbgrad's index tensors live on ``device``."""
    def on(values):
        return lib.tensor(values, **on_device(lib, device))
    index = on([2, 0, 2])
    return {
        "int": 1, "negative": -1, "slice": slice(1, None),
        "step": (slice(None), slice(None, None, 2)), "none": (None, 1), "ellipsis": (Ellipsis, 0),
        "int-slice": (1, slice(0, 2)), "list": [0, 2, 2], "tensor": index,
        "tensor-pair": (index, on([1, 1, 0])), "tensor-slice": (slice(1, None), index[:2]),
        "int-tensor": (1, index), "mask": on(MASK), "row-mask": on([True, False, True]),
        "mask-slice": (slice(None), on([False, True, True])), "numpy-mask": MASK,
        "0d-index": on(2), "bool": True, "2d-index": on([[0, 1], [2, 2]]),
    }


def _key(x, name):
    return _keys(lib_of(x), x.device)[name]


KEYS = sorted(_keys(nbgrad))


@pytest.mark.parametrize("name", KEYS)
def test_getitem_on_the_device_matches_torch(name, device):
    """Values and gradients; a view (same strides and offset) exactly where torch gives one."""
    run_like_torch(lambda x: x[_key(x, name)] * 3, values((3, 3), 1), device=device)
    ours, theirs = nbgrad.tensor(values((3, 3), 1), device=device), torch.tensor(values((3, 3), 1))
    a, b = ours[_key(ours, name)], theirs[_key(theirs, name)]
    assert (a._base is not None) == (b._base is not None)
    if a._base is not None:
        assert (a.stride(), a.storage_offset()) == (b.stride(), b.storage_offset())


@pytest.mark.parametrize("value", ["number", "tensor", "broadcast", "grad"])
@pytest.mark.parametrize("name", KEYS)
def test_setitem_on_the_device_matches_torch(name, value, device):
    """A write into a non-leaf (so the history is rebased: CopySlices or
    IndexPut), with a number, a tensor of the region's shape, a broadcast
    one, or one that requires grad."""
    region = torch.tensor(values((3, 3), 2))[_keys(torch)[name]].shape

    def fn(x, v):
        y = x * 1
        key = _key(x, name)
        if value == "number":
            y[key] = -4.5
        elif value == "broadcast":
            y[key] = v[..., :1].sum() if not region else v.reshape(-1)[:1].expand(region[-1:])
        else:
            source = v if value == "grad" else v.detach()
            y[key] = source.reshape(-1)[:max(1, int(np.prod(region)))].reshape(region)
        return y * x
    run_like_torch(fn, values((3, 3), 4), values((27,), 3), device=device, dtype=nbgrad.float64)


def test_setitem_with_repeated_indices_matches_torch(device):
    """Repeated positions: one of the writes wins (here, all equal)."""
    ours, theirs = nbgrad.zeros(3, device=device), torch.zeros(3)
    for t in (ours, theirs):
        t[_keys(lib_of(t), t.device)["tensor"]] = 5.0
    assert_same_tensor(ours, theirs)


def test_gather_gradient_accumulates_repeated_indices_like_torch(device):
    def fn(x):
        return x[lib_of(x).tensor([0, 0, 2, 0], device=x.device)]
    out, want = run_like_torch(fn, values((3, 2), 5), device=device)
    assert node_name(out.grad_fn) == node_name(want.grad_fn)


def test_integer_tensor_indexing_and_writes_match_torch(device):
    ours = nbgrad.tensor(np.arange(12).reshape(3, 4), device=device)
    theirs = torch.tensor(np.arange(12).reshape(3, 4))
    for t in (ours, theirs):
        t[t > 6] = 0
        t[0, ::2] = lib_of(t).tensor([-1, -2], device=t.device)
    assert_same_tensor(ours, theirs)
    assert_same_tensor(ours[nbgrad.tensor([2, 0], device=device)], theirs[torch.tensor([2, 0])])


@pytest.mark.parametrize("call", [
    lambda t: t[3], lambda t: t[0, 0, 0], lambda t: t[[0, 5]],
    lambda t: t[np.array([True, False])], lambda t: t[0.5],
    lambda t: t[lib_of(t).tensor([0.0], device=t.device)],
    lambda t: t.__setitem__((slice(None),), lib_of(t).ones(2, 2, device=t.device)),
    lambda t: t.__setitem__([0, 1], lib_of(t).ones(3, 3, device=t.device)),
    lambda t: t.__setitem__([0, 1], lib_of(t).ones(3, dtype=lib_of(t).float64, device=t.device)),
], ids=["int-range", "too-many", "list-range", "mask-shape", "float",
        "float-tensor", "set-shape", "put-shape", "put-dtype"])
def test_index_errors_on_the_device_match_torch(call, device):
    raises_like_torch(call, values((3, 3), 6), device=device)


# ---------------------------------------------------------- across devices
@cuda_only
def test_cuda_indices_into_a_cpu_tensor_are_refused(device):
    with pytest.raises(RuntimeError, match=r"^indices should be either on cpu or on the same "
                                           r"device as the indexed tensor \(cpu\)$"):
        nbgrad.ones(3)[nbgrad.tensor([0, 1], device=device)]


@cuda_only
def test_cpu_indices_into_a_cuda_tensor_are_read_on_the_host(device):
    ours = nbgrad.tensor(values((3,), 7), device=device)[nbgrad.tensor([2, 0])]
    assert ours.device.type == device
    assert_same_tensor(ours, torch.tensor(values((3,), 7))[torch.tensor([2, 0])])


@cuda_only
def test_basic_setitem_copies_across_devices_as_copy_does(device):
    """A basic key writes with copy_, which copies across devices (taped)."""
    source = nbgrad.tensor([1.0, 2.0], requires_grad=True)
    target = nbgrad.zeros(2, 2, device=device) * 1
    target[0] = source
    assert target.tolist() == [[1.0, 2.0], [0.0, 0.0]]
    (target * 3).sum().backward()
    assert not source.grad.is_cuda and source.grad.tolist() == [3.0, 3.0]
    host_target = nbgrad.zeros(2, 2)
    host_target[:, 1] = nbgrad.tensor([5.0, 6.0], device=device)
    assert host_target.tolist() == [[0.0, 5.0], [0.0, 6.0]]


@cuda_only
def test_advanced_setitem_refuses_a_value_on_another_device(device):
    mixed = f"^{re.escape(MIXED.format('cuda:0', 'cpu'))}$"
    cuda = nbgrad.zeros(3, device=device)
    with pytest.raises(RuntimeError, match=mixed):
        cuda[[0, 2]] = nbgrad.ones(2)
    with pytest.raises(RuntimeError, match=mixed):
        nbgrad.zeros(3)[[0, 2]] = nbgrad.ones(2, device=device)
    assert cuda._version == 0


@cuda_only
def test_a_zero_dim_value_moves_to_the_indexed_tensors_device(device):
    cuda = nbgrad.zeros(3, dtype=nbgrad.float64, device=device)
    cpu = nbgrad.zeros(3, dtype=nbgrad.float64)
    cuda[[0, 2]] = nbgrad.tensor(4.0, dtype=nbgrad.float64)
    cpu[nbgrad.tensor([0, 2])] = nbgrad.tensor(4.0, dtype=nbgrad.float64, device=device)
    assert cuda.tolist() == cpu.tolist() == [4.0, 0.0, 4.0]


# -- higher-order gradients (create_graph=True): advanced indexing's gradient
# is an index_put (accumulating) into zeros, whose gradient is the gather
# again; index_put_'s are the gradient with the written elements zeroed (its
# own gradient) and the gather.
def _mask(lib, rows):
    return lib.tensor([True, False, True]) if rows else lib.tensor(
        [[True, False, False, True], [False, True, False, False], [True, True, False, False]])


GATHERS = {
    "list": lambda x: x[[0, 2, 0]], "columns": lambda x: x[:, [3, 1, 1]],
    "pair": lambda x: x[[0, 2], [1, 3]], "mask": lambda x: x[_mask(lib_of(x), True)],
    "mask-2d": lambda x: x[_mask(lib_of(x), False)], "slice-then-list": lambda x: x[1:, [0, 2]],
    "none-list": lambda x: x[None, [1, 2]], "empty": lambda x: x[[]],
}


@pytest.mark.parametrize("name", sorted(GATHERS))
def test_index_second_derivatives_on_the_device_match_torch(name, device):
    op = GATHERS[name]
    second_derivatives_like_torch(lambda x: op(x.sin()).sin(), values((3, 4), 21), device=device)
    second_derivatives_like_torch(op, values((3, 4), 22), device=device)


def _written(key, value_shape):
    def write(x, v):
        y = x.sin()
        y[key(lib_of(x))] = v.sin()
        return y.sin()
    write.value_shape = value_shape
    return write


WRITES = {
    "list": _written(lambda lib: [0, 2], (2, 4)),
    "list-broadcast-value": _written(lambda lib: [0, 2], (4,)),
    "mask": _written(lambda lib: _mask(lib, True), (2, 4)),
    "mask-2d": _written(lambda lib: _mask(lib, False), (5,)),
    "pair": _written(lambda lib: ([0, 2], [1, 3]), (2,)),
    "select-then-list": _written(lambda lib: (1, [0, 2]), (2,)),  # through a view: CopySlices
    "empty": _written(lambda lib: [], (4,)),
}


@pytest.mark.parametrize("name", sorted(WRITES))
def test_index_put_second_derivatives_on_the_device_match_torch(name, device):
    write = WRITES[name]
    second_derivatives_like_torch(write, values((3, 4), 23), values(write.value_shape, 24),
                                  device=device)


@pytest.mark.parametrize("name", sorted(GATHERS))
def test_index_gradgradcheck(name):
    op = GATHERS[name]
    x = nbgrad.tensor(values((3, 4), 25), dtype=nbgrad.float64, requires_grad=True)
    assert gradgradcheck(lambda t: op(t) * op(t).sin(), [x])


@pytest.mark.parametrize("name", sorted(WRITES))
def test_index_put_gradgradcheck(name):
    write = WRITES[name]
    x = nbgrad.tensor(values((3, 4), 26), dtype=nbgrad.float64, requires_grad=True)
    v = nbgrad.tensor(values(write.value_shape, 27), dtype=nbgrad.float64, requires_grad=True)
    assert gradgradcheck(write, [x, v])


def test_index_gradients_to_third_order_name_their_nodes_as_torch():
    """index's gradient is IndexPutImpl's result, whose gradient is index's."""
    names = {}
    for lib in (nbgrad, torch):
        x = leaf(lib, values((3, 4), 28), nbgrad.float64, requires_grad=True)
        g = leaf(lib, values((3, 4), 29), nbgrad.float64, requires_grad=True)
        (first,) = lib.autograd.grad(x[[0, 2, 0]], x, g, create_graph=True)
        w = leaf(lib, values((3, 4), 30), nbgrad.float64, requires_grad=True)
        (second,) = lib.autograd.grad(first, g, w, create_graph=True)
        (third,) = lib.autograd.grad(second, w, g, create_graph=True)
        names[lib] = [node_name(t.grad_fn) for t in (first, second, third)]
        assert_same_tensor(third, first.detach())  # the gradient of a gather is index_put's
    assert names[nbgrad] == names[torch] == ["IndexPutImplBackward", "IndexBackward",
                                             "IndexPutImplBackward"]
