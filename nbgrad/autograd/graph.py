"""Hooks on the graph (``torch.autograd.graph``): ``saved_tensors_hooks``,
``save_on_cpu``, ``disable_saved_tensors_hooks``; and the saved values of a
node, read as ``grad_fn._saved_<name>`` under PyTorch's names.

The tape saves raw arrays and knows no Tensor: a user's pack and unpack
hooks are adapted here, when they are pushed, into the tape's own (see
``nbgrad.tape.grad_mode.push_saved_hooks``). Every value an op saves meets
the hooks: the general path's in ``SavedTensor``'s constructor, the generated
straight-line code's when its result is made (``tape.graph.watch_result``);
without hooks an op pays one attribute load for them.
"""
import numpy as np

from .. import dtypes
from ..backends import backend_of, layout
from ..ops.elementwise import ElementwiseBackward
from ..ops.linalg import MatmulBackward
from ..ops.reductions import MeanBackward, SoftmaxBackward, SumBackward
from ..ops.views import ShapeBackward
from ..tape import grad_mode
from ..tape.graph import PACKED, Node, Packed, SavedTensor, SavedValue
from ..tensor import Tensor

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks", "Node"]


# ------------------------------------------------------------ saved-tensor hooks
def _saved_output(saved):
    """A value saved without its tensor at hand: a tensor over its array
    sharing its version counter, without history."""
    data = saved.data
    t = Tensor._wrap(data, dtypes.from_numpy_dtype(data.dtype), backend_of(data))
    t._version_counter = saved.counter
    return t


def _tape_pack(pack_hook):
    """``pack_hook(tensor)`` as the tape calls it: ``pack(saved, tensor)``,
    grad mode off (as PyTorch's engine calls it)."""
    def pack(saved, tensor):
        with grad_mode.no_grad():
            return pack_hook(_saved_output(saved) if tensor is None else tensor)
    return pack


