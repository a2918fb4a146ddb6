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


def test_empty_allocates_the_strides_asked_for():
    out = layout.empty(cpu, (3, 4), (1, 3), np.float64)
    assert out.strides == (8, 24) and out.flags.writeable
    assert layout.empty(cpu, (3, 4), None, np.float64).flags.c_contiguous
