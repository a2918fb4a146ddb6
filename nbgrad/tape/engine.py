"""The backward engine: runs the graph in dependency order.

Broadcasting and dtype promotion are undone here, once, for every node: a node
returns gradients in the shape of its output and the engine reduces each to the
shape (and casts to the dtype) of the input it belongs to.

Gradients are raw backend arrays, except when the backward builds a graph of
its own (``create_graph=True``): then they are values of the layer above
(Tensors), and a ``moves`` object of that layer says how they are shaped,
summed, accumulated and passed through a node (see :class:`RawMoves`, the
arrays' own). A plain backward without ``inputs`` takes the fast loop
``_run``; every other takes the general loop ``_run_general``.
"""
import heapq
import itertools
import warnings

import numpy as np

from ..backends import backend_of
from .grad_mode import SWITCHES, _state as _mode_state
from .graph import AccumulateGrad, StaleSavedTensorError, creation_of, grad_lock


def _count_dependencies(roots):
    """How many edges lead into each node reachable from ``roots`` (roots included, from 0)."""
    deps = dict.fromkeys(roots, 0)
    nodes = list(deps)
    reached = nodes.append
    for node in nodes:  # grows as nodes are first reached
        for nxt in node.next_edges:
            if nxt in deps:
                deps[nxt] += 1
            elif nxt is not None:
                deps[nxt] = 1
                reached(nxt)
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


def _hooks_of(node):
    return node.variable._hooks if node.__class__ is AccumulateGrad else node.pre_hooks


def _run_pre_hooks(node, grad, moves=None):
    hooks = _hooks_of(node)
    if hooks:  # hooks on arrays (Tensor.register_hook adapts a user's hook)
        for hook in list(hooks):
            result = hook(grad)
            if result is not None:
                grad = result
    retained = node.retained and node.retained()
    if retained is not None:
        with grad_lock(retained):
            (moves or RAW).retain(retained, grad)
    return grad


def run_backward(roots, root_grads, retain_graph, capture=None, moves=None):
    """Propagate ``root_grads`` from ``roots``. With ``capture`` (a dict keyed by
    node), gradients reaching those nodes are stored there instead of being
    accumulated, and only the part of the graph that leads to them runs.
    ``moves``: how gradients move (None: raw arrays, :data:`RAW`)."""
    if SWITCHES.anomaly:  # each step checked: the general loop
        moves = AnomalyMoves(moves or RAW, SWITCHES.check_nan)
    if len(roots) == 1 and capture is None and moves is None:  # nothing leads into one root
        _run(_count_dependencies(roots), {}, [], roots[0], root_grads[0], None, retain_graph)
        return
    moves = moves or RAW
    deps = _count_dependencies(roots)
    buffers = {}
    for node, grad in zip(roots, root_grads):
        buffers[node] = moves.add(buffers[node], grad) if node in buffers else grad
    # Ready nodes run latest-made first (PyTorch's order: it decides, for
    # instance, which error a graph with several problems reports).
    order = itertools.count()
    ready = [(-node.sequence_nr, next(order), node) for node in dict.fromkeys(roots)
             if deps[node] == 0]
    heapq.heapify(ready)
    if capture is None and moves is RAW:
        _run(deps, buffers, ready, None, None, order, retain_graph)
        return
    partial, _mode_state.partial_backward = _mode_state.partial_backward, capture is not None
    try:
        _run_general(deps, buffers, ready, order, retain_graph, capture, roots, moves)
    finally:
        _mode_state.partial_backward = partial


