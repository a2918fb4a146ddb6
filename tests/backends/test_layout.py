"""The layout rules of nbgrad/backends/layout.py against PyTorch's own
choices (TensorIterator for elementwise outputs, preserve_format for copies),
on raw NumPy arrays with torch's strides: pure
Python, no kernels, so every pair of layouts is cheap to try."""
import itertools

import numpy as np
import pytest
import torch

from nbgrad.backends import cpu, layout

# torch tensors of the layouts that matter: dense in some order, not dense,
# broadcast, with size-1 dimensions of odd strides, 0-d.
LAYOUTS = {
    "contiguous": lambda: torch.ones(3, 4),
    "transposed": lambda: torch.ones(4, 3).t(),
    "permuted-3d": lambda: torch.ones(2, 3, 4).permute(2, 0, 1),
    "permuted-3d-b": lambda: torch.ones(2, 3, 4).permute(1, 2, 0),
    "stepped": lambda: torch.ones(3, 8)[:, ::2],
    "stepped-transposed": lambda: torch.ones(8, 3)[::2].t(),
    "expanded": lambda: torch.ones(3, 1).expand(3, 4),
    "expanded-row": lambda: torch.ones(4).expand(3, 4),
    "size-1-permuted": lambda: torch.ones(2, 1, 3).permute(2, 1, 0),
    "size-1-transposed": lambda: torch.ones(3, 1).t(),
    "column-of-transposed": lambda: torch.ones(3, 4).t()[:, :1],
    "channels-last": lambda: torch.ones(2, 3, 4, 5).permute(0, 2, 3, 1),
    "permuted-4d": lambda: torch.ones(2, 3, 4, 5).permute(3, 1, 0, 2),
    "row": lambda: torch.ones(4),
    "0d": lambda: torch.tensor(2.0),
}


def array(t):
    """A NumPy array with ``t``'s shape and strides."""
    extent = 1 + sum((n - 1) * s for n, s in zip(t.shape, t.stride()))
    return np.lib.stride_tricks.as_strided(np.zeros(extent, np.float32), tuple(t.shape),
                                           tuple(4 * s for s in t.stride()))


def c_strides(shape):
    return torch.empty(shape).stride()


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_unary_and_copy_layouts_match_torch(name):
    t = LAYOUTS[name]()
    a, shape = array(t), tuple(t.shape)
    assert (layout.elementwise_strides(shape, [a]) or c_strides(shape)) == t.sigmoid().stride()
    assert (layout.elementwise_strides(shape, [a], numbers=True) or c_strides(shape)) == \
        (t * 2).stride()
    assert (layout.preserve_strides(a) or c_strides(shape)) == t.clone().stride()
    assert (layout.preserve_strides(a) or c_strides(shape)) == torch.empty_like(t).stride()


def test_binary_layouts_match_torch():
    """Every pair that broadcasts (a 0-d tensor included)."""
    checked = 0
    for (n1, f1), (n2, f2) in itertools.product(LAYOUTS.items(), repeat=2):
        a, b = f1(), f2()
        try:
            want = (a + b).stride()
        except RuntimeError:
            continue
        shape = tuple(torch.broadcast_shapes(a.shape, b.shape))
        got = layout.elementwise_strides(shape, [array(a), array(b)]) or c_strides(shape)
        assert got == want, (n1, n2)
        checked += 1
    assert checked > 100


def test_mixed_dtype_layouts_match_torch():
    """Every pair that broadcasts, one of them float64: PyTorch's CPU
    TensorIterator first casts the float32 operand (``to``, preserve_format),
    so an expanded or stepped one counts as C order."""
    checked = 0
    for (n1, f1), (n2, f2) in itertools.product(LAYOUTS.items(), repeat=2):
        a, b = f1(), f2()
        extent = 1 + sum((n - 1) * s for n, s in zip(b.shape, b.stride()))
        wide = torch.as_strided(torch.ones(extent, dtype=torch.float64), b.shape, b.stride())
        try:
            want = (a + wide).stride()
        except RuntimeError:
            continue
        shape = tuple(torch.broadcast_shapes(a.shape, b.shape))
        casts = (b.ndim > 0, False)  # a is cast to float64 (a 0-d b takes no part in promotion)
        got = layout.elementwise_strides(shape, [array(a), array(b)], casts=casts) or \
            c_strides(shape)
        assert got == want, (n1, n2)
        checked += 1
    assert checked > 100


def test_empty_allocates_the_strides_asked_for():
    out = layout.empty(cpu, (3, 4), (1, 3), np.float64)
    assert out.strides == (8, 24) and out.flags.writeable
    assert layout.empty(cpu, (3, 4), None, np.float64).flags.c_contiguous


