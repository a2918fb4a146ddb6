"""Fused recurrent cell steps on the CPU: one Numba kernel per step computes
every gate, the new state and the workspace (forward) or every gradient
(backward), generated from ``backends.recurrent_source``'s arithmetic."""
import functools
import re

import numba

from ...declarations import scalar_math
from ..kernel_source import load_module
from ..recurrent_source import HIDDEN_FROM, KERNELS

# nbgrad's vectorizable scalar math, inlined into the loops (as the rows' kernels do):
# libm's expf/tanhf calls would block SIMD.
_HELPERS = {"sigmoid": scalar_math.sigmoid, "tanh": scalar_math.tanh, "zero": scalar_math.zero}


def _inline(fn):
    return numba.njit(inline="always", cache=False)(fn)


# Straight-line steps (LSTM, GRU) run staged: per row, each statement is a loop of
# its own, which LLVM vectorizes; one loop writing every output at once stays
# scalar (it cannot rule out their overlap, and the scalar math then costs ~10x;
# a backward step took 3x as long). A scalar is computed straight into the output
# it is stored to, read where it was read from, or else kept in a row-long
# temporary; the arithmetic, and so every result bit, is recurrent_source's.
# Steps with a branch (the plain RNN's relu or tanh) run as one loop.
_ARRAY = re.compile(r"\b([A-Z]+)\(b, ((?:[^()]|\([^()]*\))*)\)")  # X(b, col)
_FUNCTIONS = (("SIGMOID(", "sigmoid("), ("TANH(", "tanh("), ("ZERO(", "zero("))
_JIT = "@numba.njit(cache=True, nogil=True, error_model='numpy')"


def _row_refs(text):
    """``X(b, col)`` as ``x_r[col]``, an element of array x's row view."""
    return _ARRAY.sub(lambda m: f"{m.group(1).lower()}_r[{m.group(2)}]", text)


def _math(text):
    for name, function in _FUNCTIONS:
        text = text.replace(name, function)
    return text


def _mentions(scalar):
    """A pattern for the scalar variable ``scalar`` (not a name it begins, nor its temporary)."""
    return re.compile(rf"\b{scalar}\b(?![_\[])")


def _staged(name, arrays, body):
    """The straight-line ``body`` as a kernel of one loop per statement (see above)."""
    statements = [tuple(part.strip() for part in line.split("=", 1))
                  for line in body.strip().splitlines()]
    stored = {_ARRAY.match(t).group(1) for t, _ in statements if _ARRAY.match(t)}
    loaded = {m.group(1) for _, v in statements for m in _ARRAY.finditer(v)}
    held, loads, temporaries, loops = {}, {}, [], []  # held: scalar -> where its value is
    for k, (target, value) in enumerate(statements):
        if _ARRAY.match(target):
            if held.get(value) != _row_refs(target):  # (else computed there already)
                loops.append((_row_refs(target), value))
            continue
        read = _ARRAY.fullmatch(value)
        if read and read.group(1) not in stored:  # loaded in each loop that reads it
            loads[target] = _row_refs(value)
            continue
        # Its home: an output it is stored to, which nothing loads and this loop does not
        # read through another scalar (a loop reading and writing one array stays scalar).
        read_here = {at.split("_r[")[0] for scalar, at in held.items()
                     if "_r[" in at and _mentions(scalar).search(value)}
        home = next((t for t, v in statements[k + 1:] if v == target and _ARRAY.match(t)
                     and _ARRAY.match(t).group(1) not in loaded
                     and _ARRAY.match(t).group(1).lower() not in read_here), None)
        if home is None:
            temporaries.append(target)
        held[target] = f"{target}_[j]" if home is None else _row_refs(home)
        loops.append((held[target], value))
    lines = [_JIT, f"def {name}({', '.join(arrays)}):", f"    B, H = {HIDDEN_FROM[name]}.shape"]
    lines += [f"    {t}_ = np.empty(H, {arrays[0]}.dtype)" for t in temporaries]
    lines += ["    for b in range(B):",
              f"        {', '.join(a + '_r' for a in arrays)} = {', '.join(a + '[b]' for a in arrays)}"]
    for target, value in loops:
        value = _row_refs(_math(value))
        for scalar, at in held.items():
            value = _mentions(scalar).sub(at, value)
        lines.append("        for j in range(H):")
        lines += [f"            {scalar} = {at}" for scalar, at in loads.items()
                  if _mentions(scalar).search(value)]
        lines.append(f"            {target} = {value}")
    return "\n".join(lines)


def _one_loop(name, arrays, scalars, body):
    body = re.sub(r"\b([A-Z]+)\(b, ", lambda m: f"{m.group(1).lower()}[b, ",
                  _math(body))
    body = re.sub(r"(\[b, [^\]\n]*?)\)", r"\1]", body)
    lines = "\n".join("            " + line for line in body.strip().splitlines())
    return (f"{_JIT}\ndef {name}({', '.join(arrays + scalars)}):\n"
            f"    B, H = {HIDDEN_FROM[name]}.shape\n"
            f"    for b in range(B):\n"
            f"        for j in range(H):\n"
            f"            pass\n{lines}")


def _source():
    parts = ["import numba\nimport numpy as np\n"]
    for name, (arrays, scalars, body) in KERNELS.items():
        straight = not scalars and "if " not in body
        parts.append(_staged(name, arrays, body) if straight
                     else _one_loop(name, arrays, scalars, body))
    return "\n\n\n".join(parts) + "\n"


@functools.lru_cache(maxsize=None)
def kernels():
    """The compiled steps, loaded (from the on-disk cache) on first use."""
    return load_module(_source(), _HELPERS, _inline, "cpu_recurrent")


def lstm_cell_forward(gi, gh, c, hc, ws):
    kernels().lstm_forward(gi, gh, c, hc, ws)


def lstm_cell_backward(dhc, dh, dc, c, ws, dgates, dc_prev):
    kernels().lstm_backward(dhc, dh, dc, c, ws, dgates, dc_prev)


def gru_cell_forward(gi, gh, h, h_out, ws):
    kernels().gru_forward(gi, gh, h, h_out, ws)


def gru_cell_backward(dh_out, dh, h, ws, dgi, dgh, dh_prev):
    kernels().gru_backward(dh_out, dh, h, ws, dgi, dgh, dh_prev)


def rnn_cell_forward(gi, gh, h_out, relu):
    kernels().rnn_forward(gi, gh, h_out, bool(relu))


def rnn_cell_backward(dh_out, dh, h, dgates, relu):
    kernels().rnn_backward(dh_out, dh, h, dgates, bool(relu))
