"""Conv2d against torch.nn.Conv2d, plus finite-difference gradchecks."""
import numpy as np
import pytest
import torch

import nbgrad
import nbgrad.nn as nn
import nbgrad.nn.functional as F
from nbgrad.autograd import gradcheck, gradgradcheck
from helpers import assert_same_error, cuda_only, on_device

from ._util import (DTYPE_IDS, DTYPES, Const, assert_close, assert_grads_match,
                    assert_second_derivatives_match, assert_values_close, copy_weights, run_both,
                    run_on_device)

CONFIGS = [
    # (in, out, kernel, stride, padding, dilation, bias, input shape)
    (3, 4, 3, 1, 0, 1, True, (2, 3, 7, 6)),
    (16, 33, 3, 2, 1, 1, True, (2, 16, 9, 8)),     # the nn.Conv2d(16, 33, 3, stride=2, padding=1)
    (2, 3, (3, 2), (2, 1), (1, 0), 1, False, (1, 2, 6, 5)),
    (2, 2, 3, 1, 2, 2, True, (2, 2, 7, 7)),         # dilation
    (1, 2, 1, 1, 0, 1, True, (3, 1, 4, 4)),         # 1x1
    (2, 3, 3, 1, "same", 1, True, (1, 2, 5, 6)),
    (2, 3, 4, 1, "same", 1, True, (1, 2, 5, 6)),    # even kernel: asymmetric 'same'
    (2, 3, 3, 1, "valid", 1, True, (2, 5, 6)),      # unbatched input
    (2, 3, 3, 1, 1, 1, True, (0, 2, 5, 5)),         # an empty batch
]


@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel")  # torch's own note
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("config", CONFIGS, ids=range(len(CONFIGS)))
def test_conv2d_matches_torch(dtype, config):
    c_in, c_out, k, s, p, d, bias, shape = config
    name = DTYPE_IDS[DTYPES.index(dtype)]
    if len(shape) == 3:
        shape = (c_in,) + shape[1:]
    torch.manual_seed(0)
    tc = torch.nn.Conv2d(c_in, c_out, k, stride=s, padding=p, dilation=d, bias=bias).to(dtype[1])
    nc = nn.Conv2d(c_in, c_out, k, stride=s, padding=p, dilation=d, bias=bias, dtype=dtype[0])
    copy_weights(nc, tc)
    x = np.random.default_rng(3).standard_normal(shape)
    out, tout, (nx,), (tx,) = run_both(nc, tc, [x], dtype)
    assert_close(out, tout, name)
    assert_close(nx.grad, tx.grad, name)
    assert_grads_match(nc, tc, name)
    assert repr(nc) == repr(tc)
    assert out.is_contiguous()


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_functional_conv2d_matches_torch(dtype):
    name = DTYPE_IDS[DTYPES.index(dtype)]
    rng = np.random.default_rng(4)
    x, w = rng.standard_normal((2, 16, 9, 9)), rng.standard_normal((8, 16, 3, 3))
    out, tout, nin, tin = run_both(lambda a, b: F.conv2d(a, b, stride=2, padding=1),
                                   lambda a, b: torch.nn.functional.conv2d(a, b, stride=2, padding=1),
                                   [x, w], dtype)
    assert_close(out, tout, name)
    for a, e in zip(nin, tin):
        assert_close(a.grad, e.grad, name)


@pytest.mark.parametrize("stride,padding,dilation", [(1, 0, 1), (2, 1, 1), (1, 1, 2)])
def test_conv2d_gradcheck(stride, padding, dilation):
    rng = np.random.default_rng(5)
    x = nbgrad.tensor(rng.standard_normal((2, 2, 5, 4)), requires_grad=True)
    w = nbgrad.tensor(rng.standard_normal((3, 2, 2, 3)), requires_grad=True)
    b = nbgrad.tensor(rng.standard_normal(3), requires_grad=True)
    assert gradcheck(lambda x, w, b: F.conv2d(x, w, b, stride, padding, dilation), (x, w, b))


