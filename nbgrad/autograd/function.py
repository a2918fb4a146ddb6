"""Custom differentiable operations: ``nbgrad.autograd.Function``, as
PyTorch's ``torch.autograd.Function``.

A Function is a class with a ``forward`` and a ``backward``; ``apply`` runs
``forward`` with grad mode off and records one node, ``<ClassName>Backward``,
whose backward is the user's. The node is an ordinary tape node: the engine
runs it in a plain backward (gradients are raw backend arrays, wrapped here as
Tensors for the user and unwrapped after) and in one that builds a graph
(``create_graph=True``: gradients are Tensors and the user's backward runs in
grad mode, so what it computes with nbgrad ops is taped and can be
differentiated again).

The tape's nodes have one output each, so a Function with several
differentiable outputs gives each output a node of its own (named as the
Function's), which hands its gradient to the Function's node; that node runs
the user's backward once, with every output's gradient.
"""
import functools
import inspect
import threading
import warnings
import weakref

import numpy as np

from .. import dtypes
from ..backends import backend_of, cpu
from ..ops import copying, dual, mutation
from ..tape import grad_mode
from ..tape.graph import Node, SavedTensor, fill_node, input_meta
from ..tensor import Tensor

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "once_differentiable"]

_LEGACY = ("Legacy autograd function with non-static forward method is deprecated. Please use "
           "new-style autograd function with static forward method. (Example: "
           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")
_NO_BACKWARD = ("You must implement either the backward or vjp method for your custom "
                "autograd.Function to use it with backward mode AD.")
_DIRTY_NOT_RETURNED = ("Some elements marked as dirty during the forward method were not returned "
                       "as output. The inputs that are modified inplace must all be outputs of the "
                       "Function.")
_DIRTY_VIEW_OF_SEVERAL = (
    "If your Function modifies inplace an input that is a view of another Tensor, your Function "
    "cannot return more than one Tensor. This is not supported by the current autograd engine. You "
    "should either make sure the input is not a view (using .clone() for example) or make your "
    "Function only return one Tensor (potentially splitting it into two Functions: one doing the "
    "inplace that returns a single Tensor and a second one that does the other operations). You "
    "can ask on the forum https://discuss.pytorch.org/ if you need help to do this change.")
_SAVED_AS_IS = (
    "An input that has been returned as-is as output is being saved for backward. This is not "
    "supported if you override setup_context. You should return and save a view of the input "
    "instead, e.g. with x.view_as(x) or setup ctx inside the forward function itself.")
_DIRTY_NOT_INPUT = ("ctx.mark_dirty() received a tensor that was not an input. Only input Tensors "
                    "that have been mutated should be passed to ctx.mark_dirty().")
_ONCE = "trying to differentiate twice a function that was marked with @once_differentiable"


def _tp_name(value):
    """The type of ``value`` as PyTorch's C code names it (``float``,
    ``numpy.ndarray``, a Python class by its own name)."""
    kind = type(value)
    if kind.__flags__ & (1 << 9) or kind.__module__ == "builtins":  # a class made in Python
        return kind.__name__
    return f"{kind.__module__}.{kind.__qualname__}"


def _is_in(value, group):
    """``value`` is one of ``group`` (by identity: tensors compare elementwise)."""
    return any(value is g for g in group)


def _device_name(backend):
    return "cpu" if backend is cpu else "cuda:0"


class FunctionCtx:
    """The ``ctx`` that a Function's ``forward`` (or ``setup_context``) and
    its ``backward`` share. Set any attribute of your own on it (numbers,
    shapes, flags); keep tensors needed by backward in ``save_for_backward``,
    which checks at backward that they were not modified in place since.

    Unlike PyTorch's, the ctx is not the graph node itself but the node's
    ``ctx``: ``y.grad_fn.saved_tensors``, ``y.grad_fn.needs_input_grad`` and
    your attributes read through the node all the same, and an attribute you
    name like a tape field (``saved``, ``retained``) cannot break the graph.
    """

    to_save = ()
    dirty_tensors = ()
    non_differentiable = ()
    materialize_grads = True
    needs_input_grad = ()
    _node = None  # weak reference to the node, once forward has returned
    _in_jvp = False  # saved_tensors gives save_for_forward's tensors while jvp runs

    def save_for_backward(self, *tensors):
        """save_for_backward(*tensors)

        Save tensors (or None) for ``backward``, which reads them back as
        ``ctx.saved_tensors``. Call it once, in ``forward`` or
        ``setup_context``: a later call replaces the earlier one. Each saved
        tensor is version-checked: if it is modified in place before the
        backward, reading ``saved_tensors`` raises (naming the in-place op
        and the line that did it). Save inputs and outputs this way; other
        values (numbers, shapes) go on ``ctx`` as plain attributes."""
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        """save_for_forward(*tensors)

        Save tensors for the Function's ``jvp`` (forward-mode AD), where
        ``ctx.saved_tensors`` returns them."""
        self.saved_for_forward = tensors

    def mark_dirty(self, *args):
        """mark_dirty(*args)

        Mark input tensors that ``forward`` modified in place (and returns).
        Each one's version counter is bumped once more and its history is
        rebased onto this Function, as nbgrad's own in-place ops do, so a
        tensor saved earlier by another op is caught as stale and gradients
        flow through the Function to the input's value before the write."""
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args):
        """mark_non_differentiable(*args)

        Mark outputs that get no gradient (indices, masks): they do not
        require grad, and backward still receives one gradient per output,
        zeros for these (or None, after ``set_materialize_grads(False)``)."""
        self.non_differentiable = args

    def set_materialize_grads(self, value):
        """set_materialize_grads(value)

        With True (the default) an output that got no gradient is handed to
        ``backward`` as zeros of its shape; with False, as None."""
        self.materialize_grads = bool(value)

    @property
    def saved_tensors(self):
        """The tensors given to ``save_for_backward``, as Tensors (checked
        against their version counters). In a backward that builds a graph
        they keep their histories, so what backward computes from them is
        differentiable again."""
        if self._in_jvp:  # forward mode: what save_for_forward kept
            return tuple(getattr(self, "saved_for_forward", ()))
        node = self._node() if self._node is not None else None
        return () if node is None else node._saved_tensors()

    @property
    def saved_variables(self):
        warnings.warn("'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning,
                      stacklevel=2)
        return self.saved_tensors


