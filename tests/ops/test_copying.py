"""Copies, conversions and the in-place writes copy_/fill_/zero_
(nbgrad/ops/copying.py) against PyTorch: values, storage, history and
gradients (also by finite differences), version bumps and error texts;
second derivatives against PyTorch and by finite differences."""

import re

import numpy as np
import pytest
import torch

import nbgrad
from helpers import (MIXED, assert_same_error, assert_same_tensor, cuda_only, dtype_name, lib_of,
                     node_name, raises_like_torch, run_like_torch, second_derivatives_like_torch,
                     values)
from nbgrad.autograd import gradcheck, gradgradcheck

TESTED_OPS = {"clone", "contiguous", "cpu", "cuda", "to", "type", "zero_"}  # tests/ops/test_exports.py


def shares_memory(a, b):
    return np.shares_memory(a.detach().numpy(), b.detach().numpy())


VALUES = np.array([[1.75, -1.75, 0.0], [2.5, -0.25, 3.0]])


# ------------------------------------------------------------------ clone
CLONE_LAYOUTS = [
    ("contiguous", lambda L: L.tensor(VALUES)),
    ("transposed", lambda L: L.tensor(VALUES).t()),
    ("permuted", lambda L: L.tensor(np.arange(24.0).reshape(2, 3, 4)).permute(2, 0, 1)),
    ("stepped", lambda L: L.tensor(np.arange(24.0).reshape(3, 8))[:, ::2]),
    ("stepped-transposed", lambda L: L.tensor(np.arange(24.0).reshape(8, 3))[::2].t()),
    ("expanded", lambda L: L.tensor(VALUES)[:, :1].expand(2, 4)),
    ("expanded-row", lambda L: L.tensor(VALUES)[0].expand(2, 3)),
    ("size-1-dims", lambda L: L.tensor(VALUES).t()[:, :1]),
]


@pytest.mark.parametrize("make", [c[1] for c in CLONE_LAYOUTS], ids=[c[0] for c in CLONE_LAYOUTS])
def test_clone_preserves_the_layout_like_torch(make):
    """memory_format=torch.preserve_format: a dense tensor's strides exactly,
    else its order of dimensions, packed; the gradient reaches a dense leaf in
    the leaf's layout."""
    results = []
    for lib in (nbgrad, torch):
        x = make(lib).detach().requires_grad_()
        y = x.clone()
        w = lib.tensor(np.arange(y.numel(), dtype=np.float64).reshape(tuple(y.shape)))
        (y * w).sum().backward()
        results.append((y, x.grad))
    (y, g), (ty, tg) = results
    assert y.stride() == ty.stride()
    np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())
    assert g.stride() == tg.stride()
    np.testing.assert_array_equal(g.numpy(), tg.numpy())


def test_clone_is_a_taped_copy_with_new_storage():
    results = []
    for lib in (nbgrad, torch):
        x = lib.tensor(VALUES, requires_grad=True)
        y = x.clone()
        assert not shares_memory(x, y) and y._base is None
        assert node_name(y.grad_fn) == "CloneBackward"
        (y * y).sum().backward()
        results.append(x.grad.numpy())
        with lib.no_grad():
            x.add_(1.0)
        assert y._version == 0 and x._version == 1
        np.testing.assert_array_equal(y.detach().numpy(), VALUES.astype(np.float32))
    np.testing.assert_allclose(*results)


def test_clone_of_a_plain_tensor_and_of_a_view():
    for lib in (nbgrad, torch):
        x = lib.tensor(VALUES)
        y = x.clone()
        assert y.grad_fn is None and not y.requires_grad
        v = x.t().clone()
        np.testing.assert_array_equal(v.numpy(), VALUES.T.astype(np.float32))
        assert v._base is None and not shares_memory(v, x)
    assert nbgrad.clone(nbgrad.ones(2)).shape == (2,)


