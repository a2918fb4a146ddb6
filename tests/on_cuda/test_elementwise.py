"""Every row of the op table (nbgrad/ops/table.py) on the device against the
same call on the CPU: forward and fused backward in both float dtypes, the
in-place variant, broadcasting, Python numbers as operands, integer inputs."""
import numpy as np
import pytest

import nbgrad
from nbgrad.ops.table import ROWS

from .support import assert_same, host, on_both, run_both, values

FLOATS = [nbgrad.float32, nbgrad.float64]
# The rows a user calls; copy and fill are in-place only (test_copying.py covers them).
CALLED = [row for row in ROWS if row.result != "self"]
WRITES = [row for row in ROWS if row.result == "self"]
ids = lambda row: row.name  # noqa: E731


def _arrays(row, shapes, seed=0):
    """Inputs in the row's domain (bool masks for its mask inputs)."""
    lo, hi = row.domain
    out = []
    for k, shape in enumerate(shapes):
        if k in row.bool_inputs:
            out.append(values(shape, seed + k) > 0)
        else:
            out.append(values(shape, seed + k, lo, hi))
    return out


def _leaves_first(row, arrays):
    """``fn(*leaves)`` for run_both: float inputs are leaves, masks are made on the leaves' device."""
    masks = {k: a for k, a in enumerate(arrays) if k in row.bool_inputs}
    floats = [a for k, a in enumerate(arrays) if k not in row.bool_inputs]

    def fn(*leaves):
        it = iter(leaves)
        args = [nbgrad.tensor(masks[k], device=leaves[0].device) if k in masks else next(it)
                for k in range(len(arrays))]
        return row(*args)
    return fn, floats


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("row", CALLED, ids=ids)
def test_row_forward_and_backward_match_the_cpu(row, dtype):
    fn, floats = _leaves_first(row, _arrays(row, [(2, 3)] * len(row.inputs)))
    out, want = run_both(fn, *floats, dtype=dtype)
    assert (out.grad_fn is None) == (want.grad_fn is None)
    if out.grad_fn is not None:
        assert out.grad_fn.name() == want.grad_fn.name()


@pytest.mark.parametrize("row", [r for r in CALLED if len(r.inputs) > 1], ids=ids)
def test_row_broadcasts_on_the_device(row):
    """Inputs of shapes (2, 1, 3), (4, 1) [, (3,)]: the gradients are summed back on the device."""
    shapes = [(2, 1, 3), (4, 1), (3,)][:len(row.inputs)]
    fn, floats = _leaves_first(row, _arrays(row, shapes, seed=3))
    run_both(fn, *floats, dtype=nbgrad.float64)


NUMBER_POSITIONS = [(row, k) for row in CALLED if len(row.inputs) > 1 for k in (0, 1)
                    if k not in row.bool_inputs]


@pytest.mark.parametrize("row, position", NUMBER_POSITIONS,
                         ids=[f"{row.name}-{k}" for row, k in NUMBER_POSITIONS])
def test_row_takes_python_numbers(row, position):
    """A Python number in one position (the others tensors), as on the CPU."""
    arrays = _arrays(row, [(3,)] * len(row.inputs), seed=5)
    lo, hi = row.domain
    number = float(np.float32((lo + hi) / 3 + 0.25))
    floats = [a for k, a in enumerate(arrays) if k != position and k not in row.bool_inputs]

    def fn(*leaves):
        it = iter(leaves)
        args = [number if k == position
                else nbgrad.tensor(a, device=leaves[0].device) if k in row.bool_inputs
                else next(it) for k, a in enumerate(arrays)]
        return row(*args)
    run_both(fn, *floats, dtype=nbgrad.float32)


@pytest.mark.parametrize("row", [r for r in CALLED if r.method], ids=ids)
def test_inplace_variant_matches_the_cpu(row):
    """``y.<name>_(...)`` on a non-leaf: values, version bump, gradients through the rebased history."""
    arrays = _arrays(row, [(2, 3)] * len(row.inputs), seed=7)

    def fn(*leaves):
        y = leaves[0] * 1.0
        before = y._version
        getattr(y, row.name + "_")(*leaves[1:])
        assert y._version == before + 1
        return y
    out, want = run_both(fn, *arrays, dtype=nbgrad.float64)
    assert out.grad_fn.name() == want.grad_fn.name()


@pytest.mark.parametrize("row", CALLED, ids=ids)
def test_integer_inputs_match_the_cpu(row):
    """int64 inputs (bool masks kept): the result dtype and values as on the CPU."""
    ints = [np.array([[1, 2, 3], [3, 1, 2]]), np.array([[2, 2, 1], [1, 3, 3]]),
            np.array([[3, 1, 2], [2, 2, 1]])]
    arrays = [np.array([[True, False, True], [False, True, True]]) if k in row.bool_inputs
              else ints[k] for k in range(len(row.inputs))]
    cpu = [nbgrad.tensor(a) for a in arrays]
    cuda = [nbgrad.tensor(a, device="cuda") for a in arrays]
    assert_same(row(*cuda), row(*cpu))


def test_mixed_float_dtypes_promote_as_on_the_cpu():
    a32, b64 = values((2, 3), 1), values((3,), 2)

    def fn(a, b):
        return a * b.double() + a.float()
    for dtype in FLOATS:
        run_both(fn, a32, b64, dtype=dtype)
    cpu, cuda = on_both(np.array([1, 2, 3]))
    assert_same(cuda * 0.5, cpu * 0.5)  # int64 tensor with a float number: float32
    assert_same(cuda / 2, cpu / 2)


def test_operators_and_reflected_operators():
    def fn(a, b):
        return (2 - a) * b / (1 + abs(b)) + (-a) ** 2 - 3 / (a * a + 1)
    run_both(fn, values((2, 3), 1), values((2, 3), 2), dtype=nbgrad.float64)
    cpu, cuda = on_both(values((2, 3), 4))
    for op in ("__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__"):
        assert_same(getattr(cuda, op)(0.5), getattr(cpu, op)(0.5))


def test_augmented_assignment_on_a_non_leaf():
    def fn(a, b):
        y = a * 1
        y += b
        y *= b
        y -= 1
        y /= 2
        return y
    run_both(fn, values((2, 3), 1), values((3,), 2), dtype=nbgrad.float32)


def test_clamp_and_where_wrappers():
    def fn(a, b):
        mask = nbgrad.tensor(values((2, 3), 9) > 0, device=a.device)
        return nbgrad.where(mask, a.clamp(min=-0.5), b.clamp(max=0.3)) + a.clip(-1, 1)
    run_both(fn, values((2, 3), 1), values((2, 3), 2), dtype=nbgrad.float64)


@pytest.mark.parametrize("row", [r for r in CALLED if r.differentiable][:6], ids=ids)
def test_strided_views_as_inputs(row):
    """Transposed and sliced operands run on the device without a copy first."""
    arrays = _arrays(row, [(3, 4)] * len(row.inputs), seed=11)
    fn, floats = _leaves_first(row, arrays)

    def strided(*leaves):
        return fn(*[leaf.t()[::2, 1:] for leaf in leaves])
    run_both(strided, *floats, dtype=nbgrad.float32)


def test_custom_row_runs_on_the_device():
    square_plus = nbgrad.elementwise("square_plus", lambda a, b: a * a + b,
                                     grads={"a": lambda g, a: 2 * g * a, "b": lambda g: g})
    run_both(square_plus, values((2, 3), 1), values((3,), 2), dtype=nbgrad.float32)
    _, cuda = on_both(values((2,), 3))
    assert host(square_plus(cuda, 1.0)).shape == (2,)
