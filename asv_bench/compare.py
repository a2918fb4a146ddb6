"""nbgrad, NumPy and PyTorch on the same work, timed side by side in one run.

    python -m asv_bench.compare [--quick] [--rows sigmoid,tanh] [--n 1e7]
                                [--dtype float32] [--threads 2] [--profile 25]

Prints, for every elementwise row of ``nbgrad.ROWS`` (except ``copy`` and
``fill``, the in-place writes behind ``copy_``/``fill_``):

- forward, and backward where the row is differentiable, in ms for nbgrad,
  NumPy (the same formula written with NumPy ufuncs; its backward is the
  row's derivative written by hand) and PyTorch (eager; backward is
  autograd's, timed alone: the graph is kept with ``retain_graph=True``);
- torch/nbgrad (above 1: nbgrad is faster);
- nbgrad's effective bandwidth: bytes an ideal kernel reads and writes (each
  array element once, the STREAM convention) over nbgrad's time, and that as
  a percentage of a Numba ``prange`` triad on the same number of elements,
  timed in the same rounds (so machine load affects both alike);
- a check that nbgrad's values and gradients match PyTorch's.

Then a chain of 10 ops on 16-element tensors, forward and backward (per-op
Python overhead: nbgrad, PyTorch, and a minimal NumPy tape), one SGD step of a
784-256-10 MLP (nbgrad, PyTorch, MyGrad when installed, hand-written NumPy),
and the start-up of a new process with a warm kernel cache (``import nbgrad``
plus the first forward and backward through 10 ops; one process first fills a
temporary cache).

Every number is the median of several samples taken round-robin (nbgrad,
NumPy, PyTorch, triad, nbgrad, ...), each sample preceded by an untimed
call, so the comparison is fair on a shared, noisy machine: read the ratios,
not the absolute times.

OpenBLAS: the variables ``OPENBLAS_CORETYPE`` and ``OPENBLAS_L2_SIZE`` (set on
some machines for old OpenBLAS builds) slow NumPy's matrix products down; this
script unsets them for its own process before NumPy is imported, and says so.
``--keep-openblas-env`` keeps them.

Thread pools: nbgrad's parallel kernels (Numba, OpenMP layer), PyTorch
(OpenMP) and NumPy's BLAS (OpenBLAS threads) each keep worker threads that
spin for a while after their work; on 2 cores a spinning pool delays the
next library's threads by a scheduler time slice. ``--omp-passive`` sets
``OMP_WAIT_POLICY=PASSIVE`` for this process (before any OpenMP runtime
loads), so OpenMP workers sleep at once; compare with and without it.
"""
import os
import sys

_OPENBLAS_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
_NUMPY_ALREADY_IMPORTED = "numpy" in sys.modules
_UNSET = ({} if "--keep-openblas-env" in sys.argv else
          {k: os.environ.pop(k) for k in _OPENBLAS_VARS if k in os.environ})
if "--omp-passive" in sys.argv:  # read by the OpenMP runtimes when they load
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"

import argparse  # noqa: E402
import cProfile  # noqa: E402
import gc  # noqa: E402
import platform  # noqa: E402
import pstats  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numba  # noqa: E402
import numpy as np  # noqa: E402

import nbgrad  # noqa: E402

from . import bandwidth  # noqa: E402
from .benchmarks import common  # noqa: E402
from .benchmarks.bench_compile import startup_seconds  # noqa: E402

try:
    import torch
except ImportError:  # the comparison still runs, with "-" for PyTorch
    torch = None
try:
    import mygrad  # the MLP step only
except ImportError:
    mygrad = None


# --------------------------------------------------------------- references
def _sigmoid(a):
    return 1 / (1 + np.exp(-a))


