"""The backward engine and its contract errors, side by side with PyTorch 2.13:
accumulation into leaves, diamonds, retain_graph, backward(gradient=...),
retain_grad and hooks, ``nbgrad.autograd.grad`` and ``nbgrad.autograd.backward``,
gradients reduced back to the shape and dtype of each input, concurrent
backward passes into shared leaves, and graphs far deeper than the recursion limit.

Most scenarios are written once against a library ``lib`` and run in both
libraries; the two traces (values, flags, which call raised and with which
normalised message, warnings, gradients) must agree.
"""

import threading

import numpy as np
import pytest
import torch

import nbgrad

from differential import differential
from helpers import assert_same_tensor, cuda_only, leaf, lib_of, raised, run_like_torch, values



def _grads(tr, **tensors):
    for name, t in tensors.items():
        tr.grad(f"{name}.grad", t)


# ------------------------------------------------------------ accumulation


def test_leaf_gradients_accumulate_across_backward_calls():
    def scenario(lib, tr):
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        w = lib.tensor([0.5, 0.25, 2.0], requires_grad=True)
        (x * w).sum().backward()
        _grads(tr, x=x, w=w)
        first = x.grad
        (x * x).sum().backward()
        _grads(tr, x=x, w=w)
        tr.note("accumulated in place", x.grad is first)
        x.grad = None
        (x * 3).sum().backward()
        _grads(tr, x=x)

    differential(scenario)


def test_diamond_graphs():
    def scenario(lib, tr):
        a = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        (a * a + a.exp() - a).sum().backward()  # a used four times
        _grads(tr, a=a)
        a.grad = None
        h = a * 2  # a shared interior node reached by paths of different lengths
        u = h.exp()
        v = h * u
        (v + h + u.sigmoid()).sum().backward()
        _grads(tr, a=a)
        a.grad = None
        (a[0] * a[1:] + a[:2].sum()).sum().backward()  # the same leaf through several views
        _grads(tr, a=a)

    differential(scenario)


def test_nodes_run_latest_made_first():
    def scenario(lib, tr):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        order = []
        branches = [x * 1 for _ in range(3)]
        for k, b in enumerate(branches):
            b.register_hook(lambda g, k=k: order.append(k))
        (branches[2] + branches[0] + branches[1]).sum().backward()
        tr.note("order the branch hooks ran in", order)
        # With two problems, the one found first is the one reported.
        y = x.sigmoid()
        y.sum().backward()  # frees y's node
        z = x.sigmoid()
        z[...] = y  # z's old node (stale) and y's (freed) are both behind the write
        tr.call("backward", lambda: z.sum().backward())

    differential(scenario)


def test_hooks_and_retained_grads_see_the_summed_gradient_once():
    def scenario(lib, tr):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        h = a * 1
        seen_h, seen_a = [], []
        h.register_hook(lambda g: seen_h.append(g.tolist()))
        a.register_hook(lambda g: seen_a.append(g.tolist()))
        h.retain_grad()
        (h * h + h + a).sum().backward()
        tr.note("hook on the non-leaf", seen_h)
        tr.note("hook on the leaf", seen_a)
        _grads(tr, a=a, h=h)

    differential(scenario)


# --------------------------------------------------------------- retain_graph

_FREED = r"^Trying to backward through the graph a second time"


def test_second_backward_through_a_node_that_saved_something_raises():
    def scenario(lib, tr):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        s = (a * b).sum()
        tr.call("first", lambda: s.backward())
        tr.call("second", lambda: s.backward())
        _grads(tr, a=a, b=b)
        y = a.sigmoid()  # saves its output
        y.sum().backward()
        tr.call("a new graph through a freed node", lambda: (y * 2).sum().backward())
        _grads(tr, a=a)

    differential(scenario)
    a = nbgrad.tensor([1.0, 2.0], requires_grad=True)
    s = (a * a).sum()
    s.backward()
    with pytest.raises(RuntimeError, match=_FREED):
        s.backward()


