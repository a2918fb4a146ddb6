"""Question: how much memory does activation checkpointing
(``nbgrad.utils.checkpoint``) save on a deep MLP, and what does it cost in
time?

A deep MLP of ``--depth`` residual blocks (``x + fc2(tanh(u) * sigmoid(u))``
with ``u = fc1(x)``, ``--width`` units, batch ``--batch``) runs forward and
backward once per variant, each in a fresh process:

- ``plain``: no checkpointing (a block keeps five activations for backward);
- ``per block``: each block checkpointed (non-reentrant: saved-tensor hooks),
  so only the blocks' inputs are kept;
- ``sequential``: ``checkpoint_sequential`` in sqrt(depth) segments: only
  the segments' inputs, and one segment's activations at a time in backward;
- ``reentrant``: each block checkpointed with ``use_reentrant=True``;
- ``save_on_cpu``: saved tensors kept in host memory (on the GPU only).

It prints the memory the graph holds after the forward, the peak during
forward and backward (both above what the parameters, the input and their
``.grad`` buffers, made zeroed before the step, take), the time of one step,
and the largest difference of the gradients from ``plain``'s. Host memory
is read with ``tracemalloc`` (NumPy reports its allocations to it), with
nbgrad's buffer pool told to cache nothing, so a freed buffer counts as
freed; device memory with ``nbgrad.cuda.memory_stats()`` (live buffers: what
the caching allocator keeps for reuse does not count). nbgrad's host pool
rounds a buffer of 1 MiB or more up to a multiple of 2 MiB, which the
figures include.

On a shared 2-core machine (defaults: 32 blocks of 1024 units,
batch 256, activations of 1 MiB), the peak fell from 264 MiB (plain) to
78 MiB per block, 74 MiB sequential, 82 MiB reentrant (0.28-0.31x), for
1.3x the time of a step (one more forward), with the same gradients.

Run from the repository root:
    python -m kernels.checkpoint_memory [--depth 32] [--width 1024] [--batch 256] [--device cpu]
"""
import argparse
import json
import math
import subprocess
import sys
import time

VARIANTS = ["plain", "per block", "sequential", "reentrant", "save_on_cpu"]


def _model(nbgrad, depth, width, device):
    class Block(nbgrad.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nbgrad.nn.Linear(width, width)
            self.fc2 = nbgrad.nn.Linear(width, width)
            with nbgrad.no_grad():
                self.fc2.weight.mul_(0.5)

        def forward(self, x):
            u = self.fc1(x)
            return x + self.fc2(u.tanh() * u.sigmoid())

    nbgrad.manual_seed(0)
    return nbgrad.nn.Sequential(*[Block() for _ in range(depth)]).to(device)


def _forward(nbgrad, model, x, variant, depth):
    cp = nbgrad.utils.checkpoint
    if variant == "plain":
        return model(x)
    if variant == "sequential":
        return cp.checkpoint_sequential(model, max(1, round(math.sqrt(depth))), x,
                                        use_reentrant=False)
    if variant == "save_on_cpu":
        with nbgrad.autograd.graph.save_on_cpu():
            return model(x)
    h = x
    for block in model.children():
        h = cp.checkpoint(block, h, use_reentrant=variant == "reentrant")
    return h


class _Meter:
    """Bytes in use and the peak since ``reset``: host (tracemalloc) or device."""

    def __init__(self, nbgrad, device):
        self.nbgrad, self.cuda = nbgrad, device == "cuda"
        if not self.cuda:
            import tracemalloc
            from nbgrad.backends.cpu.allocator import pool
            pool.free_lists.max_cached_bytes = 0  # a buffer freed is freed, for tracemalloc
            nbgrad.empty_cache()
            self.tracemalloc = tracemalloc
            tracemalloc.start()

    def now(self):
        if self.cuda:
            return self.nbgrad.cuda.memory_allocated()
        return self.tracemalloc.get_traced_memory()[0]

    def peak(self):
        if self.cuda:
            return self.nbgrad.cuda.max_memory_allocated()
        return self.tracemalloc.get_traced_memory()[1]

    def reset(self):
        if self.cuda:  # the warm-up step's peak (it made the .grad buffers) is not this step's
            from nbgrad.backends.cuda.allocator import pool
            with pool.free_lists._lock:
                pool.free_lists.peak_allocated_bytes = pool.free_lists.allocated_bytes
        else:
            self.tracemalloc.reset_peak()


def run_one(variant, depth, width, batch, device):
    """One variant, measured in this process: a dict of figures."""
    import gc

    import numpy as np

    import nbgrad
    model = _model(nbgrad, depth, width, device)
    x = nbgrad.randn(batch, width, device=device, requires_grad=True)
    _forward(nbgrad, model, x, variant, depth).sum().backward()  # compile
    # The gradients exist before the measured step (zeroed, not freed): what
    # it allocates is activations and temporaries, not the .grad buffers.
    model.zero_grad(set_to_none=False)
    x.grad.zero_()
    gc.collect()
    meter = _Meter(nbgrad, device)
    base = meter.now()
    meter.reset()
    start = time.perf_counter()
    out = _forward(nbgrad, model, x, variant, depth)
    held = meter.now() - base
    out.sum().backward()
    if device == "cuda":
        nbgrad.cuda.synchronize()
    seconds = time.perf_counter() - start
    peak = meter.peak() - base
    grads = [p.grad.cpu().numpy() for p in model.parameters()] + [x.grad.cpu().numpy()]
    np.save(f"/tmp/_checkpoint_memory_{variant.replace(' ', '_')}.npy",
            np.concatenate([g.ravel() for g in grads]))
    return {"held": held, "peak": peak, "seconds": seconds}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--depth", type=int, default=32)
    parser.add_argument("--width", type=int, default=1024)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one, args.depth, args.width, args.batch, args.device)))
        return
    import numpy as np
    variants = [v for v in VARIANTS if v != "save_on_cpu" or args.device == "cuda"]
    activation = args.batch * args.width * 4
    print(f"MLP: {args.depth} residual blocks of {args.width} units, batch {args.batch}, float32, "
          f"on {args.device}; one activation: {activation / 2**20:.1f} MiB")
    print(f"{'variant':<12} {'held after forward':>19} {'peak fwd+bwd':>13} {'vs plain':>9} "
          f"{'step s':>8} {'max |dgrad|':>12}")
    plain = None
    reference = None
    for variant in variants:
        result = subprocess.run(
            [sys.executable, "-m", "kernels.checkpoint_memory", "--one", variant,
             "--depth", str(args.depth), "--width", str(args.width), "--batch", str(args.batch),
             "--device", args.device], capture_output=True, text=True, check=True)
        figures = json.loads(result.stdout.strip().splitlines()[-1])
        grads = np.load(f"/tmp/_checkpoint_memory_{variant.replace(' ', '_')}.npy")
        if plain is None:
            plain, reference = figures, grads
        ratio = figures["peak"] / plain["peak"]
        print(f"{variant:<12} {figures['held'] / 2**20:>15.1f} MiB {figures['peak'] / 2**20:>9.1f} "
              f"MiB {ratio:>8.2f}x {figures['seconds']:>8.3f} "
              f"{float(np.abs(grads - reference).max()):>12.2e}")


if __name__ == "__main__":
    main()
