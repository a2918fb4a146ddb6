"""Kernel source generation shared by the backends, and its on-disk home.

Kernels are generated as Python source from an elementwise row (a scalar
forward function and one derivative per differentiable input, each naming
what it reads through its parameter names: ``g``, ``out`` or input names) and
written to a real file, so that Numba's on-disk cache works and a new process
loads compiled code instead of recompiling. The file name is a hash of the
generated source, of the row's functions and of nbgrad's scalar math, so a
changed row or a new nbgrad version never loads stale machine code.

A new process loads those kernels without Numba's full target set-up (see
``_WarmStartCache``), so a warm ``import nbgrad`` and first ops stay fast.
"""
import functools
import hashlib
import importlib.util
import os
import sys
import tempfile
import types

import numba
import numpy as np

from .. import __version__

_loaded = {}


def cache_dir():
    root = os.environ.get("NBGRAD_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "nbgrad")
    tag = f"py{sys.version_info[0]}{sys.version_info[1]}-numba{numba.__version__}"
    path = os.path.join(root, tag)
    try:
        os.makedirs(path, exist_ok=True)
        return path
    except OSError:  # read-only home: fall back to a per-user temp folder
        path = os.path.join(tempfile.gettempdir(), f"nbgrad-{os.getuid()}", tag)
        os.makedirs(path, exist_ok=True)
        return path


def _called_functions(fn):
    """Plain Python functions a scalar function calls by global name."""
    for name in fn.__code__.co_names:
        value = fn.__globals__.get(name)
        if isinstance(value, types.FunctionType):
            yield name, value


_CONSTANT_TYPES = (int, float, complex, str, bytes, type(None), np.generic)


def _global_constants(fn):
    """The values of the plain constants (numbers, strings) a scalar function
    reads by global name: Numba freezes them into the machine code."""
    for name in fn.__code__.co_names:
        value = fn.__globals__.get(name)
        if isinstance(value, _CONSTANT_TYPES) or (
                isinstance(value, tuple) and all(isinstance(v, _CONSTANT_TYPES) for v in value)):
            yield f"{name}={value!r}"


def function_fingerprint(fn, _seen=None):
    """Identify a scalar function by its code, constants, closure, the global
    constants it reads and the functions it calls, recursively (Numba itself
    would not notice those change)."""
    seen = set() if _seen is None else _seen
    seen.add(fn)
    code = fn.__code__
    parts = [code.co_code, repr(code.co_consts).encode(), repr(code.co_names).encode()]
    if fn.__closure__:
        parts.append(repr([c.cell_contents for c in fn.__closure__]).encode())
    parts.extend(c.encode() for c in _global_constants(fn))
    for name, callee in _called_functions(fn):
        if callee not in seen:
            parts.append(name.encode() + function_fingerprint(callee, seen).encode())
    return hashlib.sha256(b"\0".join(parts)).hexdigest()


def retarget(fn, jit, _memo=None):
    """Compile a plain scalar function with ``jit`` (a CPU or CUDA decorator),
    first doing the same to every plain function it calls, so rows and their
    helpers stay target-neutral Python."""
    memo = {} if _memo is None else _memo
    if fn in memo:
        return memo[fn]
    namespace = dict(fn.__globals__)
    for name, callee in _called_functions(fn):
        namespace[name] = retarget(callee, jit, memo)
    rebound = types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__)
    memo[fn] = compiled = jit(rebound)
    return compiled


def backward_reads(row, wanted):
    """Kernel argument names: ``g``, then the inputs (``x0``...) and ``out``
    that the wanted derivatives read, in a fixed order."""
    order = ["g", *(f"x{k}" for k in range(len(row.inputs))), "out"]
    names = {name: f"x{k}" for k, name in enumerate(row.inputs)}
    names.update(g="g", out="out")
    used = {names[p] for i in wanted for p in row.grad_params(i)} | {"g"}
    return [n for n in order if n in used], names


_SCALAR_MATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scalar_math.py")