def test_a_graph_that_saved_nothing_can_run_again():
    def scenario(lib, tr):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        s = (a + b).sum()
        tr.call("first", lambda: s.backward())
        tr.call("second", lambda: s.backward())
        t = (a - b)[1:].reshape(1, 1).sum() + (-a).sum()
        tr.call("first", lambda: t.backward())
        tr.call("second", lambda: t.backward())
        _grads(tr, a=a, b=b)

    differential(scenario)


def test_retain_graph_keeps_saved_tensors_until_a_backward_without_it():
    def scenario(lib, tr):
        a = lib.tensor([0.5, 1.5], requires_grad=True)
        s = (a.exp() * a).sum()
        tr.call("retain", lambda: s.backward(retain_graph=True))
        tr.call("retain again", lambda: s.backward(retain_graph=True))
        tr.call("free", lambda: s.backward())
        tr.call("after freeing", lambda: s.backward(retain_graph=True))
        _grads(tr, a=a)

    differential(scenario)


def _put(lib, x, key):
    y = x + 0
    y[key] = 5.0
    return y


# Graphs by what their nodes saved: PyTorch refuses a second backward without
# retain_graph where a node saved a tensor, a wrapped Python scalar or indices
# (which nbgrad keeps as numbers and arrays), and allows it where none saved anything.
_SECOND_BACKWARDS = {
    "x * 2.0": lambda lib, x: x * 2.0,
    "3 * x": lambda lib, x: 3 * x,
    "x / 2": lambda lib, x: x / 2,
    "x * True": lambda lib, x: x * True,
    "(x + 0).mul_(2)": lambda lib, x: (x + 0).mul_(2),
    "x.max(dim=0)": lambda lib, x: x.max(dim=0)[0],
    "x.min(1, keepdim=True)": lambda lib, x: x.min(1, keepdim=True)[0],
    "x[[0, 1]]": lambda lib, x: x[[0, 1]],
    "x[x > 0]": lambda lib, x: x[x > 0],
    "x[:, [0, 2]]": lambda lib, x: x[:, [0, 2]],
    "y[[0]] = 5.0": lambda lib, x: _put(lib, x, [0]),
    "avg_pool2d": lambda lib, x: lib.nn.functional.avg_pool2d(x.reshape(1, 1, 2, 3), (1, 2)),
    "x - 2.0": lambda lib, x: x - 2.0,
    "2.0 - x": lambda lib, x: 2.0 - x,
    "(x + 0).add_(2)": lambda lib, x: (x + 0).add_(2),
    "x.sum(0)": lambda lib, x: x.sum(0),
    "x.mean()": lambda lib, x: x.mean(),
    "x.expand(2, 2, 3)": lambda lib, x: x.expand(2, 2, 3),
    "x[0]": lambda lib, x: x[0],
    "x.reshape(6)": lambda lib, x: x.reshape(6),
    "x.t()": lambda lib, x: x.t(),
}


@pytest.mark.parametrize("name", _SECOND_BACKWARDS)
def test_second_backward_without_retain_graph(name):
    def scenario(lib, tr):
        x = lib.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]], requires_grad=True)
        s = _SECOND_BACKWARDS[name](lib, x).sum()
        tr.call("retain", lambda: s.backward(retain_graph=True))
        tr.call("free", lambda: s.backward())
        tr.call("after freeing", lambda: s.backward())
        _grads(tr, x=x)

    differential(scenario)


# ------------------------------------------------- roots and contract errors


