"""The custom-op API (``nbgrad.elementwise``) and the dispatch every row goes
through: a user's row gets forward and backward kernels, an in-place variant
and the saved-tensor version checks that its derivatives imply; bad rows and
bad operands are refused with clear errors (PyTorch's text where it has one).
"""
import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import nbgrad
from helpers import (assert_close, assert_same_tensor, dtype_name, examples, lib_of, node_name,
                     normalize_error, run_like_torch, values)

TESTED_OPS = {"clip"}  # clamp's alias; clamp is a row (tests/ops/test_exports.py)

SQRT_2 = math.sqrt(2.0)
SQRT_2PI = math.sqrt(2.0 * math.pi)


def _softplus(a):
    # log(1 + e^a) without overflow for large a
    return a + math.log1p(math.exp(-a)) if a > 0 else math.log1p(math.exp(a))


softplus = nbgrad.elementwise(
    "softplus", _softplus, grads={"a": lambda g, a: g / (1 + math.exp(-a))})

gelu = nbgrad.elementwise(
    "gelu", lambda a: 0.5 * a * (1 + math.erf(a / SQRT_2)),
    grads={"a": lambda g, a: g * (0.5 * (1 + math.erf(a / SQRT_2))
                                  + a * math.exp(-0.5 * a * a) / SQRT_2PI)})

hypot = nbgrad.elementwise(
    "hypot", lambda a, b: math.sqrt(a * a + b * b),
    grads={"a": lambda g, a, out: g * a / out, "b": lambda g, b, out: g * b / out})

# Reads only its output: saves the output, not the input.
exp2 = nbgrad.elementwise("exp2", lambda a: 2.0 ** a,
                          grads={"a": lambda g, out: g * out * math.log(2.0)})

# Reads nothing: saves nothing.
shift = nbgrad.elementwise("shift", lambda a: a + 1, grads={"a": lambda g: g})

UNARY = {  # custom row -> the PyTorch function it mirrors
    "softplus": (softplus, F.softplus),
    "gelu": (gelu, F.gelu),
    "exp2": (exp2, torch.exp2),
}


def _to(lib, values, dtype, requires_grad=False, device="cpu"):
    if lib is nbgrad:
        return nbgrad.tensor(values, dtype=dtype, device=device, requires_grad=requires_grad)
    return torch.tensor(values, dtype=getattr(torch, dtype_name(dtype)),
                        requires_grad=requires_grad)


# ------------------------------------------------------------------- forward
@pytest.mark.parametrize("name", sorted(UNARY))
@given(shape=hnp.array_shapes(min_dims=0, max_dims=3, max_side=4),
       dtype=st.sampled_from([nbgrad.float32, nbgrad.float64]),
       transposed=st.booleans(), seed=st.integers(0, 2**32 - 1))
@examples(15)
def test_custom_unary_forward_and_backward_match_torch(name, shape, dtype, transposed, seed,
                                                       device):
    row, reference = UNARY[name]
    rng = np.random.default_rng(seed)
    values = rng.uniform(-3, 3, size=shape)
    upstream = rng.standard_normal(shape[::-1] if transposed else shape)
    results = {}
    for lib in (nbgrad, torch):
        x = _to(lib, values, dtype, requires_grad=True, device=device)
        view = x.permute(*reversed(range(x.ndim))) if transposed and x.ndim else x
        out = row(view) if lib is nbgrad else reference(view)
        out.backward(_to(lib, upstream, dtype, device=device))
        results[lib] = (out, x.grad)
    (out, grad), (want, want_grad) = results[nbgrad], results[torch]
    assert_same_tensor(out.detach(), want.detach())
    assert node_name(out.grad_fn) == node_name(want.grad_fn)
    assert_same_tensor(grad, want_grad)


@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3),
       dtype=st.sampled_from([nbgrad.float32, nbgrad.float64]),
       scalar=st.sampled_from([None, 0, 1]), seed=st.integers(0, 2**32 - 1))
