"""Statistics and further reductions: prod, var/std (and with the mean),
logsumexp, median/nanmedian/mode, argmax/argmin, any/all/count_nonzero,
aminmax, nansum/nanmean, and the vector and matrix norms behind ``norm`` and
``nbgrad.linalg``. Backward formulas are written once against
``ops_for(grad)`` (raw arrays, or taped Tensor ops for a backward that builds
a graph), so every differentiable op here has second derivatives; masks and
counts are comparisons, computed on the raw arrays and used as constants."""
import builtins
import math
import numbers
import warnings

import numpy as np

from .. import dtypes
from ..tape.graph import Node, SavedTensor
from ..tape.version_counter import user_stacklevel
from ..tensor import Tensor
from . import arrays, dual, reductions, views
from .linalg_dense import linalg_svdvals as svdvals
from .arrays import ops_for
from .reductions import (ExtremumBackward, ExtremumDimBackward, SumBackward, _axes,
                         _check_keepdim, _empty_reduction_check, _kept_shape, _recording,
                         _return_type)
from .registry import tensor_op

MedianResult, NanmedianResult, ModeResult = (_return_type("median"), _return_type("nanmedian"),
                                             _return_type("mode"))
AminmaxResult = _return_type("aminmax", ("min", "max"))


# -- helpers shared by the formulas ----------------------------------------------
def _raw(value):
    """The raw array of a Tensor (itself for a raw array)."""
    return value._data if isinstance(value, Tensor) else value


def _constant(xp, array):
    """A raw array as a formula constant (a Tensor without history when taped)."""
    return xp.constant(array)


def _scalar(xp, like, value):
    """``value`` as a 0-d constant of ``like``'s dtype and backend."""
    raw = _raw(like)
    return xp.constant(xp.backend.full((), value, raw.dtype))


def _sign(backend, a):
    """sign(a) as a raw array of a's dtype (0 at 0 and NaN): a constant."""
    one, zero = a.dtype.type(1), a.dtype.type(0)
    return backend.where(a > 0, one, backend.where(a < 0, -one, zero))


def _isnan(a):
    return a != a


def _out_shape(shape, axes, keepdim):
    return tuple(1 if k in axes else n for k, n in enumerate(shape)) if keepdim else \
        tuple(n for k, n in enumerate(shape) if k not in axes)


def _count(shape, axes):
    return math.prod(shape[a] for a in axes)


def _float_input(self, fn):
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. Got "
                           f"{self.dtype.tensor_type[:-6]}")


def _c(backend, data):
    """C order, as PyTorch's reductions lay out their results."""
    from ..backends import layout
    return layout.c_order(backend, data)


def _pair_by_vjp(fn, args, kwargs, out):
    """BY_VJP for both outputs of a pair (std_mean, var_mean, aminmax): the
    second's tangent is set here, the first's returned."""
    second = dual.BY_VJP(lambda *a, **k: fn(*a, **k)[1], args, kwargs, out)
    if second is not None and out[1].dtype.is_floating_point:
        dual.set_tangent(out[1], second)
    return dual.BY_VJP(fn, args, kwargs, out)


# -- prod ---------------------------------------------------------------------------
class ProdBackward(Node):
    """The product of the others: ``out / x`` where a slice has no zero; with
    zeros, the product of the non-zero others at a slice's only zero (and
    zero elsewhere), as PyTorch's prod_backward."""

    __slots__ = ("axes", "kept", "dim")
    op_name = "Prod"

    def __init__(self, source, axes, dim):
        super().__init__([source])
        self.axes, self.dim = axes, dim
        self.kept = _kept_shape(source._data.shape, axes)

    def backward(self, grad):
        xp = ops_for(grad)
        x, out = self.saved_values(xp.graph)
        grad, out = xp.reshape(grad, self.kept), xp.reshape(out, self.kept)
        backend = xp.backend
        xr = _raw(x)
        zero = xr == 0
        if not int(backend.reduce_sum(zero, None, False, np.int64)):
            return [xp.run("mul", grad, xp.run("div", out, x))]
        count = backend.reduce_sum(zero, self.axes, True, np.int64)
        sole = backend.where(zero, count == 1, False)  # the only zero of its slice
        none = backend.broadcast_to(count == 0, xr.shape)  # slices without a zero
        safe = xp.where(_constant(xp, zero), _scalar(xp, x, 1), x)
        others = xp.reshape(_prod_formula(xp, safe, self.dim), self.kept)
        picked = xp.where(_constant(xp, sole), others, _scalar(xp, x, 0))
        return [xp.run("mul", grad, xp.where(_constant(xp, none), xp.run("div", others, safe),
                                             picked))]


