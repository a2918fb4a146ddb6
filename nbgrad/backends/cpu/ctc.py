"""The connectionist temporal classification loss (CTC) as compiled loops:
PyTorch's CPU algorithm (ATen's LossCTC.cpp), the forward variables
(log alpha) of every sequence, then the backward variables (log beta) with
the gradient of each log-probability, one sequence per thread. Sums of
probabilities are taken in log space, shifted by their maximum; everything is
computed in float64 and the gradient is stored in the inputs' dtype.

The gradient is PyTorch's: ``exp(lp) - exp(log(sum of alpha beta over the
label's positions) + nll - lp)`` times the incoming gradient, which is the
gradient with respect to the logits when ``lp`` is their ``log_softmax``
(through log_softmax it gives the same input gradient as the exact one)."""
import numpy as np

from ..kernel_source import lazy_module

_SOURCE = '''import math

import numba
import numpy as np
from numba import prange

NEG_INF = -np.inf


@numba.njit(cache=True, nogil=True, inline="always")
def _prime(targets, b, s, blank):
    """The label at position s of the blank-interleaved target of sequence b."""
    return blank if s % 2 == 0 else targets[b, s // 2]


@numba.njit(cache=True, nogil=True, inline="always")
def _log_add3(a, b, c):
    m = max(a, max(b, c))
    if m == NEG_INF:
        m = 0.0
    return math.log(math.exp(a - m) + math.exp(b - m) + math.exp(c - m)) + m


@numba.njit(cache=True, nogil=True, parallel=True)
def ctc_forward(lp, targets, input_lengths, target_lengths, blank, log_alpha, nll):
    """log_alpha (N, T, 2S+1) and the negative log-likelihood of each sequence."""
    batch = lp.shape[1]
    for b in prange(batch):
        la = log_alpha[b]
        la[:, :] = NEG_INF
        length, tl = input_lengths[b], target_lengths[b]
        if length == 0:
            nll[b] = 0.0 if tl == 0 else np.inf
            continue
        la[0, 0] = lp[0, b, blank]
        if tl > 0:
            la[0, 1] = lp[0, b, targets[b, 0]]
        for t in range(1, length):
            for s in range(2 * tl + 1):
                label = _prime(targets, b, s, blank)
                a2 = la[t - 1, s - 1] if s > 0 else NEG_INF
                a3 = NEG_INF
                if s > 1 and _prime(targets, b, s - 2, blank) != label:
                    a3 = la[t - 1, s - 2]
                la[t, s] = _log_add3(la[t - 1, s], a2, a3) + lp[t, b, label]
        if tl == 0:
            nll[b] = -la[length - 1, 0]
        else:
            nll[b] = -_log_add3(la[length - 1, 2 * tl], la[length - 1, 2 * tl - 1], NEG_INF)


@numba.njit(cache=True, nogil=True, parallel=True)
def ctc_backward(grad_out, lp, targets, input_lengths, target_lengths, blank, nll, log_alpha,
                 zero_infinity, grad):
    """grad (T, N, C): PyTorch's gradient of each sequence's loss, times grad_out[b]."""
    steps, batch, classes = lp.shape
    width = log_alpha.shape[2]
    for b in prange(batch):
        length, tl = input_lengths[b], target_lengths[b]
        if zero_infinity and nll[b] == np.inf:
            for t in range(steps):
                grad[t, b, :] = 0
            continue
        la = log_alpha[b]
        lb = np.full((steps, width), NEG_INF)
        lcab = np.full((steps, classes), NEG_INF)  # log of the sum of alpha beta per label
        if length > 0:
            last = length - 1
            lb[last, 2 * tl] = lp[last, b, blank]
            lcab[last, blank] = la[last, 2 * tl] + lb[last, 2 * tl]
            if tl > 0:
                label = targets[b, tl - 1]
                lb[last, 2 * tl - 1] = lp[last, b, label]
                lcab[last, label] = la[last, 2 * tl - 1] + lb[last, 2 * tl - 1]
        for t in range(length - 2, -1, -1):
            for s in range(2 * tl, -1, -1):
                label = _prime(targets, b, s, blank)
                b2 = lb[t + 1, s + 1] if s < 2 * tl else NEG_INF
                b3 = NEG_INF
                if s < 2 * tl - 1 and _prime(targets, b, s + 2, blank) != label:
                    b3 = lb[t + 1, s + 2]
                lb[t, s] = _log_add3(lb[t + 1, s], b2, b3) + lp[t, b, label]
                both = la[t, s] + lb[t, s]
                have = lcab[t, label]
                if have == NEG_INF:
                    lcab[t, label] = both
                else:
                    m = max(have, both)
                    lcab[t, label] = math.log(math.exp(have - m) + math.exp(both - m)) + m
        g = grad_out[b]
        for t in range(steps):
            for c in range(classes):
                if t < length:
                    v = lp[t, b, c]
                    grad[t, b, c] = (math.exp(v) - math.exp(lcab[t, c] + nll[b] - v)) * g
                else:
                    grad[t, b, c] = 0
'''

kernels = lazy_module(_SOURCE, "cpu_ctc")


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank):
    """``(nll, log_alpha)``: each sequence's negative log-likelihood (N,) in
    ``log_probs``' dtype and the forward variables (N, T, 2S+1) for the
    backward. ``log_probs`` (T, N, C); ``targets`` (N, S) int64, padded;
    the lengths int64 (N,), checked by the caller."""
    steps, batch, _ = log_probs.shape
    log_alpha = np.empty((batch, steps, 2 * targets.shape[1] + 1), np.float64)
    nll = np.empty(batch, np.float64)
    kernels().ctc_forward(np.ascontiguousarray(log_probs), targets, input_lengths,
                          target_lengths, blank, log_alpha, nll)
    return nll.astype(log_probs.dtype), log_alpha


def ctc_loss_backward(grad, log_probs, targets, input_lengths, target_lengths, blank, nll,
                      log_alpha, zero_infinity):
    """The gradient (T, N, C) of ``sum(grad * nll)`` with respect to ``log_probs``, as PyTorch's."""
    out = np.empty(log_probs.shape, np.float64)
    kernels().ctc_backward(np.ascontiguousarray(grad, np.float64), np.ascontiguousarray(log_probs),
                           targets, input_lengths, target_lengths, blank,
                           nll.astype(np.float64), log_alpha, bool(zero_infinity), out)
    return out.astype(log_probs.dtype)