@examples(20)
def test_custom_binary_op_broadcasts_like_torch(shapes, dtype, scalar, seed, device):
    """A two-input row: broadcasting, a Python number in either position,
    forward and both gradients as torch.hypot."""
    rng = np.random.default_rng(seed)
    a_values = rng.uniform(0.5, 2, size=shapes.input_shapes[0])
    b_values = rng.uniform(-2, -0.5, size=shapes.input_shapes[1])
    upstream = rng.standard_normal(shapes.result_shape if scalar is None
                                   else shapes.input_shapes[1 - scalar])
    results = {}
    for lib in (nbgrad, torch):
        leaves = [_to(lib, a_values, dtype, requires_grad=True, device=device),
                  _to(lib, b_values, dtype, requires_grad=True, device=device)]
        args = list(leaves)
        if scalar is not None:
            # torch.hypot takes tensors only; a 0-d tensor of the same dtype promotes alike
            args[scalar] = 1.5 if lib is nbgrad else _to(lib, 1.5, dtype)
        out = hypot(*args) if lib is nbgrad else torch.hypot(*args)
        out.backward(_to(lib, upstream, dtype, device=device))
        results[lib] = (out, [leaf.grad for k, leaf in enumerate(leaves) if k != scalar])
    (out, grads), (want, want_grads) = results[nbgrad], results[torch]
    assert_same_tensor(out.detach(), want.detach())
    for g, w in zip(grads, want_grads):
        assert_same_tensor(g, w)


@pytest.mark.parametrize("row", [softplus, gelu, hypot, exp2], ids=lambda r: r.name)
def test_custom_rows_pass_gradcheck(row):
    rng = np.random.default_rng(3)
    inputs = [nbgrad.tensor(rng.uniform(0.3, 2.0, size=(2, 3)) * (-1) ** k, dtype=nbgrad.float64,
                            requires_grad=True) for k in range(len(row.inputs))]
    inputs[-1] = inputs[-1][:, :1]  # broadcast the last input
    assert nbgrad.autograd.gradcheck(row, inputs)


def test_custom_row_follows_the_promotion_rules():
    assert softplus(nbgrad.tensor([1, 2])).dtype is nbgrad.int64  # "promote", like torch.neg
    as_float = nbgrad.elementwise("softplus", _softplus, result="float")
    out = as_float(nbgrad.tensor([0, 1]))
    assert out.dtype is nbgrad.float32
    assert_close(out, F.softplus(torch.tensor([0.0, 1.0])))
    wide = nbgrad.tensor([4.0], dtype=nbgrad.float64)
    assert hypot(nbgrad.tensor([3.0]), wide).dtype is nbgrad.float64
    assert hypot(nbgrad.tensor([3.0]), 4).tolist() == [5.0]
    is_close = nbgrad.elementwise("is_close", lambda a, b: abs(a - b) < 1e-3, result="bool")
    flags = is_close(nbgrad.tensor([1.0, 2.0]), nbgrad.tensor([1.0, 2.5]))
    assert flags.dtype is nbgrad.bool and flags.tolist() == [True, False]


def test_custom_row_names_its_node():
    x = nbgrad.tensor([1.0], requires_grad=True)
    assert hypot(x, x).grad_fn.name() == "HypotBackward"
    titled = nbgrad.elementwise("my_softplus", _softplus,
                                grads={"a": lambda g, a: g / (1 + math.exp(-a))})
    assert titled(x).grad_fn.name() == "MySoftplusBackward"
    assert nbgrad.elementwise("sp", _softplus, grads={"a": lambda g, a: g}, title="SoftPlus")(x) \
        .grad_fn.name() == "SoftPlusBackward"


# -------------------------------------------------------------------- in-place
@pytest.mark.parametrize("name", sorted(UNARY))
def test_custom_row_in_place_matches_torch(name):
    """``row.inplace(y)`` writes into y, bumps its version and rebases its
    history, also through a view of a non-leaf."""
    row, reference = UNARY[name]
    values = [[-1.5, 0.25, 2.0], [0.5, -0.75, 1.0]]
    upstream = [[1.0, -2.0, 0.5], [0.25, 3.0, -1.0]]
    results = {}
    for lib in (nbgrad, torch):
        x = _to(lib, values, nbgrad.float64, requires_grad=True)
        y = x * 1
        view = y[:, 1:]
        if lib is nbgrad:
            assert row.inplace(view) is view
        else:
            view.copy_(reference(view.clone()))
        assert y._version == 1
        y.backward(_to(lib, upstream, nbgrad.float64))
        results[lib] = (y, x.grad)
    for a, b in zip(results[nbgrad], results[torch]):
        assert_same_tensor(a.detach(), b.detach())


def test_custom_binary_row_in_place_with_a_python_number():
    x = nbgrad.tensor([3.0, 5.0], requires_grad=True)
    y = x * 1
    hypot.inplace(y, 4)
    assert_close(y.detach(), torch.tensor([5.0, math.sqrt(41)]))
    assert y._version == 1
    y.sum().backward()
    assert_close(x.grad, torch.tensor([3 / 5, 5 / math.sqrt(41)]))
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        hypot.inplace(x, 4)
    with pytest.raises(RuntimeError, match=r"output with shape \[2\] doesn't match the broadcast "
                                           r"shape \[3, 2\]"):
        hypot.inplace(y, nbgrad.ones(3, 2))
    with pytest.raises(TypeError):
        hypot.inplace(3.0, y)


