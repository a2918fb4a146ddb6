"""Automatic differentiation: ``backward``, ``grad``, grad modes, gradcheck."""
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .engine import run_backward


def _as_tuple(x):
    if x is None:
        return None
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _root_gradients(outputs, grad_outputs):
    """Check the outputs and build the gradients that start backward."""
    grad_outputs = _as_tuple(grad_outputs) or (None,) * len(outputs)
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(f"grad can be implicitly created only for scalar outputs"
                           if not grad_outputs else
                           f"got {len(grad_outputs)} gradients for {len(outputs)} outputs")
    roots, grads = [], []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if not out.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        if g is None:
            if out.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            data = out._backend.full(out._data.shape, 1, out.dtype.numpy)
        else:
            if tuple(g.shape) != tuple(out.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                                   f"{g.shape!r} and output[{i}] has a shape of {out.shape!r}.")
            data = g._data
        roots.append(out._gradient_edge())
        grads.append(data)
    return roots, grads


def _check_create_graph(create_graph):
    if create_graph:
        raise RuntimeError("nbgrad does not support higher-order gradients (create_graph=True)")


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate gradients of ``tensors`` into the ``.grad`` of graph leaves
    (only of ``inputs`` when given)."""
    _check_create_graph(create_graph)
    tensors = _as_tuple(tensors)
    roots, grads = _root_gradients(tensors, grad_tensors)
    if inputs is None:
        run_backward(roots, grads, bool(retain_graph))
        return
    inputs = _as_tuple(inputs)
    captured = _run_captured(roots, grads, bool(retain_graph), inputs)
    for t, g in zip(inputs, captured):
        if g is not None:
            t._accumulate_grad(g)


def _run_captured(roots, grads, retain_graph, inputs):
    from ..tensor import Tensor

    for t in inputs:
        if not isinstance(t, Tensor) or not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    edges = [t._gradient_edge() for t in inputs]
    capture = dict.fromkeys(edges)
    run_backward(roots, grads, retain_graph, capture=capture)
    return [capture[e] for e in edges]


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=False):
    """Gradients of ``outputs`` with respect to ``inputs``, returned rather
    than accumulated into ``.grad``."""
    from ..tensor import Tensor

    _check_create_graph(create_graph)
    outputs, inputs = _as_tuple(outputs), _as_tuple(inputs)
    roots, grads = _root_gradients(outputs, grad_outputs)
    captured = _run_captured(roots, grads, bool(retain_graph), inputs)
    result = []
    for t, g in zip(inputs, captured):
        if g is None:
            if not allow_unused:
                raise RuntimeError("One of the differentiated Tensors appears to not have been used "
                                   "in the graph. Set allow_unused=True if this is the desired behavior.")
            result.append(None)
        else:
            result.append(Tensor._wrap(t._backend.copy(g), t.dtype, t._backend))
    return tuple(result)


from .gradcheck import GradcheckError, gradcheck  # noqa: E402  (needs grad above)

__all__ = ["backward", "grad", "gradcheck", "GradcheckError", "no_grad", "enable_grad",
           "set_grad_enabled", "is_grad_enabled"]
