"""Shape ops (nbgrad/ops/views.py) against PyTorch: values, gradients, backward
node names, which results are views (shared memory and version counter) and
PyTorch's error types and texts; gradients also against finite differences."""
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import nbgrad
from helpers import (assert_same_error, assert_same_tensor, lib_of, node_name, raises_like_torch,
                     run_like_torch, values)
from nbgrad.autograd import gradcheck

TESTED_OPS = {"T", "mT", "t", "expand", "expand_as", "flatten", "permute", "reshape", "squeeze",
              "transpose", "unsqueeze", "view"}  # tests/ops/test_exports.py


# ----------------------------------------------------------------- helpers
def shares_memory(a, b):
    return np.shares_memory(a.detach().numpy(), b.detach().numpy())


def is_view_of(view, base):
    """PyTorch's notion (and nbgrad's): ``view._base`` is the root base."""
    return view._base is base


def weights(lib, shape, dtype):
    """Distinct weights for a weighted-sum backward, so every gradient entry is checked."""
    n = int(np.prod(shape, dtype=np.int64))
    return lib.tensor(np.linspace(-1.5, 2.0, n).reshape(shape), dtype=dtype)


def run(lib, fn, array, requires_grad=True):
    x = lib.tensor(array, dtype=lib.float64, requires_grad=requires_grad)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch: x.T on non-2-D is deprecated
        y = fn(x, lib)
    return x, y


ARANGE = lambda *shape: np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape)  # noqa: E731

