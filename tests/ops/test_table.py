"""The elementwise op table, row by row.

Every row of ``nbgrad.ROWS`` is checked forward against NumPy and PyTorch,
backward against PyTorch (same inputs, same upstream gradient) and against
central finite differences (``nbgrad.autograd.gradcheck``, float64), on random
shapes from hypothesis: broadcasting between inputs, 0-d tensors, Python
numbers in each position where PyTorch accepts one, non-contiguous inputs
(transposed, strided slices), float32 and float64 (mixed too). The in-place
variant of every row with a method (``t.<name>_``) is generated from the same
rows. ``REFERENCE`` says, per row, what NumPy and PyTorch compute; a guard
test fails when a row has no entry, so a new row cannot go untested.
"""
import math
import operator
import re
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import nbgrad
from helpers import (assert_close, assert_same_error, assert_same_tensor, dtype_name, examples,
                     node_name, normalize_error, on_device, to_torch_dtype, torch_error)

ROWS = nbgrad.ROWS
FLOATS = (nbgrad.float32, nbgrad.float64)
LAYOUTS = ("contiguous", "transposed", "strided")
LIBS = (nbgrad, torch)


# ----------------------------------------------------------------- reference
@dataclass(frozen=True)
class Ref:
    """How NumPy computes a row, and how the public API calls it.

    ``call(lib, *args)`` is the same code for ``lib`` = nbgrad and torch.
    ``scalars``: the sets of positions that may hold Python numbers (PyTorch
    accepts them there). ``inplace_only``: the row backs an in-place method
    (``copy_``, ``fill_``) and ``call`` is that method."""
    numpy: Callable
    call: Callable
    scalars: tuple = ((),)
    inplace_only: bool = False
    torch_inplace: bool = True  # torch has Tensor.<name>_
    full_first: bool = False  # torch needs the first input in the broadcast shape
    dtypes: tuple = None  # the tensor dtypes cases draw (None: FLOATS)
    numbers: tuple = (float, int)  # the Python number types cases draw
    same_dtype: bool = False  # PyTorch wants one dtype for every tensor
    grad_scalars: tuple = None  # ``scalars`` where gradients are compared (None: all)
    inplace_grad: bool = True  # the in-place test writes into a tensor that requires grad
    # PyTorch's float32 gradient formula loses digits (sinc's cancels near 0): the
    # absolute error its float32 gradients are compared with (nbgrad's stay exact:
    # gradcheck and the row's own tests)
    torch_grad_atol32: float = None


def assert_grad_close(row, got, want, case):
    """A gradient against PyTorch's, at the case's precision (see ``torch_grad_atol32``)."""
    atol = REFERENCE[row.name].torch_grad_atol32
    if atol is not None and case.precision is nbgrad.float32:
        assert_close(got, want, dtype=case.precision, atol=atol)
    else:
        assert_close(got, want, dtype=case.precision)


def number_only(row):
    """Positions that are Python numbers in every way the row is called
    (``value=``, ``rtol=``...): tests pass a number there, which ``call`` may ignore."""
    patterns = REFERENCE[row.name].scalars
    return set.intersection(*(set(p) for p in patterns)) if patterns else set()


def tensor_positions(row):
    return [k for k in range(len(row.inputs)) if k not in number_only(row)]


def integral_only(row):
    """Rows PyTorch computes on integers and bools only (the bitwise ops)."""
    d = REFERENCE[row.name].dtypes
    return d is not None and not any(t.is_floating_point for t in d)


def _function(name):
    return lambda lib, *args: getattr(lib, name)(*args)


def _operator(op):
    return lambda lib, a, b: op(a, b)


def _sigmoid(a):
    return 1 / (1 + np.exp(-a))


def _copy(a, src):
    return np.broadcast_to(src, np.shape(a))


def _fill(a, value):
    return np.full(np.shape(a), value, dtype=np.float64)


BINARY = ((), (0,), (1,))  # operators accept a Python number on either side
INTEGRAL = dict(dtypes=(nbgrad.int64,), numbers=(int,))


def _left_shift(a, b):
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    return np.where((b < 0) | (b >= 64), 0, a << np.clip(b, 0, 63))


def _right_shift(a, b):
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    return np.where((b < 0) | (b >= 64), a >> 63, a >> np.clip(b, 0, 63))

REFERENCE = {
    "neg": Ref(np.negative, lambda lib, a: -a),
    "add": Ref(np.add, _operator(operator.add), BINARY),
    "sub": Ref(np.subtract, _operator(operator.sub), BINARY),
    "mul": Ref(np.multiply, _operator(operator.mul), BINARY),
    "div": Ref(np.true_divide, _operator(operator.truediv), BINARY),
    "pow": Ref(np.power, _operator(operator.pow), BINARY),
    # ``tensor ** number`` for floating tensors (nbgrad.ops.pow dispatches to it)
    "pow_number": Ref(np.power, _operator(operator.pow), ((1,),)),
    "reciprocal": Ref(np.reciprocal, _function("reciprocal")),
    "exp": Ref(np.exp, _function("exp")),
    "log": Ref(np.log, _function("log")),
    "sqrt": Ref(np.sqrt, _function("sqrt")),
    "abs": Ref(np.abs, lambda lib, a: abs(a)),
    "sin": Ref(np.sin, _function("sin")),
    "cos": Ref(np.cos, _function("cos")),
    "tanh": Ref(np.tanh, _function("tanh")),
    "sigmoid": Ref(_sigmoid, _function("sigmoid")),
    "relu": Ref(lambda a: np.maximum(a, 0), _function("relu")),
    "maximum": Ref(np.maximum, _function("maximum"), torch_inplace=False),
    "minimum": Ref(np.minimum, _function("minimum"), torch_inplace=False),
    "clamp": Ref(lambda a, lo, hi: np.minimum(np.maximum(a, lo), hi),
                 lambda lib, a, lo, hi: a.clamp(lo, hi), ((), (1, 2)), full_first=True),
    "clamp_min": Ref(lambda a, lo: np.where(np.isnan(lo), lo, np.maximum(a, lo)),
                     _function("clamp_min"), ((), (1,)), full_first=True),
    "clamp_max": Ref(lambda a, hi: np.where(np.isnan(hi), hi, np.minimum(a, hi)),
                     _function("clamp_max"), ((), (1,)), full_first=True),
    "where": Ref(np.where, _function("where"), ((), (1,), (2,), (1, 2))),
    "eq": Ref(np.equal, _operator(operator.eq), BINARY),
    "ne": Ref(np.not_equal, _operator(operator.ne), BINARY),
    "lt": Ref(np.less, _operator(operator.lt), BINARY),
    "le": Ref(np.less_equal, _operator(operator.le), BINARY),
    "gt": Ref(np.greater, _operator(operator.gt), BINARY),
    "ge": Ref(np.greater_equal, _operator(operator.ge), BINARY),
    "copy": Ref(_copy, lambda lib, a, src: a.copy_(src), inplace_only=True),
    "fill": Ref(_fill, lambda lib, a, value: a.fill_(value), ((1,),), inplace_only=True),
    # -- issue 15
    "rsqrt": Ref(lambda a: 1 / np.sqrt(a), _function("rsqrt")),
    "log1p": Ref(np.log1p, _function("log1p")),
    "expm1": Ref(np.expm1, _function("expm1")),
    "log2": Ref(np.log2, _function("log2")),
    "log10": Ref(np.log10, _function("log10")),
    "exp2": Ref(np.exp2, _function("exp2")),
    "square": Ref(np.square, _function("square")),
    "sign": Ref(np.sign, _function("sign")),
    "sgn": Ref(np.sign, _function("sgn")),
    "floor": Ref(np.floor, _function("floor")),
    "ceil": Ref(np.ceil, _function("ceil")),
    "round": Ref(np.round, _function("round")),
    # round(decimals=2): the row's ten and flip come from decimals (ignored here)
    "round_decimals": Ref(lambda a, ten, flip: np.round(a, 2),
                          lambda lib, a, ten, flip: lib.round(a, decimals=2), ((1, 2),)),
    "trunc": Ref(np.trunc, _function("trunc")),
    "frac": Ref(lambda a: a - np.trunc(a), _function("frac")),
    "erf": Ref(np.vectorize(math.erf, otypes=[float]), _function("erf")),
    "erfc": Ref(np.vectorize(math.erfc, otypes=[float]), _function("erfc")),
    "erfinv": Ref(lambda a: torch.erfinv(torch.tensor(a, dtype=torch.float64)).numpy(),
                  _function("erfinv")),
    "atan": Ref(np.arctan, _function("atan")),
    "asin": Ref(np.arcsin, _function("asin")),
    "acos": Ref(np.arccos, _function("acos")),
    "sinh": Ref(np.sinh, _function("sinh")),
    "cosh": Ref(np.cosh, _function("cosh")),
    "asinh": Ref(np.arcsinh, _function("asinh")),
    "acosh": Ref(np.arccosh, _function("acosh")),
    "atanh": Ref(np.arctanh, _function("atanh")),
    "tan": Ref(np.tan, _function("tan")),
    "deg2rad": Ref(np.deg2rad, _function("deg2rad")),
    "rad2deg": Ref(np.rad2deg, _function("rad2deg")),
    "sinc": Ref(np.sinc, _function("sinc"), torch_grad_atol32=1e-4),
    # logit(eps=0.3): lo and hi come from eps (ignored here); the domain reaches the clamp
    "logit": Ref(lambda a, lo, hi: np.log(np.clip(a, 0.3, 0.7) / (1 - np.clip(a, 0.3, 0.7))),
                 lambda lib, a, lo, hi: lib.logit(a, eps=0.3), ((1, 2),), numbers=(float,)),
    "lgamma": Ref(np.vectorize(math.lgamma, otypes=[float]), _function("lgamma")),
    "digamma": Ref(lambda a: torch.digamma(torch.tensor(a, dtype=torch.float64)).numpy(),
                   _function("digamma")),
    # polygamma(2, input): n comes last in the row (ignored here)
    "polygamma": Ref(lambda a, n: torch.polygamma(2, torch.tensor(a, dtype=torch.float64)).numpy(),
                     lambda lib, a, n: lib.polygamma(2, a), ((1,),)),
    "xlog1py": Ref(lambda a, b: np.where(np.isnan(b), np.nan, np.where(a == 0, 0.0, a * np.log1p(b))),
                   lambda lib, a, b: lib.special.xlog1py(a, b), BINARY),
    "entr": Ref(lambda a: np.where(a > 0, -a * np.log(np.where(a > 0, a, 1)),
                                   np.where(a == 0, 0.0, np.where(np.isnan(a), a, -np.inf))),
                lambda lib, a: lib.special.entr(a)),
    "atan2": Ref(np.arctan2, _function("atan2")),
    "hypot": Ref(np.hypot, _function("hypot")),
    "fmod": Ref(np.fmod, _function("fmod"), ((), (1,))),
    # remainder(number, tensor): PyTorch's backward refuses (test_remainder_of_a_number_...)
    "remainder": Ref(np.remainder, _operator(operator.mod), BINARY, grad_scalars=((), (1,))),
    "floor_divide": Ref(np.floor_divide, _operator(operator.floordiv), BINARY),
    "lerp": Ref(lambda a, e, w: np.where(np.abs(w) < 0.5, a + w * (e - a), e - (e - a) * (1 - w)),
                _function("lerp"), ((), (2,)), same_dtype=True, full_first=True),
    "addcmul": Ref(lambda a, t1, t2, value: a + 0.5 * t1 * t2,
                   lambda lib, a, t1, t2, value: lib.addcmul(a, t1, t2, value=0.5), ((3,),),
                   full_first=True),
    "addcdiv": Ref(lambda a, t1, t2, value: a - 1.5 * t1 / t2,
                   lambda lib, a, t1, t2, value: lib.addcdiv(a, t1, t2, value=-1.5), ((3,),),
                   full_first=True),
    "logaddexp": Ref(np.logaddexp, _function("logaddexp"), torch_inplace=False),
    "xlogy": Ref(lambda a, b: np.where(a == 0, 0.0, a * np.log(b)), _function("xlogy"), BINARY),
    "copysign": Ref(np.copysign, _function("copysign"), ((), (1,))),
    "nan_to_num": Ref(lambda a, n, p, m: np.nan_to_num(a, nan=0.5, posinf=2.0, neginf=-2.0),
                      lambda lib, a, n, p, m: lib.nan_to_num(a, nan=0.5, posinf=2.0, neginf=-2.0),
                      ((1, 2, 3),)),
    "isnan": Ref(np.isnan, _function("isnan"), torch_inplace=False),
    "isinf": Ref(np.isinf, _function("isinf"), torch_inplace=False),
    "isfinite": Ref(np.isfinite, _function("isfinite"), torch_inplace=False),
    "isclose": Ref(lambda a, b, r, t, e: np.isclose(a, b, rtol=0.01, atol=0.25, equal_nan=True),
                   lambda lib, a, b, r, t, e: lib.isclose(a, b, rtol=0.01, atol=0.25,
                                                          equal_nan=True),
                   ((2, 3, 4),), same_dtype=True),
    "logical_and": Ref(np.logical_and, _function("logical_and"), inplace_grad=False),
    "logical_or": Ref(np.logical_or, _function("logical_or"), inplace_grad=False),
    "logical_xor": Ref(np.logical_xor, _function("logical_xor"), inplace_grad=False),
    "logical_not": Ref(np.logical_not, _function("logical_not"), inplace_grad=False),
    "bitwise_and": Ref(np.bitwise_and, _operator(operator.and_), BINARY, **INTEGRAL),
    "bitwise_or": Ref(np.bitwise_or, _operator(operator.or_), BINARY, **INTEGRAL),
    "bitwise_xor": Ref(np.bitwise_xor, _operator(operator.xor), BINARY, **INTEGRAL),
    "bitwise_not": Ref(np.invert, lambda lib, a: ~a, **INTEGRAL),
    "bitwise_left_shift": Ref(_left_shift, _operator(operator.lshift), BINARY, **INTEGRAL),
    "bitwise_right_shift": Ref(_right_shift, _operator(operator.rshift), BINARY, **INTEGRAL),
    "fmax": Ref(np.fmax, _function("fmax"), torch_inplace=False),
    "fmin": Ref(np.fmin, _function("fmin"), torch_inplace=False),
}