# ------------------------------------------------------- saved-tensor checks
def _stale_message(shape, producer, version, op, line, saver, saved_line):
    return (f"one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [nbgrad.FloatTensor [{shape}]], which is output 0 of {producer}, "
            f"is at version {version}; expected version 0 instead. It was modified in place by "
            f"{op}() at {__file__}:{line}. It was saved for {saver} by the forward call at "
            f"{__file__}:{saved_line}.")


def _line():
    return sys._getframe(1).f_lineno


def test_derivative_reading_out_saves_the_output():
    """exp2's derivative reads ``out``: writing into the output afterwards makes
    backward fail, with torch.exp2's message plus where the write happened."""
    x = nbgrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = exp2(x); saved_line = _line()  # noqa: E702
    y.mul_(2); line = _line()  # noqa: E702
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    message = str(info.value)
    assert message == _stale_message(3, "Exp2", 1, "mul_", line, "Exp2Backward", saved_line)
    tx = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    ty = torch.exp2(tx)
    ty.mul_(2)
    with pytest.raises(RuntimeError) as want:
        ty.sum().backward()
    assert normalize_error(message) == normalize_error(str(want.value))
    # exp2 does not save its input: writing into a non-leaf input is harmless
    z = x * 1
    out = exp2(z)
    z.add_(1)
    out.sum().backward()


def test_derivative_reading_an_input_saves_the_input_only():
    """softplus reads ``a``: writing into the output is fine (as in PyTorch),
    writing into the input makes backward fail."""
    x = nbgrad.tensor([0.5, -1.0], requires_grad=True)
    y = softplus(x)
    y.mul_(3)
    y.sum().backward()
    assert_close(x.grad, 3 * torch.sigmoid(torch.tensor([0.5, -1.0])))
    z = x * 1
    y = softplus(z); saved_line = _line()  # noqa: E702
    z.add_(1); line = _line()  # noqa: E702
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    assert str(info.value) == _stale_message(2, "Add", 1, "add_", line, "SoftplusBackward",
                                             saved_line)


def test_derivative_reading_nothing_saves_nothing():
    x = nbgrad.tensor([0.5, -1.0], requires_grad=True)
    z = x * 1
    y = shift(z)
    z.mul_(2)
    y.mul_(2)
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_in_place_custom_row_saves_the_value_before_the_write():
    """softplus_ in place reads the input as it was before the write."""
    x = nbgrad.tensor([0.5, -1.0, 2.0], dtype=nbgrad.float64, requires_grad=True)
    y = x * 1
    softplus.inplace(y)
    y.backward(nbgrad.ones(3, dtype=nbgrad.float64))
    assert_close(x.grad, torch.sigmoid(torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)))
    # exp2 in place saves its output, so a second write is caught
    y = x * 1
    exp2.inplace(y)
    y.add_(1); line = _line()  # noqa: E702
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    assert f"It was modified in place by add_() at {__file__}:{line}." in str(info.value)


def test_second_backward_through_a_custom_row():
    x = nbgrad.tensor([0.5], requires_grad=True)
    y = softplus(x)
    y.backward(retain_graph=True)
    y.backward()
    assert_close(x.grad, 2 * torch.sigmoid(torch.tensor([0.5])))
    y = softplus(x)
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


# ------------------------------------------------------------------- bad rows
def test_derivative_for_an_unknown_input_is_refused():
    with pytest.raises(ValueError, match=r"softplus2: derivatives given for unknown inputs "
                                         r"\['b'\]; the forward's inputs are \('a',\)"):
        nbgrad.elementwise("softplus2", _softplus, grads={"a": lambda g: g, "b": lambda g: g})


def test_derivative_reading_an_unknown_name_is_refused():
    with pytest.raises(ValueError) as info:
        nbgrad.elementwise("twice", lambda a: 2 * a, grads={"a": lambda g, x: 2 * g})
    message = str(info.value)
    assert "twice" in message and "'a'" in message and "['x']" in message
    assert "['a', 'g', 'out']" in message


def _scale_check(args):
    """Refuses bool tensors, and negative scales (a value: checked per call)."""
    _scale_check.seen.append(args)
    if args[0] is nbgrad.bool:
        raise TypeError("scaled: not for bools")
    if not isinstance(args[1], nbgrad.dtypes.dtype):
        if args[1] < 0:
            raise ValueError("scaled: the scale must be >= 0")
        return (1,)
    return None


_scale_check.seen = []
scaled = nbgrad.elementwise("scaled", lambda a, s: a * s, grads={"a": lambda g, s: g * s},
                            check=_scale_check)


