"""Max pooling's running maximum on the device: one fused kernel per kernel
offset (the CPU backend does the same step with three NumPy calls)."""
from . import codegen
from .codegen import grid_stride_params, grid_stride_source, strided
from .memory import operands


def step_kernel(ndim, with_index):
    """``if value > best or value is NaN: best = value (and argmax = k)``:
    NaN propagates and a later offset takes the index only when its value is
    larger or NaN, PyTorch's rule."""
    def make():
        arrays = ["best", "value"] + (["argmax"] if with_index else [])
        params = grid_stride_params(ndim, [p for a in arrays for p in strided(a, ndim)]
                                    + [("k", "int", None)])
        body = ["v = value[value_p]", "if v > best[best_p] or v != v:", "    best[best_p] = v"]
        if with_index:
            body.append("    argmax[argmax_p] = k")
        name = f"max_pool_step{ndim}{'_index' if with_index else ''}"
        source = grid_stride_source("kernel", ndim, params[2:], arrays, body)
        return codegen.Kernel(name, codegen.build(name, source).kernel, params)
    return codegen.cached(("max_pool_step", ndim, with_index), make)


def max_pool_step(best, argmax, value, k):
    arrays = [best, value] + ([] if argmax is None else [argmax])
    if best.size == 0:
        return
    shape, ops = operands(best.shape, arrays)
    kernel = step_kernel(len(shape), argmax is not None)
    kernel.grid_stride(best.size, [best.size, shape, *[x for op in ops for x in op], int(k)])
