"""Module hooks against PyTorch 2.13: forward pre-hooks and forward hooks
(``with_kwargs``, ``prepend``, ``always_call``), full backward pre-hooks and
full backward hooks (the gradients they see, what they return replacing
gradients, their order across nested modules), handles, and their errors."""
import warnings

import numpy as np

import nbgrad
import torch
from differential import differential
from helpers import assert_same_tensor, leaf, values

W = [[1.0, 2.0], [3.0, -1.0]]
B = [0.5, -0.5]


def _linear(lib, w=W, b=B):
    layer = lib.nn.Linear(len(w[0]), len(w))
    with lib.no_grad():
        layer.weight.copy_(lib.tensor(w))
        layer.bias.copy_(lib.tensor(b))
    return layer


def _rounded(t):
    return None if t is None else np.round(t.detach().cpu().numpy(), 4).tolist()


def test_hook_order_across_nested_modules_like_torch():
    def scenario(lib, tr):
        inner = _linear(lib)
        outer = lib.nn.Sequential(inner, lib.nn.Tanh())
        log = []
        for name, m in (("inner", inner), ("outer", outer), ("tanh", outer[1])):
            m.register_full_backward_pre_hook(lambda mod, go, name=name: log.append(
                (name, "backward pre", [_rounded(g) for g in go])))
            m.register_full_backward_hook(lambda mod, gi, go, name=name: log.append(
                (name, "backward", [_rounded(g) for g in gi], [_rounded(g) for g in go])))
            m.register_forward_pre_hook(lambda mod, args, name=name: log.append(
                (name, "pre", len(args))))
            m.register_forward_hook(lambda mod, args, out, name=name: log.append((name, "forward")))
        x = lib.tensor([[1.0, -1.0], [0.5, 2.0]], requires_grad=True)
        y = outer(x)
        tr.note("the caller's tensor", y.grad_fn.name())
        y.sum().backward()
        tr.note("hooks", log)
        tr.grad("x.grad", x)
        tr.grad("weight.grad", inner.weight)

    differential(scenario)


def test_backward_hooks_replace_gradients_like_torch(device):
    results = {}
    for lib in (nbgrad, torch):
        m = _linear(lib)
        if lib is nbgrad:
            m.to(device)
        m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 10,))
        m.register_full_backward_hook(lambda mod, gi, go: (gi[0] + 1,))
        x = leaf(lib, values((3, 2), 9), nbgrad.float32, device, requires_grad=True)
        m(x).sum().backward()
        results[lib] = x.grad, m.weight.grad
    for ours, theirs in zip(results[nbgrad], results[torch]):
        assert ours.device.type == device
        assert_same_tensor(ours, theirs)