# -------------------------------------------------------------- to(dtype)
CASTS = [
    ("float32->float64", "float32", lambda L, x: x.to(L.float64)),
    ("float64->float32", "float64", lambda L, x: x.float()),
    ("float32->float64-double", "float32", lambda L, x: x.double()),
    ("float->int64", "float32", lambda L, x: x.long()),
    ("float->bool", "float64", lambda L, x: x.bool()),
    ("float->int64-to", "float64", lambda L, x: x.to(L.int64)),
    ("to-keyword", "float32", lambda L, x: x.to(dtype=L.float64)),
    ("to-device-and-dtype", "float32", lambda L, x: x.to("cpu", L.float64)),
    ("to-other-tensor", "float32", lambda L, x: x.to(L.zeros(1, dtype=L.float64))),
    ("type-dtype", "float32", lambda L, x: x.type(L.float64)),
    ("same-dtype-copy", "float32", lambda L, x: x.to(L.float32, copy=True)),
    ("chain", "float32", lambda L, x: x.double().float().double() * 2),
]


@pytest.mark.parametrize("source, op", [c[1:] for c in CASTS], ids=[c[0] for c in CASTS])
def test_casts_match_torch(source, op):
    """Values and dtype; the gradient through float casts flows back in the
    source's dtype; casts to integer or bool end the graph."""
    results = []
    for lib in (nbgrad, torch):
        x = lib.tensor(VALUES, dtype=getattr(lib, source), requires_grad=True)
        y = op(lib, x)
        if y.requires_grad:
            (y * lib.tensor(np.linspace(-1, 1, 6).reshape(2, 3), dtype=y.dtype)).sum().backward()
        results.append((y, x))
    (y, x), (ty, tx) = results
    assert dtype_name(y.dtype) == dtype_name(ty.dtype)
    np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())
    assert node_name(y.grad_fn) == node_name(ty.grad_fn)
    assert y.requires_grad == ty.requires_grad
    assert not shares_memory(y, x)
    assert (x.grad is None) == (tx.grad is None)
    if x.grad is not None:
        assert x.grad.dtype is x.dtype
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("make", [c[1] for c in CLONE_LAYOUTS], ids=[c[0] for c in CLONE_LAYOUTS])
@pytest.mark.parametrize("source, cast", [("float64", lambda x: x.float()),
                                          ("int64", lambda x: x.double()),
                                          ("float64", lambda x: x.long())],
                         ids=["float", "int64-double", "long"])
def test_casts_lay_the_result_out_as_clone(make, source, cast):
    """PyTorch's _to_copy is preserve_format: an expanded int64 tensor's
    ``double()`` is C order, as its clone."""
    ours, theirs = (cast(make(lib).to(getattr(lib, source))) for lib in (nbgrad, torch))
    assert ours.stride() == theirs.stride()
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("source", ["int64", "bool"])
@pytest.mark.parametrize("target", ["float32", "float64", "int64", "bool"])
def test_conversions_from_integers_and_bools(source, target):
    results = []
    for lib in (nbgrad, torch):
        x = lib.tensor([[3, 0, -2], [1, 1, 0]] if source == "int64" else [[True, False, True]] * 2)
        y = x.to(getattr(lib, target))
        results.append(y)
    assert dtype_name(results[0].dtype) == dtype_name(results[1].dtype) == target
    np.testing.assert_array_equal(results[0].numpy(), results[1].numpy())


def test_to_the_same_dtype_returns_self():
    for lib in (nbgrad, torch):
        x = lib.ones(2, requires_grad=True)
        assert x.to(lib.float32) is x and x.float() is x and x.to("cpu") is x
        assert x.to(lib.float32, copy=True) is not x
        assert x.cpu() is x


def test_type_names_the_tensor_type():
    for lib, name in ((nbgrad, "nbgrad"), (torch, "torch")):
        assert lib.ones(2).type() == f"{name}.FloatTensor"
        assert lib.ones(2, dtype=lib.int64).type() == f"{name}.LongTensor"
        assert lib.ones(2, dtype=lib.float64).type() == f"{name}.DoubleTensor"
        assert lib.ones(2, dtype=lib.bool).type() == f"{name}.BoolTensor"