def _prod_formula(xp, a, dim):
    """The product (keeping dims) for a formula: taped prod, or the backend's."""
    if xp.graph:
        return prod(a) if dim is None else prod(a, dim, True)
    return xp.backend.reduce_prod(a, None if dim is None else dim, dim is not None)


@tensor_op(tangent=dual.BY_VJP, out=True)
def prod(self, dim=None, keepdim=False, *, dtype=None):
    """prod(input, dim=None, keepdim=False, *, dtype=None) -> Tensor

    The product of all elements, or over ``dim`` (an int). Bool and integer
    inputs multiply in int64."""
    if dim is None and keepdim is not False:
        raise TypeError("prod() received an invalid combination of arguments - got "
                        "(keepdim=bool, ), but expected one of:\n * (*, nbgrad.dtype dtype = None)"
                        "\n * (int dim, bool keepdim = False, *, nbgrad.dtype dtype = None)\n")
    if dim is not None and (isinstance(dim, (tuple, list, bool)) or
                            not hasattr(dim, "__index__")):
        raise TypeError(f"prod() received an invalid combination of arguments - got "
                        f"({dtypes.type_name(dim)}), but expected one of:\n * (*, nbgrad.dtype "
                        "dtype = None)\n * (int dim, bool keepdim = False, *, nbgrad.dtype dtype "
                        "= None)\n")
    _check_keepdim(keepdim, "prod")
    dtype = dtypes.to_dtype(dtype, "prod") or (
        self.dtype if self.dtype.is_floating_point else dtypes.int64)
    backend = self._backend
    data = self._data if self._data.dtype == dtype.numpy else backend.cast(self._data, dtype.numpy)
    # (``data`` is in ``dtype`` already; the backend multiplies integers in int64)
    if dim is None:
        axes, axis = tuple(range(self.ndim)), None
        out = backend.reduce_prod(data, None, False)
    else:
        axis = self._dim(dim, "prod") if self.ndim else None
        axes = (axis,) if self.ndim else ()
        out = backend.reduce_prod(data, axis, keepdim and self.ndim > 0)
    if not out.flags.c_contiguous:
        out = _c(backend, out)
    if not (_recording(self) and dtype.is_floating_point):
        return Tensor._wrap(out, dtype, backend)
    source = self if dtype is self.dtype else self.to(dtype)  # through the cast's history
    node = ProdBackward(source, axes, axis)
    result = Tensor._from_op(out, node, dtype, backend)
    node.saved = (SavedTensor(source), SavedTensor(result, output_of="Prod"))
    return result


# -- var / std -------------------------------------------------------------------------
def _correction(fn, unbiased, correction):
    if correction is not None:
        if unbiased is not None:
            raise TypeError(f"{fn}() received an invalid combination of arguments: "
                            "unbiased and correction cannot both be given")
        return float(correction)
    return 1.0 if unbiased is None or unbiased else 0.0


def _var_args(self, dim, unbiased, keepdim, correction, fn):
    if isinstance(dim, bool):  # var(x, True): the unbiased overload
        dim, unbiased = None, dim
    axes = _axes(self, dim, fn, keepdim)
    return axes, _correction(fn, unbiased, correction)


def _centered(xp, x, axes, count):
    """``x - mean(x)`` over ``axes`` (the mean kept as dims)."""
    total = xp.reduce_sum(x, axes, True)
    return xp.run("sub", x, xp.scale(total, 1.0 / count) if count else total)


def _variance(self, axes, correction, keepdim, fn, with_mean):
    """(var, mean) as raw arrays (mean kept as dims; None unless ``with_mean``)."""
    backend, data = self._backend, self._data
    count = _count(data.shape, axes)
    dof = builtins.max(0.0, count - correction)
    if dof <= 0:
        warnings.warn(f"{fn}(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the reduction factor (input numel divided by output numel).",
                      UserWarning, stacklevel=user_stacklevel())
    xp = ops_for(data)
    fused = backend.fused_var(data, axes, dof) if count else None  # one pass per row
    if fused is not None:
        var = fused.reshape(_out_shape(data.shape, axes, keepdim))
        mean = xp.scale(backend.reduce_sum(data, axes, True), 1.0 / count) if with_mean else None
        return _c(backend, var), mean
    mean = backend.reduce_sum(data, axes, True)
    with np.errstate(all="ignore"):
        mean = xp.scale(mean, 1.0 / count) if count else backend.full(mean.shape, np.nan,
                                                                       data.dtype)
        centered = arrays.run("sub", data, mean)
        squares = backend.reduce_sum(arrays.run("mul", centered, centered), axes, keepdim)
        if dof > 0:
            var = xp.scale(squares, 1.0 / dof)
        else:
            var = arrays.run("div", squares, backend.full((), 0.0, data.dtype))
    return _c(backend, backend.asarray(var)), mean


