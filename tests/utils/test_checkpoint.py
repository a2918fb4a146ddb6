"""``nbgrad.utils.checkpoint`` against PyTorch 2.13 and against the same
computation without checkpointing: gradients (both variants, nested, with
keyword arguments, ``autograd.grad``), dropout masks drawn again identically,
the random state left as it was, how often the function runs, what the
forward keeps, ``checkpoint_sequential``, and the errors and warnings.

The memory a checkpoint saves is measured by ``python -m
kernels.checkpoint_memory``, not here."""
import warnings

import numpy as np
import pytest
import torch
import torch.utils.checkpoint

import nbgrad
import nbgrad.utils.checkpoint
from differential import differential
from helpers import assert_close, leaf, values
from nbgrad.tape.graph import Packed, SavedTensor

F32 = nbgrad.float32


def _checkpoint(lib):
    return lib.utils.checkpoint


def _mlp_params(lib, device="cpu", depth=4, width=6):
    return [leaf(lib, values((width, width), 20 + k) / 2, F32, device, requires_grad=True)
            for k in range(depth)]


def _block(h, w):
    return (h @ w).tanh().sigmoid() * 2


def _run(lib, device, use_reentrant, depth=4):
    ws = _mlp_params(lib, device, depth)
    x = leaf(lib, values((5, 6), 30), F32, device, requires_grad=True)
    h = x
    for w in ws:
        h = _block(h, w) if use_reentrant is None else \
            _checkpoint(lib).checkpoint(_block, h, w, use_reentrant=use_reentrant)
    (h * h).sum().backward()
    return [x.grad] + [w.grad for w in ws]


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_gradients_equal_the_unchecked_ones_and_torchs(use_reentrant, device):
    plain = _run(nbgrad, device, None)
    checked = _run(nbgrad, device, use_reentrant)
    theirs = _run(torch, "cpu", use_reentrant)
    for p, c, t in zip(plain, checked, theirs):
        assert c.device.type == device
        np.testing.assert_array_equal(c.cpu().numpy(), p.cpu().numpy())
        assert_close(c, t)


def _dropout_step(lib, use_reentrant, device="cpu"):
    lib.manual_seed(7)
    x = leaf(lib, np.ones((4, 50)), F32, device, requires_grad=True)
    w = leaf(lib, values((50, 50), 3) / 5, F32, device, requires_grad=True)

    def f(h, w):
        return lib.nn.functional.dropout((h @ w).tanh(), 0.5, True) * 2

    y = _checkpoint(lib).checkpoint(f, x, w, use_reentrant=use_reentrant)
    after_forward = lib.rand(3).tolist()
    y.sum().backward()
    after_backward = lib.rand(3).tolist()
    return y, x, after_forward, after_backward


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_dropout_draws_the_same_mask_again_and_the_random_state_is_left_alone(use_reentrant,
                                                                               device):
    y, x, after_forward, after_backward = _dropout_step(nbgrad, use_reentrant, device)
    assert 0.3 < (y.detach().cpu().numpy() != 0).mean() < 0.7
    # The gradient flows through the kept units only: equal to the plain
    # computation's from the same seed, the recomputation dropped the units
    # the forward dropped.
    np.testing.assert_allclose(x.grad.cpu().numpy(), _dropout_plain(nbgrad, device), rtol=1e-5,
                               atol=1e-6)
    nbgrad.manual_seed(7)
    nbgrad.rand(4, 50)  # the draws dropout made
    assert after_forward == nbgrad.rand(3).tolist()
    assert after_backward == nbgrad.rand(3).tolist()  # recomputing drew nothing


def _dropout_plain(lib, device):
    lib.manual_seed(7)
    x = leaf(lib, np.ones((4, 50)), F32, device, requires_grad=True)
    w = leaf(lib, values((50, 50), 3) / 5, F32, device, requires_grad=True)
    y = lib.nn.functional.dropout((x @ w).tanh(), 0.5, True) * 2
    y.sum().backward()
    return x.grad.cpu().numpy()


