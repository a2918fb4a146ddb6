"""The CPU backend's prange kernels: at and above PARALLEL_THRESHOLD elements
the parallel loops run, and they must give exactly what the serial loops give
(the same scalar code per element, so bit for bit), forward and backward.
Rows with a FastPath (sin, cos) run blocked loops: which path each block
takes, and that the results match the full functions."""
import numpy as np
import pytest

from nbgrad.declarations import scalar_math as sm
from nbgrad.backends.cpu import elementwise as E
from nbgrad import FastPath  # public: a user's row may declare one
from nbgrad.ops.elementwise import Row
from nbgrad.declarations.op_table import BY_NAME

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



# --------------------------------------------------------------------------
# FastPath rows (sin, cos): a block of elements whose inputs are all within
# the limit runs the fast functions, any other block the row's own.
# --------------------------------------------------------------------------
BLOCK = E.FAST_BLOCK
LIMIT = 4.0

# Markers: the fast functions give 1, the full ones 0 (nan for inf/nan), so
# the output shows which path each block took.
MARKED = Row(
    "marked", lambda a, b: 0 * (a + b), {"a": lambda g, a, b: 0 * (g + a + b)},
    fast_path=FastPath(LIMIT, lambda a, b: 1 + 0 * (a + b), {"a": lambda g, a, b: 1 + 0 * g}))


def _blocks(n):
    return [slice(s, min(s + BLOCK, n)) for s in range(0, n, BLOCK)]


@pytest.mark.parametrize("n", [1, BLOCK - 1, BLOCK, 3 * BLOCK + 37])
def test_each_block_takes_the_fast_path_iff_all_its_inputs_are_small(n):
    rng = np.random.default_rng(n)
    a = rng.uniform(-LIMIT, LIMIT, n)
    b = rng.uniform(-LIMIT, LIMIT, n)
    a[-1] = LIMIT                                   # the limit itself is small
    if n > BLOCK:
        a[BLOCK + 5] = np.nan                       # block 1: nan
        b[2 * BLOCK + 9] = -np.nextafter(LIMIT, 5)  # block 2: just over, in b
        a[-2] = -np.inf                             # last, partial block
    fast = [bool(np.all(np.abs(a[s]) <= LIMIT) and np.all(np.abs(b[s]) <= LIMIT))
            for s in _blocks(n)]
    assert fast[0] and (n <= BLOCK or fast == [True, False, False, False])
    forward = E._forward_module(MARKED, "aa", 1)
    backward = E._backward_module(MARKED, (0,), "aa", 1)
    g = np.ones(n)
    for kernel in (forward.serial, forward.parallel):
        out = np.full(n, 7.0)
        kernel(out, a, b)
        for s, f in zip(_blocks(n), fast):
            assert np.all(out[s] == 1) if f else not np.any(out[s] == 1)
    for kernel in (backward.serial, backward.parallel):
        grad = np.full(n, 7.0)
        kernel(g, a, b, grad)
        for s, f in zip(_blocks(n), fast):
            assert np.all(grad[s] == 1) if f else not np.any(grad[s] == 1)


def test_fast_path_checks_scalar_operands_and_rows_of_2d_kernels():
    rng = np.random.default_rng(1)
    a = rng.uniform(-LIMIT, LIMIT, (3, 2 * BLOCK + 5))[:, ::-1]  # not contiguous
    a[1, BLOCK + 2] = 100.0                         # row 1, second block
    forward = E._forward_module(MARKED, "aa", 2)
    for kernel in (forward.serial, forward.parallel):
        out = np.empty(a.shape)
        kernel(out, a, np.zeros(a.shape))
        assert np.all(out[[0, 2]] == 1) and np.all(out[1, :BLOCK] == 1)
        assert not np.any(out[1, BLOCK:2 * BLOCK] == 1) and np.all(out[1, 2 * BLOCK:] == 1)
    forward = E._forward_module(MARKED, "as", 1)
    for b, want in ((np.float64(1.0), 1), (np.float64(LIMIT * 2), 0)):
        out = np.empty(BLOCK + 1)
        forward.serial(out, a[0, :BLOCK + 1].copy(), b)
        assert np.all(out == want)


def test_the_fast_path_is_part_of_the_kernel_identity():
    """Kernels are cached on disk by a hash: a changed fast function or limit
    must give a new kernel module."""
    def row(limit, fast):
        return Row("ident", lambda a: sm.sin(a), fast_path=FastPath(limit, fast))
    rows = [row(1.0, lambda a: sm.sin_small(a)), row(1.0, lambda a: sm.cos_small(a)),
            row(2.0, lambda a: sm.sin_small(a)), Row("ident", lambda a: sm.sin(a))]
    assert len({E._forward_module(r, "a", 1).__name__ for r in rows}) == 4