def test_a_rows_check_refuses_arguments_before_anything_runs():
    """``check`` sees tensors as dtypes and numbers as values; numbers it
    asks for are checked on every call, past the cached plan and the
    straight-line path, and in place; a refusal writes nothing."""
    t = nbgrad.tensor([1.0, 2.0])
    assert scaled(t, 2.0).tolist() == [2.0, 4.0]
    assert _scale_check.seen[-1] == [nbgrad.float32, 2.0]
    for _ in range(2):  # the plan for (float32 tensor, float) is cached by now
        with pytest.raises(ValueError, match="the scale must be >= 0"):
            scaled(t, -1.0)
    with pytest.raises(ValueError, match="the scale must be >= 0"):
        scaled.inplace(t, -1.0)
    assert t.tolist() == [1.0, 2.0] and t._version == 0
    assert scaled(t, t).tolist() == [1.0, 4.0]  # a tensor scale: the check returns no positions
    with pytest.raises(TypeError, match="not for bools"):
        scaled(nbgrad.tensor([True]), 1.0)
    x = nbgrad.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(ValueError):
        scaled(x, -2.0)
    assert x.grad is None and x._version == 0


def test_bad_result_kind_is_refused():
    with pytest.raises(ValueError, match="result must be promote, float, bool or self, not 'int'"):
        nbgrad.elementwise("twice", lambda a: 2 * a, result="int")


# --------------------------------------------------------------- bad operands
BAD_SHAPES = [((2, 3), (2, 2)), ((3,), (4,)), ((5,), (2, 4)), ((2, 1, 3), (4, 2)),
              ((4, 1), (3, 2, 5))]


@pytest.mark.parametrize("shapes", BAD_SHAPES, ids=str)
def test_broadcast_error_matches_torch(shapes):
    a, b = shapes
    cases = [
        (lambda: nbgrad.ones(*a) + nbgrad.ones(*b), lambda: torch.ones(*a) + torch.ones(*b)),
        (lambda: hypot(nbgrad.ones(*a), nbgrad.ones(*b)),
         lambda: torch.hypot(torch.ones(*a), torch.ones(*b))),
        (lambda: nbgrad.where(nbgrad.ones(*a) > 0, nbgrad.ones(*b), 0.0),
         lambda: torch.where(torch.ones(*a) > 0, torch.ones(*b), 0.0)),
    ]
    for ours, theirs in cases:
        with pytest.raises(RuntimeError) as want:
            theirs()
        with pytest.raises(RuntimeError) as info:
            ours()
        assert str(info.value) == str(want.value)


def test_broadcast_error_of_three_inputs_matches_torch():
    with pytest.raises(RuntimeError) as want:
        torch.ones(3, 1).clamp(torch.ones(1, 4), torch.ones(5))
    with pytest.raises(RuntimeError) as info:
        nbgrad.ones(3, 1).clamp(nbgrad.ones(1, 4), nbgrad.ones(5))
    assert str(info.value) == str(want.value)


@pytest.mark.parametrize("bad", ["a", None, [1.0, 2.0], 1j, object()],
                         ids=lambda bad: type(bad).__name__)  # (no addresses: xdist workers agree)
def test_non_number_operand_is_a_type_error(bad):
    x = nbgrad.tensor([1.0, 2.0])
    if not isinstance(bad, complex):  # torch computes in complex64; nbgrad has no complex dtype
        with pytest.raises(TypeError):
            torch.tensor([1.0, 2.0]) + bad
    with pytest.raises(TypeError):
        x + bad
    with pytest.raises(TypeError):
        hypot(x, bad)
    with pytest.raises(TypeError):
        hypot(bad, x)
    with pytest.raises(TypeError):
        x.mul_(bad)
    assert x._version == 0


def test_calls_without_a_tensor_or_with_the_wrong_arity_are_type_errors():
    with pytest.raises(TypeError, match="expected at least one Tensor argument"):
        hypot(3.0, 4.0)
    with pytest.raises(TypeError, match=r"hypot\(\) takes 2 arguments \(a, b\) but 1 were given"):
        hypot(nbgrad.ones(2))
    with pytest.raises(TypeError):
        softplus(nbgrad.ones(2), nbgrad.ones(2))


def test_equality_with_a_non_number_is_false_like_torch():
    assert (torch.tensor([1.0]) == "a") is False
    assert (nbgrad.tensor([1.0]) == "a") is False
    assert (nbgrad.tensor([1.0]) != None) is True  # noqa: E711


