"""RNN, LSTM, GRU and their cells against torch with copied weights: outputs,
final states, gradients of inputs, initial states and every parameter,
state dict names and shapes (PyTorch's layout, loaded through NumPy), reprs,
errors; gradcheck and second derivatives of the fused layer in float64;
small cases on every device."""
import importlib
import warnings

import numpy as np
import pytest
import torch

import nbgrad
from nbgrad.autograd import gradcheck, gradgradcheck
from nbgrad.nn import rnn
from helpers import assert_same_error

from ._util import DTYPE_IDS, DTYPES, assert_close, copy_weights

TESTED_OPS = set()  # layers, no functional forms

# name: (make(lib) -> module, input shape, initial states given)
LAYERS = {
    "lstm": (lambda L: L.nn.LSTM(3, 4), (5, 2, 3), False),
    "lstm-h0c0": (lambda L: L.nn.LSTM(3, 4), (5, 2, 3), True),
    "lstm-2-bidir-batch-first": (
        lambda L: L.nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True),
        (2, 5, 3), True),
    "lstm-nobias-unbatched": (lambda L: L.nn.LSTM(3, 4, bias=False), (5, 3), True),
    "gru": (lambda L: L.nn.GRU(3, 4), (5, 2, 3), True),
    "gru-2-bidir-nobias": (lambda L: L.nn.GRU(3, 4, 2, bias=False, bidirectional=True),
                           (4, 2, 3), False),
    "rnn-tanh": (lambda L: L.nn.RNN(3, 4, num_layers=2), (5, 2, 3), True),
    "rnn-relu-bidir": (lambda L: L.nn.RNN(3, 4, nonlinearity="relu", bidirectional=True,
                                          batch_first=True), (2, 5, 3), False),
    "lstm-dropout-eval": (lambda L: L.nn.LSTM(3, 4, num_layers=2, dropout=0.5).eval(),
                          (5, 2, 3), False),
}


def _states(lib, module, shape, dtype, rng):
    directions = 2 if module.bidirectional else 1
    batch = () if len(shape) == 2 else (shape[0] if module.batch_first else shape[1],)
    size = (module.num_layers * directions, *batch, module.hidden_size)
    arrays = [rng.standard_normal(size) for _ in range(2 if module.mode == "LSTM" else 1)]
    return arrays


def _flat(result):
    out, h = result
    return [out] + (list(h) if isinstance(h, tuple) else [h])


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("name", list(LAYERS))
def test_recurrent_layer_matches_torch(name, dtype):
    make, shape, with_states = LAYERS[name]
    nb_dtype, t_dtype = dtype
    dname = DTYPE_IDS[DTYPES.index(dtype)]
    torch.manual_seed(0)
    tm = make(torch).to(t_dtype)
    nm = make(nbgrad).to(dtype=nb_dtype)
    assert repr(nm) == repr(tm)
    assert [(k, tuple(v.shape)) for k, v in nm.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in tm.state_dict().items()]
    copy_weights(nm, tm)  # torch's state dict, through NumPy arrays
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape)
    nx = nbgrad.tensor(x, dtype=nb_dtype, requires_grad=True)
    tx = torch.tensor(x, dtype=t_dtype, requires_grad=True)
    n_args, t_args, n_states, t_states = [nx], [tx], [], []
    if with_states:
        arrays = _states(nbgrad, nm, shape, nb_dtype, rng)
        n_states = [nbgrad.tensor(a, dtype=nb_dtype, requires_grad=True) for a in arrays]
        t_states = [torch.tensor(a, dtype=t_dtype, requires_grad=True) for a in arrays]
        n_args.append(tuple(n_states) if len(arrays) == 2 else n_states[0])
        t_args.append(tuple(t_states) if len(arrays) == 2 else t_states[0])
    outs, wants = _flat(nm(*n_args)), _flat(tm(*t_args))
    n_loss = t_loss = 0
    for k, (o, w) in enumerate(zip(outs, wants)):
        assert_close(o, w, dname)
        g = rng.standard_normal(tuple(w.shape))
        n_loss = n_loss + (o * nbgrad.tensor(g, dtype=nb_dtype)).sum()
        t_loss = t_loss + (w * torch.tensor(g, dtype=t_dtype)).sum()
    n_loss.backward()
    t_loss.backward()
    assert_close(nx.grad, tx.grad, dname)
    for a, b in zip(n_states, t_states):
        assert_close(a.grad, b.grad, dname)
    t_params = dict(tm.named_parameters())
    for key, p in nm.named_parameters():
        assert_close(p.grad, t_params[key].grad, dname)


