"""How fast is a training step of the sequence models of the demo's second
part (the 8x8 digits read row by row: 8 steps of 8 features, batch 64), in
nbgrad next to PyTorch eager, in one run?

- LSTM: ``LSTM(8, 128)`` -> last state -> ``Linear(128, 10)``, cross-entropy,
  Adam, gradient clipping left out (both libraries alike). nbgrad runs each
  layer as one node: one GEMM for all input products, then per step one GEMM
  and one fused gate kernel (``backends/recurrent_source.py``), backward the
  same in reverse plus one GEMM per weight.
- GRU: the same with ``GRU(8, 128)``.
- Transformer encoder layer: ``Linear(8, 64)`` input projection ->
  ``TransformerEncoderLayer(64, 4, 128, dropout=0.1, batch_first=True)`` ->
  mean over the sequence -> ``Linear(64, 10)``, cross-entropy, Adam.

Each step is timed as the median of ``--repeat`` runs after warm-up (Numba
compiles on the first). Both libraries, and NumPy's BLAS (through
threadpoolctl), use one thread by default (``--threads`` changes it): on a
busy machine a threaded OpenBLAS stalls (a 0.4 ms product took 24 ms).

    python -m kernels.sequence_step_study [--repeat 50] [--threads 1]
"""
import argparse
import statistics
import time

import numpy as np


def _models(lib, kind):
    nn = lib.nn

    class Recurrent(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = (nn.LSTM if kind == "lstm" else nn.GRU)(8, 128, batch_first=True)
            self.head = nn.Linear(128, 10)

        def forward(self, x):
            out, _ = self.rnn(x)
            return self.head(out[:, -1])

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(8, 64)
            self.layer = nn.TransformerEncoderLayer(64, 4, 128, dropout=0.1, batch_first=True)
            self.head = nn.Linear(64, 10)

        def forward(self, x):
            return self.head(self.layer(self.proj(x)).mean(1))

    return Recurrent() if kind in ("lstm", "gru") else Encoder()


def _step(lib, kind, x, y):
    lib.manual_seed(0)
    model = _models(lib, kind)
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    xs, ys = lib.tensor(x), lib.tensor(y)

    def step():
        opt.zero_grad()
        loss = lib.nn.functional.cross_entropy(model(xs), ys)
        loss.backward()
        opt.step()
        return loss
    return step


def _median_ms(step, repeat):
    for _ in range(3):
        step()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    import torch

    import nbgrad
    torch.set_num_threads(args.threads)
    nbgrad.set_num_threads(args.threads)
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(args.threads, "blas")
    except ImportError:  # then set OPENBLAS_NUM_THREADS yourself
        pass
    rng = np.random.default_rng(0)
    x = rng.random((64, 8, 8), dtype=np.float32)
    y = rng.integers(0, 10, 64)
    print(f"training step, batch 64, 8 steps of 8 features; median of {args.repeat} "
          f"(threads: {args.threads})")
    print(f"{'model':<28}{'nbgrad ms':>12}{'torch ms':>12}{'torch/nbgrad':>14}")
    for kind, label in (("lstm", "LSTM(8, 128)"), ("gru", "GRU(8, 128)"),
                        ("encoder", "TransformerEncoderLayer(64)")):
        ours = _median_ms(_step(nbgrad, kind, x, y), args.repeat)
        theirs = _median_ms(_step(torch, kind, x, y), args.repeat)
        print(f"{label:<28}{ours:>12.3f}{theirs:>12.3f}{theirs / ours:>14.2f}")


if __name__ == "__main__":
    main()
