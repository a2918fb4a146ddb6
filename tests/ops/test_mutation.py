"""Aliasing and mutation (issue 3): detach, detach_, .data, clone, copy_,
requires_grad_; the checks PyTorch makes before an in-place write (a refused
write changes nothing); and history rebasing after in-place writes on
non-leaves and through views (CopySlices).

Every scenario is written once against a library ``lib`` and run side by side
in nbgrad and PyTorch 2.13 (the reference); the two traces (values, versions,
flags, node names, which call raised and with which normalised message, and
gradients) must agree.
"""

import warnings

import numpy as np
import pytest
import torch

import nbgrad

from differential import differential
from helpers import (assert_same_error, assert_same_tensor, node_name, raises_like_torch,
                     run_like_torch, second_derivatives_like_torch, values)
from nbgrad.autograd import gradgradcheck



def snapshot(t):
    """Everything a refused write must leave alone."""
    return (t.detach().numpy().copy(), t._version, t._grad_fn, t.requires_grad, t._grad,
            t._view_version)


def assert_refused_changes_nothing(write, *tensors, match):
    """``write()`` raises RuntimeError matching ``match`` and leaves every tensor as it was."""
    before = [snapshot(t) for t in tensors]
    with pytest.raises(RuntimeError, match=match):
        write()
    for t, (data, version, grad_fn, requires_grad, grad, view_version) in zip(tensors, before):
        np.testing.assert_array_equal(t.detach().numpy(), data)
        assert t._version == version
        assert t._grad_fn is grad_fn
        assert t.requires_grad == requires_grad
        assert t._grad is grad
        assert t._view_version == view_version


# ------------------------------------------------------------------ 2. aliases


def test_detach_is_an_untaped_alias_sharing_memory_and_counter():
    def scenario(lib, tr):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        for name, source in (("leaf", x), ("non-leaf", y)):
            d = source.detach()
            tr.state(f"detach of {name}", d)
            d[0] = 10.0  # visible through the source, bumps the shared counter
            tr.state(f"{name} after a write through its detach", source)
            with lib.no_grad():
                source[1] = 20.0  # and the other way round
            tr.state(f"detach of {name} sees the source's write", d)
            tr.version(f"{name}, detach", source, d)
        tr.note("shares memory", np.shares_memory(y.detach().numpy(), y.detach().detach().numpy()))

    differential(scenario)
    x = nbgrad.tensor([1.0, 2.0])
    assert np.shares_memory(x.detach().numpy(), x.numpy())
    assert x.detach() is not x


def test_detach_of_a_view_is_not_a_view_for_autograd():
    def scenario(lib, tr):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        h = x * 1
        d = h[1:].detach()
        d.mul_(5)  # allowed: d does not require grad; h sees it
        tr.state("h", h)
        tr.state("d", d)
        tr.call("backward through h", lambda: h.sum().backward())
        tr.grad("x.grad", x)

    differential(scenario)


def test_detach_in_place():
    def scenario(lib, tr):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        tr.note("returns self", y.detach_() is y)
        tr.state("y after detach_", y)
        y.add_(1)  # now a plain tensor: in-place is fine
        tr.state("y", y)
        x2 = lib.tensor([1.0, 2.0], requires_grad=True)
        x2.detach_()
        tr.state("leaf after detach_", x2)
        h = x * 1
        v = h[1:]
        tr.call("detach_ on a view", lambda: v.detach_())
        tr.state("view unchanged", v)
        tr.state("base unchanged", h)

    differential(scenario)
    h = nbgrad.tensor([1.0, 2.0], requires_grad=True) * 1
    v = h[1:]
    assert_refused_changes_nothing(v.detach_, v, h,
                                   match=r"^Can't detach views in-place. Use detach\(\) instead.")


def test_detach_in_place_of_a_base_with_live_views():
    def scenario(lib, tr):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        h = x * 1
        v = h[1:]
        h.detach_()
        tr.state("view keeps its history", v)
        tr.call("backward through the view", lambda: (v * v).sum().backward())
        tr.grad("x.grad", x)

    differential(scenario)


def test_saved_tensor_detached_in_place_is_refused():
    def scenario(lib, tr):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.tensor([3.0, 4.0], requires_grad=True)
        h = x * 1
        out = h * w  # saves h (for w's gradient)
        h.detach_()
        tr.call("backward", lambda: out.sum().backward())
        tr.grad("w.grad", w)

    differential(scenario)


def test_clone_is_a_taped_copy():
    def scenario(lib, tr):
        x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        c = x.clone()
        tr.state("clone of a leaf", c)
        c.mul_(2)  # new storage: x unchanged, only c's counter moves
        tr.state("x", x)
        tr.state("c", c)
        (c * c).sum().backward()
        tr.grad("x.grad", x)
        with lib.no_grad():
            tr.state("clone under no_grad", x.clone())
        tr.state("clone of a plain tensor", lib.ones(2).clone())

    differential(scenario)
    x = nbgrad.ones(3)
    assert not np.shares_memory(x.clone().numpy(), x.numpy())


def test_clone_preserves_the_layout_of_a_transpose():
    def scenario(lib, tr):
        ct = lib.zeros(2, 3).t().clone()
        tr.note("stride", ct.stride())
        tr.note("contiguous", ct.is_contiguous())

    differential(scenario)


def test_copy_is_taped_with_respect_to_src():
    def scenario(lib, tr):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        src = lib.tensor([4.0, 5.0, 6.0], requires_grad=True)
        h = x * 3
        tr.note("returns self", h.copy_(src * 2) is h)
        tr.state("h", h)
        h.sum().backward()
        tr.grad("x.grad (the overwritten value gets none)", x)
        tr.grad("src.grad", src)

        # A plain destination becomes part of the graph.
        dst = lib.zeros(2, 3)
        dst.copy_(src)  # broadcast over rows
        tr.state("dst", dst)
        (dst * lib.tensor([[1.0], [2.0]])).sum().backward()
        tr.grad("src.grad, broadcast undone", src)

        # Across dtypes: the gradient comes back in src's dtype.
        s64 = lib.tensor([1.5, 2.5], dtype=lib.float64, requires_grad=True)
        d32 = lib.zeros(2)
        d32.copy_(s64)
        tr.state("d32", d32)
        (d32 * 3).sum().backward()
        tr.grad("s64.grad", s64)

        # From an integer tensor: a plain write.
        d = lib.zeros(3)
        d.copy_(lib.tensor([1, 2, 3]))
        tr.state("from int", d)
        tr.call("copy_ of a non-broadcastable src", lambda: d.copy_(lib.ones(2)))
        tr.state("unchanged", d)

    differential(scenario)


