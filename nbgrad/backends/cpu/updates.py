"""Fused optimizer updates on the CPU: one pass over memory per parameter.

Each update (a ``declarations.optimizer_updates.Update``) is generated as
Numba functions in three forms: serial, ``prange`` (from PARALLEL_THRESHOLD
elements) and ``foreach`` (several small parameters, one after the other, in
one call). They are compiled on first use and cached on disk with the
elementwise kernels.
"""
from ..kernel_source import load_module

# An update is a handful of flops per element: below this many elements the serial
# loop (vectorized by LLVM) finishes in about the time it takes to wake a thread pool.
PARALLEL_THRESHOLD = 1 << 18


def _loop_source(update, name, loop):
    lines = [f"def {name}({', '.join(update.params)}):"]
    lines += ["    " + line for line in update.prologue]
    lines.append(f"    for i in {loop}(param.shape[0]):")
    lines += ["        " + line for line in update.body]
    return "\n".join(lines) + "\n"


def _foreach_source(update, name):
    """Each array parameter becomes a tuple (``params``, ``grads``, ...) of flat
    arrays of one type, updated one after the other, in order."""
    arrays = [p for p, k in zip(update.params, update.kinds) if k == "a"]
    scalars = [p for p, k in zip(update.params, update.kinds) if k != "a"]
    lines = [f"def {name}({', '.join([a + 's' for a in arrays] + scalars)}):",
             f"    for k in range(len({arrays[0]}s)):"]
    lines += [f"        {a} = {a}s[k]" for a in arrays]
    lines += ["        " + line for line in update.prologue]
    lines.append("        for i in range(param.shape[0]):")
    lines += ["            " + line for line in update.body]
    return "\n".join(lines) + "\n"


def _source(update):
    name = update.name
    parts = ["import math\n\nimport numba\nfrom numba import prange\n"]
    for variant, loop, options in (("serial", "range", ""),
                                   ("parallel", "prange", "parallel=True, ")):
        parts.append(f"\n@numba.njit({options}cache=True, nogil=True, error_model=\"numpy\")\n"
                     + _loop_source(update, f"{name}_{variant}", loop))
    parts.append("\n@numba.njit(cache=True, nogil=True, error_model=\"numpy\")\n"
                 + _foreach_source(update, f"{name}_foreach"))
    return "\n".join(parts)


_functions = {}  # update -> (serial, parallel, foreach)


def _functions_of(update):
    functions = _functions.get(update)
    if functions is None:
        module = load_module(_source(update), {}, None, f"update_{update.name}")
        functions = _functions[update] = tuple(
            getattr(module, f"{update.name}_{variant}")
            for variant in ("serial", "parallel", "foreach"))
    return functions


def optimizer_update(update, arrays, scalars):
    serial, parallel, _ = _functions_of(update)
    (parallel if arrays[0].size >= PARALLEL_THRESHOLD else serial)(*arrays, *scalars)


def optimizer_update_foreach(update, arrays, scalars):
    _functions_of(update)[2](*arrays, *scalars)