# Issue 15's rows run on CUDA (the simulator in CI: each case costs seconds)
# for a sample covering every kind: libm and double-evaluated math, integer
# and bool rows, numbers as inputs, three tensors, the operators' rows.
ISSUE_15 = {"rsqrt", "log1p", "expm1", "log2", "log10", "exp2", "square", "sign", "sgn", "floor",
            "ceil", "round", "round_decimals", "trunc", "frac", "erf", "erfc", "erfinv", "atan",
            "asin", "acos", "sinh", "cosh", "asinh", "acosh", "atanh", "atan2", "hypot", "fmod",
            "remainder", "floor_divide", "lerp", "addcmul", "addcdiv", "logaddexp", "xlogy",
            "copysign", "nan_to_num", "isnan", "isinf", "isfinite", "isclose", "logical_and",
            "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or",
            "bitwise_xor", "bitwise_not", "bitwise_left_shift", "bitwise_right_shift", "fmax",
            "fmin", "tan", "deg2rad", "rad2deg", "sinc", "logit", "lgamma", "digamma",
            "polygamma", "xlog1py", "entr"}
CUDA_SAMPLE = {"erf", "erfinv", "log2", "asinh", "atan2", "fmod", "remainder", "floor_divide",
               "round", "round_decimals", "lerp", "addcmul", "xlogy", "nan_to_num", "isclose",
               "isinf", "logical_xor", "bitwise_and", "bitwise_left_shift", "bitwise_not",
               "copysign", "fmax", "tan", "logit", "polygamma"}


# Rows the higher-order and forward-mode tables skip (each costs ~20 s of
# kernel compilation with an empty cache): linear ones, and the gamma family
# but polygamma, whose derivative rule (polygamma of n + 1) they share.
DERIVED_SKIP = {"deg2rad", "rad2deg", "lgamma", "digamma", "entr"}

# Rows whose derivative is a constant zero (PyTorch's zeros_like(grad)).
ZERO_DERIVATIVE = {"sign", "sgn", "floor", "ceil", "round", "round_decimals", "trunc"}


def cuda_sample(row, device):
    if device == "cuda" and row.name in ISSUE_15 and row.name not in CUDA_SAMPLE:
        pytest.skip("issue 15 rows run on CUDA for a sample (CUDA_SAMPLE)")


def call_inplace(row, lib, *args):
    """``args[0].<name>_(*args[1:])``; where PyTorch has no such method, the
    same write spelled with copy_."""
    ref = REFERENCE[row.name]
    if ref.inplace_only:
        return ref.call(lib, *args)
    if row.name == "clamp":
        return args[0].clamp_(*args[1:])
    if lib is torch and not ref.torch_inplace:
        return args[0].copy_(ref.call(lib, args[0].clone(), *args[1:]))
    return getattr(args[0], row.name + "_")(*args[1:])


# ------------------------------------------------------------------ sampling
# Rows with kinks sample on a 1/4 grid with a per-input offset (in 1/16), so
# inputs never sit on a kink (abs/relu at 0, maximum/minimum ties, clamp
# bounds) where finite differences and the two libraries may legitimately
# disagree. Comparisons sample on the grid too, so that ties happen.
GRID_OFFSETS = {
    "abs": (2,), "relu": (2,),
    "maximum": (2, 0), "minimum": (2, 0),
    "clamp": (2, 0, 1),
    "clamp_min": (2, 0), "clamp_max": (2, 0),
    "eq": (0, 0), "ne": (0, 0), "lt": (0, 0), "le": (0, 0), "gt": (0, 0), "ge": (0, 0),
}


def sample(row, position, rng, shape):
    """float64 values in ``row.domain``, exactly representable in float32."""
    lo, hi = row.domain
    x = rng.uniform(lo, hi, size=shape)
    if row.name in GRID_OFFSETS:
        x = np.floor(x * 4) / 4 + GRID_OFFSETS[row.name][position] / 16
    return x.astype(np.float32).astype(np.float64)


def sample_scalar(row, position, rng, kind):
    if kind is int:
        lo, hi = row.domain
        return int(rng.integers(math.ceil(lo), math.floor(hi) + 1))
    return float(sample(row, position, rng, ()))


def base_shape(shape, layout):
    """The shape of the contiguous tensor a layout's view is taken from."""
    if layout == "transposed" and len(shape) >= 2:
        return shape[::-1]
    if layout == "strided" and len(shape) >= 1:
        return (*shape[:-1], 2 * shape[-1])
    return shape


def take_view(x, layout):
    """The non-contiguous view of ``x`` (NumPy, nbgrad or torch alike)."""
    ndim = x.ndim
    if layout == "transposed" and ndim >= 2:
        return x.transpose() if isinstance(x, np.ndarray) else x.permute(*reversed(range(ndim)))
    if layout == "strided" and ndim >= 1:
        return x[..., ::2]
    return x


