"""Sorting, selection, gathers and scatters side by side: nbgrad vs NumPy vs
PyTorch (eager, CPU), in one run, forward and forward + backward, at a
training step's size (64 x 128, along dim -1 and dim 0), on 1000 x 10000
(dim -1) and on one line of 1e7 elements.

    python -m kernels.indexing_study [--threads 2] [--rounds 7] [--dtype float32]
                                     [--ops sort,topk] [--sizes 64x128:-1,1e7]
                                     [--reductions] [--cuda]

Prints ms per call (median of rounds taken round-robin: nbgrad, NumPy,
PyTorch, nbgrad, ...) and PyTorch's time over nbgrad's (above 1: nbgrad is
faster). ``fwd+bwd`` is ``op(x).sum().backward()`` with ``x.grad`` reset
(NumPy: no backward, "-"). Before it is timed, every case's values (and
gradient) are checked against PyTorch's. ``--reductions`` also runs the ops
of ``kernels.reduction_study`` (cumsum, cumprod, prod, logsumexp, var,
median), so one command prints all of issue 15's reductions, scans, sorts
and scatters. ``--cuda`` also times nbgrad's CUDA backend on the forward
(synchronized; sort and topk are staged through the host there, see
nbgrad/backends/cuda/indexing.py).
"""
import argparse

import numpy as np

import nbgrad
from asv_bench.compare import Case, side_by_side


def _np_topk(x, k, d):
    part = np.argpartition(-x, k - 1, axis=d)
    part = np.take(part, np.arange(k), axis=d)
    vals = np.take_along_axis(x, part, d)
    order = np.argsort(-vals, axis=d, kind="stable")
    return np.take_along_axis(vals, order, d)


def _np_scatter_add(base, idx, src, d):
    out = base.copy()
    grids = list(np.indices(idx.shape, sparse=True))
    grids[d] = idx
    np.add.at(out, tuple(grids), src)
    return out


K = 5


class Op:
    """One op of the table: ``call(L, *args, d)`` for nbgrad and PyTorch (L
    is the module), ``np_call(*args, d)`` for NumPy, ``make(shape, d,
    dtype)`` the NumPy inputs; the gradient (when ``grad``) is taken with
    respect to the first input."""

    def __init__(self, call, np_call, make, grad=True, exact=False):
        self.call, self.np_call, self.make = call, np_call, make
        self.grad, self.exact = grad, exact


def normal(shape, d, dtype):
    return (np.random.default_rng(0).standard_normal(shape).astype(dtype),)


