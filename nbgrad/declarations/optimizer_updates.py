"""The fused optimizer updates, declared once for every backend.

An update is what one optimizer step computes for each element of a flat
parameter: its parameters (arrays, scalars of the parameter's dtype, bool
flags), lines run once (``prologue``) and lines for element ``i`` (``body``),
following PyTorch's single-tensor update formulas term by term. A backend
generates its kernels from these lines (``optimizer_update``); the
optimizers prepare the scalars (``nbgrad.optim``).
"""


class Update:
    """One update: ``name``; ``params`` (names) and ``kinds`` (one letter
    each: ``"a"`` an array, ``"s"`` a scalar of the parameter's dtype, ``"f"``
    a bool flag); ``prologue`` and ``body`` (lists of source lines; ``body``
    updates element ``i`` of the arrays, ``param`` the first of them)."""

    __slots__ = ("name", "params", "kinds", "prologue", "body")

    def __init__(self, name, params, kinds, prologue, body):
        assert len(params) == len(kinds) and kinds[0] == "a"
        self.name, self.params, self.kinds = name, params, kinds
        self.prologue = prologue.strip("\n").splitlines()
        self.body = body.strip("\n").splitlines()

    def __repr__(self):
        return f"Update({self.name!r})"


SGD = Update(
    "sgd",
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

ADAM = Update(
    "adam",
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

UPDATES = (SGD, ADAM)
