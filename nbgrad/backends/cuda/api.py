"""The CUDA backend's functions on raw arrays (``DeviceArray``), with the
same names and meanings as the CPU backend's (``nbgrad.backends.cpu``), plus
the device-side helpers the autograd layer needs where the CPU code calls
NumPy directly. ``nbgrad.backends.cuda`` exposes all of them lazily."""
import numpy as np

# Host threads (for the CPU-side work around kernels); the GPU grid is sized per launch.
from ..cpu import get_num_threads, set_num_threads  # noqa: F401
from . import _LAZY, _runtime, elementwise, memory, reductions, updates
from . import linalg, scans  # issue 15: products, scans, selections, linear algebra
from .allocator import pool
from .checksums import checksum  # noqa: F401  (the contract's)
from .random import random_fill, random_state, random_stream, set_random_state  # noqa: F401
from .array import DeviceArray, empty, from_cuda_array, to_device  # noqa: F401
from .gemm import matmul  # noqa: F401  (the contract's)

elementwise_forward = elementwise.forward
elementwise_backward = elementwise.backward
elementwise_jvp = elementwise.jvp


def elementwise_forward_for(row, kinds):
    """``elementwise_forward`` for one row (the CPU's specialises on the
    argument ``kinds``; a launch here already caches its kernel per kinds)."""
    return lambda out, args: elementwise.forward(row, out, args)


def elementwise_backward_for(row, wanted, kinds):
    """``elementwise_backward`` for one row and set of wanted gradients (as
    the CPU's, which specialises on the saved values' ``kinds``)."""
    wanted = tuple(wanted)
    return lambda grad, args, out: elementwise.backward(row, wanted, grad, args, out)


def elementwise_small_forward(row, kinds, out_dtype):
    """None: no inlined path for small calls (the CPU's is the serial kernel;
    here a launch costs more than the Python around it)."""
    return None


def elementwise_small_backward(row, wanted, dtype):
    """None, as ``elementwise_small_forward``."""
    return None


reduce_sum = reductions.reduce_sum
reduce_max = reductions.reduce_max
reduce_min = reductions.reduce_min
argmax = reductions.argmax
argmin = reductions.argmin
max_with_indices = reductions.max_with_indices
min_with_indices = reductions.min_with_indices
sum_to_shape = reductions.sum_to_shape
may_share_memory = memory.may_share_memory


def fused_softmax(x, axis):
    """None: the op's formula runs (rows and reductions on the device)."""
    return None


fused_log_softmax = fused_softmax


def fused_softmax_backward(grad, y, axis):
    """None, as ``fused_softmax``."""
    return None


fused_log_softmax_backward = fused_softmax_backward


def conv_columns(x, kernel, stride, dilation, pads, out_hw, out=None):
    """None: the generic im2col (strided device copies) runs instead."""
    return None


def conv_add_columns(cols, x_shape, kernel, stride, dilation, pads, out_hw, out=None):
    """None, as ``conv_columns``."""
    return None


def conv_output(rows, bias, out):
    """None: the bias is added and the rows permuted by device ops instead."""
    return None


conv_block_bytes = 0  # the whole batch: blocks would only add launches


def norm_row_stats_forward(x, eps, rms, weight, bias, groups, inner):
    """None: ``norm_row_stats`` then ``norm_row_forward`` run instead."""
    return None


concatenate = memory.concatenate
stack = memory.stack
split = memory.split
take_along_axis = memory.take_along_axis
put_along_axis = memory.put_along_axis
add_at = memory.add_at
from .normalization import (norm_channel_backward, norm_channel_forward,  # noqa: E402,F401
                            norm_channel_stats, norm_row_backward, norm_row_forward,
                            norm_row_stats, norm_running_update)
optimizer_update = updates.optimizer_update
optimizer_update_foreach = updates.optimizer_update_foreach
update_foreach_below = 0  # a launch per parameter: nothing is batched
# issue 15: gathers and scatters (backends/cuda/indexing.py) and sorting and
# selection (sorting.py: bitonic sorts, scans, atomics) on the device; index
# bounds checks and scatter_reduce's prod/amax/amin staged through the host
from . import indexing as _indexing  # noqa: E402
from . import sorting as _sorting  # noqa: E402
gather_along = _indexing.gather_along
index_select_along = _indexing.index_select_along
scatter_along = _indexing.scatter_along
first_out_of_range = _indexing.first_out_of_range
nonzero = _sorting.nonzero
sort_along = _sorting.sort_along
topk_along = _sorting.topk_along
searchsorted = _sorting.searchsorted
histc = _sorting.histc
unique = _sorting.unique

