"""F.interpolate / Upsample, pixel_shuffle / PixelShuffle (and unshuffle),
F.unfold / F.fold (Unfold, Fold) against torch: values, gradients, node names,
reprs, errors, gradcheck and second derivatives, and small device cases."""
import importlib

import numpy as np
import pytest
import torch

import nbgrad
import nbgrad.nn.functional as F
from nbgrad.autograd import gradcheck, gradgradcheck
from helpers import assert_same_error, node_name, on_device

from ._util import DTYPE_IDS, DTYPES, assert_close, run_both, run_on_device

TESTED_OPS = {"interpolate", "upsample", "pixel_shuffle", "pixel_unshuffle", "unfold", "fold"}

# (function name, input shape, keyword arguments)
CASES = [
    ("interpolate", (1, 2, 3, 4), dict(scale_factor=2)),
    ("interpolate", (1, 2, 3, 4), dict(size=(5, 7))),
    ("interpolate", (1, 2, 3, 4), dict(scale_factor=1.7)),
    ("interpolate", (1, 2, 6, 4), dict(size=(4, 3))),
    ("interpolate", (2, 2, 5), dict(size=3)),
    ("interpolate", (1, 2, 3, 4), dict(size=(5, 7), mode="bilinear")),
    ("interpolate", (1, 2, 3, 4), dict(size=(5, 7), mode="bilinear", align_corners=True)),
    ("interpolate", (1, 2, 3, 4), dict(scale_factor=2.5, mode="bilinear")),
    ("interpolate", (1, 2, 6, 4), dict(size=(2, 3), mode="bilinear")),
    ("interpolate", (2, 3, 5), dict(scale_factor=2, mode="linear", align_corners=True)),
    ("pixel_shuffle", (2, 8, 3, 2), dict(upscale_factor=2)),
    ("pixel_unshuffle", (2, 2, 4, 6), dict(downscale_factor=2)),
    ("unfold", (2, 3, 5, 6), dict(kernel_size=(2, 3), padding=1, stride=(2, 1))),
    ("unfold", (3, 5, 6), dict(kernel_size=2, dilation=2)),
    ("fold", (2, 12, 21), dict(output_size=(5, 6), kernel_size=2, stride=(2, 1), padding=1)),
    ("fold", (8, 6), dict(output_size=(3, 4), kernel_size=2)),
]
IDS = [f"{c[0]}{k}" for k, c in enumerate(CASES)]


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_resampling_matches_torch(case, dtype):
    name, shape, kwargs = case
    dname = DTYPE_IDS[DTYPES.index(dtype)]
    x = np.random.default_rng(0).standard_normal(shape)
    out, tout, (nx,), (tx,) = run_both(lambda a: getattr(F, name)(a, **kwargs),
                                       lambda a: getattr(torch.nn.functional, name)(a, **kwargs),
                                       [x], dtype)
    assert_close(out, tout, dname)
    assert_close(nx.grad, tx.grad, dname)
    if kwargs.get("mode") != "linear":  # (nbgrad's linear mode ends in a squeeze)
        assert node_name(out.grad_fn) == node_name(tout.grad_fn)


@pytest.mark.parametrize("case", CASES[::2], ids=IDS[::2])
def test_resampling_gradcheck(case):
    name, shape, kwargs = case
    x = nbgrad.tensor(np.random.default_rng(1).standard_normal(shape), requires_grad=True)
    fn = lambda a: getattr(F, name)(a, **kwargs)  # noqa: E731
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


LAYERS = [
    (lambda L: L.nn.Upsample(scale_factor=2, mode="bilinear"), (1, 2, 3, 3)),
    (lambda L: L.nn.Upsample(size=(4, 5)), (1, 2, 3, 3)),
    (lambda L: L.nn.UpsamplingNearest2d(scale_factor=2), (1, 1, 2, 3)),
    (lambda L: L.nn.UpsamplingBilinear2d(size=(3, 4)), (1, 1, 2, 3)),
    (lambda L: L.nn.PixelShuffle(2), (1, 8, 2, 2)),
    (lambda L: L.nn.PixelUnshuffle(2), (1, 2, 4, 4)),
    (lambda L: L.nn.Unfold(2, padding=1), (1, 2, 3, 3)),
    (lambda L: L.nn.Fold((4, 5), 2), (1, 8, 12)),
]


@pytest.mark.parametrize("make,shape", LAYERS, ids=range(len(LAYERS)))
def test_resampling_layers_match_torch(make, shape):
    nm, tm = make(nbgrad), make(torch)
    assert repr(nm) == repr(tm)
    x = np.random.default_rng(2).standard_normal(shape)
    out, tout, (nx,), (tx,) = run_both(nm, tm, [x], DTYPES[0])
    assert_close(out, tout)
    assert_close(nx.grad, tx.grad)


