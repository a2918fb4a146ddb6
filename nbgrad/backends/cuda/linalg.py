"""Dense linear algebra for device arrays by a round trip to the host: the
matrices are copied out, factorized by NumPy's LAPACK (``backends.cpu.linalg``)
and the results copied back. nbgrad has no device solver (cuSOLVER); these
are for the small matrices of everyday code (a covariance, a 3 x 3 pose),
where the two copies cost microseconds. The CTC loss's dynamic programme
(``backends.cpu.ctc``) takes the same round trip."""
from ..cpu import ctc as host_ctc
from ..cpu import linalg as host
from .array import to_device


def _back(array):
    return None if array is None else to_device(array)


def linalg_inv(a):
    inverse, info = host.linalg_inv(a.copy_to_host())
    return _back(inverse), info


def linalg_solve(a, b):
    x, info = host.linalg_solve(a.copy_to_host(), b.copy_to_host())
    return _back(x), info


def linalg_det(a):
    return to_device(host.linalg_det(a.copy_to_host()))


def linalg_svd(a, full_matrices=True, compute_uv=True):
    u, s, vh, info = host.linalg_svd(a.copy_to_host(), full_matrices, compute_uv)
    return _back(u), _back(s), _back(vh), info


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank):
    nll, log_alpha = host_ctc.ctc_loss(log_probs.copy_to_host(), targets, input_lengths,
                                       target_lengths, blank)
    return to_device(nll), log_alpha  # (log_alpha stays on the host, for the backward)


def ctc_loss_backward(grad, log_probs, targets, input_lengths, target_lengths, blank, nll,
                      log_alpha, zero_infinity):
    return to_device(host_ctc.ctc_loss_backward(
        grad.copy_to_host(), log_probs.copy_to_host(), targets, input_lengths, target_lengths,
        blank, nll.copy_to_host(), log_alpha, zero_infinity))
