"""The CUDA backend's tests run on a GPU, or in Numba's CUDA simulator.

The simulator is chosen when Numba is first imported, so these tests need
their own pytest process:

    NUMBA_ENABLE_CUDASIM=1 pytest tests/backends/cuda

Without the simulator and without a GPU every test here is skipped; on a
machine with a GPU they run on the hardware.
"""
import os
import sys

import pytest

SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
if SIMULATOR:
    # The simulator runs each CUDA thread as a Python thread and polls them at
    # every syncthreads(); the default 5 ms GIL switch interval makes each
    # barrier cost milliseconds. A short interval makes these tests ~4x faster.
    sys.setswitchinterval(1e-4)


def _real_gpu():
    if SIMULATOR:
        return False
    try:
        from numba import cuda
        return bool(cuda.is_available())
    except Exception:
        return False


ENABLED = SIMULATOR or _real_gpu()
REASON = ("CUDA tests need a GPU or the simulator: run them in their own process with "
          "NUMBA_ENABLE_CUDASIM=1 pytest tests/backends/cuda")


def pytest_collection_modifyitems(config, items):
    if ENABLED:
        return
    here = os.path.dirname(os.path.abspath(__file__))
    skip = pytest.mark.skip(reason=REASON)
    for item in items:
        if os.path.abspath(str(item.fspath)).startswith(here + os.sep):
            item.add_marker(skip)
