"""``RNN``, ``LSTM``, ``GRU`` and their cells, as ``torch.nn``'s (parameter
names, layout and initialisation, so state dicts load both ways).

One layer in one direction is one autograd node (``MkldnnRnnLayerBackward``,
PyTorch's CPU name). Its forward is one GEMM for the input products of every
time step (biases folded in), then per step one GEMM for the hidden product
and one fused backend kernel for the gates and the new state (see
``nbgrad/backends/recurrent_source.py``). Its output holds every step's state
([h | c] for LSTM), which the layer slices into the output sequence and the
final states. Its backward runs the fused backward kernel and one GEMM per
step (the recurrent gradient), then the weight and input gradients as one
GEMM each over all steps. A backward that builds a graph
(``create_graph=True``) recomputes the layer from taped ops and
differentiates that.
"""
import math
import numbers
import warnings

from .. import creation
from ..ops.arrays import ops_for
from ..ops.dual import tangent_rule
from ..tape import grad_mode
from ..tape.graph import Node
from ..tensor import Tensor
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _recording(tensors):
    return grad_mode.is_grad_enabled() and any(t is not None and t.requires_grad
                                               for t in tensors)


def _layer_forward(backend, mode, x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse):
    """Raw forward of one layer and direction over (T, B, I) ``x``: (Z, WS)."""
    t_len, batch, _ = x.shape
    hidden = w_hh.shape[1]
    gates = _GATES[mode]
    gi = backend.matmul(x.reshape(t_len * batch, -1), w_ih.T)
    if b_ih is not None:
        gi += b_ih
        if mode != "GRU":  # GRU's b_hh stays in the hidden product (r multiplies its n part)
            gi += b_hh
    gi = gi.reshape(t_len, batch, gates * hidden)
    width = 2 * hidden if mode == "LSTM" else hidden
    z = backend.empty((t_len, batch, width), x.dtype)
    ws = None
    if mode == "LSTM":
        ws = backend.empty((t_len, batch, 5 * hidden), x.dtype)
    elif mode == "GRU":
        ws = backend.empty((t_len, batch, 4 * hidden), x.dtype)
    h, c = h0, c0
    w_hh_t = backend.ascontiguous(w_hh.T)  # once: every step's product reads it (~20% faster)
    for t in (range(t_len - 1, -1, -1) if reverse else range(t_len)):
        gh = backend.matmul(h, w_hh_t)
        if mode == "LSTM":
            backend.lstm_cell_forward(gi[t], gh, c, z[t], ws[t])
            h, c = z[t][:, :hidden], z[t][:, hidden:]
        elif mode == "GRU":
            if b_hh is not None:
                gh += b_hh
            backend.gru_cell_forward(gi[t], gh, h, z[t], ws[t])
            h = z[t]
        else:
            backend.rnn_cell_forward(gi[t], gh, z[t], mode == "RNN_RELU")
            h = z[t]
    return z, ws


