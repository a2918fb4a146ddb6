"""The backward engine: runs the graph in dependency order.

Broadcasting and dtype promotion are undone here, once, for every node: a node
returns gradients in the shape of its output and the engine reduces each to the
shape (and casts to the dtype) of the input it belongs to.
"""
import heapq
import itertools

from ..backends import backend_of
from ..dtypes import from_numpy_dtype
from .graph import AccumulateGrad


def _count_dependencies(roots):
    deps = {}
    stack = list(dict.fromkeys(roots))
    seen = set(stack)
    while stack:
        for nxt in stack.pop().next_edges:
            if nxt is None:
                continue
            if nxt in seen:
                deps[nxt] = deps.get(nxt, 0) + 1  # a root reached from another root has none yet
            else:
                deps[nxt] = 1
                seen.add(nxt)
                stack.append(nxt)
    return deps


def _nodes_leading_to(targets, roots):
    """Nodes from which some target can be reached (targets included)."""
    post_order = []  # every node after all the nodes it leads to
    seen = set(roots)
    for root in roots:
        stack = [(root, iter(root.next_edges))]
        while stack:
            node, edges = stack[-1]
            for nxt in edges:
                if nxt is not None and nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, iter(nxt.next_edges)))
                    break
            else:
                stack.pop()
                post_order.append(node)
    useful = set()
    for node in post_order:
        if node in targets or any(n in useful for n in node.next_edges if n is not None):
            useful.add(node)
    return useful


def _shape_gradient(grad, meta):
    """Sum away broadcast dimensions and cast back to the input's dtype."""
    backend = meta.backend
    if grad.shape != meta.shape:
        grad = backend.sum_to_shape(grad, meta.shape)
    if grad.dtype != meta.np_dtype:
        grad = backend.cast(grad, meta.np_dtype)
    return grad


_Tensor = None


def _tensor_class():
    # Imported on first use: nbgrad.tensor imports this package.
    global _Tensor
    if _Tensor is None:
        from ..tensor import Tensor
        _Tensor = Tensor
    return _Tensor


def _check_hook_result(hook, grad, result):
    """PyTorch's checks on what a tensor hook returns."""
    if not isinstance(result, _tensor_class()):
        raise TypeError(f"expected Variable, but hook returned '{type(result).__name__}'")
    name = getattr(hook, "__name__", type(hook).__name__)
    backend = backend_of(grad)
    if result._data.dtype != grad.dtype or result._backend is not backend:
        was, got = (("cuda." if b.name == "cuda" else "") + from_numpy_dtype(a.dtype).tensor_type
                    for a, b in ((grad, backend), (result._data, result._backend)))
        raise RuntimeError(f"hook '{name}' has changed the type of value "
                           f"(was nbgrad.{was} got nbgrad.{got})")
    if result._data.shape != grad.shape:
        raise RuntimeError(f"hook '{name}' has changed the size of value")


def _hooks_of(node):
    return node.variable._hooks if node.__class__ is AccumulateGrad else node.pre_hooks


def _run_pre_hooks(node, grad):
    hooks = _hooks_of(node)
    if hooks:
        wrap = _tensor_class()._wrap
        for hook in list(hooks):
            result = hook(wrap(grad, backend=backend_of(grad)))  # hooks see Tensors on grad's device
            if result is not None:
                _check_hook_result(hook, grad, result)
                grad = result._data
    retained = node.retained and node.retained()
    if retained is not None:
        retained._set_retained_grad(grad)
    return grad


def run_backward(roots, root_grads, retain_graph, capture=None):
    """Propagate ``root_grads`` from ``roots``. With ``capture`` (a dict keyed by
    node), gradients reaching those nodes are stored there instead of being
    accumulated, and only the part of the graph that leads to them runs."""
    deps = _count_dependencies(roots)
    useful = None
    if capture is not None:
        useful = _nodes_leading_to(set(capture), roots)

    buffers = {}
    for node, grad in zip(roots, root_grads):
        buffers[node] = buffers[node] + grad if node in buffers else grad
    # Nodes whose buffer is a new array that nothing outside the engine holds
    # (see Node.returns_fresh): more gradients are added into it in place, and
    # a leaf may take it as its .grad without a copy.
    fresh = set()
    # Ready nodes run latest-made first (PyTorch's order: it decides, for
    # instance, which error a graph with several problems reports).
    order = itertools.count()
    ready = [(-node.sequence_nr, next(order), node) for node in dict.fromkeys(roots)
             if deps.get(node, 0) == 0]
    heapq.heapify(ready)
    heappop, heappush = heapq.heappop, heapq.heappush
    released = []
    capturing = capture is not None
    try:
        while ready:
            node = heappop(ready)[2]
            grad = buffers.pop(node, None)
            owned = False
            if node in fresh:
                fresh.discard(node)
                owned = True
            accumulator = node.__class__ is AccumulateGrad
            if grad is None or (capturing and node not in useful):
                grads = ()
            else:
                if node.retained is not None or (
                        node.variable._hooks if accumulator else node.pre_hooks):
                    if node.variable._hooks if accumulator else node.pre_hooks:
                        owned = False  # a hook may keep the Tensor it was given
                    grad = _run_pre_hooks(node, grad)
                if capturing and node in capture:
                    capture[node] = grad
                if capturing and (accumulator or not any(
                        n in useful for n in node.next_edges if n is not None)):
                    grads = ()  # autograd.grad: nothing further to compute, never accumulate
                elif accumulator:
                    node.accumulate(grad, owned)
                    grads = ()
                else:
                    grads = node.backward(grad)
                    if not retain_graph:
                        released.append(node)
            if not grads:
                for nxt in node.next_edges:
                    if nxt is not None:
                        left = deps[nxt] - 1
                        deps[nxt] = left
                        if not left:
                            heappush(ready, (-nxt.sequence_nr, next(order), nxt))
                continue
            returns_fresh = node.returns_fresh
            metas = node.input_meta
            i = -1
            for nxt in node.next_edges:
                i += 1
                if nxt is None:
                    continue
                g = grads[i]
                if g is not None:
                    meta = metas[i]
                    is_fresh = returns_fresh and g is not grad
                    if g.shape != meta.shape:
                        summed = meta.backend.sum_to_shape(g, meta.shape)
                        is_fresh = is_fresh or summed.size < g.size  # a reduction: new memory
                        g = summed
                    if g.dtype is not meta.np_dtype and g.dtype != meta.np_dtype:
                        g = meta.backend.cast(g, meta.np_dtype)
                        is_fresh = True
                    previous = buffers.get(nxt)
                    if previous is None:
                        buffers[nxt] = g
                        if is_fresh:
                            fresh.add(nxt)
                    elif nxt in fresh:
                        meta.backend.add_into(previous, g)
                    else:
                        buffers[nxt] = meta.backend.add(previous, g)
                        fresh.add(nxt)
                left = deps[nxt] - 1
                deps[nxt] = left
                if not left:
                    heappush(ready, (-nxt.sequence_nr, next(order), nxt))
    finally:
        # Free saved tensors only of nodes that ran, as PyTorch does.
        for node in released:
            node.release_saved()
