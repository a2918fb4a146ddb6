"""``nbgrad.testing``: PyTorch's ``torch.testing.assert_close`` and
``make_tensor`` for nbgrad tensors (and numbers, NumPy arrays, and
sequences or mappings of them), with PyTorch's default tolerances per dtype
and its messages."""
import collections.abc
import math
import numbers

import numpy as np

from . import dtypes
from .creation import tensor as _tensor
from .tensor import Tensor

__all__ = ["assert_close", "make_tensor"]

# dtype -> (rtol, atol), PyTorch's defaults; other dtypes compare exactly.
_TOLERANCES = {dtypes.float16: (1e-3, 1e-5), dtypes.float32: (1.3e-6, 1e-5),
               dtypes.float64: (1e-7, 1e-7)}


def _tolerances(*dts, rtol, atol):
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got "
                         f"no {'rtol' if rtol is None else 'atol'}.")
    if rtol is not None:
        return rtol, atol
    pairs = [_TOLERANCES.get(d, (0.0, 0.0)) for d in dts]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _fail(msg, default, path=""):
    if path:  # inside a sequence or mapping: say which item, as PyTorch does
        default += f"\n\nThe failure occurred for item {path}"
    if callable(msg):
        raise AssertionError(msg(default))
    raise AssertionError(default if msg is None else msg)


def _attribute(name, a, e, msg, path):
    _fail(msg, f"The values for attribute '{name}' do not match: {a} != {e}.", path)


def _index(flat, shape):
    return tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else ()


def _mismatch_message(a, e, close, rtol, atol, exact):
    total, bad = close.size, int((~close).sum())
    if np.issubdtype(a.dtype, np.floating):
        diff = np.abs(a - e)
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = diff / np.abs(e)
        fmt = float
    else:  # integers and bools: differences as integers, as PyTorch's (upcast to int64)
        ai, ei = a.astype(np.int64), e.astype(np.int64)
        diff = np.abs(ai - ei)
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = diff / np.abs(ei).astype(np.float64)
        fmt = int
    # (a mismatch decides the reported maximum; NaN counts as the greatest)
    diff = np.where(close, 0, diff).reshape(-1)
    rel = np.where(close, 0, rel).reshape(-1)
    at_abs, at_rel = int(np.argmax(diff)), int(np.argmax(rel))
    head = "Tensor-likes are not equal!" if exact else "Tensor-likes are not close!"
    lines = [head, "", f"Mismatched elements: {bad} / {total} ({bad / total:.1%})"]
    abs_value = fmt(diff[at_abs])
    abs_line = f"Greatest absolute difference: {abs_value} at index {_index(at_abs, a.shape)}"
    rel_line = (f"Greatest relative difference: {float(rel[at_rel])} at index "
                f"{_index(at_rel, a.shape)}")
    if not exact:
        abs_line += f" (up to {atol} allowed)"
        rel_line += f" (up to {rtol} allowed)"
    return "\n".join(lines + [abs_line, rel_line])


def _compare_tensors(actual, expected, rtol, atol, equal_nan, check_device, check_dtype, msg,
                     path=""):
    if tuple(actual.shape) != tuple(expected.shape):
        _attribute("shape", actual.shape, expected.shape, msg, path)
    if check_device and actual.device != expected.device:
        _fail(msg, f"The values for attribute 'device' do not match: {actual.device} != "
                   f"{expected.device}.", path)
    if check_dtype and actual.dtype is not expected.dtype:
        _attribute("dtype", actual.dtype, expected.dtype, msg, path)
    rtol, atol = _tolerances(actual.dtype, expected.dtype, rtol=rtol, atol=atol)
    common = dtypes.promote_types(actual.dtype, expected.dtype)
    to = np.dtype(common.name if common is not dtypes.bool_ else "bool")
    a = np.asarray(actual.detach().cpu().numpy()).astype(to)
    e = np.asarray(expected.detach().cpu().numpy()).astype(to)
    if np.issubdtype(to, np.floating):
        close = np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)
    else:
        close = a == e
    if not close.all():
        exact = rtol == 0 and atol == 0
        if a.ndim == 0:  # a 0-d tensor is reported as a scalar, as PyTorch does
            _fail(msg, _scalar_message(a.item(), e.item(), rtol, atol, exact), path)
        _fail(msg, _mismatch_message(a, e, close, rtol, atol, exact), path)


def _scalar_message(actual, expected, rtol, atol, exact):
    diff = abs(actual - expected)
    rel = diff / abs(expected) if expected else (math.nan if diff != diff else math.inf)
    tail = ("", "") if exact else (f" (up to {atol} allowed)", f" (up to {rtol} allowed)")
    return (f"Scalars are not {'equal' if exact else 'close'}!\n\nExpected {expected} but got "
            f"{actual}.\nAbsolute difference: {diff}{tail[0]}\nRelative difference: {rel}{tail[1]}")


