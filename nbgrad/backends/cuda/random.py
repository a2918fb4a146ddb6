"""Random numbers on the device (the contract's ``random_*``): a stream is a
fixed set of xoroshiro128+ states (``numba.cuda.random``), one per thread of
the fill kernels, which advance them in place: values are drawn on the GPU,
with no host round trip. Each distribution is a transform of a uniform or a
normal draw in float64, stored (rounded once) into the output's dtype."""
import warnings

import numpy as np

from . import _runtime, codegen
from .array import empty

# PyTorch's samplers as transforms of u (uniform in [0, 1)) or z (standard normal).
_EXPRESSIONS = {
    "uniform": "a + (b - a) * uniform(states, tid)",
    "normal": "a + b * normal(states, tid)",
    "bernoulli": "1.0 if uniform(states, tid) < a else 0.0",
    "exponential": "-math.log1p(-uniform(states, tid)) / a",
    "geometric": "max(1.0, math.ceil(math.log1p(-uniform(states, tid)) / math.log1p(-a)))",
    "cauchy": "a + b * math.tan(math.pi * (uniform(states, tid) - 0.5))",
    "log_normal": "math.exp(a + b * normal(states, tid))",
    "integers": "a + int64(next_(states, tid) % uint64(b - a))",
}


class Stream:
    """The xoroshiro128+ states of one generator (a device array of records)."""

    __slots__ = ("states", "threads", "blocks")

    def __init__(self, seed):
        self.blocks, self.threads = _runtime.grid_for(1 << 22)  # the most threads a fill uses
        with _quiet():  # (the simulator's numba.cuda.random warns on import)
            from numba.cuda.random import create_xoroshiro128p_states
            self.states = create_xoroshiro128p_states(self.blocks * self.threads, seed=seed)


def _quiet():
    """The simulator runs xoroshiro's uint64 arithmetic in NumPy, which warns on
    the intended wrap-around, and Numba warns that it compiles the states'
    host-side initialisation in object mode there; silence both (a GPU does
    neither)."""
    class Quiet:
        def __enter__(self):
            self.errors = np.seterr(all="ignore")
            self.filters = warnings.catch_warnings()
            self.filters.__enter__()
            warnings.simplefilter("ignore")

        def __exit__(self, *exc):
            self.filters.__exit__(*exc)
            np.seterr(**self.errors)
    return Quiet()


def _kernel(kind):
    def make():
        source = (
            "from numba import int64, uint64\n"
            "from numba.cuda.random import xoroshiro128p_uniform_float64 as uniform\n"
            "from numba.cuda.random import xoroshiro128p_normal_float64 as normal\n"
            "from numba.cuda.random import xoroshiro128p_next as next_\n\n\n"
            "@cuda.jit\n"
            "def kernel(out, n, states, a, b):\n"
            "    tid = cuda.grid(1)\n"
            "    step = cuda.gridsize(1)\n"
            "    for i in range(tid, n, step):\n"
            f"        out[i] = {_EXPRESSIONS[kind]}\n")
        return codegen.build(f"random_{kind}", source).kernel
    return codegen.cached(("random", kind), make)


def random_stream(seed, stream=None):
    """A stream seeded with ``seed`` (an int in [0, 2**64)); ``stream`` is replaced."""
    _runtime.require()
    return Stream(seed)


def random_fill(stream, shape, dtype, kind, a=0.0, b=1.0):
    """A new C-contiguous array of ``shape`` and ``dtype`` drawn on the device
    (``kind`` as the CPU's)."""
    dtype = np.dtype(dtype)
    if kind == "integers":
        drawn = np.dtype(np.int64)
        a, b = np.int64(a), np.int64(b)
    else:
        drawn = dtype if dtype in (np.float32, np.float64) else np.dtype(np.float64)
        a, b = np.float64(a), np.float64(b)
    out = empty(tuple(shape), drawn)
    n = out.size
    if n:
        with _quiet():
            _kernel(kind)[stream.blocks, stream.threads](out._buf, n, stream.states, a, b)
    return out if drawn == dtype else out.astype(dtype)


def random_state(stream):
    """The states as uint8 bytes (a host NumPy array)."""
    return stream.states.copy_to_host().view(np.uint8).reshape(-1).copy()


def set_random_state(stream, state):
    """Restore states ``random_state`` gave; False if the size is wrong."""
    state = np.ascontiguousarray(state, np.uint8)
    host = stream.states.copy_to_host()
    if state.size != host.nbytes:
        return False
    stream.states.copy_to_device(state.view(host.dtype))
    return True
