"""``nbgrad.autograd.Function`` against ``torch.autograd.Function``: the
PyTorch documentation's examples (LinearFunction in both forms, Exp saving
its output, MulConstant with a number argument, the tutorial's
LegendrePolynomial3, an in-place op with ``mark_dirty``, a sort-like op with
``mark_non_differentiable``, ``set_materialize_grads``, several outputs),
gradcheck and gradgradcheck of Functions whose backward uses nbgrad ops,
``once_differentiable``, the stale-saved-tensor message, every bad input
with PyTorch's exception type and text (and nothing changed), and Functions
running the user's own Numba kernels on the CPU and on CUDA."""
import pathlib
import sys
import types
import warnings

import numpy as np
import pytest
import torch

import nbgrad
from helpers import assert_close, cuda_only, normalize_error, on_device, raised, values
from nbgrad.autograd import gradcheck, gradgradcheck

try:  # a module global: Numba's CUDA simulator swaps it inside kernels
    from numba import cuda
except ImportError:  # numba-cuda missing: the CUDA tests are not collected then
    cuda = None

_MADE = {}


def make(lib):
    """The test's Functions, defined for ``lib`` (nbgrad or torch) from one source."""
    if lib in _MADE:
        return _MADE[lib]
    Function = lib.autograd.Function
    once_differentiable = lib.autograd.function.once_differentiable

    class LinearFunction(Function):
        @staticmethod
        def forward(ctx, input, weight, bias=None):
            ctx.save_for_backward(input, weight, bias)
            output = input.mm(weight.t())
            if bias is not None:
                output += bias.unsqueeze(0).expand_as(output)
            return output

        @staticmethod
        def backward(ctx, grad_output):
            input, weight, bias = ctx.saved_tensors
            grad_input = grad_weight = grad_bias = None
            if ctx.needs_input_grad[0]:
                grad_input = grad_output.mm(weight)
            if ctx.needs_input_grad[1]:
                grad_weight = grad_output.t().mm(input)
            if bias is not None and ctx.needs_input_grad[2]:
                grad_bias = grad_output.sum(0)
            return grad_input, grad_weight, grad_bias

    class LinearSetup(Function):  # the docs' newer form: forward without ctx, setup_context
        @staticmethod
        def forward(input, weight, bias=None):
            output = input.mm(weight.t())
            if bias is not None:
                output += bias.unsqueeze(0).expand_as(output)
            return output

        @staticmethod
        def setup_context(ctx, inputs, output):
            input, weight, bias = inputs
            ctx.save_for_backward(input, weight, bias)

        backward = LinearFunction.backward

    class Exp(Function):
        @staticmethod
        def forward(ctx, i):
            result = i.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_output):
            result, = ctx.saved_tensors
            return grad_output * result

    class MulConstant(Function):
        @staticmethod
        def forward(ctx, tensor, constant):
            ctx.constant = constant
            return tensor * constant

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * ctx.constant, None

    class LegendrePolynomial3(Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return 0.5 * (5 * input ** 3 - 3 * input)

        @staticmethod
        def backward(ctx, grad_output):
            input, = ctx.saved_tensors
            return grad_output * 1.5 * (5 * input ** 2 - 1)

    class Inplace(Function):  # the docs' mark_dirty example
        @staticmethod
        def forward(ctx, x):
            x_npy = x.numpy()  # x_npy shares storage with x
            x_npy += 1
            ctx.mark_dirty(x)
            return x

        @staticmethod
        @once_differentiable
        def backward(ctx, grad_output):
            return grad_output

    class ScaleInPlace(Function):  # writes with a library op; differentiable twice
        @staticmethod
        def forward(ctx, x, s):
            x.mul_(s)
            ctx.mark_dirty(x)
            ctx.save_for_backward(s)
            return x

        @staticmethod
        def backward(ctx, grad_output):
            s, = ctx.saved_tensors
            return grad_output * s, None

    class Sort(Function):  # sort-like, with indices that get no gradient
        @staticmethod
        def forward(ctx, x):
            idx = lib.tensor(np.argsort(x.detach().cpu().numpy(), kind="stable"), device=x.device)
            ctx.mark_non_differentiable(idx)
            ctx.save_for_backward(x, idx)
            return x[idx], idx

        @staticmethod
        @once_differentiable
        def backward(ctx, g1, g2):  # still needs to accept g2
            x, idx = ctx.saved_tensors
            grad_input = lib.zeros_like(x)
            grad_input[idx] = g1
            return grad_input

    class SimpleFunc(Function):  # the docs' set_materialize_grads example
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            ctx.save_for_backward(x)
            return x.clone(), x.clone()

        @staticmethod
        @once_differentiable
        def backward(ctx, g1, g2):  # g1 and g2 can be None
            x, = ctx.saved_tensors
            grad_input = lib.zeros_like(x)
            if g1 is not None:
                grad_input += g1
            if g2 is not None:
                grad_input += g2
            return grad_input

    class SinCos(Function):  # several outputs, differentiable twice
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x.sin() * y, x * y.cos()

        @staticmethod
        def backward(ctx, g1, g2):
            x, y = ctx.saved_tensors
            return g1 * x.cos() * y + g2 * y.cos(), g1 * x.sin() - g2 * x * y.sin()

    class SquareOnce(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 2

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g

    class Mixed(Function):  # numbers among the outputs, and a number argument
        @staticmethod
        def forward(ctx, x, k):
            ctx.k = k
            return x * k, k, "label"

        @staticmethod
        def backward(ctx, g, g_k, g_label):
            assert g_k is None and g_label is None
            return g * ctx.k, None

    made = _MADE[lib] = types.SimpleNamespace(**{
        k: v for k, v in locals().items() if isinstance(v, type)})
    return made


def leaf(lib, array, device="cpu", dtype=None, requires_grad=True):
    dtype = dtype or lib.float64
    return lib.tensor(np.asarray(array), dtype=dtype, requires_grad=requires_grad,
                      **on_device(lib, device))


def same_error(fn, device="cpu"):
    """``fn(lib, device)`` raises PyTorch's exception type and text in nbgrad; returns it."""
    ours = raised(lambda lib: fn(lib, device if lib is nbgrad else "cpu"), nbgrad)
    theirs = raised(lambda lib: fn(lib, "cpu"), torch)
    assert isinstance(ours, type(theirs)), (type(ours), type(theirs), ours)
    assert normalize_error(str(ours)) == normalize_error(str(theirs)), (str(ours), str(theirs))
    return ours


# ------------------------------------------------------------ the docs' cases
@pytest.mark.parametrize("form", ["LinearFunction", "LinearSetup"])
@pytest.mark.parametrize("with_bias", [True, False])
def test_linear_function_matches_torch(form, with_bias, device):
    x, w, b = values((4, 3), 1), values((2, 3), 2), values((2,), 3)
    results = {}
    for lib in (nbgrad, torch):
        dev = device if lib is nbgrad else "cpu"
        leaves = [leaf(lib, x, dev), leaf(lib, w, dev)] + ([leaf(lib, b, dev)] if with_bias else [])
        out = getattr(make(lib), form).apply(*leaves)
        out.backward(leaf(lib, values((4, 2), 4), dev, requires_grad=False))
        assert out.grad_fn.name() == f"{form}Backward"
        results[lib] = [out] + [t.grad for t in leaves]
    for mine, want in zip(results[nbgrad], results[torch]):
        assert mine.device.type == nbgrad.device(device).type
        assert_close(mine, want)


def test_linear_function_gradcheck_and_gradgradcheck():
    fn = make(nbgrad).LinearFunction.apply
    args = (leaf(nbgrad, values((3, 2), 5)), leaf(nbgrad, values((2, 2), 6)),
            leaf(nbgrad, values((2,), 7)))
    assert gradcheck(fn, args)
    assert gradgradcheck(fn, args)
    assert gradgradcheck(make(nbgrad).LinearSetup.apply, args)


def test_setup_context_binds_keyword_arguments_and_defaults():
    seen = {}
    for lib in (nbgrad, torch):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(t, c=2.0):
                return t * c

            @staticmethod
            def setup_context(ctx, inputs, output):
                seen[lib] = (len(inputs), inputs[1], lib.is_grad_enabled(), output.requires_grad)
                ctx.c = inputs[1]

            @staticmethod
            def backward(ctx, g):
                return g * ctx.c, None

        x = leaf(lib, [1.0, 2.0])
        Scale.apply(x, c=3.0).sum().backward()
        assert x.grad.tolist() == [3.0, 3.0]
        Scale.apply(x)
    assert seen[nbgrad] == seen[torch] == (2, 2.0, False, False)


def test_exp_saves_its_output_and_is_differentiable_twice(device):
    results = {}
    for lib in (nbgrad, torch):
        x = leaf(lib, [0.5, -1.0, 2.0], device if lib is nbgrad else "cpu")
        y = make(lib).Exp.apply(x)
        assert y.grad_fn.name() == "ExpBackward"
        saved, = y.grad_fn.saved_tensors
        assert_close(saved, y)
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        results[lib] = (y, g, gg)
    for mine, want in zip(results[nbgrad], results[torch]):
        assert_close(mine, want)
    x = leaf(nbgrad, [0.5, -1.0, 2.0])
    assert gradcheck(make(nbgrad).Exp.apply, (x,)) and gradgradcheck(make(nbgrad).Exp.apply, (x,))


def test_mul_constant_takes_a_number(device):
    results = {}
    for lib in (nbgrad, torch):
        x = leaf(lib, [1.0, 2.0], device if lib is nbgrad else "cpu")
        y = make(lib).MulConstant.apply(x, 5.0)
        assert len(y.grad_fn.next_functions) == 1  # only tensors have edges
        assert y.grad_fn.needs_input_grad == (True, False)
        assert y.grad_fn.constant == 5.0  # the ctx's attributes read through the node
        y.sum().backward()
        results[lib] = (y, x.grad)
    for mine, want in zip(results[nbgrad], results[torch]):
        assert_close(mine, want)


def _fit_sine(lib, device, n, steps):
    """The Legendre-polynomial tutorial's training loop (a + b * P3(c + d * x) fit to sin x)."""
    P3 = make(lib).LegendrePolynomial3.apply
    kw = on_device(lib, device)
    x = lib.linspace(-np.pi, np.pi, n, dtype=lib.float64, **kw)
    y = lib.sin(x)
    params = [lib.full((), v, dtype=lib.float64, requires_grad=True, **kw)
              for v in (0.0, -1.0, 0.0, 0.3)]
    a, b, c, d = params
    losses = []
    for _ in range(steps):
        y_pred = a + b * P3(c + d * x)
        loss = (y_pred - y).pow(2).sum()
        losses.append(loss.item())
        loss.backward()
        with lib.no_grad():
            for p in params:
                p -= 5e-6 * p.grad
                p.grad = None
    return losses, params


def test_legendre_polynomial_tutorial_trains_as_in_torch(device):
    n, steps = (2000, 30) if device == "cpu" else (64, 5)
    ours, params = _fit_sine(nbgrad, device, n, steps)
    theirs, want = _fit_sine(torch, "cpu", n, steps)
    np.testing.assert_allclose(ours, theirs, rtol=1e-10)
    for p, q in zip(params, want):
        assert_close(p.detach(), q.detach())
    x = leaf(nbgrad, [-0.7, 0.2, 1.3])
    P3 = make(nbgrad).LegendrePolynomial3.apply
    assert gradcheck(P3, (x,)) and gradgradcheck(P3, (x,))


def test_mark_dirty_example_catches_the_stale_tensor_as_torch():
    def fn(lib, device):
        a = lib.tensor(1.0, requires_grad=True, dtype=lib.double).clone()
        b = a * a
        out = make(lib).Inplace.apply(a)
        assert out is a and a._version == 1 and a.grad_fn.name() == "InplaceBackward"
        b.backward()
    error = same_error(fn)
    # nbgrad also names the write: the Function's apply, on the test's line
    assert "It was modified in place by Inplace.apply() at " in str(error)
    assert "test_function.py:" in str(error)


def test_mark_dirty_rebases_history_and_keeps_gradients_right(device):
    results = {}
    for lib in (nbgrad, torch):
        dev = device if lib is nbgrad else "cpu"
        w = leaf(lib, [1.0, 2.0, 3.0], dev)
        s = leaf(lib, 1.5, dev)
        u = w * 2
        out = make(lib).ScaleInPlace.apply(u, s)
        assert out is u and u._version == 2  # the write, then mark_dirty's bump (as PyTorch)
        assert u.grad_fn.name() == "ScaleInPlaceBackward"
        (u * u).sum().backward()
        results[lib] = (u, w.grad)
        assert s.grad is None  # its backward returned None
    for mine, want in zip(results[nbgrad], results[torch]):
        assert_close(mine, want)


def test_a_dirty_function_is_differentiable_twice():
    scale = make(nbgrad).ScaleInPlace.apply

    def fn(x, s):
        return scale(x * 1, s) ** 2  # written in place, then used: a second derivative
    args = (leaf(nbgrad, [0.5, -1.0, 2.0]), leaf(nbgrad, 1.5, requires_grad=False))
    assert gradcheck(fn, args) and gradgradcheck(fn, args)


def test_mark_dirty_without_grad_bumps_only():
    for lib in (nbgrad, torch):
        z = lib.ones(3, dtype=lib.float64)
        out = make(lib).ScaleInPlace.apply(z, lib.tensor(2.0, dtype=lib.float64))
        assert out is z and z._version == 2 and z.grad_fn is None
        with lib.no_grad():
            x = leaf(lib, [1.0, 2.0])
            y = make(lib).ScaleInPlace.apply(x, 2.0)
        # as PyTorch: an input that requires grad comes back detached (same memory)
        assert y is not x and not y.requires_grad and x.requires_grad and x.grad_fn is None
        assert x._version == y._version == 2 and x.tolist() == y.tolist() == [2.0, 4.0]


@pytest.mark.parametrize("position", [0, 1])
def test_mark_dirty_through_a_view_rebases_the_base(position):
    """A Function writing into a view: the base gets CopySlices, and the
    gradients are those of PyTorch's own in-place op (PyTorch's own custom
    Function gets them right only when the view is its first argument)."""
    class Scale(nbgrad.autograd.Function):
        @staticmethod
        def forward(ctx, *args):
            v, s = args if position == 0 else args[::-1]
            old = v.clone()
            v.mul_(s)
            ctx.mark_dirty(v)
            ctx.save_for_backward(s, old)
            return v

        @staticmethod
        def backward(ctx, g):
            s, old = ctx.saved_tensors
            grads = (g * s, (g * old).sum())
            return grads if position == 0 else grads[::-1]

    results = {}
    for lib in (nbgrad, torch):
        w = leaf(lib, [1.0, 2.0, 3.0, 4.0])
        s = leaf(lib, 1.5)
        b = w * 1
        if lib is nbgrad:
            view = b[1:3]
            out = Scale.apply(*((view, s) if position == 0 else (s, view)))
            assert out is view and b.grad_fn.name() == "CopySlices"
        else:
            b[1:3].mul_(s)
        (b * lib.tensor([1.0, 2.0, 3.0, 4.0], dtype=lib.float64)).sum().backward()
        results[lib] = (b, w.grad, s.grad)
    for mine, want in zip(results[nbgrad], results[torch]):
        assert_close(mine, want)


def test_mark_non_differentiable_sort(device):
    results = {}
    for lib in (nbgrad, torch):
        x = leaf(lib, [3.0, 1.0, 2.0, -1.0], device if lib is nbgrad else "cpu")
        v, idx = make(lib).Sort.apply(x)
        assert v.grad_fn.name() == "SortBackward"
        assert not idx.requires_grad and idx.grad_fn is None
        (v * lib.arange(4, dtype=lib.float64, **on_device(lib, x.device.type))).sum().backward()
        results[lib] = (v, idx, x.grad)
    for mine, want in zip(results[nbgrad], results[torch]):
        assert_close(mine, want)


def test_non_differentiable_outputs_get_zeros_or_none():
    seen = {}
    for lib in (nbgrad, torch):
        for materialize in (True, False):
            class Mask(lib.autograd.Function):
                @staticmethod
                def forward(ctx, t):
                    ctx.set_materialize_grads(materialize)
                    mask = (t > 0).long()
                    ctx.mark_non_differentiable(mask)
                    return t * 2, mask

                @staticmethod
                def backward(ctx, g, g_mask):
                    seen[lib, materialize] = None if g_mask is None else (
                        str(g_mask.dtype).rsplit(".")[-1], g_mask.tolist())
                    return g * 2

            y, mask = Mask.apply(leaf(lib, [1.0, -1.0]))
            assert not mask.requires_grad
            y.sum().backward()
    for materialize in (True, False):
        assert seen[nbgrad, materialize] == seen[torch, materialize]
    assert seen[nbgrad, True] == ("int64", [0, 0])


def test_set_materialize_grads_false_passes_none(device):
    results = {}
    for lib in (nbgrad, torch):
        a = leaf(lib, 1.0, device if lib is nbgrad else "cpu")
        b, _ = make(lib).SimpleFunc.apply(a)  # induces g2 to be undefined
        b.backward()
        results[lib] = a.grad
    assert_close(results[nbgrad], results[torch])


def test_several_outputs_one_backward_call(device):
    calls = []
    results = {}
    for lib in (nbgrad, torch):
        class Two(lib.autograd.Function):
            @staticmethod
            def forward(ctx, t):
                return t * 2, t * 3

            @staticmethod
            def backward(ctx, g1, g2):
                calls.append((lib, g1.tolist(), g2.tolist()))
                return g1 * 2 + g2 * 3

        x = leaf(lib, [1.0, 2.0], device if lib is nbgrad else "cpu")
        a, b = Two.apply(x)
        assert a.grad_fn.name() == b.grad_fn.name() == "TwoBackward"
        assert a.grad_fn.next_functions[0][0] is b.grad_fn.next_functions[0][0]
        (b * 4).sum().backward()  # a gets zeros
        (a.sum() + b.sum()).backward()
        (g,) = lib.autograd.grad(a.sum(), x)
        results[lib] = (x.grad, g)
    ours = [c[1:] for c in calls if c[0] is nbgrad]
    assert ours == [c[1:] for c in calls if c[0] is torch] and len(ours) == 3
    for mine, want in zip(results[nbgrad], results[torch]):
        assert_close(mine, want)


def test_several_outputs_hooks_retain_grad_and_retain_graph():
    results = {}
    for lib in (nbgrad, torch):
        x = leaf(lib, [0.5, -1.0])
        y = leaf(lib, [2.0, 0.25])
        s, c = make(lib).SinCos.apply(x, y)
        s.retain_grad()
        c.register_hook(lambda g: g * 10)
        loss = (s * s).sum() + c.sum()
        loss.backward(retain_graph=True)
        loss.backward()
        results[lib] = (s, c, s.grad, x.grad, y.grad)
    for mine, want in zip(results[nbgrad], results[torch]):
        assert_close(mine, want)


def test_several_outputs_differentiate_twice(device):
    results = {}
    for lib in (nbgrad, torch):
        dev = device if lib is nbgrad else "cpu"
        x, y = leaf(lib, [0.5, -1.0], dev), leaf(lib, [2.0, 0.25], dev)
        s, c = make(lib).SinCos.apply(x, y)
        gx, gy = lib.autograd.grad((s * c).sum(), (x, y), create_graph=True)
        second = lib.autograd.grad((gx * gx).sum() + gy.sum(), (x, y))
        results[lib] = (gx, gy, *second)
    for mine, want in zip(results[nbgrad], results[torch]):
        assert_close(mine, want)
    args = (leaf(nbgrad, [0.5, -1.0]), leaf(nbgrad, [2.0, 0.25]))
    assert gradcheck(make(nbgrad).SinCos.apply, args)
    assert gradgradcheck(make(nbgrad).SinCos.apply, args)


def test_outputs_that_are_not_tensors_pass_through():
    for lib in (nbgrad, torch):
        x = leaf(lib, [1.0, 2.0])
        y, k, label = make(lib).Mixed.apply(x, 3.0)
        assert (k, label) == (3.0, "label") and y.grad_fn.name() == "MixedBackward"
        y.sum().backward()
        assert x.grad.tolist() == [3.0, 3.0]


def test_no_grad_and_inputs_without_grad_record_nothing():
    for lib in (nbgrad, torch):
        with lib.no_grad():
            y = make(lib).Exp.apply(leaf(lib, [1.0]))
        assert y.grad_fn is None and not y.requires_grad
        y = make(lib).Exp.apply(leaf(lib, [1.0], requires_grad=False))
        assert y.grad_fn is None and not y.requires_grad


def test_backward_runs_with_grad_mode_off_and_sees_needs_input_grad():
    seen = {}
    for lib in (nbgrad, torch):
        class Probe(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b, c):
                seen[lib, "forward"] = (lib.is_grad_enabled(), ctx.needs_input_grad)
                return a * b

            @staticmethod
            def backward(ctx, g):
                seen[lib, "backward"] = (lib.is_grad_enabled(), ctx.needs_input_grad)
                return g, g, None

        a, b = leaf(lib, [1.0]), leaf(lib, [2.0], requires_grad=False)
        y = Probe.apply(a, b, 4)
        assert [f is None for f, _ in y.grad_fn.next_functions] == [False, True]
        y.sum().backward()
    for key in ("forward", "backward"):
        assert seen[nbgrad, key] == seen[torch, key] == (False, (True, False, False))


def test_backward_returning_none_and_extra_nones():
    for lib in (nbgrad, torch):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                return a * b

            @staticmethod
            def backward(ctx, g):
                return None, g, None, None  # extra Nones are allowed

        a, b = leaf(lib, [1.0, 2.0]), leaf(lib, [3.0, 4.0])
        F.apply(a, b).sum().backward()
        assert a.grad is None and b.grad.tolist() == [1.0, 1.0]


def test_gradients_of_another_shape_and_dtype_are_reduced_and_cast():
    for lib in (nbgrad, torch):
        class Broadcast(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                return a.sum() + b.sum()

            @staticmethod
            def backward(ctx, g):
                # [3, 2] for an input of [2] is summed; an int64 gradient is cast
                return lib.ones(3, 2, dtype=lib.float64), lib.ones(2, dtype=lib.int64) * 2

        a = leaf(lib, [1.0, 2.0], dtype=lib.float32)
        b = leaf(lib, [1.0, 2.0], dtype=lib.float32)
        Broadcast.apply(a, b).backward()
        assert a.grad.tolist() == [3.0, 3.0] and b.grad.tolist() == [2.0, 2.0]
        assert str(a.grad.dtype).endswith("float32") and str(b.grad.dtype).endswith("float32")


def test_saved_input_is_the_input_and_saved_tensors_after_release():
    for lib in (nbgrad, torch):
        class Keep(lib.autograd.Function):
            @staticmethod
            def forward(ctx, t):
                ctx.save_for_backward(t, None)
                return t * 2

            @staticmethod
            def backward(ctx, g):
                t, none = ctx.saved_tensors
                assert none is None and t is x
                return g * 2

        x = leaf(lib, [1.0])
        y = Keep.apply(x)
        assert y.grad_fn.saved_tensors[0] is x
        y.sum().backward()
    same_error(lambda lib, d: _released(lib).grad_fn.saved_tensors)
    same_error(lambda lib, d: _released(lib).sum().backward())


def _released(lib):
    x = leaf(lib, [1.0, 2.0])
    y = make(lib).Exp.apply(x)
    y.sum().backward()
    return y


def test_a_function_that_saves_nothing_may_run_twice():
    for lib in (nbgrad, torch):
        x = leaf(lib, [1.0, 2.0])
        y = make(lib).MulConstant.apply(x, 2.0)
        y.sum().backward()
        y.sum().backward()
        assert x.grad.tolist() == [4.0, 4.0]


def test_stale_saved_input_names_the_write(device):
    def fn(lib, device):
        x = leaf(lib, [1.0, 2.0], device)
        u = x * 1
        y = make(lib).LegendrePolynomial3.apply(u)
        u.add_(1)
        y.sum().backward()
    error = same_error(fn, device)
    assert "It was modified in place by add_() at " in str(error)


def test_stale_saved_output_names_the_function(device):
    def fn(lib, device):
        y = make(lib).Exp.apply(leaf(lib, [1.0, 2.0], device))
        y.mul_(2)
        y.sum().backward()
    error = same_error(fn, device)
    assert "which is output 0 of Exp," in str(error)


def test_once_differentiable_refuses_a_second_derivative(device):
    def first(lib, device):
        x = leaf(lib, [1.0, 2.0], device)
        y = make(lib).SquareOnce.apply(x)
        go = leaf(lib, [1.0, 1.0], device)
        (g,) = lib.autograd.grad(y, x, go, create_graph=True)
        return x, g

    for lib in (nbgrad, torch):
        x, g = first(lib, device if lib is nbgrad else "cpu")
        assert g.tolist() == [2.0, 4.0] and g.grad_fn.name().endswith("Error")
    same_error(lambda lib, d: first(lib, d)[1].sum().backward(), device)
    # with nothing upstream requiring grad, the gradient simply has no history (as PyTorch)
    for lib in (nbgrad, torch):
        x = leaf(lib, [1.0, 2.0])
        (g,) = lib.autograd.grad(make(lib).SquareOnce.apply(x * 3).sum(), x, create_graph=True)
        assert g.grad_fn is None and g.tolist() == [18.0, 36.0]


def test_node_repr_class_and_backward_class():
    x = leaf(nbgrad, [1.0])
    y = make(nbgrad).Exp.apply(x)
    assert type(y.grad_fn) is make(nbgrad).Exp._backward_cls
    assert type(y.grad_fn).__name__ == "ExpBackward" and "ExpBackward object" in repr(y.grad_fn)
    assert isinstance(y.grad_fn, nbgrad.autograd.function.BackwardCFunction)
    assert y.grad_fn.next_functions[0][0].name() == "AccumulateGrad"


def test_user_attributes_cannot_break_the_tape():
    class Named(nbgrad.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.saved, ctx.retained, ctx.next_edges = "mine", 1, 2  # tape names, on the ctx
            return t * 2

        @staticmethod
        def backward(ctx, g):
            assert (ctx.saved, ctx.retained, ctx.next_edges) == ("mine", 1, 2)
            return g * 2

    x = leaf(nbgrad, [1.0])
    y = Named.apply(x)
    y.retain_grad()
    y.sum().backward()
    assert x.grad.tolist() == [2.0] and y.grad.tolist() == [1.0]


def test_vjp_may_replace_backward():
    for lib in (nbgrad, torch):
        class OnlyVjp(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def vjp(ctx, g):
                return g * 5

        x = leaf(lib, [1.0])
        OnlyVjp.apply(x).sum().backward()
        assert x.grad.tolist() == [5.0]


# -------------------------------------------------------------- bad input
def _function(lib, forward, backward=lambda ctx, g: g, name="Bad"):
    return type(name, (lib.autograd.Function,),
                {"forward": staticmethod(forward), "backward": staticmethod(backward)})


def _backward_of(lib, device, backward, nargs=1, requires_grad=True):
    """Run ``backward`` as the backward of a Function of ``nargs`` [2]-tensors (sum of them)."""
    args = [leaf(lib, [1.0, 2.0], device, requires_grad=requires_grad) for _ in range(nargs)]

    def forward(ctx, *ts):
        return sum(t * 2 for t in ts)
    _function(lib, forward, backward).apply(*args).sum().backward()
    return args


BAD_BACKWARDS = {
    "too few": (lambda lib: lambda ctx, g: g, 2),
    "too many": (lambda lib: lambda ctx, g: (g, g), 1),
    "wrong shape": (lambda lib: lambda ctx, g: lib.ones(3, dtype=lib.float64), 1),
    "scalar for [2]": (lambda lib: lambda ctx, g: lib.tensor(5.0, dtype=lib.float64), 1),
    "[1] for [2]": (lambda lib: lambda ctx, g: lib.ones(1, dtype=lib.float64), 1),
    "[2, 1] for [2]": (lambda lib: lambda ctx, g: lib.ones(2, 1, dtype=lib.float64), 1),
    "second input's shape": (lambda lib: lambda ctx, g: (g, lib.ones(4, dtype=lib.float64)), 2),
    "a number": (lambda lib: lambda ctx, g: 3.0, 1),
    "a list": (lambda lib: lambda ctx, g: [g], 1),
    "an array": (lambda lib: lambda ctx, g: np.ones(2), 1),
    "not implemented": (lambda lib: lib.autograd.Function.backward, 1),
}


@pytest.mark.parametrize("case", list(BAD_BACKWARDS))
def test_bad_backward_results_raise_torchs_error_and_change_nothing(case, device):
    make_backward, nargs = BAD_BACKWARDS[case]
    seen = []

    def fn(lib, device):
        args = [leaf(lib, [1.0, 2.0], device) for _ in range(nargs)]
        seen.append(args)

        def forward(ctx, *ts):
            return sum(t * 2 for t in ts)
        _function(lib, forward, make_backward(lib)).apply(*args).sum().backward()
    same_error(fn, device)
    assert all(t.grad is None for t in seen[0])


def test_a_gradient_for_a_number_argument_is_refused():
    for backward in (lambda ctx, g: (g, 1.0), lambda ctx, g: (g, g)):
        same_error(lambda lib, d: _function(lib, lambda ctx, t, c: t * c, backward, "M2").apply(
            leaf(lib, [1.0]), 2.0).sum().backward())


def test_a_wrong_shape_for_an_input_without_grad_is_ignored():
    for lib in (nbgrad, torch):
        a, b = leaf(lib, [1.0, 2.0], requires_grad=False), leaf(lib, [1.0, 2.0, 3.0])
        F = _function(lib, lambda ctx, x, y: x.sum() + y.sum(),
                      lambda ctx, g: (lib.ones(5), lib.ones(3)))
        F.apply(a, b).backward()
        assert b.grad.tolist() == [1.0, 1.0, 1.0]


@cuda_only
def test_a_gradient_on_another_device_is_refused_or_moved(device):
    """PyTorch's text (torch/csrc/autograd/engine.cpp, validate_outputs: the
    CPU build of torch cannot produce it): a number is moved, else refused."""
    x = leaf(nbgrad, [1.0, 2.0], device)
    F = _function(nbgrad, lambda ctx, t: t * 2, lambda ctx, g: nbgrad.ones(2, dtype=nbgrad.float64))
    with pytest.raises(RuntimeError) as error:
        F.apply(x).sum().backward()
    assert str(error.value) == ("Function BadBackward returned an invalid gradient at index 0 - "
                                "expected device cuda:0 but got cpu")
    assert x.grad is None
    x = leaf(nbgrad, 2.0, device)  # a 0-dim gradient of a 0-dim input is moved
    F = _function(nbgrad, lambda ctx, t: t * 2,
                  lambda ctx, g: nbgrad.tensor(3.0, dtype=nbgrad.float64))
    F.apply(x).backward()
    assert x.grad.device == x.device and x.grad.item() == 3.0


def test_calling_an_instance_is_the_legacy_error():
    for lib in (nbgrad, torch):
        with pytest.warns(DeprecationWarning) as record:
            instance = make(lib).Exp()
        assert str(record[0].message) == (
            f"{type(instance)} should not be instantiated. Methods on autograd functions are all "
            "static, so you should invoke them on the class itself. Instantiating an autograd "
            "function will raise an error in a future version of PyTorch.")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        ours = raised(lambda lib: make(lib).Exp()(leaf(lib, [1.0])), nbgrad)
        theirs = raised(lambda lib: make(lib).Exp()(leaf(lib, [1.0])), torch)
    assert type(ours) is type(theirs) is RuntimeError and str(ours) == str(theirs)


def _dirty(lib, write=True, returned=True, mark=None):
    """forward(ctx, t, other): writes into t (or not), marks ``mark(t, other)``
    dirty, returns t (or t * 2)."""
    def forward(ctx, t, other):
        if write:
            t.mul_(2)
        ctx.mark_dirty(*(mark(t, other) if mark else (t,)))
        return t if returned else t * 2
    return _function(lib, forward, lambda ctx, g: (g * 2, None), "Dirty")


FORWARD_ERRORS = {
    "dirty not returned": lambda lib, x: _dirty(lib, mark=lambda t, o: (o,)).apply(x * 1, x * 1),
    "dirty leaf": lambda lib, x: _dirty(lib).apply(x, 0),
    "dirty view of a leaf": lambda lib, x: _dirty(lib).apply(x[:1], 0),
    "dirty a number": lambda lib, x: _dirty(lib, mark=lambda t, o: (3,)).apply(x * 1, 0),
    "non-differentiable a number": lambda lib, x: _function(
        lib, lambda ctx, t: (ctx.mark_non_differentiable(3), t * 2)[1]).apply(x),
    "save a number": lambda lib, x: _function(
        lib, lambda ctx, t: (ctx.save_for_backward(t, 3), t * 2)[1]).apply(x),
    "dirty view with two outputs": lambda lib, x: _function(
        lib, lambda ctx, t: (t.mul_(2), ctx.mark_dirty(t), (t, 3))[2]).apply((x * 1)[1:]),
    "no forward": lambda lib, x: type("NoForward", (lib.autograd.Function,), {}).apply(x),
    "both backward and vjp": lambda lib, x: type("Both", (lib.autograd.Function,), {
        "forward": staticmethod(lambda ctx, t: t * 2), "backward": staticmethod(lambda c, g: g),
        "vjp": staticmethod(lambda c, g: g)}).apply(x).sum().backward(),
}


@pytest.mark.parametrize("case", list(FORWARD_ERRORS))
def test_bad_forwards_raise_torchs_error(case):
    same_error(lambda lib, d: FORWARD_ERRORS[case](lib, leaf(lib, [1.0, 2.0])))


def test_a_refused_mark_dirty_changes_nothing_of_nbgrads():
    x = leaf(nbgrad, [1.0, 2.0])
    u = x * 1
    history, version = u.grad_fn, u._version
    with pytest.raises(RuntimeError, match="not returned"):
        _dirty(nbgrad, write=False, mark=lambda t, o: (t, o)).apply(u, u * 1)
    with pytest.raises(TypeError, match="save_for_backward"):
        _function(nbgrad, lambda ctx, t: (ctx.mark_dirty(t), ctx.save_for_backward(3), t)[2]
                  ).apply(u)
    assert u.grad_fn is history and u._version == version


def test_setup_context_may_not_save_an_input_returned_as_is():
    for saved in ("input", "output"):
        def fn(lib, device, saved=saved):
            class Same(lib.autograd.Function):
                @staticmethod
                def forward(t):
                    return t

                @staticmethod
                def setup_context(ctx, inputs, output):
                    ctx.save_for_backward(inputs[0] if saved == "input" else output)

                @staticmethod
                def backward(ctx, g):
                    return g
            return Same.apply(leaf(lib, [1.0]) * 1)
        same_error(fn)


def test_mark_dirty_on_a_tensor_that_is_not_an_input_warns():
    for lib in (nbgrad, torch):
        with pytest.warns(UserWarning, match="received a tensor that was not an input"):
            y = _function(lib, lambda ctx, t: (ctx.mark_dirty(o := t * 2), o)[1]).apply(
                leaf(lib, [1.0]))
        assert y._version == 1 and y.grad_fn.name() == "BadBackward"


def _identity(lib):
    return _function(lib, lambda ctx, t: t, name="Ident")


INPLACE_ON_OUTPUTS = {
    "input returned as-is": lambda lib, x: _identity(lib).apply(x).mul_(2),
    "non-leaf returned as-is": lambda lib, x: _identity(lib).apply(x * 1).mul_(2),
    "a view of the input": lambda lib, x: _function(lib, lambda ctx, t: t[:1], name="View").apply(
        x).mul_(2),
    "a view of an intermediate": lambda lib, x: _function(
        lib, lambda ctx, t: (t * 2)[1:], name="VI").apply(x).mul_(2),
    "an alias without grad written with one": lambda lib, x: _identity(lib).apply(
        x.detach()).add_(x),
}


@pytest.mark.parametrize("case", list(INPLACE_ON_OUTPUTS))
def test_inplace_writes_into_a_functions_view_outputs_are_refused(case):
    same_error(lambda lib, d: INPLACE_ON_OUTPUTS[case](lib, leaf(lib, [1.0, 2.0])))


def test_inputs_returned_as_is_are_new_tensors_over_them():
    for lib in (nbgrad, torch):
        x = leaf(lib, [1.0, 2.0])
        y = _identity(lib).apply(x)
        assert y is not x and y.grad_fn.name() == "IdentBackward"
        y.sum().backward()
        assert x.grad.tolist() == [1.0, 1.0]
        with lib.no_grad():
            y.mul_(2)  # allowed without grad mode, and visible through x
        assert x.tolist() == [2.0, 4.0] and x._version == y._version == 1
        z = lib.ones(2)
        w = _identity(lib).apply(z)
        assert w is not z and not w.requires_grad
        w.mul_(3)  # nothing requires grad: allowed
        assert z.tolist() == [3.0, 3.0]
        fresh = make(lib).MulConstant.apply(x, 2.0)
        fresh.mul_(2)  # a new output may be written in place
        fresh[1:].mul_(2)


# -------------------------------------------------------- the user's kernels
def test_cpu_numba_kernels_inside_a_function():
    import numba

    @numba.njit(cache=False)
    def cube(x, out):
        for i in range(x.size):
            out[i] = x[i] ** 3

    @numba.njit(cache=False)
    def cube_grad(g, x, out):
        for i in range(x.size):
            out[i] = 3 * x[i] * x[i] * g[i]

    class Cube(nbgrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            out = nbgrad.empty_like(x)
            cube(x.detach().numpy(), out.numpy())
            ctx.save_for_backward(x)
            return out

        @staticmethod
        @nbgrad.autograd.function.once_differentiable
        def backward(ctx, g):
            x, = ctx.saved_tensors
            out = nbgrad.empty_like(x)
            cube_grad(g.contiguous().numpy(), x.detach().numpy(), out.numpy())
            return out

    x = leaf(nbgrad, [0.5, -1.5, 2.0])
    assert gradcheck(Cube.apply, (x,))
    (g,) = nbgrad.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    with pytest.raises(RuntimeError, match="marked with @once_differentiable"):
        nbgrad.autograd.grad(Cube.apply(x), x, nbgrad.ones(3, dtype=nbgrad.float64,
                                                         requires_grad=True), create_graph=True)[
            0].sum().backward()
    assert_close(g, 3 * x.detach() ** 2)


def _flat_device_array(t):
    """A Numba device array over a contiguous CUDA tensor's elements (a GPU or the simulator)."""
    d = t._data
    return d.buffer[d.offset:d.offset + d.size]


@cuda_only
def test_cuda_kernels_inside_a_function(device):
    @cuda.jit
    def cube(x, out):
        for i in range(cuda.grid(1), x.shape[0], cuda.gridsize(1)):
            out[i] = x[i] ** 3

    @cuda.jit
    def cube_grad(g, x, out):
        for i in range(cuda.grid(1), x.shape[0], cuda.gridsize(1)):
            out[i] = 3 * x[i] * x[i] * g[i]

    class Cube(nbgrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            out = nbgrad.empty(x.shape, dtype=x.dtype, device=x.device)
            cube[2, 8](_flat_device_array(x.detach().contiguous()), _flat_device_array(out))
            ctx.save_for_backward(x)
            return out

        @staticmethod
        @nbgrad.autograd.function.once_differentiable
        def backward(ctx, g):
            x, = ctx.saved_tensors
            out = nbgrad.empty(x.shape, dtype=x.dtype, device=x.device)
            cube_grad[2, 8](_flat_device_array(g.contiguous()),
                            _flat_device_array(x.detach().contiguous()), _flat_device_array(out))
            return out

    x = leaf(nbgrad, values((5,), 9), device)
    y = Cube.apply(x)
    y.backward(nbgrad.ones(5, dtype=nbgrad.float64, device=device))
    assert y.device == x.grad.device == x.device
    want = values((5,), 9)
    np.testing.assert_allclose(y.detach().cpu().numpy(), want ** 3, rtol=1e-12)
    np.testing.assert_allclose(x.grad.cpu().numpy(), 3 * want ** 2, rtol=1e-12)
    assert gradcheck(Cube.apply, (leaf(nbgrad, [0.5, -1.5], device),))


def _study():
    """kernels/fused_function.py (kernels/ is run from the repository root, not installed)."""
    root = str(pathlib.Path(__file__).resolve().parents[2])
    if root not in sys.path:
        sys.path.insert(0, root)
    from kernels import fused_function
    return fused_function


def test_the_fused_function_study_checks_out_on_tiny_sizes():
    ok, lines = _study().check("cpu", n=8, rows=3)
    assert ok, "\n".join(lines)


@cuda_only
def test_the_fused_function_study_checks_out_on_cuda(device):
    ok, lines = _study().check("cuda", n=8, rows=2)
    assert ok, "\n".join(lines)


def test_the_fused_function_study_compiles_to_ptx_for_sm90():
    study = _study()
    ok, lines = study.check_ptx()
    if ok is None:
        pytest.skip(lines[0])
    assert ok, "\n".join(lines)