class VarBackward(Node):
    """grad * 2 (x - mean) / (N - correction); std's first divides by 2 std
    (zero where std is), as PyTorch's var_backward / std_backward."""

    __slots__ = ("axes", "kept", "count", "dof", "_op_name", "std")

    def __init__(self, source, axes, count, dof, op_name="Var", std=False):
        super().__init__([source])
        self.save(source)
        self.axes, self.count, self.dof = axes, count, dof
        self.kept = _kept_shape(source._data.shape, axes)
        self._op_name, self.std = op_name, std

    @property
    def op_name(self):
        return self._op_name

    def after_write(self, output):
        if self.std:
            self.saved = (*self.saved[:1], SavedTensor(output, output_of=self._op_name))

    def backward(self, grad):
        xp = ops_for(grad)
        saved = self.saved_values(xp.graph)
        x = saved[0]
        grad = xp.reshape(grad, self.kept)
        if self.std:
            std = xp.reshape(saved[1], self.kept)
            zero = _raw(std) == 0
            halved = xp.run("div", grad, xp.scale(std, 2.0))
            grad = xp.where(_constant(xp, zero), _scalar(xp, x, 0), halved)
        centered = _centered(xp, x, self.axes, self.count)
        factor = 2.0 / self.dof if self.dof > 0 else math.inf
        with np.errstate(all="ignore"):  # no degrees of freedom: NaN and inf, as PyTorch's
            return [xp.scale(xp.run("mul", grad, centered), factor)]


class _MeanPart(SumBackward):
    """The mean output of std_mean / var_mean (PyTorch's node has their name)."""

    __slots__ = ("_op_name",)

    def __init__(self, source, axes, scale, op_name):
        super().__init__(source, axes, scale)
        self._op_name = op_name

    @property
    def op_name(self):
        return self._op_name


def _var_std(self, dim, unbiased, keepdim, correction, fn, std, with_mean=False):
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"{fn} only support floating point and complex dtypes" if with_mean
                           else "std and var only support floating point and complex dtypes")
    axes, correction = _var_args(self, dim, unbiased, keepdim, correction, fn)
    var, mean = _variance(self, axes, correction, keepdim, fn, with_mean)
    backend = self._backend
    if std:
        var = arrays.run("sqrt", var)
    count = _count(self._data.shape, axes)
    op_name = ("Std" if std else "Var") + ("Mean" if with_mean else "")
    node = None
    if _recording(self):
        node = VarBackward(self, axes, count, builtins.max(0.0, count - correction), op_name, std)
    result = Tensor._from_op(var, node, self.dtype, backend)
    if node is not None:
        node.after_write(result)
    if not with_mean:
        return result
    mean = _c(backend, mean if keepdim else mean.reshape(_out_shape(mean.shape, axes, False)))
    mean_node = _MeanPart(self, axes, 1.0 / count if count else np.nan, op_name) \
        if _recording(self) else None
    return result, Tensor._from_op(mean, mean_node, self.dtype, backend)