# (id, input shape, op): each op is run on nbgrad and torch alike.
CASES = [
    ("view", (2, 3, 4), lambda x, L: x.view(6, 4)),
    ("view-tuple", (2, 3, 4), lambda x, L: x.view((4, 6))),
    ("view-infer", (2, 3, 4), lambda x, L: x.view(-1, 3, 2)),
    ("view-flat", (2, 3, 4), lambda x, L: x.view(-1)),
    ("view-same", (2, 3, 4), lambda x, L: x.view(2, 3, 4)),
    ("view-of-transposed-compatible", (2, 3, 4), lambda x, L: x.transpose(1, 2).view(2, 4, 3)),
    ("view-0d", (), lambda x, L: x.view(1, 1)),
    ("reshape-view", (2, 3, 4), lambda x, L: x.reshape(4, 6)),
    ("reshape-same", (2, 3, 4), lambda x, L: x.reshape(2, 3, 4)),
    ("reshape-copy", (2, 3, 4), lambda x, L: x.transpose(0, 2).reshape(-1)),
    ("reshape-copy-2", (2, 3, 4), lambda x, L: x.permute(1, 0, 2).reshape(6, 4)),
    ("reshape-of-slice", (4, 6), lambda x, L: x[:, ::2].reshape(12)),
    ("flatten", (2, 3, 4), lambda x, L: x.flatten()),
    ("flatten-start", (2, 3, 4), lambda x, L: x.flatten(1)),
    ("flatten-range", (2, 3, 4), lambda x, L: x.flatten(0, 1)),
    ("flatten-negative", (2, 3, 4), lambda x, L: x.flatten(-2, -1)),
    ("flatten-0d", (), lambda x, L: x.flatten()),
    ("flatten-copy", (2, 3, 4), lambda x, L: x.transpose(0, 1).flatten()),
    ("flatten-empty", (0, 3, 2), lambda x, L: x.flatten(1)),
    ("flatten-empty-range", (2, 0, 2), lambda x, L: x.flatten(0, 1)),
    ("flatten-empty-last", (2, 3, 0), lambda x, L: x.flatten(1)),
    ("permute", (2, 3, 4), lambda x, L: x.permute(2, 0, 1)),
    ("permute-tuple-negative", (2, 3, 4), lambda x, L: x.permute((-1, 0, -2))),
    ("permute-identity", (2, 3, 4), lambda x, L: x.permute(0, 1, 2)),
    ("transpose", (2, 3, 4), lambda x, L: x.transpose(0, 2)),
    ("transpose-negative", (2, 3, 4), lambda x, L: x.transpose(-1, -2)),
    ("transpose-same-dim", (2, 3), lambda x, L: x.transpose(1, 1)),
    ("t-2d", (2, 3), lambda x, L: x.t()),
    ("t-1d", (3,), lambda x, L: x.t()),
    ("t-0d", (), lambda x, L: x.t()),
    ("T-2d", (2, 3), lambda x, L: x.T),
    ("T-3d", (2, 3, 4), lambda x, L: x.T),
    ("mT", (2, 3, 4), lambda x, L: x.mT),
    ("squeeze-all", (2, 1, 3, 1), lambda x, L: x.squeeze()),
    ("squeeze-dim", (2, 1, 3, 1), lambda x, L: x.squeeze(1)),
    ("squeeze-dim-not-one", (2, 1, 3, 1), lambda x, L: x.squeeze(0)),
    ("squeeze-negative", (2, 1, 3, 1), lambda x, L: x.squeeze(-1)),
    ("squeeze-tuple", (2, 1, 3, 1), lambda x, L: x.squeeze((1, 3))),
    ("squeeze-tuple-mixed", (2, 1, 3, 1), lambda x, L: x.squeeze((0, -1))),
    ("squeeze-0d", (), lambda x, L: x.squeeze()),
    ("squeeze-0d-dim", (), lambda x, L: x.squeeze(-1)),
    ("unsqueeze-front", (2, 3), lambda x, L: x.unsqueeze(0)),
    ("unsqueeze-end", (2, 3), lambda x, L: x.unsqueeze(2)),
    ("unsqueeze-negative", (2, 3), lambda x, L: x.unsqueeze(-1)),
    ("unsqueeze-negative-middle", (2, 3), lambda x, L: x.unsqueeze(-2)),
    ("unsqueeze-most-negative", (2, 3), lambda x, L: x.unsqueeze(-3)),
    ("unsqueeze-0d", (), lambda x, L: x.unsqueeze(0)),
    # PyTorch keeps the other dims' strides, size-1 ones included (NumPy's reshape may not).
    ("unsqueeze-of-transposed-size-1-dims", (1, 3, 1), lambda x, L: x.transpose(-1, -2).unsqueeze(2)),
    ("unsqueeze-end-of-transposed", (1, 3, 1), lambda x, L: x.transpose(-1, -2).unsqueeze(3)),
    ("unsqueeze-then-cat", (1, 3, 1), lambda x, L: L.cat([x.transpose(-1, -2).unsqueeze(2)] * 2, 1)),
    ("expand", (3, 1), lambda x, L: x.expand(3, 4)),
    ("expand-new-dims", (3, 1), lambda x, L: x.expand(2, 3, 4)),
    ("expand-minus-one", (3, 1), lambda x, L: x.expand(2, -1, 5)),
    ("expand-tuple", (1, 3), lambda x, L: x.expand((4, 3))),
    ("expand-same", (2, 3), lambda x, L: x.expand(2, 3)),
    ("expand-0d", (), lambda x, L: x.expand(2, 3)),
    ("expand-as", (3, 1), lambda x, L: x.expand_as(L.zeros(2, 3, 4))),
    ("view-as", (2, 3, 4), lambda x, L: x.view_as(L.zeros(4, 6))),
    ("reshape-as-view", (2, 3, 4), lambda x, L: x.reshape_as(L.zeros(24))),
    ("reshape-as-copy", (2, 3, 4), lambda x, L: x.transpose(0, 1).reshape_as(L.zeros(6, 4))),
    ("contiguous-already", (2, 3), lambda x, L: x.contiguous()),
    ("contiguous-copy", (2, 3), lambda x, L: x.t().contiguous()),
    ("chain", (2, 3, 4), lambda x, L: x.permute(2, 0, 1).reshape(4, 6).t().unsqueeze(0).expand(2, 6, 4)),
    ("chain-2", (2, 3, 4), lambda x, L: x.flatten(0, 1).view(3, 2, 4).transpose(0, 1)[1:].reshape(-1)),
    ("chain-3", (2, 1, 4), lambda x, L: x.squeeze(1).unsqueeze(-1).expand(2, 4, 3).mT.flatten(1)),
]


