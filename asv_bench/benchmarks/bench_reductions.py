"""Reductions, scans, sorts, gathers and scatters of issue 15, forward and
forward + backward, on one line of 10^7 elements, on 1000 x 10000 (last
dim) and on a training step's 64 x 128 (last dim, and dim 0: "64x128:0").
NumPy's and PyTorch's times for the same work, in the same run, come from
``python -m kernels.indexing_study --reductions``."""
import numpy as np

import nbgrad

from . import common  # noqa: F401  (Numba's start-up, paid once)

K = 5
# name: fn(x, aux, dim); aux: (index of x's shape, src of x's shape, 1-D index along dim)
OPS = {
    "prod": lambda x, a, d: nbgrad.prod(x, d),
    "std": lambda x, a, d: nbgrad.std(x, d),
    "var": lambda x, a, d: nbgrad.var(x, d),
    "logsumexp": lambda x, a, d: nbgrad.logsumexp(x, d),
    "argmax": lambda x, a, d: nbgrad.argmax(x, d),
    "cumsum": lambda x, a, d: nbgrad.cumsum(x, d),
    "cumprod": lambda x, a, d: nbgrad.cumprod(x, d),
    "median": lambda x, a, d: nbgrad.median(x, d).values,
    "sort": lambda x, a, d: nbgrad.sort(x, d).values,
    "argsort": lambda x, a, d: nbgrad.argsort(x, d),
    "topk": lambda x, a, d: nbgrad.topk(x, K, d).values,
    "gather": lambda x, a, d: nbgrad.gather(x, d, a[0]),
    "scatter_add": lambda x, a, d: nbgrad.scatter_add(x, d, a[0], a[1]),
    "index_select": lambda x, a, d: nbgrad.index_select(x, d, a[2]),
}
DIFFERENTIABLE = ["prod", "std", "var", "logsumexp", "cumsum", "cumprod", "median", "sort",
                  "topk", "gather", "scatter_add", "index_select"]
SHAPES = ["10000000", "1000x10000", "64x128", "64x128:0"]


def _input(shape, dtype, requires_grad=False):
    """x (values near 1: long products stay finite), the index operands, the dim."""
    dims, _, dim = shape.partition(":")
    dims = tuple(int(n) for n in dims.split("x"))
    d = int(dim) if dim else -1
    rng = np.random.default_rng(0)
    x = rng.uniform(0.999, 1.001, dims).astype(dtype)
    aux = (nbgrad.from_numpy(rng.integers(0, dims[d], dims)),
           nbgrad.from_numpy(rng.standard_normal(dims).astype(dtype)),
           nbgrad.from_numpy(rng.integers(0, dims[d], dims[d])))
    return nbgrad.from_numpy(x).requires_grad_(requires_grad), aux, d


class Forward:
    params = [list(OPS), SHAPES, common.DTYPES]
    param_names = ["op", "shape", "dtype"]
    timeout = 300

    def setup(self, op, shape, dtype):
        self.x, self.aux, self.dim = _input(shape, dtype)
        self.fn = OPS[op]
        self.fn(self.x, self.aux, self.dim)  # compiles (or loads from the disk cache)

    def time_forward(self, op, shape, dtype):
        self.fn(self.x, self.aux, self.dim)


class ForwardBackward:
    params = [DIFFERENTIABLE, SHAPES, common.DTYPES]
    param_names = ["op", "shape", "dtype"]
    timeout = 300

    def setup(self, op, shape, dtype):
        self.x, self.aux, self.dim = _input(shape, dtype, requires_grad=True)
        self.fn = OPS[op]
        self.run()

    def run(self):
        self.x.grad = None
        self.fn(self.x, self.aux, self.dim).sum().backward()

    def time_forward_backward(self, op, shape, dtype):
        self.run()
