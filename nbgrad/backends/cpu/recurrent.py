"""Fused recurrent cell steps on the CPU: one Numba loop per step computes
every gate, the new state and the workspace (forward) or every gradient
(backward). The arithmetic is ``backends.recurrent_source``'s."""
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


# The LSTM and GRU steps, staged: per row, one loop per gate range and per stage,
# each writing one array, which LLVM vectorizes (one loop writing every output at
# once stays scalar: it cannot rule out their overlap, and the scalar math then
# costs ~10x; a backward step took 3x as long). Same arithmetic as
# recurrent_source's, to the bit; the plain RNN's steps are generated from it.
_STAGED = '''

@numba.njit(cache=True, nogil=True, error_model="numpy")
def lstm_forward(gi, gh, cp, hc, ws):
    B, H = cp.shape
    for b in range(B):
        gir, ghr, cpr, hcr, wsr = gi[b], gh[b], cp[b], hc[b], ws[b]
        for j in range(2 * H):
            wsr[j] = sigmoid(gir[j] + ghr[j])
        for j in range(2 * H, 3 * H):
            wsr[j] = tanh(gir[j] + ghr[j])
        for j in range(3 * H, 4 * H):
            wsr[j] = sigmoid(gir[j] + ghr[j])
        for j in range(H):
            hcr[H + j] = wsr[H + j] * cpr[j] + wsr[j] * wsr[2 * H + j]
        for j in range(H):
            wsr[4 * H + j] = tanh(hcr[H + j])
        for j in range(H):
            hcr[j] = wsr[3 * H + j] * wsr[4 * H + j]


@numba.njit(cache=True, nogil=True, error_model="numpy")
def gru_forward(gi, gh, hp, ho, ws):
    B, H = hp.shape
    for b in range(B):
        gir, ghr, hpr, hor, wsr = gi[b], gh[b], hp[b], ho[b], ws[b]
        for j in range(2 * H):
            wsr[j] = sigmoid(gir[j] + ghr[j])
        for j in range(H):
            wsr[3 * H + j] = ghr[2 * H + j]
        for j in range(H):
            wsr[2 * H + j] = gir[2 * H + j] + wsr[j] * wsr[3 * H + j]
        for j in range(2 * H, 3 * H):
            wsr[j] = tanh(wsr[j])
        for j in range(H):
            hor[j] = wsr[2 * H + j] + wsr[H + j] * (hpr[j] - wsr[2 * H + j])


@numba.njit(cache=True, nogil=True, error_model="numpy")
def lstm_backward(dhc, dh, dc, cp, ws, dg, dcp):
    B, H = cp.shape
    dht = np.empty(H, dg.dtype)  # (the staged values one row needs again)
    dct = np.empty(H, dg.dtype)
    for b in range(B):
        dhcr, dhr, dcr, cpr, wsr, dgr, dcpr = dhc[b], dh[b], dc[b], cp[b], ws[b], dg[b], dcp[b]
        for j in range(H):
            dht[j] = dhcr[j] + dhr[j]
        for j in range(H):
            o = wsr[3 * H + j]
            tc = wsr[4 * H + j]
            dct[j] = dhcr[H + j] + dcr[j] + dht[j] * (o - o * tc * tc)
        for j in range(H):
            i = wsr[j]
            dgr[j] = dct[j] * wsr[2 * H + j] * (i - i * i)
        for j in range(H):
            f = wsr[H + j]
            dgr[H + j] = dct[j] * cpr[j] * (f - f * f)
        for j in range(H):
            i = wsr[j]
            g = wsr[2 * H + j]
            dgr[2 * H + j] = dct[j] * (i - i * g * g)
        for j in range(H):
            o = wsr[3 * H + j]
            dgr[3 * H + j] = dht[j] * wsr[4 * H + j] * (o - o * o)
        for j in range(H):
            dcpr[j] = dct[j] * wsr[H + j]


@numba.njit(cache=True, nogil=True, error_model="numpy")
def gru_backward(dho, dh, hp, ws, dgi, dgh, dhp):
    B, H = hp.shape
    dht = np.empty(H, dgi.dtype)
    dn = np.empty(H, dgi.dtype)
    for b in range(B):
        dhor, dhr, hpr, wsr, dgir, dghr, dhpr = dho[b], dh[b], hp[b], ws[b], dgi[b], dgh[b], dhp[b]
        for j in range(H):
            dht[j] = dhor[j] + dhr[j]
        for j in range(H):
            z = wsr[H + j]
            n = wsr[2 * H + j]
            a = dht[j] - dht[j] * z
            dn[j] = a - a * n * n
        for j in range(H):
            r = wsr[j]
            dgir[j] = dn[j] * wsr[3 * H + j] * (r - r * r)
        for j in range(H):
            z = wsr[H + j]
            dgir[H + j] = dht[j] * (hpr[j] - wsr[2 * H + j]) * (z - z * z)
        for j in range(H):
            dgir[2 * H + j] = dn[j]
        for j in range(2 * H):
            dghr[j] = dgir[j]
        for j in range(H):
            dghr[2 * H + j] = dn[j] * wsr[j]
        for j in range(H):
            dhpr[j] = dht[j] * wsr[H + j]


@numba.njit(cache=True, nogil=True, error_model="numpy")
def rnn_forward(gi, gh, ho, relu):
    B, H = ho.shape
    for b in range(B):
        gir, ghr, hor = gi[b], gh[b], ho[b]
        if relu:
            for j in range(H):
                v = gir[j] + ghr[j]
                hor[j] = v if (v > zero(v) or v != v) else zero(v)
        else:
            for j in range(H):
                hor[j] = tanh(gir[j] + ghr[j])
'''


def _source():
    parts = ["import numba\nimport numpy as np\n", _STAGED]
    for name, (arrays, scalars, body) in KERNELS.items():
        if name.startswith(("lstm_", "gru_")) or name.endswith("_forward"):
            continue
        body = body.replace("SIGMOID(", "sigmoid(").replace("TANH(", "tanh(")
        body = body.replace("ZERO(", "zero(")
        body = re.sub(r"\b([A-Z]+)\(b, ", lambda m: f"{m.group(1).lower()}[b, ", body)
        body = re.sub(r"(\[b, [^\]\n]*?)\)", r"\1]", body)
        lines = "\n".join("            " + line for line in body.strip().splitlines())
        parts.append(
            f"\n@numba.njit(cache=True, nogil=True, error_model='numpy')\n"
            f"def {name}({', '.join(arrays + scalars)}):\n"
            f"    B, H = {HIDDEN_FROM[name]}.shape\n"
            f"    for b in range(B):\n"
            f"        for j in range(H):\n"
            f"            pass\n{lines}\n")
    return "\n".join(parts)


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