def test_conv2d_gradient_only_where_required():
    conv = nn.Conv2d(2, 3, 3)
    conv.weight.requires_grad_(False)
    x = nbgrad.randn(1, 2, 4, 4, requires_grad=True)
    conv(x).sum().backward()
    assert conv.weight.grad is None and conv.bias.grad is not None and x.grad is not None
    with nbgrad.no_grad():
        assert conv(x).grad_fn is None


def test_conv2d_saved_input_modified_in_place_is_caught():
    conv = nn.Conv2d(1, 1, 2)
    x = nbgrad.randn(1, 1, 3, 3, requires_grad=True)
    h = x * 2
    out = conv(h)
    h.mul_(3)
    with pytest.raises(RuntimeError, match="modified by an inplace operation.*mul_"):
        out.sum().backward()


def test_functional_conv2d_channel_error_matches_torch():
    with pytest.raises(RuntimeError) as expected:
        torch.nn.functional.conv2d(torch.zeros(1, 8, 5, 5), torch.zeros(33, 16, 3, 3))
    with pytest.raises(RuntimeError) as actual:
        F.conv2d(nbgrad.zeros(1, 8, 5, 5), nbgrad.zeros(33, 16, 3, 3))
    assert str(actual.value) == str(expected.value)


def test_conv2d_refuses_strided_same_padding():
    with pytest.raises(ValueError, match="strided"):
        nn.Conv2d(4, 4, 3, stride=2, padding="same")


# ------------------------------ Conv1d, grouped, padding modes, transposed (issue 16)
# name: (make(lib) -> layer, input shape)
LAYERS = {
    "conv1d": (lambda L: L.nn.Conv1d(4, 6, 3, stride=2, padding=1), (2, 4, 9)),
    "conv1d-groups-dilation-same": (
        lambda L: L.nn.Conv1d(4, 8, 3, dilation=2, groups=2, padding="same"), (2, 4, 9)),
    "conv1d-unbatched-circular": (
        lambda L: L.nn.Conv1d(3, 2, 3, padding=2, padding_mode="circular"), (3, 7)),
    "conv2d-depthwise": (lambda L: L.nn.Conv2d(4, 8, 3, groups=4, padding=1, bias=False),
                         (2, 4, 6, 5)),
    "conv2d-groups-stride": (lambda L: L.nn.Conv2d(6, 4, (3, 2), stride=(2, 1), groups=2),
                             (2, 6, 7, 5)),
    "conv2d-reflect": (lambda L: L.nn.Conv2d(2, 3, 3, padding=1, padding_mode="reflect"),
                       (2, 2, 5, 6)),
    "conv2d-replicate-same": (
        lambda L: L.nn.Conv2d(2, 3, 4, padding="same", padding_mode="replicate"), (1, 2, 5, 6)),
    "convT1d": (lambda L: L.nn.ConvTranspose1d(4, 6, 3, stride=2, padding=1, output_padding=1,
                                               groups=2), (2, 4, 5)),
    "convT2d": (lambda L: L.nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1, output_padding=1),
                (2, 3, 4, 3)),
    "convT2d-dilation-groups": (
        lambda L: L.nn.ConvTranspose2d(4, 4, (2, 3), stride=(1, 2), dilation=2, groups=2,
                                       bias=False), (1, 4, 3, 4)),
    "convT2d-output-padding-past-padding": (
        lambda L: L.nn.ConvTranspose2d(2, 2, 3, stride=3, output_padding=2), (1, 2, 3, 2)),
    "convT2d-unbatched": (lambda L: L.nn.ConvTranspose2d(2, 3, 2, stride=2), (2, 3, 3)),
    # 3-D: composed of 2-D convolutions by depth (their nodes, not ConvolutionBackward)
    "conv3d": (lambda L: L.nn.Conv3d(2, 3, (3, 2, 3), stride=(2, 1, 1), padding=(1, 0, 2)),
               (2, 2, 6, 5, 4)),
    "conv3d-groups-dilation-same": (
        lambda L: L.nn.Conv3d(4, 6, 3, dilation=(2, 1, 1), groups=2, padding="same"),
        (1, 4, 6, 4, 5)),
    "conv3d-unbatched-replicate": (
        lambda L: L.nn.Conv3d(2, 2, 2, padding=1, padding_mode="replicate"), (2, 3, 4, 3)),
    "convT3d": (lambda L: L.nn.ConvTranspose3d(4, 2, (2, 3, 2), stride=(2, 1, 3), padding=1,
                                               output_padding=(1, 0, 2), groups=2),
                (2, 4, 3, 4, 3)),
    "convT3d-dilation-unbatched": (
        lambda L: L.nn.ConvTranspose3d(2, 3, 2, dilation=(2, 1, 2), bias=False), (2, 2, 3, 2)),
}