def test_requires_grad_in_place():
    def scenario(lib, tr):
        a = lib.tensor([1.0, 2.0])
        tr.note("returns self", a.requires_grad_() is a)
        tr.state("a", a)
        a.requires_grad_(False)
        tr.state("a off", a)
        a.requires_grad = True
        tr.state("a on again (setter)", a)
        y = a * 2
        tr.call("requires_grad_(False) on a non-leaf", lambda: y.requires_grad_(False))
        tr.call("requires_grad_(True) on a non-leaf", lambda: y.requires_grad_(True))
        tr.state("y unchanged", y)
        tr.call("on an int tensor", lambda: lib.tensor([1, 2]).requires_grad_())
        tr.call("False on an int tensor", lambda: lib.tensor([1, 2]).requires_grad_(False))
        v = a[1:]
        tr.state("view of a leaf", v)
        tr.call("requires_grad_(False) on that view", lambda: v.requires_grad_(False))
        with lib.no_grad():
            w = a[1:]
        tr.state("view made under no_grad", w)
        tr.call("requires_grad_(False) on it", lambda: w.requires_grad_(False))
        tr.state("it now", w)

    differential(scenario)


# ------------------------------------------------ 4. the checks before mutation

LEAF_WRITES = {
    "add_": lambda lib, t: t.add_(1.0),
    "mul_ tensor": lambda lib, t: t.mul_(lib.ones(t.shape)),
    "zero_": lambda lib, t: t.zero_(),
    "fill_": lambda lib, t: t.fill_(3.0),
    "copy_": lambda lib, t: t.copy_(lib.zeros(t.shape)),
    "sigmoid_": lambda lib, t: t.sigmoid_(),
    "clamp_": lambda lib, t: t.clamp_(0.0, 1.0),
    "+=": lambda lib, t: t.__iadd__(1.0),
    "*=": lambda lib, t: t.__imul__(2.0),
    "setitem": lambda lib, t: t.__setitem__(0, 9.0),
    "setitem tensor": lambda lib, t: t.__setitem__(slice(None), lib.tensor(9.0)),
    "setitem mask": lambda lib, t: t.__setitem__(t.detach() > 1.5, 0.0),
}

VIEWS = {
    "slice": lambda t: t[1:],
    "select": lambda t: t[1],
    "slice of slice": lambda t: t[:, 1:][1:],
    "transpose": lambda t: t.t(),
    "view": lambda t: t.view(-1),
    "unsqueeze": lambda t: t.unsqueeze(0),
    "expand-free reshape": lambda t: t.reshape(3, 2),
}


# x[0] = v writes through the view x[0] (made under grad mode), so PyTorch names a view.
_THROUGH_A_VIEW = {"setitem"}


@pytest.mark.parametrize("write", sorted(LEAF_WRITES))
def test_leaf_requiring_grad_refuses_writes(write):
    def scenario(lib, tr):
        x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        tr.call(write, lambda: LEAF_WRITES[write](lib, x))
        tr.state("x unchanged", x)
        tr.grad("x.grad", x)
        with lib.no_grad():  # allowed here, and still counted
            LEAF_WRITES[write](lib, x)
        tr.state("x written under no_grad", x)
        (x * x).sum().backward()  # the graph built afterwards uses the new value
        tr.grad("x.grad", x)

    differential(scenario)
    x = nbgrad.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    view = "a view of " if write in _THROUGH_A_VIEW else ""
    assert_refused_changes_nothing(
        lambda: LEAF_WRITES[write](nbgrad, x), x,
        match=rf"^{view}a leaf Variable that requires grad is being used in an in-place "
              r"operation.$")


@pytest.mark.parametrize("view", sorted(VIEWS))
@pytest.mark.parametrize("write", ["add_", "zero_", "copy_", "sigmoid_", "*=", "setitem"])
def test_view_of_leaf_requiring_grad_refuses_writes(write, view):
    def scenario(lib, tr):
        x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        v = VIEWS[view](x)
        tr.state("view", v)
        tr.call(write, lambda: LEAF_WRITES[write](lib, v))
        tr.state("view unchanged", v)
        tr.state("x unchanged", x)
        with lib.no_grad():
            LEAF_WRITES[write](lib, v)
        tr.state("x written through the view under no_grad", x)
        tr.state("the view afterwards", v)
        tr.call("backward through the view", lambda: (v * 2).sum().backward())
        tr.grad("x.grad", x)

    differential(scenario)
    x = nbgrad.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    v = VIEWS[view](x)
    assert_refused_changes_nothing(
        lambda: LEAF_WRITES[write](nbgrad, v), v, x,
        match=r"^a view of a leaf Variable that requires grad is being used in an in-place "
              r"operation.$")


@pytest.mark.parametrize("base_kind", ["leaf", "non-leaf"])
def test_view_made_under_no_grad_then_written_with_grad_on(base_kind):
    def scenario(lib, tr):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        base = x if base_kind == "leaf" else x * 1
        with lib.no_grad():
            v = base[1:]
        tr.state("view made under no_grad", v)
        tr.call("v.mul_(2)", lambda: v.mul_(2))
        tr.state("v unchanged", v)
        tr.state("base unchanged", base)
        with lib.no_grad():
            v.mul_(2)  # both under no_grad: allowed
        tr.state("base after the no_grad write", base)
        with lib.no_grad():
            v2 = base[:2]
        if base_kind == "non-leaf":
            base.add_(1)  # the base changes with grad on: the no_grad view's history is ambiguous
            tr.state("base", base)
        tr.state("other no_grad view", v2)
        tr.call("v2.grad_fn, twice", lambda: (v2.grad_fn, v2.grad_fn))
        tr.call("backward through the base", lambda: base.sum().backward())
        tr.grad("x.grad", x)

    differential(scenario)
    x = nbgrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    base = x if base_kind == "leaf" else x * 1
    with nbgrad.no_grad():
        v = base[1:]
    assert_refused_changes_nothing(lambda: v.mul_(2), v, base,
                                   match=r"^A view was created in no_grad mode and is being "
                                         r"modified inplace with grad mode enabled.")


def test_view_of_a_view_made_under_no_grad():
    def scenario(lib, tr):
        x = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        z = x.sigmoid()
        with lib.no_grad():
            v = z[:3]
        w = v[:2]  # made with grad on, from the no_grad view: it has a grad_fn
        tr.state("w", w)
        tr.call("w.mul_(2)", lambda: w.mul_(2))
        u = v.t()
        tr.call("u.add_(1)", lambda: u.add_(1))
        z.mul_(2)  # the base changes with grad on
        tr.call("w.grad_fn", lambda: w.grad_fn)
        tr.call("v.grad_fn", lambda: v.grad_fn)
        tr.call("a new view of v", lambda: v[1:])
        tr.call("backward through z", lambda: z.sum().backward())
        tr.grad("x.grad", x)

    differential(scenario)


def test_view_made_under_no_grad_of_a_plain_tensor():
    def scenario(lib, tr):
        plain = lib.zeros(4)
        with lib.no_grad():
            v = plain[:3]
        w = lib.ones(3, requires_grad=True)
        tr.call("v.add_(w)", lambda: v.add_(w))
        tr.state("v", v)
        plain2 = lib.zeros(4)
        with lib.no_grad():
            v2 = plain2[:3]
        plain2.add_(lib.ones(4, requires_grad=True))
        tr.state("v2 after its base joined a graph", v2)

    differential(scenario)


