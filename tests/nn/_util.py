"""Helpers for comparing nbgrad.nn with torch.nn: copy weights across, run
forward and backward on both, compare values and gradients."""
import numpy as np
import torch

import nbgrad
from helpers import on_device

DTYPES = [(nbgrad.float32, torch.float32), (nbgrad.float64, torch.float64)]
DTYPE_IDS = ["float32", "float64"]

# Layers sum many products in an order that differs from PyTorch's (im2col,
# BLAS blocking): float32 gets a few ulp of the sums' magnitude.
TOL = {"float32": dict(rtol=1e-4, atol=1e-5), "float64": dict(rtol=1e-10, atol=1e-12)}


def numpy_of(t):
    if isinstance(t, torch.Tensor):
        return t.detach().numpy()
    return np.asarray(t.detach().numpy())


def assert_close(actual, expected, dtype_name=None):
    a, e = numpy_of(actual), numpy_of(expected)
    assert a.shape == e.shape, f"shape {a.shape} != expected {e.shape}"
    assert a.dtype == e.dtype, f"dtype {a.dtype} != expected {e.dtype}"
    np.testing.assert_allclose(a, e, **TOL[dtype_name or str(a.dtype)])


def copy_weights(nb_module, torch_module):
    """torch's state dict into the nbgrad module (same names, same shapes)."""
    state = {k: nbgrad.tensor(v.detach().numpy()) for k, v in torch_module.state_dict().items()}
    nb_module.load_state_dict(state)


def run_both(nb_fn, torch_fn, inputs, dtype, seed=0, requires_grad=True):
    """Call both functions on the same inputs (NumPy arrays, or ints/other
    values passed through), backward a random cotangent, return
    ``(nb_out, torch_out, nb_inputs, torch_inputs)``."""
    nb_dtype, t_dtype = dtype
    nb_in, t_in = [], []
    for x in inputs:
        if isinstance(x, np.ndarray) and x.dtype.kind == "f":
            nb_in.append(nbgrad.tensor(x, dtype=nb_dtype, requires_grad=requires_grad))
            t_in.append(torch.tensor(x, dtype=t_dtype, requires_grad=requires_grad))
        elif isinstance(x, np.ndarray):
            nb_in.append(nbgrad.tensor(x))
            t_in.append(torch.tensor(x))
        else:
            nb_in.append(x)
            t_in.append(x)
    nb_out, t_out = nb_fn(*nb_in), torch_fn(*t_in)
    if requires_grad:
        g = np.random.default_rng(seed).standard_normal(tuple(t_out.shape))
        nb_out.backward(nbgrad.tensor(g, dtype=nb_dtype))
        t_out.backward(torch.tensor(g, dtype=t_dtype))
    return nb_out, t_out, nb_in, t_in


def assert_grads_match(nb_module, torch_module, dtype_name):
    t_params = dict(torch_module.named_parameters())
    nb_params = dict(nb_module.named_parameters())
    assert list(nb_params) == list(t_params)
    for name, p in nb_params.items():
        assert_close(p.grad, t_params[name].grad, dtype_name)


def run_on_device(fn, make, inputs, dtype, device, seed=0):
    """``fn(module, *inputs)`` with nbgrad on ``device`` and with torch:
    ``make(lib)`` builds the same module from ``lib.nn`` (or is None for a
    function), torch's weights are copied into nbgrad's. Floating NumPy
    inputs become leaves that require grad; backward a random cotangent;
    compare the outputs and every gradient, which must stay on the device.
    Returns the (nbgrad, torch) outputs."""
    nb_dtype, t_dtype = dtype
    modules = {nbgrad: None, torch: None}
    if make is not None:
        modules = {lib: make(lib) for lib in (nbgrad, torch)}
        copy_weights(modules[nbgrad], modules[torch])
        modules[nbgrad].to(device=device, dtype=nb_dtype)
        modules[torch].to(dtype=t_dtype)
    results = {}
    for lib, lib_dtype in ((nbgrad, nb_dtype), (torch, t_dtype)):
        on = on_device(lib, device)
        args = [lib.tensor(x, dtype=lib_dtype, requires_grad=True, **on) if x.dtype.kind == "f"
                else lib.tensor(x, **on) for x in inputs]
        out = fn(modules[lib], *args)
        g = np.random.default_rng(seed).standard_normal(tuple(out.shape))
        out.backward(lib.tensor(g, dtype=lib_dtype, **on))
        grads = {f"input {k}": a.grad for k, a in enumerate(args) if a.grad is not None}
        if modules[lib] is not None:
            grads.update({name: p.grad for name, p in modules[lib].named_parameters()})
        results[lib] = out, grads
    (out, grads), (want, want_grads) = results[nbgrad], results[torch]
    name = nb_dtype.name
    assert out.device.type == device
    assert_close(out.cpu(), want, name)
    assert sorted(grads) == sorted(want_grads)
    for key, grad in grads.items():
        assert grad.device.type == device, key
        assert_close(grad.cpu(), want_grads[key], name)
    return out, want


