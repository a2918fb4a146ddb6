"""``RNN``, ``LSTM``, ``GRU`` and their cells, as ``torch.nn``'s (parameter
names, layout and initialisation, so state dicts load both ways).

One layer in one direction is one autograd node (``MkldnnRnnLayerBackward``,
PyTorch's CPU name). It works on packed (N, I) rows: a ``PackedSequence``'s
data, or a padded (T, B, I) batch seen as T steps of B rows. Its forward is
one GEMM for the input products of every step (biases folded in), then per
step, on that step's rows (the sequences still running, longest first, as
PyTorch's), one GEMM for the hidden product and one fused backend kernel for
the gates and the new state (see ``nbgrad/backends/recurrent_source.py``);
an LSTM with ``proj_size`` adds one GEMM for ``h_r = h @ W_hr^T``. Its
output holds every step's state ([h | c] for LSTM, [h_r | h | c] with a
projection), which the layer slices into the output sequence and the final
states (each sequence's at its own last step). Its backward runs the fused
backward kernel and one GEMM per step (the recurrent gradient), then the
weight and input gradients as one GEMM each over all steps. A backward that
builds a graph (``create_graph=True``) recomputes the layer from taped ops
and differentiates that.
"""
import math
import numbers
import warnings

from .. import creation, dtypes
from ..ops.arrays import ops_for
from ..ops.dual import tangent_rule
from ..ops.registry import FUNCTIONS
from ..tape import grad_mode
from ..tape.graph import Node
from ..tensor import Tensor
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter
from .utils.rnn import PackedSequence

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _recording(tensors):
    return grad_mode.is_grad_enabled() and any(t is not None and t.requires_grad
                                               for t in tensors)


class _Packing:
    """Where each time step's rows lie in packed (N, ...) data: step ``t``
    holds ``sizes[t]`` rows (the sequences longer than ``t``, longest first)
    from ``offsets[t]``. A padded (T, B, ...) batch is the packing with every
    size B. The layer runs its steps in ``order``; the first ``carried(t)``
    rows of step ``t`` continue from the step before it in that order, the
    rest start from the initial state (forward: all of step 0's; reverse:
    those of the sequences whose last step is ``t``)."""

    __slots__ = ("sizes", "offsets", "reverse", "uniform")

    def __init__(self, sizes, reverse):
        self.sizes, self.reverse = sizes, reverse
        self.offsets = [0] * len(sizes)
        for t in range(1, len(sizes)):
            self.offsets[t] = self.offsets[t - 1] + sizes[t - 1]
        self.uniform = all(b == sizes[0] for b in sizes)

    @property
    def order(self):
        steps = len(self.sizes)
        return range(steps - 1, -1, -1) if self.reverse else range(steps)

    def rows(self, t):
        return slice(self.offsets[t], self.offsets[t] + self.sizes[t])

    def before(self, t):
        """The step run just before ``t``, or None."""
        p = t + 1 if self.reverse else t - 1
        return p if 0 <= p < len(self.sizes) else None

    def carried(self, t):
        p = self.before(t)
        return 0 if p is None else min(self.sizes[t], self.sizes[p])

    def final_rows(self):
        """The row of each sequence's last state, in batch order: a slice where
        they are consecutive, else a list."""
        batch, total = self.sizes[0], self.offsets[-1] + self.sizes[-1]
        if self.reverse:
            return slice(0, batch)
        if self.uniform:
            return slice(total - batch, total)
        rows = [0] * batch
        for t, b in enumerate(self.sizes):  # a sequence's last step is the last that holds it
            for i in range(b):
                rows[i] = self.offsets[t] + i
        return rows


def _previous(backend, z, state0, packing, t, cols):
    """The (sizes[t], width) states step ``t`` starts from: rows of the step run
    before it (columns ``cols`` of ``z``), then rows of the initial state."""
    b, k = packing.sizes[t], packing.carried(t)
    if k == 0:
        return state0[:b]
    p = packing.offsets[packing.before(t)]
    if k == b:
        return z[p:p + b, cols]
    out = backend.empty((b, state0.shape[1]), z.dtype)
    out[:k] = z[p:p + k, cols]
    out[k:] = state0[k:b]
    return out


def _widths(mode, hidden, proj):
    """(the output state's width P, the layer output's width): an LSTM row of
    Z is [h | c], with a projection [h_r | h | c] (h_r = h @ W_hr^T)."""
    out = proj or hidden
    if mode != "LSTM":
        return out, hidden
    return out, 2 * hidden + (proj if proj else 0)


