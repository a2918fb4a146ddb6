"""Question: on this machine, is nbgrad's plain-arithmetic scalar math
(``nbgrad.declarations.scalar_math``) faster per element than the libm calls
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
exp here).  The sin_small / cos_small rows are the Cody-Waite versions for
|x| <= TRIG_SMALL_LIMIT that the CPU kernels run on blocks of small
arguments.

Two more questions, each its own mode:

  --exhaustive   Are sin_small / cos_small (the range-limited versions the
                 CPU kernels run on blocks of small arguments) as accurate
                 as the full-range sin / cos for float32?  Every float32 x
                 with |x| <= TRIG_SMALL_LIMIT (about 2.2e9 values, both
                 signs): how many results differ from sin_f32 / cos_f32,
                 and the worst ulp error of each against libm's double
                 sin/cos (~2 minutes on 2 cores).
  --blocks       Which FAST_BLOCK (elements per checked block) is fastest
                 for the generated sin kernel, serial and prange, float32
                 and float64.
  --pow          Is the vectorized float32 pow (exp2(y log2|x|) in double)
                 within 0.5 ulp + 2**-12, and how fast is it?  Worst error
                 in ulps against libm's double pow over dense sweeps (every
                 64th positive float32 x with y spreading the results over
                 the whole float32 range, denormals included; negative x
                 with integer y; x within 2**-8 of 1 with huge y; random bit
                 patterns), how many results are not correctly rounded,
                 special-case pairs against np.power, the relative errors
                 of its log2 and exp2 kernels against long double; then
                 ns/element for pow in a prange loop, a libm (powf) loop
                 and np.power, and whether the loops vectorize (~1 minute).

  --more         The issue-15 functions (log2 log10 exp2 sinh cosh asinh
                 acosh atanh atan asin acos, float32 evaluated in double and
                 rounded once): worst error in float32 ulps against NumPy's
                 float64 result on dense random sweeps (log-uniform over
                 the whole range and uniform over the usual one, 4e6 values
                 each), special values against NumPy, then ns/element in a
                 prange loop against a libm (math.<f>, float32) loop and the
                 NumPy ufunc, and whether each loop vectorizes.

  --erf         erf, erfc, erfinv (branch-free; float32 in double) and
                 fmod, remainder, floor_divide (the small-quotient versions
                 the CPU kernels run on checked blocks): worst float32 error
                 in ulps against PyTorch's float64 result (4e6 values per
                 sweep: log-uniform, dense, the erfinv tails near +-1), then
                 ns/element of our prange loop, a libm loop (math.erf(c);
                 frem for fmod & co.) and PyTorch (torch.<f>, out=, its
                 threads), float32 and float64, and whether our loop vectorizes.

Run from the repository root:  python -m kernels.math_study [--n N]
                                [--exhaustive | --blocks | --pow | --more | --erf]
"""
import argparse
import math
import os
import re
import time

import numba
import numpy as np
from numba import prange

from nbgrad.declarations import scalar_math as sm

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
MATHCALL = re.compile(r"@(llvm\.(?:exp|log|sin|cos|pow)[\w.]*|\w*(?:exp|log|tanh|sin|cos|tan|pow|"
                      r"erf|hypot)\w*f?)\(")


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


@numba.njit(inline="always")
def _ulps32(got, ref):
    """|got - ref| in float32 ulps at ref (a double), denormals included."""
    if got == np.float32(ref):
        return 0.0
    e = math.frexp(abs(ref))[1]                 # abs(ref) in [2**(e-1), 2**e)
    return abs(np.float64(got) - ref) / math.ldexp(1.0, max(e - 24, -149))


def _exhaustive_kernel(small, full, exact):
    small, full = numba.njit(inline="always")(small), numba.njit(inline="always")(full)

    @numba.njit(parallel=True)
    def sweep(first, count, limit, err_small, err_full, differ):
        for j in prange(count):
            x = np.uint32(first + j)
            v = _bits_to_f32(x)
            if not abs(v) <= limit:
                err_small[j] = 0.0
                err_full[j] = 0.0
                differ[j] = False
                continue
            a = small(v)
            b = full(v)
            ref = exact(np.float64(v))
            differ[j] = a != b
            err_small[j] = _ulps32(a, ref)
            err_full[j] = _ulps32(b, ref)
    return sweep


