"""Cumulative scans along one dim: cumsum, cumprod, cummax, cummin (the
backends' ``cumulative`` and ``cumulative_extremum``). Each backward is
written once against ``ops_for(grad)``; cumsum and the reversed cumsum are
each other's gradients, so every scan has second derivatives."""
import numpy as np

from .. import dtypes
from ..tape.graph import Node, SavedTensor, SavedValue
from ..tensor import Tensor
from . import dual, mutation
from .arrays import ops_for
from .reductions import _recording, _return_type
from .registry import tensor_op

CummaxResult, CumminResult = _return_type("cummax"), _return_type("cummin")


def _raw(value):
    return value._data if isinstance(value, Tensor) else value


def _axis(self, dim, fn):
    if dim is None:
        raise TypeError(f'{fn}() missing 1 required positional arguments: "dim"')
    if isinstance(dim, (tuple, list, bool)) or not hasattr(dim, "__index__"):
        raise TypeError(f"{fn}(): argument 'dim' (position 1) must be int, not "
                        f"{dtypes.type_name(dim)}")
    return self._dim(dim, fn)


def _scan_dtype(self, dtype, fn):
    """PyTorch's: bool and integers accumulate in int64 unless ``dtype`` says."""
    return dtypes.to_dtype(dtype, fn) or (
        self.dtype if self.dtype.is_floating_point else dtypes.int64)


# -- the formula operations: cumsum forwards and backwards, raw or taped ----------------
def _cumsum_formula(xp, a, axis, reverse=False):
    if xp.graph:
        return (_reverse_cumsum if reverse else cumsum)(a, axis)
    return xp.backend.cumulative(a, axis, "sum", None, reverse)


def _cumprod_formula(xp, a, axis):
    return cumprod(a, axis) if xp.graph else xp.backend.cumulative(a, axis, "prod")


def _prod_formula(xp, a, axis):
    """The product along ``axis``, kept as a dim."""
    if xp.graph:
        from .statistics import prod
        return prod(a, axis, True)
    return xp.backend.reduce_prod(a, axis, True)


class CumsumBackward(Node):
    """The gradient summed from the end (a reversed cumsum)."""

    __slots__ = ("axis", "reverse", "cast")
    op_name = "Cumsum"

    def __init__(self, source, axis, reverse=False, cast=None):
        super().__init__([source])
        self.axis, self.reverse, self.cast = axis, reverse, cast

    def backward(self, grad):
        xp = ops_for(grad)
        if self.cast is not None:  # summed in the input's dtype, as PyTorch's
            grad = xp.cast(grad, self.cast)
        if self.axis is None:  # a 0-d input
            return [grad]
        return [_cumsum_formula(xp, grad, self.axis, reverse=not self.reverse)]


class _ReverseCumsumBackward(CumsumBackward):
    __slots__ = ()
    op_name = "ReverseCumsum"


def _reverse_cumsum(self, axis):
    """The cumsum from the end along ``axis`` (taped): cumsum's gradient."""
    data = self._backend.cumulative(self._data, axis, "sum", None, True)
    node = _ReverseCumsumBackward(self, axis, reverse=True) if _recording(self) else None
    return Tensor._from_op(data, node, self.dtype, self._backend)


def _scan(self, dim, dtype, fn, op):
    dtype = _scan_dtype(self, dtype, fn)
    axis = _axis(self, dim, fn)
    backend = self._backend
    recording = _recording(self) and dtype.is_floating_point
    if op == "sum":
        data = backend.cumulative(self._data, axis if self.ndim else 0, op, dtype.numpy)
        cast = None if dtype is self.dtype else self.dtype.numpy
        node = CumsumBackward(self, axis if self.ndim else None, cast=cast) if recording else None
        return Tensor._from_op(data, node, dtype, backend)
    source = self if dtype is self.dtype else self.to(dtype)  # differentiable through the cast
    data = backend.cumulative(source._data, axis if self.ndim else 0, op, dtype.numpy)
    node = CumprodBackward(source, axis if self.ndim else None) if recording else None
    result = Tensor._from_op(data, node, dtype, backend)
    if node is not None:
        node.saved = (SavedTensor(source), SavedTensor(result, output_of="Cumprod"))
    return result


