"""RNN, LSTM, GRU and their cells against torch with copied weights: outputs,
final states, gradients of inputs, initial states and every parameter, for
padded and packed (``PackedSequence``) input and LSTM's ``proj_size``; state
dict names and shapes (PyTorch's layout, loaded through NumPy), reprs,
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
    "lstm-proj": (lambda L: L.nn.LSTM(3, 4, proj_size=2), (5, 2, 3), True),
    "lstm-proj-2-bidir-batch-first-nobias": (
        lambda L: L.nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True,
                            proj_size=3, bias=False), (2, 5, 3), True),
    "lstm-proj-unbatched": (lambda L: L.nn.LSTM(3, 4, proj_size=1), (5, 3), True),
}


def _states(lib, module, shape, dtype, rng):
    directions = 2 if module.bidirectional else 1
    batch = () if len(shape) == 2 else (shape[0] if module.batch_first else shape[1],)
    size = (module.num_layers * directions, *batch)
    arrays = [rng.standard_normal(size + (module.proj_size or module.hidden_size,))]
    if module.mode == "LSTM":
        arrays.append(rng.standard_normal(size + (module.hidden_size,)))
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


# name: (make(lib) -> module, lengths, batch_first, initial states given). Unsorted
# lengths exercise the sorted_indices permutation of hx and of h_n/c_n.
PACKED = {
    "lstm-sorted": (lambda L: L.nn.LSTM(3, 4), [4, 3, 3, 1], False, True),
    "lstm-unsorted-batch-first": (lambda L: L.nn.LSTM(3, 4, batch_first=True), [2, 4, 1, 3],
                                  True, True),
    "lstm-2-bidir-unsorted": (lambda L: L.nn.LSTM(3, 4, num_layers=2, bidirectional=True),
                              [2, 4, 1, 4], False, True),
    "lstm-proj-2-bidir-unsorted-batch-first": (
        lambda L: L.nn.LSTM(3, 4, num_layers=2, bidirectional=True, proj_size=2,
                            batch_first=True), [3, 1, 4], True, True),
    "lstm-proj-nobias-sorted": (lambda L: L.nn.LSTM(3, 4, proj_size=3, bias=False), [3, 2, 2],
                                False, False),
    "gru-2-bidir-unsorted-batch-first": (
        lambda L: L.nn.GRU(3, 4, num_layers=2, bidirectional=True, batch_first=True),
        [1, 3, 4, 2], True, True),
    "gru-sorted-no-states": (lambda L: L.nn.GRU(3, 4, bias=False), [4, 2, 1], False, False),
    "rnn-relu-bidir-unsorted": (lambda L: L.nn.RNN(3, 4, nonlinearity="relu",
                                                   bidirectional=True), [2, 3, 1], False, True),
    "rnn-tanh-2-equal-lengths": (lambda L: L.nn.RNN(3, 4, num_layers=2, batch_first=True),
                                 [3, 3], True, True),
    "lstm-2-dropout-eval-unsorted": (
        lambda L: L.nn.LSTM(3, 4, num_layers=2, dropout=0.5).eval(), [1, 3, 2], False, False),
}


def _packed_run(lib, module, x, lengths, batch_first, states, dtype, device="cpu"):
    """Pack ``x``, run ``module`` with the initial ``states`` (NumPy arrays or
    None), unpack: (input leaf, state leaves, packed input, packed output,
    final states, padded output)."""
    utils = lib.nn.utils.rnn
    on = {"device": device} if lib is nbgrad else {}
    tx = lib.tensor(x, dtype=dtype, requires_grad=True, **on)
    leaves = [lib.tensor(a, dtype=dtype, requires_grad=True, **on) for a in states or []]
    packed = utils.pack_padded_sequence(tx, lengths, batch_first=batch_first,
                                        enforce_sorted=lengths == sorted(lengths, reverse=True))
    args = [packed]
    if leaves:
        args.append(tuple(leaves) if len(leaves) == 2 else leaves[0])
    out, h = module(*args)
    padded, out_lengths = utils.pad_packed_sequence(out, batch_first=batch_first)
    assert out_lengths.tolist() == list(lengths)
    return tx, leaves, packed, out, (list(h) if isinstance(h, tuple) else [h]), padded


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("name", list(PACKED))
def test_packed_input_matches_torch(name, dtype):
    make, lengths, batch_first, with_states = PACKED[name]
    nb_dtype, t_dtype = dtype
    dname = DTYPE_IDS[DTYPES.index(dtype)]
    torch.manual_seed(0)
    tm = make(torch).to(t_dtype)
    nm = make(nbgrad).to(dtype=nb_dtype)
    assert repr(nm) == repr(tm)
    copy_weights(nm, tm)
    rng = np.random.default_rng(1)
    steps, batch = max(lengths), len(lengths)
    x = rng.standard_normal((batch, steps, 3) if batch_first else (steps, batch, 3))
    states = _states(nbgrad, nm, x.shape, nb_dtype, rng) if with_states else None
    nx, n_states, n_in, n_out, n_h, n_padded = _packed_run(nbgrad, nm, x, lengths, batch_first,
                                                           states, nb_dtype)
    tx, t_states, t_in, t_out, t_h, t_padded = _packed_run(torch, tm, x, lengths, batch_first,
                                                           states, t_dtype)
    assert isinstance(n_out, nbgrad.nn.utils.rnn.PackedSequence)
    assert n_out.batch_sizes is n_in.batch_sizes
    for field in ("sorted_indices", "unsorted_indices"):
        ours, theirs = getattr(n_out, field), getattr(t_out, field)
        assert ours is getattr(n_in, field)
        assert (ours is None) == (theirs is None) and (ours is None or
                                                       ours.tolist() == theirs.tolist())
    assert n_out.data.grad_fn is not None
    n_loss = t_loss = 0
    for o, w in zip([n_out.data] + n_h, [t_out.data] + t_h):
        assert_close(o, w, dname)
        g = rng.standard_normal(tuple(w.shape))
        n_loss = n_loss + (o * nbgrad.tensor(g, dtype=nb_dtype)).sum()
        t_loss = t_loss + (w * torch.tensor(g, dtype=t_dtype)).sum()
    assert_close(n_padded, t_padded, dname)
    n_loss.backward()
    t_loss.backward()
    assert_close(nx.grad, tx.grad, dname)
    for a, b in zip(n_states, t_states):
        assert_close(a.grad, b.grad, dname)
    t_params = dict(tm.named_parameters())
    for key, p in nm.named_parameters():
        assert_close(p.grad, t_params[key].grad, dname)


def test_packed_final_state_is_each_sequences_last_step():
    """Without PyTorch: h_n of a sequence is what the layer gives that
    sequence alone (forward and reverse directions both start and end at its
    own ends)."""
    nbgrad.manual_seed(0)
    gru = nbgrad.nn.GRU(2, 3, bidirectional=True, dtype=nbgrad.float64)
    seqs = [nbgrad.randn(n, 2, dtype=nbgrad.float64) for n in (2, 4, 1)]
    out, h_n = gru(nbgrad.nn.utils.rnn.pack_sequence(seqs, enforce_sorted=False))
    padded, _ = nbgrad.nn.utils.rnn.pad_packed_sequence(out)
    for b, seq in enumerate(seqs):
        alone, h_alone = gru(seq.unsqueeze(1))
        np.testing.assert_allclose(h_n[:, b].detach().numpy(), h_alone[:, 0].detach().numpy(),
                                   rtol=1e-12)
        np.testing.assert_allclose(padded[:len(seq), b].detach().numpy(),
                                   alone[:, 0].detach().numpy(), rtol=1e-12)


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


def _layer_args(mode, t_len, batch, hidden, size_in, seed=3, batch_sizes=None, proj=0):
    """(fn, leaves) for gradcheck of one fused layer: padded (T, B, I) input,
    or packed (N, I) data of ``batch_sizes``; LSTM with a projection of ``proj``."""
    gates = rnn._GATES[mode]
    rng = np.random.default_rng(seed)
    rows = (t_len, batch) if batch_sizes is None else (sum(batch_sizes),)
    out = proj or hidden
    shapes = [rows + (size_in,), (batch, out), (batch, hidden),
              (gates * hidden, size_in), (gates * hidden, out), (gates * hidden,),
              (gates * hidden,)] + ([(proj, hidden)] if proj else [])
    args = [nbgrad.tensor(rng.standard_normal(s), requires_grad=True) for s in shapes]
    if mode != "LSTM":
        del args[2]

    def fn(x, h, *rest):
        c = rest[0] if mode == "LSTM" else None
        weights = list(rest[1:] if mode == "LSTM" else rest)
        w_hr = weights.pop() if proj else None
        return rnn.recurrent_layer(mode, x, h, c, *weights, fn.reverse, w_hr=w_hr,
                                   batch_sizes=batch_sizes)
    return fn, tuple(args)


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN_TANH", "RNN_RELU"])
@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
def test_fused_layer_gradcheck(mode, reverse):
    fn, args = _layer_args(mode, 3, 2, 3, 2)
    fn.reverse = reverse
    assert gradcheck(fn, args)


@pytest.mark.parametrize("mode,proj", [("LSTM", 0), ("LSTM", 2), ("GRU", 0), ("RNN_TANH", 0)])
@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
def test_fused_packed_layer_gradcheck(mode, proj, reverse):
    """Packed steps of 3, 2, 2, 1 rows: sequences end (forward) or start
    (reverse) part-way, from their own initial state."""
    fn, args = _layer_args(mode, None, 3, 3, 2, batch_sizes=[3, 2, 2, 1], proj=proj)
    fn.reverse = reverse
    assert gradcheck(fn, args)


@pytest.mark.parametrize("mode,reverse,packed,proj", [("LSTM", False, False, 0),
                                                      ("GRU", True, False, 0),
                                                      ("LSTM", True, True, 1)])
def test_fused_layer_gradgradcheck(mode, reverse, packed, proj):
    """A graph-building backward recomputes the layer from taped ops."""
    fn, args = _layer_args(mode, 2, 2 if packed else 1, 2, 2, batch_sizes=[2, 1] if packed
                           else None, proj=proj)
    fn.reverse = reverse
    assert gradgradcheck(fn, args)


def test_recurrent_parameters_initialise_as_torch():
    """Every parameter uniform in +-1/sqrt(hidden_size), the projection's too."""
    lstm = nbgrad.nn.LSTM(3, 16, num_layers=2, proj_size=5)
    assert lstm.weight_hr_l1.shape == (5, 16)
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
    lambda L: L.nn.RNN(3, 4)(L.zeros(2, 2, 2, 3)),
    lambda L: L.nn.GRU(3, 4)(L.zeros(5, 2, 3, dtype=L.float64)),
    lambda L: L.nn.LSTM(3, 4, proj_size=4),
    lambda L: L.nn.LSTM(3, 4, proj_size=2)(L.zeros(5, 2, 3), (L.zeros(1, 2, 4), L.zeros(1, 2, 4))),
    lambda L: L.nn.LSTM(3, 4, proj_size=2)(L.zeros(5, 2, 3), (L.zeros(1, 2, 2), L.zeros(1, 2, 2))),
    lambda L: L.nn.GRU(3, 4)(L.nn.utils.rnn.pack_padded_sequence(L.zeros(4, 3, 3), [4, 2, 1]),
                             L.zeros(1, 2, 4)),
    lambda L: L.nn.RNN(3, 4)(L.nn.utils.rnn.PackedSequence(L.zeros(7, 2, 3), L.tensor([3, 2, 2]))),
    lambda L: L.nn.GRU(3, 4)(L.nn.utils.rnn.PackedSequence(L.zeros(7, 2), L.tensor([3, 2, 2]))),
    lambda L: L.nn.LSTM(3, 4)(L.zeros(0, 2, 3)),
    lambda L: L.nn.GRU(3, 4, batch_first=True)(L.zeros(2, 0, 3)),
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


