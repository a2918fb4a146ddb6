"""The tape: graph nodes, saved tensors and gradient accumulators.

Gradients flowing through the graph are raw backend arrays, not Tensors, so a
backward step costs no Tensor bookkeeping. Each node has one output and, per
input, an edge (the input's node, or None when it needs no gradient) and the
input's metadata, which the engine uses to undo broadcasting and casting.
"""
import weakref

_SECOND_BACKWARD = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward.")


def describe(shape, dtype):
    """PyTorch's way of naming a tensor in errors: ``[nbgrad.FloatTensor [2, 3]]``."""
    return f"[nbgrad.{dtype.tensor_type} [{', '.join(map(str, shape))}]]"


class InputMeta:
    """What the engine needs to know about an input to shape its gradient."""

    __slots__ = ("shape", "dtype", "backend")

    def __init__(self, tensor):
        self.shape = tensor._data.shape
        self.dtype = tensor.dtype
        self.backend = tensor._backend


class SavedTensor:
    """A tensor value saved for backward, checked against its version counter."""

    __slots__ = ("data", "counter", "version", "tensor_ref", "op_name", "shape", "dtype")

    def __init__(self, tensor, output_of=None):
        self.data = tensor._data
        self.counter = tensor._version_counter
        self.version = self.counter.value
        self.shape = tensor._data.shape
        self.dtype = tensor.dtype
        # A saved output must not hold its own node (a cycle); remember its name.
        self.tensor_ref = weakref.ref(tensor)
        self.op_name = output_of

    def unpack(self):
        if self.data is None:
            raise RuntimeError(_SECOND_BACKWARD)
        if self.counter.value != self.version:
            raise RuntimeError(self._stale_message())
        return self.data

    def _stale_message(self):
        tensor = self.tensor_ref()
        producer = self.op_name
        if tensor is not None and tensor._grad_fn is not None:
            producer = tensor._grad_fn.op_name
        which = f", which is output 0 of {producer}," if producer else ""
        message = (
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: {describe(self.shape, self.dtype)}{which} is at version "
            f"{self.counter.value}; expected version {self.version} instead.")
        write = self.counter.write_that_made(self.version + 1)
        if write is not None:
            op_name, location = write
            message += f" It was modified in place by {op_name}() at {location}."
        return message

    def release(self):
        self.data = None


class Node:
    """A backward function. Subclasses set ``op_name`` and implement ``backward``."""

    __slots__ = ("next_edges", "input_meta", "saved", "pre_hooks", "retained", "__weakref__")
    op_name = "Node"

    def __init__(self, inputs):
        edges = []
        metas = []
        for t in inputs:
            if getattr(t, "requires_grad", False):
                edges.append(t._gradient_edge())
                metas.append(InputMeta(t))
            else:
                edges.append(None)
                metas.append(None)
        self.next_edges = edges
        self.input_meta = metas
        self.saved = ()
        self.pre_hooks = None
        self.retained = None

    def save(self, *tensors, output_of=None):
        """Save tensors (None allowed) for backward; returns nothing, read with ``saved_values``."""
        self.saved = tuple(None if t is None else SavedTensor(t, output_of) for t in tensors)

    def saved_values(self):
        return [None if s is None else s.unpack() for s in self.saved]

    def needs_grad(self, i):
        return self.next_edges[i] is not None

    def backward(self, grad):
        """Return one gradient (raw array or None) per input."""
        raise NotImplementedError

    def after_write(self, output):
        """Called once the output exists (after the write, for in-place ops)."""

    def release_saved(self):
        for s in self.saved:
            if s is not None:
                s.release()

    def name(self):
        return self.op_name + "Backward"

    @property
    def next_functions(self):
        return tuple((edge, 0) for edge in self.next_edges)

    def register_prehook(self, hook):
        if self.pre_hooks is None:
            self.pre_hooks = []
        self.pre_hooks.append(hook)

    def __repr__(self):
        return f"<{self.name()} object at {id(self):#x}>"


class AccumulateGrad(Node):
    """The sink for a leaf: accumulates into ``leaf.grad`` after the leaf's hooks."""

    __slots__ = ("variable",)
    op_name = "AccumulateGrad"

    def __init__(self, variable):
        self.next_edges = ()
        self.input_meta = ()
        self.saved = ()
        self.pre_hooks = None
        self.retained = None
        self.variable = variable

    def name(self):
        return "AccumulateGrad"

    def backward(self, grad):
        self.variable._accumulate_grad(grad)
        return ()
