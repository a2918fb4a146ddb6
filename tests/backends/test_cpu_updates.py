"""The CPU backend's fused optimizer updates and pool-allocated products.

Updates: the serial, parallel (from PARALLEL_THRESHOLD elements) and
``foreach`` forms of every declared update write the same values as
PyTorch's single-tensor SGD and Adam formulas, in place.
Products: ``matmul`` equals NumPy's, in a C-contiguous result, taken from the
caching allocator from POOL_MIN_BYTES on (2-D and batched)."""
import numpy as np
import pytest
import torch

from nbgrad.backends import cpu
from nbgrad.backends.cpu.allocator import POOL_MIN_BYTES
from nbgrad.backends.cpu.updates import PARALLEL_THRESHOLD
from nbgrad.declarations.optimizer_updates import ADAM, SGD, UPDATES


def _sgd(t, first):
    # neg_lr, weight_decay, momentum, 1 - dampening, has_momentum, first, nesterov, maximize
    return (t(-0.1), t(0.01), t(0.9), t(0.7), True, first, True, False)


def _adam(t):
    # weight_decay, decay_factor, decoupled, weight1, 1 - weight1, beta2, 1 - beta2,
    # neg_step_size, sqrt(bias_correction2), eps, amsgrad, maximize (first step, lr 0.01)
    w1 = t(0.1)
    return (t(0.02), t(1 - 0.01 * 0.02), False, w1, t(1) - w1, t(0.999), t(1 - 0.999),
            t(-(0.01 / (1 - 0.9))), t((1 - 0.999) ** 0.5), t(1e-8), True, False)


def _scalars(update, t):
    """Scalars for ``update``: SGD's and Adam's above; the others' arbitrary
    positive values with every flag on (the forms must agree whatever they are)."""
    if update is SGD:
        return _sgd(t, False)
    if update is ADAM:
        return _adam(t)
    return tuple(True if k == "f" else t(0.25 + 0.1 * j)
                 for j, k in enumerate(update.kinds) if k != "a")


def _arrays(update, n, dtype, rng):
    count = update.kinds.count("a")
    return tuple(np.abs(rng.standard_normal(n)).astype(dtype) for _ in range(count))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [5, PARALLEL_THRESHOLD + 3], ids=["serial", "parallel"])
def test_adam_matches_torch_in_place(n, dtype):
    rng = np.random.default_rng(0)
    arrays = _arrays(ADAM, n, dtype, rng)
    exp_avg, exp_avg_sq, max_sq = (np.zeros(n, dtype) for _ in range(3))
    param, grad = arrays[0].copy(), arrays[1]
    cpu.optimizer_update(ADAM, (param, grad, exp_avg, exp_avg_sq, max_sq), _adam(dtype))
    p = torch.nn.Parameter(torch.tensor(arrays[0]))
    p.grad = torch.tensor(grad)
    opt = torch.optim.Adam([p], lr=0.01, weight_decay=0.02, amsgrad=True, foreach=False)
    opt.step()
    tol = dict(rtol=1e-6, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(param, p.detach().numpy(), **tol)
    np.testing.assert_allclose(exp_avg, opt.state[p]["exp_avg"].numpy(), **tol)
    np.testing.assert_allclose(exp_avg_sq, opt.state[p]["exp_avg_sq"].numpy(), **tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_serial_parallel_and_foreach_forms_agree(dtype):
    """The three forms, over the same values, write the same bits."""
    rng = np.random.default_rng(1)
    for update in UPDATES:
        big = _arrays(update, PARALLEL_THRESHOLD + 3, dtype, rng)
        small = [_arrays(update, n, dtype, rng) for n in (4, 7)]
        scalars = _scalars(update, dtype)
        serial = [tuple(a.copy() for a in arrays) for arrays in [big, *small]]
        for arrays in serial:  # the serial loop, piece by piece (below the threshold)
            for start in range(0, arrays[0].size, PARALLEL_THRESHOLD - 1):
                cpu.optimizer_update(update, tuple(a[start:start + PARALLEL_THRESHOLD - 1]
                                                   for a in arrays), scalars)
        parallel = tuple(a.copy() for a in big)
        cpu.optimizer_update(update, parallel, scalars)
        together = [tuple(a.copy() for a in arrays) for arrays in small]
        cpu.optimizer_update_foreach(update, tuple(zip(*together)), scalars)
        for ours, expected in zip([parallel, *together], serial):
            for a, b in zip(ours, expected):
                np.testing.assert_array_equal(a, b)


def test_sgd_first_momentum_step_sets_the_buffer_to_the_gradient():
    param, grad, buf = np.ones(3), np.array([1.0, 2.0, 3.0]), np.full(3, 99.0)
    cpu.optimizer_update(SGD, (param, grad, buf), _sgd(np.float64, True))
    # g = grad + 0.01 * param; buf = g; nesterov: g + 0.9 * buf; param -= 0.1 * that
    g = grad + 0.01
    np.testing.assert_allclose(buf, g, rtol=1e-15)
    np.testing.assert_allclose(param, 1 - 0.1 * (g + 0.9 * g), rtol=1e-15)


def _pooled(a):
    while a.base is not None and isinstance(a.base, np.ndarray):
        a = a.base
    return a.base is not None  # the allocator's ctypes owner


@pytest.mark.parametrize("sa, sb, pooled", [
    ((3, 4), (4, 5), False),
    ((600, 300), (300, 500), True),
    ((600, 256), (10, 256), False),  # a transposed skinny right operand (a classifier head)
    ((600, 300), (4, 300, 200), True),  # batched against a matrix
    ((4, 3), (3,), False), ((3,), (3, 4), False),
])
def test_matmul_equals_numpys_and_pools_large_results(sa, sb, pooled):
    rng = np.random.default_rng(2)
    a = rng.standard_normal(sa).astype(np.float32)
    b = rng.standard_normal(sb).astype(np.float32)
    if sb == (10, 256):
        b = b.T
    ours = cpu.matmul(a, b)
    expected = np.matmul(a, b)
    assert ours.shape == expected.shape and ours.dtype == expected.dtype
    assert ours.flags.c_contiguous
    np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-4)
    assert _pooled(ours) == pooled
    assert ours.nbytes >= POOL_MIN_BYTES or not pooled


def test_matmul_keeps_numpys_errors():
    with pytest.raises(ValueError) as ours:
        cpu.matmul(np.ones((2, 3)), np.ones((4, 5)))
    with pytest.raises(ValueError) as numpys:
        np.matmul(np.ones((2, 3)), np.ones((4, 5)))
    assert str(ours.value) == str(numpys.value)