@pytest.mark.parametrize("shape, fn", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_shape_op_matches_torch(shape, fn):
    array = ARANGE(*shape)
    (x, y), (tx, ty) = run(nbgrad, fn, array), run(torch, fn, array)
    assert tuple(y.shape) == tuple(ty.shape)
    assert y.dtype is nbgrad.float64
    np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())
    assert y.stride() == ty.stride()
    assert y.is_contiguous() == ty.is_contiguous()
    # The same result is the input itself, a view of it (shares memory and base) or a copy.
    assert (y is x) == (ty is tx)
    assert shares_memory(y, x) == shares_memory(ty, tx)
    assert is_view_of(y, x) == is_view_of(ty, tx)
    assert node_name(y.grad_fn) == node_name(ty.grad_fn)
    assert y.requires_grad and not y.is_leaf or y is x
    w, tw = weights(nbgrad, y.shape, nbgrad.float64), weights(torch, ty.shape, torch.float64)
    (y * w).sum().backward()
    (ty * tw).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape, fn", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_views_share_the_version_counter_and_copies_do_not(shape, fn):
    """A write into the base shows through a view (and bumps the view's
    version); a copy keeps its values and its own version counter."""
    results = {}
    for lib in (nbgrad, torch):
        base, y = run(lib, fn, ARANGE(*shape), requires_grad=False)
        before = y._version
        base.add_(100.0)
        results[lib] = (y.numpy().copy(), y._version - before, base._version)
    (values, bump, base_version), (t_values, t_bump, t_base_version) = results.values()
    np.testing.assert_array_equal(values, t_values)
    assert (bump, base_version) == (t_bump, t_base_version)


def test_writes_through_a_view_show_in_the_base_and_bump_the_shared_version():
    for lib in (nbgrad, torch):
        base = lib.zeros(2, 3)
        v = base.t()
        w = v[1:]
        w.fill_(7.0)
        assert base._version == v._version == w._version == 1
        np.testing.assert_array_equal(base.numpy(), [[0, 7, 7], [0, 7, 7]])
        r = base.reshape(3, 2)  # contiguous: a view
        r[0, 0] = -1.0
        assert base[0, 0].item() == -1.0 and base._version == 2


def test_reshape_of_a_non_contiguous_tensor_copies():
    x = nbgrad.arange(6.0).reshape(2, 3)
    y = x.t().reshape(6)
    assert not shares_memory(x, y) and y._base is None
    x.add_(1.0)
    assert y._version == 0
    np.testing.assert_array_equal(y.numpy(), [0, 3, 1, 4, 2, 5])


def test_expand_is_a_writeable_view_with_zero_strides():
    for lib in (nbgrad, torch):
        base = lib.tensor([1.0, 2.0, 3.0])
        e = base.expand(2, 3)
        assert e.stride() == (0, 1)
        e[1] = 5.0  # one row of the expansion: the base's own memory
        np.testing.assert_array_equal(base.numpy(), [5.0, 5.0, 5.0])
        assert base._version == 1


def test_contiguous_returns_self_when_already_contiguous():
    x = nbgrad.ones(2, 3, requires_grad=True)
    assert x.contiguous() is x
    y = x.t().contiguous()
    assert y.is_contiguous() and y.stride() == (2, 1)
    assert node_name(y.grad_fn) == "CloneBackward"


def test_view_of_view_has_the_root_as_base():
    for lib in (nbgrad, torch):
        x = lib.ones(2, 3, 4)
        v = x.view(6, 4).t().unsqueeze(0)
        assert v._base is x
        assert x._base is None


