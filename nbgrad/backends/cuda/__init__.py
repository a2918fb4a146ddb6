"""The CUDA backend: Numba device arrays (``DeviceArray``), ``@cuda.jit``
kernels generated from the same op rows as the CPU's, tiled matmul and
reductions on the device. Functions take and return raw arrays, with the
same names as the CPU backend's (``nbgrad.backends.cpu``).

Importing this package touches neither the CUDA driver nor the compiler:
``numba.cuda`` and the kernels are loaded on first use, and every
allocation first checks ``require()``, which says why CUDA is unusable
(numba-cuda not installed, or no driver/GPU) and what to install.
``NUMBA_ENABLE_CUDASIM=1`` (set before Numba is imported) runs everything in
Numba's CUDA simulator on the CPU.
"""
from .. import contract
from . import _runtime

name = "cuda"


def is_available():
    """True when CUDA kernels can run here (a GPU and driver, or the
    simulator). Never raises."""
    return _runtime.is_available()


def require():
    """Raise RuntimeError saying why CUDA is unusable and what to install."""
    _runtime.require()


def synchronize():
    """Wait for all kernels launched so far to finish."""
    _runtime.synchronize()


def simulator():
    """True when kernels run in Numba's CUDA simulator."""
    return _runtime.simulator()


# Everything else the contract declares is loaded from api.py on first use.
_LAZY = frozenset(contract.names(contract.CudaBackend)) - set(globals())


def __getattr__(attr):
    if attr in _LAZY:
        from . import api
        value = getattr(api, attr)
        globals()[attr] = value  # later lookups skip this hook
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
