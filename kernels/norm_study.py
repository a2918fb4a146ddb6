"""How fast is a training step of each model family of the demo in nbgrad next
to PyTorch eager, in the same run: the demo's CNN (8x8 digits, batch 64) with a
BatchNorm2d after each convolution and without, and the sequence models of
``kernels.sequence_step_study`` (LSTM, GRU, TransformerEncoderLayer: the digits
read row by row); and the normalization layers alone (forward + backward of
BatchNorm2d, LayerNorm, GroupNorm at the demo's sizes and large ones: nbgrad's
fused kernels, PyTorch's, and NumPy's composition of batch norm's formula)?

    python -m kernels.norm_study [--repeat 100] [--threads 1] [--cpu-time]

The steps are timed round-robin (one nbgrad step, one PyTorch step, the next
family, ...) so that a busy machine slows both alike; figures are medians (ms)
and ``torch/nbgrad`` above 1 means nbgrad is faster. Both libraries, and
NumPy's BLAS (through threadpoolctl), use ``--threads`` threads (1 by
default: on a busy machine a threaded OpenBLAS stalls). ``--cpu-time``
measures each call's thread CPU time instead of wall time (one thread only):
steadier on a machine shared with other work.
"""
import argparse
import statistics
import time

import numpy as np
import torch

import nbgrad

from .sequence_step_study import _step as _sequence_step


def cnn(lib, width=16, hidden=64, norm=True):
    """The demo's CNN (``nbgrad.demo.DigitsCNN``), a BatchNorm2d after each convolution."""
    L = lib.nn
    bn = L.BatchNorm2d if norm else (lambda c: L.Identity())
    return L.Sequential(
        L.Conv2d(1, width, 3, padding=1), bn(width), L.ReLU(),
        L.Conv2d(width, 2 * width, 3, padding=1), bn(2 * width), L.ReLU(),
        L.MaxPool2d(2), L.Flatten(),
        L.Linear(2 * width * 16, hidden), L.ReLU(), L.Linear(hidden, 10))


def cnn_step(lib, x, y, norm=True):
    """A training step (cross-entropy, SGD with momentum) of the CNN, the same
    initial weights in both libraries (PyTorch's, copied)."""
    torch.manual_seed(0)
    model = cnn(torch, norm=norm)
    if lib is nbgrad:
        state = {k: nbgrad.tensor(v.detach().numpy()) for k, v in model.state_dict().items()}
        model = cnn(nbgrad, norm=norm)
        model.load_state_dict(state)
    opt = lib.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    xs, ys = lib.tensor(x), lib.tensor(y)

    def step():
        opt.zero_grad()
        loss = lib.nn.functional.cross_entropy(model(xs), ys)
        loss.backward()
        opt.step()
        return loss
    return step


def round_robin(calls, repeat, clock):
    """Median ms of each of ``calls`` (name -> function), one call of each in
    turn per round, after three warm-up rounds (Numba compiles on the first)."""
    for _ in range(3):
        for fn in calls.values():
            fn()
    times = {name: [] for name in calls}
    for _ in range(repeat):
        for name, fn in calls.items():
            start = clock()
            fn()
            times[name].append(clock() - start)
    return {name: statistics.median(t) * 1e3 for name, t in times.items()}


def training_steps(repeat, clock):
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, (64, 1, 8, 8)).astype(np.float32)
    y = rng.integers(0, 10, 64)
    sequences = rng.random((64, 8, 8), dtype=np.float32)
    families = [("CNN + BatchNorm2d", lambda lib: cnn_step(lib, x, y)),
                ("CNN (demo, no norm)", lambda lib: cnn_step(lib, x, y, norm=False)),
                ("LSTM(8, 128)", lambda lib: _sequence_step(lib, "lstm", sequences, y)),
                ("GRU(8, 128)", lambda lib: _sequence_step(lib, "gru", sequences, y)),
                ("TransformerEncoderLayer(64)",
                 lambda lib: _sequence_step(lib, "encoder", sequences, y))]
    calls = {}
    for name, make in families:
        for lib in (nbgrad, torch):
            calls[(name, lib.__name__)] = make(lib)
    medians = round_robin(calls, repeat, clock)
    return [(name, medians[(name, "nbgrad")], medians[(name, "torch")]) for name, _ in families]


def _numpy_batch_norm(x, w, b, g, eps=1e-5):
    axes = (0, 2, 3)
    mean = x.mean(axes, keepdims=True)
    xc = x - mean
    rstd = 1 / np.sqrt((xc * xc).mean(axes, keepdims=True) + eps)
    xhat = xc * rstd
    y = xhat * w[:, None, None] + b[:, None, None]
    gw = g * w[:, None, None]
    dx = rstd * (gw - gw.mean(axes, keepdims=True) - xhat * (gw * xhat).mean(axes, keepdims=True))
    return y, dx, (g * xhat).sum(axes), g.sum(axes)


