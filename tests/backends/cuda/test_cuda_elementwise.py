"""Every op row's CUDA forward and fused backward kernels against the CPU
backend's, for both float dtypes and for every way an operand can be laid
out: contiguous, broadcast (stride 0), strided and reversed views, NumPy
scalars and 0-d arrays; plus in-place writes (``out`` aliasing an input),
integer and bool rows, and the NumPy-style operators of DeviceArray.

The CPU reference always runs on contiguous, fully materialised inputs (one
CPU kernel per row and dtype), so the CUDA side's strided indexing is checked
against NumPy's own broadcasting and slicing.
"""
import numpy as np
import pytest

from nbgrad.declarations.op_table import BY_NAME, ROWS
from cuda_support import FLOATS, B, assert_close, cpu, dev

LAYOUTS = ("contiguous", "broadcast", "strided", "scalars", "zero-d")


def _refuses(row, dtype):
    """Whether the row's check refuses tensors of ``dtype`` (PyTorch has no kernel)."""
    try:
        row.check and row.check([dtype] * len(row.inputs))
    except Exception:  # noqa: BLE001 - PyTorch's NotImplementedError or RuntimeError
        return True
    return False


import nbgrad  # noqa: E402  (the dtypes the rows' checks take)
FLOAT_ROWS = [r for r in ROWS if not _refuses(r, nbgrad.float32)]  # bitwise ops: integers only


def _sample(rng, row, k, shape, dtype):
    if k in row.bool_inputs:
        return rng.random(shape) < 0.5
    lo, hi = row.domain
    x = rng.uniform(lo, hi, shape)
    if len(row.inputs) > 1:  # a grid of values, so ties (a == b, a == lo ...) happen
        x = np.round(x * 2) / 2
    return x.astype(dtype)


def _case(row, dtype, layout, seed=0):
    """(host operands, device operands, out shape): the same values and views on both sides."""
    rng = np.random.default_rng(seed)
    n = len(row.inputs)
    hosts, devs = [], []
    if layout == "contiguous":
        shape = (4, 5)
        for k in range(n):
            x = _sample(rng, row, k, shape, dtype)
            hosts.append(x)
            devs.append(dev(x))
    elif layout == "broadcast":
        shape = (4, 5)
        shapes = [(4, 1), (1, 5), (5,)] if n > 1 else [(5,)]
        for k in range(n):
            x = _sample(rng, row, k, shapes[k % len(shapes)], dtype)
            hosts.append(x)
            devs.append(dev(x))
    elif layout == "strided":
        shape = (4, 4)
        views = [lambda b: b[1::2, ::3], lambda b: b.T, lambda b: b[::-1, 2:6]]
        bases = [(9, 12), (4, 4), (4, 8)]
        for k in range(n):
            j = k % 3
            base = _sample(rng, row, k, bases[j], dtype)
            hosts.append(views[j](base))
            devs.append(views[j](dev(base)))
    elif layout == "scalars":
        shape = (7,)
        for k in range(n):
            x = _sample(rng, row, k, shape if k == 0 else (), dtype)
            if k:
                x = x[()]  # a NumPy scalar, as the ops layer passes Python numbers
            hosts.append(x)
            devs.append(dev(x) if k == 0 else x)
    else:  # zero-d
        shape = ()
        for k in range(n):
            x = _sample(rng, row, k, (), dtype)
            hosts.append(x)
            devs.append(dev(x))
    return hosts, devs, shape


def _full(x, shape):
    """A contiguous array of ``shape`` for the CPU reference (scalars included)."""
    return np.ascontiguousarray(np.broadcast_to(np.asarray(x), shape))


def _out_dtype(row, dtype):
    return np.dtype(np.bool_) if row.result == "bool" else np.dtype(dtype)


def _cpu_forward(row, hosts, shape, dtype):
    out = np.empty(shape, _out_dtype(row, dtype)).reshape(-1)
    cpu.elementwise_forward(row, out, [_full(x, shape).reshape(-1) for x in hosts])
    return out.reshape(shape)


def _cpu_backward(row, hosts, g, out, shape):
    wanted = list(row.differentiable)
    grads = cpu.elementwise_backward(row, wanted, g.reshape(-1),
                                     [_full(x, shape).reshape(-1) for x in hosts], out.reshape(-1))
    return {i: gr.reshape(shape) for i, gr in zip(wanted, grads)}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", FLOATS, ids=["float32", "float64"])
@pytest.mark.parametrize("row", FLOAT_ROWS, ids=[r.name for r in FLOAT_ROWS])
def test_row_forward_and_backward_match_cpu(row, dtype, layout):
    hosts, devs, shape = _case(row, dtype, layout)
    expected = _cpu_forward(row, hosts, shape, dtype)
    out = B.empty(shape, _out_dtype(row, dtype))
    # broadcast the way the ops layer does (arrays of another shape become stride-0 views)
    args = [B.broadcast_to(d, shape) if isinstance(d, B.DeviceArray) and d.shape != shape else d
            for d in devs]
    B.elementwise_forward(row, out, args)
    assert_close(out, expected)
    if not row.differentiable:
        return
    g = np.random.default_rng(1).uniform(-1, 1, shape).astype(dtype)
    want = _cpu_backward(row, hosts, g, expected, shape)
    wanted = list(row.differentiable)
    grads = B.elementwise_backward(row, wanted, dev(g), devs, dev(expected))
    for i, gr in zip(wanted, grads):
        assert gr.shape == shape and gr.dtype == np.dtype(dtype)
        assert_close(gr, want[i])
    # one gradient alone: a kernel that reads only what that derivative needs
    last = wanted[-1]
    reads = set(row.grad_params(last))
    saved = [d if name in reads else None for name, d in zip(row.inputs, devs)]
    (alone,) = B.elementwise_backward(row, [last], dev(g), saved,
                                      dev(expected) if "out" in reads else None)
    assert_close(alone, want[last])


