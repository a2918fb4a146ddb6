"""Compilation cost: the first call of one op's forward and backward in a new
process, with an empty kernel cache (cold: Numba compiles) and again with the
cache that run filled (warm: kernels load from disk). Each run is a fresh
subprocess with ``NBGRAD_CACHE_DIR`` pointing at a temporary folder, so the
user's cache is neither used nor touched.

Numba's one-time start-up (LLVM and target initialisation, paid by the first
jitted call of any process, about as long as compiling the op) is measured
first, separately, with a trivial jitted function, so ``cold_compile`` and
``warm_first_call`` are nbgrad's own cost. What a user waits for on the first
op of a new process is ``numba_startup`` plus one of them."""
import json
import os
import subprocess
import sys
import tempfile

import nbgrad

CHILD = r"""
import json, time
t0 = time.perf_counter()
import nbgrad
t1 = time.perf_counter()
x = nbgrad.randn(1000, requires_grad=True)
g = nbgrad.ones(1000)
import numba
@numba.njit
def trivial(a):
    return a + 1
t2 = time.perf_counter()
trivial(1.0)
t3 = time.perf_counter()
x.sigmoid().backward(g)
t4 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "numba_startup_s": t3 - t2, "first_call_s": t4 - t3}))
"""


def _run_child(cache_dir):
    env = dict(os.environ, NBGRAD_CACHE_DIR=cache_dir)
    root = os.path.dirname(os.path.dirname(os.path.abspath(nbgrad.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    done = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                          text=True, timeout=600, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"compile-time child failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


class FirstCall:
    """sigmoid forward + backward on 1000 float32 elements (serial kernels)."""
    timeout = 600

    def setup_cache(self):
        with tempfile.TemporaryDirectory(prefix="nbgrad-asv-cache-") as cache_dir:
            cold = _run_child(cache_dir)
            warm = _run_child(cache_dir)
        return {"cold": cold, "warm": warm}
    setup_cache.timeout = 600

    def track_cold_compile(self, result):
        """First call with an empty cache: code generation and Numba compilation."""
        return result["cold"]["first_call_s"]
    track_cold_compile.unit = "seconds"

    def track_warm_first_call(self, result):
        """First call in a new process whose cache holds the kernels."""
        return result["warm"]["first_call_s"]
    track_warm_first_call.unit = "seconds"

    def track_numba_startup(self, result):
        """Numba's one-time start-up: the first call of a trivial jitted function."""
        return result["warm"]["numba_startup_s"]
    track_numba_startup.unit = "seconds"

    def track_import(self, result):
        """``import nbgrad`` in a new process (warm cache)."""
        return result["warm"]["import_s"]
    track_import.unit = "seconds"
