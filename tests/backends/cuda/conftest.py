"""The CUDA backend's raw-array tests carry the ``cuda`` mark: they run on a
GPU, or in Numba's CUDA simulator in its own process (tests/conftest.py,
"devices"):

    NUMBA_ENABLE_CUDASIM=1 pytest -m cuda tests/backends/cuda
"""
import pathlib

import pytest

HERE = pathlib.Path(__file__).parent


@pytest.hookimpl(tryfirst=True)  # before tests/conftest.py deselects the cuda tests
def pytest_collection_modifyitems(items):
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.cuda)
