"""How fast is a training step of a CNN with BatchNorm (the demo's CNN, 8x8
digits, batch 64, with a BatchNorm2d after each convolution) in nbgrad next
to PyTorch eager, in the same run; and the normalization layers alone
(forward + backward of BatchNorm2d, LayerNorm, GroupNorm: nbgrad's fused
kernels, PyTorch's, and NumPy's composition of the same formula)?

    python -m kernels.norm_study [--steps 200] [--threads N]

Both libraries run on the CPU with the same number of threads; the figures
are medians over repeated runs (ms).
"""
import argparse
import statistics
import time

import numpy as np
import torch

import nbgrad
import nbgrad.optim as optim


def cnn(lib, width=16, hidden=64, norm=True):
    L = lib.nn
    bn = L.BatchNorm2d if norm else (lambda c: L.Identity())
    return L.Sequential(
        L.Conv2d(1, width, 3, padding=1), bn(width), L.ReLU(),
        L.Conv2d(width, 2 * width, 3, padding=1), bn(2 * width), L.ReLU(),
        L.MaxPool2d(2), L.Flatten(),
        L.Linear(2 * width * 16, hidden), L.ReLU(), L.Linear(hidden, 10))


def _median_ms(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def train_steps(steps, batch=64, norm=True):
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, (batch, 1, 8, 8)).astype(np.float32)
    y = rng.integers(0, 10, batch)
    tm = cnn(torch, norm=norm)
    nb = cnn(nbgrad, norm=norm)
    nb.load_state_dict({k: nbgrad.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    t_opt = torch.optim.SGD(tm.parameters(), lr=0.05, momentum=0.9)
    n_opt = optim.SGD(nb.parameters(), lr=0.05, momentum=0.9)
    tx, ty = torch.tensor(x), torch.tensor(y)
    nx, ny = nbgrad.tensor(x), nbgrad.tensor(y)

    def t_step():
        t_opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(tm(tx), ty)
        loss.backward()
        t_opt.step()
        return loss

    def n_step():
        n_opt.zero_grad()
        loss = nbgrad.nn.functional.cross_entropy(nb(nx), ny)
        loss.backward()
        n_opt.step()
        return loss

    for _ in range(3):  # compile, warm up
        a, b = n_step(), t_step()
    losses = [(n_step().item(), t_step().item()) for _ in range(5)]
    return _median_ms(n_step, steps), _median_ms(t_step, steps), losses[-1]


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


def layers(repeat):
    rng = np.random.default_rng(1)
    rows = []
    cases = [
        ("BatchNorm2d (64, 32, 8, 8)", lambda L: L.nn.BatchNorm2d(32), (64, 32, 8, 8)),
        ("BatchNorm2d (32, 64, 32, 32)", lambda L: L.nn.BatchNorm2d(64), (32, 64, 32, 32)),
        ("LayerNorm (4096, 512)", lambda L: L.nn.LayerNorm(512), (4096, 512)),
        ("GroupNorm 8 (32, 64, 16, 16)", lambda L: L.nn.GroupNorm(8, 64), (32, 64, 16, 16)),
    ]
    for name, make, shape in cases:
        x = rng.standard_normal(shape).astype(np.float32)
        g = rng.standard_normal(shape).astype(np.float32)
        timings = []
        for lib in (nbgrad, torch):
            module = make(lib)
            xt = lib.tensor(x, requires_grad=True)
            gt = lib.tensor(g)

            def run(module=module, xt=xt, gt=gt):
                xt.grad = None
                module(xt).backward(gt)
            for _ in range(3):
                run()
            timings.append(_median_ms(run, repeat))
        numpy_ms = None
        if name.startswith("BatchNorm"):
            w, b = np.ones(shape[1], np.float32), np.zeros(shape[1], np.float32)
            numpy_ms = _median_ms(lambda: _numpy_batch_norm(x, w, b, g), repeat)
        rows.append((name, *timings, numpy_ms))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
        nbgrad.set_num_threads(args.threads) if hasattr(nbgrad, "set_num_threads") else None
    print(f"threads: torch {torch.get_num_threads()}")
    nb_ms, t_ms, (nb_loss, t_loss) = train_steps(args.steps)
    print("CNN + BatchNorm2d training step (batch 64, 8x8, SGD momentum), median ms")
    print(f"  nbgrad {nb_ms:8.3f}   torch eager {t_ms:8.3f}   ratio {nb_ms / t_ms:5.2f}"
          f"   (losses after 8 steps: nbgrad {nb_loss:.4f}, torch {t_loss:.4f})")
    nb_ms, t_ms, _ = train_steps(args.steps, norm=False)
    print("the same CNN without its BatchNorm2d layers (what the rest of the step costs)")
    print(f"  nbgrad {nb_ms:8.3f}   torch eager {t_ms:8.3f}   ratio {nb_ms / t_ms:5.2f}")
    print("Normalization layer forward + backward, median ms")
    print(f"  {'layer':32s} {'nbgrad':>9s} {'torch':>9s} {'numpy':>9s}")
    for name, nb_t, t_t, np_t in layers(args.repeat):
        np_text = f"{np_t:9.3f}" if np_t is not None else f"{'-':>9s}"
        print(f"  {name:32s} {nb_t:9.3f} {t_t:9.3f} {np_text}")


if __name__ == "__main__":
    main()