@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel")  # torch's own note
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("name", list(LAYERS))
def test_conv_layer_matches_torch(name, dtype):
    make, shape = LAYERS[name]
    dname = DTYPE_IDS[DTYPES.index(dtype)]
    torch.manual_seed(0)
    tm = make(torch).to(dtype[1])
    nm = make(nbgrad).to(dtype=dtype[0])
    assert repr(nm) == repr(tm)
    assert [(k, tuple(v.shape)) for k, v in nm.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in tm.state_dict().items()]
    copy_weights(nm, tm)
    x = np.random.default_rng(3).standard_normal(shape)
    out, tout, (nx,), (tx,) = run_both(nm, tm, [x], dtype)
    assert_close(out, tout, dname)
    assert_close(nx.grad, tx.grad, dname)
    assert_grads_match(nm, tm, dname)
    if len(shape) == len(tm.kernel_size) + 2 and tm.padding_mode == "zeros" and \
            len(tm.kernel_size) < 3:
        assert out.grad_fn.name() == "ConvolutionBackward"


def test_conv_layers_initialise_as_torch():
    """Kaiming-uniform(a=sqrt(5)) weights and a bias in +-1/sqrt(fan_in): the
    same bounds (the transposed weight's fan_in is its dim 1 times the kernel)."""
    for make, bound in [(lambda L: L.nn.Conv1d(4, 6, 3, groups=2), 1 / np.sqrt(6)),
                        (lambda L: L.nn.ConvTranspose2d(4, 6, 3, groups=2), 1 / np.sqrt(27))]:
        layer = make(nbgrad)
        w, b = layer.weight.detach().numpy(), layer.bias.detach().numpy()
        assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
        assert np.abs(b).max() <= bound


def test_conv_transpose_output_size_matches_torch():
    torch.manual_seed(0)
    tm = torch.nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1)
    nm = nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1)
    copy_weights(nm, tm)
    x = np.random.default_rng(0).standard_normal((1, 2, 4, 4)).astype(np.float32)
    out = nm(nbgrad.tensor(x), output_size=[8, 8])
    assert_close(out, tm(torch.tensor(x), output_size=[8, 8]))
    assert_same_error(lambda lib: (nm if lib is nbgrad else tm)(
        lib.zeros(1, 2, 4, 4), output_size=[9, 9]))


@pytest.mark.parametrize("fn,shapes", [
    (lambda x, w, b: F.conv1d(x, w, b, 2, 1, 1, 2), [(2, 4, 7), (6, 2, 3), (6,)]),
    (lambda x, w, b: F.conv2d(x, w, b, 1, "same", 2, 3), [(1, 3, 5, 4), (6, 1, 2, 3), (6,)]),
    (lambda x, w, b: F.conv_transpose1d(x, w, b, 2, 1, 1, 2), [(2, 4, 3), (4, 2, 3), (4,)]),
    (lambda x, w, b: F.conv_transpose2d(x, w, b, (2, 1), 1, (1, 0), 1, (1, 2)),
     [(1, 2, 3, 3), (2, 3, 2, 2), (3,)]),
    (lambda x, w, b: F.conv3d(x, w, b, (1, 2, 1), 1, (2, 1, 1), 2),
     [(1, 2, 5, 3, 3), (2, 1, 2, 2, 2), (2,)]),
    (lambda x, w, b: F.conv_transpose3d(x, w, b, 2, (1, 0, 0), (1, 0, 1)),
     [(1, 2, 2, 2, 2), (2, 2, 2, 1, 2), (2,)]),
], ids=["conv1d-groups", "conv2d-groups-same", "convT1d-groups", "convT2d", "conv3d-groups",
        "convT3d"])