NUMPY_FORWARD = {
    "neg": np.negative, "add": np.add, "sub": np.subtract, "mul": np.multiply,
    "div": np.divide, "pow": np.power, "exp": np.exp, "log": np.log, "sqrt": np.sqrt,
    "abs": np.abs, "sin": np.sin, "cos": np.cos, "tanh": np.tanh, "sigmoid": _sigmoid,
    "relu": lambda a: np.maximum(a, 0), "maximum": np.maximum, "minimum": np.minimum,
    "clamp": np.clip, "where": np.where, "eq": np.equal, "ne": np.not_equal, "lt": np.less,
    "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
    # issue 15
    "rsqrt": lambda a: 1 / np.sqrt(a), "log1p": np.log1p, "expm1": np.expm1, "log2": np.log2,
    "log10": np.log10, "exp2": np.exp2, "square": np.square, "sign": np.sign, "sgn": np.sign,
    "floor": np.floor, "ceil": np.ceil, "round": np.round, "trunc": np.trunc,
    "frac": lambda a: a - np.trunc(a), "atan": np.arctan, "asin": np.arcsin, "acos": np.arccos,
    "sinh": np.sinh, "cosh": np.cosh, "asinh": np.arcsinh, "acosh": np.arccosh,
    "atanh": np.arctanh, "atan2": np.arctan2, "hypot": np.hypot, "fmod": np.fmod,
    "remainder": np.remainder, "floor_divide": np.floor_divide,
    "lerp": lambda a, b, w: a + w * (b - a), "addcmul": lambda a, t1, t2, v: a + v * t1 * t2,
    "addcdiv": lambda a, t1, t2, v: a + v * t1 / t2, "logaddexp": np.logaddexp,
    "xlogy": lambda a, b: a * np.log(b), "copysign": np.copysign,
    "nan_to_num": lambda a, n, p, m: np.nan_to_num(a, nan=n, posinf=p, neginf=m),
    "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite,
    "isclose": lambda a, b, r, t, e: np.isclose(a, b, r, t, e),
    "logical_and": np.logical_and, "logical_or": np.logical_or, "logical_xor": np.logical_xor,
    "logical_not": np.logical_not, "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor, "bitwise_not": np.invert,
    "bitwise_left_shift": np.left_shift, "bitwise_right_shift": np.right_shift,
    "fmax": np.fmax, "fmin": np.fmin,
    "tan": np.tan, "deg2rad": np.deg2rad, "rad2deg": np.rad2deg, "sinc": np.sinc,
    "logit": lambda a, lo, hi: np.log(np.clip(a, 0.05, 0.95) / (1 - np.clip(a, 0.05, 0.95))),
    "xlog1py": lambda a, b: a * np.log1p(b), "entr": lambda a: -a * np.log(a),
}


def _max_grads(g, a, b):
    half = g / 2
    return [np.where(a > b, g, np.where(a == b, half, 0)),
            np.where(b > a, g, np.where(a == b, half, 0))]


def _min_grads(g, a, b):
    half = g / 2
    return [np.where(a < b, g, np.where(a == b, half, 0)),
            np.where(b < a, g, np.where(a == b, half, 0))]


# Hand-written NumPy backward: (g, out, *inputs) -> gradients of the inputs
# that get one, in input order. Plain formulas, as a NumPy user would write them.
NUMPY_BACKWARD = {
    "neg": lambda g, out, a: [-g],
    "add": lambda g, out, a, b: [g, g],
    "sub": lambda g, out, a, b: [g, -g],
    "mul": lambda g, out, a, b: [g * b, g * a],
    "div": lambda g, out, a, b: [g / b, -g * a / (b * b)],
    "pow": lambda g, out, a, b: [g * b * a ** (b - 1), g * out * np.log(a)],
    "exp": lambda g, out, a: [g * out],
    "log": lambda g, out, a: [g / a],
    "sqrt": lambda g, out, a: [g / (2 * out)],
    "abs": lambda g, out, a: [g * np.sign(a)],
    "sin": lambda g, out, a: [g * np.cos(a)],
    "cos": lambda g, out, a: [-g * np.sin(a)],
    "tanh": lambda g, out, a: [g * (1 - out * out)],
    "sigmoid": lambda g, out, a: [g * out * (1 - out)],
    "relu": lambda g, out, a: [np.where(out > 0, g, 0)],
    "maximum": lambda g, out, a, b: _max_grads(g, a, b),
    "minimum": lambda g, out, a, b: _min_grads(g, a, b),
    "clamp": lambda g, out, a, lo, hi: [np.where((a >= lo) & (a <= hi), g, 0)],
    "where": lambda g, out, c, a, b: [np.where(c, g, 0), np.where(c, 0, g)],
    # issue 15 (a few)
    "rsqrt": lambda g, out, a: [-0.5 * g * out ** 3],
    "log1p": lambda g, out, a: [g / (a + 1)],
    "expm1": lambda g, out, a: [g * (out + 1)],
    "atan": lambda g, out, a: [g / (a * a + 1)],
    "sinh": lambda g, out, a: [g * np.cosh(a)],
    "atan2": lambda g, out, a, b: [g * b / (a * a + b * b), -g * a / (a * a + b * b)],
    "hypot": lambda g, out, a, b: [g * a / out, g * b / out],
    "lerp": lambda g, out, a, b, w: [g * (1 - w), g * w, g * (b - a)],
    "addcmul": lambda g, out, a, t1, t2, v: [g, g * t2 * v, g * t1 * v],
    "logaddexp": lambda g, out, a, b: [g / (1 + np.exp(b - a)), g / (1 + np.exp(a - b))],
}