# (name, module factory, input shape): the demo's sizes (the CNN's two BatchNorm2d,
# the encoder layer's LayerNorm over 64 x 8 tokens) and large ones.
LAYERS = [
    ("BatchNorm2d (64, 16, 8, 8) demo", lambda L: L.nn.BatchNorm2d(16), (64, 16, 8, 8)),
    ("BatchNorm2d (64, 32, 8, 8) demo", lambda L: L.nn.BatchNorm2d(32), (64, 32, 8, 8)),
    ("BatchNorm2d (32, 64, 32, 32)", lambda L: L.nn.BatchNorm2d(64), (32, 64, 32, 32)),
    ("LayerNorm (512, 64) demo", lambda L: L.nn.LayerNorm(64), (512, 64)),
    ("LayerNorm (4096, 512)", lambda L: L.nn.LayerNorm(512), (4096, 512)),
    ("LayerNorm (64, 4096)", lambda L: L.nn.LayerNorm(4096), (64, 4096)),
    ("LayerNorm (8192, 1024)", lambda L: L.nn.LayerNorm(1024), (8192, 1024)),
    ("GroupNorm 8 (64, 32, 8, 8) demo", lambda L: L.nn.GroupNorm(8, 32), (64, 32, 8, 8)),
    ("GroupNorm 8 (32, 64, 16, 16)", lambda L: L.nn.GroupNorm(8, 64), (32, 64, 16, 16)),
]


def layer_call(lib, make, x, g):
    """Forward + backward of a fresh layer on ``x`` with output gradient ``g``."""
    module = make(lib)
    xt = lib.tensor(x, requires_grad=True)
    gt = lib.tensor(g)

    def run():
        xt.grad = None
        for p in module.parameters():
            p.grad = None
        module(xt).backward(gt)
    return run


def layers(repeat, clock):
    rng = np.random.default_rng(1)
    rows = []
    for name, make, shape in LAYERS:
        x = rng.standard_normal(shape).astype(np.float32)
        g = rng.standard_normal(shape).astype(np.float32)
        calls = {lib.__name__: layer_call(lib, make, x, g) for lib in (nbgrad, torch)}
        if name.startswith("BatchNorm"):
            w, b = np.ones(shape[1], np.float32), np.zeros(shape[1], np.float32)
            calls["numpy"] = lambda: _numpy_batch_norm(x, w, b, g)
        medians = round_robin(calls, repeat, clock)
        rows.append((name, medians["nbgrad"], medians["torch"], medians.get("numpy")))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=100)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--cpu-time", action="store_true",
                        help="thread CPU time instead of wall time (one thread only)")
    parser.add_argument("--only", choices=["steps", "layers"], default=None)
    args = parser.parse_args(argv)
    if args.cpu_time and args.threads != 1:
        parser.error("--cpu-time measures the calling thread: use it with --threads 1")
    torch.set_num_threads(args.threads)
    nbgrad.set_num_threads(args.threads)
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(args.threads, "blas")
    except ImportError:  # then set OPENBLAS_NUM_THREADS yourself
        pass
    clock = time.thread_time if args.cpu_time else time.perf_counter
    what = "thread CPU time" if args.cpu_time else "wall time"
    print(f"threads: {args.threads}; median {what} of {args.repeat} round-robin runs (ms); "
          "torch/nbgrad > 1: nbgrad faster")
    if args.only != "layers":
        print("\nTraining step, batch 64 (the CNN: SGD momentum; the sequence models: Adam)")
        print(f"  {'model':30s}{'nbgrad':>10s}{'torch':>10s}{'torch/nbgrad':>14s}")
        for name, ours, theirs in training_steps(args.repeat, clock):
            print(f"  {name:30s}{ours:10.3f}{theirs:10.3f}{theirs / ours:14.2f}")
    if args.only != "steps":
        print("\nNormalization layer forward + backward")
        print(f"  {'layer':34s}{'nbgrad':>10s}{'torch':>10s}{'torch/nbgrad':>14s}{'numpy':>10s}")
        for name, ours, theirs, numpy_ms in layers(args.repeat, clock):
            np_text = f"{numpy_ms:10.3f}" if numpy_ms is not None else f"{'-':>10s}"
            print(f"  {name:34s}{ours:10.3f}{theirs:10.3f}{theirs / ours:14.2f}{np_text}")


if __name__ == "__main__":
    main()