def test_to_cuda_is_refused_with_a_clear_message():
    with pytest.raises(RuntimeError, match="cuda"):
        nbgrad.ones(2).to("cuda")
    with pytest.raises(RuntimeError, match="cuda"):
        nbgrad.ones(2).to(device="cuda", dtype=nbgrad.float64)


# ------------------------------------------------------------------ copy_
COPIES = [
    ("same-shape", (2, 3), "float32", lambda L: L.tensor(VALUES, dtype=L.float32)),
    ("broadcast-row", (2, 3), "float32", lambda L: L.tensor([1.5, 2.0, 3.0])),
    ("broadcast-column", (2, 3), "float32", lambda L: L.tensor([[1.5], [-2.0]])),
    ("broadcast-0d", (2, 3), "float32", lambda L: L.tensor(4.0)),
    ("float64-into-float32", (2, 3), "float32", lambda L: L.tensor(VALUES)),
    ("float32-into-float64", (2, 3), "float64", lambda L: L.tensor(VALUES, dtype=L.float32)),
    ("float-into-int", (2, 3), "int64", lambda L: L.tensor(VALUES)),
    ("float-into-bool", (2, 3), "bool", lambda L: L.tensor(VALUES)),
    ("int-into-float", (2, 3), "float32", lambda L: L.tensor([1, 2, 3])),
    ("bool-into-float", (2, 3), "float64", lambda L: L.tensor([True, False, True])),
]


@pytest.mark.parametrize("src_requires_grad", [True, False])
@pytest.mark.parametrize("dst_kind", ["plain", "non-leaf"])
@pytest.mark.parametrize("shape, dtype, src", [c[1:] for c in COPIES], ids=[c[0] for c in COPIES])
def test_copy_matches_torch(shape, dtype, src, dst_kind, src_requires_grad):
    results = []
    for lib in (nbgrad, torch):
        s = src(lib)
        if src_requires_grad and s.is_floating_point():
            s.requires_grad_()
        floating = dtype.startswith("float")
        leaf = lib.zeros(*shape, dtype=getattr(lib, dtype), requires_grad=floating)
        dst = leaf * 2 if (dst_kind == "non-leaf" and floating) else leaf.detach().clone()
        before = dst._version
        out = dst.copy_(s)
        assert out is dst
        bump = dst._version - before
        if dst.requires_grad:
            w = lib.tensor(np.linspace(-1, 2, dst.numel()).reshape(shape), dtype=dst.dtype)
            (dst * w).sum().backward()
        results.append((dst, s, leaf, bump))
    (dst, s, leaf, bump), (tdst, ts, tleaf, tbump) = results
    assert bump == tbump == 1
    assert dtype_name(dst.dtype) == dtype
    np.testing.assert_array_equal(dst.detach().numpy(), tdst.detach().numpy())
    assert node_name(dst.grad_fn) == node_name(tdst.grad_fn)
    for ours, theirs in ((s, ts), (leaf, tleaf)):
        assert (ours.grad is None) == (theirs.grad is None)
        if ours.grad is not None:
            assert ours.grad.dtype is ours.dtype and ours.grad.shape == ours.shape
            np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-6)


def test_copy_into_a_view_writes_the_base():
    for lib in (nbgrad, torch):
        base = lib.zeros(2, 3)
        base[:, 1].copy_(lib.tensor([5.0, 6.0]))
        base.t()[2].copy_(lib.tensor(7.0))
        np.testing.assert_array_equal(base.numpy(), [[0, 5, 7], [0, 6, 7]])
        assert base._version == 2


def test_copy_from_itself_and_from_an_overlapping_view():
    for lib in (nbgrad, torch):
        x = lib.arange(6.0)
        x.copy_(x)
        assert x._version == 1
    assert_same_error(lambda L: (lambda x: x[1:].copy_(x[:-1]))(L.arange(6.0)))
    assert_same_error(lambda L: (lambda x: x[:3].copy_(x[2:5]))(L.arange(6.0)))


