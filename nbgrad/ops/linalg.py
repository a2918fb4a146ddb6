"""Matrix products. The CPU product is NumPy's BLAS."""
import collections

import numpy as np

from .. import dtypes
from ..tape import grad_mode
from ..tape.graph import Node
from ..tensor import Tensor
from .elementwise import _TYPE_NAMES, _device_error
from .arrays import ops_for
from . import dual
from .registry import tensor_op


class MatmulBackward(Node):
    """Backward of every matmul form. A 1-D operand is a matrix with one row
    (left) or one column (right); its gradient is squeezed back, and the
    engine sums away broadcast batch dimensions."""

    __slots__ = ("backend", "_op_name", "a_vector", "b_vector")

    def __init__(self, a, b, backend, op_name):
        super().__init__([a, b])
        # Each side's gradient needs the other side only.
        self.save(b if self.needs_grad(0) else None, a if self.needs_grad(1) else None)
        self.backend, self._op_name = backend, op_name
        self.a_vector, self.b_vector = a.ndim == 1, b.ndim == 1

    @property
    def op_name(self):
        return self._op_name

    def backward(self, grad):
        xp = ops_for(grad)
        b, a = self.saved_values(xp.graph)
        shape = tuple(grad.shape)
        if self.b_vector:  # restore the squeezed dims, last one first
            grad = xp.reshape(grad, shape + (1,))
            b = b if b is None else xp.reshape(b, (-1, 1))
        if self.a_vector:
            grad = xp.reshape(grad, tuple(grad.shape[:-1]) + (1,) + tuple(grad.shape[-1:]))
            a = a if a is None else xp.reshape(a, (1, -1))
        # PyTorch's dot and mv gradients (grad * other, ger) for a vector other are outer products.
        grad_a = _product(xp, grad, xp.swap_last(b), outer=self.b_vector) if b is not None else None
        grad_b = _product(xp, xp.swap_last(a), grad, outer=self.a_vector and self.b_vector) \
            if a is not None else None
        if self.a_vector and grad_a is not None:
            grad_a = grad_a.squeeze(-2)
        if self.b_vector and grad_b is not None:
            grad_b = grad_b.squeeze(-1)
        return [grad_a, grad_b]


def _product(xp, a, b, outer=False):
    """``a @ b`` with the formula operations ``xp``, with PyTorch's signs of
    zero where its BLAS (MKL) forms the products themselves rather than
    adding them to +0, as NumPy does: a 2-D product over one term with more
    than one row and column (gemm; with one row or column, gemv adds), or an
    outer product (``outer``: PyTorch's ger and mul in the dot and mv
    gradients)."""
    if (a.ndim == b.ndim == 2 and a.shape[1] == 1 and (xp.graph or a.dtype.kind == "f")
            and (outer or (a.shape[0] > 1 and b.shape[1] > 1))):
        return xp.run("mul", a, b)  # (m, 1) * (1, n)
    return xp.matmul(a, b)


def _dims(shape):
    return "x".join(map(str, shape))


def _c_name(dtype):
    return dtypes.CPP_NAMES[dtype.name]


class _Operand(collections.namedtuple("_Operand", "shape strides requires_grad dtype")):
    """What PyTorch's matmul dispatch looks at: sizes, strides, requires_grad, dtype."""

    @property
    def ndim(self):
        return len(self.shape)

    def mT(self):
        return self._replace(shape=self.shape[:-2] + self.shape[-2:][::-1],
                             strides=self.strides[:-2] + self.strides[-2:][::-1])


def _operand(t):
    return _Operand(tuple(t.shape), t.stride(), t.requires_grad, t.dtype)


def _should_fold(a, b):
    """PyTorch's should_fold: can the larger operand be folded into a matrix?"""
    a_larger = a.ndim >= b.ndim
    t1 = a if a_larger else b.mT()
    if not (t1.ndim >= 3 and (b.ndim if a_larger else a.ndim) <= 2):
        return False
    if (b if a_larger else a).requires_grad:
        return True
    if a.ndim == 2:
        return False
    if 0 in t1.shape:
        return True
    return all(t1.strides[i] == t1.strides[i + 1] * t1.shape[i + 1] for i in range(t1.ndim - 2))


def _mm_check(m1, m2):
    if m1.shape[1] != m2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_dims(m1.shape)} and "
                           f"{_dims(m2.shape)})")
    if m1.dtype is not m2.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{_c_name(m1.dtype)} != {_c_name(m2.dtype)}")


def _mv_check(mat, vec):
    if mat.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({mat.shape[0]}), mat ({_dims(mat.shape)}), "
                           f"vec ({vec.shape[0]})")
    if mat.dtype is not vec.dtype:
        names = _TYPE_NAMES[vec.dtype.name], _TYPE_NAMES[mat.dtype.name], _TYPE_NAMES[vec.dtype.name]
        raise RuntimeError("addmv input tensors must have the same dtype, but got "
                           "{}, {}, and {}".format(*names))


