"""The simulator's shared arrays are one per block, as on a GPU, even when the
block's threads (Python threads there) reach ``cuda.shared.array`` together."""
import time

import numpy as np
import pytest
from numba import cuda  # a global of this module: the simulator swaps it while a kernel runs

from nbgrad.backends.cuda import _runtime

from cuda_support import B, host

pytestmark = pytest.mark.cuda


def test_every_thread_of_a_block_sees_one_shared_array(monkeypatch):
    if not _runtime.simulator():
        pytest.skip("the simulator's own shared arrays")
    B.empty((1,), np.float64)  # the backend is set up (and the simulator made safe) on first use
    from numba.cuda.simulator import kernelapi

    # Widen the window between the simulator's lookup and its store: every
    # thread now reaches the lookup before any has stored its array.
    real_empty = np.empty

    def slow_empty(*args, **kwargs):
        time.sleep(0.01)
        return real_empty(*args, **kwargs)
    monkeypatch.setattr(kernelapi.np, "empty", slow_empty)
    monkeypatch.setattr(np, "empty", slow_empty)

    @cuda.jit
    def rotate(out):
        sh = cuda.shared.array(8, np.float64)
        t = cuda.threadIdx.x
        sh[t] = t
        cuda.syncthreads()
        out[t] = sh[(t + 1) % 8]

    out = B.zeros((8,), np.float64)
    rotate[1, 8](out.buffer)
    monkeypatch.undo()
    np.testing.assert_array_equal(host(out), np.roll(np.arange(8.0), -1))