def _layer_forward(backend, mode, x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, packing):
    """Raw forward of one layer and direction over packed (N, I) ``x``: (Z, WS)."""
    total = x.shape[0]
    hidden = w_ih.shape[0] // _GATES[mode]
    proj = 0 if w_hr is None else w_hr.shape[0]
    out_w, width = _widths(mode, hidden, proj)
    gi = backend.matmul(x, w_ih.T)
    if b_ih is not None:
        gi += b_ih
        if mode != "GRU":  # GRU's b_hh stays in the hidden product (r multiplies its n part)
            gi += b_hh
    z = backend.empty((total, width), x.dtype)
    ws = None
    if mode == "LSTM":
        ws = backend.empty((total, 5 * hidden), x.dtype)
    elif mode == "GRU":
        ws = backend.empty((total, 4 * hidden), x.dtype)
    w_hh_t = backend.ascontiguous(w_hh.T)  # once: every step's product reads it (~20% faster)
    w_hr_t = None if w_hr is None else backend.ascontiguous(w_hr.T)
    h_cols, c_cols = slice(0, out_w), slice(width - hidden, width)
    for t in packing.order:
        rows = packing.rows(t)
        h = _previous(backend, z, h0, packing, t, h_cols)
        gh = backend.matmul(h, w_hh_t)
        if mode == "LSTM":
            c = _previous(backend, z, c0, packing, t, c_cols)
            backend.lstm_cell_forward(gi[rows], gh, c, z[rows, proj:], ws[rows])
            if proj:
                z[rows, :proj] = backend.matmul(z[rows, proj:proj + hidden], w_hr_t)
        elif mode == "GRU":
            if b_hh is not None:
                gh += b_hh
            backend.gru_cell_forward(gi[rows], gh, h, z[rows], ws[rows])
        else:
            backend.rnn_cell_forward(gi[rows], gh, z[rows], mode == "RNN_RELU")
    return z, ws


def _hand_back(backend, d_prev, d0, packing, t, dtype):
    """Split the gradient of step ``t``'s starting states: the rows that came
    from the initial state into ``d0``; the rest, as the (rows, width)
    gradient of the states of the step run before ``t`` (zero rows where a
    sequence ended there), returned."""
    b, k = packing.sizes[t], packing.carried(t)
    if k < b:
        d0[k:b] = d_prev[k:]
    if k == 0:
        return None
    rows = packing.sizes[packing.before(t)]
    if rows == k:
        return d_prev if k == b else d_prev[:k]
    out = backend.zeros((rows, d_prev.shape[1]), dtype)
    out[:k] = d_prev[:k]
    return out


