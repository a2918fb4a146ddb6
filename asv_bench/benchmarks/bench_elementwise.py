"""Elementwise rows: forward, backward and in-place, per row of ``nbgrad.ROWS``.

Parametrized over the row, the number of elements (10^3 runs nbgrad's serial
kernels, 10^5 and 10^7 the parallel ones) and the dtype. ``setup`` compiles
the kernels with a first call, so the timings exclude compilation.
"""
import numpy as np

import nbgrad

from . import common

_CASE = common.LastCase()

ROW_NAMES = [row.name for row in common.table_rows()]
DIFF_ROW_NAMES = [row.name for row in common.table_rows() if common.is_differentiable(row)]
INPLACE_ROW_NAMES = [row.name for row in nbgrad.ROWS if row.method]


class Forward:
    """``out = row(*inputs)``: one kernel launch plus nbgrad's Python dispatch."""
    params = [ROW_NAMES, common.SIZES, common.DTYPES]
    param_names = ["row", "n", "dtype"]
    timeout = 300

    def setup(self, row, n, dtype):
        def make():
            r = common.row_by_name(row)
            fn = common.nbgrad_function(r)
            args = common.to_nbgrad(common.numpy_inputs(r, n, dtype))
            fn(*args)  # compiles (or loads from the disk cache)
            return fn, args
        self.fn, self.args = _CASE.get(("forward", row, n, dtype), make)

    def time_forward(self, row, n, dtype):
        self.fn(*self.args)


class Backward:
    """``out.backward(g)`` for one op whose inputs are leaves: the fused
    backward kernel plus accumulation into ``.grad`` (reset in ``setup``)."""
    params = [DIFF_ROW_NAMES, common.SIZES, common.DTYPES]
    param_names = ["row", "n", "dtype"]
    timeout = 300

    def setup(self, row, n, dtype):
        def make():
            r = common.row_by_name(row)
            inputs = common.numpy_inputs(r, n, dtype)
            wanted = common.grad_inputs(r, inputs)
            args = common.to_nbgrad(inputs, wanted)
            out = common.nbgrad_function(r)(*args)
            g = nbgrad.from_numpy(common.upstream_gradient(n, dtype))
            leaves = [args[i] for i in wanted]
            out.backward(g, retain_graph=True)  # compiles the backward kernel
            return out, g, leaves
        self.out, self.g, self.leaves = _CASE.get(("backward", row, n, dtype), make)
        for t in self.leaves:
            t.grad = None

    def time_backward(self, row, n, dtype):
        self.out.backward(self.g, retain_graph=True)


class InPlace:
    """``t.<row>_(...)`` on a tensor that does not require grad; ``setup``
    restores its values before every sample, so repeated writes never drift
    into infinities, NaNs or denormals."""
    params = [INPLACE_ROW_NAMES, [1_000, 10_000_000], ["float32"]]
    param_names = ["row", "n", "dtype"]
    timeout = 300

    def setup(self, row, n, dtype):
        def make():
            r = common.row_by_name(row)
            inputs = common.numpy_inputs(r, n, dtype)
            pristine = inputs[0].copy()
            args = common.to_nbgrad(inputs)
            method = getattr(args[0], row + "_")
            method(*args[1:])  # compiles the in-place kernel
            return method, args, pristine
        self.method, self.args, pristine = _CASE.get(("inplace", row, n, dtype), make)
        np.copyto(self.args[0].numpy(), pristine)

    def time_inplace(self, row, n, dtype):
        self.method(*self.args[1:])