@tensor_op(tangent=dual.BY_VJP, out=True)
def var(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """var(input, dim=None, *, correction=1, keepdim=False) -> Tensor

    The variance over ``dim`` (an int, a tuple of ints, or None for all),
    divided by ``N - correction`` (``unbiased=False``: ``correction=0``)."""
    return _var_std(self, dim, unbiased, keepdim, correction, "var", std=False)


@tensor_op(tangent=dual.BY_VJP, out=True)
def std(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """std(input, dim=None, *, correction=1, keepdim=False) -> Tensor

    The standard deviation: the square root of :func:`var`."""
    return _var_std(self, dim, unbiased, keepdim, correction, "std", std=True)


@tensor_op(method=False, tangent=_pair_by_vjp)
def var_mean(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """var_mean(input, dim=None, *, correction=1, keepdim=False) -> (Tensor, Tensor)

    The variance and the mean over ``dim``."""
    return _var_std(self, dim, unbiased, keepdim, correction, "var_mean", std=False,
                    with_mean=True)


@tensor_op(method=False, tangent=_pair_by_vjp)
def std_mean(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """std_mean(input, dim=None, *, correction=1, keepdim=False) -> (Tensor, Tensor)

    The standard deviation and the mean over ``dim``."""
    return _var_std(self, dim, unbiased, keepdim, correction, "std_mean", std=True,
                    with_mean=True)


# -- logsumexp ----------------------------------------------------------------------
class LogsumexpBackward(Node):
    """grad * exp(x - logsumexp(x))."""

    __slots__ = ("kept",)
    op_name = "Logsumexp"

    def __init__(self, source, axes):
        super().__init__([source])
        self.kept = _kept_shape(source._data.shape, axes)

    def after_write(self, source, output):
        self.saved = (SavedTensor(source), SavedTensor(output, output_of=self.op_name))

    def backward(self, grad):
        xp = ops_for(grad)
        x, out = self.saved_values(xp.graph)
        grad, out = xp.reshape(grad, self.kept), xp.reshape(out, self.kept)
        return [xp.run("mul", grad, xp.run("exp", xp.run("sub", x, out)))]


@tensor_op(tangent=dual.BY_VJP, out=True)
def logsumexp(self, dim=None, keepdim=False):
    """logsumexp(input, dim, keepdim=False) -> Tensor

    ``log(sum(exp(input)))`` over ``dim``, computed stably (shifted by the maximum)."""
    if dim is None:
        raise TypeError('logsumexp() missing 1 required positional arguments: "dim"')
    axes = _axes(self, dim, "logsumexp", keepdim)
    source = self if self.dtype.is_floating_point else self.to(dtypes.get_default_dtype())
    backend, data = source._backend, source._data
    fused = backend.fused_logsumexp(data, axes) if data.size else None  # one pass per row
    if data.size == 0:
        out = backend.full(_out_shape(data.shape, axes, keepdim), -np.inf, data.dtype)
    elif fused is not None:
        out = fused.reshape(_out_shape(data.shape, axes, keepdim))
    else:
        with np.errstate(all="ignore"):
            top = backend.reduce_max(data, axes, True)
            top = backend.where(arrays.run("abs", top) == np.inf, data.dtype.type(0), top)
            total = backend.reduce_sum(arrays.run("exp", arrays.run("sub", data, top)), axes, True)
            out = arrays.run("add", arrays.run("log", total), top)
        if not keepdim:
            out = out.reshape(_out_shape(data.shape, axes, False))
    out = _c(backend, out)
    node = LogsumexpBackward(source, axes) if _recording(source) else None
    result = Tensor._from_op(out, node, source.dtype, backend)
    if node is not None:
        node.after_write(source, result)
    return result


# -- median, nanmedian, mode ------------------------------------------------------------
class MedianAllBackward(Node):
    """median() of all elements: tied elements share the gradient evenly (a
    NaN result sends it to the NaNs), as PyTorch's evenly_distribute_backward."""

    __slots__ = ("_op_name",)

    def __init__(self, source, result, op_name):
        super().__init__([source])
        self.save(source, result)
        self._op_name = op_name

    @property
    def op_name(self):
        return self._op_name

    def backward(self, grad):
        xp = ops_for(grad)
        source, result = self.saved_values(xp.graph)
        backend, src, res = xp.backend, _raw(source), _raw(result)
        value = res.item()
        mask = _isnan(src) if value != value else src == res
        count = int(backend.reduce_sum(mask, None, False, np.int64))
        share = xp.scale(xp.reshape(grad, ()), 1.0 / count)
        return [xp.where(_constant(xp, mask), share, _scalar(xp, source, 0))]


def _median(self, dim, keepdim, fn, ignore_nan):
    backend = self._backend
    op_name = "Nanmedian" if ignore_nan else "Median"
    if self.dtype is dtypes.bool_:
        kernel = "median_cpu" if dim is None else "median_out"
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')
    if dim is None:
        data = backend.reduce_median(self._data, ignore_nan)
        out = Tensor._wrap(data, self.dtype, backend)
        if _recording(self) and self._data.size:
            out._grad_fn = MedianAllBackward(self, out, op_name)
        return out
    return _selection(self, dim, keepdim, fn, op_name,
                      lambda a, axis: backend.median_with_indices(a, axis, ignore_nan),
                      NanmedianResult if ignore_nan else MedianResult)


def _selection(self, dim, keepdim, fn, op_name, select, result_type):
    """(values, indices) along one ``dim`` (median, mode), the gradient going
    to the selected index."""
    _check_keepdim(keepdim, fn)
    if isinstance(dim, (tuple, list)) or not hasattr(dim, "__index__") or isinstance(dim, bool):
        raise TypeError(f"{fn}(): argument 'dim' must be int, not {dtypes.type_name(dim)}")
    axis = self._dim(dim, fn)
    _empty_reduction_check(self, (axis,), fn)
    backend = self._backend
    source = self._data if self.ndim else self._data.reshape(1)
    values, indices = select(source, axis)
    if keepdim and self.ndim:
        values = backend.expand_dims(values, axis)
        indices = backend.expand_dims(indices, axis)
    values, indices = _c(backend, values), _c(backend, indices)
    if not self.ndim:
        values, indices = values.reshape(()), indices.reshape(())
    node = None
    if _recording(self):
        node = ExtremumDimBackward(self, indices if self.ndim else indices.reshape(1), axis,
                                   keepdim or not self.ndim, op_name)
    return result_type(Tensor._from_op(values, node, self.dtype, backend),
                       Tensor._wrap(indices, dtypes.int64, backend))


@tensor_op(tangent=dual.BY_VJP)
def median(self, dim=None, keepdim=False):
    """median(input) -> Tensor; median(input, dim, keepdim=False) -> (values, indices)

    The lower median of all elements, or along ``dim`` with its indices; a
    NaN makes it NaN."""
    return _median(self, dim, keepdim, "median", ignore_nan=False)


@tensor_op(tangent=dual.BY_VJP)
def nanmedian(self, dim=None, keepdim=False):
    """nanmedian(input) -> Tensor; nanmedian(input, dim, keepdim=False) -> (values, indices)

    :func:`median` leaving NaNs out (a slice of NaNs gives NaN)."""
    return _median(self, dim, keepdim, "nanmedian", ignore_nan=True)


@tensor_op(tangent=dual.BY_VJP)
def mode(self, dim=-1, keepdim=False):
    """mode(input, dim=-1, keepdim=False) -> (values, indices)

    The most frequent value along ``dim`` (of equally frequent ones the
    smallest) and the index of its last occurrence."""
    backend = self._backend
    return _selection(self, dim, keepdim, "mode", "Mode", backend.mode_with_indices, ModeResult)


# -- argmax, argmin ----------------------------------------------------------------------
def _arg(self, dim, keepdim, fn):
    _check_keepdim(keepdim, fn)
    if self.dtype is dtypes.bool_:
        raise RuntimeError(f"{fn}(): does not support bool input")
    backend = self._backend
    reduce = backend.argmax if fn == "argmax" else backend.argmin
    if dim is None:
        if self._data.size == 0:
            raise IndexError(f"{fn}(): Expected reduction dim to be specified for input.numel() "
                             "== 0.")
        data = reduce(self._data, None, False)
        if keepdim:
            data = data.reshape((1,) * self.ndim)
        return Tensor._wrap(_int64(backend, data), dtypes.int64, backend)
    if isinstance(dim, (tuple, list)) or isinstance(dim, bool) or not hasattr(dim, "__index__"):
        raise TypeError(f"{fn}(): argument 'dim' (position 1) must be int, not "
                        f"{dtypes.type_name(dim)}")
    axis = self._dim(dim, fn)
    _empty_reduction_check(self, (axis,), fn)
    if not self.ndim:
        return Tensor._wrap(backend.zeros((), np.int64), dtypes.int64, backend)
    data = _c(backend, reduce(self._data, axis, keepdim))
    return Tensor._wrap(_int64(backend, data), dtypes.int64, backend)


def _int64(backend, data):
    data = backend.asarray(data)
    return data if data.dtype == np.int64 else backend.cast(data, np.int64)


@tensor_op()
def argmax(self, dim=None, keepdim=False):
    """argmax(input, dim=None, keepdim=False) -> LongTensor

    The index of the (first) maximum, a NaN counting as the maximum; of the
    flattened input when ``dim`` is None."""
    return _arg(self, dim, keepdim, "argmax")


@tensor_op()
def argmin(self, dim=None, keepdim=False):
    """argmin(input, dim=None, keepdim=False) -> LongTensor

    The index of the (first) minimum, a NaN counting as the minimum."""
    return _arg(self, dim, keepdim, "argmin")


# -- any, all, count_nonzero -------------------------------------------------------------
def _nonzero_count(self, axes, keepdim):
    """How many elements are non-zero over ``axes`` (int64, raw)."""
    backend = self._backend
    return backend.reduce_sum(self._data != 0, axes, keepdim, np.int64)


def _any_all(self, dim, keepdim, fn):
    axes = _axes(self, dim, fn, keepdim)
    backend = self._backend
    if fn == "any":
        data = _nonzero_count(self, axes, keepdim) > 0
    else:
        data = backend.reduce_sum(self._data == 0, axes, keepdim, np.int64) == 0
    data = backend.asarray(data)
    dtype = dtypes.bool_
    if self._data.dtype == np.uint8:  # PyTorch keeps uint8 for uint8 input
        dtype = dtypes.from_numpy_dtype(np.dtype(np.uint8))
        data = backend.cast(data, np.uint8)
    return Tensor._wrap(_c(backend, data), dtype, backend)


@tensor_op(out=True)
def any(self, dim=None, keepdim=False):
    """any(input, dim=None, keepdim=False) -> Tensor

    Whether any element (over ``dim``: an int or tuple of ints) is non-zero."""
    return _any_all(self, dim, keepdim, "any")


@tensor_op(out=True)
def all(self, dim=None, keepdim=False):
    """all(input, dim=None, keepdim=False) -> Tensor

    Whether every element (over ``dim``) is non-zero."""
    return _any_all(self, dim, keepdim, "all")


@tensor_op()
def count_nonzero(self, dim=None):
    """count_nonzero(input, dim=None) -> Tensor

    How many elements (over ``dim``: an int or tuple of ints) are non-zero."""
    axes = _axes(self, dim, "count_nonzero")
    backend = self._backend
    return Tensor._wrap(_c(backend, backend.asarray(_nonzero_count(self, axes, False))),
                        dtypes.int64, backend)


# -- aminmax ----------------------------------------------------------------------------
@tensor_op(tangent=_pair_by_vjp)
def aminmax(self, *, dim=None, keepdim=False):
    """aminmax(input, *, dim=None, keepdim=False) -> (min, max)

    The minimum and maximum over ``dim`` (all elements when None)."""
    _check_keepdim(keepdim, "aminmax")
    if dim is None:
        if self._data.size == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                               "operation has no identity.")
        axes = tuple(range(self.ndim))
    else:
        axis = self._dim(dim, "aminmax")
        if self._data.size == 0 and self.ndim and self._data.shape[axis] == 0:
            raise IndexError(f"aminmax(): Expected reduction dim {axis} to have non-zero size.")
        axes = (axis,) if self.ndim else ()
    backend = self._backend
    results = []
    for reduce in (backend.reduce_min, backend.reduce_max):
        data = _c(backend, reduce(self._data, axes, keepdim, zero_ties="first"))
        out = Tensor._wrap(data, self.dtype, backend)
        if _recording(self):
            out._grad_fn = ExtremumBackward(self, out, "Aminmax", axes)
        results.append(out)
    return AminmaxResult(*results)


# -- nansum, nanmean ----------------------------------------------------------------------
class NansumBackward(Node):
    """The gradient where the input is no NaN, zero at its NaNs."""

    __slots__ = ("kept", "shape")
    op_name = "Nansum"

    def __init__(self, source, axes):
        super().__init__([source])
        self.save(source)
        self.shape = source._data.shape
        self.kept = _kept_shape(self.shape, axes)

    def backward(self, grad):
        xp = ops_for(grad)
        (x,) = self.saved_values(xp.graph)
        grad = xp.broadcast_to(xp.reshape(grad, self.kept), self.shape)
        return [xp.where(_constant(xp, _isnan(_raw(x))), _scalar(xp, x, 0), grad)]


@tensor_op(tangent=dual.BY_VJP, out=True)
def nansum(self, dim=None, keepdim=False, *, dtype=None):
    """nansum(input, dim=None, keepdim=False, *, dtype=None) -> Tensor

    The sum over ``dim``, NaNs counted as zero."""
    axes = _axes(self, dim, "nansum", keepdim)
    dtype = dtypes.to_dtype(dtype, "nansum") or (
        self.dtype if self.dtype.is_floating_point else dtypes.int64)
    backend = self._backend
    data = self._data
    if data.dtype.kind == "f":
        data = backend.where(_isnan(data), data.dtype.type(0), data)
    data = _c(backend, backend.reduce_sum(data, axes, keepdim, dtype.numpy))
    node = NansumBackward(self, axes) if _recording(self) and dtype.is_floating_point else None
    return Tensor._from_op(data, node, dtype, backend)


@tensor_op(tangent=dual.BY_VJP, out=True)
def nanmean(self, dim=None, keepdim=False, *, dtype=None):
    """nanmean(input, dim=None, keepdim=False, *, dtype=None) -> Tensor

    The mean of the elements that are no NaN (``nansum / count``)."""
    if not self.dtype.is_floating_point:
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype "
                           f"but got {self.dtype.tensor_type[:-6]}")
    axes = _axes(self, dim, "nanmean", keepdim)
    backend = self._backend
    count = backend.reduce_sum(self._data == self._data, axes, keepdim, np.int64)
    total = nansum(self, dim, keepdim, dtype=dtype)
    count = backend.cast(_c(backend, backend.asarray(count)), total._data.dtype)
    return total / Tensor._wrap(count, total.dtype, backend)


# -- norms ----------------------------------------------------------------------------------
class LinalgVectorNormBackward(Node):
    """PyTorch's linalg_vector_norm_backward: ord 0 none; 1 sign(x); 2
    x / norm; inf the elements at the norm, evenly; any other p
    sign(x) |x|^(p-1) / norm^(p-1) (zero where the norm is)."""

    __slots__ = ("ord", "axes", "kept")
    op_name = "LinalgVectorNorm"

    def __init__(self, source, ord, axes):
        super().__init__([source])
        self.ord, self.axes = ord, axes
        self.kept = _kept_shape(source._data.shape, axes)

    def after_write(self, source, output):
        self.saved = (SavedTensor(source), SavedTensor(output, output_of=self.op_name))

    def backward(self, grad):
        xp = ops_for(grad)
        x, norm = self.saved_values(xp.graph)
        grad, norm = xp.reshape(grad, self.kept), xp.reshape(norm, self.kept)
        backend, p = xp.backend, self.ord
        xr, nr = _raw(x), _raw(norm)
        zero = _scalar(xp, x, 0)
        if p == 0:  # PyTorch's: no gradient at all
            return [None]
        sign = _constant(xp, _sign(backend, xr))
        if p == 1:
            return [xp.run("mul", grad, sign)]
        if math.isinf(p):
            mask = arrays.run("abs", xr) == nr
            count = backend.reduce_sum(mask, self.axes, True, xr.dtype)
            share = xp.run("div", grad, _constant(xp, count))
            return [xp.where(_constant(xp, mask), xp.run("mul", share, sign), zero)]
        at_zero = _constant(xp, nr == 0)
        if p == 2:
            scaled = xp.where(at_zero, zero, xp.run("div", grad, norm))
            return [xp.run("mul", scaled, x)]
        power = xp.run("pow", xp.run("abs", x), _scalar(xp, x, p - 1))
        if p < 1:
            power = xp.where(_constant(xp, xr == 0), zero, power)
        scale = xp.run("div", grad, xp.run("pow", norm, _scalar(xp, x, p - 1)))
        scale = xp.where(at_zero, zero, scale)
        return [xp.run("mul", xp.run("mul", scale, sign), power)]


@dual.tangent_rule(dual.BY_VJP)
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """linalg.vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None) -> Tensor

    The vector ``ord``-norm over ``dim`` (an int, a tuple of ints, or None:
    all elements): ``sum(|x|^ord)^(1/ord)``; inf/-inf the max/min of ``|x|``,
    0 the number of non-zero elements."""
    if isinstance(ord, bool) or not isinstance(ord, numbers.Real):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' must be Number, not "
                        f"{dtypes.type_name(ord)}")
    dtype = dtypes.to_dtype(dtype, "linalg_vector_norm")
    if dtype is None:
        _float_input(x, "linalg.vector_norm")
    else:
        if not dtype.is_floating_point:
            raise RuntimeError("linalg.vector_norm: dtype should be floating point or complex. "
                               f"Got {dtype.tensor_type[:-6]}")
        if dtype is not x.dtype:
            x = x.to(dtype)
    axes = _axes(x, dim, "linalg_vector_norm", keepdim)
    data, backend = x._data, x._backend
    given, ord = ord, float(ord)
    if data.size == 0 and (ord < 0 or math.isinf(ord)):
        raise RuntimeError(f"linalg.vector_norm cannot compute the {given} norm on an empty "
                           "tensor because the operation does not have an identity")
    with np.errstate(all="ignore"):
        magnitude = arrays.run("abs", data)
        if ord == math.inf:
            out = backend.reduce_max(magnitude, axes, keepdim)
        elif ord == -math.inf:
            out = backend.reduce_min(magnitude, axes, keepdim)
        elif ord == 0:
            out = backend.reduce_sum(data != 0, axes, keepdim, data.dtype)
        elif ord == 1:
            out = backend.reduce_sum(magnitude, axes, keepdim)
        elif ord == 2:
            out = backend.reduce_sum(arrays.run("mul", data, data), axes, keepdim)
            out = arrays.run("sqrt", backend.asarray(out))
        else:
            power = backend.full((), ord, data.dtype)
            out = backend.reduce_sum(arrays.run("pow", magnitude, power), axes, keepdim)
            out = arrays.run("pow", backend.asarray(out), backend.full((), 1.0 / ord, data.dtype))
    out = _c(backend, backend.asarray(out))
    node = LinalgVectorNormBackward(x, ord, axes) if _recording(x) else None
    result = Tensor._from_op(out, node, x.dtype, backend)
    if node is not None:
        node.after_write(x, result)
    return result


_MATRIX_ORDS = ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf)