def _run(deps, buffers, ready, pending, pending_grad, order, retain_graph):
    """The engine's loop. ``buffers``: the gradient summed so far for each node
    that still waits for some, or that is ready in the heap ``ready``. A node
    that became ready while no other was waits in ``pending`` (its gradient in
    ``pending_grad``), out of the heap and the buffers: a chain's usual case.
    A leaf's sink (AccumulateGrad, first among ready nodes in PyTorch's order)
    accumulates as soon as it is ready."""
    # Nodes whose buffer is a new array that nothing outside the engine holds
    # (see Node.returns_fresh): more gradients are added into it in place, and
    # a leaf may take it as its .grad without a copy.
    fresh = set()
    heappop, heappush = heapq.heappop, heapq.heappush
    pop_buffer = buffers.pop
    while True:
        if pending is not None:
            node, grad = pending, pending_grad
            pending = None
        elif ready:
            node = heappop(ready)[2]
            grad = pop_buffer(node, None)
        else:
            return
        if grad is None:
            grads = ()
        elif node.__class__ is AccumulateGrad:  # a root
            _accumulate(node, grad, node in fresh)
            continue
        else:
            if node.retained is not None or node.pre_hooks:
                grad = _run_pre_hooks(node, grad)
            # Saved tensors are freed once the node ran, unless retained (as PyTorch).
            try:
                grads = node.backward(grad) if retain_graph else node.backward_and_release(grad)
            except StaleSavedTensorError as error:
                raise error.saved_by(node) from None
        if grads:
            returns_fresh = node.returns_fresh
            edges = zip(node.next_edges, grads, node.input_meta)
        else:
            edges = ((nxt, None, None) for nxt in node.next_edges)
        for nxt, g, meta in edges:
            if nxt is None:
                continue
            left = deps[nxt] - 1
            if left or nxt in buffers:  # more to come, or some came already: sum in the buffer
                deps[nxt] = left
                if g is not None:
                    _deliver(buffers, fresh, nxt, g, meta, returns_fresh and g is not grad)
                if left:
                    continue
                g = pop_buffer(nxt, None)
                is_fresh = nxt in fresh
            elif g is not None:
                is_fresh = returns_fresh and g is not grad
                if g.shape != meta.shape or g.dtype is not meta.np_dtype:
                    g, is_fresh = _shaped(g, meta, is_fresh)
            # nxt is ready, with the gradient g
            if nxt.__class__ is AccumulateGrad:
                if g is not None:
                    _accumulate(nxt, g, is_fresh)
            elif pending is None and not ready:
                pending, pending_grad = nxt, g
            else:
                if pending is not None:
                    if pending_grad is not None:
                        buffers[pending] = pending_grad
                    if order is None:
                        order = itertools.count()
                    heappush(ready, (-pending.sequence_nr, next(order), pending))
                    pending = None
                if g is not None:
                    buffers[nxt] = g
                heappush(ready, (-nxt.sequence_nr, next(order), nxt))


def _accumulate(sink, grad, owned):
    """Run a leaf's hooks and accumulate into its ``.grad`` (``owned``: ``grad``
    is a new buffer that nothing else holds)."""
    hooks = sink.variable._hooks
    if sink.retained is not None or hooks:
        if hooks:
            owned = False  # a hook may keep the Tensor it was given
        grad = _run_pre_hooks(sink, grad)
    sink.accumulate(grad, owned)


def _shaped(g, meta, is_fresh):
    """``g`` reduced to the shape and cast to the dtype of the input ``meta``
    describes, and whether it is then new memory."""
    if g.shape != meta.shape:
        summed = meta.backend.sum_to_shape(g, meta.shape)
        is_fresh = is_fresh or summed.size < g.size  # a reduction: new memory
        g = summed
    if g.dtype is not meta.np_dtype and g.dtype != meta.np_dtype:
        g = meta.backend.cast(g, meta.np_dtype)
        is_fresh = True
    return g, is_fresh


def _deliver(buffers, fresh, nxt, g, meta, is_fresh):
    """Reduce ``g`` to the shape and dtype of the input ``meta`` describes and
    add it to ``nxt``'s buffer. ``fresh`` holds the nodes whose buffer is new
    memory nothing else references (``is_fresh``: ``g`` is), which later
    gradients are added into in place and a leaf may keep as its ``.grad``."""
    if g.shape != meta.shape or g.dtype is not meta.np_dtype:
        g, is_fresh = _shaped(g, meta, is_fresh)
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