class MkldnnRnnLayerBackward(Node):
    """One recurrent layer in one direction (inputs: x, h0, [c0], w_ih, w_hh,
    [b_ih, b_hh], [w_hr]; output: every step's state)."""

    __slots__ = ("mode", "packing", "ws", "z", "slots", "backend")
    op_name = "MkldnnRnnLayer"
    returns_fresh = True

    def __init__(self, mode, packing, tensors, z, ws, backend):
        present = [t for t in tensors if t is not None]
        super().__init__(present)
        self.slots = [None if t is None else k for k, t in enumerate(tensors)]
        self.save(*present)
        self.mode, self.packing, self.z, self.ws, self.backend = mode, packing, z, ws, backend

    def release_saved(self):
        super().release_saved()
        self.z = self.ws = None

    def _unpack(self, values):
        out, it = [], iter(values)
        for slot in self.slots:
            out.append(None if slot is None else next(it))
        return out  # x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr

    def backward(self, grad):
        xp = ops_for(grad)
        values = self._unpack(self.saved_values(xp.graph))
        if xp.graph:
            return self._taped_backward(grad, values)
        x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr = values
        be, mode, z, ws, packing = self.backend, self.mode, self.z, self.ws, self.packing
        dtype = z.dtype
        total = z.shape[0]
        x2 = be.ascontiguous(x).reshape(total, -1)
        hidden = w_ih.shape[0] // _GATES[mode]
        proj = 0 if w_hr is None else w_hr.shape[0]
        out_w, width = _widths(mode, hidden, proj)
        dz = be.ascontiguous(grad).reshape(total, width)
        dg = be.empty((total, _GATES[mode] * hidden), dtype)
        dgh = be.empty((total, 3 * hidden), dtype) if mode == "GRU" else dg
        dhr = be.empty((total, proj), dtype) if proj else None  # the gradient of each h_r
        dh0 = be.zeros(h0.shape, dtype)
        dc0 = be.zeros(c0.shape, dtype) if mode == "LSTM" else None
        c_cols = slice(width - hidden, width)
        order = packing.order
        dh = be.zeros((packing.sizes[order[-1]], out_w), dtype)
        dc = be.zeros((packing.sizes[order[-1]], hidden), dtype) if mode == "LSTM" else None
        for t in reversed(order):
            rows = packing.rows(t)
            if mode == "LSTM":
                c_prev = _previous(be, z, c0, packing, t, c_cols)
                dc_prev = be.empty(c_prev.shape, dtype)
                if proj:  # h_r = h @ W_hr^T: its gradient, then h's
                    dr = dhr[rows]
                    dr[:] = dz[rows, :proj]
                    dr += dh
                    dh = be.matmul(dr, w_hr)
                be.lstm_cell_backward(dz[rows, proj:], dh, dc, c_prev, ws[rows], dg[rows],
                                      dc_prev)
                dh_prev = be.matmul(dg[rows], w_hh)
                dc = _hand_back(be, dc_prev, dc0, packing, t, dtype)
            elif mode == "GRU":
                h_prev = _previous(be, z, h0, packing, t, slice(0, out_w))
                direct = be.empty(h_prev.shape, dtype)
                be.gru_cell_backward(dz[rows], dh, h_prev, ws[rows], dg[rows], dgh[rows], direct)
                dh_prev = be.matmul(dgh[rows], w_hh)
                dh_prev += direct
            else:
                be.rnn_cell_backward(dz[rows], dh, z[rows], dg[rows], mode == "RNN_RELU")
                dh_prev = be.matmul(dg[rows], w_hh)
            dh = _hand_back(be, dh_prev, dh0, packing, t, dtype)
        grads = [None] * 8
        if self._wants(0):
            grads[0] = be.matmul(dg, w_ih).reshape(x.shape)
        grads[1], grads[2] = dh0, dc0
        if self._wants(3):
            grads[3] = be.matmul(dg.T, x2)
        if self._wants(4):
            grads[4] = be.matmul(dgh.T, self._previous_states(h0, out_w))
        if b_ih is not None:
            grads[5] = be.column_sums(dg) if self._wants(5) else None
            grads[6] = be.column_sums(dgh) if self._wants(6) else None
        if proj and self._wants(7):
            grads[7] = be.matmul(dhr.T, z[:, proj:proj + hidden])
        return [g for g, slot in zip(grads, self.slots) if slot is not None]

    def _previous_states(self, h0, out_w):
        """(N, P): the hidden state each step's row started from."""
        be, z, packing = self.backend, self.z, self.packing
        total, batch = z.shape[0], packing.sizes[0]
        prev = be.empty((total, out_w), z.dtype)
        if packing.uniform:  # two block copies
            if packing.reverse:
                prev[total - batch:] = h0
                prev[:total - batch] = z[batch:, :out_w]
            else:
                prev[:batch] = h0
                prev[batch:] = z[:total - batch, :out_w]
            return prev
        for t in packing.order:
            prev[packing.rows(t)] = _previous(be, z, h0, packing, t, slice(0, out_w))
        return prev

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
            z = _composite_layer(self.mode, *values, self.packing)
            found = autograd_grad([z], [inputs[k] for k in wanted], [grad.reshape(z.shape)],
                                  create_graph=True, allow_unused=True)
        for k, f in zip(wanted, found):
            grads[k] = f if f is not None else creation.zeros(
                *inputs[k].shape, dtype=inputs[k].dtype, device=inputs[k].device)
        return grads


def _composite_previous(z_steps, state0, packing, t, cols):
    """``_previous`` from taped ops (``z_steps``: each step's Tensor of states)."""
    from ..ops.joining import cat
    b, k = packing.sizes[t], packing.carried(t)
    if k == 0:
        return state0[:b]
    previous = z_steps[packing.before(t)][:k, cols]
    return previous if k == b else cat([previous, state0[k:b]], 0)