@numba.njit(inline="always")
def _bits_to_f32(bits):
    return np.uint32(bits).view(np.float32)


def _sin_exact(x):
    return math.sin(x)


def _cos_exact(x):
    return math.cos(x)


def exhaustive():
    """See the module docstring (--exhaustive)."""
    limit = np.float32(sm.TRIG_SMALL_LIMIT)
    chunk = 1 << 24
    print(f"every float32 with |x| <= {float(limit):g}; errors in ulps against libm's double "
          f"result; {numba.get_num_threads()} threads")
    for name, exact in (("sin", _sin_exact), ("cos", _cos_exact)):
        sweep = _exhaustive_kernel(getattr(sm, name + "_small_f32"), getattr(sm, name + "_f32"),
                                   numba.njit(inline="always")(exact))
        err_small, err_full = np.empty(chunk), np.empty(chunk)
        differ = np.empty(chunk, np.bool_)
        worst = {"small": (0.0, 0.0), "full": (0.0, 0.0)}
        n_differ = n_values = 0
        diffs = []
        t = time.perf_counter()
        for first in range(0, 1 << 32, chunk):
            sweep(first, chunk, limit, err_small, err_full, differ)
            x = np.arange(first, first + chunk, dtype=np.uint64).astype(np.uint32).view(np.float32)
            n_values += int(np.count_nonzero(np.abs(x) <= limit))
            for key, err in (("small", err_small), ("full", err_full)):
                i = int(np.argmax(err))
                if err[i] > worst[key][0]:
                    worst[key] = (float(err[i]), float(x[i]))
            k = np.flatnonzero(differ)
            n_differ += k.size
            k = k[:3]
            diffs.extend(zip(x[k].tolist(), err_small[k].tolist(), err_full[k].tolist()))
        print(f"{name}: {n_values:,} values in {time.perf_counter() - t:.0f} s; "
              f"{name}_small differs from {name} on {n_differ:,}; worst {name}_small "
              f"{worst['small'][0]:.4f} ulp (x={worst['small'][1]!r}), "
              f"worst {name} {worst['full'][0]:.4f} ulp (x={worst['full'][1]!r})")
        for x, a, b in diffs[:6]:
            print(f"    differs at x={x!r}: small {a:.4f} ulp, full {b:.4f} ulp")


def blocks(n):
    """See the module docstring (--blocks)."""
    from nbgrad.backends.cpu import elementwise as E
    from nbgrad.declarations.op_table import BY_NAME
    rng = np.random.default_rng(0)
    sizes = (256, 512, 1024, 2048, 4096, 8192)
    saved = E.FAST_BLOCK
    print(f"n = {n:,}, sin forward kernel, uniform(-100, 100); ms, best of 7 (interleaved); "
          f"load average {os.getloadavg()[0]:.1f}")
    try:
        for dtype in (np.float32, np.float64):
            x = rng.uniform(-100, 100, n).astype(dtype)
            out = np.empty_like(x)
            kernels = {}
            for b in sizes:
                E.FAST_BLOCK = b
                module = E._forward_module(BY_NAME["sin"], "a", 1)
                kernels[b] = (module.serial, module.parallel)
            times = {(b, v): math.inf for b in sizes for v in (0, 1)}
            for _ in range(7):
                for b, pair in kernels.items():
                    for v, kernel in enumerate(pair):
                        kernel(out, x)
                        t = time.perf_counter()
                        kernel(out, x)
                        times[b, v] = min(times[b, v], time.perf_counter() - t)
            print(f"{dtype.__name__:8s} " + "  ".join(
                f"{b}: {times[b, 0] * 1e3:.2f}/{times[b, 1] * 1e3:.2f}" for b in sizes)
                + "   (block: serial/prange)")
    finally:
        E.FAST_BLOCK = saved


# --------------------------------------------------------------------------
# --pow
# --------------------------------------------------------------------------
@numba.njit(parallel=True, error_model="numpy")    # 0.0 ** -1.0: inf, no exception
def _pow_errors(x, y, err):
    """err[i]: ulps of pow_f32(x[i], y[i]) against libm's double pow; 0 when
    both are nan, inf when only one is."""
    for i in prange(x.shape[0]):
        got = sm.pow_f32(x[i], y[i])
        ref = np.float64(x[i]) ** np.float64(y[i])
        if math.isnan(got) or math.isnan(ref):
            err[i] = 0.0 if math.isnan(got) and math.isnan(ref) else math.inf
        elif math.isinf(got) or math.isinf(ref):
            err[i] = 0.0 if got == np.float32(ref) else math.inf
        else:
            err[i] = _ulps32(got, ref)