def _trig_inputs(dtype, rng):
    """Small values in every block, and blocks 1-4 each holding one argument
    for the full path (huge, inf, nan, just over the limit); the partial last
    block holds -0.0 and +-limit."""
    n = 5 * BLOCK + 37
    x = rng.uniform(-50, 50, n).astype(dtype)
    limit = dtype(sm.TRIG_SMALL_LIMIT)
    x[BLOCK + 3] = np.finfo(dtype).max / 3
    x[2 * BLOCK + 5] = np.inf
    x[3 * BLOCK + 7] = np.nan
    x[4 * BLOCK + 11] = np.nextafter(limit, dtype(np.inf))
    x[5 * BLOCK + 1:5 * BLOCK + 4] = [-0.0, limit, -limit]
    return x


def _assert_close(got, want, dtype):
    """float32: bit for bit (sin_small/cos_small equal sin/cos exhaustively);
    float64: within 1 ulp, nan where nan."""
    if dtype == np.float32:
        np.testing.assert_array_equal(got, want)
        assert np.array_equal(np.signbit(got), np.signbit(want))
        return
    assert np.array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    assert np.all(np.abs(got[ok] - want[ok]) <= np.spacing(np.abs(want[ok])))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["sin", "cos"])
def test_trig_kernels_with_the_fast_path_match_the_full_functions(name, dtype):
    row = BY_NAME[name]
    assert row.fast_path is not None
    # the same row without its fast path: plain loops of the full functions
    plain = Row(name, row.forward, {"a": row.derivative(0)}, result="float")
    x = _trig_inputs(dtype, np.random.default_rng(2))
    g = np.random.default_rng(3).uniform(-1, 1, x.size).astype(dtype)
    want = np.empty_like(x)
    E._forward_module(plain, "a", 1).serial(want, x)
    forward = E._forward_module(row, "a", 1)
    outs = [np.empty_like(x) for _ in range(2)]
    forward.serial(outs[0], x)
    forward.parallel(outs[1], x)
    np.testing.assert_array_equal(outs[0], outs[1])
    _assert_close(outs[0], want, dtype)
    with np.errstate(invalid="ignore"):
        npy = getattr(np, name)(x)
    # the blocks with a huge argument ran the full reduction
    assert np.array_equal(np.isnan(outs[0]), np.isnan(npy))
    ok = ~np.isnan(npy)
    assert np.allclose(outs[0][ok], npy[ok], rtol=0, atol=4 * np.finfo(dtype).eps)

    want_grad = np.empty_like(x)
    E._backward_module(plain, (0,), "a", 1).serial(g, x, want_grad)
    backward = E._backward_module(row, (0,), "a", 1)
    grads = [np.empty_like(x) for _ in range(2)]
    backward.serial(g, x, grads[0])
    backward.parallel(g, x, grads[1])
    np.testing.assert_array_equal(grads[0], grads[1])
    _assert_close(grads[0], want_grad, dtype)

    x2 = np.stack([x, x[::-1]])[:, ::2]             # 2-D, strided
    out2 = np.empty(x2.shape, dtype)
    want2 = np.empty(x2.shape, dtype)
    E._forward_module(row, "a", 2).parallel(out2, x2)
    E._forward_module(plain, "a", 2).serial(want2, x2)
    _assert_close(out2, want2, dtype)


def test_read_only_inputs_share_the_writeable_specialization():
    """A broadcast operand is a read-only view; Numba would compile a kernel
    per mix of read-only flags. Row kernels type read-only inputs as writeable:
    one specialization serves both, and later calls find it without compiling."""
    kernel = E._forward_plan(BY_NAME["mul"], (np.ndarray, np.ndarray), 2)[0].serial
    a = np.arange(6.0).reshape(2, 3)[:, ::-1]  # strided: layout 'A'
    b = np.arange(3.0)
    writeable = np.lib.stride_tricks.as_strided(b, (2, 3), (0, 8), writeable=True)
    for operand in (writeable, np.broadcast_to(b, (2, 3)), np.broadcast_to(b, (2, 3))):
        out = np.empty((2, 3))
        kernel(out, a, operand)
        np.testing.assert_array_equal(out, a * b)
    float64 = [sig for sig in kernel.signatures if str(sig[0].dtype) == "float64" and all(
        t.layout == "A" for t in sig[1:])]
    assert float64 and all(t.mutable for sig in float64 for t in sig)
    assert len(float64) == 1  # the read-only calls compiled nothing of their own
