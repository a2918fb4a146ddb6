"""Question: a fused op written as an ``nbgrad.autograd.Function`` with
hand-written Numba kernels, for both devices: is it right (gradcheck, and
against the same op composed from nbgrad's rows and PyTorch's), and how
fast is it next to that composition, NumPy and PyTorch, against the memory
bandwidth of the machine?

The op is bias + GELU in its tanh approximation (PyTorch's
``gelu(x + b, approximate='tanh')``), on ``x`` of shape (rows, n) and a
bias ``b`` of shape (n,):

    y  = gelu(x + b),  gelu(z) = 0.5 z (1 + t),  t = tanh(k (z + c z^3)),
         k = sqrt(2 / pi), c = 0.044715
    gx = g * gelu'(x + b),  gelu'(z) = 0.5 (1 + t) + 0.5 z (1 - t^2) k (1 + 3 c z^2)
    gb = gx summed over the rows

The Function runs one forward kernel and one backward kernel, which also
sums the bias gradient as it goes: on the CPU ``@numba.njit(parallel=True)``
loops (``prange`` over rows; over row blocks with a partial bias sum each,
for backward), tanh from ``nbgrad.declarations.scalar_math`` (plain
arithmetic, so the loops vectorize); on CUDA ``@cuda.jit`` grid-stride
kernels (backward: each thread walks a block of rows of one column and adds
its partial bias sum atomically). The composition is five nbgrad rows
(add, mul, mul, tanh, ...) forward and their backward nodes.

The least memory traffic the op needs is counted: forward reads x and b and
writes y, (2N + n) elements; forward + backward also reads g, x and b and
writes gx and gb, (5N + 3n) elements. GB/s = those bytes / the best time,
next to a STREAM triad (3 arrays of N elements) measured in the same run.

Run from the repository root:

    python -m kernels.fused_function [--rows 4096] [--n 1024] [--dtype float32]
    python -m kernels.fused_function --device cuda [--rows 16384 --n 4096]

``--device cuda`` says why and stops when there is no GPU; under
``NUMBA_ENABLE_CUDASIM=1`` it checks the kernels in the simulator (tiny
sizes) and times nothing. Where numba-cuda can compile, the study also
compiles both CUDA kernels to PTX for sm_90 (no GPU needed).
"""
import argparse
import functools
import math
import sys
import time

import numpy as np

import nbgrad
from nbgrad.autograd.function import once_differentiable

K = math.sqrt(2.0 / math.pi)
C = 0.044715
# numba.cuda, loaded by cuda_kernels() on first use. The kernels must read it as
# a module global: that is the name Numba's CUDA simulator swaps for its own
# (a module imported inside a function would not be swapped).
cuda = None
ROWS_PER_THREAD = 32  # rows each CUDA thread of the backward kernel sums for its column