SELF_COPIES = [
    ("copy-itself", lambda e: e.copy_(e)),
    ("copy-detached", lambda e: e.copy_(e.detach())),
    ("copy-full-view", lambda e: e.copy_(e[:])),
    ("setitem-ellipsis", lambda e: e.__setitem__(Ellipsis, e)),
    ("setitem-full-slice", lambda e: e.__setitem__(slice(None), e)),
    ("setitem-row", lambda e: e.__setitem__(1, e[1])),
]


@pytest.mark.parametrize("source", ["plain", "non-leaf"])
@pytest.mark.parametrize("write", [c[1] for c in SELF_COPIES], ids=[c[0] for c in SELF_COPIES])
def test_a_copy_of_the_very_same_elements_into_an_expanded_tensor(write, source):
    """PyTorch's copy_ returns before its overlap checks when the source is
    the destination's very elements (same address, sizes, strides, dtype):
    nothing is written, yet the version is bumped and the write taped (so the
    base's CopySlices refuses to write its gradient into the expanded view
    in backward, as PyTorch's does)."""
    results = []
    for lib in (nbgrad, torch):
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        e = (x.detach() if source == "plain" else x * 1).expand(2, 3)
        write(e)
        grad = None
        if e.requires_grad:
            try:
                (e * lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).sum().backward()
                grad = x.grad.numpy().tolist()
            except RuntimeError as error:
                grad = str(error)
        results.append((e.detach().numpy().copy(), e._version, e.stride(), grad))
    (values, version, strides, grad), (t_values, t_version, t_strides, t_grad) = results
    np.testing.assert_array_equal(values, t_values)
    assert version == t_version == 1 and strides == t_strides
    assert grad == t_grad


def test_other_writes_into_an_expanded_tensor_are_still_refused():
    expanded = lambda L: L.tensor([1.0, 2.0, 3.0]).expand(2, 3)  # noqa: E731
    assert_same_error(lambda L: expanded(L).copy_(expanded(L).clone()))
    assert_same_error(lambda L: expanded(L).copy_(expanded(L)))  # other memory
    assert_same_error(lambda L: (lambda e: e.add_(e))(expanded(L)))
    assert_same_error(lambda L: (lambda e: e.copy_(e.double()))(expanded(L)))


# ---------------------------------------------------------- fill_ / zero_
FILLS = [
    ("fill-scalar", "float32", lambda L, t: t.fill_(2.5)),
    ("fill-int-scalar", "float32", lambda L, t: t.fill_(3)),
    ("fill-0d-tensor", "float32", lambda L, t: t.fill_(L.tensor(-1.5))),
    ("fill-0d-float64-tensor", "float32", lambda L, t: t.fill_(L.tensor(-1.5, dtype=L.float64))),
    ("fill-truncates", "int64", lambda L, t: t.fill_(2.7)),
    ("fill-0d-tensor-truncates", "int64", lambda L, t: t.fill_(L.tensor(-2.7))),
    ("fill-bool", "bool", lambda L, t: t.fill_(2.0)),
    ("zero", "float32", lambda L, t: t.zero_()),
    ("zero-int", "int64", lambda L, t: t.zero_()),
    ("fill-view", "float32", lambda L, t: t[:, 1:].fill_(9.0)),
    ("zero-view", "float32", lambda L, t: t.t()[0].zero_()),
]


@pytest.mark.parametrize("dtype, op", [c[1:] for c in FILLS], ids=[c[0] for c in FILLS])
def test_fill_and_zero_match_torch(dtype, op):
    results = []
    for lib in (nbgrad, torch):
        floating = dtype.startswith("float")
        leaf = lib.tensor(VALUES, dtype=getattr(lib, dtype), requires_grad=floating) \
            if dtype != "bool" else lib.tensor(VALUES != 0)
        dst = leaf * 3 if floating else leaf.clone()
        before = dst._version
        op(lib, dst)
        bump = dst._version - before
        if dst.requires_grad:
            (dst * lib.tensor(np.linspace(-1, 2, 6).reshape(2, 3), dtype=dst.dtype)).sum().backward()
        results.append((dst, leaf, bump))
    (dst, leaf, bump), (tdst, tleaf, tbump) = results
    assert bump == tbump == 1
    np.testing.assert_array_equal(dst.detach().numpy(), tdst.detach().numpy())
    assert node_name(dst.grad_fn) == node_name(tdst.grad_fn)
    assert (leaf.grad is None) == (tleaf.grad is None)
    if leaf.grad is not None:
        np.testing.assert_allclose(leaf.grad.numpy(), tleaf.grad.numpy())