def test_view_whose_base_became_a_plain_leaf():
    def scenario(lib, tr):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        h = x * 1
        v = h[:2]  # a view with history
        h.detach_()  # its base is now a leaf that does not require grad
        tr.state("v", v)
        tr.call("v.mul_(2)", lambda: v.mul_(lib.tensor(2.0)))
        w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True) * 1
        u = w[1:]
        tr.call("u.add_(1), base still a non-leaf", lambda: u.add_(1))
        tr.state("u", u)

    differential(scenario)


def test_view_of_a_leaf_view_whose_base_needs_no_grad():
    # The fuzzer's crash: the re-derived view's base needs no gradient, so its
    # AsStrided node has no edge (PyTorch runs it and delivers nothing).
    def scenario(lib, tr):
        x = lib.ones(2, 3)[::2].requires_grad_()
        v = x[-1, :]
        (x * 2).sum().backward()
        with lib.no_grad():
            x -= x.grad
        tr.state("v", v)
        tr.call("v.sum().backward()", lambda: v.sum().backward())
        tr.grad("x", x)

    differential(scenario)


STALE_VIEW_WRITES = {
    "neg_": lambda L, v: v.neg_(),
    "setitem-number": lambda L, v: v.__setitem__(0, 2.0),
    "setitem-list": lambda L, v: v.__setitem__([0, 0], 2.0),
    "mul_-tensor": lambda L, v: v.mul_(L.tensor(2.0, requires_grad=True)),
}


@pytest.mark.parametrize("expanded", [False, True], ids=["plain", "expanded"])
@pytest.mark.parametrize("write", sorted(STALE_VIEW_WRITES))
def test_view_whose_base_joined_a_graph_is_a_leaf_until_its_history_is_read(write, expanded):
    # The fuzzer's "a leaf Variable ..." raised only in torch: PyTorch's in-place
    # check asks the view's stored grad_fn (still none: it was made while its
    # base needed no gradient); reading grad_fn (or is_leaf) re-derives it.
    def scenario(lib, tr):
        for read in (False, True):
            w = lib.tensor([2.0], requires_grad=True)
            base = lib.ones(3) if expanded else lib.ones(2, 3)
            v = base.expand(2, 3) if expanded else base[1]
            tr.note("v.is_leaf before", v.is_leaf)  # read while the base needs no gradient
            base.mul_(w)  # the base joins a graph
            if read:
                tr.note("v.is_leaf after", v.is_leaf)
            tr.call(f"{write}, history read: {read}",
                    lambda: STALE_VIEW_WRITES[write](lib, v))
            tr.note("v.requires_grad", v.requires_grad)

    differential(scenario)


def test_view_of_a_base_that_then_requires_grad_gets_a_history():
    # PyTorch re-derives a view's history whenever its version moved since it was last
    # derived; a read while the base needed no gradient does not count as one.
    def scenario(lib, tr):
        x = lib.tensor([1.0, 2.0, 3.0])
        v = x[1:]
        x.add_(1)
        tr.state("v after its base was written", v)
        x.requires_grad_()
        tr.state("v after its base requires grad", v)
        tr.call("v.sum().backward()", lambda: v.sum().backward())
        tr.grad("x", x)

    differential(scenario)


def test_write_with_an_operand_requiring_grad_joins_the_graph():
    def scenario(lib, tr):
        w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        a = lib.zeros(3)
        a.add_(w)
        tr.state("a", a)
        b = lib.ones(2, 3)
        b[1].mul_(w)  # through a view of a plain tensor: the base joins via CopySlices
        tr.state("b", b)
        tr.state("b[1]", b[1])
        (a * 2 + b.sum(0)).sum().backward()
        tr.grad("w.grad", w)
        c = lib.zeros(3)
        with lib.no_grad():
            c.add_(w)
        tr.state("under no_grad it stays plain", c)

    differential(scenario)


def test_other_refused_writes_change_nothing():
    def scenario(lib, tr):
        e = lib.tensor([1.0, 2.0]).expand(3, 2)
        tr.call("write into an expanded tensor", lambda: e.add_(1))
        tr.call("sigmoid_ an expanded tensor", lambda: e.sigmoid_())
        tr.call("copy_ into an expanded tensor", lambda: e.copy_(lib.ones(3, 2)))
        tr.state("expanded", e)
        i = lib.tensor([1, 2, 3])
        tr.call("int += float", lambda: i.add_(1.5))
        tr.call("int.mul_(float tensor)", lambda: i.mul_(lib.ones(3)))
        tr.state("int", i)
        f = lib.ones(2)
        tr.call("non-broadcastable shape", lambda: f.add_(lib.ones(2, 2)))
        tr.state("f", f)

    differential(scenario)
    e = nbgrad.tensor([1.0, 2.0]).expand(3, 2)
    assert_refused_changes_nothing(lambda: e.add_(1), e,
                                   match="more than one element of the written-to tensor")
    i = nbgrad.tensor([1, 2, 3])
    assert_refused_changes_nothing(lambda: i.add_(1.5), i, match="can't be cast")
    f = nbgrad.ones(2)
    assert_refused_changes_nothing(lambda: f.add_(nbgrad.ones(2, 2)), f,
                                   match="doesn't match the broadcast shape")


def test_fill_into_an_expanded_tensor_is_allowed():
    """fill_/zero_ with a number skip the internal-overlap check; with a tensor
    value, or through __setitem__, it still applies (PyTorch's rules)."""
    def scenario(lib, tr):
        e = lib.tensor([1.0, 2.0]).expand(3, 2)
        tr.call("zero_", lambda: e.zero_())
        tr.call("fill_", lambda: e.fill_(3.0))
        tr.call("fill_(tensor)", lambda: e.fill_(lib.tensor(4.0)))
        tr.call("e[...] = 5", lambda: e.__setitem__(Ellipsis, 5.0))
        tr.state("e", e)
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        tr.call("y.expand(3, 2).fill_(7)", lambda: y.expand(3, 2).fill_(7.0))
        tr.state("y", y)  # (PyTorch's CopySlices cannot run backward through it)

    differential(scenario)


def test_inplace_op_with_a_partially_overlapping_operand_is_refused():
    def scenario(lib, tr):
        z = lib.arange(5, dtype=lib.float64)
        h = z[:4]
        tr.call("h.add_(z[1:])", lambda: h.add_(z[1:]))
        tr.call("h.mul_(z[1:])", lambda: h.mul_(z[1:]))
        tr.call("h += z[1:]", lambda: h.__iadd__(z[1:]))
        tr.call("h.add_(h): a full overlap is fine", lambda: h.add_(h))
        tr.state("z", z)

    differential(scenario)


def _set(key, value):
    def built(k, t):
        return k(t) if callable(k) else k

    def write(t):
        items = tuple(built(k, t) for k in key) if isinstance(key, tuple) else built(key, t)
        t.__setitem__(items, built(value, t))
    return write


def _lib(t):
    return torch if isinstance(t, torch.Tensor) else nbgrad