class MkldnnRnnLayerBackward(Node):
    """One recurrent layer in one direction (inputs: x, h0, [c0], w_ih, w_hh,
    [b_ih, b_hh]; output: every step's state)."""

    __slots__ = ("mode", "reverse", "ws", "z", "slots", "backend")
    op_name = "MkldnnRnnLayer"
    returns_fresh = True

    def __init__(self, mode, reverse, tensors, z, ws, backend):
        present = [t for t in tensors if t is not None]
        super().__init__(present)
        self.slots = [None if t is None else k for k, t in enumerate(tensors)]
        self.save(*present)
        self.mode, self.reverse, self.z, self.ws, self.backend = mode, reverse, z, ws, backend

    def release_saved(self):
        super().release_saved()
        self.z = self.ws = None

    def _unpack(self, values):
        out, it = [], iter(values)
        for slot in self.slots:
            out.append(None if slot is None else next(it))
        return out  # x, h0, c0, w_ih, w_hh, b_ih, b_hh

    def backward(self, grad):
        xp = ops_for(grad)
        values = self._unpack(self.saved_values(xp.graph))
        if xp.graph:
            return self._taped_backward(grad, values)
        x, h0, c0, w_ih, w_hh, b_ih, b_hh = values
        be = self.backend
        mode, z, ws = self.mode, self.z, self.ws
        t_len, batch, _ = x.shape
        hidden = w_hh.shape[1]
        dz = be.ascontiguous(grad)
        gates = _GATES[mode]
        dg = be.empty((t_len, batch, gates * hidden), x.dtype)
        dgh = be.empty((t_len, batch, 3 * hidden), x.dtype) if mode == "GRU" else dg
        dh = be.zeros((batch, hidden), x.dtype)
        dc = be.zeros((batch, hidden), x.dtype) if mode == "LSTM" else None
        order = range(t_len) if self.reverse else range(t_len - 1, -1, -1)
        step = 1 if self.reverse else -1  # where the previous state is
        for t in order:
            p = t + step
            first = p < 0 or p >= t_len
            if mode == "LSTM":
                c_prev = c0 if first else z[p][:, hidden:]
                dc_prev = be.empty((batch, hidden), x.dtype)
                be.lstm_cell_backward(dz[t], dh, dc, c_prev, ws[t], dg[t], dc_prev)
                dh, dc = be.matmul(dg[t], w_hh), dc_prev
            elif mode == "GRU":
                h_prev = h0 if first else z[p]
                direct = be.empty((batch, hidden), x.dtype)
                be.gru_cell_backward(dz[t], dh, h_prev, ws[t], dg[t], dgh[t], direct)
                dh = be.matmul(dgh[t], w_hh)
                dh += direct
            else:
                be.rnn_cell_backward(dz[t], dh, z[t], dg[t], mode == "RNN_RELU")
                dh = be.matmul(dg[t], w_hh)
        dg2 = dg.reshape(t_len * batch, -1)
        dgh2 = dgh.reshape(t_len * batch, -1)
        grads = [None] * 7
        if self._wants(0):
            grads[0] = be.matmul(dg2, w_ih).reshape(x.shape)
        grads[1], grads[2] = dh, dc
        if self._wants(3):
            grads[3] = be.matmul(dg2.T, x.reshape(t_len * batch, -1))
        if self._wants(4):
            prev = be.empty((t_len, batch, hidden), x.dtype)
            states = z[:, :, :hidden] if mode == "LSTM" else z
            if self.reverse:
                prev[t_len - 1] = h0
                prev[:t_len - 1] = states[1:]
            else:
                prev[0] = h0
                prev[1:] = states[:t_len - 1]
            grads[4] = be.matmul(dgh2.T, prev.reshape(t_len * batch, hidden))
        if b_ih is not None:
            grads[5] = be.column_sums(dg2) if self._wants(5) else None
            grads[6] = be.column_sums(dgh2) if self._wants(6) else None
        return [g for g, slot in zip(grads, self.slots) if slot is not None]

    def _wants(self, k):
        slot = self.slots[k]
        if slot is None:
            return False
        return self.needs_grad(sum(1 for s in self.slots[:k] if s is not None))

    def _taped_backward(self, grad, values):
        """The gradients as taped ops (``create_graph=True``): the layer
        recomputed from taped ops and differentiated."""
        from ..autograd import grad as autograd_grad
        inputs = [v for v in values if v is not None]
        wanted = [k for k, v in enumerate(inputs) if self.needs_grad(k) and v.requires_grad]
        grads = [None] * len(inputs)
        if not wanted:
            return grads
        with grad_mode.enable_grad():
            z = _composite_layer(self.mode, *values, self.reverse)
            found = autograd_grad([z], [inputs[k] for k in wanted], [grad], create_graph=True,
                                  allow_unused=True)
        for k, f in zip(wanted, found):
            grads[k] = f if f is not None else creation.zeros(
                *inputs[k].shape, dtype=inputs[k].dtype, device=inputs[k].device)
        return grads


def _composite_layer(mode, x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse):
    """The layer's output Z from taped Tensor ops (for higher-order gradients)."""
    t_len = x.shape[0]
    hidden = w_hh.shape[1]
    h, c = h0, c0
    states = [None] * t_len
    for t in (range(t_len - 1, -1, -1) if reverse else range(t_len)):
        gi = F.linear(x[t], w_ih, b_ih)
        gh = F.linear(h, w_hh, b_hh)
        if mode == "LSTM":
            a = gi + gh
            i = a[:, :hidden].sigmoid()
            f = a[:, hidden:2 * hidden].sigmoid()
            g = a[:, 2 * hidden:3 * hidden].tanh()
            o = a[:, 3 * hidden:].sigmoid()
            c = f * c + i * g
            h = o * c.tanh()
            states[t] = creation_cat([h, c])
        elif mode == "GRU":
            r = (gi[:, :hidden] + gh[:, :hidden]).sigmoid()
            zg = (gi[:, hidden:2 * hidden] + gh[:, hidden:2 * hidden]).sigmoid()
            n = (gi[:, 2 * hidden:] + r * gh[:, 2 * hidden:]).tanh()
            h = (1 - zg) * n + zg * h
            states[t] = h
        else:
            pre = gi + gh
            h = pre.relu() if mode == "RNN_RELU" else pre.tanh()
            states[t] = h
    from ..ops.joining import stack
    return stack(states, 0)


