"""Run under MPI by tests/distributed/test_distributed.py (2 and 3 ranks):
every check compares a collective's result on this rank with the value
computed locally from what every rank contributes. A failing check raises
(and aborts every rank); the names of the passing ones are written, one
``ok <name>`` line each, to ``$NBGRAD_TEST_OUT/rank<r>.txt``."""
import os
import sys

import numpy as np

import nbgrad
import nbgrad.distributed as dist
from nbgrad import nn
from nbgrad.distributed import nn as dnn
from nbgrad.nn.parallel import DistributedDataParallel as DDP
from nbgrad.utils.data.distributed import DistributedSampler


def contribution(rank, shape=(2, 3)):
    return (np.arange(np.prod(shape), dtype=np.float64).reshape(shape) + 1) * (rank + 1)


PASSED = []


def check(name, ok):
    assert ok, f"rank {dist.get_rank()}: {name} failed"
    PASSED.append(name)


def collectives(rank, size):
    everyone = [contribution(r) for r in range(size)]
    for op, want in [(dist.ReduceOp.SUM, sum(everyone)), (dist.ReduceOp.AVG, sum(everyone) / size),
                     (dist.ReduceOp.MAX, np.max(everyone, 0)),
                     (dist.ReduceOp.MIN, np.min(everyone, 0)),
                     (dist.ReduceOp.PRODUCT, np.prod(everyone, 0))]:
        t = nbgrad.tensor(contribution(rank))
        dist.all_reduce(t, op)
        check(f"all_reduce {op.name}", np.allclose(t.numpy(), want) and t._version == 1)
    t = nbgrad.tensor(contribution(rank))
    work = dist.all_reduce(t, async_op=True)
    work.wait()
    check("all_reduce async", np.allclose(t.numpy(), sum(everyone)) and work.is_completed())
    t = nbgrad.tensor(contribution(rank))
    dist.broadcast(t, src=size - 1)
    check("broadcast", np.allclose(t.numpy(), everyone[-1]))
    t = nbgrad.tensor(contribution(rank))
    dist.reduce(t, dst=0)
    check("reduce", np.allclose(t.numpy(), sum(everyone) if rank == 0 else everyone[rank]))
    outs = [nbgrad.zeros(2, 3, dtype=nbgrad.float64) for _ in range(size)]
    dist.all_gather(outs, nbgrad.tensor(contribution(rank)))
    check("all_gather", all(np.allclose(o.numpy(), e) for o, e in zip(outs, everyone)))
    out = nbgrad.zeros(size * 2, 3, dtype=nbgrad.float64)
    dist.all_gather_into_tensor(out, nbgrad.tensor(contribution(rank)))
    check("all_gather_into_tensor", np.allclose(out.numpy(), np.concatenate(everyone)))
    big = [np.arange(size * 4, dtype=np.float64) * (r + 1) for r in range(size)]
    out = nbgrad.zeros(4, dtype=nbgrad.float64)
    dist.reduce_scatter_tensor(out, nbgrad.tensor(big[rank]))
    check("reduce_scatter_tensor", np.allclose(out.numpy(), sum(big)[rank * 4:(rank + 1) * 4]))
    gathered = ([nbgrad.zeros(2, 3, dtype=nbgrad.float64) for _ in range(size)] if rank == 0
                else None)
    dist.gather(nbgrad.tensor(contribution(rank)), gathered, dst=0)
    check("gather", rank != 0 or all(np.allclose(g.numpy(), e) for g, e in zip(gathered, everyone)))
    t = nbgrad.zeros(2, 3, dtype=nbgrad.float64)
    dist.scatter(t, [nbgrad.tensor(e) for e in everyone] if rank == 0 else None, src=0)
    check("scatter", np.allclose(t.numpy(), everyone[rank]))
    if rank == 0:
        dist.send(nbgrad.tensor(contribution(7)), dst=1)
    elif rank == 1:
        t = nbgrad.zeros(2, 3, dtype=nbgrad.float64)
        sender = dist.recv(t, src=0)
        check("send/recv", sender == 0 and np.allclose(t.numpy(), contribution(7)))
    dist.barrier()
    check("barrier", True)
    leaf = nbgrad.ones(3, requires_grad=True)
    try:
        dist.all_reduce(leaf * 1)
        check("plain collective refuses a tensor requiring grad", False)
    except RuntimeError as error:
        check("plain collective refuses a tensor requiring grad",
              "nbgrad.distributed.nn.all_reduce" in str(error))
    group = dist.new_group([0, 1])
    if group is not None:
        t = nbgrad.tensor(contribution(rank))
        dist.all_reduce(t, group=group)
        check("new_group", np.allclose(t.numpy(), everyone[0] + everyone[1]))