def _expanded(L):
    return L.arange(1.0, 4.0).expand(2, 3)


# (id, tensor, write): PyTorch's overlap checks (assert_no_internal_overlap,
# assert_no_partial_overlap, index_put_'s assert_no_overlap), false positives and
# false negatives alike; empty tensors have no element to overlap.
OVERLAP_WRITES = [
    ("empty-add_", lambda L: L.zeros(2, 0), lambda t: t.add_(1)),
    ("empty-zero_", lambda L: L.zeros(2, 0), lambda t: t.zero_()),
    ("empty-fill_", lambda L: L.zeros(0, 3), lambda t: t.fill_(2.0)),
    ("empty-copy_", lambda L: L.zeros(0, 2), lambda t: t.copy_(t + 1)),
    ("empty-copy_-broadcast", lambda L: L.zeros(0, 2), lambda t: t.copy_(t.sum(0))),
    ("empty-setitem", lambda L: L.zeros(2, 0), _set(slice(None), 1.0)),
    ("empty-expanded-add_", lambda L: L.ones(1, 3).expand(0, 3), lambda t: t.add_(1)),
    ("expanded-add_", lambda L: L.ones(1).expand(3), lambda t: t.add_(1)),
    ("expanded-size-1-add_", lambda L: L.ones(3).expand(1, 3), lambda t: t.add_(1)),
    ("0d-into-its-unsqueeze", lambda L: L.tensor(2.0), lambda t: t.unsqueeze(-1).__setitem__(
        slice(0, 1), t)),
    ("0d-fill_-into-its-view", lambda L: L.tensor(2.0), lambda t: t.view(1).fill_(t)),
    ("0d-copy_-into-its-view", lambda L: L.tensor(2.0), lambda t: t.view(1).copy_(t)),
    ("0d-add_-into-its-view", lambda L: L.tensor(2.0), lambda t: t.view(1).add_(t)),
    ("fill_-with-own-element", lambda L: L.arange(4.0), lambda t: t.fill_(t[2])),
    ("setitem-own-element", lambda L: L.arange(4.0), _set(slice(None), lambda t: t[2])),
    ("mul_-by-own-element", lambda L: L.arange(1.0, 4.0), lambda t: t.mul_(t[0])),
    ("copy_-expanded-source", lambda L: L.arange(3.0), lambda t: t[1:].copy_(t[:1].expand(2))),
    ("copy_-transpose-of-self", lambda L: L.arange(4.0).view(2, 2), lambda t: t.copy_(t.t())),
    ("copy_-interleaved", lambda L: L.arange(4.0), lambda t: t[::2].copy_(t[1::2])),
    ("copy_-size-1-strides", lambda L: L.ones(3, 3), lambda t: t[:, :1].copy_(t[:1, :1].t())),
    ("index-put-itself", lambda L: L.arange(4.0), _set([0, 1, 2, 3], lambda t: t)),
    ("index-put-rows-itself", lambda L: L.arange(4.0).view(2, 2), _set([0, 1], lambda t: t)),
    ("mask-put-itself", lambda L: L.arange(4.0), lambda t: t.__setitem__(t >= 0, t)),
    ("index-put-not-dense", lambda L: L.arange(4.0).view(2, 2),
     _set((slice(None), [0]), lambda t: t[:, 1:])),
    ("index-put-empty", lambda L: L.arange(4.0), _set([], lambda t: t[:0])),
    # Into an expanded tensor: index_put_ writes, with a deprecation warning (a second
    # one from masked_fill_ for a lone mask and a one-element value); the others refuse.
    ("expanded-list=number", _expanded, _set([0], 1.0)),
    ("expanded-list=row", _expanded, _set([0], lambda t: _lib(t).tensor([1.0, 2.0, 3.0]))),
    ("expanded-list=0d", _expanded, _set([0], lambda t: _lib(t).tensor(5.0))),
    ("expanded-lists=number", _expanded, _set([0, 1], 1.0)),
    ("expanded-columns=tensor", _expanded,
     _set((slice(None), [0, 2]), lambda t: _lib(t).tensor([[1.0, 2.0], [3.0, 4.0]]))),
    ("expanded-index-tensor=number", _expanded, _set(lambda t: _lib(t).tensor([1]), 7.0)),
    ("expanded-index-tensor=row", _expanded,
     _set(lambda t: _lib(t).tensor([1]), lambda t: _lib(t).tensor([1.0, 2.0, 3.0]))),
    ("expanded-int-then-list", _expanded, _set((1, [0, 2]), 4.0)),
    ("expanded-mask=number", _expanded, _set(lambda t: _lib(t).tensor([1.0, 0.0]) > 0, 1.0)),
    ("expanded-bool-list=number", _expanded, _set([True, False], 5.0)),
    ("expanded-mask=1-element", _expanded,
     _set(lambda t: _lib(t).tensor([1.0, 0.0]) > 0, lambda t: _lib(t).tensor([5.0]))),
    ("expanded-mask=0d", _expanded,
     _set(lambda t: _lib(t).tensor([1.0, 0.0]) > 0, lambda t: _lib(t).tensor(5.0))),
    ("expanded-columns-mask=number", _expanded,
     _set((slice(None), lambda t: _lib(t).tensor([1.0, 0.0, 1.0]) > 0), 5.0)),
    ("expanded-2d-mask=number", _expanded, _set(lambda t: _lib(t).ones(2, 3) > 0, 1.0)),
    ("expanded-2d-mask=values", _expanded,
     _set(lambda t: _lib(t).tensor([[1.0, 0.0, 1.0]] * 2) > 0,
          lambda t: _lib(t).tensor([1.0, 2.0, 3.0, 4.0]))),
    ("expanded-mask-and-list", _expanded,
     _set((lambda t: _lib(t).tensor([1.0, 0.0]) > 0, [0]), 5.0)),
    ("expanded-0d-true-tensor", _expanded, _set(lambda t: _lib(t).tensor(1.0) > 0, 5.0)),
    ("expanded-list=own-row", _expanded, _set([0], lambda t: t[0])),
    ("expanded-list-out-of-range", _expanded, _set([5], 1.0)),
    ("expanded-list-wrong-dtype", _expanded, _set([0], lambda t: _lib(t).tensor([1, 2, 3]))),
    ("expanded-list-wrong-shape", _expanded, _set([0], lambda t: _lib(t).tensor([1.0, 2.0]))),
    ("expanded-mask-wrong-shape", _expanded, _set(lambda t: _lib(t).tensor([1.0, 0, 1]) > 0, 1.0)),
    ("expanded-empty-list", _expanded, _set([], 1.0)),
    ("expanded-float-index-tensor", _expanded, _set(lambda t: _lib(t).tensor([0.0]), 1.0)),
    ("expanded-int", _expanded, _set(0, 1.0)),
    ("expanded-int=row", _expanded, _set(0, lambda t: _lib(t).tensor([1.0, 2.0, 3.0]))),
    ("expanded-slice", _expanded, _set(slice(None), 1.0)),
    ("expanded-size-1-slice=row", _expanded,
     _set(slice(0, 1), lambda t: _lib(t).tensor([1.0, 2.0, 3.0]))),
    ("expanded-column", _expanded, _set((slice(None), 0), 1.0)),
    ("expanded-ellipsis", _expanded, _set(Ellipsis, 1.0)),
    ("expanded-true", _expanded, _set(True, 1.0)),
    ("expanded-false", _expanded, _set(False, 1.0)),
    ("expanded-mul_", _expanded, lambda t: t.mul_(2)),
    ("expanded-add_-tensor", _expanded, lambda t: t.add_(_lib(t).ones(2, 3))),
    ("expanded-copy_", _expanded, lambda t: t.copy_(_lib(t).ones(2, 3))),
    ("expanded-sigmoid_", _expanded, lambda t: t.sigmoid_()),
    ("expanded-fill_", _expanded, lambda t: t.fill_(2.0)),
    ("expanded-zero_", _expanded, lambda t: t.zero_()),
]


