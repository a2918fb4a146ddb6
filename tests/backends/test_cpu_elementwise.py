"""The CPU backend's prange kernels: at and above PARALLEL_THRESHOLD elements
the parallel loops run, and they must give exactly what the serial loops give
(the same scalar code per element, so bit for bit), forward and backward."""
import numpy as np
import pytest

from nbgrad.backends.cpu import elementwise as E
from nbgrad.ops.table import BY_NAME

N = E.PARALLEL_THRESHOLD + 3  # odd: the loops' remainders run too


def _inputs(row, rng):
    lo, hi = row.domain
    return [rng.random(N) > 0.5 if k in row.bool_inputs
            else rng.uniform(lo, hi, N).astype(np.float32) for k in range(len(row.inputs))]


@pytest.mark.parametrize("name", ["add", "sub", "mul", "sigmoid", "pow", "where", "sin"])
def test_parallel_kernels_match_the_serial_ones(name):
    row = BY_NAME[name]
    rng = np.random.default_rng(0)
    inputs = _inputs(row, rng)
    forward, _ = E._forward_plan(row, (np.ndarray,) * len(inputs), 1)
    outs = [np.empty(N, np.float32) for _ in range(2)]
    forward.serial(outs[0], *inputs)
    forward.parallel(outs[1], *inputs)
    np.testing.assert_array_equal(outs[0], outs[1])
    assert E._variant(forward, N) is forward.parallel

    wanted = tuple(i for i in row.differentiable if i not in row.passthrough)
    if not wanted:  # add: every gradient is g itself, no kernel
        return
    kinds = "a" * len(inputs)
    _, _, sources = E._backward_plan(row, wanted, kinds)
    backward = E._backward_module(row, wanted, kinds, 1)
    values = {-1: rng.uniform(-1, 1, N).astype(np.float32), -2: outs[0], **dict(enumerate(inputs))}
    reads = [values[k] for k in sources]
    grads = [[np.empty(N, np.float32) for _ in wanted] for _ in range(2)]
    backward.serial(*reads, *grads[0])
    backward.parallel(*reads, *grads[1])
    for s, p in zip(*grads):
        np.testing.assert_array_equal(s, p)
    assert np.isfinite(grads[0][0]).any()  # the kernels did write