class _Output:
    """What backward needs to know about a tensor output: its shape, dtype
    and device (zeros for one that got no gradient)."""

    __slots__ = ("shape", "dtype", "backend")

    def __init__(self, tensor):
        self.shape, self.dtype, self.backend = tensor._data.shape, tensor.dtype, tensor._backend

    def zeros(self):
        data = self.backend.zeros(self.shape, self.dtype.numpy)
        return Tensor._wrap(data, self.dtype, self.backend)


class BackwardCFunction(Node):
    """The node ``apply`` records (PyTorch's name for the class of a
    Function's node). Each Function class has its own subclass, named
    ``<ClassName>Backward`` (``Function._backward_cls``). Attributes that the
    node itself lacks are read from its ``ctx``."""

    __slots__ = ("ctx", "outputs", "is_tensor_input", "diff_positions", "saved_outputs",
                 "proxies", "pending")
    _forward_cls = None
    op_name = "Function"
    returns_fresh = False  # the user's backward may return views, inputs, saved tensors

    def __init__(self, tensors, ctx, is_tensor_input):
        Node.__init__(self, tensors)
        self.ctx = ctx
        self.is_tensor_input = is_tensor_input
        self.outputs = ()
        self.diff_positions = ()
        self.saved_outputs = ()
        self.proxies = None  # weak references to the nodes of several differentiable outputs
        self.pending = None  # thread -> {output position: gradient}, from those nodes

    def __getattr__(self, name):
        # Only called for names the node lacks: PyTorch's node is the ctx.
        try:
            ctx = object.__getattribute__(self, "ctx")
        except AttributeError:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute "
                                 f"'{name}'") from None
        return getattr(ctx, name)

    # -- the nodes of the outputs
    def output_node(self, position):
        """The history of the output at ``position`` (None: it has none)."""
        if position not in self.diff_positions:
            return None
        if self.proxies is None:
            return self
        k = self.diff_positions.index(position)
        ref = self.proxies[k]
        node = ref() if ref is not None else None
        if node is None:  # its output died; a saved copy of it needs a history again
            node = self._forward_cls._output_cls(self, position, k, len(self.diff_positions))
            self.proxies[k] = weakref.ref(node)
        return node

    def _receive(self, position, grad):
        pending = self.pending.get(threading.get_ident())
        if pending is None:
            pending = self.pending[threading.get_ident()] = {}
        pending[position] = grad

    def _gathered(self, grad):
        """One gradient (or None) per forward output, from ``grad``: the one
        output's gradient, or, with several differentiable outputs, the sum of
        the flags their nodes sent (which of them ran in this backward)."""
        grads = [None] * len(self.outputs)
        if self.proxies is None:
            grads[self.diff_positions[0]] = grad
            return grads
        pending = self.pending.pop(threading.get_ident(), {})
        flags = grad._data if grad.__class__ is Tensor else grad
        for k, position in enumerate(self.diff_positions):
            if flags[k]:
                grads[position] = pending.get(position)
        return grads

    # -- the user's backward
    def backward(self, grad):
        return self._run(self._gathered(grad), graph=False)

    def backward_graph(self, grad):
        return self._run(self._gathered(grad), graph=True)

    def _run(self, grads, graph):
        ctx = self.ctx
        args = []
        for info, g in zip(self.outputs, grads):
            if info is None:  # not a tensor
                args.append(None)
            elif g is None:
                args.append(info.zeros() if ctx.materialize_grads else None)
            else:
                args.append(g if graph else Tensor._wrap(g, info.dtype, info.backend))
        user_backward = _user_backward(self._forward_cls)
        if graph:  # grad mode is on: what the user's backward computes is taped
            result = user_backward(ctx, *args)
        else:  # as PyTorch: a plain backward runs with grad mode off
            with grad_mode.no_grad():
                result = user_backward(ctx, *args)
        return self._checked(result, graph)

    def _checked(self, result, graph):
        """The user's gradients, checked as PyTorch checks them; raw arrays
        for a plain backward, Tensors for one that builds a graph."""
        if not isinstance(result, tuple):
            result = (result,)
        expected = len(self.is_tensor_input)
        if len(result) > expected and all(r is None for r in result[expected:]):
            result = result[:expected]  # extra Nones are allowed
        if len(result) != expected:
            raise RuntimeError(f"function {self.name()} returned an incorrect number of gradients "
                               f"(expected {expected}, got {len(result)})")
        grads = []
        for i, (g, is_tensor) in enumerate(zip(result, self.is_tensor_input)):
            if not is_tensor:
                if g is not None:
                    raise RuntimeError(
                        f"function {self.name()} returned a gradient different than None at "
                        f"position {i + 1}, but the corresponding forward input was not a Variable")
                continue
            if g is not None and not isinstance(g, Tensor):
                raise RuntimeError(f"expected Variable or None (got {_tp_name(g)})")
            grads.append(g)
        out = []
        for i, (g, edge, meta) in enumerate(zip(grads, self.next_edges, self.input_meta)):
            if g is None or edge is None:  # PyTorch checks only gradients that go somewhere
                out.append(None)
                continue
            g = self._valid(i, g, meta, graph)
            out.append(g if graph else g._data)  # the engine sums and casts it to the input's
        return out

    def _valid(self, i, g, meta, graph):
        shape = g._data.shape
        if shape != meta.shape and not _expandable(meta.shape, shape):
            raise RuntimeError(f"Function {self.name()} returned an invalid gradient at index "
                               f"{i} - got {list(shape)} but expected shape compatible with "
                               f"{list(meta.shape)}")
        if g._backend is not meta.backend:
            if g._data.ndim:
                raise RuntimeError(
                    f"Function {self.name()} returned an invalid gradient at index {i} - expected "
                    f"device {_device_name(meta.backend)} but got {_device_name(g._backend)}")
            with grad_mode.set_grad_enabled(graph):  # a number: moved, as PyTorch does
                g = copying.to_backend(g, meta.backend)
        return g

    def _saved_tensors(self):
        # Grad mode is on in a backward that builds a graph (off in a plain one,
        # and under once_differentiable): then the values keep their histories.
        graph = grad_mode.is_grad_enabled()
        values = []
        for saved, position in zip(self.saved, self.saved_outputs):
            if saved is None:
                values.append(None)
                continue
            node = None if position is None else self.output_node(position)  # an output's history
            values.append(SavedTensor.to_tensor(saved, node) if graph else _as_tensor(saved, node))
        return tuple(values)