@dataclass
class Slot:
    """One input of a case: a Python number, or a tensor of some shape,
    dtype and layout whose base holds ``values``."""
    shape: tuple = None
    dtype: object = None
    layout: str = "contiguous"
    values: object = None  # a Python number, or the base's values (float64 / bool)

    @property
    def is_tensor(self):
        return self.shape is not None


class Case:
    """Inputs for one row, reproducible from ``seed``; ``build`` makes the
    same inputs in nbgrad and torch."""

    def __init__(self, row, slots, seed):
        self.row, self.slots, self.seed = row, slots, seed
        rng = np.random.default_rng(seed)
        for k, slot in enumerate(slots):
            if not slot.is_tensor:
                slot.values = sample_scalar(row, k, rng, slot.dtype)
            elif slot.dtype is nbgrad.bool:
                slot.values = rng.random(base_shape(slot.shape, slot.layout)) < 0.5
            elif not slot.dtype.is_floating_point:  # shifts also by the width and more
                hi = 70 if "shift" in row.name else 9
                slot.values = rng.integers(-8, hi, base_shape(slot.shape, slot.layout))
            else:
                slot.values = sample(row, k, rng, base_shape(slot.shape, slot.layout))
        self.upstream_values = rng.standard_normal(
            np.broadcast_shapes(*(s.shape for s in slots if s.is_tensor)))

    def __repr__(self):
        parts = [f"{type(s.values).__name__} {s.values!r}" if not s.is_tensor else
                 f"{dtype_name(s.dtype)}{list(s.shape)} {s.layout}" for s in self.slots]
        return f"Case({self.row.name}: {', '.join(parts)}; seed={self.seed})"

    @property
    def tensor_dtypes(self):
        return [s.dtype for s in self.slots if s.is_tensor and s.dtype is not nbgrad.bool]

    @property
    def precision(self):
        """The tolerance to compare with: float32's if any input is float32."""
        return nbgrad.float32 if nbgrad.float32 in self.tensor_dtypes else nbgrad.float64

    def numpy_args(self):
        """The inputs as the reference sees them: the views' values, float64."""
        args = []
        for slot in self.slots:
            if not slot.is_tensor:
                args.append(slot.values)
            else:
                data = take_view(slot.values, slot.layout)
                args.append(data.astype(np.float64) if slot.dtype.is_floating_point else data)
        return args

    def leaves(self, lib, requires_grad=False, device="cpu"):
        """One leaf per tensor input (the contiguous base of its view, nbgrad's
        on ``device``); the floating ones require grad when asked to (whatever
        the row declares differentiable: a missing derivative shows up against
        torch)."""
        leaves = []
        for k, slot in enumerate(self.slots):
            if not slot.is_tensor:
                leaves.append(None)
                continue
            grad = requires_grad and slot.dtype.is_floating_point
            values = slot.values.tolist() if slot.values.ndim == 0 else slot.values
            if lib is nbgrad:
                leaves.append(nbgrad.tensor(values, dtype=slot.dtype, device=device,
                                            requires_grad=grad))
            else:
                leaves.append(torch.tensor(values, dtype=to_torch_dtype(slot.dtype),
                                           requires_grad=grad))
        return leaves

    def args(self, lib, leaves, nonleaf_first=False):
        """The op's arguments: scalars, and views of the leaves. With
        ``nonleaf_first`` the first input is a view of ``leaf * 1``, a
        non-leaf that an in-place op may write into."""
        args = []
        for k, (slot, leaf) in enumerate(zip(self.slots, leaves)):
            if not slot.is_tensor:
                args.append(slot.values)
                continue
            if k == 0 and nonleaf_first:
                leaf = leaf * 1 if leaf.requires_grad else leaf.clone()
            args.append(take_view(leaf, slot.layout))
        return args

    def upstream(self, lib, dtype, device="cpu"):
        """The incoming gradient for ``backward``, in the output's dtype."""
        if lib is nbgrad:
            return nbgrad.tensor(self.upstream_values, dtype=dtype, device=device)
        return torch.tensor(self.upstream_values, dtype=dtype)


def _patterns(row, inplace, differentiable):
    patterns = REFERENCE[row.name].scalars
    if inplace:
        patterns = [p for p in patterns if 0 not in p]
    if differentiable:  # leave at least one input to differentiate
        patterns = [p for p in patterns if any(k not in p for k in row.differentiable)]
        allowed = REFERENCE[row.name].grad_scalars
        patterns = [p for p in patterns if allowed is None or p in allowed]
    return patterns


@st.composite
def cases(draw, row, *, inplace=False, differentiable=False, dtypes=None, max_dims=3):
    """Random inputs for ``row``: mutually broadcastable shapes (0-d
    included), Python numbers where allowed, a random layout per tensor."""
    ref = REFERENCE[row.name]
    dtypes = dtypes or ref.dtypes or FLOATS
    if ref.same_dtype:
        dtypes = (draw(st.sampled_from(dtypes)),)
    inplace = inplace or ref.inplace_only
    scalar_positions = draw(st.sampled_from(_patterns(row, inplace, differentiable)))
    n_tensors = len(row.inputs) - len(scalar_positions)
    shapes = draw(hnp.mutually_broadcastable_shapes(
        num_shapes=n_tensors, min_dims=0, max_dims=max_dims, max_side=3))
    tensor_shapes = list(shapes.input_shapes)
    if inplace or ref.full_first:  # the destination has the broadcast shape
        tensor_shapes[0] = shapes.result_shape
    slots = []
    for k in range(len(row.inputs)):
        if k in scalar_positions:
            slots.append(Slot(dtype=draw(st.sampled_from(ref.numbers))))
            continue
        dtype = nbgrad.bool if k in row.bool_inputs else draw(st.sampled_from(dtypes))
        slots.append(Slot(tensor_shapes.pop(0), dtype, draw(st.sampled_from(LAYOUTS))))
    return Case(row, slots, draw(st.integers(0, 2**32 - 1)))


def _ids(rows):
    return [row.name for row in rows]


DIFFERENTIABLE = [row for row in ROWS if row.differentiable]
NOT_DIFFERENTIABLE = [row for row in ROWS if not row.differentiable]
METHOD_ROWS = [row for row in ROWS if row.method]


# --------------------------------------------------------------------- guard
def test_every_row_has_a_reference():
    """Adding a row without saying how to test it fails here."""
    names = [row.name for row in ROWS]
    missing = [name for name in names if name not in REFERENCE]
    assert not missing, f"rows without a test reference in {__file__}: {missing}"
    stale = sorted(set(REFERENCE) - set(names))
    assert not stale, f"references for rows that no longer exist: {stale}"
    assert len(set(names)) == len(names), "two rows share a name"


def test_rows_describe_themselves():
    for row in ROWS:
        assert row.inputs == tuple(row.forward.__code__.co_varnames[:len(row.inputs)])
        assert all(0 <= i < len(row.inputs) for i in row.differentiable)
        assert row.result in ("promote", "float", "bool", "self")
        assert row.domain[0] < row.domain[1]
        if row.result == "bool":
            assert not row.differentiable, f"{row.name}: a comparison has no gradient"
        if row.method:
            assert callable(getattr(nbgrad.Tensor, row.name))
            assert callable(getattr(nbgrad.Tensor, row.name + "_"))
            assert getattr(nbgrad, row.name) is not None


# ------------------------------------------------------------------- forward
@pytest.mark.parametrize("row", ROWS, ids=_ids(ROWS))
@given(data=st.data())
@examples(8)  # ~110 rows per test: lean for CI (more under HYPOTHESIS_PROFILE=explore)
def test_forward_matches_numpy_and_torch(row, data, device):
    cuda_sample(row, device)
    case = data.draw(cases(row), label="case")
    ref = REFERENCE[row.name]
    expected = ref.numpy(*case.numpy_args())
    results = {}
    for lib in LIBS:
        leaves = case.leaves(lib, device=device)
        args = case.args(lib, leaves, nonleaf_first=ref.inplace_only)
        results[lib] = ref.call(lib, *args)
    out, want = results[nbgrad], results[torch]
    assert isinstance(out, nbgrad.Tensor) and out.device.type == device
    assert dtype_name(out.dtype) == dtype_name(want.dtype)
    assert tuple(out.shape) == tuple(want.shape) == np.shape(expected)
    tol = case.precision if out.dtype.is_floating_point else out.dtype
    assert_close(out, want, dtype=tol)
    assert_close(out, np.asarray(expected).astype(out.dtype.numpy), dtype=tol)
    assert not out.requires_grad and out.grad_fn is None


INTEGERS = [[[1, 2, 3], [3, 1, 2]], [[2, 2, 1], [1, 3, 3]], [[3, 1, 2], [2, 2, 1]]]
MASK = [[True, False, True], [False, True, True]]


@pytest.mark.parametrize("row", ROWS, ids=_ids(ROWS))
def test_integer_inputs_match_torch(row, device):
    """int64 inputs (bool masks kept): the result's dtype and values, or
    PyTorch's refusal, on every device."""
    cuda_sample(row, device)
    numbers = number_only(row)

    def call(lib):
        args = [1 if k in numbers else
                lib.tensor(MASK if k in row.bool_inputs else INTEGERS[k], **on_device(lib, device))
                for k in range(len(row.inputs))]
        return REFERENCE[row.name].call(lib, *args)
    expected = torch_error(lambda: call(torch))
    if expected is not None:
        assert_same_error(call)
    else:
        out = call(nbgrad)
        assert out.device.type == device
        assert_same_tensor(out, call(torch))


