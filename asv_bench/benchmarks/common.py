"""Shared pieces of the asv suite and of ``python -m asv_bench.compare``.

Everything here is driven by ``nbgrad.ROWS``, so a new row gets benchmarked
without touching the suite. Inputs are generated with NumPy and handed to
nbgrad (and PyTorch, in ``compare``) without copying, so every framework works
on the very same values.
"""
import numba
import numpy as np

import nbgrad

def _start_numba():
    """Pay Numba's one-time start-up (LLVM and target set-up, about half a
    second) once, at import: asv imports the suite once and forks a process
    per benchmark case, which inherit it. A serial function only: an OpenMP
    pool started before a fork would not survive in the children."""
    @numba.njit(cache=False)
    def one(x):
        return x + 1
    one(1)


_start_numba()

SIZES = [1_000, 100_000, 10_000_000]
DTYPES = ["float32", "float64"]

# Inputs that are Python scalars rather than tensors, per row; every other
# input is an array sampled from the row's domain (a bool mask for the row's
# ``bool_inputs``).
SCALAR_INPUTS = {"clamp": {"lo": -1.0, "hi": 1.0},
                 "round_decimals": {"ten": 100.0, "flip": False},
                 "nan_to_num": {"nan": 0.0, "posinf": 1.0, "neginf": -1.0},
                 "isclose": {"rtol": 1e-5, "atol": 1e-8, "equal_nan": False},
                 "addcmul": {"value": 0.5}, "addcdiv": {"value": 0.5}}

# Rows whose functions take some inputs by keyword (PyTorch's ``value=``):
# how to call them, for nbgrad and PyTorch alike.
KEYWORD_CALLS = {
    "addcmul": lambda lib: lambda a, t1, t2, value: lib.addcmul(a, t1, t2, value=value),
    "addcdiv": lambda lib: lambda a, t1, t2, value: lib.addcdiv(a, t1, t2, value=value),
    "logit": lambda lib: lambda a, lo, hi: lib.logit(a, eps=0.05),
    "polygamma": lambda lib: lambda a, n: lib.polygamma(2, a),
    "xlog1py": lambda lib: lib.special.xlog1py,
    "entr": lambda lib: lib.special.entr,
}


def integral_only(row):
    """Rows PyTorch computes on integers and bools only (the bitwise ops):
    their check refuses floats. They are timed on int64 inputs."""
    if row.check is None:
        return False
    try:
        row.check([nbgrad.float32] * len(row.inputs))
    except NotImplementedError:
        return True
    except Exception:  # noqa: BLE001 - another refusal: not a dtype rule
        return False
    return False

def nbgrad_function(row):
    """How a user calls the row: ``nbgrad.<name>`` when nbgrad exports it
    (``nbgrad.clamp``, ``nbgrad.where``), else the row object itself."""
    if row.name in KEYWORD_CALLS:
        return KEYWORD_CALLS[row.name](nbgrad)
    fn = getattr(nbgrad, row.name, None)
    return fn if callable(fn) else row


def is_table_row(row):
    """Rows a user calls as an op. ``copy`` and ``fill`` (``method=False``,
    not exported) are the in-place writes behind ``copy_``/``fill_``."""
    return row.method or callable(getattr(nbgrad, row.name, None))


def table_rows():
    return [row for row in nbgrad.ROWS if is_table_row(row)]


def row_by_name(name):
    for row in nbgrad.ROWS:
        if row.name == name:
            return row
    raise KeyError(f"no elementwise row named {name!r}; rows: {[r.name for r in nbgrad.ROWS]}")


