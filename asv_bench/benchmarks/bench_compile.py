"""Compilation cost: the first call of one op's forward and backward in a new
process, with an empty kernel cache (cold: Numba compiles) and again with the
cache that run filled (warm: kernels load from disk). Each run is a fresh
subprocess with ``NBGRAD_CACHE_DIR`` pointing at a temporary folder, so the
user's cache is neither used nor touched.

Numba's one-time start-up (LLVM and target initialisation, paid by the first
jitted call of any process, about as long as compiling the op) is measured
first, separately, with a trivial jitted function, so ``cold_compile`` and
``warm_first_call`` are nbgrad's own cost. What a user waits for on the first
op of a new process is ``numba_startup`` plus one of them.

``Startup`` tracks what a user waits for in full: ``import nbgrad`` plus the
first forward and backward through 10 different ops, warm cache (target:
under 0.5 s). ``startup_seconds()`` measures the same for other scripts."""
import json
import os
import statistics
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


STARTUP_CHILD = r"""
import json, time
t0 = time.perf_counter()
import nbgrad
t1 = time.perf_counter()
x = nbgrad.randn(16, requires_grad=True)
y = ((x * 2 + 1).sigmoid().tanh().exp().relu() - x).sin().cos().neg()
y.sum().backward()
t2 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "first_ops_s": t2 - t1, "total_s": t2 - t0}))
"""


def _run_child(cache_dir, source=CHILD):
    env = dict(os.environ, NBGRAD_CACHE_DIR=cache_dir)
    root = os.path.dirname(os.path.dirname(os.path.abspath(nbgrad.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    done = subprocess.run([sys.executable, "-c", source], env=env, capture_output=True,
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


def startup_seconds(warm_runs=3):
    """``import nbgrad`` plus the first forward and backward through 10
    different ops (mul, add, sigmoid, tanh, exp, relu, sub, sin, cos, neg) in
    a new process whose kernel cache is warm: one process fills a temporary
    cache, then ``warm_runs`` new ones are timed. Returns the medians, in
    seconds: ``{"import_s", "first_ops_s", "total_s"}`` (``total_s`` is the
    start-up target), and the cold process's ``total_s`` as ``cold_total_s``."""
    with tempfile.TemporaryDirectory(prefix="nbgrad-asv-cache-") as cache_dir:
        cold = _run_child(cache_dir, STARTUP_CHILD)
        warm = [_run_child(cache_dir, STARTUP_CHILD) for _ in range(warm_runs)]
    result = {k: statistics.median(run[k] for run in warm) for k in warm[0]}
    result["cold_total_s"] = cold["total_s"]
    return result


class Startup:
    """A new process, warm cache: ``import nbgrad`` and the first forward and
    backward through 10 different ops on 16 elements (median of 3 processes)."""
    timeout = 600

    def setup_cache(self):
        return startup_seconds()
    setup_cache.timeout = 600

    def track_total(self, result):
        """Import plus the first 10 ops: what a user waits for (target < 0.5 s)."""
        return result["total_s"]
    track_total.unit = "seconds"

    def track_import(self, result):
        """``import nbgrad``."""
        return result["import_s"]
    track_import.unit = "seconds"

    def track_first_ops(self, result):
        """The first forward and backward through 10 ops: loading their kernels."""
        return result["first_ops_s"]
    track_first_ops.unit = "seconds"
