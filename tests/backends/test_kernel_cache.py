"""Kernels load from the on-disk cache in a new process (nbgrad.backends.kernel_source).

Two fresh processes share an empty ``NBGRAD_CACHE_DIR``: the first compiles
every kernel, the second must load them all (no compilation, and without
Numba's full target refresh, which would import numba.np.arraymath), compute
the same values and gradients, serial and ``prange`` kernels alike, and leave
Numba working for what comes after: a kernel nbgrad has not cached yet and
the user's own jitted code."""
import json
import os
import subprocess
import sys

import numba

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


def _namespace(tmp_path, monkeypatch):
    monkeypatch.setenv("NBGRAD_CACHE_DIR", str(tmp_path))
    source = ("import numba\n\n\n@numba.njit(cache=True)\ndef cached(a):\n    return a + 1\n\n\n"
              "@numba.njit\ndef uncached(a):\n    return a + 1\n")
    return kernel_source.load_module(source, {}, None, f"test_lean_{tmp_path.name}")


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

