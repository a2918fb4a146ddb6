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


# The cuda tests in parts of one to two minutes each, so that a parallel run
# (pytest -n) spreads them over its workers; the longest first (they run last:
# see the ``late`` mark in conftest.py).
MODELS = ["tests/nn/test_training.py", "tests/nn/test_dropout.py", "tests/nn/test_conv.py",
          "tests/nn/test_rnn.py"]
FUNCTIONAL = "tests/autograd/test_functional.py"
SHARDS = {
    "nn-models": MODELS,
    "ops": ["tests/ops"],
    "nn": ["tests/nn", *(f"--ignore={path}" for path in MODELS)],
    "autograd-functional": [FUNCTIONAL],
    "rest": sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").iterdir()
                   if p.name.startswith("test_") or p.name in ("optim", "utils", "distributed")),
    "autograd": ["tests/autograd", "tests/tape", f"--ignore={FUNCTIONAL}"],
    "backends": ["tests/backends"],
}


def test_the_shards_cover_every_test_folder():
    folders = {p.name for p in (ROOT / "tests").iterdir() if p.is_dir() and p.name != "__pycache__"}
    covered = {pathlib.Path(path).parts[1] for paths in SHARDS.values() for path in paths
               if not path.startswith("--")}
    assert folders <= covered
    # a file given to a shard of its own is left out of its folder's shard: it runs once
    paths = [path for paths in SHARDS.values() for path in paths]
    ignored = [path[len("--ignore="):] for path in paths if path.startswith("--ignore=")]
    singled = [path for path in paths if path.startswith("tests/") and path.count("/") == 2]
    assert sorted(ignored) == sorted(singled)


@pytest.mark.late
@pytest.mark.parametrize("shard", SHARDS)
def test_cuda_tests_pass_in_the_simulator(shard):
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
         "-m", "cuda", *SHARDS[shard]],
        env=env, capture_output=True, text=True, cwd=ROOT, timeout=1500)
    summary = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert " passed" in summary and " failed" not in summary, summary