@tensor_op(tangent=dual.LINEAR, out=True)
def cumsum(self, dim=None, *, dtype=None):
    """cumsum(input, dim, *, dtype=None) -> Tensor

    The cumulative sum along ``dim``; bool and integers sum in int64."""
    return _scan(self, dim, dtype, "cumsum", "sum")


_LONG_NAMES = {"float32": "float", "float64": "double", "int64": "long int", "bool": "bool"}


def _scan_(self, dim, dtype, fn, op):
    """cumsum_/cumprod_: the scan written into ``self`` (PyTorch's dtype rule:
    the result's dtype must be ``self``'s)."""
    mutation.check_inplace(self, False)
    axis = _axis(self, dim, fn)
    want = _scan_dtype(self, dtype, fn)
    if self.dtype is dtypes.bool_:
        raise NotImplementedError(f'"{op_kernel(op)}" not implemented for \'Bool\'')
    if want is not self.dtype:
        raise RuntimeError(f"Bad in-place call: input tensor dtype {_LONG_NAMES[self.dtype.name]} "
                           f"and output tensor dtype {_LONG_NAMES[want.name]} should match")
    backend = self._backend
    data = backend.cumulative(self._data, axis if self.ndim else 0, op)
    scalar_axis = axis if self.ndim else None

    def make_node():
        if not self.dtype.is_floating_point:
            return None
        if op == "sum":
            return CumsumBackward(self, scalar_axis)
        node = CumprodBackward(self, scalar_axis)  # the input's value, saved before the write
        node.saved = (SavedTensor(Tensor._wrap(backend.copy(self._data), self.dtype, backend)),)
        return node

    def kernel():
        self._data[...] = data
    return mutation.write(self, fn, kernel, make_node, False, checked=True)


def op_kernel(op):
    return "cumsum_out_cpu" if op == "sum" else "cumprod_out_cpu"


@tensor_op(function=False)
def cumsum_(self, dim=None, *, dtype=None):
    """In-place :func:`cumsum`."""
    return _scan_(self, dim, dtype, "cumsum_", "sum")


@tensor_op(function=False)
def cumprod_(self, dim=None, *, dtype=None):
    """In-place :func:`cumprod`."""
    return _scan_(self, dim, dtype, "cumprod_", "prod")


class CumprodBackward(Node):
    """PyTorch's cumprod_backward: ``reverse_cumsum(grad * out) / x`` before a
    line's first zero; at that zero the product of the elements before it
    times the reversed sum of the gradient weighted by the products after
    it; zero beyond."""

    __slots__ = ("axis",)
    op_name = "Cumprod"

    def __init__(self, source, axis):
        super().__init__([source])
        self.axis = axis

    def after_write(self, output):
        """(cumprod_: the written tensor is the output to save)"""
        self.saved = (self.saved[0], SavedTensor(output, output_of="Cumprod"))

    def backward(self, grad):
        xp = ops_for(grad)
        x, out = self.saved_values(xp.graph)
        axis, backend = self.axis, xp.backend
        if axis is None:  # a 0-d input: d out / d x = 1
            return [grad]
        xr = _raw(x)
        zero = xr == 0
        if not int(backend.reduce_sum(zero, None, False, np.int64)):
            summed = _cumsum_formula(xp, xp.run("mul", grad, out), axis, reverse=True)
            return [xp.run("div", summed, x)]
        if xp.graph:  # differentiable again at the zeros too (PyTorch's O(n^2) loop)
            return [_cumprod_backward_taped(grad, x, axis)]
        summed = _cumsum_formula(xp, xp.run("mul", grad, out), axis, reverse=True)
        seen = backend.cumulative(backend.cast(zero, np.int64), axis, "sum")  # zeros so far
        before = seen == 0
        first = backend.where(zero, seen == 1, False)  # each line's first zero
        after = seen >= 1
        one, nothing = _like(xp, x, 1), _like(xp, x, 0)
        constant = xp.constant
        head = xp.run("div", summed, xp.where(constant(before), x, one))
        # at the first zero: (prod of x before it) * sum_k grad_k * prod(x after it, to k)
        lead = _prod_formula(xp, xp.where(constant(before), x, one), axis)
        tail = _cumprod_formula(xp, xp.where(constant(backend.where(first, False, after)), x,
                                             one), axis)
        weighted = xp.where(constant(after), xp.run("mul", grad, tail), nothing)
        at_zero = xp.run("mul", lead, xp.reduce_sum(weighted, axis, True))
        return [xp.where(constant(before), head,
                         xp.where(constant(first), at_zero, nothing))]