def differentiable(rank, size):
    x = nbgrad.tensor(contribution(rank), requires_grad=True)
    y = dnn.all_reduce(x)
    (y * (rank + 1)).sum().backward()  # d/dx_r of sum_k (k+1) * sum_j x_j
    check("nn.all_reduce gradient", np.allclose(x.grad.numpy(), sum(range(1, size + 1))))
    x = nbgrad.tensor(contribution(rank), requires_grad=True)
    parts = dnn.all_gather(x)
    loss = sum((p * (k + 1) * (rank + 1)).sum() for k, p in enumerate(parts))
    loss.backward()  # block k's gradient on rank r: (k+1)(r+1); summed over r for this rank's block
    check("nn.all_gather gradient",
          np.allclose(x.grad.numpy(), (rank + 1) * sum(range(1, size + 1))))
    x = nbgrad.tensor(contribution(rank), requires_grad=True)
    y = dnn.broadcast(x, src=0)
    (y * (rank + 1)).sum().backward()
    want = sum(range(1, size + 1)) if rank == 0 else 0.0
    check("nn.broadcast gradient", np.allclose(x.grad.numpy(), want))


def model():
    nbgrad.manual_seed(1234 + dist.get_rank())  # different on each rank: DDP broadcasts rank 0's
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))


def ddp(rank, size):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((12 * size, 6))
    y = rng.integers(0, 3, 12 * size)
    for bucket_cap_mb, overlap in [(25, True), (0.0005, True), (0.0005, False)]:
        net = model().double()
        wrapped = DDP(net, bucket_cap_mb=bucket_cap_mb)
        wrapped._overlap = overlap
        reference = model().double()
        reference.load_state_dict({k[len("module."):]: v for k, v in wrapped.state_dict().items()})
        opt = nbgrad.optim.SGD(wrapped.parameters(), lr=0.1)
        ref_opt = nbgrad.optim.SGD(reference.parameters(), lr=0.1)
        loss_fn = nn.CrossEntropyLoss()
        for step in range(3):
            shard = slice(rank * 12, (rank + 1) * 12)
            opt.zero_grad()
            loss_fn(wrapped(nbgrad.tensor(x[shard])), nbgrad.tensor(y[shard])).backward()
            opt.step()
            ref_opt.zero_grad()
            loss_fn(reference(nbgrad.tensor(x)), nbgrad.tensor(y)).backward()
            ref_opt.step()
        same = all(np.allclose(p.detach().numpy(), q.detach().numpy(), atol=1e-10)
                   for p, q in zip(net.parameters(), reference.parameters()))
        check(f"DDP equals one process on the global batch (buckets {len(wrapped._buckets)}, "
              f"overlap {overlap})", same)
    assert list(wrapped.state_dict())[0] == "module.0.weight"
    # no_sync: two local backwards, then one synced: the average of the summed gradients
    net = model().double()
    wrapped = DDP(net)
    with wrapped.no_sync():
        wrapped(nbgrad.tensor(x[:4] + rank)).sum().backward()
    wrapped(nbgrad.tensor(x[4:8] + rank)).sum().backward()
    synced = [p.grad.numpy().copy() for p in net.parameters()]
    reference = model().double()
    reference.load_state_dict(net.state_dict())
    total = [np.zeros_like(g) for g in synced]
    for r in range(size):
        reference.zero_grad()
        reference(nbgrad.tensor(x[:4] + r)).sum().backward()
        reference(nbgrad.tensor(x[4:8] + r)).sum().backward()
        for t, p in zip(total, reference.parameters()):
            t += p.grad.numpy()
    # the synced backward averages what each rank accumulated, its no_sync part included
    check("no_sync", all(np.allclose(g, t / size, atol=1e-10) for g, t in zip(synced, total)))
    # find_unused_parameters: a branch unused on every rank
    branch = nn.ModuleDict({"used": nn.Linear(6, 3), "unused": nn.Linear(6, 3)}).double()

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.branch = branch

        def forward(self, inp):
            return self.branch["used"](inp)

    wrapped = DDP(Net(), find_unused_parameters=True)
    for _ in range(2):
        wrapped(nbgrad.tensor(x[:4] * (rank + 1))).sum().backward()
    check("find_unused_parameters", branch["used"].weight.grad is not None)
    wrapped = DDP(Net())
    wrapped(nbgrad.tensor(x[:4])).sum().backward()
    try:
        wrapped(nbgrad.tensor(x[:4]))
        check("unused parameter without find_unused_parameters raises", False)
    except RuntimeError as error:
        check("unused parameter without find_unused_parameters raises",
              "Expected to have finished reduction" in str(error))
    # buffers: rank 0's running statistics are broadcast at construction and each forward
    bn = nn.BatchNorm1d(6).double() if hasattr(nn, "BatchNorm1d") else None
    if bn is not None:
        wrapped = DDP(bn)
        wrapped(nbgrad.tensor(x[:8] * (rank + 1)))
        wrapped(nbgrad.tensor(x[:8]))
        means = [nbgrad.zeros(6, dtype=nbgrad.float64) for _ in range(size)]
        dist.all_gather(means, bn.running_mean.detach().clone())
        check("BatchNorm buffers follow rank 0",
              all(np.allclose(m.numpy(), means[0].numpy()) for m in means))