def test_several_inputs_and_outputs_and_non_tensor_arguments_like_torch():
    def scenario(lib, tr):
        class Two(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.layer = _linear(lib)

            def forward(self, x, scale, y=None):
                return self.layer(x) * scale + y, x * 2

        two = Two()
        log = []
        two.register_full_backward_hook(lambda mod, gi, go: log.append(
            ("backward", [_rounded(g) for g in gi], [_rounded(g) for g in go])))
        two.register_full_backward_pre_hook(lambda mod, go: log.append(
            ("backward pre", [_rounded(g) for g in go])))
        a = lib.ones(1, 2, requires_grad=True)
        y = lib.ones(1, 2, requires_grad=True)
        first, second = two(a, 3.0, y=y)
        (first.sum() + second.sum() * 2).backward()
        tr.note("hooks", log)
        tr.grad("a.grad", a)
        tr.grad("y.grad (a keyword: no hook sees it)", y)

    differential(scenario)


def test_a_module_whose_inputs_need_no_grad_like_torch():
    def scenario(lib, tr):
        m = _linear(lib)
        log = []
        m.register_full_backward_hook(lambda mod, gi, go: log.append(
            (gi, [_rounded(g) for g in go])))
        tr.warns("backward", lambda: m(lib.ones(1, 2)).sum().backward())
        tr.note("hooks", log)
        bad = _linear(lib)
        bad.register_full_backward_hook(lambda mod, gi, go: (lib.ones(1, 2),))
        tr.call("a hook that returns a gradient", lambda: bad(lib.ones(1, 2)).sum().backward())

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        differential(scenario)


def test_forward_hooks_with_kwargs_prepend_removal_and_always_call_like_torch():
    def scenario(lib, tr):
        m = _linear(lib)
        log = []
        m.register_forward_pre_hook(
            lambda mod, args, kwargs: log.append(("pre kw", sorted(kwargs))), with_kwargs=True)
        h1 = m.register_forward_hook(lambda mod, args, out: log.append("h1"))
        h2 = m.register_forward_hook(lambda mod, args, out: log.append("h2"), prepend=True)
        m.register_forward_pre_hook(lambda mod, args: log.append("p1"))
        m.register_forward_pre_hook(lambda mod, args: log.append("p0"), prepend=True)
        m.register_forward_hook(lambda mod, args, kwargs, out: log.append(("kw", sorted(kwargs))),
                                with_kwargs=True)
        m(lib.ones(1, 2))
        h2.remove()
        with h1:
            m(lib.ones(1, 2))
        m(lib.ones(1, 2))
        tr.note("order", log)

        class Boom(lib.nn.Module):
            def forward(self, x):
                raise ValueError("boom")
        boom = Boom()
        seen = []
        boom.register_forward_hook(lambda mod, args, out: seen.append(("always", out)),
                                   always_call=True)
        boom.register_forward_hook(lambda mod, args, out: seen.append("not always"))
        tr.call("forward raises", lambda: boom(lib.ones(1)))
        tr.note("hooks that ran", seen)

        def failing(mod, args, out):
            raise KeyError("the hook failed too")
        boom.register_forward_hook(failing, always_call=True)
        tr.warns("a failing always_call hook", lambda: boom(lib.ones(1)))

    differential(scenario)


def test_what_hooks_return_like_torch():
    def scenario(lib, tr):
        m = _linear(lib)
        m.register_forward_pre_hook(lambda mod, args: args[0] * 0)  # one value: wrapped
        tr.values("pre-hook replaced the input", m(lib.ones(1, 2)))
        m2 = _linear(lib)
        m2.register_forward_pre_hook(lambda mod, args, kwargs: ((args[0] * 2,), kwargs),
                                     with_kwargs=True)
        m2.register_forward_hook(lambda mod, args, out: out + 100)
        tr.values("new args and output", m2(lib.ones(1, 2)))
        m3 = _linear(lib)
        m3.register_forward_pre_hook(lambda mod, args, kwargs: 5, with_kwargs=True)
        tr.call("a kwargs pre-hook returning one value", lambda: m3(lib.ones(1, 2)))
        m4 = _linear(lib)
        m4.register_full_backward_pre_hook(lambda mod, go: (go[0], go[0]))
        tr.call("backward pre-hook: two gradients for one output",
                lambda: m4(lib.ones(1, 2, requires_grad=True)).sum().backward())
        m5 = _linear(lib)
        m5.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
        tr.call("backward hook: two gradients for one input",
                lambda: m5(lib.ones(1, 2, requires_grad=True)).sum().backward())

    differential(scenario)


def test_backward_hooks_are_removable_and_run_again_with_retain_graph_like_torch():
    def scenario(lib, tr):
        m = _linear(lib)
        log = []
        handle = m.register_full_backward_hook(lambda mod, gi, go: log.append("full"))
        m.register_full_backward_pre_hook(lambda mod, go: log.append("pre"))
        x = lib.ones(1, 2, requires_grad=True)
        out = m(x).sum()
        out.backward(retain_graph=True)
        out.backward()
        handle.remove()
        m(x).sum().backward()
        tr.note("hooks", log)
        tr.grad("x.grad", x)

    differential(scenario)


def test_hooks_under_no_grad_and_a_plain_call_cost_nothing():
    def scenario(lib, tr):
        m = _linear(lib)
        log = []
        m.register_full_backward_hook(lambda mod, gi, go: log.append("full"))
        with lib.no_grad():
            out = m(lib.ones(1, 2, requires_grad=True))
        tr.note("no history under no_grad", out.grad_fn is None)

    differential(scenario)
    plain = nbgrad.nn.Linear(2, 2)
    assert not (plain._forward_hooks or plain._forward_pre_hooks or plain._backward_hooks
                or plain._backward_pre_hooks)


def test_gradients_through_hooked_modules_build_graphs_like_torch():
    def scenario(lib, tr):
        m = _linear(lib)
        log = []
        m.register_full_backward_hook(lambda mod, gi, go: log.append(len(gi)))
        x = lib.tensor([[0.5, -1.0]], requires_grad=True)
        (g,) = lib.autograd.grad((m(x).tanh() ** 2).sum(), x, create_graph=True)
        tr.values("first derivative", g)
        g.sum().backward()
        tr.grad("second derivative", x)
        tr.note("hooks", log)

    differential(scenario)