@pytest.mark.parametrize("make, write", [c[1:] for c in OVERLAP_WRITES],
                         ids=[c[0] for c in OVERLAP_WRITES])
def test_overlap_checks_match_torch(make, write):
    def scenario(lib, tr):
        t = make(lib)
        tr.warns("write", lambda: write(t))
        tr.state("t", t)
        if t._base is not None:
            tr.state("its base", t._base)

    differential(scenario)


def test_copy_checks_autograd_before_overlap():
    def scenario(lib, tr):
        x = lib.tensor([1.0, 2.0, 3.0, 4.0, 5.0], requires_grad=True)
        tr.call("x[:4].copy_(x[1:])", lambda: x[:4].copy_(x[1:]))
        s = x.sigmoid()
        with lib.no_grad():
            v = s[:4]
        tr.call("v.copy_(s[1:])", lambda: v.copy_(s[1:]))

    differential(scenario)


# name -> the target, made from a leaf x of shape (3,) that requires grad. PyTorch's
# autograd layer checks the target before its kernels check the key, the value
# and the memory (so no expanded-tensor warning is issued either).
CHECK_ORDER_TARGETS = {
    "expanded view": lambda L, x: x.expand(2, 3),
    "expanded view made in no_grad mode": lambda L, x: _no_grad(L, lambda: x.expand(2, 3)),
    "leaf": lambda L, x: x,
    "view made in no_grad mode": lambda L, x: _no_grad(L, lambda: x[:]),
}

CHECK_ORDER_WRITES = {
    "add_": lambda t: t.add_(1.0),
    "copy_": lambda t: t.copy_(_lib(t).ones(t.shape)),
    "sigmoid_": lambda t: t.sigmoid_(),
    "fill_": lambda t: t.fill_(1.0),
    "setitem slice": _set(slice(None), 1.0),
    "setitem True": _set(True, 1.0),
    "setitem list": _set([0], 1.0),
    "setitem list out of range": _set([5], 1.0),
    "setitem mask of the wrong shape": _set(lambda t: _lib(t).ones(7) > 0, 1.0),
    "setitem unbroadcastable lists": _set(([0, 0], [0, 1, 2]), 1.0),
    "setitem value of the wrong shape": _set([0], lambda t: _lib(t).ones(7)),
    "setitem float index tensor": _set(lambda t: _lib(t).tensor([0.0]), 1.0),
    "setitem empty float index tensor": _set(lambda t: _lib(t).tensor([]), 1.0),
    "setitem value of the wrong dtype":
        _set([0], lambda t: _lib(t).ones(1, dtype=_lib(t).float64)),
}


def _no_grad(L, make):
    with L.no_grad():
        return make()


@pytest.mark.parametrize("target", sorted(CHECK_ORDER_TARGETS))
@pytest.mark.parametrize("write", sorted(CHECK_ORDER_WRITES))
def test_autograd_checks_come_before_key_value_and_overlap_checks(write, target):
    def scenario(lib, tr):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        t = CHECK_ORDER_TARGETS[target](lib, x)
        tr.warns("write", lambda: CHECK_ORDER_WRITES[write](t))
        tr.state("x", x)

    differential(scenario)


@pytest.mark.parametrize("base_requires_grad", [True, False], ids=["base-requires-grad", "plain"])
@pytest.mark.parametrize("key", [[0], "mask", (slice(None), [1])], ids=["list", "mask", "columns"])
def test_backward_through_a_write_into_an_expanded_tensor_matches_torch(key, base_requires_grad):
    """PyTorch's CopySlices copies the base's gradient into the expanded region
    (refused), only when the base needs one."""
    def scenario(lib, tr):
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=base_requires_grad)
        y = (a * 1).expand(2, 3)
        v = lib.tensor(2.0, requires_grad=True)
        index = lib.tensor([True, False]) if key == "mask" else key
        tr.warns("write", lambda: y.__setitem__(index, v))
        tr.state("y", y)
        tr.call("backward", lambda: (y * lib.arange(6.0).view(2, 3)).sum().backward())
        tr.grad("a.grad", a)
        tr.grad("v.grad", v)

    differential(scenario)


def test_leaf_check_comes_before_the_shape_check():
    def scenario(lib, tr):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        tr.call("x.add_(ones(3))", lambda: x.add_(lib.ones(3)))
        tr.state("x", x)

    differential(scenario)


# ----------------------------------------- 6. rebasing history after a write


def _leaf(lib, values=(1.0, 2.0, 3.0, 4.0)):
    return lib.tensor(list(values), requires_grad=True)


def chain_non_leaf_mul(lib, tr):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.mul_(3)
    tr.state("y", y)
    y.sum().backward()
    tr.grad("x.grad", x)


def chain_copyslices(lib, tr):
    a = _leaf(lib)
    b = a * 1
    b[1:3].mul_(10)
    tr.state("b", b)
    b.sum().backward()
    tr.grad("a.grad", a)


def chain_view_used_after_its_write(lib, tr):
    a = _leaf(lib)
    b = a * 1
    v = b[1:3]
    v.mul_(10)
    tr.state("v", v)
    (v * v).sum().backward()
    tr.grad("a.grad", a)


def chain_two_overlapping_views(lib, tr):
    a = _leaf(lib)
    w = lib.tensor([5.0, 7.0], requires_grad=True)
    b = a * 1
    v1, v2 = b[0:2], b[1:3]
    v1.mul_(2)  # changes b[1], which v2 also sees
    tr.state("v2", v2)
    (v2 * w).sum().backward()
    tr.grad("a.grad", a)
    tr.grad("w.grad", w)


def chain_view_of_a_view(lib, tr):
    a = lib.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]], requires_grad=True)
    b = a * 1
    v = b[1]
    vv = v[1:]
    vv.exp_()
    tr.state("vv", vv)
    tr.state("v", v)
    tr.state("b", b)
    (b * b).sum().backward()
    tr.grad("a.grad", a)


def chain_view_whose_base_changed_through_another_view(lib, tr):
    a = _leaf(lib)
    b = a * 1
    v1, v2 = b[:2], b[1:]
    v2.mul_(3)
    tr.state("v1", v1)
    (v1 * v1).sum().backward()
    tr.grad("a.grad", a)


