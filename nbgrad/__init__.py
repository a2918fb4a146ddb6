"""nbgrad: an eager, PyTorch-style autograd runtime with Numba-compiled kernels."""
import os as _os

from ._version import __version__  # noqa: F401

# Numba's OpenMP workers and BLAS's threads both spin after their work; on a
# small machine they then steal the cores from each other (a 2-core MLP step
# measured 10x slower). Passive waiting is set before the first parallel
# kernel starts the pool; a user's own setting wins.
_os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from . import autograd  # noqa: E402
from .autograd import enable_grad, is_grad_enabled, no_grad, set_grad_enabled  # noqa: E402
from .autograd import inference_mode, is_inference_mode_enabled  # noqa: E402
from .autograd.anomaly_mode import (is_anomaly_check_nan_enabled, is_anomaly_enabled,  # noqa: E402
                                    set_anomaly_enabled)
from .creation import (arange, as_tensor, empty, empty_like, eye, from_numpy, full,  # noqa: E402
                       full_like, linspace, manual_seed, ones, ones_like, rand, rand_like, randint,
                       randn, randn_like, tensor, zeros, zeros_like)
from .backends.cpu import empty_cache, get_num_threads, memory_stats, set_num_threads  # noqa: E402
from .device import device  # noqa: E402
from .dtypes import bool_ as bool  # noqa: E402,A001
from .dtypes import dtype, float32, float64, get_default_dtype, int64  # noqa: E402
from .declarations.row import FastPath, elementwise  # noqa: E402
from .ops import ROWS, aliases as _aliases, registry as _registry  # noqa: E402
from .tensor import Size, Tensor  # noqa: E402
from . import cuda, nn, optim, utils  # noqa: E402
from . import linalg  # noqa: E402  (issue 15: torch.linalg's namespace)
from . import special  # noqa: E402  (torch.special's namespace)
from .serialization import load, save  # noqa: E402
from .custom_kernel import kernel  # noqa: E402  (a user's Numba kernel on tensors)
from . import distributed  # noqa: E402  (MPI; mpi4py is imported on first use)
from . import testing  # noqa: E402  (assert_close, make_tensor)

float = float32  # noqa: A001
double = float64
long = int64

from .dtypes import (can_cast, finfo, float16, iinfo, int8, int16, int32,  # noqa: E402
                     promote_types, set_default_dtype, uint8)
half = float16
int = int32  # noqa: A001
short = int16
# -- issue 15, items 9-10: random state, print options, global switches ----------
from .random import (Generator, default_generator, get_rng_state, initial_seed,  # noqa: E402
                     seed, set_rng_state)
from ._formatting import set_printoptions  # noqa: E402
from ._determinism import (are_deterministic_algorithms_enabled,  # noqa: E402
                           get_deterministic_debug_mode,
                           is_deterministic_algorithms_warn_only_enabled,
                           set_deterministic_debug_mode, use_deterministic_algorithms)
from .backends import cudnn as _cudnn  # noqa: E402,F401  (nbgrad.backends.cudnn: no-op switches)


def _export_ops():
    """``nbgrad.sum(t)``, ``nbgrad.cat(...)``: every op declared as a function;
    ``nbgrad.exp(t)``, ``nbgrad.maximum(a, b)``: one function per row."""
    names = globals()
    names.update(_registry.FUNCTIONS)
    for row in ROWS:
        if row.method and row.name not in names:
            names[row.name] = row
    names.update(_aliases.function_aliases(names, Tensor))


_export_ops()


def is_tensor(obj):
    return isinstance(obj, Tensor)


def numel(t):
    return t.numel()


def detach(t):
    return t.detach()



def is_inference(t):
    return t.is_inference()