def creation_cat(parts):
    from ..ops.joining import cat
    return cat(parts, 1)


@tangent_rule()  # forward mode: from its backward
def recurrent_layer(mode, x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse):
    """One layer in one direction over (T, B, I) Tensor ``x``: the Tensor of
    every step's state, (T, B, 2H) [h | c] for LSTM, else (T, B, H)."""
    backend = x._backend
    raw = [None if t is None else t._data for t in (x, h0, c0, w_ih, w_hh, b_ih, b_hh)]
    raw[0] = backend.ascontiguous(raw[0])
    z, ws = _layer_forward(backend, mode, *raw, reverse)
    tensors = [x, h0, c0, w_ih, w_hh, b_ih, b_hh]
    node = None
    if _recording(tensors):
        node = MkldnnRnnLayerBackward(mode, reverse, tensors, z, ws, backend)
    return Tensor._from_op(z, node, x.dtype, backend)


# ------------------------------------------------------------------ modules
class RNNBase(Module):
    """The multi-layer, optionally bidirectional recurrent layers."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or \
                isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=3)
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size:
            raise NotImplementedError("nbgrad's LSTM does not implement proj_size")
        self.mode = mode
        self.input_size, self.hidden_size = input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, proj_size
        gate_size = _GATES[mode] * hidden_size
        directions = 2 if bidirectional else 1
        self._flat_weights_names = []
        for layer in range(num_layers):
            for d in range(directions):
                size_in = input_size if layer == 0 else hidden_size * directions
                suffix = "_reverse" if d == 1 else ""
                shapes = [("weight_ih", (gate_size, size_in)), ("weight_hh",
                                                                (gate_size, hidden_size))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                for name, shape in shapes:
                    full = f"{name}_l{layer}{suffix}"
                    setattr(self, full, Parameter(creation.empty(*shape, dtype=dtype,
                                                                 device=device)))
                    self._flat_weights_names.append(full)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self):
        """PyTorch packs the weights for cuDNN here; nbgrad's layers read them as they are."""

    @property
    def _flat_weights(self):
        return [getattr(self, n) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        per = 4 if self.bias else 2
        names = self._flat_weights_names
        return [[getattr(self, n) for n in names[k:k + per]] for k in range(0, len(names), per)]

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    def _check_hidden(self, hx, expected, batched, message):
        if tuple(hx.shape) != expected:
            raise RuntimeError(f"{message} {expected}, got {list(hx.shape)}")

    def forward(self, input, hx=None):
        name = "LSTM" if self.mode == "LSTM" else ("GRU" if self.mode == "GRU" else "RNN")
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}.forward(): input must be a Tensor, not "
                            f"{type(input).__name__}")
        if input.ndim not in (2, 3):
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.ndim}D instead")
        batched = input.ndim == 3
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")
        x = input if batched else input.unsqueeze(1)
        if batched and self.batch_first:
            x = x.transpose(0, 1)
        batch = x.shape[1]
        directions = 2 if self.bidirectional else 1
        expected = (self.num_layers * directions, batch, self.hidden_size)
        lstm = self.mode == "LSTM"
        if hx is None:
            h0 = creation.zeros(*expected, dtype=input.dtype, device=input.device)
            c0 = h0 if lstm else None
        else:
            if lstm:
                h0, c0 = hx
            else:
                h0, c0 = hx, None
            if not batched:
                for k, h in enumerate([h0] + ([c0] if lstm else [])):
                    if h.ndim != 2:
                        if lstm:
                            raise RuntimeError("For unbatched 2-D input, hx and cx should also be "
                                               f"2-D but got ({h0.ndim}-D, {c0.ndim}-D) tensors")
                        raise RuntimeError("For unbatched 2-D input, hx should also be 2-D but "
                                           f"got {h0.ndim}-D tensor")
                h0 = h0.unsqueeze(1)
                c0 = c0.unsqueeze(1) if lstm else None
            elif h0.ndim != 3 or (lstm and c0.ndim != 3):
                if lstm:
                    raise RuntimeError("For batched 3-D input, hx and cx should also be 3-D but "
                                       f"got ({h0.ndim}-D, {c0.ndim}-D) tensors")
                raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got "
                                   f"{h0.ndim}-D tensor")
            self._check_hidden(h0, expected, batched,
                               "Expected hidden[0] size" if lstm else "Expected hidden size")
            if lstm:
                self._check_hidden(c0, expected, batched, "Expected hidden[1] size")
        if x.dtype is not self.weight_ih_l0.dtype:
            raise RuntimeError(f"input must have the type {self.weight_ih_l0.dtype}, got type "
                               f"{x.dtype}")
        hidden = self.hidden_size
        layer_input = x
        h_n, c_n = [], []
        for layer in range(self.num_layers):
            outs = []
            for d in range(directions):
                suffix = f"_l{layer}" + ("_reverse" if d else "")
                k = layer * directions + d
                z = recurrent_layer(
                    self.mode, layer_input, h0[k], c0[k] if lstm else None,
                    getattr(self, "weight_ih" + suffix), getattr(self, "weight_hh" + suffix),
                    getattr(self, "bias_ih" + suffix) if self.bias else None,
                    getattr(self, "bias_hh" + suffix) if self.bias else None, d == 1)
                last = 0 if d == 1 else -1
                if lstm:
                    outs.append(z[:, :, :hidden])
                    h_n.append(z[last, :, :hidden])
                    c_n.append(z[last, :, hidden:])
                else:
                    outs.append(z)
                    h_n.append(z[last])
            layer_input = outs[0] if directions == 1 else creation_cat3(outs)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_input = F.dropout(layer_input, self.dropout, True)
        from ..ops.joining import stack
        output = layer_input
        h_n = stack(h_n, 0)
        if batched and self.batch_first:
            output = output.transpose(0, 1)
        if not batched:
            output = output.squeeze(1)
            h_n = h_n.squeeze(1)
        if lstm:
            c_n = stack(c_n, 0)
            if not batched:
                c_n = c_n.squeeze(1)
            return output, (h_n, c_n)
        return output, h_n


