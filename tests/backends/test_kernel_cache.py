"""Kernels load from the on-disk cache in a new process (nbgrad.backends.kernel_source).

Two fresh processes share an empty ``NBGRAD_CACHE_DIR``: the first compiles
every kernel, the second must load them all (no compilation, and without
Numba's full target refresh, which would import numba.np.arraymath), compute
the same values and gradients, serial and ``prange`` kernels alike, and leave
Numba working for what comes after: a kernel nbgrad has not cached yet and
the user's own jitted code.

The cache survives damage (a truncated or overwritten source, bytecode,
Numba index or data file is replaced, with a warning naming it, and rebuilt),
a read-only cache folder (read, with what it lacks compiled into a private
folder), processes filling it at once (atomic writes, files readable by
all), and NUMBA_DISABLE_JIT=1 runs the generated kernels with the same
results."""
import glob
import json
import os
import py_compile
import stat
import subprocess
import sys
import warnings

import numba
import numpy as np
import pytest
import torch

from nbgrad.backends import kernel_source
from nbgrad.backends.cpu.elementwise import PARALLEL_THRESHOLD

CHILD = r"""
import hashlib, json, sys
import numba
import numpy as np
import nbgrad
from nbgrad.backends import kernel_source

def digest(t):
    return hashlib.sha256(np.ascontiguousarray(t.detach().numpy()).tobytes()).hexdigest()

rng = np.random.default_rng(0)
small = nbgrad.tensor(rng.standard_normal(16).astype(np.float32), requires_grad=True)
big = nbgrad.tensor(rng.standard_normal(BIG).astype(np.float32), requires_grad=True)
y = ((small * 2 + 1).sigmoid().tanh() - small).exp()
y.sum().backward()
z = big.sigmoid() * big
z.sum().backward()
b = big.detach().numpy()

stats = [d.stats for m in kernel_source._loaded.values()
         for d in vars(m).values() if isinstance(d, numba.core.dispatcher.Dispatcher)
         and d.stats.cache_path is not None]
report = {
    "values": [digest(y), digest(small.grad), digest(z), digest(big.grad)],
    "sigmoid_ok": bool(np.allclose(b / (1 + np.exp(-b)), z.detach().numpy(), rtol=1e-5, atol=1e-6)),
    "hits": sum(sum(s.cache_hits.values()) for s in stats),
    "misses": sum(sum(s.cache_misses.values()) for s in stats),
    "refreshed": "numba.np.arraymath" in sys.modules,
}

# After cached loads: a kernel not in the cache compiles (Numba refreshes then) ...
w = nbgrad.tensor(rng.standard_normal(8), requires_grad=True)
w.cos().sum().backward()
report["new_kernel_ok"] = bool(np.allclose(w.grad.numpy(), -np.sin(w.detach().numpy())))

# ... and the user's own Numba code compiles and runs as usual.
@numba.njit(parallel=True)
def user_prange(a):
    out = np.empty_like(a)
    for i in numba.prange(a.shape[0]):
        out[i] = a[i] * a[i]
    return out

@numba.njit
def user_math(a, b):
    return np.dot(a, b) if HAVE_BLAS else np.sum(np.sort(a) * b)

a = rng.standard_normal(1000)
b = rng.standard_normal(1000)
expected = a @ b if HAVE_BLAS else np.sum(np.sort(a) * b)
report["user_ok"] = bool(np.allclose(user_prange(a), a * a)
                         and np.isclose(user_math(a, b), expected))
print(json.dumps(report))
"""


def _have_blas():
    try:
        import scipy.linalg.cython_blas  # noqa: F401  (Numba's np.dot needs SciPy's BLAS)
        return True
    except ImportError:
        return False