def _plan(a, b):
    """Follow PyTorch's _matmul_impl dispatch for operands ``a`` and ``b``
    (``_Operand``s): raise its error for bad operands, else return the name
    of the backward node its result ends with."""
    if a.ndim == 1 and b.ndim == 1:
        if a.dtype is not b.dtype:
            raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                               f"{_TYPE_NAMES[a.dtype.name]} and {_TYPE_NAMES[b.dtype.name]}")
        if a.shape != b.shape:
            n, m = a.shape[0], b.shape[0]
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to "
                               f"have the same number of elements, but got {n} and {m} elements "
                               f"respectively")
        return "Dot"
    if a.ndim == 2 and b.ndim == 1:
        _mv_check(a, b)
        return "Mv"
    if a.ndim == 1 and b.ndim == 2:
        _mm_check(a._replace(shape=(1,) + a.shape), b)
        return "Squeeze"
    if a.ndim == 2 and b.ndim == 2:
        _mm_check(a, b)
        return "Mm"
    if _should_fold(a, b):
        transpose = b.ndim > a.ndim
        t1 = b.mT() if transpose else a
        t2 = (a.mT() if a.ndim == 2 else a) if transpose else b
        rows = int(np.prod(t1.shape[:-1], dtype=np.int64))
        folded = t1._replace(shape=(rows, t1.shape[-1]))
        if t2.ndim == 2:
            _mm_check(folded, t2)
            if not transpose:
                return "UnsafeView"
            # (b^T a^T)^T, made contiguous: a copy unless the transpose already is
            n, p = a.shape[0], b.shape[-1]
            return "Transpose" if n <= 1 or p <= 1 or 0 in b.shape else "Clone"
        _mv_check(folded, t2)
        return "UnsafeView"
    batch_a = a.shape[:-2] if a.ndim > 1 else ()
    batch_b = b.shape[:-2] if b.ndim > 1 else ()
    if a.ndim == 3 and b.ndim == 3 and batch_a[0] != batch_b[0]:
        if batch_a[0] == 1 and a.requires_grad:
            return _plan(a._replace(shape=a.shape[1:], strides=a.strides[1:]), b)
        if batch_b[0] == 1 and b.requires_grad:
            return _plan(a, b._replace(shape=b.shape[1:], strides=b.strides[1:]))
    ndim = max(len(batch_a), len(batch_b))
    padded_a = (1,) * (ndim - len(batch_a)) + batch_a
    padded_b = (1,) * (ndim - len(batch_b)) + batch_b
    for k, (m, n) in enumerate(zip(padded_a, padded_b)):
        if m != n and m != 1 and n != 1:
            raise RuntimeError(f"The size of tensor a ({m}) must match the size of tensor b ({n}) "
                               f"at non-singleton dimension {k}")
    batch = int(np.prod([n if m == 1 else m for m, n in zip(padded_a, padded_b)], dtype=np.int64))
    inner_a, inner_b = a.shape[-1], (b.shape[-2] if b.ndim > 1 else b.shape[0])
    if inner_a != inner_b:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{batch}, {inner_a}] but got: [{batch}, {inner_b}].")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected scalar type {_TYPE_NAMES[a.dtype.name]} but found "
                           f"{_TYPE_NAMES[b.dtype.name]}")
    return "UnsafeView"


def _bool_kernel_name(a, b, op_name):
    """The CPU kernel PyTorch's matmul reaches for these operands (named in its refusal)."""
    if op_name in ("Dot", "Mv"):
        return "dot" if op_name == "Dot" else "addmv_impl_cpu"
    if op_name == "UnsafeView" and not _should_fold(_operand(a), _operand(b)):
        return "bmm"
    return "addmv_impl_cpu" if min(a.ndim, b.ndim) == 1 and op_name == "UnsafeView" \
        else "addmm_impl_cpu_"


@tensor_op(tangent=dual.BILINEAR, out=True)
def matmul(a, b):
    for k, (arg, t) in enumerate((("input", a), ("other", b))):
        if not isinstance(t, Tensor):
            raise TypeError(f"matmul(): argument '{arg}' (position {k + 1}) must be Tensor, "
                            f"not {type(t).__name__}")
    if a._backend is not b._backend:
        raise _device_error(a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{a.ndim}D and {b.ndim}D")
    op_name = _plan(_operand(a), _operand(b))
    # PyTorch has no bool kernel: the one it would dispatch to refuses, but its
    # mm/mv/bmm return (zeros) before reaching it when an operand is empty.
    if a.dtype is dtypes.bool_ and (op_name == "Dot" or (a.numel() and b.numel())):
        raise NotImplementedError(f'"{_bool_kernel_name(a, b, op_name)}" not implemented for '
                                  "'Bool'")
    # A vector is a matrix with one row (left) or one column (right), squeezed after.
    a_data = a._data.reshape(1, -1) if a.ndim == 1 else a._data
    b_data = b._data.reshape(-1, 1) if b.ndim == 1 else b._data
    data = _product(ops_for(a_data), a_data, b_data) if op_name == "Mm" else \
        a._backend.matmul(a_data, b_data)
    if a.ndim == 1:
        data = data.squeeze(-2)
    if b.ndim == 1:
        data = data.squeeze(-1)
    node = None
    if grad_mode.is_grad_enabled() and (a.requires_grad or b.requires_grad):
        node = MatmulBackward(a, b, a._backend, op_name)
    return Tensor._from_op(a._backend.ascontiguous(data), node, a.dtype, a._backend)


@tensor_op(tangent=dual.BILINEAR, out=True)
def mm(a, b):
    for k, (arg, t) in enumerate((("input", a), ("mat2", b))):
        if not isinstance(t, Tensor):
            raise TypeError(f"mm(): argument '{arg}' (position {k + 1}) must be Tensor, "
                            f"not {type(t).__name__}")
    if a.ndim != 2 or b.ndim != 2:
        raise RuntimeError(f"{'self' if a.ndim != 2 else 'mat2'} must be a matrix")
    return matmul(a, b)
