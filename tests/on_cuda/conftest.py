"""Tensor-level tests on the CUDA device: nbgrad's public API with
``device="cuda"``, compared with the same work on the CPU.

They run on a GPU, or in Numba's CUDA simulator, which is chosen when Numba
is first imported, so they need their own pytest process (the README's test
command starts one through ``tests/backends/test_cuda_simulator.py``):

    NUMBA_ENABLE_CUDASIM=1 pytest tests/on_cuda

Elsewhere (no GPU, no simulator) every test here is skipped. Test modules
must not touch the device at import time.
"""
import os
import sys

import pytest

import nbgrad

SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
if SIMULATOR:
    sys.setswitchinterval(1e-4)  # the simulator's barriers poll threads (see tests/backends/cuda)


def pytest_collection_modifyitems(config, items):
    if nbgrad.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a GPU or the CUDA simulator: "
                                   "NUMBA_ENABLE_CUDASIM=1 pytest tests/on_cuda")
    here = os.path.dirname(__file__)
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(skip)
