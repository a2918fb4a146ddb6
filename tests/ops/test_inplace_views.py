"""The in-place view ops and as_strided (nbgrad/ops/inplace_views.py,
nbgrad/ops/views.py) against PyTorch: shape, strides, values, the version
bump, the node name and gradients, on every device; errors (bad dims, a leaf
that requires grad, out-of-bounds storage) with nothing changed; a value saved
before the op goes stale."""
import numpy as np
import pytest
import torch

import nbgrad
from helpers import assert_close, assert_same_error, node_name, on_device

TESTED_OPS = {"unsqueeze_", "squeeze_", "t_", "transpose_", "swapdims_", "swapaxes_",
              "as_strided", "as_strided_"}

X = np.arange(24.0).reshape(2, 3, 4) / 7 - 1
CASES = {  # name -> (shape of the input taken from X, the in-place call)
    "unsqueeze_": ((2, 3, 4), lambda t: t.unsqueeze_(1)),
    "unsqueeze_-last": ((2, 3, 4), lambda t: t.unsqueeze_(-1)),
    "squeeze_": ((2, 1, 3, 1, 4), lambda t: t.squeeze_()),
    "squeeze_-dim": ((2, 1, 3, 1, 4), lambda t: t.squeeze_(3)),
    "squeeze_-dims": ((2, 1, 3, 1, 4), lambda t: t.squeeze_((1, 3))),
    "t_": ((6, 4), lambda t: t.t_()),
    "t_-1d": ((24,), lambda t: t.t_()),
    "transpose_": ((2, 3, 4), lambda t: t.transpose_(0, 2)),
    "swapdims_": ((2, 3, 4), lambda t: t.swapdims_(1, -1)),
    "swapaxes_": ((2, 3, 4), lambda t: t.swapaxes_(0, 1)),
    "as_strided_": ((2, 3, 4), lambda t: t.as_strided_((3, 3), (2, 1), 1)),
    "as_strided_-overlap": ((2, 3, 4), lambda t: t.as_strided_((4, 4), (1, 1))),
}


def _run(lib, shape, call, device="cpu", view=False):
    leaf = lib.tensor(X.reshape(shape), requires_grad=True, **on_device(lib, device))
    y = leaf * 1
    if view:  # through a view of a non-leaf: the base's counter is bumped
        y = y[:]
    version = y._version
    out = call(y)
    assert out is y
    w = lib.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)), **on_device(lib, device))
    (y * w).sum().backward()
    return y, y._version - version, leaf.grad


@pytest.mark.parametrize("view", [False, True], ids=["tensor", "view"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_like_torch(name, view, device):
    shape, call = CASES[name]
    y, bumped, grad = _run(nbgrad, shape, call, device, view)
    want, want_bumped, want_grad = _run(torch, shape, call, view=view)
    assert tuple(y.shape) == tuple(want.shape) and y.stride() == want.stride()
    assert bumped == want_bumped == 1
    assert node_name(y.grad_fn) == node_name(want.grad_fn)
    assert_close(y.detach(), want.detach())
    assert_close(grad, want_grad)


def test_the_view_stays_in_the_storage():
    """Writes through the reshaped tensor reach the memory it shares."""
    base = nbgrad.zeros(2, 3)
    alias = base.detach()
    alias.t_().unsqueeze_(0)[0, 2, 1] = 5.0
    assert base[1, 2].item() == 5.0 and tuple(alias.shape) == (1, 3, 2)
    assert base._version == alias._version == 3


def test_a_value_saved_before_goes_stale():
    for lib in (nbgrad, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 1
        z = y.exp()  # saves its result
        z.unsqueeze_(0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.sum().backward()


@pytest.mark.parametrize("call", [
    lambda L: L.tensor([1.0, 2.0], requires_grad=True).unsqueeze_(0),
    lambda L: L.tensor([[1.0, 2.0]], requires_grad=True)[0].unsqueeze_(0),
    lambda L: L.zeros(2, 3).unsqueeze_(3),
    lambda L: L.zeros(2, 3).squeeze_(2),
    lambda L: L.zeros(2, 3).transpose_(0, 2),
    lambda L: L.zeros(2, 3, 4).t_(),
    lambda L: L.zeros(2, 3).as_strided_((2, 3), (3, 1), 1),
    lambda L: L.zeros(2, 3).as_strided((2,), (-1,)),
    lambda L: L.zeros(2, 3).as_strided((2, 2), (1,)),
    lambda L: L.zeros(2, 3).as_strided((7,), (1,)),
])
def test_bad_calls_are_refused_like_torch_and_change_nothing(call):
    assert_same_error(call)
    t = nbgrad.zeros(2, 3)
    with pytest.raises((RuntimeError, IndexError)):
        t.as_strided_((2, 3), (3, 1), 1)
    assert tuple(t.shape) == (2, 3) and t._version == 0


@pytest.mark.parametrize("args", [((2, 2), (1, 2)), ((2, 2), (1, 2), 3), ((3, 3), (1, 1)),
                                  ((5, 5), (1, 1), 1), ((2, 3), (0, 1)), ((0, 2), (1, 1))])
def test_as_strided_like_torch(args, device):
    results = []
    for L in (nbgrad, torch):
        leaf = L.tensor(X[0], requires_grad=True, **on_device(L, device))
        for source in (leaf, (leaf * 1)[1:]):
            out = source.as_strided(*args)
            w = L.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)),
                         **on_device(L, device))
            (out * out * w).sum().backward()
            results.append((out.detach(), out.stride(), node_name(out.grad_fn)))
        results.append((leaf.grad,))
    ours, theirs = results[:3], results[3:]
    for a, b in zip(ours, theirs):
        assert_close(a[0], b[0])
        assert a[1:] == b[1:]


def test_as_strided_gradient_matches_finite_differences():
    x = nbgrad.tensor(X[0], requires_grad=True)
    assert nbgrad.autograd.gradcheck(lambda t: (t * 1)[1:].as_strided((3, 3), (1, 2), 4) ** 2,
                                     (x,))
    assert nbgrad.autograd.gradgradcheck(lambda t: t.as_strided((4, 4), (1, 1)) ** 3, (x,))
