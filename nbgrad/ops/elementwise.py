"""Elementwise ops: the row type, and the dispatch that runs a row's kernels.

A row is a scalar forward function plus, for each differentiable input, its
derivative. Parameter names carry meaning: the forward's parameters name the
inputs, and a derivative reads ``g`` (the incoming gradient), ``out`` (the
forward result) and any inputs by name. What a derivative reads is exactly
what the forward saves, so ``mul`` saves the other operand and ``sigmoid`` its
output, as in PyTorch.
"""
import inspect
import numbers

import numpy as np

from .. import dtypes
from ..autograd import grad_mode
from ..autograd.graph import Node, SavedTensor
from ..tensor import Tensor
from . import mutation
from .broadcasting import broadcast_shapes

_TYPE_NAMES = {"float32": "Float", "float64": "Double", "int64": "Long", "bool": "Bool"}


class ElementwiseOp:
    """One row of the op table; calling it applies the op to tensors."""

    def __init__(self, name, forward, grads=None, *, result="promote", bool_inputs=(),
                 domain=(-2.0, 2.0), method=True, title=None):
        """``result``: "promote" (PyTorch's promotion), "float" (integer
        results become float32, as for ``div`` and ``exp``), "bool"
        (comparisons) or "self" (the dtype of the first input, for ``copy_``).
        ``bool_inputs`` are masks kept out of promotion. ``domain`` is where
        tests sample inputs. ``method`` adds ``Tensor.<name>``/``<name>_``."""
        self.name = name
        self.forward = forward
        self.inputs = tuple(inspect.signature(forward).parameters)
        grads = dict(grads or {})
        unknown = set(grads) - set(self.inputs)
        if unknown:
            raise ValueError(f"{name}: derivatives given for unknown inputs {sorted(unknown)}; "
                             f"the forward's inputs are {self.inputs}")
        self._derivatives = [grads.get(n) for n in self.inputs]
        self._grad_params = []
        allowed = {"g", "out", *self.inputs}
        for n, fn in zip(self.inputs, self._derivatives):
            params = tuple(inspect.signature(fn).parameters) if fn else ()
            if set(params) - allowed:
                raise ValueError(f"{name}: the derivative for {n!r} reads {sorted(set(params) - allowed)}; "
                                 f"it may read only {sorted(allowed)}")
            self._grad_params.append(params)
        if result not in ("promote", "float", "bool", "self"):
            raise ValueError(f"{name}: result must be promote, float, bool or self, not {result!r}")
        self.result = result
        self.bool_inputs = tuple(self.inputs.index(n) for n in bool_inputs)
        self.differentiable = tuple(i for i, fn in enumerate(self._derivatives) if fn is not None)
        # Derivatives that are just ``g`` (add, sub's first input) need no kernel.
        self.passthrough = frozenset(i for i in self.differentiable if _is_identity(
            self._derivatives[i], self._grad_params[i]))
        self._reads = {}
        self.domain = domain
        self.method = method
        self.op_name = title or "".join(part.title() for part in name.split("_"))

    def derivative(self, i):
        return self._derivatives[i]

    def reads(self, needed):
        """Names the derivatives of the inputs flagged in ``needed`` read."""
        names = self._reads.get(needed)
        if names is None:
            names = self._reads[needed] = frozenset(
                p for i in self.differentiable if needed[i] for p in self._grad_params[i])
        return names

    def grad_params(self, i):
        return self._grad_params[i]

    def __call__(self, *args):
        return apply(self, args)

    def inplace(self, tensor, *args):
        return apply_inplace(self, tensor, args)

    def __repr__(self):
        return f"<elementwise op {self.name}{self.inputs}>"


def elementwise(name, forward, grads=None, **options):
    """Declare a new elementwise op as one row; returns it, ready to call.

    >>> square = nbgrad.elementwise("square", lambda a: a * a, grads={"a": lambda g, a: 2 * g * a})
    >>> square(nbgrad.tensor([3.0], requires_grad=True)).backward()
    """
    return ElementwiseOp(name, forward, grads, **options)


def _is_identity(fn, params):
    if params != ("g",):
        return False
    marker = object()
    try:
        return fn(marker) is marker
    except Exception:  # arithmetic on the marker: not the identity
        return False


class ElementwiseBackward(Node):
    __slots__ = ("row", "args", "out", "dtype", "backend", "title")

    def __init__(self, row, args, dtype, backend, inplace=False, title=None):
        super().__init__(args)
        self.row, self.dtype, self.backend = row, dtype, backend
        self.title = title or row.op_name
        reads = row.reads(tuple(e is not None for e in self.next_edges))
        saved = []
        for k, (name, a) in enumerate(zip(row.inputs, args)):
            if name not in reads:
                saved.append(None)
            elif not isinstance(a, Tensor):  # a number, typed as the kernel will see it
                saved.append(np.bool_(a) if k in row.bool_inputs else dtype.numpy.type(a))
            elif inplace and k == 0:  # the value before the write, not after it
                saved.append(SavedTensor(Tensor._wrap(backend.copy(a._data), a.dtype, backend)))
            else:
                saved.append(SavedTensor(a))
        self.args = saved
        self.out = "out" in reads
        self.saved = tuple(s for s in saved if isinstance(s, SavedTensor))

    @property
    def op_name(self):
        return self.title

    def after_write(self, output):
        if self.out is True:
            self.out = SavedTensor(output, output_of=self.title)
            self.saved += (self.out,)

    def backward(self, grad):
        row, np_dtype = self.row, self.dtype.numpy
        args = []
        for a in self.args:
            if isinstance(a, SavedTensor):
                a = a.unpack()
                if a.dtype != np_dtype:
                    a = self.backend.cast(a, np_dtype)
            args.append(a)
        out = self.out.unpack() if isinstance(self.out, SavedTensor) else None
        if not row.differentiable:  # a comparison written in place: zero gradient, as in PyTorch
            return [None if e is None else self.backend.zeros(grad.shape, grad.dtype)
                    for e in self.next_edges]
        result = [None] * len(args)
        wanted = []
        for i in row.differentiable:
            if self.next_edges[i] is not None:
                if i in row.passthrough:
                    result[i] = grad
                else:
                    wanted.append(i)
        if wanted:  # none when only inputs without a derivative need a gradient
            for i, g in zip(wanted, self.backend.elementwise_backward(row, wanted, grad, args, out)):
                result[i] = g
        return result


