"""Runs the CUDA test group in Numba's CUDA simulator, so the README's single
``pytest`` command covers it. The simulator is chosen when Numba is first
imported, hence the group's own process."""
import os
import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("numba_cuda", reason="the CUDA target needs numba-cuda (pip install 'nbgrad[cuda]')")

GROUP = pathlib.Path(__file__).parent / "cuda"


def test_cuda_group_passes_in_the_simulator():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(GROUP)],
        env=env, capture_output=True, text=True, cwd=GROUP.parents[2], timeout=1200)
    summary = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert " passed" in summary and " failed" not in summary, summary
