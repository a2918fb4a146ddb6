"""Normalization layers (batch, instance, layer, group, RMS, local response
norm) and F.normalize against torch: copied weights, forward, gradients,
running statistics over several steps, state dict keys, reprs, node names,
gradcheck in float64, second derivatives, and small cases on every device."""
import numpy as np
import pytest
import torch

import nbgrad
import nbgrad.nn as nn
import nbgrad.nn.functional as F
from nbgrad.autograd import gradcheck, gradgradcheck

from ._util import (DTYPE_IDS, DTYPES, assert_close, assert_second_derivatives_match,
                    copy_weights, run_on_device)

TESTED_OPS = {"batch_norm", "instance_norm", "layer_norm", "group_norm", "rms_norm",
              "normalize", "local_response_norm"}

# (make(lib) -> module, input shape)
LAYERS = {
    "bn1d": (lambda L: L.nn.BatchNorm1d(3), (5, 3)),
    "bn1d-3d": (lambda L: L.nn.BatchNorm1d(3, momentum=None), (4, 3, 6)),
    "bn2d": (lambda L: L.nn.BatchNorm2d(3, eps=1e-3, momentum=0.3), (4, 3, 5, 2)),
    "bn2d-noaffine": (lambda L: L.nn.BatchNorm2d(3, affine=False), (4, 3, 2, 2)),
    "bn2d-nobias": (lambda L: L.nn.BatchNorm2d(3, bias=False), (4, 3, 2, 2)),
    "bn2d-notrack": (lambda L: L.nn.BatchNorm2d(3, track_running_stats=False), (4, 3, 2, 2)),
    "bn3d": (lambda L: L.nn.BatchNorm3d(2), (3, 2, 2, 3, 2)),
    "in1d": (lambda L: L.nn.InstanceNorm1d(3), (2, 3, 5)),
    "in2d-affine-track": (lambda L: L.nn.InstanceNorm2d(3, affine=True, track_running_stats=True),
                          (2, 3, 4, 3)),
    "ln": (lambda L: L.nn.LayerNorm(6), (4, 6)),
    "ln-2d": (lambda L: L.nn.LayerNorm([3, 4], eps=1e-3), (2, 5, 3, 4)),
    "ln-nobias": (lambda L: L.nn.LayerNorm(6, bias=False), (4, 6)),
    "ln-noaffine": (lambda L: L.nn.LayerNorm(6, elementwise_affine=False), (4, 6)),
    "gn": (lambda L: L.nn.GroupNorm(2, 6), (3, 6, 4, 2)),
    "gn-instance": (lambda L: L.nn.GroupNorm(6, 6, affine=False), (3, 6, 5)),
    "gn-layer": (lambda L: L.nn.GroupNorm(1, 4, eps=1e-3), (2, 4, 3)),
    "gn-no-spatial": (lambda L: L.nn.GroupNorm(2, 4), (3, 4)),
    "rms": (lambda L: L.nn.RMSNorm(6), (4, 6)),
    "rms-eps": (lambda L: L.nn.RMSNorm([2, 3], eps=1e-4), (4, 2, 3)),
    "lrn": (lambda L: L.nn.LocalResponseNorm(3), (2, 5, 4)),
}


def _randomize(module):
    """Non-trivial affine parameters (PyTorch initialises ones and zeros)."""
    rng = np.random.default_rng(3)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.tensor(rng.uniform(0.5, 1.5, tuple(p.shape))))


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("name", list(LAYERS))
def test_layer_matches_torch_over_training_steps(name, dtype):
    make, shape = LAYERS[name]
    nb_dtype, t_dtype = dtype
    dname = DTYPE_IDS[DTYPES.index(dtype)]
    tm = make(torch).to(t_dtype)
    _randomize(tm)
    nb = make(nbgrad).to(dtype=nb_dtype)
    assert repr(nb) == repr(tm)
    assert list(nb.state_dict()) == list(tm.state_dict())
    copy_weights(nb, tm)
    rng = np.random.default_rng(0)
    for step in range(3):  # running statistics accumulate over the steps
        x = rng.standard_normal(shape) * 2 + 1
        g = rng.standard_normal(shape)
        nx = nbgrad.tensor(x, dtype=nb_dtype, requires_grad=True)
        tx = torch.tensor(x, dtype=t_dtype, requires_grad=True)
        out, want = nb(nx), tm(tx)
        out.backward(nbgrad.tensor(g, dtype=nb_dtype))
        want.backward(torch.tensor(g, dtype=t_dtype))
        assert_close(out, want, dname)
        assert_close(nx.grad, tx.grad, dname)
        assert out.grad_fn.name() == type(want.grad_fn).__name__[:-1] or name.startswith(
            ("rms", "in", "lrn"))
    for (key, value), (tkey, tvalue) in zip(nb.state_dict().items(), tm.state_dict().items()):
        assert key == tkey
        if value.is_floating_point():
            assert_close(value, tvalue, dname)
        else:
            assert value.item() == tvalue.item()
    for (key, p), (_, tp) in zip(nb.named_parameters(), tm.named_parameters()):
        assert_close(p.grad, tp.grad, dname)
    # eval mode: the running statistics
    nb.eval()
    tm.eval()
    x = rng.standard_normal(shape)
    assert_close(nb(nbgrad.tensor(x, dtype=nb_dtype)), tm(torch.tensor(x, dtype=t_dtype)), dname)