@pytest.mark.parametrize("dtype", FLOATS, ids=["float32", "float64"])
@pytest.mark.parametrize("row", [r for r in FLOAT_ROWS if r.result != "bool"],
                         ids=[r.name for r in FLOAT_ROWS if r.result != "bool"])
def test_row_in_place_into_a_strided_view(row, dtype):
    """An in-place op runs the forward kernel with ``out`` = the first input:
    only the view's elements change, each becoming forward(old value, ...)."""
    rng = np.random.default_rng(2)
    base = _sample(rng, row, 0, (6, 8), dtype)
    base_dev = dev(base)
    view_host, view_dev = base[1:5, ::2], base_dev[1:5, ::2]
    others = [_sample(rng, row, k, view_host.shape, dtype) for k in range(1, len(row.inputs))]
    expected_view = _cpu_forward(row, [view_host, *others], view_host.shape, dtype)
    B.elementwise_forward(row, view_dev, [view_dev, *[dev(o) for o in others]])
    expected = base.copy()
    expected[1:5, ::2] = expected_view
    assert_close(base_dev, expected)


INT_ROWS = [r for r in ROWS if r.result == "promote" and r.name != "pow"
            and not _refuses(r, nbgrad.int64)]


@pytest.mark.parametrize("row", INT_ROWS, ids=[r.name for r in INT_ROWS])
def test_int64_rows_match_cpu(row):
    rng = np.random.default_rng(3)
    hosts = [rng.random(6) < 0.5 if k in row.bool_inputs else rng.integers(-3, 4, 6)
             for k in range(len(row.inputs))]
    out = B.empty((6,), np.int64)
    B.elementwise_forward(row, out, [dev(x) for x in hosts])
    expected = np.empty(6, np.int64)
    cpu.elementwise_forward(row, expected, hosts)
    assert_close(out, expected)


@pytest.mark.parametrize("name", ["eq", "ne", "lt", "le", "gt", "ge"])
@pytest.mark.parametrize("dtype", [np.bool_, np.int64])
def test_comparisons_of_bool_and_int(name, dtype):
    a = np.array([0, 1, 1, 0, 2, -1]).astype(dtype)
    b = np.array([0, 0, 1, 1, 1, 3]).astype(dtype)
    out = B.empty((6,), np.bool_)
    B.elementwise_forward(BY_NAME[name], out, [dev(a), dev(b)])
    expected = {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}
    assert_close(out, expected[name])


def test_where_with_device_mask_and_scalar_branch():
    cond = np.array([[True, False, True], [False, False, True]])
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = B.empty((2, 3), np.float32)
    B.elementwise_forward(BY_NAME["where"], out, [dev(cond), dev(a), np.float32(-1)])
    assert_close(out, np.where(cond, a, np.float32(-1)))


def test_forward_refuses_host_arrays():
    out = B.empty((3,), np.float32)
    with pytest.raises(TypeError, match="host"):
        B.elementwise_forward(BY_NAME["neg"], out, [np.ones(3, np.float32)])


def test_empty_arrays_launch_nothing():
    out = B.empty((0, 3), np.float32)
    B.elementwise_forward(BY_NAME["exp"], out, [B.empty((0, 3), np.float32)])
    (g,) = B.elementwise_backward(BY_NAME["exp"], [0], B.empty((0, 3), np.float32),
                                  [None], out)
    assert g.shape == (0, 3)


class TestOperators:
    def test_arithmetic_follows_numpy_broadcasting_and_promotion(self):
        a = np.arange(6, dtype=np.float32).reshape(2, 3)
        b = np.array([1, 2, 4], dtype=np.int64)
        da, db = dev(a), dev(b)
        assert_close(da + db, a + b)
        assert (da + db).dtype == (a + b).dtype
        assert_close(da - 1.5, a - 1.5)
        assert (da * 2).dtype == np.float32  # a Python scalar is weak, as in NumPy 2
        assert_close(2 * da, 2 * a)
        assert_close(1 - da, 1 - a)
        assert_close(da / db, a / b)
        assert_close(db / db, b / b)  # integer true division gives float64
        assert (db / db).dtype == np.float64
        assert_close(-da, -a)
        assert_close(da > 2, a > 2)
        assert_close(da == db, a == b)

    def test_in_place_operators_write_through_views(self):
        a = np.arange(12, dtype=np.float64).reshape(3, 4)
        da = dev(a)
        view = da[:, 1:3]
        view += 10
        view *= dev(np.array([2.0, 3.0]))
        a[:, 1:3] += 10
        a[:, 1:3] *= np.array([2.0, 3.0])
        assert_close(da, a)

    def test_in_place_with_an_overlapping_operand_reads_before_writing(self):
        a = np.arange(8, dtype=np.float64)
        da = dev(a)
        target = da[1:]
        target += da[:-1]
        a[1:] += a[:-1].copy()
        assert_close(da, a)