def _compare_scalars(actual, expected, rtol, atol, equal_nan, msg, path):
    if isinstance(actual, bool) or isinstance(expected, bool):
        if actual != expected:
            _fail(msg, f"Booleans mismatch: {actual} is not {expected}", path)
        return
    floating = isinstance(actual, float) or isinstance(expected, float)
    rtol, atol = _tolerances(dtypes.float64 if floating else dtypes.int64, rtol=rtol, atol=atol)
    if math.isnan(actual) and math.isnan(expected) and equal_nan:
        return
    if actual == expected or abs(actual - expected) <= atol + rtol * abs(expected):
        return
    _fail(msg, _scalar_message(actual, expected, rtol, atol, not (rtol or atol)), path)


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None, _path=""):
    """assert_close(actual, expected, *, rtol=None, atol=None, equal_nan=False, check_device=True, check_dtype=True, msg=None)

    Asserts that ``actual`` and ``expected`` are close: ``|actual - expected|
    <= atol + rtol * |expected|`` elementwise, with shape, device and dtype
    equal. ``rtol`` and ``atol`` default per dtype as PyTorch's (float32:
    ``1.3e-6``, ``1e-5``; float64: ``1e-7``, ``1e-7``; float16: ``1e-3``,
    ``1e-5``; integers and bool: exact). Sequences and mappings are compared
    item by item. ``msg``: a string, or a callable given the default message.

    Raises:
        AssertionError: with PyTorch's text ("Tensor-likes are not close!",
            the mismatch count, the greatest absolute and relative differences
            and their indices)."""
    if isinstance(actual, Tensor) or isinstance(expected, Tensor) or isinstance(
            actual, np.ndarray) or isinstance(expected, np.ndarray):
        if not isinstance(actual, (Tensor, np.ndarray)) or not isinstance(
                expected, (Tensor, np.ndarray)):
            raise TypeError(f"No comparison pair was able to handle inputs of type "
                            f"{type(actual)} and {type(expected)}.")
        actual, expected = (t if isinstance(t, Tensor) else _tensor(t) for t in (actual, expected))
        return _compare_tensors(actual, expected, rtol, atol, equal_nan, check_device,
                                check_dtype, msg, _path)
    if isinstance(actual, numbers.Number) and isinstance(expected, numbers.Number):
        if check_dtype and type(actual) is not type(expected):
            _fail(msg, f"The values for attribute 'type' do not match: {type(actual)} != "
                       f"{type(expected)}.", _path)
        return _compare_scalars(actual, expected, rtol, atol, equal_nan, msg, _path)
    kw = dict(allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan,
              check_device=check_device, check_dtype=check_dtype, msg=msg)
    if isinstance(actual, collections.abc.Mapping) and isinstance(
            expected, collections.abc.Mapping):
        if set(actual) != set(expected):
            missing, extra = sorted(set(expected) - set(actual)), sorted(set(actual) - set(expected))
            _fail(msg, f"The keys of the mappings do not match:\nMissing keys in the actual "
                       f"mapping: {missing}\nAdditional keys in the actual mapping: {extra}", _path)
        for key in actual:
            assert_close(actual[key], expected[key], **kw, _path=f"{_path}[{key!r}]")
        return None
    sequence = (collections.abc.Sequence,)
    if isinstance(actual, sequence) and isinstance(expected, sequence) and not isinstance(
            actual, str) and not isinstance(expected, str):
        if len(actual) != len(expected):
            _fail(msg, f"The length of the sequences mismatch: {len(actual)} != {len(expected)}",
                  _path)
        for k, (a, e) in enumerate(zip(actual, expected)):
            assert_close(a, e, **kw, _path=f"{_path}[{k}]")
        return None
    if actual is None and expected is None:
        return None
    raise TypeError(f"No comparison pair was able to handle inputs of type {type(actual)} and "
                    f"{type(expected)}.")


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False,
                noncontiguous=False, exclude_zero=False, memory_format=None):
    """make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False, noncontiguous=False, exclude_zero=False) -> Tensor

    A tensor of ``shape`` filled with random values uniform in ``[low,
    high)`` (floats default to ``[-9, 9)``, integers to ``[-9, 10)``
    clamped to the dtype's range, bools to True/False), as PyTorch's."""
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        shape = tuple(shape[0])
    dtype = dtypes.float32 if dtype is None else dtype
    if low is not None and high is not None and low > high:
        raise ValueError(f"`low` must be less than or equal to `high`, but got {low} > {high}")
    for name, value in (("low", low), ("high", high)):
        if value is not None and isinstance(value, float) and math.isnan(value):
            raise ValueError(f"`{name}` cannot be NaN, but got {name}={value}")
    rng = np.random.default_rng()
    if dtype is dtypes.bool_:
        data = rng.integers(0, 2, size=shape).astype(bool)
    elif dtype.is_floating_point:
        lo, hi = -9.0 if low is None else low, 9.0 if high is None else high
        data = rng.uniform(lo, hi, size=shape)
    else:
        info = np.iinfo(dtype.name)
        lo = max(-9 if low is None else math.ceil(low), int(info.min))
        hi = min(10 if high is None else math.ceil(high), int(info.max) + 1)
        data = rng.integers(lo, max(hi, lo + 1), size=shape)
    if exclude_zero:
        tiny = 1 if not dtype.is_floating_point else float(np.finfo(dtype.name).tiny)
        data = np.where(data == 0, tiny if dtype is not dtypes.bool_ else True, data)
    out = _tensor(data, dtype=dtype, device=device)
    if noncontiguous and out.numel() > 1:
        out = out.repeat_interleave(2, dim=-1)[..., ::2]
    return out.requires_grad_(requires_grad) if requires_grad else out
