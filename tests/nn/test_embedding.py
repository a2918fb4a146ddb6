"""Embedding and EmbeddingBag against torch: copied weights, padding_idx,
max_norm, scale_grad_by_freq, from_pretrained/freeze, bag modes and
offsets, reprs, node names, errors, gradcheck, and a case on every device."""
import numpy as np
import pytest
import torch

import nbgrad
import nbgrad.nn as nn
import nbgrad.nn.functional as F
from helpers import node_name
from nbgrad.autograd import gradcheck, gradgradcheck

from ._util import DTYPE_IDS, DTYPES, assert_close, copy_weights, run_on_device

TESTED_OPS = {"embedding", "embedding_bag"}

INDICES = np.array([[1, 0, 4], [2, 1, 1]])

EMBEDDINGS = {
    "plain": lambda L: L.nn.Embedding(5, 3),
    "padding": lambda L: L.nn.Embedding(5, 3, padding_idx=1),
    "padding-negative": lambda L: L.nn.Embedding(5, 3, padding_idx=-1),
    "freq": lambda L: L.nn.Embedding(5, 3, scale_grad_by_freq=True),
    "max_norm": lambda L: L.nn.Embedding(5, 3, max_norm=1.0),
    "max_norm-p1": lambda L: L.nn.Embedding(5, 3, max_norm=0.5, norm_type=1.0),
}


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("name", list(EMBEDDINGS))
def test_embedding_matches_torch(name, dtype):
    nb_dtype, t_dtype = dtype
    dname = DTYPE_IDS[DTYPES.index(dtype)]
    tm = EMBEDDINGS[name](torch).to(t_dtype)
    nb = EMBEDDINGS[name](nbgrad).to(dtype=nb_dtype)
    assert repr(nb) == repr(tm)
    copy_weights(nb, tm)
    for step in range(2):
        out, want = nb(nbgrad.tensor(INDICES)), tm(torch.tensor(INDICES))
        g = np.random.default_rng(step).standard_normal(tuple(want.shape))
        out.backward(nbgrad.tensor(g, dtype=nb_dtype))
        want.backward(torch.tensor(g, dtype=t_dtype))
        assert_close(out, want, dname)
        assert_close(nb.weight.grad, tm.weight.grad, dname)
        assert_close(nb.weight, tm.weight, dname)  # max_norm renormalises in place
        assert out.grad_fn.name() == "EmbeddingBackward"


def test_padding_row_starts_at_zero_and_from_pretrained_freezes():
    emb = nn.Embedding(4, 2, padding_idx=2)
    np.testing.assert_array_equal(emb.weight.detach().numpy()[2], [0, 0])
    w = nbgrad.tensor([[1.0, 2.0], [3.0, 4.0]])
    frozen = nn.Embedding.from_pretrained(w)
    assert not frozen.weight.requires_grad
    assert nn.Embedding.from_pretrained(w, freeze=False).weight.requires_grad
    np.testing.assert_array_equal(frozen(nbgrad.tensor([1, 0])).numpy(), [[3, 4], [1, 2]])
    assert repr(frozen) == repr(torch.nn.Embedding.from_pretrained(torch.ones(2, 2)))


def test_embedding_gradcheck():
    w = nbgrad.tensor(np.random.default_rng(0).standard_normal((5, 3)), requires_grad=True)
    idx = nbgrad.tensor(INDICES)
    assert gradcheck(lambda w: F.embedding(idx, w), (w,))
    assert gradgradcheck(lambda w: F.embedding(idx, w) ** 2, (w,))


