"""The Tensor: a raw backend array (a view over a shared storage) plus the
autograd state around it."""
import operator
import warnings
import weakref

import numpy as np

from . import dtypes
from .tape import grad_mode
from .tape.grad_mode import SWITCHES, _state as _mode_state
from .tape.graph import AccumulateGrad, Node, SavedTensor, compile_function, indent
from .tape.version_counter import VersionCounter
from .backends import backend_of, cpu, for_device, layout
from .device import device as _device


_NON_LEAF_GRAD = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad field "
    "to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you "
    "access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. See "
    "github.com/pytorch/pytorch/pull/30531 for more information.")
_C_NAMES = dtypes.CPP_NAMES  # "float", "long int", "c10::Half"
_TYPE_NAMES = dtypes.TYPE_NAMES  # "Float", "Long", "Half"


class Size(tuple):
    """A tensor's shape, printed as PyTorch prints it."""

    def __repr__(self):
        return f"nbgrad.Size([{', '.join(map(str, self))}])"

    def numel(self):
        n = 1
        for d in self:
            n *= d
        return n


class _RemovableHandle:
    def __init__(self, hooks, hook):
        self._hooks, self._hook = hooks, hook

    def remove(self):
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)


class Tensor:
    # Hot state lives in slots. State that only views, leaves with hooks or
    # retain_grad() set is a class-level default, shadowed per tensor through
    # the instance __dict__ once written (it costs nothing until then), so an
    # op's result sets only the slots below.
    __slots__ = ("_data", "_backend", "dtype", "_vc", "_base", "_requires_grad", "_grad_fn",
                 "_grad", "__dict__", "__weakref__")
    __array_ufunc__ = None  # NumPy defers to our reflected operators
    _view_fn = None
    _view_replay = None  # (base, view_fn) -> the node that re-derives a view (ops.views binds it)
    _view_version = 0
    _view_no_grad = False
    _multi_view = None  # output number of a view among several (split), or of a view of one
    _hooks = None
    _post_accumulate_grad_hooks = None
    _grad_accumulator = None
    _retains_grad = False
    _fw_grad = None  # the tangent at the open forward-AD level (nbgrad.ops.dual)

    def __init__(self, *args, **kwargs):
        raise TypeError("create tensors with nbgrad.tensor(), nbgrad.zeros() and friends")

    @classmethod
    def _wrap(cls, data, dtype=None, backend=cpu):
        """A tensor owning ``data`` with a fresh version counter and no history."""
        return cls._from_op(data, None, dtype, backend)

    @staticmethod
    def _result_lines(t, data, backend, dtype, node, vc="None", cls="Tensor"):
        """Lines that make ``t`` an op's result: array ``data`` of ``backend``
        with history ``node`` (None for none) and version counter ``vc`` (None:
        made on first need, see _version_counter). The one place an op result's
        slots are listed: ``_from_op`` is compiled from these lines and the
        generated fast paths (nbgrad/ops/straight_line.py) paste them in."""
        return [f"{t} = new({cls})",
                f"{t}._data = {data}",
                f"{t}._backend = {backend}",
                f"{t}.dtype = {dtype}",
                f"{t}._vc = {vc}",
                f"{t}._base = None",
                f"{t}._requires_grad = False",
                f"{t}._grad_fn = {node}",
                f"{t}._grad = None",
                # Saved-tensor hooks, anomaly or inference mode on in some thread:
                # the one check an op pays for them (see tape.graph.watch_result).
                "if switches.results:",
                f"    watch_result({t})"]

    @property
    def _version_counter(self):
        """The storage's version counter, made on first need: most op results
        are never aliased, saved or written. Every alias (view, detach,
        Parameter, saved tensor) reads it through here, so it exists before
        any alias can share it."""
        vc = self._vc
        if vc is None:
            vc = self._vc = VersionCounter()
        return vc

    @_version_counter.setter
    def _version_counter(self, counter):
        self._vc = counter
        if counter.__class__ is _InferenceCounter and self.__class__ is Tensor:
            self.__class__ = _inference_class()  # a view or alias of an inference tensor

    # ----------------------------------------------------------------- metadata
    @property
    def shape(self):
        return Size(self._data.shape)

    def size(self, dim=None):
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[self._dim(dim, "size")]

    def dim(self):
        return self._data.ndim

    @property
    def ndim(self):
        return self._data.ndim

    def numel(self):
        return self._data.size

    def nelement(self):
        return self._data.size

    def stride(self, dim=None):
        strides = tuple(s // self._data.itemsize for s in self._data.strides)
        if self._data.size == 0 and not any(strides):  # NumPy's fresh empty arrays: PyTorch's
            strides, step = [], 1                      # contiguous strides (sizes of 0 count as 1)
            for n in reversed(self._data.shape):
                strides.insert(0, step)
                step *= max(n, 1)
            strides = tuple(strides)
        return strides if dim is None else strides[self._dim(dim, "stride")]

    def storage_offset(self):
        root = self._base._data if self._base is not None else self._data
        address = self._backend.data_pointer
        return (address(self._data) - address(root)) // self._data.itemsize

    def is_contiguous(self):
        return self._data.flags.c_contiguous

    def element_size(self):
        return self._data.itemsize

    @property
    def device(self):
        return _CPU if self._backend is cpu else _CUDA0

    @property
    def is_cuda(self):
        return self._backend.name == "cuda"

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def is_inference(self):
        """is_inference() -> bool

        Whether this is an inference tensor: made in inference mode, or a
        view or alias of one (see ``nbgrad.inference_mode``)."""
        return _RAW_VC.__get__(self).__class__ is _InferenceCounter

    @property
    def _version(self):
        vc = self._vc
        return 0 if vc is None else vc.value

    def _dim(self, dim, fn=None):
        """``dim`` wrapped into [0, ndim) (a 0-d tensor takes -1 and 0), refused as PyTorch does."""
        if type(dim) is not int:
            try:
                dim = operator.index(dim)  # NumPy ints and one-element integer tensors too
            except TypeError:
                raise TypeError(f"{fn + '(): ' if fn else ''}argument 'dim' must be int, not "
                                f"{dtypes.type_name(dim)}") from None
        ndim = max(self._data.ndim, 1)
        if not -ndim <= dim < ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-ndim}, {ndim - 1}], but got {dim})")
        return dim % ndim

    # ------------------------------------------------------------- conversions
    def numpy(self):
        if self.requires_grad and grad_mode.is_grad_enabled():  # allowed under no_grad, as PyTorch
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. "
                               "Use tensor.detach().numpy() instead.")
        if self._backend is not cpu:
            raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use "
                            "Tensor.cpu() to copy the tensor to host memory first.")
        return self._data

    @property
    def __cuda_array_interface__(self):
        """The device buffer, for CuPy, PyTorch and Numba kernels (no copy)."""
        if self._backend is cpu:  # AttributeError: hasattr() is False for CPU tensors
            raise AttributeError(f"Can't get __cuda_array_interface__ on non-CUDA tensor type: "
                                 f"nbgrad.{self.dtype.tensor_type} If CUDA data is required use "
                                 "tensor.cuda() to copy tensor to device memory.")
        if self.requires_grad:
            raise RuntimeError("Can't get __cuda_array_interface__ on Variable that requires grad. "
                               "If gradients aren't required, use var.detach() to get Variable "
                               "that doesn't require grad.")
        return self._data.__cuda_array_interface__

    def __array__(self, dtype=None, copy=None):
        array = self.numpy()
        if dtype is not None and np.dtype(dtype) != array.dtype:
            if copy is False:
                raise ValueError("Unable to avoid copy while creating an array as requested.")
            return array.astype(dtype)
        return array.copy() if copy else array  # np.array(t) must not alias t

    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return self._data.reshape(-1)[0].item()

    def tolist(self):
        return self._data.tolist()

    def _scalar(self):
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self._data.reshape(-1)[0].item()

    def __float__(self):
        if self.requires_grad:
            warnings.warn("Converting a tensor with requires_grad=True to a scalar may lead to "
                          "unexpected behavior.\nConsider using tensor.detach() first.",
                          UserWarning, stacklevel=2)
        return float(self._scalar())

    def __int__(self):
        return int(self._scalar())

    def __index__(self):
        if self.dtype.is_floating_point or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __bool__(self):
        if self._data.size != 1:
            which = "no values" if self._data.size == 0 else "more than one value"
            raise RuntimeError(f"Boolean value of Tensor with {which} is ambiguous")
        return bool(self.item())

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    __hash__ = object.__hash__

    def __repr__(self):
        from ._formatting import tensor_repr
        return tensor_repr(self)

    # ---------------------------------------------------------------- autograd
    @property
    def grad_fn(self):
        if self._base is not None and self._view_version != self._version_counter.value:
            self._refresh_view_history()
        return self._grad_fn

    def _refresh_view_history(self):
        """The base (or another view of it) was modified in place: re-derive
        this view's history from the base's current history."""
        base = self._base
        if self._grad_fn is None and not base.requires_grad:
            return  # not marked fresh: a later requires_grad_() on the base gives it a history
        if self._view_no_grad:  # raised on every access, as in PyTorch
            raise no_grad_view_error(self, "its base or another view of its base has been")
        if self._multi_view is not None:
            raise multi_view_error(self, "its base or another view of its base has been")
        self._view_version = self._version_counter.value
        old, self._grad_fn = self._grad_fn, self._view_replay(base, self._view_fn)
        if old is not None:  # retain_grad moves to the new history, as in PyTorch
            self._grad_fn.retained, old.retained = old.retained, None

    @property
    def requires_grad(self):
        # A view also reports its base's flag (PyTorch's DifferentiableViewMeta).
        return (self._requires_grad or self._grad_fn is not None
                or (self._base is not None and self._base.requires_grad))

    @requires_grad.setter
    def requires_grad(self, flag):
        if flag and not self.dtype.is_floating_point and self.is_leaf:  # PyTorch's wording here
            raise RuntimeError("only Tensors of floating point and complex dtype can require "
                               "gradients")
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad=True):
        if self._grad_fn is not None or (self._base is not None and self.grad_fn is not None):
            if not requires_grad:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to "
                    "use a computed variable in a subgraph that doesn't require differentiation "
                    "use var_no_grad = var.detach().")
            return self
        if requires_grad and not self.dtype.is_floating_point:
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if requires_grad and not _mode_state.inference and self.is_inference():
            raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                               "InferenceMode is not allowed.")
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def grad(self):
        if self._grad is None and not self._retains_grad and not self.is_leaf:
            warnings.warn(_NON_LEAF_GRAD, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                                f"{type(value).__name__}")
            if value is self:
                raise RuntimeError("can't assign Variable as its own grad")
            if value.dtype is not self.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{_C_NAMES[value.dtype.name]}' to "
                    f"a tensor with grad_dtype '{_TYPE_NAMES[self.dtype.name]}'. The gradient must "
                    "match the tensor's grad_dtype (defaults to the tensor's dtype). You can set the "
                    "tensor's grad_dtype attribute with a specific dtype, or None to allow any dtype. "
                    "Set grad_dtype with caution. Diverging the dtypes of a tensor and its gradient "
                    "may break downstream systems that assume they match.")
            if value._backend is not self._backend:
                raise RuntimeError(
                    f"attempting to assign a gradient with device type '{value.device.type}' to "
                    f"a tensor with device type '{self.device.type}'. Please ensure that the "
                    "gradient and the tensor are on the same device")
            if value.shape != self.shape:
                raise RuntimeError(f"attempting to assign a gradient of size '{list(value.shape)}' "
                                   f"to a tensor of size '{list(self.shape)}'. Please ensure that "
                                   "the gradient and the tensor are the same size")
        self._grad = value

    @property
    def retains_grad(self):
        return self._retains_grad

    def retain_grad(self):
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None or self._retains_grad:
            return
        self._retains_grad = True
        self._grad_fn.retained = weakref.ref(self)

    def register_hook(self, hook):
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is None:
            if self._hooks is None:
                self._hooks = []
            hooks = self._hooks
        else:
            if self._grad_fn.pre_hooks is None:
                self._grad_fn.pre_hooks = []
            hooks = self._grad_fn.pre_hooks
        adapted = next((h for h in hooks if getattr(h, "hook", None) is hook), None)
        if adapted is None:
            adapted = _array_hook(hook)
            hooks.append(adapted)
        return _RemovableHandle(hooks, adapted)

    def register_post_accumulate_grad_hook(self, hook):
        """register_post_accumulate_grad_hook(hook) -> RemovableHandle

        Register ``hook(tensor)``, run after a gradient has been accumulated
        into this leaf's ``.grad`` (by ``backward``, not ``autograd.grad``),
        in the order registered. It must return None."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                               "tensors")
        if self._post_accumulate_grad_hooks is None:
            self._post_accumulate_grad_hooks = []
        hooks = self._post_accumulate_grad_hooks
        hooks.append(hook)
        return _RemovableHandle(hooks, hook)

    def _gradient_edge(self):
        """The node a gradient for this tensor flows into; None for a view made
        in no_grad mode (it reports its base's requires_grad but, as in PyTorch,
        has neither history nor an accumulator of its own)."""
        fn = self._grad_fn if self._base is None else self.grad_fn
        if fn is not None:
            return fn
        if not self._requires_grad:
            return None
        ref = self._grad_accumulator
        acc = ref() if ref is not None else None
        if acc is None:
            acc = AccumulateGrad(self)
            self._grad_accumulator = weakref.ref(acc)
        return acc

    def _accumulate_grad(self, grad, owned=False):
        """``owned``: ``grad`` is a new buffer that nothing else references
        (the engine's call), so the first gradient keeps it instead of a copy.
        A Tensor ``grad`` (a backward that builds a graph) is accumulated by
        taped ops, as PyTorch's AccumulateGrad does in grad mode: a clone,
        then out-of-place sums, so ``.grad`` keeps its history."""
        if grad.__class__ is Tensor:
            self._grad = grad.clone() if self._grad is None else self._grad + grad
            return
        if self._grad is None:
            data = self._data
            if data.ndim > 1 and not (data.flags.c_contiguous and grad.flags.c_contiguous):
                # PyTorch's gradient layout contract: a dense leaf's strides, else C order.
                if not (owned and layout.obeys_gradient_layout(grad, data)):
                    grad = layout.copy(self._backend, grad, layout.gradient_strides(data))
                    owned = True
            self._grad = Tensor._from_op(grad if owned else self._backend.copy(grad), None,
                                         self.dtype, self._backend)
        else:
            self._backend.add_into(self._grad._data, grad)
            self._grad._version_counter.bump("AccumulateGrad", self._grad._data)

    def _set_retained_grad(self, grad):
        """PyTorch's retain_grad hook: the first gradient is kept as a C-order
        copy (clone(memory_format=contiguous_format)), not by the leaf contract."""
        if grad.__class__ is Tensor:  # a backward that builds a graph
            self._grad = grad.contiguous().clone() if self._grad is None else self._grad + grad
        elif self._grad is None:
            self._grad = Tensor._from_op(self._backend.copy(grad), None, self.dtype, self._backend)
        else:
            self._accumulate_grad(grad)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        _tensor_backward(self, gradient, retain_graph, create_graph, inputs)

    # ------------------------------------------------------------------ aliases
    def __reduce_ex__(self, protocol):
        """Pickling (``pickle``, ``copy``, worker processes): the values (a
        host copy), dtype, device and ``requires_grad``, as PyTorch keeps them;
        not the history, the gradient, nor memory shared with views."""
        return (_rebuild_tensor, (self._backend.to_numpy(self._data), str(self.device),
                                  self.requires_grad))

    def __deepcopy__(self, memo):
        if self.grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support "
                               "the deepcopy protocol at the moment.")
        if id(self) in memo:
            return memo[id(self)]
        copy = Tensor._wrap(self._backend.copy(self._data), self.dtype, self._backend)
        copy._requires_grad = self._requires_grad
        if self._grad is not None:
            copy._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = copy
        return copy

    def detach(self):
        """An untaped alias: same memory and version counter, no history."""
        t = Tensor._wrap(self._data, self.dtype, self._backend)
        t._version_counter = self._version_counter
        return t

    def detach_(self):
        if self._base is not None:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using "
                "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set "
                "as True, gradients are views of DDP buckets, and hence detach_() cannot be "
                "called on these gradients. To fix this error, please refer to the "
                "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.")
        self._grad_fn = None
        self._requires_grad = False
        return self

    @property
    def data(self):
        """An alias with its OWN version counter: writes through it are not
        seen by autograd (PyTorch's classic trap, kept on purpose)."""
        alias = Tensor._wrap(self._data, self.dtype, self._backend)
        if self.is_inference():  # still an inference tensor, as in PyTorch
            alias._version_counter = _InferenceCounter()
        return alias

    @data.setter
    def data(self, other):
        if not isinstance(other, Tensor):
            raise TypeError(f"data must be a Tensor, not {type(other).__name__}")
        if self.requires_grad and not other.dtype.is_floating_point:
            raise RuntimeError("data set to a tensor that requires gradients must be floating "
                               "point or complex dtype")
        self._data = other._data
        self.dtype = other.dtype
        self._backend = other._backend


Tensor._from_op = classmethod(compile_function("\n".join([
    "def _from_op(cls, data, node, dtype=None, backend=cpu):",
    '    """An op\'s result: ``data`` with history ``node`` (None for none)."""',
    *indent(Tensor._result_lines("t", "data", "backend",
                                "dtype or from_numpy_dtype(data.dtype)", "node", cls="cls")),
    "    return t"]), {"cpu": cpu, "from_numpy_dtype": dtypes.from_numpy_dtype}))


def _rebuild_tensor(array, device, requires_grad):
    """A pickled tensor (``Tensor.__reduce_ex__``) made again, a leaf."""
    backend = for_device(_device(device))
    t = Tensor._wrap(backend.asarray(np.array(array, order="C")),  # (0-d stays 0-d)
                     dtypes.from_numpy_dtype(array.dtype), backend)
    t._requires_grad = requires_grad
    return t


def _array_hook(hook):
    """A Tensor hook as the tape runs it, on backend arrays: the gradient is
    shown as a Tensor on its device and what the hook returns is checked as
    PyTorch checks it (same dtype, device and size)."""
    def run(grad):
        if grad.__class__ is Tensor:  # a backward that builds a graph
            return _checked_hook_result(hook, grad, hook(grad))
        backend = backend_of(grad)
        result = hook(Tensor._wrap(grad, backend=backend))
        if result is None:
            return None
        if not isinstance(result, Tensor):
            raise TypeError(f"expected Variable, but hook returned '{type(result).__name__}'")
        name = getattr(hook, "__name__", type(hook).__name__)
        if result._data.dtype != grad.dtype or result._backend is not backend:
            was, got = (("cuda." if b.name == "cuda" else "") + dtypes.from_numpy_dtype(
                a.dtype).tensor_type for a, b in ((grad, backend), (result._data, result._backend)))
            raise RuntimeError(f"hook '{name}' has changed the type of value "
                               f"(was nbgrad.{was} got nbgrad.{got})")
        if result._data.shape != grad.shape:
            raise RuntimeError(f"hook '{name}' has changed the size of value")
        return result._data
    run.hook = hook
    return run


def _checked_hook_result(hook, grad, result):
    """A hook's result for a Tensor gradient, checked as PyTorch checks it."""
    if result is None:
        return grad
    if not isinstance(result, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(result).__name__}'")
    name = getattr(hook, "__name__", type(hook).__name__)
    if result.dtype is not grad.dtype or result._backend is not grad._backend:
        was, got = (("cuda." if t._backend.name == "cuda" else "") + t.dtype.tensor_type
                    for t in (grad, result))
        raise RuntimeError(f"hook '{name}' has changed the type of value "
                           f"(was nbgrad.{was} got nbgrad.{got})")
    if result._data.shape != grad._data.shape:
        raise RuntimeError(f"hook '{name}' has changed the size of value")
    return result


def _saved_as_tensor(saved, node):
    """A saved value as a Tensor with the history it had (a backward that
    builds a graph reads its saved values so): an input is the tensor itself
    while it lives and holds that value, else a tensor over the value with
    the history it had when saved; an output is a tensor made by ``node``
    (or by the node its ``history`` names: see ``mutation.CopySlices``)."""
    data = saved.unpack(True)  # the version checks, the second-backward error
    ref = saved.tensor_ref
    if ref is not None:
        tensor = ref()
        if tensor is not None and tensor._data is data:
            return tensor
        history = saved.history
        if history is None and tensor is not None and tensor._requires_grad:
            # A leaf's value given back by saved-tensor hooks: its gradient
            # still goes to the leaf (PyTorch's SavedVariable keeps the edge).
            history = tensor._gradient_edge()
    else:
        history = node if saved.history is None else saved.history
    dtype = dtypes.from_numpy_dtype(data.dtype)
    return Tensor._from_op(data, history if isinstance(history, Node) else None, dtype,
                           backend_of(data))


SavedTensor.to_tensor = staticmethod(_saved_as_tensor)


# ------------------------------------------------------------ inference tensors
_RAW_VC = Tensor.__dict__["_vc"]  # the slot itself, past _InferenceTensor's property
_INFERENCE_SAVED = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `nbgrad.no_grad()` instead of "
    "`nbgrad.inference_mode()`.")
_INFERENCE_INPLACE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
    "clone to get a normal tensor before doing inplace update.See "
    "https://github.com/pytorch/rfcs/pull/17 for more details.")


