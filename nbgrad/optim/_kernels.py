"""Fused optimizer kernels: one pass over memory per parameter.

Each kernel reads the parameter, its gradient and its state buffers once and
writes the new parameter and state in the same loop, following PyTorch's
single-tensor update formulas term by term, in the parameter's dtype (scalar
hyper-parameters arrive already cast to it, as PyTorch casts them).

An update is written once, as a template (parameters, a prologue, and the
body for element ``i``), and generated for two targets: Numba CPU functions
in a serial and a ``prange`` variant, and a ``@cuda.jit`` grid-stride kernel
for parameters on the GPU. Both are compiled lazily on first use and cached
on disk next to nbgrad's generated elementwise kernels.
"""
import numpy as np

from ..backends.kernel_source import load_module

# An update is a handful of flops per element: below this many elements the serial
# loop (vectorized by LLVM) finishes in about the time it takes to wake a thread pool.
PARALLEL_THRESHOLD = 1 << 18


class _Template:
    """One update: ``params`` (names; ``kinds`` says which are arrays, which
    scalars of the parameter's dtype and which bool flags, for the CUDA
    catalog), ``prologue`` (lines run once) and ``body`` (lines for element ``i``)."""

    def __init__(self, params, kinds, prologue, body):
        assert len(params) == len(kinds)
        self.params, self.kinds = params, kinds
        self.prologue = prologue.strip("\n").splitlines()
        self.body = body.strip("\n").splitlines()

    def cpu_source(self, name, loop):
        lines = [f"def {name}({', '.join(self.params)}):"]
        lines += ["    " + line for line in self.prologue]
        lines.append(f"    for i in {loop}(param.shape[0]):")
        lines += ["        " + line for line in self.body]
        return "\n".join(lines) + "\n"

    def cpu_foreach_source(self, name):
        """The serial update of several parameters in one call: each array
        parameter becomes a tuple (``params``, ``grads``, ...) of flat arrays of
        one type, updated one after the other, in order."""
        arrays = [p for p, k in zip(self.params, self.kinds) if k == "a"]
        scalars = [p for p, k in zip(self.params, self.kinds) if k != "a"]
        lines = [f"def {name}({', '.join([a + 's' for a in arrays] + scalars)}):",
                 f"    for k in range(len({arrays[0]}s)):"]
        lines += [f"        {a} = {a}s[k]" for a in arrays]
        lines += ["        " + line for line in self.prologue]
        lines.append("        for i in range(param.shape[0]):")
        lines += ["            " + line for line in self.body]
        return "\n".join(lines) + "\n"

    def cuda_source(self, name, options):
        lines = [f"@cuda.jit({options})", f"def {name}({', '.join(self.params)}):"]
        lines += ["    " + line for line in self.prologue]
        lines += ["    i = cuda.grid(1)", "    grid_step = cuda.gridsize(1)",
                  "    while i < param.shape[0]:"]
        lines += ["        " + line for line in self.body]
        lines.append("        i += grid_step")
        return "\n".join(lines) + "\n"


_SGD = _Template(
    ("param", "grad", "buf", "neg_lr", "weight_decay", "momentum", "dampening_complement",
     "has_momentum", "first", "nesterov", "maximize"),
    "aaassssffff", "", '''
g = grad[i]
if maximize:
    g = -g
if weight_decay != 0:
    g = g + weight_decay * param[i]
if has_momentum:
    if first:
        b = g
    else:
        b = buf[i] * momentum + dampening_complement * g
    buf[i] = b
    if nesterov:
        g = g + momentum * b
    else:
        g = b
param[i] = param[i] + neg_lr * g
''')

_ADAM = _Template(
    ("param", "grad", "exp_avg", "exp_avg_sq", "max_exp_avg_sq", "weight_decay", "decay_factor",
     "decoupled", "weight1", "one_minus_weight1", "beta2", "one_minus_beta2", "neg_step_size",
     "bias_correction2_sqrt", "eps", "amsgrad", "maximize"),
    "aaaaassfsssssssff", '''
small = weight1 < 0.5
''', '''
g = grad[i]
if maximize:
    g = -g
p = param[i]
if weight_decay != 0:
    if decoupled:
        p = p * decay_factor
    else:
        g = g + weight_decay * p
m = exp_avg[i]
# exp_avg.lerp_(grad, 1 - beta1), with ATen's two-sided lerp
if small:
    m = m + weight1 * (g - m)
else:
    m = g - (g - m) * one_minus_weight1
exp_avg[i] = m
v = exp_avg_sq[i] * beta2
v = v + one_minus_beta2 * g * g
exp_avg_sq[i] = v
if amsgrad:
    if v > max_exp_avg_sq[i] or v != v:
        max_exp_avg_sq[i] = v
    else:
        v = max_exp_avg_sq[i]
denom = math.sqrt(v) / bias_correction2_sqrt + eps
param[i] = p + neg_step_size * m / denom
''')

TEMPLATES = {"sgd": _SGD, "adam": _ADAM}