def test_conv_variants_gradcheck_and_gradgradcheck(fn, shapes):
    rng = np.random.default_rng(5)
    args = tuple(nbgrad.tensor(rng.standard_normal(s), requires_grad=True) for s in shapes)
    assert gradcheck(fn, args)
    assert gradgradcheck(fn, args)


CONV_ERRORS = [
    lambda L: L.nn.functional.conv2d(L.zeros(2, 4, 8, 8), L.zeros(8, 3, 3, 3)),
    lambda L: L.nn.functional.conv1d(L.zeros(2, 3, 8), L.zeros(6, 2, 3), groups=2),
    lambda L: L.nn.functional.conv1d(L.zeros(2, 3, 8), L.zeros(5, 3, 3), groups=2),
    lambda L: L.nn.functional.conv1d(L.zeros(2, 3, 2), L.zeros(5, 3, 3)),
    lambda L: L.nn.functional.conv1d(L.zeros(2, 3, 8), L.zeros(5, 3, 3), L.zeros(4)),
    lambda L: L.nn.functional.conv1d(L.zeros(2, 3, 8), L.zeros(6, 3, 3), stride=2,
                                     padding="same"),
    lambda L: L.nn.functional.conv_transpose2d(L.zeros(1, 3, 4, 4), L.zeros(4, 3, 3, 3)),
    lambda L: L.nn.functional.conv_transpose2d(L.zeros(2, 3, 8, 8), L.zeros(3, 3, 3, 3),
                                               stride=2, output_padding=2),
    lambda L: L.nn.Conv1d(2, 4, 3)(L.zeros(2, 2, 2, 2)),
    lambda L: L.nn.Conv1d(4, 6, 3, groups=4),
    lambda L: L.nn.Conv1d(4, 6, 3, groups=3),
    lambda L: L.nn.Conv2d(2, 4, 3, padding_mode="foo"),
    lambda L: L.nn.ConvTranspose2d(2, 4, 3, padding_mode="reflect"),
    lambda L: L.nn.functional.conv3d(L.zeros(2, 4, 5, 5, 5), L.zeros(8, 3, 3, 3, 3)),
    lambda L: L.nn.functional.conv3d(L.zeros(1, 2, 3, 3, 3), L.zeros(4, 2, 1, 1, 1), L.zeros(3)),
    lambda L: L.nn.functional.conv3d(L.zeros(1, 2, 2, 5, 5), L.zeros(3, 2, 3, 3, 3)),
    lambda L: L.nn.functional.conv_transpose3d(L.zeros(1, 2, 2, 2, 2), L.zeros(2, 3, 3, 3, 3),
                                               stride=2, output_padding=2),
    lambda L: L.nn.ConvTranspose3d(2, 4, 3, padding_mode="circular"),
]


@pytest.mark.parametrize("fn", CONV_ERRORS, ids=range(len(CONV_ERRORS)))
def test_conv_errors_match_torch(fn):
    assert_same_error(fn)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("name", ["conv1d-groups-dilation-same", "conv2d-reflect", "convT2d",
                                  "conv3d", "convT3d"])
def test_conv_variants_on_the_device_match_torch(name, dtype, device):
    make, shape = LAYERS[name]
    x = np.random.default_rng(2).standard_normal(shape)
    run_on_device(lambda m, x: m(x), make, [x], dtype, device)


# ------------------------------------------------------------ on every device
IMAGES = np.random.default_rng(0).standard_normal((2, 2, 5, 5))


@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel")  # torch's own note
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("kwargs", [dict(padding=1), dict(stride=2, padding=1),
                                    dict(dilation=2, bias=False), dict(padding="same")],
                         ids=["pad1", "stride2", "dilation2", "same"])
