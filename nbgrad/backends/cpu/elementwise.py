"""CPU elementwise kernels generated from op rows.

For each row the forward kernel writes ``out[i] = forward(x0[i], x1[i], ...)``
and the fused backward kernel computes every requested input gradient in one
pass over memory. Kernels are specialised by the number of (coalesced)
dimensions and by which arguments are scalars; Numba then specialises by dtype
and memory layout. Small arrays run a serial loop, large ones a ``prange`` loop.
"""
import functools
import os

import numba
import numpy as np

from ..contract import SmallKernels
from ..kernel_source import backward_reads, jvp_body_lines, jvp_helpers, load_module
from . import half as _half
from .allocator import _SMALL_COUNT, POOL_MIN_BYTES, pool

# Elements from which the prange loop beats the serial one (python -m
# kernels.parallel_threshold, 2 threads): waking passively waiting OpenMP
# threads (nbgrad's default, see nbgrad/__init__.py) costs ~40 us, so relu, add
# and sigmoid pay off from 2^19-2^20 elements; spinning threads cost ~3 us
# (from 2^15-2^16), but spin against BLAS.
_SPINNING = os.environ.get("OMP_WAIT_POLICY", "").upper() == "ACTIVE"
PARALLEL_THRESHOLD = 1 << 16 if _SPINNING else 1 << 19

_forward_kernels = {}
_backward_kernels = {}
_FLOAT16 = _half.FLOAT16


def _inline(fn):
    return numba.njit(inline="always", cache=False)(fn)


def _loop_lines(ndim, shape_of):
    lines = [f"    n{k} = {shape_of}.shape[{k}]" for k in range(ndim)]
    for k in range(ndim):
        loop = "prange" if k == 0 else "range"
        lines.append("    " * (k + 1) + f"for i{k} in {{{loop}}}(n{k}):")
    return lines


def _module_source(signature, ndim, body_for, shape_of, fast=None):
    """Source with a serial and a parallel version of the same loop nest.

    ``fast``: ``(fast_body_for, check_for)`` for a row with a ``FastPath``:
    the innermost loop then runs in blocks, each first checking every
    element (``check_for(index)``, a vectorizable and-reduction) and then
    running the fast body or the general one over the whole block, so both
    loops vectorize and only blocks holding a large, inf or nan argument pay
    for the general code."""
    index = ", ".join(f"i{k}" for k in range(ndim))
    if fast is None:
        nest = "\n".join(_loop_lines(ndim, shape_of))
        body = "\n".join("    " * (ndim + 1) + line for line in body_for(f"[{index}]"))
    else:
        nest, body = _blocked_nest(ndim, shape_of, body_for, *fast, f"[{index}]")
    text = []
    for variant, loop, options in (("serial", "range", ""), ("parallel", "prange", "parallel=True, ")):
        text.append(
            f"@numba.njit({options}cache=True, nogil=True, error_model=\"numpy\")\n"
            f"def {variant}({signature}):\n"
            + nest.format(prange=loop, range="range") + "\n" + body + "\n")
    return "import numba\nfrom numba import prange\n\n\n" + "\n\n".join(text)


# Elements per block of a FastPath kernel: small enough that the check's
# reads are still in L1 when the block is computed, large enough that the
# per-block work (check, branch, loop set-up) is noise. python -m
# kernels.math_study --blocks, sin at 1e7: 256-1024 within 3% (float32) /
# 4% (float64), 512 best or tied; 4096 and up 5-10% slower.
FAST_BLOCK = 512