def chain_transposed_view(lib, tr):
    a = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    b = a * 1
    bt = b.t()
    bt[0].mul_(5)
    bt.sigmoid_()
    tr.state("bt", bt)
    tr.state("b", b)
    (b * lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).sum().backward()
    tr.grad("a.grad", a)


def chain_base_written_then_old_view_used(lib, tr):
    a = _leaf(lib)
    b = a * 1
    v = b[1:]
    b.mul_(2)
    tr.state("v", v)
    (v * v).sum().backward()
    tr.grad("a.grad", a)


def chain_saved_output_then_overlapping_write(lib, tr):
    a = _leaf(lib, (0.1, 0.2, 0.3, 0.4))
    b = a * 1
    b[0:2].sigmoid_()  # saves its output, the region b[0:2]
    b[1:3].exp_()  # overwrites part of it
    tr.state("b", b)
    tr.call("backward", lambda: b.sum().backward())
    tr.grad("a.grad", a)


def chain_disjoint_writes_after_a_saving_write(lib, tr):
    a = _leaf(lib, (0.1, 0.2, 0.3, 0.4))
    b = a * 1
    b[0:2].sigmoid_()
    b[2:].exp_()  # disjoint memory, but the counter is per storage
    tr.state("b", b)
    tr.call("backward", lambda: b.sum().backward())
    tr.grad("a.grad", a)


def chain_view_write_with_an_operand_requiring_grad(lib, tr):
    a = _leaf(lib)
    w = lib.tensor([2.0, 3.0], requires_grad=True)
    b = a * 1
    b[1:3].mul_(w)
    tr.state("b", b)
    (b * b).sum().backward()
    tr.grad("a.grad", a)
    tr.grad("w.grad", w)


def chain_copy_into_a_view(lib, tr):
    a = _leaf(lib)
    w = lib.tensor([2.0, 3.0], requires_grad=True)
    b = a * 1
    b[1:3].copy_(w)
    tr.state("b", b)
    (b * lib.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    tr.grad("a.grad", a)
    tr.grad("w.grad", w)


def chain_setitem_tensor(lib, tr):
    a = _leaf(lib)
    w = lib.tensor([2.0, 3.0], requires_grad=True)
    b = a * 1
    b[1:3] = w * 2
    b[0] = 7.0
    tr.state("b", b)
    (b * b).sum().backward()
    tr.grad("a.grad", a)
    tr.grad("w.grad", w)


def chain_setitem_advanced_index(lib, tr):
    a = _leaf(lib)
    w = lib.tensor([2.0, 3.0], requires_grad=True)
    b = a * 1
    b[[0, 2]] = w
    b[b.detach() > 2.5] = 0.0
    tr.state("b", b)
    (b * lib.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    tr.grad("a.grad", a)
    tr.grad("w.grad", w)


def chain_write_to_a_non_leaf_saved_elsewhere(lib, tr):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    z = y * y  # saves y
    y.add_(1)
    tr.state("y", y)
    tr.call("backward through z", lambda: z.sum().backward())
    tr.call("backward through y", lambda: y.sum().backward())
    tr.grad("x.grad", x)


def chain_retain_grad_moves_with_the_rebase(lib, tr):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    y.mul_(3)
    (y * y).sum().backward()
    tr.grad("y.grad", y)
    tr.grad("x.grad", x)


def chain_retain_grad_of_a_view_moves_with_its_rederived_history(lib, tr):
    # The fuzzer's "grad None in nbgrad": a write through an alias re-derives the view's history.
    x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    v = x.permute(1, 0)
    v.retain_grad()
    x.detach()[0] = 5.0
    w = (x * 1)[1:]
    w.retain_grad()
    w.mul_(2)  # rebased through the base (CopySlices)
    (v.clamp(0.0, 4.5).sum() + w.sum()).backward()
    tr.grad("v.grad", v)
    tr.grad("w.grad", w)
    tr.grad("x.grad", x)


def chain_retain_grad_of_a_base_moves_to_its_copyslices(lib, tr):
    # The fuzzer's "grad None in torch": a backward through the base's old history only.
    w = lib.tensor([[1.0], [2.0]], requires_grad=True)
    h = w * 3
    before = h[0]  # reads the old history
    h.retain_grad()
    h[1:] = 2.0
    before.sum().backward(retain_graph=True)
    tr.grad("h.grad after a backward through the old history", h)
    h.sum().backward()
    tr.grad("h.grad", h)
    tr.grad("w.grad", w)


def chain_hook_registered_before_the_write(lib, tr):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    seen = []
    y.register_hook(lambda g: seen.append(g.detach().numpy().copy()))
    y.mul_(3)
    (y * y).sum().backward()
    tr.note("hook saw (the gradient of the old version)", [s.tolist() for s in seen])
    tr.grad("x.grad", x)


def chain_copyslices_runs_once_without_retain_graph(lib, tr):
    x = _leaf(lib)
    y = x.clone()
    y.sum().backward()
    y[0] = 1.5  # CopySlices over y's (saved-nothing) history
    tr.call("first backward through it", lambda: y.sum().backward())
    tr.call("second", lambda: y.sum().backward())
    tr.grad("x.grad", x)
    s = x.sigmoid()
    s.add_(1.0)
    s[0] = 2.0
    tr.call("stale sigmoid behind a CopySlices", lambda: s.sum().backward())
    tr.call("again: the CopySlices ran and was freed", lambda: s.sum().backward())
    t = x * 1
    t[1:].mul_(2)
    t.sum().backward(retain_graph=True)
    tr.call("retained", lambda: t.sum().backward())
    tr.grad("x.grad", x)


def chain_leaf_detached_or_turned_off_after_the_graph_was_built(lib, tr):
    x = _leaf(lib)
    y = x.sigmoid()
    x.detach_()
    tr.call("backward after x.detach_()", lambda: y.sum().backward())
    tr.grad("x.grad (not accumulated)", x)
    w = _leaf(lib)
    y = w * 2
    w.requires_grad_(False)
    tr.call("backward after requires_grad_(False)", lambda: y.sum().backward())
    tr.grad("w.grad (not accumulated)", w)
    v = _leaf(lib)
    y = v.sigmoid()
    v.detach_()
    v.add_(_leaf(lib))  # v joins another graph: no longer a leaf
    tr.state("v", v)
    tr.call("backward through the old graph", lambda: y.sum().backward())


def chain_views_of_reshape_and_unsqueeze(lib, tr):
    a = _leaf(lib)
    b = a * 1
    m = b.view(2, 2)
    m[0].zero_()
    u = m.unsqueeze(0)
    u[0, 1].add_(5)
    tr.state("b", b)
    tr.state("u", u)
    (u * u).sum().backward()
    tr.grad("a.grad", a)


def chain_plain_base_written_through_a_view(lib, tr):
    w = lib.tensor([2.0, 3.0], requires_grad=True)
    base = lib.zeros(4)
    v = base[1:3]
    v.add_(w)
    tr.state("base", base)
    tr.state("v", v)
    (base * base).sum().backward()
    tr.grad("w.grad", w)


def chain_several_writes_then_both_paths(lib, tr):
    a = lib.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]], requires_grad=True)
    b = a * 2
    r0, c1 = b[0], b[:, 1]
    r0.mul_(3)
    c1.add_(1)
    b.relu_()
    tr.state("r0", r0)
    tr.state("c1", c1)
    out = (r0 * c1.sum()).sum() + b.sum()
    out.backward()
    tr.grad("a.grad", a)