def _pow_sweeps(rng, chunk):
    """(label, x, y) chunks: see the module docstring (--pow)."""
    bits = np.arange(1, 0x7F800000, 64, dtype=np.uint32)   # positive finite x
    for first in range(0, bits.size, chunk):
        x = bits[first:first + chunk].view(np.float32)
        t = rng.uniform(-155, 129, x.size)                 # log2 of the result
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            y = (t / np.log2(x.astype(np.float64))).astype(np.float32)
        yield "dense x > 0, results 2**-155..2**129", x, y
        yield "x < 0, integer y", -x, np.round(y)
    for _ in range(4):
        x = (1 + rng.integers(-2**16, 2**16, chunk) * 2.0**-24).astype(np.float32)
        with np.errstate(divide="ignore"):
            y = (rng.uniform(-104, 104, chunk) / np.log(x.astype(np.float64))).astype(np.float32)
        yield "|x - 1| < 2**-8, huge y", x, y
    for _ in range(8):
        b = rng.integers(0, 2**32, (2, chunk), dtype=np.uint64).astype(np.uint32)
        yield "random bit patterns", b[0].view(np.float32), b[1].view(np.float32)


_POW_SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 2.5, -2.5,
                np.inf, -np.inf, np.nan, -np.nan, 1e-45, -1e-45, 1.5e-39, 3.4e38, -3.4e38,
                8388609.0, -8388609.0, 16777216.0, -16777216.0, 0.99999994, 1.0000001]


def _pow_special_mismatches():
    """Pairs of special values where pow_f32 is not exactly np.power's result
    (a special value: nan, inf, 0 or +-1, sign of zero included)."""
    x, y = np.array(np.meshgrid(_POW_SPECIAL, _POW_SPECIAL), np.float32).reshape(2, -1)
    out = np.empty_like(x)
    prange_kernel2(sm.pow_f32)(x, y, out)
    with np.errstate(all="ignore"):
        ref = np.power(x, y)
    special = ~np.isfinite(ref) | (ref == 0) | (np.abs(ref) == 1)
    same = (out == ref) & (np.signbit(out) == np.signbit(ref)) | np.isnan(out) & np.isnan(ref)
    return int(special.sum()), int((special & ~same).sum())


@numba.njit(parallel=True)
def _log2_kernel_all(out):
    """log2 of every float32 m in [RN(sqrt .5), 2 RN(sqrt .5)) (the other
    binades only add an exact e), by the reduction and kernel pow_f32 uses
    (in double)."""
    for j in prange(out.shape[0]):
        m = np.uint32(0x3F3504F3 + j).view(np.float32)
        ef, f = sm._log_reduce_f32d(m)
        out[j] = sm._log2_kernel_f32d(ef, f)


@numba.njit(parallel=True)
def _exp2_kernel(t, out):
    for j in prange(t.shape[0]):
        out[j] = sm._exp2_f32d(t[j])


def prange_kernel2(scalar):
    f = numba.njit(inline="always")(scalar)

    @numba.njit(parallel=True)
    def kernel(x, y, out):
        for i in prange(x.shape[0]):
            out[i] = f(x[i], y[i])
    return kernel


def _libm_pow(x, y):
    return x ** y               # float32: llvm.pow.f32, i.e. libm's powf


