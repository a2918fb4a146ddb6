"""Runs the CUDA test groups in Numba's CUDA simulator, so the README's single
``pytest`` command covers them: the backend's raw-array tests
(``tests/backends/cuda``) and the Tensor-level tests on the device
(``tests/on_cuda``). The simulator is chosen when Numba is first imported,
hence the groups' own process."""
import os
import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("numba_cuda", reason="the CUDA target needs numba-cuda (pip install 'nbgrad[cuda]')")

TESTS = pathlib.Path(__file__).parents[1]
GROUPS = [TESTS / "backends" / "cuda", TESTS / "on_cuda"]


def test_cuda_group_passes_in_the_simulator():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *map(str, GROUPS)],
        env=env, capture_output=True, text=True, cwd=TESTS.parent, timeout=1500)
    summary = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert " passed" in summary and " failed" not in summary, summary