def with_index(shape, d, dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(dtype)
    idx = rng.integers(0, shape[d], shape).astype(np.int64)
    src = rng.standard_normal(shape).astype(dtype)
    return x, idx, src


def with_index1d(shape, d, dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(dtype)
    return x, rng.integers(0, shape[d], shape[d]).astype(np.int64)


OPS = {
    "sort": Op(lambda L, x, d: L.sort(x, d).values, lambda x, d: np.sort(x, d), normal,
               exact=True),
    "argsort": Op(lambda L, x, d: L.argsort(x, dim=d, stable=True),
                  lambda x, d: np.argsort(x, d, kind="stable"), normal, grad=False, exact=True),
    f"topk{K}": Op(lambda L, x, d: L.topk(x, K, d).values, lambda x, d: _np_topk(x, K, d),
                   normal, exact=True),
    "gather": Op(lambda L, x, i, s, d: L.gather(x, d, i),
                 lambda x, i, s, d: np.take_along_axis(x, i, d), with_index, exact=True),
    "scatter_add": Op(lambda L, x, i, s, d: L.scatter_add(x, d, i, s), _np_scatter_add,
                      with_index),
    "index_select": Op(lambda L, x, i, d: L.index_select(x, d, i),
                       lambda x, i, d: np.take(x, i, d), with_index1d, exact=True),
}

SIZES = {  # label: (shape, dim, inner calls per sample)
    "64x128:-1": ((64, 128), -1, 100),
    "64x128:0": ((64, 128), 0, 100),
    "1000x10000:-1": ((1000, 10000), -1, 1),
    "1000x10000:0": ((1000, 10000), 0, 1),
    "1e7": ((10_000_000,), -1, 1),
}


def _close(got, want, exact):
    got, want = np.asarray(got), np.asarray(want)
    if exact:
        return got.dtype == want.dtype and np.array_equal(got, want)
    tol = 1e-3 if got.dtype == np.float32 else 1e-9
    return got.dtype == want.dtype and np.allclose(got, want, rtol=tol, atol=tol)


def measure(name, op, shape, d, dtype, rounds, inner, cuda=False):
    """``{pass: {library: seconds}}`` for one op at one size (values checked first)."""
    import torch
    args = op.make(shape, d, dtype)
    nb = [nbgrad.from_numpy(a) for a in args]
    th = [torch.from_numpy(a) for a in args]
    want = op.call(torch, *th, d).numpy()
    assert _close(op.call(nbgrad, *nb, d).numpy(), want, op.exact), (name, shape, d)
    cases = {"nbgrad": Case(lambda: op.call(nbgrad, *nb, d)),
             "numpy": Case(lambda: op.np_call(*args, d)),
             "torch": Case(lambda: op.call(torch, *th, d))}
    if cuda:
        dev = [nbgrad.tensor(a, device="cuda") for a in args]
        assert _close(op.call(nbgrad, *dev, d).cpu().numpy(), want, op.exact), (name, "cuda")
        cases["cuda"] = Case(lambda: (op.call(nbgrad, *dev, d), nbgrad.cuda.synchronize()))
    out = {"fwd": side_by_side(cases, rounds, inner)}
    if not op.grad:
        return out
    nb_x = nbgrad.from_numpy(args[0].copy()).requires_grad_()
    th_x = torch.from_numpy(args[0].copy()).requires_grad_()

    def nb_step():
        nb_x.grad = None
        op.call(nbgrad, nb_x, *nb[1:], d).sum().backward()

    def th_step():
        th_x.grad = None
        op.call(torch, th_x, *th[1:], d).sum().backward()

    nb_step()
    th_step()
    assert _close(nb_x.grad.numpy(), th_x.grad.numpy(), False), (name, "grad", shape, d)
    out["fwd+bwd"] = side_by_side({"nbgrad": Case(nb_step), "torch": Case(th_step)},
                                  rounds, inner)
    return out


def _ms(t):
    return "-" if t is None else f"{t * 1e3:9.4f}"


def print_header(cuda=False):
    print(f"{'op':<13} {'size:dim':<14} {'pass':<8} {'nbgrad':>9} {'numpy':>9} {'torch':>9} "
          f"{'torch/nb':>9}" + (f" {'cuda':>9}" if cuda else ""))


def run(ops, sizes, dtype, rounds, cuda=False):
    """Measure and print every op at every size; returns the rows."""
    rows = []
    for label in sizes:
        shape, d, inner = SIZES[label]
        for name, op in ops.items():
            for kind, t in measure(name, op, shape, d, dtype, rounds, inner, cuda).items():
                rows.append((name, label, kind, t))
                print(f"{name:<13} {label:<14} {kind:<8} {_ms(t['nbgrad'])} "
                      f"{_ms(t.get('numpy')):>9} {_ms(t['torch'])} "
                      f"{t['torch'] / t['nbgrad']:9.2f}"
                      + (f" {_ms(t.get('cuda')):>9}" if cuda else ""), flush=True)
    return rows


def parser(doc):
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    p.add_argument("--ops", help="comma-separated op names (default: all)")
    p.add_argument("--sizes", default=",".join(SIZES),
                   help=f"comma-separated sizes among {', '.join(SIZES)} (default: all)")
    return p


def start(args, ops):
    """Threads set, header printed; the chosen ops and sizes."""
    import torch
    torch.set_num_threads(args.threads)
    nbgrad.set_num_threads(args.threads)
    if args.ops:
        ops = {k: ops[k] for k in args.ops.split(",")}
    sizes = args.sizes.split(",")
    print(f"threads {args.threads}, {args.dtype}; ms per call (median of {args.rounds} "
          f"rounds, round-robin); torch/nb above 1: nbgrad is faster")
    return ops, sizes


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--reductions", action="store_true",
                   help="also the ops of kernels.reduction_study")
    p.add_argument("--cuda", action="store_true")
    args = p.parse_args(argv)
    ops = dict(OPS)
    if args.reductions:
        from . import reduction_study
        ops.update(reduction_study.OPS)
    ops, sizes = start(args, ops)
    print_header(args.cuda)
    run(ops, sizes, args.dtype, args.rounds, args.cuda)


if __name__ == "__main__":
    main()