def _device_error(a, b):
    return RuntimeError("Expected all tensors to be on the same device, but found at least two "
                        f"devices, {a.device} and {b.device}!")


def _prepare(row, args):
    """Promote, broadcast and unwrap the arguments of a row."""
    if len(args) != len(row.inputs):
        raise TypeError(f"{row.name}() takes {len(row.inputs)} arguments ({', '.join(row.inputs)}) "
                        f"but {len(args)} were given")
    first = None
    for a in args:
        if isinstance(a, Tensor):
            if first is None:
                first = a
            elif a._backend is not first._backend:
                raise _device_error(first, a)
        elif not isinstance(a, (numbers.Number, np.bool_)) or isinstance(a, complex):
            raise TypeError(f"{row.name}(): expected Tensor or number arguments, "
                            f"got {type(a).__name__}")
    if first is None:
        raise TypeError(f"{row.name}(): expected at least one Tensor argument")
    if row.result == "self":
        dtype = first.dtype
    else:
        dtype = dtypes.result_type([a for k, a in enumerate(args) if k not in row.bool_inputs])
        if row.result == "float" and not dtype.is_floating_point:
            dtype = dtypes.get_default_dtype()
    out_dtype = dtypes.bool_ if row.result == "bool" else dtype
    backend = first._backend
    shape = broadcast_shapes(*(a._data.shape for a in args if isinstance(a, Tensor)))
    scalar_type = dtype.numpy.type
    raw = []
    for k, a in enumerate(args):
        if isinstance(a, Tensor):
            data = a._data
            if k not in row.bool_inputs and data.dtype != dtype.numpy:
                data = backend.cast(data, dtype.numpy)
            raw.append(data)
        else:
            raw.append(np.bool_(a) if k in row.bool_inputs else scalar_type(a))
    return backend, dtype, out_dtype, shape, raw


def _broadcast(backend, raw, shape):
    return [r if isinstance(r, np.generic) or r.shape == shape else backend.broadcast_to(r, shape)
            for r in raw]


def _records(row, args):
    return grad_mode.is_grad_enabled() and any(
        isinstance(args[i], Tensor) and args[i].requires_grad for i in row.differentiable)


def apply(row, args):
    backend, dtype, out_dtype, shape, raw = _prepare(row, args)
    out = backend.empty(shape, out_dtype.numpy)
    backend.elementwise_forward(row, out, _broadcast(backend, raw, shape))
    node = ElementwiseBackward(row, args, dtype, backend) if _records(row, args) else None
    result = Tensor._from_op(out, node, out_dtype, backend)
    if node is not None:
        node.after_write(result)
    return result


def apply_inplace(row, self, args, op_name=None):
    """``self = row(self, *args)``, written into ``self``'s memory."""
    if not isinstance(self, Tensor):
        raise TypeError(f"{row.name}_(): self must be a Tensor, not {type(self).__name__}")
    others_require_grad = any(isinstance(args[i - 1], Tensor) and args[i - 1].requires_grad
                              for i in row.differentiable if 0 < i <= len(args))
    mutation.check_inplace(self, others_require_grad)  # PyTorch's order: before shapes and dtypes
    args = (self, *args)
    backend, dtype, out_dtype, shape, raw = _prepare(row, args)
    if shape != self._data.shape:
        raise RuntimeError(f"output with shape {list(self._data.shape)} doesn't match the "
                           f"broadcast shape {list(shape)}")
    if out_dtype.category > self.dtype.category:
        raise RuntimeError(f"result type {_TYPE_NAMES[out_dtype.name]} can't be cast to the "
                           f"desired output type {_TYPE_NAMES[self.dtype.name]}")
    out = self._data
    for a in args[1:]:  # the very same memory is fine (x.mul_(x)); a shifted overlap is not
        if isinstance(a, Tensor):
            mutation.check_no_partial_overlap(out, a._data)
    raw = _broadcast(backend, raw, shape)
    # A named method (zero_, fill_) names its node as PyTorch does; operators keep the row's.
    title = None
    if op_name and not op_name.startswith("__"):
        title = "".join(part.title() for part in op_name.strip("_").split("_"))
    return mutation.write(
        self, op_name or row.name + "_",
        kernel=lambda: backend.elementwise_forward(row, out, raw),
        make_node=lambda: ElementwiseBackward(row, args, dtype, backend, inplace=True, title=title),
        others_require_grad=others_require_grad, checked=True)
