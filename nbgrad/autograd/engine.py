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
    """How many edges lead into each node reachable from ``roots`` (roots included, from 0)."""
    deps = dict.fromkeys(roots, 0)
    stack = list(deps)
    get = deps.get
    while stack:
        for nxt in stack.pop().next_edges:
            if nxt is not None:
                count = get(nxt)
                if count is None:  # first reached: walk on from it (a leaf's sink leads nowhere)
                    deps[nxt] = 1
                    if nxt.next_edges:
                        stack.append(nxt)
                else:
                    deps[nxt] = count + 1
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
    # Ready nodes run latest-made first (PyTorch's order: it decides, for
    # instance, which error a graph with several problems reports).
    order = itertools.count()
    # A node that became ready while no other was waits in ``pending``, out of
    # the heap (a chain's usual case); it joins the heap when a second one is ready.
    if len(roots) == 1 and capture is None:  # one root: nothing leads into it
        buffers = {roots[0]: root_grads[0]}
        ready = []
        pending = roots[0]
    else:
        buffers = {}
        for node, grad in zip(roots, root_grads):
            buffers[node] = buffers[node] + grad if node in buffers else grad
        ready = [(-node.sequence_nr, next(order), node) for node in dict.fromkeys(roots)
                 if deps[node] == 0]
        heapq.heapify(ready)
        pending = None
        if capture is not None:
            _run_capturing(deps, buffers, ready, order, retain_graph, capture, roots)
            return
    # Nodes whose buffer is a new array that nothing outside the engine holds
    # (see Node.returns_fresh): more gradients are added into it in place, and
    # a leaf may take it as its .grad without a copy.
    fresh = set()
    heappop, heappush = heapq.heappop, heapq.heappush
    pop_buffer = buffers.pop
    while True:
        if pending is not None:
            node = pending
            pending = None
        elif ready:
            node = heappop(ready)[2]
        else:
            break
        grad = pop_buffer(node, None)
        if grad is None:
            grads = ()
        elif node.__class__ is AccumulateGrad:
            # (Nodes stay in ``fresh`` once run: their buffer is gone and never comes back.)
            owned = node in fresh
            hooks = node.variable._hooks
            if node.retained is not None or hooks:
                if hooks:
                    owned = False  # a hook may keep the Tensor it was given
                grad = _run_pre_hooks(node, grad)
            node.accumulate(grad, owned)
            continue  # no edges
        else:
            if node.retained is not None or node.pre_hooks:
                grad = _run_pre_hooks(node, grad)
            grads = node.backward(grad)
            if not retain_graph:  # free saved tensors once the node ran, as PyTorch does
                node.release_saved()
        if grads:
            returns_fresh = node.returns_fresh
            edges = zip(node.next_edges, grads, node.input_meta)
        else:
            edges = ((nxt, None, None) for nxt in node.next_edges)
        for nxt, g, meta in edges:
            if nxt is None:
                continue
            if g is not None:
                if g.shape == meta.shape and g.dtype is meta.np_dtype and nxt not in buffers:
                    buffers[nxt] = g  # _deliver's common case, inlined
                    if returns_fresh and g is not grad:
                        fresh.add(nxt)
                else:
                    _deliver(buffers, fresh, nxt, g, meta, returns_fresh and g is not grad)
            left = deps[nxt] - 1
            deps[nxt] = left
            if not left:
                if pending is None and not ready:
                    pending = nxt
                else:
                    if pending is not None:
                        heappush(ready, (-pending.sequence_nr, next(order), pending))
                        pending = None
                    heappush(ready, (-nxt.sequence_nr, next(order), nxt))


def _deliver(buffers, fresh, nxt, g, meta, is_fresh):
    """Reduce ``g`` to the shape and dtype of the input ``meta`` describes and
    add it to ``nxt``'s buffer. ``fresh`` holds the nodes whose buffer is new
    memory nothing else references (``is_fresh``: ``g`` is), which later
    gradients are added into in place and a leaf may keep as its ``.grad``."""
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


def _run_capturing(deps, buffers, ready, order, retain_graph, capture, roots):
    """``run_backward`` for ``autograd.grad`` and ``backward(inputs=)``: only
    the nodes leading to a captured one run, and gradients reaching a
    captured node are stored in ``capture``, never accumulated."""
    useful = _nodes_leading_to(set(capture), roots)
    fresh = set()
    heappop, heappush = heapq.heappop, heapq.heappush
    while ready:
        node = heappop(ready)[2]
        grad = buffers.pop(node, None)
        fresh.discard(node)
        accumulator = node.__class__ is AccumulateGrad
        if grad is None or node not in useful:
            grads = ()
        else:
            if node.retained is not None or (
                    node.variable._hooks if accumulator else node.pre_hooks):
                grad = _run_pre_hooks(node, grad)
            if node in capture:
                capture[node] = grad
            if accumulator or not any(n in useful for n in node.next_edges if n is not None):
                grads = ()  # nothing further to compute, never accumulate
            else:
                grads = node.backward(grad)
                if not retain_graph:
                    node.release_saved()
        returns_fresh = node.returns_fresh
        metas = node.input_meta
        i = -1
        for nxt in node.next_edges:
            i += 1
            if nxt is None:
                continue
            g = grads[i] if grads else None
            if g is not None:
                _deliver(buffers, fresh, nxt, g, metas[i], returns_fresh and g is not grad)
            left = deps[nxt] - 1
            deps[nxt] = left
            if not left:
                heappush(ready, (-nxt.sequence_nr, next(order), nxt))