@pytest.mark.parametrize("kwargs", [{}, dict(proj_size=2, bidirectional=True, num_layers=2)])
def test_lstm_forward_mode_matches_torch(kwargs):
    torch.manual_seed(0)
    tm = torch.nn.LSTM(3, 4, **kwargs).double()
    nm = nbgrad.nn.LSTM(3, 4, **kwargs, dtype=nbgrad.float64)
    copy_weights(nm, tm)
    rng = np.random.default_rng(6)
    x, t = rng.standard_normal((3, 2, 3)), rng.standard_normal((3, 2, 3))
    tangents = []
    for lib, module in ((nbgrad, nm), (torch, tm)):
        fw = importlib.import_module(f"{lib.__name__}.autograd.forward_ad")
        with fw.dual_level():
            out, (h, c) = module(fw.make_dual(lib.tensor(x), lib.tensor(t)))
            tangents.append([fw.unpack_dual(v).tangent.detach() for v in (out, h, c)])
    for ours, theirs in zip(*tangents):
        assert_close(ours, theirs)


def test_packed_forward_mode_matches_finite_differences():
    """(PyTorch has no forward mode through packing.) The tangent of the
    packed output and final states against central differences."""
    import nbgrad.autograd.forward_ad as fw
    nbgrad.manual_seed(0)
    lstm = nbgrad.nn.LSTM(3, 4, bidirectional=True, proj_size=2, dtype=nbgrad.float64)
    rng = np.random.default_rng(7)
    x, t = rng.standard_normal((3, 2, 3)), rng.standard_normal((3, 2, 3))

    def run(v):
        out, (h, c) = lstm(nbgrad.nn.utils.rnn.pack_padded_sequence(v, [1, 3],
                                                                     enforce_sorted=False))
        return out.data, h, c
    with fw.dual_level():
        tangents = [fw.unpack_dual(v).tangent for v in run(fw.make_dual(nbgrad.tensor(x),
                                                                       nbgrad.tensor(t)))]
    with nbgrad.no_grad():
        ahead, behind = run(nbgrad.tensor(x + 1e-6 * t)), run(nbgrad.tensor(x - 1e-6 * t))
    for tangent, a, b in zip(tangents, ahead, behind):
        np.testing.assert_allclose(tangent.numpy(), (a.numpy() - b.numpy()) / 2e-6, atol=1e-8)


