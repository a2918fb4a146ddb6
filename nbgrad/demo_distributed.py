"""``python -m nbgrad.demo --distributed N``: the demo's CNN trained
data-parallel on N MPI ranks, checked against one process.

Each global batch of the epoch (the same on every rank: one seed) is split
into N equal shards; rank r trains ``DistributedDataParallel(DigitsCNN())``
on shard r, whose gradients DDP averages, so each step equals one step on
the whole global batch. Rank 0 also trains a single-process copy on the
global batches, from the same initial weights, and prints after each epoch
how far apart the two are. Incomplete last batches are dropped (shards must
be equal for the average to be the global batch's gradient, as in PyTorch).
"""
import os
import sys
import time

import numpy as np

import nbgrad
import nbgrad.distributed as dist
import nbgrad.nn as nn
import nbgrad.optim as optim
from nbgrad.demo import BATCH, SEED, DigitsCNN, evaluate, load_digits_split
from nbgrad.distributed import run
from nbgrad.nn.parallel import DistributedDataParallel

TOLERANCE = 1e-4  # float32 sums in another order, through Adam's normalisation


def under_mpi():
    return any(k in os.environ for k in ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK"))


def launch(ranks, epochs):
    """Start this demo on ``ranks`` MPI ranks; returns the job's exit status."""
    return run.launch(ranks, "nbgrad.demo_distributed", ["--epochs", str(epochs)], module=True)


def train(epochs):
    dist.init_process_group("mpi")
    rank, size = dist.get_rank(), dist.get_world_size()
    x_train, y_train, x_test, y_test = load_digits_split()
    global_batch = BATCH * size
    nbgrad.manual_seed(SEED + rank)  # different on each rank: DDP broadcasts rank 0's weights
    model = DistributedDataParallel(DigitsCNN())
    optimizer = optim.Adam(model.parameters(), lr=3e-3)
    loss_fn = nn.CrossEntropyLoss()
    if rank == 0:
        print(f"nbgrad {nbgrad.__version__}: the demo's CNN, data-parallel on {size} MPI ranks "
              f"(DistributedDataParallel, {len(model._buckets)} gradient buckets), global batch "
              f"{global_batch} = {size} x {BATCH}; rank 0 also trains one process on the same "
              f"global batches", flush=True)
        single = DigitsCNN()
        single.load_state_dict(model.module.state_dict())
        single_optimizer = optim.Adam(single.parameters(), lr=3e-3)
    rng = np.random.default_rng(SEED)
    ok = True
    for epoch in range(1, epochs + 1):
        start = time.perf_counter()
        order = rng.permutation(len(x_train))
        steps = len(order) // global_batch
        for step in range(steps):
            batch = order[step * global_batch:(step + 1) * global_batch]
            shard = batch[rank * BATCH:(rank + 1) * BATCH]
            optimizer.zero_grad()
            loss_fn(model(nbgrad.tensor(x_train[shard])), nbgrad.tensor(y_train[shard])).backward()
            optimizer.step()
            if rank == 0:
                single_optimizer.zero_grad()
                loss_fn(single(nbgrad.tensor(x_train[batch])),
                        nbgrad.tensor(y_train[batch])).backward()
                single_optimizer.step()
        if rank == 0:
            apart = max(float(np.abs(p.detach().numpy() - q.detach().numpy()).max())
                        for p, q in zip(model.module.parameters(), single.parameters()))
            equal = apart <= TOLERANCE
            ok = ok and equal
            _, accuracy = evaluate(model.module, x_test, y_test, "cpu")
            print(f"  epoch {epoch}: {steps} steps in {time.perf_counter() - start:.1f} s, test "
                  f"accuracy {100 * accuracy:.2f}%; parameters "
                  f"{'equal' if equal else 'NOT equal'} to the single-process run's "
                  f"(max |difference| {apart:.1e}, tolerance {TOLERANCE:.0e})", flush=True)
    dist.destroy_process_group()
    return 0 if ok else 1


def main(argv=None):
    import argparse
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args(argv)
    return train(args.epochs)


if __name__ == "__main__":
    sys.exit(main())
