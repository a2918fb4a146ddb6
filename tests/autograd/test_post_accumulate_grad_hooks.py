"""``Tensor.register_post_accumulate_grad_hook`` against PyTorch 2.13: when
it runs (after ``.grad`` holds the new gradient: ``backward``, with or
without ``inputs`` and ``create_graph``; not ``autograd.grad``), its order
with the tensor's gradient hooks, removal, its errors, and the optimizer
step in backward it exists for."""
import warnings

import torch

import nbgrad
from differential import differential
from helpers import assert_same_tensor, leaf, values


def test_when_and_in_which_order_post_accumulate_hooks_run_like_torch():
    def scenario(lib, tr):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        log = []
        first = a.register_post_accumulate_grad_hook(
            lambda t: log.append(("first", t is a, t.grad.tolist())))
        a.register_post_accumulate_grad_hook(lambda t: log.append(("second", t.grad.tolist())))
        a.register_hook(lambda g: log.append(("gradient hook", g.tolist())))
        (a * 3).sum().backward()
        tr.note("backward", log)
        log.clear()
        (a * a).sum().backward(inputs=[a])
        tr.note("backward(inputs=)", log)
        log.clear()
        lib.autograd.grad((a * 3).sum(), a)
        tr.note("autograd.grad", log)
        log.clear()
        a.grad = None
        (a * a).sum().backward(create_graph=True)
        tr.note("create_graph", log)
        log.clear()
        first.remove()
        first.remove()
        (a * 3).sum().backward()
        tr.note("after remove", log)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's create_graph reference-cycle warning
        differential(scenario)


def test_errors_like_torch():
    def scenario(lib, tr):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        tr.call("non-leaf", lambda: (a * 2).register_post_accumulate_grad_hook(lambda t: None))
        tr.call("view of a leaf", lambda: a[:1].register_post_accumulate_grad_hook(lambda t: None))
        tr.call("without grad", lambda: lib.ones(2).register_post_accumulate_grad_hook(
            lambda t: None))
        a.register_post_accumulate_grad_hook(lambda t: 5)
        tr.call("a hook that returns something", lambda: (a * 3).sum().backward())
        tr.grad("a.grad (accumulated first)", a)

    differential(scenario)


def test_an_optimizer_step_in_backward(device):
    results = {}
    for lib in (nbgrad, torch):
        w = leaf(lib, values((3,), 7), nbgrad.float32, device, requires_grad=True)
        x = leaf(lib, values((4, 3), 8), nbgrad.float32, device)
        opt = {w: lib.optim.SGD([w], lr=0.1)}

        def step(p):
            opt[p].step()
            opt[p].zero_grad()
        w.register_post_accumulate_grad_hook(step)
        for _ in range(3):
            ((x * w).sum(1).tanh() ** 2).mean().backward()
        assert w.grad is None
        results[lib] = w.detach()
    assert results[nbgrad].device.type == device
    assert_same_tensor(results[nbgrad], results[torch])
