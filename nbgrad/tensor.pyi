"""Tensor's API as it is after ``import nbgrad`` (methods and operators are
installed by nbgrad/ops). Generated: do not edit; run ``python -m tests.tensor_stub --write``."""
from builtins import bool as _bool
from builtins import float as _float
from typing import Any

from .tape.graph import Node
from .device import device as _device
from .dtypes import dtype as _dtype


class Size(tuple[int, ...]):
    """A tensor's shape, printed as PyTorch prints it."""
    def __repr__(self) -> str:
        """The shape as PyTorch prints it."""
    def numel(self) -> int:
        """The number of elements of a tensor of this shape."""


class Tensor:
    """A multi-dimensional array with autograd, as ``torch.Tensor``."""

    # ------------------------------------------------------------ metadata
    def __init__(self, *args, **kwargs) -> None:
        """Not called: create tensors with ``nbgrad.tensor()``, ``nbgrad.zeros()`` and friends."""
    @property
    def device(self) -> _device:
        """The device the tensor's memory is on."""
    def dim(self) -> int:
        """The number of dimensions."""
    dtype: _dtype
    """The type of the elements."""
    def element_size(self) -> int:
        """The size of one element in bytes."""
    def is_contiguous(self) -> _bool:
        """Whether the tensor is C-contiguous in memory."""
    @property
    def is_cuda(self) -> _bool:
        """Whether the tensor is on a CUDA device."""
    def is_floating_point(self) -> _bool:
        """Whether the dtype is a floating point type."""
    @property
    def ndim(self) -> int:
        """The number of dimensions (alias of ``dim()``)."""
    def nelement(self) -> int:
        """The number of elements (alias of ``numel()``)."""
    def numel(self) -> int:
        """The number of elements."""
    @property
    def shape(self) -> Size:
        """The size of each dimension."""
    def size(self, dim=None):
        """The size of each dimension, or of dimension ``dim``."""
    def storage_offset(self) -> int:
        """The offset of the first element in the storage, in elements."""
    def stride(self, dim=None):
        """The stride of each dimension in elements, or of dimension ``dim``."""

    # ------------------------------------------------------------ autograd
    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None) -> None:
        """Computes the gradient of this tensor with respect to the graph's leaves, accumulated into their ``.grad``."""
    @property
    def data(self) -> Tensor:
        """An alias with its OWN version counter: writes through it are not seen by autograd (PyTorch's classic trap, kept on purpose)."""
    @data.setter
    def data(self, other) -> None:
        """Sets ``data``."""
    def detach(self) -> Tensor:
        """An untaped alias: same memory and version counter, no history."""
    def detach_(self) -> Tensor:
        """Detaches this tensor from the graph that created it, in place."""
    @property
    def grad(self) -> Tensor | None:
        """The gradient accumulated by ``backward()``; None until then."""
    @grad.setter
    def grad(self, value) -> None:
        """Sets ``grad``."""
    @property
    def grad_fn(self) -> Node | None:
        """The node that created this tensor; None for a leaf."""
    def is_inference(self) -> _bool:
        """Whether this is an inference tensor: made in inference mode, or a view or alias of one (see ``nbgrad.inference_mode``)."""
    @property
    def is_leaf(self) -> _bool:
        """Whether the tensor has no history (``grad_fn`` is None)."""
    def register_hook(self, hook):
        """Registers ``hook(grad)``, called with this tensor's gradient; returns a handle with ``remove()``."""
    def register_post_accumulate_grad_hook(self, hook):
        """Register ``hook(tensor)``, run after a gradient has been accumulated into this leaf's ``.grad`` (by ``backward``, not ``autograd.grad``), in the order registered."""
    @property
    def requires_grad(self) -> _bool:
        """Whether gradients are recorded for this tensor."""
    @requires_grad.setter
    def requires_grad(self, flag) -> None:
        """Sets ``requires_grad``."""
    def requires_grad_(self, requires_grad=True) -> Tensor:
        """Sets ``requires_grad`` in place and returns ``self``."""
    def retain_grad(self) -> None:
        """Makes this non-leaf tensor keep its ``.grad`` in ``backward()``."""
    @property
    def retains_grad(self) -> _bool:
        """Whether this non-leaf tensor keeps its ``.grad``."""

    # ---------------------------------------------------------- conversion
    def __array__(self, dtype=None, copy=None):
        """The tensor as a NumPy array, for ``np.asarray(t)``."""
    __array_ufunc__: None
    """NumPy ufuncs defer to Tensor's reflected operators."""
    def __bool__(self) -> _bool:
        """The value of a one-element tensor as a bool."""
    @property
    def __cuda_array_interface__(self) -> dict:
        """The device buffer, for CuPy, PyTorch and Numba kernels (no copy)."""
    def __deepcopy__(self, memo) -> Tensor:
        """A copy of a leaf tensor, with its own memory and gradient."""
    def __float__(self) -> _float:
        """The value of a one-element tensor as a float."""
    def __index__(self) -> int:
        """The value of a one-element integer tensor as an index."""
    def __int__(self) -> int:
        """The value of a one-element tensor as an int."""
    def __repr__(self) -> str:
        """The tensor as PyTorch prints it."""
    def bool(self) -> Tensor:
        """``self.to(nbgrad.bool)``"""
    def clone(self) -> Tensor:
        """A copy with new memory, taped (the gradient flows back to ``self``)."""
    def contiguous(self) -> Tensor:
        """``self`` when C-contiguous, else a C-contiguous copy, taped as ``clone``."""
    def cpu(self) -> Tensor:
        """``self.to('cpu')``"""
    def cuda(self, device=None) -> Tensor:
        """``self.to("cuda")`` (``device``: an index or a device)."""
    def double(self) -> Tensor:
        """``self.to(nbgrad.float64)``"""
    def float(self) -> Tensor:
        """``self.to(nbgrad.float32)``"""
    def item(self):
        """The value of a one-element tensor as a Python number."""
    def long(self) -> Tensor:
        """``self.to(nbgrad.int64)``"""
    def numpy(self):
        """The tensor as a NumPy array sharing its memory."""
    def to(self, *args, **kwargs) -> Tensor:
        """``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(other)``."""
    def tolist(self):
        """The tensor as (nested) Python lists of numbers."""
    def type(self, dtype=None):
        """The type name (PyTorch's: ``nbgrad.cuda.FloatTensor`` on the GPU), or a cast to ``dtype``."""

    # ----------------------------------------------------- elementwise ops
    def abs(self) -> Tensor:
        """Elementwise ``abs`` (generated from its op-table row)."""
    def abs_(self) -> Tensor:
        """In-place ``abs``: writes into ``self`` and bumps its version."""
    def add(self, other, /) -> Tensor:
        """Elementwise ``add`` (generated from its op-table row)."""
    def add_(self, other, /) -> Tensor:
        """In-place ``add``: writes into ``self`` and bumps its version."""
    def clamp(self, min=None, max=None) -> Tensor:
        """``clamp(min=None, max=None)``: elementwise clamp into [min, max] (max wins where min > max), as PyTorch's."""
    def clamp_(self, min=None, max=None) -> Tensor:
        """``clamp_(min=None, max=None)``: elementwise clamp into [min, max] (max wins where min > max), as PyTorch's."""
    def clip(self, min=None, max=None) -> Tensor:
        """``clip(min=None, max=None)``: elementwise clamp into [min, max] (max wins where min > max), as PyTorch's."""
    def clip_(self, min=None, max=None) -> Tensor:
        """``clip_(min=None, max=None)``: elementwise clamp into [min, max] (max wins where min > max), as PyTorch's."""
    def copy_(self, src) -> Tensor:
        """Copies ``src`` (broadcast) into ``self``, taped with respect to ``src``."""
    def cos(self) -> Tensor:
        """Elementwise ``cos`` (generated from its op-table row)."""
    def cos_(self) -> Tensor:
        """In-place ``cos``: writes into ``self`` and bumps its version."""
    def div(self, other, /) -> Tensor:
        """Elementwise ``div`` (generated from its op-table row)."""
    def div_(self, other, /) -> Tensor:
        """In-place ``div``: writes into ``self`` and bumps its version."""
    def eq(self, other, /) -> Tensor:
        """Elementwise ``eq`` (generated from its op-table row)."""
    def eq_(self, other, /) -> Tensor:
        """In-place ``eq``: writes into ``self`` and bumps its version."""
    def exp(self) -> Tensor:
        """Elementwise ``exp`` (generated from its op-table row)."""
    def exp_(self) -> Tensor:
        """In-place ``exp``: writes into ``self`` and bumps its version."""
    def fill_(self, value) -> Tensor:
        """Fills ``self`` with ``value``."""
    def ge(self, other, /) -> Tensor:
        """Elementwise ``ge`` (generated from its op-table row)."""
    def ge_(self, other, /) -> Tensor:
        """In-place ``ge``: writes into ``self`` and bumps its version."""
    def gt(self, other, /) -> Tensor:
        """Elementwise ``gt`` (generated from its op-table row)."""
    def gt_(self, other, /) -> Tensor:
        """In-place ``gt``: writes into ``self`` and bumps its version."""
    def le(self, other, /) -> Tensor:
        """Elementwise ``le`` (generated from its op-table row)."""
    def le_(self, other, /) -> Tensor:
        """In-place ``le``: writes into ``self`` and bumps its version."""
    def log(self) -> Tensor:
        """Elementwise ``log`` (generated from its op-table row)."""
    def log_(self) -> Tensor:
        """In-place ``log``: writes into ``self`` and bumps its version."""
    def lt(self, other, /) -> Tensor:
        """Elementwise ``lt`` (generated from its op-table row)."""
    def lt_(self, other, /) -> Tensor:
        """In-place ``lt``: writes into ``self`` and bumps its version."""
    def maximum(self, other, /) -> Tensor:
        """Elementwise ``maximum`` (generated from its op-table row)."""
    def maximum_(self, other, /) -> Tensor:
        """In-place ``maximum``: writes into ``self`` and bumps its version."""
    def minimum(self, other, /) -> Tensor:
        """Elementwise ``minimum`` (generated from its op-table row)."""
    def minimum_(self, other, /) -> Tensor:
        """In-place ``minimum``: writes into ``self`` and bumps its version."""
    def mul(self, other, /) -> Tensor:
        """Elementwise ``mul`` (generated from its op-table row)."""
    def mul_(self, other, /) -> Tensor:
        """In-place ``mul``: writes into ``self`` and bumps its version."""
    def ne(self, other, /) -> Tensor:
        """Elementwise ``ne`` (generated from its op-table row)."""
    def ne_(self, other, /) -> Tensor:
        """In-place ``ne``: writes into ``self`` and bumps its version."""
    def neg(self) -> Tensor:
        """Elementwise ``neg`` (generated from its op-table row)."""
    def neg_(self) -> Tensor:
        """In-place ``neg``: writes into ``self`` and bumps its version."""
    def pow(self, exponent) -> Tensor:
        """Elementwise ``input ** exponent`` (either may be a number), as ``torch.pow``."""
    def pow_(self, exponent) -> Tensor:
        """Elementwise ``input ** exponent`` (either may be a number), as ``torch.pow``."""
    def reciprocal(self) -> Tensor:
        """Elementwise ``reciprocal`` (generated from its op-table row)."""
    def reciprocal_(self) -> Tensor:
        """In-place ``reciprocal``: writes into ``self`` and bumps its version."""
    def relu(self) -> Tensor:
        """Elementwise ``relu`` (generated from its op-table row)."""
    def relu_(self) -> Tensor:
        """In-place ``relu``: writes into ``self`` and bumps its version."""
    def sigmoid(self) -> Tensor:
        """Elementwise ``sigmoid`` (generated from its op-table row)."""
    def sigmoid_(self) -> Tensor:
        """In-place ``sigmoid``: writes into ``self`` and bumps its version."""
    def sin(self) -> Tensor:
        """Elementwise ``sin`` (generated from its op-table row)."""
    def sin_(self) -> Tensor:
        """In-place ``sin``: writes into ``self`` and bumps its version."""
    def sqrt(self) -> Tensor:
        """Elementwise ``sqrt`` (generated from its op-table row)."""
    def sqrt_(self) -> Tensor:
        """In-place ``sqrt``: writes into ``self`` and bumps its version."""
    def sub(self, other, /) -> Tensor:
        """Elementwise ``sub`` (generated from its op-table row)."""
    def sub_(self, other, /) -> Tensor:
        """In-place ``sub``: writes into ``self`` and bumps its version."""
    def tanh(self) -> Tensor:
        """Elementwise ``tanh`` (generated from its op-table row)."""
    def tanh_(self) -> Tensor:
        """In-place ``tanh``: writes into ``self`` and bumps its version."""
    def true_divide(self, other, /) -> Tensor:
        """Elementwise ``div`` (generated from its op-table row)."""
    def zero_(self) -> Tensor:
        """Fills ``self`` with zeros."""

    # ---------------------------------------------------------- reductions
    def amax(self, dim=(), keepdim=False) -> Tensor:
        """The maximum over ``dim`` (all dims by default); ties share the gradient."""
    def amin(self, dim=(), keepdim=False) -> Tensor:
        """The minimum over ``dim`` (all dims by default); ties share the gradient."""
    def log_softmax(self, dim=None, dtype=None) -> Tensor:
        """``log(softmax(self, dim))``, computed stably."""
    def matmul(self, b) -> Tensor:
        """The matrix product, with PyTorch's broadcasting rules."""
    def max(self, dim=None, keepdim=False):
        """The maximum of all elements, or (values, indices) along ``dim``."""
    def mean(self, dim=None, keepdim=False, dtype=None) -> Tensor:
        """The mean over ``dim`` (all dims when None)."""
    def min(self, dim=None, keepdim=False):
        """The minimum of all elements, or (values, indices) along ``dim``."""
    def mm(self, b) -> Tensor:
        """The product of two matrices."""
    def softmax(self, dim=None, dtype=None) -> Tensor:
        """The softmax along ``dim``."""
    def sum(self, dim=None, keepdim=False, dtype=None) -> Tensor:
        """The sum over ``dim`` (an int or a tuple of ints; all dims when None)."""

    # --------------------------------------------------------------- views
    @property
    def T(self) -> Tensor:
        """``t.T``: the dimensions in reverse order."""
    def expand(self, *sizes) -> Tensor:
        """A view with dimensions of size 1 broadcast to ``sizes``."""
    def expand_as(self, other) -> Tensor:
        """``self.expand(other.size())``."""
    def flatten(self, start_dim=0, end_dim=-1) -> Tensor:
        """Dimensions ``start_dim`` to ``end_dim`` as one (a view where possible)."""
    @property
    def mT(self) -> Tensor:
        """``t.mT``: the last two dimensions swapped."""
    def permute(self, *dims) -> Tensor:
        """A view with the dimensions reordered."""
    def reshape(self, *shape) -> Tensor:
        """The tensor with shape ``shape``: a view where possible, else a copy."""
    def reshape_as(self, other) -> Tensor:
        """``self.reshape(other.shape)``."""
    def squeeze(self, dim=None) -> Tensor:
        """A view without the dimensions of size 1 (or just ``dim``)."""
    def t(self) -> Tensor:
        """The transpose of a matrix (a view)."""
    def transpose(self, dim0, dim1) -> Tensor:
        """A view with dimensions ``dim0`` and ``dim1`` swapped."""
    def unsqueeze(self, dim) -> Tensor:
        """A view with a dimension of size 1 inserted at ``dim``."""
    def view(self, *shape) -> Tensor:
        """A view with shape ``shape`` of the same memory."""
    def view_as(self, other) -> Tensor:
        """``self.view(other.shape)``."""

    # ------------------------------------------------------------ indexing
    def __getitem__(self, key) -> Tensor:
        """``self[key]``: a view for basic indexing, a copy for advanced indexing."""
    def __iter__(self):
        """The subtensors along the first dimension."""
    def __len__(self) -> int:
        """The size of the first dimension."""
    def __setitem__(self, key, value) -> None:
        """``self[key] = value``, in place."""

    # ----------------------------------------------------------- operators
    def __abs__(self) -> Tensor:
        """Elementwise ``abs`` (generated from its op-table row)."""
    def __add__(self, other, /) -> Tensor:
        """``self + other``: elementwise ``add`` (generated from its op-table row)."""
    def __eq__(self, other, /) -> Tensor:  # type: ignore[override]
        """``self == other``: elementwise ``eq`` (generated from its op-table row)."""
    def __ge__(self, other, /) -> Tensor:
        """``self >= other``: elementwise ``ge`` (generated from its op-table row)."""
    def __gt__(self, other, /) -> Tensor:
        """``self > other``: elementwise ``gt`` (generated from its op-table row)."""
    def __hash__(self, /) -> int:
        """Return hash(self)."""
    def __iadd__(self, other) -> Tensor:
        """``self += other``: in-place ``add`` (generated from its op-table row)."""
    def __imul__(self, other) -> Tensor:
        """``self *= other``: in-place ``mul`` (generated from its op-table row)."""
    def __ipow__(self, exponent) -> Tensor:
        """Elementwise ``input ** exponent`` (either may be a number), as ``torch.pow``."""
    def __isub__(self, other) -> Tensor:
        """``self -= other``: in-place ``sub`` (generated from its op-table row)."""
    def __itruediv__(self, other) -> Tensor:
        """``self /= other``: in-place ``div`` (generated from its op-table row)."""
    def __le__(self, other, /) -> Tensor:
        """``self <= other``: elementwise ``le`` (generated from its op-table row)."""
    def __lt__(self, other, /) -> Tensor:
        """``self < other``: elementwise ``lt`` (generated from its op-table row)."""
    def __matmul__(self, b) -> Tensor:
        """The matrix product ``self @ b``."""
    def __mul__(self, other, /) -> Tensor:
        """``self * other``: elementwise ``mul`` (generated from its op-table row)."""
    def __ne__(self, other, /) -> Tensor:  # type: ignore[override]
        """``self != other``: elementwise ``ne`` (generated from its op-table row)."""
    def __neg__(self) -> Tensor:
        """Elementwise ``neg`` (generated from its op-table row)."""
    def __pow__(self, exponent) -> Tensor:
        """Elementwise ``input ** exponent`` (either may be a number), as ``torch.pow``."""
    def __radd__(self, other, /) -> Tensor:
        """``other + self``: elementwise ``add`` (generated from its op-table row)."""
    def __rmatmul__(self, other) -> Tensor:
        """``other @ self``."""
    def __rmul__(self, other, /) -> Tensor:
        """``other * self``: elementwise ``mul`` (generated from its op-table row)."""
    def __rpow__(self, other, /) -> Tensor:
        """``other ** self``: elementwise ``pow`` (generated from its op-table row)."""
    def __rsub__(self, other, /) -> Tensor:
        """``other - self``: elementwise ``sub`` (generated from its op-table row)."""
    def __rtruediv__(self, other) -> Tensor:
        """``number / self`` as PyTorch computes it: ``self.reciprocal() * number``, two nodes, the first saving its result (not ``self``)."""
    def __sub__(self, other, /) -> Tensor:
        """``self - other``: elementwise ``sub`` (generated from its op-table row)."""
    def __truediv__(self, other, /) -> Tensor:
        """``self / other``: elementwise ``div`` (generated from its op-table row)."""


def no_grad_view_error(view, modified) -> RuntimeError:
    """PyTorch's error for an in-place write that involves a view made in no_grad mode (``modified``: "is being" or "its base or ... has been")."""
