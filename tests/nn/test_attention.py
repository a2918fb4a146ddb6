"""F.scaled_dot_product_attention and MultiheadAttention against torch with
copied weights: outputs, attention weights, gradients of inputs and
parameters, masks (boolean, float, causal, key padding, fully masked rows),
parameter names, reprs, errors; gradcheck and second derivatives in
float64; small cases on every device."""
import numpy as np
import pytest
import torch

import nbgrad
import nbgrad.nn.functional as F
from nbgrad.autograd import gradcheck, gradgradcheck
from helpers import assert_same_error

from ._util import DTYPE_IDS, DTYPES, assert_close, copy_weights, run_both, run_on_device

TESTED_OPS = {"scaled_dot_product_attention"}

_rng = np.random.default_rng(0)
_BOOL = _rng.random((4, 6)) > 0.3
_BOOL[1] = False  # a query that may attend to nothing: zeros, as PyTorch's
SDPA_CASES = {
    "plain": {},
    "causal": dict(is_causal=True),
    "bool-mask": dict(attn_mask=_BOOL),
    "float-mask": dict(attn_mask=_rng.standard_normal((4, 6))),
    "scale": dict(scale=0.3),
}


def _kwargs(lib, kwargs, dtype):
    out = {}
    for k, v in kwargs.items():
        if isinstance(v, np.ndarray):
            v = lib.tensor(v) if v.dtype == bool else lib.tensor(v, dtype=dtype)
        out[k] = v
    return out


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("case", list(SDPA_CASES))
def test_sdpa_matches_torch(case, dtype):
    kwargs = SDPA_CASES[case]
    dname = DTYPE_IDS[DTYPES.index(dtype)]
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal((2, 3, 4, 5)), rng.standard_normal((2, 3, 6, 5)),
              rng.standard_normal((2, 3, 6, 7))]
    out, tout, nin, tin = run_both(
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, **_kwargs(nbgrad, kwargs,
                                                                          dtype[0])),
        lambda q, k, v: torch.nn.functional.scaled_dot_product_attention(
            q, k, v, **_kwargs(torch, kwargs, dtype[1])), arrays, dtype)
    assert_close(out, tout, dname)
    for a, b in zip(nin, tin):
        assert_close(a.grad, b.grad, dname)


def test_sdpa_gradcheck_and_gradgradcheck():
    rng = np.random.default_rng(2)
    args = tuple(nbgrad.tensor(rng.standard_normal(s), requires_grad=True)
                 for s in [(1, 2, 3, 2), (1, 2, 4, 2), (1, 2, 4, 3)])
    mask = nbgrad.tensor(rng.standard_normal((3, 4)))
    fn = lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=mask)  # noqa: E731
    assert gradcheck(fn, args)
    assert gradgradcheck(fn, args)


def test_sdpa_dropout_keeps_the_expected_mean():
    nbgrad.manual_seed(0)
    q = k = nbgrad.zeros(1, 1, 200, 4)
    v = nbgrad.ones(1, 1, 200, 4)
    out = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    assert abs(out.mean().item() - 1.0) < 0.1 and (out.detach().numpy() != 1.0).any()


# ------------------------------------------------------------ MultiheadAttention
# name: (constructor keywords, call keywords)
MHA_CASES = {
    "plain": ({}, {}),
    "batch-first": (dict(batch_first=True), {}),
    "no-weights": ({}, dict(need_weights=False)),
    "kdim-vdim": (dict(kdim=3, vdim=5), {}),
    "bias-kv-zero-attn-nobias": (dict(bias=False, add_bias_kv=True, add_zero_attn=True), {}),
    "key-padding": ({}, dict(key_padding_mask=np.array([[False] * 4 + [True], [False] * 5]))),
    "bool-mask-per-head": ({}, dict(attn_mask=np.random.default_rng(3).random((3, 5)) > 0.7,
                                    average_attn_weights=False)),
    "float-mask-no-weights": ({}, dict(attn_mask=np.random.default_rng(4).standard_normal((3, 5)),
                                       need_weights=False)),
    "key-padding-no-weights": ({}, dict(key_padding_mask=np.array([[False] * 4 + [True],
                                                                   [True] * 5]),
                                        need_weights=False)),
}