def test_backward_with_a_gradient_on_non_scalars():
    def scenario(lib, tr):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        y = x * x
        y.backward(lib.tensor([[1.0, 0.5], [-1.0, 2.0]]), retain_graph=True)
        _grads(tr, x=x)
        tr.call("gradient of the wrong shape", lambda: y.backward(lib.ones(4)))
        tr.call("gradient that would broadcast", lambda: y.backward(lib.ones(2)))
        tr.call("no gradient", lambda: y.backward())
        y.backward(lib.ones(2, 2, dtype=lib.float64))  # a float64 gradient for float32 y
        _grads(tr, x=x)
        tr.note("dtype of x.grad", str(x.grad.dtype).split(".")[-1])
        s = x.sum()
        s.backward(lib.tensor(2.0))  # an explicit gradient for a scalar
        _grads(tr, x=x)
        tr.call("scalar with a [1] gradient", lambda: x.sum().backward(lib.tensor([1.0])))

    differential(scenario)


def test_backward_on_a_leaf():
    def scenario(lib, tr):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x.backward(lib.tensor([3.0, 4.0]))
        x.backward(lib.tensor([3.0, 4.0]))
        _grads(tr, x=x)
        s = lib.tensor(5.0, requires_grad=True)
        s.backward()
        _grads(tr, s=s)
        tr.call("non-scalar leaf without gradient", lambda: x.backward())

    differential(scenario)


def test_backward_on_something_that_does_not_require_grad():
    def scenario(lib, tr):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        tr.call("plain tensor", lambda: lib.ones(2).sum().backward())
        with lib.no_grad():
            made_without_grad = (a * 2).sum()
        tr.call("made under no_grad", lambda: made_without_grad.backward())
        tr.call("detached", lambda: (a * 2).sum().detach().backward())
        tr.call("second of two roots", lambda: lib.autograd.backward([a.sum(), lib.ones(1).sum()]))
        tr.call("non-scalar, plain", lambda: lib.ones(2).backward())
        _grads(tr, a=a)

    differential(scenario)
    with pytest.raises(RuntimeError, match=r"^element 0 of tensors does not require grad and does "
                                           r"not have a grad_fn$"):
        nbgrad.ones(2).sum().backward()


def test_implicit_gradient_only_for_scalar_outputs():
    def scenario(lib, tr):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        tr.call("vector output", lambda: (a * 2).backward())
        tr.call("[1]-shaped output", lambda: (a * 2)[:1].backward())
        tr.call("[1, 1]-shaped output", lambda: (a * 2)[:1].reshape(1, 1).backward())
        tr.call("autograd.grad of a vector", lambda: lib.autograd.grad(a * 2, a))
        _grads(tr, a=a)

    differential(scenario)
    with pytest.raises(RuntimeError, match=r"^grad can be implicitly created only for scalar "
                                           r"outputs$"):
        (nbgrad.tensor([1.0, 2.0], requires_grad=True) * 2).backward()


def test_several_roots_at_once():
    def scenario(lib, tr):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        y = a * a
        lib.autograd.backward([y.sum(), y], [None, lib.tensor([1.0, -1.0])])
        _grads(tr, a=a)
        tr.call("too few gradients", lambda: lib.autograd.backward([a.sum(), a * 2],
                                                                   [lib.tensor(1.0)]))
        tr.call("no gradients", lambda: lib.autograd.backward([a.sum(), a.sum()], []))
        tr.call("a gradient that is not a tensor", lambda: (a * 2).backward([1.0, 1.0]))
        tr.call("extra gradients are ignored",
                lambda: lib.autograd.backward([a.sum()], [lib.tensor(1.0), lib.tensor(5.0)]))
        (g,) = lib.autograd.grad([a.sum()], [a], [lib.tensor(3.0), lib.tensor(1.0)])
        tr.values("so are they by grad", g)
        tr.call("a gradient for an output without grad, of the wrong shape",
                lambda: lib.autograd.backward([lib.ones(2)], [lib.ones(3)]))
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x.backward(lib.tensor([1.0, 1.0], dtype=lib.float64))  # a float64 seed into a float32 leaf
        tr.note("leaf seeded in float64",
                (str(x.grad.dtype).split(".")[-1], x.grad.numpy().dtype.name))
        _grads(tr, a=a)

    differential(scenario)


