"""Helpers for the Tensor-level CUDA tests: run the same work on both devices."""
import numpy as np

import nbgrad

# float32: the simulator evaluates math in double precision and rounds; the CPU
# kernels use nbgrad's float32 scalar math: a few ulp apart.
TOL = {nbgrad.float32: dict(rtol=3e-5, atol=2e-6), nbgrad.float64: dict(rtol=1e-12, atol=1e-14)}


def host(t):
    """A tensor's values as a NumPy array, from either device."""
    assert isinstance(t, nbgrad.Tensor), type(t)
    return t.detach().cpu().numpy()


def on_both(array, dtype=None, requires_grad=False):
    """The same values as a (cpu, cuda) pair of leaf tensors."""
    cpu = nbgrad.tensor(array, dtype=dtype, requires_grad=requires_grad)
    cuda = nbgrad.tensor(array, dtype=dtype, device="cuda", requires_grad=requires_grad)
    return cpu, cuda


def assert_same(cuda_tensor, cpu_tensor):
    """Same device-independent metadata and (nearly) the same values."""
    assert cuda_tensor.device == nbgrad.device("cuda", 0)
    assert cpu_tensor.device == nbgrad.device("cpu")
    assert cuda_tensor.shape == cpu_tensor.shape and cuda_tensor.dtype is cpu_tensor.dtype
    got, expected = host(cuda_tensor), host(cpu_tensor)
    if cpu_tensor.dtype.is_floating_point:
        np.testing.assert_allclose(got, expected, equal_nan=True, **TOL[cpu_tensor.dtype])
    else:
        np.testing.assert_array_equal(got, expected)


def values(shape, seed=0, low=-2.0, high=2.0):
    """Fixed (derandomized) float64 values in ``[low, high)``."""
    return np.random.default_rng(seed).uniform(low, high, size=shape)


def run_both(fn, *arrays, dtype=nbgrad.float32, upstream=None, seed=1):
    """Run ``fn`` on leaves (requiring grad) made from ``arrays`` on each
    device; backward from a fixed upstream gradient when the result requires
    grad; compare the results and the leaves' gradients. Returns the
    (cuda, cpu) results."""
    results = {}
    for device in ("cpu", "cuda"):
        leaves = [nbgrad.tensor(a, dtype=dtype, device=device, requires_grad=True) for a in arrays]
        out = fn(*leaves)
        if isinstance(out, nbgrad.Tensor) and out.requires_grad:
            g = upstream if upstream is not None else values(out.shape, seed)
            out.backward(nbgrad.tensor(g, dtype=out.dtype, device=device))
        results[device] = out, leaves
    (out, leaves), (want, want_leaves) = results["cuda"], results["cpu"]
    assert_same(out, want)
    for leaf, want_leaf in zip(leaves, want_leaves):
        assert (leaf.grad is None) == (want_leaf.grad is None)
        if leaf.grad is not None:
            assert leaf.grad.device == leaf.device  # gradients stay on the device
            assert_same(leaf.grad, want_leaf.grad)
    return out, want


def raised(fn, *args):
    """The exception ``fn(*args)`` raises (the test fails if none)."""
    try:
        fn(*args)
    except Exception as error:  # noqa: BLE001 (any error is the value under test)
        return error
    raise AssertionError(f"{fn} did not raise")


def same_error(fn, cpu_args, cuda_args):
    """``fn`` raises the same exception type and message on both devices."""
    want, got = raised(fn, *cpu_args), raised(fn, *cuda_args)
    assert type(got) is type(want), (got, want)
    assert str(got) == str(want)
    return got


MIXED = "Expected all tensors to be on the same device, but found at least two devices, {} and {}!"