def sampler(rank, size):
    seen = list(DistributedSampler(range(10), shuffle=True, seed=3))
    everyone = [nbgrad.zeros(len(seen), dtype=nbgrad.int64) for _ in range(size)]
    dist.all_gather(everyone, nbgrad.tensor(seen))
    union = sorted(int(v) for e in everyone for v in e.numpy())
    check("DistributedSampler covers the dataset", set(union) == set(range(10))
          and len(union) == len(seen) * size)


def on_cuda(rank, size):
    """CUDA tensors (in the simulator when NUMBA_ENABLE_CUDASIM=1): staged through the host."""
    everyone = [contribution(r) for r in range(size)]
    t = nbgrad.tensor(contribution(rank), device="cuda")
    dist.all_reduce(t, dist.ReduceOp.AVG)
    check("cuda all_reduce AVG", np.allclose(t.cpu().numpy(), sum(everyone) / size)
          and dist.transport(t) == "staged" and t._version == 1)
    outs = [nbgrad.zeros(2, 3, dtype=nbgrad.float64, device="cuda") for _ in range(size)]
    dist.all_gather(outs, nbgrad.tensor(contribution(rank), device="cuda"))
    check("cuda all_gather", all(np.allclose(o.cpu().numpy(), e) for o, e in zip(outs, everyone)))
    x = nbgrad.tensor(contribution(rank), device="cuda", requires_grad=True)
    (dnn.all_reduce(x) * (rank + 1)).sum().backward()
    check("cuda nn.all_reduce gradient", np.allclose(x.grad.cpu().numpy(), sum(range(1, size + 1))))
    rng = np.random.default_rng(0)
    inputs = rng.standard_normal((4 * size, 6))
    net = model().double().to("cuda")
    wrapped = DDP(net)
    reference = model().double().to("cuda")
    reference.load_state_dict(net.state_dict())
    wrapped(nbgrad.tensor(inputs[rank * 4:(rank + 1) * 4], device="cuda")).pow(2).mean().backward()
    reference(nbgrad.tensor(inputs, device="cuda")).pow(2).mean().backward()
    check("cuda DDP gradients equal one process's",
          all(np.allclose(p.grad.cpu().numpy(), q.grad.cpu().numpy(), atol=1e-10)
              for p, q in zip(net.parameters(), reference.parameters())))


def main():
    dist.init_process_group("mpi")
    rank, size = dist.get_rank(), dist.get_world_size()
    part = sys.argv[1] if len(sys.argv) > 1 else "all"
    if part == "fail":
        if rank == 1:
            raise ValueError("rank 1 fails on purpose")
        t = nbgrad.ones(3)
        dist.all_reduce(t)  # the others wait here until the failing rank aborts them
        return
    for name, fn in [("collectives", collectives), ("differentiable", differentiable),
                     ("ddp", ddp), ("sampler", sampler), ("cuda", on_cuda)]:
        if part == name or (part == "all" and name != "cuda"):
            fn(rank, size)
    dist.destroy_process_group()
    out = os.environ.get("NBGRAD_TEST_OUT")  # one file per rank: ranks' stdout may interleave
    if out:
        with open(os.path.join(out, f"rank{rank}.txt"), "w") as f:
            f.write("".join(f"ok {name}\n" for name in PASSED))
    else:
        print("\n".join(f"rank {rank} ok {name}" for name in PASSED), flush=True)


if __name__ == "__main__":
    main()