# ------------------------------------------------------------- kernel cache
def test_rows_reading_different_global_constants_get_different_kernels():
    """Numba freezes a global constant into the machine code, so two rows whose
    code is the same but whose global constant differs must not share kernels."""
    source = "lambda a: a * SCALE"
    double = nbgrad.elementwise("scale", eval(source, {"SCALE": 2.0}))  # noqa: S307
    triple = nbgrad.elementwise("scale", eval(source, {"SCALE": 3.0}))  # noqa: S307
    x = nbgrad.tensor([1.0, 2.0])
    assert double(x).tolist() == [2.0, 4.0]
    assert triple(x).tolist() == [3.0, 6.0]


def test_changed_global_constant_is_not_served_from_the_disk_cache(tmp_path):
    """A new process with the constant changed must not load the old machine code."""
    script = textwrap.dedent("""
        import sys
        import nbgrad
        SCALE = float(sys.argv[1])
        row = nbgrad.elementwise("scale_by_global", lambda a: a * SCALE)
        print(row(nbgrad.tensor([1.0])).item())
    """)
    env = {**os.environ, "NBGRAD_CACHE_DIR": str(tmp_path)}
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    outputs = [subprocess.run([sys.executable, "-c", script, scale], env=env, cwd=root,
                              capture_output=True, text=True, check=True).stdout.strip()
               for scale in ("2", "3")]
    assert outputs == ["2.0", "3.0"]


def test_in_place_through_a_row_without_a_derivative_for_self():
    """Only ``b`` is differentiable: writing into a non-leaf passes no gradient
    to its history (and must not try to build an empty backward kernel)."""
    scale_by = nbgrad.elementwise("scale_by", lambda a, b: a * b, grads={"b": lambda g, a: g * a})
    x = nbgrad.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    scale_by.inplace(y, 3.0)
    assert y.tolist() == [3.0, 6.0]
    y.sum().backward()
    assert x.grad is None
    b = nbgrad.tensor([2.0, 5.0], requires_grad=True)
    z = x * 1
    scale_by.inplace(z, b)
    z.sum().backward()
    assert b.grad.tolist() == [1.0, 2.0] and x.grad is None


def test_where_with_a_non_bool_condition_matches_torch():
    with pytest.raises(RuntimeError) as want:
        torch.where(torch.tensor([1.0]), torch.ones(1), torch.ones(1))
    with pytest.raises(RuntimeError) as info:
        nbgrad.where(nbgrad.tensor([1.0]), nbgrad.ones(1), nbgrad.ones(1))
    assert str(info.value) == str(want.value)


@pytest.mark.parametrize("other", [np.float32, np.float64], ids=["same-dtype", "promoted"])
def test_where_backward_keeps_its_condition_bool(monkeypatch, other):
    # A mask is kept out of promotion in the backward as in the forward: no float copy of it.
    import nbgrad.backends.cpu as cpu
    cast_dtypes = []
    real_cast = cpu.cast
    monkeypatch.setattr(cpu, "cast", lambda a, dtype: cast_dtypes.append(a.dtype) or real_cast(a, dtype))
    rng = np.random.default_rng(3)
    c = rng.random((3, 4)) < 0.5
    a, b = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal(4).astype(other)
    g = rng.standard_normal((3, 4)).astype(np.result_type(np.float32, other))
    grads = []
    for lib in (nbgrad, torch):
        xa, xb = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        lib.where(lib.tensor(c), xa, xb).backward(lib.tensor(g))
        grads.append((xa.grad.numpy(), xb.grad.numpy()))
    assert np.dtype(bool) not in cast_dtypes
    for ours, theirs in zip(*grads):
        assert ours.dtype == theirs.dtype
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)


# ------------------------------------------------------------ output layout
def _ramp(lib, *shape):
    return lib.arange(1, 1 + math.prod(shape), dtype=lib.float64).reshape(*shape) / 8


# (id, input): layouts built the same way in both libraries (float64: the tests' dtype).
LAYOUTS = [
    ("contiguous", lambda L: _ramp(L, 3, 4)),
    ("transposed", lambda L: _ramp(L, 4, 3).t()),
    ("permuted-3d", lambda L: _ramp(L, 2, 3, 4).permute(2, 0, 1)),
    ("permuted-3d-b", lambda L: _ramp(L, 2, 3, 4).permute(1, 2, 0)),
    ("stepped", lambda L: _ramp(L, 3, 8)[:, ::2]),
    ("stepped-transposed", lambda L: _ramp(L, 8, 3)[::2].t()),
    ("expanded", lambda L: _ramp(L, 3, 1).expand(3, 4)),
    ("size-1-permuted", lambda L: _ramp(L, 2, 1, 3).permute(2, 1, 0)),
    ("channels-last", lambda L: _ramp(L, 2, 3, 2, 2).permute(0, 2, 3, 1)),
    # Not a view, yet not C-contiguous: the straight-line path must pass it on.
    ("result-of-transposed", lambda L: _ramp(L, 4, 3).t().relu()),
]
_LAYOUT_IDS = [c[0] for c in LAYOUTS]
_LAYOUT_MAKERS = [c[1] for c in LAYOUTS]


