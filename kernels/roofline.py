"""Question: how close do nbgrad's generated elementwise kernels come to the
memory-bandwidth limit of the device they run on?

Large elementwise work is memory bound: each element is read and written
once and the arithmetic is nearly free, so the physical limit is the copy
bandwidth. This study measures that limit on the device (best of a plain
copy kernel and the runtime's own memcpy), then times, for every op row of
``nbgrad.ROWS``, the forward kernel and the fused backward kernel (all
differentiable inputs at once) on n contiguous elements, and prints their
effective bandwidth (bytes the kernel must move / best time) and the
fraction of the copy bandwidth it reaches.

Bytes moved: forward reads every input and writes the output; backward
reads the incoming gradient plus whatever the derivatives read (inputs by
name, ``out``) and writes one gradient per input. Bool inputs/outputs count
one byte per element.

Both devices run the backend's kernels directly (``nbgrad.backends.cpu`` /
``nbgrad.backends.cuda``) on preallocated arrays, so the numbers are the
kernels', without allocation or autograd bookkeeping. The CPU kernels run
their parallel (``prange``) variant at these sizes.

Run from the repository root:

    python -m kernels.roofline --device cpu [--n 8388608] [--dtype float32]
    python -m kernels.roofline --device cuda [--n 67108864]

``--device cuda`` exits with a message saying why when there is no usable
GPU. (With ``NUMBA_ENABLE_CUDASIM=1`` it runs in the simulator, which only
checks that the study works: use a tiny ``--n``, the numbers mean nothing.)
"""
import argparse
import sys
import time

import numpy as np

DEFAULT_N = {"cpu": 1 << 23, "cuda": 1 << 26}


def _sample(row, k, n, dtype, rng):
    if k in row.bool_inputs:
        return rng.random(n) < 0.5
    lo, hi = row.domain
    return rng.uniform(lo, hi, n).astype(dtype)


def _itemsize(row, k, dtype):
    return 1 if k in row.bool_inputs else np.dtype(dtype).itemsize


def forward_bytes(row, n, dtype):
    out = 1 if row.result == "bool" else np.dtype(dtype).itemsize
    return n * (out + sum(_itemsize(row, k, dtype) for k in range(len(row.inputs))))


def backward_bytes(row, n, dtype):
    size = np.dtype(dtype).itemsize
    reads = {p for i in row.differentiable for p in row.grad_params(i)} | {"g"}
    read = sum(_itemsize(row, row.inputs.index(p), dtype) if p in row.inputs else size
               for p in reads)
    return n * (read + size * len(row.differentiable))


class Device:
    """The backend, how to move arrays to it and how to wait for it."""

    def __init__(self, kind):
        self.kind = kind
        if kind == "cpu":
            from nbgrad.backends import cpu
            self.backend, self.name = cpu, f"CPU, {cpu.get_num_threads()} threads"
            self.put, self.sync = (lambda a: a), (lambda: None)
        else:
            from nbgrad.backends import cuda
            cuda.require()
            self.backend, self.name = cuda, cuda.device_name()
            self.put, self.sync = cuda.to_device, cuda.synchronize


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


def copy_bandwidth(device, n, dtype, repeat):
    """GB/s of the best plain copy: (read + write) bytes / time."""
    rng = np.random.default_rng(0)
    src = device.put(rng.random(n).astype(dtype))
    dst = device.backend.empty((n,), np.dtype(dtype))
    candidates = []
    if device.kind == "cpu":
        import numba

        @numba.njit(parallel=True, cache=False)
        def parallel_copy(out, x):
            for i in numba.prange(x.shape[0]):
                out[i] = x[i]

        candidates.append(lambda: parallel_copy(dst, src))
        candidates.append(lambda: np.copyto(dst, src))
    else:
        from nbgrad.backends.cuda import memory
        candidates.append(lambda: memory.copy_into(dst, src))
        candidates.append(lambda: dst.buffer.copy_to_device(src.buffer))  # the driver's memcpy
    seconds = min(best_time(c, device.sync, repeat) for c in candidates)
    return 2 * n * np.dtype(dtype).itemsize / seconds / 1e9


def measure_row(device, row, n, dtype, repeat, rng):
    """(forward GB/s, backward GB/s or None) for one row."""
    b = device.backend
    args = [device.put(_sample(row, k, n, dtype, rng)) for k in range(len(row.inputs))]
    out = b.empty((n,), np.dtype(np.bool_ if row.result == "bool" else dtype))
    fwd = best_time(lambda: b.elementwise_forward(row, out, args), device.sync, repeat)
    result = [forward_bytes(row, n, dtype) / fwd / 1e9, None]
    if row.differentiable:
        g = device.put(rng.uniform(-1, 1, n).astype(dtype))
        wanted = list(row.differentiable)
        bwd = best_time(lambda: b.elementwise_backward(row, wanted, g, args, out), device.sync,
                        repeat)
        result[1] = backward_bytes(row, n, dtype) / bwd / 1e9
    return tuple(result)


def run(kind, n, dtype="float32", repeat=5, names=None):
    """Measure; returns (device name, copy GB/s, [(row name, fwd GB/s, bwd GB/s)])."""
    from nbgrad import ROWS
    device = Device(kind)
    rows = [r for r in ROWS if names is None or r.name in names]
    copy = copy_bandwidth(device, n, dtype, repeat)
    rng = np.random.default_rng(1)
    results = [(row.name, *measure_row(device, row, n, dtype, repeat, rng)) for row in rows]
    return device.name, copy, results


def format_table(device_name, copy, results, n, dtype):
    lines = [f"device: {device_name}   n = {n:,} {dtype}   copy bandwidth: {copy:,.1f} GB/s", "",
             f"{'row':<10} {'forward GB/s':>13} {'of copy':>8} {'backward GB/s':>14} {'of copy':>8}"]
    for name, fwd, bwd in results:
        back = f"{bwd:14.1f} {bwd / copy:8.0%}" if bwd is not None else f"{'-':>14} {'':>8}"
        lines.append(f"{name:<10} {fwd:13.1f} {fwd / copy:8.0%} {back}")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--n", type=int, default=None, help="elements per array")
    parser.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs (the best counts)")
    parser.add_argument("--rows", default=None, help="comma-separated row names (default: all)")
    args = parser.parse_args(argv)
    if args.device == "cuda":
        from nbgrad.backends import cuda
        if not cuda.is_available():
            try:
                cuda.require()
            except RuntimeError as error:
                sys.exit(f"roofline --device cuda: {error}")
    n = args.n or DEFAULT_N[args.device]
    names = set(args.rows.split(",")) if args.rows else None
    name, copy, results = run(args.device, n, args.dtype, args.repeat, names)
    print(format_table(name, copy, results, n, args.dtype))


if __name__ == "__main__":
    main()