# PyTorch's function for each row (the same name for every current row; a
# row PyTorch calls differently gets an entry here).
TORCH_NAMES = {
    "neg": "neg", "add": "add", "sub": "sub", "mul": "mul", "div": "div", "pow": "pow",
    "exp": "exp", "log": "log", "sqrt": "sqrt", "abs": "abs", "sin": "sin", "cos": "cos",
    "tanh": "tanh", "sigmoid": "sigmoid", "relu": "relu", "maximum": "maximum",
    "minimum": "minimum", "clamp": "clamp", "where": "where", "eq": "eq", "ne": "ne",
    "lt": "lt", "le": "le", "gt": "gt", "ge": "ge",
}


def torch_function(row):
    if torch is None:
        return None
    if row.name in common.KEYWORD_CALLS:
        return common.KEYWORD_CALLS[row.name](torch)
    return getattr(torch, TORCH_NAMES.get(row.name, row.name), None)


# ------------------------------------------------------------------- timing
class Case:
    """A callable to time, with an optional untimed ``before`` hook run
    before every call (e.g. resetting ``.grad``)."""

    def __init__(self, fn, before=None):
        self.fn, self.before = fn, before

    def call(self):
        if self.before is not None:
            self.before()
        self.fn()

    def timed(self):
        if self.before is not None:
            self.before()
        t0 = time.perf_counter()
        self.fn()
        return time.perf_counter() - t0


SETTLE_S = 0.02
STATISTIC = statistics.median  # --stat min: the least disturbed sample instead


def side_by_side(cases, rounds, inner=1, settle=None):
    """Seconds per call of each case (median of the samples, or ``--stat``).
    Each round visits every case (starting from a different one each round):
    a short sleep, so that the worker threads the previous library left
    spinning go to sleep (on a 2-core machine a spinning OpenMP or OpenBLAS pool of another library
    steals the cores from this one's threads), one untimed call, which also
    wakes this library's threads, then ``inner`` timed calls."""
    settle = SETTLE_S if settle is None else settle
    cases = {k: c for k, c in cases.items() if c is not None}
    for c in cases.values():
        c.call()  # warm-up: compilation, first-touch, caches
    samples = {k: [] for k in cases}
    labels = list(cases)
    for r in range(rounds):
        shift = r % len(labels)
        for label in labels[shift:] + labels[:shift]:
            c = cases[label]
            if settle:
                time.sleep(settle)
            c.call()
            samples[label].extend(c.timed() for _ in range(inner))
    return {k: STATISTIC(v) for k, v in samples.items()}


# ------------------------------------------------------------ value checks
def _close(x, y, dtype):
    x, y = np.asarray(x), np.asarray(y)
    if x.shape != y.shape:
        return False
    if x.dtype == bool or y.dtype == bool:
        return bool(np.array_equal(x, y))
    rtol, atol = (1e-4, 1e-5) if np.dtype(dtype) == np.float32 else (1e-9, 1e-12)
    return bool(np.allclose(x, y, rtol=rtol, atol=atol, equal_nan=True))


# ---------------------------------------------------------------- row table
def _nb_ms(t):
    return "-" if t is None else f"{t * 1e3:.2f}"