def _same_result(ours, theirs):
    assert ours.stride() == theirs.stride()
    assert ours.is_contiguous() == theirs.is_contiguous()
    assert_same_tensor(ours, theirs)


@pytest.mark.parametrize("make", _LAYOUT_MAKERS, ids=_LAYOUT_IDS)
@pytest.mark.parametrize("op", [
    lambda L, x: x.sigmoid(), lambda L, x: x * 2, lambda L, x: x + L.tensor(0.5, dtype=L.float64),
    lambda L, x: x * x, lambda L, x: x < 0.5, lambda L, x: 2.0 ** x, lambda L, x: 2.0 / x,
    lambda L, x: x.reciprocal(), lambda L, x: L.pow(2, x)],
    ids=["unary", "number", "0d-tensor", "self", "compare", "rpow", "rdiv", "reciprocal",
         "pow-number-base"])
def test_elementwise_result_takes_the_layout_of_its_input(make, op):
    """PyTorch's TensorIterator: a result follows its inputs' strides (exactly
    when they are all dense with one layout), and its gradient reaches the
    input in the input's layout when that is a dense leaf."""
    results = []
    for L in (nbgrad, torch):
        x = make(L).detach().requires_grad_()
        y = op(L, x)
        if y.requires_grad:
            (y * _ramp(L, *y.shape)).sum().backward()
        results.append((x, y))
    (x, y), (tx, ty) = results
    _same_result(y, ty)
    if tx.grad is not None:
        _same_result(x.grad, tx.grad)


@pytest.mark.parametrize("make_b", _LAYOUT_MAKERS, ids=_LAYOUT_IDS)
@pytest.mark.parametrize("make_a", [_LAYOUT_MAKERS[k] for k in (0, 1, 2, 6)],
                         ids=[_LAYOUT_IDS[k] for k in (0, 1, 2, 6)])
def test_binary_result_takes_the_layout_of_mixed_inputs(make_a, make_b):
    results = []
    for L in (nbgrad, torch):
        a, b = make_a(L), make_b(L)
        try:
            results.append(a + b)
        except RuntimeError as error:  # shapes that do not broadcast: refused alike
            results.append(type(error))
    ours, theirs = results
    if isinstance(theirs, type):
        assert ours is theirs
    else:
        _same_result(ours, theirs)


def test_reshape_of_a_transposed_result_copies_as_in_torch():
    """The issue's example: PyTorch's reshape(-1) of a transposed result copies
    (it is not C-contiguous), so a later write to the result misses it."""
    for L in (nbgrad, torch):
        y = L.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).t().relu()
        z = y.reshape(-1)
        y.mul_(10)
        np.testing.assert_array_equal(z.numpy(), [1, 4, 2, 5, 3, 6])


@pytest.mark.parametrize("make", _LAYOUT_MAKERS, ids=_LAYOUT_IDS)
def test_in_place_op_keeps_the_layout_of_self(make):
    results = []
    for L in (nbgrad, torch):
        x = make(L).clone()
        before = x.stride()
        x.mul_(3).add_(x)
        results.append((before, x))
    (before, x), (t_before, tx) = results
    assert before == t_before
    _same_result(x, tx)
    assert x.stride() == before


# ------------------------------------------------ number / tensor, reciprocal
def _bits(t):
    a = t.detach().numpy()
    return a.view(np.uint32 if a.dtype == np.float32 else np.uint64)


_RDIV_SPECIALS = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1e-40, -1e-40, 1e-45, 3e38, -3e38,
                  1e-38, 1.0, -3.0, 7.0]


@pytest.mark.parametrize("number", [2.0, -1.5, 0.5, 3, 1e30, 1e-30, math.inf, math.nan, 0.0,
                                    True])
