"""nbgrad: an eager, PyTorch-style autograd runtime with Numba-compiled kernels."""
import os as _os

__version__ = "0.1.0"

# Numba's OpenMP workers and BLAS's threads both spin after their work; on a
# small machine they then steal the cores from each other (a 2-core MLP step
# measured 10x slower). Passive waiting is set before the first parallel
# kernel starts the pool; a user's own setting wins.
_os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from . import autograd  # noqa: E402
from .autograd import enable_grad, is_grad_enabled, no_grad, set_grad_enabled  # noqa: E402
from .creation import (arange, as_tensor, empty, empty_like, eye, from_numpy, full,  # noqa: E402
                       full_like, linspace, manual_seed, ones, ones_like, rand, rand_like, randint,
                       randn, randn_like, tensor, zeros, zeros_like)
from .backends.cpu import empty_cache, get_num_threads, memory_stats, set_num_threads  # noqa: E402
from .device import device  # noqa: E402
from .dtypes import bool_ as bool  # noqa: E402,A001
from .dtypes import dtype, float32, float64, get_default_dtype, int64  # noqa: E402
from .ops import ROWS, FastPath, clamp, elementwise, pow, where  # noqa: E402,A004
from .ops import reductions as _reductions  # noqa: E402
from .ops.joining import cat, stack  # noqa: E402
from .ops.linalg import matmul, mm  # noqa: E402
from .ops.views import (expand, flatten, permute, reshape, squeeze, t, transpose,  # noqa: E402
                        unsqueeze)
from .tensor import Size, Tensor  # noqa: E402
from . import cuda, nn, optim  # noqa: E402
from .serialization import load, save  # noqa: E402

float = float32  # noqa: A001
double = float64
long = int64

sum = _reductions.sum  # noqa: A001
mean = _reductions.mean
max = _reductions.max  # noqa: A001
min = _reductions.min  # noqa: A001
amax, amin = _reductions.amax, _reductions.amin
softmax, log_softmax = _reductions.softmax, _reductions.log_softmax
clip = clamp


def _export_rows():
    """``nbgrad.exp(t)``, ``nbgrad.maximum(a, b)``, ...: one function per row."""
    for row in ROWS:
        if row.method and row.name not in globals():
            globals()[row.name] = row


_export_rows()


def is_tensor(obj):
    return isinstance(obj, Tensor)


def numel(t):
    return t.numel()


def detach(t):
    return t.detach()


def clone(t):
    return t.clone()