def run_row(row, n, dtype, rounds, triad):
    """Forward and (where differentiable) backward timings of one row.
    Returns a list of result dicts (one per pass)."""
    triad_fn, triad_bytes = triad
    inputs = common.numpy_inputs(row, n, dtype)
    nb_fn = common.nbgrad_function(row)
    np_fwd = NUMPY_FORWARD.get(row.name)
    th_fn = torch_function(row)
    results = []

    # ---- forward (no input requires grad: no tape on either side)
    nb_args = common.to_nbgrad(inputs)
    th_args = [torch.from_numpy(a) if isinstance(a, np.ndarray) else a
               for a in inputs] if th_fn is not None else None
    check = "ok"
    nb_out = nb_fn(*nb_args)
    if th_fn is not None:
        th_out = th_fn(*th_args)
        check = "ok" if _close(nb_out.numpy(), th_out.numpy(), dtype) else "DIFF"
    else:
        check = "no torch"
    del nb_out
    cases = {
        "nbgrad": Case(lambda: nb_fn(*nb_args)),
        "numpy": Case(lambda: np_fwd(*inputs)) if np_fwd else None,
        "torch": Case(lambda: th_fn(*th_args)) if th_fn is not None else None,
        "triad": Case(triad_fn),
    }
    t = side_by_side(cases, rounds)
    results.append(_result(row, "fwd", t, common.forward_bytes(row, inputs, dtype),
                           triad_bytes, check, n))
    del cases, nb_args, th_args
    gc.collect()

    # ---- backward: out.backward(g, retain_graph=True) into the leaves' .grad
    wanted = common.grad_inputs(row, inputs)
    if not (common.is_differentiable(row) and wanted):
        return results
    g_np = common.upstream_gradient(n, dtype)
    nb_args = common.to_nbgrad(inputs, wanted)
    nb_out = nb_fn(*nb_args)
    g_nb = nbgrad.from_numpy(g_np)
    nb_leaves = [nb_args[i] for i in wanted]

    def nb_reset():
        for leaf in nb_leaves:
            leaf.grad = None

    cases = {"nbgrad": Case(lambda: nb_out.backward(g_nb, retain_graph=True), nb_reset)}
    np_bwd = NUMPY_BACKWARD.get(row.name)
    if np_bwd is not None and np_fwd is not None:
        np_out = np_fwd(*inputs)
        cases["numpy"] = Case(lambda: np_bwd(g_np, np_out, *inputs))
    check = "no torch"
    if th_fn is not None:
        th_args = [torch.from_numpy(a).requires_grad_() if k in wanted else
                   (torch.from_numpy(a) if isinstance(a, np.ndarray) else a)
                   for k, a in enumerate(inputs)]
        th_out = th_fn(*th_args)
        g_th = torch.from_numpy(g_np)
        th_leaves = [th_args[i] for i in wanted]

        def th_reset():
            for leaf in th_leaves:
                leaf.grad = None

        cases["torch"] = Case(lambda: th_out.backward(g_th, retain_graph=True), th_reset)
        nb_reset()
        th_reset()
        nb_out.backward(g_nb, retain_graph=True)
        th_out.backward(g_th, retain_graph=True)
        same = all(_close(a.grad.numpy(), b.grad.numpy(), dtype)
                   for a, b in zip(nb_leaves, th_leaves))
        check = "ok" if same else "DIFF"
    cases["triad"] = Case(triad_fn)
    t = side_by_side(cases, rounds)
    results.append(_result(row, "bwd", t, common.backward_bytes(row, inputs, dtype),
                           triad_bytes, check, n))
    del cases
    gc.collect()
    return results


# Below this many elements the arrays stay in cache and parallel start-up
# dominates: bandwidth is not the limit, so no percentage of triad is shown.
BANDWIDTH_MIN_N = 1_000_000


def _result(row, kind, t, nbytes, triad_bytes, check, n):
    nb = t["nbgrad"]
    gbps = nbytes / nb / 1e9
    triad_gbps = triad_bytes / t["triad"] / 1e9
    th = t.get("torch")
    pct = 100 * gbps / triad_gbps if n >= BANDWIDTH_MIN_N else None
    return {"row": row.name, "pass": kind, "nbgrad": nb, "numpy": t.get("numpy"), "torch": th,
            "ratio": th / nb if th else None, "gbps": gbps, "triad_gbps": triad_gbps,
            "pct": pct, "check": check}