def creation_cat3(parts):
    from ..ops.joining import cat
    return cat(parts, 2)


class RNN(RNNBase):
    """Elman RNN with tanh or relu, as ``torch.nn.RNN``."""

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             "'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size,
                         hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)


class LSTM(RNNBase):
    """Long short-term memory, as ``torch.nn.LSTM`` (gate order i, f, g, o)."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, proj_size, device, dtype)


class GRU(RNNBase):
    """Gated recurrent unit, as ``torch.nn.GRU`` (gate order r, z, n)."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None):
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, device=device, dtype=dtype)


# -------------------------------------------------------------------- cells
class RNNCellBase(Module):
    def __init__(self, mode, input_size, hidden_size, bias, device=None, dtype=None):
        super().__init__()
        self.mode = mode
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        gate_size = _GATES[mode] * hidden_size
        self.weight_ih = Parameter(creation.empty(gate_size, input_size, dtype=dtype,
                                                  device=device))
        self.weight_hh = Parameter(creation.empty(gate_size, hidden_size, dtype=dtype,
                                                  device=device))
        if bias:
            self.bias_ih = Parameter(creation.empty(gate_size, dtype=dtype, device=device))
            self.bias_hh = Parameter(creation.empty(gate_size, dtype=dtype, device=device))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _step(self, input, hx, cx=None):
        if input.ndim not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got "
                             f"{input.ndim}D instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[-1]} "
                               f"expected {self.input_size}")
        batched = input.ndim == 2
        x = input if batched else input.unsqueeze(0)
        batch = x.shape[0]
        states = []
        for h in ([hx] if cx is None and self.mode != "LSTM" else [hx, cx]):
            if h is None:
                h = creation.zeros(batch, self.hidden_size, dtype=input.dtype,
                                   device=input.device)
            elif not batched:
                h = h.unsqueeze(0)
            if h.shape[0] != batch:
                raise RuntimeError(f"Input batch size {batch} doesn't match hidden0 batch size "
                                   f"{h.shape[0]}")
            if h.shape[1] != self.hidden_size:
                raise RuntimeError(f"hidden0 has inconsistent hidden_size: got {h.shape[1]}, "
                                   f"expected {self.hidden_size}")
            states.append(h)
        z = recurrent_layer(self.mode, x.unsqueeze(0), states[0],
                            states[1] if self.mode == "LSTM" else None, self.weight_ih,
                            self.weight_hh, self.bias_ih, self.bias_hh, False)[0]
        return z, batched


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {nonlinearity}")
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size,
                         hidden_size, bias, device, dtype)

    def forward(self, input, hx=None):
        z, batched = self._step(input, hx)
        return z if batched else z.squeeze(0)


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__("GRU", input_size, hidden_size, bias, device, dtype)

    def forward(self, input, hx=None):
        z, batched = self._step(input, hx)
        return z if batched else z.squeeze(0)


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, bias, device, dtype)

    def forward(self, input, hx=None):
        h, c = (None, None) if hx is None else hx
        z, batched = self._step(input, h, c)
        hidden = self.hidden_size
        h, c = z[:, :hidden], z[:, hidden:]
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]