def _blocked_nest(ndim, shape_of, body_for, fast_body_for, check_for, index):
    """The loop nest with its innermost loop over blocks (see _module_source);
    ``{prange}`` goes on the outermost loop: the blocks of a 1-D kernel."""
    last = ndim - 1
    outer = _loop_lines(ndim, shape_of)[:ndim + last]  # the shapes, the outer loops
    pad = "    " * (last + 1)
    block_loop = "prange" if last == 0 else "range"
    # An unsigned index, range(size) and i = start + j: LLVM must see the
    # indices are contiguous and never negative (no wraparound select), or it
    # gathers and scatters; range(start, stop) or a signed start (from the
    # prange scheduler) hide that.
    element = f"i{last} = numba.uint64(start + j)"
    lines = outer + [
        f"{pad}for b in {{{block_loop}}}((n{last} + {FAST_BLOCK - 1}) // {FAST_BLOCK}):",
        f"{pad}    start = b * {FAST_BLOCK}",
        f"{pad}    size = min({FAST_BLOCK}, n{last} - start)",
        f"{pad}    small = True",
        f"{pad}    for j in range(size):",
        f"{pad}        {element}",
        f"{pad}        small &= {check_for(index)}",
        f"{pad}    if small:",
        f"{pad}        for j in range(size):",
        f"{pad}            {element}",
        *(f"{pad}            {line}" for line in fast_body_for(index)),
        f"{pad}    else:",
        f"{pad}        for j in range(size):",
        f"{pad}            {element}",
    ]
    body = "\n".join(f"{pad}            {line}" for line in body_for(index))
    return "\n".join(lines), body


def _fast_check(path, names, is_array, half=frozenset()):
    """``check_for``: every named operand within ``abs(x) <= path.limit``, or
    ``fits(*operands)`` for a path with ``fits`` (false for nan, so nan takes
    the general path)."""
    def check_for(ix):
        if path.fits is not None:
            return "fits(" + ", ".join(_read(n, ix, is_array[n], half) for n in names) + ")"
        terms = [f"(abs({_read(n, ix, is_array[n], half)}) <= {path.limit!r})" for n in names]
        return " & ".join(terms) if terms else "True"
    return check_for


def _read(name, ix, is_array, half):
    """How a kernel reads operand ``name``: an element of an array (through
    ``load_half`` for a float16 one, see half.py) or a scalar."""
    if not is_array:
        return name
    return f"load_half({name}{ix})" if name in half else name + ix


def _store(name, ix, value, half):
    return f"{name}{ix} = " + (f"store_half({value})" if name in half else value)


def _half_helpers(helpers, half):
    if half:
        helpers.update(load_half=_half.load_half, store_half=_half.store_half)
    return helpers


def _forward_module(row, kinds, ndim, half=frozenset()):
    """``half``: the operands ("out", "x0", ...) that are float16 arrays (as bits)."""
    args = [f"x{k}" for k in range(len(kinds))]
    is_array = {a: kind == "a" for a, kind in zip(args, kinds)}

    def call(fn):
        def body(ix):
            operands = ", ".join(_read(a, ix, is_array[a], half) for a in args)
            return [_store("out", ix, f"{fn}({operands})", half)]
        return body

    helpers = _half_helpers({"forward": row.forward}, half)
    fast = None
    path = getattr(row, "fast_path", None)
    if path is not None:
        helpers["forward_fast"] = path.forward
        if path.fits is not None:
            helpers["fits"] = path.fits
        fast = (call("forward_fast"), _fast_check(path, args, is_array, half))
    source = _module_source(", ".join(["out", *args]), ndim, call("forward"), "out", fast)
    return load_module(source, helpers, _inline, f"{row.name}_fwd", readonly_inputs=True)


