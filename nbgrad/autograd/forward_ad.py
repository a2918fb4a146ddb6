"""Forward-mode automatic differentiation (``torch.autograd.forward_ad``).

Inside ``dual_level()``, ``make_dual(primal, tangent)`` gives a tensor that
carries ``tangent``; every op then computes the tangents of its outputs
(the Jacobian times its inputs' tangents) as it computes their values, and
``unpack_dual`` reads them back. An elementwise row computes value and
tangent in one fused kernel pass generated from its derivatives; other ops
follow the tangent rule declared with them (``nbgrad.ops.dual``).

>>> with forward_ad.dual_level():
...     x = forward_ad.make_dual(nbgrad.tensor([1.0, 2.0]), nbgrad.tensor([1.0, 0.0]))
...     forward_ad.unpack_dual(x.sin()).tangent          # cos(x) * [1, 0]
"""
import collections
import contextlib

from ..ops import dual
from ..tensor import Tensor

__all__ = ["dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual",
           "UnpackedDualTensor"]


class UnpackedDualTensor(collections.namedtuple("UnpackedDualTensor", ["primal", "tangent"])):
    """``unpack_dual``'s result: the primal (a view without the tangent) and the tangent."""

    __slots__ = ()


def enter_dual_level():
    """enter_dual_level() -> int

    Open a dual level (one at a time, as PyTorch) and return it."""
    return dual.enter_level()


def exit_dual_level(*, level=None):
    """exit_dual_level(*, level=None)

    Close the dual level: the tangents made in it are dropped."""
    dual.exit_level(level)


@contextlib.contextmanager
def dual_level():
    """dual_level()

    A context manager in which tensors may carry tangents."""
    level = enter_dual_level()
    try:
        yield level
    finally:
        exit_dual_level(level=level)


def _type_name(dtype):
    return f"torch.{dtype.name}"


def make_dual(tensor, tangent, *, level=None):
    """make_dual(tensor, tangent, *, level=None) -> Tensor

    A view of ``tensor`` (sharing its memory) that carries ``tangent`` as its
    forward gradient at the open dual level."""
    if dual.LEVEL is None:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make "
                           "sure to enter_dual_level() first.")
    if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
        raise TypeError(f"make_dual(): expected Tensor arguments, but got "
                        f"{type(tensor).__name__} and {type(tangent).__name__}")
    if not tensor.dtype.is_floating_point:
        raise ValueError(f"Expected primal to be floating point or complex, but got: "
                         f"{_type_name(tensor.dtype)}")
    if not tangent.dtype.is_floating_point:
        raise ValueError(f"Expected tangent to be floating point or complex, but got: "
                         f"{_type_name(tangent.dtype)}")
    if tangent._data.shape != tensor._data.shape:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the original "
            f"Tensor, this is not supported. Tensor is of size {list(tensor.shape)} while the "
            f"given forward gradient is of size {list(tangent.shape)}.")
    if tangent._backend is not tensor._backend:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two "
                           f"devices, {tensor.device} and {tangent.device}!")
    with dual._Suspended():
        out = tensor.view_as(tensor)  # a view: same memory, its own tangent
    dual.set_tangent(out, tangent)
    return out


def unpack_dual(tensor, *, level=None):
    """unpack_dual(tensor, *, level=None) -> UnpackedDualTensor

    ``(primal, tangent)``: a view of ``tensor`` without a tangent, and its
    tangent at the open level (None if it has none)."""
    tangent = dual.tangent_of(tensor) if isinstance(tensor, Tensor) else None
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    with dual._Suspended():
        primal = tensor.view_as(tensor)
    return UnpackedDualTensor(primal, tangent)