def test_flatten_parameters_is_accepted():
    lstm = nbgrad.nn.LSTM(3, 4)
    lstm.flatten_parameters()  # (cuDNN's weight packing in PyTorch; nothing to do here)
    assert [p.shape for p in lstm._flat_weights] == [p.shape for p in lstm.parameters()]


@pytest.mark.parametrize("kwargs", [dict(proj_size=2, bidirectional=True, num_layers=2),
                                    dict(proj_size=2, bias=False), dict(bias=False)])
def test_all_weights_and_state_dict_names_match_torch(kwargs):
    """Names in PyTorch's order (weight_hr last in each layer and direction),
    and torch's state dict loads with strict keys."""
    tm, nm = torch.nn.LSTM(3, 4, **kwargs), nbgrad.nn.LSTM(3, 4, **kwargs)
    t_names = {id(p): k for k, p in tm.named_parameters()}
    n_names = {id(p): k for k, p in nm.named_parameters()}
    assert [[n_names[id(p)] for p in ps] for ps in nm.all_weights] == \
        [[t_names[id(p)] for p in ps] for ps in tm.all_weights]
    assert nm._flat_weights_names == tm._flat_weights_names
    copy_weights(nm, tm)
    for key, value in tm.state_dict().items():
        np.testing.assert_array_equal(nm.state_dict()[key].numpy(), value.numpy())


