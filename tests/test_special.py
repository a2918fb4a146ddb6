"""nbgrad.special (nbgrad/special.py; nbgrad/ops/special_functions.py):
every function against torch.special (values, dtypes, node names, gradients)
and against finite differences (float64); the rows among them (expit, logit,
gammaln, digamma, polygamma, xlog1py, entr, sinc, ...) are also tested row by
row in tests/ops/test_table.py. ``mvlgamma`` as function, method and in place,
with its errors."""
import math

import numpy as np
import pytest
import torch

import nbgrad
from helpers import assert_close, assert_same_error, dtype_name, node_name, on_device
from nbgrad.autograd import gradcheck

TESTED_OPS = {"mvlgamma"}

X = np.array([0.15, 0.4, 0.75, 1.3, 2.5, 4.0])
# name -> how both libraries call it on a tensor of X (shifted where the domain needs it)
CALLS = {
    "expit": lambda L, x: L.special.expit(x),
    "logit": lambda L, x: L.special.logit(x * 0.2, eps=0.05),
    "erf": lambda L, x: L.special.erf(x),
    "erfc": lambda L, x: L.special.erfc(x),
    "erfinv": lambda L, x: L.special.erfinv(x * 0.2),
    "exp2": lambda L, x: L.special.exp2(x),
    "expm1": lambda L, x: L.special.expm1(x),
    "log1p": lambda L, x: L.special.log1p(x),
    "gammaln": lambda L, x: L.special.gammaln(x),
    "digamma": lambda L, x: L.special.digamma(x),
    "psi": lambda L, x: L.special.psi(x),
    "polygamma": lambda L, x: L.special.polygamma(3, x),
    "multigammaln": lambda L, x: L.special.multigammaln(x + 1, 3),
    "ndtr": lambda L, x: L.special.ndtr(x * 4 - 6),
    "sinc": lambda L, x: L.special.sinc(x),
    "round": lambda L, x: L.special.round(x * 3),
    "xlogy": lambda L, x: L.special.xlogy(x, x + 0.5),
    "xlog1py": lambda L, x: L.special.xlog1py(x, x - 0.5),
    "entr": lambda L, x: L.special.entr(x),
    "softmax": lambda L, x: L.special.softmax(x, 0),
    "log_softmax": lambda L, x: L.special.log_softmax(x, 0),
    "logsumexp": lambda L, x: L.special.logsumexp(x, 0),
}
# composites (PyTorch has one node where nbgrad composes rows)
COMPOSED = {"multigammaln", "ndtr"}


def test_the_namespace_is_tested_whole():
    assert set(nbgrad.special.__all__) == set(CALLS)
    for name in CALLS:
        assert hasattr(torch.special, name)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(CALLS))
def test_like_torch(name, dtype, device):
    results = []
    for L in (nbgrad, torch):
        x = L.tensor(X, dtype=getattr(L, dtype), requires_grad=True, **on_device(L, device))
        out = CALLS[name](L, x)
        w = L.tensor(np.linspace(-1, 2, out.numel()).reshape(tuple(out.shape)), dtype=out.dtype,
                     **on_device(L, device))
        (out * w).sum().backward()
        results.append((out, x.grad))
    (out, grad), (want, want_grad) = results
    assert dtype_name(out.dtype) == dtype_name(want.dtype)
    if name not in COMPOSED:
        assert node_name(out.grad_fn) == node_name(want.grad_fn)
    rtol = 1e-5 if dtype == "float32" else 1e-12
    assert_close(out, want, rtol=rtol, atol=rtol)
    assert_close(grad, want_grad, rtol=10 * rtol, atol=10 * rtol)


@pytest.mark.parametrize("name", sorted(set(CALLS) - {"round"}))
def test_gradients_match_finite_differences(name):
    x = nbgrad.tensor(X, dtype=nbgrad.float64, requires_grad=True)
    assert gradcheck(lambda t: CALLS[name](nbgrad, t), (x,))


def test_integers_compute_in_the_default_float():
    for name in ("expit", "gammaln", "digamma", "entr", "ndtr", "sinc"):
        got = getattr(nbgrad.special, name)(nbgrad.tensor([1, 2, 3]))
        want = getattr(torch.special, name)(torch.tensor([1, 2, 3]))
        assert dtype_name(got.dtype) == dtype_name(want.dtype)
        assert_close(got, want)


def test_ndtr_keeps_its_lower_tail():
    """PyTorch's (1 + erf(x / sqrt(2))) / 2 cancels to 0 below about -8.3;
    nbgrad's erfc form keeps the tail (checked against the libm erfc)."""
    x = np.array([-30.0, -10.0, -1.0, 0.0, 1.0, 10.0])
    want = np.array([0.5 * math.erfc(-v / math.sqrt(2)) for v in x])
    got = nbgrad.special.ndtr(nbgrad.tensor(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)  # (x / sqrt(2) rounds)
    assert torch.special.ndtr(torch.tensor(x))[1] == 0  # (the cancellation nbgrad avoids)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sinc_gradient_stays_exact_near_zero(dtype):
    """PyTorch's float32 (p cos p - sin p) / p**2 cancels near 0 (0.0 at
    x = 1e-4 where the derivative is -3.3e-4): nbgrad's Taylor series and
    double evaluation keep it within an ulp or two (against a float64 series)."""
    x = np.array([-0.03, -1e-3, 1e-4, 1e-6, 2e-2, 0.1])
    t = nbgrad.tensor(x, dtype=getattr(nbgrad, dtype), requires_grad=True)
    nbgrad.special.sinc(t).sum().backward()
    p = np.pi * x
    want = np.pi * sum(c * p ** k for c, k in ((-1 / 3, 1), (1 / 30, 3), (-1 / 840, 5),
                                                (1 / 45360, 7), (-1 / 3991680, 9)))
    np.testing.assert_allclose(t.grad.numpy(), want, rtol=3e-7 if dtype == "float32" else 1e-13)


@pytest.mark.parametrize("p", [1, 2, 5])
def test_mvlgamma_function_method_and_in_place(p):
    a = X + p
    want = torch.mvlgamma(torch.tensor(a), p)
    assert_close(nbgrad.mvlgamma(nbgrad.tensor(a), p), want)
    assert_close(nbgrad.tensor(a).mvlgamma(p), want)
    t = nbgrad.tensor(a)
    version = t._version
    assert t.mvlgamma_(p) is t
    assert t._version == version + 1
    assert_close(t, want)
    assert_close(nbgrad.mvlgamma(nbgrad.tensor([3, 4]), p), torch.mvlgamma(torch.tensor([3, 4]), p))


@pytest.mark.parametrize("call", [
    lambda L: L.mvlgamma(L.tensor([3.0]), 0),
    lambda L: L.tensor([3.0]).mvlgamma_(-1),
    lambda L: L.special.polygamma(-1, L.tensor([3.0])),
    lambda L: L.special.polygamma(1.5, L.tensor([3.0])),
])
def test_bad_orders_are_refused_like_torch(call):
    assert_same_error(call)