@pytest.mark.parametrize("name", ["bn2d", "bn1d", "ln", "gn", "rms", "in1d"])
def test_layer_gradcheck(name):
    make, shape = LAYERS[name]
    module = make(nbgrad).double()
    with nbgrad.no_grad():
        for p in module.parameters():
            p.copy_(nbgrad.tensor(np.random.default_rng(1).uniform(0.5, 1.5, tuple(p.shape))))
    x = nbgrad.tensor(np.random.default_rng(2).standard_normal(shape), requires_grad=True)
    leaves = [nbgrad.tensor(p.detach().numpy(), requires_grad=True)
              for p in module.parameters()]
    functional = {
        "bn2d": lambda x, w, b: F.batch_norm(x, None, None, w, b, True),
        "bn1d": lambda x, w, b: F.batch_norm(x, None, None, w, b, True),
        "ln": lambda x, w, b: F.layer_norm(x, (6,), w, b),
        "gn": lambda x, w, b: F.group_norm(x, 2, w, b),
        "rms": lambda x, w: F.rms_norm(x, (6,), w),
        "in1d": lambda x: F.instance_norm(x),
    }[name]
    assert gradcheck(functional, (x, *leaves))
    assert gradgradcheck(functional, (x, *leaves))


def test_batch_norm_eval_gradcheck():
    rng = np.random.default_rng(4)
    rm, rv = nbgrad.tensor(rng.standard_normal(3)), nbgrad.tensor(rng.uniform(0.5, 2, 3))
    x = nbgrad.tensor(rng.standard_normal((4, 3, 2)), requires_grad=True)
    w = nbgrad.tensor(rng.standard_normal(3), requires_grad=True)
    b = nbgrad.tensor(rng.standard_normal(3), requires_grad=True)
    fn = lambda x, w, b: F.batch_norm(x, rm, rv, w, b, False)  # noqa: E731
    assert gradcheck(fn, (x, w, b)) and gradgradcheck(fn, (x, w, b))
    assert fn(x, w, b).grad_fn.name() == "NativeBatchNormBackward"


@pytest.mark.parametrize("case", ["bn", "ln", "gn"])
def test_second_derivatives_match_torch(case):
    rng = np.random.default_rng(6)
    fns = {
        "bn": (lambda lib, x, w, b: lib.nn.functional.batch_norm(x, None, None, w, b, True),
               [rng.standard_normal((4, 3, 2)), rng.uniform(0.5, 1.5, 3), rng.standard_normal(3)]),
        "ln": (lambda lib, x, w, b: lib.nn.functional.layer_norm(x, (5,), w, b),
               [rng.standard_normal((3, 5)), rng.uniform(0.5, 1.5, 5), rng.standard_normal(5)]),
        "gn": (lambda lib, x, w, b: lib.nn.functional.group_norm(x, 2, w, b),
               [rng.standard_normal((2, 4, 3)), rng.uniform(0.5, 1.5, 4), rng.standard_normal(4)]),
    }
    fn, arrays = fns[case]
    assert_second_derivatives_match(fn, arrays, "cpu")


@pytest.mark.parametrize("p, dim", [(2.0, 1), (1.0, -1), (3.0, 0)])
def test_normalize_matches_torch(p, dim):
    x = np.random.default_rng(5).standard_normal((3, 4))
    nx = nbgrad.tensor(x, requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)
    out, want = F.normalize(nx, p, dim), torch.nn.functional.normalize(tx, p, dim)
    out.sum().backward()
    want.sum().backward()
    assert_close(out, want)
    assert_close(nx.grad, tx.grad)


def test_momentum_none_is_a_cumulative_average():
    nb, tm = nn.BatchNorm1d(2, momentum=None), torch.nn.BatchNorm1d(2, momentum=None)
    rng = np.random.default_rng(8)
    for _ in range(4):
        x = rng.standard_normal((5, 2)) * 3
        nb(nbgrad.tensor(x, dtype=nbgrad.float32))
        tm(torch.tensor(x, dtype=torch.float32))
    assert_close(nb.running_mean, tm.running_mean)
    assert_close(nb.running_var, tm.running_var)
    assert nb.num_batches_tracked.item() == 4


