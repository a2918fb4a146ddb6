"""F.ctc_loss and nn.CTCLoss (nbgrad/nn/_ctc.py, nbgrad/backends/cpu/ctc.py)
against PyTorch: losses, node names and gradients for every reduction, with
and without zero_infinity, padded and concatenated targets, unbatched input,
a sequence whose loss is infinite, on every device; the gradient against
finite differences (through log_softmax, where PyTorch's formula is exact);
errors as PyTorch's."""
import numpy as np
import pytest
import torch

import nbgrad
from helpers import assert_close, assert_same_error, node_name, on_device
from nbgrad.autograd import gradcheck

RNG = np.random.default_rng(11)
T, N, C = 9, 3, 5
LOGITS = RNG.standard_normal((T, N, C))
PADDED = np.array([[1, 2, 2, 4], [3, 1, 0, 0], [2, 2, 2, 0]])
CONCATENATED = np.array([1, 2, 2, 4, 3, 1, 2, 2, 2])
INPUT_LENGTHS, TARGET_LENGTHS = [9, 6, 7], [4, 2, 3]

# name -> how both libraries call the loss on (log_probs, padded targets, concatenated ones)
CASES = {
    "none": lambda L, lp, p, c: L.nn.functional.ctc_loss(
        lp, p, L.tensor(INPUT_LENGTHS), L.tensor(TARGET_LENGTHS), reduction="none"),
    "mean": lambda L, lp, p, c: L.nn.functional.ctc_loss(lp, p, INPUT_LENGTHS, TARGET_LENGTHS),
    "sum-concatenated": lambda L, lp, p, c: L.nn.functional.ctc_loss(
        lp, c, INPUT_LENGTHS, TARGET_LENGTHS, reduction="sum"),
    "blank-last": lambda L, lp, p, c: L.nn.CTCLoss(blank=C - 1)(
        lp, p % (C - 1), L.tensor(INPUT_LENGTHS), L.tensor(TARGET_LENGTHS)),
    "infinite": lambda L, lp, p, c: L.nn.functional.ctc_loss(
        lp, p, [9, 1, 7], TARGET_LENGTHS, reduction="none"),
    "zero-infinity": lambda L, lp, p, c: L.nn.CTCLoss(reduction="mean", zero_infinity=True)(
        lp, p, [9, 1, 7], TARGET_LENGTHS),
    "empty-target": lambda L, lp, p, c: L.nn.functional.ctc_loss(
        lp, p, INPUT_LENGTHS, [4, 0, 3], reduction="none"),
    "unbatched": lambda L, lp, p, c: L.nn.functional.ctc_loss(
        lp[:, 0], p[0], L.tensor(9), L.tensor(4)),
}


def _run(L, name, dtype, device="cpu", softmax=True):
    x = L.tensor(LOGITS, dtype=getattr(L, dtype), requires_grad=True, **on_device(L, device))
    lp = L.nn.functional.log_softmax(x, 2) if softmax else x
    targets = [L.tensor(t, **on_device(L, device)) for t in (PADDED, CONCATENATED)]
    loss = CASES[name](L, lp, *targets)
    w = L.tensor(np.linspace(1, 2, loss.numel()).reshape(tuple(loss.shape)),
                 dtype=getattr(L, dtype), **on_device(L, device))
    (loss * w).sum().backward()
    return loss, x.grad


@pytest.mark.parametrize("softmax", [True, False], ids=["log_softmax", "leaf"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_like_torch(name, dtype, softmax, device):
    loss, grad = _run(nbgrad, name, dtype, device, softmax)
    want, want_grad = _run(torch, name, dtype, softmax=softmax)
    assert node_name(loss.grad_fn) == node_name(want.grad_fn)
    assert_close(loss.detach(), want.detach())
    assert_close(grad, want_grad)


def test_gradient_matches_finite_differences():
    x = nbgrad.tensor(LOGITS[:, :2], requires_grad=True)
    assert gradcheck(lambda t: nbgrad.nn.functional.ctc_loss(
        nbgrad.nn.functional.log_softmax(t, 2), nbgrad.tensor(PADDED[:2]), [9, 6], [4, 2],
        reduction="none"), (x,))


def test_its_gradient_is_not_differentiable_again_as_in_torch():
    for L in (nbgrad, torch):
        lp = L.tensor(LOGITS, requires_grad=True)
        loss = L.nn.functional.ctc_loss(lp, L.tensor(PADDED), INPUT_LENGTHS, TARGET_LENGTHS)
        (g,) = L.autograd.grad(loss, lp, create_graph=True)
        with pytest.raises(RuntimeError, match="derivative for aten::_ctc_loss_backward is not"):
            g.sum().backward()


@pytest.mark.parametrize("call", [
    lambda L: L.nn.functional.ctc_loss(L.zeros(4, 2, 3), L.zeros(2, 2, dtype=L.long),
                                       [5, 4], [2, 2]),
    lambda L: L.nn.functional.ctc_loss(L.zeros(4, 2, 3), L.zeros(2, 2, dtype=L.long),
                                       [4, 4], [3, 2]),
    lambda L: L.nn.functional.ctc_loss(L.zeros(4, 2, 3), L.zeros(2, 2, dtype=L.long),
                                       [4, 4], [2, 2], blank=3),
])
def test_bad_arguments_are_refused_like_torch(call):
    assert_same_error(call)


def test_lengths_of_two_kinds_are_a_type_error_as_in_torch():
    """(PyTorch's message goes on to say which argument matched no signature.)"""
    assert_same_error(lambda L: L.nn.functional.ctc_loss(
        L.zeros(4, 2, 3), L.zeros(2, 2, dtype=L.long), (4, 4), L.tensor([2, 2])), exact=False)
