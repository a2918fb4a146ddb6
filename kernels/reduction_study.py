"""Reductions and scans side by side: nbgrad vs NumPy vs PyTorch (eager, CPU),
in one run, on 1e7 elements (one line) and on a training step's size
(64 x 128, along the last dim).

    python -m kernels.reduction_study [--threads 2] [--rounds 7] [--dtype float32]

Prints ms per call (median) and nbgrad's time over PyTorch's (< 1: faster).
Every case is checked against NumPy's value before it is timed.
"""
import argparse

import numpy as np

import nbgrad
from asv_bench.compare import Case, side_by_side

OPS = {
    # name: (nbgrad/torch call, numpy call), each taking (x, dim)
    "cumsum": (lambda L, x, d: L.cumsum(x, d), lambda x, d: np.cumsum(x, d)),
    "prod": (lambda L, x, d: L.prod(x, d), lambda x, d: np.prod(x, d)),
    "std": (lambda L, x, d: L.std(x, d), lambda x, d: np.std(x, d, ddof=1)),
    "logsumexp": (lambda L, x, d: L.logsumexp(x, d),
                  lambda x, d: _np_logsumexp(x, d)),
    "argmax": (lambda L, x, d: L.argmax(x, d), lambda x, d: np.argmax(x, d)),
}


def _np_logsumexp(x, d):
    top = np.max(x, d, keepdims=True)
    return np.log(np.sum(np.exp(x - top), d)) + np.squeeze(top, d)


def inputs(shape, dtype):
    # values near 1, so that long products stay finite
    return np.random.default_rng(0).uniform(0.999, 1.001, shape).astype(dtype)


def run(shape, dtype, rounds, inner):
    import torch
    x = inputs(shape, dtype)
    nx, tx = nbgrad.from_numpy(x), torch.from_numpy(x)
    rows = []
    for name, (call, np_call) in OPS.items():
        want = np_call(x, -1)
        got = call(nbgrad, nx, -1).numpy()
        tol = 1e-3 if dtype == "float32" else 1e-9
        assert np.allclose(got, want, rtol=tol, atol=tol), name
        times = side_by_side({"nbgrad": Case(lambda: call(nbgrad, nx, -1)),
                              "numpy": Case(lambda: np_call(x, -1)),
                              "torch": Case(lambda: call(torch, tx, -1))}, rounds, inner)
        rows.append((name, times))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    args = parser.parse_args(argv)
    import torch
    torch.set_num_threads(args.threads)
    nbgrad.set_num_threads(args.threads)
    print(f"threads {args.threads}, {args.dtype}; ms per call (median of {args.rounds} rounds)")
    print(f"{'op':<10} {'shape':>12} {'nbgrad':>9} {'numpy':>9} {'torch':>9} {'nb/torch':>9}")
    for shape, inner in (((10_000_000,), 1), ((64, 128), 200)):
        for name, t in run(shape, args.dtype, args.rounds, inner):
            print(f"{name:<10} {'x'.join(map(str, shape)):>12} {t['nbgrad'] * 1e3:9.4f} "
                  f"{t['numpy'] * 1e3:9.4f} {t['torch'] * 1e3:9.4f} "
                  f"{t['nbgrad'] / t['torch']:9.2f}")


if __name__ == "__main__":
    main()