# ----------------------------------------------------- retain_grad and hooks


def test_retain_grad_on_non_leaves():
    def scenario(lib, tr):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3
        z = y.exp()
        y.retain_grad()
        y.retain_grad()  # twice is once
        tr.note("retains_grad", (x.retains_grad, y.retains_grad, z.retains_grad))
        s = (z * y).sum()
        s.backward(retain_graph=True)
        _grads(tr, y=y, x=x)
        s.backward()  # a retained grad accumulates too
        _grads(tr, y=y, x=x)
        tr.warns("reading .grad of a non-leaf that does not retain it", lambda: z.grad)
        tr.warns("reading .grad of one that does", lambda: y.grad)
        tr.warns("reading .grad of a leaf", lambda: x.grad)
        x.retain_grad()  # a no-op on a leaf
        tr.note("leaf retains_grad", x.retains_grad)
        tr.call("retain_grad without requires_grad", lambda: lib.ones(2).retain_grad())

    differential(scenario)


def test_hooks_on_leaves_and_non_leaves():
    def scenario(lib, tr):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        seen = []
        y.register_hook(lambda g: seen.append(("y first", g.tolist())))  # returns None: unchanged
        handle = y.register_hook(lambda g: g * 10)
        y.register_hook(lambda g: seen.append(("y third", g.tolist())))  # sees the x10 value
        hx = x.register_hook(lambda g: g + 1)
        x.register_hook(lambda g: seen.append(("x", g.tolist())))
        (y * y).sum().backward(retain_graph=True)
        tr.note("hooks saw", seen)
        _grads(tr, x=x)
        handle.remove()
        hx.remove()
        hx.remove()  # removing twice is harmless
        seen.clear()
        x.grad = None
        (y * y).sum().backward()
        tr.note("after remove", seen)
        _grads(tr, x=x)
        tr.call("hook on a tensor without grad", lambda: lib.ones(2).register_hook(lambda g: g))

    differential(scenario)


def test_a_leaf_accumulates_as_soon_as_its_last_gradient_arrives():
    # PyTorch runs a leaf's AccumulateGrad before any other ready node; the
    # hooks' order shows when each leaf's gradient was complete.
    def scenario(lib, tr):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, -4.0], requires_grad=True)
        c = lib.tensor([0.5, 0.25], requires_grad=True)
        order = []

        def hook(name):
            return lambda g: order.append(name)

        for name, leaf in zip("abc", (a, b, c)):
            leaf.register_hook(hook(name))
        h = a * b  # both leaves' last consumer
        h.register_hook(hook("h"))
        k = h.sin() * c + a  # c complete here, a still waits for h
        k.register_hook(hook("k"))
        m = (k * b).exp() - c  # b and c have two consumers each
        m.register_hook(hook("m"))
        m.sum().backward()
        tr.note("hooks in the order they ran", order)
        _grads(tr, a=a, b=b, c=c)

    differential(scenario)


def test_tensor_backward_sends_its_common_calls_straight_to_the_engine(monkeypatch):
    # The checks of autograd.backward are skipped only for calls that would pass them.
    from nbgrad import gradients
    general = []
    checked = gradients.backward
    monkeypatch.setattr(gradients, "backward", lambda *a, **k: (general.append(a), checked(*a, **k)))
    x = nbgrad.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = x * x
    y.backward(nbgrad.tensor([1.0, 0.5, 2.0]), retain_graph=True)  # direct
    y.sum().backward(retain_graph=True)  # direct: an implicit gradient for a scalar
    assert not general
    np.testing.assert_allclose(x.grad.numpy(), [2.0 + 2.0, -2.0 - 4.0, 12.0 + 6.0])
    y.backward(nbgrad.tensor([1.0, 1.0, 1.0], dtype=nbgrad.float64))  # a cast: checked
    y2 = x * 2
    y2[:2].backward(nbgrad.ones(2))  # a view: checked
    assert len(general) == 2
    np.testing.assert_allclose(x.grad.numpy(), [4.0 + 2.0 + 2.0, -6.0 - 4.0 + 2.0, 18.0 + 6.0])


