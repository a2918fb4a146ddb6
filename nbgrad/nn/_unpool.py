"""``max_unpool1d/2d/3d``: the partial inverse of a max pool, as PyTorch's
(re-exported by ``nbgrad.nn.functional``).

Each input element is put at its index in a zero plane of the output (a put
along the flattened plane, so a maximum that two overlapping windows picked is
written once, as PyTorch's); the gradient takes each element's gradient back
from there (``take_along_axis``; the two are each other's adjoint, so the
backward can be differentiated again). 1-D unpooling is the 2-D one over an
(..., L, 1) view, as PyTorch's.
"""
import numbers

import numpy as np

from .. import dtypes
from ..ops.arrays import ops_for
from ..ops.dual import tangent_rule
from ..tape import grad_mode
from ..tape.graph import Node, SavedValue
from ..tensor import Tensor


def _ntuple(value, nd):
    if isinstance(value, numbers.Integral):
        return (int(value),) * nd
    value = tuple(int(v) for v in value)
    return value * nd if len(value) == 1 else value


def _output_size(input, kernel, stride, padding, output_size):
    """PyTorch's ``_unpool_output_size``."""
    nd = len(kernel)
    default = [(input.size()[-nd + d] - 1) * stride[d] + kernel[d] - 2 * padding[d]
               for d in range(nd)]
    if output_size is None:
        return default
    output_size = tuple(output_size)
    if len(output_size) == nd + 2:
        output_size = output_size[2:]
    if len(output_size) != nd:
        raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} "
                         f"elements, but it has a length of '{len(output_size)}'")
    for d in range(nd):
        low, high = default[d] - stride[d], default[d] + stride[d]
        if not low < output_size[d] < high:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between '
                             f"{low} and {high})")
    return list(output_size)


class MaxUnpoolNDBackward(Node):
    """Each input element's gradient, taken from where it was put."""

    __slots__ = ("x_shape", "_op_name")

    def __init__(self, x, index, nd):
        super().__init__([x])
        self.saved = (SavedValue(index),)  # (planes, elements), freed with the graph
        self.x_shape = x._data.shape
        self._op_name = f"MaxUnpool{nd}D"

    @property
    def op_name(self):
        return self._op_name

    def backward(self, grad):
        xp = ops_for(grad)
        (index,) = self.saved_values()
        planes = xp.reshape(grad, (index.shape[0], -1))
        return [xp.reshape(xp.take_along_axis(planes, index, 1), self.x_shape)]


def _unpool(input, indices, out, nd, stride=None):
    """PyTorch's native max_unpooling{nd}d: checks in its order, then the put."""
    batched_ndim = nd + 2
    if nd == 3 and indices.dtype is not dtypes.int64:
        raise RuntimeError("elements in indices should be type int64")
    if indices.dtype is not dtypes.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: "
                           f"{dtypes.TYPE_NAMES[indices.dtype.name]}")
    if input.ndim not in (batched_ndim - 1, batched_ndim):
        raise RuntimeError(f"Input to max_unpooling{nd}d should be a {nd + 1}d or {nd + 2}d "
                           f"Tensor, but got a tensor with {input.ndim} dimensions.")
    if tuple(input.shape) != tuple(indices.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    for d in range(1, input.ndim):
        if input.shape[d] == 0:
            raise RuntimeError(f"max_unpooling{nd}d_forward_out_cpu(): Expected input to have "
                               f"non-zero size for non-batch dimensions, but got "
                               f"{list(input.shape)} with dimension {d} being empty.")
    if stride is not None and min(stride) <= 0:
        raise RuntimeError(f"strides should be greater than zero, but got stride: {list(stride)}")
    lead = tuple(input.shape[:-nd])
    planes = int(np.prod(lead))
    size = int(np.prod(out))
    backend = input._backend
    index = indices._data.reshape((planes, -1))
    host = backend.to_numpy(index)
    bad = np.nonzero(((host < 0) | (host >= size)).reshape(-1))[0]
    if bad.size:  # (PyTorch checks in parallel and names whichever it meets; this, the first)
        raise RuntimeError(f"Found an invalid max index: {host.reshape(-1)[bad[0]]} (output "
                           f"volumes are of size {'x'.join(map(str, out))})")
    values = input._data.reshape((planes, -1))
    result = ops_for(values).put_along((planes, size), index, values, 1)
    node = None
    if grad_mode.is_grad_enabled() and input.requires_grad:
        node = MaxUnpoolNDBackward(input, index, nd)
    return Tensor._from_op(result.reshape(lead + tuple(out)), node, input.dtype, backend)


@tangent_rule()  # forward mode: from its backward
def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Puts each element of ``input`` (N, C, H, W) or (C, H, W) at its
    ``indices`` (a max pool's ``return_indices``) in zeros of the output size."""
    kernel = _ntuple(kernel_size, 2)
    stride = kernel if stride is None else _ntuple(stride, 2)
    padding = _ntuple(padding, 2)
    out = _output_size(input, kernel, stride, padding, output_size)
    return _unpool(input, indices, out, 2)


@tangent_rule()  # forward mode: from its backward
def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """``max_unpool2d`` over an (..., L, 1) view of (N, C, L) or (C, L) ``input``."""
    kernel = _ntuple(kernel_size, 1)
    stride = kernel if stride is None else _ntuple(stride, 1)
    padding = _ntuple(padding, 1)
    out = _output_size(input, kernel, stride, padding, output_size) + [1]
    return _unpool(input.unsqueeze(-1), indices.unsqueeze(-1), out, 2).squeeze(-1)


@tangent_rule()  # forward mode: from its backward
def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Puts each element of ``input`` (N, C, D, H, W) or (C, D, H, W) at its
    ``indices`` (a max pool's ``return_indices``) in zeros of the output size."""
    kernel = _ntuple(kernel_size, 3)
    stride = kernel if stride is None else _ntuple(stride, 3)
    padding = _ntuple(padding, 3)
    out = _output_size(input, kernel, stride, padding, output_size)
    return _unpool(input, indices, out, 3, stride)
