"""Runs the ``cuda`` tests (tests/conftest.py, "devices": every test body
that takes ``device`` on CUDA, the CUDA-only tests, and the backend's
raw-array tests in tests/backends/cuda) in Numba's CUDA simulator, so the
README's single ``pytest`` command covers them. The simulator is chosen when
Numba is first imported, hence its own process."""
import os
import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("numba_cuda", reason="the CUDA target needs numba-cuda (pip install 'nbgrad[cuda]')")

ROOT = pathlib.Path(__file__).parents[2]


def test_cuda_tests_pass_in_the_simulator():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "cuda", "tests"],
        env=env, capture_output=True, text=True, cwd=ROOT, timeout=1500)
    summary = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert " passed" in summary and " failed" not in summary, summary