class _InferenceCounter(VersionCounter):
    """The version counter of an inference tensor and its views and aliases:
    it marks them (``Tensor.is_inference``); its value is never shown."""

    __slots__ = ()


class _InferenceTensor(Tensor):
    """The class of a plain tensor made in inference mode (and of its views
    and aliases). What makes it one: its counter (``_InferenceCounter``).
    Outside inference mode it refuses, before anything changes, to be saved
    for backward (saving reads ``_vc``) and to be written in place (its
    in-place methods are guarded, see ``_inference_class``)."""

    __slots__ = ()

    @property
    def _vc(self):
        # Read only where an op saves the tensor (SavedTensor.input_lines).
        if not _mode_state.inference:
            raise RuntimeError(_INFERENCE_SAVED)
        return _RAW_VC.__get__(self)

    @_vc.setter
    def _vc(self, counter):
        _RAW_VC.__set__(self, counter)

    @property
    def _version_counter(self):
        return _RAW_VC.__get__(self)

    @_version_counter.setter
    def _version_counter(self, counter):
        _RAW_VC.__set__(self, counter)
        if counter.__class__ is not _InferenceCounter:
            self.__class__ = Tensor  # a view of a normal tensor made in inference mode

    @property
    def _version(self):
        raise RuntimeError("Inference tensors do not track version counter.")