# ---------------------------------------------------------------- the kernels
@functools.lru_cache(maxsize=None)
def cpu_kernels(dtype):
    """(forward, backward) ``@numba.njit(parallel=True)`` kernels for ``dtype``
    (a NumPy dtype name). forward(x, b, out); backward(g, x, b, gx, partial)
    with ``partial`` (chunks, n) zeros, whose rows sum to the bias gradient."""
    import numba
    from nbgrad.declarations import scalar_math

    f = np.dtype(dtype).type  # constants of the kernel's dtype: float32 stays float32
    k, c, half, one, three_c = f(K), f(C), f(0.5), f(1.0), f(3 * C)
    tanh = scalar_math.tanh

    @numba.njit(inline="always")
    def gelu(z):
        return half * z * (one + tanh(k * (z + c * z * z * z)))

    @numba.njit(inline="always")
    def gelu_grad(z):
        t = tanh(k * (z + c * z * z * z))
        return half * (one + t) + half * z * (one - t * t) * k * (one + three_c * z * z)

    @numba.njit(parallel=True)
    def forward(x, b, out):
        rows, n = x.shape
        for i in numba.prange(rows):
            for j in range(n):
                out[i, j] = gelu(x[i, j] + b[j])

    @numba.njit(parallel=True)
    def backward(g, x, b, gx, partial):
        rows, n = x.shape
        chunks = partial.shape[0]
        for chunk in numba.prange(chunks):  # a block of rows each, with its own bias sum
            acc = partial[chunk]
            for i in range(chunk * rows // chunks, (chunk + 1) * rows // chunks):
                for j in range(n):
                    v = g[i, j] * gelu_grad(x[i, j] + b[j])
                    gx[i, j] = v
                    acc[j] += v

    return forward, backward


@functools.lru_cache(maxsize=None)
def cuda_kernels(dtype):
    """(forward, backward) ``@cuda.jit`` grid-stride kernels on flat device
    arrays of ``dtype``: forward(x, b, out, n); backward(g, x, b, gx, gb,
    rows, n), ``gb`` zeroed first."""
    _load_cuda()
    f = np.dtype(dtype).type
    k, c, half, one, three_c, zero = f(K), f(C), f(0.5), f(1.0), f(3 * C), f(0.0)

    @cuda.jit(device=True, inline="always")
    def gelu(z):
        return half * z * (one + math.tanh(k * (z + c * z * z * z)))

    @cuda.jit(device=True, inline="always")
    def gelu_grad(z):
        t = math.tanh(k * (z + c * z * z * z))
        return half * (one + t) + half * z * (one - t * t) * k * (one + three_c * z * z)

    @cuda.jit
    def forward(x, b, out, n):
        for i in range(cuda.grid(1), x.shape[0], cuda.gridsize(1)):
            out[i] = gelu(x[i] + b[i % n])

    @cuda.jit
    def backward(g, x, b, gx, gb, rows, n):
        chunks = (rows + ROWS_PER_THREAD - 1) // ROWS_PER_THREAD
        for item in range(cuda.grid(1), chunks * n, cuda.gridsize(1)):
            chunk = item // n
            j = item - chunk * n  # neighbouring threads read neighbouring columns
            bj = b[j]
            acc = zero
            for i in range(chunk * ROWS_PER_THREAD, min(rows, (chunk + 1) * ROWS_PER_THREAD)):
                at = i * n + j
                v = g[at] * gelu_grad(x[at] + bj)
                gx[at] = v
                acc += v
            cuda.atomic.add(gb, j, acc)

    return forward, backward


def _load_cuda():
    global cuda
    if cuda is None:
        from numba import cuda as module
        cuda = module


def ptx(dtype="float32", cc=(9, 0)):
    """The two CUDA kernels compiled to PTX for compute capability ``cc``
    (no GPU needed): {"forward": ptx, "backward": ptx}."""
    from numba import types
    from numba.np.numpy_support import from_dtype
    forward, backward = cuda_kernels(np.dtype(dtype).name)
    a = types.Array(from_dtype(np.dtype(dtype)), 1, "C")
    signatures = {"forward": (forward, (a, a, a, types.int64)),
                  "backward": (backward, (a, a, a, a, a, types.int64, types.int64))}
    return {name: cuda.compile_ptx(kernel.py_func, argtypes, cc=cc)[0]
            for name, (kernel, argtypes) in signatures.items()}


def device_array(t):
    """A Numba device array over the elements of a contiguous CUDA tensor
    (no copy; on a GPU and in the simulator: there ``__cuda_array_interface__``
    is not read, so this takes nbgrad's DeviceArray's buffer)."""
    d = t._data
    return d.buffer[d.offset:d.offset + d.size]


def _launch(kernel, items, *args):
    from nbgrad.backends.cuda import _runtime
    blocks, threads = _runtime.grid_for(items)
    kernel[blocks, threads](*args)


# ----------------------------------------------------------- the Function
class BiasGelu(nbgrad.autograd.Function):
    """``gelu(x + b, approximate='tanh')`` for x of shape (rows, n) and b of
    shape (n,), in one forward and one backward kernel per device."""

    @staticmethod
    def forward(ctx, x, b):
        if x.dim() != 2 or b.shape != (x.shape[1],) or x.dtype is not b.dtype:
            raise ValueError(f"BiasGelu takes x (rows, n) and b (n,) of one dtype; got "
                             f"{list(x.shape)} {x.dtype} and {list(b.shape)} {b.dtype}")
        x, b = x.contiguous(), b.contiguous()
        out = nbgrad.empty(x.shape, dtype=x.dtype, device=x.device)
        if x.is_cuda:
            forward = cuda_kernels(x.dtype.numpy.name)[0]
            _launch(forward, x.numel(), device_array(x), device_array(b), device_array(out),
                    x.shape[1])
        else:
            cpu_kernels(x.dtype.numpy.name)[0](x.numpy(), b.numpy(), out.numpy())
        ctx.save_for_backward(x, b)
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        x, b = ctx.saved_tensors
        grad = grad.contiguous()
        rows, n = x.shape
        gx = nbgrad.empty(x.shape, dtype=x.dtype, device=x.device)
        if x.is_cuda:
            gb = nbgrad.zeros(n, dtype=x.dtype, device=x.device)
            chunks = (rows + ROWS_PER_THREAD - 1) // ROWS_PER_THREAD
            backward = cuda_kernels(x.dtype.numpy.name)[1]
            _launch(backward, chunks * n, device_array(grad), device_array(x), device_array(b),
                    device_array(gx), device_array(gb), rows, n)
        else:
            chunks = max(1, min(rows, nbgrad.get_num_threads()))
            partial = np.zeros((chunks, n), x.dtype.numpy)
            cpu_kernels(x.dtype.numpy.name)[1](grad.numpy(), x.numpy(), b.numpy(), gx.numpy(),
                                               partial)
            gb = nbgrad.from_numpy(partial.sum(0))
        return (gx if ctx.needs_input_grad[0] else None,
                gb if ctx.needs_input_grad[1] else None)


bias_gelu = BiasGelu.apply


def composed(x, b):
    """The same op from nbgrad's rows (or torch's ops: any library's tensors)."""
    z = x + b
    return 0.5 * z * (1 + (K * (z + C * z * z * z)).tanh())


def numpy_forward(x, b):
    z = x + b
    return 0.5 * z * (1 + np.tanh(K * (z + C * z * z * z)))


def numpy_forward_backward(x, b, g):
    z = x + b
    t = np.tanh(K * (z + C * z * z * z))
    y = 0.5 * z * (1 + t)
    gx = g * (0.5 * (1 + t) + 0.5 * z * (1 - t * t) * K * (1 + 3 * C * z * z))
    return y, gx, gx.sum(0)


# --------------------------------------------------------------- the checks
def check(device="cpu", n=16, rows=5):
    """Values and gradients of the Function against the composition of rows
    (float64, random upstream gradient), ``gradcheck`` of the Function,
    float32 against float64, and against PyTorch's gelu when it is
    installed. Returns (all passed, report lines)."""
    rng = np.random.default_rng(0)
    xs, bs, gs = rng.normal(0, 2, (rows, n)), rng.normal(0, 1, n), rng.normal(0, 1, (rows, n))
    lines, ok = [], True

    def report(name, passed):
        nonlocal ok
        ok = ok and passed
        lines.append(f"{device:<5} {name:<52} {'ok' if passed else 'FAILED'}")

    def run(fn, dtype=nbgrad.float64):
        x = nbgrad.tensor(xs, dtype=dtype, device=device, requires_grad=True)
        b = nbgrad.tensor(bs, dtype=dtype, device=device, requires_grad=True)
        y = fn(x, b)
        y.backward(nbgrad.tensor(gs, dtype=dtype, device=device))
        return [t.detach().cpu().numpy().astype(np.float64) for t in (y, x.grad, b.grad)]

    fused, rows_result = run(bias_gelu), run(composed)
    report("Function == nbgrad rows (y, gx, gb), float64",
           all(np.allclose(a, r, rtol=1e-12, atol=1e-12) for a, r in zip(fused, rows_result)))
    single = run(bias_gelu, nbgrad.float32)
    report("float32 Function == float64 (y, gx, gb)",
           all(np.allclose(a, r, rtol=2e-5, atol=2e-5 * max(1, rows))
               for a, r in zip(single, fused)))
    x = nbgrad.tensor(xs[:3, :4], dtype=nbgrad.float64, device=device, requires_grad=True)
    b = nbgrad.tensor(bs[:4], dtype=nbgrad.float64, device=device, requires_grad=True)
    report("gradcheck(Function) (finite differences)",
           nbgrad.autograd.gradcheck(bias_gelu, (x, b), raise_exception=False))
    report("node name BiasGeluBackward", bias_gelu(x, b).grad_fn.name() == "BiasGeluBackward")
    try:
        import torch
    except ImportError:
        lines.append(f"{device:<5} torch not installed: skipped the PyTorch comparison")
    else:
        tx = torch.tensor(xs, requires_grad=True)
        tb = torch.tensor(bs, requires_grad=True)
        ty = torch.nn.functional.gelu(tx + tb, approximate="tanh")
        ty.backward(torch.tensor(gs))
        want = [t.detach().numpy() for t in (ty, tx.grad, tb.grad)]
        report("Function == torch gelu(x + b, approximate='tanh')",
               all(np.allclose(a, w, rtol=1e-12, atol=1e-12) for a, w in zip(fused, want)))
    return ok, lines


def check_ptx():
    """(passed or None when PTX cannot be built here, report lines)."""
    from nbgrad.backends.cuda import _runtime
    if _runtime.simulator():
        return None, ["PTX: skipped (the CUDA simulator is on; PTX needs the real compiler)"]
    try:
        built = {dtype: ptx(dtype) for dtype in ("float32", "float64")}
    except Exception as error:  # numba-cuda or NVVM missing
        return None, [f"PTX: skipped ({type(error).__name__}: {error})"]
    lines, ok = [], True
    for dtype, kernels in built.items():
        for name, text in kernels.items():
            good = ".target sm_90" in text and ".entry" in text
            ok = ok and good
            lines.append(f"PTX {name:<8} {dtype}: {len(text):6,d} chars, sm_90 "
                         f"{'ok' if good else 'MISSING'}")
    return ok, lines


# --------------------------------------------------------------- the timings
def best_time(fn, sync, repeat):
    fn()  # compile and warm up
    sync()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        sync()
        best = min(best, time.perf_counter() - start)
    return best


def triad_bandwidth(device, count, dtype, repeat):
    """GB/s of a STREAM triad a = b + s c on ``count`` elements (3 arrays)."""
    dtype = np.dtype(dtype)
    s = dtype.type(3.0)
    if device == "cpu":
        import numba

        @numba.njit(parallel=True)
        def triad(a, b, c, s):
            for i in numba.prange(a.size):
                a[i] = b[i] + s * c[i]

        a, b, c = (np.full(count, k + 1.0, dtype) for k in range(3))
        seconds = best_time(lambda: triad(a, b, c, s), lambda: None, repeat)
    else:
        _load_cuda()

        @cuda.jit
        def triad(a, b, c, s):
            for i in range(cuda.grid(1), a.shape[0], cuda.gridsize(1)):
                a[i] = b[i] + s * c[i]

        a, b, c = (device_array(nbgrad.full((count,), k + 1.0, dtype=nbgrad.dtypes.from_numpy_dtype(
            dtype), device="cuda")) for k in range(3))
        seconds = best_time(lambda: _launch(triad, count, a, b, c, s), nbgrad.cuda.synchronize,
                            repeat)
    return 3 * count * dtype.itemsize / seconds / 1e9


def variants(device, rows, n, dtype):
    """name -> (forward, forward + backward) callables on the same data."""
    rng = np.random.default_rng(1)
    xs, bs, gs = (rng.normal(0, 1, shape).astype(dtype) for shape in ((rows, n), (n,), (rows, n)))
    nb_dtype = nbgrad.dtypes.from_numpy_dtype(np.dtype(dtype))
    x = nbgrad.tensor(xs, device=device, requires_grad=True)
    b = nbgrad.tensor(bs, device=device, requires_grad=True)
    g = nbgrad.tensor(gs, dtype=nb_dtype, device=device)

    def nbgrad_pair(fn):
        def forward_backward():
            x.grad = b.grad = None
            fn(x, b).backward(g)
        return (lambda: fn(x, b)), forward_backward

    out = {"Function (Numba kernels)": nbgrad_pair(bias_gelu),
           "nbgrad rows (composed)": nbgrad_pair(composed)}
    if device == "cpu":
        out["NumPy"] = (lambda: numpy_forward(xs, bs), lambda: numpy_forward_backward(xs, bs, gs))
    try:
        import torch
    except ImportError:
        return out
    if device == "cpu" or torch.cuda.is_available():
        where = "cpu" if device == "cpu" else "cuda"
        tx = torch.tensor(xs, device=where, requires_grad=True)
        tb = torch.tensor(bs, device=where, requires_grad=True)
        tg = torch.tensor(gs, device=where)

        def torch_forward():
            return torch.nn.functional.gelu(tx + tb, approximate="tanh")

        def torch_forward_backward():
            tx.grad = tb.grad = None
            torch_forward().backward(tg)
        out["PyTorch"] = (torch_forward, torch_forward_backward)
    return out


def timings(device, rows, n, dtype="float32", repeat=5):
    """(triad GB/s, [(variant, forward s, forward + backward s)])."""
    sync = (lambda: None) if device == "cpu" else _sync_all
    triad = triad_bandwidth(device, rows * n, dtype, repeat)
    results = []
    for name, (forward, forward_backward) in variants(device, rows, n, dtype).items():
        results.append((name, best_time(forward, sync, repeat),
                        best_time(forward_backward, sync, repeat)))
    return triad, results


def _sync_all():
    nbgrad.cuda.synchronize()
    try:
        import torch
        if torch.cuda.is_available():
            torch.cuda.synchronize()
    except ImportError:
        pass


def format_table(device_name, rows, n, dtype, triad, results):
    size = np.dtype(dtype).itemsize
    count = rows * n
    fwd_bytes, all_bytes = (2 * count + n) * size, (5 * count + 3 * n) * size
    lines = [f"device: {device_name}   x: {rows} x {n} {dtype} ({count:,} elements, "
             f"{count * size / 1e6:.1f} MB per array)   triad: {triad:,.1f} GB/s", "",
             f"{'variant':<26} {'forward ms':>10} {'GB/s':>7} {'of triad':>8}   "
             f"{'fwd+bwd ms':>10} {'GB/s':>7} {'of triad':>8}"]
    for name, fwd, both in results:
        lines.append(f"{name:<26} {fwd * 1e3:10.3f} {fwd_bytes / fwd / 1e9:7.1f} "
                     f"{fwd_bytes / fwd / 1e9 / triad:8.0%}   {both * 1e3:10.3f} "
                     f"{all_bytes / both / 1e9:7.1f} {all_bytes / both / 1e9 / triad:8.0%}")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--rows", type=int, default=None)
    parser.add_argument("--n", type=int, default=None, help="columns (the bias's length)")
    parser.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs (the best counts)")
    args = parser.parse_args(argv)
    from nbgrad.backends import cuda
    if args.device == "cuda" and not cuda.is_available():
        try:
            cuda.require()
        except RuntimeError as error:
            sys.exit(f"fused_function --device cuda: {error}")
    print(__doc__.split("\n\n")[0], "\n")
    ok, lines = check(args.device)
    print("\n".join(lines))
    ptx_ok, lines = check_ptx()
    print("\n".join(lines))
    if ptx_ok is False:
        ok = False
    if args.device == "cuda" and cuda.simulator():
        print("\nCUDA simulator: kernels checked, nothing timed.")
    else:
        rows = args.rows or (4096 if args.device == "cpu" else 16384)
        n = args.n or (1024 if args.device == "cpu" else 4096)
        name = (f"CPU, {nbgrad.get_num_threads()} threads" if args.device == "cpu"
                else nbgrad.cuda.get_device_name())
        try:
            import torch
            if args.device == "cpu":
                torch.set_num_threads(nbgrad.get_num_threads())  # the same threads for both
        except ImportError:
            pass
        triad, results = timings(args.device, rows, n, args.dtype, args.repeat)
        print()
        print(format_table(name, rows, n, args.dtype, triad, results))
    if not ok:
        raise SystemExit("fused_function: a check FAILED")


if __name__ == "__main__":
    main()