def _tape_unpack(unpack_hook):
    """``unpack_hook(packed)`` as the tape calls it: ``unpack(packed, saved,
    graph)`` -> (array, its version counter). Grad mode is on only for a
    backward that builds a graph, as in PyTorch. The tensor returned is
    checked (kernels read it as the saved array): a Tensor, of the saved size
    on the saved device; another dtype is cast back."""
    def unpack(value, saved, graph):
        with grad_mode.set_grad_enabled(graph):
            tensor = unpack_hook(value)
        if not isinstance(tensor, Tensor):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got "
                            f"result of type {type(tensor).__name__}")
        packed, data = saved.data, tensor._data
        if data.shape != packed.shape:
            raise RuntimeError(f"unpack_hook returned a tensor of size {list(data.shape)}, but the "
                               f"tensor saved had size {list(packed.shape)}")
        backend = backend_of(data)
        if backend is not packed.backend:
            saved_on = "cpu" if packed.backend.name == "cpu" else "cuda:0"
            raise RuntimeError(f"unpack_hook returned a tensor on {tensor.device}, but the tensor "
                               f"saved was on {saved_on}")
        if data.dtype != packed.dtype:
            data = backend.cast(data, packed.dtype)
        if data.strides != packed.strides:  # a backward kernel may read the saved layout
            data = layout.with_strides(backend, data,
                                       [s // data.itemsize for s in packed.strides])
        return data, tensor._version_counter
    return unpack


class saved_tensors_hooks:
    """saved_tensors_hooks(pack_hook, unpack_hook)

    Context manager: while active (in this thread), every tensor an op saves
    for backward is passed to ``pack_hook(tensor) -> Any`` and what it returns
    is kept instead; ``unpack_hook(packed) -> Tensor`` gives the value back
    when backward (or ``grad_fn._saved_<name>``) needs it. Nested, the
    innermost pair applies. Hooks run with grad mode off (``unpack_hook``: on,
    in a backward with ``create_graph=True``).

    ``unpack_hook`` should return a tensor of the saved size, dtype and device
    (another size or device raises; another dtype is cast back). When it gives
    back the very storage that was saved (e.g. identity hooks), an in-place
    write since is caught as without hooks; PyTorch checks no version through
    hooks."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        grad_mode.push_saved_hooks(_tape_pack(self.pack_hook), _tape_unpack(self.unpack_hook))

    def __exit__(self, *args):
        grad_mode.pop_saved_hooks()


class save_on_cpu(saved_tensors_hooks):
    """save_on_cpu(pin_memory=False, device_type="cuda")

    Context manager: tensors saved for backward are kept in host memory and
    copied back to their device when backward needs them (a CPU tensor is
    kept as it is: no copy). ``pin_memory`` is accepted; the copies are
    synchronous either way."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack_to_cpu(tensor):
            return (tensor.device, tensor.cpu())

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device)

        super().__init__(pack_to_cpu, unpack_from_cpu)


class disable_saved_tensors_hooks:
    """disable_saved_tensors_hooks(error_message)

    Context manager: saved-tensor hooks are refused (``RuntimeError`` with
    ``error_message``) while it is active, and entering it while hooks are
    active raises the same."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        self._previous = grad_mode.set_saved_hooks_disabled(self.error_message)

    def __exit__(self, *args):
        grad_mode.set_saved_hooks_disabled(self._previous)

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with disable_saved_tensors_hooks(self.error_message):
                return fn(*args, **kwargs)
        return wrapper


# ------------------------------------------------------------ grad_fn._saved_<name>
# Row inputs as PyTorch names them in its nodes' saved values (``a`` is self).
_INPUT_NAMES = {"a": "self", "b": "other", "lo": "min", "hi": "max", "condition": "condition",
                "src": "src", "value": "value"}
_EXPONENT_ROWS = ("pow", "pow_number")
_MATMUL_NAMES = {"Mm": "mat2", "Bmm": "mat2", "Mv": "vec", "Dot": "tensor"}
_SIZED_VIEWS = ("View", "UnsafeView", "ReshapeAlias", "Expand", "Squeeze")


def _elementwise_saved(node):
    recipe = node.recipe
    row = recipe.row
    found = {}
    for k in recipe.spec.saves:
        name = row.inputs[k]
        name = "exponent" if k == 1 and row.name in _EXPONENT_ROWS else _INPUT_NAMES.get(name, name)
        found[name] = node.args[k]
    if node.out.__class__ is SavedTensor:
        found["result"] = node.out
    if row.name in ("add", "sub"):
        found["alpha"] = 1  # PyTorch's add and sub take an alpha; nbgrad's is always 1
    return found


def _sizes(node):
    meta = node.input_meta[0]
    return tuple(meta.shape) if meta is not None else None


def _saved_of(node):
    """{PyTorch's name: SavedTensor, SavedValue or plain value} for ``node``."""
    if isinstance(node, ElementwiseBackward):
        return _elementwise_saved(node)
    if isinstance(node, SumBackward):
        found = {"self_sym_sizes": tuple(node.shape)}
        if isinstance(node, MeanBackward):
            found["self_sym_numel"] = int(np.prod(node.shape, dtype=np.int64))
        return found
    if isinstance(node, SoftmaxBackward):
        return {"result": node.saved[0], "dim": node.dim} if node.saved else {"dim": node.dim}
    if isinstance(node, MatmulBackward) and node.op_name in _MATMUL_NAMES:
        other, self_ = node.saved
        found = {}
        if self_ is not None:
            found["self"] = self_
        if other is not None:
            found[_MATMUL_NAMES[node.op_name]] = other
        for name, meta in zip(("self", _MATMUL_NAMES[node.op_name]), node.input_meta):
            if meta is not None and node.op_name != "Dot":
                found[name + "_sym_sizes"] = tuple(meta.shape)
        return found
    if isinstance(node, ShapeBackward) and node.op_name in _SIZED_VIEWS:
        return {"self_sym_sizes": _sizes(node)}
    return {}


class _RawSavedTensor:
    """``grad_fn._raw_saved_<name>``: the saved value itself (PyTorch's
    ``torch._C._autograd.SavedTensor``); ``register_hooks(pack, unpack)``
    repacks it with a pair of hooks of its own."""

    def __init__(self, saved, node):
        self._saved, self._node = saved, node

    def register_hooks(self, pack_hook, unpack_hook):
        """Pack the saved value with ``pack_hook`` now; ``unpack_hook`` gives it back."""
        saved = self._saved
        if saved.data is None:
            raise RuntimeError(
                "Calling register_hooks on a saved tensor after it has been freed. Saved "
                "intermediate values of the graph are freed when you call .backward() or "
                "autograd.grad(). Specify retain_graph=True if you need to backward through the "
                "graph a second time or if you need to access saved values after calling backward.")
        if saved.version == PACKED:
            raise RuntimeError("SavedTensor hooks have already been set on this SavedTensor")
        tensor = saved.tensor_ref() if saved.tensor_ref is not None else None
        packed = Packed(None, _tape_unpack(unpack_hook), saved.version, saved.data)
        packed.value = _tape_pack(pack_hook)(saved, tensor)
        saved.data, saved.version = packed, PACKED


def _saved_attribute(node, name):
    """``node._saved_<key>`` (a Tensor, number or sizes) or ``_raw_saved_<key>``."""
    raw = name.startswith("_raw_saved_")
    key = name[len("_raw_saved_" if raw else "_saved_"):]
    value = _saved_of(node).get(key, _MISSING)
    if value is _MISSING or (raw and value.__class__ is not SavedTensor):
        raise AttributeError(f"'{type(node).__name__}' object has no attribute '{name}'")
    if raw:
        return _RawSavedTensor(value, node)
    if value.__class__ is SavedTensor:
        return value.to_tensor(value, node)
    if value.__class__ is SavedValue:
        number = value.unpack()
        return number.item() if isinstance(number, np.generic) else number
    return value


def _saved_names(node):
    names = []
    for key, value in _saved_of(node).items():
        names.append("_saved_" + key)
        if value.__class__ is SavedTensor:
            names.append("_raw_saved_" + key)
    return names


_MISSING = object()
_KEYS = sorted({*_INPUT_NAMES.values(), "exponent", "result", "alpha", "self_sym_sizes",
                "self_sym_numel", "dim", *_MATMUL_NAMES.values(),
                *(name + "_sym_sizes" for name in _MATMUL_NAMES.values())})
Node.saved_attribute = staticmethod(_saved_attribute)
Node.saved_names = staticmethod(_saved_names)
Node.expose_saved([prefix + key for key in _KEYS for prefix in ("_saved_", "_raw_saved_")])