def print_row_header():
    header = (f"{'row':<8} {'pass':<4} {'nbgrad ms':>10} {'numpy ms':>9} {'torch ms':>9} "
              f"{'torch/nbgrad':>12} {'nbgrad GB/s':>11} {'triad GB/s':>10} {'% triad':>7}  check")
    print(header)
    print("-" * len(header))


def print_row_line(r):
    ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f}"
    pct = "-" if r["pct"] is None else f"{r['pct']:.0f}%"
    print(f"{r['row']:<8} {r['pass']:<4} {_nb_ms(r['nbgrad']):>10} {_nb_ms(r['numpy']):>9} "
          f"{_nb_ms(r['torch']):>9} {ratio:>12} {r['gbps']:>11.1f} {r['triad_gbps']:>10.1f} "
          f"{pct:>7}  {r['check']}", flush=True)


# --------------------------------------------------------------- tiny chain
class TapeVar:
    """A minimal NumPy autograd tape: the floor a pure-Python tape reaches
    with NumPy doing the arithmetic (no checks, no version counters, no
    broadcasting, no dtypes)."""
    __slots__ = ("value", "parents", "grad", "requires_grad")

    def __init__(self, value, parents=(), requires_grad=False):
        self.value, self.parents, self.grad = value, parents, None
        self.requires_grad = requires_grad or bool(parents)

    def __mul__(self, o):
        return TapeVar(self.value * o.value,
                       ((self, lambda g: g * o.value), (o, lambda g: g * self.value)))

    def __add__(self, o):
        return TapeVar(self.value + o.value, ((self, lambda g: g), (o, lambda g: g)))

    def __sub__(self, o):
        return TapeVar(self.value - o.value, ((self, lambda g: g), (o, lambda g: -g)))

    def __neg__(self):
        return TapeVar(-self.value, ((self, lambda g: -g),))

    def _unary(self, value, local):
        return TapeVar(value, ((self, lambda g: g * local()),))

    def sigmoid(self):
        out = 1 / (1 + np.exp(-self.value))
        return self._unary(out, lambda: out * (1 - out))

    def tanh(self):
        out = np.tanh(self.value)
        return self._unary(out, lambda: 1 - out * out)

    def relu(self):
        out = np.maximum(self.value, 0)
        return self._unary(out, lambda: out > 0)

    def exp(self):
        out = np.exp(self.value)
        return self._unary(out, lambda: out)

    def sin(self):
        x = self.value
        return self._unary(np.sin(x), lambda: np.cos(x))

    def backward(self, g):
        order, seen = [], set()

        def visit(v):
            if id(v) in seen:
                return
            seen.add(id(v))
            for p, _ in v.parents:
                visit(p)
            order.append(v)

        visit(self)
        grads = {id(self): g}
        for v in reversed(order):
            gv = grads.pop(id(v), None)
            if gv is None:
                continue
            if not v.parents:
                v.grad = gv if v.grad is None else v.grad + gv
                continue
            for p, fn in v.parents:
                if p.requires_grad:
                    gp = fn(gv)
                    grads[id(p)] = grads[id(p)] + gp if id(p) in grads else gp


def chain_cases():
    x, w, b, g = common.chain_inputs()
    cases, checks = {}, {}
    leaves = [nbgrad.from_numpy(a.copy()).requires_grad_() for a in (x, w, b)]
    g_nb = nbgrad.from_numpy(g)

    def nb_reset():
        for leaf in leaves:
            leaf.grad = None

    cases["nbgrad"] = Case(lambda: common.chain(*leaves).backward(g_nb), nb_reset)
    nb_reset()
    common.chain(*leaves).backward(g_nb)
    checks["nbgrad"] = [leaf.grad.numpy().copy() for leaf in leaves]

    if torch is not None:
        th_leaves = [torch.from_numpy(a.copy()).requires_grad_() for a in (x, w, b)]
        g_th = torch.from_numpy(g)

        def th_reset():
            for leaf in th_leaves:
                leaf.grad = None

        cases["torch"] = Case(lambda: common.chain(*th_leaves).backward(g_th), th_reset)
        th_reset()
        common.chain(*th_leaves).backward(g_th)
        checks["torch"] = [leaf.grad.numpy().copy() for leaf in th_leaves]

    tape_leaves = [TapeVar(a.copy(), requires_grad=True) for a in (x, w, b)]

    def tape_reset():
        for leaf in tape_leaves:
            leaf.grad = None

    cases["numpy tape"] = Case(lambda: common.chain(*tape_leaves).backward(g), tape_reset)
    tape_reset()
    common.chain(*tape_leaves).backward(g)
    checks["numpy tape"] = [leaf.grad for leaf in tape_leaves]
    return cases, checks, leaves, g_nb


