"""Measured memory bandwidth of this machine: STREAM-style copy and triad.

Large elementwise work is limited by memory bandwidth, so nbgrad's kernels are
judged against what a plain Numba ``prange`` loop reaches on the same machine,
in the same process, with the same number of threads.

Bytes are counted the STREAM way: every array element read or written once
(copy: 2 arrays, triad: 3 arrays), no write-allocate traffic. ``compare``
counts nbgrad's bytes the same way, so the ratio is fair.

``triad_fresh`` writes into a newly allocated output every call, as an eager
op does (``out = a + s * b``): the gap to ``triad`` is the cost of the
allocation and of first-touch page faults.

    python -m asv_bench.bandwidth [--n 1e7] [--threads 2] [--repeat 10]
"""
import argparse
import statistics
import time

import numba
import numpy as np
from numba import prange


@numba.njit(parallel=True, nogil=True)
def _copy(src, dst):
    for i in prange(src.size):
        dst[i] = src[i]


@numba.njit(parallel=True, nogil=True)
def _triad(out, b, c, s):
    for i in prange(out.size):
        out[i] = b[i] + s * c[i]


@numba.njit(parallel=True, nogil=True)
def _fill(out, value):
    for i in prange(out.size):
        out[i] = value + i % 7


def _timed(fn, repeat):
    fn()  # warm-up (and compilation on the first call)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


def triad_case(n, dtype):
    """A ready-to-time triad on ``n`` elements of ``dtype`` (arrays allocated
    and touched here): returns ``(fn, nbytes)``. ``compare`` times it side by
    side with each op, so the percentage of triad is measured under the same
    machine load as the op itself."""
    dtype = np.dtype(dtype)
    a, b, c = (np.empty(n, dtype) for _ in range(3))
    for k, arr in enumerate((a, b, c)):
        _fill(arr, dtype.type(k + 1))
    scalar = dtype.type(3.0)

    def fn():
        _triad(a, b, c, scalar)

    fn()
    return fn, 3 * n * dtype.itemsize


def measure(n=10_000_000, dtype=np.float64, threads=2, repeat=10):
    """Copy and triad bandwidth in GB/s (1e9 bytes/s): median and best of
    ``repeat`` timed calls, on ``threads`` Numba threads."""
    dtype = np.dtype(dtype)
    previous = numba.get_num_threads()
    threads = max(1, min(int(threads), numba.config.NUMBA_NUM_THREADS))
    numba.set_num_threads(threads)
    try:
        a, b, c = (np.empty(n, dtype) for _ in range(3))
        for k, arr in enumerate((a, b, c)):
            _fill(arr, dtype.type(k + 1))  # first touch on the worker threads
        scalar = dtype.type(3.0)

        def fresh():
            _triad(np.empty(n, dtype), b, c, scalar)

        runs = {
            "copy": (2, _timed(lambda: _copy(b, a), repeat)),
            "triad": (3, _timed(lambda: _triad(a, b, c, scalar), repeat)),
            "triad_fresh": (3, _timed(fresh, repeat)),
        }
    finally:
        numba.set_num_threads(previous)
    result = {"n": n, "dtype": dtype.name, "threads": threads}
    for name, (arrays, times) in runs.items():
        nbytes = arrays * n * dtype.itemsize
        result[name] = nbytes / statistics.median(times) / 1e9
        result[name + "_best"] = nbytes / min(times) / 1e9
    return result


def describe(bw):
    return (f"copy {bw['copy']:.1f} GB/s, triad {bw['triad']:.1f} GB/s "
            f"(best {bw['triad_best']:.1f}), "
            f"triad into a fresh output {bw['triad_fresh']:.1f} GB/s "
            f"[median; Numba prange, {bw['threads']} threads, n={bw['n']:.0e} {bw['dtype']}]")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=float, default=1e7)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--dtype", default="float64")
    args = parser.parse_args(argv)
    print(describe(measure(int(args.n), args.dtype, args.threads, args.repeat)))


if __name__ == "__main__":
    main()