def test_without_preserving_the_random_state_the_mask_changes():
    nbgrad.manual_seed(7)
    x = nbgrad.ones(2000, requires_grad=True)
    y = nbgrad.utils.checkpoint.checkpoint(
        lambda t: nbgrad.nn.functional.dropout(t * 1, 0.5, True), x, use_reentrant=False,
        preserve_rng_state=False)
    y.sum().backward()
    forward_mask = y.detach().numpy() != 0
    backward_mask = x.grad.numpy() != 0
    assert (forward_mask != backward_mask).any()


def test_the_function_runs_once_forward_and_once_more_in_backward_like_torch():
    def scenario(lib, tr):
        calls = []

        def f(a, b):
            calls.append(lib.is_grad_enabled())
            return (a * b).sin() * a

        a = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        b = lib.tensor([1.5, 0.25, -2.0], requires_grad=True)
        for use_reentrant in (False, True):
            calls.clear()
            y = lib.utils.checkpoint.checkpoint(f, a, b, use_reentrant=use_reentrant)
            tr.note("forward runs", list(calls))
            y.sum().backward()
            tr.note("and backward", list(calls))
            tr.grad("a.grad", a)
            tr.grad("b.grad", b)
        calls.clear()
        with lib.no_grad():
            y = lib.utils.checkpoint.checkpoint(f, a, b, use_reentrant=False)
        tr.note("under no_grad", (list(calls), y.requires_grad))

    differential(scenario)


def test_the_forward_keeps_no_saved_tensor():
    ws = _mlp_params(nbgrad)
    x = nbgrad.ones(5, 6, requires_grad=True)
    y = nbgrad.utils.checkpoint.checkpoint(
        lambda h: _block(_block(h, ws[0]), ws[1]), x, use_reentrant=False)
    seen, saved = set(), []
    stack = [y.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        saved += [s for s in node.saved if s.__class__ is SavedTensor]
        stack += list(node.next_edges)
    assert saved and all(s.data.__class__ is Packed and s.data.value.value is None
                         for s in saved)


def test_keyword_arguments_and_autograd_grad_like_torch():
    def scenario(lib, tr):
        a = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)

        def f(x, *, scale):
            return (x * scale).exp() * x

        y = lib.utils.checkpoint.checkpoint(f, a, use_reentrant=False, scale=0.5)
        (g,) = lib.autograd.grad(y.sum(), a, create_graph=True)
        tr.values("first derivative", g)
        g.sum().backward()
        tr.grad("second derivative", a)
        tr.call("keywords with use_reentrant=True",
                lambda: lib.utils.checkpoint.checkpoint(f, a, use_reentrant=True, scale=0.5))

    differential(scenario)


def test_nested_checkpoints_like_torch():
    def scenario(lib, tr):
        cp = lib.utils.checkpoint.checkpoint
        a = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)

        def inner(x):
            return x.sin() * x

        def outer(x):
            return cp(inner, x.exp(), use_reentrant=False).tanh()

        cp(outer, a, use_reentrant=False).sum().backward()
        tr.grad("a.grad", a)

    differential(scenario)


def test_checkpoint_sequential_like_torch(device):
    results = {}
    for lib in (nbgrad, torch):
        lib.manual_seed(0)
        layers = [lib.nn.Linear(6, 6) for _ in range(6)]
        for k, layer in enumerate(layers):
            with lib.no_grad():
                layer.weight.copy_(lib.tensor(values((6, 6), 40 + k) / 3, dtype=lib.float32))
                layer.bias.zero_()
        model = lib.nn.Sequential(*[m for layer in layers for m in (layer, lib.nn.Tanh())])
        if lib is nbgrad:
            model.to(device)
        x = leaf(lib, values((3, 6), 50), F32, device if lib is nbgrad else "cpu",
                 requires_grad=True)
        out = lib.utils.checkpoint.checkpoint_sequential(model, 3, x, use_reentrant=False)
        out.sum().backward()
        results[lib] = out, x.grad, layers[0].weight.grad
    for ours, theirs in zip(results[nbgrad], results[torch]):
        assert_close(ours, theirs)