def test_retain_grad_sees_the_hooked_value_whatever_the_order():
    def scenario(lib, tr):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        before = x * 3
        before.retain_grad()
        before.register_hook(lambda g: g * 10)
        after = x * 5
        after.register_hook(lambda g: g * 10)
        after.retain_grad()
        (before * before + after).sum().backward()
        _grads(tr, before=before, after=after, x=x)

    differential(scenario)


def test_hooks_that_return_the_wrong_thing():
    def wrong_size(g):
        return g[:1]

    def scenario(lib, tr):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.register_hook(wrong_size)
        tr.call("size", lambda: y.sum().backward())
        y = x * 2
        y.register_hook(lambda g: g.double())
        tr.call("dtype", lambda: y.sum().backward())
        y = x * 2
        y.register_hook(lambda g: 3)
        tr.call("not a tensor", lambda: y.sum().backward())
        x.register_hook(wrong_size)
        tr.call("size, on a leaf", lambda: (x * 2).sum().backward())
        _grads(tr, x=x)

    differential(scenario)


def test_a_view_made_under_no_grad_has_no_gradient_edge():
    def scenario(lib, tr):
        x = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        s = x.sigmoid()
        with lib.no_grad():
            v = s[:3]  # reports requires_grad, yet has no history and no accumulator
            leaf_view = x[:3]
        tr.state("v", v)
        tr.call("v.backward(ones)", lambda: v.backward(lib.ones(3)))
        m = v * lib.tensor(-1.5)
        tr.note("m's edges", [fn is None for fn, _ in m.grad_fn.next_functions])
        tr.call("backward through m", lambda: m.sum().backward())
        tr.call("again: m saved nothing", lambda: m.sum().backward())
        tr.call("grad wrt v", lambda: lib.autograd.grad((v * 2).sum(), v))
        tr.call("grad wrt v, allow_unused",
                lambda: tr.note("gives None", lib.autograd.grad((v * 2).sum(), v,
                                                                allow_unused=True)[0] is None))
        tr.call("backward(inputs=[v])", lambda: (v * 2).sum().backward(inputs=[v]))
        v.retain_grad()
        tr.note("retains_grad", v.retains_grad)
        (leaf_view * 2).sum().backward()
        _grads(tr, v=v, leaf_view=leaf_view, x=x)

    differential(scenario)


# ------------------------------------------------------- nbgrad.autograd.grad


def test_grad_returns_gradients_and_leaves_grad_untouched():
    def scenario(lib, tr):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.tensor([3.0, -1.0], requires_grad=True)
        h = x * w
        z = (h * h).sum()
        gx, gh = lib.autograd.grad(z, [x, h], retain_graph=True)  # a non-leaf input
        tr.values("dz/dx", gx)
        tr.values("dz/dh", gh)
        _grads(tr, x=x, w=w)  # nothing accumulated
        tr.warns("h.grad", lambda: h.grad)
        (gw,) = lib.autograd.grad(z, w, retain_graph=True)  # a single tensor is fine
        tr.values("dz/dw", gw)
        gx2, gh2 = lib.autograd.grad(z, [x, h], retain_graph=True)  # x upstream of h
        tr.values("again dz/dx", gx2)
        (gz,) = lib.autograd.grad([z, h.sum()], [h], retain_graph=True)  # several outputs
        tr.values("d(z + sum h)/dh", gz)
        (gv,) = lib.autograd.grad(h, x, grad_outputs=lib.tensor([1.0, 0.5]), retain_graph=True)
        tr.values("vector-Jacobian product", gv)
        (gs,) = lib.autograd.grad([h], [x], grad_outputs=[lib.tensor([2.0, 2.0])])
        tr.values("as lists", gs)
        tr.call("after the graph was freed", lambda: lib.autograd.grad(z, x))
        _grads(tr, x=x, w=w)

    differential(scenario)