def special_values(dtype):
    """NaN, infinities, signed zeros, tiny, huge and subnormal values of both
    signs, and a few plain ones (exact in the dtype)."""
    tiny, huge, subnormal = (1e-30, 1e30, 1e-40) if dtype is nbgrad.float32 else (
        1e-300, 1e300, 1e-310)
    return [math.nan, math.inf, -math.inf, 0.0, -0.0, tiny, -tiny, huge, -huge,
            subnormal, -subnormal, 1.0, -1.5, 0.5, 2.0]


# PyTorch's own ties of +0 and -0 in maximum, minimum and clamp depend on
# whether an element takes its vectorized loop or its scalar tail (vmaxps
# returns the second operand, std::max the first): only the zero is checked.
QUOTIENT_OVERFLOW_NAN = {"fmod", "remainder"}
# At digamma's poles (the negative integers) PyTorch's trigamma reflects with
# sin(pi x) of the rounded product, a few ulp from zero: its "gradient" there is
# rounding noise (16.1 at -1e30 in float32); nbgrad reflects exactly (inf).
POLE_NOISE = {"digamma"}
TIE_SIGN_FREE = {"maximum", "minimum", "clamp", "clamp_min", "clamp_max", "fmax", "fmin"}


def _special_grid(row, dtype):
    """Every combination of the special values over the row's inputs (a
    where's condition alternates; clamp's bounds take every pair too);
    inputs that are always numbers get 1.0."""
    values = special_values(dtype)
    floats = len(tensor_positions(row)) - (row.name == "where")
    if row.name == "fill":
        floats = 1
    columns = [g.reshape(-1) for g in np.meshgrid(*([np.array(values)] * floats), indexing="ij")]
    if row.name == "where":
        columns = [np.arange(columns[0].size) % 2 == 0, *columns]
    for k in sorted(number_only(row)):
        if row.name != "fill":
            columns.insert(k, 1.0)
    return columns


def assert_same_specials(actual, expected, dtype, inputs, signed_zeros=True):
    """NaN where PyTorch has NaN, the same infinities and zeros, signs included
    (``signed_zeros``: of zeros too), finite values within a few ulps."""
    got = np.asarray(actual.detach().numpy(), np.float64)
    want = np.asarray(expected.detach().numpy(), np.float64)
    rtol = 1e-5 if dtype is nbgrad.float32 else 1e-12
    same = np.isclose(got, want, rtol=rtol, atol=0, equal_nan=True)
    signs = np.isnan(want) | (np.signbit(got) == np.signbit(want))
    same &= signs if signed_zeros else signs | (want == 0)
    bad = np.flatnonzero(~same)
    assert not bad.size, [(tuple(float(c[i]) for c in inputs), got[i], want[i]) for i in bad[:8]]


@pytest.mark.parametrize("upstream", [1.0, math.inf, math.nan], ids=["1", "inf", "nan"])
@pytest.mark.parametrize("dtype", FLOATS, ids=dtype_name)
@pytest.mark.parametrize("row", ROWS, ids=_ids(ROWS))
def test_special_values_match_torch(row, dtype, upstream):
    """Each row over every combination of the special values, forward and
    backward, against PyTorch: NaN, infinities and signs of zero exactly.
    Upstream gradients of inf and nan check that a masked gradient is a
    select of zero (PyTorch's where/masked_fill), not ``0 * g``, while a
    derivative that PyTorch writes as a product stays one."""
    if upstream != 1.0 and not row.differentiable:
        pytest.skip("no gradient")
    if row.name == "pow_number":
        pytest.skip("its exponent is a number: test_pow_with_a_number_exponent_at_special_values")
    if integral_only(row):
        pytest.skip("integers only: test_integral_rows_at_extremes_match_torch")
    columns = _special_grid(row, dtype)
    results = {}
    for lib in LIBS:
        float_type = dtype if lib is nbgrad else to_torch_dtype(dtype)
        grad = bool(row.differentiable)
        leaves = [c if isinstance(c, float) else
                  lib.tensor(c, dtype=lib.bool if c.dtype == np.bool_ else float_type,
                             requires_grad=grad and c.dtype != np.bool_) for c in columns]
        args = list(leaves)
        if REFERENCE[row.name].inplace_only:  # copy_/fill_ write into a non-leaf
            args[0] = args[0] * 1
        if row.name == "fill":
            leaves.append(lib.tensor(special_values(dtype)[7], dtype=float_type,
                                     requires_grad=True))
            args.append(leaves[-1])
        out = REFERENCE[row.name].call(lib, *args)
        grads = []
        if grad:
            out.backward(lib.full(tuple(out.shape), upstream, dtype=float_type))
            grads = [leaf.grad for leaf in leaves if not isinstance(leaf, float)
                     and leaf.requires_grad]
        results[lib] = [out, *grads]
    assert dtype_name(results[nbgrad][0].dtype) == dtype_name(results[torch][0].dtype)
    assert len(results[nbgrad]) == len(results[torch])
    for k, (got, want) in enumerate(zip(results[nbgrad], results[torch])):
        if got.dtype is nbgrad.bool:
            assert got.tolist() == want.tolist()
            continue
        if want._is_zerotensor():  # PyTorch's symbolic zero gradient (sgn)
            want = torch.zeros(want.shape, dtype=want.dtype)
        shown = [c for c in columns if not isinstance(c, float)]
        if row.name in QUOTIENT_OVERFLOW_NAN and k == 0:
            # PyTorch's vectorized fmod gives nan where |a / b| overflows; nbgrad
            # C's exact fmod (as PyTorch's own scalar loop)
            a, b = (np.asarray(c, dtype.numpy) for c in columns[:2])
            with np.errstate(all="ignore"):
                keep = torch.tensor(~(np.isinf(a / b) & np.isfinite(a) & (b != 0)))
            got, want = nbgrad.tensor(got.detach().numpy()[keep.numpy()]), want.detach()[keep]
            shown = [np.asarray(c)[keep.numpy()] for c in shown]
        if row.name in POLE_NOISE and k > 0:
            a = np.asarray(columns[0], dtype.numpy)
            keep = ~((a < 0) & (a == np.trunc(a)))
            got, want = nbgrad.tensor(got.detach().numpy()[keep]), want.detach()[torch.tensor(keep)]
            shown = [np.asarray(c)[keep] for c in shown]
        assert_same_specials(got, want, dtype, shown,
                             signed_zeros=k > 0 or row.name not in TIE_SIGN_FREE)


ZERO_TIES = [
    ("maximum", lambda lib, a, b: lib.maximum(a, b)),
    ("minimum", lambda lib, a, b: lib.minimum(a, b)),
    ("maximum-strided", lambda lib, a, b: lib.maximum(a.reshape(2, 2).t(), b.reshape(2, 2).t())),
    ("minimum-mixed-dtypes", lambda lib, a, b: lib.minimum(a, b.double())),
    ("clamp-min", lambda lib, a, b: a.clamp(min=b)),
    ("clamp-max", lambda lib, a, b: a.clamp(max=b)),
]


@pytest.mark.parametrize("dtype", FLOATS, ids=dtype_name)
@pytest.mark.parametrize("op", [c[1] for c in ZERO_TIES], ids=[c[0] for c in ZERO_TIES])
def test_a_tie_of_zeros_gives_the_first_operand(op, dtype):
    """Below one SIMD vector PyTorch runs its scalar loop, std::max/std::min:
    a tie of +0 and -0 gives the first operand (see TIE_SIGN_FREE)."""
    first, second = [0.0, -0.0, -0.0, 0.0], [-0.0, 0.0, -0.0, 0.0]
    got, want = (op(lib, *(lib.tensor(v, dtype=dtype if lib is nbgrad else to_torch_dtype(dtype))
                           for v in (first, second))) for lib in (nbgrad, torch))
    assert np.signbit(got.numpy()).tolist() == np.signbit(want.numpy()).tolist()


# pow(Tensor, Scalar): PyTorch computes these exponents as sqrt, 1 / sqrt,
# products and reciprocals (in the gradient's a**(b - 1) too); others as pow.
NUMBER_EXPONENTS = [0.5, -0.5, 2, 3, -1, -2, 1.5, 4, 1, 0, -1.5, 0.25, 2.5]


@pytest.mark.parametrize("upstream", [1.0, math.inf], ids=["1", "inf"])
@pytest.mark.parametrize("dtype", FLOATS, ids=dtype_name)
def test_pow_with_a_number_exponent_at_special_values(dtype, upstream):
    """``tensor([-inf, -0.]) ** 0.5`` is ``[nan, -0.]`` (sqrt), not pow's ``[inf, 0.]``."""
    values = special_values(dtype)
    for exponent in NUMBER_EXPONENTS:
        results = {}
        for lib in LIBS:
            float_type = dtype if lib is nbgrad else to_torch_dtype(dtype)
            x = lib.tensor(values, dtype=float_type, requires_grad=True)
            out = x ** exponent
            out.backward(lib.full((len(values),), upstream, dtype=float_type))
            results[lib] = [out, x.grad]
        assert node_name(results[nbgrad][0].grad_fn) == "PowBackward"
        for got, want in zip(results[nbgrad], results[torch]):
            assert_same_specials(got, want, dtype, [values, [exponent] * len(values)])
    x = nbgrad.tensor([-math.inf, -0.0, 4.0])
    for same in (nbgrad.pow(x, 0.5), x.pow(0.5), x.clone().pow_(0.5), x.clone().__ipow__(0.5)):
        assert_same_specials(same, torch.tensor([math.nan, -0.0, 2.0]), nbgrad.float32, [x.tolist()])


