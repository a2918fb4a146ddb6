"""Max pooling's running maximum on the CPU: one fused Numba pass per kernel
offset (the same step as ``backends/cuda/pooling.py``), generated per number
of (coalesced) dimensions, serial for small outputs and ``prange`` for large.
NumPy needed four passes and a boolean-mask write for it."""
from ..kernel_source import load_module
from .elementwise import _coalesce, _module_source, _variant

_modules = {}


def _body(with_index):
    def body_for(ix):
        lines = [f"v = value{ix}", f"if v > best{ix} or v != v:", f"    best{ix} = v"]
        if with_index:
            lines.append(f"    argmax{ix} = k")
        return lines
    return body_for


def _module(ndim, with_index):
    key = (ndim, with_index)
    module = _modules.get(key)
    if module is None:
        signature = "best, value, argmax, k" if with_index else "best, value, k"
        source = _module_source(signature, ndim, _body(with_index), "best")
        module = _modules[key] = load_module(source, {}, None, "max_pool_step")
    return module


def max_pool_step(best, argmax, value, k):
    """``if value > best or value is NaN: best = value (and argmax = k)``:
    NaN propagates and a later offset takes the index only when its value is
    larger or NaN, PyTorch's rule; ``argmax`` may be None."""
    if best.size == 0:
        return
    arrays = [best, value] + ([] if argmax is None else [argmax])
    ndim, views = _coalesce(best.shape, arrays)
    kernel = _variant(_module(ndim, argmax is not None), best.size)
    if argmax is None:
        kernel(views[0], views[1], k)
    else:
        kernel(views[0], views[1], views[2], k)