def test_grad_of_unused_and_non_differentiable_inputs():
    def scenario(lib, tr):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        unused = lib.tensor([5.0], requires_grad=True)
        z = (x * x).sum()
        tr.call("unused input", lambda: lib.autograd.grad(z, [x, unused], retain_graph=True))
        result = lib.autograd.grad(z, [x, unused], allow_unused=True, retain_graph=True)
        tr.values("used", result[0])
        tr.note("unused gives None", result[1] is None)
        tr.call("input without grad", lambda: lib.autograd.grad(z, [x, lib.ones(2)],
                                                                retain_graph=True))
        tr.call("output without grad", lambda: lib.autograd.grad(lib.ones(1).sum(), x))
        (gx,) = lib.autograd.grad(x, x, lib.ones(2))  # the output is the input
        tr.values("dx/dx", gx)
        _grads(tr, x=x, unused=unused)

    differential(scenario)


# --------------------------------------------------- nbgrad.autograd.backward


def test_backward_with_inputs_accumulates_only_into_them():
    def scenario(lib, tr):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.tensor([3.0, 4.0], requires_grad=True)
        h = x * w
        lib.autograd.backward(h.sum(), inputs=[x])
        _grads(tr, x=x, w=w)
        h = x * w
        (h * h).sum().backward(inputs=[h, w])  # a non-leaf input gets a .grad too
        _grads(tr, x=x, w=w, h=h)
        (x * w).sum().backward(inputs=w)  # a single tensor
        _grads(tr, x=x, w=w)
        unused = lib.tensor([1.0], requires_grad=True)
        tr.call("an input the graph does not reach",
                lambda: (x * 2).sum().backward(inputs=[unused]))
        tr.call("empty inputs", lambda: lib.autograd.backward((x * 2).sum(), inputs=[]))
        tr.call("an input without grad", lambda: (x * 2).sum().backward(inputs=[lib.ones(2)]))
        _grads(tr, x=x, w=w, unused=unused)

    differential(scenario)


# ------------------------------------------- shapes and dtypes of gradients

BROADCASTS = {
    "column times row": ((3, 1), (1, 4)),
    "vector plus a batch": ((4,), (2, 3, 4)),
    "0-d times matrix": ((), (2, 3)),
    "size-1 dims kept": ((2, 1, 3), (2, 4, 3)),
    "same shape": ((2, 3), (2, 3)),
}


@pytest.mark.parametrize("op", ["add", "mul", "sub", "div", "maximum"])
@pytest.mark.parametrize("shapes", sorted(BROADCASTS))
def test_gradients_are_summed_back_to_each_input_shape(shapes, op):
    sa, sb = BROADCASTS[shapes]
    rng = np.random.default_rng(0)
    va = rng.uniform(0.5, 2.0, sa).astype(np.float32)
    vb = rng.uniform(0.5, 2.0, sb).astype(np.float32)

    def scenario(lib, tr):
        a = lib.tensor(va.tolist(), requires_grad=True)
        b = lib.tensor(vb.tolist(), requires_grad=True)
        out = getattr(a, op)(b)
        tr.state("out", out)
        (out * out).sum().backward()
        _grads(tr, a=a, b=b)

    differential(scenario)


def test_gradients_are_cast_back_to_the_input_dtype():
    def scenario(lib, tr):
        x32 = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        t64 = lib.tensor([[0.5, 0.25, 2.0], [1.0, 3.0, -1.0]], dtype=lib.float64,
                         requires_grad=True)
        out = x32 * t64
        tr.state("float32 x float64", out)
        out.sum().backward()
        _grads(tr, x32=x32, t64=t64)
        tr.note("grad dtypes", (str(x32.grad.dtype).split(".")[-1],
                                str(t64.grad.dtype).split(".")[-1]))
        ints = lib.tensor([1, 2, 3])
        (x32 * ints).sum().backward()  # an int64 operand: the product is float32
        (x32 + 2.5).exp().sum().backward()  # a Python float
        _grads(tr, x32=x32)

    differential(scenario)


