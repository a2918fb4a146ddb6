"""Where the CUDA backend runs, and how kernels are launched.

Nothing here touches the CUDA driver at import time: ``numba.cuda`` is
imported on first use, the device is queried on the first launch, and
``require()`` explains why CUDA cannot be used (numba-cuda missing, or no
driver/GPU) and what to install.

The simulator (``NUMBA_ENABLE_CUDASIM=1``, read by Numba when it is first
imported) runs every CUDA thread as a Python thread, so launches there use a
small grid and small blocks (and kernels are generated with small tiles and
shared-memory sizes); on hardware blocks have 256 threads and the grid is
capped at 32 blocks per multiprocessor (the grid-stride loops do the rest).
"""
import importlib.util
import math

_cuda = None
_ready = False
_sm_count = None

THREADS = 256            # threads per block for grid-stride kernels (hardware)
BLOCKS_PER_SM = 32
SIM_THREADS = 8          # simulator: every thread is a Python thread
SIM_BLOCKS = 2           # ... and at least two blocks, so grid-stride loops are exercised
REDUCE_THREADS = 256     # largest block of a reduction (a power of two)
SIM_REDUCE_THREADS = 8
TILE = 16                # matmul tile (TILE x TILE threads per block)
SIM_TILE = 4
MAX_GRID_YZ = 65535      # grid limit in y and z; the matmul loops over more row tiles/batches
SIM_MAX_GRID_YZ = 2      # ... which the simulator exercises with small grids

INSTALL_HINT = "pip install 'nbgrad[cuda]'"


def cuda():
    """The ``numba.cuda`` module (imported on first use)."""
    global _cuda
    if _cuda is None:
        from numba import cuda as module
        _cuda = module
    return _cuda


def simulator():
    """True when Numba runs CUDA kernels in its CPU simulator."""
    if importlib.util.find_spec("numba_cuda") is None:
        return False
    return _is_sim()


_sim = None


def _is_sim():
    global _sim
    if _sim is None:  # fixed once Numba is imported
        from numba.cuda import config
        _sim = bool(config.ENABLE_CUDASIM)
    return _sim


def unavailable_reason():
    """None when CUDA kernels can run here (a GPU, or the simulator); else a
    sentence saying why not and what to install."""
    if importlib.util.find_spec("numba_cuda") is None:
        return ("CUDA is not available: nbgrad's CUDA backend needs numba-cuda, which is not "
                f"installed. Install it with: {INSTALL_HINT} (it brings numba-cuda[cu13]).")
    try:
        module = cuda()
    except Exception as error:  # a broken install
        return (f"CUDA is not available: importing numba.cuda failed ({error}). "
                f"Reinstall it with: {INSTALL_HINT}")
    if _is_sim():
        return None
    try:
        if module.is_available():
            return None
    except Exception:  # is_available() should not raise; never let it escape
        pass
    why = None
    try:
        from numba.cuda.cudadrv.driver import driver
        why = getattr(driver, "initialization_error", None)
    except Exception:
        pass
    why = " ".join(str(why).split()).rstrip(".:") if why else "no CUDA-capable GPU was found"
    return (f"CUDA is not available: {why}. nbgrad's CUDA backend needs an NVIDIA GPU with its "
            f"driver installed (check with nvidia-smi) and numba-cuda ({INSTALL_HINT}). To run "
            "CUDA code on the CPU instead, set NUMBA_ENABLE_CUDASIM=1 before nbgrad is imported.")


def is_available():
    try:
        return unavailable_reason() is None
    except Exception:
        return False


def require():
    """Raise RuntimeError saying why CUDA is unusable; cached once it is usable."""
    global _ready
    if _ready:
        return
    reason = unavailable_reason()
    if reason is not None:
        raise RuntimeError(reason)
    _ready = True
    if _is_sim():
        _serialize_simulator_shared_arrays()
    else:
        # Small launches are normal for an autograd runtime; Numba would warn on each.
        from numba.cuda import config
        config.CUDA_LOW_OCCUPANCY_WARNINGS = 0


def _serialize_simulator_shared_arrays():
    """Make the simulator's ``cuda.shared.array`` safe for a block's threads.

    numba-cuda's simulator (0.30) finds a block's shared array by the calling
    line in a dict, checked and then filled with no lock; the block's threads
    (Python threads) reach that line together, so two of them can each make
    an array of their own and never see each other's writes: a reduction then
    loses terms and a tiled matmul reads another thread's garbage, now and
    then (tests/backends/cuda/test_cuda_simulator_shared.py). One lock around
    the lookup gives every thread of the block the same array, as a GPU does."""
    import sys
    import threading

    import numpy as np
    from numba.core import types
    from numba.cuda.simulator import kernelapi
    from numba.np import numpy_support

    shared = kernelapi.FakeCUDAShared
    if getattr(shared.array, "_nbgrad_serialized", False):
        return
    original, lock = shared.array, threading.Lock()

    def array(self, shape, dtype, alignment=None):
        if alignment is not None or shape == 0:  # refused, or dynamic: one buffer anyway
            return original(self, shape, dtype, alignment)
        frame = sys._getframe(1)  # the kernel's line, as the original keys it
        caller = (frame.f_code.co_filename, frame.f_lineno)
        with lock:
            found = self._allocations.get(caller)
            if found is None:
                if isinstance(dtype, types.Type):
                    dtype = numpy_support.as_dtype(dtype)
                found = self._allocations[caller] = np.empty(shape, dtype)
        return found

    array._nbgrad_serialized = True
    shared.array = array


def sm_count():
    global _sm_count
    if _sm_count is None:
        _sm_count = 1 if _is_sim() else int(cuda().get_current_device().MULTIPROCESSOR_COUNT)
    return _sm_count


def grid_for(n):
    """(blocks, threads) for a grid-stride loop over ``n`` items."""
    if _is_sim():
        threads = SIM_THREADS
        return max(1, min(math.ceil(n / threads), SIM_BLOCKS)), threads
    return max(1, min(math.ceil(n / THREADS), BLOCKS_PER_SM * sm_count())), THREADS


def max_blocks():
    return SIM_BLOCKS if _is_sim() else BLOCKS_PER_SM * sm_count()


def reduce_threads_max():
    return SIM_REDUCE_THREADS if _is_sim() else REDUCE_THREADS


def tile():
    return SIM_TILE if _is_sim() else TILE


def max_grid_yz():
    return SIM_MAX_GRID_YZ if _is_sim() else MAX_GRID_YZ


def device_name():
    if _is_sim():
        return "CUDA simulator"
    name = cuda().get_current_device().name
    return name.decode() if isinstance(name, bytes) else str(name)


def synchronize():
    require()
    cuda().synchronize()