@pytest.mark.parametrize("cell", ["LSTMCell", "GRUCell", "RNNCell", "RNNCell-relu-nobias"])
@pytest.mark.parametrize("batched", [True, False], ids=["batched", "unbatched"])
def test_cells_match_torch(cell, batched):
    name, *options = cell.split("-")
    kwargs = dict(nonlinearity="relu" if "relu" in options else "tanh") if name == "RNNCell" \
        else {}
    if "nobias" in options:
        kwargs["bias"] = False
    torch.manual_seed(0)
    tm = getattr(torch.nn, name)(3, 4, **kwargs).double()
    nm = getattr(nbgrad.nn, name)(3, 4, **kwargs, dtype=nbgrad.float64)
    assert repr(nm) == repr(tm)
    copy_weights(nm, tm)
    rng = np.random.default_rng(2)
    lead = (2,) if batched else ()
    x, h = rng.standard_normal(lead + (3,)), rng.standard_normal(lead + (4,))
    nx, tx = nbgrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    nh, th = nbgrad.tensor(h, requires_grad=True), torch.tensor(h, requires_grad=True)
    if name == "LSTMCell":
        outs, wants = nm(nx, (nh, nh * 2)), tm(tx, (th, th * 2))
    else:
        outs, wants = (nm(nx, nh),), (tm(tx, th),)
    for o, w in zip(outs, wants):
        assert_close(o, w)
    sum(o.sum() * (k + 1) for k, o in enumerate(outs)).backward()
    sum(w.sum() * (k + 1) for k, w in enumerate(wants)).backward()
    assert_close(nx.grad, tx.grad)
    assert_close(nh.grad, th.grad)
    t_params = dict(tm.named_parameters())
    for key, p in nm.named_parameters():
        assert_close(p.grad, t_params[key].grad)
    default = nm(nx)  # no state: zeros
    assert_close(default[0] if name == "LSTMCell" else default, (tm(tx)[0] if name == "LSTMCell"
                                                                  else tm(tx)))


def _layer_args(mode, t_len, batch, hidden, size_in, seed=3):
    gates = rnn._GATES[mode]
    rng = np.random.default_rng(seed)
    shapes = [(t_len, batch, size_in), (batch, hidden), (batch, hidden),
              (gates * hidden, size_in), (gates * hidden, hidden), (gates * hidden,),
              (gates * hidden,)]
    args = [nbgrad.tensor(rng.standard_normal(s), requires_grad=True) for s in shapes]
    if mode != "LSTM":
        del args[2]

    def fn(x, h, *rest):
        c = rest[0] if mode == "LSTM" else None
        weights = rest[1:] if mode == "LSTM" else rest
        return rnn.recurrent_layer(mode, x, h, c, *weights, fn.reverse)
    return fn, tuple(args)


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN_TANH", "RNN_RELU"])
@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
def test_fused_layer_gradcheck(mode, reverse):
    fn, args = _layer_args(mode, 3, 2, 3, 2)
    fn.reverse = reverse
    assert gradcheck(fn, args)


@pytest.mark.parametrize("mode,reverse", [("LSTM", False), ("GRU", True)])
def test_fused_layer_gradgradcheck(mode, reverse):
    """A graph-building backward recomputes the layer from taped ops."""
    fn, args = _layer_args(mode, 2, 1, 2, 2)
    fn.reverse = reverse
    assert gradgradcheck(fn, args)


def test_recurrent_parameters_initialise_as_torch():
    """Every parameter uniform in +-1/sqrt(hidden_size)."""
    lstm = nbgrad.nn.LSTM(3, 16, num_layers=2)
    for p in lstm.parameters():
        values = p.detach().numpy()
        assert np.abs(values).max() <= 0.25 and np.abs(values).max() > 0.2


def test_dropout_warning_matches_torch():
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        nbgrad.nn.LSTM(3, 4, dropout=0.2)
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        torch.nn.LSTM(3, 4, dropout=0.2)
    assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]


