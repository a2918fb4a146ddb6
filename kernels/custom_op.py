"""Question: can a new op be added as one row -- a scalar forward and its
derivative in plain Python -- and get correct CPU and CUDA kernels and a
correct gradient for free, at a speed close to the built-in rows?

The op is GELU in its exact form, ``x * Phi(x)`` with the normal CDF written
through ``math.erf``:

    gelu(x)  = 0.5 x (1 + erf(x / sqrt 2))
    gelu'(x) = Phi(x) + x phi(x),   phi(x) = exp(-x^2 / 2) / sqrt(2 pi)

The study

1. declares it with ``nbgrad.elementwise`` (one row);
2. gradchecks it on the CPU through the public Tensor API (central finite
   differences in float64, ``nbgrad.autograd.gradcheck``), and checks the
   values against ``torch.nn.functional.gelu`` when PyTorch is installed;
3. on CUDA (a GPU, or the simulator with ``NUMBA_ENABLE_CUDASIM=1``) runs the
   same row on ``device="cuda"`` tensors (the row's generated CUDA kernels),
   compares forward and backward with the CPU, and gradchecks it there too;
4. times forward + backward per element on each device, next to the
   built-in ``tanh`` row for scale.

Run from the repository root:  python -m kernels.custom_op [--n N]
"""
import argparse
import math

import numpy as np

import nbgrad

from .roofline import best_time

gelu = nbgrad.elementwise(
    "gelu_study",
    lambda a: 0.5 * a * (1.0 + math.erf(a * 0.7071067811865476)),
    grads={"a": lambda g, a: g * (0.5 * (1.0 + math.erf(a * 0.7071067811865476))
                                  + a * 0.3989422804014327 * math.exp(-0.5 * a * a))},
    title="Gelu",
)


def reference(x):
    """GELU in float64 NumPy, from math.erf (no SciPy needed)."""
    erf = np.vectorize(math.erf)
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def check_cpu():
    x = nbgrad.tensor(np.linspace(-4, 4, 17), dtype=nbgrad.float64, requires_grad=True)
    ok = nbgrad.autograd.gradcheck(gelu, (x,))
    y = gelu(x)
    values = np.allclose(y.detach().numpy(), reference(x.detach().numpy()), rtol=1e-12, atol=1e-14)
    lines = [f"CPU gradcheck (float64, finite differences): {'passed' if ok else 'FAILED'}",
             f"CPU values vs float64 erf reference:        {'match' if values else 'MISMATCH'}"]
    try:
        import torch
        t = torch.tensor(x.detach().numpy(), requires_grad=True)
        torch.nn.functional.gelu(t).sum().backward()
        y.sum().backward()
        same = (np.allclose(y.detach().numpy(), torch.nn.functional.gelu(t).detach().numpy())
                and np.allclose(x.grad.numpy(), t.grad.numpy()))
        verdict = "match" if same else "MISMATCH"
        lines.append(f"CPU vs torch.nn.functional.gelu (value and grad): {verdict}")
        values = values and same
    except ImportError:
        lines.append("torch not installed: skipped the PyTorch comparison")
    return ok and values, lines


def check_cuda():
    """The same row on CUDA tensors: values and gradients against the CPU,
    and the public gradcheck (float64 finite differences) on the device."""
    x_cpu = nbgrad.tensor(np.linspace(-4, 4, 33), dtype=nbgrad.float64, requires_grad=True)
    x = x_cpu.detach().cuda().requires_grad_()
    g = nbgrad.cos(x_cpu.detach())
    gelu(x_cpu).backward(g)
    y = gelu(x)
    y.backward(g.cuda())
    same = (np.allclose(y.detach().cpu().numpy(), gelu(x_cpu).detach().numpy(),
                        rtol=1e-12, atol=1e-14)
            and x.grad.device == x.device
            and np.allclose(x.grad.cpu().numpy(), x_cpu.grad.numpy(), rtol=1e-12, atol=1e-14))
    fd = nbgrad.autograd.gradcheck(gelu, (x.detach()[:9].requires_grad_(),), raise_exception=False)
    verdict = "match" if same else "MISMATCH"
    lines = [f"CUDA ({nbgrad.cuda.get_device_name()}) vs CPU, forward and backward: {verdict}",
             f"CUDA gradcheck (float64, finite differences):  {'passed' if fd else 'FAILED'}"]
    return same and fd, lines


def time_row(row, n, device):
    """ns per element of forward + backward through the public Tensor API (CPU)
    or the backend's kernels (CUDA)."""
    x = np.random.default_rng(0).uniform(-3, 3, n).astype(np.float32)
    if device == "cpu":
        t = nbgrad.tensor(x, requires_grad=True)
        g = nbgrad.ones(n)

        def step():
            t.grad = None
            row(t).backward(g)
        seconds = best_time(step, lambda: None, 5)
    else:
        from nbgrad.backends import cuda
        dx, dg = cuda.to_device(x), cuda.to_device(np.ones(n, np.float32))
        out = cuda.empty((n,), np.float32)
        reads = {p for p in row.grad_params(0)}

        def step():
            cuda.elementwise_forward(row, out, [dx])
            cuda.elementwise_backward(row, [0], dg, [dx if "a" in reads else None],
                                      out if "out" in reads else None)
        seconds = best_time(step, cuda.synchronize, 5)
    return seconds / n * 1e9


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1 << 22, help="elements for the timing")
    args = parser.parse_args(argv)
    print(__doc__.split("\n\n")[0], "\n")
    ok, lines = check_cpu()
    print("\n".join(lines))
    from nbgrad.backends import cuda
    devices = ["cpu"]
    if cuda.is_available():
        cuda_ok, lines = check_cuda()
        print("\n".join(lines))
        ok = ok and cuda_ok
        devices.append("cuda")
    else:
        try:
            cuda.require()
        except RuntimeError as error:
            print(f"CUDA skipped: {error}")
    print(f"\nforward + backward, float32, n = {args.n:,} (best of 5), ns per element:")
    print(f"{'device':<8} {'gelu (custom row)':>18} {'tanh (built-in)':>16}")
    for device in devices:
        if device == "cuda" and cuda.simulator():
            print(f"{'cuda':<8} {'(simulator: not timed)':>35}")
            continue
        print(f"{device:<8} {time_row(gelu, args.n, device):18.3f} "
              f"{time_row(nbgrad.tanh, args.n, device):16.3f}")
    if not ok:
        raise SystemExit("custom_op: a check FAILED")


if __name__ == "__main__":
    main()