def _as_tensor(saved, node):
    """A saved value as a Tensor, for a plain backward: the saved input itself
    while it lives and holds the value, else a tensor over the value."""
    data = saved.unpack()  # the version check, the second-backward error
    ref = saved.tensor_ref
    tensor = ref() if ref is not None else None
    if tensor is not None and tensor._data is data:
        return tensor
    history = saved.history if ref is not None or saved.history is not None else node
    return Tensor._from_op(data, history if isinstance(history, Node) else None,
                           dtypes.from_numpy_dtype(data.dtype), backend_of(data))


def _expandable(shape, desired):
    """PyTorch's is_expandable_to: ``shape`` broadcasts to ``desired``."""
    if len(shape) > len(desired):
        return False
    return all(s == d or s == 1 for s, d in zip(reversed(shape), reversed(desired)))


class OutputBackward(Node):
    """The node of one of several differentiable outputs of a Function: it
    keeps its output's gradient for the Function's node and sends that node a
    flag (a float64 vector, 1 at this output's place), which the engine sums
    over the outputs that got a gradient, so the Function's node runs once,
    after all of them, knowing which did. Named, and read, as the Function's
    node (``name()``, ``next_functions``, ``ctx``'s attributes)."""

    __slots__ = ("function", "position", "flag")
    returns_fresh = False

    def __init__(self, function, position, k, n):
        flag = np.zeros(n)
        flag[k] = 1.0
        meta = input_meta(Tensor._wrap(flag, dtypes.float64, cpu))
        fill_node(self, [function], [meta])
        self.saved = ()
        self.function, self.position, self.flag = function, position, flag

    def __getattr__(self, name):
        try:
            function = object.__getattribute__(self, "function")
        except AttributeError:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute "
                                 f"'{name}'") from None
        return getattr(function, name)

    def name(self):
        return self.function.name()

    @property
    def op_name(self):
        return self.function.op_name

    @property
    def next_functions(self):
        return self.function.next_functions

    def backward(self, grad):
        self.function._receive(self.position, grad)
        return (self.flag,)

    def backward_graph(self, grad):
        self.function._receive(self.position, grad)
        return (Tensor._wrap(self.flag, dtypes.float64, cpu),)