def numpy_inputs(row, n, dtype, seed=0):
    """One value per row input: arrays of ``n`` elements or Python scalars."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    lo, hi = row.domain
    args = []
    for k, name in enumerate(row.inputs):
        if k in row.bool_inputs:
            args.append(rng.random(n, dtype=np.float32) < 0.5)
        elif name in SCALAR_INPUTS.get(row.name, {}):
            args.append(SCALAR_INPUTS[row.name][name])
        elif integral_only(row):  # shifts by 0..63
            args.append(rng.integers(0, 64, n, dtype=np.int64))
        else:
            x = rng.random(n, dtype=np.float64 if dtype == np.float64 else np.float32)
            x *= hi - lo
            x += lo
            args.append(x.astype(dtype, copy=False))
    return args


def upstream_gradient(n, dtype, seed=1):
    """The gradient handed to ``backward``: ``n`` values in [-2, 2)."""
    rng = np.random.default_rng(seed)
    return (rng.random(n) * 4 - 2).astype(dtype)


def grad_inputs(row, args):
    """Indices of the inputs that get a gradient: differentiable, floating arrays."""
    return [i for i in row.differentiable
            if isinstance(args[i], np.ndarray) and args[i].dtype.kind == "f"]


def is_differentiable(row):
    return bool(row.differentiable) and row.result != "bool"


def to_nbgrad(args, grad_indices=()):
    out = []
    for k, a in enumerate(args):
        if isinstance(a, np.ndarray):
            t = nbgrad.from_numpy(a)
            if k in grad_indices:
                t.requires_grad_()
            out.append(t)
        else:
            out.append(a)
    return out


def forward_bytes(row, args, dtype):
    """Bytes an ideal forward reads and writes (each element once)."""
    n = next(a.size for a in args if isinstance(a, np.ndarray))
    out_itemsize = 1 if row.result == "bool" else np.dtype(dtype).itemsize
    return sum(a.nbytes for a in args if isinstance(a, np.ndarray)) + n * out_itemsize


def backward_bytes(row, args, dtype):
    """Bytes an ideal fused backward reads (``g`` and what the derivatives
    read) and writes (one gradient per input that gets one)."""
    itemsize = np.dtype(dtype).itemsize
    n = next(a.size for a in args if isinstance(a, np.ndarray))
    wanted = grad_inputs(row, args)
    reads = {"g"} | {p for i in wanted for p in row.grad_params(i)}
    total = 0
    for name in reads:
        if name in ("g", "out"):
            total += n * itemsize
        else:
            a = args[row.inputs.index(name)]
            if isinstance(a, np.ndarray):
                total += a.nbytes
    return total + len(wanted) * n * itemsize


class LastCase:
    """Keeps the data of the last benchmark case only: asv re-runs ``setup``
    before every sample, and re-creating 10^7-element inputs each time would
    dominate the run, while keeping every case would exhaust memory."""

    def __init__(self):
        self.key, self.value = None, None

    def get(self, key, make):
        if key != self.key:
            self.key, self.value = None, None  # free the old case first
            self.value, self.key = make(), key
        return self.value


# ----------------------------------------------------------------- tiny chain
CHAIN_N = 16
CHAIN_OPS = 10


def chain(x, w, b):
    """Ten elementwise ops; the same code runs on nbgrad, torch and the
    NumPy tape in ``compare``."""
    y = x * w
    y = y + b
    y = y.sigmoid()
    y = y.tanh()
    y = y - x
    y = y.relu()
    y = y * w
    y = y.exp()
    y = -y
    y = y.sin()
    return y


def chain_inputs(seed=0, n=CHAIN_N, dtype="float32"):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, n).astype(dtype) for _ in range(3)] + [
        rng.uniform(-1, 1, n).astype(dtype)]  # x, w, b, upstream gradient


# ---------------------------------------------------------------- MLP step
BATCH, IN, HIDDEN, OUT = 256, 784, 256, 10
LR = 0.1


def mlp_data(seed=0, dtype="float32"):
    """x, labels, [w1, b1, w2, b2] as NumPy arrays (fresh copies each call)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((BATCH, IN)).astype(dtype)
    labels = rng.integers(0, OUT, BATCH).astype(np.int64)
    params = [
        (rng.standard_normal((IN, HIDDEN)) / np.sqrt(IN)).astype(dtype),
        np.zeros(HIDDEN, dtype),
        (rng.standard_normal((HIDDEN, OUT)) / np.sqrt(HIDDEN)).astype(dtype),
        np.zeros(OUT, dtype),
    ]
    return x, labels, params


def make_train_step(lib, x, labels, params, lr=LR):
    """One SGD step of a 784-256-10 ReLU MLP with cross-entropy, written as a
    user writes it: ``nn.Sequential`` of ``Linear``/``ReLU``/``Linear``,
    ``F.cross_entropy`` and ``optim.SGD``. ``lib`` is ``nbgrad`` or
    ``torch`` (the code is the same); ``x``, ``labels`` are ``lib`` tensors and
    ``params`` the NumPy arrays of ``mlp_data`` (copied into the layers, so
    every framework starts from the same weights and the same loss)."""
    nn = lib.nn
    model = nn.Sequential(nn.Linear(IN, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, OUT))
    with lib.no_grad():
        for p, value in zip(model.parameters(), linear_layout(params)):
            p.copy_(lib.from_numpy(value))
    optimizer = lib.optim.SGD(model.parameters(), lr=lr)
    cross_entropy = nn.functional.cross_entropy

    def step():
        optimizer.zero_grad()
        loss = cross_entropy(model(x), labels)
        loss.backward()
        optimizer.step()
        return loss

    return step


def linear_layout(params):
    """``mlp_data``'s ``[w1, b1, w2, b2]`` (weights ``(in, out)``, as a NumPy
    user multiplies ``x @ w``) in ``nn.Linear``'s layout: weights ``(out, in)``."""
    return [np.ascontiguousarray(p.T) for p in params]


def nbgrad_train_step(seed=0):
    x, labels, params = mlp_data(seed)
    return make_train_step(nbgrad, nbgrad.from_numpy(x), nbgrad.from_numpy(labels), params)


def mygrad_train_step(mygrad, seed=0, lr=LR):
    """The same step in MyGrad, as its documentation writes one: raw tensors
    (MyGrad has no layer or optimizer classes), its fused
    ``softmax_crossentropy``, and the update on ``.data`` (which MyGrad does
    not record)."""
    from mygrad.nnet import relu, softmax_crossentropy
    x, labels, params = mlp_data(seed)
    params = [mygrad.tensor(p) for p in params]
    w1, b1, w2, b2 = params

    def step():
        logits = relu(x @ w1 + b1) @ w2 + b2
        loss = softmax_crossentropy(logits, labels)
        loss.backward()
        for p in params:
            p.data -= lr * p.grad
        return loss

    return step
