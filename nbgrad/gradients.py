"""Gradients of tensors: ``backward`` (accumulated into leaves' ``.grad``)
and ``grad`` (returned), with PyTorch's checks on their arguments; the tape's
engine does the work. ``nbgrad.autograd`` exports them.

With ``create_graph=True`` the backward builds a graph of its own: gradients
move as Tensors (:class:`GraphMoves`), every node's formula runs as taped ops
(``Node.backward_graph``), and the gradients it returns can be
differentiated again, to any order."""
from .backends import layout
from .tape import grad_mode
from .tape.engine import RawMoves, run_backward
from .tape.graph import grad_lock, run_post_accumulate_hooks
from .tensor import Tensor


class GraphMoves:
    """How gradients move through a backward that builds a graph: as Tensors,
    summed and reduced by taped ops."""

    @staticmethod
    def backward(node, grad, retain_graph):
        grads = node.backward_graph(grad)
        if not retain_graph:
            node.release_saved()
        return grads

    @staticmethod
    def deliver(buffers, fresh, nxt, g, meta, is_fresh):
        """``g`` reduced to the shape and cast to the dtype of the input
        ``meta`` describes (the engine's rule, as taped ops), added to ``nxt``'s."""
        if g._data.shape != meta.shape:
            axes = layout.broadcast_axes(g._data.shape, meta.shape)
            g = (g.sum(axes, keepdim=True) if axes else g).reshape(meta.shape)
        if g.dtype is not meta.dtype:
            g = g.to(meta.dtype)
        previous = buffers.get(nxt)
        buffers[nxt] = g if previous is None else previous + g

    @staticmethod
    def add(a, b):
        return a + b

    accumulate = staticmethod(RawMoves.accumulate)  # Tensor._accumulate_grad takes Tensors too
    retain = staticmethod(RawMoves.retain)


GRAPH = GraphMoves()


