"""Data-parallel speed on this machine: all-reduce bandwidth by message size,
and the DDP training step of the demo's CNN on 1 and 2 ranks, with its
bucket all-reduces overlapping backward and without (every bucket after the
whole backward).

``python -m kernels.distributed_study`` starts itself under MPI
(``python -m nbgrad.distributed.run``) with 1 and 2 ranks and prints rank
0's tables. Figures are medians over rounds; the machine's two cores are
shared by both ranks, so a second rank also halves each rank's compute.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np

SIZES = [4 << 10, 64 << 10, 1 << 20, 4 << 20, 40 << 20]  # bytes


def allreduce_table(dist, rounds):
    from mpi4py import MPI
    import nbgrad
    rows = []
    for nbytes in SIZES:
        n = nbytes // 4
        t = nbgrad.ones(n)
        raw = np.ones(n, np.float32)
        out = np.empty_like(raw)
        ours, theirs = [], []
        for _ in range(rounds):
            dist.barrier()
            start = time.perf_counter()
            dist.all_reduce(t)
            ours.append(time.perf_counter() - start)
            dist.barrier()
            start = time.perf_counter()
            MPI.COMM_WORLD.Allreduce(raw, out)
            theirs.append(time.perf_counter() - start)
        a, b = statistics.median(ours), statistics.median(theirs)
        rows.append((nbytes, a, b))
    return rows


def ddp_step(dist, overlap, steps, rounds, batch):
    import nbgrad
    from nbgrad import nn
    from nbgrad.demo import DigitsCNN
    from nbgrad.nn.parallel import DistributedDataParallel
    nbgrad.manual_seed(0)
    model = DistributedDataParallel(DigitsCNN(), bucket_cap_mb=0.05)  # several buckets
    model._overlap = overlap
    opt = nbgrad.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    rng = np.random.default_rng(dist.get_rank())
    share = batch // dist.get_world_size()  # the same global batch on any number of ranks
    x = nbgrad.tensor(rng.standard_normal((share, 1, 8, 8)).astype(np.float32))
    y = nbgrad.tensor(rng.integers(0, 10, share))

    def step():
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()

    step()
    times = []
    for _ in range(rounds):
        dist.barrier()
        start = time.perf_counter()
        for _ in range(steps):
            step()
        times.append((time.perf_counter() - start) / steps)
    return statistics.median(times), len(model._buckets)


def comm_time(dist, model_bytes, rounds):
    """One all-reduce of the gradients' bytes (what a step communicates)."""
    import nbgrad
    t = nbgrad.ones(model_bytes // 4)
    times = []
    for _ in range(rounds):
        dist.barrier()
        start = time.perf_counter()
        dist.all_reduce(t)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def worker(args):
    import nbgrad
    import nbgrad.distributed as dist
    from nbgrad.demo import DigitsCNN
    dist.init_process_group("mpi")
    rank, size = dist.get_rank(), dist.get_world_size()
    lines = []
    if size > 1:
        lines.append(f"All-reduce (SUM, float32) on {size} ranks, median of {args.rounds}:")
        lines.append(f"{'bytes':>10} {'nbgrad ms':>10} {'mpi4py ms':>10} {'GB/s':>7} "
                     f"{'/ mpi4py':>9}")
        for nbytes, ours, theirs in allreduce_table(dist, args.rounds):
            lines.append(f"{nbytes:>10} {ours * 1e3:>10.3f} {theirs * 1e3:>10.3f} "
                         f"{nbytes / ours / 1e9:>7.2f} {ours / theirs:>9.2f}")
    with_overlap, buckets = ddp_step(dist, True, args.steps, args.rounds, args.batch)
    without, _ = ddp_step(dist, False, args.steps, args.rounds, args.batch)
    grad_bytes = sum(p.numel() * 4 for p in DigitsCNN().parameters())
    comm = comm_time(dist, grad_bytes, args.rounds) if size > 1 else 0.0
    hidden = min(1.0, max(0.0, (without - with_overlap) / comm)) if size > 1 else 0.0
    lines.append(f"DDP step, demo CNN, global batch {args.batch}, {buckets} buckets, {size} "
                 f"rank(s): overlap {with_overlap * 1e3:.2f} ms, after backward "
                 f"{without * 1e3:.2f} ms"
                 + (f"; one all-reduce of the {grad_bytes} gradient bytes {comm * 1e3:.2f} ms, "
                    f"hidden {hidden:.0%}" if size > 1 else ""))
    dist.destroy_process_group()
    if rank == 0:
        print("\n".join(lines), flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker(args)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for ranks in (1, 2):
        subprocess.run([sys.executable, "-m", "nbgrad.distributed.run", "-n", str(ranks), "-m",
                        "kernels.distributed_study", "--worker", "--rounds", str(args.rounds),
                        "--steps", str(args.steps), "--batch", str(args.batch)], env=env,
                       check=True, cwd=root)


if __name__ == "__main__":
    main()