_INPLACE_DUNDERS = ("__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__",
                    "__ifloordiv__", "__imod__", "__ipow__", "__imatmul__", "__iand__", "__ior__",
                    "__ixor__", "__ilshift__", "__irshift__")
_NOT_WRITES = frozenset({"requires_grad_", "detach_"})
_guarded = False


def _refusing_outside_inference_mode(method):
    def guarded(self, *args, **kwargs):
        if not _mode_state.inference:
            raise RuntimeError(_INFERENCE_INPLACE)
        return method(self, *args, **kwargs)
    guarded.__name__ = guarded.__qualname__ = method.__name__
    guarded.__doc__ = method.__doc__
    return guarded


def _inference_class():
    """_InferenceTensor, its in-place methods guarded: made on first need,
    once the op layer has installed Tensor's methods."""
    global _guarded
    if not _guarded:
        for name in dir(Tensor):
            writes = (name.endswith("_") and not name.startswith("_") and name not in _NOT_WRITES
                      ) or name in _INPLACE_DUNDERS
            method = getattr(Tensor, name, None)
            if writes and callable(method):
                setattr(_InferenceTensor, name, _refusing_outside_inference_mode(method))
        _guarded = True
    return _InferenceTensor


def _mark_inference(t):
    """A result made while some thread is in inference mode: an inference
    tensor if this thread is (``tape.graph.watch_result`` calls it)."""
    if _mode_state.inference:
        _RAW_VC.__set__(t, _InferenceCounter())
        if t.__class__ is Tensor:
            t.__class__ = _inference_class()