def _mha_inputs(lib, ckw, dtype, rng):
    kd, vd = ckw.get("kdim", 4), ckw.get("vdim", 4)
    bf = ckw.get("batch_first", False)
    shapes = [(2, 3, 4) if bf else (3, 2, 4), (2, 5, kd) if bf else (5, 2, kd),
              (2, 5, vd) if bf else (5, 2, vd)]
    return [rng.standard_normal(s) for s in shapes]


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("case", list(MHA_CASES))
def test_multihead_attention_matches_torch(case, dtype):
    ckw, fkw = MHA_CASES[case]
    nb_dtype, t_dtype = dtype
    dname = DTYPE_IDS[DTYPES.index(dtype)]
    torch.manual_seed(0)
    tm = torch.nn.MultiheadAttention(4, 2, **ckw).to(t_dtype)
    nm = nbgrad.nn.MultiheadAttention(4, 2, **ckw, dtype=nb_dtype)
    assert repr(nm) == repr(tm)
    assert [(k, tuple(v.shape)) for k, v in nm.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in tm.state_dict().items()]
    copy_weights(nm, tm)
    arrays = _mha_inputs(None, ckw, dtype, np.random.default_rng(5))
    nin = [nbgrad.tensor(a, dtype=nb_dtype, requires_grad=True) for a in arrays]
    tin = [torch.tensor(a, dtype=t_dtype, requires_grad=True) for a in arrays]
    (out, weights), (want, want_w) = (nm(*nin, **_kwargs(nbgrad, fkw, nb_dtype)),
                                      tm(*tin, **_kwargs(torch, fkw, t_dtype)))
    assert_close(out, want, dname)
    assert (weights is None) == (want_w is None)
    g = np.random.default_rng(6).standard_normal(tuple(want.shape))
    n_loss = (out * nbgrad.tensor(g, dtype=nb_dtype)).sum()
    t_loss = (want * torch.tensor(g, dtype=t_dtype)).sum()
    if weights is not None:
        assert_close(weights, want_w, dname)
        n_loss = n_loss + weights.sum() * 0.3
        t_loss = t_loss + want_w.sum() * 0.3
    n_loss.backward()
    t_loss.backward()
    for a, b in zip(nin, tin):
        assert_close(a.grad, b.grad, dname)
    t_params = dict(tm.named_parameters())
    for key, p in nm.named_parameters():
        assert_close(p.grad, t_params[key].grad, dname)


def test_multihead_attention_unbatched_and_self_attention_match_torch():
    torch.manual_seed(0)
    tm = torch.nn.MultiheadAttention(4, 2).double()
    nm = nbgrad.nn.MultiheadAttention(4, 2, dtype=nbgrad.float64)
    copy_weights(nm, tm)
    x = np.random.default_rng(7).standard_normal((3, 4))
    nx, tx = nbgrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (out, w), (want, want_w) = nm(nx, nx, nx), tm(tx, tx, tx)
    assert_close(out, want)
    assert_close(w, want_w)
    out.sum().backward()
    want.sum().backward()
    assert_close(nx.grad, tx.grad)


def test_multihead_attention_initialises_as_torch():
    m = nbgrad.nn.MultiheadAttention(8, 2)
    bound = np.sqrt(6 / (8 + 24))  # xavier_uniform on (3E, E)
    w = m.in_proj_weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert not m.in_proj_bias.detach().numpy().any()
    assert not m.out_proj.bias.detach().numpy().any()


ERRORS = [
    lambda L: L.nn.functional.scaled_dot_product_attention(
        L.zeros(2, 3, 4), L.zeros(2, 5, 4), L.zeros(2, 5, 4),
        attn_mask=L.ones(3, 5, dtype=L.bool), is_causal=True),
    lambda L: L.nn.MultiheadAttention(4, 2)(L.zeros(3, 2, 4), L.zeros(5, 2, 4), L.zeros(5, 2, 4),
                                            is_causal=True),
    lambda L: L.nn.MultiheadAttention(5, 2),
]


@pytest.mark.parametrize("fn", ERRORS, ids=range(len(ERRORS)))
def test_attention_errors_match_torch(fn):
    assert_same_error(fn)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_multihead_attention_on_the_device_matches_torch(dtype, device):
    arrays = _mha_inputs(None, {}, dtype, np.random.default_rng(8))
    run_on_device(lambda m, q, k, v: m(q, k, v)[0],
                  lambda lib: lib.nn.MultiheadAttention(4, 2), arrays, dtype, device)