def _backward_module(row, wanted, kinds, ndim, half=frozenset()):
    """``half``: the operands ("g", "x0", "out", "grad0", ...) that are float16 (as bits)."""
    reads, names = backward_reads(row, wanted)
    is_array = {f"x{k}": kind == "a" for k, kind in enumerate(kinds)}
    is_array.update(g=True, out=True)
    path = getattr(row, "fast_path", None)
    fast_grads = {} if path is None else {
        i: fn for i in wanted if (fn := path.derivative(i, row)) is not None}

    def body_with(fast):
        def body(ix):
            lines = []
            for i in wanted:
                operands = ", ".join(
                    _read(names[p], ix, is_array[names[p]], half) for p in row.grad_params(i))
                fn = f"derivative{i}_fast" if fast and i in fast_grads else f"derivative{i}"
                lines.append(_store(f"grad{i}", ix, f"{fn}({operands})", half))
            return lines
        return body

    helpers = _half_helpers({f"derivative{i}": row.derivative(i) for i in wanted}, half)
    fast = None
    if fast_grads:
        helpers.update({f"derivative{i}_fast": fn for i, fn in fast_grads.items()})
        # The limit is on the inputs the derivatives read, not on g or out;
        # ``fits`` takes every input (the derivatives then read them all).
        checked = [n for n in reads if n.startswith("x")]
        if path.fits is not None:
            helpers["fits"] = path.fits
            checked = [f"x{k}" for k in range(len(row.inputs))]
            assert all(n in reads for n in checked), row.name
        fast = (body_with(True), _fast_check(path, checked, is_array, half))
    source = _module_source(", ".join([*reads, *(f"grad{i}" for i in wanted)]), ndim,
                            body_with(False), "g", fast)
    return load_module(source, helpers, _inline, f"{row.name}_bwd", readonly_inputs=True)


def _coalesce(shape, arrays):
    """Merge dimensions that are contiguous for every array (and drop size-1
    ones), so most work runs as a flat 1-D loop that LLVM can vectorize."""
    if len(shape) == 1:  # already flat (strided and broadcast inputs included)
        return 1, arrays
    for a in arrays:
        if not a.flags.c_contiguous:
            break
    else:  # the common case, kept cheap
        return 1, [a.reshape(-1) for a in arrays]
    dims = [(n, [a.strides[k] for a in arrays]) for k, n in enumerate(shape) if n != 1]
    merged = []
    for n, strides in dims:
        if merged and all(ps == s * n for ps, s in zip(merged[-1][1], strides)):
            merged[-1] = (merged[-1][0] * n, strides)
        else:
            merged.append((n, strides))
    if not merged:
        merged = [(1, [a.itemsize for a in arrays])]
    new_shape = tuple(n for n, _ in merged)
    # Each array's strides allow the merge, so this reshape is a view (copy=False
    # would raise otherwise); it costs a tenth of as_strided.
    return len(new_shape), [a.reshape(new_shape, copy=False) for a in arrays]


def _variant(module, size):
    return module.parallel if size >= PARALLEL_THRESHOLD else module.serial


def _forward_plan(row, types, ndim):
    """The kernel module and argument kinds for one call signature."""
    kinds = "".join("s" if issubclass(t, np.generic) else "a" for t in types)
    key = (row, kinds, ndim)
    module = _forward_kernels.get(key)
    if module is None:
        module = _forward_kernels[key] = _forward_module(row, kinds, ndim)
    return module, kinds


# (row, argument types, ndim of out) -> (kernel module, kinds): a dict hit per
# call instead of building the kinds string and key every time.
_forward_plans = {}


def forward_for(row, kinds):
    """``forward`` for arguments of known kinds ("a" array, "s" scalar per
    argument): ``run(out, args)``; the flat case is a kernel call. The runner
    also offers ``run.new(shape, dtype, args) -> out``, the same into a new
    array: a small flat output comes straight from ``np.empty`` (the pool
    would hand it there anyway), saving the allocator's Python layers."""
    pooled = pool.empty
    if "h" in kinds:  # a float16 argument: see _half_forward
        def run(out, args):
            _half_forward(row, out, args)

        def new(shape, dtype, args):
            out = pooled(shape, dtype)
            _half_forward(row, out, args)
            return out
        run.new = new
        return run

    # No float16 array among the arguments (the op layer sends a float16
    # result of other arguments to ``forward``), so no float16 test per call.
    module = _forward_plan(row, tuple(np.generic if k == "s" else np.ndarray for k in kinds), 1)[0]
    serial, parallel = module.serial, module.parallel
    empty = np.empty

    def run(out, args):
        if out.ndim != 1:
            return _forward(row, out, args)
        (serial if out.shape[0] < PARALLEL_THRESHOLD else parallel)(out, *args)

    def new(shape, dtype, args):
        if len(shape) == 1:
            n = shape[0]
            out = empty(shape, dtype) if n < _SMALL_COUNT else pooled(shape, dtype)
            (serial if n < PARALLEL_THRESHOLD else parallel)(out, *args)
            return out
        out = pooled(shape, dtype)
        _forward(row, out, args)
        return out

    run.new = new
    return run