def _source(template, name):
    parts = ["import math\n\nimport numba\nfrom numba import prange\n"]
    for variant, loop, options in (("serial", "range", ""),
                                   ("parallel", "prange", "parallel=True, ")):
        parts.append(f"\n@numba.njit({options}cache=True, nogil=True, error_model=\"numpy\")\n"
                     + template.cpu_source(f"{name}_{variant}", loop))
    parts.append("\n@numba.njit(cache=True, nogil=True, error_model=\"numpy\")\n"
                 + template.cpu_foreach_source(f"{name}_foreach"))
    return "\n".join(parts)


_modules = {}


def _module(kind):
    module = _modules.get(kind)
    if module is None:
        module = _modules[kind] = load_module(_source(TEMPLATES[kind], kind), {}, None,
                                              f"optim_{kind}")
    return module


def _kernel(kind, size):
    module = _module(kind)
    return getattr(module, f"{kind}_{'parallel' if size >= PARALLEL_THRESHOLD else 'serial'}")


_KINDS = {"a": "array", "s": "scalar", "f": "scalar"}


def cuda_kernel(kind):
    """The ``@cuda.jit`` grid-stride kernel for ``kind`` (a ``codegen.Kernel``
    whose array and scalar parameters have the key ``"param"`` and whose
    flags have the key ``"flag"``, a bool)."""
    from ..backends.cuda import codegen
    template = TEMPLATES[kind]

    def make():
        name = f"optim_{kind}"
        source = template.cuda_source(name, codegen.jit_options())
        params = [(p, _KINDS[k], "flag" if k == "f" else "param")
                  for p, k in zip(template.params, template.kinds)]
        return codegen.Kernel(name, getattr(codegen.build(name, source), name), params)
    return codegen.cached(("optim", kind), make)


def _run(kind, arrays, scalars):
    """Run the update on the arrays' device: the CPU function (its ``foreach``
    form when ``arrays`` holds tuples of CPU arrays, several parameters), or
    the CUDA kernel over the contiguous device buffers."""
    if type(arrays[0]) is tuple:
        getattr(_module(kind), f"{kind}_foreach")(*arrays, *scalars)
        return
    if isinstance(arrays[0], np.ndarray):
        _kernel(kind, arrays[0].size)(*arrays, *scalars)
        return
    buffers = [a.buffer[a.offset:a.offset + a.size] for a in arrays]
    cuda_kernel(kind).grid_stride(arrays[0].size, buffers + list(scalars))


# (dtype, hyper-parameters) -> SGD's kernel scalars before and after ``first``.
# Casting them costs more than a small parameter's update, and they change only
# when a scheduler changes the group. Bounded: cleared past _SCALARS_MAX.
_sgd_scalars = {}
_SCALARS_MAX = 256


_PLAIN = (float, int, bool)


def _sgd_scalars_of(t, lr, weight_decay, momentum, dampening, nesterov, maximize):
    # Only plain numbers are remembered: a tensor (a learning rate, say) may change in place.
    plain = (type(lr) in _PLAIN and type(weight_decay) in _PLAIN and type(momentum) in _PLAIN
             and type(dampening) in _PLAIN)
    key = (t, lr, weight_decay, momentum, dampening, nesterov, maximize)
    cached = _sgd_scalars.get(key) if plain else None
    if cached is None:
        cached = ((t(-lr), t(weight_decay), t(momentum), t(1 - dampening), momentum != 0),
                  (bool(nesterov), bool(maximize)))
        if plain:
            if len(_sgd_scalars) >= _SCALARS_MAX:
                _sgd_scalars.clear()
            _sgd_scalars[key] = cached
    return cached


def sgd_foreach(params, grads, bufs, lr, weight_decay, momentum, dampening, first, nesterov,
                maximize):
    """``sgd`` on several flat CPU parameters of one dtype (tuples of arrays,
    each below PARALLEL_THRESHOLD elements), in one call, in order."""
    head, tail = _sgd_scalars_of(params[0].dtype.type, lr, weight_decay, momentum, dampening,
                                 nesterov, maximize)
    _run("sgd", (params, grads, bufs), (*head, first, *tail))


def sgd(param, grad, buf, lr, weight_decay, momentum, dampening, first, nesterov, maximize):
    head, tail = _sgd_scalars_of(param.dtype.type, lr, weight_decay, momentum, dampening,
                                 nesterov, maximize)
    _run("sgd", (param, grad, buf), (*head, first, *tail))


def adam(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, *, lr, beta1, beta2, eps, weight_decay,
         decoupled, step, amsgrad, maximize):
    t = param.dtype.type
    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = 1 - beta2 ** step
    weight1 = t(1 - beta1)
    _run("adam", (param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq),
         (t(weight_decay), t(1 - lr * weight_decay), decoupled, weight1, t(1) - weight1, t(beta2),
          t(1 - beta2), t(-(lr / bias_correction1)), t(bias_correction2 ** 0.5), t(eps), amsgrad,
          maximize))


__all__ = ["sgd", "sgd_foreach", "adam", "PARALLEL_THRESHOLD"]
