"""Helpers shared by the CUDA backend tests (simulator or GPU)."""
import numpy as np

from nbgrad.backends import cpu
from nbgrad.backends import cuda as B

FLOATS = (np.float32, np.float64)
# float32: the simulator evaluates math.* in double precision then rounds, the
# CPU kernels call float32 libm: a few ulp apart.
TOL = {np.dtype(np.float32): (3e-5, 2e-6), np.dtype(np.float64): (1e-12, 1e-14)}


def dev(x):
    return B.to_device(np.asarray(x))


def host(d):
    assert isinstance(d, B.DeviceArray), type(d)
    return d.copy_to_host()


def assert_close(got, expected, dtype=None):
    got = host(got) if isinstance(got, B.DeviceArray) else np.asarray(got)
    expected = np.asarray(expected)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    dtype = np.dtype(dtype or expected.dtype)
    if dtype.kind == "f":
        rtol, atol = TOL[dtype]
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, expected)


__all__ = ["B", "cpu", "FLOATS", "dev", "host", "assert_close"]