def _composite_layer(mode, x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, packing):
    """The layer's output Z (N, width) from taped Tensor ops (for higher-order
    gradients)."""
    from ..ops.joining import cat
    x = x.reshape(-1, x.shape[-1])
    hidden = w_ih.shape[0] // _GATES[mode]
    proj = 0 if w_hr is None else w_hr.shape[0]
    out_w, width = _widths(mode, hidden, proj)
    h_cols, c_cols = slice(0, out_w), slice(width - hidden, width)
    steps = [None] * len(packing.sizes)
    for t in packing.order:
        h = _composite_previous(steps, h0, packing, t, h_cols)
        gi = F.linear(x[packing.rows(t)], w_ih, b_ih)
        gh = F.linear(h, w_hh, b_hh)
        if mode == "LSTM":
            c = _composite_previous(steps, c0, packing, t, c_cols)
            a = gi + gh
            i = a[:, :hidden].sigmoid()
            f = a[:, hidden:2 * hidden].sigmoid()
            g = a[:, 2 * hidden:3 * hidden].tanh()
            o = a[:, 3 * hidden:].sigmoid()
            c = f * c + i * g
            h = o * c.tanh()
            steps[t] = cat(([F.linear(h, w_hr)] if proj else []) + [h, c], 1)
        elif mode == "GRU":
            r = (gi[:, :hidden] + gh[:, :hidden]).sigmoid()
            zg = (gi[:, hidden:2 * hidden] + gh[:, hidden:2 * hidden]).sigmoid()
            n = (gi[:, 2 * hidden:] + r * gh[:, 2 * hidden:]).tanh()
            steps[t] = (1 - zg) * n + zg * h
        else:
            pre = gi + gh
            steps[t] = pre.relu() if mode == "RNN_RELU" else pre.tanh()
    return cat(steps, 0)