def _as_tuple(x):
    if x is None:
        return None
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _root_gradients(outputs, grad_outputs, graph=False):
    """Check the outputs and build the gradients that start backward, in
    PyTorch's order: each given pair first (extra gradients are ignored), then
    the count, then whether every output requires grad. Raw arrays, or with
    ``graph`` Tensors (a given gradient keeps its history)."""
    grad_outputs = _as_tuple(grad_outputs)
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    grads = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if g is None:
            if not out.requires_grad:
                grads.append(None)
                continue
            if out.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            data = out._backend.full(out._data.shape, 1, out.dtype.numpy)
            if graph:
                data = Tensor._wrap(data, out.dtype, out._backend)
        elif isinstance(g, Tensor):
            if g._data.shape != out._data.shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                                   f"{g.shape!r} and output[{i}] has a shape of {out.shape!r}.")
            if g._backend is not out._backend:
                raise RuntimeError(f"invalid gradient at index {i} - expected device {out.device} "
                                   f"but got {g.device}")
            if graph:
                data = g if g.dtype is out.dtype else g.to(out.dtype)
            else:
                data = g._data
                if data.dtype != out.dtype.numpy:  # the engine works in each tensor's own dtype
                    data = out._backend.cast(data, out.dtype.numpy)
        else:
            raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
        grads.append(data)
    if len(grads) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")
    roots = []
    for i, out in enumerate(outputs):
        # Tensor._gradient_edge, inlined for an op's result (neither leaf nor view)
        edge = out._grad_fn if out._base is None else None
        if edge is None:
            edge = out._gradient_edge() if out.requires_grad else None
            if edge is None:
                raise RuntimeError(f"element {i} of tensors does not require grad and does not "
                                   "have a grad_fn")
        roots.append(edge)
    return roots, grads


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None)

    Accumulate the gradients of ``tensors`` into the ``.grad`` of the graph's
    leaves (only of ``inputs`` when given). ``retain_graph`` (default:
    ``create_graph``) keeps the saved values for another backward;
    ``create_graph`` records the backward itself, so the gradients can be
    differentiated again."""
    if retain_graph is None:
        retain_graph = create_graph
    if create_graph:
        with grad_mode.enable_grad():
            return _backward(tensors, grad_tensors, bool(retain_graph), inputs, GRAPH)
    return _backward(tensors, grad_tensors, bool(retain_graph), inputs, None)


def _backward(tensors, grad_tensors, retain_graph, inputs, moves):
    tensors = _as_tuple(tensors)
    roots, grads = _root_gradients(tensors, grad_tensors, moves is not None)
    if inputs is None:
        run_backward(roots, grads, retain_graph, moves=moves)
        return
    inputs = _as_tuple(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    for t in inputs:
        if not isinstance(t, Tensor):
            raise RuntimeError(f"all inputs have to be Tensors or GradientEdges, but got "
                               f"{type(t).__name__}")
        if not t.requires_grad:  # PyTorch's wording: backward(inputs=) retains their grads
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    captured = _run_captured(roots, grads, retain_graph, inputs, moves)
    for t, g in zip(inputs, captured):
        if g is not None:
            with grad_lock(t):
                t._accumulate_grad(g)
            if t._post_accumulate_grad_hooks:
                run_post_accumulate_hooks(t)


def tensor_backward(tensor, gradient, retain_graph, create_graph, inputs):
    """``tensor.backward(...)``: its most common calls (an op's result, with no
    gradient or one of its shape, dtype and device) go straight to the engine,
    the rest through ``backward``'s checks."""
    root = tensor._grad_fn
    if root is not None and inputs is None and not create_graph and tensor._base is None:
        data = tensor._data
        if gradient is None:
            if data.size == 1:
                run_backward([root], [tensor._backend.full(data.shape, 1, tensor.dtype.numpy)],
                             bool(retain_graph))
                return
        elif (gradient.__class__ is tensor.__class__ and gradient._backend is tensor._backend
              and gradient.dtype is tensor.dtype and gradient._data.shape == data.shape):
            run_backward([root], [gradient._data], bool(retain_graph))
            return
    backward((tensor,), gradient, retain_graph, create_graph, inputs)


def _run_captured(roots, grads, retain_graph, inputs, moves=None):
    for t in inputs:
        if not isinstance(t, Tensor) or not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    edges = [t._gradient_edge() for t in inputs]  # None: a view made in no_grad mode
    capture = dict.fromkeys(e for e in edges if e is not None)
    run_backward(roots, grads, retain_graph, capture=capture, moves=moves)
    return [None if e is None else capture[e] for e in edges]


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=False):
    """grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=False)

    The gradients of ``outputs`` with respect to ``inputs``, returned rather
    than accumulated into ``.grad``. With ``create_graph`` they have
    histories (and can be differentiated again); ``retain_graph`` defaults
    to ``create_graph``."""
    if retain_graph is None:
        retain_graph = create_graph
    if create_graph:
        with grad_mode.enable_grad():
            return _grad(outputs, inputs, grad_outputs, bool(retain_graph), allow_unused, GRAPH)
    return _grad(outputs, inputs, grad_outputs, bool(retain_graph), allow_unused, None)


def _grad(outputs, inputs, grad_outputs, retain_graph, allow_unused, moves):
    outputs, inputs = _as_tuple(outputs), _as_tuple(inputs)
    roots, grads = _root_gradients(outputs, grad_outputs, moves is not None)
    captured = _run_captured(roots, grads, retain_graph, inputs, moves)
    result = []
    for i, (t, g) in enumerate(zip(inputs, captured)):
        if g is None:
            if not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have "
                                   "been used in the graph. Set allow_unused=True if this is the "
                                   "desired behavior.")
            result.append(None)
        elif moves is not None:  # a Tensor with its history
            result.append(g)
        else:
            result.append(Tensor._wrap(t._backend.copy(g), t.dtype, t._backend))
    return tuple(result)
