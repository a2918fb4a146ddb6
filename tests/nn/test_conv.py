"""Conv2d against torch.nn.Conv2d, plus finite-difference gradchecks."""
import numpy as np
import pytest
import torch

import nbgrad
import nbgrad.nn as nn
import nbgrad.nn.functional as F
from nbgrad.autograd import gradcheck
from helpers import cuda_only

from ._util import (DTYPE_IDS, DTYPES, assert_close, assert_grads_match, copy_weights, run_both,
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


def test_conv2d_refuses_what_it_does_not_implement():
    with pytest.raises(NotImplementedError):
        nn.Conv2d(4, 4, 3, groups=2)
    with pytest.raises(ValueError, match="strided"):
        nn.Conv2d(4, 4, 3, stride=2, padding="same")


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
