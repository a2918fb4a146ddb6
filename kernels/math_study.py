"""Question: on this machine, is nbgrad's plain-arithmetic scalar math
(``nbgrad.backends.scalar_math``) faster per element than the libm calls
Numba emits for ``math.exp`` & co. and than NumPy's ufuncs, in a ``prange``
loop over float32 and float64 arrays -- and does LLVM vectorize the loop?

For each function and dtype it times, on n elements (default 1e7):

  (a) libm   a prange loop calling ``math.<f>`` (Numba -> llvm.<f> / libm)
  (b) ours   the same loop calling ``numba.njit(inline="always")(sm.<f>)``
  (c) numpy  the ufunc with ``out=`` (single thread; sigmoid is composed
             from three ufunc calls, NumPy has none)

and prints best-of-5 ns/element side by side (plus a plain copy loop: the
memory-bandwidth floor at this n), then for (a) and (b) whether
the loop was vectorized: the widest packed floating-point register seen in
the machine code (``vfmadd..ps %zmm`` and friends) and which math calls are
left in the LLVM IR.  A last row times ``sin`` with a libm branch for huge
arguments, the design scalar_math avoids: LLVM if-converts the branch and
calls libm for every lane (scalar_math's sin/cos instead run a vectorized
Payne-Hanek reduction for every lane, which is what makes them slower than
exp here).

Run from the repository root:  python -m kernels.math_study [--n N]
"""
import argparse
import math
import os
import re
import time

import numba
import numpy as np
from numba import prange

from nbgrad.backends import scalar_math as sm

NAMES = ["exp", "expm1", "log", "log1p", "tanh", "sigmoid", "sin", "cos"]
DOMAIN = dict(exp=(-10, 10), expm1=(-2, 2), log=(1e-3, 10), log1p=(-0.9, 10),
              tanh=(-5, 5), sigmoid=(-10, 10), sin=(-100, 100), cos=(-100, 100))


LIBM = dict(exp=math.exp, expm1=math.expm1, log=math.log, log1p=math.log1p,
            tanh=math.tanh, sin=math.sin, cos=math.cos)


def _sin_with_fallback(dtype):
    """sm.sin plus the obvious ``math.sin`` branch for huge arguments."""
    limit = dtype(1e5)

    def f(x):
        return math.sin(x) if abs(x) > limit else sm.sin(x)
    return f


def prange_kernel(scalar):
    f = numba.njit(inline="always")(scalar)

    @numba.njit(parallel=True)
    def kernel(x, out):
        for i in prange(x.shape[0]):
            out[i] = f(x[i])
    return kernel


def _identity(x):
    return x


def libm_scalar(name, dtype):
    if name == "sigmoid":
        one = dtype(1)

        def f(x):                   # keep float32 in float32
            return one / (one + math.exp(-x))
        return f
    g = LIBM[name]

    def f(x):
        return g(x)
    return f


def numpy_call(name):
    if name == "sigmoid":
        def f(x, out):
            np.negative(x, out=out)
            np.exp(out, out=out)
            out += 1
            np.reciprocal(out, out=out)
        return f
    u = getattr(np, name)
    return lambda x, out: u(x, out=out)


def best_ns(fn, x, out, reps=5):
    fn(x, out)                                   # compile / warm up
    best = math.inf
    for _ in range(reps):
        t = time.perf_counter()
        fn(x, out)
        best = min(best, time.perf_counter() - t)
    return best / x.size * 1e9


PACKED = re.compile(r"\bv(?:fn?m(?:add|sub)\w*|mul|add|sub|div|min|max)p[sd]\s[^\n]*%([xyz])mm")
MATHCALL = re.compile(r"@(llvm\.(?:exp|log|sin|cos|pow)[\w.]*|\w*(?:exp|log|tanh|sin|cos)\w*f?)\(")


def simd(kernel):
    sig = kernel.signatures[0]
    asm = kernel.inspect_asm(sig)
    regs = set(PACKED.findall(asm))
    width = "zmm" if "z" in regs else "ymm" if "y" in regs else "xmm" if "x" in regs else None
    ir = kernel.inspect_llvm(sig)
    calls = sorted({m for m in MATHCALL.findall(ir)
                    if not m.startswith(("llvm.fma", "llvm.experimental"))})
    text = f"SIMD {width}" if width else "scalar"
    return text + (f", calls {'/'.join(calls)}" if calls else ", no math calls")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=float, default=1e7)
    args = ap.parse_args()
    n = int(args.n)
    rng = np.random.default_rng(0)
    print(f"n = {n:,}, numba {numba.__version__} with {numba.get_num_threads()} threads, "
          f"numpy {np.__version__}; ns/element, best of 5; "
          f"load average {os.getloadavg()[0]:.1f} (timings are only meaningful near 0)")
    for dtype in (np.float32, np.float64):
        print(f"\n{dtype.__name__:8s} {'libm':>7s} {'ours':>7s} {'numpy':>7s} {'libm/ours':>9s}"
              f"   vectorization: libm loop | our loop")
        x = rng.uniform(-1, 1, n).astype(dtype)
        print(f"{'copy':8s} {'':>7s} {best_ns(prange_kernel(_identity), x, np.empty_like(x)):7.2f}"
              f"   (memory-bandwidth floor)")
        for name in NAMES + ["sin+fallback"]:
            base = name.split("+")[0]
            lo, hi = DOMAIN[base]
            x = rng.uniform(lo, hi, n).astype(dtype)
            out = np.empty_like(x)
            ours = prange_kernel(_sin_with_fallback(dtype) if "+" in name
                                 else getattr(sm, name))
            t_ours = best_ns(ours, x, out)
            if "+" in name:
                print(f"{name:8s} {'':>7s} {t_ours:7.2f} {'':>27s} {'':>30s} | "
                      f"{simd(ours)}")
                continue
            libm = prange_kernel(libm_scalar(name, dtype))
            t_libm = best_ns(libm, x, out)
            t_np = best_ns(numpy_call(name), x, out)
            print(f"{name:8s} {t_libm:7.2f} {t_ours:7.2f} {t_np:7.2f} {t_libm / t_ours:8.1f}x   "
                  f"{simd(libm):>30s} | {simd(ours)}")


if __name__ == "__main__":
    main()
