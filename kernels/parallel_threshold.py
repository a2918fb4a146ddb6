"""Question: from how many elements does an elementwise kernel's ``prange``
loop beat its serial loop on this machine, with OpenMP threads that wait
passively (nbgrad's default) and with threads that spin?

nbgrad compiles both loops from every op row and picks one by size
(``nbgrad.backends.cpu.elementwise.PARALLEL_THRESHOLD``). For a few rows it
times the two forward kernels directly (best of 7, microseconds) at sizes
2^12 .. 2^21 and prints the parallel/serial ratio; the threshold belongs
where the ratio drops below 1. The wait policy is read when OpenMP starts,
so each policy runs in its own process.

Run from the repository root:  python -m kernels.parallel_threshold [--rows relu,add,sigmoid]
"""
import argparse
import os
import subprocess
import sys
import time

import numpy as np


def _best(fn, reps):
    fn()
    best = float("inf")
    for _ in range(7):
        start = time.perf_counter()
        for _ in range(reps):
            fn()
        best = min(best, (time.perf_counter() - start) / reps)
    return best


def measure(rows):
    from nbgrad.backends.cpu import elementwise
    from nbgrad.declarations.op_table import BY_NAME

    for name in rows:
        row = BY_NAME[name]
        print(f"{name}  (threshold now {elementwise.PARALLEL_THRESHOLD:,} elements)")
        rng = np.random.default_rng(0)
        for power in range(12, 22):
            n = 1 << power
            args = [rng.random(n).astype(np.float32) for _ in row.inputs]
            out = np.empty(n, np.float32)
            module, _ = elementwise._forward_plan(row, (np.ndarray,) * len(args), 1)
            reps = max(1, 2000 >> max(0, power - 12))
            serial = _best(lambda: module.serial(out, *args), reps)
            parallel = _best(lambda: module.parallel(out, *args), reps)
            print(f"  2^{power:<2d}  serial {serial * 1e6:8.1f} us  parallel {parallel * 1e6:8.1f} us"
                  f"  parallel/serial {parallel / serial:5.2f}", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="relu,add,sigmoid")
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    rows = args.rows.split(",")
    if args.measure:
        measure(rows)
        return
    for policy in ("PASSIVE", "ACTIVE"):
        print(f"\nOMP_WAIT_POLICY={policy}", flush=True)
        env = dict(os.environ, OMP_WAIT_POLICY=policy)
        subprocess.run([sys.executable, "-m", "kernels.parallel_threshold", "--measure",
                        "--rows", args.rows], env=env, check=True)


if __name__ == "__main__":
    main()