def test_fill_with_a_tensor_that_requires_grad():
    results = []
    for lib in (nbgrad, torch):
        v = lib.tensor(2.0, requires_grad=True)
        x = lib.zeros(2, 3)
        x[1].fill_(v)
        (x * lib.arange(6.0).reshape(2, 3)).sum().backward()
        results.append((x.detach().numpy(), v.grad.item(), node_name(x.grad_fn)))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    assert results[0][1:] == results[1][1:] == (3.0 + 4.0 + 5.0, "CopySlices")


def _copy_whole(a, b, v):
    y = a * 1
    y.copy_(b[0].expand(2, 3))
    return y * a


def _copy_into_view(a, b, v):
    y = a * a
    y[0].copy_(b[0])
    return y


def _fill_view(a, b, v):
    y = a * 2
    y[:, 1].fill_(v)
    return y * b


def _zero_view(a, b, v):
    y = a * b
    y.t()[1:].zero_()
    return y * a


def _casts_and_clone(a, b, v):
    return a.to(nbgrad.float64, copy=True).double() * b.clone() + v.to(nbgrad.float64, copy=True)


@pytest.mark.parametrize("fn", [_copy_whole, _copy_into_view, _fill_view, _zero_view, _casts_and_clone],
                         ids=["copy", "copy-view", "fill-view", "zero-view", "casts-clone"])
def test_gradcheck(fn):
    rng = np.random.default_rng(9)
    a = nbgrad.tensor(rng.standard_normal((2, 3)), dtype=nbgrad.float64, requires_grad=True)
    b = nbgrad.tensor(rng.standard_normal((2, 3)), dtype=nbgrad.float64, requires_grad=True)
    v = nbgrad.tensor(rng.standard_normal(()), dtype=nbgrad.float64, requires_grad=True)
    assert gradcheck(fn, (a, b, v))


# ----------------------------------------------------------------- errors
ERRORS = [
    ("copy-shape", lambda L: L.zeros(3).copy_(L.ones(2, 3))),
    ("copy-broadcast", lambda L: L.zeros(2, 3).copy_(L.ones(2))),
    ("copy-leaf", lambda L: L.zeros(3, requires_grad=True).copy_(L.ones(3))),
    ("copy-view-of-leaf", lambda L: L.zeros(3, requires_grad=True)[1:].copy_(L.ones(2))),
    ("copy-into-expanded", lambda L: L.zeros(3).expand(2, 3).copy_(L.ones(2, 3))),
    ("fill-1d-tensor", lambda L: L.zeros(3).fill_(L.ones(1))),
    ("fill-leaf", lambda L: L.zeros(3, requires_grad=True).fill_(1.0)),
    ("zero-leaf", lambda L: L.zeros(3, requires_grad=True).zero_()),
]


@pytest.mark.parametrize("fn", [c[1] for c in ERRORS], ids=[c[0] for c in ERRORS])
def test_errors_match_torch(fn):
    assert_same_error(fn)


@pytest.mark.parametrize("fn", [
    lambda L: L.zeros(3).copy_([1.0, 2.0, 3.0]),
    lambda L: L.zeros(3).copy_("a"),
    lambda L: L.zeros(3).fill_("a"),
    lambda L: L.zeros(3).fill_(None),
], ids=["copy-list", "copy-string", "fill-string", "fill-none"])
def test_bad_arguments_raise_type_error(fn):
    assert_same_error(fn, exact=False)


def test_copy_error_text():
    with pytest.raises(TypeError, match=r"^copy_\(\): argument 'other' \(position 1\) must be "
                                        r"Tensor, not list$"):
        nbgrad.zeros(3).copy_([1.0, 2.0, 3.0])


