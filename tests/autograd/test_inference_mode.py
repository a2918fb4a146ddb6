"""Inference mode (``nbgrad.inference_mode``, ``Tensor.is_inference``,
``nbgrad.is_inference_mode_enabled``) against PyTorch 2.13: which tensors
are inference tensors (made in the mode, and their views and aliases), the
mode's grad mode, and PyTorch's errors for an inference tensor saved for
backward, written in place or made to require grad outside the mode, or
asked for its version.

Where nbgrad differs: ``enable_grad`` inside inference mode records nothing
in both, but nbgrad's ``is_grad_enabled()`` says False there (PyTorch: True);
a refused in-place write changes nothing (PyTorch writes some, e.g. through
``copy_`` or a view, before it raises)."""
import threading

import pytest
import torch

import nbgrad
from differential import differential
from helpers import assert_same_tensor, leaf, values


def test_the_mode_and_what_it_makes_like_torch():
    def scenario(lib, tr):
        normal = lib.ones(3)
        with lib.inference_mode():
            tr.note("in the mode", (lib.is_inference_mode_enabled(), lib.is_grad_enabled()))
            x = lib.ones(3)
            tr.note("made in it", (x.is_inference(), x.requires_grad))
            tr.note("an op on a normal tensor", (normal * 2).is_inference())
            tr.note("a view of a normal tensor", normal[:2].is_inference())
            tr.note("a detached normal tensor", normal.detach().is_inference())
            w = lib.ones(3, requires_grad=True)
            tr.note("requires_grad=True in it", (w.is_inference(), w.requires_grad))
            r = w * 2
            tr.note("nothing recorded", (r.requires_grad, r.grad_fn is None, r.is_inference()))
            with lib.inference_mode(False):
                y = lib.ones(2)
                tr.note("mode off inside", (lib.is_inference_mode_enabled(), lib.is_grad_enabled(),
                                           y.is_inference()))
            tr.call("in-place on an inference tensor", lambda: x.add_(1))
            tr.call("in-place on a normal tensor", lambda: normal.add_(1))
            tr.version("the normal tensor", normal)
            tr.call("version", lambda: x._version)
            tr.call("requires_grad_", lambda: x.requires_grad_())
            x.requires_grad_(False)
        with lib.no_grad():
            with lib.inference_mode(False):
                tr.note("mode False turns grad mode on", lib.is_grad_enabled())
        tr.note("after", (lib.is_inference_mode_enabled(), lib.is_grad_enabled()))
        tr.note("view outside", x[:2].is_inference())
        tr.note("detach outside", x.detach().is_inference())
        tr.note("data outside", x.data.is_inference())
        tr.note("clone outside", x.clone().is_inference())
        tr.note("op outside", (x * 2).is_inference())
        tr.note("torch.is_inference", lib.is_inference(x))

    differential(scenario)


def test_inference_tensors_outside_the_mode_raise_like_torch():
    def scenario(lib, tr):
        with lib.inference_mode():
            x = lib.ones(3)
        w = lib.ones(3, requires_grad=True)
        tr.call("version", lambda: x._version)
        for label, write in [("add_", lambda: x.add_(1)), ("mul_", lambda: x.mul_(2)),
                             ("zero_", lambda: x.zero_()), ("fill_", lambda: x.fill_(3.0)),
                             ("sigmoid_", lambda: x.sigmoid_()),
                             ("setitem", lambda: x.__setitem__(0, 5.0)),
                             ("+=", lambda: x.__iadd__(1)),
                             ("in-place under no_grad", lambda: lib.no_grad()(x.add_)(1))]:
            tr.call(label, write)
        if lib is nbgrad:  # PyTorch writes some (fill_, sigmoid_) before it raises
            assert x.tolist() == [1.0, 1.0, 1.0]
        with lib.inference_mode():
            x = lib.ones(3)

        def set_requires_grad():
            x.requires_grad = True
        tr.call("requires_grad_", lambda: x.requires_grad_())
        tr.call("requires_grad =", set_requires_grad)
        tr.call("Parameter", lambda: lib.nn.Parameter(x))
        tr.call("saved by mul", lambda: w * x)
        tr.call("saved by mul, other side", lambda: (w.sigmoid() * x).sum())
        tr.call("not saved by add", lambda: (w + x).sum().backward())
        tr.grad("w.grad", w)
        tr.call("sigmoid saves its result, not x", lambda: (x.sigmoid() * w).sum().backward())
        tr.grad("w.grad", w)
        with lib.no_grad():
            tr.call("under no_grad nothing is saved", lambda: (w * x).requires_grad)
        tr.call("a clone is a normal tensor", lambda: (w * x.clone()).sum().backward())
        tr.grad("w.grad", w)

    differential(scenario)


def test_a_view_of_an_inference_tensor_is_one():
    def scenario(lib, tr):
        with lib.inference_mode():
            x = lib.ones(2, 3)
        v = x[0]
        tr.note("view", v.is_inference())
        tr.call("view version", lambda: v._version)
        tr.call("in-place on the view", lambda: v.add_(1))
        tr.call("saved view", lambda: lib.ones(3, requires_grad=True) * v)
        with lib.inference_mode():
            tr.call("in-place on the view inside", lambda: v.add_(1))
        if lib is nbgrad:  # PyTorch's view add_ writes before it raises
            assert x.tolist() == [[2.0] * 3, [1.0] * 3]

    differential(scenario)


def test_decorators_like_torch():
    def scenario(lib, tr):
        @lib.inference_mode
        def bare():
            return lib.is_inference_mode_enabled(), lib.ones(1).is_inference()

        @lib.inference_mode()
        def called():
            return lib.is_inference_mode_enabled()

        @lib.inference_mode(False)
        def off():
            return lib.is_inference_mode_enabled(), lib.is_grad_enabled()

        @lib.inference_mode()
        def gen():
            yield lib.is_inference_mode_enabled()
            yield lib.is_inference_mode_enabled()
        tr.note("bare", bare())
        tr.note("called", called())
        with lib.inference_mode():
            tr.note("off", off())
        tr.note("generator", list(gen()))
        tr.note("after", lib.is_inference_mode_enabled())

    differential(scenario)


def test_inference_mode_is_per_thread():
    seen = {}
    with nbgrad.inference_mode():
        def other():
            seen["mode"] = nbgrad.is_inference_mode_enabled()
            seen["tensor"] = nbgrad.ones(2).is_inference()
        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
        assert nbgrad.ones(2).is_inference()
    assert seen == {"mode": False, "tensor": False}


def test_a_model_evaluated_in_inference_mode(device):
    results = {}
    for lib in (nbgrad, torch):
        lib.manual_seed(0)
        x = leaf(lib, values((4, 3), 5), nbgrad.float32, device)
        w = leaf(lib, values((3, 2), 6), nbgrad.float32, device, requires_grad=True)
        with lib.inference_mode():
            out = (x @ w).relu().softmax(1)
        assert out.is_inference() and not out.requires_grad
        results[lib] = out
        if lib is nbgrad:
            assert out.device.type == device
    assert_same_tensor(results[nbgrad], results[torch])


def test_the_switch_costs_nothing_once_every_thread_left_the_mode():
    from nbgrad.tape.grad_mode import SWITCHES
    assert not SWITCHES.inference
    with nbgrad.inference_mode():
        assert SWITCHES.inference
        with nbgrad.inference_mode():
            pass
        assert SWITCHES.inference
    assert not SWITCHES.inference
    with pytest.raises(ValueError):
        with nbgrad.inference_mode():
            raise ValueError
    assert not SWITCHES.inference and not nbgrad.is_inference_mode_enabled()
