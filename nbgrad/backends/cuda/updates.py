"""Fused optimizer updates on the device: one grid-stride ``@cuda.jit`` kernel
per update (a ``declarations.optimizer_updates.Update``) over the flat,
contiguous buffers of one parameter, compiled on first use."""
from . import codegen

_KINDS = {"a": "array", "s": "scalar", "f": "scalar"}


def _source(update, name):
    lines = [f"@cuda.jit({codegen.jit_options()})", f"def {name}({', '.join(update.params)}):"]
    lines += ["    " + line for line in update.prologue]
    lines += ["    i = cuda.grid(1)", "    grid_step = cuda.gridsize(1)",
              "    while i < param.shape[0]:"]
    lines += ["        " + line for line in update.body]
    lines.append("        i += grid_step")
    return "\n".join(lines) + "\n"


def kernel(update):
    """The kernel for ``update`` (a ``codegen.Kernel`` whose array and scalar
    parameters have the key ``"param"`` and whose flags the key ``"flag"``, a bool)."""
    def make():
        name = f"update_{update.name}"
        params = [(p, _KINDS[k], "flag" if k == "f" else "param")
                  for p, k in zip(update.params, update.kinds)]
        return codegen.Kernel(name, getattr(codegen.build(name, _source(update, name)), name),
                              params)
    return codegen.cached(("update", update.name), make)


def optimizer_update(update, arrays, scalars):
    buffers = [a.buffer[a.offset:a.offset + a.size] for a in arrays]
    kernel(update).grid_stride(arrays[0].size, buffers + list(scalars))


def optimizer_update_foreach(update, arrays, scalars):
    for one in zip(*arrays):  # one launch per parameter, in order
        optimizer_update(update, one, scalars)