def _run(cache_dir):
    source = CHILD.replace("BIG", str(PARALLEL_THRESHOLD + 3)).replace(
        "HAVE_BLAS", str(_have_blas()))
    env = dict(os.environ, NBGRAD_CACHE_DIR=str(cache_dir))
    done = subprocess.run([sys.executable, "-c", source], env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_second_process_loads_every_kernel_without_refreshing_numba(tmp_path):
    cold = _run(tmp_path)
    warm = _run(tmp_path)
    assert cold["misses"] > 0 and cold["refreshed"]  # the first process compiled
    assert warm["misses"] == 0 and warm["hits"] == cold["misses"]
    assert not warm["refreshed"]
    assert warm["values"] == cold["values"]
    for run in (cold, warm):
        assert run["sigmoid_ok"] and run["new_kernel_ok"] and run["user_ok"], run


def _namespace(tmp_path, monkeypatch, tag=None):
    monkeypatch.setenv("NBGRAD_CACHE_DIR", str(tmp_path))
    source = ("import numba\n\n\n@numba.njit(cache=True)\ndef cached(a):\n    return a + 1\n\n\n"
              "@numba.njit\ndef uncached(a):\n    return a + 1\n")
    return kernel_source.load_module(source, {}, None, tag or f"test_lean_{tmp_path.name}")


def user_function(a):
    return a + 1


def test_only_nbgrads_cached_cpu_dispatchers_skip_the_refresh(tmp_path, monkeypatch):
    module = _namespace(tmp_path, monkeypatch)
    assert type(module.cached._cache) is kernel_source._WarmStartCache
    assert type(module.uncached._cache) is numba.core.caching.NullCache
    assert module.cached(1.0) == 2.0 and module.uncached(1) == 2
    # The user's cached functions keep Numba's own cache class.
    assert type(numba.njit(cache=True)(user_function)._cache) is numba.core.caching.FunctionCache


def test_a_numba_without_the_private_hooks_gets_its_normal_cache(tmp_path, monkeypatch):
    monkeypatch.delattr(numba.core.caching.Cache, "_load_overload")
    assert kernel_source._warm_start_cache_class() is None
    monkeypatch.setattr(kernel_source, "_WarmStartCache", None)
    module = _namespace(tmp_path, monkeypatch)
    assert type(module.cached._cache) is numba.core.caching.FunctionCache



# ------------------------------------------------------------ damaged entries
def _reload(tmp_path, monkeypatch, tag):
    """Load the one-function module of ``_namespace`` afresh (as a new process
    would), call it, and return it with the warnings that raised."""
    monkeypatch.setenv("NBGRAD_CACHE_DIR", str(tmp_path))
    for name in [n for n in kernel_source._loaded if f"_{tag}_" in n]:
        del kernel_source._loaded[name]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = _namespace(tmp_path, monkeypatch, tag)
        assert module.cached(1.0) == 2.0
    return module, [str(w.message) for w in caught]


def _entry(pattern):
    (path,) = glob.glob(os.path.join(kernel_source.cache_dir(), pattern))
    return path


class AnyWarning:
    """Equal to a warning message holding ``words`` and naming ``path``."""

    def __init__(self, words, path):
        self.words, self.path = words, path

    def __eq__(self, message):
        return self.words in message and self.path in message

    def __repr__(self):
        return f"<warning: {self.words} ... {self.path}>"


def _truncate(path):
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) // 2)


def _garbage(path):
    with open(path, "wb") as f:
        f.write(b"\x80garbage" * 8)


def _bad_bytecode(path):
    # A .pyc whose header (magic, source mtime and size) is right and whose code
    # is not: Python raises "bad marshal data" on every import.
    pyc = py_compile.compile(path, doraise=True)
    with open(pyc, "r+b") as f:
        f.seek(16)
        f.write(b"\xff" * 8)
        f.truncate()
    return pyc


