"""The gate arithmetic of the recurrent cells, written once as kernel source
that each backend wraps in its own loop (``cpu/recurrent.py``: Numba loops
over 2-D arrays; ``cuda/recurrent.py``: one thread per element of flat
buffers).

A step works on (B, width) arrays for B rows and a hidden size H; the
element (b, j) of array ``x`` is written ``X(b, column)``. Forward steps
take the two products of the step (``gi``: input by weight_ih plus the
biases folded in; ``gh``: hidden state by weight_hh) and write the new
state and a workspace of gate values; backward steps read the workspace
and write the gradients of both products (equal for LSTM and for the r, z
gates of GRU) and of the previous state, in one pass.

LSTM (PyTorch's gate order i, f, g, o): ``hc`` is [h | c] (B, 2H), the
workspace [i | f | g | o | tanh(c)] (B, 5H). GRU (r, z, n): ``gh`` holds
its bias b_hh (the n gate multiplies it by r), the workspace is
[r | z | n | gh_n] (B, 4H). Plain RNN: the new state is tanh or relu of
``gi + gh``.
"""

KERNELS = {
    # name: (array parameters, scalar parameters, body). The body uses no float
    # literal next to array values (a float32 kernel would compute in float64):
    # SIGMOID, TANH and ZERO are each backend's (vectorizable scalar math on the CPU).
    "lstm_forward": (["gi", "gh", "cp", "hc", "ws"], [], """
i = SIGMOID(GI(b, j) + GH(b, j))
f = SIGMOID(GI(b, H + j) + GH(b, H + j))
g = TANH(GI(b, 2 * H + j) + GH(b, 2 * H + j))
o = SIGMOID(GI(b, 3 * H + j) + GH(b, 3 * H + j))
c = f * CP(b, j) + i * g
tc = TANH(c)
HC(b, j) = o * tc
HC(b, H + j) = c
WS(b, j) = i
WS(b, H + j) = f
WS(b, 2 * H + j) = g
WS(b, 3 * H + j) = o
WS(b, 4 * H + j) = tc
"""),
    "lstm_backward": (["dhc", "dh", "dc", "cp", "ws", "dg", "dcp"], [], """
i = WS(b, j)
f = WS(b, H + j)
g = WS(b, 2 * H + j)
o = WS(b, 3 * H + j)
tc = WS(b, 4 * H + j)
dht = DHC(b, j) + DH(b, j)
dct = DHC(b, H + j) + DC(b, j) + dht * (o - o * tc * tc)
DG(b, j) = dct * g * (i - i * i)
DG(b, H + j) = dct * CP(b, j) * (f - f * f)
DG(b, 2 * H + j) = dct * (i - i * g * g)
DG(b, 3 * H + j) = dht * tc * (o - o * o)
DCP(b, j) = dct * f
"""),
    "gru_forward": (["gi", "gh", "hp", "ho", "ws"], [], """
r = SIGMOID(GI(b, j) + GH(b, j))
z = SIGMOID(GI(b, H + j) + GH(b, H + j))
ghn = GH(b, 2 * H + j)
n = TANH(GI(b, 2 * H + j) + r * ghn)
HO(b, j) = n + z * (HP(b, j) - n)
WS(b, j) = r
WS(b, H + j) = z
WS(b, 2 * H + j) = n
WS(b, 3 * H + j) = ghn
"""),
    "gru_backward": (["dho", "dh", "hp", "ws", "dgi", "dgh", "dhp"], [], """
r = WS(b, j)
z = WS(b, H + j)
n = WS(b, 2 * H + j)
ghn = WS(b, 3 * H + j)
dht = DHO(b, j) + DH(b, j)
a = dht - dht * z
dn = a - a * n * n
dz = dht * (HP(b, j) - n) * (z - z * z)
dr = dn * ghn * (r - r * r)
DGI(b, j) = dr
DGI(b, H + j) = dz
DGI(b, 2 * H + j) = dn
DGH(b, j) = dr
DGH(b, H + j) = dz
DGH(b, 2 * H + j) = dn * r
DHP(b, j) = dht * z
"""),
    "rnn_forward": (["gi", "gh", "ho"], ["relu"], """
v = GI(b, j) + GH(b, j)
if relu:
    HO(b, j) = v if (v > ZERO(v) or v != v) else ZERO(v)
else:
    HO(b, j) = TANH(v)
"""),
    "rnn_backward": (["dho", "dh", "hs", "dg"], ["relu"], """
d = DHO(b, j) + DH(b, j)
h = HS(b, j)
if relu:
    DG(b, j) = d if h > ZERO(h) else ZERO(d)
else:
    DG(b, j) = d - d * h * h
"""),
}

# The hidden size H of each kernel: the width of this array.
HIDDEN_FROM = {"lstm_forward": "cp", "lstm_backward": "cp", "gru_forward": "hp",
               "gru_backward": "hp", "rnn_forward": "ho", "rnn_backward": "dho"}
