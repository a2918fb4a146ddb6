"""The CUDA backend's tests run on a GPU, or in Numba's CUDA simulator.

The simulator is chosen when Numba is first imported, so these tests need
their own pytest process:

    NUMBA_ENABLE_CUDASIM=1 pytest tests/backends/cuda

Without the simulator and without a GPU every module here is skipped (see
``cuda_support``); on a machine with a GPU they run on the hardware.
"""
import os
import sys

if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
    # The simulator runs each CUDA thread as a Python thread and polls them at
    # every syncthreads(); the default 5 ms GIL switch interval makes each
    # barrier cost milliseconds. A short interval makes these tests ~4x faster.
    sys.setswitchinterval(1e-4)