def test_training_dropout_between_layers_only():
    nbgrad.manual_seed(0)
    lstm = nbgrad.nn.LSTM(3, 4, num_layers=2, dropout=1.0)
    out, (h, c) = lstm(nbgrad.randn(5, 2, 3))
    # the second layer sees zeros: its outputs are those of a zero input
    lstm.eval()
    assert not np.allclose(out.detach().numpy(), lstm(nbgrad.randn(5, 2, 3))[0].detach().numpy())


ERRORS = [
    lambda L: L.nn.LSTM(3, 4)(L.zeros(5, 2, 4)),
    lambda L: L.nn.LSTM(3, 4)(L.zeros(5, 2, 2, 3)),
    lambda L: L.nn.LSTM(3, 4)(L.zeros(5, 2, 3), (L.zeros(2, 2, 4), L.zeros(1, 2, 4))),
    lambda L: L.nn.GRU(3, 4)(L.zeros(5, 2, 3), L.zeros(2, 2, 4)),
    lambda L: L.nn.LSTMCell(3, 4)(L.zeros(2, 4)),
    lambda L: L.nn.LSTMCell(3, 4)(L.zeros(2, 3), (L.zeros(3, 4), L.zeros(3, 4))),
    lambda L: L.nn.GRUCell(3, 4)(L.zeros(2, 3), L.zeros(3, 4)),
    lambda L: L.nn.LSTM(3, 4)(L.zeros(5, 3), (L.zeros(1, 2, 4), L.zeros(1, 2, 4))),
    lambda L: L.nn.RNN(3, 4, nonlinearity="sigmoid"),
]


@pytest.mark.parametrize("fn", ERRORS, ids=range(len(ERRORS)))
def test_recurrent_errors_match_torch(fn):
    assert_same_error(fn)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("name", ["LSTM", "GRU"])
def test_recurrent_layers_on_the_device_match_torch(name, dtype, device):
    """The fused cell kernels on the device: a 2-layer bidirectional layer, small."""
    nb_dtype, t_dtype = dtype
    torch.manual_seed(0)
    tm = getattr(torch.nn, name)(3, 4, num_layers=2, bidirectional=True).to(t_dtype)
    nm = getattr(nbgrad.nn, name)(3, 4, num_layers=2, bidirectional=True)
    copy_weights(nm, tm)
    nm.to(device=device, dtype=nb_dtype)
    x = np.random.default_rng(4).standard_normal((3, 2, 3))
    nx = nbgrad.tensor(x, dtype=nb_dtype, device=device, requires_grad=True)
    tx = torch.tensor(x, dtype=t_dtype, requires_grad=True)
    out, want = nm(nx)[0], tm(tx)[0]
    g = np.random.default_rng(5).standard_normal(tuple(want.shape))
    out.backward(nbgrad.tensor(g, dtype=nb_dtype, device=device))
    want.backward(torch.tensor(g, dtype=t_dtype))
    dname = nb_dtype.name
    assert out.device.type == device
    assert_close(out.cpu(), want, dname)
    assert_close(nx.grad.cpu(), tx.grad, dname)
    t_params = dict(tm.named_parameters())
    for key, p in nm.named_parameters():
        assert p.grad.device.type == device
        assert_close(p.grad.cpu(), t_params[key].grad, dname)


def test_lstm_forward_mode_matches_torch():
    torch.manual_seed(0)
    tm = torch.nn.LSTM(3, 4).double()
    nm = nbgrad.nn.LSTM(3, 4, dtype=nbgrad.float64)
    copy_weights(nm, tm)
    rng = np.random.default_rng(6)
    x, t = rng.standard_normal((3, 2, 3)), rng.standard_normal((3, 2, 3))
    tangents = []
    for lib, module in ((nbgrad, nm), (torch, tm)):
        fw = importlib.import_module(f"{lib.__name__}.autograd.forward_ad")
        with fw.dual_level():
            out = module(fw.make_dual(lib.tensor(x), lib.tensor(t)))[0]
            tangents.append(fw.unpack_dual(out).tangent.detach())
    assert_close(*tangents)


def test_flatten_parameters_is_accepted():
    lstm = nbgrad.nn.LSTM(3, 4)
    lstm.flatten_parameters()  # (cuDNN's weight packing in PyTorch; nothing to do here)
    assert [p.shape for p in lstm._flat_weights] == [p.shape for p in lstm.parameters()]