class _DirtyView(Node):
    """The Function's node as CopySlices sees it when the Function wrote into
    a view: CopySlices takes its first input to be that view, so the view's
    own input (or None: the view is not an input) comes first here and the
    Function's other inputs after it."""

    __slots__ = ("function", "k")
    returns_fresh = False

    def __init__(self, function, k):
        edges, metas = list(function.next_edges), list(function.input_meta)
        if k is None:
            edges, metas = [None] + edges, [None] + metas
        else:
            edges.insert(0, edges.pop(k))
            metas.insert(0, metas.pop(k))
        fill_node(self, edges, metas)
        self.saved = ()
        self.function, self.k = function, k

    @property
    def op_name(self):
        return self.function.op_name

    def _reordered(self, grads):
        grads = list(grads)
        if self.k is None:
            return [None] + grads
        grads.insert(0, grads.pop(self.k))
        return grads

    def backward(self, grad):
        return self._reordered(self.function.backward(grad))

    def backward_graph(self, grad):
        return self._reordered(self.function.backward_graph(grad))

    def release_saved(self):
        self.function.release_saved()


class DelayedError(Node):
    """The history ``once_differentiable`` gives the gradients its backward
    computes in a backward that builds a graph: differentiating them raises."""

    __slots__ = ("message",)
    op_name = "Error"

    def __init__(self, inputs, message):
        Node.__init__(self, inputs)
        self.message = message

    def name(self):
        return "Error"

    def backward(self, grad):
        raise RuntimeError(self.message)


def _user_backward(cls):
    backward, vjp = cls.backward, cls.vjp
    if backward is not Function.backward and vjp is not Function.vjp:
        raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is not "
                           "allowed. You should only implement one of them.")
    return vjp if vjp is not Function.vjp else backward