@pytest.mark.parametrize("dtype", [nbgrad.float32, nbgrad.float64], ids=dtype_name)
def test_number_over_a_tensor_is_reciprocal_then_mul_as_in_torch(number, dtype):
    """``number / x`` is PyTorch's ``x.reciprocal() * number``: the same bits,
    forward and backward (specials and subnormals too), and the same nodes."""
    rng = np.random.default_rng(0)
    values = np.concatenate([rng.standard_normal(500) * 10.0 ** rng.integers(-40, 39, 500),
                             _RDIV_SPECIALS]).astype(dtype.numpy)
    results = {}
    for lib in (nbgrad, torch):
        x = _to(lib, values, dtype, requires_grad=True)
        y = number / x
        y.backward(_to(lib, np.linspace(-2, 2, len(values)), dtype))
        results[lib] = (y, x.grad, [node_name(y.grad_fn)] +
                        [node_name(n) for n, _ in y.grad_fn.next_functions])
    (y, g, nodes), (ty, tg, tnodes) = results[nbgrad], results[torch]
    assert y.dtype is dtype and nodes == tnodes == ["MulBackward", "ReciprocalBackward", None]
    np.testing.assert_array_equal(_bits(y), _bits(ty))
    np.testing.assert_array_equal(_bits(g), _bits(tg))


@pytest.mark.parametrize("values", [[1, 2, 0, -3], [True, False]], ids=["int64", "bool"])
@pytest.mark.parametrize("number", [2, 2.5, True])
def test_number_over_an_integer_tensor_is_float_as_in_torch(values, number):
    ours, theirs = number / nbgrad.tensor(values), number / torch.tensor(values)
    assert_same_tensor(ours, theirs)
    np.testing.assert_array_equal(_bits(ours), _bits(theirs))


def test_a_write_to_x_after_number_over_x_leaves_backward_intact_as_in_torch():
    """The reciprocal saves its result, not x (nbgrad used to save x and refuse)."""
    grads = {}
    for lib in (nbgrad, torch):
        leaf = lib.tensor([1.0, 2.0, 4.0], requires_grad=True)
        x = leaf * 1
        y = 2.0 / x
        with lib.no_grad():
            x.add_(1)
        y.sum().backward()
        grads[lib] = leaf.grad
    assert_same_tensor(grads[nbgrad], grads[torch])