def run_chain(rounds, inner):
    cases, checks, _, _ = chain_cases()
    t = side_by_side(cases, rounds, inner)
    ref = checks.get("torch", checks["numpy tape"])
    print(f"{'framework':<11} {'chain fwd+bwd us':>16} {'per op us':>10} {'/ torch':>8}  check")
    for name, sec in t.items():
        per_op = sec / common.CHAIN_OPS * 1e6
        rel = f"{sec / t['torch']:.2f}" if "torch" in t else "-"
        ok = all(_close(a, b, "float32") for a, b in zip(checks[name], ref))
        print(f"{name:<11} {sec * 1e6:>16.1f} {per_op:>10.1f} {rel:>8}  {'ok' if ok else 'DIFF'}")
    return t


def profile_chain(top, calls=2000):
    """cProfile of nbgrad's chain (forward + backward), top functions by own time."""
    cases, _, _, _ = chain_cases()
    case = cases["nbgrad"]
    for _ in range(50):
        case.call()
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(calls):
        case.call()
    profiler.disable()
    stats = pstats.Stats(profiler)
    total = stats.total_tt
    per_op = total / calls / common.CHAIN_OPS * 1e6
    print(f"cProfile: {calls} chains, {per_op:.1f} us per op under the profiler "
          f"(profiling inflates Python time); top {top} by own time "
          f"(tottime per op = tottime / {calls * common.CHAIN_OPS} ops):")
    print(f"{'us/op':>7} {'cum us/op':>9} {'calls/op':>8}  function")
    rows = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])[:top]
    ops = calls * common.CHAIN_OPS
    for (path, line, name), (cc, nc, tt, ct, _) in rows:
        short = path
        for marker in ("site-packages/", "/nbgrad/"):
            if marker in path:
                short = ("nbgrad/" if marker == "/nbgrad/" else "") + path.split(marker, 1)[1]
        print(f"{tt / ops * 1e6:>7.2f} {ct / ops * 1e6:>9.2f} {nc / ops:>8.1f}  "
              f"{short}:{line}({name})")


