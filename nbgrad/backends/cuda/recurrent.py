"""Fused recurrent cell steps on the device: one kernel launch per step,
one thread per (row, hidden unit), computing every gate, the new state and
the workspace (forward) or every gradient (backward). The arithmetic is
``backends.recurrent_source``'s; arrays are 2-D views whose rows may be
strided (a state inside [h | c]) but whose columns are contiguous."""
import re

from . import _runtime, codegen
from ..recurrent_source import HIDDEN_FROM, KERNELS


def _kernel(name):
    def make():
        arrays, scalars, body = KERNELS[name]
        body = re.sub(r"SIGMOID\(([^\n]*)\)$", r"1.0 / (1.0 + math.exp(-(\1)))", body,
                      flags=re.M)
        body = body.replace("TANH(", "math.tanh(").replace("ZERO(v)", "0.0").replace(
            "ZERO(h)", "0.0").replace("ZERO(d)", "0.0")
        body = re.sub(r"\b([A-Z]+)\(b, ", lambda m: f"{m.group(1).lower()}[{m.group(1).lower()}"
                      f"_o + b * {m.group(1).lower()}_s + ", body)
        body = re.sub(r"(_s \+ [^\]\n]*?)\)", r"\1]", body)
        params = ", ".join(f"{a}, {a}_o, {a}_s" for a in arrays)
        lines = "\n".join("        " + line for line in body.strip().splitlines())
        source = (f"@cuda.jit({codegen.jit_options()})\n"
                  f"def kernel(n, H, {params}{''.join(', ' + s for s in scalars)}):\n"
                  "    k = cuda.grid(1)\n"
                  "    step = cuda.gridsize(1)\n"
                  "    while k < n:\n"
                  "        b = k // H\n"
                  "        j = k - b * H\n"
                  f"{lines}\n"
                  "        k += step\n")
        return codegen.build(f"recurrent_{name}", source).kernel
    return codegen.cached(("recurrent", name), make)


def _launch(name, arrays, scalars=()):
    hidden = arrays[KERNELS[name][0].index(HIDDEN_FROM[name])]
    rows, h = hidden.shape
    n = rows * h
    if not n:
        return
    args = [n, h]
    for a in arrays:
        if a.ndim != 2 or (a.shape[1] > 1 and a.estrides[1] != 1):
            raise ValueError(f"{name}: operands must be 2-D with contiguous rows")
        args += [a._buf, a.offset, a.estrides[0]]
    blocks, threads = _runtime.grid_for(n)
    _kernel(name)[blocks, threads](*args, *scalars)


def lstm_cell_forward(gi, gh, c, hc, ws):
    _launch("lstm_forward", [gi, gh, c, hc, ws])


def lstm_cell_backward(dhc, dh, dc, c, ws, dgates, dc_prev):
    _launch("lstm_backward", [dhc, dh, dc, c, ws, dgates, dc_prev])


def gru_cell_forward(gi, gh, h, h_out, ws):
    _launch("gru_forward", [gi, gh, h, h_out, ws])


def gru_cell_backward(dh_out, dh, h, ws, dgi, dgh, dh_prev):
    _launch("gru_backward", [dh_out, dh, h, ws, dgi, dgh, dh_prev])


def rnn_cell_forward(gi, gh, h_out, relu):
    _launch("rnn_forward", [gi, gh, h_out], (bool(relu),))


def rnn_cell_backward(dh_out, dh, h, dgates, relu):
    _launch("rnn_backward", [dh_out, dh, h, dgates], (bool(relu),))
