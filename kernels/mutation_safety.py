"""Mutation safety beyond version counters: a Liger-Kernel-style bug caught
three ways, and what the checks cost.

The bug (Liger-Kernel#272, unsloth#5002): a fused cross-entropy writes the
gradient of its logits into the logits' own buffer during the forward, to
save memory, through a raw pointer (Triton there, a Numba kernel here). If
anything else saved the logits for backward (here a z-loss term, as in
PaLM), that backward reads the overwritten values: the gradient is silently
wrong, because no version counter saw the write. nbgrad:

1. without checks: the same silent wrong gradient (shown against the
   gradient of the same loss composed from ops);
2. ``nbgrad.autograd.detect_mutation()``: backward raises, naming the saved
   logits, the node that saved them and the forward line;
3. the write done through ``nbgrad.kernel``: refused before the launch,
   because it covers elements a live graph saved.

First the overhead: the demo's CNN training step with and without
``detect_mutation`` (checksums of every saved tensor at save and at
backward), timed in alternating rounds in one process.

Run from the repository root: ``python -m kernels.mutation_safety``.
"""
import argparse
import statistics
import time

import numba
import numpy as np

import nbgrad
from nbgrad import nn


@numba.njit(cache=True)
def _softmax_grad_into(logits, target, scale):
    """Overwrites each row of ``logits`` with d(mean cross-entropy)/d(logits); returns the loss."""
    loss = 0.0
    for i in range(logits.shape[0]):
        row = logits[i]
        m = row.max()
        total = 0.0
        for j in range(row.shape[0]):
            total += np.exp(row[j] - m)
        loss += np.log(total) + m - row[target[i]]
        for j in range(row.shape[0]):
            row[j] = np.exp(row[j] - m) / total * scale
        row[target[i]] -= scale
    return loss * scale


def fused_cross_entropy(write):
    """A Liger-style fused cross-entropy whose forward writes the logits'
    gradient over the logits (``write(logits_array, target, scale)``)."""
    class FusedCrossEntropy(nbgrad.autograd.Function):
        @staticmethod
        def forward(ctx, logits, target):
            loss = write(logits, target, 1.0 / logits.shape[0])
            ctx.save_for_backward(logits)  # now holding the gradient
            return nbgrad.tensor(loss, dtype=logits.dtype)

        @staticmethod
        def backward(ctx, grad):
            (dlogits,) = ctx.saved_tensors
            return dlogits * grad, None
    return FusedCrossEntropy


def raw_write(logits, target, scale):  # what the Triton kernel does: a raw pointer
    return _softmax_grad_into(logits.detach().numpy(), target.numpy(), scale)


def tracked_write_with(kernel):
    """The same kernel called through ``kernel = nbgrad.kernel(_softmax_grad_into)``
    (made once, before the graph: from then on storages know their saved values)."""
    def write(logits, target, scale):
        return kernel(logits.detach(), target, scale)
    return write


def loss_parts(x, w, target, fused):
    logits = x @ w
    z_loss = 1e-2 * (logits.logsumexp(1) ** 2).mean()  # PaLM's z-loss: saves the logits
    ce = fused.apply(logits, target) if fused else nn.functional.cross_entropy(logits, target)
    return ce + z_loss


def bug_demo():
    rng = np.random.default_rng(0)
    x = nbgrad.tensor(rng.standard_normal((64, 32)), dtype=nbgrad.float64)
    w0 = rng.standard_normal((32, 10)) * 0.1
    target = nbgrad.tensor(rng.integers(0, 10, 64))

    def grad_of(fused):
        w = nbgrad.tensor(w0, requires_grad=True)
        loss_parts(x, w, target, fused).backward()
        return w.grad.numpy()

    reference = grad_of(None)
    silent = grad_of(fused_cross_entropy(raw_write))
    print("1. no checks: the fused op's in-place write is not seen by any counter")
    error = np.abs(silent - reference).max()
    print(f"   max |grad - reference| = {error:.3e} "
          f"(relative {error / np.abs(reference).max():.1%}): silently wrong")
    print("2. with nbgrad.autograd.detect_mutation():")
    try:
        with nbgrad.autograd.detect_mutation():
            grad_of(fused_cross_entropy(raw_write))
        print("   (not caught)")
    except RuntimeError as error:
        print(f"   RuntimeError: {error}")
    print("3. the write through nbgrad.kernel(_softmax_grad_into):")
    fused = fused_cross_entropy(tracked_write_with(nbgrad.kernel(_softmax_grad_into)))
    try:
        grad_of(fused)
        print("   (not refused)")
    except RuntimeError as error:
        print(f"   RuntimeError: {error}")


def overhead(rounds, steps):
    from nbgrad.demo import DigitsCNN
    rng = np.random.default_rng(0)
    model = DigitsCNN()
    optimizer = nbgrad.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    xb = nbgrad.tensor(rng.standard_normal((128, 1, 8, 8)).astype(np.float32))
    yb = nbgrad.tensor(rng.integers(0, 10, 128))

    def step():
        loss = loss_fn(model(xb), yb)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    def timed(on):
        with nbgrad.autograd.detect_mutation(on):
            start = time.perf_counter()
            for _ in range(steps):
                step()
            return (time.perf_counter() - start) / steps * 1e3

    for on in (False, True):  # warm up both (kernels compile once)
        timed(on)
    off_ms, on_ms = [], []
    for _ in range(rounds):
        off_ms.append(timed(False))
        on_ms.append(timed(True))
    ratios = [b / a for a, b in zip(off_ms, on_ms)]
    print(f"Demo CNN training step, batch 128, {steps} steps x {rounds} alternating rounds:")
    print(f"   checks off  {statistics.median(off_ms):7.2f} ms   (min {min(off_ms):.2f})")
    print(f"   detect_mutation {statistics.median(on_ms):7.2f} ms   (min {min(on_ms):.2f})")
    print(f"   ratio on/off: median {statistics.median(ratios):.3f} "
          f"(range {min(ratios):.3f}-{max(ratios):.3f})")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args(argv)
    overhead(args.rounds, args.steps)  # first: before nbgrad.kernel turns on save tracking
    print()
    bug_demo()


if __name__ == "__main__":
    main()
