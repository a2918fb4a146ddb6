"""Every nbgrad.nn layer on CUDA against the same layer on the CPU (copied
weights), forward and backward, in both float dtypes. Shapes are tiny: the
simulator runs each CUDA thread as a Python thread."""
import numpy as np
import pytest

import nbgrad
import nbgrad.nn as nn
import nbgrad.nn.functional as F

from ._util import DTYPE_IDS, DTYPES, close, on_both

RNG = np.random.default_rng(0)
IMAGES = RNG.standard_normal((2, 2, 5, 5))
pytestmark = pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)


def call(module, *args):
    return module(*args)


def test_linear(dtype):
    nbgrad.manual_seed(1)
    on_both(call, nn.Linear(5, 3), [RNG.standard_normal((2, 3, 5))], dtype)
    on_both(call, nn.Linear(5, 3, bias=False), [RNG.standard_normal((4, 5))], dtype)


@pytest.mark.parametrize("kwargs", [dict(padding=1), dict(stride=2, padding=1),
                                    dict(dilation=2, bias=False), dict(padding="same")],
                         ids=["pad1", "stride2", "dilation2", "same"])
def test_conv2d(dtype, kwargs):
    nbgrad.manual_seed(2)
    on_both(call, nn.Conv2d(2, 3, 3, **kwargs), [IMAGES], dtype)


def test_conv2d_functional_unbatched_and_weights_on_the_device(dtype):
    weight, bias = RNG.standard_normal((3, 2, 2, 3)), RNG.standard_normal(3)
    on_both(lambda _, x, w, b: F.conv2d(x, w, b, stride=(1, 2), padding=1), None,
            [IMAGES[0], weight, bias], dtype)


@pytest.mark.parametrize("kwargs", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                    dict(kernel_size=2, stride=2, ceil_mode=True),
                                    dict(kernel_size=2, stride=1, dilation=2)],
                         ids=["k2", "k3s2p1", "ceil", "dilation"])
def test_max_pool2d(dtype, kwargs):
    on_both(call, nn.MaxPool2d(**kwargs), [IMAGES], dtype)


def test_max_pool2d_nan_and_ties_pick_pytorchs_index(dtype):
    x = np.array([[[[1.0, 1.0, np.nan, 0.0], [2.0, 2.0, 0.0, np.nan]]]])
    (out_cpu, _, _), (out_cuda, _, _) = on_both(
        lambda _, x: F.max_pool2d(x, 2, return_indices=True)[0], None, [x], dtype)
    _, idx_cpu = F.max_pool2d(nbgrad.tensor(x, dtype=dtype), 2, return_indices=True)
    _, idx_cuda = F.max_pool2d(nbgrad.tensor(x, dtype=dtype, device="cuda"), 2, return_indices=True)
    close(idx_cuda, idx_cpu, "indices")
    assert idx_cuda.tolist() == [[[[4, 7]]]]  # PyTorch: the first 2 (a tie keeps it), the last NaN


@pytest.mark.parametrize("kwargs", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                    dict(kernel_size=3, padding=1, count_include_pad=False),
                                    dict(kernel_size=2, ceil_mode=True, divisor_override=3)],
                         ids=["k2", "k3s2p1", "no-pad-count", "ceil-divisor"])
def test_avg_pool2d(dtype, kwargs):
    on_both(call, nn.AvgPool2d(**kwargs), [IMAGES], dtype)


@pytest.mark.parametrize("make", [nn.ReLU, nn.Sigmoid, nn.Tanh, nn.GELU,
                                  lambda: nn.GELU(approximate="tanh"), nn.Flatten,
                                  lambda: nn.Flatten(0, 2)],
                         ids=["relu", "sigmoid", "tanh", "gelu", "gelu-tanh", "flatten",
                              "flatten02"])
def test_activations_and_flatten(dtype, make):
    on_both(call, make(), [RNG.standard_normal((2, 3, 4))], dtype)


def test_dropout_masks_match_the_cpu_with_the_same_seed(dtype):
    (out_cpu, _, _), (out_cuda, _, _) = on_both(call, nn.Dropout(0.4), [np.ones((4, 5))], dtype)
    values = np.unique(out_cuda.detach().cpu().numpy())  # dropped, or kept and scaled
    np.testing.assert_allclose(values, [0.0, 1 / 0.6], rtol=1e-6)
    on_both(call, nn.Dropout(1.0), [np.ones((3,))], dtype)
    (_, _, _), (out, _, _) = on_both(call, nn.Dropout(0.5).eval(), [np.ones((3,))], dtype)
    assert out.tolist() == [1.0, 1.0, 1.0]


def test_sequential_cnn(dtype):
    nbgrad.manual_seed(3)
    model = nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(12, 4), nn.Tanh())
    on_both(call, model, [IMAGES], dtype)


def test_mixed_devices_name_both(dtype):
    conv = nn.Conv2d(2, 3, 3).to(dtype=dtype)
    x = nbgrad.tensor(IMAGES, dtype=dtype, device="cuda")
    message = ("Expected all tensors to be on the same device, but found at least two devices, "
               "cuda:0 and cpu!")
    with pytest.raises(RuntimeError, match=message):
        conv(x)
    with pytest.raises(RuntimeError, match=message):
        nn.Linear(5, 2).to(dtype=dtype)(nbgrad.tensor(RNG.standard_normal((2, 5)), dtype=dtype,
                                                      device="cuda"))