def test_conv2d_on_the_device_matches_torch(dtype, kwargs, device):
    run_on_device(lambda m, x: m(x), lambda lib: lib.nn.Conv2d(2, 3, 3, **kwargs), [IMAGES],
                  dtype, device)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_functional_conv2d_of_an_unbatched_input_on_the_device_matches_torch(dtype, device):
    rng = np.random.default_rng(1)

    def fn(_, x, w, b):
        lib = nbgrad if isinstance(x, nbgrad.Tensor) else torch
        return lib.nn.functional.conv2d(x, w, b, stride=(1, 2), padding=1)
    run_on_device(fn, None, [IMAGES[0], rng.standard_normal((3, 2, 2, 3)), rng.standard_normal(3)],
                  dtype, device)


@cuda_only
def test_layers_name_both_devices_when_input_and_weights_differ(device):
    message = ("Expected all tensors to be on the same device, but found at least two devices, "
               "cuda:0 and cpu!")
    with pytest.raises(RuntimeError, match=message):
        nn.Conv2d(2, 3, 3)(nbgrad.tensor(IMAGES, dtype=nbgrad.float32, device=device))
    with pytest.raises(RuntimeError, match=message):
        nn.Linear(5, 2)(nbgrad.ones(2, 5, device=device))


# -- higher-order gradients ------------------------------------------------------
# (stride, padding, dilation, bias, input shape); weight (3, C, 3, 2)
DOUBLE_CONFIGS = [
    (1, 0, 1, True, (2, 2, 5, 4)),
    (2, 1, 1, True, (2, 2, 5, 4)),
    ((1, 2), (2, 1), 2, False, (1, 2, 6, 5)),
    (1, "same", 1, True, (1, 2, 4, 4)),          # even kernel width: asymmetric padding
    (1, 1, 1, True, (2, 4, 3)),                  # unbatched
]


@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel")  # torch's own note
@pytest.mark.parametrize("config", DOUBLE_CONFIGS, ids=range(len(DOUBLE_CONFIGS)))
def test_conv2d_second_derivatives_match_torch(config, device):
    """First derivatives with a graph (input, weight, bias), then the
    gradients of a weighted sum of them with respect to all of these and the
    incoming gradient."""
    stride, padding, dilation, bias, shape = config
    rng = np.random.default_rng(6)
    arrays = [rng.standard_normal(shape), rng.standard_normal((3, shape[-3], 3, 2))]
    if bias:
        arrays.append(rng.standard_normal(3))

    def fn(lib, *args):
        return lib.nn.functional.conv2d(*args, stride=stride, padding=padding, dilation=dilation)
    assert_second_derivatives_match(fn, arrays, device)


def test_conv2d_with_a_frozen_weight_differentiates_twice_as_torch(device):
    rng = np.random.default_rng(7)
    weight = rng.standard_normal((3, 2, 2, 2))
    assert_second_derivatives_match(
        lambda lib, x, w: lib.nn.functional.conv2d(x, w, padding=1),
        [rng.standard_normal((1, 2, 4, 3)), Const(weight)], device)


@pytest.mark.parametrize("stride,padding,dilation", [(1, 0, 1), (2, 1, 1), (1, 1, 2)])
def test_conv2d_gradgradcheck(stride, padding, dilation):
    rng = np.random.default_rng(5)
    x = nbgrad.tensor(rng.standard_normal((1, 2, 5, 4)), requires_grad=True)
    w = nbgrad.tensor(rng.standard_normal((2, 2, 2, 3)), requires_grad=True)
    b = nbgrad.tensor(rng.standard_normal(2), requires_grad=True)
    assert gradgradcheck(lambda x, w, b: F.conv2d(x, w, b, stride, padding, dilation), (x, w, b))


def test_conv2d_third_derivatives_match_torch(device):
    """Through tanh, three times: the im2col/col2im pair is differentiated
    again, as taped ops and (the last step) as raw ones."""
    rng = np.random.default_rng(8)
    x0, w0 = rng.standard_normal((2, 2, 4, 5)), rng.standard_normal((3, 2, 3, 2))
    results = []
    for lib in (nbgrad, torch):
        on = on_device(lib, device)
        x = lib.tensor(x0, dtype=lib.float64, requires_grad=True, **on)
        w = lib.tensor(w0, dtype=lib.float64, requires_grad=True, **on)
        y = lib.nn.functional.conv2d(x, w, stride=(2, 1), padding=1).tanh().sum()
        gx, gw = lib.autograd.grad(y, (x, w), create_graph=True)
        (g2,) = lib.autograd.grad((gx * gx).sum() + (gw * gw).sum(), x, create_graph=True)
        results.append((gx, gw, g2, *lib.autograd.grad((g2 * g2).sum(), (x, w))))
    for mine, want in zip(*results):
        assert_values_close(mine, want)


