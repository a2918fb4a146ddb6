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

# -- issue 16: the other torch.optim updates (RMSprop ... Rprop) ------------------------------
# As above: PyTorch's single-tensor formulas term by term, each rounding where
# PyTorch's in-place ops round; every constant arrives as a scalar of the
# parameter's dtype (a Python literal would widen float32 math to float64).
# ``lerp_`` (exp_avg, grad_avg) is ATen's two-sided lerp, as in ADAM.

RMSPROP = Update(
    "rmsprop",
    ("param", "grad", "square_avg", "grad_avg", "momentum_buffer", "weight_decay", "alpha",
     "weight", "one_minus_weight", "eps", "momentum", "neg_lr", "centered", "has_momentum",
     "maximize"),
    "aaaaasssssssfff", """
small = weight < 0.5
""", """
g = grad[i]
if maximize:
    g = -g
if weight_decay != 0:
    g = g + weight_decay * param[i]
v = square_avg[i] * alpha
v = v + weight * g * g
square_avg[i] = v
if centered:
    m = grad_avg[i]
    if small:
        m = m + weight * (g - m)
    else:
        m = g - (g - m) * one_minus_weight
    grad_avg[i] = m
    v = v - m * m
avg = math.sqrt(v) + eps
if has_momentum:
    b = momentum_buffer[i] * momentum + g / avg
    momentum_buffer[i] = b
    param[i] = param[i] + neg_lr * b
else:
    param[i] = param[i] + neg_lr * g / avg
""")

ADAGRAD = Update(
    "adagrad",
    ("param", "grad", "state_sum", "weight_decay", "neg_clr", "eps", "maximize"),
    "aaasssf", "", """
g = grad[i]
if maximize:
    g = -g
if weight_decay != 0:
    g = g + weight_decay * param[i]
s = state_sum[i] + g * g
state_sum[i] = s
param[i] = param[i] + neg_clr * g / (math.sqrt(s) + eps)
""")

ADADELTA = Update(
    "adadelta",
    ("param", "grad", "square_avg", "acc_delta", "weight_decay", "rho", "one_minus_rho", "eps",
     "neg_lr", "maximize"),
    "aaaasssssf", "", """
g = grad[i]
if maximize:
    g = -g
if weight_decay != 0:
    g = g + weight_decay * param[i]
v = square_avg[i] * rho
v = v + one_minus_rho * g * g
square_avg[i] = v
std = math.sqrt(v + eps)
a = acc_delta[i]
delta = math.sqrt(a + eps)
delta = delta / std * g
a = a * rho
a = a + one_minus_rho * delta * delta
acc_delta[i] = a
param[i] = param[i] + neg_lr * delta
""")

ADAMAX = Update(
    "adamax",
    ("param", "grad", "exp_avg", "exp_inf", "weight_decay", "weight1", "one_minus_weight1",
     "beta2", "eps", "neg_clr", "maximize"),
    "aaaassssssf", """
small = weight1 < 0.5
""", """
g = grad[i]
if maximize:
    g = -g
if weight_decay != 0:
    g = g + weight_decay * param[i]
m = exp_avg[i]
if small:
    m = m + weight1 * (g - m)
else:
    m = g - (g - m) * one_minus_weight1
exp_avg[i] = m
u = exp_inf[i] * beta2
b = abs(g) + eps
if not (u > b or u != u):
    u = b
exp_inf[i] = u
param[i] = param[i] + neg_clr * m / u
""")

NADAM = Update(
    "nadam",
    ("param", "grad", "exp_avg", "exp_avg_sq", "weight_decay", "decay_factor", "weight1",
     "one_minus_weight1", "beta2", "one_minus_beta2", "bias_correction2", "eps", "grad_coef",
     "avg_coef", "decoupled", "maximize"),
    "aaaassssssssssff", """
small = weight1 < 0.5
""", """
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
if small:
    m = m + weight1 * (g - m)
else:
    m = g - (g - m) * one_minus_weight1
exp_avg[i] = m
v = exp_avg_sq[i] * beta2
v = v + one_minus_beta2 * g * g
exp_avg_sq[i] = v
denom = math.sqrt(v / bias_correction2) + eps
p = p + grad_coef * g / denom
param[i] = p + avg_coef * m / denom
""")

RADAM = Update(
    "radam",
    ("param", "grad", "exp_avg", "exp_avg_sq", "weight_decay", "decay_factor", "weight1",
     "one_minus_weight1", "beta2", "one_minus_beta2", "bias_correction1", "lr",
     "bias_correction2_sqrt", "eps", "rect", "one", "decoupled", "rectified", "maximize"),
    "aaaassssssssssssfff", """
small = weight1 < 0.5
""", """
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
if small:
    m = m + weight1 * (g - m)
else:
    m = g - (g - m) * one_minus_weight1
exp_avg[i] = m
v = exp_avg_sq[i] * beta2
v = v + one_minus_beta2 * g * g
exp_avg_sq[i] = v
u = m / bias_correction1 * lr
if rectified:
    u = u * (one / (math.sqrt(v) + eps) * bias_correction2_sqrt) * rect
param[i] = p - u
""")

ASGD = Update(
    "asgd",
    ("param", "grad", "ax", "weight_decay", "decay", "neg_eta", "mu", "averaging", "maximize"),
    "aaassssff", "", """
g = grad[i]
if maximize:
    g = -g
if weight_decay != 0:
    g = g + weight_decay * param[i]
p = param[i] * decay
p = p + neg_eta * g
param[i] = p
if averaging:
    a = ax[i]
    ax[i] = a + (p - a) * mu
else:
    ax[i] = p
""")

RPROP = Update(
    "rprop",
    ("param", "grad", "prev", "step_size", "etaplus", "etaminus", "step_size_min",
     "step_size_max", "one", "zero", "maximize"),
    "aaaassssssf", "", """
g = grad[i]
if maximize:
    g = -g
s = g * prev[i]
if s > zero:
    factor = etaplus
elif s < zero:
    factor = etaminus
else:
    factor = one
size = step_size[i] * factor
if size < step_size_min:
    size = step_size_min
if size > step_size_max:
    size = step_size_max
step_size[i] = size
if s < zero:
    g = zero
if g > zero:
    sign = one
elif g < zero:
    sign = -one
else:
    sign = zero
param[i] = param[i] - sign * size
prev[i] = g
""")

# -- swa_utils: ``torch._foreach_lerp_(averaged, current, weight)``, ATen's two-sided lerp
# (the averaged model's EMA and SWA running averages; ``end`` is the model's parameter).
LERP = Update(
    "lerp",
    ("param", "end", "weight", "one_minus_weight"),
    "aass", """
small = weight < 0.5
""", """
a = param[i]
e = end[i]
if small:
    param[i] = a + weight * (e - a)
else:
    param[i] = e - (e - a) * one_minus_weight
""")

UPDATES = (SGD, ADAM, RMSPROP, ADAGRAD, ADADELTA, ADAMAX, NADAM, RADAM, ASGD, RPROP, LERP)