MASKED_UNDER_INF = {  # sqrt's gradient at 0 is inf: the masked branch must still give 0
    "relu": lambda lib, x: x.relu().sqrt(),
    "clamp": lambda lib, x: x.clamp(min=0).sqrt(),
    "clamp-tensor-bounds": lambda lib, x: x.clamp(lib.zeros_like(x), lib.ones_like(x)).sqrt(),
    "where": lambda lib, x: lib.where(x > 0, x, lib.zeros_like(x)).sqrt(),
    "maximum": lambda lib, x: lib.maximum(x, lib.zeros_like(x)).sqrt(),
    "minimum": lambda lib, x: (-lib.minimum(x, lib.zeros_like(x))).sqrt(),
    "pow-0": lambda lib, x: (x ** 0.0 - 1).sqrt(),
    "pow-tensor-0": lambda lib, x: (x ** lib.zeros_like(x) - 1).sqrt(),
}


@pytest.mark.parametrize("name", sorted(MASKED_UNDER_INF))
def test_masked_gradient_stays_zero_under_an_infinite_upstream(name):
    """``x.relu().sqrt()`` at x < 0: PyTorch's gradient is 0, not 0 * inf = nan."""
    grads = {}
    for lib in LIBS:
        x = lib.tensor([-1.0, 4.0, 0.0], requires_grad=True)
        MASKED_UNDER_INF[name](lib, x).sum().backward()
        grads[lib] = x.grad
    assert_same_specials(grads[nbgrad], grads[torch], nbgrad.float32, [[-1.0, 4.0, 0.0]])
    assert not np.isnan(grads[nbgrad].numpy()).any()


@pytest.mark.parametrize("dtype", FLOATS, ids=dtype_name)
def test_div_gradient_at_extreme_magnitudes_matches_torch(dtype):
    """d(a/b)/db = -g * ((a / b) / b), as PyTorch: b * b over- or underflows."""
    a_values, b_values = [1e-30, 1e30, 1e-30, 3e38], [1e-25, 1e25, 1e30, 1e38]
    results = {}
    for lib in LIBS:
        float_type = dtype if lib is nbgrad else to_torch_dtype(dtype)
        a = lib.tensor(a_values, dtype=float_type, requires_grad=True)
        b = lib.tensor(b_values, dtype=float_type, requires_grad=True)
        (a / b).sum().backward()
        results[lib] = [a.grad, b.grad]
    for got, want in zip(results[nbgrad], results[torch]):
        assert_same_specials(got, want, dtype, [a_values, b_values])
    assert np.isfinite(results[nbgrad][1].numpy()).all()


