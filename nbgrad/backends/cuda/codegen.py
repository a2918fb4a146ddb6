"""Source generation shared by the CUDA kernels.

Every kernel works on flat 1-D device buffers: an array operand ``x`` is
passed as three parameters, the buffer ``x``, the element offset ``x_o`` and
the element strides ``x_s`` (a tuple, one per dimension, 0 where it is
broadcast), plus the common ``shape`` tuple. A grid-stride loop walks the flat
index ``i`` of the output, unravels it over ``shape`` and reads
``x[x_o + sum(coord_k * x_s[k])]``. So broadcasting, transposes and strided
slices work identically on a GPU and in the simulator, with no copies.

Sources are written to real files through ``kernel_source.load_module`` (so
Numba's on-disk cache can keep the compiled code); each generated kernel is
wrapped in a ``Kernel`` that knows its parameter types, which lets the tests
compile every kernel to PTX without a GPU.
"""
import contextlib
import os

from ..kernel_source import load_module
from . import _runtime

_modules = {}


def device_jit(fn):
    """How row functions (and the plain functions they call) are compiled:
    device functions inlined into the kernel at the Numba IR level (as the
    CPU backend does), which also lets ``compile_ptx`` build a kernel for any
    architecture with no GPU present (a separately compiled device function
    would ask the driver for the current device)."""
    return _runtime.cuda().jit(device=True, inline="always")(fn)


def jit_options():
    """Options of the generated ``@cuda.jit`` decorators: the on-disk cache on
    hardware (``NBGRAD_CUDA_CACHE=0`` turns it off); the simulator has none."""
    if _runtime.simulator() or os.environ.get("NBGRAD_CUDA_CACHE", "1") == "0":
        return ""
    return "cache=True"


class Kernel:
    """A generated ``@cuda.jit`` kernel and the kinds of its parameters.

    ``params`` is a list of ``(name, kind, key)``: kind ``"int"`` (int64),
    ``"tuple"`` (a tuple of ``key`` int64s), ``"array"`` (a 1-D device buffer
    whose dtype is ``dtypes[key]``), ``"index"`` (a 1-D int64 buffer) or
    ``"scalar"`` (a scalar of dtype ``dtypes[key]``)."""

    __slots__ = ("name", "dispatcher", "params")

    def __init__(self, name, dispatcher, params):
        self.name, self.dispatcher, self.params = name, dispatcher, params

    def launch(self, blocks, threads, args):
        self.dispatcher[blocks, threads](*args)

    def grid_stride(self, n, args):
        """Launch over ``n`` items with the backend's grid-stride configuration."""
        if n:
            blocks, threads = _runtime.grid_for(n)
            self.dispatcher[blocks, threads](*args)

    def argtypes(self, dtypes):
        """Numba types of the parameters, for ``numba.cuda.compile_ptx``;
        ``dtypes`` maps each array/scalar key to a NumPy dtype."""
        from numba import types
        from numba.np.numpy_support import from_dtype
        out = []
        for name, kind, key in self.params:
            if kind == "int":
                out.append(types.int64)
            elif kind == "tuple":
                out.append(types.UniTuple(types.int64, key))
            elif kind == "array":
                out.append(types.Array(from_dtype(dtypes[key]), 1, "C"))
            elif kind == "index":
                out.append(types.Array(types.int64, 1, "C"))
            elif kind == "scalar":
                out.append(from_dtype(dtypes[key]))
            else:
                raise ValueError(f"unknown parameter kind {kind!r} for {name}")
        return tuple(out)

    def ptx(self, dtypes, cc):
        """This kernel compiled to PTX for compute capability ``cc`` (no GPU needed)."""
        cuda = _runtime.cuda()
        with _assume_device(cc):
            ptx, _ = cuda.compile_ptx(self.dispatcher.py_func, self.argtypes(dtypes), cc=cc)
        return ptx

    def __repr__(self):
        return f"<CUDA kernel {self.name}>"