def test_gradient_of_a_vector_dot_product():
    def scenario(lib, tr):
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = lib.tensor([4.0, 5.0, 6.0], requires_grad=True)
        out = a @ b
        tr.state("a @ b", out)
        out.backward()
        _grads(tr, a=a, b=b)

    differential(scenario)


def test_gradients_of_a_zero_dim_leaf_used_twice_accumulate():
    """Two 0-d gradients meet in the engine (NumPy would add them into a scalar)."""
    x = nbgrad.tensor(1.5, requires_grad=True)
    (x * x + x).backward()
    tx = torch.tensor(1.5, requires_grad=True)
    (tx * tx + tx).backward()
    assert x.grad.shape == () and x.grad.item() == tx.grad.item() == 4.0


# ------------------------------------------------------------------ threads


def _concurrent_backwards(lib):
    """Four threads, each backward ten times into the shared leaf ``w`` (and,
    through a shared retained graph, into the non-leaf ``h``) in three ways."""
    # Large enough that unlocked read-add-write kernels (they release the GIL)
    # overlap; under the parallel-kernel threshold (Numba's workqueue threading
    # layer must not be entered from several threads at once).
    n = 400_000
    w = lib.zeros(n, dtype=lib.float64, requires_grad=True)
    c = lib.ones(n, dtype=lib.float64)
    h = w * 1.0
    h.retain_grad()
    start = threading.Barrier(4, timeout=60)
    passes = [lambda: (w * c).sum().backward(),
              lambda: (h * c).sum().backward(retain_graph=True),
              lambda: lib.autograd.backward((w * c).sum(), inputs=[w]),
              lambda: (w * c).sum().backward()]

    def work(run):
        start.wait()
        for _ in range(10):
            run()

    threads = [threading.Thread(target=work, args=(run,)) for run in passes]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return w.grad.numpy(), h.grad.numpy()


def test_concurrent_backward_passes_accumulate_exactly():
    for lib in (torch, nbgrad):
        w_grad, h_grad = _concurrent_backwards(lib)
        assert (w_grad == 40).all() and (h_grad == 10).all(), lib.__name__


# -------------------------------------------------------------- deep graphs


@pytest.mark.parametrize("make_view", [lambda v: v.view(3), lambda v: v[:],
                                       lambda v: v.unsqueeze(0).squeeze(0)],
                         ids=["view", "slice", "unsqueeze-squeeze"])
def test_an_in_place_write_through_a_deep_chain_of_views(make_view):
    def scenario(lib, tr):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 1
        v = y
        for _ in range(2000):  # replayed in a loop, not by nested calls
            v = make_view(v)
        v.mul_(2)
        tr.values("y", y)
        y.sum().backward()
        _grads(tr, x=x)
        y = x * 1
        v = y
        for _ in range(2000):
            v = make_view(v)
        y.mul_(2)  # the base written: the view's history is re-derived from it
        (v * v).sum().backward()
        _grads(tr, x=x)

    differential(scenario)


def test_a_deep_chain_of_ops_runs_backward_and_is_freed():
    x = nbgrad.zeros(3, requires_grad=True)
    y = x
    for _ in range(20_000):  # far past the recursion limit: nothing on the way recurses
        y = y + 1
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0, 1.0])
    del y  # the chain of nodes is freed without a crash


# ------------------------------------------------------------ on every device
def test_tensor_hooks_see_and_replace_gradients_on_the_device_like_torch(device):
    seen, grads = [], {}
    for lib in (nbgrad, torch):
        x = leaf(lib, values((2, 3), 1), nbgrad.float32, device, requires_grad=True)
        y = x * 2
        y.register_hook(lambda g: g * 3)
        handle = x.register_hook(lambda g: seen.append(g.device) and None)
        y.sum().backward()
        handle.remove()
        grads[lib] = x.grad
    assert seen[0].type == device
    assert_same_tensor(grads[nbgrad], grads[torch])