@dual.tangent_rule(dual.BY_VJP)
def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """linalg.matrix_norm(A, ord='fro', dim=(-2, -1), keepdim=False, *, dtype=None) -> Tensor

    The matrix norm over the two dims ``dim``: 'fro' (Frobenius), 'nuc'
    (nuclear: the sum of the singular values), 2/-2 (the largest/smallest
    singular value), 1/-1 (max/min column sum of ``|A|``) and inf/-inf
    (max/min row sum). The singular values are ``nbgrad.linalg.svdvals``'
    (LAPACK's, on the host) of ``A`` with ``dim`` moved last, as PyTorch's."""
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    if dtype is None:
        _float_input(A, "linalg.matrix_norm")
    dims = tuple(dim)
    if len(dims) != 2:
        raise RuntimeError("linalg.matrix_norm: dim must be a 2-tuple. Got "
                           + " ".join(map(str, dims)))
    d0, d1 = A._dim(dims[0], "linalg.matrix_norm"), A._dim(dims[1], "linalg.matrix_norm")
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dims[0]}, "
                           f"{dims[1]})")
    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    elif ord not in _MATRIX_ORDS:
        text = int(ord) if isinstance(ord, float) and ord.is_integer() else ord
        raise RuntimeError(f"linalg.matrix_norm: Order {text} not supported.")
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim, dtype=dtype)
    if ord in ("nuc", 2, -2):
        return _singular_value_norm(A, ord, (d0, d1), keepdim, dtype)
    # As PyTorch's: ord 1 the largest (-1: smallest) 1-norm of the columns (over
    # d0), inf of the rows (over d1); the extremum over the other dim.
    summed, picked = (d0, d1) if abs(ord) == 1 else (d1, d0)
    if not keepdim and summed < picked:
        picked -= 1
    sums = vector_norm(A, 1.0, (summed,), keepdim, dtype=dtype)
    return (reductions.amax if ord > 0 else reductions.amin)(sums, picked, keepdim)


