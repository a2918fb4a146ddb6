"""TransformerEncoderLayer, TransformerEncoder, TransformerDecoderLayer,
TransformerDecoder and Transformer against torch with copied weights
(dropout off): outputs, gradients of inputs and every parameter, masks,
norm_first, activations, state dict names, reprs; training steps with
torch's optimizer state matched; a small case on every device."""
import warnings

import numpy as np
import pytest
import torch

import nbgrad
from nbgrad.autograd import gradcheck

from ._util import DTYPE_IDS, DTYPES, assert_close, copy_weights, run_on_device

TESTED_OPS = set()  # layers, no functional forms


def _quiet(make):
    def run(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the nested-tensor note (both libraries)
            return make(lib)
    return run


# name: (make(lib), kind, call keywords (a string: a causal mask of that length))
CASES = {
    "encoder-layer": (lambda L: L.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), "enc", {}),
    "encoder-layer-prenorm-gelu-batch-first": (
        lambda L: L.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation="gelu",
                                               norm_first=True, batch_first=True), "enc", {}),
    "encoder-layer-key-padding": (
        lambda L: L.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), "enc",
        dict(src_key_padding_mask=np.array([[False] * 4 + [True], [False] * 5]))),
    "encoder-layer-causal": (lambda L: L.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0),
                             "enc", dict(src_mask="5", is_causal=True)),
    "encoder-stack-norm": (
        lambda L: L.nn.TransformerEncoder(L.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), 2,
                                          L.nn.LayerNorm(8)), "enc", {}),
    "decoder-layer": (lambda L: L.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0), "dec", {}),
    "decoder-layer-prenorm-causal": (
        lambda L: L.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, norm_first=True), "dec",
        dict(tgt_mask="3")),
    "transformer": (lambda L: L.nn.Transformer(8, 2, 2, 2, 16, dropout=0.0), "full",
                    dict(tgt_mask="3")),
}


def _call_kwargs(lib, kwargs, dtype):
    out = {}
    for k, v in kwargs.items():
        if isinstance(v, str):
            v = lib.nn.Transformer.generate_square_subsequent_mask(int(v), dtype=dtype)
        elif isinstance(v, np.ndarray):
            v = lib.tensor(v)
        out[k] = v
    return out


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("name", list(CASES))
def test_transformer_matches_torch(name, dtype):
    make, kind, kwargs = CASES[name]
    nb_dtype, t_dtype = dtype
    dname = DTYPE_IDS[DTYPES.index(dtype)]
    torch.manual_seed(0)
    tm = _quiet(make)(torch).to(t_dtype)
    nm = _quiet(make)(nbgrad).to(dtype=nb_dtype)
    assert repr(nm) == repr(tm)
    assert [(k, tuple(v.shape)) for k, v in nm.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in tm.state_dict().items()]
    copy_weights(nm, tm)
    rng = np.random.default_rng(1)
    src, tgt = rng.standard_normal((5, 2, 8)), rng.standard_normal((3, 2, 8))
    if "batch-first" in name:
        src = src.transpose(1, 0, 2).copy()
    ns, ts = (nbgrad.tensor(src, dtype=nb_dtype, requires_grad=True),
              torch.tensor(src, dtype=t_dtype, requires_grad=True))
    nt, tt = (nbgrad.tensor(tgt, dtype=nb_dtype, requires_grad=True),
              torch.tensor(tgt, dtype=t_dtype, requires_grad=True))
    nkw, tkw = _call_kwargs(nbgrad, kwargs, nb_dtype), _call_kwargs(torch, kwargs, t_dtype)
    if kind == "enc":
        out, want = nm(ns, **nkw), tm(ts, **tkw)
    elif kind == "dec":
        out, want = nm(nt, ns, **nkw), tm(tt, ts, **tkw)
    else:
        out, want = nm(ns, nt, **nkw), tm(ts, tt, **tkw)
    assert_close(out, want, dname)
    g = rng.standard_normal(tuple(want.shape))
    out.backward(nbgrad.tensor(g, dtype=nb_dtype))
    want.backward(torch.tensor(g, dtype=t_dtype))
    assert_close(ns.grad, ts.grad, dname)
    if kind != "enc":
        assert_close(nt.grad, tt.grad, dname)
    t_params = dict(tm.named_parameters())
    for key, p in nm.named_parameters():
        assert_close(p.grad, t_params[key].grad, dname)


def test_encoder_layer_training_steps_match_torch():
    """Three Adam steps of an encoder layer (dropout off) on a small regression."""
    torch.manual_seed(0)
    tm = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True).double()
    nm = nbgrad.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True,
                                           dtype=nbgrad.float64)
    copy_weights(nm, tm)
    t_opt = torch.optim.Adam(tm.parameters(), lr=1e-2)
    n_opt = nbgrad.optim.Adam(nm.parameters(), lr=1e-2)
    rng = np.random.default_rng(2)
    for _ in range(3):
        x, y = rng.standard_normal((2, 5, 8)), rng.standard_normal((2, 5, 8))
        for lib, model, opt in ((torch, tm, t_opt), (nbgrad, nm, n_opt)):
            opt.zero_grad()
            loss = ((model(lib.tensor(x)) - lib.tensor(y)) ** 2).mean()
            loss.backward()
            opt.step()
    t_params = dict(tm.named_parameters())
    for key, p in nm.named_parameters():
        # (the key projection's bias has a zero gradient, made of rounding noise that Adam
        # scales up to ~1e-12: absolute tolerance)
        np.testing.assert_allclose(p.detach().numpy(), t_params[key].detach().numpy(),
                                   rtol=1e-9, atol=1e-9)


def test_generate_square_subsequent_mask_matches_torch():
    assert_close(nbgrad.nn.Transformer.generate_square_subsequent_mask(4),
                 torch.nn.Transformer.generate_square_subsequent_mask(4))


def test_encoder_layer_gradcheck():
    layer = nbgrad.nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, dtype=nbgrad.float64)
    x = nbgrad.tensor(np.random.default_rng(3).standard_normal((3, 1, 4)), requires_grad=True)
    assert gradcheck(layer, (x,))


def test_nested_tensor_warning_matches_torch():
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        nbgrad.nn.TransformerEncoder(nbgrad.nn.TransformerEncoderLayer(8, 2), 2)
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(8, 2), 2)
    assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_encoder_layer_on_the_device_matches_torch(dtype, device):
    x = np.random.default_rng(4).standard_normal((3, 2, 4))
    run_on_device(lambda m, x: m(x),
                  lambda lib: lib.nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0), [x], dtype,
                  device)