@pytest.mark.parametrize("name", ["lstm-proj-2-bidir-unsorted-batch-first",
                                  "gru-2-bidir-unsorted-batch-first"])
def test_packed_input_on_the_device_matches_torch(name, device):
    """Packed steps on the device: unsorted lengths, 2 bidirectional layers, small."""
    make, lengths, batch_first, _ = PACKED[name]
    torch.manual_seed(0)
    tm, nm = make(torch), make(nbgrad)
    copy_weights(nm, tm)
    nm.to(device=device)
    rng = np.random.default_rng(4)
    batch, steps = len(lengths), max(lengths)
    x = rng.standard_normal((batch, steps, 3) if batch_first else (steps, batch, 3))
    states = _states(nbgrad, nm, x.shape, nbgrad.float32, rng)
    nx, n_states, _, n_out, n_h, _ = _packed_run(nbgrad, nm, x, lengths, batch_first, states,
                                                 nbgrad.float32, device)
    tx, t_states, _, t_out, t_h, _ = _packed_run(torch, tm, x, lengths, batch_first, states,
                                                 torch.float32)
    assert n_out.is_cuda == (device == "cuda") and n_out.sorted_indices.device.type == device
    for o, w in zip([n_out.data] + n_h, [t_out.data] + t_h):
        assert o.device.type == device
        assert_close(o.cpu(), w, "float32")
    g = rng.standard_normal(tuple(t_out.data.shape))
    (n_out.data * nbgrad.tensor(g, dtype=nbgrad.float32, device=device)).sum().backward()
    (t_out.data * torch.tensor(g, dtype=torch.float32)).sum().backward()
    for a, b in zip([nx] + n_states, [tx] + t_states):
        assert a.grad.device.type == device
        assert_close(a.grad.cpu(), b.grad, "float32")
    t_params = dict(tm.named_parameters())
    for key, p in nm.named_parameters():
        assert_close(p.grad.cpu(), t_params[key].grad, "float32")
