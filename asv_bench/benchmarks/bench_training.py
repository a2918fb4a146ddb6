"""Training steps: a 784-256-10 ReLU MLP (batch 256, cross-entropy, SGD) with
nbgrad.nn and nbgrad.optim; the demo's CNN with and without BatchNorm2d, next
to PyTorch eager."""
import numpy as np

import nbgrad

from . import common


class MLPTrainStep:
    timeout = 300

    def setup(self):
        self.step = common.nbgrad_train_step()
        self.step()  # compiles every kernel the step uses
        self.step()

    def time_train_step(self):
        self.step()

    def track_loss_after_20_steps(self):
        """Guards the benchmark itself: the loss must fall (about 2.4 at
        the start); a value near 2.4 means the step stopped learning."""
        step = common.nbgrad_train_step()
        for _ in range(20):
            loss = step()
        return float(loss.item())
    track_loss_after_20_steps.unit = "loss"


class MLPTrainLoopMemory:
    """Peak resident memory of a short training loop (10 steps), from a fresh model."""
    timeout = 300

    def setup(self):
        common.nbgrad_train_step()()  # compile outside the measured function's work

    def peakmem_train_loop(self):
        step = common.nbgrad_train_step(seed=1)
        for _ in range(10):
            step()




def _cnn(lib, norm, width=16, hidden=64):
    """The demo's CNN (``nbgrad.demo.DigitsCNN``), optionally a BatchNorm2d after
    each convolution (as ``kernels.norm_study.cnn``)."""
    L = lib.nn
    bn = L.BatchNorm2d if norm else (lambda c: L.Identity())
    return L.Sequential(
        L.Conv2d(1, width, 3, padding=1), bn(width), L.ReLU(),
        L.Conv2d(width, 2 * width, 3, padding=1), bn(2 * width), L.ReLU(),
        L.MaxPool2d(2), L.Flatten(),
        L.Linear(2 * width * 16, hidden), L.ReLU(), L.Linear(hidden, 10))


class ConvNetTrainStep:
    """A training step of the demo's CNN (8x8 digits, batch 64, cross-entropy,
    SGD with momentum), with a BatchNorm2d after each convolution or without,
    in nbgrad and in PyTorch eager (skipped where PyTorch is not installed);
    ``python -m kernels.norm_study`` times them side by side in one run."""
    params = [["batch_norm", "none"], ["nbgrad", "torch"]]
    param_names = ["norm", "library"]
    timeout = 300

    def setup(self, norm, library):
        if library == "torch":
            try:
                import torch as lib
            except ImportError:
                raise NotImplementedError("PyTorch is not installed") from None
        else:
            lib = nbgrad
        lib.manual_seed(0)
        rng = np.random.default_rng(0)
        self.x = lib.tensor(rng.uniform(0, 1, (64, 1, 8, 8)).astype(np.float32))
        self.y = lib.tensor(rng.integers(0, 10, 64))
        self.lib = lib
        self.model = _cnn(lib, norm == "batch_norm")
        self.opt = lib.optim.SGD(self.model.parameters(), lr=0.05, momentum=0.9)
        self.time_train_step(norm, library)  # compiles every kernel the step uses
        self.time_train_step(norm, library)

    def time_train_step(self, norm, library):
        self.opt.zero_grad()
        self.lib.nn.functional.cross_entropy(self.model(self.x), self.y).backward()
        self.opt.step()