class RawMoves:
    """How raw gradient arrays move through the general loop."""

    @staticmethod
    def backward(node, grad, retain_graph):
        return node.backward(grad) if retain_graph else node.backward_and_release(grad)

    deliver = staticmethod(_deliver)

    @staticmethod
    def add(a, b):
        return a + b

    @staticmethod
    def accumulate(sink, grad, owned):
        sink.accumulate(grad, owned)

    @staticmethod
    def retain(tensor, grad):
        tensor._set_retained_grad(grad)


RAW = RawMoves()


class AnomalyMoves:
    """Anomaly mode: gradients move as ``inner`` moves them, and each node's
    step is watched. A step that raises first warns with the stack of the
    forward call that made the node (PyTorch's warning); with ``check_nan``
    a step that returns NaN raises PyTorch's error, which nbgrad completes
    with the forward op and the line that called it."""

    def __init__(self, inner, check_nan):
        self.inner, self.check_nan = inner, check_nan
        self.deliver, self.add = inner.deliver, inner.add
        self.accumulate, self.retain = inner.accumulate, inner.retain

    def backward(self, node, grad, retain_graph):
        try:
            grads = self.inner.backward(node, grad, retain_graph)
            if self.check_nan:
                for i, g in enumerate(grads or ()):
                    if g is not None and _has_nan(g):
                        raise RuntimeError(_nan_message(node, i))
        except Exception:
            _warn_forward_stack(node)
            raise
        return grads


def _has_nan(grad):
    data = getattr(grad, "_data", grad)  # a Tensor in a backward that builds a graph
    if data.dtype.kind not in "fc":
        return False
    return bool(np.isnan(backend_of(data).to_numpy(data)).any())


def _nan_message(node, i):
    message = f"Function '{node.name()}' returned nan values in its {i}th output."
    record = creation_of(node)
    where = f", called at {record[0]}" if record is not None and record[0] else ""
    return message + f" Its forward op was {node.op_name}{where}."


def _warn_forward_stack(node):
    record = creation_of(node)
    if record is None:
        text = (f"Error detected in {node.name()}. No forward pass information available. "
                "Enable detect anomaly during forward pass for more information.")
    else:
        text = (f"Error detected in {node.name()}. Traceback of forward call that caused the "
                "error:\n" + "".join(record[1].format()))
    warnings.warn(text, UserWarning, stacklevel=2)


def _run_general(deps, buffers, ready, order, retain_graph, capture, roots, moves):
    """The engine's general loop: ``autograd.grad`` and ``backward(inputs=)``
    (``capture``: only the nodes leading to a captured one run, and gradients
    reaching a captured node are stored there, never accumulated), and any
    backward whose gradients move by ``moves`` other than as raw arrays."""
    useful = None if capture is None else _nodes_leading_to(set(capture), roots)
    fresh = set()
    heappop, heappush = heapq.heappop, heapq.heappush
    while ready:
        node = heappop(ready)[2]
        grad = buffers.pop(node, None)
        owned = node in fresh
        fresh.discard(node)
        accumulator = node.__class__ is AccumulateGrad
        grads = ()
        if grad is not None and (useful is None or node in useful):
            hooks = node.variable._hooks if accumulator else node.pre_hooks
            if node.retained is not None or hooks:
                grad = _run_pre_hooks(node, grad, moves)
                owned = owned and not hooks  # a hook may keep the gradient it was given
            if capture is not None and node in capture:
                capture[node] = grad
            elif accumulator and capture is None:
                moves.accumulate(node, grad, owned)
            if not accumulator and (useful is None or any(
                    n in useful for n in node.next_edges if n is not None)):
                try:
                    grads = moves.backward(node, grad, retain_graph)
                except StaleSavedTensorError as error:
                    raise error.saved_by(node) from None
        returns_fresh = node.returns_fresh
        metas = node.input_meta
        i = -1
        for nxt in node.next_edges:
            i += 1
            if nxt is None:
                continue
            g = grads[i] if grads else None
            if g is not None:
                moves.deliver(buffers, fresh, nxt, g, metas[i], returns_fresh and g is not grad)
            left = deps[nxt] - 1
            deps[nxt] = left
            if not left:
                heappush(ready, (-nxt.sequence_nr, next(order), nxt))