def chain_inplace_on_view_of_a_leaf_clone(lib, tr):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.clone()
    y[0] = 0.0
    y[1:].mul_(y[1:].detach())  # saves its operand, an alias staled by this very write
    tr.state("y", y)
    tr.call("backward", lambda: y.sum().backward())
    tr.grad("x.grad", x)
    x.grad = None
    y = x.clone()
    y[1:].mul_(y[1:].detach().clone())
    y.sum().backward()
    tr.grad("x.grad", x)


def chain_data_write_on_a_non_leaf(lib, tr):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.data.mul_(0)  # not tracked: silently wrong, as PyTorch
    tr.state("y", y)
    y.sum().backward()
    tr.grad("x.grad", x)


def chain_overwritten_region_gets_a_zero_gradient(lib, tr):
    # sqrt's gradient at the written zeros is inf: the overwritten elements'
    # gradient is a select of zero, not 0 * inf = nan
    writes = {
        "y[0] = 0.": lambda y: y.__setitem__(0, 0.0),
        "y[:1] = tensor": lambda y: y.__setitem__(slice(0, 1), lib.tensor([0.0])),
        "y[mask] = 0.": lambda y: y.__setitem__(lib.tensor([True, False]), 0.0),
        "y[:1].fill_": lambda y: y[:1].fill_(0.0),
        "zero_": lambda y: y.zero_(),
        "copy_": lambda y: y.copy_(lib.zeros(2)),
    }
    for name, write in writes.items():
        x = lib.tensor([1.0, 4.0], requires_grad=True)
        y = x * 1
        write(y)
        y.sqrt().sum().backward()
        tr.grad(f"x.grad after {name}", x)


CHAINS = {name[len("chain_"):]: fn for name, fn in globals().items() if name.startswith("chain_")}


@pytest.mark.parametrize("chain", sorted(CHAINS))
def test_history_after_writes_matches_torch(chain):
    differential(CHAINS[chain])


def test_non_leaf_write_rebases_to_the_writing_node():
    x = nbgrad.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    first = y.grad_fn
    y.mul_(3)
    assert y.grad_fn is not first and y.grad_fn.name() == "MulBackward"
    assert y.grad_fn.next_functions[0][0] is first  # the old history feeds the new node
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, 6.0])


def test_copyslices_example_from_the_issue():
    a = nbgrad.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    b = a * 1
    b[1:3].mul_(10)
    assert b.grad_fn.name() == "CopySlices"
    assert b._version == 1
    b.sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [1.0, 10.0, 10.0, 1.0])


# ------------------------------------------------------------ on every device
def test_version_counter_on_the_device_is_shared_by_views_and_detach_but_not_data(device):
    ours, theirs = nbgrad.tensor(values((2, 3), 1), device=device), torch.tensor(values((2, 3), 1))
    for t in (ours, theirs):
        view, alias, data = t[1], t.detach(), t.data
        view.add_(1)
        assert t._version == view._version == alias._version == 1
        alias.mul_(2)
        assert t._version == 2
        data.zero_()
        assert t._version == 2 and data._version == 1
    assert_same_tensor(ours, theirs)


def _stale(kind):
    """Build a graph on ``x`` that saves a tensor, then make it stale."""
    def run(x):
        if kind == "input":  # mul saves its inputs
            y = x * 1
            z = y * y
            y.add_(1)
        elif kind == "output":  # sigmoid saves its output
            z = (x * 1).sigmoid()
            z.mul_(2)
        elif kind == "view":  # an in-place write through a view of the saved tensor
            y = x * 1
            z = y.sin()  # saves its input
            y[0].zero_()
        else:  # the saved tensor's detach() alias is written
            y = x * 1
            z = y.tanh()
            z.detach().fill_(0.5)
        z.sum().backward()
    return run


@pytest.mark.parametrize("kind", ["input", "output", "view", "detach"])
def test_stale_saved_tensor_on_the_device_is_refused_like_torch(kind, device):
    """torch's message (naming the CPU type on every device), then where the write was."""
    error = raises_like_torch(_stale(kind), values((3,), 2), device=device, requires_grad=True)
    assert "It was modified in place by" in str(error) and "test_mutation.py:" in str(error)


@pytest.mark.parametrize("call", [
    lambda x: x.add_(1), lambda x: x[0].mul_(2), lambda x: x.t().zero_(),
    lambda x: x.__setitem__(0, 1.0), lambda x: x.copy_(x.detach() * 2),
    lambda x: x.view(-1).fill_(1),
], ids=["leaf", "view-of-leaf", "transposed-leaf", "setitem", "copy", "flat-view"])
def test_inplace_on_a_leaf_on_the_device_is_refused_like_torch(call, device):
    x = nbgrad.tensor(values((2, 2), 3), device=device, requires_grad=True)
    assert_same_error(lambda lib: call(x if lib is nbgrad else
                                       torch.tensor(values((2, 2), 3), requires_grad=True)))
    assert x._version == 0 and x.tolist() == values((2, 2), 3).tolist()


def test_no_grad_view_and_detach_view_refusals_on_the_device_match_torch(device):
    def write_no_grad_view(x):
        y = x * 1
        with (nbgrad if isinstance(x, nbgrad.Tensor) else torch).no_grad():
            v = y[0]
        v.mul_(2)

    def detach_view(x):
        x[0].detach_()
    for call in (write_no_grad_view, detach_view):
        raises_like_torch(call, values((2, 2), 4), device=device, requires_grad=True)


def test_inplace_under_no_grad_on_the_device_writes_the_leaf_like_torch(device):
    ours = nbgrad.tensor(values((2, 2), 5), device=device, requires_grad=True)
    theirs = torch.tensor(values((2, 2), 5), requires_grad=True)
    for lib, t in ((nbgrad, ours), (torch, theirs)):
        with lib.no_grad():
            t.mul_(2)
            t[0, 0] = 1.0
        assert t._version == 2 and t.is_leaf
    assert_same_tensor(ours.detach(), theirs.detach())


def test_rebased_history_of_a_non_leaf_on_the_device_matches_torch(device):
    def fn(x):
        y = x * 2
        y.mul_(3)
        y.sigmoid_()
        return y
    out, want = run_like_torch(fn, values((2, 3), 6), device=device)
    assert node_name(out.grad_fn) == node_name(want.grad_fn)


