"""F.pad (constant, reflect, replicate, circular) and the padding layers
against torch: values, gradients, node names, reprs, errors, gradcheck and
second derivatives in float64, and small cases on every device."""
import numpy as np
import pytest
import torch

import nbgrad
import nbgrad.nn.functional as F
from nbgrad.autograd import gradcheck, gradgradcheck
from helpers import assert_same_error, node_name

from ._util import DTYPE_IDS, DTYPES, assert_close, run_both, run_on_device

TESTED_OPS = {"pad"}

# (input shape, pad, mode, value)
CASES = [
    ((1, 2, 3, 4), (1, 2, 2, 1), "reflect", None),
    ((2, 3, 5), (2, 1), "reflect", None),
    ((2, 3, 5), (2, 1), "replicate", None),
    ((2, 1, 3, 3, 3), (1, 1, 2, 0, 1, 1), "replicate", None),
    ((1, 2, 3, 4), (1, 2, 3, 0), "circular", None),
    ((1, 2, 3, 4), (-1, 1, 1, 1), "circular", None),
    ((1, 2, 3, 4), (-1, 2, 1, 0), "reflect", None),
    ((3, 4), (1, 2, -1, 2), "constant", 2.5),
    ((2, 3, 4), (1, 1, 0, 2, 1, 0), "constant", None),
    ((2, 3), (0, 0), "constant", None),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("case", CASES, ids=[f"{c[2]}{k}" for k, c in enumerate(CASES)])
def test_pad_matches_torch(case, dtype):
    shape, pad, mode, value = case
    dname = DTYPE_IDS[DTYPES.index(dtype)]
    x = np.random.default_rng(0).standard_normal(shape)
    out, tout, (nx,), (tx,) = run_both(lambda a: F.pad(a, pad, mode, value),
                                       lambda a: torch.nn.functional.pad(a, pad, mode, value),
                                       [x], dtype)
    assert_close(out, tout, dname)
    assert_close(nx.grad, tx.grad, dname)
    assert node_name(out.grad_fn) == node_name(tout.grad_fn)


@pytest.mark.parametrize("case", CASES[:8], ids=[f"{c[2]}{k}" for k, c in enumerate(CASES[:8])])
def test_pad_gradcheck(case):
    shape, pad, mode, value = case
    x = nbgrad.tensor(np.random.default_rng(1).standard_normal(shape), requires_grad=True)
    assert gradcheck(lambda a: F.pad(a, pad, mode, value), (x,))
    assert gradgradcheck(lambda a: F.pad(a, pad, mode, value), (x,))


LAYERS = [
    (lambda L: L.nn.ReflectionPad1d(2), (2, 3, 5)),
    (lambda L: L.nn.ReflectionPad2d((1, 0, 2, 1)), (1, 2, 4, 3)),
    (lambda L: L.nn.ReplicationPad2d(1), (2, 3, 3)),
    (lambda L: L.nn.ReplicationPad3d((1, 0, 0, 1, 1, 1)), (1, 1, 2, 3, 2)),
    (lambda L: L.nn.CircularPad1d((1, 2)), (1, 2, 4)),
    (lambda L: L.nn.CircularPad2d(1), (1, 2, 3, 3)),
    (lambda L: L.nn.ZeroPad2d((1, 2, 3, 4)), (1, 2, 3, 3)),
    (lambda L: L.nn.ConstantPad1d(2, 3.5), (2, 4)),
    (lambda L: L.nn.ConstantPad3d((1, 0, 0, 1, 1, 0), -1.0), (1, 1, 2, 2, 2)),
]


@pytest.mark.parametrize("make,shape", LAYERS, ids=range(len(LAYERS)))
def test_padding_layers_match_torch(make, shape):
    nm, tm = make(nbgrad), make(torch)
    assert repr(nm) == repr(tm)
    x = np.random.default_rng(2).standard_normal(shape)
    out, tout, (nx,), (tx,) = run_both(nm, tm, [x], DTYPES[0])
    assert_close(out, tout)
    assert_close(nx.grad, tx.grad)


ERRORS = [
    lambda L: L.nn.functional.pad(L.zeros(1, 2, 3, 3), (1,)),
    lambda L: L.nn.functional.pad(L.zeros(1, 2, 3, 3), (1, 1) * 5),
    lambda L: L.nn.functional.pad(L.zeros(1, 2, 3, 3), (3, 3), mode="reflect"),
    lambda L: L.nn.functional.pad(L.zeros(1, 2, 3, 3), (3, 3, 1, 1), mode="reflect"),
    lambda L: L.nn.functional.pad(L.zeros(1, 2, 3, 3), (1, 1, 3, 1), mode="reflect"),
    lambda L: L.nn.functional.pad(L.zeros(1, 2, 3, 3), (4, 1, 1, 1), mode="circular"),
    lambda L: L.nn.functional.pad(L.zeros(1, 2, 3, 3), (1, 1), mode="foo"),
    lambda L: L.nn.functional.pad(L.zeros(3), (1, 1), mode="replicate"),
    lambda L: L.nn.functional.pad(L.zeros(1, 2, 3, 3), (1, 1), mode="reflect", value=1.0),
    lambda L: L.nn.functional.pad(L.zeros(1, 2, 3, 3), (1, 1) * 4, mode="replicate"),
]


@pytest.mark.parametrize("fn", ERRORS, ids=range(len(ERRORS)))
def test_pad_errors_match_torch(fn):
    assert_same_error(fn)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("mode", ["constant", "reflect", "circular"])
def test_pad_on_the_device_matches_torch(mode, dtype, device):
    x = np.random.default_rng(3).standard_normal((1, 2, 3, 4))
    run_on_device(lambda _, a: (nbgrad if isinstance(a, nbgrad.Tensor) else torch
                                ).nn.functional.pad(a, (1, 2, 2, 0), mode), None, [x], dtype,
                  device)