def test_gradients_accumulate_through_several_views_of_one_leaf():
    results = []
    for lib in (nbgrad, torch):
        x = lib.tensor(ARANGE(2, 3), requires_grad=True)
        out = (x.t() * 2).sum() + (x.view(6)[::2] * x.unsqueeze(0).expand(4, 2, 3).flatten()[:3]).sum()
        out.backward()
        results.append(x.grad.numpy())
    np.testing.assert_allclose(*results, rtol=1e-6)


# ------------------------------------------------------ finite differences
GRADCHECK_CASES = [
    ("view-permute-reshape", (2, 3, 4), lambda x: x.view(6, 4).t().reshape(2, 12).flatten()),
    ("expand-broadcast", (3, 1), lambda x: x.expand(2, 3, 4) * x.reshape(1, 3, 1)),
    ("squeeze-unsqueeze", (2, 1, 3),
     lambda x: x.squeeze(1).unsqueeze(0).transpose(0, 2) * x.permute(2, 0, 1)),
    ("transpose-contiguous-view", (3, 4), lambda x: x.transpose(0, 1).contiguous().view(-1) * 3),
    ("T-chain", (2, 3), lambda x: x.T.expand(2, 3, 2).permute(2, 1, 0).reshape(-1)),
]


@pytest.mark.parametrize("shape, fn", [c[1:] for c in GRADCHECK_CASES],
                         ids=[c[0] for c in GRADCHECK_CASES])
def test_gradcheck(shape, fn):
    x = nbgrad.tensor(np.random.default_rng(0).standard_normal(shape), dtype=nbgrad.float64,
                      requires_grad=True)
    assert gradcheck(fn, (x,))


# ----------------------------------------------------------------- errors
ERROR_CASES = [
    ("view-non-contiguous", lambda L: L.arange(6.0).reshape(2, 3).t().view(6)),
    ("view-bad-size", lambda L: L.arange(6.0).view(5)),
    ("view-bad-size-2d", lambda L: L.arange(6.0).reshape(2, 3).view(4, 2)),
    ("view-infer-impossible", lambda L: L.arange(6.0).view(-1, 4)),
    ("view-two-inferred", lambda L: L.arange(6.0).view(-1, -1)),
    ("view-negative", lambda L: L.arange(6.0).view(-2, 3)),
    ("view-negative-later", lambda L: L.arange(6.0).view(3, -3)),
    ("view-infer-zero", lambda L: L.arange(6.0).view(2, -1, 0)),
    ("view-zero-elements-ambiguous", lambda L: L.zeros(0, 3).view(-1, 0)),
    ("reshape-bad-size", lambda L: L.arange(6.0).reshape(7)),
    ("reshape-negative", lambda L: L.arange(6.0).reshape(-2, -3)),
    ("transpose-out-of-range", lambda L: L.zeros(2, 3).transpose(0, 2)),
    ("transpose-negative-out-of-range", lambda L: L.zeros(2, 3).transpose(-3, 0)),
    ("permute-length", lambda L: L.zeros(2, 3).permute(0)),
    ("permute-duplicate", lambda L: L.zeros(2, 3).permute(1, 1)),
    ("permute-out-of-range", lambda L: L.zeros(2, 3).permute(0, 2)),
    ("squeeze-out-of-range", lambda L: L.zeros(2, 3).squeeze(2)),
    ("squeeze-tuple-out-of-range", lambda L: L.zeros(2, 1).squeeze((1, -3))),
    ("unsqueeze-out-of-range", lambda L: L.zeros(2, 3).unsqueeze(3)),
    ("unsqueeze-negative-out-of-range", lambda L: L.zeros(2, 3).unsqueeze(-4)),
    ("unsqueeze-0d-out-of-range", lambda L: L.tensor(1.0).unsqueeze(1)),
    ("flatten-out-of-range", lambda L: L.zeros(2, 3).flatten(0, 5)),
    ("flatten-start-after-end", lambda L: L.zeros(2, 3, 4).flatten(2, 1)),
    ("t-3d", lambda L: L.zeros(2, 3, 4).t()),
    ("expand-mismatch", lambda L: L.zeros(2, 3).expand(2, 4)),
    ("expand-too-few-sizes", lambda L: L.zeros(2, 3).expand(3)),
    ("expand-minus-one-leading", lambda L: L.zeros(2, 3).expand(-1, 2, 3)),
    ("expand-as-mismatch", lambda L: L.zeros(2, 3).expand_as(L.zeros(3, 2))),
    ("view-as-mismatch", lambda L: L.zeros(2, 3).view_as(L.zeros(5))),
]


