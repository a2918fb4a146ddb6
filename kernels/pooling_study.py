"""How fast are nbgrad's pooling layers next to PyTorch eager, in the same run:
forward + backward of the 3-D pools (max, average, adaptive average and max),
with the 2-D max and average pools for reference, at a small video-like size
and a larger one?

    python -m kernels.pooling_study [--repeat 30] [--threads 1]

Each case is timed round-robin (one nbgrad call, one PyTorch call, the next
case, ...) so that a busy machine slows both alike; figures are medians (ms)
and ``torch/nbgrad`` above 1 means nbgrad is faster. Both libraries use
``--threads`` threads (1 by default: the machine is shared).
"""
import argparse
import statistics
import time

import numpy as np
import torch
from threadpoolctl import threadpool_limits

import nbgrad

CASES = {  # name: (shape, call(F, x))
    "max_pool3d k2": ("3d", lambda F, x: F.max_pool3d(x, 2)),
    "max_pool3d k3 s2 p1": ("3d", lambda F, x: F.max_pool3d(x, 3, 2, 1)),
    "avg_pool3d k2": ("3d", lambda F, x: F.avg_pool3d(x, 2)),
    "avg_pool3d k3 s2 p1": ("3d", lambda F, x: F.avg_pool3d(x, 3, 2, 1)),
    "adaptive_avg_pool3d 1": ("3d", lambda F, x: F.adaptive_avg_pool3d(x, 1)),
    "adaptive_avg_pool3d (3,5,5)": ("3d", lambda F, x: F.adaptive_avg_pool3d(x, (3, 5, 5))),
    "adaptive_max_pool3d (3,5,5)": ("3d", lambda F, x: F.adaptive_max_pool3d(x, (3, 5, 5))),
    "max_pool2d k2 (reference)": ("2d", lambda F, x: F.max_pool2d(x, 2)),
    "avg_pool2d k2 (reference)": ("2d", lambda F, x: F.avg_pool2d(x, 2)),
}
SIZES = {"small": {"3d": (2, 8, 8, 16, 16), "2d": (2, 8, 64, 64)},
         "large": {"3d": (8, 16, 16, 32, 32), "2d": (8, 16, 128, 128)}}


def _timer(lib, call, x, g):
    t = lib.tensor(x, requires_grad=True)
    grad = lib.tensor(g)

    def run():
        t.grad = None
        call(lib.nn.functional, t).backward(grad)
    return run


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    nbgrad.set_num_threads(args.threads)
    threadpool_limits(args.threads, "blas")  # (the adaptive average pools' products)
    rng = np.random.default_rng(0)
    print(f"{'case':32} {'size':6} {'nbgrad ms':>10} {'torch ms':>10} {'torch/nbgrad':>13}")
    for size, shapes in SIZES.items():
        runs = {}
        for name, (kind, call) in CASES.items():
            x = rng.standard_normal(shapes[kind]).astype(np.float32)
            g = rng.standard_normal(tuple(call(torch.nn.functional, torch.tensor(x)).shape))
            g = g.astype(np.float32)
            runs[name] = [_timer(lib, call, x, g) for lib in (nbgrad, torch)]
            for run in runs[name]:  # compile and warm up
                run()
                run()
        times = {name: ([], []) for name in runs}
        for _ in range(args.repeat):
            for name, pair in runs.items():
                for run, out in zip(pair, times[name]):
                    start = time.perf_counter()
                    run()
                    out.append(time.perf_counter() - start)
        for name, (mine, theirs) in times.items():
            a, b = statistics.median(mine) * 1e3, statistics.median(theirs) * 1e3
            print(f"{name:32} {size:6} {a:10.3f} {b:10.3f} {b / a:13.2f}")


if __name__ == "__main__":
    main()