@contextlib.contextmanager
def _assume_device(cc):
    """Let ``compile_ptx`` build kernels that call separately compiled device
    functions (e.g. ``scalar_math``'s ``register_jitable`` helpers) on a
    machine with no GPU: numba-cuda compiles those for the *current* device's
    compute capability, which it asks the driver for. Without a driver, answer
    with the target's. (On a machine with a GPU nothing is changed.)"""
    cuda = _runtime.cuda()
    if cuda.is_available():
        yield
        return
    from numba.cuda import dispatcher

    class Device:
        compute_capability = tuple(cc)

    real = dispatcher.get_current_device
    dispatcher.get_current_device = lambda: Device
    try:
        yield
    finally:
        dispatcher.get_current_device = real


def strided(name, ndim, key=None):
    """Parameters of a strided array operand: buffer, offset, strides."""
    return [(name, "array", key or name), (f"{name}_o", "int", None), (f"{name}_s", "tuple", ndim)]


def unravel(ndim, shape, index, targets, indent):
    """Lines that set each ``var`` in ``targets`` (``(var, base, strides)``)
    to ``base + sum(coord_k * strides[k])``, ``coord`` being ``index``
    unravelled in C order over the tuple ``shape``."""
    pad = " " * indent
    if ndim == 1:
        return [f"{pad}{v} = {b} + {index} * {s}[0]" for v, b, s in targets]
    lines = [f"{pad}rem = {index}"] + [f"{pad}{v} = {b}" for v, b, _ in targets]
    for k in range(ndim - 1, 0, -1):
        lines.append(f"{pad}crd = rem % {shape}[{k}]")
        lines.append(f"{pad}rem = rem // {shape}[{k}]")
        lines += [f"{pad}{v} += crd * {s}[{k}]" for v, _, s in targets]
    lines += [f"{pad}{v} += rem * {s}[0]" for v, _, s in targets]
    return lines


def grid_stride_source(name, ndim, params, arrays, body):
    """A kernel ``name(n, shape, *params)`` whose grid-stride loop sets
    ``<a>_p`` (the element position) for each strided operand in ``arrays``,
    then runs ``body`` (lines, relative indentation kept)."""
    names = ", ".join(p for p, _, _ in params)
    lines = [f"@cuda.jit({jit_options()})", f"def {name}(n, shape, {names}):",
             "    i = cuda.grid(1)", "    step = cuda.gridsize(1)", "    while i < n:"]
    lines += unravel(ndim, "shape", "i", [(f"{a}_p", f"{a}_o", f"{a}_s") for a in arrays], 8)
    lines += ["        " + line for line in body]
    lines.append("        i += step")
    return "\n".join(lines) + "\n"


def grid_stride_params(ndim, params):
    return [("n", "int", None), ("shape", "tuple", ndim)] + list(params)


def build(tag, sources, helpers=None):
    """Import generated kernel source (a string or list of strings) as a module."""
    if not isinstance(sources, str):
        sources = "\n\n".join(sources)
    source = "import math\n\nfrom numba import cuda\n\n\n" + sources
    return load_module(source, helpers or {}, device_jit, f"cuda_{tag}")


def cached(key, make):
    """The kernel for ``key``, generated by ``make()`` on first use."""
    kernel = _modules.get(key)
    if kernel is None:
        kernel = _modules[key] = make()
    return kernel


def coalesce(shape, strides):
    """Merge dimensions that are contiguous for every operand (and drop size-1
    ones); ``strides`` is one element-stride tuple per operand. Returns the
    new shape and strides (at least one dimension)."""
    merged = []
    for k, n in enumerate(shape):
        if n == 1:
            continue
        st = [s[k] for s in strides]
        if merged and all(ps == s * n for ps, s in zip(merged[-1][1], st)):
            merged[-1] = (merged[-1][0] * n, st)
        else:
            merged.append((n, st))
    if not merged:
        merged = [(1, [0] * len(strides))]
    return (tuple(n for n, _ in merged),
            [tuple(st[j] for _, st in merged) for j in range(len(strides))])