REFUSED = {  # PyTorch refuses these: same error type and text
    "int ** -1": lambda lib: lib.tensor([1, 2, 3]) ** -1,
    "int.pow(-2)": lambda lib: lib.tensor([1, 2, 3]).pow(-2),
    "pow(int, -1)": lambda lib: lib.pow(lib.tensor([1, 2]), -1),
    "0-d int ** -1": lambda lib: lib.tensor(2) ** -1,
    "bool ** -1": lambda lib: lib.tensor([True, False]) ** -1,
    "bool ** bool": lambda lib: lib.tensor([True]) ** lib.tensor([False]),
    "-bool": lambda lib: -lib.tensor([True, False]),
    "bool.neg()": lambda lib: lib.tensor([True]).neg(),
    "bool - bool": lambda lib: lib.tensor([True]) - lib.tensor([False]),
    "bool - True": lambda lib: lib.tensor([True]) - True,
    "True - bool": lambda lib: True - lib.tensor([True]),
    "bool - 1": lambda lib: lib.tensor([True]) - 1,
    "1 - bool": lambda lib: 1 - lib.tensor([True]),
    "float - bool": lambda lib: lib.tensor([1.0]) - lib.tensor([True]),
    "int - True": lambda lib: lib.tensor([1, 2]) - True,
    "bool - 0-d bool": lambda lib: lib.tensor([True, False]) - lib.tensor(True),
    "bool.sub(int, shapes differ)": lambda lib: lib.tensor([True, False]).sub(lib.tensor([1, 2, 3])),
    "abs(bool)": lambda lib: abs(lib.tensor([True])),
    "bool.relu()": lambda lib: lib.tensor([True]).relu(),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_integer_and_bool_arithmetic_matches_torch(name):
    assert_same_error(REFUSED[name])


REFUSED_INPLACE = {  # name: (values, dtype, the write)
    "int.pow_(-1)": ([1, 2, 3], "int64", lambda t: t.pow_(-1)),
    "int **= -1": ([1, 2, 3], "int64", lambda t: t.__ipow__(-1)),
    "bool.neg_()": ([True, False], "bool", lambda t: t.neg_()),
    "bool.sub_(bool)": ([True, False], "bool", lambda t: t.sub_(t)),
    "bool -= True": ([True, False], "bool", lambda t: t.__isub__(True)),
    "bool.relu_()": ([True, False], "bool", lambda t: t.relu_()),
}


@pytest.mark.parametrize("name", sorted(REFUSED_INPLACE))
def test_refused_inplace_arithmetic_changes_nothing(name):
    values, dtype, write = REFUSED_INPLACE[name]
    for lib in LIBS:
        t = lib.tensor(values, dtype=getattr(lib, dtype))
        with pytest.raises(RuntimeError):
            write(t)
        assert t.tolist() == values and t._version == 0
    assert_same_error(lambda lib: write(lib.tensor(values, dtype=getattr(lib, dtype))))


def test_integer_pow_checks_the_exponent_on_every_call():
    """Calls of one kind share a cached plan (and the straight-line path):
    the exponent's value is still checked each time."""
    t = nbgrad.tensor([1, 2, 3])
    assert (t ** 2).tolist() == [1, 4, 9] and t.pow(0).tolist() == [1, 1, 1]
    for call in (lambda: t ** -1, lambda: t.pow(-3), lambda: nbgrad.pow(t.t(), -1)):
        with pytest.raises(RuntimeError, match="Integers to negative integer powers"):
            call()
    # Tensor exponents compute, as in PyTorch (an integer 1 / n is 0).
    for lib in LIBS:
        assert (lib.tensor([1, 2, 3]) ** lib.tensor([-1, -1, 2])).tolist() == [1, 0, 9]
    assert (2 ** nbgrad.tensor([-1, 2])).tolist() == [0, 4]


@pytest.mark.parametrize("exponent", [-1, -2, -3, 0, 2], ids=str)
def test_integer_pow_with_negative_tensor_exponents_matches_torch(exponent):
    """PyTorch: 1 and -1 give +-1, every other base 0, zero too."""
    got, want = ((lib.tensor([-2, -1, 0, 1, 2, 3]) ** lib.tensor([exponent])).tolist()
                 for lib in (nbgrad, torch))
    assert got == want


@pytest.mark.parametrize("row", METHOD_ROWS, ids=_ids(METHOD_ROWS))
def test_row_function_and_method_agree(row):
    """``row(...)``, ``nbgrad.<name>(...)`` and ``t.<name>(...)`` are one op."""
    rng = np.random.default_rng(0)
    args = [nbgrad.tensor(sample(row, k, rng, (2, 3))) for k in range(len(row.inputs))]
    if integral_only(row):
        args = [nbgrad.tensor(rng.integers(-8, 9, (2, 3))) for _ in row.inputs]
    if row.name == "clamp":
        args[1:] = [-0.5, 0.5]
        by_method = args[0].clamp(*args[1:])
    else:
        by_method = getattr(args[0], row.name)(*args[1:])
        assert_same_tensor(getattr(nbgrad, row.name)(*args), torch.tensor(by_method.numpy()))
    assert_same_tensor(row(*args), torch.tensor(by_method.numpy()))


# ------------------------------------------------------------------ backward
def _backward(row, case, lib, device="cpu"):
    ref = REFERENCE[row.name]
    leaves = case.leaves(lib, requires_grad=True, device=device)
    args = case.args(lib, leaves, nonleaf_first=ref.inplace_only)
    out = ref.call(lib, *args)
    out.backward(case.upstream(lib, out.dtype, device))
    return out, [_dense(leaf.grad) if leaf is not None and leaf.requires_grad else None
                 for leaf in leaves]


def _dense(grad):
    """PyTorch's symbolic zero gradient (sgn's) as zeros; others as they are."""
    if isinstance(grad, torch.Tensor) and grad._is_zerotensor():
        return torch.zeros(grad.shape, dtype=grad.dtype)
    return grad


@pytest.mark.parametrize("row", DIFFERENTIABLE, ids=_ids(DIFFERENTIABLE))
@given(data=st.data())
@examples(8)  # ~110 rows per test: lean for CI (more under HYPOTHESIS_PROFILE=explore)
def test_backward_matches_torch(row, data, device):
    cuda_sample(row, device)
    case = data.draw(cases(row, differentiable=True), label="case")
    out, grads = _backward(row, case, nbgrad, device)
    want, want_grads = _backward(row, case, torch)
    if case.slots[0].is_tensor or row.name == "div":  # torch names 2 - t RsubBackward
        assert node_name(out.grad_fn) == node_name(want.grad_fn)
    for k, (g, w) in enumerate(zip(grads, want_grads)):
        assert (g is None) == (w is None), f"input {k}: grad {g} but torch's {w}"
        if g is not None:
            assert dtype_name(g.dtype) == dtype_name(w.dtype) and g.device == out.device
            assert_grad_close(row, g, w, case)


@pytest.mark.parametrize("row", DIFFERENTIABLE, ids=_ids(DIFFERENTIABLE))
@given(data=st.data())
@examples(6)
def test_gradcheck(row, data):
    """Analytical gradients equal central finite differences (float64)."""
    case = data.draw(cases(row, differentiable=True, dtypes=(nbgrad.float64,)), label="case")
    ref = REFERENCE[row.name]
    leaves = case.leaves(nbgrad, requires_grad=True)
    inputs = [leaf for leaf in leaves if leaf is not None]

    def func(*tensors):
        it = iter(tensors)
        full = [next(it) if leaf is not None else None for leaf in leaves]
        return ref.call(nbgrad, *case.args(nbgrad, full, nonleaf_first=ref.inplace_only))

    assert nbgrad.autograd.gradcheck(func, inputs)


KINKS = {  # inputs exactly on a kink: compare with PyTorch's convention there
    "abs": [[-1.0, 0.0, 2.0]],
    "relu": [[-1.0, 0.0, 2.0]],
    "maximum": [[1.0, 0.0, 2.0], [1.0, 0.5, 2.0]],
    "minimum": [[1.0, 0.0, 2.0], [1.0, 0.5, 2.0]],
    "clamp": [[-1.0, 0.0, 0.5, 1.0, 2.0], [0.0], [1.0]],
    "pow": [[0.0, 0.0, 2.0], [2.0, 0.0, 0.0]],
    "sqrt": [[0.0, 1.0]],
    "div": [[1.0, 0.0, -1.0], [0.0, 1.0, 0.0]],
    "log": [[0.0, 1.0]],
}


@pytest.mark.parametrize("name", sorted(KINKS))
def test_gradient_at_kinks_matches_torch(name):
    """Ties split the gradient; abs/relu give 0 at 0; clamp passes the
    gradient at its bounds; pow/sqrt/div/log at 0 give PyTorch's inf/nan/0."""
    row = nbgrad.declarations.op_table.BY_NAME[name]
    results = {}
    for lib in LIBS:
        inputs = [lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in KINKS[name]]
        out = REFERENCE[name].call(lib, *inputs)
        out.backward(lib.ones_like(out))
        results[lib] = [t.grad for t in inputs]
    assert len(results[nbgrad]) == len(row.inputs)
    for g, w in zip(results[nbgrad], results[torch]):
        assert_same_tensor(g, w)


def test_clamp_with_crossed_bounds_matches_torch():
    """min > max: PyTorch returns max everywhere, and the gradient goes to max."""
    results = {}
    for lib in LIBS:
        x = lib.tensor([-1.0, 0.5, 3.0], requires_grad=True)
        lo = lib.tensor([2.0, 2.0, 2.0], requires_grad=True)
        hi = lib.tensor([1.0, 1.0, 1.0], requires_grad=True)
        out = x.clamp(lo, hi)
        out.backward(lib.tensor([1.0, 2.0, 3.0]))
        results[lib] = [out, x.grad, lo.grad, hi.grad]
        results[lib].append(x.detach().clamp(2.0, 1.0))
    for a, b in zip(results[nbgrad], results[torch]):
        assert_same_tensor(a, b)


@pytest.mark.parametrize("row", NOT_DIFFERENTIABLE, ids=_ids(NOT_DIFFERENTIABLE))
def test_rows_without_derivatives_do_not_record(row):
    if integral_only(row):
        pytest.skip("integers only: nothing requires grad")
    if row.name == "floor_divide":
        pytest.skip("PyTorch records it (its backward refuses): "
                    "test_floor_divide_records_a_node_whose_backward_refuses_like_torch")
    results = {}
    for lib in LIBS:
        args = [1.0 if k in number_only(row) else
                lib.tensor([1.0 + k, 2.0], requires_grad=True) for k in range(len(row.inputs))]
        results[lib] = REFERENCE[row.name].call(lib, *args)
    out, want = results[nbgrad], results[torch]
    assert out.requires_grad is want.requires_grad is False
    assert out.grad_fn is None and want.grad_fn is None
    assert_same_tensor(out, want)


@pytest.mark.parametrize("row", DIFFERENTIABLE, ids=_ids(DIFFERENTIABLE))
def test_no_grad_records_nothing(row):
    rng = np.random.default_rng(1)
    x = nbgrad.tensor(sample(row, 0, rng, (3,)), requires_grad=True)
    args = [x.detach() * 1 if REFERENCE[row.name].inplace_only else x]
    args += [1.0 if k in number_only(row) else nbgrad.tensor(sample(row, k, rng, (3,)))
             for k in range(1, len(row.inputs))]
    if row.name == "where":
        args = [args[1] > 0, x, args[2]]
    elif row.name == "fill":
        args[1] = 2.5
    with nbgrad.no_grad():
        out = REFERENCE[row.name].call(nbgrad, *args)
    assert not out.requires_grad and out.grad_fn is None


# -------------------------------------------------------- in-place variants
def _inplace(row, case, lib, device="cpu"):
    leaves = case.leaves(lib, requires_grad=REFERENCE[row.name].inplace_grad, device=device)
    args = case.args(lib, leaves, nonleaf_first=True)
    y = args[0]
    version = y._version
    result = call_inplace(row, lib, *args)
    assert result is y, "an in-place method returns self"
    bumped = y._version - version
    if y.requires_grad:
        y.backward(case.upstream(lib, y.dtype, device))
    grads = [_dense(leaf.grad) if leaf is not None and leaf.requires_grad else None
             for leaf in leaves]
    return y, bumped, grads


@pytest.mark.parametrize("row", METHOD_ROWS, ids=_ids(METHOD_ROWS))
@given(data=st.data())
@examples(8)  # ~110 rows per test: lean for CI (more under HYPOTHESIS_PROFILE=explore)
def test_inplace_variant_matches_torch(row, data, device):
    """``y = x * 1; y.<name>_(...)`` (also through a non-contiguous view of
    y's storage): values, version bump and gradients as in PyTorch."""
    cuda_sample(row, device)
    case = data.draw(cases(row, inplace=True), label="case")
    refused = torch_error(lambda: _inplace(row, case, torch))
    if refused is not None:  # asinh_ of a tensor that requires grad, floor_divide_'s backward
        with pytest.raises(type(refused), match=re.escape(str(refused))):
            _inplace(row, case, nbgrad, device)
        return
    y, bumped, grads = _inplace(row, case, nbgrad, device)
    want, want_bumped, want_grads = _inplace(row, case, torch)
    assert dtype_name(y.dtype) == dtype_name(want.dtype)
    assert_close(y.detach(), want, dtype=case.precision)
    assert bumped == want_bumped == 1
    if REFERENCE[row.name].torch_inplace:
        assert node_name(y.grad_fn) == node_name(want.grad_fn)
    for k, (g, w) in enumerate(zip(grads, want_grads)):
        assert (g is None) == (w is None), f"input {k}: grad {g} but torch's {w}"
        if g is not None:
            assert_grad_close(row, g, w, case)


AUGMENTED = {"+=": operator.iadd, "-=": operator.isub, "*=": operator.imul, "/=": operator.itruediv}
_AUGMENTED_ROW = {"+=": "add", "-=": "sub", "*=": "mul", "/=": "div"}


@pytest.mark.parametrize("op", sorted(AUGMENTED))
@given(data=st.data())
@examples(15)
def test_augmented_assignment_matches_torch(op, data, device):
    """``y += b`` writes into y (same object, version bumped) with y's history rebased."""
    row = nbgrad.declarations.op_table.BY_NAME[_AUGMENTED_ROW[op]]
    case = data.draw(cases(row, inplace=True), label="case")
    results = {}
    for lib in LIBS:
        leaves = case.leaves(lib, requires_grad=True, device=device)
        y, other = case.args(lib, leaves, nonleaf_first=True)
        before, version = y, y._version
        y = AUGMENTED[op](y, other)
        assert y is before
        y.backward(case.upstream(lib, y.dtype, device))
        results[lib] = (y, y._version - version, [t.grad for t in leaves if t is not None])
    (y, bumped, grads), (want, want_bumped, want_grads) = results[nbgrad], results[torch]
    assert_close(y.detach(), want, dtype=case.precision)
    assert bumped == want_bumped == 1
    assert node_name(y.grad_fn) == node_name(want.grad_fn)
    for g, w in zip(grads, want_grads):
        assert_close(g, w, dtype=case.precision)


def test_power_assignment_is_in_place():
    for lib in LIBS:
        t = lib.tensor([1.0, 2.0])
        before = t
        t **= 2
        assert t is before and t._version == 1
        assert t.tolist() == [1.0, 4.0]


_INPLACE_DTYPE_ROWS = ("add", "mul", "div", "exp", "lt", "clamp")
_DTYPE_VALUES = {
    "bool": [True, False, True],
    "int64": [-2, 0, 3],
    "float32": [-1.5, 0.0, 2.5],
    "float64": [-1.5, 0.0, 2.5],
}


def _others(lib, name):
    yield f"{name} tensor", lib.tensor(_DTYPE_VALUES[name], dtype=getattr(lib, name))
    yield f"0-d {name} tensor", lib.tensor(_DTYPE_VALUES[name][2], dtype=getattr(lib, name))


def _type_words(message):
    return re.sub(r"\b(long int|long)\b", "long", message.lower())


@pytest.mark.parametrize("row", _INPLACE_DTYPE_ROWS)
@pytest.mark.parametrize("self_dtype", list(_DTYPE_VALUES))
def test_inplace_result_type_rules_match_torch(row, self_dtype):
    """The result may be cast to self's dtype only within its category (bool <
    integer < floating); otherwise the same error as PyTorch, and nothing changes."""
    row = nbgrad.declarations.op_table.BY_NAME[row]
    others = {lib: [("", None)] if len(row.inputs) == 1 else
              [*(o for name in _DTYPE_VALUES for o in _others(lib, name)),
               ("True", True), ("2", 2), ("2.5", 2.5)] for lib in LIBS}
    for (label, other), (_, t_other) in zip(others[nbgrad], others[torch]):
        def run(lib, other):
            t = lib.tensor(_DTYPE_VALUES[self_dtype], dtype=getattr(lib, self_dtype))
            args = () if other is None else (other, other) if row.name == "clamp" else (other,)
            return t, lambda: getattr(t, row.name + "_")(*args)

        t, nb_call = run(nbgrad, other)
        tt, torch_call = run(torch, t_other)
        expected = torch_error(torch_call)
        if isinstance(expected, NotImplementedError):
            continue  # torch has no kernel for the dtype (e.g. clamp of bool): not a type rule
        if expected is not None:
            with pytest.raises(type(expected)) as info:
                nb_call()
            # torch spells the type "Long", "bool" or "long int" depending on the op
            assert _type_words(str(info.value)) == _type_words(str(expected)), label
            assert t._version == 0 and t.tolist() == _DTYPE_VALUES[self_dtype], \
                "a refused in-place op changed its destination"
        else:
            nb_call()
            assert_same_tensor(t, tt)
            assert t._version == 1


def test_inplace_messages():
    with pytest.raises(RuntimeError) as info:
        nbgrad.tensor([1, 2, 3]).div_(2)
    assert str(info.value) == "result type Float can't be cast to the desired output type Long"
    t = nbgrad.ones(3)
    with pytest.raises(RuntimeError) as info:
        t.add_(nbgrad.ones(2, 3))
    assert str(info.value) == "output with shape [3] doesn't match the broadcast shape [2, 3]"
    assert t._version == 0
    expected = torch_error(lambda: torch.ones(3).add_(torch.ones(2, 3)))
    assert str(expected) == str(info.value)


@pytest.mark.parametrize("row", METHOD_ROWS, ids=_ids(METHOD_ROWS))
def test_inplace_on_a_leaf_that_requires_grad_is_refused(row):
    x = nbgrad.tensor([0.5, 1.5], requires_grad=True)
    args = [nbgrad.tensor([1.0, 1.0])] * (len(row.inputs) - 1)
    if row.name == "clamp":
        args = [0.0, 1.0]
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in "
                                           "an in-place operation."):
        call_inplace(row, nbgrad, x, *args)
    assert x._version == 0 and x.tolist() == [0.5, 1.5]