DAMAGE = {  # what is damaged -> (file pattern, how, words of the warning)
    "truncated source": ("*.py", _truncate, "replaced the damaged kernel source"),
    "garbage source": ("*.py", _garbage, "replaced the damaged kernel source"),
    "truncated index": ("__pycache__/*.nbi", _truncate, "discarded the damaged entry"),
    "garbage index": ("__pycache__/*.nbi", _garbage, "discarded the damaged entry"),
    "truncated data": ("__pycache__/*.nbc", _truncate, "discarded the damaged entry"),
    "garbage data": ("__pycache__/*.nbc", _garbage, "discarded the damaged entry"),
    "bad bytecode": ("*.py", _bad_bytecode, "deleted the damaged bytecode"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_cache_entry_is_discarded_with_a_warning_and_rebuilt(damage, tmp_path,
                                                                       monkeypatch):
    pattern, damage_file, words = DAMAGE[damage]
    tag = f"damage_{tmp_path.name}"
    _reload(tmp_path, monkeypatch, tag)  # populates the cache
    path = _entry(pattern)
    path = damage_file(path) or path

    module, warned = _reload(tmp_path, monkeypatch, tag)
    assert warned == [AnyWarning(words, path)], warned
    if "source" in damage:  # the compiled kernel is still valid for the rewritten file
        assert sum(module.cached.stats.cache_hits.values()) == 1

    module, warned = _reload(tmp_path, monkeypatch, tag)  # repaired: a clean hit
    assert warned == [] and sum(module.cached.stats.cache_hits.values()) == 1


def test_an_entry_that_llvm_refuses_is_discarded_and_rebuilt(tmp_path, monkeypatch):
    tag = f"refused_{tmp_path.name}"
    _reload(tmp_path, monkeypatch, tag)
    index = _entry("__pycache__/*.nbi")

    def refuse(self, target_context, payload):
        raise RuntimeError("LLVM ERROR: Invalid bitcode")  # what unserialize_library may raise

    with monkeypatch.context() as patch:
        patch.setattr(numba.core.caching.CompileResultCacheImpl, "rebuild", refuse)
        module, warned = _reload(tmp_path, monkeypatch, tag)
    assert warned == [AnyWarning("LLVM ERROR: Invalid bitcode", index)]
    assert sum(module.cached.stats.cache_misses.values()) == 1  # recompiled
    module, warned = _reload(tmp_path, monkeypatch, tag)
    assert warned == [] and sum(module.cached.stats.cache_hits.values()) == 1


# ------------------------------------------------------------ read-only cache
def test_a_read_only_cache_is_read_and_what_it_lacks_compiled_privately(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    monkeypatch.setattr(kernel_source.tempfile, "tempdir", str(tmp_path / "tmp"))
    os.makedirs(tmp_path / "tmp")
    tag = f"read_only_{tmp_path.name}"
    _reload(shared, monkeypatch, tag)  # a populated cache ...
    before = sorted(os.walk(shared))
    os.chmod(kernel_source.cache_dir(), 0o555)  # ... made read-only
    if os.geteuid() == 0:  # root writes through chmod: fail the writability probe instead
        monkeypatch.setitem(kernel_source._writable_dirs, kernel_source.cache_dir(), False)
    else:  # probe again
        monkeypatch.delitem(kernel_source._writable_dirs, kernel_source.cache_dir())
    try:
        module, warned = _reload(shared, monkeypatch, tag)
        assert warned == [AnyWarning("is not writable", kernel_source.cache_dir())]
        assert sum(module.cached.stats.cache_hits.values()) == 1  # what is there is used
        assert str(tmp_path / "tmp") in module.__file__

        monkeypatch.setenv("NBGRAD_CACHE_DIR", str(shared))
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # one warning, not one per kernel
            new = kernel_source.load_module("def f(a):\n    return a * 3\n", {}, None, tag + "_b")
        assert new.f(2) == 6
        assert sorted(os.walk(shared)) == before  # nothing written there
    finally:
        os.chmod(kernel_source.cache_dir(), 0o755)


def test_a_cache_folder_that_cannot_be_made_falls_back_to_a_private_one(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("")
    monkeypatch.setattr(kernel_source.tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("NBGRAD_CACHE_DIR", str(tmp_path / "file" / "cache"))  # under a file
    private = os.path.join(str(tmp_path), f"nbgrad-{os.getuid()}")
    assert kernel_source.cache_dir() == os.path.join(private, kernel_source._cache_tag())
    assert not kernel_source._writable(str(tmp_path / "file"))  # the probe, unmocked
    assert kernel_source._writable(str(tmp_path))


# ------------------------------------------------------- several processes
SMALL_CHILD = r"""
import json, sys, warnings
warnings.simplefilter("always")  # one line per warning, any category
warnings.showwarning = lambda message, category, *_: print(f"{category.__name__}: {message}",
                                                          file=sys.stderr)
import numpy as np
import nbgrad
PRELUDE
x = nbgrad.tensor(np.linspace(-3, 3, 7), requires_grad=True)
y = (x * x).sigmoid()
y.sum().backward()
print(json.dumps([y.detach().numpy().tolist(), x.grad.numpy().tolist()]))
"""


def _start(cache, prelude="", **env):
    return subprocess.Popen([sys.executable, "-c", SMALL_CHILD.replace("PRELUDE", prelude)],
                            text=True, env=dict(os.environ, NBGRAD_CACHE_DIR=str(cache), **env),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _finish(child):
    """The lines the child wrote to stderr, once it computed the right values."""
    out, err = child.communicate(timeout=300)
    assert child.returncode == 0, err[-4000:]
    x = torch.linspace(-3, 3, 7, dtype=torch.float64, requires_grad=True)
    y = (x * x).sigmoid()
    y.sum().backward()
    assert np.allclose(json.loads(out), [y.tolist(), x.grad.tolist()], rtol=1e-12, atol=0)
    return err.splitlines()


def test_processes_share_a_fresh_a_damaged_and_a_read_only_cache(tmp_path):
    children = [_start(tmp_path) for _ in range(2)]  # a fresh cache, filled at once
    assert [_finish(child) for child in children] == [[], []]
    folder = os.path.join(str(tmp_path), kernel_source._cache_tag())
    files = [os.path.join(d, f) for d, _, names in os.walk(folder) for f in names]
    assert files and not [f for f in files if ".tmp" in f]  # no half-written leftovers
    assert {oct(stat.S_IMODE(os.stat(f).st_mode)) for f in files} == {"0o644"}  # shared

    damaged = [glob.glob(os.path.join(folder, pattern))[0] for pattern in (
        "nbgrad_kernel_sigmoid_fwd_*.py", "__pycache__/nbgrad_kernel_sigmoid_bwd_*.nbi",
        "__pycache__/nbgrad_kernel_mul_fwd_*.nbc")]
    for path, damage in zip(damaged, (_truncate, _garbage, _garbage)):
        damage(path)
    children = [_start(tmp_path) for _ in range(2)]  # both may find the damage
    named = set()
    for lines in [_finish(child) for child in children]:
        for line in lines:  # only cache warnings, each naming a damaged file
            assert line.startswith("KernelCacheWarning: "), lines
            (path,) = [p for p in damaged if p in line]
            named.add(path)
    assert named == set(damaged)
    assert _finish(_start(tmp_path)) == []  # repaired

    # Read-only (root writes through chmod: the child fails the writability probe).
    before = sorted(os.walk(folder))
    os.chmod(folder, 0o555)
    read_only = ("from nbgrad.backends import kernel_source\n"
                 "kernel_source._writable_dirs[kernel_source.cache_dir()] = False"
                 if os.geteuid() == 0 else "")
    os.makedirs(tmp_path / "tmp")
    try:
        lines = _finish(_start(tmp_path, read_only, TMPDIR=str(tmp_path / "tmp")))
    finally:
        os.chmod(folder, 0o755)
    assert lines == [f"KernelCacheWarning: nbgrad kernel cache: {folder} is not writable; "
                     f"kernels it lacks are compiled into {tmp_path / 'tmp'}"
                     f"/nbgrad-{os.getuid()}/{kernel_source._cache_tag()}"]
    assert sorted(os.walk(folder)) == before


# ------------------------------------------------------ NUMBA_DISABLE_JIT=1
PROBE = r'''
import math
import numpy as np
import nbgrad
import nbgrad.nn.functional as F
from nbgrad.declarations.op_table import ROWS

VALUES = [-2.5, -1.0, -0.0, 0.0, 0.5, 1.0, 3.0, math.inf, -math.inf, math.nan]
SAMPLES = {1: VALUES,  # per number of inputs, taken in all combinations
           2: [-2.5, -0.0, 0.0, 1.0, math.inf, math.nan], 3: [-1.0, 0.0, 3.0, math.nan],
           4: [-1.0, 0.5, math.nan]}


def _result(out, inputs):
    if not out.requires_grad:  # a comparison
        return [out.numpy().tolist()]
    out.sum().backward()
    grads = [t.grad for t in inputs if t.grad is not None]  # pow_number's exponent has none
    return [t.detach().numpy().tolist() for t in [out, *grads]]


def probe():
    """Every row's forward and gradients over SAMPLES (float64), and a few
    ops with hand-written kernels."""
    results = {}
    for row in ROWS:
        if row.result == "self":  # in-place only (copy_, fill_)
            continue
        grid = np.meshgrid(*[SAMPLES.get(len(row.inputs), [0.5, math.nan])] * len(row.inputs),
                           indexing="ij")
        inputs = [nbgrad.tensor(g.ravel() > 0) if k in row.bool_inputs
                  else nbgrad.tensor(g.ravel(), requires_grad=True) for k, g in enumerate(grid)]
        try:
            results[row.name] = _result(row(*inputs), inputs)
        except (RuntimeError, NotImplementedError) as error:  # integer-only rows refuse floats
            results[row.name] = [type(error).__name__]
    x = nbgrad.tensor(np.linspace(-2, 2, 12).reshape(3, 4), requires_grad=True)
    results["cross_entropy"] = _result(F.cross_entropy(x, nbgrad.tensor([0, 3, 1])), [x])
    x.grad = None
    results["softmax"] = _result(F.softmax(x, dim=1) * x, [x])
    x.grad = None
    results["matmul"] = _result(x @ x.T, [x])
    return results
'''


def _equal_or_both_nan(a, b):
    if isinstance(a, str) or isinstance(b, str):  # the error a row raised
        return a == b
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and np.allclose(a, b, rtol=1e-12, atol=1e-300, equal_nan=True)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's, summing inf - inf
def test_results_do_not_change_with_numba_disable_jit(tmp_path):
    namespace = {}
    exec(PROBE, namespace)
    jitted = namespace["probe"]()
    child = PROBE + "\nimport json\nprint(json.dumps(probe()))\n"
    env = dict(os.environ, NBGRAD_CACHE_DIR=str(tmp_path), NUMBA_DISABLE_JIT="1")
    done = subprocess.run([sys.executable, "-W", "ignore::RuntimeWarning", "-c", child], env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    interpreted = json.loads(done.stdout)
    assert sorted(interpreted) == sorted(jitted)
    for name in jitted:
        assert len(jitted[name]) == len(interpreted[name]), name
        assert all(map(_equal_or_both_nan, jitted[name], interpreted[name])), name
    # As PyTorch: sqrt below 0 is nan (where math.sqrt raises ValueError).
    x = torch.tensor(namespace["VALUES"], dtype=torch.float64, requires_grad=True)
    x.sqrt().sum().backward()
    assert all(map(_equal_or_both_nan, interpreted["sqrt"], [x.sqrt().tolist(), x.grad.tolist()]))