# -- higher-order gradients (create_graph=True) -----------------------------------
class Const:
    """A float64 input that is a constant (no gradient) in ``second_derivatives``."""

    def __init__(self, array):
        self.array = array


def make_inputs(lib, arrays, device):
    """``(inputs, leaves)`` from ``arrays`` as ``second_derivatives`` makes them."""
    on = on_device(lib, device)
    made, leaves = [], []
    for a in arrays:
        if isinstance(a, Const):
            made.append(lib.tensor(a.array, dtype=lib.float64, **on))
        elif isinstance(a, np.ndarray) and a.dtype.kind == "f":
            t = lib.tensor(a, dtype=lib.float64, requires_grad=True, **on)
            made.append(t)
            leaves.append(t)
        elif isinstance(a, np.ndarray):
            made.append(lib.tensor(a, **on))
        else:
            made.append(a)
    return made, leaves


def second_derivatives(lib, fn, arrays, device="cpu", seed=7):
    """``fn(lib, *inputs)`` on float64 inputs made from ``arrays`` (floating
    arrays become leaves that require grad; ``Const`` ones and integer arrays
    do not; anything else is passed as it is), on ``device`` in nbgrad. Its
    first derivatives with respect to the leaves, against a random cotangent
    that requires grad, with ``create_graph=True``; then the gradients of a
    random weighted sum of them with respect to the leaves and the cotangent.
    Returns ``(firsts, seconds)``."""
    on = on_device(lib, device)
    inputs, leaves = make_inputs(lib, arrays, device)
    out = fn(lib, *inputs)
    rng = np.random.default_rng(seed)
    cotangent = lib.tensor(rng.standard_normal(tuple(out.shape)), dtype=lib.float64,
                           requires_grad=True, **on)
    firsts = lib.autograd.grad(out, leaves, cotangent, create_graph=True)
    weighted = sum((g * lib.tensor(rng.standard_normal(tuple(g.shape)), dtype=lib.float64, **on)
                    ).sum() for g in firsts)
    seconds = lib.autograd.grad(weighted, leaves + [cotangent], allow_unused=True)
    return firsts, seconds


def assert_values_close(mine, want, rtol=1e-9, atol=1e-11):
    """float64 values of an nbgrad tensor (any device) and a torch tensor."""
    a = np.asarray(mine.detach().cpu().numpy())
    e = want.detach().numpy()
    assert a.shape == e.shape, f"shape {a.shape} != expected {e.shape}"
    np.testing.assert_allclose(a, e, rtol=rtol, atol=atol)


def assert_second_derivatives_match(fn, arrays, device="cpu", rtol=1e-9, atol=1e-11):
    """``second_derivatives`` of ``fn`` in nbgrad (on ``device``) and in torch
    agree: every first derivative, and every second one. Where torch's graph
    does not reach an input (None, or its symbolic zeros) nbgrad's gives none
    or zeros; where torch's does, nbgrad's does too."""
    ours = second_derivatives(nbgrad, fn, arrays, device)
    theirs = second_derivatives(torch, fn, arrays)
    for mine, want in zip(ours[0], theirs[0]):
        assert mine.requires_grad and mine.device.type == device
        assert_values_close(mine, want, rtol, atol)
    assert len(ours[1]) == len(theirs[1])
    for k, (mine, want) in enumerate(zip(ours[1], theirs[1])):
        if want is None or want._is_zerotensor():
            assert mine is None or not mine.cpu().numpy().any(), k
        else:
            assert mine is not None, f"second derivative {k} missing; torch has one"
            assert_values_close(mine, want, rtol, atol)
