"""Matrix products. The CPU product is NumPy's BLAS."""
from ..autograd import grad_mode
from ..autograd.graph import Node
from ..tensor import Tensor
from .elementwise import _device_error


class MatmulBackward(Node):
    __slots__ = ("backend", "_op_name")

    def __init__(self, a, b, backend, op_name):
        super().__init__([a, b])
        # Each side's gradient needs the other side only.
        self.save(b if self.needs_grad(0) else None, a if self.needs_grad(1) else None)
        self.backend, self._op_name = backend, op_name

    @property
    def op_name(self):
        return self._op_name

    def backward(self, grad):
        b, a = self.saved_values()
        mm, swap = self.backend.matmul, self.backend.swap_last
        return [mm(grad, swap(b)) if b is not None else None,
                mm(swap(a), grad) if a is not None else None]


def _shapes_error(a, b):
    return RuntimeError(f"mat1 and mat2 shapes cannot be multiplied "
                        f"({'x'.join(map(str, a.shape[-2:]))} and {'x'.join(map(str, b.shape[-2:]))})")


def matmul(a, b):
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        raise TypeError(f"matmul(): argument 'other' must be Tensor, not "
                        f"{type(b if isinstance(a, Tensor) else a).__name__}")
    if a._backend is not b._backend:
        raise _device_error(a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{a.ndim}D and {b.ndim}D")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{_c_name(a.dtype)} != {_c_name(b.dtype)}")
    # Vectors are matrices with one row (left) or one column (right), squeezed after.
    if a.ndim == 1:
        out = matmul(a.unsqueeze(0), b)
        return out.squeeze(-2)
    if b.ndim == 1:
        out = matmul(a, b.unsqueeze(-1))
        return out.squeeze(-1)
    if a.shape[-1] != b.shape[-2]:
        raise _shapes_error(a, b)
    try:
        data = a._backend.matmul(a._data, b._data)
    except ValueError:  # batch dimensions that do not broadcast
        raise RuntimeError(f"matmul: batch dimensions of {list(a.shape)} and {list(b.shape)} "
                           f"do not broadcast") from None
    node = None
    if grad_mode.is_grad_enabled() and (a.requires_grad or b.requires_grad):
        node = MatmulBackward(a, b, a._backend, "Mm" if a.ndim == b.ndim == 2 else "Bmm")
    return Tensor._from_op(data, node, a.dtype, a._backend)


def _c_name(dtype):
    return {"float32": "float", "float64": "double", "int64": "long int", "bool": "bool"}[dtype.name]


def mm(a, b):
    if a.ndim != 2 or b.ndim != 2:
        raise RuntimeError(f"{'self' if a.ndim != 2 else 'mat2'} must be a matrix")
    return matmul(a, b)