# ---------------------------------------------------------------- MLP step
def numpy_train_step(x, labels, params, lr=common.LR):
    """The MLP step with a hand-written backward."""
    w1, b1, w2, b2 = params
    n = x.shape[0]

    def step():
        pre = x @ w1 + b1
        h = np.maximum(pre, 0)
        logits = h @ w2 + b2
        z = logits - logits.max(axis=1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        rows = np.arange(n)
        loss = -logp[rows, labels].mean()
        d = np.exp(logp)
        d[rows, labels] -= 1
        d /= n
        gw2, gb2 = h.T @ d, d.sum(axis=0)
        dh = d @ w2.T
        dh *= pre > 0
        gw1, gb1 = x.T @ dh, dh.sum(axis=0)
        for p, gp in zip(params, (gw1, gb1, gw2, gb2)):
            p -= lr * gp
        return loss

    return step


def run_mlp(rounds):
    """nbgrad and PyTorch run the same user code (``common.make_train_step``:
    nn.Sequential, F.cross_entropy, optim.SGD), MyGrad its own idiom, NumPy the
    hand-written step; all start from the same weights."""
    steps = {"nbgrad": common.nbgrad_train_step()}
    if torch is not None:
        x, labels, params = common.mlp_data()
        steps["torch"] = common.make_train_step(torch, torch.from_numpy(x),
                                                torch.from_numpy(labels), params)
    if mygrad is not None:
        steps["mygrad"] = common.mygrad_train_step(mygrad)
    x, labels, params = common.mlp_data()
    steps["numpy"] = numpy_train_step(x, labels, params)
    first_loss = {k: float(step().item()) for k, step in steps.items()}  # same start, same loss
    t = side_by_side({k: Case(s) for k, s in steps.items()}, rounds, inner=3)
    print(f"{'framework':<9} {'step ms':>8} {'/ torch':>8} {'1st loss':>9}")
    for name, sec in t.items():
        rel = f"{sec / t['torch']:.2f}" if "torch" in t else "-"
        print(f"{name:<9} {sec * 1e3:>8.2f} {rel:>8} {first_loss[name]:>9.5f}")
    if mygrad is None:
        print("(MyGrad not installed: pip install mygrad, or the bench extra)")
    return t


# ----------------------------------------------------------------- targets
ARITHMETIC_ROWS = ("add", "mul", "relu", "neg")


def run_startup():
    """A new process with a warm kernel cache: ``import nbgrad`` and the
    first forward + backward through 10 different ops (median of 3)."""
    t = startup_seconds()
    print(f"import nbgrad {t['import_s']:.3f} s + first 10 ops {t['first_ops_s']:.3f} s = "
          f"{t['total_s']:.3f} s warm (cold cache: {t['cold_total_s']:.1f} s)")
    return t


def print_targets(results, chain, n, dtype, mlp=None, startup=None):
    print(f"\nTargets (issue), at n={n:.0e} {dtype}:")
    slow = [f"{r['row']} {r['pass']} {r['ratio']:.2f}x" for r in results
            if r["ratio"] is not None and r["ratio"] < 2]
    measured = [r for r in results if r["ratio"] is not None]
    if measured:
        print(f"- every row, forward and backward, >= 2x faster than PyTorch eager: "
              f"{'MET' if not slow else 'NOT MET'} "
              f"({len(measured) - len(slow)}/{len(measured)} passes)"
              + (f"; below 2x: {', '.join(slow)}" if slow else ""))
    arith = [r for r in results if r["row"] in ARITHMETIC_ROWS and r["pct"] is not None]
    if arith:
        low = [r for r in arith if r["pass"] == "fwd" and r["pct"] < 80]
        parts = ", ".join(f"{r['row']} {r['pass']} {r['pct']:.0f}%" for r in arith)
        print(f"- add, mul, relu, neg forward >= 80% of triad: "
              f"{'MET' if not low else 'NOT MET'} ({parts})")
    if chain and "torch" in chain:
        rel = chain["nbgrad"] / chain["torch"]
        verdict = "MET" if rel <= 0.5 else "NOT MET"
        print(f"- tiny tensors, fwd+bwd per op <= 0.5x PyTorch: {verdict} "
              f"(nbgrad {chain['nbgrad'] / common.CHAIN_OPS * 1e6:.1f} us/op, torch "
              f"{chain['torch'] / common.CHAIN_OPS * 1e6:.1f} us/op, {rel:.2f}x)")
    if mlp and len(mlp) > 1:
        peers = {k: v for k, v in mlp.items() if k != "nbgrad"}
        fastest = min(peers, key=peers.get)
        verdict = "MET" if mlp["nbgrad"] < peers[fastest] else "NOT MET"
        print(f"- MLP step faster than every peer: {verdict} (nbgrad {mlp['nbgrad'] * 1e3:.2f} ms, "
              f"fastest peer {fastest} {peers[fastest] * 1e3:.2f} ms)")
    if startup:
        verdict = "MET" if startup["total_s"] < 0.5 else "NOT MET"
        print(f"- warm start, import + first fwd+bwd through 10 ops < 0.5 s: {verdict} "
              f"({startup['total_s']:.3f} s)")


# -------------------------------------------------------------------- main
def _header(threads):
    print(f"nbgrad {nbgrad.__version__}, numpy {np.__version__}, numba {numba.__version__}, "
          f"torch {torch.__version__ if torch else 'not installed'}; Python "
          f"{platform.python_version()}; {os.cpu_count()} CPUs")
    layer = "?"
    try:
        layer = numba.threading_layer()
    except ValueError:
        pass
    print(f"threads: numba {numba.get_num_threads()} (layer {layer}), "
          f"torch {torch.get_num_threads() if torch else '-'}; "
          f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '(unset)')}; "
          f"nbgrad parallel kernels from "
          f"{nbgrad.backends.cpu.elementwise.PARALLEL_THRESHOLD} elements")
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = 0.0
    cpus = os.cpu_count() or 1
    print(f"load average {load:.2f} on {cpus} CPUs" + (
        ": other processes compete for the cores, so parallel kernels wait for descheduled "
        "threads; read ratios with care, or use --stat min" if load > cpus - threads + 0.5 else ""))
    if _UNSET:
        note = ", ".join(f"{k}={v}" for k, v in _UNSET.items())
        late = " (but NumPy was already imported: no effect)" if _NUMPY_ALREADY_IMPORTED else ""
        print(f"note: unset {note} for this process before importing NumPy{late}")
    else:
        kept = [k for k in _OPENBLAS_VARS if k in os.environ]
        print("note: " + (f"kept {', '.join(kept)} (--keep-openblas-env)" if kept
                          else "OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE not set"))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", help="comma-separated row names (default: all)")
    parser.add_argument("--n", type=float, default=1e7, help="elements per row (default 1e7)")
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    parser.add_argument("--rounds", type=int, help="rounds per measurement (default 7; --quick 3)")
    parser.add_argument("--stat", choices=["median", "min"], default="median",
                        help="statistic over the samples (default median; min suits a "
                             "machine where other processes compete for the cores)")
    parser.add_argument("--sections", default="rows,chain,mlp,startup",
                        help="any of rows,chain,mlp,startup (default: all)")
    parser.add_argument("--profile", type=int, nargs="?", const=25, default=0, metavar="TOP",
                        help="also cProfile nbgrad's tiny chain and print the TOP functions")
    parser.add_argument("--omp-passive", action="store_true",
                        help="set OMP_WAIT_POLICY=PASSIVE for this process")
    parser.add_argument("--keep-openblas-env", action="store_true",
                        help="do not unset OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE")
    args = parser.parse_args(argv)
    n, dtype = int(args.n), args.dtype
    rounds = args.rounds or (3 if args.quick else 7)
    global STATISTIC
    STATISTIC = min if args.stat == "min" else statistics.median
    sections = {s.strip() for s in args.sections.split(",") if s.strip()}

    threads = max(1, min(args.threads, numba.config.NUMBA_NUM_THREADS))
    numba.set_num_threads(threads)
    if torch is not None:
        torch.set_num_threads(args.threads)
    _header(threads)

    results, chain, mlp = [], None, None
    if "rows" in sections:
        rows = common.table_rows()
        if args.rows:
            wanted = [s.strip() for s in args.rows.split(",") if s.strip()]
            rows = [common.row_by_name(name) for name in wanted]
        bw = bandwidth.measure(max(n, 10_000_000), "float64", threads,
                               repeat=5 if args.quick else 10)
        print("bandwidth: " + bandwidth.describe(bw))
        triad = bandwidth.triad_case(n, dtype)
        print(f"\nElementwise rows, n={n:.0e} {dtype}, {args.stat} of {rounds} rounds "
              f"(% triad: against a {dtype} triad on n elements timed in the same rounds"
              + (")" if n >= BANDWIDTH_MIN_N else f"; not shown below n={BANDWIDTH_MIN_N:.0e})"))
        print("(compiling nbgrad kernels on first use; cached on disk afterwards)", flush=True)
        print_row_header()
        for row in rows:
            for r in run_row(row, n, dtype, rounds, triad):
                print_row_line(r)
                results.append(r)
        del triad
        gc.collect()

    if "chain" in sections:
        print(f"\nTiny tensors: {common.CHAIN_OPS}-op chain on n={common.CHAIN_N} float32, "
              "forward + backward into 3 leaves")
        chain = run_chain(rounds=max(rounds, 5), inner=20 if args.quick else 50)
    if args.profile:
        print()
        profile_chain(args.profile, calls=500 if args.quick else 2000)

    if "mlp" in sections:
        print(f"\nMLP training step: batch {common.BATCH}, "
              f"{common.IN}-{common.HIDDEN}-{common.OUT}, "
              "ReLU, cross-entropy, SGD")
        mlp = run_mlp(rounds=max(rounds, 5))

    startup = None
    if "startup" in sections:
        print("\nStart-up: a new process, warm kernel cache")
        startup = run_startup()

    if results or chain or mlp or startup:
        print_targets(results, chain, n, dtype, mlp, startup)


if __name__ == "__main__":
    main()