ERRORS = [
    ("bn-1-per-channel", lambda L: L.nn.functional.batch_norm(L.ones(1, 3), None, None,
                                                               training=True)),
    ("bn1d-dim", lambda L: L.nn.BatchNorm1d(3)(L.ones(2, 3, 4, 5))),
    ("bn2d-dim", lambda L: L.nn.BatchNorm2d(3)(L.ones(2, 3))),
    ("bn-running", lambda L: L.nn.functional.batch_norm(L.ones(2, 3), L.zeros(4), L.ones(4))),
    ("ln-shape", lambda L: L.nn.functional.layer_norm(L.ones(2, 3), (4,))),
    ("ln-weight", lambda L: L.nn.functional.layer_norm(L.ones(2, 3), (3,), L.ones(4))),
    ("gn-groups", lambda L: L.nn.functional.group_norm(L.ones(2, 3, 4), 2)),
    ("gn-module", lambda L: L.nn.GroupNorm(2, 3)),
    ("bn-eval-no-stats", lambda L: L.nn.functional.batch_norm(L.ones(3, 2), None, None)),
]


@pytest.mark.parametrize("make", [e[1] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_errors_match_torch(make):
    with pytest.raises(Exception) as want:
        make(torch)
    with pytest.raises(type(want.value)) as got:
        make(nbgrad)
    assert str(got.value) == str(want.value).replace("torch.Size", "nbgrad.Size")


# ------------------------------------------------------------ on every device
@pytest.mark.parametrize("name", ["bn2d", "ln", "gn", "rms"])
def test_layers_on_the_device_match_torch(name, device):
    make, shape = LAYERS[name]
    run_on_device(lambda m, x: m(x), make, [np.random.default_rng(0).standard_normal(shape)],
                  DTYPES[0], device)


def test_batch_norm_running_statistics_on_the_device_match_torch(device):
    nb = nn.BatchNorm1d(3).to(device=device)
    tm = torch.nn.BatchNorm1d(3)
    x = np.random.default_rng(9).standard_normal((6, 3)).astype(np.float32)
    for _ in range(2):
        out = nb(nbgrad.tensor(x, device=device))
        want = tm(torch.tensor(x))
    assert_close(out.cpu(), want)
    assert nb.running_mean.device.type == device
    assert_close(nb.running_mean.cpu(), tm.running_mean)
    assert_close(nb.running_var.cpu(), tm.running_var)
    assert nb.num_batches_tracked.item() == 2
    nb.eval()
    tm.eval()
    assert_close(nb(nbgrad.tensor(x, device=device)).cpu(), tm(torch.tensor(x)))


@pytest.mark.parametrize("case", ["bn", "ln", "gn", "rms"])
def test_forward_mode_matches_torch(case):
    import nbgrad.autograd.forward_ad as fwAD
    import torch.autograd.forward_ad as torch_fwAD
    rng = np.random.default_rng(10)
    x, v, w = rng.standard_normal((4, 3, 2)), rng.standard_normal((4, 3, 2)), rng.standard_normal(3)
    fn = {"bn": lambda L, t: L.nn.functional.batch_norm(t, None, None, L.tensor(w), None, True),
          "ln": lambda L, t: L.nn.functional.layer_norm(t, (2,)),
          "gn": lambda L, t: L.nn.functional.group_norm(t, 3),
          "rms": lambda L, t: L.nn.functional.rms_norm(t, (2,))}[case]
    tangents = []
    for lib, ad in ((nbgrad, fwAD), (torch, torch_fwAD)):
        with ad.dual_level():
            out = fn(lib, ad.make_dual(lib.tensor(x), lib.tensor(v)))
            tangents.append(ad.unpack_dual(out).tangent)
    assert_close(*tangents)


@pytest.mark.parametrize("make,shape", [
    (lambda L: L.nn.LayerNorm(1024), (512, 1024)),  # the column sums kept per block of rows
    (lambda L: L.nn.GroupNorm(4, 8), (16, 8, 64, 64)),
], ids=["layer_norm", "group_norm"])
def test_norm_on_the_parallel_kernels_matches_torch(make, shape):
    """Inputs above the CPU kernels' parallel threshold (2**19 elements)."""
    tm, nm = make(torch), make(nbgrad)
    _randomize(tm)
    copy_weights(nm, tm)
    rng = np.random.default_rng(2)
    x = rng.standard_normal(shape).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    tx, nx = torch.tensor(x, requires_grad=True), nbgrad.tensor(x, requires_grad=True)
    ty, ny = tm(tx), nm(nx)
    assert_close(ny, ty.detach(), "float32")
    ty.backward(torch.tensor(g))
    ny.backward(nbgrad.tensor(g))
    assert_close(nx.grad, tx.grad, "float32")
    for name, p in nm.named_parameters():
        assert_close(p.grad, dict(tm.named_parameters())[name].grad, "float32")