def test_a_hook_that_changes_the_dtype_is_refused_like_torch(device):
    def run(lib):
        y = leaf(lib, values((2,), 2), nbgrad.float32, device, requires_grad=True) * 2
        y.register_hook(lambda g: g.double())
        y.sum().backward()
    ours, theirs = raised(run, nbgrad), raised(run, torch)
    assert type(ours) is type(theirs) is RuntimeError
    # torch names CUDA types CUDAFloatType; nbgrad as Tensor.type() does
    expected = str(theirs).replace("torch.", "nbgrad.")
    assert str(ours) == (expected.replace("nbgrad.", "nbgrad.cuda.") if device == "cuda"
                         else expected)


def test_retain_grad_on_the_device_matches_torch(device):
    retained = []

    def fn(x):
        y = x.sigmoid()
        y.retain_grad()
        retained.append(y)
        return y * y
    run_like_torch(fn, values((2, 3), 3), device=device)
    ours, theirs = retained
    assert ours.grad.device == ours.device
    assert_same_tensor(ours.grad, theirs.grad)


def test_autograd_grad_on_the_device_matches_torch(device):
    results = {}
    for lib in (nbgrad, torch):
        x = leaf(lib, values((2, 3), 4), nbgrad.float32, device, requires_grad=True)
        w = leaf(lib, values((3,), 5), nbgrad.float32, device, requires_grad=True)
        out = (x * w).tanh().sum(dim=1)
        seed = leaf(lib, [1.0, -2.0], nbgrad.float32, device)
        results[lib] = lib.autograd.grad(out, (x, w), seed)
        assert x.grad is None
    for ours, theirs in zip(results[nbgrad], results[torch]):
        assert ours.device.type == device
        assert_same_tensor(ours, theirs)


def test_backward_with_inputs_on_the_device_fills_only_those(device):
    a = nbgrad.ones(2, device=device, requires_grad=True)
    b = nbgrad.ones(2, device=device, requires_grad=True)
    (a * b * 3).sum().backward(inputs=[b])
    assert a.grad is None and b.grad.tolist() == [3.0, 3.0] and b.grad.device == b.device


def test_a_zero_dim_leaf_used_three_times_on_the_device(device):
    x = nbgrad.tensor(1.5, dtype=nbgrad.float64, device=device, requires_grad=True)
    (x * x + x).backward()
    assert x.grad.device == x.device and x.grad.item() == 4.0  # 2x + 1


def test_a_long_chain_through_many_ops_on_the_device_matches_torch(device):
    def fn(x, w):
        lib = lib_of(x)
        h = (x @ w).relu() + x.mean(dim=1, keepdim=True)
        h = lib.cat([h, h.exp()], dim=1).log_softmax(1)
        return h[:, ::2].sum(dim=0) * h.amax()
    run_like_torch(fn, values((2, 3), 6), values((3, 2), 7), device=device, dtype=nbgrad.float64)


@cuda_only
def test_a_grad_output_on_another_device_is_refused(device):
    x = nbgrad.ones(2, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="^invalid gradient at index 0 - expected device "
                                           "cuda:0 but got cpu$"):
        (x * 2).backward(nbgrad.ones(2))


@cuda_only
def test_a_hook_that_moves_the_gradient_to_the_cpu_is_refused(device):
    y = nbgrad.ones(2, device=device, requires_grad=True) * 2
    y.register_hook(lambda g: g.cpu())
    with pytest.raises(RuntimeError, match=r"has changed the type of value \(was "
                                           r"nbgrad\.cuda\.FloatTensor got nbgrad\.FloatTensor\)"):
        y.sum().backward()
