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
    def data_ptr(self) -> int:
        """The address of the tensor's first element (a device address on CUDA)."""
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
    def itemsize(self) -> int:
        """The bytes of one element (``element_size()``)."""
    @property
    def nbytes(self) -> int:
        """The bytes of the tensor's elements, ``numel() * element_size()`` (a view counts its own elements, as PyTorch's)."""
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
    def __dlpack__(self, *, stream=-1, max_version=None, dl_device=None, copy=None):
        """The tensor as a DLPack capsule for another library's ``from_dlpack`` (zero-copy unless ``copy=True``, or a CPU consumer of a CUDA tensor)."""
    def __dlpack_device__(self) -> tuple:
        """__dlpack_device__() -> (device_type, device_id): (1, 0) on the CPU, (2, 0) on CUDA."""
    def __float__(self) -> _float:
        """The value of a one-element tensor as a float."""
    def __format__(self, format_spec) -> str:
        """``f"{t:.4f}"``: a 0-d tensor formats as its Python number; any other tensor only with an empty spec (as ``str``), as PyTorch."""
    def __index__(self) -> int:
        """The value of a one-element integer tensor as an index."""
    def __int__(self) -> int:
        """The value of a one-element tensor as an int."""
    def __reduce_ex__(self, protocol) -> tuple:
        """Pickling (``pickle``, ``copy``, worker processes): the values (a host copy), dtype, device and ``requires_grad``, as PyTorch keeps them; not the history, the gradient, nor memory shared with views."""
    def __repr__(self) -> str:
        """The tensor as PyTorch prints it."""
    def bool(self) -> Tensor:
        """``self.to(nbgrad.bool)``"""
    def byte(self) -> Tensor:
        """``self.to(nbgrad.uint8)``"""
    def char(self) -> Tensor:
        """``self.to(nbgrad.int8)``"""
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
    def half(self) -> Tensor:
        """``self.to(nbgrad.float16)``"""
    def int(self) -> Tensor:
        """``self.to(nbgrad.int32)``"""
    def item(self):
        """The value of a one-element tensor as a Python number."""
    def long(self) -> Tensor:
        """``self.to(nbgrad.int64)``"""
    def numpy(self):
        """The tensor as a NumPy array sharing its memory."""
    def short(self) -> Tensor:
        """``self.to(nbgrad.int16)``"""
    def to(self, *args, **kwargs) -> Tensor:
        """``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(other)``."""
    def tolist(self):
        """The tensor as (nested) Python lists of numbers."""
    def type(self, dtype=None):
        """The type name (PyTorch's: ``nbgrad.cuda.FloatTensor`` on the GPU), or a cast to ``dtype``."""
    def type_as(self, other) -> Tensor:
        """``self`` cast to ``other``'s dtype (``self`` itself when it has it already)."""

    # ----------------------------------------------------- elementwise ops
    def abs(self) -> Tensor:
        """Elementwise ``abs`` (generated from its op-table row)."""
    def abs_(self) -> Tensor:
        """In-place ``abs``: writes into ``self`` and bumps its version."""
    def acos(self) -> Tensor:
        """Elementwise ``acos`` (generated from its op-table row)."""
    def acos_(self) -> Tensor:
        """In-place ``acos``: writes into ``self`` and bumps its version."""
    def acosh(self) -> Tensor:
        """Elementwise ``acosh`` (generated from its op-table row)."""
    def acosh_(self) -> Tensor:
        """``acosh_()``: in-place ``acosh`` (not differentiable, as in PyTorch)."""
    def add(self, other, /) -> Tensor:
        """Elementwise ``add`` (generated from its op-table row)."""
    def add_(self, other, /) -> Tensor:
        """In-place ``add``: writes into ``self`` and bumps its version."""
    def addcdiv(self, tensor1, tensor2, *, value=1) -> Tensor:
        """``addcdiv(tensor1, tensor2, *, value=1)``: ``input + value * tensor1 / tensor2``, elementwise."""
    def addcdiv_(self, tensor1, tensor2, *, value=1) -> Tensor:
        """``addcdiv_(tensor1, tensor2, *, value=1)``: ``input + value * tensor1 / tensor2``, elementwise."""
    def addcmul(self, tensor1, tensor2, *, value=1) -> Tensor:
        """``addcmul(tensor1, tensor2, *, value=1)``: ``input + value * tensor1 * tensor2``, elementwise."""
    def addcmul_(self, tensor1, tensor2, *, value=1) -> Tensor:
        """``addcmul_(tensor1, tensor2, *, value=1)``: ``input + value * tensor1 * tensor2``, elementwise."""
    def asin(self) -> Tensor:
        """Elementwise ``asin`` (generated from its op-table row)."""
    def asin_(self) -> Tensor:
        """In-place ``asin``: writes into ``self`` and bumps its version."""
    def asinh(self) -> Tensor:
        """Elementwise ``asinh`` (generated from its op-table row)."""
    def asinh_(self) -> Tensor:
        """``asinh_()``: in-place ``asinh`` (not differentiable, as in PyTorch)."""
    def atan(self) -> Tensor:
        """Elementwise ``atan`` (generated from its op-table row)."""
    def atan2(self, other, /) -> Tensor:
        """Elementwise ``atan2`` (generated from its op-table row)."""
    def atan2_(self, other, /) -> Tensor:
        """In-place ``atan2``: writes into ``self`` and bumps its version."""
    def atan_(self) -> Tensor:
        """In-place ``atan``: writes into ``self`` and bumps its version."""
    def atanh(self) -> Tensor:
        """Elementwise ``atanh`` (generated from its op-table row)."""
    def atanh_(self) -> Tensor:
        """``atanh_()``: in-place ``atanh`` (not differentiable, as in PyTorch)."""
    def bitwise_and(self, other, /) -> Tensor:
        """Elementwise ``bitwise_and`` (generated from its op-table row)."""
    def bitwise_and_(self, other, /) -> Tensor:
        """In-place ``bitwise_and``: writes into ``self`` and bumps its version."""
    def bitwise_left_shift(self, other, /) -> Tensor:
        """Elementwise ``bitwise_left_shift`` (generated from its op-table row)."""
    def bitwise_left_shift_(self, other, /) -> Tensor:
        """In-place ``bitwise_left_shift``: writes into ``self`` and bumps its version."""
    def bitwise_not(self) -> Tensor:
        """Elementwise ``bitwise_not`` (generated from its op-table row)."""
    def bitwise_not_(self) -> Tensor:
        """In-place ``bitwise_not``: writes into ``self`` and bumps its version."""
    def bitwise_or(self, other, /) -> Tensor:
        """Elementwise ``bitwise_or`` (generated from its op-table row)."""
    def bitwise_or_(self, other, /) -> Tensor:
        """In-place ``bitwise_or``: writes into ``self`` and bumps its version."""
    def bitwise_right_shift(self, other, /) -> Tensor:
        """Elementwise ``bitwise_right_shift`` (generated from its op-table row)."""
    def bitwise_right_shift_(self, other, /) -> Tensor:
        """In-place ``bitwise_right_shift``: writes into ``self`` and bumps its version."""
    def bitwise_xor(self, other, /) -> Tensor:
        """Elementwise ``bitwise_xor`` (generated from its op-table row)."""
    def bitwise_xor_(self, other, /) -> Tensor:
        """In-place ``bitwise_xor``: writes into ``self`` and bumps its version."""
    def ceil(self) -> Tensor:
        """Elementwise ``ceil`` (generated from its op-table row)."""
    def ceil_(self) -> Tensor:
        """In-place ``ceil``: writes into ``self`` and bumps its version."""
    def clamp(self, min=None, max=None) -> Tensor:
        """``clamp(min=None, max=None)``: elementwise clamp into [min, max] (max wins where min > max), as PyTorch's."""
    def clamp_(self, min=None, max=None) -> Tensor:
        """``clamp_(min=None, max=None)``: elementwise clamp into [min, max] (max wins where min > max), as PyTorch's."""
    def clamp_max(self, hi, /) -> Tensor:
        """Elementwise ``clamp_max`` (generated from its op-table row)."""
    def clamp_max_(self, hi, /) -> Tensor:
        """In-place ``clamp_max``: writes into ``self`` and bumps its version."""
    def clamp_min(self, lo, /) -> Tensor:
        """Elementwise ``clamp_min`` (generated from its op-table row)."""
    def clamp_min_(self, lo, /) -> Tensor:
        """In-place ``clamp_min``: writes into ``self`` and bumps its version."""
    def clip(self, min=None, max=None) -> Tensor:
        """``clip(min=None, max=None)``: elementwise clamp into [min, max] (max wins where min > max), as PyTorch's."""
    def clip_(self, min=None, max=None) -> Tensor:
        """``clip_(min=None, max=None)``: elementwise clamp into [min, max] (max wins where min > max), as PyTorch's."""
    def copy_(self, src) -> Tensor:
        """Copies ``src`` (broadcast) into ``self``, taped with respect to ``src``."""
    def copysign(self, other, /) -> Tensor:
        """Elementwise ``copysign`` (generated from its op-table row)."""
    def copysign_(self, other, /) -> Tensor:
        """In-place ``copysign``: writes into ``self`` and bumps its version."""
    def cos(self) -> Tensor:
        """Elementwise ``cos`` (generated from its op-table row)."""
    def cos_(self) -> Tensor:
        """In-place ``cos``: writes into ``self`` and bumps its version."""
    def cosh(self) -> Tensor:
        """Elementwise ``cosh`` (generated from its op-table row)."""
    def cosh_(self) -> Tensor:
        """In-place ``cosh``: writes into ``self`` and bumps its version."""
    def deg2rad(self) -> Tensor:
        """Elementwise ``deg2rad`` (generated from its op-table row)."""
    def deg2rad_(self) -> Tensor:
        """In-place ``deg2rad``: writes into ``self`` and bumps its version."""
    def digamma(self) -> Tensor:
        """Elementwise ``digamma`` (generated from its op-table row)."""
    def digamma_(self) -> Tensor:
        """In-place ``digamma``: writes into ``self`` and bumps its version."""
    def eq(self, other, /) -> Tensor:
        """Elementwise ``eq`` (generated from its op-table row)."""
    def eq_(self, other, /) -> Tensor:
        """In-place ``eq``: writes into ``self`` and bumps its version."""
    def erf(self) -> Tensor:
        """Elementwise ``erf`` (generated from its op-table row)."""
    def erf_(self) -> Tensor:
        """In-place ``erf``: writes into ``self`` and bumps its version."""
    def erfc(self) -> Tensor:
        """Elementwise ``erfc`` (generated from its op-table row)."""
    def erfc_(self) -> Tensor:
        """In-place ``erfc``: writes into ``self`` and bumps its version."""
    def erfinv(self) -> Tensor:
        """Elementwise ``erfinv`` (generated from its op-table row)."""
    def erfinv_(self) -> Tensor:
        """In-place ``erfinv``: writes into ``self`` and bumps its version."""
    def exp(self) -> Tensor:
        """Elementwise ``exp`` (generated from its op-table row)."""
    def exp2(self) -> Tensor:
        """Elementwise ``exp2`` (generated from its op-table row)."""
    def exp2_(self) -> Tensor:
        """In-place ``exp2``: writes into ``self`` and bumps its version."""
    def exp_(self) -> Tensor:
        """In-place ``exp``: writes into ``self`` and bumps its version."""
    def expm1(self) -> Tensor:
        """Elementwise ``expm1`` (generated from its op-table row)."""
    def expm1_(self) -> Tensor:
        """In-place ``expm1``: writes into ``self`` and bumps its version."""
    def fill_(self, value) -> Tensor:
        """Fills ``self`` with ``value``."""
    def floor(self) -> Tensor:
        """Elementwise ``floor`` (generated from its op-table row)."""
    def floor_(self) -> Tensor:
        """In-place ``floor``: writes into ``self`` and bumps its version."""
    def floor_divide(self, other) -> Tensor:
        """``floor_divide(other)``: elementwise ``floor_divide``, as ``torch.floor_divide``."""
    def floor_divide_(self, other) -> Tensor:
        """``floor_divide_(other)``: in-place ``floor_divide``, written into ``self``."""
    def fmax(self, other, /) -> Tensor:
        """Elementwise ``fmax`` (generated from its op-table row)."""
    def fmax_(self, other, /) -> Tensor:
        """In-place ``fmax``: writes into ``self`` and bumps its version."""
    def fmin(self, other, /) -> Tensor:
        """Elementwise ``fmin`` (generated from its op-table row)."""
    def fmin_(self, other, /) -> Tensor:
        """In-place ``fmin``: writes into ``self`` and bumps its version."""
    def fmod(self, other) -> Tensor:
        """``fmod(other)``: elementwise ``fmod``, as ``torch.fmod``."""
    def fmod_(self, other) -> Tensor:
        """``fmod_(other)``: in-place ``fmod``, written into ``self``."""
    def frac(self) -> Tensor:
        """Elementwise ``frac`` (generated from its op-table row)."""
    def frac_(self) -> Tensor:
        """In-place ``frac``: writes into ``self`` and bumps its version."""
    def ge(self, other, /) -> Tensor:
        """Elementwise ``ge`` (generated from its op-table row)."""
    def ge_(self, other, /) -> Tensor:
        """In-place ``ge``: writes into ``self`` and bumps its version."""
    def gt(self, other, /) -> Tensor:
        """Elementwise ``gt`` (generated from its op-table row)."""
    def gt_(self, other, /) -> Tensor:
        """In-place ``gt``: writes into ``self`` and bumps its version."""
    def hypot(self, other, /) -> Tensor:
        """Elementwise ``hypot`` (generated from its op-table row)."""
    def hypot_(self, other, /) -> Tensor:
        """In-place ``hypot``: writes into ``self`` and bumps its version."""
    def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> Tensor:
        """Where ``|input - other| <= atol + rtol * |other|`` (or equal; NaNs equal with ``equal_nan``), as a bool tensor."""
    def isfinite(self) -> Tensor:
        """Elementwise ``isfinite`` (generated from its op-table row)."""
    def isfinite_(self) -> Tensor:
        """In-place ``isfinite``: writes into ``self`` and bumps its version."""
    def isinf(self) -> Tensor:
        """Elementwise ``isinf`` (generated from its op-table row)."""
    def isinf_(self) -> Tensor:
        """In-place ``isinf``: writes into ``self`` and bumps its version."""
    def isnan(self) -> Tensor:
        """Elementwise ``isnan`` (generated from its op-table row)."""
    def isnan_(self) -> Tensor:
        """In-place ``isnan``: writes into ``self`` and bumps its version."""
    def le(self, other, /) -> Tensor:
        """Elementwise ``le`` (generated from its op-table row)."""
    def le_(self, other, /) -> Tensor:
        """In-place ``le``: writes into ``self`` and bumps its version."""
    def lerp(self, end, weight, /) -> Tensor:
        """Elementwise ``lerp`` (generated from its op-table row)."""
    def lerp_(self, end, weight, /) -> Tensor:
        """In-place ``lerp``: writes into ``self`` and bumps its version."""
    def lgamma(self) -> Tensor:
        """Elementwise ``lgamma`` (generated from its op-table row)."""
    def lgamma_(self) -> Tensor:
        """In-place ``lgamma``: writes into ``self`` and bumps its version."""
    def log(self) -> Tensor:
        """Elementwise ``log`` (generated from its op-table row)."""
    def log10(self) -> Tensor:
        """Elementwise ``log10`` (generated from its op-table row)."""
    def log10_(self) -> Tensor:
        """In-place ``log10``: writes into ``self`` and bumps its version."""
    def log1p(self) -> Tensor:
        """Elementwise ``log1p`` (generated from its op-table row)."""
    def log1p_(self) -> Tensor:
        """In-place ``log1p``: writes into ``self`` and bumps its version."""
    def log2(self) -> Tensor:
        """Elementwise ``log2`` (generated from its op-table row)."""
    def log2_(self) -> Tensor:
        """In-place ``log2``: writes into ``self`` and bumps its version."""
    def log_(self) -> Tensor:
        """In-place ``log``: writes into ``self`` and bumps its version."""
    def logaddexp(self, other, /) -> Tensor:
        """Elementwise ``logaddexp`` (generated from its op-table row)."""
    def logaddexp_(self, other, /) -> Tensor:
        """In-place ``logaddexp``: writes into ``self`` and bumps its version."""
    def logical_and(self, other, /) -> Tensor:
        """Elementwise ``logical_and`` (generated from its op-table row)."""
    def logical_and_(self, other, /) -> Tensor:
        """In-place ``logical_and``: writes into ``self`` and bumps its version."""
    def logical_not(self) -> Tensor:
        """Elementwise ``logical_not`` (generated from its op-table row)."""
    def logical_not_(self) -> Tensor:
        """In-place ``logical_not``: writes into ``self`` and bumps its version."""
    def logical_or(self, other, /) -> Tensor:
        """Elementwise ``logical_or`` (generated from its op-table row)."""
    def logical_or_(self, other, /) -> Tensor:
        """In-place ``logical_or``: writes into ``self`` and bumps its version."""
    def logical_xor(self, other, /) -> Tensor:
        """Elementwise ``logical_xor`` (generated from its op-table row)."""
    def logical_xor_(self, other, /) -> Tensor:
        """In-place ``logical_xor``: writes into ``self`` and bumps its version."""
    def logit(self, eps=None) -> Tensor:
        """``log(p / (1 - p))``, elementwise, with ``p`` the input clamped to ``[eps, 1 - eps]`` when ``eps`` is given (else out of [0, 1] gives nan)."""
    def logit_(self, eps=None) -> Tensor:
        """``log(p / (1 - p))``, elementwise, with ``p`` the input clamped to ``[eps, 1 - eps]`` when ``eps`` is given (else out of [0, 1] gives nan)."""
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
    def mvlgamma(self, p) -> Tensor:
        """The multivariate log-gamma function of dimension ``p``, elementwise: ``p (p - 1) / 4 log(pi) + sum_{j < p} lgamma(input - j / 2)``."""
    def mvlgamma_(self, p) -> Tensor:
        """``mvlgamma_(p)``: in-place ``mvlgamma``."""
    def nan_to_num(self, nan=0.0, posinf=None, neginf=None) -> Tensor:
        """NaN, inf and -inf replaced by ``nan``, ``posinf`` and ``neginf`` (by default 0 and the dtype's largest and smallest finite values)."""
    def nan_to_num_(self, nan=0.0, posinf=None, neginf=None) -> Tensor:
        """NaN, inf and -inf replaced by ``nan``, ``posinf`` and ``neginf`` (by default 0 and the dtype's largest and smallest finite values)."""
    def ne(self, other, /) -> Tensor:
        """Elementwise ``ne`` (generated from its op-table row)."""
    def ne_(self, other, /) -> Tensor:
        """In-place ``ne``: writes into ``self`` and bumps its version."""
    def neg(self) -> Tensor:
        """Elementwise ``neg`` (generated from its op-table row)."""
    def neg_(self) -> Tensor:
        """In-place ``neg``: writes into ``self`` and bumps its version."""
    def polygamma(self, n) -> Tensor:
        """``polygamma(n)``: the ``n``-th derivative of digamma at ``self``."""
    def polygamma_(self, n) -> Tensor:
        """``polygamma_(n)``: in-place ``polygamma``."""
    def pow(self, exponent) -> Tensor:
        """Elementwise ``input ** exponent`` (either may be a number), as ``torch.pow``."""
    def pow_(self, exponent) -> Tensor:
        """Elementwise ``input ** exponent`` (either may be a number), as ``torch.pow``."""
    def rad2deg(self) -> Tensor:
        """Elementwise ``rad2deg`` (generated from its op-table row)."""
    def rad2deg_(self) -> Tensor:
        """In-place ``rad2deg``: writes into ``self`` and bumps its version."""
    def reciprocal(self) -> Tensor:
        """Elementwise ``reciprocal`` (generated from its op-table row)."""
    def reciprocal_(self) -> Tensor:
        """In-place ``reciprocal``: writes into ``self`` and bumps its version."""
    def relu(self) -> Tensor:
        """Elementwise ``relu`` (generated from its op-table row)."""
    def relu_(self) -> Tensor:
        """In-place ``relu``: writes into ``self`` and bumps its version."""
    def remainder(self, other) -> Tensor:
        """``remainder(other)``: elementwise ``remainder``, as ``torch.remainder``."""
    def remainder_(self, other) -> Tensor:
        """``remainder_(other)``: in-place ``remainder``, written into ``self``."""
    def round(self, *, decimals=0) -> Tensor:
        """``round(*, decimals=0)``: rounds half to even, to ``decimals`` decimal places (negative: to tens, hundreds ...)."""
    def round_(self, *, decimals=0) -> Tensor:
        """``round_(*, decimals=0)``: rounds half to even, to ``decimals`` decimal places (negative: to tens, hundreds ...)."""
    def rsqrt(self) -> Tensor:
        """Elementwise ``rsqrt`` (generated from its op-table row)."""
    def rsqrt_(self) -> Tensor:
        """In-place ``rsqrt``: writes into ``self`` and bumps its version."""
    def sgn(self) -> Tensor:
        """Elementwise ``sgn`` (generated from its op-table row)."""
    def sgn_(self) -> Tensor:
        """In-place ``sgn``: writes into ``self`` and bumps its version."""
    def sigmoid(self) -> Tensor:
        """Elementwise ``sigmoid`` (generated from its op-table row)."""
    def sigmoid_(self) -> Tensor:
        """In-place ``sigmoid``: writes into ``self`` and bumps its version."""
    def sign(self) -> Tensor:
        """Elementwise ``sign`` (generated from its op-table row)."""
    def sign_(self) -> Tensor:
        """In-place ``sign``: writes into ``self`` and bumps its version."""
    def sin(self) -> Tensor:
        """Elementwise ``sin`` (generated from its op-table row)."""
    def sin_(self) -> Tensor:
        """In-place ``sin``: writes into ``self`` and bumps its version."""
    def sinc(self) -> Tensor:
        """Elementwise ``sinc`` (generated from its op-table row)."""
    def sinc_(self) -> Tensor:
        """In-place ``sinc``: writes into ``self`` and bumps its version."""
    def sinh(self) -> Tensor:
        """Elementwise ``sinh`` (generated from its op-table row)."""
    def sinh_(self) -> Tensor:
        """In-place ``sinh``: writes into ``self`` and bumps its version."""
    def sqrt(self) -> Tensor:
        """Elementwise ``sqrt`` (generated from its op-table row)."""
    def sqrt_(self) -> Tensor:
        """In-place ``sqrt``: writes into ``self`` and bumps its version."""
    def square(self) -> Tensor:
        """``square()``: ``input * input`` (bools become int64)."""
    def square_(self) -> Tensor:
        """``square_()``: ``input * input`` (bools become int64)."""
    def sub(self, other, /) -> Tensor:
        """Elementwise ``sub`` (generated from its op-table row)."""
    def sub_(self, other, /) -> Tensor:
        """In-place ``sub``: writes into ``self`` and bumps its version."""
    def tan(self) -> Tensor:
        """Elementwise ``tan`` (generated from its op-table row)."""
    def tan_(self) -> Tensor:
        """In-place ``tan``: writes into ``self`` and bumps its version."""
    def tanh(self) -> Tensor:
        """Elementwise ``tanh`` (generated from its op-table row)."""
    def tanh_(self) -> Tensor:
        """In-place ``tanh``: writes into ``self`` and bumps its version."""
    def trunc(self) -> Tensor:
        """Elementwise ``trunc`` (generated from its op-table row)."""
    def trunc_(self) -> Tensor:
        """In-place ``trunc``: writes into ``self`` and bumps its version."""
    def xlogy(self, other, /) -> Tensor:
        """Elementwise ``xlogy`` (generated from its op-table row)."""
    def xlogy_(self, other, /) -> Tensor:
        """In-place ``xlogy``: writes into ``self`` and bumps its version."""
    def zero_(self) -> Tensor:
        """Fills ``self`` with zeros."""

    # ---------------------------------------------------------- reductions
    def addmm(self, mat1, mat2, *, beta=1, alpha=1) -> Tensor:
        """``beta * input + alpha * (mat1 @ mat2)`` (``input`` broadcast to the result; ignored when ``beta`` is 0)."""
    def addmm_(self, mat1, mat2, *, beta=1, alpha=1) -> Tensor:
        """``addmm`` written into ``self``."""
    def addmv(self, mat, vec, *, beta=1, alpha=1) -> Tensor:
        """``beta * input + alpha * (mat @ vec)`` (``input`` broadcast to the result; ignored when ``beta`` is 0)."""
    def addmv_(self, mat, vec, *, beta=1, alpha=1) -> Tensor:
        """``addmv`` written into ``self``."""
    def all(self, dim=None, keepdim=False) -> Tensor:
        """Whether every element (over ``dim``) is non-zero."""
    def amax(self, dim=(), keepdim=False) -> Tensor:
        """The maximum over ``dim`` (all dims by default); ties share the gradient."""
    def amin(self, dim=(), keepdim=False) -> Tensor:
        """The minimum over ``dim`` (all dims by default); ties share the gradient."""
    def aminmax(self, *, dim=None, keepdim=False):
        """The minimum and maximum over ``dim`` (all elements when None)."""
    def any(self, dim=None, keepdim=False) -> Tensor:
        """Whether any element (over ``dim``: an int or tuple of ints) is non-zero."""
    def argmax(self, dim=None, keepdim=False) -> Tensor:
        """The index of the (first) maximum, a NaN counting as the maximum; of the flattened input when ``dim`` is None."""
    def argmin(self, dim=None, keepdim=False) -> Tensor:
        """The index of the (first) minimum, a NaN counting as the minimum."""
    def baddbmm(self, batch1, batch2, *, beta=1, alpha=1) -> Tensor:
        """``beta * input + alpha * (batch1 @ batch2)`` for batches of matrices (``input`` broadcast to the result; ignored when ``beta`` is 0)."""
    def baddbmm_(self, batch1, batch2, *, beta=1, alpha=1) -> Tensor:
        """``baddbmm`` written into ``self``."""
    def bmm(self, mat2) -> Tensor:
        """The batched matrix product of ``input`` (b, n, m) and ``mat2`` (b, m, p)."""
    def count_nonzero(self, dim=None) -> Tensor:
        """How many elements (over ``dim``: an int or tuple of ints) are non-zero."""
    def cross(self, other, dim=None) -> Tensor:
        """``linalg.cross`` along ``dim``; without it (deprecated, with PyTorch's warning) along the first dimension of size 3."""
    def cummax(self, dim=None):
        """The running maximum along ``dim`` and where it was found (a NaN stays the maximum; of equal values the later one's index)."""
    def cummin(self, dim=None):
        """The running minimum along ``dim`` and where it was found."""
    def cumprod(self, dim=None, *, dtype=None) -> Tensor:
        """The cumulative product along ``dim``; bool and integers multiply in int64."""
    def cumprod_(self, dim=None, *, dtype=None) -> Tensor:
        """In-place :func:`cumprod`."""
    def cumsum(self, dim=None, *, dtype=None) -> Tensor:
        """The cumulative sum along ``dim``; bool and integers sum in int64."""
    def cumsum_(self, dim=None, *, dtype=None) -> Tensor:
        """In-place :func:`cumsum`."""
    def det(self) -> Tensor:
        """The determinant of each square matrix (``nbgrad.linalg.det``)."""
    def dot(self, tensor) -> Tensor:
        """The inner product of two 1-D tensors of one dtype."""
    def ger(self, vec2) -> Tensor:
        """The outer product of two vectors (``input[:, None] * vec2``; the dtypes promote)."""
    def inverse(self) -> Tensor:
        """The inverse of each square matrix (``nbgrad.linalg.inv``)."""
    def kron(self, other) -> Tensor:
        """The Kronecker product: blocks ``input[i] * other`` (the shorter shape padded with leading ones)."""
    def log_softmax(self, dim=None, dtype=None) -> Tensor:
        """``log(softmax(self, dim))``, computed stably."""
    def logsumexp(self, dim=None, keepdim=False) -> Tensor:
        """``log(sum(exp(input)))`` over ``dim``, computed stably (shifted by the maximum)."""
    def matmul(self, b) -> Tensor:
        """The matrix product, with PyTorch's broadcasting rules."""
    def max(self, dim=None, keepdim=False):
        """The maximum of all elements, or (values, indices) along ``dim``."""
    def mean(self, dim=None, keepdim=False, dtype=None) -> Tensor:
        """The mean over ``dim`` (all dims when None)."""
    def median(self, dim=None, keepdim=False):
        """The lower median of all elements, or along ``dim`` with its indices; a NaN makes it NaN."""
    def min(self, dim=None, keepdim=False):
        """The minimum of all elements, or (values, indices) along ``dim``."""
    def mm(self, b) -> Tensor:
        """The product of two matrices."""
    def mode(self, dim=-1, keepdim=False):
        """The most frequent value along ``dim`` (of equally frequent ones the smallest) and the index of its last occurrence."""
    def mv(self, vec) -> Tensor:
        """The product of the matrix ``input`` (n, m) and the vector ``vec`` (m)."""
    def nanmean(self, dim=None, keepdim=False, *, dtype=None) -> Tensor:
        """The mean of the elements that are no NaN (``nansum / count``)."""
    def nanmedian(self, dim=None, keepdim=False):
        """:func:`median` leaving NaNs out (a slice of NaNs gives NaN)."""
    def nansum(self, dim=None, keepdim=False, *, dtype=None) -> Tensor:
        """The sum over ``dim``, NaNs counted as zero."""
    def norm(self, p='fro', dim=None, keepdim=False, dtype=None) -> Tensor:
        """The ``p``-norm over ``dim`` (all elements when None), as PyTorch's (deprecated) ``torch.norm``: a number ``p`` is a vector norm over the dims given; 'fro' the 2-norm; 'nuc' a matrix norm."""
    def outer(self, vec2) -> Tensor:
        """The outer product of two vectors (``input[:, None] * vec2``; the dtypes promote)."""
    def prod(self, dim=None, keepdim=False, *, dtype=None) -> Tensor:
        """The product of all elements, or over ``dim`` (an int)."""
    def softmax(self, dim=None, dtype=None) -> Tensor:
        """The softmax along ``dim``."""
    def std(self, dim=None, unbiased=None, keepdim=False, *, correction=None) -> Tensor:
        """The standard deviation: the square root of :func:`var`."""
    def sum(self, dim=None, keepdim=False, dtype=None) -> Tensor:
        """The sum over ``dim`` (an int or a tuple of ints; all dims when None)."""
    def svd(self, some=True, compute_uv=True):
        """PyTorch's older form of :func:`nbgrad.linalg.svd`: a named tuple ``(U, S, V)`` with ``V`` (not ``Vh``; a transposed view of it); ``some`` the reduced decomposition."""
    def var(self, dim=None, unbiased=None, keepdim=False, *, correction=None) -> Tensor:
        """The variance over ``dim`` (an int, a tuple of ints, or None for all), divided by ``N - correction`` (``unbiased=False``: ``correction=0``)."""
    def vdot(self, other) -> Tensor:
        """The inner product of two 1-D tensors, the first conjugated (real tensors: ``dot``)."""

    # --------------------------------------------------------------- views
    @property
    def T(self) -> Tensor:
        """``t.T``: the dimensions in reverse order."""
    def as_strided(self, size, stride, storage_offset=None) -> Tensor:
        """A view of ``input``'s storage with the given ``size`` and ``stride`` (in elements), starting ``storage_offset`` elements into the storage (by default, where ``input`` starts)."""
    def as_strided_(self, size, stride, storage_offset=None) -> Tensor:
        """``as_strided_(size, stride, storage_offset=None)``: ``self`` becomes ``as_strided(self, size, stride, storage_offset)``."""
    def broadcast_to(self, size) -> Tensor:
        """broadcast_to(input, size) -> Tensor (``expand``)"""
    def chunk(self, chunks, dim=0) -> tuple:
        """At most ``chunks`` views of equal size (the last may be smaller) along ``dim``."""
    def diag(self, diagonal=0) -> Tensor:
        """A vector's square matrix with it on the diagonal ``diagonal``, or a matrix's diagonal ``diagonal`` as a vector (a copy)."""
    def diag_embed(self, offset=0, dim1=-2, dim2=-1) -> Tensor:
        """Matrices (over the new dims ``dim1``, ``dim2``) whose diagonal ``offset`` holds the last dimension of ``input``, zeros elsewhere."""
    def diagonal(self, offset=0, dim1=0, dim2=1) -> Tensor:
        """The view of the diagonal ``offset`` (above the main one when positive) of the matrices over ``dim1`` and ``dim2``, as the last dimension."""
    def expand(self, *sizes) -> Tensor:
        """A view with dimensions of size 1 broadcast to ``sizes``."""
    def expand_as(self, other) -> Tensor:
        """``self.expand(other.size())``."""
    def flatten(self, start_dim=0, end_dim=-1) -> Tensor:
        """Dimensions ``start_dim`` to ``end_dim`` as one (a view where possible)."""
    def flip(self, *args, dims=None) -> Tensor:
        """A copy with the order of the elements reversed along ``dims``."""
    def fliplr(self) -> Tensor:
        """fliplr(input) -> Tensor: ``flip(input, [1])``."""
    def flipud(self) -> Tensor:
        """flipud(input) -> Tensor: ``flip(input, [0])``."""
    @property
    def mT(self) -> Tensor:
        """``t.mT``: the last two dimensions swapped."""
    def moveaxis(self, source, destination) -> Tensor:
        """The view with dimensions ``source`` moved to ``destination`` (the others keep their order)."""
    def movedim(self, source, destination) -> Tensor:
        """The view with dimensions ``source`` moved to ``destination`` (the others keep their order)."""
    def narrow(self, dim, start, length) -> Tensor:
        """The view of ``length`` elements from ``start`` along ``dim``."""
    def permute(self, *dims) -> Tensor:
        """A view with the dimensions reordered."""
    def repeat(self, *args, repeats=None) -> Tensor:
        """A copy tiled ``repeats[k]`` times along each dimension (more repeats than dimensions add leading ones)."""
    def repeat_interleave(self, repeats=None, dim=None, *, output_size=None) -> Tensor:
        """Each slice along ``dim`` (of the flattened input without it) repeated ``repeats`` times, in place: an int, or a tensor of one count per slice."""
    def reshape(self, *shape) -> Tensor:
        """The tensor with shape ``shape``: a view where possible, else a copy."""
    def reshape_as(self, other) -> Tensor:
        """``self.reshape(other.shape)``."""
    def roll(self, shifts, dims=None) -> Tensor:
        """A copy with the elements shifted by ``shifts`` along ``dims`` (those leaving at one end come back at the other); without ``dims`` the flattened tensor is rolled and its shape restored."""
    def split(self, split_size, dim=0) -> tuple:
        """Views of ``self`` along ``dim``: pieces of ``split_size`` (the last one shorter), or of the sizes in a list."""
    def split_with_sizes(self, split_sizes, dim=0) -> tuple:
        """split_with_sizes(input, split_sizes, dim=0) -> tuple of Tensors"""
    def squeeze(self, dim=None) -> Tensor:
        """A view without the dimensions of size 1 (or just ``dim``)."""
    def squeeze_(self, dim=None) -> Tensor:
        """``squeeze_(dim=None)``: in-place ``squeeze``: size-1 dims (of ``dim``) removed."""
    def swapaxes(self, axis0, axis1) -> Tensor:
        """swapaxes(input, axis0, axis1) -> Tensor (``transpose``)"""
    def swapaxes_(self, dim0, dim1) -> Tensor:
        """``swapdims_(dim0, dim1)`` (``swapaxes_``): in-place ``transpose``."""
    def swapdims(self, dim0, dim1) -> Tensor:
        """swapdims(input, dim0, dim1) -> Tensor (``transpose``)"""
    def swapdims_(self, dim0, dim1) -> Tensor:
        """``swapdims_(dim0, dim1)`` (``swapaxes_``): in-place ``transpose``."""
    def t(self) -> Tensor:
        """The transpose of a matrix (a view)."""
    def t_(self) -> Tensor:
        """``t_()``: in-place ``t``: a matrix transposed (<= 2 dims)."""
    def tile(self, *args, dims=None) -> Tensor:
        """``repeat`` with ``dims`` padded with leading ones to the tensor's rank."""
    def transpose(self, dim0, dim1) -> Tensor:
        """A view with dimensions ``dim0`` and ``dim1`` swapped."""
    def transpose_(self, dim0, dim1) -> Tensor:
        """``transpose_(dim0, dim1)``: in-place ``transpose``: two dims swapped."""
    def tril(self, diagonal=0) -> Tensor:
        """A copy with the elements above the diagonal ``diagonal`` of the last two dimensions zeroed."""
    def tril_(self, diagonal=0) -> Tensor:
        """tril_(diagonal=0) -> Tensor: ``tril`` written into ``self``."""
    def triu(self, diagonal=0) -> Tensor:
        """A copy with the elements below the diagonal ``diagonal`` of the last two dimensions zeroed."""
    def triu_(self, diagonal=0) -> Tensor:
        """triu_(diagonal=0) -> Tensor: ``triu`` written into ``self``."""
    def unbind(self, dim=0) -> tuple:
        """The slices along ``dim``, as views without that dimension."""
    def unflatten(self, dim, sizes) -> Tensor:
        """The view with dimension ``dim`` split into ``sizes`` (one may be -1)."""
    def unsqueeze(self, dim) -> Tensor:
        """A view with a dimension of size 1 inserted at ``dim``."""
    def unsqueeze_(self, dim) -> Tensor:
        """``unsqueeze_(dim)``: in-place ``unsqueeze``: ``self`` gains a size-1 dim at ``dim``."""
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
    def argsort(self, dim=-1, descending=False, *, stable=False) -> Tensor:
        """The positions that sort ``input`` along ``dim``."""
    def argwhere(self) -> Tensor:
        """The coordinates of ``input``'s nonzero elements, (count, ndim) int64."""
    def gather(self, dim, index, *, sparse_grad=False) -> Tensor:
        """Values of ``input`` along ``dim`` at ``index``: ``out[i][j] = input[index[i][j]][j]`` for dim 0 (and so on)."""
    def histc(self, bins=100, min=0, max=0) -> Tensor:
        """A histogram of ``input``: ``bins`` equal-width bins over [min, max] (both 0: the data's range), elements outside not counted; of ``input``'s dtype."""
    def index_add(self, dim, index, source, *, alpha=1) -> Tensor:
        """A copy of ``input`` with ``alpha * source`` added along ``dim`` at the 1-D ``index`` (repeated indices accumulate)."""
    def index_add_(self, dim, index, source, *, alpha=1) -> Tensor:
        """In-place :func:`index_add`."""
    def index_copy(self, dim, index, source) -> Tensor:
        """A copy of ``input`` with ``source``'s entries written along ``dim`` at the 1-D ``index``."""
    def index_copy_(self, dim, index, source) -> Tensor:
        """In-place :func:`index_copy`."""
    def index_fill(self, dim, index, value) -> Tensor:
        """A copy of ``input`` with ``value`` written along ``dim`` at the 1-D ``index``."""
    def index_fill_(self, dim, index, value) -> Tensor:
        """In-place :func:`index_fill`."""
    def index_select(self, dim, index) -> Tensor:
        """The entries of ``input`` along ``dim`` at the 1-D ``index``, a new tensor."""
    def kthvalue(self, k, dim=-1, keepdim=False):
        """The ``k``-th smallest element of ``input`` along ``dim`` (1-based) and its position."""
    def masked_fill(self, mask, value) -> Tensor:
        """A copy of ``input`` with ``value`` where the bool ``mask`` (broadcast) is True."""
    def masked_fill_(self, mask, value) -> Tensor:
        """In-place :func:`masked_fill`."""
    def masked_scatter(self, mask, source) -> Tensor:
        """A copy of ``input`` with ``source``'s first elements, in order, written where the bool ``mask`` (broadcast) is True."""
    def masked_scatter_(self, mask, source) -> Tensor:
        """In-place :func:`masked_scatter`."""
    def masked_select(self, mask) -> Tensor:
        """A new 1-D tensor of ``input``'s elements where the bool ``mask`` (both broadcast) is True, in C order."""
    def nonzero(self, *, as_tuple=False):
        """The coordinates of ``input``'s nonzero elements: a (count, ndim) int64 tensor, or with ``as_tuple`` one 1-D tensor per dim."""
    def scatter(self, dim, index, src=None, *, value=None, reduce=None) -> Tensor:
        """A copy of ``input`` with ``src``'s values (or the number ``value``) written along ``dim`` at ``index``; ``reduce`` ("add", "multiply") combines them with what is there instead."""
    def scatter_(self, dim, index, src=None, *, value=None, reduce=None) -> Tensor:
        """In-place :func:`scatter`."""
    def scatter_add(self, dim, index, src) -> Tensor:
        """A copy of ``input`` with ``src``'s values added along ``dim`` at ``index`` (repeated indices accumulate)."""
    def scatter_add_(self, dim, index, src) -> Tensor:
        """In-place :func:`scatter_add`."""
    def scatter_reduce(self, dim, index, src, reduce, *, include_self=True) -> Tensor:
        """A copy of ``input`` with ``src``'s values combined along ``dim`` at ``index`` by ``reduce`` ("sum", "prod", "mean", "amax", "amin"), with ``input``'s own value among them unless ``include_self`` is False."""
    def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True) -> Tensor:
        """In-place :func:`scatter_reduce`."""
    def sort(self, dim=-1, descending=False, *, stable=False):
        """``input``'s elements sorted along ``dim`` (ascending unless ``descending``; NaN counts as the largest), and their original positions; equal elements keep their order."""
    def take(self, index) -> Tensor:
        """The elements of ``input`` at ``index``, read as if it were 1-D (negative indices count from the end); the result has ``index``'s shape."""
    def take_along_dim(self, indices, dim=None) -> Tensor:
        """``input``'s values at ``indices`` along ``dim`` (broadcast against each other apart from ``dim``); with no ``dim``, of the flattened input."""
    def topk(self, k, dim=-1, largest=True, sorted=True):
        """The ``k`` largest (``largest=False``: smallest) elements of ``input`` along ``dim``, in order, and their positions."""
    def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
        """The distinct elements of ``input`` in ascending order (NaNs each distinct); with ``return_inverse`` each element's position among them, with ``return_counts`` how often each occurs; with ``dim``, distinct slices along it. (Sorted whatever ``sorted`` says, as PyTorch's CPU.)"""
    def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
        """One element (slice along ``dim``) per run of equal consecutive ones."""

    # ---------------------------------------------------------- comparison
    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> _bool:
        """Whether ``|input - other| <= atol + rtol * |other|`` everywhere (after broadcasting); equal infinities are close, NaNs only with ``equal_nan``."""
    def equal(self, other) -> _bool:
        """Whether the tensors have the same shape and elements (compared after type promotion; NaN is never equal)."""

    # ----------------------------------------------------- random sampling
    def bernoulli(self, p=None, *, generator=None) -> Tensor:
        """1 where a draw from Bernoulli(``input``) succeeds (``input``: the probabilities), else 0, in ``input``'s dtype; with ``p``, every element's probability is ``p``."""
    def bernoulli_(self, p=0.5, *, generator=None) -> Tensor:
        """Fill with 1 where a draw from Bernoulli(p) succeeds, else 0 (``p``: a number or a tensor of probabilities broadcast to ``self``)."""
    def cauchy_(self, median=0, sigma=1, *, generator=None) -> Tensor:
        """Fill with values drawn from the Cauchy distribution."""
    def exponential_(self, lambd=1, *, generator=None) -> Tensor:
        """Fill with values drawn from the exponential distribution of rate ``lambd``."""
    def geometric_(self, p, *, generator=None) -> Tensor:
        """Fill with the number of Bernoulli(p) trials up to the first success (1, 2, ...)."""
    def log_normal_(self, mean=1, std=2, *, generator=None) -> Tensor:
        """Fill with ``exp(x)``, ``x`` drawn from N(mean, std**2)."""
    def multinomial(self, num_samples, replacement=False, *, generator=None) -> Tensor:
        """For each row of ``input`` (non-negative weights), ``num_samples`` indices drawn with probabilities proportional to the weights; without ``replacement`` each index at most once (as PyTorch: the top ``num_samples`` of ``weight / Exp(1)``)."""
    def normal_(self, mean=0, std=1, *, generator=None) -> Tensor:
        """Fill with values drawn from the normal distribution N(mean, std**2)."""
    def poisson(self, generator=None) -> Tensor:
        """A draw from Poisson(rate) for each rate in ``input``, in its dtype."""
    def random_(self, from_=None, to=None, *, generator=None, **kwargs) -> Tensor:
        """Fill with integers drawn uniformly from [from, to - 1]; ``random_(to)`` from [0, to); without bounds, over what the dtype holds exactly."""
    def uniform_(self, from_=0, to=1, *, generator=None, **kwargs) -> Tensor:
        """Fill with values drawn uniformly from [from, to)."""

    # -------------------------------------------- aliases and everyday ops
    @property
    def H(self) -> Tensor:
        """The transpose of a matrix (no complex dtypes: no conjugate), a view."""
    def absolute(self) -> Tensor:
        """Elementwise ``abs`` (generated from its op-table row)."""
    def absolute_(self) -> Tensor:
        """In-place ``abs``: writes into ``self`` and bumps its version."""
    def adjoint(self) -> Tensor:
        """adjoint(input) -> Tensor: the (conjugate) transpose of the last two dimensions, a view (nbgrad is real: ``transpose(-2, -1)``)."""
    def arccos(self) -> Tensor:
        """Elementwise ``acos`` (generated from its op-table row)."""
    def arccos_(self) -> Tensor:
        """In-place ``acos``: writes into ``self`` and bumps its version."""
    def arccosh(self) -> Tensor:
        """Elementwise ``acosh`` (generated from its op-table row)."""
    def arccosh_(self) -> Tensor:
        """``acosh_()``: in-place ``acosh`` (not differentiable, as in PyTorch)."""
    def arcsin(self) -> Tensor:
        """Elementwise ``asin`` (generated from its op-table row)."""
    def arcsin_(self) -> Tensor:
        """In-place ``asin``: writes into ``self`` and bumps its version."""
    def arcsinh(self) -> Tensor:
        """Elementwise ``asinh`` (generated from its op-table row)."""
    def arcsinh_(self) -> Tensor:
        """``asinh_()``: in-place ``asinh`` (not differentiable, as in PyTorch)."""
    def arctan(self) -> Tensor:
        """Elementwise ``atan`` (generated from its op-table row)."""
    def arctan2(self, other, /) -> Tensor:
        """Elementwise ``atan2`` (generated from its op-table row)."""
    def arctan2_(self, other, /) -> Tensor:
        """In-place ``atan2``: writes into ``self`` and bumps its version."""
    def arctan_(self) -> Tensor:
        """In-place ``atan``: writes into ``self`` and bumps its version."""
    def arctanh(self) -> Tensor:
        """Elementwise ``atanh`` (generated from its op-table row)."""
    def arctanh_(self) -> Tensor:
        """``atanh_()``: in-place ``atanh`` (not differentiable, as in PyTorch)."""
    def bincount(self, weights=None, minlength=0) -> Tensor:
        """How often each value occurs in a 1-D tensor of non-negative integers (int64), or the sum of ``weights`` at each value (float32 weights stay float32, others give float64)."""
    def corrcoef(self) -> Tensor:
        """corrcoef(input) -> Tensor: Pearson correlation coefficients of the variables in the rows of ``input``, clipped to ``[-1, 1]``."""
    def cov(self, *, correction=1, fweights=None, aweights=None) -> Tensor:
        """The covariance matrix of the variables in the rows of ``input`` (each column an observation), with frequency and observation weights, as NumPy's ``cov`` and PyTorch's: ``(x - avg) @ (w * (x - avg)).T / norm``."""
    def diagflat(self, offset=0) -> Tensor:
        """diagflat(input, offset=0) -> Tensor: a square matrix with ``input`` flattened on its ``offset``-th diagonal."""
    def diff(self, n=1, dim=-1, prepend=None, append=None) -> Tensor:
        """The ``n``-th forward difference along ``dim``, after joining ``prepend`` and ``append`` to ``input`` there (a difference of bools is their xor)."""
    def div(self, other, *, rounding_mode=None) -> Tensor:
        """``input / other`` (true division, integers promoted to float), or rounded toward zero (``'trunc'``) or down (``'floor'``) in the promoted type, as PyTorch's ``div``."""
    def div_(self, other, *, rounding_mode=None) -> Tensor:
        """In-place ``div``: writes ``div(self, other, rounding_mode=...)`` into ``self``."""
    def divide(self, other, *, rounding_mode=None) -> Tensor:
        """``input / other`` (true division, integers promoted to float), or rounded toward zero (``'trunc'``) or down (``'floor'``) in the promoted type, as PyTorch's ``div``."""
    def divide_(self, other, *, rounding_mode=None) -> Tensor:
        """In-place ``div``: writes ``div(self, other, rounding_mode=...)`` into ``self``."""
    def dsplit(self, indices_or_sections):
        """dsplit(input, indices_or_sections) -> tuple of Tensors: ``tensor_split`` along dimension 2 (equal pieces only)."""
    def fill_diagonal_(self, fill_value, wrap=False) -> Tensor:
        """Tensor.fill_diagonal_(fill_value, wrap=False) -> Tensor"""
    def fix(self) -> Tensor:
        """Elementwise ``trunc`` (generated from its op-table row)."""
    def fix_(self) -> Tensor:
        """In-place ``trunc``: writes into ``self`` and bumps its version."""
    def get_device(self) -> int:
        """The CUDA device index, or -1 for a CPU tensor."""
    def greater(self, other, /) -> Tensor:
        """Elementwise ``gt`` (generated from its op-table row)."""
    def greater_(self, other, /) -> Tensor:
        """In-place ``gt``: writes into ``self`` and bumps its version."""
    def greater_equal(self, other, /) -> Tensor:
        """Elementwise ``ge`` (generated from its op-table row)."""
    def greater_equal_(self, other, /) -> Tensor:
        """In-place ``ge``: writes into ``self`` and bumps its version."""
    def hsplit(self, indices_or_sections):
        """hsplit(input, indices_or_sections) -> tuple of Tensors: ``tensor_split`` along dimension 1 (0 for 1-D) (equal pieces only)."""
    def index_put(self, indices, values, accumulate=False) -> Tensor:
        """index_put(input, indices, values, accumulate=False) -> Tensor: the out-of-place ``index_put_`` (on a copy of ``input``)."""
    def index_put_(self, indices, values, accumulate=False) -> Tensor:
        """Tensor.index_put_(indices, values, accumulate=False) -> Tensor"""
    def is_complex(self) -> _bool:
        """False: nbgrad has no complex dtypes."""
    @property
    def is_cpu(self) -> _bool:
        """Whether the tensor is on the CPU."""
    def is_nonzero(self) -> _bool:
        """is_nonzero(input) -> bool: whether a one-element tensor is not zero."""
    def is_same_size(self, other) -> _bool:
        """is_same_size(input, other) -> bool: whether the shapes are equal."""
    def is_signed(self) -> _bool:
        """True unless ``input``'s dtype is unsigned (uint8) or bool."""
    def less(self, other, /) -> Tensor:
        """Elementwise ``lt`` (generated from its op-table row)."""
    def less_(self, other, /) -> Tensor:
        """In-place ``lt``: writes into ``self`` and bumps its version."""
    def less_equal(self, other, /) -> Tensor:
        """Elementwise ``le`` (generated from its op-table row)."""
    def less_equal_(self, other, /) -> Tensor:
        """In-place ``le``: writes into ``self`` and bumps its version."""
    def logcumsumexp(self, dim) -> Tensor:
        """``log(cumsum(exp(input), dim))`` computed stably: each slice is shifted by its largest finite value first."""
    @property
    def mH(self) -> Tensor:
        """``mT``: real dtypes have no conjugate; a view."""
    def msort(self) -> Tensor:
        """msort(input) -> Tensor: ``input`` sorted along its first dimension."""
    def multiply(self, other, /) -> Tensor:
        """Elementwise ``mul`` (generated from its op-table row)."""
    def multiply_(self, other, /) -> Tensor:
        """In-place ``mul``: writes into ``self`` and bumps its version."""
    def nanquantile(self, q, dim=None, keepdim=False, *, interpolation='linear') -> Tensor:
        """``quantile`` ignoring NaN: each slice's quantiles are those of its non-NaN values (NaN where a slice is all NaN)."""
    def ndimension(self) -> int:
        """The number of dimensions (``dim()``)."""
    def negative(self) -> Tensor:
        """Elementwise ``neg`` (generated from its op-table row)."""
    def negative_(self) -> Tensor:
        """In-place ``neg``: writes into ``self`` and bumps its version."""
    def new_empty(self, *size, dtype=None, device=None, requires_grad=False) -> Tensor:
        """``empty`` of ``size`` with ``self``'s dtype and device unless given."""
    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False) -> Tensor:
        """A tensor of ``size`` filled with ``fill_value``, with ``self``'s dtype and device unless given (not the dtype the number would infer)."""
    def new_ones(self, *size, dtype=None, device=None, requires_grad=False) -> Tensor:
        """``ones`` of ``size`` with ``self``'s dtype and device unless given."""
    def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False) -> Tensor:
        """A copy of ``data`` (never an alias) with ``self``'s dtype and device unless given, outside any graph."""
    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False) -> Tensor:
        """``zeros`` of ``size`` with ``self``'s dtype and device unless given."""
    def not_equal(self, other, /) -> Tensor:
        """Elementwise ``ne`` (generated from its op-table row)."""
    def not_equal_(self, other, /) -> Tensor:
        """In-place ``ne``: writes into ``self`` and bumps its version."""
    def positive(self) -> Tensor:
        """positive(input) -> Tensor: ``input`` itself (refused for bool, as PyTorch's)."""
    def put(self, index, source, accumulate=False) -> Tensor:
        """put(input, index, source, accumulate=False) -> Tensor: the out-of-place ``put_`` (on a copy of ``input``)."""
    def put_(self, index, source, accumulate=False) -> Tensor:
        """Tensor.put_(index, source, accumulate=False) -> Tensor"""
    def quantile(self, q, dim=None, keepdim=False, *, interpolation='linear') -> Tensor:
        """The ``q``-th quantiles (``q`` a number or 1-D tensor in ``[0, 1]``) of each slice along ``dim`` (of the flattened input when ``dim`` is None), between data points as ``interpolation`` says: ``linear``, ``lower``, ``higher``, ``midpoint`` or ``nearest``."""
    def ravel(self) -> Tensor:
        """ravel(input) -> Tensor: ``input`` flattened to 1-D (a view where possible)."""
    def rot90(self, k=1, dims=(0, 1)) -> Tensor:
        """``input`` rotated by 90 degrees ``k`` times in the plane ``dims``, from the first toward the second (a copy, as PyTorch's: flip and transpose)."""
    def select(self, dim, index) -> Tensor:
        """select(input, dim, index) -> Tensor: the slice at ``index`` along ``dim``, that dimension removed (a view)."""
    def subtract(self, other, /) -> Tensor:
        """Elementwise ``sub`` (generated from its op-table row)."""
    def subtract_(self, other, /) -> Tensor:
        """In-place ``sub``: writes into ``self`` and bumps its version."""
    def sum_to_size(self, *size) -> Tensor:
        """Tensor.sum_to_size(*size) -> Tensor: ``self`` summed down to ``size``, a shape ``self`` expands from (itself when already that shape)."""
    def tensor_split(self, indices_or_sections, dim=0):
        """Views of ``input`` split along ``dim``: into ``n`` nearly equal pieces (the first ``size % n`` one longer), or at the given indices."""
    def trace(self) -> Tensor:
        """trace(input) -> Tensor: the sum of the main diagonal of a matrix (integers summed in int64, as ``sum``)."""
    def true_divide(self, other, *, rounding_mode=None) -> Tensor:
        """``input / other`` (true division, integers promoted to float), or rounded toward zero (``'trunc'``) or down (``'floor'``) in the promoted type, as PyTorch's ``div``."""
    def unfold(self, dimension, size, step) -> Tensor:
        """Tensor.unfold(dimension, size, step) -> Tensor"""
    def vsplit(self, indices_or_sections):
        """vsplit(input, indices_or_sections) -> tuple of Tensors: ``tensor_split`` along dimension 0 (equal pieces only)."""
    def where(self, condition, other) -> Tensor:
        """Tensor.where(condition, y) -> Tensor: ``nbgrad.where(condition, self, y)``."""

    # ----------------------------------------------------------- operators
    def __abs__(self) -> Tensor:
        """Elementwise ``abs`` (generated from its op-table row)."""
    def __add__(self, other, /) -> Tensor:
        """``self + other``: elementwise ``add`` (generated from its op-table row)."""
    def __and__(self, other, /) -> Tensor:
        """``self & other``: elementwise ``bitwise_and`` (generated from its op-table row)."""
    def __eq__(self, other, /) -> Tensor:  # type: ignore[override]
        """``self == other``: elementwise ``eq`` (generated from its op-table row)."""
    def __floordiv__(self, other) -> Tensor:
        """``self // other``: elementwise ``floor_divide``."""
    def __ge__(self, other, /) -> Tensor:
        """``self >= other``: elementwise ``ge`` (generated from its op-table row)."""
    def __gt__(self, other, /) -> Tensor:
        """``self > other``: elementwise ``gt`` (generated from its op-table row)."""
    def __hash__(self, /) -> int:
        """Return hash(self)."""
    def __iadd__(self, other) -> Tensor:
        """``self += other``: in-place ``add`` (generated from its op-table row)."""
    def __iand__(self, other) -> Tensor:
        """``self &= other``: in-place ``bitwise_and`` (generated from its op-table row)."""
    def __ifloordiv__(self, other) -> Tensor:
        """``self //= other``: in-place ``floor_divide``."""
    def __ilshift__(self, other) -> Tensor:
        """``self <<= other``: in-place ``bitwise_left_shift`` (generated from its op-table row)."""
    def __imod__(self, other) -> Tensor:
        """``self %= other``: in-place ``remainder``."""
    def __imul__(self, other) -> Tensor:
        """``self *= other``: in-place ``mul`` (generated from its op-table row)."""
    def __invert__(self) -> Tensor:
        """``~self``: bitwise not (logical not for bools)."""
    def __ior__(self, other) -> Tensor:
        """``self |= other``: in-place ``bitwise_or`` (generated from its op-table row)."""
    def __ipow__(self, exponent) -> Tensor:
        """Elementwise ``input ** exponent`` (either may be a number), as ``torch.pow``."""
    def __irshift__(self, other) -> Tensor:
        """``self >>= other``: in-place ``bitwise_right_shift`` (generated from its op-table row)."""
    def __isub__(self, other) -> Tensor:
        """``self -= other``: in-place ``sub`` (generated from its op-table row)."""
    def __itruediv__(self, other) -> Tensor:
        """``self /= other``: in-place ``div`` (generated from its op-table row)."""
    def __ixor__(self, other) -> Tensor:
        """``self ^= other``: in-place ``bitwise_xor`` (generated from its op-table row)."""
    def __le__(self, other, /) -> Tensor:
        """``self <= other``: elementwise ``le`` (generated from its op-table row)."""
    def __lshift__(self, other, /) -> Tensor:
        """``self << other``: elementwise ``bitwise_left_shift`` (generated from its op-table row)."""
    def __lt__(self, other, /) -> Tensor:
        """``self < other``: elementwise ``lt`` (generated from its op-table row)."""
    def __matmul__(self, b) -> Tensor:
        """The matrix product ``self @ b``."""
    def __mod__(self, other) -> Tensor:
        """``self % other``: elementwise ``remainder``."""
    def __mul__(self, other, /) -> Tensor:
        """``self * other``: elementwise ``mul`` (generated from its op-table row)."""
    def __ne__(self, other, /) -> Tensor:  # type: ignore[override]
        """``self != other``: elementwise ``ne`` (generated from its op-table row)."""
    def __neg__(self) -> Tensor:
        """Elementwise ``neg`` (generated from its op-table row)."""
    def __or__(self, other, /) -> Tensor:
        """``self | other``: elementwise ``bitwise_or`` (generated from its op-table row)."""
    def __pow__(self, exponent) -> Tensor:
        """Elementwise ``input ** exponent`` (either may be a number), as ``torch.pow``."""
    def __radd__(self, other, /) -> Tensor:
        """``other + self``: elementwise ``add`` (generated from its op-table row)."""
    def __rand__(self, other, /) -> Tensor:
        """``other & self``: elementwise ``bitwise_and`` (generated from its op-table row)."""
    def __rfloordiv__(self, other) -> Tensor:
        """``other // self``: elementwise ``floor_divide``."""
    def __rlshift__(self, other, /) -> Tensor:
        """``other << self``: elementwise ``bitwise_left_shift`` (generated from its op-table row)."""
    def __rmatmul__(self, other) -> Tensor:
        """``other @ self``."""
    def __rmod__(self, other) -> Tensor:
        """``other % self``: elementwise ``remainder``."""
    def __rmul__(self, other, /) -> Tensor:
        """``other * self``: elementwise ``mul`` (generated from its op-table row)."""
    def __ror__(self, other, /) -> Tensor:
        """``other | self``: elementwise ``bitwise_or`` (generated from its op-table row)."""
    def __rpow__(self, other, /) -> Tensor:
        """``other ** self``: elementwise ``pow`` (generated from its op-table row)."""
    def __rrshift__(self, other, /) -> Tensor:
        """``other >> self``: elementwise ``bitwise_right_shift`` (generated from its op-table row)."""
    def __rshift__(self, other, /) -> Tensor:
        """``self >> other``: elementwise ``bitwise_right_shift`` (generated from its op-table row)."""
    def __rsub__(self, other, /) -> Tensor:
        """``other - self``: elementwise ``sub`` (generated from its op-table row)."""
    def __rtruediv__(self, other) -> Tensor:
        """``number / self`` as PyTorch computes it: ``self.reciprocal() * number``, two nodes, the first saving its result (not ``self``)."""
    def __rxor__(self, other, /) -> Tensor:
        """``other ^ self``: elementwise ``bitwise_xor`` (generated from its op-table row)."""
    def __sub__(self, other, /) -> Tensor:
        """``self - other``: elementwise ``sub`` (generated from its op-table row)."""
    def __truediv__(self, other, /) -> Tensor:
        """``self / other``: elementwise ``div`` (generated from its op-table row)."""
    def __xor__(self, other, /) -> Tensor:
        """``self ^ other``: elementwise ``bitwise_xor`` (generated from its op-table row)."""


def multi_view_error(view, modified):
    """PyTorch's error for an in-place write that involves one of several views an op returned (split, chunk, unbind), or a view of one."""


def no_grad_view_error(view, modified) -> RuntimeError:
    """PyTorch's error for an in-place write that involves a view made in no_grad mode (``modified``: "is being" or "its base or ... has been")."""