__all__ = sorted(_LAZY)


def zeros(shape, dtype):
    out = empty(shape, dtype)
    memory.fill(out, 0)
    return out


def full(shape, value, dtype):
    out = empty(shape, dtype)
    memory.fill(out, value)
    return out


def asarray(data, dtype=None):
    """A DeviceArray for ``data``: a DeviceArray (cast if ``dtype`` differs),
    anything with ``__cuda_array_interface__`` (wrapped without a copy), or
    host data (copied to the device)."""
    dtype = None if dtype is None else np.dtype(dtype)
    if not isinstance(data, DeviceArray) and hasattr(data, "__cuda_array_interface__"):
        data = from_cuda_array(data)
    if isinstance(data, DeviceArray):
        return data if dtype is None or data.dtype == dtype else data.astype(dtype)
    return to_device(np.asarray(data, dtype=dtype))


def to_numpy(a):
    """A host (NumPy) copy of a DeviceArray."""
    return a.copy_to_host()


def cast(a, dtype):
    return a.astype(dtype)


def ascontiguous(a):
    """``a`` itself when C-contiguous, else a C-contiguous copy."""
    return a if a.flags.c_contiguous else memory.copy(a)


def copy(a):
    return memory.copy(a)


def add(a, b):
    return elementwise.binary("add", a, b)


def add_into(dst, src):
    """``dst += src`` (``src`` broadcastable to ``dst``)."""
    elementwise.binary("add", dst, src, out=dst)


def _non_overlapping(a):
    """True when no two elements of the view share memory."""
    dims = sorted((abs(s), n) for s, n in zip(a.estrides, a.shape) if n > 1)
    reach = 1
    for stride, n in dims:
        if stride < reach:
            return False
        reach = stride * n
    return True


def write_into_view(base, view_fn, values):
    """``base[view] = values`` where ``view_fn`` looks (an overlapping view,
    such as an expand, accumulates with atomics)."""
    region = view_fn(base)
    if _non_overlapping(region):
        memory.copy_into(region, values)
    else:
        memory.add_into_view(region, values)


def kernel_argument(a):
    """``a`` as a user's ``@cuda.jit`` kernel takes it: a Numba device array
    over the same memory (the simulator's own kind under the simulator)."""
    if _runtime.simulator():
        from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray
        host = a._buf._ary
        view = np.lib.stride_tricks.as_strided(host[a.offset:], a.shape, a.strides)
        return FakeCUDAArray(view)
    return _runtime.cuda().as_cuda_array(a)


def data_pointer(a):
    """Device address of ``a``'s first element (``__cuda_array_interface__``'s)."""
    return a.__cuda_array_interface__["data"][0]


def where(condition, a, b):
    """``np.where`` on the device: DeviceArrays or scalars, broadcast; the
    result dtype is NumPy's promotion of ``a`` and ``b``."""
    from ...declarations.op_table import BY_NAME
    values = [x for x in (condition, a, b) if isinstance(x, DeviceArray)]
    shape = np.broadcast_shapes(*[x.shape for x in values])
    dtype = np.result_type(*[x.dtype if isinstance(x, DeviceArray) else x for x in (a, b)])
    args = [condition if isinstance(condition, DeviceArray) else np.bool_(condition)]
    for x in (a, b):
        if isinstance(x, DeviceArray):
            args.append(x if x.dtype == dtype else x.astype(dtype))
        else:
            args.append(memory.scalar(x, dtype))
    if isinstance(args[0], DeviceArray) and args[0].dtype != np.bool_:
        args[0] = args[0].astype(np.bool_)
    out = empty(shape, dtype)
    elementwise.forward(BY_NAME["where"], out, args)
    return out


def swap_last(a):
    return a.swapaxes(-1, -2)