class Function:
    r"""Base class for custom differentiable operations (``torch.autograd.Function``).

    Subclass it with two static methods and call ``apply`` (never an
    instance)::

        class Exp(nbgrad.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x.exp()
                ctx.save_for_backward(y)
                return y

            @staticmethod
            def backward(ctx, grad_output):
                y, = ctx.saved_tensors
                return grad_output * y

        y = Exp.apply(x)            # y.grad_fn.name() == "ExpBackward"

    ``forward(ctx, *args, **kwargs)`` runs with grad mode off, takes any
    arguments (tensors, numbers, anything) and returns a tensor, or a tuple
    of tensors and other values. Or write ``forward(*args)`` without ``ctx``
    and a ``setup_context(ctx, inputs, output)`` that fills ``ctx`` (keyword
    arguments are then bound to positions, defaults included).

    ``backward(ctx, *grad_outputs)`` gets one gradient per output of forward
    (None for outputs that are not tensors) and returns one per positional
    argument of forward: a Tensor of the argument's shape (or one that
    broadcasts to it: it is summed down) for a tensor, None for anything
    else or when no gradient is needed (``ctx.needs_input_grad[i]`` says
    which are). A gradient of another dtype is cast to the input's. In a
    plain backward it runs with grad mode off; in one that builds a graph
    (``create_graph=True``, ``gradgradcheck``) it runs with grad mode on on
    Tensors with histories (``grad_outputs`` and ``ctx.saved_tensors``), so
    written with nbgrad ops it is differentiable again; decorate it with
    :func:`once_differentiable` when it is not (hand-written kernels).

    ``ctx``: :class:`FunctionCtx` (``save_for_backward``, ``saved_tensors``,
    ``needs_input_grad``, ``mark_dirty``, ``mark_non_differentiable``,
    ``set_materialize_grads``, and any attribute you set).

    **Your own kernels.** ``forward`` and ``backward`` may run any Numba
    code. Read and write the memory of a tensor, without a copy, through

    - CPU: ``t.detach().numpy()`` (a NumPy array over the tensor's memory,
      for ``@numba.njit`` functions; ``t._data`` is that same array);
    - CUDA: ``numba.cuda.as_cuda_array(t.detach())`` (a Numba device array
      over the tensor, any strides, from ``t.__cuda_array_interface__``; a
      ``@cuda.jit`` kernel also takes ``t.detach()`` directly). Numba's CUDA
      simulator (``NUMBA_ENABLE_CUDASIM=1``) reads neither: there, and on a
      GPU alike, ``d = t._data`` is nbgrad's DeviceArray and
      ``d.buffer[d.offset:d.offset + d.size]`` is a Numba device array over
      a contiguous tensor's elements (``t.contiguous()`` first if needed).

    ``detach()`` because ``__cuda_array_interface__`` and ``numpy()`` refuse
    a tensor that requires grad while grad mode is on. Make outputs with
    ``nbgrad.empty(shape, device=x.device)`` and write them in place; an
    input written in place must be passed to ``ctx.mark_dirty`` and returned.
    ``kernels/fused_function.py`` is a worked example (a fused bias + GELU
    with hand-written kernels for both devices).

    Where nbgrad differs from PyTorch: with several differentiable outputs
    each output has a node of its own (same name, same ``next_functions``,
    same ``ctx``), so ``y1.grad_fn is y2.grad_fn`` is False and a
    consumer's ``next_functions`` shows ``(that node, 0)``; an output that
    is an input returned as-is, or a view, is an alias of it (same memory
    and version counter, ``_base`` None) rather than a view, and in-place
    writes into it are refused as PyTorch refuses them; a Function that
    writes into a view passed as any argument gets correct gradients (PyTorch
    gets them only when the view is its first argument).
    """

    _backward_cls = None
    _output_cls = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _make_node_classes(cls)

    def __init__(self, *args, **kwargs):
        warnings.warn(f"{self.__class__} should not be instantiated. Methods on autograd "
                      "functions are all static, so you should invoke them on the class itself. "
                      "Instantiating an autograd function will raise an error in a future version "
                      "of PyTorch.",
                      DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError(_LEGACY)

    @staticmethod
    def forward(*args, **kwargs):
        """forward(ctx, *args, **kwargs) -> output: see the class's docstring."""
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        """setup_context(ctx, inputs, output): fill ``ctx`` after a ``forward``
        that takes no ``ctx`` (``inputs``: the positional arguments, defaults
        included; ``output``: what forward returned)."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        """backward(ctx, *grad_outputs) -> one gradient per argument of forward."""
        raise NotImplementedError(_NO_BACKWARD)

    @staticmethod
    def jvp(ctx, *grad_inputs):
        """jvp(ctx, *grad_inputs) -> one tangent per output of forward

        Forward-mode AD (``nbgrad.autograd.forward_ad``): the outputs'
        tangents from the inputs' (None for an input without one), with
        ``ctx`` as forward left it (``ctx.saved_tensors`` gives what
        ``ctx.save_for_forward`` kept)."""
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function "
                                  "to use it with forward mode AD.")

    vjp = backward  # either may be implemented, as in PyTorch

    @classmethod
    def apply(cls, *args, **kwargs):
        """apply(*args, **kwargs)

        Run ``forward`` on ``args`` and record the Function's node when grad
        mode is on and a tensor argument requires grad. Returns what forward
        returned: outputs that get a gradient have the node as history,
        inputs returned as-is come back as aliases, marked dirty inputs as
        themselves (their history rebased)."""
        setup = cls.setup_context is not Function.setup_context
        if setup:
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, {}
        is_tensor = tuple(isinstance(a, Tensor) for a in args)
        needs = tuple(t and a.requires_grad for t, a in zip(is_tensor, args))
        ctx = FunctionCtx()
        ctx.needs_input_grad = needs
        node = None
        if any(needs) and grad_mode.is_grad_enabled():
            # Made before forward runs: its edges are the inputs' histories before any write.
            node = cls._backward_cls([a for t, a in zip(is_tensor, args) if t], ctx, is_tensor)
        tangents = _input_tangents(args) if dual.LEVEL is not None else None
        with grad_mode.no_grad(), dual._Suspended():
            if setup:
                output = cls.forward(*args)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args, **kwargs)
        result = _Outputs(cls, ctx, node, args, output, setup).wrap()
        if tangents is not None:
            _forward_tangents(cls, ctx, tangents, result)
        return result


def _input_tangents(args):
    """The tangents of the arguments (None for each without one), or None if none has one."""
    tangents = [a._fw_grad if isinstance(a, Tensor) else None for a in args]
    return tangents if any(t is not None for t in tangents) else None


def _forward_tangents(cls, ctx, tangents, result):
    """Forward mode: the user's ``jvp`` gives the outputs' tangents."""
    ctx._in_jvp = True
    try:
        with dual._Suspended():
            out = cls.jvp(ctx, *tangents)
    finally:
        ctx._in_jvp = False
    outputs = result if isinstance(result, tuple) else (result,)
    out = out if isinstance(out, tuple) else (out,)
    for o, t in zip(outputs, out):
        if isinstance(o, Tensor) and isinstance(t, Tensor) and o.dtype.is_floating_point:
            dual.set_tangent(o, t)


def _make_node_classes(cls):
    name = cls.__name__ + "Backward"
    fields = {"__slots__": (), "_forward_cls": cls, "op_name": cls.__name__,
              "__module__": __name__, "__qualname__": name}
    cls._backward_cls = type(name, (BackwardCFunction,), fields)
    cls._output_cls = type(name, (OutputBackward,), {"__slots__": (), "__module__": __name__,
                                                      "__qualname__": name})


_make_node_classes(Function)


class _Outputs:
    """What ``apply`` does with forward's result: check it as PyTorch does,
    then (nothing having changed before the checks pass) bump the versions of
    dirty inputs, give outputs their histories and save the tensors."""

    def __init__(self, cls, ctx, node, args, output, setup):
        self.cls, self.ctx, self.node, self.setup = cls, ctx, node, setup
        self.inputs = [a for a in args if isinstance(a, Tensor)]
        self.is_tuple = isinstance(output, tuple)
        self.raw = output if self.is_tuple else (output,)

    def wrap(self):
        ctx, node, raw = self.ctx, self.node, self.raw
        non_diff = _marked(ctx.non_differentiable,
                           "mark_non_differentiable only accepts variable arguments, but got ")
        dirty = _marked(ctx.dirty_tensors, "mark_dirty can only accept variables, but argument ")
        kinds = [None if not isinstance(o, Tensor) else (
            _is_in(o, self.inputs), _is_in(o, dirty),
            node is not None and not _is_in(o, non_diff) and o.dtype.is_floating_point)
            for o in raw]
        self._check(kinds, dirty)
        op = f"{self.cls.__name__}.apply"
        for t in dirty:
            t._version_counter.bump(op, t._data)
        out = list(raw)
        if node is not None:
            node.outputs = tuple(None if k is None else _Output(o) for o, k in zip(raw, kinds))
            node.diff_positions = tuple(i for i, k in enumerate(kinds) if k is not None and k[2])
            if len(node.diff_positions) > 1:
                node.proxies = [None] * len(node.diff_positions)
                node.pending = {}
        given = set()  # outputs made by forward that got a history here
        for i, (o, kind) in enumerate(zip(raw, kinds)):
            if kind is not None:
                out[i] = self._output(i, o, kind, given)
        if node is not None:
            self._save(out)
            ctx._node = weakref.ref(node)
        return tuple(out) if self.is_tuple else out[0]

    def _check(self, kinds, dirty):
        for o, kind in zip(self.raw, kinds):
            if kind is None:
                continue
            is_input, modified, differentiable = kind
            if modified and differentiable:
                if o._base is None and o._grad_fn is None and o._requires_grad:
                    raise RuntimeError("a leaf Variable that requires grad has been used in an "
                                       "in-place operation.")
                if o._base is not None and len(self.raw) > 1:
                    raise RuntimeError(_DIRTY_VIEW_OF_SEVERAL)
                mutation.check_inplace(o, True, internal=False)
            elif is_input and differentiable and self.setup and _is_in(o, self.ctx.to_save):
                raise RuntimeError(_SAVED_AS_IS)
        if not all(_is_in(t, self.raw) for t in dirty):
            raise RuntimeError(_DIRTY_NOT_RETURNED)
        if self.node is not None:
            for k, t in enumerate(self.ctx.to_save):
                if t is not None and not isinstance(t, Tensor):
                    raise TypeError(f"save_for_backward can only save variables, but argument {k} "
                                    f"is of type {_tp_name(t)}")

    def _output(self, i, o, kind, given):
        is_input, modified, differentiable = kind
        if not differentiable:
            if not o.requires_grad:
                # An input returned as-is is a new tensor over it (as PyTorch's view of it).
                return _alias(o, None, (i, None)) if is_input and not modified else o
            if is_input:
                return o.detach()
            if o._base is None:
                o.detach_()
            return o
        node = self.node.output_node(i)  # kept alive by the output it becomes the history of
        if modified:
            if not is_input:
                warnings.warn(_DIRTY_NOT_INPUT, UserWarning, stacklevel=4)
            if o._base is not None:  # CopySlices takes the written view as the node's first input
                k = next((j for j, t in enumerate(self.inputs) if t is o), None)
                if k != 0:
                    node = _DirtyView(node, k)
            mutation.rebase_history(o, node)
            return o
        fresh = (o._grad_fn is None and o._base is None and not o._requires_grad
                 and not is_input) or id(o) in given
        if fresh:
            given.add(id(o))
            o._grad_fn = node
            return o
        return _alias(o, node, (i, self.cls.__name__))

    def _save(self, outputs):
        saved, positions = [], []
        for t in self.ctx.to_save:
            position = next((i for i, o in enumerate(outputs) if o is t), None) if t is not None \
                else None
            if t is None:
                saved.append(None)
            elif position is None:
                saved.append(SavedTensor(t))
            else:
                saved.append(SavedTensor(t, output_of=self.cls.__name__))
            positions.append(position)
        self.node.saved = tuple(saved)
        self.node.saved_outputs = tuple(positions)


def _marked(values, message):
    for v in values:
        if not isinstance(v, Tensor):
            raise RuntimeError(message)
    return values


def _alias(o, node, made_by):
    """A new tensor over ``o``'s memory and version counter with history
    ``node``; in-place writes into it are refused (``made_by``: its output
    number and the Function's name, None when it has no history)."""
    t = Tensor._from_op(o._data, node, o.dtype, o._backend)
    t._vc = o._version_counter
    t._function_view = made_by
    return t


def once_differentiable(fn):
    """Decorate a Function's ``backward`` that cannot be differentiated (it
    runs hand-written kernels, say): it runs with grad mode off, and in a
    backward that builds a graph the gradients it returns, if the incoming
    ones require grad, get a history that raises PyTorch's error when
    differentiated: ``trying to differentiate twice a function that was
    marked with @once_differentiable``."""
    @functools.wraps(fn)
    def wrapper(ctx, *args, **kwargs):
        with grad_mode.no_grad():
            outputs = fn(ctx, *args, **kwargs)
        if not grad_mode.is_grad_enabled():
            return outputs
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        wrapped = tuple(_delayed_error(v) for v in ((outputs,) if single else outputs))
        return wrapped[0] if len(wrapped) == 1 else wrapped

    return wrapper


def _delayed_error(value):
    """``value`` (same memory and version counter) with a history that raises."""
    if not isinstance(value, Tensor):
        return value
    fake = value.detach()
    fake.requires_grad = True  # one input requiring grad, so the error node is recorded
    t = Tensor._from_op(value._data, DelayedError([fake], _ONCE), value.dtype, value._backend)
    t._vc = value._version_counter
    return t