def pow_study(n):
    """See the module docstring (--pow)."""
    rng = np.random.default_rng(0)
    chunk = 1 << 22
    t0 = time.perf_counter()
    print(f"float32 pow: errors in ulps against libm's double pow; {numba.get_num_threads()} "
          f"threads; load average {os.getloadavg()[0]:.1f}")
    err = np.empty(chunk)
    stats = {}
    for label, x, y in _pow_sweeps(rng, chunk):
        e = err[:x.size]
        _pow_errors(x, y, e)
        i = int(np.argmax(e))
        count, worst, above, where = stats.get(label, (0, -1.0, 0, None))
        if e[i] > worst:
            worst, where = float(e[i]), (x[i], y[i])
        stats[label] = (count + x.size, worst, above + int(np.count_nonzero(e > 0.5)), where)
    for label, (count, worst, above, (x, y)) in stats.items():
        print(f"  {label:38s} {count:>11,} pairs: worst {worst:.5f} ulp at x={x!r}, y={y!r}; "
              f"not correctly rounded: {above:,}")
    total, bad = _pow_special_mismatches()
    print(f"  special-value results (nan, inf, 0, +-1) of {len(_POW_SPECIAL)}**2 special pairs: "
          f"{total}, different from np.power: {bad}")
    if np.finfo(np.longdouble).nmant >= 63:
        logs = np.empty(0x007FFFFF + 1)
        _log2_kernel_all(logs)
        m = (np.arange(logs.size, dtype=np.uint32) + np.uint32(0x3F3504F3)).view(np.float32)
        exact = np.log2(m.astype(np.longdouble))
        keep = exact != 0                           # m = 1: exactly 0
        rel = np.abs((logs[keep] - exact[keep]) / exact[keep])
        t = rng.uniform(-150, 128, 1 << 22)
        exps = np.empty_like(t)
        _exp2_kernel(t, exps)
        exact2 = np.exp2(t.astype(np.longdouble))
        rel2 = np.abs((exps - exact2) / exact2)
        print(f"  log2 kernel, all {logs.size:,} float32 in [sqrt(.5), sqrt(2)): relative error "
              f"2**{np.log2(float(rel.max())):.1f}; exp2 kernel, {t.size:,} t in [-150, 128]: "
              f"2**{np.log2(float(rel2.max())):.1f}")
    print(f"  ({time.perf_counter() - t0:.0f} s)")

    x = rng.uniform(0.5, 2, n).astype(np.float32)
    y = rng.uniform(0.5, 2, n).astype(np.float32)
    out = np.empty_like(x)
    ours, libm = prange_kernel2(sm.pow), prange_kernel2(_libm_pow)
    times = {}
    for name, fn in (("ours", ours), ("libm", libm),
                     ("numpy", lambda x, y, out: np.power(x, y, out=out))):
        fn(x, y, out)
        best = math.inf
        for _ in range(5):
            t = time.perf_counter()
            fn(x, y, out)
            best = min(best, time.perf_counter() - t)
        times[name] = best / n * 1e9
    print(f"\nn = {n:,}, x, y uniform in (0.5, 2); ns/element, best of 5: ours "
          f"{times['ours']:.2f}, libm {times['libm']:.2f} (prange loops), numpy "
          f"{times['numpy']:.2f} (one thread)")
    ir = ours.inspect_llvm(ours.signatures[0])
    lanes = sorted(set(re.findall(r"<(\d+ x (?:float|double))>", ir)))
    print(f"vectorization: libm loop {simd(libm)} | our loop {simd(ours)}; vector types "
          f"{', '.join(lanes)} (8 lanes on AVX-512: 16 spill and run ~25% slower)")


MORE = {  # name: (NumPy's float64 reference, sweeps: (lo, hi, log-uniform of |x| with signs))
    "log2": (np.log2, [(1e-45, 3e38, True), (0.5, 2, False)]),
    "log10": (np.log10, [(1e-45, 3e38, True), (0.5, 2, False)]),
    "exp2": (np.exp2, [(-150, 128, False), (-1, 1, False)]),
    "sinh": (np.sinh, [(-90, 90, False), (1e-40, 1, True)]),
    "cosh": (np.cosh, [(-90, 90, False), (-1, 1, False)]),
    "asinh": (np.arcsinh, [(1e-40, 3e38, True), (-2, 2, False)]),
    "acosh": (np.arccosh, [(1, 3e38, True), (1, 1.01, False)]),
    "atanh": (np.arctanh, [(1e-40, 1, True), (-1, 1, False)]),
    "atan": (np.arctan, [(1e-40, 3e38, True), (-3, 3, False)]),
    "asin": (np.arcsin, [(1e-40, 1, True), (-1, 1, False)]),
    "acos": (np.arccos, [(1e-40, 1, True), (0.999, 1, False)]),
}


def _libm_more(name):
    """``math.<name>`` on a float32 (libm's float version where Numba has one)."""
    body = "TWO32 ** x" if name == "exp2" else f"math.{name}(x)"
    namespace = {"math": math, "TWO32": np.float32(2)}
    exec(f"def f(x):\n    return {body}\n", namespace)
    return namespace["f"]