def broadcast_to(a, shape):
    return a.broadcast_to(shape)


def as_strided(a, shape, strides):
    """A view with byte ``strides`` (``np.lib.stride_tricks.as_strided``)."""
    return a.as_strided(shape, strides)


def expand_dims(a, axis):
    return a.expand_dims(axis)


def squeeze(a, axis=None):
    return a.squeeze(axis)


def memory_stats():
    """The caching allocator's figures: bytes held by live buffers (and their
    peak), bytes cached for reuse, and allocations served from the cache
    (``hits``) or by the driver (``misses``)."""
    return pool.stats()


def empty_cache():
    """Give cached device buffers back to the driver."""
    pool.empty_cache()


def device_name():
    _runtime.require()
    return _runtime.device_name()


def device_count():
    """GPUs visible to this process (1 in the simulator, 0 without CUDA)."""
    if not _runtime.is_available():
        return 0
    return 1 if _runtime.simulator() else len(_runtime.cuda().gpus)


def max_pool_step(best, argmax, value, k):
    """One kernel offset of max pooling (see the CPU backend's), one fused kernel."""
    from . import pooling
    pooling.max_pool_step(best, argmax, value, k)


def max_pool2d_windows(x, kernel, stride, dilation, pads, out_hw, index_dtype):
    """None: the generic form (a fused step per kernel offset) runs instead."""
    return None


def max_pool2d_scatter(grad, argmax, x_shape, kernel, stride, dilation, pads):
    """None, as ``max_pool2d_windows``."""
    return None


def pool_index_dtype(count):
    return np.dtype(np.int64)


# -- recurrent cells: fused steps (cuda/recurrent.py), loaded on first use
def lstm_cell_forward(gi, gh, c, hc, ws):
    from . import recurrent
    recurrent.lstm_cell_forward(gi, gh, c, hc, ws)


def lstm_cell_backward(dhc, dh, dc, c, ws, dgates, dc_prev):
    from . import recurrent
    recurrent.lstm_cell_backward(dhc, dh, dc, c, ws, dgates, dc_prev)


def gru_cell_forward(gi, gh, h, h_out, ws):
    from . import recurrent
    recurrent.gru_cell_forward(gi, gh, h, h_out, ws)


def gru_cell_backward(dh_out, dh, h, ws, dgi, dgh, dh_prev):
    from . import recurrent
    recurrent.gru_cell_backward(dh_out, dh, h, ws, dgi, dgh, dh_prev)


def rnn_cell_forward(gi, gh, h_out, relu):
    from . import recurrent
    recurrent.rnn_cell_forward(gi, gh, h_out, relu)


def rnn_cell_backward(dh_out, dh, h, dgates, relu):
    from . import recurrent
    recurrent.rnn_cell_backward(dh_out, dh, h, dgates, relu)


def column_sums(a):
    return reductions.reduce_sum(a, 0)


def picked_sum(a, index, skip):
    """None: no single pass here (the loss checks targets on the host and gathers)."""
    return None


def take_per_row(a, index):
    return memory.take_along_axis(a, index, 1).reshape(-1)


def put_per_row(out, index, values):
    rows = index.shape[0]
    memory.put_along_axis(out, index, values.reshape(rows, 1) if values.ndim else
                          values.reshape(1, 1), 1)


# -- issue 15: products, scans and selections (backends/cuda/scans.py); dense
# linear algebra (linalg.py: staged through host memory, NumPy's LAPACK)
reduce_prod = reductions.reduce_prod
cumulative = scans.cumulative
cumulative_extremum = scans.cumulative_extremum
median_with_indices = scans.median_with_indices
mode_with_indices = scans.mode_with_indices
reduce_median = scans.reduce_median
linalg_inv = linalg.linalg_inv
linalg_solve = linalg.linalg_solve
linalg_det = linalg.linalg_det
linalg_svd = linalg.linalg_svd
ctc_loss = linalg.ctc_loss  # (issue 16: CTCLoss, host-staged as the solvers)
ctc_loss_backward = linalg.ctc_loss_backward


def fused_var(x, axes, dof):
    return None  # (the op's formula: reductions and elementwise kernels)


def fused_logsumexp(x, axes):
    return None