@tangent_rule()  # forward mode: from its backward
def recurrent_layer(mode, x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse, w_hr=None,
                    batch_sizes=None):
    """One layer in one direction: the Tensor of every step's state, [h | c]
    for LSTM ([h_r | h | c] with the projection ``w_hr``), else h. ``x`` is
    (T, B, I) and the result (T, B, width); or, given ``batch_sizes`` (a list
    of ints), ``x`` is packed (N, I) data and the result (N, width)."""
    backend = x._backend
    raw = [None if t is None else t._data for t in (x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr)]
    raw[0] = backend.ascontiguous(raw[0])
    shape = None
    if batch_sizes is None:
        shape = raw[0].shape
        batch_sizes = [shape[1]] * shape[0]
        raw[0] = raw[0].reshape(shape[0] * shape[1], shape[2])
    packing = _Packing(batch_sizes, reverse)
    z, ws = _layer_forward(backend, mode, *raw, packing)
    tensors = [x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr]
    node = None
    if _recording(tensors):
        node = MkldnnRnnLayerBackward(mode, packing, tensors, z, ws, backend)
    if shape is not None:
        z = z.reshape(shape[0], shape[1], z.shape[1])
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
        self.mode = mode
        self.input_size, self.hidden_size = input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, proj_size
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        directions = 2 if bidirectional else 1
        self._flat_weights_names, self._all_weights = [], []
        for layer in range(num_layers):
            for d in range(directions):
                size_in = input_size if layer == 0 else real_hidden * directions
                suffix = "_reverse" if d == 1 else ""
                shapes = [("weight_ih", (gate_size, size_in)),
                          ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                names = []
                for name, shape in shapes:
                    full = f"{name}_l{layer}{suffix}"
                    setattr(self, full, Parameter(creation.empty(*shape, dtype=dtype,
                                                                 device=device)))
                    names.append(full)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
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
        return [[getattr(self, n) for n in names] for names in self._all_weights]

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

    def _check_hidden(self, hx, expected, message):
        if tuple(hx.shape) != expected:
            raise RuntimeError(f"{message} {expected}, got {list(hx.shape)}")

    def _check_input(self, input, packed):
        weight = self.weight_ih_l0
        if input.dtype is not weight.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({weight.dtype}). Convert input: input.to({weight.dtype}), or "
                             f"convert model: model.to({input.dtype})")
        expected = 2 if packed else 3
        if input.ndim != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.ndim}")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")

    def _initial_states(self, hx, batched, packed):
        """(h0, c0) from ``hx``, with PyTorch's checks of their dimensions (the
        sizes are checked with the input's)."""
        lstm = self.mode == "LSTM"
        h0, c0 = hx if lstm else (hx, None)
        if packed:
            return h0, c0
        if not batched:
            if h0.ndim != 2 or (lstm and c0.ndim != 2):
                if lstm:
                    raise RuntimeError("For unbatched 2-D input, hx and cx should also be "
                                       f"2-D but got ({h0.ndim}-D, {c0.ndim}-D) tensors")
                raise RuntimeError("For unbatched 2-D input, hx should also be 2-D but "
                                   f"got {h0.ndim}-D tensor")
            return h0.unsqueeze(1), (c0.unsqueeze(1) if lstm else None)
        if h0.ndim != 3 or (lstm and c0.ndim != 3):
            if lstm:
                raise RuntimeError("For batched 3-D input, hx and cx should also be 3-D but "
                                   f"got ({h0.ndim}-D, {c0.ndim}-D) tensors")
            raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got "
                               f"{h0.ndim}-D tensor")
        return h0, c0

    def forward(self, input, hx=None):
        """forward(input, hx=None) -> (output, h_n) or, for LSTM, (output, (h_n, c_n))

        ``input``: (L, N, H_in) (``batch_first``: (N, L, H_in)), (L, H_in)
        unbatched, or a ``PackedSequence`` (the output is then packed the same
        way, and each sequence's final state is the one at its own last step).
        ``hx``: the initial states, (num_layers * directions, N, H_out)
        (``H_out = proj_size`` for an LSTM with a projection), zeros if None."""
        lstm = self.mode == "LSTM"
        name = "LSTM" if lstm else ("GRU" if self.mode == "GRU" else "RNN")
        packed = isinstance(input, PackedSequence)
        sorted_indices = unsorted_indices = sizes = None
        if packed:
            x, batch_sizes, sorted_indices, unsorted_indices = input
            sizes = [int(b) for b in batch_sizes.tolist()]
            batch, batched = sizes[0], True
        else:
            if not isinstance(input, Tensor):
                raise TypeError(f"{name}.forward(): input must be a Tensor, not "
                                f"{type(input).__name__}")
            if input.ndim not in (2, 3):
                tensor = " tensor" if name == "RNN" else ""
                raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.ndim}D"
                                 f"{tensor} instead")
            batched = input.ndim == 3
            x = input if batched else input.unsqueeze(1)
            if batched and self.batch_first:
                x = x.transpose(0, 1)
            batch = x.shape[1]
        directions = 2 if self.bidirectional else 1
        hidden = self.hidden_size
        real_hidden = self.proj_size or hidden
        h_size = (self.num_layers * directions, batch, real_hidden)
        c_size = (self.num_layers * directions, batch, hidden)
        if hx is not None:
            h0, c0 = self._initial_states(hx, batched, packed)
        self._check_input(x, packed)
        if not packed and x.shape[0] == 0:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        if hx is None:
            h0 = creation.zeros(*h_size, dtype=x.dtype, device=x.device)
            c0 = creation.zeros(*c_size, dtype=x.dtype, device=x.device) if lstm else None
        else:
            self._check_hidden(h0, h_size,
                               "Expected hidden[0] size" if lstm else "Expected hidden size")
            if lstm:
                self._check_hidden(c0, c_size, "Expected hidden[1] size")
            if sorted_indices is not None:  # the states follow their sequences' sorting
                h0 = h0.index_select(1, sorted_indices)
                c0 = c0.index_select(1, sorted_indices) if lstm else None
        output, h_n, c_n = self._layers(x, h0, c0, sizes)
        if unsorted_indices is not None:
            h_n = h_n.index_select(1, unsorted_indices)
            c_n = c_n.index_select(1, unsorted_indices) if lstm else None
        if packed:
            output = PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices)
        elif not batched:
            output = output.squeeze(1)
            h_n = h_n.squeeze(1)
            c_n = c_n.squeeze(1) if lstm else None
        elif self.batch_first:
            output = output.transpose(0, 1)
        return (output, (h_n, c_n)) if lstm else (output, h_n)

    def _layers(self, x, h0, c0, sizes):
        """Every layer and direction over (T, B, I) ``x`` or packed (N, I) data
        of ``sizes``: (output, h_n, c_n)."""
        cat, stack = FUNCTIONS["cat"], FUNCTIONS["stack"]  # as bound: with tangent rules
        lstm = self.mode == "LSTM"
        directions = 2 if self.bidirectional else 1
        hidden, proj = self.hidden_size, self.proj_size
        out_w = proj or hidden
        final = None
        if sizes is not None:
            final = [_Packing(sizes, d == 1).final_rows() for d in range(directions)]
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
                    getattr(self, "bias_hh" + suffix) if self.bias else None, d == 1,
                    w_hr=getattr(self, "weight_hr" + suffix) if proj else None,
                    batch_sizes=sizes)
                if sizes is None:
                    last = z[0 if d == 1 else -1]
                elif isinstance(final[d], slice):
                    last = z[final[d]]
                else:
                    last = z.index_select(0, creation.tensor(final[d], dtype=dtypes.int64,
                                                             device=z.device))
                outs.append(z[..., :out_w] if lstm else z)
                h_n.append(last[:, :out_w] if lstm else last)
                if lstm:
                    c_n.append(last[:, -hidden:])
            layer_input = outs[0] if directions == 1 else cat(outs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_input = F.dropout(layer_input, self.dropout, True)
        return layer_input, stack(h_n, 0), (stack(c_n, 0) if lstm else None)


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