MORE_SPECIALS = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1e-30, 1e30, -1e30, 1e-40,
                          -1e-40, 1.0, -1.0, -1.5, 0.5, 2.0, 1 - 2 ** -24, -(1 - 2 ** -24), 89.5,
                          -89.5, 128.0, -150.0], np.float32)


def _sweep(rng, lo, hi, log, n):
    if log:
        x = np.exp(rng.uniform(np.log(lo), np.log(hi), n)) * rng.choice([-1.0, 1.0], n)
    else:
        x = rng.uniform(lo, hi, n)
    return x.astype(np.float32)


def more_study(n):
    """Accuracy and speed of the issue-15 float32 functions (see --more)."""
    rng = np.random.default_rng(0)
    print(f"float32; ns/element at n = {n:,} ({numba.get_num_threads()} threads), best of 5; "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"{'fn':6s} {'max ulps':>8s} {'specials':>8s} {'libm':>7s} {'ours':>7s} {'numpy':>7s}"
          f"   vectorization: libm loop | our loop")
    for name, (ref, sweeps) in MORE.items():
        ours = prange_kernel(getattr(sm, name))
        worst, bad = 0.0, 0
        for lo, hi, log in sweeps:
            x = _sweep(rng, lo, hi, log, 4_000_000)
            out = np.empty_like(x)
            ours(x, out)
            with np.errstate(all="ignore"):
                exact = ref(x.astype(np.float64))
                want = exact.astype(np.float32)
            ok = np.isfinite(exact) & np.isfinite(want)
            spacing = np.spacing(np.abs(want[ok])).astype(np.float64)
            worst = max(worst, float(np.max(np.abs(out[ok] - exact[ok]) / spacing)))
        out = np.empty_like(MORE_SPECIALS)
        ours(MORE_SPECIALS, out)
        with np.errstate(all="ignore"):
            want = ref(MORE_SPECIALS.astype(np.float64)).astype(np.float32)
        same = (np.isnan(out) & np.isnan(want)) | ((out == want) &
                                                    (np.signbit(out) == np.signbit(want)))
        bad = int((~same).sum())
        x = _sweep(rng, *sweeps[-1], n)
        out = np.empty_like(x)
        t_ours = best_ns(ours, x, out)
        libm = prange_kernel(_libm_more(name))
        t_libm = best_ns(libm, x, out)
        u = getattr(np, {"asinh": "arcsinh", "acosh": "arccosh", "atanh": "arctanh",
                         "atan": "arctan", "asin": "arcsin", "acos": "arccos"}.get(name, name))
        t_np = best_ns(lambda v, o: u(v, out=o), x, out)
        print(f"{name:6s} {worst:8.3f} {bad:8d} {t_libm:7.2f} {t_ours:7.2f} {t_np:7.2f}   "
              f"{simd(libm)} | {simd(ours)}")


ERF_SWEEPS = {  # (lo, hi, log-uniform |x| with signs)
    "erf": [(1e-40, 10, True), (-4, 4, False)],
    "erfc": [(1e-40, 11, True), (-3, 10, False)],
    "erfinv": [(1e-40, 1, True), (-1, 1, False), (1 - 1e-4, 1, False)],
}


def _libm_erf(name):
    return {"erf": lambda x: math.erf(x), "erfc": lambda x: math.erfc(x)}.get(name)