def _singular_value_norm(A, ord, dims, keepdim, dtype):
    """matrix_norm's 'nuc', 2 and -2, composed as PyTorch's: the singular
    values of ``A`` permuted to put ``dims`` last, summed ('nuc') or their
    max (2; zeros for empty matrices) or min (-2); with ``keepdim`` the two
    dims put back as size 1."""
    if dtype is not None:
        dtype = dtypes.to_dtype(dtype, "linalg_matrix_norm")
        if not dtype.is_floating_point:
            raise RuntimeError("linalg.matrix_norm: dtype should be floating point or complex, "
                               f"but got {dtype.tensor_type[:-6]}")
    _float_input(A, "linalg.matrix_norm")
    if A.dtype.itemsize < 4:
        raise RuntimeError("linalg.matrix_norm: Low precision dtypes not supported. Got "
                           f"{A.dtype.tensor_type[:-6]}")
    if dtype is not None:
        A = A.to(dtype)
    permutation = tuple(k for k in range(A.ndim) if k not in dims) + tuple(dims)
    values = svdvals(views.permute(A, permutation))
    if ord == "nuc":
        result = reductions.sum(values, -1, keepdim)
    elif ord == 2 and values.shape[-1] == 0:  # (the max of none: 0, as PyTorch's)
        shape = tuple(values.shape[:-1]) + ((1,) if keepdim else ())
        result = Tensor._from_op(A._backend.zeros(shape, A._data.dtype), None, A.dtype,
                                 A._backend)
    else:
        result = (reductions.amax if ord > 0 else reductions.amin)(values, -1, keepdim)
    if keepdim:
        result = views.permute(views.unsqueeze(result, -1),
                               tuple(permutation.index(k) for k in range(A.ndim)))
    return result