def _small_count(dtype):
    """Elements below which an array of ``dtype`` takes the serial kernel and
    np.empty (fewer bytes than the pool takes)."""
    return min(POOL_MIN_BYTES // np.dtype(dtype).itemsize, PARALLEL_THRESHOLD)


def small_forward(row, kinds, out_dtype):
    """``(kernel_for, below, new)`` for calls whose array arguments all have
    one shape (any layout; numbers per ``kinds``): under ``below`` elements the
    whole forward is ``kernel_for(ndim)(out, *args)`` (the serial loop nest
    for ``ndim >= 1`` dimensions) into ``out = new(shape, out_dtype)``
    (np.empty: small arrays skip the pool), for callers that inline it."""
    types = tuple(np.ndarray if k == "a" else np.generic for k in kinds)
    if np.dtype(out_dtype) == _half.FLOAT16:  # the general path takes float16 as bits
        return None

    def kernel_for(ndim):
        return _forward_plan(row, types, ndim)[0].serial
    return SmallKernels(kernel_for, _small_count(out_dtype), np.empty)


def forward(row, out, args):
    """Write ``row.forward(*args)`` into ``out``. Array arguments must already
    have ``out``'s shape (broadcast views are fine); others are NumPy scalars."""
    if _has_half(out, args):  # Numba has no float16: see _half_forward
        return _half_forward(row, out, args)
    return _forward(row, out, args)


def _forward(row, out, args):
    """``forward`` where no argument and not ``out`` is float16."""
    if out.ndim == 1:  # flat already (strided and broadcast inputs included): no coalescing
        key = (row, out.ndim, *map(type, args))
        plan = _forward_plans.get(key)
        if plan is None:
            plan = _forward_plans[key] = _forward_plan(row, key[2:], 1)
        module = plan[0]
        (module.serial if out.shape[0] < PARALLEL_THRESHOLD else module.parallel)(out, *args)
        return
    kinds = ""
    arrays = [out]
    for a in args:
        if isinstance(a, np.generic):
            kinds += "s"
        else:
            kinds += "a"
            arrays.append(a)
    ndim, views = _coalesce(out.shape, arrays)
    if len(views) > 1:
        remaining = iter(views[1:])
        args = [a if kind == "s" else next(remaining) for a, kind in zip(args, kinds)]
    key = (row, kinds, ndim)
    module = _forward_kernels.get(key)
    if module is None:
        module = _forward_kernels[key] = _forward_module(row, kinds, ndim)
    _variant(module, out.size)(views[0], *args)


@functools.lru_cache(maxsize=None)
def _backward_plan(row, wanted, kinds):
    """Which values the fused kernel reads, in its argument order: for each,
    where it comes from (-1: ``g``, -2: ``out``, k: input k) and whether it
    is an array."""
    reads, _ = backward_reads(row, wanted)
    scalar = {f"x{k}" for k, kind in enumerate(kinds) if kind == "s"}
    sources = tuple(-1 if name == "g" else -2 if name == "out" else int(name[1:]) for name in reads)
    return reads, tuple(name not in scalar for name in reads), sources


# (row, wanted, argument types) -> a function for the flat case (see _flat_backward).
_backward_plans = {}


def _flat_backward(row, wanted, types, fallback=None):
    """Straight-line code for one call signature of a 1-D backward: check that
    the saved inputs need no broadcasting, allocate the gradients, call the
    kernel. Where that does not hold (an input must be broadcast, or with a
    ``fallback`` also a gradient that is not 1-D) it returns None, or what
    ``fallback(row, wanted, grad, args, out)`` returns."""
    kinds = "".join("a" if t is type(None) or not issubclass(t, np.generic) else "s" for t in types)
    _, is_array, sources = _backward_plan(row, wanted, kinds)
    key = (row, wanted, kinds, 1)
    module = _backward_kernels.get(key)
    if module is None:
        module = _backward_kernels[key] = _backward_module(row, wanted, kinds, 1)
    operand = {-1: "grad", -2: "out"}
    checks = sorted({k for k, array in zip(sources, is_array) if array and k >= 0})
    grads = [f"grad{i}" for i in range(len(wanted))]
    miss = "return None" if fallback is None else "return fallback(row, wanted, grad, args, out)"
    # Numba has no float16: a float16 gradient or saved array goes to _half_backward
    # (one identity test per array the kernel reads; the saved ones are never None).
    halves = " or ".join(f"{operand.get(k, f'args[{k}]')}.dtype is FLOAT16"
                         for k, array in zip(sources, is_array) if array)
    lines = ["def run(grad, args, out):",
             f"    if {halves or 'False'}:",
             "        return half(row, wanted, grad, args, out)",
             "    shape = grad.shape"]
    if fallback is not None:
        lines.append(f"    if len(shape) != 1:\n        {miss}")
    lines += [f"    if args[{k}].shape != shape:\n        {miss}" for k in checks]
    call = ", ".join([operand.get(k, f"args[{k}]") for k in sources] + grads)
    # Gradients below the pool's minimum come straight from np.empty.
    lines.append("    dtype = grad.dtype")
    lines.append("    new = empty if shape[0] < SMALL_COUNT else pooled")
    lines += [f"    {g} = new(shape, dtype)" for g in grads]
    lines.append(f"    (serial if shape[0] < PARALLEL_THRESHOLD else parallel)({call})")
    lines.append(f"    return [{', '.join(grads)}]")
    namespace = {"empty": np.empty, "pooled": pool.empty, "PARALLEL_THRESHOLD": PARALLEL_THRESHOLD,
                 "SMALL_COUNT": _SMALL_COUNT, "half": _half_backward, "FLOAT16": _FLOAT16,
                 "serial": module.serial, "parallel": module.parallel,
                 "fallback": fallback, "row": row, "wanted": wanted}
    exec("\n".join(lines), namespace)
    return namespace["run"]


def small_backward(row, wanted, dtype):
    """``(kernel_for, below, new, sources)`` for calls whose saved values are
    all arrays of the gradient's shape and ``dtype``: under ``below`` elements
    the whole backward is ``kernel_for(ndim)(*operands, *grads)`` (as
    small_forward) with each gradient from ``new(shape, dtype)``; ``sources``
    names the operands in order (-1: the incoming gradient, -2: the output,
    k: input k)."""
    wanted = tuple(wanted)
    kinds = "a" * len(row.inputs)
    if np.dtype(dtype) == _half.FLOAT16:  # the general path takes float16 as bits
        return None

    def kernel_for(ndim):
        key = (row, wanted, kinds, ndim)
        module = _backward_kernels.get(key)
        if module is None:
            module = _backward_kernels[key] = _backward_module(row, wanted, kinds, ndim)
        return module.serial
    return SmallKernels(kernel_for, _small_count(dtype), np.empty,
                        _backward_plan(row, wanted, kinds)[2])


def backward_for(row, wanted, kinds):
    """``backward`` for saved values of known kinds ("a" an array or None, "s"
    a scalar, per input): the flat case is straight-line code that calls
    ``backward`` for the rest."""
    types = tuple(np.ndarray if k == "a" else np.generic for k in kinds)
    return _flat_backward(row, tuple(wanted), types, fallback=backward)


def backward(row, wanted, grad, args, out):
    """Gradients (in the output's shape) of the inputs listed in ``wanted``,
    computed in one pass. ``args``/``out`` hold the saved values (None where
    not saved, which is only where the derivatives do not read them)."""
    wanted = tuple(wanted)
    if grad.dtype is _FLOAT16 or _has_half_saved(grad, args, out):  # see _half_forward
        return _half_backward(row, wanted, grad, args, out)
    shape = grad.shape
    if grad.ndim == 1:
        key = (row, wanted, *map(type, args))
        run = _backward_plans.get(key)
        if run is None:
            run = _backward_plans[key] = _flat_backward(row, wanted, key[2:])
        grads = run(grad, args, out)
        if grads is not None:
            return grads
    kinds = "".join("s" if isinstance(a, np.generic) else "a" for a in args)
    reads, is_array, _ = _backward_plan(row, wanted, kinds)
    values = {"g": grad, "out": out}
    for k, a in enumerate(args):
        values[f"x{k}"] = a
    operands = [values[name] for name in reads]
    arrays = [v if v.shape == shape else np.broadcast_to(v, shape)
              for v, array in zip(operands, is_array) if array]
    grads = [pool.empty(shape, grad.dtype) for _ in wanted]
    ndim, views = _coalesce(shape, arrays + grads)
    remaining = iter(views)
    operands = [next(remaining) if array else v for v, array in zip(operands, is_array)]
    key = (row, wanted, kinds, ndim)
    module = _backward_kernels.get(key)
    if module is None:
        module = _backward_kernels[key] = _backward_module(row, wanted, kinds, ndim)
    _variant(module, grad.size)(*operands, *views[len(arrays):])
    return grads


# ------------------------------------------------------------- forward mode
def _jvp_module(row, active, kinds, ndim, half=frozenset()):
    args = [f"x{k}" for k in range(len(kinds))]
    tangents = [f"t{k}" for k in active]
    is_array = {a: kind == "a" for a, kind in zip(args, kinds)}

    def body(ix):
        lines = jvp_body_lines(row, active, lambda k: _read(args[k], ix, is_array[args[k]], half),
                               lambda k: _read(f"t{k}", ix, True, half))
        return lines + [_store("out", ix, "v", half), _store("tout", ix, "tangent_out", half)]

    source = _module_source(", ".join(["out", "tout", *args, *tangents]), ndim, body, "out")
    return load_module(source, _half_helpers(jvp_helpers(row, active), half), _inline,
                       f"{row.name}_jvp", readonly_inputs=True)


_jvp_kernels = {}


def jvp(row, active, out, tangent_out, args, tangents):
    """Forward mode in one pass: ``out = row(*args)`` and ``tangent_out``, the
    product of its Jacobian with the tangents of the inputs listed in
    ``active`` (``tangents``, one per active input). Arrays must have ``out``'s
    shape (broadcast views are fine); other arguments are NumPy scalars."""
    active = tuple(active)
    if _has_half(out, args):
        args = [_as_compute(a) for a in args]
    kinds = "".join("s" if isinstance(a, np.generic) else "a" for a in args)
    arrays = [out, tangent_out] + [a for a in args if not isinstance(a, np.generic)] + list(tangents)
    names = ["out", "tout", *(f"x{k}" for k, kind in enumerate(kinds) if kind == "a"),
             *(f"t{k}" for k in active)]
    half = _half_set(names, arrays)
    ndim, views = _coalesce(out.shape, arrays)
    if half:
        views = [_half.bits(v) for v in views]
    it = iter(views[2:])
    args = [a if kind == "s" else next(it) for a, kind in zip(args, kinds)]
    key = (row, active, kinds, ndim, half)
    module = _jvp_kernels.get(key)
    if module is None:
        module = _jvp_kernels[key] = _jvp_module(row, active, kinds, ndim, half)
    _variant(module, out.size)(views[0], views[1], *args, *it)


# ------------------------------------------------------------------ float16
# Numba's CPU target has no float16 arithmetic (it types float16 arrays, then
# fails to lower them, or would round after every operation), so a call with
# a float16 array comes here: these kernels take the float16 arrays as their
# bits and convert each element to float32 and back (half.py): the row
# computes in float32 and rounds once on store, as PyTorch's. Keyed by which
# operands are float16. The checks cost one comparison where the op layer
# knows the dtypes (a plan's kinds say "h"), a few elsewhere.


def _has_half(out, args):
    """Whether ``out`` or an argument is a float16 array (or number)."""
    if out.dtype is _FLOAT16:
        return True
    for a in args:
        if a.__class__ is np.ndarray:
            if a.dtype is _FLOAT16:
                return True
        elif a.__class__ is np.float16 or (isinstance(a, np.ndarray) and a.dtype == _FLOAT16):
            return True
    return False


def _has_half_saved(grad, args, out):
    if grad.dtype is _FLOAT16 or (out is not None and out.dtype is _FLOAT16):
        return True
    for a in args:
        if a is not None and a.dtype == _FLOAT16:  # (arrays and NumPy numbers have a dtype)
            return True
    return False


def _half_set(names, arrays):
    return frozenset(n for n, a in zip(names, arrays) if _half.is_half(a))


def _as_compute(a):
    """A float16 number as the float32 the kernels compute in."""
    return np.float32(a) if isinstance(a, np.float16) else a


def _half_forward(row, out, args):
    args = [_as_compute(a) for a in args]
    kinds = "".join("s" if isinstance(a, np.generic) else "a" for a in args)
    arrays = [out] + [a for a in args if not isinstance(a, np.generic)]
    half = _half_set(["out", *(f"x{k}" for k, kind in enumerate(kinds) if kind == "a")], arrays)
    if not half:
        raise TypeError(f"{row.name}: the CPU kernels take no arrays of dtypes "
                        f"{sorted({str(a.dtype) for a in arrays})}")
    ndim, views = _coalesce(out.shape, arrays)
    views = [_half.bits(v) for v in views]
    it = iter(views[1:])
    args = [a if kind == "s" else next(it) for a, kind in zip(args, kinds)]
    key = (row, kinds, ndim, half)
    module = _forward_kernels.get(key)
    if module is None:
        module = _forward_kernels[key] = _forward_module(row, kinds, ndim, half)
    _variant(module, out.size)(views[0], *args)


def _half_backward(row, wanted, grad, args, out):
    wanted = tuple(wanted)
    shape = grad.shape
    args = [_as_compute(a) for a in args]
    kinds = "".join("s" if isinstance(a, np.generic) else "a" for a in args)
    reads, is_array, _ = _backward_plan(row, wanted, kinds)
    values = {"g": grad, "out": out}
    for k, a in enumerate(args):
        values[f"x{k}"] = a
    operands = [values[name] for name in reads]
    arrays = [v if v.shape == shape else np.broadcast_to(v, shape)
              for v, array in zip(operands, is_array) if array]
    grads = [pool.empty(shape, grad.dtype) for _ in wanted]
    names = [n for n, array in zip(reads, is_array) if array] + [f"grad{i}" for i in wanted]
    half = _half_set(names, arrays + grads)
    ndim, views = _coalesce(shape, arrays + grads)
    views = [_half.bits(v) for v in views]
    remaining = iter(views)
    operands = [next(remaining) if array else v for v, array in zip(operands, is_array)]
    key = (row, wanted, kinds, ndim, half)
    module = _backward_kernels.get(key)
    if module is None:
        module = _backward_kernels[key] = _backward_module(row, wanted, kinds, ndim, half)
    _variant(module, grad.size)(*operands, *views[len(arrays):])
    return grads