def _cumprod_backward_taped(grad, x, axis):
    """sum_{i >= k} grad_i prod_{j <= i, j != k} x_j for each k, by taped ops:
    prod(x before k) * sum(grad from k * [1, cumprod(x after k)])."""
    from . import joining
    from .statistics import prod
    lead_dims = (slice(None),) * axis
    n = x.shape[axis]
    columns = []
    for k in range(n):
        ones = nbgrad_ones(x, axis, 1)
        after = [ones] + ([cumprod(x[lead_dims + (slice(k + 1, None),)], axis)] if k + 1 < n
                          else [])
        omitted = joining.cat(after, axis) if len(after) > 1 else ones
        total = reductions_sum(grad[lead_dims + (slice(k, None),)] * omitted, axis)
        if k:
            total = total * prod(x[lead_dims + (slice(0, k),)], axis, True)
        columns.append(total)
    return joining.cat(columns, axis)


def nbgrad_ones(x, axis, size):
    """Ones of ``x``'s shape with ``size`` along ``axis`` (a constant Tensor)."""
    shape = tuple(size if k == axis else n for k, n in enumerate(x.shape))
    return Tensor._wrap(x._backend.full(shape, 1, x._data.dtype), x.dtype, x._backend)


def reductions_sum(a, axis):
    from .reductions import sum as total
    return total(a, axis, True)


def _like(xp, value, number):
    raw = _raw(value)
    return xp.constant(xp.backend.full((), number, raw.dtype))


@tensor_op(tangent=dual.BY_VJP, out=True)
def cumprod(self, dim=None, *, dtype=None):
    """cumprod(input, dim, *, dtype=None) -> Tensor

    The cumulative product along ``dim``; bool and integers multiply in int64."""
    return _scan(self, dim, dtype, "cumprod", "prod")


class CumExtremumBackward(Node):
    """The gradient added at the running extremum's index (PyTorch's
    cummaxmin_backward: a scatter_add along the dim)."""

    __slots__ = ("axis", "shape", "_op_name")

    def __init__(self, source, indices, axis, op_name):
        super().__init__([source])
        self.saved = (SavedValue(indices),)
        self.axis, self.shape, self._op_name = axis, source._data.shape, op_name

    @property
    def op_name(self):
        return self._op_name

    def backward(self, grad):
        xp = ops_for(grad)
        (indices,) = self.saved_values()
        if self.axis is None:
            return [grad]
        indices = xp.backend.to_numpy(indices)
        shape = self.shape
        key = tuple(indices if k == self.axis else
                    np.arange(n).reshape(tuple(n if j == k else 1 for j in range(len(shape))))
                    for k, n in enumerate(shape))
        if not indices.size:
            return [xp.zeros(shape, _raw(grad).dtype)]
        return [xp.index_add(shape, key, grad)]


def _cum_extremum(self, dim, fn):
    axis = _axis(self, dim, fn)
    backend = self._backend
    data = self._data if self.ndim else self._data.reshape(1)
    values, indices = backend.cumulative_extremum(data, axis if self.ndim else 0, fn[3:])
    if not self.ndim:
        values, indices = values.reshape(()), indices.reshape(())
    node = None
    if _recording(self):
        node = CumExtremumBackward(self, indices, axis if self.ndim else None, fn.capitalize())
    result = CummaxResult if fn == "cummax" else CumminResult
    return result(Tensor._from_op(values, node, self.dtype, backend),
                  Tensor._wrap(indices, dtypes.int64, backend))


@tensor_op(tangent=dual.BY_VJP)
def cummax(self, dim=None):
    """cummax(input, dim) -> (values, indices)

    The running maximum along ``dim`` and where it was found (a NaN stays the
    maximum; of equal values the later one's index)."""
    return _cum_extremum(self, dim, "cummax")


@tensor_op(tangent=dual.BY_VJP)
def cummin(self, dim=None):
    """cummin(input, dim) -> (values, indices)

    The running minimum along ``dim`` and where it was found."""
    return _cum_extremum(self, dim, "cummin")
