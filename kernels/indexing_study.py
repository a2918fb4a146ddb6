"""Sorting, selection, gathers and scatters side by side: nbgrad vs NumPy vs
PyTorch (eager, CPU), in one run, on 1e7 elements (one line) and on a
training step's size (64 x 128, along the last dim).

    python -m kernels.indexing_study [--threads 2] [--rounds 7] [--dtype float32] [--cuda]

Prints ms per call (median) and nbgrad's time over PyTorch's (< 1: faster).
Every case is checked against NumPy's result before it is timed. ``--cuda``
also times nbgrad's CUDA backend on the same work (synchronized; sort and
topk are staged through the host there, see nbgrad/backends/cuda/indexing.py).
"""
import argparse

import numpy as np

import nbgrad
from asv_bench.compare import Case, side_by_side


def _np_topk(x, k):
    part = np.argpartition(-x, k - 1, axis=-1)[..., :k]
    vals = np.take_along_axis(x, part, -1)
    order = np.argsort(-vals, axis=-1, kind="stable")
    return np.take_along_axis(vals, order, -1)


def _np_scatter_add(base, idx, src):
    out = base.copy()
    if out.ndim == 1:
        np.add.at(out, idx, src)
    else:
        rows = np.arange(out.shape[0])[:, None]
        np.add.at(out, (rows, idx), src)
    return out


K = 16
OPS = {
    # name: (nbgrad/torch call, numpy call, check(nbgrad result, numpy result)), on (x, idx, src)
    "sort": (lambda L, x, i, s: L.sort(x, -1).values, lambda x, i, s: np.sort(x, -1),
             lambda got, want: np.array_equal(got, want)),
    "topk16": (lambda L, x, i, s: L.topk(x, K, -1).values, lambda x, i, s: _np_topk(x, K),
               lambda got, want: np.array_equal(got, want)),
    "gather": (lambda L, x, i, s: L.gather(x, -1, i),
               lambda x, i, s: np.take_along_axis(x, i, -1),
               lambda got, want: np.array_equal(got, want)),
    "scatter_add": (lambda L, x, i, s: L.scatter_add(x, -1, i, s),
                    lambda x, i, s: _np_scatter_add(x, i, s),
                    lambda got, want: np.allclose(got, want, rtol=1e-4, atol=1e-3)),
}


def inputs(shape, dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(dtype)
    idx = rng.integers(0, shape[-1], shape).astype(np.int64)
    src = rng.standard_normal(shape).astype(dtype)
    return x, idx, src


def run(shape, dtype, rounds, inner, cuda):
    import torch
    x, i, s = inputs(shape, dtype)
    nb = [nbgrad.from_numpy(a) for a in (x, i, s)]
    tt = [torch.from_numpy(a) for a in (x, i, s)]
    dev = [nbgrad.tensor(a, device="cuda") for a in (x, i, s)] if cuda else None
    rows = []
    for name, (call, np_call, check) in OPS.items():
        want = np_call(x, i, s)
        assert check(call(nbgrad, *nb).numpy(), want), name
        cases = {"nbgrad": Case(lambda: call(nbgrad, *nb)),
                 "numpy": Case(lambda: np_call(x, i, s)),
                 "torch": Case(lambda: call(torch, *tt))}
        if cuda:
            assert check(call(nbgrad, *dev).cpu().numpy(), want), name
            cases["cuda"] = Case(lambda: (call(nbgrad, *dev), nbgrad.cuda.synchronize()))
        rows.append((name, side_by_side(cases, rounds, inner)))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    parser.add_argument("--cuda", action="store_true")
    args = parser.parse_args(argv)
    import torch
    torch.set_num_threads(args.threads)
    nbgrad.set_num_threads(args.threads)
    print(f"threads {args.threads}, {args.dtype}; ms per call (median of {args.rounds} rounds)")
    print(f"{'op':<12} {'shape':>12} {'nbgrad':>9} {'numpy':>9} {'torch':>9} {'nb/torch':>9}"
          + (f" {'cuda':>9}" if args.cuda else ""))
    for shape, inner in (((10_000_000,), 1), ((64, 128), 100)):
        for name, t in run(shape, args.dtype, args.rounds, inner, args.cuda):
            print(f"{name:<12} {'x'.join(map(str, shape)):>12} {t['nbgrad'] * 1e3:9.4f} "
                  f"{t['numpy'] * 1e3:9.4f} {t['torch'] * 1e3:9.4f} "
                  f"{t['nbgrad'] / t['torch']:9.2f}"
                  + (f" {t['cuda'] * 1e3:9.4f}" if args.cuda else ""))


if __name__ == "__main__":
    main()