@pytest.mark.parametrize("fn", [c[1] for c in ERROR_CASES], ids=[c[0] for c in ERROR_CASES])
def test_errors_match_torch(fn):
    assert_same_error(fn)


def test_view_error_texts():
    x = nbgrad.arange(6.0).reshape(2, 3)
    with pytest.raises(RuntimeError, match=r"^view size is not compatible with input tensor's size "
                                           r"and stride \(at least one dimension spans across two "
                                           r"contiguous subspaces\)\. "
                                           r"Use \.reshape\(\.\.\.\) instead\.$"):
        x.t().view(6)
    with pytest.raises(RuntimeError, match=r"^shape '\[5\]' is invalid for input of size 6$"):
        x.view(5)
    with pytest.raises(IndexError, match=r"^Dimension out of range \(expected to be in range of "
                                         r"\[-2, 1\], but got 2\)$"):
        x.transpose(0, 2)


@pytest.mark.parametrize("fn", [
    lambda L: L.zeros(2, 3).view(2.0, 3),
    lambda L: L.zeros(2, 3).reshape([2.5, 3]),
    lambda L: L.zeros(2, 3).view(),
    lambda L: L.zeros(2, 3).reshape(),
    lambda L: L.zeros(2, 3).permute(),
    lambda L: L.zeros(2, 3).expand(),
], ids=["view-float", "reshape-float", "view-no-args", "reshape-no-args", "permute-no-args",
        "expand-no-args"])
def test_bad_arguments_raise_type_error(fn):
    assert_same_error(fn, exact=False)


def test_failed_shape_ops_change_nothing():
    x = nbgrad.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError):
        x.t().view(6)
    assert x.is_leaf and x._version == 0 and x.grad is None


def test_mT_of_a_vector_is_refused_like_torch():
    assert_same_error(lambda L: L.zeros(3).mT)


