"""Batched matrix products and einsum side by side: nbgrad vs NumPy vs PyTorch
(eager, CPU), in one run, forward alone and forward + backward, on a training
step's sizes (attention-like batches) and a larger one.

    python -m kernels.products_study [--threads 2] [--rounds 7] [--dtype float32]

nbgrad's einsum is PyTorch's evaluation (diagonals and permutes, then one
batched matrix product per pair of operands, left to right, or in a greedy
order where that needs under half the multiplications: ``ij,jk,k->i``);
NumPy's is ``np.einsum`` with
``optimize=True`` (a BLAS path where it finds one). Prints ms per call
(median) and nbgrad's time over PyTorch's (< 1: faster). Every case is
checked against NumPy's value before it is timed.

NumPy's (and so nbgrad's CPU) matrix products run in OpenBLAS; on a machine
whose cores are busy its spinning threads stall (a 2 MFLOP product measured
30 ms instead of 0.05 ms): set ``OPENBLAS_NUM_THREADS=1`` there.
"""
import argparse

import numpy as np

import nbgrad
from asv_bench.compare import Case, side_by_side

# name: (equation or "bmm", operand shapes)
CASES = [
    ("bmm", "bmm", [(32, 64, 64), (32, 64, 64)]),
    ("bmm", "bmm", [(8, 256, 256), (8, 256, 256)]),
    ("einsum", "bij,bjk->bik", [(32, 64, 64), (32, 64, 64)]),
    ("einsum", "bhqd,bhkd->bhqk", [(4, 8, 64, 32), (4, 8, 64, 32)]),
    ("einsum", "ij,jk,kl->il", [(128, 256), (256, 64), (64, 128)]),
    ("einsum", "ij,jk,k->i", [(512, 512), (512, 512), (512,)]),
    ("einsum", "bi,bi->b", [(4096, 256), (4096, 256)]),
    ("einsum", "ii->i", [(1024, 1024)]),
    ("einsum", "i,j->ij", [(1024,), (1024,)]),
]


def _call(lib, op, equation, operands):
    if op == "bmm":
        return lib.bmm(*operands)
    return lib.einsum(equation, *operands)


def _np_call(op, equation, arrays):
    if op == "bmm":
        return np.matmul(*arrays)
    return np.einsum(equation, *arrays, optimize=True)


def run(dtype, rounds):
    import torch
    rows = []
    for op, equation, shapes in CASES:
        rng = np.random.default_rng(0)
        arrays = [rng.standard_normal(s).astype(dtype) for s in shapes]
        want = _np_call(op, equation, arrays)
        ours = [nbgrad.from_numpy(a) for a in arrays]
        theirs = [torch.from_numpy(a) for a in arrays]
        tol = 1e-3 if dtype == "float32" else 1e-9
        got = _call(nbgrad, op, equation, ours).numpy()
        assert np.allclose(got, want, rtol=tol, atol=tol * np.abs(want).max()), (op, equation)
        size = int(np.prod(want.shape)) * sum(int(np.prod(s)) for s in shapes)
        inner = max(1, min(200, 20_000_000 // max(size, 1)))
        forward = side_by_side({
            "nbgrad": Case(lambda: _call(nbgrad, op, equation, ours)),
            "numpy": Case(lambda: _np_call(op, equation, arrays)),
            "torch": Case(lambda: _call(torch, op, equation, theirs))}, rounds, inner)
        ours_g = [t.detach().requires_grad_() for t in ours]
        theirs_g = [t.detach().requires_grad_() for t in theirs]

        def step(lib, operands):
            _call(lib, op, equation, operands).sum().backward()
        both = side_by_side({"nbgrad": Case(lambda: step(nbgrad, ours_g)),
                             "torch": Case(lambda: step(torch, theirs_g))}, rounds, inner)
        rows.append((equation, shapes, forward, both))
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
    print(f"{'op':<18} {'shapes':<26} {'nbgrad':>9} {'numpy':>9} {'torch':>9} {'nb/torch':>9}"
          f" | {'fwd+bwd nb':>10} {'torch':>9} {'nb/torch':>9}")
    for equation, shapes, f, b in run(args.dtype, args.rounds):
        print(f"{equation:<18} {','.join('x'.join(map(str, s)) for s in shapes):<26} "
              f"{f['nbgrad'] * 1e3:9.3f} {f['numpy'] * 1e3:9.3f} {f['torch'] * 1e3:9.3f} "
              f"{f['nbgrad'] / f['torch']:9.2f} | {b['nbgrad'] * 1e3:10.3f} "
              f"{b['torch'] * 1e3:9.3f} {b['nbgrad'] / b['torch']:9.2f}")


if __name__ == "__main__":
    main()
