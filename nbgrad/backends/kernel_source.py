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

The cache may be shared by concurrent processes (files are written
atomically, readable by all), read-only (``_source_file``) or damaged: a
source file that does not hold what its name promises, a bad bytecode file
and a Numba index or data file that fails its hash check or does not load
are replaced and rebuilt, with a ``KernelCacheWarning`` naming the file.
"""
import contextlib
import functools
import hashlib
import importlib.util
import os
import pickle
import sys
import tempfile
import types
import warnings

import numba
import numpy as np

from .._version import __version__
from ..declarations import scalar_math

_loaded = {}

# Numba's SSA pass reports "variable ... is not in scope" as an internal
# pedantic check (NumbaIRAssumptionWarning, "please report") when it inlines
# the scalar math into some derived kernels; the code it compiles is right.
warnings.filterwarnings("ignore", category=numba.core.errors.NumbaIRAssumptionWarning)


# Bumped when the layout of cached files changes, so old caches live apart.
_CACHE_FORMAT = 3  # 3: scalar math moved to nbgrad.declarations (pickles name its module)


class KernelCacheWarning(UserWarning):
    """A damaged or unwritable kernel cache entry was worked around."""


def cache_dir():
    """The folder generated kernel sources (and Numba's ``__pycache__`` of
    them) are cached in: ``$NBGRAD_CACHE_DIR`` or ``~/.cache/nbgrad``, one
    subfolder per Python and Numba version. It may be read-only (a shared,
    pre-populated cache): see ``_source_file``."""
    root = os.environ.get("NBGRAD_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "nbgrad")
    path = os.path.join(root, _cache_tag())
    try:
        os.makedirs(path, exist_ok=True)
        return path
    except OSError:  # e.g. read-only home: use the private folder
        return _private_dir()


def _cache_tag():
    return (f"py{sys.version_info[0]}{sys.version_info[1]}-numba{numba.__version__}"
            f"-c{_CACHE_FORMAT}")


def _private_dir():
    """A per-user folder under the temp directory for what a read-only cache
    lacks; a fresh one if that name is taken by another user (whose files
    this process would otherwise import)."""
    parent = os.path.join(tempfile.gettempdir(), f"nbgrad-{os.getuid()}")
    try:
        os.makedirs(parent, mode=0o700, exist_ok=True)
        if os.stat(parent).st_uid != os.getuid():
            raise PermissionError(parent)
    except OSError:
        parent = _fresh_private_dir()
    path = os.path.join(parent, _cache_tag())
    os.makedirs(path, exist_ok=True)
    return path


@functools.lru_cache(maxsize=None)
def _fresh_private_dir():
    return tempfile.mkdtemp(prefix="nbgrad-")


_writable_dirs = {}


def _writable(path):
    """Whether files can be created in ``path`` (probed once per process, as
    Numba does: ``os.access`` is wrong for root and some file systems)."""
    writable = _writable_dirs.get(path)
    if writable is None:
        try:
            tempfile.TemporaryFile(dir=path).close()
            writable = True
        except OSError:
            writable = False
        _writable_dirs[path] = writable
    return writable


def _warn(message):
    warnings.warn(f"nbgrad kernel cache: {message}", KernelCacheWarning, stacklevel=2)


def _read(path):
    """The bytes in ``path``, or None if it cannot be read."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def _write(path, data):
    """Write the bytes ``data`` to ``path`` atomically (a temp file in the
    same folder, then ``os.replace``: a concurrent reader sees the old file or
    the whole new one), readable by every user of a shared cache."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            os.fchmod(f.fileno(), 0o644)  # mkstemp makes it 0600
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _write_checked(path, data, found):
    """Write ``data`` to ``path`` unless it already holds it (``found``, as
    read); a file with other contents is damaged (its name is a hash of what
    it should hold), so it is replaced, with a warning."""
    if found != data:
        _write(path, data)
        if found is not None:
            _warn(f"replaced the damaged kernel source {path}")


_read_only_warned = set()


def _source_file(name, source):
    """The path of a file holding ``source``, for module ``name``: in the
    cache folder, written there if missing or damaged. If that folder is not
    writable, the file is read from it if it is there and intact (with its
    compiled kernels, copied to a private folder so that Numba can add the
    ones it lacks), else written to the private folder."""
    data = source.encode("utf-8")
    shared = cache_dir()
    path = os.path.join(shared, name + ".py")
    found = _read(path)
    if _writable(shared):
        try:
            _write_checked(path, data, found)
            return path
        except OSError:  # e.g. a full disk, or the folder turned read-only
            _writable_dirs[shared] = False
    private = _private_dir()
    if shared not in _read_only_warned:
        _read_only_warned.add(shared)
        _warn(f"{shared} is not writable; kernels it lacks are compiled into {private}")
    own = os.path.join(private, name + ".py")
    mine = _read(own)
    if mine != data and found == data:
        _copy_compiled(shared, private, name)
    _write_checked(own, data, mine)
    return own


def _copy_compiled(shared, private, name):
    """Copy Numba's cache files of module ``name`` (index ``.nbi`` and data
    ``.nbc``, next to the source in ``__pycache__``) out of a read-only cache.
    Numba stamps them with a hash of the source's contents, so they stay
    valid next to the copy; damaged ones are caught when loaded."""
    source_dir = os.path.join(shared, "__pycache__")
    target_dir = os.path.join(private, "__pycache__")
    try:
        entries = [e for e in os.listdir(source_dir)
                   if e.startswith(name + ".") and e.endswith((".nbi", ".nbc"))]
        os.makedirs(target_dir, exist_ok=True)
    except OSError:
        return  # nothing there: Numba compiles
    for entry in entries:
        with contextlib.suppress(OSError):  # unreadable: Numba compiles that one
            with open(os.path.join(source_dir, entry), "rb") as f:
                _write(os.path.join(target_dir, entry), f.read())


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


def jvp_body_lines(row, active, operand, tangent, value="v"):
    """The lines of a fused forward-mode pass: the value, then the tangent,
    ``sum over active k of derivative_k(g = tangent k)`` (a row's derivative
    is linear in ``g``, so it is also the product of the Jacobian with the
    input's tangent). ``operand(k)``/``tangent(k)`` give the expressions of
    input ``k`` and its tangent; the caller stores ``value`` and ``tangent_out``."""
    operands = [operand(k) for k in range(len(row.inputs))]
    lines = [f"{value} = forward({', '.join(operands)})"]
    names = dict(zip(row.inputs, operands), out=value)
    terms = []
    for k in active:
        if row.derivative(k) is None:
            continue
        names["g"] = tangent(k)
        terms.append(f"derivative{k}({', '.join(names[p] for p in row.grad_params(k))})")
    lines.append(f"tangent_out = {' + '.join(terms) if terms else f'zero({value})'}")
    return lines


def jvp_helpers(row, active):
    """The scalar functions ``jvp_body_lines`` calls."""
    helpers = {"forward": row.forward, "zero": scalar_math.zero}
    helpers.update({f"derivative{k}": row.derivative(k) for k in active
                    if row.derivative(k) is not None})
    return helpers


_SCALAR_MATH = scalar_math.__file__


@functools.lru_cache(maxsize=None)
def _library_fingerprint():
    """Rows call nbgrad's scalar math; Numba would not notice it change. Read
    once: the process runs the scalar math it imported."""
    with open(_SCALAR_MATH, "rb") as f:
        return hashlib.sha256(f.read() + __version__.encode()).hexdigest()


class _DamagedEntry(Exception):
    """A Numba cache file that fails its hash check or does not unpickle."""

    def __init__(self, path):
        super().__init__(path)
        self.path = path


def _checked_loads(path, data):
    digest, payload = data[:32], data[32:]
    if hashlib.sha256(payload).digest() != digest:
        raise _DamagedEntry(path)
    try:
        return pickle.loads(payload)
    except Exception as exc:
        raise _DamagedEntry(path) from exc


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
    kernel dispatchers get it (``_lean_cache``); user code is unaffected.

    It also recovers from a damaged cache: Numba would raise on every later
    run (``UnpicklingError``, ``EOFError``, an LLVM error). Index and data
    files carry a hash of their contents (``_CheckedCacheFile``); an entry
    that fails to load is deleted, with a warning naming it, and recompiled.
    A failed write (a full disk) leaves the kernel compiled in memory."""
    try:
        from numba.core.caching import FunctionCache, IndexDataCacheFile
        from numba.core.runtime import rtsys
        # Numba's load_overload must still be exactly "refresh, then load
        # under the I/O guard", the steps this replaces, and its cache file
        # keep the state and the hooks _CheckedCacheFile uses.
        steps = set(FunctionCache.load_overload.__code__.co_names)
        file_state = set(IndexDataCacheFile.__init__.__code__.co_names)
    except (ImportError, AttributeError):
        return None
    kept = {"_guard_against_spurious_io_errors", "_load_overload"}
    if (steps != kept | {"refresh"} or not all(hasattr(FunctionCache, n) for n in kept)
            or not hasattr(rtsys, "initialize")
            or not {"_index_path", "_version", "_source_stamp"} <= file_state
            or not all(hasattr(IndexDataCacheFile, n)
                       for n in ("_load_index", "_load_data", "_dump", "_data_path"))):
        return None

    class _CheckedCacheFile(IndexDataCacheFile):
        """Numba's index and data files, each pickle preceded by its SHA-256,
        so that a truncated or overwritten file is caught before it is
        unpickled or its machine code handed to LLVM."""

        def _dump(self, obj):
            data = super()._dump(obj)
            return hashlib.sha256(data).digest() + data

        def _load_index(self):
            try:
                with open(self._index_path, "rb") as f:
                    version = pickle.load(f)
                    data = f.read()
            except OSError:  # none yet, or another user's that we may not read: compile
                return {}
            except Exception as exc:
                raise _DamagedEntry(self._index_path) from exc
            if version != self._version:  # another Numba's: not unpickled (as Numba)
                return {}
            stamp, overloads = _checked_loads(self._index_path, data)
            return overloads if stamp == self._source_stamp else {}

        def _load_data(self, name):
            path = self._data_path(name)
            with open(path, "rb") as f:
                return _checked_loads(path, f.read())

    class _WarmStartCache(FunctionCache):
        file_class = _CheckedCacheFile

        def load_overload(self, sig, target_context):
            rtsys.initialize(target_context)
            import numba.cpython.hashing  # noqa: F401  (registers its symbols)
            try:
                with self._guard_against_spurious_io_errors():
                    return self._load_overload(sig, target_context)
            except Exception as exc:  # a damaged entry (or LLVM refused it)
                self._discard(exc)
            return None  # compile instead

        def save_overload(self, sig, data):
            for _ in range(2):
                try:
                    return super().save_overload(sig, data)
                except _DamagedEntry as exc:  # damaged since the load: start afresh
                    self._discard(exc)
                except OSError as exc:
                    _warn(f"cannot write to {self._cache_path} ({exc}); "
                          "the kernel is compiled in memory only")
                    return None
            return None

        def _discard(self, exc):
            """Delete this function's index and data files and warn."""
            index = self._cache_file._index_path
            path = exc.path if isinstance(exc, _DamagedEntry) else index
            prefix = os.path.basename(index)[:-len("nbi")]  # "<module>.<function>-<line>.py311."
            with contextlib.suppress(OSError):
                for entry in os.listdir(self._cache_path):
                    if entry.startswith(prefix) and entry.endswith((".nbi", ".nbc")):
                        with contextlib.suppress(OSError):
                            os.remove(os.path.join(self._cache_path, entry))
            cause = exc.__cause__ or exc
            _warn(f"discarded the damaged entry {path} ({type(cause).__name__}: {cause}); "
                  "recompiling")

    return _WarmStartCache


_WarmStartCache = _warm_start_cache_class()


def _lean_cache(namespace):
    """Give the on-disk-cached CPU dispatchers in ``namespace`` the warm-start,
    checked cache (``@cuda.jit`` kernels and uncached helpers keep theirs)."""
    if _WarmStartCache is None:
        return
    base = _WarmStartCache.__base__
    for value in list(namespace.values()):
        cache = getattr(value, "_cache", None)
        if type(cache) is base:  # exactly Numba's per-function disk cache
            cache.__class__ = _WarmStartCache
            cache._cache_file.__class__ = _WarmStartCache.file_class


def _writeable_types(dispatcher):
    """Make ``dispatcher`` type read-only arrays as writeable ones. Its kernels
    never write their inputs, and Numba would compile a separate
    specialization (about a second each) for every mix of read-only flags a
    program meets: broadcast operands are read-only views. The machine code
    is the same: the flag only matters to Numba's type checks.

    Numba calls ``_compile_for_args`` for argument types it has no
    specialization for; the writeable one is then also registered under the
    exact types, so later calls with them dispatch to it in Numba's C code.
    A Numba whose dispatcher lacks these internals keeps its own behaviour."""
    if not all(hasattr(dispatcher, n) for n in ("_compile_for_args", "_insert", "typeof_pyval")):
        return
    plain = dispatcher._compile_for_args

    def compile_for_args(*args):
        exact = [dispatcher.typeof_pyval(a) for a in args]
        if all(not isinstance(t, numba.types.Array) or t.mutable for t in exact):
            return plain(*args)
        entry = dispatcher.compile(tuple(
            t.copy(readonly=False) if isinstance(t, numba.types.Array) else t for t in exact))
        dispatcher._insert([t._code for t in exact], entry, False)
        return entry
    dispatcher._compile_for_args = compile_for_args


def _code(spec, source):
    """The module's code: from Python's bytecode cache (``__pycache__``),
    unless that is damaged (Python would raise on every later import)."""
    try:
        return spec.loader.get_code(spec.name)
    except (ValueError, EOFError, TypeError):  # bad marshal data
        pyc = importlib.util.cache_from_source(spec.origin)
        if not os.path.exists(pyc):
            raise
        with contextlib.suppress(OSError):
            os.remove(pyc)
        _warn(f"deleted the damaged bytecode {pyc}")
        return compile(source, spec.origin, "exec")


def load_module(source, helpers, jit, tag, readonly_inputs=False):
    """Write ``source`` to the cache folder (atomically, so concurrent processes
    agree; checked, so a damaged file is replaced) and import it with the
    scalar ``helpers``, compiled by ``jit``, bound as its globals.
    ``readonly_inputs``: the module's kernels write only their output arrays,
    so a read-only input may be typed as a writeable array (``_writeable_types``)."""
    digest = hashlib.sha256(
        "\0".join([source, _library_fingerprint(), *sorted(
            f"{k}={function_fingerprint(v)}" for k, v in helpers.items())]).encode()
    ).hexdigest()[:24]
    name = f"nbgrad_kernel_{tag}_{digest}"
    module = _loaded.get(name)
    if module is not None:
        return module
    spec = importlib.util.spec_from_file_location(name, _source_file(name, source))
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update({k: retarget(v, jit) for k, v in helpers.items()})
    exec(_code(spec, source), module.__dict__)
    _lean_cache(module.__dict__)
    if readonly_inputs:  # the module's own kernels, not the helpers bound into it
        for value in list(module.__dict__.values()):
            if getattr(getattr(value, "py_func", None), "__module__", None) == name:
                _writeable_types(value)
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
