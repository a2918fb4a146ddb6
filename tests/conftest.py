"""Suite-wide settings.

Hypothesis profiles (choose with ``HYPOTHESIS_PROFILE``):

- ``default``: 15 examples per test, no per-example deadline (the first
  example of a new kernel specialisation waits for Numba to compile it) and
  derandomized, so every run draws the same examples. Each new combination of
  shape rank, layout, dtype and scalar positions is a new Numba
  specialisation (~0.3-1 s to compile, cached on disk afterwards); a fixed
  sequence of examples means a warm run compiles nothing, which keeps the
  suite fast on a two-core CI machine.
- ``explore``: random draws and 200 examples, for hunting bugs locally (the
  first run compiles many new kernel specialisations, so it is slow).
"""
import os
import sys

import pytest
from hypothesis import HealthCheck, settings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # tests/helpers.py

_common = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                     HealthCheck.differing_executors])
settings.register_profile("default", max_examples=15, derandomize=True, **_common)
settings.register_profile("explore", max_examples=200, derandomize=False, **_common)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


# -- devices --------------------------------------------------------------------
# One test body runs on every device: a test that takes the ``device`` fixture
# runs once per device ("cpu", "cuda"), as PyTorch's device-type tests do.
# The CUDA runs carry the ``cuda`` mark. On a machine with a GPU they run in
# the main process; without one they are deselected there and run in Numba's
# CUDA simulator instead, which is chosen when Numba is first imported and so
# needs its own process (tests/backends/test_cuda_simulator.py starts it):
#
#     NUMBA_ENABLE_CUDASIM=1 pytest -m cuda
DEVICES = ("cpu", "cuda")
SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
if SIMULATOR:
    # The simulator runs each CUDA thread as a Python thread and polls them at
    # every syncthreads(); the default 5 ms GIL switch interval makes each
    # barrier cost milliseconds. A short interval makes these tests ~4x faster.
    sys.setswitchinterval(1e-4)


def pytest_configure(config):
    config.addinivalue_line("markers", "cuda: runs on the CUDA device (a GPU or the simulator)")
    config.addinivalue_line("markers", "late: runs after the other tests (a test that starts "
                            "pytest in a subprocess: the kernels it needs are compiled by then)")


def _parametrizes_device(metafunc):
    """The test picks its devices itself (``helpers.cuda_only``)."""
    for mark in metafunc.definition.iter_markers("parametrize"):
        names = mark.args[0]
        if "device" in ([n.strip() for n in names.split(",")] if isinstance(names, str) else names):
            return True
    return False


def pytest_generate_tests(metafunc):
    if "device" in metafunc.fixturenames and not _parametrizes_device(metafunc):
        metafunc.parametrize("device", [pytest.param(d, marks=[pytest.mark.cuda] if d == "cuda"
                                                     else []) for d in DEVICES])


def pytest_collection_modifyitems(config, items):
    items.sort(key=lambda item: item.get_closest_marker("late") is not None)  # stable
    import nbgrad
    if nbgrad.cuda.is_available():
        return
    # No GPU and no simulator: the CUDA runs belong to the simulator's process.
    on_cuda = [item for item in items if item.get_closest_marker("cuda") is not None]
    if on_cuda:
        config.hook.pytest_deselected(items=on_cuda)
        items[:] = [item for item in items if item.get_closest_marker("cuda") is None]