def test_a_write_to_the_saved_reciprocal_makes_backward_refuse_as_in_torch():
    messages = {}
    for lib in (nbgrad, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        r = x.reciprocal()
        y = r * 2.0
        r.mul_(2)
        with pytest.raises(RuntimeError) as info:
            (y + r).sum().backward()
        messages[lib] = normalize_error(str(info.value))
    assert messages[nbgrad] == messages[torch]


# --------------------------------------------- Python ints beyond int64
# PyTorch makes a Python int an int64 Scalar or, in [2**63, 2**64), a uint64
# one: an operand (a wrapped number) then wraps into an int64 computation, a
# Scalar argument (pow's exponent, clamp's bounds, where's values) is refused,
# and a bool tensor promotes with it to nothing; floats take the value.
BIG_INTS = [2 ** 63 - 1, 2 ** 63, 2 ** 64 - 1, -2 ** 63, 2 ** 64, -2 ** 63 - 1, 2 ** 1100]
NUMBER_OPS = {
    "add": lambda L, t, n: t + n,
    "rsub": lambda L, t, n: n - t,
    "mul": lambda L, t, n: t * n,
    "div": lambda L, t, n: t / n,
    "rdiv": lambda L, t, n: n / t,
    "pow": lambda L, t, n: t ** n,
    "rpow": lambda L, t, n: n ** t,
    "lt": lambda L, t, n: t < n,
    "eq": lambda L, t, n: t == n,
    "clamp": lambda L, t, n: t.clamp(max=n),
    "where": lambda L, t, n: L.where(t > 0, t, n),
    "fill_": lambda L, t, n: t.clone().fill_(n),
    "add_": lambda L, t, n: t.add_(n),
}
# (-1) ** (2**63 - 1) is 1 in nbgrad, -1 in PyTorch: Numba's integer power
# goes through floats for exponents beyond 2**16 (left to scalar_math).
BIG_INT_VALUES = {"int64": [1, 0], "float32": [1.0, -1.0], "bool": [True, False]}


@pytest.mark.parametrize("op", sorted(NUMBER_OPS))
@pytest.mark.parametrize("dtype", sorted(BIG_INT_VALUES))
def test_python_ints_beyond_int64_match_torch(dtype, op):
    """Values where PyTorch computes, its error where it refuses (and then
    nothing written)."""
    for number in BIG_INTS:
        outcomes = {}
        for lib in (nbgrad, torch):
            t = lib.tensor(BIG_INT_VALUES[dtype], dtype=getattr(lib, dtype))
            try:
                outcomes[lib] = NUMBER_OPS[op](lib, t, number)
            except (RuntimeError, OverflowError) as error:
                outcomes[lib] = (type(error), str(error).replace("bool", "Bool"))
                assert t.tolist() == BIG_INT_VALUES[dtype] and t._version == 0
        ours, theirs = outcomes[nbgrad], outcomes[torch]
        if isinstance(theirs, tuple):
            assert ours == theirs, number
        else:
            assert_same_tensor(ours, theirs)
            assert ours.tolist() == theirs.tolist(), number


# ------------------------------------------------------------ on every device
def test_mixed_dtypes_promote_like_torch(device):
    def fn(a, b):
        return a * b.double() + a.float()
    for dtype in (nbgrad.float32, nbgrad.float64):
        run_like_torch(fn, values((2, 3), 1), values((3,), 2), device=device, dtype=dtype)
    t, want = nbgrad.tensor([1, 2, 3], device=device), torch.tensor([1, 2, 3])
    assert_same_tensor(t * 0.5, want * 0.5)  # an int64 tensor with a float number: float32
    assert_same_tensor(t / 2, want / 2)


def test_operators_and_reflected_operators_match_torch(device):
    def fn(a, b):
        return (2 - a) * b / (1 + abs(b)) + (-a) ** 2 - 3 / (a * a + 1)
    run_like_torch(fn, values((2, 3), 1), values((2, 3), 2), device=device, dtype=nbgrad.float64)
    x = values((2, 3), 4)
    for op in ("__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__"):
        assert_same_tensor(getattr(nbgrad.tensor(x, device=device), op)(0.5),
                           getattr(torch.tensor(x), op)(0.5))


def test_clamp_and_where_wrappers_match_torch(device):
    mask = values((2, 3), 9) > 0

    def fn(a, b):
        lib = lib_of(a)
        where = lib.where(lib.tensor(mask, device=a.device), a.clamp(min=-0.5), b.clamp(max=0.3))
        return where + a.clip(-1, 1)
    run_like_torch(fn, values((2, 3), 1), values((2, 3), 2), device=device, dtype=nbgrad.float64)


def _size_one_strided(L):
    return L.arange(12.0).reshape(2, 3, 2, 1).permute(0, 3, 1, 2)  # strides (6, 1, 2, 1)


@pytest.mark.parametrize("op", [
    lambda L, x: x * 1.0, lambda L, x: x + 1, lambda L, x: 2.0 - x, lambda L, x: x / 2,
    lambda L, x: x > 1, lambda L, x: L.where(x > 0, x, 1.0), lambda L, x: x * L.ones(2),
    lambda L, x: x * L.tensor(2.0), lambda L, x: x.clamp(min=0.5), lambda L, x: x ** 2.5,
    lambda L, x: 2 ** x, lambda L, x: x.exp(), lambda L, x: x * x])
def test_size_one_strides_count_where_torch_has_no_fast_set_up(op):
    # PyTorch's TensorIterator takes its C-order shortcut only without a wrapped
    # number and without broadcasting; otherwise the size-1 dimension's stride counts.
    assert op(nbgrad, _size_one_strided(nbgrad)).stride() == \
        op(torch, _size_one_strided(torch)).stride()


@pytest.mark.parametrize("op", [lambda a, b: a.maximum(b), lambda a, b: a / b, lambda a, b: a + b,
                                lambda a, b: b.maximum(a), lambda a, b: a < b])
def test_an_input_of_another_dtype_counts_as_its_cast_copy(op):
    def run(L):
        a = L.tensor([[1.0, 2.0]]).expand(2, 2)  # float32, strides (0, 1)
        b = L.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=L.float64).t()  # float64, (1, 2)
        return op(a, b)
    assert run(nbgrad).stride() == run(torch).stride()


@pytest.mark.parametrize("op", ["div_", "mul_"])
def test_an_inplace_op_with_a_wider_operand_computes_its_gradient_in_the_wider_dtype(op):
    # PyTorch's formula promotes self's float32 gradient with the float64 operand:
    # (1 / 1e-30) / 1e-30 overflows in float32, not in float64.
    def run(L):
        x = L.tensor([1.0, 2.0], dtype=L.float32)
        y = L.tensor([1e-30, 3.0], dtype=L.float64).requires_grad_()
        getattr(x, op)(y)
        x.sum().backward()
        return y.grad
    np.testing.assert_array_equal(run(nbgrad).numpy(), run(torch).numpy())


@pytest.mark.parametrize("dtype, values", [
    ("float32", [-100.0, -88.72283935546875, -88.7, -50.0, 0.0]),
    ("float64", [-720.0, -709.79, -709.78, -700.0, 0.0])])
def test_sigmoid_is_zero_where_torchs_exp_overflows(dtype, values):
    ours = nbgrad.tensor(values, dtype=getattr(nbgrad, dtype)).sigmoid().numpy()
    theirs = torch.tensor(values, dtype=getattr(torch, dtype)).sigmoid().numpy()
    np.testing.assert_array_equal(ours == 0, theirs == 0)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=0)
