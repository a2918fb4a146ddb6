"""The backend contract: every function a backend module provides, declared once.

A backend is a module (``nbgrad.backends.cpu``, ``nbgrad.backends.cuda``) that
works on its own raw arrays (NumPy arrays; numba-cuda device arrays) and knows
nothing of Tensor or autograd. The op declarations above call these functions
and nothing else of a backend, so a backend that provides all of them runs
every op. ``tests/backends/test_contract.py`` checks both backends against
:class:`Backend` (and the CUDA backend against :class:`CudaBackend`): every
name present, with these parameters.

Arrays are the backend's own; ``dtype`` is a NumPy dtype; ``shape`` a tuple;
``axis`` an int, a tuple of ints or None (all axes), already normalised.
"""
from typing import Any, Callable, NamedTuple, Protocol


class SmallKernels(NamedTuple):
    """A backend's kernels for small elementwise calls, which the op layer's
    straight-line code calls without dispatch."""
    kernel_for: Callable  # ndim -> the serial kernel for arrays of that many dimensions
    below: int  # calls of fewer elements take them
    new: Callable  # new(shape, dtype): the output's allocator
    sources: Any = None  # backward: what the kernel reads after ``g``, in order (-2: out)


class Backend(Protocol):
    """What every backend module defines (its functions take no ``self``)."""

    name: str
    """The device type: ``"cpu"`` or ``"cuda"``."""

    # -- memory ---------------------------------------------------------------
    def empty(self, shape, dtype):
        """An uninitialised C-contiguous array, from the backend's caching allocator."""

    def zeros(self, shape, dtype):
        """A C-contiguous array of zeros."""

    def full(self, shape, value, dtype):
        """A C-contiguous array with every element ``value``."""

    def asarray(self, data, dtype=None):
        """An array of this backend holding ``data`` (nested lists, NumPy or the
        other backend's arrays), copied only where needed."""

    def to_numpy(self, a):
        """``a`` as a NumPy array: itself on the CPU, a host copy from the GPU."""

    def cast(self, a, dtype):
        """A new array: ``a`` converted to ``dtype`` (NumPy's casting rules)."""

    def copy(self, a):
        """A C-contiguous copy of ``a``."""

    def ascontiguous(self, a):
        """``a`` itself when C-contiguous, else a C-contiguous copy."""

    def data_pointer(self, a):
        """The address of ``a``'s first element (for aliasing checks)."""

    def may_share_memory(self, a, b):
        """Whether ``a`` and ``b`` may overlap in memory (False only when they surely do not)."""

    def kernel_argument(self, a):
        """``a`` as a user's Numba kernel takes it (``nbgrad.kernel``), sharing its memory."""

    def checksum(self, a):
        """A 64-bit checksum of ``a``'s elements and their positions (one pass; an int)."""

    def memory_stats(self):
        """The caching allocator's counters, as a dict."""

    def empty_cache(self):
        """Return the allocator's cached free blocks to the system."""

    def set_num_threads(self, n):
        """The number of CPU threads parallel kernels use."""

    def get_num_threads(self):
        """The number of CPU threads parallel kernels use."""

    # -- elementwise kernels, generated from rows ------------------------------
    def elementwise_forward(self, row, out, args):
        """Write ``row(*args)`` into ``out`` (any layout; it may alias ``args[0]``
        for an in-place op). ``args`` are arrays of ``out``'s shape or NumPy scalars."""

    def elementwise_forward_for(self, row, kinds):
        """A forward ``f(out, args)`` specialised to argument kinds (``kinds``: one
        letter per input, ``"a"`` an array, ``"s"`` a scalar). It may carry
        ``f.new(shape, dtype, args) -> out``, which also allocates the result."""

    def elementwise_small_forward(self, row, kinds, out_dtype):
        """For the straight-line path: the ``SmallKernels`` that run small calls
        without dispatch, or None where the backend has none."""

    def elementwise_backward(self, row, wanted, grad, args, out):
        """The gradients of the inputs ``wanted`` (indices, in order) in one fused
        pass: a list of new arrays of ``grad``'s shape. ``args`` are the saved
        inputs (None where not saved), ``out`` the saved result or None."""

    def elementwise_jvp(self, row, active, out, tangent_out, args, tangents):
        """Forward mode in one fused pass: ``out = row(*args)`` and
        ``tangent_out``, the row's Jacobian times the tangents of the inputs
        listed in ``active`` (``tangents``, one array per active input),
        generated from the row's derivatives. Arrays have ``out``'s shape
        (broadcast views are fine); other arguments are NumPy scalars."""

    def elementwise_backward_for(self, row, wanted, kinds):
        """A backward ``run(grad, args, out)`` specialised to the saved values'
        kinds (as ``elementwise_forward_for``'s)."""

    def elementwise_small_backward(self, row, wanted, dtype):
        """As ``elementwise_small_forward``, for the fused backward; or None."""

    # -- arithmetic and reductions -----------------------------------------------
    def add(self, a, b):
        """A new array ``a + b`` (same shape; gradient accumulation)."""

    def add_into(self, dst, src):
        """``dst += src`` in place (``src`` broadcasts to ``dst``)."""

    def sum_to_shape(self, grad, shape):
        """``grad`` summed over the dimensions broadcasting added or stretched,
        to ``shape``: how the engine undoes broadcasting."""

    def matmul(self, a, b):
        """``a @ b`` with NumPy's matmul rules (batched, 1-D operands)."""

    def reduce_sum(self, a, axis=None, keepdims=False, dtype=None):
        """The sum over ``axis``, accumulated in (and returned as) ``dtype`` if given."""

    def reduce_max(self, a, axis=None, keepdims=False, zero_ties="last"):
        """The maximum over ``axis``, NaN propagating. ``zero_ties``: which of
        tied -0. and 0. is kept, ``"first"`` (PyTorch's amax) or ``"last"``."""

    def reduce_min(self, a, axis=None, keepdims=False, zero_ties="last"):
        """The minimum over ``axis``; as ``reduce_max``."""

    def argmax(self, a, axis=None, keepdims=False):
        """Index of the first maximum (NaN counts as the maximum) over ``axis``, int64."""

    def argmin(self, a, axis=None, keepdims=False):
        """Index of the first minimum over ``axis``, int64."""

    def max_with_indices(self, a, axis, keepdims=False):
        """``(values, indices)`` of the maximum over one axis (PyTorch's ``max(dim)``)."""

    def min_with_indices(self, a, axis, keepdims=False):
        """``(values, indices)`` of the minimum over one axis."""

    # Fused kernels the op declarations use where a backend has them; each
    # returns None where it has none (for this backend or this layout), and
    # the op computes its formula from rows and reductions instead.
    def fused_softmax(self, x, axis):
        """Softmax over ``axis`` in one pass per row, a new C-contiguous array; or None."""

    def fused_log_softmax(self, x, axis):
        """Log-softmax over ``axis`` in one pass per row; or None."""

    def fused_softmax_backward(self, grad, y, axis):
        """Softmax's input gradient from its output ``y`` in one pass per row; or None."""

    def fused_log_softmax_backward(self, grad, y, axis):
        """Log-softmax's input gradient from its output in one pass per row; or None."""

    def conv_columns(self, x, kernel, stride, dilation, pads, out_hw, out=None):
        """A 2-D convolution's im2col in one pass: the windows of (N, C, H, W)
        ``x`` zero-padded by ``pads`` (top, bottom, left, right) as an
        (N*Ho*Wo, kh*kw*C) matrix, channels innermost, new or written into
        ``out`` (C-contiguous); or None."""

    def conv_add_columns(self, cols, x_shape, kernel, stride, dilation, pads, out_hw, out=None):
        """The adjoint of ``conv_columns`` in one pass: the (N*Ho*Wo, kh*kw*C)
        column gradient added back where it was read, as a new (N, C, H, W)
        array or into ``out`` (C-contiguous), padding dropped; or None."""

    def conv_output(self, rows, bias, out):
        """A convolution's output from its GEMM in one pass: the (N*Ho*Wo, O)
        ``rows`` plus ``bias`` (O,) (None: no bias) written into the
        C-contiguous (N, O, Ho, Wo) ``out``, returned; or None."""

    conv_block_bytes: int
    """A convolution makes its im2col columns and runs its GEMMs for a block of
    images at a time whose columns take at most this many bytes (0: the whole
    batch at once)."""

    def where(self, condition, a, b):
        """A new array: ``a`` where ``condition``, else ``b`` (broadcast)."""

    # -- views and layout --------------------------------------------------------
    def broadcast_to(self, a, shape):
        """A read-only broadcast view of ``a``."""

    def as_strided(self, a, shape, strides):
        """A view of ``a``'s memory with ``shape`` and byte ``strides``."""

    def expand_dims(self, a, axis):
        """A view with a new axis of size one at ``axis``."""

    def squeeze(self, a, axis=None):
        """A view without the size-one ``axis`` (all of them when None)."""

    def swap_last(self, a):
        """A view with the last two axes swapped."""

    def write_into_view(self, base, view_fn, values):
        """``base[view] = values`` in place, where ``view_fn(base)`` looks; where
        the view maps several elements onto one memory location (an expand),
        each of their values is added into that location instead."""

    # -- joining and indexing ------------------------------------------------------
    def concatenate(self, arrays, axis=0, dtype=None):
        """The arrays joined along an existing axis, in a new array of ``dtype``."""

    def stack(self, arrays, axis=0, dtype=None):
        """The arrays joined along a new axis."""

    def split(self, a, bounds, axis):
        """Views of ``a`` between consecutive ``bounds`` along ``axis``."""

    def take_along_axis(self, a, indices, axis):
        """NumPy's ``take_along_axis``: a new array."""

    def put_along_axis(self, a, indices, values, axis):
        """NumPy's ``put_along_axis``: writes into ``a``."""

    def add_at(self, a, key, values):
        """``a[key] += values``, accumulating repeated indices (NumPy's ``add.at``)."""

    def max_pool_step(self, best, argmax, value, k):
        """One window offset of max pooling: where ``value`` beats ``best`` (or is
        NaN), write it there and record offset ``k`` in ``argmax``."""

    def max_pool2d_windows(self, x, kernel, stride, dilation, pads, out_hw, index_dtype):
        """2-D max pooling in one pass: (maximum, kernel offset of it, in
        ``index_dtype``) of each window of (N, C, H, W) ``x`` padded by ``pads``
        (top, bottom, left, right) with -inf, offsets taken as
        ``max_pool_step`` takes them; or None."""

    def max_pool2d_scatter(self, grad, argmax, x_shape, kernel, stride, dilation, pads):
        """The adjoint of ``max_pool2d_windows`` in one pass: a new (N, C, H,
        W) array of zeros with each output's ``grad`` added at its pick; or None."""

    def pool_index_dtype(self, count):
        """The integer dtype ``max_pool_step`` records the offsets of windows
        of ``count`` offsets in (the smallest that serves, or int64)."""

    # -- recurrent cells (fused steps; see backends/recurrent_source.py) ----------
    def lstm_cell_forward(self, gi, gh, c, hc, ws):
        """One LSTM step from the step's products ``gi``/``gh`` (B, 4H) and the
        cell state ``c`` (B, H): [h | c] into ``hc`` (B, 2H), the gates and
        tanh(c) into ``ws`` (B, 5H). 2-D operands, rows contiguous."""

    def lstm_cell_backward(self, dhc, dh, dc, c, ws, dgates, dc_prev):
        """Its gradients: from ``dhc`` (B, 2H) plus the recurrent ``dh``/``dc``
        (B, H), the gates' gradient into ``dgates`` (B, 4H) (both products')
        and the previous cell state's into ``dc_prev``."""

    def gru_cell_forward(self, gi, gh, h, h_out, ws):
        """One GRU step (``gh`` holds b_hh): the new state into ``h_out`` (B, H),
        r, z, n and gh_n into ``ws`` (B, 4H)."""

    def gru_cell_backward(self, dh_out, dh, h, ws, dgi, dgh, dh_prev):
        """Its gradients: both products' into ``dgi``/``dgh`` (B, 3H), the
        previous state's direct part into ``dh_prev``."""

    def rnn_cell_forward(self, gi, gh, h_out, relu):
        """``h_out = tanh(gi + gh)`` (or relu)."""

    def rnn_cell_backward(self, dh_out, dh, h, dgates, relu):
        """``dgates = (dh_out + dh) * activation'`` from the step's output ``h``."""

    # -- layers and losses -------------------------------------------------------
    def column_sums(self, a):
        """The sums over axis 0 of a 2-D array (a layer's bias gradient), the
        same to the bit as ``np.add.reduce(a, axis=0)`` on the CPU."""

    def picked_sum(self, a, index, skip):
        """One pass over a 2-D array and a 1-D int64 host array ``index``: ``(the
        sum of a[i, index[i]] over the rows whose index is not skip, as a Python
        float; how many rows those are; the first row whose index is outside
        [0, columns) and not skipped, or -1)``. None where the backend has no such
        pass (the caller then checks and gathers with ``take_per_row``)."""

    def take_per_row(self, a, index):
        """A new 1-D array: ``a[i, index[i, 0]]`` for every row of a 2-D ``a``
        (``index``: (rows, 1) int64 of this backend, in range)."""

    def put_per_row(self, out, index, values):
        """``out[i, index[i, 0]] = values[i]`` for every row of a 2-D ``out``, or
        ``values`` itself in every row where it is one NumPy scalar."""

    # -- normalization (issue 16): fused kernels, see backends/cpu/normalization.py.
    # Rows: ``x`` (R, D), statistics per row; the affine parameter of (r, d) is
    # channel (r % groups) * (D // inner) + d // inner. Channels: ``x`` (A, C, B),
    # statistics per channel. All arrays C-contiguous, statistics in x's dtype.
    def norm_row_stats(self, x, eps, rms):
        """``(mean, rstd)`` per row: rstd = 1 / sqrt(var + eps) (rms: mean 0, mean square)."""

    def norm_row_forward(self, x, mean, rstd, weight, bias, groups, inner):
        """``(x - mean) * rstd * weight + bias`` (weight, bias None: left out), one pass."""

    def norm_row_stats_forward(self, x, eps, rms, weight, bias, groups, inner):
        """``norm_row_stats`` and ``norm_row_forward`` in one pass over ``x``:
        ``(out, mean, rstd)``; or None where the backend has no such kernel."""

    def norm_row_backward(self, grad, x, mean, rstd, weight, groups, inner, rms, want_dx):
        """``(dx or None, dw, db)``: the input gradient, and per channel (groups *
        D // inner of them) the sums of ``grad * xhat`` and of ``grad``."""

    def norm_channel_stats(self, x, eps):
        """``(mean, biased var, rstd)`` per channel of (A, C, B) ``x``."""

    def norm_running_update(self, running, batch, momentum, scale):
        """In place: ``running = (1 - momentum) * running + momentum * scale * batch``
        (a running statistic; both 1-D of one dtype)."""

    def norm_channel_forward(self, x, mean, rstd, weight, bias):
        """``(x - mean[c]) * rstd[c] * weight[c] + bias[c]``, one pass."""

    def norm_channel_backward(self, grad, x, mean, rstd, weight, train, want_dx):
        """``(dx or None, dw, db)`` of batch norm; ``train``: the statistics were
        the batch's (their gradient flows into dx), else fixed running ones."""

    # -- optimizers ----------------------------------------------------------------
    update_foreach_below: int
    """Parameters of fewer elements may be updated together, in one
    ``optimizer_update_foreach`` call (0: none)."""

    def optimizer_update(self, update, arrays, scalars):
        """Run the fused ``update`` (a ``declarations.optimizer_updates.Update``)
        in place, in one pass: ``arrays`` are its array parameters (flat,
        C-contiguous, one dtype), ``scalars`` its scalars (of that dtype) and
        flags (bools), in the update's order."""

    def optimizer_update_foreach(self, update, arrays, scalars):
        """``optimizer_update`` of several parameters, in order: each of ``arrays``
        is a tuple (one array per parameter) of writeable arrays of one type."""

    # -- issue 15: gathers, scatters, sorting and selection ----------------------
    # (nbgrad/ops/scatter.py, sorting.py; CPU: backends/cpu/indexing.py,
    # sorting.py; CUDA: backends/cuda/indexing.py)
    def gather_along(self, a, indices, axis):
        """PyTorch's gather: a new C-contiguous array of ``indices``' shape,
        ``out[i] = a[i with the axis coordinate replaced by indices[i]]``
        (``indices``: of this backend, integer, in range, no larger than ``a``
        apart from ``axis``; it may be a broadcast view)."""

    def index_select_along(self, a, index, axis):
        """PyTorch's index_select: a new C-contiguous array of ``a``'s entries
        along ``axis`` at the 1-D ``index`` (integer, in range, of this backend)."""

    def scatter_along(self, a, indices, values, axis, reduce=None):
        """In place, over ``indices``' shape: ``a[i, axis -> indices[i]] =
        values[i]``, or combined with what is there by ``reduce`` ("sum",
        "prod", "amax", "amin"; repeated indices accumulate). ``values``: an
        array of ``indices``' shape (a view, maybe broadcast) or a NumPy scalar
        of ``a``'s dtype."""

    def first_out_of_range(self, indices, low, high):
        """The first element of ``indices`` (C order) outside [low, high), as
        a Python int, or None when all are in range."""

    def nonzero(self, a):
        """The coordinates of the nonzero elements (NaN counts), (count, ndim)
        int64, laid out as PyTorch's (each dim's coordinates contiguous)."""

    def sort_along(self, a, axis, descending=False):
        """``(values, indices)`` of ``a`` sorted stably along ``axis`` (NaN
        after everything, or first when ``descending``): new C-contiguous
        arrays, indices int64."""

    def topk_along(self, a, k, axis, largest=True):
        """``(values, indices)`` of the ``k`` largest (smallest) elements along
        ``axis``, best first (NaN the largest)."""

    def searchsorted(self, boundaries, values, right):
        """int64 insertion positions of ``values`` in the sorted rows of
        ``boundaries`` (1-D: one row for all; else rows matching ``values``'
        leading dims): before equal elements, or after them with ``right``."""

    def histc(self, a, bins, low, high):
        """The counts, in ``a``'s dtype, of ``a``'s elements in ``bins`` equal
        bins over [low, high] (high in the last; others, NaN, not counted)."""

    def unique(self, a, return_inverse, return_counts, consecutive=False):
        """``(values, inverse, counts)`` of the flattened ``a`` (None where not
        asked for): sorted distinct values (NaNs each distinct), or with
        ``consecutive`` one per run of equal elements; ``inverse`` int64 of
        ``a``'s shape, ``counts`` int64."""

    # -- issue 15: products, scans and selections, dense linear algebra ----------
    # (nbgrad/ops/statistics.py, scans.py, linalg_dense.py; CPU: backends/cpu/scans.py,
    # selection.py, linalg.py; CUDA: backends/cuda/scans.py, linalg.py)
    def reduce_prod(self, a, axis=None, keepdims=False, dtype=None):
        """The product over ``axis``, in ``dtype`` if given (int64 for bool and
        integer inputs, as ``reduce_sum``)."""

    def cumulative(self, a, axis, op, dtype=None, reverse=False):
        """The inclusive scan of ``op`` ("sum" or "prod") along one ``axis``
        (from the end with ``reverse``), in ``dtype`` (``a``'s when None; ``a``
        is cast to it first), accumulated in float64 for floats and int64 for
        integers: a new C-contiguous array."""

    def cumulative_extremum(self, a, axis, op):
        """``(values, indices)`` of the running ``op`` ("max" or "min") along
        ``axis``: a later element takes over when it is NaN or, the running
        value being no NaN, ``>=`` (``<=``) it, as PyTorch's cummax/cummin.
        New C-contiguous arrays; indices int64."""

    def median_with_indices(self, a, axis, ignore_nan=False):
        """``(values, indices)`` of the lower median along ``axis`` (removed):
        a NaN gives NaN (the first one's position), or, with ``ignore_nan``, is
        left out (a line of NaNs gives NaN at position 0). Of tied values, the
        position a stable sort puts at the median's place."""

    def mode_with_indices(self, a, axis):
        """``(values, indices)`` of the most frequent value along ``axis``
        (removed): of equally frequent values the smallest, at its last position."""

    def reduce_median(self, a, ignore_nan=False):
        """The lower median of all elements of ``a`` (a 0-d array; NaN as
        ``median_with_indices``)."""

    def linalg_inv(self, a):
        """``(inverses, info)`` for the square matrices of ``a`` (..., n, n):
        ``info`` a host int64 array of the batch shape, LAPACK getrf's (0, or
        the 1-based index of the first zero pivot: the inverses are then None)."""

    def linalg_solve(self, a, b):
        """``(X, info)`` with ``a @ X == b`` for ``b`` (..., n, k) of ``a``'s batch
        shape; ``info`` as ``linalg_inv``'s."""

    def linalg_det(self, a):
        """The determinants of the square matrices of ``a``."""

    def linalg_svd(self, a, full_matrices=True, compute_uv=True):
        """``(U, S, Vh, info)``: the singular value decompositions of the
        matrices of ``a`` (..., m, n), singular values descending (U and Vh
        None without ``compute_uv``); ``info`` a host int64 array of the
        batch shape: 0, 1 for a matrix with a NaN, 2 where the algorithm
        failed (the results are then None)."""

    def ctc_loss(self, log_probs, targets, input_lengths, target_lengths, blank):
        """``(nll, log_alpha)``: the CTC loss of each sequence (N,) of ``log_probs``
        (T, N, C) and its forward variables (opaque, for ``ctc_loss_backward``);
        ``targets`` (N, S) and the lengths (N,) are host int64 arrays, checked."""

    def ctc_loss_backward(self, grad, log_probs, targets, input_lengths, target_lengths, blank,
                          nll, log_alpha, zero_infinity):
        """PyTorch's gradient (T, N, C) of ``sum(grad * nll)`` in ``log_probs``
        (zero for a sequence of infinite loss with ``zero_infinity``)."""

    def fused_var(self, x, axes, dof):
        """The sum of squared deviations from the mean over ``axes``, divided by
        ``dof``, in one pass per row (reduced dims removed); or None."""

    def fused_logsumexp(self, x, axes):
        """``log(sum(exp(x)))`` over ``axes``, shifted by the maximum, in one
        pass per row (reduced dims removed); or None."""

    # -- issue 15: random numbers, drawn where the array lives --------------------
    def random_stream(self, seed, stream=None):
        """A stream of random numbers seeded with ``seed`` (an int in [0, 2**64));
        ``stream``: one of this backend's to reseed (the CPU's in place)."""

    def random_fill(self, stream, shape, dtype, kind, a=0.0, b=1.0):
        """A new C-contiguous array drawn from ``stream``: ``kind`` "uniform" [a, b),
        "normal" (mean a, std b), "bernoulli" (p a), "exponential" (rate a),
        "geometric" (p a), "cauchy" (median a, scale b), "log_normal" (a, b of the
        log), "integers" [a, b)."""

    def random_state(self, stream):
        """The stream's state as a host uint8 NumPy array."""

    def set_random_state(self, stream, state):
        """Restore a state ``random_state`` gave; False if its size is wrong."""


class CudaBackend(Backend, Protocol):
    """The CUDA backend's further functions (availability, devices, transfers)."""

    def is_available(self):
        """True when CUDA kernels can run here (a GPU and driver, or the simulator); never raises."""

    def require(self):
        """Raise RuntimeError saying why CUDA is unusable and what to install."""

    def simulator(self):
        """True when kernels run in Numba's CUDA simulator."""

    def synchronize(self):
        """Wait for every kernel launched so far to finish."""

    DeviceArray: type
    """nbgrad's strided device-array type."""

    def to_device(self, array, dtype=None):
        """A device copy of a host array."""

    def from_cuda_array(self, obj):
        """A device array sharing memory with an object that has ``__cuda_array_interface__``."""

    def device_name(self):
        """The GPU's name (the simulator's, under ``NUMBA_ENABLE_CUDASIM``)."""

    def device_count(self):
        """How many GPUs the driver sees."""


def names(protocol):
    """The members ``protocol`` declares, in declaration order (its bases' first)."""
    found = []
    for cls in reversed(protocol.__mro__):
        if cls in (Backend, CudaBackend):
            for name in [*cls.__dict__.get("__annotations__", ()), *vars(cls)]:
                if not name.startswith("_") and name not in found:
                    found.append(name)
    return found