@functools.lru_cache(maxsize=None)
def _library_fingerprint():
    """Rows call nbgrad's scalar math; Numba would not notice it change. Read
    once: the process runs the scalar math it imported."""
    with open(_SCALAR_MATH, "rb") as f:
        return hashlib.sha256(f.read() + __version__.encode()).hexdigest()


def _warm_start_cache_class():
    """A ``FunctionCache`` that loads a cached overload without first calling
    ``target_context.refresh()``, or None where this Numba's internals differ
    from what it relies on (then kernels take Numba's normal path).

    Before loading from its cache, Numba refreshes the whole target: it imports
    every typing and lowering registry (numba.np.arraymath imports SciPy to
    check for BLAS, the typing context builds a cffi parser), about 0.25 s that
    only the compiler needs: a compile (a cache miss) refreshes by itself
    (``compiler.CompilerBase.__init__``). What cached machine code does need is
    every symbol it links against in LLVM's table. Of the refresh, only two
    things add symbols: ``rtsys.initialize`` (the NRT's C functions, for array
    arguments) and importing ``numba.cpython.hashing`` (the hash secret); the
    C helpers and libm are installed when the target context is created, and a
    ``prange`` kernel's threading layer is started by its cached ``reload_init``
    hook. So this does those two and then the plain load. Only nbgrad's own
    kernel dispatchers get it (``_lean_cache``); user code is unaffected."""
    try:
        from numba.core.caching import FunctionCache
        from numba.core.runtime import rtsys
        # Numba's load_overload must still be exactly "refresh, then load
        # under the I/O guard", the steps this replaces.
        steps = set(FunctionCache.load_overload.__code__.co_names)
    except (ImportError, AttributeError):
        return None
    kept = {"_guard_against_spurious_io_errors", "_load_overload"}
    if (steps != kept | {"refresh"} or not all(hasattr(FunctionCache, n) for n in kept)
            or not hasattr(rtsys, "initialize")):
        return None

    class _WarmStartCache(FunctionCache):
        def load_overload(self, sig, target_context):
            rtsys.initialize(target_context)
            import numba.cpython.hashing  # noqa: F401  (registers its symbols)
            with self._guard_against_spurious_io_errors():
                return self._load_overload(sig, target_context)
            return None  # the guard swallowed an I/O error: compile instead

    return _WarmStartCache


_WarmStartCache = _warm_start_cache_class()


def _lean_cache(namespace):
    """Give the on-disk-cached CPU dispatchers in ``namespace`` the warm-start
    cache (``@cuda.jit`` kernels and uncached helpers keep theirs)."""
    if _WarmStartCache is None:
        return
    base = _WarmStartCache.__base__
    for value in list(namespace.values()):
        cache = getattr(value, "_cache", None)
        if type(cache) is base:  # exactly Numba's per-function disk cache
            cache.__class__ = _WarmStartCache


def load_module(source, helpers, jit, tag):
    """Write ``source`` to the cache folder (atomically, so concurrent processes
    agree) and import it with the scalar ``helpers``, compiled by ``jit``,
    bound as its globals."""
    digest = hashlib.sha256(
        "\0".join([source, _library_fingerprint(), *sorted(
            f"{k}={function_fingerprint(v)}" for k, v in helpers.items())]).encode()
    ).hexdigest()[:24]
    name = f"nbgrad_kernel_{tag}_{digest}"
    module = _loaded.get(name)
    if module is not None:
        return module
    path = os.path.join(cache_dir(), name + ".py")
    if not os.path.exists(path):
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write(source)
        os.replace(tmp, path)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update({k: retarget(v, jit) for k, v in helpers.items()})
    spec.loader.exec_module(module)
    _lean_cache(module.__dict__)
    sys.modules[name] = module
    _loaded[name] = module
    return module


def lazy_module(source, tag):
    """A function returning ``load_module(source, {}, None, tag)``, loaded on
    its first call (a module of hand-written kernels that needs no helpers)."""
    module = None

    def kernels():
        nonlocal module
        if module is None:
            module = load_module(source, {}, None, tag)
        return module
    return kernels