def test_warnings_and_errors_like_torch():
    def scenario(lib, tr):
        cp = lib.utils.checkpoint
        a = lib.tensor([0.5, -1.0], requires_grad=True)
        tr.warns("use_reentrant not given", lambda: cp.checkpoint(lambda x: x * 2, a))
        tr.warns("checkpoint_sequential without use_reentrant",
                 lambda: cp.checkpoint_sequential([lambda x: x * 2] * 2, 2, a))
        tr.warns("no input requires grad",
                 lambda: cp.checkpoint(lambda x: x * 2, lib.ones(2), use_reentrant=True))
        tr.call("determinism_check", lambda: cp.checkpoint(
            lambda x: x, a, use_reentrant=False, determinism_check="strict"))
        tr.call("context_fn with use_reentrant=True", lambda: cp.checkpoint(
            lambda x: x, a, use_reentrant=True, context_fn=lambda: (None, None)))
        tr.call("checkpoint_sequential keywords", lambda: cp.checkpoint_sequential(
            [lambda x: x], 1, a, use_reentrant=False, foo=1))
        y = cp.checkpoint(lambda x: (x * x).sum(), a, use_reentrant=True)
        tr.call("reentrant, autograd.grad", lambda: lib.autograd.grad(y, a))
        y = cp.checkpoint(lambda x: (x * x).sum(), a, use_reentrant=True)
        tr.call("reentrant, backward(inputs=)", lambda: y.backward(inputs=[a]))
        tr.grad("a.grad", a)

    differential(scenario)


def test_a_recomputation_that_saves_other_tensors_is_refused_like_torch():
    def scenario(lib, tr):
        cp = lib.utils.checkpoint
        a = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        runs = []

        def changes_shape(x):
            runs.append(1)
            return (x[: 4 - len(runs)] * x[: 4 - len(runs)]).sum()

        y = cp.checkpoint(changes_shape, a, use_reentrant=False)
        tr.call("other metadata", lambda: y.backward())
        runs.clear()

        def saves_less(x):
            runs.append(1)
            return (x * x).sum() if len(runs) == 1 else (x * 2).sum()

        y = cp.checkpoint(saves_less, a, use_reentrant=False)
        tr.call("fewer saved tensors", lambda: y.backward())

    trace = differential(_first_line_of_errors(scenario))
    assert all(isinstance(e, nbgrad.utils.checkpoint.CheckpointError) for e in trace.errors)


def _first_line_of_errors(scenario):
    """The scenario with each error cut to its first lines (PyTorch's end
    with a tip about its debug mode and torch.compile)."""
    def wrapped(lib, tr):
        original = tr.call

        def call(label, fn):
            result = original(label, fn)
            label_, kind, outcome = tr.events[-1]
            if isinstance(outcome, tuple):
                text = "\n".join(outcome[2].split("\n")[:4])
                tr.events[-1] = (label_, kind, outcome[:2] + (text.split(".\nTip")[0],))
            return result
        tr.call = call
        scenario(lib, tr)
    return wrapped


def test_an_input_written_in_place_after_the_forward_is_caught():
    a = nbgrad.tensor([0.5, -1.0, 2.0], requires_grad=True)
    h = a * 1
    y = nbgrad.utils.checkpoint.checkpoint(lambda x: (x * x).sum(), h, use_reentrant=False)
    with nbgrad.no_grad():
        h.mul_(2)  # the recomputation would read the new values
    with pytest.raises(RuntimeError, match=r"is at version 1; expected version 0 instead\. It "
                                           r"was modified in place by mul_\(\)"):
        y.backward()


def test_retain_graph_runs_backward_twice_like_torch():
    def scenario(lib, tr):
        a = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        for use_reentrant in (False, True):
            y = lib.utils.checkpoint.checkpoint(lambda x: (x.sin() * x).sum(), a,
                                                use_reentrant=use_reentrant)
            y.backward(retain_graph=True)
            y.backward()
            tr.grad("a.grad", a)
            tr.call("a third backward", lambda: y.backward())

    differential(scenario)


def test_detach_variable_like_torch():
    def scenario(lib, tr):
        a = lib.tensor([1.0], requires_grad=True)
        out = lib.utils.checkpoint.detach_variable((a * 2, 3, lib.ones(1)))
        tr.note("flags", [(t.requires_grad, t.grad_fn is None) if isinstance(t, lib.Tensor)
                          else t for t in out])
        tr.call("a list", lambda: lib.utils.checkpoint.detach_variable([a]))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        differential(scenario)