def erf_study(n):
    """Accuracy and speed of erf, erfc, erfinv and the quotient ops (see --erf)."""
    import torch
    rng = np.random.default_rng(0)
    print(f"ns/element at n = {n:,} (numba {numba.get_num_threads()} threads, torch "
          f"{torch.get_num_threads()}), best of 5; load average {os.getloadavg()[0]:.1f}")
    print(f"{'fn':13s} {'dtype':7s} {'max ulps':>8s} {'libm':>7s} {'ours':>7s} {'torch':>7s}"
          f"   our loop")
    for name, sweeps in ERF_SWEEPS.items():
        for dtype in (np.float32, np.float64):
            ours = prange_kernel(getattr(sm, name))
            worst = math.nan
            if dtype == np.float32:
                worst = 0.0
                for lo, hi, log in sweeps:
                    x = _sweep(rng, lo, hi, log, 4_000_000)
                    out = np.empty_like(x)
                    ours(x, out)
                    exact = getattr(torch, name)(torch.from_numpy(x.astype(np.float64))).numpy()
                    want = exact.astype(np.float32)
                    ok = np.isfinite(exact) & np.isfinite(want)
                    spacing = np.maximum(np.spacing(np.abs(want[ok])), np.float32(2 ** -149))
                    worst = max(worst, float(np.max(np.abs(out[ok] - exact[ok]) / spacing)))
            x = _sweep(rng, *sweeps[-1 if name != "erfinv" else 1], n).astype(dtype)
            out = np.empty_like(x)
            t_ours = best_ns(ours, x, out)
            libm = _libm_erf(name)
            t_libm = best_ns(prange_kernel(libm), x, out) if libm else math.nan
            tx, to = torch.from_numpy(x), torch.from_numpy(out)
            t_torch = best_ns(lambda v, o: getattr(torch, name)(tx, out=to), x, out)
            print(f"{name:13s} {dtype.__name__:7s} {worst:8.3f} {t_libm:7.2f} {t_ours:7.2f} "
                  f"{t_torch:7.2f}   {simd(ours)}")
    for name in ("fmod", "remainder", "floor_divide"):
        for dtype in (np.float32, np.float64):
            x = rng.uniform(-1e3, 1e3, n).astype(dtype)
            y = (rng.uniform(0.5, 4, n) * rng.choice([-1.0, 1.0], n)).astype(dtype)
            out = np.empty_like(x)
            small, full = (prange_kernel2(getattr(sm, name + s)) for s in ("_small", ""))
            t_small = best_ns(lambda a, o: small(a, y, o), x, out)
            t_full = best_ns(lambda a, o: full(a, y, o), x, out)
            tx, ty, to = torch.from_numpy(x), torch.from_numpy(y), torch.from_numpy(out)
            t_torch = best_ns(lambda a, o: getattr(torch, name)(tx, ty, out=to), x, out)
            print(f"{name + '_small':13s} {dtype.__name__:7s} {'':>8s} {t_full:7.2f} "
                  f"{t_small:7.2f} {t_torch:7.2f}   {simd(small)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=float, default=1e7)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--exhaustive", action="store_true")
    mode.add_argument("--blocks", action="store_true")
    mode.add_argument("--pow", action="store_true")
    mode.add_argument("--more", action="store_true")
    mode.add_argument("--erf", action="store_true")
    args = ap.parse_args()
    n = int(args.n)
    if args.exhaustive:
        return exhaustive()
    if args.blocks:
        return blocks(n)
    if args.pow:
        return pow_study(n)
    if args.more:
        return more_study(n)
    if args.erf:
        return erf_study(n)
    rng = np.random.default_rng(0)
    print(f"n = {n:,}, numba {numba.__version__} with {numba.get_num_threads()} threads, "
          f"numpy {np.__version__}; ns/element, best of 5; "
          f"load average {os.getloadavg()[0]:.1f} (timings are only meaningful near 0)")
    for dtype in (np.float32, np.float64):
        print(f"\n{dtype.__name__:9s} {'libm':>7s} {'ours':>7s} {'numpy':>7s} {'libm/ours':>9s}"
              f"   vectorization: libm loop | our loop")
        x = rng.uniform(-1, 1, n).astype(dtype)
        print(f"{'copy':9s} {'':>7s} {best_ns(prange_kernel(_identity), x, np.empty_like(x)):7.2f}"
              f"   (memory-bandwidth floor)")
        for name in NAMES + ["sin_small", "cos_small", "sin+fallback"]:
            base = name.split("+")[0].removesuffix("_small")
            lo, hi = DOMAIN[base]
            x = rng.uniform(lo, hi, n).astype(dtype)
            out = np.empty_like(x)
            ours = prange_kernel(_sin_with_fallback(dtype) if "+" in name
                                 else getattr(sm, name))
            t_ours = best_ns(ours, x, out)
            if "+" in name:
                print(f"{name:9s} {'':>7s} {t_ours:7.2f} {'':>27s} {'':>30s} | "
                      f"{simd(ours)}")
                continue
            libm = prange_kernel(libm_scalar(base, dtype))
            t_libm = best_ns(libm, x, out)
            t_np = best_ns(numpy_call(base), x, out)
            print(f"{name:9s} {t_libm:7.2f} {t_ours:7.2f} {t_np:7.2f} {t_libm / t_ours:8.1f}x   "
                  f"{simd(libm):>30s} | {simd(ours)}")


if __name__ == "__main__":
    main()