# ------------------------------------------------------------- properties
@st.composite
def permuted_reshapes(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    perm = tuple(draw(st.permutations(range(len(shape)))))
    n = int(np.prod(shape))
    divisors = [d for d in range(1, n + 1) if n % d == 0]
    rows = draw(st.sampled_from(divisors))
    return shape, perm, (rows, -1)


@given(permuted_reshapes())
def test_permute_then_reshape_matches_numpy_and_torch(case):
    """Values against NumPy; whether reshape gave a view (shared memory)
    against PyTorch, whose rule is that of NumPy's copy=False reshape."""
    shape, perm, new_shape = case
    array = np.arange(float(np.prod(shape))).reshape(shape)
    x = nbgrad.tensor(array, dtype=nbgrad.float64, requires_grad=True)
    y = x.permute(perm).reshape(new_shape)
    expected = array.transpose(perm).reshape(new_shape)
    np.testing.assert_array_equal(y.detach().numpy(), expected)
    tx = torch.tensor(array, requires_grad=True)
    ty = tx.permute(perm).reshape(new_shape)
    assert shares_memory(y, x) == shares_memory(ty, tx)
    assert node_name(y.grad_fn) == node_name(ty.grad_fn)
    w = np.arange(expected.size, dtype=np.float64).reshape(expected.shape)
    (y * nbgrad.tensor(w)).sum().backward()
    (ty * torch.tensor(w)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


@given(st.lists(st.integers(1, 3), min_size=0, max_size=3), st.data())
def test_unsqueeze_squeeze_round_trip(shape, data):
    x = nbgrad.tensor(np.arange(float(np.prod(shape))).reshape(shape), dtype=nbgrad.float64,
                      requires_grad=True)
    dim = data.draw(st.integers(-len(shape) - 1, len(shape)))
    u = x.unsqueeze(dim)
    assert u.shape == np.expand_dims(x.detach().numpy(), dim).shape
    back = u.squeeze(dim)
    assert back.shape == x.shape and shares_memory(back, x)
    back.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones(shape))


# ------------------------------------------------------------ on every device
VIEWS = {
    "view": lambda t: t.view(3, 4),
    "view-infer": lambda t: t.view(-1, 2),
    "reshape": lambda t: t.reshape(2, 6),
    "reshape-copy": lambda t: t.t().reshape(12),
    "reshape-alias": lambda t: t[:, ::2].reshape(4, 2, 1),  # a view of a non-contiguous tensor
    "flatten": lambda t: t.flatten(),
    "flatten-part": lambda t: t.view(2, 2, 3).flatten(1),
    "permute": lambda t: t.view(2, 2, 3).permute(2, 0, 1),
    "transpose": lambda t: t.transpose(0, 1),
    "t": lambda t: t.t(),
    "T": lambda t: t.T,
    "mT": lambda t: t.view(2, 2, 3).mT,
    "squeeze": lambda t: t.view(1, 4, 1, 3).squeeze(),
    "squeeze-dim": lambda t: t.view(1, 4, 1, 3).squeeze(2),
    "unsqueeze": lambda t: t.unsqueeze(1),
    "expand": lambda t: t[:, :1].expand(4, 3),
    "expand-new-dims": lambda t: t[0].expand(2, 3, -1),
    "expand_as": lambda t: t[1:2].expand_as(t),
    "view_as": lambda t: t.view_as(lib_of(t).zeros(6, 2)),
    "contiguous": lambda t: t.t().contiguous(),
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_views_on_the_device_match_torch(name, device):
    """Values, strides, offset, and whether a view of the base, as in torch;
    a backward that reads the view's gradient twice."""
    fn = VIEWS[name]
    run_like_torch(lambda x: fn(x) * 2 + fn(x), values((4, 3), 1), device=device)
    ours, theirs = nbgrad.tensor(values((4, 3), 1), device=device), torch.tensor(values((4, 3), 1))
    a, b = fn(ours), fn(theirs)
    assert (a.stride(), a.storage_offset(), a.is_contiguous()) == (
        b.stride(), b.storage_offset(), b.is_contiguous())
    assert (a._base is ours) == (b._base is theirs)


def test_writes_through_views_on_the_device_reach_the_base_like_torch(device):
    ours, theirs = nbgrad.tensor(values((2, 3), 2), device=device), torch.tensor(values((2, 3), 2))
    for t in (ours, theirs):
        v = t.t()[1:]
        v.mul_(10)
        t.view(-1)[0] = 5.0
        assert t._version == v._version == 2
    assert_same_tensor(ours, theirs)


@pytest.mark.parametrize("call", [
    lambda t: t.view(5, -1), lambda t: t.t().view(12), lambda t: t.permute(0, 0),
    lambda t: t.expand(3, 3), lambda t: t.squeeze(5), lambda t: t.t().t().t().view(-1, -1),
    lambda t: t[:1].expand(2, 3).add_(1),
], ids=["view-size", "view-stride", "permute-dup", "expand", "squeeze-dim", "two-infers",
        "write-expanded"])
def test_view_errors_on_the_device_match_torch(call, device):
    raises_like_torch(call, values((4, 3), 4), device=device)


def test_gradient_of_an_expand_is_summed_on_the_device_like_torch(device):
    def fn(x):
        return x.unsqueeze(0).expand(3, 2, 3) * lib_of(x).arange(3.0, device=x.device).view(3, 1, 1)
    run_like_torch(fn, values((2, 3), 5), device=device, dtype=nbgrad.float64)