@dual.tangent_rule(dual.BY_VJP)
def linalg_norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """linalg.norm(A, ord=None, dim=None, keepdim=False, *, dtype=None) -> Tensor

    A vector norm (``dim`` an int or 1-tuple, or a 1-D input) or a matrix
    norm (``dim`` a 2-tuple, or a 2-D input with ``ord`` given); with neither
    ``dim`` nor ``ord``, the 2-norm of all elements."""
    if dim is not None:
        dims = (dim,) if not isinstance(dim, (tuple, list)) else tuple(dim)
        if len(dims) == 1:
            return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype)
        return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    if A.ndim not in (1, 2):
        raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input must be 1D "
                           f"or 2D. Got {A.ndim}D.")
    if A.ndim == 1 and not isinstance(ord, str):
        return vector_norm(A, ord, None, keepdim, dtype=dtype)
    return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)


@tensor_op(tangent=dual.BY_VJP, out=True)
def norm(self, p="fro", dim=None, keepdim=False, dtype=None):
    """norm(input, p='fro', dim=None, keepdim=False, dtype=None) -> Tensor

    The ``p``-norm over ``dim`` (all elements when None), as PyTorch's
    (deprecated) ``torch.norm``: a number ``p`` is a vector norm over the dims
    given; 'fro' the 2-norm; 'nuc' a matrix norm."""
    if isinstance(dim, numbers.Integral) and not isinstance(dim, bool):
        dim = (dim,)
    if isinstance(p, str):
        if p == "fro" and (dim is None or len(dim) <= 2):
            return vector_norm(self, 2, dim, keepdim, dtype=dtype)
        return matrix_norm(self, p, list(range(self.ndim)) if dim is None else dim, keepdim,
                           dtype=dtype)
    return vector_norm(self, 2.0 if p is None else p, dim, keepdim, dtype=dtype)