@pytest.mark.parametrize("write", [
    lambda v, w: v.mul_(w[0]), lambda v, w: v.copy_(w[1]), lambda v, w: v.exp_(),
    lambda v, w: v.__setitem__(1, w[0, 0]), lambda v, w: v.clamp_(-0.5, 0.5),
], ids=["mul", "copy", "exp", "setitem", "clamp"])
def test_copy_slices_through_a_view_on_the_device_match_torch(write, device):
    """An in-place op on a view of a non-leaf rebases the base's history
    (CopySlices); the base and other views get the right gradients."""
    def fn(x, w):
        base = x * 1
        other = base[:, 0]  # a second view, re-derived from the new history
        view = base.t()[1]
        write(view, w)
        return base * 2 + other.sum()
    out, want = run_like_torch(fn, values((3, 3), 7), values((2, 3), 8), device=device,
                               dtype=nbgrad.float64)
    assert node_name(out.grad_fn) == node_name(want.grad_fn)


def test_view_history_after_a_write_to_its_base_on_the_device_matches_torch(device):
    def fn(x):
        base = x * 1
        view = base[0]
        base.add_(1)
        fn.names.append(node_name(view.grad_fn))
        return view
    fn.names = []
    run_like_torch(fn, values((2, 3), 9), device=device)
    assert fn.names[0] == fn.names[1]


def test_backward_twice_and_without_grad_fn_on_the_device_match_torch(device):
    def twice(x):
        y = x.sigmoid().sum()
        y.backward()
        y.backward()

    def no_graph(x):
        x.detach().sum().backward()
    for call in (twice, no_graph, lambda x: (x * 2).backward()):  # the last: not a scalar
        raises_like_torch(call, values((2,), 10), device=device, requires_grad=True)


def test_backward_through_a_write_into_a_view_of_an_expanded_base_is_refused_like_torch():
    """PyTorch's CopySlices copies the gradient into a buffer with the base's
    strides first, which refuses an expanded base (even for a 0-d view)."""
    def run(lib):
        base = lib.tensor([1.0], dtype=lib.float64).expand(3).detach()
        base[0] = lib.tensor(1.0, dtype=lib.float64, requires_grad=True)
        (base * lib.tensor([-0.5, 0.5, 1.0], dtype=lib.float64)).sum().backward()
    assert_same_error(run)


# ------------------------- 7. higher-order gradients through in-place writes
# A write through a view: CopySlices' gradient is a copy of the base's with
# the view's region replaced by the op's gradient (a functional op, so a
# backward with create_graph=True can be differentiated again).
THROUGH_VIEWS = {
    "mul-select": lambda base, w: base[1].mul_(w[0]),
    "copy-transposed": lambda base, w: base.t()[1].copy_(w[1]),
    "exp-slice": lambda base, w: base[:, 1:].exp_(),
    "pow-select": lambda base, w: base[0].pow_(3),  # saves the view's pre-write value
    "div-column": lambda base, w: base[:, 0].div_(w[1].exp()),
    "sigmoid-row": lambda base, w: base[2].sigmoid_(),  # saves its result
    "setitem-element": lambda base, w: base.__setitem__((1, 2), w[0, 0]),
    "clamp-transposed": lambda base, w: base.t()[1].clamp_(-0.5, 0.5),
    "add-expanded-value": lambda base, w: base[1:].add_(w[0]),
}


def _through_a_view(write):
    def fn(x, w):
        base = x.sin()
        other = base[:, 0]  # a second view, re-derived from the new history
        write(base, w)
        return (base * base).sum(1) + other
    return fn


@pytest.mark.parametrize("name", sorted(THROUGH_VIEWS))
def test_second_derivatives_through_a_view_on_the_device_match_torch(name, device):
    second_derivatives_like_torch(_through_a_view(THROUGH_VIEWS[name]), values((3, 3), 51),
                                  values((2, 3), 52), device=device)


@pytest.mark.parametrize("name", sorted(THROUGH_VIEWS))
def test_gradgradcheck_through_a_view(name):
    x = nbgrad.tensor(values((3, 3), 53), dtype=nbgrad.float64, requires_grad=True)
    w = nbgrad.tensor(values((2, 3), 54), dtype=nbgrad.float64, requires_grad=True)
    assert gradgradcheck(_through_a_view(THROUGH_VIEWS[name]), [x, w])


# An in-place op that saves ``self`` saves its value before the write, with
# the history it had then (PyTorch saves self.clone()): its second derivatives
# reach what ``self`` was computed from.
SAVING_SELF = {
    "pow_": lambda y, w: y.pow_(3), "mul_": lambda y, w: y.mul_(w),
    "div_": lambda y, w: y.div_(w.exp()), "pow_-tensor": lambda y, w: y.pow_(w),
}


def _in_place(write):
    def fn(x, w):
        y = x.sin() + 2  # (add saves nothing that the write would make stale)
        write(y, w)
        return y.sin()
    return fn


@pytest.mark.parametrize("name", sorted(SAVING_SELF))
def test_second_derivatives_through_in_place_ops_on_the_device_match_torch(name, device):
    second_derivatives_like_torch(_in_place(SAVING_SELF[name]), values((2, 3), 55),
                                  values((2, 3), 56), device=device)


@pytest.mark.parametrize("name", sorted(SAVING_SELF))
def test_gradgradcheck_through_in_place_ops(name):
    x = nbgrad.tensor(values((2, 3), 57), dtype=nbgrad.float64, requires_grad=True)
    w = nbgrad.tensor(values((2, 3), 58), dtype=nbgrad.float64, requires_grad=True)
    assert gradgradcheck(_in_place(SAVING_SELF[name]), [x, w])


def test_the_saved_pre_write_value_keeps_its_history_without_a_node_of_its_own():
    """The copy a write saves is a new array with ``self``'s history: no extra
    node in the forward (its second derivative is exact: d2/dx2 sin(x)**2)."""
    x = nbgrad.tensor([0.3, -1.2], dtype=nbgrad.float64, requires_grad=True)
    y = x.sin()
    sin_node = y.grad_fn
    y.pow_(2)
    assert y.grad_fn.next_functions[0][0] is sin_node
    (first,) = nbgrad.autograd.grad(y.sum(), x, create_graph=True)
    (second,) = nbgrad.autograd.grad(first.sum(), x)
    np.testing.assert_allclose(second.numpy(), 2 * np.cos(2 * x.detach().numpy()), rtol=1e-12)


def test_a_write_into_an_expanded_view_is_refused_in_a_backward_that_builds_a_graph():
    """CopySlices refuses to write the gradient into an expanded region (as
    PyTorch's copy_ does) whether or not the backward builds a graph."""
    def run(lib):
        a = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        y = (a * 1).expand(2, 3)
        v = lib.tensor(2.0, dtype=lib.float64, requires_grad=True)
        with warnings.catch_warnings():  # (index_put_ on an expanded tensor warns)
            warnings.simplefilter("ignore")
            y[[0]] = v
        lib.autograd.grad((y * lib.arange(6.0, dtype=lib.float64).view(2, 3)).sum(), a,
                          create_graph=True)
    assert_same_error(run)