BINARY_METHOD_ROWS = [r for r in METHOD_ROWS if r.differentiable and len(r.inputs) == 2]


@pytest.mark.parametrize("row", BINARY_METHOD_ROWS, ids=_ids(BINARY_METHOD_ROWS))
def test_inplace_into_a_tensor_without_grad_records_the_other_input(row):
    """``z = tensor(...); z.<op>_(x)`` with x requiring grad: z gets a history."""
    results = {}
    for lib in LIBS:
        z = lib.tensor([0.75, 1.25], dtype=lib.float64)
        x = lib.tensor([1.5, 0.5], dtype=lib.float64, requires_grad=True)
        call_inplace(row, lib, z, x)
        assert z.requires_grad
        z.backward(lib.tensor([1.0, -2.0], dtype=lib.float64))
        results[lib] = (z, x.grad)
    for a, b in zip(results[nbgrad], results[torch]):
        assert_same_tensor(a, b)


def test_inplace_refuses_a_partly_overlapping_input_like_torch():
    for lib in LIBS:
        base = lib.tensor([1.0, 2.0, 3.0, 4.0])
        with pytest.raises(RuntimeError, match="refer to a single memory location"):
            base[0:3].add_(base[1:4])
        assert base.tolist() == [1.0, 2.0, 3.0, 4.0] and base._version == 0
        same = lib.tensor([1.0, 2.0, 3.0])  # full overlap: allowed by both
        same.mul_(same)
        assert same.tolist() == [1.0, 4.0, 9.0]


def test_saved_input_modified_in_place_raises_like_torch():
    messages = {}
    for lib in LIBS:
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 1
        out = y.exp() * y  # mul saves y
        y.add_(1)
        with pytest.raises(RuntimeError) as info:
            out.sum().backward()
        messages[lib] = normalize_error(str(info.value))
    assert messages[nbgrad] == messages[torch]


@pytest.mark.parametrize("call", [lambda x, b: x ** b, lambda x, b: x.pow(b),
                                  lambda x, b: (x * 1).pow_(b)], ids=["op", "method", "inplace"])
def test_pow_with_a_bool_exponent_refuses_backward_like_torch(call):
    # PyTorch's pow_backward computes exponent - 1: the forward works, backward refuses.
    def run(L):
        x = L.tensor([0.5, 2.0], requires_grad=True)
        y = call(x, L.tensor([True, False]))
        y.sum().backward()
    assert_same_error(run)


def test_pow_with_a_bool_exponent_needs_no_refusal_without_a_base_gradient():
    x, b = nbgrad.tensor([0.5, 2.0]), nbgrad.tensor([True, False])
    np.testing.assert_array_equal((x ** b).numpy(), [0.5, 1.0])
    base = nbgrad.tensor([True, False])  # a bool base, a float exponent needing a gradient
    e = nbgrad.tensor([0.5, 2.0], requires_grad=True)
    (base ** e).sum().backward()
    te = torch.tensor([0.5, 2.0], requires_grad=True)
    (torch.tensor([True, False]) ** te).sum().backward()
    np.testing.assert_array_equal(e.grad.numpy(), te.grad.numpy())


# ------------------------------------------------ issue 15: more than a row call
INT_EXTREMES = [-2 ** 63, -2 ** 62, -9, -1, 0, 1, 7, 63, 64, 65, 2 ** 62, 2 ** 63 - 1]
INTEGRAL_ROWS = [row for row in ROWS if row.name in REFERENCE and integral_only(row)]


@pytest.mark.parametrize("row", INTEGRAL_ROWS, ids=_ids(INTEGRAL_ROWS))
def test_integral_rows_at_extremes_match_torch(row, device):
    """Every pair of extreme int64 values (shifts by a negative amount or by
    the width and more), and bool operands where PyTorch takes them."""
    cuda_sample(row, device)
    n = len(row.inputs)
    grid = [g.reshape(-1) for g in np.meshgrid(*([np.array(INT_EXTREMES)] * n), indexing="ij")]
    bools = [np.array([True, False, True, False]), np.array([True, True, False, False])][:n]
    for columns in (grid, bools):
        def call(lib):
            return REFERENCE[row.name].call(lib, *(lib.tensor(c, **on_device(lib, device))
                                                   for c in columns))
        if torch_error(lambda: call(torch)) is not None:
            assert_same_error(call)
        else:
            assert_same_tensor(call(nbgrad), call(torch))


OPERATOR_CALLS = {  # (values of a, values of b, the expression)
    "a // b": lambda a, b: a // b, "a % b": lambda a, b: a % b,
    "3 // a": lambda a, b: 3 // a, "-3.5 % a": lambda a, b: -3.5 % a,
    "a // -2": lambda a, b: a // -2, "a % 2.5": lambda a, b: a % 2.5,
    "a & b": lambda a, b: a & b, "a | b": lambda a, b: a | b, "a ^ b": lambda a, b: a ^ b,
    "~a": lambda a, b: ~a, "a << b": lambda a, b: a << b, "a >> b": lambda a, b: a >> b,
    "5 & a": lambda a, b: 5 & a, "1 << a": lambda a, b: 1 << a, "-64 >> a": lambda a, b: -64 >> a,
    "a ^ True": lambda a, b: a ^ True, "2 | a": lambda a, b: 2 | a,
}
OPERANDS = {
    "int64": ([7, -7, 3, 0, 12], [2, 3, -4, 5, 1]),
    "bool": ([True, False, True, False, True], [True, True, False, False, True]),
    "float32": ([7.5, -7.25, 3.0, -0.0, 1.0], [2.0, 3.0, -4.0, 5.0, -0.5]),
}


@pytest.mark.parametrize("dtype", sorted(OPERANDS))
@pytest.mark.parametrize("expr", sorted(OPERATOR_CALLS))
def test_operators_match_torch(expr, dtype):
    """``// % & | ^ ~ << >>``, reflected too: values and dtypes, or PyTorch's error."""
    def call(lib):
        a, b = (lib.tensor(v, dtype=getattr(lib, dtype)) for v in OPERANDS[dtype])
        return OPERATOR_CALLS[expr](a, b)
    if torch_error(lambda: call(torch)) is not None:
        assert_same_error(call)
    else:
        assert_same_tensor(call(nbgrad), call(torch))


AUGMENTED_15 = {"//=": operator.ifloordiv, "%=": operator.imod, "&=": operator.iand,
                "|=": operator.ior, "^=": operator.ixor, "<<=": operator.ilshift,
                ">>=": operator.irshift}


@pytest.mark.parametrize("dtype", sorted(OPERANDS))
@pytest.mark.parametrize("op", sorted(AUGMENTED_15))
def test_augmented_operators_write_in_place_like_torch(op, dtype):
    results = {}
    for lib in LIBS:
        a, b = (lib.tensor(v, dtype=getattr(lib, dtype)) for v in OPERANDS[dtype])
        try:
            y = AUGMENTED_15[op](a, b)
        except Exception as error:  # noqa: BLE001 - compared below
            results[lib] = (type(error), str(error), a.tolist(), a._version)
            continue
        assert y is a
        results[lib] = (a, a._version)
    got, want = results[nbgrad], results[torch]
    if isinstance(want[0], type):
        assert got == want
    else:
        assert_same_tensor(got[0], want[0])
        assert got[1] == want[1] == 1