def test_a_conv2d_gradient_records_the_window_ops():
    x = nbgrad.randn(1, 1, 3, 3, dtype=nbgrad.float64, requires_grad=True)
    w = nbgrad.randn(1, 1, 2, 2, dtype=nbgrad.float64, requires_grad=True)
    gx, gw = nbgrad.autograd.grad(F.conv2d(x, w).sum(), (x, w), create_graph=True)
    assert gx.grad_fn.name() == "Col2ImBackward"
    assert gx.requires_grad and gw.requires_grad


def _conv_critic(lib):
    torch.manual_seed(1)
    nn_ = lib.nn
    return nn_.Sequential(nn_.Conv2d(2, 3, 3, padding=1), nn_.Tanh(), nn_.MaxPool2d(2),
                          nn_.Conv2d(3, 4, 3, padding=1), nn_.GELU(), nn_.AvgPool2d(2),
                          nn_.Flatten(), nn_.Linear(4 * 2 * 2, 1))


def test_wgan_gp_gradient_penalty_through_a_conv_critic_matches_torch(device):
    """A WGAN-GP critic step with convolution, both poolings and a linear
    head: ``g = grad(critic(x).sum(), x, create_graph=True)`` at interpolates,
    penalty ``(sqrt(sum(g*g)) - 1)**2``, backward into the critic's weights."""
    rng = np.random.default_rng(9)
    real0, fake0 = rng.standard_normal((3, 2, 8, 8)), rng.standard_normal((3, 2, 8, 8))
    alpha0 = rng.random((3, 1, 1, 1))
    critics = {lib: _conv_critic(lib) for lib in (nbgrad, torch)}
    copy_weights(critics[nbgrad], critics[torch])
    critics[nbgrad].to(device=device, dtype=nbgrad.float64)
    critics[torch].to(dtype=torch.float64)
    results = {}
    for lib, critic in critics.items():
        on = on_device(lib, device)
        real, fake, alpha = (lib.tensor(a, dtype=lib.float64, **on) for a in (real0, fake0, alpha0))
        x = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
        (g,) = lib.autograd.grad(critic(x).sum(), x, create_graph=True)
        penalty = (((g * g).sum((1, 2, 3)).sqrt() - 1) ** 2).mean()
        loss = critic(fake).mean() - critic(real).mean() + 10 * penalty
        loss.backward()
        results[lib] = [penalty, x.grad] + [p.grad for p in critic.parameters()]
    for mine, want in zip(results[nbgrad], results[torch]):
        assert mine.device.type == device
        assert_values_close(mine, want)


# The CPU backend's one-pass im2col/col2im (backends/cpu/convolution.py) against the
# generic strided forms (nbgrad.ops.nn_arrays), bit for bit: padding on every side,
# a negative (cropping) pad, stride, dilation, one channel.
_GEOMETRIES = [  # x shape, kernel, stride, dilation, pads (top, bottom, left, right)
    ((2, 3, 6, 5), (3, 3), (1, 1), (1, 1), (1, 1, 1, 1)),
    ((3, 5, 9, 7), (2, 3), (2, 1), (1, 2), (0, 1, 2, 0)),
    ((2, 4, 7, 7), (3, 3), (2, 2), (1, 1), (1, 0, 1, 0)),
    ((2, 3, 6, 6), (3, 3), (1, 1), (1, 1), (1, -1, 1, -1)),
    ((4, 1, 5, 5), (3, 2), (1, 2), (2, 1), (2, 2, 0, 1)),
    ((8, 16, 24, 24), (3, 3), (1, 1), (1, 1), (1, 1, 1, 1)),  # the parallel kernels
]


