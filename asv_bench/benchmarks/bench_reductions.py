"""Reductions and scans of issue 15 (prod, std, logsumexp, argmax, cumsum,
cumprod, median), forward and forward + backward, on one line of 10^7
elements and on a training step's 64 x 128 (along the last dim). NumPy's and
PyTorch's times for the same work, in the same run, come from
``python -m kernels.reduction_study``."""
import numpy as np

import nbgrad

from . import common  # noqa: F401  (Numba's start-up, paid once)

OPS = {
    "prod": lambda x: nbgrad.prod(x, -1),
    "std": lambda x: nbgrad.std(x, -1),
    "logsumexp": lambda x: nbgrad.logsumexp(x, -1),
    "argmax": lambda x: nbgrad.argmax(x, -1),
    "cumsum": lambda x: nbgrad.cumsum(x, -1),
    "cumprod": lambda x: nbgrad.cumprod(x, -1),
    "median": lambda x: nbgrad.median(x, -1),
}
DIFFERENTIABLE = ["prod", "std", "logsumexp", "cumsum", "cumprod"]
SHAPES = ["10000000", "64x128"]


def _input(shape, dtype, requires_grad=False):
    dims = tuple(int(n) for n in shape.split("x"))
    x = np.random.default_rng(0).uniform(0.999, 1.001, dims).astype(dtype)  # finite products
    return nbgrad.from_numpy(x).requires_grad_(requires_grad)


class Forward:
    params = [list(OPS), SHAPES, common.DTYPES]
    param_names = ["op", "shape", "dtype"]
    timeout = 300

    def setup(self, op, shape, dtype):
        self.x = _input(shape, dtype)
        self.fn = OPS[op]
        self.fn(self.x)  # compiles (or loads from the disk cache)

    def time_forward(self, op, shape, dtype):
        self.fn(self.x)


class ForwardBackward:
    params = [DIFFERENTIABLE, SHAPES, common.DTYPES]
    param_names = ["op", "shape", "dtype"]
    timeout = 300

    def setup(self, op, shape, dtype):
        self.x = _input(shape, dtype, requires_grad=True)
        self.fn = OPS[op]
        self.run()

    def run(self):
        self.x.grad = None
        self.fn(self.x).sum().backward()

    def time_forward_backward(self, op, shape, dtype):
        self.run()
