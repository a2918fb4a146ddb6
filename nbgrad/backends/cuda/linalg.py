"""Dense linear algebra for device arrays by a round trip to the host: the
matrices are copied out, factorized by NumPy's LAPACK (``backends.cpu.linalg``)
and the results copied back. nbgrad has no device solver (cuSOLVER); these
are for the small matrices of everyday code (a covariance, a 3 x 3 pose),
where the two copies cost microseconds."""
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