# Inputs of cat/stack (4-D and 5-D ones too: PyTorch suggests channels_last
# formats from strides), each a list of same-shaped torch tensors.
JOIN_INPUTS = {
    "transposed": lambda: [torch.ones(3, 2).t()] * 2,
    "transposed-and-contiguous": lambda: [torch.ones(3, 2).t(), torch.ones(2, 3)],
    "permuted-3d": lambda: [torch.ones(2, 3, 4).permute(2, 0, 1)] * 3,
    "permuted-3d-last-dim-1": lambda: [torch.ones(2, 3, 1).transpose(1, 2)] * 2,
    "channels-last": lambda: [torch.ones(2, 4, 5, 3).permute(0, 3, 1, 2)] * 2,
    "channels-last-stepped": lambda: [torch.ones(2, 3, 8, 5).to(
        memory_format=torch.channels_last)[:, :, ::2]] * 2,
    "channels-last-one-channel": lambda: [torch.ones(2, 1, 4, 5).to(
        memory_format=torch.channels_last)] * 2,
    "channels-last-one-batch": lambda: [torch.ones(1, 3, 4, 5).to(
        memory_format=torch.channels_last)] * 2,
    "channels-last-and-contiguous": lambda: [
        torch.ones(2, 3, 4, 5).to(memory_format=torch.channels_last), torch.ones(2, 3, 4, 5)],
    "permuted-4d-not-channels-last": lambda: [torch.ones(2, 3, 4, 5).permute(0, 2, 3, 1)] * 2,
    "ambiguous-n111": lambda: [torch.ones(2, 1, 1, 1)] * 2,
    "channels-last-3d": lambda: [torch.ones(2, 3, 4, 5, 2).to(
        memory_format=torch.channels_last_3d)] * 2,
    "channels-last-3d-and-permuted": lambda: [
        torch.ones(2, 3, 4, 5, 2).to(memory_format=torch.channels_last_3d),
        torch.ones(2, 3, 4, 5, 2).permute(0, 1, 4, 3, 2).transpose(2, 4)],
    "channels-last-empty": lambda: [torch.ones(0, 3, 4, 5).to(
        memory_format=torch.channels_last)] * 2,
    "size-1-odd-strides": lambda: [torch.ones(4).as_strided((1, 1, 2, 1), (2, 1, 2, 1))] * 3,
}


@pytest.mark.parametrize("name", sorted(JOIN_INPUTS))
def test_cat_and_stack_layouts_match_torch(name):
    """Every dim (negative ones included), and the legacy 1-D empty input that
    cat skips but whose (contiguous) format still counts."""
    tensors = JOIN_INPUTS[name]()
    arrays = [array(t) for t in tensors]
    ndim = tensors[0].ndim
    for dim in range(-ndim, ndim):
        want = torch.cat(tensors, dim)
        assert (layout.cat_strides(tuple(want.shape), arrays) or c_strides(want.shape)) == \
            want.stride(), dim
        with_legacy = torch.cat(tensors + [torch.ones(0)], dim)
        assert (layout.cat_strides(tuple(want.shape), arrays + [array(torch.ones(0))])
                or c_strides(want.shape)) == with_legacy.stride(), dim
    for dim in range(ndim + 1):
        want = torch.stack(tensors, dim)
        assert (layout.stack_strides(tuple(want.shape), arrays, dim) or c_strides(want.shape)) \
            == want.stride(), dim


@pytest.mark.parametrize("name", ["channels-last", "channels-last-one-channel",
                                  "size-1-odd-strides", "transposed", "permuted-3d"])
def test_view_strides_match_torch(name):
    """PyTorch's view: every split of a dim in two, and every merge of two
    neighbours that a view allows."""
    t = JOIN_INPUTS[name]()[0]
    shape, strides = tuple(t.shape), t.stride()
    checked = 0
    for d, n in enumerate(shape):
        for k in range(1, n + 1):
            if n % k:
                continue
            new = shape[:d] + (k, n // k) + shape[d + 1:]
            assert layout.view_strides(shape, strides, new) == t.view(new).stride()
            checked += 1
    for d in range(len(shape) - 1):
        new = shape[:d] + (shape[d] * shape[d + 1],) + shape[d + 2:]
        try:
            want = t.view(new).stride()
        except RuntimeError:
            want = None
        assert layout.view_strides(shape, strides, new) == want
    assert checked


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_c_order_gives_torch_contiguous_strides(name):
    """Reductions' results: torch's contiguous strides exactly, size-1 dims
    too; a C-contiguous array whose size-1 strides differ becomes a view."""
    t = LAYOUTS[name]()
    a = array(t)
    out = layout.c_order(cpu, a)
    assert tuple(s // 4 for s in out.strides) == c_strides(t.shape)
    np.testing.assert_array_equal(out, a)
    assert (out is a) == (t.stride() == c_strides(t.shape))
    assert np.shares_memory(out, a) == a.flags.c_contiguous