def test_refused_writes_change_nothing():
    x = nbgrad.zeros(2, 3)
    for write in (lambda: x.copy_(nbgrad.ones(3, 3)), lambda: x.fill_(nbgrad.ones(2)),
                  lambda: x.copy_(nbgrad.ones(4)), lambda: x.view(6)[1:].copy_(x.view(6)[:-1])):
        with pytest.raises(RuntimeError):
            write()
    assert x._version == 0 and (x.numpy() == 0).all()


def test_copy_from_a_number():
    for lib in (nbgrad, torch):
        x = lib.zeros(3)
        x.copy_(2.5)
        np.testing.assert_array_equal(x.numpy(), [2.5, 2.5, 2.5])
        assert x._version == 1
        y = lib.zeros(3, requires_grad=True) * 1
        y.copy_(7)
        assert node_name(y.grad_fn) == "CopyBackward"
        np.testing.assert_array_equal(y.detach().numpy(), [7.0, 7.0, 7.0])


def test_writes_into_integer_tensors_record_no_history():
    """An int64 destination cannot carry a gradient, even when the value
    written into it requires one."""
    for lib in (nbgrad, torch):
        src = lib.tensor([1.5, 2.5, -3.5], requires_grad=True)
        z = lib.zeros(3, dtype=lib.int64)
        z.copy_(src)
        assert not z.requires_grad and z.grad_fn is None
        w = lib.zeros(2, 3, dtype=lib.int64)
        w[0] = src
        assert not w.requires_grad and w.grad_fn is None
        np.testing.assert_array_equal(z.numpy(), [1, 2, -3])
        np.testing.assert_array_equal(w.numpy(), [[1, 2, -3], [0, 0, 0]])


def test_in_place_ops_refuse_partly_overlapping_operands_like_copy():
    assert_same_error(lambda L: (lambda x: x[1:].add_(x[:-1]))(L.arange(6.0)))


# ------------------------------------------------------------ on every device
def test_clone_and_casts_match_torch(device):
    def fn(x):
        return x.clone() * x.double().float() + x.to(lib_of(x).float64).to(lib_of(x).float32)
    run_like_torch(fn, values((2, 3), 6), device=device)
    x = values((2, 3), 7)
    ours, theirs = nbgrad.tensor(x, device=device), torch.tensor(x)
    for cast in (lambda t: t.long(), lambda t: t.bool(), lambda t: t.float(),
                 lambda t: (t > 0).double(), lambda t: t.long().float()):
        assert_same_tensor(cast(ours), cast(theirs))
    assert ours.type() == ("nbgrad.cuda.DoubleTensor" if device == "cuda"
                           else "nbgrad.DoubleTensor")


def test_copy_fill_zero_into_views_match_torch(device):
    def fn(a, b):
        y = a * 1
        y[0].copy_(b[1])
        y[1, 1:].fill_(2.5)
        y[:, 0].zero_()
        return y * a
    run_like_torch(fn, values((2, 3), 8), values((2, 3), 9), device=device, dtype=nbgrad.float64)


def test_copy_and_fill_numbers_into_integer_targets_match_torch(device):
    ours, theirs = nbgrad.tensor([1, 2, 3], device=device), torch.tensor([1, 2, 3])
    for t in (ours, theirs):
        t.copy_(7)
        t[1:].fill_(-1)
    assert_same_tensor(ours, theirs)


def test_fill_with_a_scalar_tensor_on_the_device_matches_torch(device):
    ours, theirs = nbgrad.tensor(values((2, 2), 1), device=device), torch.tensor(values((2, 2), 1))
    ours.fill_(nbgrad.tensor(3.0, device=device))
    theirs.fill_(torch.tensor(3.0))
    assert_same_tensor(ours, theirs)


def test_copy_into_a_leaf_that_requires_grad_is_refused_like_torch(device):
    ours = nbgrad.zeros(2, device=device, requires_grad=True)
    targets = {nbgrad: ours, torch: torch.zeros(2, requires_grad=True)}
    assert_same_error(lambda lib: targets[lib].copy_(lib.ones_like(targets[lib])))
    assert ours._version == 0