ERRORS = [
    lambda L: L.nn.functional.interpolate(L.zeros(1, 2, 3, 4)),
    lambda L: L.nn.functional.interpolate(L.zeros(1, 2, 3, 4), size=3, scale_factor=2),
    lambda L: L.nn.functional.interpolate(L.zeros(1, 2, 3, 4), size=(5, 7), align_corners=True),
    lambda L: L.nn.functional.interpolate(L.zeros(1, 2, 3, 4), size=(5, 7, 3)),
    lambda L: L.nn.functional.interpolate(L.zeros(1, 2, 3, 4), scale_factor=(2,)),
    lambda L: L.nn.functional.interpolate(L.zeros(2, 3, 4), scale_factor=2, mode="bilinear"),
    lambda L: L.nn.functional.interpolate(L.zeros(1, 2, 3, 4), scale_factor=2, mode="foo"),
    lambda L: L.nn.functional.pixel_shuffle(L.zeros(1, 2, 3, 4), 2),
    lambda L: L.nn.functional.fold(L.zeros(2, 12, 12), (5, 6), 2, stride=(2, 1), padding=1),
]


@pytest.mark.parametrize("fn", ERRORS, ids=range(len(ERRORS)))
def test_resampling_errors_match_torch(fn):
    assert_same_error(fn)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("case", [CASES[0], CASES[5], CASES[12]], ids=["nearest", "bilinear",
                                                                      "unfold"])
def test_resampling_on_the_device_matches_torch(case, dtype, device):
    name, shape, kwargs = case
    x = np.random.default_rng(3).standard_normal(shape)
    run_on_device(lambda _, a: getattr((nbgrad if isinstance(a, nbgrad.Tensor) else torch
                                        ).nn.functional, name)(a, **kwargs), None, [x], dtype,
                  device)


FORWARD_MODE = {
    "pad-reflect": ((1, 2, 3, 4), lambda L, x: L.nn.functional.pad(x, (1, 2, 1, 0), "reflect")),
    "adaptive-avg": ((1, 2, 5, 4), lambda L, x: L.nn.functional.adaptive_avg_pool2d(x, (2, 3))),
    "adaptive-max": ((1, 2, 5, 4), lambda L, x: L.nn.functional.adaptive_max_pool2d(x, (2, 3))),
    "bilinear": ((1, 2, 3, 4), lambda L, x: L.nn.functional.interpolate(x, size=(5, 6),
                                                                        mode="bilinear")),
    "unfold": ((1, 2, 3, 4), lambda L, x: L.nn.functional.unfold(x, 2)),
    "pixel-shuffle": ((1, 4, 3, 4), lambda L, x: L.nn.functional.pixel_shuffle(x, 2)),
    "conv-transpose1d": ((1, 2, 6), lambda L, x: L.nn.functional.conv_transpose1d(
        x, L.ones(2, 3, 3, dtype=L.float64), stride=2)),
}


@pytest.mark.parametrize("name", list(FORWARD_MODE))
def test_forward_mode_matches_torch(name):
    shape, fn = FORWARD_MODE[name]
    rng = np.random.default_rng(9)
    x, t = rng.standard_normal(shape), rng.standard_normal(shape)
    tangents = []
    for lib in (nbgrad, torch):
        fw = importlib.import_module(f"{lib.__name__}.autograd.forward_ad")
        with fw.dual_level():
            out = fn(lib, fw.make_dual(lib.tensor(x), lib.tensor(t)))
            tangents.append(fw.unpack_dual(out).tangent)
    assert_close(*tangents)


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("mode, shape, size", [("linear", (2, 3, 5), 9),
                                               ("bilinear", (2, 3, 4, 5), (7, 9))])
def test_linear_interpolation_keeps_a_nan_and_an_inf_with_their_neighbours(mode, shape, size,
                                                                          align_corners,
                                                                          device):
    """The interpolation products' zeros would spread them (0 * inf is NaN): an
    output reads its two neighbours (a zero weight included), as PyTorch's."""
    x = np.arange(np.prod(shape), dtype=np.float64).reshape(shape) / 7
    x.flat[6], x.flat[13] = np.nan, np.inf
    results = []
    for lib in (torch, nbgrad):
        t = lib.tensor(x, requires_grad=True, **on_device(lib, device))
        y = lib.nn.functional.interpolate(t, size=size, mode=mode, align_corners=align_corners)
        g = np.ones(tuple(y.shape))
        g.flat[3] = np.inf
        y.backward(lib.tensor(g, **on_device(lib, device)))
        results.append((y.detach().cpu().numpy(), t.grad.cpu().numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)  # (NaN where PyTorch has NaN)
