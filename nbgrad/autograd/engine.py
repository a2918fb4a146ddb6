"""The backward engine: runs the graph in dependency order.

Broadcasting and dtype promotion are undone here, once, for every node: a node
returns gradients in the shape of its output and the engine reduces each to the
shape (and casts to the dtype) of the input it belongs to.
"""
import heapq
import itertools

from ..dtypes import from_numpy_dtype
from .graph import AccumulateGrad


def _count_dependencies(roots):
    deps = {}
    seen = set()
    stack = list(roots)
    for node in stack:
        seen.add(node)
    while stack:
        node = stack.pop()
        for nxt in node.next_edges:
            if nxt is None:
                continue
            deps[nxt] = deps.get(nxt, 0) + 1
            if nxt not in seen:
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
    if grad.dtype != meta.dtype.numpy:
        grad = backend.cast(grad, meta.dtype.numpy)
    return grad


def _check_hook_result(hook, grad, result):
    """PyTorch's checks on what a tensor hook returns."""
    from ..tensor import Tensor

    if not isinstance(result, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(result).__name__}'")
    name = getattr(hook, "__name__", type(hook).__name__)
    if result._data.dtype != grad.dtype:
        was, got = (from_numpy_dtype(a.dtype).tensor_type for a in (grad, result._data))
        raise RuntimeError(f"hook '{name}' has changed the type of value "
                           f"(was nbgrad.{was} got nbgrad.{got})")
    if result._data.shape != grad.shape:
        raise RuntimeError(f"hook '{name}' has changed the size of value")


def _run_pre_hooks(node, grad):
    from ..tensor import Tensor  # hooks see Tensors; the engine itself does not need them

    hooks = node.variable._hooks if isinstance(node, AccumulateGrad) else node.pre_hooks
    if hooks:
        for hook in list(hooks):
            result = hook(Tensor._wrap(grad))
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
    # Ready nodes run latest-made first (PyTorch's order: it decides, for
    # instance, which error a graph with several problems reports).
    order = itertools.count()
    ready = [(-node.sequence_nr, next(order), node) for node in dict.fromkeys(roots)
             if deps.get(node, 0) == 0]
    heapq.heapify(ready)
    released = []
    try:
        while ready:
            node = heapq.heappop(ready)[2]
            grad = buffers.pop(node, None)
            if useful is not None and node not in useful:
                grads = ()
            elif grad is None:
                grads = ()
            else:
                grad = _run_pre_hooks(node, grad)
                if capture is not None and node in capture:
                    capture[node] = grad
                if capture is not None and (isinstance(node, AccumulateGrad) or not any(
                        n in useful for n in node.next_edges if n is not None)):
                    grads = ()  # autograd.grad: nothing further to compute, never accumulate
                else:
                    grads = node.backward(grad)
                    if not retain_graph:
                        released.append(node)
            for i, nxt in enumerate(node.next_edges):
                if nxt is None:
                    continue
                g = grads[i] if grads else None
                if g is not None:
                    g = _shape_gradient(g, node.input_meta[i])
                    previous = buffers.get(nxt)
                    buffers[nxt] = g if previous is None else node.input_meta[i].backend.add(previous, g)
                deps[nxt] -= 1
                if deps[nxt] == 0:
                    heapq.heappush(ready, (-nxt.sequence_nr, next(order), nxt))
    finally:
        # Free saved tensors only of nodes that ran, as PyTorch does.
        for node in released:
            node.release_saved()