def test_copy_from_a_partly_overlapping_view_is_refused_like_torch(device):
    raises_like_torch(lambda t: t[1:].copy_(t[:3]), values((4,), 1), device=device)


# ---------------------------------------------------------- across devices
@cuda_only
def test_to_cuda_of_a_leaf_is_a_non_leaf_whose_backward_fills_the_cpu_leaf(device):
    x = nbgrad.tensor(values((2, 3), 1), requires_grad=True)
    y = x.to(device)
    assert y.is_cuda and not y.is_leaf and y.requires_grad
    assert y.grad_fn.name() == x.float().grad_fn.name()  # ToCopy, as a dtype change
    (y * y).sum().backward()
    assert not x.grad.is_cuda and x.grad.dtype is x.dtype
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy())


@cuda_only
def test_cpu_of_a_cuda_leaf_sends_the_gradient_back_to_the_device(device):
    x = nbgrad.tensor(values((3,), 2), device=device, requires_grad=True)
    z = x.cpu()
    assert not z.is_cuda and z.grad_fn is not None
    (z * 3).sum().backward()
    assert x.grad.is_cuda and x.grad.tolist() == [3.0, 3.0, 3.0]


@cuda_only
@pytest.mark.parametrize("move", [
    lambda t: t.cuda(), lambda t: t.cuda(0), lambda t: t.to("cuda:0"),
    lambda t: t.to(nbgrad.device("cuda")), lambda t: t.to(device="cuda"),
    lambda t: t.to("cuda", nbgrad.float64), lambda t: t.to(nbgrad.ones(1, device="cuda")),
], ids=["cuda", "cuda0", "str", "device", "kw", "device-dtype", "other"])
def test_ways_to_move_to_the_device(move, device):
    x = nbgrad.tensor(values((2, 2), 3), dtype=nbgrad.float32, requires_grad=True)
    y = move(x)
    assert y.device.type == device
    y.sum().backward()
    assert not x.grad.is_cuda and x.grad.tolist() == [[1.0, 1.0], [1.0, 1.0]]


@cuda_only
def test_round_trip_through_the_device_and_same_device_is_a_no_op(device):
    cpu = nbgrad.tensor(values((2, 3), 4))
    cuda = cpu.to(device)
    assert cuda.to("cuda") is cuda and cuda.cuda() is cuda and cpu.cpu() is cpu
    back = cuda.cpu()
    np.testing.assert_array_equal(back.numpy(), cpu.numpy())
    back[0, 0] = 100.0  # a copy
    assert cuda[0, 0].item() != 100.0
    again = cuda.to("cuda", copy=True)
    assert again is not cuda and again._data is not cuda._data


@cuda_only
def test_gradient_through_a_round_trip_and_a_dtype_change_matches_torch(device):
    x = nbgrad.tensor(values((2, 3), 5), dtype=nbgrad.float32, requires_grad=True)
    (x.to(device).double().sigmoid().cpu().float() * x).to(device).sum().backward()
    y = torch.tensor(values((2, 3), 5), dtype=torch.float32, requires_grad=True)
    (y.double().sigmoid().float() * y).sum().backward()
    assert_same_tensor(x.grad, y.grad)


@cuda_only
def test_copy_from_another_device_is_taped(device):
    source = nbgrad.tensor(values((3,), 1), requires_grad=True)  # on the CPU
    target = nbgrad.zeros(3, device=device) * 1
    target.copy_(source)
    assert target.is_cuda
    (target * 2).sum().backward()
    assert not source.grad.is_cuda and source.grad.tolist() == [2.0, 2.0, 2.0]
    back = nbgrad.zeros(3)
    back.copy_(nbgrad.tensor([1.0, 2.0, 3.0], device=device))
    assert back.tolist() == [1.0, 2.0, 3.0]