ZERO_DIVISION = {
    "int // 0": lambda lib: lib.tensor([5, -7]) // 0,
    "int % tensor with 0": lambda lib: lib.tensor([5, -7]) % lib.tensor([0, 2]),
    "fmod(int, 0)": lambda lib: lib.fmod(lib.tensor([5, -7]), 0),
    "remainder(5, int with 0)": lambda lib: lib.remainder(5, lib.tensor([0, 2])),
    "floor_divide_(0)": lambda lib: lib.tensor([5, -7]).floor_divide_(0),
    "int //= 0": lambda lib: operator.ifloordiv(lib.tensor([5, -7]), lib.tensor(0)),
    "bool // bool": lambda lib: lib.tensor([True]) // lib.tensor([True]),
    "float & float": lambda lib: lib.tensor([1.0]) & lib.tensor([1.0]),
    "~float": lambda lib: ~lib.tensor([1.0]),
    "float << 1": lambda lib: lib.tensor([1.0]) << 1,
    "bool << bool": lambda lib: lib.tensor([True]) << lib.tensor([True]),
    "int & 1.5": lambda lib: lib.tensor([1]) & 1.5,
    "frac(int)": lambda lib: lib.tensor([1]).frac(),
    "hypot(int, int)": lambda lib: lib.hypot(lib.tensor([1]), lib.tensor([1])),
    "atan2(float, 2)": lambda lib: lib.atan2(lib.tensor([1.0]), 2),
    "lerp(float, double, 0.5)": lambda lib: lib.lerp(lib.tensor([1.0]), lib.tensor([1.0]).double(),
                                                     0.5),
    "lerp(int, int, int)": lambda lib: lib.lerp(lib.tensor([1]), lib.tensor([1]), lib.tensor([1])),
    "addcdiv(int)": lambda lib: lib.addcdiv(lib.tensor([1.0]), lib.tensor([1]), lib.tensor([1])),
    "addcmul(bool)": lambda lib: lib.addcmul(*[lib.tensor([True])] * 3),
    "round(int, decimals=1)": lambda lib: lib.round(lib.tensor([1]), decimals=1),
    "round(decimals=1.5)": lambda lib: lib.round(lib.tensor([1.0]), decimals=1.5),
    "floor(bool)": lambda lib: lib.floor(lib.tensor([True])),
    "isclose(int, double)": lambda lib: lib.isclose(lib.tensor([1]), lib.tensor([1.0]).double()),
    "isclose(rtol=-1)": lambda lib: lib.isclose(lib.tensor([1.0]), lib.tensor([1.0]), rtol=-1),
    "isclose(atol=-0.5)": lambda lib: lib.isclose(lib.tensor([1.0]), lib.tensor([1.0]), atol=-0.5),
    "isclose(t, 2.0)": lambda lib: lib.isclose(lib.tensor([1.0]), 2.0),
    "logical_and(t, 1)": lambda lib: lib.logical_and(lib.tensor([1.0]), 1),
    "bool.square_()": lambda lib: lib.tensor([True]).square_(),
    "int.rsqrt_()": lambda lib: lib.tensor([4]).rsqrt_(),
}


@pytest.mark.parametrize("name", sorted(ZERO_DIVISION))
def test_refusals_match_torch(name):
    """Integer division by zero (PyTorch's CPU kernels raise), dtypes without
    a kernel, bad keyword values: the same error type and text."""
    assert_same_error(ZERO_DIVISION[name])


KEYWORD_CALLS = {
    "round(decimals=-1)": lambda lib, x, y: lib.round(x * 37, decimals=-1),
    "round(decimals=3)": lambda lib, x, y: x.round(decimals=3),
    "round_(decimals=1)": lambda lib, x, y: (x * 1).round_(decimals=1),
    "round_()": lambda lib, x, y: (x * 1).round_(),
    "nan_to_num()": lambda lib, x, y: lib.nan_to_num(lib.log(x) / x),
    "nan_to_num(posinf=1e39)": lambda lib, x, y: lib.nan_to_num(lib.log(x) / x, posinf=1e39,
                                                               neginf=-7),
    "nan_to_num_(nan=2)": lambda lib, x, y: (lib.log(x) / x).nan_to_num_(nan=2),
    "nan_to_num(int)": lambda lib, x, y: lib.nan_to_num(lib.tensor([1, 2]), nan=1.5),
    "isclose()": lambda lib, x, y: lib.isclose(x, x + 1e-7),
    "isclose(equal_nan)": lambda lib, x, y: lib.isclose(x.log(), x.log(), equal_nan=True),
    "isclose(int)": lambda lib, x, y: lib.isclose(lib.tensor([1, 2, 9]), lib.tensor([2, 3, 7]),
                                                  rtol=0.5, atol=0.1),
    "isclose(bool)": lambda lib, x, y: lib.isclose(lib.tensor([True]), lib.tensor([False])),
    "addcmul(value=2)": lambda lib, x, y: lib.addcmul(x, x, y, value=2),
    "addcmul(int, value=1.5)": lambda lib, x, y: lib.addcmul(*[lib.tensor([5, -7])] * 3,
                                                              value=1.5),
    "addcmul_(value=-1)": lambda lib, x, y: (x * 1).addcmul_(x, y, value=-1),
    "addcdiv()": lambda lib, x, y: x.addcdiv(x, y),
    "addcdiv_(value=0.5)": lambda lib, x, y: (x * 1).addcdiv_(y, x, value=0.5),
    "lerp(tensor weight)": lambda lib, x, y: lib.lerp(x, y, y / 4),
    "lerp_(0.75)": lambda lib, x, y: (x * 1).lerp_(y, 0.75),
    "square(bool)": lambda lib, x, y: lib.square(lib.tensor([True, False])),
    "sign(bool)": lambda lib, x, y: lib.tensor([True, False]).sign(),
    "logical_not_(float)": lambda lib, x, y: (x - 1.5).logical_not_(),
    "logical_xor(int, float)": lambda lib, x, y: lib.tensor([0, 2, 3, 0, 1]).logical_xor(x - 1.5),
    "xlogy(2, t)": lambda lib, x, y: lib.xlogy(2, y),
    "copysign(t, -0.0)": lambda lib, x, y: lib.copysign(x, -0.0),
    "remainder(-3, t)": lambda lib, x, y: lib.remainder(-3, y),
    "floor_divide(t, 2.5)": lambda lib, x, y: lib.floor_divide(x * 3, 2.5),
}


@pytest.mark.parametrize("name", sorted(KEYWORD_CALLS))
def test_keyword_and_number_forms_match_torch(name):
    """round(decimals=), nan_to_num's bounds, isclose's tolerances,
    addcmul/addcdiv(value=) (cast to the tensors' dtype), in place too."""
    results = {}
    for lib in LIBS:
        x = lib.tensor([0.0, 0.5, 1.25, 2.0, 3.5])
        y = lib.tensor([1.5, -0.25, 2.0, 0.75, 3.0])
        results[lib] = KEYWORD_CALLS[name](lib, x, y)
    assert_same_tensor(results[nbgrad], results[torch])


@pytest.mark.parametrize("name, call", [
    ("nan_to_num", lambda lib, x: lib.nan_to_num(x, nan=1.0, posinf=2.0)),
    ("round", lambda lib, x: x.round(decimals=2)),
    ("addcmul", lambda lib, x: lib.addcmul(x, x, x, value=0.5)),
    ("addcdiv", lambda lib, x: lib.addcdiv(x, x, x + 2, value=0.5)),
    ("lerp", lambda lib, x: lib.lerp(x, x * x, x)),
    ("square", lambda lib, x: lib.square(x)),
])
def test_keyword_forms_record_pytorchs_nodes(name, call):
    results = {}
    for lib in LIBS:
        x = lib.tensor([0.5, 1.5, -2.0], dtype=lib.float64, requires_grad=True)
        out = call(lib, x)
        out.backward(lib.tensor([1.0, -2.0, 3.0], dtype=lib.float64))
        results[lib] = (node_name(out.grad_fn), x.grad)
    assert results[nbgrad][0] == results[torch][0]
    assert_same_tensor(results[nbgrad][1], results[torch][1])


def test_floor_divide_records_a_node_whose_backward_refuses_like_torch():
    """PyTorch records floor_divide (``//`` too) with a NotImplemented node."""
    for lib in (nbgrad, torch):
        x = lib.tensor([1.5, -2.5], requires_grad=True)
        for out in (x // 2, lib.floor_divide(x, x), 3 // x):
            assert out.requires_grad and node_name(out.grad_fn).endswith("NotImplemented")
            with pytest.raises(RuntimeError, match="derivative for aten::floor_divide is not"):
                out.sum().backward()
        with lib.no_grad():
            assert not (x // 2).requires_grad
    assert (nbgrad.tensor([1.5, -2.5]) // 2).tolist() == \
        torch.tensor([1.5, -2.5]).floor_divide(2).tolist()


def test_remainder_of_a_number_refuses_backward_like_torch():
    """PyTorch has no derivative formula for remainder(Scalar, Tensor)."""
    def run(lib):
        x = lib.tensor([1.5, -2.5], requires_grad=True)
        (3 % x).sum().backward()
    assert_same_error(run)