SWITCHES.mark_inference = _mark_inference


def multi_view_error(view, modified):
    """PyTorch's error for an in-place write that involves one of several
    views an op returned (split, chunk, unbind), or a view of one."""
    fn = view._grad_fn
    prefix = ("A view was created in no_grad mode and" if fn is None else
              f"Output {view._multi_view} of {fn.op_name} is a view and")
    return RuntimeError(
        f"{prefix} {modified} modified inplace{' with grad mode enabled' if fn is None else ''}. "
        "This view is the output of a function that returns multiple views. Such functions do not "
        "allow the output views to be modified inplace. You should replace the inplace operation "
        "by an out-of-place one.")


def no_grad_view_error(view, modified):
    """PyTorch's error for an in-place write that involves a view made in
    no_grad mode (``modified``: "is being" or "its base or ... has been")."""
    fn = view._grad_fn
    prefix = ("A view was created in" if fn is None else
              f"Output 0 of {fn.op_name} is a view of a view which was created in")
    return RuntimeError(
        f"{prefix} no_grad mode and {modified} modified inplace with grad mode enabled. Given that "
        "this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by "
        "moving both the view and the inplace either both inside the no_grad block (if you don't "
        "want the inplace to be tracked) or both outside (if you want the inplace to be tracked).")


def _tensor_backward(*args):
    # Bound on first use (nbgrad.gradients builds on this module).
    global _tensor_backward
    from .gradients import tensor_backward
    _tensor_backward = tensor_backward
    return tensor_backward(*args)


_CPU = _device("cpu")
_CUDA0 = _device("cuda", 0)
