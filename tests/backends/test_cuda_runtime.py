"""The CUDA backend in an ordinary process (no simulator): importing it
touches neither the driver nor the compiler, and asking for CUDA where there
is none raises a RuntimeError that says why and what to install."""
import os
import subprocess
import sys

import pytest

import nbgrad.backends.cuda as cuda_backend
from nbgrad.backends.cuda import _runtime

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _python(code):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_import_touches_no_driver_and_compiles_nothing():
    out = _python(
        "import sys\n"
        "import nbgrad, nbgrad.backends.cuda as c\n"
        "drv = sys.modules.get('numba.cuda.cudadrv.driver')\n"
        "print(c.name, bool(drv and drv.driver.is_initialized),\n"
        "      [m for m in sys.modules if m.startswith('nbgrad.backends.cuda.')],\n"
        "      [m for m in sys.modules if m.startswith('nbgrad_kernel_cuda')])\n")
    assert out == "cuda False ['nbgrad.backends.cuda._runtime'] []"


def test_is_available_never_raises(monkeypatch):
    def boom():
        raise OSError("broken driver")
    monkeypatch.setattr(_runtime, "unavailable_reason", boom)
    assert cuda_backend.is_available() is False


def test_missing_numba_cuda_says_what_to_install(monkeypatch):
    real = _runtime.importlib.util.find_spec
    monkeypatch.setattr(_runtime.importlib.util, "find_spec",
                        lambda name, *a: None if name == "numba_cuda" else real(name, *a))
    monkeypatch.setattr(_runtime, "_ready", False)
    assert not cuda_backend.is_available()
    with pytest.raises(RuntimeError, match=r"numba-cuda, which is not installed.*"
                                           r"pip install 'nbgrad\[cuda\]'"):
        cuda_backend.require()


def test_no_gpu_says_why_and_what_to_install():
    if cuda_backend.simulator():
        pytest.skip("the simulator counts as a device")
    if cuda_backend.is_available():
        pytest.skip("this machine has a GPU")
    with pytest.raises(RuntimeError, match=r"CUDA is not available: .*NVIDIA GPU.*"
                                           r"pip install 'nbgrad\[cuda\]'.*NUMBA_ENABLE_CUDASIM=1"):
        cuda_backend.require()
    with pytest.raises(RuntimeError, match="CUDA is not available"):  # allocation asks first
        cuda_backend.zeros((2,), "float32")
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        cuda_backend.to_device([1.0])