@pytest.mark.parametrize("geometry", _GEOMETRIES, ids=range(len(_GEOMETRIES)))
def test_one_pass_im2col_and_col2im_equal_the_generic_forms(geometry):
    from nbgrad.backends import cpu
    from nbgrad.ops import nn_arrays

    class Generic:  # the CPU backend without its one-pass forms
        def __getattr__(self, name):
            return getattr(cpu, name)

        def conv_columns(self, *args):
            return None

        def conv_add_columns(self, *args):
            return None

    shape, kernel, stride, dilation, pads = geometry
    out_hw = tuple((size + pads[2 * d] + pads[2 * d + 1] - dilation[d] * (kernel[d] - 1) - 1)
                   // stride[d] + 1 for d, size in enumerate(shape[2:]))
    windows = nn_arrays.Windows(shape, kernel, stride, dilation, pads, out_hw)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    cols = nn_arrays.im2col(cpu, x, windows)
    assert cpu.conv_columns(x, kernel, stride, dilation, pads, out_hw) is not None
    np.testing.assert_array_equal(cols, nn_arrays.im2col(Generic(), x, windows))
    dcols = rng.standard_normal(cols.shape).astype(np.float32)
    dx = nn_arrays.col2im(cpu, dcols, windows)
    np.testing.assert_array_equal(dx, nn_arrays.col2im(Generic(), dcols, windows))


@pytest.mark.parametrize("shape", [(3, 5, 4, 6), (8, 128, 24, 24)], ids=["serial", "parallel"])
@pytest.mark.parametrize("bias", [True, False])
def test_one_pass_conv_output_adds_the_bias_channels_first(shape, bias):
    from nbgrad.backends import cpu
    n, o, h, w = shape
    rng = np.random.default_rng(0)
    rows = rng.standard_normal((n * h * w, o)).astype(np.float32)
    b = rng.standard_normal(o).astype(np.float32) if bias else None
    out = np.empty(shape, np.float32)
    assert cpu.conv_output(rows, b, out) is out
    want = rows.reshape(n, h, w, o).transpose(0, 3, 1, 2) + (0 if b is None else b[:, None, None])
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("weight_grad", [True, False], ids=["trained", "frozen"])
@pytest.mark.parametrize("shape", [(64, 16, 8, 8), (3, 16, 40, 40)], ids=["demo", "large"])
def test_conv2d_in_blocks_of_images_matches_torch(shape, weight_grad):
    """Columns larger than the CPU's block: the demo CNN's second convolution
    (blocks of several images) and images larger than a block (one per block);
    with a frozen weight or no gradient at all, one block's columns are made
    in turn into one buffer."""
    from nbgrad.backends import cpu
    from nbgrad.nn._conv import _image_blocks
    image_bytes = shape[2] * shape[3] * 9 * 16 * 4
    assert len(_image_blocks(cpu, shape[0], image_bytes)) > 1
    torch.manual_seed(0)
    tc = torch.nn.Conv2d(16, 32, 3, padding=1)
    nc = nn.Conv2d(16, 32, 3, padding=1)
    copy_weights(nc, tc)
    tc.weight.requires_grad_(weight_grad)
    nc.weight.requires_grad_(weight_grad)
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape).astype(np.float32)
    g = rng.standard_normal((shape[0], 32, *shape[2:])).astype(np.float32)
    with nbgrad.no_grad():
        assert_close(nc(nbgrad.tensor(x)), tc(torch.tensor(x)).detach(), "float32")
    tx, nx = torch.tensor(x, requires_grad=True), nbgrad.tensor(x, requires_grad=True)
    ty, ny = tc(tx), nc(nx)
    assert_close(ny, ty.detach(), "float32")
    ty.backward(torch.tensor(g))
    ny.backward(nbgrad.tensor(g))
    assert_close(nx.grad, tx.grad, "float32")
    # The weight and bias gradients sum 4096 products of unit size: a few float32 ulp
    # of that sum apart from PyTorch's, whatever the order.
    trained = [name for name, p in nc.named_parameters() if p.requires_grad]
    assert trained == (["weight", "bias"] if weight_grad else ["bias"])
    for name in trained:
        np.testing.assert_allclose(getattr(nc, name).grad.numpy(), getattr(tc, name).grad,
                                   rtol=1e-4, atol=1e-4)