@cuda_only
def test_mixed_device_elementwise_message(device):
    """The message names the device the op ran on first (torch's
    TensorIterator: the first non-CPU device is the common one)."""
    cuda, cpu = nbgrad.ones(2, device=device), nbgrad.ones(2)
    for call in (lambda: cuda + cpu, lambda: cpu + cuda, lambda: cuda.mul_(cpu),
                 lambda: nbgrad.where(cuda > 0, cuda, cpu)):
        with pytest.raises(RuntimeError, match=f"^{re.escape(MIXED.format('cuda:0', 'cpu'))}$"):
            call()


@cuda_only
def test_zero_dim_cpu_tensor_is_a_scalar_in_a_cuda_op(device):
    """As in torch: values, promotion as a 0-d tensor, and the gradient back on the CPU."""
    x = nbgrad.ones(2, device=device, requires_grad=True)
    s = nbgrad.tensor(3.0, dtype=nbgrad.float64, requires_grad=True)
    out = x * s
    assert out.is_cuda and out.dtype is nbgrad.float32 and out.tolist() == [3.0, 3.0]
    out.sum().backward()
    assert s.grad.device == nbgrad.device("cpu") and s.grad.dtype is nbgrad.float64
    assert s.grad.item() == 2.0 and x.grad.tolist() == [3.0, 3.0]
    assert nbgrad.where(x > 0, nbgrad.tensor(1.0), x).tolist() == [1.0, 1.0]
    with nbgrad.no_grad():
        y = x.clone()
        y.mul_(nbgrad.tensor(2.0))
    assert y.tolist() == [2.0, 2.0]


@cuda_only
def test_only_zero_dim_cpu_tensors_join_a_cuda_op(device):
    cuda = nbgrad.ones(2, device=device)
    mixed = f"^{re.escape(MIXED.format('cuda:0', 'cpu'))}$"
    for cpu in (nbgrad.ones(1), nbgrad.ones(2)):
        with pytest.raises(RuntimeError, match=mixed):
            cuda + cpu
    scalar = nbgrad.tensor(1.0)  # written into: it must be on the op's device
    with pytest.raises(RuntimeError, match=mixed):
        scalar.add_(cuda[0])
    assert scalar.item() == 1.0 and scalar._version == 0


# -- higher-order gradients (create_graph=True)
def _written(write):
    def fn(x, v):
        y = x.sin()
        write(y, v.sin())
        return y.sin()
    return fn


COPIES = {  # (x, v) -> a result; v unused by some
    "clone": lambda x, v: x.sin().clone().sin() * v,
    "contiguous": lambda x, v: x.sin().t().contiguous().sin(),
    "to-float32-and-back": lambda x, v: x.sin().float().double().sin() * v,
    "to-the-same-dtype": lambda x, v: x.sin().to(lib_of(x).float64, copy=True).sin(),
    "to-the-cpu-and-back": lambda x, v: x.sin().to("cpu").sin().to(v.device) * v,
    "copy_-through-a-view": _written(lambda y, v: y[1:].copy_(v[1:])),
    "copy_-broadcast": _written(lambda y, v: y.t()[0].copy_(v[0, 0])),
    "fill_-through-a-view": _written(lambda y, v: y[0].fill_(2.0)),
    "zero_-through-a-view": _written(lambda y, v: y[:, 1].zero_()),
}


@pytest.mark.parametrize("name", sorted(COPIES))
def test_second_derivatives_on_the_device_match_torch(name, device):
    """(On CUDA, ``to-the-cpu-and-back`` moves across devices both ways.)"""
    second_derivatives_like_torch(COPIES[name], values((2, 3), 41), values((2, 3), 42),
                                  device=device)


@pytest.mark.parametrize("name", sorted(COPIES))
def test_gradgradcheck(name):
    x = nbgrad.tensor(values((2, 3), 43), dtype=nbgrad.float64, requires_grad=True)
    v = nbgrad.tensor(values((2, 3), 44), dtype=nbgrad.float64, requires_grad=True)
    # (float32 round trips are not differentiable to finite-difference accuracy)
    fn = COPIES["clone" if name == "to-float32-and-back" else name]
    assert gradgradcheck(fn, [x, v])
