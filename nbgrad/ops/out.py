"""The ``out=`` argument of PyTorch's functions: the result written into a
given tensor (resized where its shape differs, cast to its dtype where the
promotion allows), which is returned; never recorded by autograd, as in
PyTorch. An op declares it with ``tensor_op(..., out=True)``."""
import functools
import warnings

from ..tape import grad_mode
from ..tape.version_counter import user_stacklevel
from ..tensor import Tensor


def _requires_grad(values):
    for v in values:
        if v.__class__ is Tensor and v.requires_grad:
            return True
        if isinstance(v, (list, tuple)) and _requires_grad(v):
            return True
    return False


def write_out(name, result, out):
    """Write ``result`` (what the op returned) into ``out``, as PyTorch's out= does."""
    if out._backend is not result._backend:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two "
                           f"devices, {result.device} and {out.device}!")
    if result.dtype.category > out.dtype.category:
        raise RuntimeError(f"result type {result.dtype.tensor_type[:-6]} can't be cast to the "
                           f"desired output type {out.dtype.tensor_type[:-6]}")
    shape = result._data.shape
    if out._data.shape != shape:
        if out._data.size:
            warnings.warn(
                f"An output with one or more elements was resized since it had shape "
                f"{list(out._data.shape)}, which does not match the required output shape "
                f"{list(shape)}. This behavior is deprecated, and in a future PyTorch release "
                "outputs will not be resized unless they have zero elements. You can explicitly "
                "reuse an out tensor t by resizing it, inplace, to zero elements with "
                "t.resize_(0).", UserWarning, stacklevel=user_stacklevel())
        out._data = out._backend.empty(shape, out.dtype.numpy)  # resized: new storage
    data = result._data if result.dtype is out.dtype else out._backend.cast(result._data,
                                                                            out.dtype.numpy)
    out._data[...] = data
    out._version_counter.bump(f"{name}(out=)", out._data)
    return out


def with_out(fn, name):
    """``fn`` taking PyTorch's keyword-only ``out=``."""
    @functools.wraps(fn)
    def op(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        if isinstance(out, (tuple, list)) and out and all(isinstance(o, Tensor) for o in out):
            # (values, indices) results (sort, topk, kthvalue): one tensor per output
            if grad_mode.is_grad_enabled() and (_requires_grad(out) or _requires_grad(args)
                                                or _requires_grad(kwargs.values())):
                raise RuntimeError(f"{name}(): functions with out=... arguments don't support "
                                   "automatic differentiation, but one of the arguments requires "
                                   "grad.")
            with grad_mode.no_grad():
                result = fn(*args, **kwargs)
                if not isinstance(result, tuple) or len(result) != len(out):
                    raise TypeError(f"{name}(): argument 'out' must be Tensor, not "
                                    f"{type(out).__name__}")
                written = [write_out(name, r, o) for r, o in zip(result, out)]
            return type(result)(*written)
        if not isinstance(out, Tensor):
            raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
        if grad_mode.is_grad_enabled() and (out.requires_grad or _requires_grad(args)
                                            or _requires_grad(kwargs.values())):
            raise RuntimeError(f"{name}(): functions with out=... arguments don't support "
                               "automatic differentiation, but one of the arguments requires grad.")
        with grad_mode.no_grad():
            return write_out(name, fn(*args, **kwargs), out)
    return op