BAGS = [
    ("sum-offsets", dict(mode="sum"), np.array([1, 0, 4, 2, 1, 1]), np.array([0, 2, 2])),
    ("mean-offsets", dict(mode="mean"), np.array([1, 0, 4, 2, 1, 1]), np.array([0, 1, 4])),
    ("max-offsets", dict(mode="max"), np.array([1, 0, 4, 2, 1, 3]), np.array([0, 3])),
    ("mean-2d", dict(mode="mean"), INDICES, None),
    ("sum-last-offset", dict(mode="sum", include_last_offset=True), np.array([1, 0, 4, 2]),
     np.array([0, 1, 4])),
    ("mean-padding", dict(mode="mean", padding_idx=1), np.array([1, 0, 4, 1, 1, 3]),
     np.array([0, 3, 4])),
    ("sum-empty-bag-freq", dict(mode="sum", scale_grad_by_freq=True),
     np.array([4, 0, 4, 4, 1, 0, 3]), np.array([0, 2, 2, 5])),
    ("mean-freq-padding-negative", dict(mode="mean", scale_grad_by_freq=True, padding_idx=-2),
     np.array([2, 3, 1, 3, 0, 2, 2]), np.array([0, 3])),
    ("max-2d-padding", dict(mode="max", padding_idx=0), np.array([[1, 0, 4], [0, 0, 0]]), None),
    ("max-last-offset-empty-bag", dict(mode="max", include_last_offset=True),
     np.array([1, 0, 4, 2, 3, 3]), np.array([0, 2, 2, 4])),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("case", BAGS, ids=[b[0] for b in BAGS])
def test_embedding_bag_matches_torch(case, dtype):
    _, kwargs, idx, offsets = case
    nb_dtype, t_dtype = dtype
    dname = DTYPE_IDS[DTYPES.index(dtype)]
    tm = torch.nn.EmbeddingBag(5, 3, **kwargs).to(t_dtype)
    nb = nn.EmbeddingBag(5, 3, **kwargs).to(dtype=nb_dtype)
    assert repr(nb) == repr(tm)
    copy_weights(nb, tm)
    nb_args = [nbgrad.tensor(idx)] + ([] if offsets is None else [nbgrad.tensor(offsets)])
    t_args = [torch.tensor(idx)] + ([] if offsets is None else [torch.tensor(offsets)])
    out, want = nb(*nb_args), tm(*t_args)
    g = np.random.default_rng(1).standard_normal(tuple(want.shape))
    out.backward(nbgrad.tensor(g, dtype=nb_dtype))
    want.backward(torch.tensor(g, dtype=t_dtype))
    assert_close(out, want, dname)
    assert_close(nb.weight.grad, tm.weight.grad, dname)
    assert node_name(out.grad_fn) == node_name(want.grad_fn) == "EmbeddingBagBackward"


def test_embedding_bag_per_sample_weights():
    w = np.random.default_rng(2).standard_normal((5, 3))
    psw = np.array([0.5, 2.0, -1.0, 1.5])
    idx, off = np.array([1, 0, 4, 1]), np.array([0, 2])
    results = []
    for lib in (nbgrad, torch):
        weight = lib.tensor(w, requires_grad=True)
        sample = lib.tensor(psw, requires_grad=True)
        out = lib.nn.functional.embedding_bag(lib.tensor(idx), weight, lib.tensor(off),
                                              mode="sum", per_sample_weights=sample)
        out.sum().backward()
        results.append((out, weight.grad, sample.grad))
        assert node_name(out.grad_fn) == "EmbeddingBagBackward"
    for a, b in zip(*results):
        assert_close(a, b)


@pytest.mark.parametrize("kwargs", [dict(mode="sum"), dict(mode="mean", padding_idx=1),
                                    dict(mode="max", include_last_offset=True),
                                    dict(mode="sum", per_sample_weights=True, padding_idx=4)],
                         ids=["sum", "mean-padding", "max-last-offset", "sum-weights-padding"])
def test_embedding_bag_gradcheck(kwargs):
    kwargs = dict(kwargs)
    idx, off = nbgrad.tensor([1, 0, 4, 2, 1, 3, 4]), nbgrad.tensor([0, 3, 3, 5])
    rng = np.random.default_rng(3)
    w = nbgrad.tensor(rng.permutation(15).reshape(5, 3) / 7.0, requires_grad=True)
    inputs = (w,)
    if kwargs.pop("per_sample_weights", False):
        inputs += (nbgrad.tensor(rng.standard_normal(7), requires_grad=True),)

    def fn(w, psw=None):  # squared, so that the second derivatives are not all zero
        return F.embedding_bag(idx, w, off, per_sample_weights=psw, **kwargs) ** 2

    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


ERRORS = [
    ("float-indices", lambda L: L.nn.functional.embedding(L.ones(2), L.ones(3, 2))),
    ("out-of-range", lambda L: L.nn.functional.embedding(L.tensor([3]), L.ones(3, 2))),
    ("padding", lambda L: L.nn.Embedding(3, 2, padding_idx=3)),
    ("bag-weights-mean", lambda L: L.nn.functional.embedding_bag(
        L.tensor([0, 1]), L.ones(3, 2), L.tensor([0]), per_sample_weights=L.ones(2))),
    ("bag-float-indices", lambda L: L.nn.functional.embedding_bag(L.ones(2), L.ones(3, 2),
                                                                  L.tensor([0]))),
    ("bag-float-offsets", lambda L: L.nn.functional.embedding_bag(L.tensor([0, 1]), L.ones(3, 2),
                                                                  L.tensor([0.0]))),
    ("bag-out-of-range", lambda L: L.nn.functional.embedding_bag(L.tensor([0, 3]), L.ones(3, 2),
                                                                 L.tensor([0]))),
    ("bag-negative-index", lambda L: L.nn.functional.embedding_bag(
        L.tensor([0, -1]), L.ones(3, 2), L.tensor([0]))),
    ("bag-weights-shape", lambda L: L.nn.functional.embedding_bag(
        L.tensor([0, 1]), L.ones(3, 2), L.tensor([0]), mode="sum", per_sample_weights=L.ones(3))),
    ("bag-first-offset", lambda L: L.nn.functional.embedding_bag(L.tensor([0, 1]), L.ones(3, 2),
                                                                 L.tensor([1]))),
    ("bag-last-offset", lambda L: L.nn.functional.embedding_bag(L.tensor([0, 1, 2]),
                                                                L.ones(3, 2), L.tensor([0, 5]))),
    ("bag-weight-1d", lambda L: L.nn.functional.embedding_bag(L.tensor([0, 1]), L.ones(3),
                                                              L.tensor([0]))),
    ("bag-padding", lambda L: L.nn.functional.embedding_bag(L.tensor([0, 1]), L.ones(3, 2),
                                                            L.tensor([0]), padding_idx=3)),
    ("bag-module-padding", lambda L: L.nn.EmbeddingBag(3, 2, padding_idx=-4)),
    ("bag-max-freq", lambda L: L.nn.functional.embedding_bag(
        L.tensor([0, 1]), L.ones(3, 2), L.tensor([0]), mode="max", scale_grad_by_freq=True)),
    ("bag-3d", lambda L: L.nn.functional.embedding_bag(L.tensor([[[0]]]), L.ones(3, 2))),
]


@pytest.mark.parametrize("make", [e[1] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_errors_match_torch(make):
    with pytest.raises(Exception) as want:
        make(torch)
    with pytest.raises(type(want.value)) as got:
        make(nbgrad)
    assert str(got.value) == str(want.value).replace("torch.", "nbgrad.")


def test_embedding_on_the_device_matches_torch(device):
    run_on_device(lambda m, i: m(i), lambda L: L.nn.Embedding(5, 3, padding_idx=0),
                  [np.array([[1, 0, 4], [2, 1, 1]])], DTYPES[0], device)


@pytest.mark.parametrize("mode", ["mean", "max"])
def test_embedding_bag_on_the_device_matches_torch(mode, device):
    run_on_device(lambda m, i, o: m(i, o), lambda L: L.nn.EmbeddingBag(5, 3, mode=mode,
                                                                        padding_idx=1),
                  [np.array([1, 0, 4, 2, 1, 3]), np.array([0, 2, 2])], DTYPES[0], device)


def test_embedding_bag_per_sample_weights_on_the_device_match_torch(device):
    w = np.random.default_rng(4).standard_normal((5, 3))
    run_on_device(lambda _, w, i, o, p: (nbgrad if isinstance(w, nbgrad.Tensor) else torch)
                  .nn.functional.embedding_bag(i, w, o, mode="sum", per_sample_weights=p),
                  None, [w, np.array([1, 0, 4, 1]), np.array([0, 2]),
                         np.array([0.5, 2.0, -1.0, 1.5])], DTYPES[0], device)
